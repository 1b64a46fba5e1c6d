/* vbd.c: vertex block descent (Chen, Liu, Yang and Yuksel 2024, "Vertex Block
 * Descent", ACM TOG 43(4)) on the implicit schemes' potential
 *
 *   g(x) = sum_i m_i/(2 hs^2) |x_i - y_i|^2 + sum_s k_s/2 (l_s - r_s)^2 + sum_i kc/2 phi_i^2,
 *
 * l_s = |x_i - x_j| and phi the contact penetration (contact.c). Block coordinate descent with
 * one vertex per block: vertex i alone moves to lower its share of g,
 *
 *   G_i(x_i) = m_i/(2 hs^2) |x_i - y_i|^2 + sum_{s at i} k_s/2 (l_s - r_s)^2 + kc/2 sum phi_i^2,
 *
 * which holds every term of g that depends on x_i, so moving x_i alone changes g by exactly
 * the change in G_i. One Newton step on G_i (the paper's eqs. 9-10):
 *
 *   grad = m_i/hs^2 (x_i - y_i) + sum_s k_s (1 - r_s/l_s)(x_i - x_j) - kc sum phi n,
 *   H    = m_i/hs^2 I + sum_s k_s (uu^T + max(0, 1 - r_s/l_s)(I - uu^T)) + kc sum n n^T,
 *
 * each spring's block made positive semidefinite by the clamp (ms_spring_block), the
 * contact's by dropping a sphere's lateral curvature (ms_contact_hessian); dx = -H^-1 grad,
 * skipped where H is nearly singular (the paper's det H test). The paper takes dx as it is;
 * here a backtracking (Armijo) search on G_i halves it until G_i decreases enough, so g never
 * increases. Vertices are visited Gauss-Seidel, colour after colour of a greedy colouring of
 * the spring graph (built once per System: its springs never change; fixed vertices stay
 * where they are): no spring joins two vertices of one colour, so a colour's vertices update
 * in parallel (ms_blocks), each reading only vertices of other colours, and the result does
 * not depend on the thread count.
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

#include "msim.h"

/* vertices of one colour per parallel block */
#define MS_VBD_BLOCK 64
/* the shortest local step tried, as a fraction of dx (a vertex's step is cheap to give up) */
#define MS_VBD_MIN_STEP 0x1p-20
/* H counts as singular when det H <= this * (trace H / 3)^3 (condition ~1e12) */
#define MS_VBD_SINGULAR 1e-24

struct ms_vbd_ws {
  int ncolor;
  int *cstart;        /* (nv+1) colour c's vertices are order[cstart[c] .. cstart[c+1]) */
  int *order;         /* (nv) vertices by colour, ascending within one */
  double *prev, *old; /* (nv,3) chebyshev: x^(n-1) and x^(n-2) */
};

