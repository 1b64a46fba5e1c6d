/* selfcontact.c: the pairs of self-contact and the energy over them
 *
 * A triangle mesh (m->face) touches itself through two kinds of primitive pairs: a vertex
 * and a triangle (point-triangle) and two of the triangles' edges (edge-edge). Pairs that
 * share a vertex never count; pairs whose vertices lie within m->sc_ring triangle edges of
 * each other (m->ring) feel no energy, so a cloth's own neighbours never repel. Detection at x
 * finds every pair closer than r: bounding boxes inflated by r (points) and r/2 (edges) in a
 * spatial hash (hash.c), then exact distances (distance.c), the ring pairs only where the
 * displacement bounds will ask for them (bounds.c: a step expected to stay within reach of r,
 * or a pair holding a fixed vertex). It also gives each vertex its distance to the nearest
 * primitive of the pairs it keeps, which the bounds read. The step's pairs are found once at its
 * start x_t within twice the thickness, and the self-contact energy sum_pairs b(d) (barrier.c) over
 * them enters every method: as forces (explicit methods, the gradient of g), each pair's whole
 * Hessian (Newton, linearised implicit Euler), a bound on each pair's curvature (FMS), a vertex's
 * share (VBD) and a projection (XPBD). Every sum runs over the pairs in their sorted order,
 * serially, so no result depends on the thread count.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* broad-phase hits per block of the narrow phase's parallel pass */
#define MS_SC_BLOCK 1024

void ms_self_free(void *ws) {
  ms_self_ws *w = ws;
  if (!w) return;
  ms_hash_free(w->hash);
  ms_sweep_free(w->sweep);
  ms_planar_free(w->planar);
  free(w->plo), free(w->phi), free(w->elo), free(w->ehi), free(w->flo), free(w->fhi);
  free(w->nearest), free(w->blk), free(w->target), free(w->dev), free(w->scale), free(w->lowered),
      free(w->only);
  free(w->pair), free(w->vstart), free(w->vpair), free(w->fric), free(w->kept);
  free(w->hdist.p), free(w->hring.p), free(w->slack.p), free(w->plane.p), free(w->pvert.p),
      free(w->pmark.p);
  free(w->chess.p), free(w->cvert.p), free(w->cblock.p), free(w->cbvert.p);
  free(w->edge_at);
  free(w);
}

/* a complete workspace for m, or NULL */
static ms_self_ws *workspace_new(const ms_model *m) {
  size_t n = m->nv, ne = m->ne, nf = m->nf;
  ms_self_ws *w = ms_alloc(1, sizeof(ms_self_ws));
  if (!w) return NULL;
  w->plo = ms_alloc(3 * n, sizeof(double)), w->phi = ms_alloc(3 * n, sizeof(double));
  w->elo = ms_alloc(3 * ne, sizeof(double)), w->ehi = ms_alloc(3 * ne, sizeof(double));
  w->flo = ms_alloc(3 * nf, sizeof(double)), w->fhi = ms_alloc(3 * nf, sizeof(double));
  w->nearest = ms_alloc(n, sizeof(double)), w->blk = ms_alloc(9 * n, sizeof(double));
  w->target = ms_alloc(3 * n, sizeof(double)), w->dev = ms_alloc(3 * n, sizeof(double));
  w->scale = ms_alloc(n, sizeof(double)), w->kept = ms_alloc(3 * n, sizeof(double));
  w->lowered = ms_alloc(n, sizeof(int64_t));
  w->only = ms_alloc(n, 1);
  w->edge_at = ms_alloc(3 * n, sizeof(double));
  w->vstart = ms_alloc(n + 1, sizeof(int));
  w->pair = ms_alloc(1, sizeof(ms_sc_pair)), w->vpair = ms_alloc(4, sizeof(int));
  w->cap = 1;
  if (!w->plo || !w->phi || !w->elo || !w->ehi || !w->flo || !w->fhi || !w->nearest || !w->blk ||
      !w->target || !w->dev || !w->scale || !w->lowered || !w->only || !w->kept || !w->vstart ||
      !w->pair || !w->vpair || !w->edge_at) {
    ms_self_free(w);
    return NULL;
  }
  return w;
}

/* d->sc, made on first use */
static ms_status workspace(const ms_model *m, ms_data *d, ms_self_ws **out) {
  if (!d->sc && !(d->sc = workspace_new(m))) return MS_ENOMEM;
  *out = d->sc;
  return MS_OK;
}

