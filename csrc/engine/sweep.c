/* sweep.c: the primitive pairs a move may bring within a radius, found patch by patch, each
 * patch in a frame that moves with it
 *
 * Two primitives whose vertices move along straight paths x + s dx (s in [0, 1]) come within
 * r of each other only if, in any frame moving by s c (one c for both), the boxes of their
 * paths, inflated as detection's (points by r, edges by r/2, triangles not), overlap:
 * subtracting s c from both of two points leaves their difference as it was. In one frame for
 * the whole mesh, the paths of a cloth that swings or sags far in one step are long, and their
 * boxes overlap those of many neighbours that move alongside. So the vertices are grouped into
 * patches, the cubes of side MS_SWEEP_PATCH cells their positions lie in; patch P moves with
 * c_P, the mean displacement of its vertices, and each primitive's box holds its path in the
 * frame of its first vertex's patch. A primitive a of P meets a primitive b of Q in Q's frame,
 * where a's path is its path in P's frame shifted by s (c_P - c_Q): a's box grown by the
 * segment from 0 to c_P - c_Q holds it. Pairs of patches are tested first, by the same rule on
 * the union of their primitives' boxes; then the primitives of each pair of patches that meet
 * go through the broad phase (hash.c): P's points against Q's triangles and Q's points against
 * P's (once when P is Q), P's edges against Q's. Each pair of primitives belongs to one pair of
 * patches and is found once. Patches, their pairs and their primitives are visited in a fixed
 * order, so the pairs come out the same on every run and thread count.
 *
 * The frames serve the paths they were made for. A vertex whose move is cut short to
 * x + sigma dx leaves its path in a moving frame (standing still, it moves by -s c_P there), so
 * the bounds, which cut moves, sweep again in the frame of x (c = 0 for every patch) when they
 * cut any: there the box of a path holds every part of it, x + s sigma dx for s, sigma in
 * [0, 1].
 *
 * A sweep of some vertices' pairs (the few a certificate leaves, or the ones still moving)
 * takes only the pairs of patches of which one holds a primitive with such a vertex, and of
 * their primitives only those pairs go through the broad phase that have such a primitive.
 * The other patches' primitives are not even boxed unless a bound on their patch's box (its
 * vertices' paths, grown by the farthest a primitive's vertex lies from its first and by r)
 * meets a wanted patch's.
 *
 * Where such vertices fill few patches (of a larger side), the mesh is not patched at all:
 * each of their patches P is one pass in the frame of its own vertices' mean displacement.
 * A primitive holding such a vertex belongs to the pass of the first one's patch; the pass
 * boxes its own primitives and, of the others, only those whose first vertex's path in its
 * frame, grown by r and that vertex's reach (the longest edge at it along any axis, which
 * bounds how far the primitives it is first of extend from it), meets the union of its own
 * boxes, and sends the pairs with one of its own through the broad phase. A pair of two such
 * primitives is found in the pass of the lower patch. The frames differ from the patches', so
 * the pairs differ from those of a full sweep that hold such a vertex; both hold every pair
 * that comes within r.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "sweep.h"
#include "threads.h"

/* a patch's side, in the broad phase's cells */
#define MS_SWEEP_PATCH 8
/* a few vertices' sweep: the side of its patches, in cells (each pass scans every vertex:
 * larger than the sweep's own, for fewer passes), and the most it sweeps one pass each */
#define MS_SWEEP_PASS 16
#define MS_SWEEP_FEW 16
/* vertices per block of a parallel pass */
#define MS_SWEEP_BLOCK 1024
/* cube coordinates are clamped to +-this (2^62) */
#define MS_SWEEP_FAR 4611686018427387904.0

enum { MS_POINTS, MS_EDGES, MS_TRIANGLES, MS_KINDS };

/* one kind of primitive, gathered patch by patch */
typedef struct {
  const int *idx;            /* (n, k) vertex indices; NULL: the points themselves */
  int n, k;                  /* primitives, vertices each */
  double r;                  /* the inflation of their boxes [m] */
  int *start;                /* (npatch + 1) patch P's are member[start[P] .. start[P+1]) */
  int *member;               /* (n) the primitives, patch by patch, ascending in each */
  const int *vstart, *vlist; /* the model's: those holding vertex v are vlist[vstart[v] ..
                              * vstart[v+1]), ascending; NULL for the points */
  double *lo, *hi;           /* (n, 3) their boxes in their patches' frames, in member order */
} kind;

/* one side of a pair of patches: the primitives that may meet the other patch, their boxes in
 * the other's frame, those holding a wanted vertex first */
typedef struct {
  double *lo, *hi; /* (n, 3) */
  int *id;         /* (n) the primitives */
  int n, nwanted;  /* all, and the first nwanted hold a wanted vertex */
} side;

/* the scratch arrays of a sweep, kept between calls */
enum { MS_SWEEP_ARRAYS = 12 + 3 * 2 + 4 * MS_KINDS };

