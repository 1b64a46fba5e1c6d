/* planar.c: where a triangle mesh that projects one to one onto a plane can have close pairs
 *
 * A cloth that is smooth at the scale of its triangles (hanging, swinging, draped without
 * folds) has no two primitives close together that share no vertex, yet their boxes overlap
 * everywhere along the mesh. A certificate says so without measuring them (the normal-cone
 * test of Volino and Magnenat-Thalmann 1994, "Efficient self-collision detection on smoothly
 * discretized surface animations using geometrical shape regularity", Computer Graphics
 * Forum 13(3), made quantitative):
 *
 * Let the mesh be one topological disk (disk.c) and a the unit vector along the sum of its
 * triangles' area normals. When every triangle's normal is within 90 degrees of a, the projection P
 * onto the plane normal to a maps every triangle with positive orientation; when moreover the
 * projected boundary is a simple closed curve, P is one to one on the whole mesh (a piecewise
 * linear map whose triangles all keep their orientation covers each point as many times as
 * the image of the boundary winds around it: at most once). P shortens distances, so two
 * primitives are at least as far apart as their projections, and in the projected
 * triangulation two primitives that share no vertex are at least
 *
 *   sigma_v = min(rho_v, beta_v)
 *
 * apart for a vertex v of theirs: rho_v is v's distance to its link (the far edges of its
 * triangles), so its triangles cover the disk of radius rho_v about it and a straight path
 * from v to any primitive not holding it crosses the link; beta_v (a boundary vertex) is v's
 * distance to the boundary edges not holding it, which a path leaving the mesh at v must
 * cross to come back. A point-triangle pair is so bounded through its point; an edge-edge pair
 * through an endpoint, as two disjoint segments are closest at an endpoint of one. So every
 * pair closer than r has a tight vertex, sigma_v < r, and the broad phase need only look at
 * the boxes of primitives that hold one.
 *
 * Where a few triangles face away from a (a crumpled corner, a fold), the argument holds on the
 * rest. The kept triangles G are those facing a by more than MS_PLANAR_COS, less, round after
 * round until none goes: those outside G's largest piece (joined across edges), those at a
 * vertex where G makes more than one fan, and those at the ends of an edge of G's projected
 * boundary that comes within the rounding margin eps of another. (Once G is one piece, a round that
 * drops more floods it again only when the kept neighbours of some group of the newly dropped
 * triangles are not joined by a short walk: otherwise every path in G through the group can go
 * round it, and G is still one piece.) G is then a surface whose projection covers
 * each point as many times as the image of its boundary (the outer loop and the loops around
 * the dropped parts) winds around it; that image being simple, the count steps up by one
 * across each loop from its right to its left and is highest just inside one of them, so a
 * winding number of 1 at a point just inside each loop makes P one to one on G. The corners of
 * the dropped triangles are tight (sigma_v = 0), so every pair that is not within G has a
 * tight vertex, and within G the bound above holds with beta_v measured to every loop. The
 * test refuses when it would drop more than MS_PLANAR_DROP of the triangles, and meshes that
 * are not disks (several pieces, closed surfaces); detection then hashes every box.
 *
 * Along the straight paths x + s dx, s in [0, 1], the same holds where G's triangles keep their
 * orientation and its boundary stays simple: its loops then move without touching, so the count
 * of triangles covering a point stays what it was at x, at most one. The triangles that may
 * flip are left out, then, round after round, those whose boundary edges may come within eps
 * of another on the way (the hole a flipped triangle leaves folds over itself as its corner
 * passes the edges beyond); what is left is a part of G, one to one at x, and stays so. sigma_v
 * becomes a lower bound over the paths, and the vertices it leaves below the floor are loose:
 * the step's end sweeps their pairs alone.
 *
 * A tight (or loose) vertex of G whose disk of radius r (or the floor, grown by the moves about
 * it) stays inside the projection finds its pairs by walking G's triangles about it (walk.c);
 * only the corners of the triangles left out and the vertices whose disks may reach across a
 * gap are hashed (swept, along a path).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "distance.h"
#include "hash.h"
#include "planar.h"
#include "plane.h"
#include "threads.h"
#include "walk.h"

/* the most triangles a walk that joins the kept neighbours of dropped ones may visit before the
 * kept triangles are flooded instead */
#define MS_PLANAR_JOIN 1024
/* the most triangles a flood of a piece of the kept ones visits before the piece counts as
 * large (one piece may be: the largest) */
#define MS_PLANAR_PIECE 1024
/* the least cosine between a kept triangle's normal and the axis. A steeper triangle keeps
 * under 0.3 of its area in the plane, so its corners lie close to their links there and are
 * mostly tight at the default radius (about half an edge) anyway; left out at once, the near
 * edge-on triangles of a crease need not be peeled off it a pair at a time as its boundary
 * overlaps itself in the plane (a 100 x 100 cloth crumpling at its pins ran out of rounds when
 * only those within 1e-3 of edge-on were left out) */
#define MS_PLANAR_COS 0.3
/* the rounding margin of the projected distances, relative to r plus the largest coordinate */
#define MS_PLANAR_EPS 1e-9
/* a distance along a path is bounded on at most this many slices of it */
#define MS_PLANAR_SLICES 64
/* positions or moves beyond this are refused (their squares stay finite) */
#define MS_PLANAR_BIG 1e100
/* the most triangles the certificate drops, as a share of all */
#define MS_PLANAR_DROP 0.25
/* the most rounds of dropping triangles */
#define MS_PLANAR_ROUNDS 16
/* the most boundary loops whose winding is checked */
#define MS_PLANAR_LOOPS 64
/* the most triangles a walk about a tight vertex may find before its pairs are hashed */
#define MS_PLANAR_WALK 256
/* the most times a walk along paths grows its radius to the moves it finds */
#define MS_PLANAR_GROW 4
/* vertices or triangles per block of a parallel pass */
#define MS_PLANAR_BLOCK 1024
/* the most bins along each axis of the few's shadows, which screen the many */
#define MS_PLANAR_BINS 256
/* vertices per block of the walks (fewer, dealt to the threads in turn: tight vertices gather
 * in a few places) */
#define MS_PLANAR_WALKS 128

/* how a vertex's pairs are found: not at all (it is not tight), by hashing, by a walk (to
 * come, or done) */
typedef enum {
  MS_PLANAR_NONE = 0,
  MS_PLANAR_HASHED,
  MS_PLANAR_TO_WALK,
  MS_PLANAR_WALKED
} ms_planar_by;

/* ---------------------------------------------------------------- the certificate */

/* the scratch of one thread's walks: marks of the triangles and edges it reached (by the walk's
 * number), the triangles one walk found, the edges at its vertex */
typedef struct {
  ms_buf fseen; /* (nf) int */
  ms_buf eseen; /* (ne) int */
  ms_buf near;  /* (MS_PLANAR_WALK) int */
  ms_buf vedge; /* (2 MS_PLANAR_WALK) int */
  int mark;     /* the last walk's number */
} walker;

/* the pairs one block of vertices' walks found, point-triangle and edge-edge */
typedef struct {
  ms_buf pairs[2]; /* (2 n[k]) int */
  int n[2];
  int ok; /* 0: out of memory */
} walked_block;

/* the scratch of one kind's search for the pairs of hashed vertices */
typedef struct {
  ms_hash *hash;
  ms_buf lo, hi;   /* (3 n) double: the few's boxes */
  ms_buf list;     /* (n) int: the few, the primitives that hold a hashed vertex */
  ms_buf alo, ahi; /* (3 n) double: the boxes of the many that may meet the few */
  ms_buf amap;     /* (n) int: their indices among the many */
  ms_buf out;      /* (2 hits) int: the pairs found */
  ms_buf sort;     /* (2 hits) int: the radix sort's copy of them */
} finder;