/* room for n pairs (the arrays replaced only once both new ones exist) */
static ms_status reserve(ms_self_ws *w, int n) {
  if (n <= w->cap) return MS_OK;
  int cap = n > 2 * w->cap ? n : 2 * w->cap;
  ms_sc_pair *pair = ms_alloc(cap, sizeof(ms_sc_pair));
  int *vpair = ms_alloc(4 * (size_t)cap, sizeof(int));
  if (!pair || !vpair) return free(pair), free(vpair), MS_ENOMEM;
  memcpy(pair, w->pair, sizeof(ms_sc_pair) * w->npair);
  free(w->pair), free(w->vpair);
  w->pair = pair, w->vpair = vpair, w->cap = cap;
  return MS_OK;
}

/* ---------------------------------------------------------------- topology */

/* 1 when vertex b is within the ring of vertex a (m->ring is sorted per vertex) */
static int in_ring(const ms_model *m, int a, int b) {
  int lo = m->ring_start[a], hi = m->ring_start[a + 1];
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (m->ring[mid] == b) return 1;
    if (m->ring[mid] < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

int ms_self_in_ring(const ms_model *m, const ms_sc_pair *p) {
  int na = p->kind == MS_PAIR_PT ? 1 : 2;
  for (int a = 0; a < na; a++)
    for (int b = na; b < 4; b++)
      if (in_ring(m, p->v[a], p->v[b])) return 1;
  return 0;
}

/* m->fedge: the triangles' edges, each once, ends ascending, sorted; m->fside: each triangle
 * edge's index among them (the old arrays kept when out of memory) */
static ms_status face_edges(ms_model *m) {
  int *e = ms_alloc(6 * (size_t)m->nf, sizeof(int)),
      *side = ms_alloc(3 * (size_t)m->nf, sizeof(int));
  int n = 0;
  if (!e || !side) return free(e), free(side), MS_ENOMEM;
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3; k++) {
      int a = m->face[3 * f + k], b = m->face[3 * f + (k + 1) % 3];
      e[2 * n] = a < b ? a : b, e[2 * n + 1] = a < b ? b : a, n++;
    }
  int ne = ms_unique_pairs(e, n, NULL); /* once per mesh */
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3; k++) {
      int a = m->face[3 * f + k], b = m->face[3 * f + (k + 1) % 3];
      int key[2] = {a < b ? a : b, a < b ? b : a};
      const int *hit = bsearch(key, e, ne, 2 * sizeof(int), ms_compare_pairs);
      side[3 * f + k] = (int)((hit - e) / 2);
    }
  free(m->fedge), free(m->fside);
  m->fedge = e, m->fside = side, m->ne = ne;
  return MS_OK;
}

/* *start, *list: the primitives (n of k vertices, idx) holding each vertex, ascending for
 * each (a counting sort; the old arrays freed) */
static ms_status incidence(const ms_model *m, const int *idx, int n, int k, int **start,
                           int **list) {
  int *s = ms_alloc(m->nv + 1, sizeof(int)), *l = ms_alloc((size_t)k * n, sizeof(int));
  if (!s || !l) return free(s), free(l), MS_ENOMEM;
  for (size_t i = 0; i < (size_t)k * n; i++) s[idx[i] + 1]++;
  for (int v = 0; v < m->nv; v++) s[v + 1] += s[v];
  for (int p = 0; p < n; p++)
    for (int j = 0; j < k; j++) l[s[idx[k * p + j]]++] = p;
  for (int v = m->nv; v > 0; v--) s[v] = s[v - 1];
  s[0] = 0;
  free(*start), free(*list);
  *start = s, *list = l;
  return MS_OK;
}

/* the vertices within depth triangle edges of v (v included) into out (NULL: only counted),
 * sorted, across the edges at each vertex (m->ve); mark a (nv) scratch of zeros left zero */
static int ring_of(const ms_model *m, int v, int depth, int *mark, int *list, int *out) {
  int n = 1, lo = 0;
  list[0] = v, mark[v] = 1;
  for (int level = 0; level < depth; level++) {
    int hi = n;
    for (int k = lo; k < hi; k++)
      for (int p = m->ve_start[list[k]]; p < m->ve_start[list[k] + 1]; p++) {
        const int *e = m->fedge + 2 * m->ve[p];
        int u = e[0] == list[k] ? e[1] : e[0];
        if (!mark[u]) mark[u] = 1, list[n++] = u;
      }
    lo = hi;
  }
  for (int k = 0; k < n; k++) mark[list[k]] = 0;
  if (out) memcpy(out, list, sizeof(int) * n), qsort(out, n, sizeof(int), ms_compare_ints);
  return n;
}

/* m->ring_start, m->ring from m->fedge and m->ve: breadth-first to depth m->sc_ring from each
 * vertex */