/* one thread's scratch for the passes of a few vertices' sweep: its hash's, the vertices near a
 * pass, and the pass's two sides (each a primitive's box and index, as many as the largest
 * kind) */
typedef struct {
  ms_hash *hash;
  ms_buf near;                /* (nv) int */
  ms_buf lo[2], hi[2], id[2]; /* (3 big) double, (big) int */
} passer;

/* one pass's pairs, point-triangle and edge-edge, and its status */
typedef struct {
  ms_buf pair[2];
  int npair[2];
  ms_status st;
} pass_out;

struct ms_sweep {
  ms_hash *hash;
  ms_buf pair[2]; /* (npair[k], 2) int: the point-triangle and the edge-edge pairs found */
  int npair[2];
  ms_buf scratch[MS_SWEEP_ARRAYS]; /* sweeping's arrays (make) */
  ms_buf passer;                   /* (threads) passer: a few vertices' sweep's, per thread */
  ms_buf pout;                     /* (passes) pass_out: and per pass */
};

/* a vertex and the cube of its patch */
typedef struct {
  int64_t c[3];
  int v;
} cube;

/* what one sweep works on */
typedef struct {
  const ms_model *m;
  const double *x, *dx;
  const unsigned char *only; /* (nv) the vertices whose primitives' pairs are wanted; NULL: all */
  int npatch;
  cube *cube;            /* (nv) scratch: the vertices by the cubes of their patches */
  int *count;            /* (nv) scratch: each patch's vertices */
  int *patch;            /* (nv) each vertex's patch */
  double *c;             /* (npatch, 3) each patch's mean displacement: its frame's */
  double *plo, *phi;     /* (npatch, 3) the union of each patch's primitives' boxes */
  unsigned char *wanted; /* (npatch) 1 where a primitive of the patch holds a vertex of only */
  unsigned char *take;   /* (npatch) 1 where a patch not wanted may meet one that is */
  int *want;             /* (npatch) the wanted patches */
  int nflag;             /* a few vertices' sweep: the flagged vertices (s->cube's first) */
  double *reach;         /* (nv) and the longest edge at each vertex along any axis [m] */
  double *vlo, *vhi;     /* (npatch, 3) a bound on each patch's box from its vertices */
  kind kinds[MS_KINDS];
  int big;      /* the largest kind's count */
  side side[2]; /* scratch of the largest kind's size: the two sides of a pair of patches */
  double cell;  /* the cell of the broad phase [m] */
  int threads;
} sweeping;

void ms_sweep_free(void *ws) {
  ms_sweep *w = ws;
  if (!w) return;
  ms_hash_free(w->hash);
  free(w->pair[0].p), free(w->pair[1].p);
  for (int k = 0; k < MS_SWEEP_ARRAYS; k++) free(w->scratch[k].p);
  for (passer *t = w->passer.p; t && t < (passer *)w->passer.p + w->passer.cap; t++) {
    ms_hash_free(t->hash);
    free(t->near.p);
    for (int k = 0; k < 2; k++) free(t->lo[k].p), free(t->hi[k].p), free(t->id[k].p);
  }
  for (pass_out *o = w->pout.p; o && o < (pass_out *)w->pout.p + w->pout.cap; o++)
    free(o->pair[0].p), free(o->pair[1].p);
  free(w->passer.p), free(w->pout.p);
  free(w);
}

/* ---------------------------------------------------------------- patches and frames */

static int same_cube(const cube *p, const cube *q) {
  return p->c[0] == q->c[0] && p->c[1] == q->c[1] && p->c[2] == q->c[2];
}

static int compare_cubes(const void *a, const void *b) {
  const cube *p = a, *q = b;
  for (int t = 2; t >= 0; t--)
    if (p->c[t] != q->c[t]) return p->c[t] < q->c[t] ? -1 : 1;
  return (p->v > q->v) - (p->v < q->v);
}

/* s->patch and s->npatch: the cubes of side L the vertices of only (NULL: all) lie in,
 * numbered in the cubes' order; -1 for the others */
static void patches(sweeping *s, double L, const unsigned char *only) {
  int nv = s->m->nv, n = 0;
  cube *q = s->cube;
  for (int v = 0; v < nv; v++) {
    s->patch[v] = -1;
    if (only && !only[v]) continue;
    for (int t = 0; t < 3; t++) { /* clamped far out (any patching is sound): no overflow */
      double f = floor(s->x[3 * v + t] / L);
      q[n].c[t] = f > MS_SWEEP_FAR    ? (int64_t)MS_SWEEP_FAR
                  : f < -MS_SWEEP_FAR ? -(int64_t)MS_SWEEP_FAR
                                      : (int64_t)f;
    }
    q[n++].v = v;
  }
  qsort(q, n, sizeof(cube), compare_cubes);
  s->nflag = n, s->npatch = 0;
  for (int k = 0; k < n; k++) {
    s->npatch += k == 0 || !same_cube(q + k, q + k - 1);
    s->patch[q[k].v] = s->npatch - 1;
  }
}

