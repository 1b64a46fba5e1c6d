/* vbd.c: vertex block descent (Chen, Liu, Yang and Yuksel 2024, "Vertex Block
 * Descent", ACM TOG 43(4)) on the implicit schemes' potential g: block coordinate descent
 * with one vertex per block, each block a safeguarded Newton step on the vertex's share G_i of
 * g with its neighbours held (vertex.c), so g never increases. Vertices are visited
 * Gauss-Seidel, colour after colour of a greedy colouring of the spring graph (built once per
 * System: its springs never change; fixed vertices stay where they are): no spring joins two
 * vertices of one colour, so a colour's vertices update in parallel (ms_blocks), each reading
 * only vertices of other colours, and the result does not depend on the thread count.
 * Self-contact's pairs join vertices the colouring does not see, so within each colour the
 * vertices of an energy pair update after the others, one by one in ascending order.
 *
 * Optional Chebyshev acceleration (the paper's Alg. 1 and eq. 12, after Wang 2015), applied
 * after each sweep n with a spectral radius estimate rho:
 *
 *   x^(n) = omega_n (x^(n) - x^(n-2)) + x^(n-2),
 *   omega_1 = 1, omega_2 = 2/(2 - rho^2), omega_n = 4/(4 - rho^2 omega_(n-1)).
 *
 * omega = 1 (sweep 1, or rho = 0) leaves the sweep as it is. The extrapolation is not a
 * descent step: with it g may rise.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* vertices of one colour per parallel block */
#define MS_VBD_BLOCK 64

struct ms_vbd_ws {
  int ncolor;
  int *cstart;        /* (nv+1) colour c's vertices are order[cstart[c] .. cstart[c+1]) */
  int *order;         /* (nv) vertices by colour, ascending within one */
  int *split;         /* (nv) this step's order: each colour's vertices in no energy pair
                       * first, then those in one (each part ascending) */
  int *unpaired;      /* (nv) how many of colour c's vertices are in no energy pair */
  double *prev, *old; /* (nv,3) chebyshev: x^(n-1) and x^(n-2) */
};

void ms_vbd_free(void *ws) {
  ms_vbd_ws *w = ws;
  if (!w) return;
  free(w->cstart);
  free(w->order);
  free(w->split);
  free(w->unpaired);
  free(w->prev);
  free(w->old);
  free(w);
}

/* greedy colouring in vertex order: each vertex takes the smallest colour none of its
 * lower-numbered neighbours has; color and mark are (nv) scratch. Returns the colour count */
static int greedy_colors(const ms_model *m, int *color, int *mark) {
  int ncolor = 0;
  for (int c = 0; c < m->nv; c++) mark[c] = -1;
  for (int v = 0; v < m->nv; v++) {
    for (int p = m->adj_start[v]; p < m->adj_start[v + 1]; p++)
      if (m->adj[2 * p] < v) mark[color[m->adj[2 * p]]] = v;
    int c = 0;
    while (mark[c] == v) c++;
    color[v] = c;
    if (c + 1 > ncolor) ncolor = c + 1;
  }
  return ncolor;
}

/* w's colour classes (counting sort of the greedy colours); color and mark are (nv) scratch */
static void build_colors(const ms_model *m, ms_vbd_ws *w, int *color, int *mark) {
  w->ncolor = greedy_colors(m, color, mark);
  memset(w->cstart, 0, sizeof(int) * (m->nv + 1));
  for (int v = 0; v < m->nv; v++) w->cstart[color[v] + 1]++;
  for (int c = 0; c < w->ncolor; c++) w->cstart[c + 1] += w->cstart[c];
  for (int c = 0; c < w->ncolor; c++) mark[c] = w->cstart[c];
  for (int v = 0; v < m->nv; v++) w->order[mark[color[v]]++] = v;
}

/* a complete workspace for m with its colouring, or NULL when out of memory */
static ms_vbd_ws *workspace_new(const ms_model *m) {
  size_t n = m->nv;
  ms_vbd_ws *w = ms_alloc(1, sizeof(ms_vbd_ws));
  if (!w) return NULL;
  w->cstart = ms_alloc(n + 1, sizeof(int));
  w->order = ms_alloc(n, sizeof(int));
  w->split = ms_alloc(n, sizeof(int));
  w->unpaired = ms_alloc(n, sizeof(int));
  w->prev = ms_alloc(3 * n, sizeof(double));
  w->old = ms_alloc(3 * n, sizeof(double));
  int *color = ms_alloc(n, sizeof(int)), *mark = ms_alloc(n, sizeof(int));
  if (!w->cstart || !w->order || !w->split || !w->unpaired || !w->prev || !w->old || !color ||
      !mark) {
    free(color);
    free(mark);
    ms_vbd_free(w);
    return NULL;
  }
  build_colors(m, w, color, mark);
  free(color);
  free(mark);
  return w;
}