struct ms_planar {
  ms_hash *hash;
  ms_buf uv;        /* (nv,3) double: the projected positions (third coordinate 0) */
  ms_buf duv;       /* (nv,3) double: a path's projected displacements */
  ms_buf sigma;     /* (nv) double: the bound sigma_v [m] */
  ms_buf rho;       /* (nv) double: rho_v [m] */
  ms_buf beta;      /* (nv) double: beta_v [m] (infinite off the boundary) */
  ms_buf lo, hi;    /* (3 nb) double: the boundary's vertices' boxes in the plane */
  ms_buf blo, bhi;  /* (3 nb) double: the boundary's edge boxes in the plane */
  ms_buf good;      /* (nf) unsigned char: the triangles kept (1) */
  ms_buf fnormal;   /* (nf,3) double: the triangles' area normals */
  ms_buf bnd;       /* (2 nb) int: the kept triangles' boundary edges, in their direction */
  ms_buf bface;     /* (nb) int: and the triangle of each */
  ms_buf vout;      /* (nv) int: per vertex, the boundary edge leaving it (or how many leave) */
  ms_buf pinch;     /* (nv) int: the vertices two boundary edges leave */
  ms_buf fmark;     /* (nf) unsigned char: the triangles that may hold a boundary edge */
  ms_buf piece;     /* (nf) int: the piece each kept triangle is in (still_whole: the dropped) */
  ms_buf whole;     /* (nf) unsigned char: kept triangles known to be one piece, if whole_ok */
  int whole_ok;     /* 1: whole holds them (the last flood's piece, or one shown to stay so) */
  ms_buf stamp;     /* (nf) int: the walk that last marked each triangle */
  int nstamp;       /* the last walk's number */
  int nb;           /* the kept triangles' boundary edges */
  finder find[2];   /* the point-triangle and the edge-edge searches */
  ms_buf sort;      /* (2 hits) int: the radix sort's copy of a path's edge-edge pairs */
  ms_buf how;       /* (nv) unsigned char: how each vertex's pairs are found (ms_planar_by) */
  ms_buf walker;    /* (threads) walker: each thread's walks' scratch */
  ms_buf wblock;    /* (blocks) walked_block: each block of vertices' walks' pairs */
  ms_buf walked[2]; /* (2 pairs) int: the pairs walks found, point-triangle and edge-edge */
  ms_buf held;      /* (nv,3) double: the positions where uv and good were last certified */
  int held_ok;      /* 1: held, held_a and the certificate in uv and good are kept */
  double held_a[3]; /* and its axis */
};