/* s->c: each patch's mean displacement */
static void frames(sweeping *s) {
  int *count = s->count;
  for (int v = 0; v < s->m->nv; v++) {
    if (s->patch[v] < 0) continue;
    for (int t = 0; t < 3; t++) s->c[3 * s->patch[v] + t] += s->dx[3 * v + t];
    count[s->patch[v]]++;
  }
  for (int p = 0; p < s->npatch; p++)
    for (int t = 0; t < 3; t++) s->c[3 * p + t] /= count[p];
}

/* the boxes lo, hi of P's and of Q's (patch or primitive) overlap once P's are grown by the
 * segment from 0 to c_P - c_Q */
static int shifted_overlap(const double *lo, const double *hi, const double *d, const double *qlo,
                           const double *qhi) {
  for (int t = 0; t < 3; t++)
    if (lo[t] + ms_min(d[t], 0.0) > qhi[t] || qlo[t] > hi[t] + ms_max(d[t], 0.0)) return 0;
  return 1;
}

/* vertex j of primitive p of k */
static int vertex_of(const kind *k, int p, int j) {
  return k->idx ? k->idx[k->k * p + j] : p;
}

/* 1 when primitive p of k holds a vertex of only (NULL: every vertex) */
static int holds(const kind *k, int p, const unsigned char *only) {
  for (int v = 0; v < k->k && only; v++)
    if (only[vertex_of(k, p, v)]) return 1;
  return !only;
}

/* the first vertex of primitive p of k */
static int first_of(const kind *k, int p) {
  return vertex_of(k, p, 0);
}

/* the patch of primitive p of k: its first vertex's */
static int patch_of(const sweeping *s, const kind *k, int p) {
  return s->patch[first_of(k, p)];
}

/* the kind's primitives by their patches (a counting sort), and s->wanted[P] = 1 where one
 * holds a vertex of s->only */
static void sort_kind(sweeping *s, kind *k) {
  for (int p = 0; p < k->n; p++) k->start[patch_of(s, k, p) + 1]++;
  for (int P = 0; P < s->npatch; P++) k->start[P + 1] += k->start[P];
  for (int p = 0; p < k->n; p++) k->member[k->start[patch_of(s, k, p)]++] = p;
  for (int P = s->npatch; P > 0; P--) k->start[P] = k->start[P - 1];
  k->start[0] = 0;
  for (int p = 0; p < k->n; p++) s->wanted[patch_of(s, k, p)] |= holds(k, p, s->only);
}

/* the box lo, hi over its path in the frame moving by c of primitive p of k, inflated by k's r */
static void path_box(const sweeping *s, const kind *k, int p, const double c[3], double lo[3],
                     double hi[3]) {
  for (int t = 0; t < 3; t++) {
    double a = INFINITY, b = -INFINITY;
    for (int v = 0; v < k->k; v++) {
      size_t i = 3 * (size_t)vertex_of(k, p, v) + t;
      double e = s->x[i] + s->dx[i] - c[t];
      a = ms_min(a, ms_min(s->x[i], e)), b = ms_max(b, ms_max(s->x[i], e));
    }
    lo[t] = a - k->r, hi[t] = b + k->r;
  }
}

/* lo, hi (3) grown to hold the box blo, bhi */
static void widen(double lo[3], double hi[3], const double blo[3], const double bhi[3]) {
  for (int t = 0; t < 3; t++) lo[t] = ms_min(lo[t], blo[t]), hi[t] = ms_max(hi[t], bhi[t]);
}

/* the boxes over their paths in their patch's frame of the kind's primitives in the patches P
 * with take[P] = 1, each widening its patch's box */
static void gather(sweeping *s, kind *k, const unsigned char *take) {
  for (int P = 0; P < s->npatch; P++)
    for (int j = k->start[P]; j < k->start[P + 1] && take[P]; j++) {
      path_box(s, k, k->member[j], s->c + 3 * P, k->lo + 3 * j, k->hi + 3 * j);
      widen(s->plo + 3 * P, s->phi + 3 * P, k->lo + 3 * j, k->hi + 3 * j);
    }
}

/* the farthest apart the ends of triangle edge e lie along any axis, at x or at x + dx [m] (a NaN
 * coordinate counts for nothing) */
static double edge_extent(const sweeping *s, int e) {
  size_t a = 3 * (size_t)s->m->fedge[2 * e], b = 3 * (size_t)s->m->fedge[2 * e + 1];
  double len = 0;
  for (int t = 0; t < 3; t++) {
    double at = fabs(s->x[a + t] - s->x[b + t]),
           end = fabs(s->x[a + t] + s->dx[a + t] - s->x[b + t] - s->dx[b + t]);
    len = at > len ? at : len, len = end > len ? end : len;
  }
  return len;
}