static ms_status rings(ms_model *m) {
  int nv = m->nv, *mark = ms_alloc(nv, sizeof(int)), *list = ms_alloc(nv, sizeof(int));
  int *rs = ms_alloc(nv + 1, sizeof(int)), *ring = NULL;
  ms_status st = MS_ENOMEM;
  if (!mark || !list || !rs) goto done;
  // count, then fill
  for (int v = 0; v < nv; v++) rs[v + 1] = rs[v] + ring_of(m, v, m->sc_ring, mark, list, NULL);
  if (!(ring = ms_alloc(rs[nv], sizeof(int)))) goto done;
  for (int v = 0; v < nv; v++) ring_of(m, v, m->sc_ring, mark, list, ring + rs[v]);
  free(m->ring_start), free(m->ring);
  m->ring_start = rs, m->ring = ring, rs = NULL;
  st = MS_OK;
done:
  free(mark), free(list), free(rs);
  return st;
}

ms_status ms_model_faces(ms_model *m) {
  ms_status st = face_edges(m);
  if (st == MS_OK) st = incidence(m, m->face, m->nf, 3, &m->vf_start, &m->vf);
  if (st == MS_OK) st = incidence(m, m->fedge, m->ne, 2, &m->ve_start, &m->ve);
  if (st == MS_OK) st = ms_model_disk(m);
  return st == MS_OK ? rings(m) : st;
}

/* ---------------------------------------------------------------- detection */

/* the pair's four points */
void ms_self_gather(const ms_sc_pair *p, const double *x, double q[12]) {
  for (int k = 0; k < 4; k++) memcpy(q + 3 * k, x + 3 * p->v[k], 3 * sizeof(double));
}

/* the smallest distance a detection reports when nothing is within r: r itself */
double ms_self_radius(const ms_model *m) {
  return 2.0 * m->sc_thickness;
}

/* hit k of the broad phase of kind MS_PAIR_PT (point, triangle) or MS_PAIR_EE (edge, edge) */
static ms_sc_pair hit_pair(const ms_model *m, int kind, const int *hit, int k) {
  if (kind == MS_PAIR_PT) {
    const int *f = m->face + 3 * hit[2 * k + 1];
    return (ms_sc_pair){kind, {hit[2 * k], f[0], f[1], f[2]}, 0};
  }
  const int *a = m->fedge + 2 * hit[2 * k], *b = m->fedge + 2 * hit[2 * k + 1];
  return (ms_sc_pair){kind, {a[0], a[1], b[0], b[1]}, 0};
}

/* what the blocks of a narrow phase share: the broad phase's hits of one kind, the radius of
 * a detection and whether it measures every ring pair */
typedef struct {
  const ms_model *m;
  ms_self_ws *w;
  const double *x;
  const int *hit;
  int kind, sweep, rings;
  double r;
} narrowing;

/* 1 when a vertex of pair p is fixed */
static int holds_fixed(const ms_model *m, const ms_sc_pair *p) {
  return m->fixed[p->v[0]] | m->fixed[p->v[1]] | m->fixed[p->v[2]] | m->fixed[p->v[3]];
}

/* the hits [lo, hi): w->hdist their distances at x (-1: the pair shares a vertex, or is a ring
 * pair a detection leaves unmeasured; 0 unmeasured in a sweep), w->hring their ring flags (1 for
 * every pair of a sweep: its pairs bound the step's end, they carry no energy; looked up first
 * where a detection leaves ring pairs out, but those holding a fixed vertex, else only for the
 * pairs within r, the ones it keeps) */
static void narrow_block(void *ctx, int lo, int hi) {
  const narrowing *c = ctx;
  int na = c->kind == MS_PAIR_PT ? 1 : 2;
  for (int k = lo; k < hi; k++) {
    ms_sc_pair p = hit_pair(c->m, c->kind, c->hit, k);
    double q[12];
    double *dist = c->w->hdist.p;
    char *ring = c->w->hring.p;
    dist[k] = -1;
    if (ms_shares_vertex(p.v, na, 4)) continue;
    // (looked up once: before the distance where the ring is left out, else only within r)
    int early = !c->sweep && !c->rings, in_ring = early && ms_self_in_ring(c->m, &p);
    if (in_ring && !holds_fixed(c->m, &p)) continue;
    if (!c->sweep) ms_self_gather(&p, c->x, q);
    dist[k] = c->sweep ? 0.0 : sqrt(ms_pair_dist2(p.kind, q, NULL, NULL));
    ring[k] =
        (char)(c->sweep || in_ring || (!early && dist[k] < c->r && ms_self_in_ring(c->m, &p)));
  }
}

