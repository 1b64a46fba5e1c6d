/* xpbd.c: extended position-based dynamics (Macklin, Mueller and Chentanez 2016) on springs
 *
 * Each (sub)step of length hs predicts x~ = x + hs v + hs^2 (g + f_ext / m) (ms_inertial_target, v
 * already damped), then projects the spring constraints C_s = |x_i - x_j| - r_s Gauss-Seidel, one
 * spring after the other, with compliance alpha_s = 1/k_s, alpha~ = alpha/hs^2 and a
 * multiplier lambda_s that starts at 0 every (sub)step and accumulates over its iterations:
 *
 *   dlambda = (-C - alpha~ lambda - gamma grad C (x - x^n)) / ((1 + gamma)(w_i + w_j) + alpha~),
 *
 * with inverse masses w (0 on fixed vertices) and Macklin's constraint damping
 * gamma = alpha~ (hs^2 beta) / hs = beta / (k hs) (beta = xpbd_damping [N s/m]; 0 by default).
 * Springs of zero stiffness (infinite compliance) do nothing. After every sweep, contact
 * projects each vertex whose path from x^n entered a collider onto its surface, with
 * position-based static and kinetic friction (Macklin et al. 2014; ms_contact_project). Then
 * v = (x - x^n)/hs.
 * History of the last substep: the residual |C + alpha~ lambda| over springs with stiffness and
 * a free end [m], and the substep's incremental potential g (ms_objective with y = x~, h = hs).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "msim.h"

struct ms_xpbd_ws {
  double *lambda; /* (ns) multipliers of the current substep [N s^2] */
  double *x0;     /* (nv,3) positions at the start of the substep */
};

void ms_xpbd_free(ms_xpbd_ws *w) {
  if (!w) return;
  free(w->lambda);
  free(w->x0);
  free(w);
}

/* a complete workspace for m, or NULL when out of memory */
static ms_xpbd_ws *workspace_new(const ms_model *m) {
  ms_xpbd_ws *w = ms_alloc(1, sizeof(ms_xpbd_ws));
  if (!w) return NULL;
  w->lambda = ms_alloc(m->ns, sizeof(double));
  w->x0 = ms_alloc(3 * (size_t)m->nv, sizeof(double));
  if (!w->lambda || !w->x0) {
    ms_xpbd_free(w);
    return NULL;
  }
  return w;
}

/* the workspace of d, made on first use and published only when complete (nv and ns never
 * change) */
static ms_status workspace(const ms_model *m, ms_data *d) {
  return d->xpbd || (d->xpbd = workspace_new(m)) ? MS_OK : MS_ENOMEM;
}

/* unit vector u from x_j to x_i of spring s and its length; +x for a zero-length spring */
static double spring_dir(const ms_model *m, const double *x, int s, double u[3]) {
  const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), inv = len > 0 ? 1.0 / len : 0.0;
  for (int t = 0; t < 3; t++) u[t] = len > 0 ? d[t] * inv : (t == 0);
  return len;
}

/* 1 when spring s can act: finite compliance and at least one free end */
static int active(const ms_model *m, int s) {
  return m->k[s] > 0 && m->imass[m->edge[2 * s]] + m->imass[m->edge[2 * s + 1]] > 0;
}

/* one Gauss-Seidel sweep over the springs, updating x and lambda */
static void sweep(const ms_model *m, double *x, const double *x0, double *lambda, double hs,
                  double beta) {
  for (int s = 0; s < m->ns; s++) {
    if (!active(m, s)) continue;
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    double wi = m->imass[i], wj = m->imass[j], u[3];
    double at = 1.0 / (m->k[s] * hs * hs), gamma = beta / (m->k[s] * hs);
    double c = spring_dir(m, x, s, u) - m->rest[s], rate = 0;
    for (int t = 0; t < 3; t++)
      rate += u[t] * ((x[3 * i + t] - x0[3 * i + t]) - (x[3 * j + t] - x0[3 * j + t]));
    double dl = (-c - at * lambda[s] - gamma * rate) / ((1 + gamma) * (wi + wj) + at);
    lambda[s] += dl;
    for (int t = 0; t < 3; t++) {
      x[3 * i + t] += wi * dl * u[t];
      x[3 * j + t] -= wj * dl * u[t];
    }
  }
}

/* |C + alpha~ lambda| over the active springs [m] */
static double residual(const ms_model *m, const double *x, const double *lambda, double hs) {
  double r2 = 0;
  for (int s = 0; s < m->ns; s++) {
    if (!active(m, s)) continue;
    double u[3], c = spring_dir(m, x, s, u) - m->rest[s] + lambda[s] / (m->k[s] * hs * hs);
    r2 += c * c;
  }
  return sqrt(r2);
}

/* history entry k of the substep whose prediction is d->y */
static void record(const ms_model *m, ms_data *d, const double *lambda, double hs, int k) {
  ms_hist(d, k, residual(m, d->xn, lambda, hs), ms_objective(m, d->xn, d->y, hs));
}

/* one step of `substeps` substeps of `iterations` sweeps each */
ms_status ms_xpbd(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info) {
  ms_status st = workspace(m, d);
  if (st != MS_OK) return st;
  ms_xpbd_ws *w = d->xpbd;
  int nsub = o->substeps > 0 ? o->substeps : 1, iters = o->iterations > 0 ? o->iterations : 1;
  double hs = h / nsub;
  for (int sub = 0; sub < nsub; sub++) {
    int last = sub == nsub - 1;
    // predict from the substep's start (a view of d with x = x^n, vn = current velocity)
    memcpy(w->x0, d->xn, sizeof(double) * 3 * m->nv);
    ms_data start = {.x = w->x0, .vn = d->vn, .fext = d->fext};
    ms_inertial_target(m, &start, hs, d->y);
    memcpy(d->xn, d->y, sizeof(double) * 3 * m->nv);
    memset(w->lambda, 0, sizeof(double) * m->ns);
    if (last) record(m, d, w->lambda, hs, 0);
    for (int k = 1; k <= iters; k++) {
      if (ms_interrupted(d)) return MS_EINTERRUPT;
      sweep(m, d->xn, w->x0, w->lambda, hs, o->xpbd_damping);
      ms_contact_project(m, w->x0, d->xn, m->mu);
      if (last) record(m, d, w->lambda, hs, k);
    }
    for (int i = 0; i < 3 * m->nv; i++) d->vn[i] = (d->xn[i] - w->x0[i]) / hs;
  }
  info->iters = iters;
  info->nhist = iters + 1;
  return MS_OK;
}