/* s->reach of vertices [v0, v1), the longest edge_extent of the edges at each; their largest */
static double extent_block(void *ctx, int v0, int v1) {
  const sweeping *s = ctx;
  const ms_model *m = s->m;
  double most = 0;
  for (int v = v0; v < v1; v++) {
    double reach = 0;
    for (int i = m->ve_start[v]; i < m->ve_start[v + 1]; i++) {
      double len = edge_extent(s, m->ve[i]);
      reach = len > reach ? len : reach;
    }
    s->reach[v] = reach, most = reach > most ? reach : most;
  }
  return most;
}

/* the farthest apart two ends of a triangle edge lie along any axis, at x or at x + dx: every
 * vertex of a primitive lies at most that far from its first vertex, at both ends [m]; into
 * s->reach (nv) the same over the edges at each vertex (a primitive's vertices lie at most its
 * first vertex's reach from it, each joined to it by an edge). Vertex by vertex in blocks on
 * the sweep's threads: each edge is measured at both its ends, and the largest is a maximum in
 * any order */
static double extent(const sweeping *s) {
  return ms_blocks_max(s->threads, s->m->nv, MS_SWEEP_BLOCK, extent_block, (void *)s);
}

/* s->take[P] = 1 for the patches not wanted whose primitives' boxes may meet a wanted patch's: a
 * bound on their patch's box, its vertices' paths in its frame grown by the primitives'
 * extent and the largest inflation r, meets one (the wanted patches' boxes gathered) */
static void near_wanted(sweeping *s, double r) {
  unsigned char *take = s->take;
  double *lo = s->vlo, *hi = s->vhi, grow = extent(s) + r;
  for (int k = 0; k < 3 * s->npatch; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int v = 0; v < s->m->nv; v++)
    for (int t = 0; t < 3; t++) {
      int P = s->patch[v];
      double a = s->x[3 * v + t], e = a + s->dx[3 * v + t] - s->c[3 * P + t];
      lo[3 * P + t] = ms_min(lo[3 * P + t], ms_min(a, e) - grow);
      hi[3 * P + t] = ms_max(hi[3 * P + t], ms_max(a, e) + grow);
    }
  int nwant = 0, *want = s->want;
  for (int P = 0; P < s->npatch; P++)
    if (s->wanted[P]) want[nwant++] = P;
  for (int P = 0; P < s->npatch; P++) {
    take[P] = 0;
    for (int j = 0; j < nwant && !s->wanted[P] && !take[P]; j++) {
      int Q = want[j];
      double d[3];
      for (int t = 0; t < 3; t++) d[t] = s->c[3 * P + t] - s->c[3 * Q + t];
      take[P] = shifted_overlap(lo + 3 * P, hi + 3 * P, d, s->plo + 3 * Q, s->phi + 3 * Q);
    }
  }
}

/* ---------------------------------------------------------------- pairs */

/* where the broad phase's pairs go: the hash's workspace and the threads it may use, and the
 * point-triangle (0) and edge-edge (1) lists with their counts */
typedef struct {
  ms_hash **hash;
  int threads;
  ms_buf *pair;
  int *npair;
} sink;

/* append the broad phase's hits (i of side a, j of side b) to k's list `which` as pairs of
 * primitives, lower edge first for edges */
static ms_status append(const sink *k, int which, const side *a, const side *b, const int *hit,
                        int nhit) {
  size_t n = 2 * ((size_t)k->npair[which] + nhit);
  if (nhit > INT_MAX - k->npair[which] ||
      ms_grow(&k->pair[which], n, sizeof(int), 2 * (size_t)k->npair[which]))
    return MS_ENOMEM;
  int *out = (int *)k->pair[which].p + 2 * (size_t)k->npair[which];
  for (int h = 0; h < nhit; h++) {
    int i = a->id[hit[2 * h]], j = b->id[hit[2 * h + 1]], swap = which == 1 && j < i;
    out[2 * h] = swap ? j : i, out[2 * h + 1] = swap ? i : j;
  }
  k->npair[which] += nhit;
  return MS_OK;
}

/* into out, k's primitives of patch P whose boxes, grown by the segment from 0 to d, overlap
 * the box (lo, hi): first those that hold a vertex of only, then the others */
static void facing(const kind *k, int P, const double d[3], const double *lo, const double *hi,
                   const unsigned char *only, side *out) {
  out->n = 0;
  for (int wanted = 1; wanted >= (only ? 0 : 1); wanted--) {
    for (int j = k->start[P]; j < k->start[P + 1]; j++) {
      if (holds(k, k->member[j], only) != wanted ||
          !shifted_overlap(k->lo + 3 * j, k->hi + 3 * j, d, lo, hi))
        continue;
      for (int t = 0; t < 3; t++) {
        out->lo[3 * out->n + t] = k->lo[3 * j + t] + ms_min(d[t], 0.0);
        out->hi[3 * out->n + t] = k->hi[3 * j + t] + ms_max(d[t], 0.0);
      }
      out->id[out->n++] = k->member[j];
    }
    if (wanted) out->nwanted = out->n;
  }
}