void ms_planar_free(void *ws) {
  ms_planar *w = ws;
  if (!w) return;
  ms_hash_free(w->hash);
  for (walker *k = w->walker.p; k && k < (walker *)w->walker.p + w->walker.cap; k++)
    free(k->fseen.p), free(k->eseen.p), free(k->near.p), free(k->vedge.p);
  for (walked_block *o = w->wblock.p; o && o < (walked_block *)w->wblock.p + w->wblock.cap; o++)
    free(o->pairs[0].p), free(o->pairs[1].p);
  ms_buf *b[] = {&w->uv,    &w->duv,   &w->sigma,  &w->rho,    &w->beta,   &w->lo,        &w->hi,
                 &w->blo,   &w->bhi,   &w->good,   &w->bnd,    &w->bface,  &w->vout,      &w->piece,
                 &w->pinch, &w->fmark, &w->sort,   &w->how,    w->walked,  w->walked + 1, &w->held,
                 &w->whole, &w->stamp, &w->walker, &w->wblock, &w->fnormal};
  for (size_t k = 0; k < sizeof(b) / sizeof(*b); k++) free(b[k]->p);
  for (finder *f = w->find; f < w->find + 2; f++) {
    ms_hash_free(f->hash);
    ms_buf *fb[] = {&f->lo, &f->hi, &f->list, &f->alo, &f->ahi, &f->amap, &f->out, &f->sort};
    for (size_t k = 0; k < sizeof(fb) / sizeof(*fb); k++) free(fb[k]->p);
  }
  free(w);
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* face f's area normal (twice its area long) at x */
static void normal(const ms_model *m, const double *x, int f, double n[3]) {
  const double *a = x + 3 * m->face[3 * f], *b = x + 3 * m->face[3 * f + 1],
               *c = x + 3 * m->face[3 * f + 2];
  double e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
         g[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  cross(e, g, n);
}

/* what the blocks of axis share: the positions, the triangles' area normals (nf,3), the axis
 * and the triangles kept */
typedef struct {
  const ms_model *m;
  const double *x;
  double *n;
  const double *a;
  unsigned char *good;
} axing;

/* the area normals of triangles [f0, f1) */
static void normals_block(void *ctx, int f0, int f1) {
  const axing *c = ctx;
  for (int f = f0; f < f1; f++) normal(c->m, c->x, f, c->n + 3 * (size_t)f);
}

/* good[f] for triangles [f0, f1) */
static void facing_block(void *ctx, int f0, int f1) {
  const axing *c = ctx;
  for (int f = f0; f < f1; f++) {
    const double *n = c->n + 3 * (size_t)f;
    c->good[f] = dot(n, c->a) > MS_PLANAR_COS * sqrt(dot(n, n));
  }
}

/* the unit axis a along the sum of the area normals (n: scratch for them, (nf,3); the sum in
 * the triangles' order), and good[f] = 1 for the triangles whose normal is more than
 * MS_PLANAR_COS from edge-on to it, on `threads` threads; 0 when there is no axis */
static int axis(const ms_model *m, const double *x, int threads, double *n, double a[3],
                unsigned char *good) {
  axing c = {m, x, n, a, good};
  ms_blocks_on(threads, m->nf, MS_PLANAR_BLOCK, normals_block, &c);
  a[0] = a[1] = a[2] = 0;
  for (int f = 0; f < m->nf; f++)
    for (int t = 0; t < 3; t++) a[t] += n[3 * (size_t)f + t];
  double len = sqrt(dot(a, a));
  if (!(len > 0) || !isfinite(len)) return 0;
  for (int t = 0; t < 3; t++) a[t] /= len;
  ms_blocks_on(threads, m->nf, MS_PLANAR_BLOCK, facing_block, &c);
  return 1;
}

/* a flood of the kept triangles' piece from f0 (kept, unlabelled), labelling them f0 in
 * w->piece, that stops once it holds more than `budget` triangles or meets a triangle another
 * flood labelled; 1 when it met one. *size: the triangles it visited, *low: the lowest of them */
static int flood(ms_planar *w, const ms_model *m, const unsigned char *good, int f0, int budget,
                 int *size, int *low) {
  int *piece = w->piece.p, *stack = w->bface.p, top = 0, met = 0;
  stack[top++] = f0, piece[f0] = f0, *size = 0, *low = f0;
  while (top && !met && *size <= budget) {
    int f = stack[--top];
    ++*size, *low = f < *low ? f : *low;
    for (int j = 0; j < 3; j++) {
      int t = m->ftwin[3 * f + j];
      if (t < 0 || !good[t]) continue;
      if (piece[t] < 0) piece[t] = f0, stack[top++] = t;
      met |= piece[t] != f0;
    }
  }
  return met;
}

/* the kept triangles' pieces (joined across their edges) labelled into w->piece by floods from
 * those beside a dropped one (every piece borders one: the mesh is one disk), each labelled by
 * its first triangle. A flood stops once it holds more than `budget` triangles, or where it
 * meets a triangle of one that stopped so (only such a flood leaves its piece unlabelled to
 * meet: the same piece): such floods' labels are large (w->fmark), and their pieces' other
 * triangles stay unlabelled (-1). The label of the largest piece: the large one when only one
 * flood stopped at the budget (the others are smaller), else the largest whole one, ties to the
 * piece of the lowest triangle; -1 when no triangle is kept, -2 when several floods stopped at
 * the budget (which piece is largest is not known) */
static int label_pieces(ms_planar *w, const ms_model *m, const unsigned char *good, int budget) {
  int *piece = w->piece.p, best = -1, most = 0, lowest = 0, nlarge = 0;
  unsigned char *large = w->fmark.p;
  for (int f = 0; f < m->nf; f++) piece[f] = -1;
  memset(large, 0, m->nf);
  for (int g = 0; g < m->nf; g++)
    for (int k = 0; k < 3 && !good[g]; k++) {
      int f0 = m->ftwin[3 * g + k], size, low;
      if (f0 < 0 || !good[f0] || piece[f0] >= 0) continue;
      int met = flood(w, m, good, f0, budget, &size, &low);
      if (met || size > budget)
        large[f0] = 1, nlarge += !met, best = met ? best : f0;
      else if (!nlarge && (size > most || (size == most && low < lowest)))
        best = f0, most = size, lowest = low;
    }
  return nlarge > 1 ? -2 : best;
}

/* good[f] = 0 for the kept triangles outside the largest piece that kept triangles joined
 * across their edges make (a flap folded back over the rest is a piece of its own); how many.
 * Floods stop at MS_PLANAR_PIECE triangles, so that the large piece is not flooded whole
 * (unless two may be large: then each piece is) */
static int largest_piece(ms_planar *w, const ms_model *m, unsigned char *good) {
  int *piece = w->piece.p, dropped = 0, best = label_pieces(w, m, good, MS_PLANAR_PIECE);
  if (best == -2) best = label_pieces(w, m, good, m->nf);
  unsigned char *large = w->fmark.p;
  for (int f = 0; f < m->nf && best >= 0; f++) {
    int p = piece[f];
    if (good[f] && p != best && !(large[best] && (p < 0 || large[p]))) good[f] = 0, dropped++;
  }
  memset(large, 0, m->nf);
  memcpy(w->whole.p, good, m->nf), w->whole_ok = 1;
  return dropped;
}

/* a new walk's number: marks of earlier walks are below it (cleared when they would overflow) */
static int next_walk(ms_planar *w, const ms_model *m) {
  if (w->nstamp > INT_MAX - 2) memset(w->stamp.p, 0, sizeof(int) * m->nf), w->nstamp = 0;
  return ++w->nstamp;
}

/* 1 when a walk over kept triangles from near[0] meets all n triangles near[] (marked with the
 * walk's number s) within MS_PLANAR_JOIN triangles (queue: scratch of nf ints) */
static int joined(ms_planar *w, const ms_model *m, const unsigned char *good, const int *near,
                  int n, int s, int *queue) {
  int *stamp = w->stamp.p, head = 0, tail = 0, met = 1, seen = next_walk(w, m);
  stamp[near[0]] = seen, queue[tail++] = near[0];
  while (head < tail && met < n) {
    int f = queue[head++];
    for (int k = 0; k < 3; k++) {
      int t = m->ftwin[3 * f + k];
      if (t < 0 || !good[t] || stamp[t] == seen) continue;
      if (tail == MS_PLANAR_JOIN) return 0;
      met += stamp[t] == s, stamp[t] = seen, queue[tail++] = t;
    }
  }
  return met == n;
}

/* 1 when the kept triangles are still one piece, told without a flood: w->whole is one and good
 * keeps only triangles of it, and about each group of those it dropped since (joined across
 * edges) the kept neighbours are joined by a short walk (so a path through the group can go
 * round it); w->whole then becomes good. stack: scratch of 3 nf ints */
static int still_whole(ms_planar *w, const ms_model *m, const unsigned char *good, int *stack) {
  unsigned char *whole = w->whole.p, *mark = w->fmark.p;
  int *gone = w->piece.p, *near = stack + m->nf, *stamp = w->stamp.p, n = 0, ok = 1;
  if (!w->whole_ok) return 0;
  for (int f = 0; f < m->nf; f++) {
    if (good[f] & !whole[f]) return 0;
    if (whole[f] & !good[f]) gone[n++] = f;
  }
  // each group by a flood over the dropped (mark 1, then 2 once grouped), and the kept
  // triangles about it (marked with a walk's number s)
  for (int i = 0; i < n; i++) mark[gone[i]] = 1;
  for (int i = 0; i < n && ok; i++) {
    if (mark[gone[i]] != 1) continue;
    int top = 0, nnear = 0, s = next_walk(w, m);
    stack[top++] = gone[i], mark[gone[i]] = 2;
    while (top) {
      int f = stack[--top];
      for (int k = 0; k < 3; k++) {
        int t = m->ftwin[3 * f + k];
        if (t < 0) continue;
        if (mark[t] == 1) mark[t] = 2, stack[top++] = t;
        if (good[t] && stamp[t] != s) stamp[t] = s, near[nnear++] = t;
      }
    }
    ok = !nnear || joined(w, m, good, near, nnear, s, stack);
  }
  for (int i = 0; i < n; i++) mark[gone[i]] = 0, whole[gone[i]] = !ok;
  return ok;
}

/* w->bnd, w->nb, w->bface: the edges of the triangles with good[f] = 1 whose neighbour is
 * dropped or absent, in the order of their triangles and corners, counted at their start in
 * out (nv), and the vertices two of them start at into w->pinch (their count). Only the
 * triangles on the mesh's boundary or beside a dropped one can hold such an edge: those are
 * marked (w->fmark, left clear) and the rest passed over */
static int boundary_edges(ms_planar *w, const ms_model *m, const unsigned char *good, int *out) {
  unsigned char *mark = w->fmark.p;
  int *bnd = w->bnd.p, *bface = w->bface.p, *pinch = w->pinch.p, nb = 0, npinch = 0;
  for (int i = 0; i < m->nfbound; i++) mark[m->fbound[i]] = 1;
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3 && !good[f]; k++)
      if (m->ftwin[3 * f + k] >= 0) mark[m->ftwin[3 * f + k]] = 1;
  memset(out, 0, sizeof(int) * m->nv);
  for (int f = 0; f < m->nf; f++) {
    if (!mark[f]) continue;
    mark[f] = 0;
    for (int k = 0; k < 3 && good[f]; k++) {
      int t = m->ftwin[3 * f + k], v = m->face[3 * f + k];
      if (t >= 0 && good[t]) continue;
      bnd[2 * nb] = v, bnd[2 * nb + 1] = m->face[3 * f + (k + 1) % 3];
      bface[nb++] = f;
      if (++out[v] == 2) pinch[npinch++] = v;
    }
  }
  w->nb = nb;
  return npinch;
}

/* w->bnd, w->nb: the boundary of the triangles with good[f] = 1 (m a disk), each edge in its
 * triangle's direction (w->bface: that triangle), after dropping (good 0) the kept triangles
 * outside their largest piece and those at each vertex that leaves more than one boundary
 * edge (its kept triangles make several fans), round after round until none is dropped; 0
 * when that takes more than MS_PLANAR_ROUNDS rounds or drops more than MS_PLANAR_DROP of the
 * triangles */
static int kept(ms_planar *w, const ms_model *m, unsigned char *good) {
  int dropped = 0, *out = w->vout.p;
  for (int f = 0; f < m->nf; f++) dropped += !good[f];
  for (int round = 0;; round++) {
    if (dropped && !still_whole(w, m, good, w->bface.p)) dropped += largest_piece(w, m, good);
    if (round == MS_PLANAR_ROUNDS || dropped > MS_PLANAR_DROP * m->nf) return 0;
    // the boundary, and the triangles at a vertex with two fans dropped
    int npinch = boundary_edges(w, m, good, out);
    const int *pinch = w->pinch.p;
    for (int i = 0; i < npinch; i++)
      for (int j = m->vf_start[pinch[i]]; j < m->vf_start[pinch[i] + 1]; j++)
        if (good[m->vf[j]]) good[m->vf[j]] = 0, dropped++;
    if (!npinch) return 1;
  }
}

/* uv: x projected onto the plane normal to a, in an orthonormal basis of it (uv may be x) */
static void project(const ms_model *m, const double *x, const double a[3], double *uv) {
  int k = fabs(a[1]) < fabs(a[0]);
  if (fabs(a[2]) < fabs(a[k])) k = 2;
  double unit[3] = {0, 0, 0}, e1[3], e2[3];
  unit[k] = 1; /* the coordinate axis farthest from a */
  cross(a, unit, e1);
  double len = sqrt(dot(e1, e1));
  for (int t = 0; t < 3; t++) e1[t] /= len;
  cross(a, e1, e2);
  for (int v = 0; v < m->nv; v++) {
    double p = dot(x + 3 * v, e1), q = dot(x + 3 * v, e2); /* uv may be x */
    uv[3 * v] = p, uv[3 * v + 1] = q, uv[3 * v + 2] = 0;
  }
}

/* the move in the plane of vertex v relative to vertex u */
static double moved(const double *duv, int v, int u) {
  return ms_plane_norm(duv[3 * v] - duv[3 * u], duv[3 * v + 1] - duv[3 * u + 1]);
}

/* the largest move in the plane of vertex v relative to u or w */
static double relative(const double *duv, int v, int u, int w) {
  return ms_max(moved(duv, v, u), moved(duv, v, w));
}

/* the distance in the plane from vertex v to the segment (p, q) at uv + s duv */
static double distance_at(const double *uv, const double *duv, double s, int v, int p, int q) {
  double y[3][2];
  const int id[3] = {v, p, q};
  for (int k = 0; k < 3; k++)
    for (int t = 0; t < 2; t++) y[k][t] = uv[3 * id[k] + t] + s * duv[3 * id[k] + t];
  return ms_plane_gap(y[0], y[1], y[2]);
}

/* a lower bound on the distance in the plane from vertex v to the segment (p, q) along the
 * paths uv + s duv, s in [0, 1], refined until it shows `need` where it can: the distance moves
 * by at most rel (v's largest move relative to p or q) over the path, so it is at least the
 * start's less rel, and on each of K slices at least the mean of its ends' less rel / 2K */
static double path_distance(const double *uv, const double *duv, int v, int p, int q, double need) {
  double rel = relative(duv, v, p, q), d0 = distance_at(uv, duv, 0.0, v, p, q);
  if (d0 - rel >= need || d0 <= need) return d0 - rel;
  int slices = (int)ms_min(MS_PLANAR_SLICES, ceil(rel / (d0 - need)));
  double low = INFINITY, last = d0;
  for (int k = 1; k <= slices; k++) {
    double next = distance_at(uv, duv, (double)k / slices, v, p, q);
    low = ms_min(low, 0.5 * (last + next - rel / slices)), last = next;
  }
  return low;
}

/* the distance in the plane from vertex v to the segment (p, q) at uv (duv NULL), or a lower
 * bound on it along the paths uv + s duv that shows `need` where it can */
static double apart(const double *uv, const double *duv, int v, int p, int q, double need) {
  return duv ? path_distance(uv, duv, v, p, q, need)
             : ms_plane_gap(uv + 3 * v, uv + 3 * p, uv + 3 * q);
}

/* vertex v's largest move in the plane relative to a neighbour along the paths uv + s duv (its
 * link's corners are its neighbours across the triangles' edges) */
static double neighbour_move(const ms_model *m, const double *duv, int v) {
  double most = 0;
  for (int j = m->ve_start[v]; j < m->ve_start[v + 1]; j++) {
    const int *e = m->fedge + 2 * m->ve[j];
    most = ms_max(most, moved(duv, e[0], e[1]));
  }
  return most;
}

/* what the blocks of link_distances share */
typedef struct {
  const ms_model *m;
  const double *uv, *duv;
  double need, *rho;
} linking;

/* link_distances for vertices [v0, v1): each against its triangles' far edges */
static void link_block(void *ctx, int v0, int v1) {
  const linking *c = ctx;
  const ms_model *m = c->m;
  for (int v = v0; v < v1; v++) {
    double low = c->duv ? c->rho[v] - neighbour_move(m, c->duv, v) : -INFINITY;
    c->rho[v] = low >= c->need ? low : INFINITY;
    if (low >= c->need) continue; /* (along paths only) its bound is known */
    for (int j = m->vf_start[v]; j < m->vf_start[v + 1]; j++) {
      const int *f = m->face + 3 * m->vf[j];
      int k = f[0] == v ? 0 : f[1] == v ? 1 : 2;
      double d = apart(c->uv, c->duv, v, f[(k + 1) % 3], f[(k + 2) % 3], c->need);
      if (d < c->rho[v]) c->rho[v] = d;
    }
  }
}

/* rho_v: each vertex's distance to its link in the plane at uv (duv NULL), or a lower bound on
 * it along the paths uv + s duv (finite) that shows need where it can, from rho at uv (given
 * in rho), on `threads` threads. Along paths only whether rho_v shows need is read, so a vertex
 * whose distance at uv less its largest move relative to a neighbour shows need keeps that
 * bound: each of its link's edges would show need by path_distance's first bound (d0 >= rho_v
 * and rel <= the move, so d0 - rel >= the bound, subtraction rounding monotonely); the others
 * are bounded edge by edge */
static void link_distances(const ms_model *m, const double *uv, const double *duv, double need,
                           int threads, double *rho) {
  linking c = {m, uv, duv, need, rho};
  ms_blocks_on(threads, m->nv, MS_PLANAR_BLOCK, link_block, &c);
}

/* the triangles at either end of edge e (two vertices) dropped (good 0): the two that meet too
 * close on the boundary are not enough where it runs along a crease, whose next edges then meet
 * in the next round, peeling it a pair a round; how many were kept */
static int drop_ends(const ms_model *m, unsigned char *good, const int *e) {
  int was = 0;
  for (int k = 0; k < 2; k++)
    for (int j = m->vf_start[e[k]]; j < m->vf_start[e[k] + 1]; j++)
      was += good[m->vf[j]], good[m->vf[j]] = 0;
  return was;
}

/* beta_v (w->beta, capped at cap: only those below it matter) and sigma_v lowered to it on the
 * kept triangles' boundary at uv (duv NULL) or along the paths uv + s duv; where the projected
 * boundary is not simple by a margin eps (a vertex comes within eps of an edge or, at uv, two edges
 * cross; along a path that starts simple, two edges first meet where one's end touches the
 * other), the triangles at the ends of those edges dropped (good 0, *drops of them) */
static ms_status boundary(ms_planar *w, const ms_model *m, const double *duv, double cap,
                          double eps, double cell, int threads, unsigned char *good, int *drops) {
  const double *uv = w->uv.p;
  double *sigma = w->sigma.p, *beta = w->beta.p, *plo = w->lo.p, *phi = w->hi.p;
  double *blo = w->blo.p, *bhi = w->bhi.p;
  const int *hit, *bedge = w->bnd.p;
  int nhit, nb = w->nb;
  *drops = 0;
  for (int v = 0; v < m->nv; v++) beta[v] = INFINITY;
  // each boundary vertex (the start of one boundary edge) against the boundary edges, boxes
  // holding their paths
  for (int e = 0; e < nb; e++)
    for (int t = 0; t < 3; t++) {
      const int *g = bedge + 2 * e;
      double a = uv[3 * g[0] + t], b = a + (duv ? duv[3 * g[0] + t] : 0.0), c = uv[3 * g[1] + t],
             d = c + (duv ? duv[3 * g[1] + t] : 0.0), r = t < 2 ? cap : 0.0;
      plo[3 * e + t] = ms_min(a, b) - r, phi[3 * e + t] = ms_max(a, b) + r;
      blo[3 * e + t] = ms_min(ms_min(a, b), ms_min(c, d));
      bhi[3 * e + t] = ms_max(ms_max(a, b), ms_max(c, d));
    }
  ms_status st =
      ms_hash_overlaps(&w->hash, plo, phi, nb, blo, bhi, nb, 0, 0, cell, threads, &hit, &nhit);
  for (int k = 0; st == MS_OK && k < nhit; k++) {
    int v = bedge[2 * hit[2 * k]];
    const int *e = bedge + 2 * hit[2 * k + 1];
    if (v == e[0] || v == e[1]) continue;
    double d = apart(uv, duv, v, e[0], e[1], cap);
    if (!(d > eps)) *drops += drop_ends(m, good, bedge + 2 * hit[2 * k]) + drop_ends(m, good, e);
    if (d < beta[v]) beta[v] = d;
    if (d < sigma[v]) sigma[v] = d;
  }
  if (st != MS_OK || duv) return st;
  // two edges that share no vertex cross where each one's ends lie on both sides of the other
  st = ms_hash_overlaps(&w->hash, blo, bhi, nb, blo, bhi, nb, 1, 0, cell, threads, &hit, &nhit);
  for (int k = 0; st == MS_OK && k < nhit; k++) {
    const int *e = bedge + 2 * hit[2 * k], *g = bedge + 2 * hit[2 * k + 1];
    if (e[0] == g[0] || e[0] == g[1] || e[1] == g[0] || e[1] == g[1]) continue;
    const double *a = uv + 3 * e[0], *b = uv + 3 * e[1], *c = uv + 3 * g[0], *d = uv + 3 * g[1];
    if (ms_plane_orient(a, b, c) * ms_plane_orient(a, b, d) < 0 &&
        ms_plane_orient(c, d, a) * ms_plane_orient(c, d, b) < 0)
      *drops += drop_ends(m, good, e) + drop_ends(m, good, g);
  }
  return st;
}

/* 1 when the kept triangles' boundary (simple by eps) winds once around a point q just inside
 * each of its loops: the centroid of the triangle of the loop's first edge e, joined to e's
 * midpoint by a segment that no boundary edge comes within eps of (so that q sees the count of
 * the whole strip inside the loop); 0 also past MS_PLANAR_LOOPS loops */
static int covers_once(ms_planar *w, const ms_model *m, double eps) {
  const double *uv = w->uv.p;
  const int *bedge = w->bnd.p, *bface = w->bface.p;
  int *next = w->vout.p, loops = 0, nb = w->nb;
  // each boundary vertex's leaving edge (one: kept() left no vertex with two); -2: walked
  for (int e = 0; e < nb; e++) next[bedge[2 * e]] = e;
  for (int e0 = 0; e0 < nb; e0++) {
    if (next[bedge[2 * e0]] == -2) continue;
    if (++loops > MS_PLANAR_LOOPS) return 0;
    for (int v = bedge[2 * e0], e; next[v] >= 0; v = bedge[2 * e + 1]) e = next[v], next[v] = -2;
    // q and the segment from e0's midpoint to it
    const int *c = m->face + 3 * bface[e0];
    double seg[12] = {0}, *mid = seg, *q = seg + 3; /* the segment, and each edge: in the plane */
    for (int t = 0; t < 2; t++) {
      q[t] = (uv[3 * c[0] + t] + uv[3 * c[1] + t] + uv[3 * c[2] + t]) / 3;
      mid[t] = 0.5 * (uv[3 * bedge[2 * e0] + t] + uv[3 * bedge[2 * e0 + 1] + t]);
    }
    // the winding number about q (Sunday's crossing rule), every edge kept off the segment
    int winding = 0;
    for (int e = 0; e < nb; e++) {
      const double *a = uv + 3 * bedge[2 * e], *b = uv + 3 * bedge[2 * e + 1];
      memcpy(seg + 6, a, 3 * sizeof(double)), memcpy(seg + 9, b, 3 * sizeof(double));
      double gap =
          e == e0 ? ms_plane_gap(q, a, b) : sqrt(ms_pair_dist2(MS_PAIR_EE, seg, NULL, NULL));
      if (!(gap > eps)) return 0;
      if (a[1] <= q[1] && b[1] > q[1] && ms_plane_orient(a, b, q) > 0) winding++;
      if (b[1] <= q[1] && a[1] > q[1] && ms_plane_orient(a, b, q) < 0) winding--;
    }
    if (winding != 1) return 0;
  }
  return 1;
}

/* the largest magnitude of coordinates x[k0, k1), infinite past MS_PLANAR_BIG (NaN too) */
static double bound_block(void *x, int k0, int k1) {
  const double *c = x;
  double big = 0;
  int wild = 0; /* a NaN or a magnitude past MS_PLANAR_BIG seen */
  for (int k = k0; k < k1; k++) {
    double a = fabs(c[k]);
    wild |= !(a < MS_PLANAR_BIG), big = a > big ? a : big;
  }
  return wild ? INFINITY : big;
}

/* the rounding margin eps of distances near r at x: projected and measured distances are
 * exact to far better than it; infinite where a coordinate is NaN or beyond MS_PLANAR_BIG
 * (the largest magnitude, in blocks on `threads` threads: a maximum in any order) */
static double margin(const ms_model *m, const double *x, double r, int threads) {
  return MS_PLANAR_EPS *
         (r + ms_blocks_max(threads, 3 * m->nv, MS_PLANAR_BLOCK, bound_block, (void *)x));
}

/* b grown to n elements of `size` bytes; 1, or 0 when out of memory */
static int room(ms_buf *b, size_t n, size_t size) {
  return !ms_grow(b, n, size, 0);
}

/* sigma_v = 0 at the corners of the triangles not kept */
static void drop_corners(const ms_model *m, const unsigned char *good, double *sigma) {
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3 && !good[f]; k++) sigma[m->face[3 * f + k]] = 0;
}