/* the hits of one kind kept, in order: within r (detection: lowering their vertices' nearest,
 * and the gap where they are not ring pairs; every ring pair measured or only those holding a
 * fixed vertex, by rings) or every one that shares no vertex (sweep); distances and ring flags
 * in parallel blocks, the pairs kept serially */
static ms_status keep_hits(const ms_model *m, ms_self_ws *w, const double *x, int kind,
                           const int *hit, int nhit, double r, int sweep, int rings) {
  if (ms_grow(&w->hdist, nhit, sizeof(double), 0) || ms_grow(&w->hring, nhit, sizeof(char), 0))
    return MS_ENOMEM;
  narrowing c = {m, w, x, hit, kind, sweep, rings, r};
  ms_blocks(m, nhit, MS_SC_BLOCK, narrow_block, &c);
  const double *hdist = w->hdist.p;
  const char *hring = w->hring.p;
  int kept = 0;
  for (int k = 0; k < nhit; k++) kept += hdist[k] >= 0 && (sweep || hdist[k] < r);
  if (kept > INT_MAX - w->npair || reserve(w, w->npair + kept) != MS_OK) return MS_ENOMEM;
  for (int k = 0; k < nhit; k++) {
    double dist = hdist[k];
    if (dist < 0 || (!sweep && !(dist < r))) continue;
    ms_sc_pair p = hit_pair(m, kind, hit, k);
    p.ring = hring[k];
    for (int v = 0; v < 4 && !sweep; v++) w->nearest[p.v[v]] = fmin(w->nearest[p.v[v]], dist);
    if (!sweep && !p.ring) w->gap = fmin(w->gap, dist);
    w->pair[w->npair++] = p, w->nring += p.ring;
  }
  return MS_OK;
}

/* vertex v's energy pairs: the pair list inverted by counting sort (each pair under its 4
 * vertices) */
static void vertex_pairs(const ms_model *m, ms_self_ws *w) {
  int *start = w->vstart;
  memset(start, 0, sizeof(int) * (m->nv + 1));
  for (int p = 0; p < w->npair; p++)
    for (int k = 0; k < 4 && !w->pair[p].ring; k++) start[w->pair[p].v[k] + 1]++;
  for (int v = 0; v < m->nv; v++) start[v + 1] += start[v];
  for (int p = 0; p < w->npair; p++)
    for (int k = 0; k < 4 && !w->pair[p].ring; k++) w->vpair[start[w->pair[p].v[k]]++] = p;
  for (int v = m->nv; v > 0; v--) start[v] = start[v - 1];
  start[0] = 0;
}

/* the mean length of the triangles' edges at x [m]; 0 without triangles */
double ms_mean_face_edge(const ms_model *m, const double *x) {
  double sum = 0;
  for (int e = 0; e < m->ne; e++) {
    const double *a = x + 3 * m->fedge[2 * e], *b = x + 3 * m->fedge[2 * e + 1];
    sum += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
  }
  return m->ne ? sum / m->ne : 0.0;
}

/* the grid cell of the broad phase: the mean triangle edge plus the inflation */
static double cell_size(const ms_model *m, ms_self_ws *w, const double *x, double r) {
  // the mean edge measured once for the positions a step's searches share
  size_t bytes = sizeof(double) * 3 * m->nv;
  if (!w->edge_valid || memcmp(w->edge_at, x, bytes)) {
    w->mean_edge = ms_mean_face_edge(m, x), w->edge_valid = 1;
    memcpy(w->edge_at, x, bytes);
  }
  double c = w->mean_edge + r;
  return c > 0 && isfinite(c) ? c : 1.0;
}

/* the seconds since *t, which becomes now */
static double lap(double *t) {
  double now = ms_clock(), since = now - *t;
  *t = now;
  return since;
}

/* the pairs found from x: within r at x, each vertex's nearest and the gap at x (dx NULL; by
 * the planar certificate where it holds, when planar; the ring pairs all, or only those holding
 * a fixed vertex, by rings), or every pair whose paths from x to x + dx may come within r
 * (sweep.c, in moving frames or in x's; nearest and gap left; only those with a vertex flagged
 * in only, when given), added to the pairs there are when keep */