/* the part [from, to) of side a */
static side part(const side *a, int from, int to) {
  return (side){a->lo + 3 * (size_t)from, a->hi + 3 * (size_t)from, a->id + from, to - from, 0};
}

/* the broad phase's pairs of sides a and b (same: a is b, each pair once) into k's list */
static ms_status hashed(const sink *k, const sweeping *s, int which, const side *a, const side *b,
                        int same) {
  const int *hit;
  int nhit;
  if (!a->n || !b->n) return MS_OK;
  ms_status st = ms_hash_overlaps(k->hash, a->lo, a->hi, a->n, b->lo, b->hi, b->n, same, 1, s->cell,
                                  k->threads, &hit, &nhit);
  return st == MS_OK ? append(k, which, a, b, hit, nhit) : st;
}

/* the pairs of a's primitives in patch P and b's in Q, into w's list `which`, compared in Q's
 * frame: only those of P whose boxes (grown by c_P - c_Q) meet Q's box, and those of Q that
 * meet P's box so grown, take part, and of those only pairs with a primitive holding a vertex
 * of s->only (the wanted ones of P against all of Q's, then P's others against Q's wanted).
 * same: a is b and P is Q, all take part (the wanted against each other, then against the
 * others) */
static ms_status patch_pair(ms_sweep *w, sweeping *s, int which, const kind *a, int P,
                            const kind *b, int Q, int same) {
  double d[3], none[3] = {0, 0, 0}, plo[3], phi[3];
  for (int t = 0; t < 3; t++) {
    d[t] = s->c[3 * P + t] - s->c[3 * Q + t];
    plo[t] = s->plo[3 * P + t] + ms_min(d[t], 0.0), phi[t] = s->phi[3 * P + t] + ms_max(d[t], 0.0);
  }
  side *sa = s->side, *sb = same ? s->side : s->side + 1;
  facing(a, P, d, s->plo + 3 * Q, s->phi + 3 * Q, s->only, sa);
  if (!same) facing(b, Q, none, plo, phi, s->only, sb);
  side wa = part(sa, 0, sa->nwanted), oa = part(sa, sa->nwanted, sa->n);
  side wb = part(sb, 0, sb->nwanted);
  const sink k = {&w->hash, s->threads, w->pair, w->npair};
  ms_status st = hashed(&k, s, which, &wa, same ? &wa : sb, same);
  return st == MS_OK ? hashed(&k, s, which, &oa, &wb, 0) : st;
}

/* the pairs of primitives of patches P and Q (P <= Q) */
static ms_status patches_pair(ms_sweep *w, sweeping *s, int P, int Q) {
  const kind *pts = s->kinds + MS_POINTS, *edges = s->kinds + MS_EDGES,
             *tris = s->kinds + MS_TRIANGLES;
  ms_status st = patch_pair(w, s, 0, pts, P, tris, Q, 0);
  if (st == MS_OK && P != Q) st = patch_pair(w, s, 0, pts, Q, tris, P, 0);
  if (st == MS_OK) st = patch_pair(w, s, 1, edges, P, edges, Q, P == Q);
  return st;
}

/* every pair of patches that may meet, one of them wanted, and their primitives' pairs */
static ms_status all_pairs(ms_sweep *w, sweeping *s) {
  ms_status st = MS_OK;
  for (int P = 0; P < s->npatch && st == MS_OK; P++)
    for (int Q = P; Q < s->npatch && st == MS_OK; Q++) {
      double d[3];
      if (!s->wanted[P] && !s->wanted[Q]) continue;
      for (int t = 0; t < 3; t++) d[t] = s->c[3 * P + t] - s->c[3 * Q + t];
      if (shifted_overlap(s->plo + 3 * P, s->phi + 3 * P, d, s->plo + 3 * Q, s->phi + 3 * Q))
        st = patches_pair(w, s, P, Q);
    }
  return st;
}

/* the pairs of every patch that may meet one holding a wanted primitive, found pair of patches
 * by pair of patches */
static ms_status patch_pairs(ms_sweep *w, sweeping *s, double r) {
  for (int k = 0; k < 3 * s->npatch; k++) s->plo[k] = INFINITY, s->phi[k] = -INFINITY;
  for (int k = 0; k < MS_KINDS; k++) sort_kind(s, s->kinds + k);
  for (int k = 0; k < MS_KINDS; k++) gather(s, s->kinds + k, s->wanted);
  // of the others, only the patches that may meet a wanted one (the rest take no part)
  if (s->only) near_wanted(s, r);
  for (int k = 0; k < MS_KINDS && s->only; k++) gather(s, s->kinds + k, s->take);
  return all_pairs(w, s);
}