/* the kept triangles w->good (and w->sigma) at uv (duv NULL) or along uv + s duv: those at a
 * boundary that is not simple dropped, round after round, until it is (as kept() drops its
 * own); the corners of the dropped triangles tight. *settled: 0 when kept() refuses or it takes
 * more than MS_PLANAR_ROUNDS rounds */
static ms_status settle(ms_planar *w, const ms_model *m, const double *duv, double cap, double eps,
                        double cell, int threads, int *settled) {
  ms_status st = MS_OK;
  *settled = 0;
  // rho_v sees every triangle, kept or not: the same in every round
  link_distances(m, w->uv.p, duv, cap, threads, w->rho.p);
  for (int round = 0, drops = 1; drops; round++) {
    if (round == MS_PLANAR_ROUNDS || !kept(w, m, w->good.p)) return MS_OK;
    memcpy(w->sigma.p, w->rho.p, sizeof(double) * m->nv);
    if ((st = boundary(w, m, duv, cap, eps, cell, threads, w->good.p, &drops)) != MS_OK) return st;
  }
  drop_corners(m, w->good.p, w->sigma.p);
  *settled = 1;
  return MS_OK;
}

/* w->sigma at x, w->good the triangles kept, and *certified: whether x projects them one to
 * one */
static ms_status certify(ms_planar *w, const ms_model *m, const double *x, double eps, double cap,
                         double cell, int threads, double a[3], int *certified) {
  size_t nv = m->nv, nb = 3 * (size_t)m->nf;
  /* what certify() works on is no longer what was kept, nor known to be one piece */
  *certified = 0, w->held_ok = 0, w->whole_ok = 0;
  if (!m->disk || !isfinite(eps)) return MS_OK;
  if (!room(&w->uv, 3 * nv, sizeof(double)) || !room(&w->sigma, nv, sizeof(double)) ||
      !room(&w->beta, nv, sizeof(double)) || !room(&w->rho, nv, sizeof(double)) ||
      !room(&w->good, m->nf, 1) || !room(&w->bnd, 2 * nb, sizeof(int)) ||
      !room(&w->bface, nb, sizeof(int)) || !room(&w->vout, nv, sizeof(int)) ||
      !room(&w->pinch, nv, sizeof(int)) || !room(&w->fmark, m->nf, 1) ||
      !room(&w->piece, m->nf, sizeof(int)) || !room(&w->whole, m->nf, 1) ||
      !room(&w->stamp, m->nf, sizeof(int)) || !room(&w->lo, 3 * nb, sizeof(double)) ||
      !room(&w->hi, 3 * nb, sizeof(double)) || !room(&w->blo, 3 * nb, sizeof(double)) ||
      !room(&w->fnormal, 3 * (size_t)m->nf, sizeof(double)) ||
      !room(&w->bhi, 3 * nb, sizeof(double)))
    return MS_ENOMEM;
  if (!axis(m, x, threads, w->fnormal.p, a, w->good.p)) return MS_OK;
  project(m, x, a, w->uv.p);
  ms_status st = settle(w, m, NULL, cap, eps, cell, threads, certified);
  if (st == MS_OK && *certified) *certified = covers_once(w, m, eps);
  return st;
}