void ms_vbd_free(ms_vbd_ws *w) {
  if (!w) return;
  free(w->cstart);
  free(w->order);
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
  w->prev = ms_alloc(3 * n, sizeof(double));
  w->old = ms_alloc(3 * n, sizeof(double));
  int *color = ms_alloc(n, sizeof(int)), *mark = ms_alloc(n, sizeof(int));
  if (!w->cstart || !w->order || !w->prev || !w->old || !color || !mark) {
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

/* ---------------------------------------------------------------- one vertex */

/* what the vertex updates of one colour share */
typedef struct {
  const ms_model *m;
  double *x;       /* (nv,3) the iterate, updated in place */
  const double *y; /* (nv,3) the target */
  double hs2;      /* 1/hs^2 [1/s^2] */
  const int *verts;
} sweep_ctx;

/* gradient and Hessian of G_i at x (file comment) */
static void local_system(const ms_model *m, const double *x, const double *y, int i, double wi,
                         double grad[3], double H[9]) {
  const double *xi = x + 3 * i;
  double f[3] = {0, 0, 0}, blk[9];
  ms_contact_hessian(m, x, i, H);
  ms_contact_point(m, xi, f);
  for (int t = 0; t < 3; t++) {
    grad[t] = wi * (xi[t] - y[3 * i + t]) - f[t];
    H[4 * t] += wi;
  }
  for (int p = m->adj_start[i]; p < m->adj_start[i + 1]; p++) {
    int s = m->adj[2 * p + 1];
    const double *xj = x + 3 * m->adj[2 * p];
    double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
    double l = sqrt(ms_dot(3, d, d)),
           c = m->k[s] * (1.0 - m->rest[s] / (l > MS_TINY ? l : MS_TINY));
    ms_spring_block(d, l, m->k[s], m->rest[s], MS_SPD_CLAMP, blk);
    for (int t = 0; t < 3; t++) grad[t] += c * d[t];
    for (int t = 0; t < 9; t++) H[t] += blk[t];
  }
}

/* dx = -H^-1 grad for the symmetric positive semidefinite H; 0 when H is nearly singular */
static int newton_step(const double H[9], const double grad[3], double dx[3]) {
  double a00 = H[4] * H[8] - H[5] * H[5], a01 = H[2] * H[5] - H[1] * H[8],
         a02 = H[1] * H[5] - H[2] * H[4], a11 = H[0] * H[8] - H[2] * H[2],
         a12 = H[1] * H[2] - H[0] * H[5], a22 = H[0] * H[4] - H[1] * H[1];
  double det = H[0] * a00 + H[1] * a01 + H[2] * a02, tr = (H[0] + H[4] + H[8]) / 3;
  if (!(det > MS_VBD_SINGULAR * tr * tr * tr) || !isfinite(det)) return 0;
  dx[0] = -(a00 * grad[0] + a01 * grad[1] + a02 * grad[2]) / det;
  dx[1] = -(a01 * grad[0] + a11 * grad[1] + a12 * grad[2]) / det;
  dx[2] = -(a02 * grad[0] + a12 * grad[1] + a22 * grad[2]) / det;
  return 1;
}

/* G_i(x_i + e) - G_i(x_i) [J], in forms that keep the digits of a small change:
 * |a + e|^2 - |a|^2 = e.(2a + e) and (l' - r)^2 - (l - r)^2 = (l' - l)(l' + l - 2r) with
 * l' - l = (l'^2 - l^2)/(l' + l); e_contact is G_i's contact energy at x_i */
static double local_change(const ms_model *m, const double *x, const double *y, int i, double wi,
                           const double e[3], double e_contact) {
  const double *xi = x + 3 * i;
  double moved[3] = {xi[0] + e[0], xi[1] + e[1], xi[2] + e[2]}, a[3];
  for (int t = 0; t < 3; t++) a[t] = 2 * (xi[t] - y[3 * i + t]) + e[t];
  double change = 0.5 * wi * ms_dot(3, e, a) + ms_contact_point(m, moved, NULL) - e_contact;
  for (int p = m->adj_start[i]; p < m->adj_start[i + 1]; p++) {
    int s = m->adj[2 * p + 1];
    const double *xj = x + 3 * m->adj[2 * p];
    double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
    double d1[3] = {d[0] + e[0], d[1] + e[1], d[2] + e[2]};
    for (int t = 0; t < 3; t++) a[t] = 2 * d[t] + e[t];
    double sum = sqrt(ms_dot(3, d1, d1)) + sqrt(ms_dot(3, d, d));
    double dl = sum > 0 ? ms_dot(3, e, a) / sum : 0.0;
    change += 0.5 * m->k[s] * dl * (sum - 2 * m->rest[s]);
  }
  return change;
}

/* one safeguarded Newton step of vertex i: dx halved until G_i falls by at least
 * MS_ARMIJO alpha grad.dx; x_i stays when no step does or H is singular */
static void vertex_step(const sweep_ctx *c, int i) {
  const ms_model *m = c->m;
  double wi = m->mass[i] * c->hs2, grad[3], H[9], dx[3];
  local_system(m, c->x, c->y, i, wi, grad, H);
  if (!newton_step(H, grad, dx)) return;
  double slope = ms_dot(3, grad, dx), e_contact = ms_contact_point(m, c->x + 3 * i, NULL);
  if (!(slope < 0)) return;
  for (double alpha = 1.0; alpha >= MS_VBD_MIN_STEP; alpha *= 0.5) {
    double e[3] = {alpha * dx[0], alpha * dx[1], alpha * dx[2]};
    if (local_change(m, c->x, c->y, i, wi, e, e_contact) <= MS_ARMIJO * alpha * slope) {
      for (int t = 0; t < 3; t++) c->x[3 * i + t] += e[t];
      return;
    }
  }
}

static void sweep_block(void *ctx, int lo, int hi) {
  const sweep_ctx *c = ctx;
  for (int q = lo; q < hi; q++)
    if (!c->m->fixed[c->verts[q]]) vertex_step(c, c->verts[q]);
}

/* one Gauss-Seidel sweep over the colours, each colour's vertices in parallel */
static void sweep(const ms_model *m, ms_data *d, const ms_vbd_ws *w, double hs) {
  sweep_ctx c = {.m = m, .x = d->xn, .y = d->y, .hs2 = 1.0 / (hs * hs)};
  for (int k = 0; k < w->ncolor; k++) {
    c.verts = w->order + w->cstart[k];
    ms_blocks(m, w->cstart[k + 1] - w->cstart[k], MS_VBD_BLOCK, sweep_block, &c);
  }
}

/* ---------------------------------------------------------------- iterations */

/* chebyshev weight omega_n of sweep n >= 1 after omega_(n-1) = omega */
static double chebyshev_omega(int n, double rho, double omega) {
  return n == 1 ? 1.0 : n == 2 ? 2.0 / (2.0 - rho * rho) : 4.0 / (4.0 - rho * rho * omega);
}

/* minimise g from d->xn by VBD sweeps (SOLVERS.md's ms_minimize_fn). History: |grad g| and g
 * at the start point and after every sweep (after its acceleration). Reads o->tol,
 * o->acceleration (none or chebyshev) and o->rho; the sweeps' time is info->solve */
ms_status ms_vbd_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info) {
  if (!d->vbd && !(d->vbd = workspace_new(m))) return MS_ENOMEM;
  ms_vbd_ws *w = d->vbd;
  int n3 = 3 * m->nv, it = 0, accel = o->acceleration == MS_ACCEL_CHEBYSHEV;
  double *x = d->xn, omega = 1.0, obj, res = ms_objective_grad(m, d, x, d->y, hs, d->g, &obj);
  ms_hist(d, 0, res, obj);
  while (it < cap && !(o->tol > 0 && res < o->tol)) {
    if (ms_interrupted(d)) return MS_EINTERRUPT;
    double t0 = ms_clock();
    if (accel) { /* old = x^(n-2), prev = x^(n-1) */
      double *t = w->old;
      w->old = w->prev, w->prev = t;
      memcpy(w->prev, x, sizeof(double) * n3);
    }
    sweep(m, d, w, hs);
    it++;
    omega = chebyshev_omega(it, o->rho, omega);
    for (int k = 0; accel && omega != 1.0 && k < n3; k++)
      x[k] = omega * (x[k] - w->old[k]) + w->old[k];
    info->solve += ms_clock() - t0;
    res = ms_objective_grad(m, d, x, d->y, hs, d->g, &obj);
    ms_hist(d, it, res, obj);
  }
  info->iters = it;
  info->nhist = it + 1;
  info->converged = o->tol > 0 && res < o->tol;
  return MS_OK;
}