static ms_status find_pairs(const ms_model *m, ms_data *d, const double *x, const double *dx,
                            int moving, const unsigned char *only, int keep, int planar, int rings,
                            double r) {
  ms_self_ws *w;
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  const int *pt, *ee;
  int npt = 0, nee = 0, sweep = dx != NULL;
  double cell = cell_size(m, w, x, r), t = ms_clock();
  if (!keep) w->npair = w->nring = 0;
  w->slack_ok = 0; /* the pairs change: bounds.c measures their rooms and planes again */
  for (int v = 0; v < m->nv && !sweep; v++) w->nearest[v] = INFINITY; /* no triangle: unbounded */
  for (int k = 0; k < 3 * m->nf && !sweep; k++) w->nearest[m->face[k]] = r;
  if (!sweep) w->gap = r, w->rings = rings;

  // the broad phase: points inflated by r against the triangles, edges by r/2 against edges;
  // where the mesh projects one to one onto a plane, only the boxes near tight vertices
  w->planar_used = 0;
  if (sweep) {
    st = ms_sweep_pairs(&w->sweep, m, x, dx, moving, only, r, cell, ms_threads(m), &pt, &npt, &ee,
                        &nee);
  } else {
    ms_hash_boxes(x, NULL, m->nv, 1, r, ms_threads(m), w->plo, w->phi);
    ms_hash_boxes(x, m->face, m->nf, 3, 0.0, ms_threads(m), w->flo, w->fhi);
    ms_hash_boxes(x, m->fedge, m->ne, 2, 0.5 * r, ms_threads(m), w->elo, w->ehi);
    ms_planar_boxes b = {w->plo, w->phi, w->elo, w->ehi, w->flo, w->fhi};
    if (planar)
      st = ms_planar_pairs(&w->planar, m, x, r, cell, ms_threads(m), &b, &w->planar_used, &pt, &npt,
                           &ee, &nee);
    if (st == MS_OK && !w->planar_used)
      st = ms_hash_overlaps(&w->hash, w->plo, w->phi, m->nv, w->flo, w->fhi, m->nf, 0, 1, cell,
                            ms_threads(m), &pt, &npt);
  }
  w->t_broad += lap(&t);
  if (st == MS_OK) st = keep_hits(m, w, x, MS_PAIR_PT, pt, npt, r, sweep, rings);
  w->t_narrow += lap(&t);
  if (st == MS_OK && !sweep && !w->planar_used)
    st = ms_hash_overlaps(&w->hash, w->elo, w->ehi, m->ne, w->elo, w->ehi, m->ne, 1, 1, cell,
                          ms_threads(m), &ee, &nee);
  w->t_broad += lap(&t);
  if (st == MS_OK) st = keep_hits(m, w, x, MS_PAIR_EE, ee, nee, r, sweep, rings);
  if (st != MS_OK) return w->npair = w->nring = 0, st;
  vertex_pairs(m, w);
  w->t_narrow += lap(&t);
  return MS_OK;
}

ms_status ms_self_detect(const ms_model *m, ms_data *d, const double *x, double r, int planar,
                         int rings) {
  return find_pairs(m, d, x, NULL, 0, NULL, 0, planar, rings, r);
}

ms_status ms_self_sweep(const ms_model *m, ms_data *d, const double *x, const double *dx,
                        int moving, const unsigned char *only, int keep) {
  return find_pairs(m, d, x, dx, moving, only, keep, 0, 1, ms_self_radius(m));
}

ms_status ms_self_planar_path(const ms_model *m, ms_data *d, const double *x, const double *y,
                              double floor, int *certified) {
  ms_self_ws *w = d->sc;
  const int *pt, *ee;
  int npt, nee;
  double t = ms_clock(), r = ms_self_radius(m);
  ms_status st = ms_planar_path(&w->planar, m, x, y, floor, cell_size(m, w, x, r), ms_threads(m),
                                certified, w->only, &pt, &npt, &ee, &nee);
  w->t_broad += lap(&t);
  if (st == MS_OK && *certified) st = keep_hits(m, w, x, MS_PAIR_PT, pt, npt, r, 1, 1);
  if (st == MS_OK && *certified) st = keep_hits(m, w, x, MS_PAIR_EE, ee, nee, r, 1, 1);
  w->t_narrow += lap(&t);
  return st;
}

ms_status ms_self_crossings(const ms_model *m, ms_data *d, const double *x, int *count) {
  ms_self_ws *w;
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  const int *hit;
  int nhit;
  *count = 0;
  ms_hash_boxes(x, m->fedge, m->ne, 2, 0.0, ms_threads(m), w->elo, w->ehi);
  ms_hash_boxes(x, m->face, m->nf, 3, 0.0, ms_threads(m), w->flo, w->fhi);
  st = ms_hash_overlaps(&w->hash, w->elo, w->ehi, m->ne, w->flo, w->fhi, m->nf, 0, 0,
                        cell_size(m, w, x, 0.0), ms_threads(m), &hit, &nhit);
  for (int k = 0; st == MS_OK && k < nhit; k++) {
    const int *e = m->fedge + 2 * hit[2 * k], *f = m->face + 3 * hit[2 * k + 1];
    int v[5] = {e[0], e[1], f[0], f[1], f[2]};
    if (ms_shares_vertex(v, 2, 5)) continue;
    *count += ms_segment_meets_triangle(x + 3 * e[0], x + 3 * e[1], x + 3 * f[0], x + 3 * f[1],
                                        x + 3 * f[2]);
  }
  return st;
}