/* ---------------------------------------------------------------- a few vertices' pairs */

/* the first vertex of primitive p of k that has a patch (a flagged one), -1 when none has */
static int anchor_vertex(const sweeping *s, const kind *k, int p) {
  for (int j = 0; j < k->k; j++) {
    int v = vertex_of(k, p, j);
    if (s->patch[v] >= 0) return v;
  }
  return -1;
}

/* the patch that anchors primitive p of k (its anchor vertex's), -1 when none does */
static int anchor(const sweeping *s, const kind *k, int p) {
  int v = anchor_vertex(s, k, p);
  return v < 0 ? -1 : s->patch[v];
}

/* the primitives of k that hold vertex v are held(k, i) for i in [*from, *to) */
static void holding(const kind *k, int v, int *from, int *to) {
  *from = k->vstart ? k->vstart[v] : v, *to = k->vstart ? k->vstart[v + 1] : v + 1;
}

/* the primitive at i of those holding a vertex (holding) */
static int held(const kind *k, int i) {
  return k->vlist ? k->vlist[i] : i;
}

/* k->member[k->start[P] .. k->start[P+1]): the primitives patch P anchors, ascending; taken
 * at their anchor vertices from the flagged vertices, which s->cube holds patch by patch */
static void anchored(const sweeping *s, kind *k) {
  int n = 0;
  for (int j = 0; j < s->nflag; j++) {
    int v = s->cube[j].v, from, to;
    if (j == 0 || s->patch[v] != s->patch[s->cube[j - 1].v]) k->start[s->patch[v]] = n;
    holding(k, v, &from, &to);
    for (int i = from; i < to; i++)
      if (anchor_vertex(s, k, held(k, i)) == v) k->member[n++] = held(k, i);
  }
  k->start[s->npatch] = n;
  for (int P = 0; P < s->npatch; P++)
    qsort(k->member + k->start[P], k->start[P + 1] - k->start[P], sizeof(int), ms_compare_ints);
}

/* lo, hi: the union of the boxes of patch P's own primitives (those it anchors) in its frame */
static void own_box(const sweeping *s, int P, double lo[3], double hi[3]) {
  double blo[3], bhi[3];
  for (int t = 0; t < 3; t++) lo[t] = INFINITY, hi[t] = -INFINITY;
  for (const kind *k = s->kinds; k < s->kinds + MS_KINDS; k++)
    for (int j = k->start[P]; j < k->start[P + 1]; j++) {
      path_box(s, k, k->member[j], s->c + 3 * P, blo, bhi);
      widen(lo, hi, blo, bhi);
    }
}

/* into near, how many: the vertices whose paths in the frame moving by c, grown by their reach
 * and r, meet the box lo, hi */
static int near_box(const sweeping *s, const double c[3], const double lo[3], const double hi[3],
                    double r, int *near) {
  int n = 0;
  for (int v = 0; v < s->m->nv; v++) {
    double grow = s->reach[v] + r;
    int meets = 1; /* a path meets the grown box unless both ends lie beyond one side */
    for (int t = 0; t < 3; t++) {
      double a = s->x[3 * v + t], e = a + s->dx[3 * v + t] - c[t];
      meets &= (a <= hi[t] + grow || e <= hi[t] + grow) && (a >= lo[t] - grow || e >= lo[t] - grow);
    }
    if (meets) near[n++] = v;
  }
  return n;
}

/* into out, boxed in P's frame: k's primitives that P anchors (the first out->nwanted), then
 * those anchored by no patch or a later one whose first vertex is among the nnear near and
 * whose boxes meet P's own box lo, hi (by their first vertices) */
static void pass_side(const sweeping *s, const kind *k, int P, const double lo[3],
                      const double hi[3], const int *near, int nnear, side *out) {
  const double *c = s->c + 3 * P;
  out->n = 0;
  for (int j = k->start[P]; j < k->start[P + 1]; j++) {
    path_box(s, k, k->member[j], c, out->lo + 3 * out->n, out->hi + 3 * out->n);
    out->id[out->n++] = k->member[j];
  }
  out->nwanted = out->n;
  for (int j = 0; j < nnear; j++) {
    int v = near[j], from, to, A;
    holding(k, v, &from, &to);
    for (int i = from; i < to; i++) {
      int p = held(k, i);
      if (first_of(k, p) != v || ((A = anchor(s, k, p)) >= 0 && A <= P)) continue;
      double *plo = out->lo + 3 * out->n, *phi = out->hi + 3 * out->n;
      path_box(s, k, p, c, plo, phi);
      if (ms_boxes_overlap(plo, phi, lo, hi)) out->id[out->n++] = p;
    }
  }
}

/* patch P's pairs, in its frame, into k's lists: its points against its triangles and the
 * others', the others' points against its triangles, its edges against its own and the
 * others'. t: the pass's scratch; r: the largest inflation [m] */
