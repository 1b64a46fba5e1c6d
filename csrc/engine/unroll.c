/* unroll.c: the adjoint of an FMS step with a fixed iteration count, unrolled (the fms method,
 * and implicit Euler with solver fms: the same iterations from the same start)
 *
 * FMS stopped after K local-global iterations (tol 0) is not at g's minimiser, so the implicit
 * function theorem (adjoint.c) would differentiate a step that was not taken. Its gradient is
 * instead that of the K iterations as they ran, reversed one at a time with the same
 * prefactored matrix, as DiffPD (Du et al. 2021) does for projective dynamics. On free
 * vertices, with vq = q v0 the damped velocity, y = x0 + h vq + h^2 (g + M^-1 f_ext) and
 * A = M + h^2 L (fixed vertices eliminated), iteration k solves
 *
 *   R(x^(k+1), x^k) = M (x^(k+1) - y) + h^2 sum_s k_s D_s^T (D_s x^(k+1) - r_s u_s(x^k)) = 0,
 *
 * D_s x = x_i - x_j (a fixed end at x0), u_s = D_s x / |D_s x| the local step's direction;
 * dR/dx^(k+1) = A. The step ends at x1 = x^K, v1 = (x^K - x0)/h, and x^0 is the start point
 * (ms_start: y, x0 + h vq or x0, 'lowest' the first of the lowest g). Reversed, from
 * xb^K = xb1 + vb1/h:
 *
 *   lam = A^-1 xb^(k+1)                                              (one solve, A symmetric)
 *   xb^k = h^2 sum_s k_s r_s / l_s D_s^T (I - u_s u_s^T) D_s lam     (the projection's Jacobian)
 *   k_s: -h^2 D_s lam . (D_s x^(k+1) - r_s u_s),   r_s: h^2 k_s D_s lam . u_s,
 *   m_i: -lam_i . (x^(k+1) - y)_i,   y: M lam,
 *
 * and a fixed end j of spring s gathers -h^2 k_s (D_s^T D_s lam)_j from x^(k+1) and xb^k_j
 * from x^k, both x0_j. y's adjoint yb (M sum_k lam, plus xb^0 where the start was y) gives
 * x0: yb, vq: h yb, f_ext: h^2 yb/m, m: -h^2 yb.f_ext/m^2. The iterates are recomputed from the
 * step's start, K + 1 arrays of n x 3 doubles (24 n (K + 1) bytes) held for one step at a time.
 * Plain iterations only, without contact: Chebyshev and Anderson acceleration and the contact
 * targets (and the settled start) are refused (ms_unroll_refusal).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* why an FMS step with these options and no tol is not unrolled here, or NULL */
const char *ms_unroll_refusal(const ms_model *m, const ms_opt *o) {
  if (o->acceleration != MS_ACCEL_NONE)
    return "a fixed iteration count is differentiated by unrolling plain local-global "
           "iterations; chebyshev and anderson acceleration are not unrolled: set "
           "acceleration='none', or give a tol";
  if (m->nplane + m->nsphere > 0)
    return "a fixed iteration count is differentiated by unrolling the iterations, whose "
           "contact targets are not: give a tol (the implicit function theorem's gradient)";
  return NULL;
}

/* start point candidate c into x: 0 y (ms_start's inertial, and settled without colliders),
 * 1 x0 + h vq (extrapolated), 2 x0 (previous) */
static void candidate(const ms_model *m, const ms_data *d, int c, const double *x0, double h,
                      double *x) {
  for (int k = 0; k < 3 * m->nv; k++) x[k] = c == 0 ? d->y[k] : x0[k] + (c == 1) * h * d->s[k];
}

/* the start point (ms_start) into x0s, as potential.c's choose_start picks it ('lowest': the
 * first candidate of the lowest g, tried in the order 0, 1, 2); returns which candidate */
static int start_point(const ms_model *m, ms_data *d, int start, const double *x0, double h,
                       double *x0s) {
  if (start != MS_START_LOWEST) {
    int c = start == MS_START_PREVIOUS ? 2 : start == MS_START_EXTRAPOLATED;
    candidate(m, d, c, x0, h, x0s);
    return c;
  }
  int pick = 0;
  double best = INFINITY;
  for (int c = 0; c < 3; c++) {
    candidate(m, d, c, x0, h, d->f);
    double g = ms_objective(m, d, d->f, d->y, h);
    if (c == 0 || g < best) best = g, pick = c, memcpy(x0s, d->f, sizeof(double) * 3 * m->nv);
  }
  return pick;
}

/* the right-hand sides of the global step at x (nv,3) into b: M y + h^2 sum_s k_s D_s^T
 * (r_s u_s) plus h^2 k_s x_j for a fixed end j */
static void global_rhs(const ms_model *m, const ms_data *d, const double *x, double h, double *b) {
  double h2 = h * h;
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) b[3 * i + t] = m->mass[i] * d->y[3 * i + t];
  for (int s = 0; s < m->ns; s++) {
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    double e[3], l = 0;
    for (int t = 0; t < 3; t++) e[t] = x[3 * i + t] - x[3 * j + t], l += e[t] * e[t];
    double c = h2 * m->k[s] * m->rest[s] / fmax(sqrt(l), MS_TINY);
    for (int t = 0; t < 3; t++) {
      b[3 * i + t] += c * e[t] + (m->fixed[j] ? h2 * m->k[s] * x[3 * j + t] : 0.0);
      b[3 * j + t] -= c * e[t] - (m->fixed[i] ? h2 * m->k[s] * x[3 * i + t] : 0.0);
    }
  }
}