/* ---------------------------------------------------------------- the step's pairs */

ms_status ms_self_begin(const ms_model *m, ms_data *d, double h, ms_info *info) {
  if (d->sc) d->sc->active = 0;
  if (!m->self_contact) return d->sc_clean = 0, MS_OK;
  ms_self_ws *w;
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  w->t_broad = w->t_narrow = w->t_bounds = 0;

  // a state that already crosses itself cannot be kept from crossing
  if (!d->sc_clean) {
    if ((st = ms_self_crossings(m, d, d->x, &info->crossings)) != MS_OK) return st;
    if (info->crossings) return MS_ECROSSING;
    d->sc_clean = 1;
  }
  // the ring pairs bound the step's end only where it moves within reach of the radius
  int rings = ms_self_within_reach(m, d, h);
  if ((st = ms_self_detect(m, d, d->x, ms_self_radius(m), 1, rings)) != MS_OK) return st;
  if ((st = ms_self_friction_begin(m, d)) != MS_OK) return st;
  d->sc->active = 1, d->sc->reach = 1.0;
  info->pairs = d->sc->npair - d->sc->nring, info->gap = d->sc->gap;
  return MS_OK;
}

/* the pairs at the state d->x, active until ms_self_end (energy and forces of a state) */
ms_status ms_self_at(const ms_model *m, ms_data *d) {
  if (!m->self_contact) return MS_OK;
  ms_status st = ms_self_detect(m, d, d->x, ms_self_radius(m), 1, 1);
  if (st == MS_OK) d->sc->active = 1, d->sc->lagged = 0;
  return st;
}

/* the pairs' life ends: they belong to the state or step that found them */
void ms_self_end(ms_data *d) {
  if (d->sc) d->sc->active = 0;
}

int ms_self_active(const ms_model *m, const ms_data *d) {
  return m->self_contact && d->sc && d->sc->active;
}

int ms_self_paired(const ms_model *m, const ms_data *d, int i) {
  return ms_self_active(m, d) && d->sc->vstart[i + 1] > d->sc->vstart[i];
}

/* pair p's energy at x [J]: the barrier's, plus its lagged friction's during a step; scale
 * times its forces added to f where given */
static double pair_forces(const ms_model *m, const ms_data *d, const double *x, int p, double *f,
                          double scale) {
  const ms_sc_pair *pr = d->sc->pair + p;
  double q[12], g[12], u[3], per;
  ms_self_gather(pr, x, q);
  double e = ms_pair_energy(m, pr->kind, q, MS_SPD_CLAMP, f ? g : NULL, NULL);
  e += ms_self_friction_pair(m, d, x, p, -1, NULL, u, &per);
  for (int k = 0; f && k < 4; k++)
    for (int t = 0; t < 3; t++) {
      double c = per > 0 ? d->sc->fric[p].c[k] * per * u[t] : 0.0;
      f[3 * pr->v[k] + t] -= scale * (g[3 * k + t] + c);
    }
  return e;
}

/* the self-contact energy over the step's pairs at x [J]; scale times its forces added to f
 * where given */
double ms_self_forces(const ms_model *m, const ms_data *d, const double *x, double *f,
                      double scale) {
  if (!ms_self_active(m, d)) return 0.0;
  double e = 0;
  for (int p = 0; p < d->sc->npair; p++)
    if (!d->sc->pair[p].ring) e += pair_forces(m, d, x, p, f, scale);
  return e;
}

/* H (3x3, rows `stride` apart) += s P, P = I - n n^T: a friction secant block */
static void friction_block(const double n[3], double s, double *H, int stride) {
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) H[stride * a + b] += s * ((a == b) - n[a] * n[b]);
}

/* vertex i's share of the self-contact energy with x_i at p, the others at x [J]; its force
 * on i added to f and its Gauss-Newton block to H where given (VBD) */