static ms_status pass_pairs(const sink *k, const sweeping *s, passer *t, int P, double r) {
  double lo[3], hi[3];
  own_box(s, P, lo, hi);
  int *near = t->near.p, nnear = near_box(s, s->c + 3 * P, lo, hi, r, near);
  side a = {t->lo[0].p, t->hi[0].p, t->id[0].p, 0, 0},
       b = {t->lo[1].p, t->hi[1].p, t->id[1].p, 0, 0};
  pass_side(s, s->kinds + MS_POINTS, P, lo, hi, near, nnear, &a);
  pass_side(s, s->kinds + MS_TRIANGLES, P, lo, hi, near, nnear, &b);
  side wa = part(&a, 0, a.nwanted), oa = part(&a, a.nwanted, a.n), wb = part(&b, 0, b.nwanted);
  ms_status st = hashed(k, s, 0, &wa, &b, 0);
  if (st == MS_OK) st = hashed(k, s, 0, &oa, &wb, 0);
  if (st != MS_OK) return st;
  pass_side(s, s->kinds + MS_EDGES, P, lo, hi, near, nnear, &a);
  wa = part(&a, 0, a.nwanted), oa = part(&a, a.nwanted, a.n);
  st = hashed(k, s, 1, &wa, &wa, 1);
  return st == MS_OK ? hashed(k, s, 1, &wa, &oa, 0) : st;
}

/* what the passes of a few vertices' sweep share */
typedef struct {
  ms_sweep *w;
  const sweeping *s;
  double r;
  int threads; /* those each pass's hash may use */
} passing;

/* the passes of patches [p0, p1), each into its own lists, on this thread's scratch */
static void pass_block(void *ctx, int p0, int p1) {
  const passing *c = ctx;
  passer *t = (passer *)c->w->passer.p + ms_thread_id();
  for (int P = p0; P < p1; P++) {
    pass_out *o = (pass_out *)c->w->pout.p + P;
    o->npair[0] = o->npair[1] = 0;
    const sink k = {&t->hash, c->threads, o->pair, o->npair};
    o->st = pass_pairs(&k, c->s, t, P, c->r);
  }
}

/* the pairs of the few patches of flagged vertices, one pass each: a primitive holding a
 * flagged vertex is anchored by that vertex's patch (the first such vertex's), and a pair of
 * two anchored primitives is found in the pass of the lower anchor. The passes run on the
 * sweep's threads, dealt to them in turn, each thread with scratch of its own (its hash on one
 * thread where passes run side by side, on all of them for a single pass), and their pairs are
 * joined in the order of the patches */
static ms_status few_pairs(ms_sweep *w, sweeping *s, double r) {
  extent(s);
  for (kind *k = s->kinds; k < s->kinds + MS_KINDS; k++) anchored(s, k);
  // (a thread's scratch is the one of its number in the pass, which runs in no other)
  int nt = ms_team(s->threads, s->npatch);
  if (ms_grow(&w->passer, nt, sizeof(passer), w->passer.cap) ||
      ms_grow(&w->pout, s->npatch, sizeof(pass_out), w->pout.cap))
    return MS_ENOMEM;
  for (passer *t = w->passer.p; t < (passer *)w->passer.p + nt; t++) {
    if (ms_grow(&t->near, s->m->nv, sizeof(int), 0)) return MS_ENOMEM;
    for (int k = 0; k < 2; k++)
      if (ms_grow(t->lo + k, 3 * (size_t)s->big, sizeof(double), 0) ||
          ms_grow(t->hi + k, 3 * (size_t)s->big, sizeof(double), 0) ||
          ms_grow(t->id + k, s->big, sizeof(int), 0))
        return MS_ENOMEM;
  }
  passing c = {w, s, r, nt > 1 ? 1 : s->threads};
  ms_blocks_dealt_on(nt, s->npatch, 1, pass_block, &c);
  // the passes' pairs, in the order of their patches
  for (const pass_out *o = w->pout.p; o < (pass_out *)w->pout.p + s->npatch; o++) {
    if (o->st != MS_OK) return o->st;
    for (int k = 0; k < 2; k++)
      if (ms_append_pairs(w->pair + k, w->npair + k, o->pair[k].p, o->npair[k])) return MS_ENOMEM;
  }
  return MS_OK;
}

/* ---------------------------------------------------------------- entry point */

/* the mean length of the moves of the vertices in patches, in their patches' frames [m] */
static double frame_move(const sweeping *s) {
  double sum = 0;
  int n = 0;
  for (int v = 0; v < s->m->nv; v++) {
    double l2 = 0;
    if (s->patch[v] < 0) continue;
    for (int t = 0; t < 3; t++) {
      double e = s->dx[3 * v + t] - s->c[3 * s->patch[v] + t];
      l2 += e * e;
    }
    sum += sqrt(l2), n++;
  }
  return n ? sum / n : 0.0;
}