/* the certificate just made at x (axis a) kept for a path from x (the step's end starts where
 * its detection ran); nothing kept when out of memory */
static void hold(ms_planar *w, const ms_model *m, const double *x, const double a[3]) {
  w->held_ok = 0;
  if (!room(&w->held, 3 * (size_t)m->nv, sizeof(double))) return;
  memcpy(w->held.p, x, sizeof(double) * 3 * m->nv), memcpy(w->held_a, a, sizeof(w->held_a));
  w->held_ok = 1;
}

/* certify() at x, or the certificate kept at these very positions. Its margin may be smaller
 * than eps (the path reaches farther from the origin than x, or its floor is lower than the
 * radius) but it bounds the rounding of what was measured at x, some 1e-16 of the coordinates,
 * all the same: its triangles are one to one at x, and the path's own tests use eps. Either
 * way nothing stays kept, as the path changes w->good */
static ms_status certify_path(ms_planar *w, const ms_model *m, const double *x, double eps,
                              double cap, double cell, int threads, double a[3], int *certified) {
  int kept = w->held_ok && !memcmp(w->held.p, x, sizeof(double) * 3 * m->nv);
  w->held_ok = 0;
  if (!kept) return certify(w, m, x, eps, cap, cell, threads, a, certified);
  memcpy(a, w->held_a, sizeof(w->held_a));
  *certified = 1;
  return MS_OK;
}

/* ---------------------------------------------------------------- the pairs it leaves */

/* 1 when primitive i (k vertices, idx; NULL: the points) holds a vertex whose pairs are hashed */
static int hashed(const ms_planar *w, const int *idx, int k, int i) {
  const unsigned char *how = w->how.p;
  int tight = 0;
  for (int j = 0; j < k; j++) tight |= how[idx ? idx[k * i + j] : i] == MS_PLANAR_HASHED;
  return tight;
}

/* into f->list, ascending: the n primitives (k vertices each, idx; NULL: the points) that hold
 * a vertex whose pairs are hashed, and their boxes (from lo, hi) into f->lo, f->hi; their count */