double ms_self_vertex(const ms_model *m, const ms_data *d, const double *x, const double *p, int i,
                      double *f, double *H) {
  if (!ms_self_active(m, d)) return 0.0;
  const ms_self_ws *w = d->sc;
  double e = 0, q[12], g[12], hs[144], u[3], per;
  for (int k = w->vstart[i]; k < w->vstart[i + 1]; k++) {
    const ms_sc_pair *pr = w->pair + w->vpair[k];
    int slot = 0;
    ms_self_gather(pr, x, q);
    for (int s = 0; s < 4; s++)
      if (pr->v[s] == i) memcpy(q + 3 * s, p, 3 * sizeof(double)), slot = s;
    e += ms_pair_energy(m, pr->kind, q, MS_SPD_CLAMP, f ? g : NULL, H ? hs : NULL);
    e += ms_self_friction_pair(m, d, x, w->vpair[k], i, p, u, &per);
    double c = per > 0 ? w->fric[w->vpair[k]].c[slot] : 0.0;
    for (int t = 0; f && t < 3; t++) f[t] -= g[3 * slot + t] + c * per * u[t];
    for (int a = 0; H && a < 3; a++)
      for (int b = 0; b < 3; b++) H[3 * a + b] += hs[12 * (3 * slot + a) + 3 * slot + b];
    if (H && per > 0) friction_block(w->fric[w->vpair[k]].n, c * c * per, H, 3);
  }
  return e;
}

/* pair p's 12x12 Hessian at x into hs, made positive semidefinite (eigenvalue clamp under
 * 'project', else the Gauss-Newton form), plus its lagged friction's secant stiffness
 * c_a c_b per (I - n n^T) between slots a and b; 0 when the pair feels neither */
static int whole_hessian(const ms_model *m, const ms_data *d, const double *x, int p, ms_spd spd,
                         double hs[144]) {
  const ms_self_ws *w = d->sc;
  const ms_sc_pair *pr = w->pair + p;
  double q[12], u[3], per;
  ms_self_gather(pr, x, q);
  int touching = ms_pair_energy(m, pr->kind, q, spd, NULL, hs) != 0.0;
  if (!touching) memset(hs, 0, 144 * sizeof(double));
  ms_self_friction_pair(m, d, x, p, -1, NULL, u, &per);
  const ms_sc_fric *fr = w->fric + p;
  for (int a = 0; a < 4 && per > 0; a++)
    for (int b = 0; b < 4; b++)
      friction_block(fr->n, fr->c[a] * fr->c[b] * per, hs + 36 * a + 3 * b, 12);
  return touching || per > 0;
}

/* blk (nv,9): each vertex's diagonal block of the self-contact Hessian at x (whole_hessian, so
 * the blocks are positive semidefinite too); the pairs' whole Hessians are kept for
 * ms_self_hessians (the factor of Newton and the linearised step gains blocks where they
 * couple vertices) and ms_self_couple (products with their off-diagonal blocks). MS_ENOMEM
 * leaves none kept */
ms_status ms_self_blocks(const ms_model *m, const ms_data *d, const double *x, ms_spd spd,
                         double *blk) {
  memset(blk, 0, sizeof(double) * 9 * m->nv);
  if (!ms_self_active(m, d)) return MS_OK;
  ms_self_ws *w = d->sc;
  ms_spd kept = spd == MS_SPD_PROJECT ? MS_SPD_PROJECT : MS_SPD_CLAMP;
  size_t pairs = w->npair - w->nring;
  w->ncouple = 0;
  if (ms_grow(&w->chess, 144 * pairs, sizeof(double), 0) ||
      ms_grow(&w->cvert, 4 * pairs, sizeof(int), 0))
    return MS_ENOMEM;
  for (int p = 0; p < w->npair; p++) {
    const ms_sc_pair *pr = w->pair + p;
    double *hs = (double *)w->chess.p + 144 * (size_t)w->ncouple;
    if (pr->ring || !whole_hessian(m, d, x, p, kept, hs)) continue;
    for (int k = 0; k < 4; k++) {
      double own[9];
      ms_self_block(hs, k, k, 1.0, own);
      for (int r = 0; r < 9; r++) blk[9 * pr->v[k] + r] += own[r];
    }
    memcpy((int *)w->cvert.p + 4 * w->ncouple++, pr->v, 4 * sizeof(int));
  }
  return MS_OK;
}

int ms_self_hessians(const ms_model *m, const ms_data *d, const double **hess, const int **vert) {
  int active = ms_self_active(m, d);
  *hess = active ? d->sc->chess.p : NULL, *vert = active ? d->sc->cvert.p : NULL;
  return active ? d->sc->ncouple : 0;
}

/* out += scale times the product of p (nv,3) with the off-diagonal blocks of the pairs'
 * Hessians ms_self_blocks kept, rows of fixed vertices left as they are */