/* the iterates x^0..x^K into xs ((K+1) nv 3): the start point (returned: which), then
 * x^(k+1) = A^-1 b(x^k), fixed vertices at x0 */
static ms_status iterates(const ms_model *m, ms_data *d, const ms_opt *o, const double *x0,
                          double h, int K, double *xs, int *start) {
  size_t n3 = 3 * (size_t)m->nv;
  *start = start_point(m, d, o->start, x0, h, xs);
  for (int k = 0; k < K; k++) {
    double *x = xs + k * n3, *xn = x + n3;
    global_rhs(m, d, x, h, d->g);
    ms_status st = ms_fms_apply_inverse(m, d, d->g, xn);
    if (st != MS_OK) return st;
    for (int i = 0; i < m->nv; i++)
      for (int t = 0; t < 3 && m->fixed[i]; t++) xn[3 * i + t] = x0[3 * i + t];
  }
  return MS_OK;
}

/* one iteration reversed: lam (= A^-1 xb^(k+1)) to the springs' and masses' adjoints and to
 * x^k's adjoint xb (overwritten; fixed ends' shares go to out->x) */
static void iteration_vjp(const ms_model *m, const ms_data *d, const double *x, const double *xn,
                          const double *lam, double h, double *xb, ms_adj_out *out) {
  double h2 = h * h;
  memset(xb, 0, sizeof(double) * 3 * m->nv);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++)
      out->mass[i] -= lam[3 * i + t] * (xn[3 * i + t] - d->y[3 * i + t]);
  for (int s = 0; s < m->ns; s++) {
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    double e[3], dl[3], dn[3], l = 0, ud = 0;
    for (int t = 0; t < 3; t++) {
      e[t] = x[3 * i + t] - x[3 * j + t], l += e[t] * e[t];
      dl[t] = lam[3 * i + t] - lam[3 * j + t];
      dn[t] = xn[3 * i + t] - xn[3 * j + t];
    }
    l = fmax(sqrt(l), MS_TINY);
    for (int t = 0; t < 3; t++) e[t] /= l, ud += e[t] * dl[t];
    double k = m->k[s], r = m->rest[s], c = h2 * k * r / l;
    for (int t = 0; t < 3; t++) {
      out->k[s] -= h2 * dl[t] * (dn[t] - r * e[t]);
      out->rest[s] += h2 * k * dl[t] * e[t];
      double p = c * (dl[t] - ud * e[t]), pull = h2 * k * dl[t];
      xb[3 * i + t] += p, xb[3 * j + t] -= p;
      if (m->fixed[i]) out->x[3 * i + t] -= pull;
      if (m->fixed[j]) out->x[3 * j + t] += pull;
    }
  }
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && m->fixed[i]; t++) out->x[3 * i + t] += xb[3 * i + t];
}

/* y's adjoint yb (free vertices) to x0, vq (into vqb), f_ext and the masses */
static void target_vjp(const ms_model *m, const ms_adj_step *s, const double *yb, double h,
                       double *vqb, ms_adj_out *out) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      int k = 3 * i + t;
      double mi = m->mass[i];
      out->x[k] += yb[k];
      vqb[k] += h * yb[k];
      out->fext[k] += h * h * yb[k] / mi;
      out->mass[i] -= h * h * yb[k] * s->fext[k] / (mi * mi);
    }
}

ms_status ms_fms_unroll_vjp(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            const ms_adj_step *s, const double *ax, const double *av, double *vqb,
                            ms_adj_out *out, ms_info *info) {
  int n3 = 3 * m->nv, K = m->nfree ? ms_opt_iterations(o) : 0, start = 0;
  double *buf = ms_alloc((size_t)(K + 3) * n3, sizeof(double));
  if (!buf) return MS_ENOMEM;
  double *xs = buf + 2 * (size_t)n3, *xb = buf, *yb = buf + n3, *lam = d->vb;

  // y, the factor of A and the iterates
  ms_data base = {.x = (double *)s->x, .vn = d->s, .fext = (double *)s->fext};
  ms_inertial_target(m, &base, h, d->y);
  d->fr.active = 0;
  ms_status st = ms_fms_prepare(m, d, h, o, info);
  if (st == MS_OK) st = iterates(m, d, o, s->x, h, K, xs, &start);

  // x^K's adjoint xb1 + vb1/h, x0's -vb1/h; then the iterations from the last
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      int k = 3 * i + t;
      xb[k] = ax[k] + av[k] / h;
      out->x[k] = -av[k] / h;
    }
  for (int k = K - 1; k >= 0 && st == MS_OK; k--) {
    if ((st = ms_fms_apply_inverse(m, d, xb, lam)) != MS_OK) break;
    for (int i = 0; i < n3; i++) yb[i] += m->mass[i / 3] * lam[i];
    iteration_vjp(m, d, xs + (size_t)k * n3, xs + (size_t)(k + 1) * n3, lam, h, xb, out);
  }

  // the start point's adjoint xb^0, then y's
  for (int i = 0; i < m->nv && st == MS_OK; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t, free = !m->fixed[i];
      yb[k] += free && start == 0 ? xb[k] : 0.0;
      out->x[k] += free && start ? xb[k] : 0.0;
      vqb[k] = free && start == 1 ? h * xb[k] : 0.0;
    }
  if (st == MS_OK) target_vjp(m, s, yb, h, vqb, out);
  free(buf);
  return st;
}