/* ---------------------------------------------------------------- sweeps */

/* what the vertex updates of one colour share */
typedef struct {
  ms_vertex v; /* the share G_i of each vertex (vertex.c) */
  const int *verts;
} sweep_ctx;

static void sweep_block(void *ctx, int lo, int hi) {
  const sweep_ctx *c = ctx;
  for (int q = lo; q < hi; q++)
    if (!c->v.m->fixed[c->verts[q]]) ms_vertex_step(&c->v, c->verts[q]);
}

/* w->split and w->unpaired for this step's energy pairs: each colour's vertices in none, then
 * those in one, each part in the colouring's order */
static void split_colours(const ms_model *m, const ms_data *d, ms_vbd_ws *w) {
  for (int k = 0; k < w->ncolor; k++) {
    int *out = w->split + w->cstart[k], n = 0;
    for (int pass = 0; pass < 2; pass++) {
      if (pass) w->unpaired[k] = n;
      for (int q = w->cstart[k]; q < w->cstart[k + 1]; q++)
        if (ms_self_paired(m, d, w->order[q]) == pass) out[n++] = w->order[q];
    }
  }
}

/* one Gauss-Seidel sweep over the colours, each colour's vertices in no energy pair in
 * parallel, then the others one by one */
static void sweep(const ms_model *m, ms_data *d, const ms_vbd_ws *w, double hs) {
  sweep_ctx c = {
      .v = {.m = m, .d = d, .x = d->xn, .y = d->y, .hs2 = 1.0 / (hs * hs), .self_contact = 1}};
  for (int k = 0; k < w->ncolor; k++) {
    c.verts = w->split + w->cstart[k];
    ms_blocks(m, w->unpaired[k], MS_VBD_BLOCK, sweep_block, &c);
    sweep_block(&c, w->unpaired[k], w->cstart[k + 1] - w->cstart[k]);
  }
}

/* ---------------------------------------------------------------- iterations */

/* what one step's sweeps share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  ms_vbd_ws *w;
  double hs;
  int accel;    /* chebyshev */
  double rho;   /* its spectral radius estimate */
  double omega; /* its weight of the last sweep */
  ms_info *info;
} vbd_ctx;

/* sweep n, timed into info->solve, then its extrapolation (ms_iteration_fn) */
static ms_status vbd_iteration(void *ctx, int n, double *res, double *obj) {
  vbd_ctx *c = ctx;
  ms_vbd_ws *w = c->w;
  int n3 = 3 * c->m->nv;
  double *x = c->d->xn, t0 = ms_clock();
  if (c->accel) { /* old = x^(n-2), prev = x^(n-1) */
    double *t = w->old;
    w->old = w->prev, w->prev = t;
    memcpy(w->prev, x, sizeof(double) * n3);
  }
  ms_self_keep(c->m, c->d, x, c->hs, 1);
  sweep(c->m, c->d, w, c->hs);
  c->omega = ms_chebyshev_omega(n, 1, c->rho, c->omega);
  for (int k = 0; c->accel && c->omega != 1.0 && k < n3; k++)
    x[k] = c->omega * (x[k] - w->old[k]) + w->old[k];
  c->info->solve += ms_clock() - t0;
  // within self-contact's bounds: a sweep they cut is halved back until g falls, as FMS's
  if (ms_self_confine(c->m, c->d, x) && ms_self_rises(c->m, c->d, c->hs)) return MS_STOPPED;
  *res = ms_objective_grad(c->m, c->d, x, c->d->y, c->hs, c->d->g, obj);
  return MS_OK;
}

/* minimise g from d->xn by VBD sweeps (SOLVERS.md's ms_minimize_fn). History: |grad g| and g
 * at the start point and after every sweep (after its acceleration). Reads o->tol,
 * o->acceleration (none or chebyshev) and o->rho; the sweeps' time is info->solve */
ms_status ms_vbd_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info) {
  if (!d->vbd && !(d->vbd = workspace_new(m))) return MS_ENOMEM;
  split_colours(m, d, d->vbd);
  vbd_ctx c = {.m = m,
               .d = d,
               .w = d->vbd,
               .hs = hs,
               .accel = o->acceleration == MS_ACCEL_CHEBYSHEV,
               .rho = o->rho,
               .omega = 1.0,
               .info = info};
  double obj, res = ms_objective_grad(m, d, d->xn, d->y, hs, d->g, &obj);
  return ms_descend(d, cap, o, res, obj, vbd_iteration, &c, info);
}