static int holding(const ms_planar *w, finder *f, const int *idx, int n, int k, const double *lo,
                   const double *hi) {
  int *list = f->list.p, count = 0;
  double *slo = f->lo.p, *shi = f->hi.p;
  for (int i = 0; i < n; i++) {
    if (!hashed(w, idx, k, i)) continue;
    memcpy(slo + 3 * count, lo + 3 * i, 3 * sizeof(double));
    memcpy(shi + 3 * count, hi + 3 * i, 3 * sizeof(double)), list[count++] = i;
  }
  return count;
}

/* the hash's pairs (i, j) copied into out after its first `at` pairs as (amap[i], bmap[j]), the
 * two swapped when swap is 1 */
static int renamed(ms_buf *out, int at, const int *hit, int nhit, const int *amap, const int *bmap,
                   int swap) {
  if (ms_grow(out, 2 * ((size_t)at + nhit), sizeof(int), 2 * (size_t)at)) return 0;
  int *p = (int *)out->p + 2 * (size_t)at;
  for (int k = 0; k < nhit; k++) {
    int i = hit[2 * k], j = hit[2 * k + 1];
    p[2 * k + swap] = amap[i], p[2 * k + 1 - swap] = bmap[j];
  }
  return 1;
}

/* the few's shadows on the three axes: along each, over their bounding box, at most
 * MS_PLANAR_BINS bins each at least a cell wide and which of them a box of the few covers. A box
 * of the many that meets a box of the few covers, along every axis, a bin that box covers (the
 * bin of a point they share) */
typedef struct {
  double lo[3], hi[3];              /* the few's bounding box */
  double inv[3];                    /* bins per metre along each axis */
  int dim[3];                       /* bins along each axis */
  int below[3][MS_PLANAR_BINS + 1]; /* along axis t, the covered bins below bin i */
} shadow;

/* the bin of coordinate c along axis t, clamped to the bins (monotone in c) */
static inline int bin(const shadow *s, int t, double c) {
  double x = (c - s->lo[t]) * s->inv[t];
  return x < 1 ? 0 : x >= s->dim[t] ? s->dim[t] - 1 : (int)x;
}

/* the shadows of the n > 0 boxes lo, hi with bins at least cell wide into s */
static void shadows(shadow *s, const double *lo, const double *hi, int n, double cell) {
  for (int t = 0; t < 3; t++) {
    s->lo[t] = INFINITY, s->hi[t] = -INFINITY;
    for (int j = 0; j < n; j++)
      s->lo[t] = ms_min(s->lo[t], lo[3 * j + t]), s->hi[t] = ms_max(s->hi[t], hi[3 * j + t]);
    double width = ms_max(cell, (s->hi[t] - s->lo[t]) / MS_PLANAR_BINS);
    s->inv[t] = 1.0 / width;
    s->dim[t] = (int)ms_min(MS_PLANAR_BINS, floor((s->hi[t] - s->lo[t]) * s->inv[t]) + 1);
    // the boxes' ends counted where they start and past where they end, summed along the axis
    int *below = s->below[t], edge[MS_PLANAR_BINS + 1] = {0};
    for (int j = 0; j < n; j++)
      edge[bin(s, t, lo[3 * j + t])]++, edge[bin(s, t, hi[3 * j + t]) + 1]--;
    below[0] = 0;
    for (int i = 0, over = 0; i < s->dim[t]; i++)
      over += edge[i], below[i + 1] = below[i] + (over > 0);
  }
}

/* 1 when box [a, b] may meet a box of the few: it meets their bounding box (which turns most
 * away at once) and along every axis covers a bin in their shadow */
static inline int in_shadows(const shadow *s, const double *a, const double *b) {
  for (int t = 0; t < 3; t++)
    if (b[t] < s->lo[t] || a[t] > s->hi[t]) return 0;
  for (int t = 0; t < 3; t++) {
    const int *below = s->below[t];
    if (below[bin(s, t, b[t]) + 1] == below[bin(s, t, a[t])]) return 0;
  }
  return 1;
}

/* the overlapping pairs of the many boxes alo, ahi (na; primitives of k vertices idx, NULL: the
 * points) and the few f->lo, f->hi (nb, the primitives f->list), renamed to their primitives
 * and appended to the n pairs of f->out (n counting them), swapped when swap is 1: only the many
 * in the few's shadows (the few gather in clusters, a crumpled corner or two, a curling edge:
 * the space between them along any axis is left out) and, when others is 1, are not among
 * the few themselves (w->how), go through the hash (f->amap their indices) */
static ms_status search(const ms_planar *w, finder *f, const double *alo, const double *ahi,
                        const int *idx, int k, int na, int others, int nb, double cell, int threads,
                        int swap, int *n) {
  const double *blo = f->lo.p, *bhi = f->hi.p;
  double *slo = f->alo.p, *shi = f->ahi.p;
  int *map = f->amap.p, nmany = 0, nhit;
  if (!nb) return MS_OK; /* no few: no pairs (and no shadows to read) */
  shadow sh;
  shadows(&sh, blo, bhi, nb, cell);
  for (int i = 0; i < na; i++) {
    const double *a = alo + 3 * i, *b = ahi + 3 * i;
    if (!in_shadows(&sh, a, b) || (others && hashed(w, idx, k, i))) continue;
    memcpy(slo + 3 * nmany, a, 3 * sizeof(double));
    memcpy(shi + 3 * nmany, b, 3 * sizeof(double)), map[nmany++] = i;
  }
  const int *hit;
  ms_status st =
      ms_hash_overlaps(&f->hash, slo, shi, nmany, blo, bhi, nb, 0, 0, cell, threads, &hit, &nhit);
  if (st == MS_OK && !renamed(&f->out, *n, hit, nhit, map, f->list.p, swap)) st = MS_ENOMEM;
  if (st == MS_OK) *n += nhit;
  return st;
}

/* the overlapping pairs among the few f->lo, f->hi (nb, the primitives f->list), each once,
 * renamed to their primitives and appended to the n pairs of f->out (n counting them) */
static ms_status among_few(finder *f, int nb, double cell, int threads, int *n) {
  const int *hit, *list = f->list.p;
  int nhit;
  ms_status st = ms_hash_overlaps(&f->hash, f->lo.p, f->hi.p, nb, f->lo.p, f->hi.p, nb, 1, 0, cell,
                                  threads, &hit, &nhit);
  if (st == MS_OK && !renamed(&f->out, *n, hit, nhit, list, list, 0)) st = MS_ENOMEM;
  if (st == MS_OK) *n += nhit;
  return st;
}

/* the n pairs p of kind (index pairs: point and triangle, or edge and edge) less those whose
 * primitives share a vertex (the narrow phase would drop them), in order; how many are left */
static int apart_pairs(const ms_model *m, ms_pair_kind kind, int *p, int n) {
  int left = 0, na = kind == MS_PAIR_PT ? 1 : 2;
  for (int k = 0; k < n; k++) {
    int i = p[2 * k], j = p[2 * k + 1], v[5];
    const int *a = kind == MS_PAIR_PT ? &i : m->fedge + 2 * i;
    const int *b = kind == MS_PAIR_PT ? m->face + 3 * j : m->fedge + 2 * j;
    for (int t = 0; t < 4; t++) v[t] = t < na ? a[t] : b[t - na];
    if (!ms_shares_vertex(v, na, 4)) p[2 * left] = i, p[2 * left + 1] = j, left++;
  }
  return left;
}

/* the pairs of tight vertex v (whose boxes b overlap, where given) from the count triangles
 * near it (k->near, walk k->mark): v against each that does not hold it, and each edge at v
 * against each edge within bar of v in the plane (uv), appended to o's (o->n[0] and o->n[1]
 * of them); 0 when out of memory */