void ms_self_couple(const ms_model *m, const ms_data *d, double scale, const double *p,
                    double *out) {
  if (!ms_self_active(m, d)) return;
  const ms_self_ws *w = d->sc;
  for (int c = 0; c < w->ncouple; c++) {
    const double *hs = (const double *)w->chess.p + 144 * (size_t)c;
    const int *v = (const int *)w->cvert.p + 4 * c;
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        if (b == a || m->fixed[v[a]]) continue;
        double blk[9];
        const double *pb = p + 3 * v[b];
        ms_self_block(hs, a, b, scale, blk);
        for (int r = 0; r < 3; r++)
          out[3 * v[a] + r] += blk[3 * r] * pb[0] + blk[3 * r + 1] * pb[1] + blk[3 * r + 2] * pb[2];
      }
  }
}

/* B (4x4, row-major) += curve c c^T for pair p at x: c its closest points' weights there,
 * curve its barrier's curvature (plus its friction's stick stiffness, with stick) */
static void pair_curvature(const ms_model *m, ms_data *d, int p, const double *x, int stick,
                           double B[16]) {
  const ms_sc_pair *pr = d->sc->pair + p;
  double q[12], n[3], c[4], e1, e2;
  ms_self_gather(pr, x, q);
  ms_barrier(ms_pair_closest(pr->kind, q, n, c), m->sc_thickness, m->sc_stiffness, &e1, &e2);
  double curve = e2 + (stick ? ms_self_friction_stick(m, d, p) : 0.0);
  for (int k = 0; k < 16; k++) B[k] += curve * c[k / 4] * c[k % 4];
}

/* FMS's bound on the energy pairs' curvature, one pass over the pairs. A pair's barrier
 * curves by b'' along its closest points' gap J u = sum_k c_k u_k (the weights c_k of
 * distance.c) and its friction by at most its stick stiffness across it, so that
 * curve |J u|^2 = sum_ab curve c_a c_b u_a.u_b bounds both: a 4x4 scalar block over the pair's
 * vertices, acting alike on each axis. It is taken at x with the stick and at x1 (the
 * barrier's alone) and the two added. Each side's weights sum to +-1, so sum_k c_k = 0: a
 * common translation of the pair is in the block's null space, and a global step with it
 * changes no momentum. *n pairs with a block, *B (n,16) and their vertices *v (n,4); none
 * when out of memory */
ms_status ms_self_curvature(const ms_model *m, ms_data *d, const double *x, const double *x1,
                            int *n, const double **B, const int **v) {
  *n = 0, *B = NULL, *v = NULL;
  if (!ms_self_active(m, d)) return MS_OK;
  ms_self_ws *w = d->sc;
  size_t pairs = w->npair - w->nring;
  if (ms_grow(&w->cblock, 16 * pairs, sizeof(double), 0) ||
      ms_grow(&w->cbvert, 4 * pairs, sizeof(int), 0))
    return MS_ENOMEM;
  double *out = w->cblock.p;
  for (int p = 0; p < w->npair; p++) {
    double *Bp = out + 16 * (size_t)*n;
    if (w->pair[p].ring) continue;
    memset(Bp, 0, 16 * sizeof(double));
    pair_curvature(m, d, p, x, 1, Bp);
    pair_curvature(m, d, p, x1, 0, Bp);
    if (Bp[0] + Bp[5] + Bp[10] + Bp[15] > 0)
      memcpy((int *)w->cbvert.p + 4 * (*n)++, w->pair[p].v, 4 * sizeof(int));
  }
  *B = out, *v = w->cbvert.p;
  return MS_OK;
}

/* XPBD: each pair closer than the thickness projected back to it, C = d - dhat with
 * compliance alpha [m/N] (Macklin et al. 2016 without a kept multiplier: the pairs change
 * every step) */
void ms_self_project(const ms_model *m, ms_data *d, double *x, double compliance) {
  if (!ms_self_active(m, d)) return;
  const ms_self_ws *w = d->sc;
  double q[12], g[12], dhat = m->sc_thickness;
  for (int p = 0; p < w->npair; p++) {
    const ms_sc_pair *pr = w->pair + p;
    if (pr->ring) continue;
    ms_self_gather(pr, x, q);
    double s = ms_pair_dist2(pr->kind, q, g, NULL), dist = sqrt(s), den = compliance;
    if (!(s < dhat * dhat) || !(dist > 1e-9 * dhat)) continue;
    for (int k = 0; k < 4; k++)
      for (int t = 0; t < 3; t++) den += m->imass[pr->v[k]] * g[3 * k + t] * g[3 * k + t] / (4 * s);
    double lambda = den > 0 ? (dhat - dist) / den : 0.0;
    for (int k = 0; k < 4; k++)
      for (int t = 0; t < 3; t++)
        x[3 * pr->v[k] + t] += m->imass[pr->v[k]] * lambda * g[3 * k + t] / (2 * dist);
  }
}