/* b grown to n elements of `size` bytes (its contents dropped); NULL, with *ok 0, when out of
 * memory */
static void *room(ms_buf *b, size_t n, size_t size, int *ok) {
  if (ms_grow(b, n, size, 0)) return *ok = 0, NULL;
  return b->p;
}

/* s's arrays for m from w's scratch (grown as needed; the sums zeroed), its kinds inflated for
 * the radius r; 1, or 0 when out of memory */
static int make(ms_sweep *w, sweeping *s, const ms_model *m, double r) {
  size_t nv = m->nv, ne = m->ne, nf = m->nf, big = nv > ne ? nv : ne;
  big = big > nf ? big : nf;
  const int *idx[MS_KINDS] = {NULL, m->fedge, m->face}, n[MS_KINDS] = {m->nv, m->ne, m->nf};
  const int *vstart[MS_KINDS] = {NULL, m->ve_start, m->vf_start},
            *vlist[MS_KINDS] = {NULL, m->ve, m->vf};
  const double inflate[MS_KINDS] = {r, 0.5 * r, 0.0};
  ms_buf *b = w->scratch;
  int ok = 1;
  s->cube = room(b++, nv, sizeof(cube), &ok), s->count = room(b++, nv, sizeof(int), &ok);
  s->patch = room(b++, nv, sizeof(int), &ok), s->c = room(b++, 3 * nv, sizeof(double), &ok);
  s->plo = room(b++, 3 * nv, sizeof(double), &ok), s->phi = room(b++, 3 * nv, sizeof(double), &ok);
  s->wanted = room(b++, nv, 1, &ok), s->take = room(b++, nv, 1, &ok);
  s->want = room(b++, nv, sizeof(int), &ok), s->big = (int)big;
  s->reach = room(b++, nv, sizeof(double), &ok);
  s->vlo = room(b++, 3 * nv, sizeof(double), &ok), s->vhi = room(b++, 3 * nv, sizeof(double), &ok);
  for (int k = 0; k < 2; k++) {
    side *sd = s->side + k;
    sd->lo = room(b++, 3 * big, sizeof(double), &ok),
    sd->hi = room(b++, 3 * big, sizeof(double), &ok);
    sd->id = room(b++, big, sizeof(int), &ok);
  }
  for (int k = 0; k < MS_KINDS; k++) {
    kind *kd = s->kinds + k;
    *kd = (kind){.idx = idx[k], .n = n[k], .k = k + 1, .r = inflate[k]};
    kd->vstart = vstart[k], kd->vlist = vlist[k];
    kd->start = room(b++, nv + 1, sizeof(int), &ok), kd->member = room(b++, n[k], sizeof(int), &ok);
    kd->lo = room(b++, 3 * (size_t)n[k], sizeof(double), &ok);
    kd->hi = room(b++, 3 * (size_t)n[k], sizeof(double), &ok);
  }
  if (!ok) return 0;
  memset(s->count, 0, sizeof(int) * nv), memset(s->c, 0, sizeof(double) * 3 * nv);
  memset(s->wanted, 0, nv);
  for (int k = 0; k < MS_KINDS; k++) {
    memset(s->kinds[k].start, 0, sizeof(int) * (nv + 1));
  }
  return 1;
}

ms_status ms_sweep_pairs(ms_sweep **sp, const ms_model *m, const double *x, const double *dx,
                         int moving, const unsigned char *only, double r, double cell, int threads,
                         const int **pt, int *npt, const int **ee, int *nee) {
  ms_sweep *w = *sp ? *sp : ms_alloc(1, sizeof(ms_sweep));
  if (!w) return MS_ENOMEM;
  *sp = w;
  w->npair[0] = w->npair[1] = 0;
  int wanted = !only;
  for (int v = 0; v < m->nv && !wanted; v++) wanted = only[v];
  if (!wanted) return *pt = *ee = NULL, *npt = *nee = 0, MS_OK;
  sweeping s = {.m = m, .x = x, .dx = dx, .only = only, .cell = cell, .threads = threads};
  ms_status st = make(w, &s, m, r) ? MS_OK : MS_ENOMEM;
  if (st == MS_OK) {
    // patches of side L (of the flagged vertices alone, when they fill few), their frames
    patches(&s, (only ? MS_SWEEP_PASS : MS_SWEEP_PATCH) * cell, only);
    int few = only && s.npatch <= MS_SWEEP_FEW;
    if (only && !few) patches(&s, MS_SWEEP_PATCH * cell, NULL);
    if (moving) frames(&s); /* else every frame is x's: c = 0 */
    s.cell += frame_move(&s);
    st = few ? few_pairs(w, &s, r) : patch_pairs(w, &s, r);
  }
  if (st != MS_OK) return w->npair[0] = w->npair[1] = 0, st;
  *pt = w->pair[0].p, *npt = w->npair[0], *ee = w->pair[1].p, *nee = w->npair[1];
  return MS_OK;
}