static int near_pairs(const double *uv, walker *k, const ms_model *m, int v, int count, double bar,
                      const ms_planar_boxes *b, walked_block *o) {
  const int *near = k->near.p;
  int *seen = k->eseen.p, *vedge = k->vedge.p, nat = 0, mark = k->mark, *n = o->n;
  // v's edges (all its triangles are near), then the other edges near v against them
  for (int i = 0; i < count; i++)
    for (int t = 0; t < 3; t++) {
      int e = m->fside[3 * near[i] + t], *g = m->fedge + 2 * e;
      if ((g[0] == v || g[1] == v) && seen[e] != mark) seen[e] = mark, vedge[nat++] = e;
    }
  for (int i = 0; i < count; i++) {
    const int *c = m->face + 3 * near[i], f = near[i];
    if (c[0] != v && c[1] != v && c[2] != v &&
        (!b || ms_boxes_overlap(b->plo + 3 * v, b->phi + 3 * v, b->flo + 3 * f, b->fhi + 3 * f)) &&
        ms_append_pairs(o->pairs, n, (const int[2]){v, f}, 1))
      return 0;
    for (int t = 0; t < 3; t++) {
      int e = m->fside[3 * f + t], *g = m->fedge + 2 * e;
      if (seen[e] == mark) continue;
      seen[e] = mark;
      if (ms_plane_gap(uv + 3 * v, uv + 3 * g[0], uv + 3 * g[1]) > bar) continue;
      for (int j = 0; j < nat; j++) {
        const int *h = m->fedge + 2 * vedge[j], ends[4] = {g[0], g[1], h[0], h[1]};
        if (ms_shares_vertex(ends, 2, 4) ||
            (b && !ms_boxes_overlap(b->elo + 3 * e, b->ehi + 3 * e, b->elo + 3 * vedge[j],
                                    b->ehi + 3 * vedge[j])))
          continue;
        const int pair[2] = {e < vedge[j] ? e : vedge[j], e < vedge[j] ? vedge[j] : e};
        if (ms_append_pairs(o->pairs + 1, n + 1, pair, 1)) return 0;
      }
    }
  }
  return 1;
}

/* the largest move in the plane of a corner of the count triangles near v relative to v */
static double reach(const ms_model *m, const double *duv, const int *near, int count, int v) {
  double most = 0;
  for (int i = 0; i < count; i++)
    for (int k = 0; k < 3; k++) most = ms_max(most, moved(duv, m->face[3 * near[i] + k], v));
  return most;
}

/* the triangles near tight vertex v (into k->near; their count, -1 when its pairs must be
 * hashed), walked from kept triangle f: those within bar of it at uv, or (duv given) those that
 * may come within bar of it on the paths uv + s duv. On the paths, the walk's radius at uv
 * (*radius) grows to bar plus the largest move of a corner of the triangles found relative to
 * v until it holds them: then a triangle that comes within bar of v at some s is reached at
 * uv, across triangles whose corners all move by at most that much relative to v (the mesh
 * one to one all along), and so is a boundary edge that v's disk may cross on the way */
static int near_triangles(const ms_planar *w, walker *k, const ms_model *m, const double *duv,
                          int v, int f, double bar, double *radius) {
  *radius = bar;
  for (int grow = 0; grow < MS_PLANAR_GROW; grow++) {
    int count = ms_walk_disk(m, w->uv.p, w->good.p, v, f, *radius, k->fseen.p, ++k->mark, k->near.p,
                             MS_PLANAR_WALK);
    if (count < 0 || !duv) return count;
    double enough = bar + reach(m, duv, k->near.p, count, v);
    if (enough <= *radius) return count;
    *radius = enough;
  }
  return -1;
}

/* what the blocks of walk_tight share */
typedef struct {
  ms_planar *w;
  const ms_model *m;
  double bar;
  const double *duv;
  const ms_planar_boxes *b;
} walking;

/* the walks of the vertices [v0, v1) still to walk, each from its first kept triangle, on this
 * thread's scratch, their pairs into the block's */
static void walk_block(void *ctx, int v0, int v1) {
  const walking *c = ctx;
  const ms_model *m = c->m;
  ms_planar *w = c->w;
  walker *k = (walker *)w->walker.p + ms_thread_id();
  walked_block *o = (walked_block *)w->wblock.p + v0 / MS_PLANAR_WALKS;
  unsigned char *how = w->how.p;
  const unsigned char *good = w->good.p;
  o->n[0] = o->n[1] = 0, o->ok = 1;
  for (int v = v0; v < v1; v++) {
    if (how[v] != MS_PLANAR_TO_WALK) continue;
    int j = m->vf_start[v], count = -1;
    while (j < m->vf_start[v + 1] && !good[m->vf[j]]) j++;
    double radius;
    if (j < m->vf_start[v + 1])
      count = near_triangles(w, k, m, c->duv, v, m->vf[j], c->bar, &radius);
    how[v] = count < 0 ? MS_PLANAR_HASHED : MS_PLANAR_WALKED;
    if (count >= 0 && !near_pairs(w->uv.p, k, m, v, count, radius, c->b, o)) {
      o->ok = 0;
      return;
    }
  }
}

/* how each tight vertex (sigma_v < bar) finds its pairs (w->how): by a walk (walk.c, at uv or
 * along the paths uv + s duv) where it is a kept triangle's whose disk the walk can cover, the
 * pairs (whose boxes b overlap, where given) into w->walked (n[0] point-triangle, n[1]
 * edge-edge), in the order of their vertices; by hashing the others: the corners of triangles
 * not kept, whose pairs the certificate does not bound, and those whose disks may reach across a
 * gap (on the boundary, beta_v < bar; inside, the walk sees it). Blocks of vertices walk on
 * `threads` threads, each thread with scratch of its own */
static ms_status walk_tight(ms_planar *w, const ms_model *m, double bar, const double *duv,
                            const ms_planar_boxes *b, int threads, int n[2]) {
  // (a thread's walker is the one of its number in the pass, which runs in no other)
  int nb = (m->nv + MS_PLANAR_WALKS - 1) / MS_PLANAR_WALKS;
  int nt = ms_team(threads, nb);
  if (!room(&w->how, m->nv, 1) || ms_grow(&w->walker, nt, sizeof(walker), w->walker.cap) ||
      ms_grow(&w->wblock, nb, sizeof(walked_block), w->wblock.cap) ||
      !room(w->walked, 0, sizeof(int)) || !room(w->walked + 1, 0, sizeof(int)))
    return MS_ENOMEM;
  for (walker *k = w->walker.p; k < (walker *)w->walker.p + nt; k++) {
    if (!room(&k->fseen, m->nf, sizeof(int)) || !room(&k->eseen, m->ne, sizeof(int)) ||
        !room(&k->near, MS_PLANAR_WALK, sizeof(int)) ||
        !room(&k->vedge, 2 * MS_PLANAR_WALK, sizeof(int)))
      return MS_ENOMEM;
    memset(k->fseen.p, 0, sizeof(int) * m->nf), memset(k->eseen.p, 0, sizeof(int) * m->ne);
    k->mark = 0;
  }
  const unsigned char *good = w->good.p;
  const double *sigma = w->sigma.p, *beta = w->beta.p;
  unsigned char *how = w->how.p;
  for (int v = 0; v < m->nv; v++)
    how[v] = !(sigma[v] < bar) ? MS_PLANAR_NONE
             : beta[v] < bar   ? MS_PLANAR_HASHED
                               : MS_PLANAR_TO_WALK;
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3 && !good[f]; k++) how[m->face[3 * f + k]] = MS_PLANAR_HASHED;
  walking c = {w, m, bar, duv, b};
  ms_blocks_dealt_on(nt, m->nv, MS_PLANAR_WALKS, walk_block, &c);
  // the blocks' pairs, in block order
  n[0] = n[1] = 0;
  for (walked_block *o = w->wblock.p; o < (walked_block *)w->wblock.p + nb; o++)
    for (int t = 0; t < 2; t++)
      if (!o->ok || ms_append_pairs(w->walked + t, n + t, o->pairs[t].p, o->n[t])) return MS_ENOMEM;
  return MS_OK;
}

/* what tight_points and tight_edges share: the walks' pairs (walked[0] point-triangle,
 * walked[1] edge-edge), the broad phase's boxes and cell; and what each found: its status and
 * how many pairs (into w->find[kind].out). Each searches on one thread: the two run side by
 * side */
typedef struct {
  ms_planar *w;
  const ms_model *m;
  const ms_planar_boxes *b;
  const int *walked;
  double cell;
  ms_status st[2];
  int n[2];
} tightening;

/* the point-triangle pairs with a tight vertex: the walked ones, every triangle against the
 * hashed tight points, and every other point against the triangles that hold one (the few
 * hashed, the many looking them up), sharing no vertex, sorted, once */
static void tight_points(void *ctx) {
  tightening *c = ctx;
  const ms_model *m = c->m;
  const ms_planar_boxes *b = c->b;
  finder *f = c->w->find;
  int n = 0, count = holding(c->w, f, NULL, m->nv, 1, b->plo, b->phi);
  ms_status st = search(c->w, f, b->flo, b->fhi, m->face, 3, m->nf, 0, count, c->cell, 1, 1, &n);
  if (st == MS_OK) {
    count = holding(c->w, f, m->face, m->nf, 3, b->flo, b->fhi);
    st = search(c->w, f, b->plo, b->phi, NULL, 1, m->nv, 1, count, c->cell, 1, 0, &n);
  }
  if (st == MS_OK && ms_append_pairs(&f->out, &n, c->w->walked[0].p, c->walked[0])) st = MS_ENOMEM;
  if (st == MS_OK)
    c->n[0] = ms_unique_pairs(f->out.p, apart_pairs(m, MS_PAIR_PT, f->out.p, n), &f->sort);
  c->st[0] = st;
}

/* the edge-edge pairs with a tight vertex: the walked ones, every other edge against the
 * edges that hold a hashed one and those among themselves, sharing no vertex, each pair lower
 * edge first, sorted, once */
static void tight_edges(void *ctx) {
  tightening *c = ctx;
  const ms_model *m = c->m;
  const ms_planar_boxes *b = c->b;
  finder *f = c->w->find + 1;
  int nhit = 0, count = holding(c->w, f, m->fedge, m->ne, 2, b->elo, b->ehi);
  ms_status st =
      search(c->w, f, b->elo, b->ehi, m->fedge, 2, m->ne, 1, count, c->cell, 1, 0, &nhit);
  if (st == MS_OK) st = among_few(f, count, c->cell, 1, &nhit);
  if (st == MS_OK && ms_append_pairs(&f->out, &nhit, c->w->walked[1].p, c->walked[1]))
    st = MS_ENOMEM;
  if ((c->st[1] = st) != MS_OK) return;
  int *p = f->out.p, n = apart_pairs(m, MS_PAIR_EE, p, nhit);
  for (int k = 0; k < n; k++) {
    int i = p[2 * k], j = p[2 * k + 1];
    p[2 * k] = i < j ? i : j, p[2 * k + 1] = i < j ? j : i;
  }
  c->n[1] = ms_unique_pairs(p, n, &f->sort);
}

/* 1 when f's buffers hold the searches of primitives of one kind: n of them, or their partners */
static int find_room(finder *f, size_t n) {
  return room(&f->lo, 3 * n, sizeof(double)) && room(&f->hi, 3 * n, sizeof(double)) &&
         room(&f->list, n, sizeof(int)) && room(&f->alo, 3 * n, sizeof(double)) &&
         room(&f->ahi, 3 * n, sizeof(double)) && room(&f->amap, n, sizeof(int)) &&
         room(&f->out, 0, sizeof(int));
}

ms_status ms_planar_pairs(ms_planar **wp, const ms_model *m, const double *x, double r, double cell,
                          int threads, const ms_planar_boxes *b, int *certified, const int **pt,
                          int *npt, const int **ee, int *nee) {
  ms_planar *w = *wp ? *wp : ms_alloc(1, sizeof(ms_planar));
  if (!w) return MS_ENOMEM;
  *wp = w, *npt = *nee = 0;
  double eps = margin(m, x, r, threads), bar = r + eps, a[3];
  ms_status st = certify(w, m, x, eps, bar, cell, threads, a, certified);
  if (st != MS_OK || !*certified) return st;
  hold(w, m, x, a);
  // the point-triangle search's few and many are points and triangles, the other's edges
  size_t points = m->nv > m->nf ? m->nv : m->nf;
  if (!find_room(w->find, points) || !find_room(w->find + 1, m->ne)) return MS_ENOMEM;
  int walked[2];
  if ((st = walk_tight(w, m, bar, NULL, b, threads, walked)) != MS_OK) return st;
  // the two kinds' searches side by side, each on one thread, or one after the other on one
  tightening c = {w, m, b, walked, cell, {MS_OK, MS_OK}, {0, 0}};
  ms_both_on(threads, tight_points, &c, tight_edges, &c);
  if ((st = c.st[0]) != MS_OK || (st = c.st[1]) != MS_OK) return st;
  *pt = w->find[0].out.p, *npt = c.n[0];
  *ee = w->find[1].out.p, *nee = c.n[1];
  return MS_OK;
}

/* ---------------------------------------------------------------- along a path */

/* what the blocks of drop_flips share */
typedef struct {
  const ms_model *m;
  const double *uv, *duv;
  unsigned char *good;
} flipping;

/* good[f] = 0 for the kept triangles f in [f0, f1) that may not keep their orientation in the plane
 * along uv + s duv, s in [0, 1] (the signed area, a quadratic in s, has Bernstein coefficients A0,
 * B, A1: positive throughout when A0 and A1 are and B > -sqrt(A0 A1)), by a rounding margin */
static void drop_flips(void *ctx, int f0, int f1) {
  const flipping *fl = ctx;
  const ms_model *m = fl->m;
  const double *uv = fl->uv, *duv = fl->duv;
  unsigned char *good = fl->good;
  for (int f = f0; f < f1; f++) {
    const int *c = m->face + 3 * f;
    if (!good[f]) continue;
    double e[2], g[2], de[2], dg[2];
    for (int t = 0; t < 2; t++) {
      e[t] = uv[3 * c[1] + t] - uv[3 * c[0] + t], g[t] = uv[3 * c[2] + t] - uv[3 * c[0] + t];
      de[t] = duv[3 * c[1] + t] - duv[3 * c[0] + t];
      dg[t] = duv[3 * c[2] + t] - duv[3 * c[0] + t];
    }
    double bar = MS_PLANAR_EPS * (ms_plane_norm(e[0], e[1]) + ms_plane_norm(de[0], de[1])) *
                 (ms_plane_norm(g[0], g[1]) + ms_plane_norm(dg[0], dg[1]));
    double a0 = e[0] * g[1] - e[1] * g[0];
    double a1 = (e[0] + de[0]) * (g[1] + dg[1]) - (e[1] + de[1]) * (g[0] + dg[0]) - bar;
    double b = a0 + 0.5 * (e[0] * dg[1] - e[1] * dg[0] + de[0] * g[1] - de[1] * g[0]) - bar;
    a0 -= bar;
    if (!(a0 > 0 && a1 > 0 && (b > 0 || b * b < a0 * a1))) good[f] = 0;
  }
}

ms_status ms_planar_path(ms_planar **wp, const ms_model *m, const double *x, const double *y,
                         double floor, double cell, int threads, int *certified,
                         unsigned char *loose, const int **pt, int *npt, const int **ee, int *nee) {
  ms_planar *w = *wp ? *wp : ms_alloc(1, sizeof(ms_planar));
  if (!w) return MS_ENOMEM;
  *wp = w, *npt = *nee = 0;
  // the rounding margin of the larger of the paths' ends (infinite: refused)
  double eps = ms_max(margin(m, x, floor, threads), margin(m, y, floor, threads)),
         need = floor + eps, a[3];
  ms_status st = certify_path(w, m, x, eps, need, cell, threads, a, certified);
  if (st != MS_OK || !*certified) return st;
  if (!room(&w->duv, 3 * (size_t)m->nv, sizeof(double))) return *certified = 0, MS_ENOMEM;
  // the displacements projected like the positions (the projection is linear)
  double *duv = w->duv.p;
  for (int k = 0; k < 3 * m->nv; k++) duv[k] = y[k] - x[k];
  project(m, duv, a, duv);
  // the triangles that may flip on the way are dropped too, and those whose boundary may cease
  // to be simple (what is left is one to one at x, a part of G, and stays so)
  flipping flip = {m, w->uv.p, duv, w->good.p};
  ms_blocks_on(threads, m->nf, MS_PLANAR_BLOCK, drop_flips, &flip);
  if ((st = settle(w, m, duv, need, eps, cell, threads, certified)) != MS_OK || !*certified)
    return st;
  // the pairs of the vertices that may come within the floor, walked where they can be
  int walked[2];
  if ((st = walk_tight(w, m, need, duv, NULL, threads, walked)) != MS_OK) return *certified = 0, st;
  const unsigned char *how = w->how.p;
  for (int v = 0; v < m->nv; v++) loose[v] = how[v] == MS_PLANAR_HASHED;
  *pt = w->walked[0].p, *npt = walked[0];
  *ee = w->walked[1].p, *nee = ms_unique_pairs(w->walked[1].p, walked[1], &w->sort);
  return MS_OK;
}
