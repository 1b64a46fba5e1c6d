/* numerics.c: the numerics the solvers share, each written once
 *
 * small dense solves:
 *   ms_spd3_step      dx = -H^-1 grad for a 3x3 H by its adjugate, 0 when det H is tiny
 *   ms_spd3_inverse   D^-1 = adj(D) / det D, D positive definite by its leading minors
 *   ms_spd_solve      (a + eps I) z = b, c x c, by dense Cholesky a = L L^T
 *   ms_sym_clamp      a = V max(Lambda, 0) V^T by cyclic Jacobi rotations (Golub and Van Loan 8.5)
 * iterations:
 *   ms_chebyshev_omega  omega_n = 1 (n <= delay), 2/(2 - rho^2) (n = delay + 1),
 *                       4/(4 - rho^2 omega_(n-1)) after (Golub and Varga 1961; Wang 2015)
 *   ms_backtrack      the first alpha = 1, 1/2, 1/4, ... with the Armijo decrease
 *                     g(x + alpha p) <= g(x) + c alpha grad g(x).p (Nocedal and Wright, Alg. 3.1);
 *                     inline in solvers.h, so that a vertex's step (vertex.c) calls its trial
 *                     directly
 *   ms_descend        the loop of every solver of g: history entry 0 at the start point, then
 *                     iterations until |grad g| < tol or the cap, with interrupt polls
 * linear systems A z = b (block-Jacobi preconditioner D^-1, D the 3x3 diagonal blocks of A):
 *   ms_linear_iterate  conjugate gradients (Hestenes and Stiefel 1952; Saad, Alg. 9.1):
 *                        alpha = r.D^-1 r / p.A p, z += alpha p, r' = r - alpha A p,
 *                        p = D^-1 r' + (r'.D^-1 r' / r.D^-1 r) p;
 *                      or block-Jacobi iteration z += D^-1 (b - A z)
 *   ms_linear_record   history: |b - A z| / |b| and the model z.A z / 2 - b.z = -z.(b + r) / 2
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* H counts as singular when det H <= this * (trace H / 3)^3 (condition ~1e12) */
#define MS_SINGULAR3 1e-24

/* dx = -H^-1 grad for the symmetric positive semidefinite H; 0 when H is nearly singular */
int ms_spd3_step(const double H[9], const double grad[3], double dx[3]) {
  double a00 = H[4] * H[8] - H[5] * H[5], a01 = H[2] * H[5] - H[1] * H[8],
         a02 = H[1] * H[5] - H[2] * H[4], a11 = H[0] * H[8] - H[2] * H[2],
         a12 = H[1] * H[2] - H[0] * H[5], a22 = H[0] * H[4] - H[1] * H[1];
  double det = H[0] * a00 + H[1] * a01 + H[2] * a02, tr = (H[0] + H[4] + H[8]) / 3;
  if (!(det > MS_SINGULAR3 * tr * tr * tr) || !isfinite(det)) return 0;
  dx[0] = -(a00 * grad[0] + a01 * grad[1] + a02 * grad[2]) / det;
  dx[1] = -(a01 * grad[0] + a11 * grad[1] + a12 * grad[2]) / det;
  dx[2] = -(a02 * grad[0] + a12 * grad[1] + a22 * grad[2]) / det;
  return 1;
}

/* inv = D^-1 for the symmetric 3x3 block D; -1, or the failing component (0..2) if D is not
 * positive definite (leading minors) */
int ms_spd3_inverse(const double *D, double *inv) {
  double c00 = D[4] * D[8] - D[5] * D[7], c01 = D[5] * D[6] - D[3] * D[8],
         c02 = D[3] * D[7] - D[4] * D[6];
  double minor2 = D[0] * D[4] - D[1] * D[3], det = D[0] * c00 + D[1] * c01 + D[2] * c02;
  if (!(D[0] > 0)) return 0;
  if (!(minor2 > 0)) return 1;
  if (!(det > 0)) return 2;
  double adj[9] = {c00, D[2] * D[7] - D[1] * D[8], D[1] * D[5] - D[2] * D[4],
                   c01, D[0] * D[8] - D[2] * D[6], D[2] * D[3] - D[0] * D[5],
                   c02, D[1] * D[6] - D[0] * D[7], minor2};
  for (int t = 0; t < 9; t++) inv[t] = adj[t] / det;
  return -1;
}

/* solve the c x c system (a + eps I) z = b by dense Cholesky, a row-major and destroyed,
 * z into b; eps = 1e-10 max diag regularises near-dependent columns. 0 when it fails */
int ms_spd_solve(double *a, double *b, int c) {
  double top = 0;
  for (int i = 0; i < c; i++) top = fmax(top, a[i * c + i]);
  if (!(top > 0) || !isfinite(top)) return 0;
  for (int i = 0; i < c; i++) a[i * c + i] += 1e-10 * top;
  for (int j = 0; j < c; j++) {
    double p = a[j * c + j];
    for (int q = 0; q < j; q++) p -= a[j * c + q] * a[j * c + q];
    if (!(p > 0)) return 0;
    a[j * c + j] = sqrt(p);
    for (int i = j + 1; i < c; i++) {
      double s = a[i * c + j];
      for (int q = 0; q < j; q++) s -= a[i * c + q] * a[j * c + q];
      a[i * c + j] = s / a[j * c + j];
    }
  }
  for (int i = 0; i < c; i++) {
    for (int q = 0; q < i; q++) b[i] -= a[i * c + q] * b[q];
    b[i] /= a[i * c + i];
  }
  for (int i = c - 1; i >= 0; i--) {
    for (int q = i + 1; q < c; q++) b[i] -= a[q * c + i] * b[q];
    b[i] /= a[i * c + i];
  }
  return 1;
}

/* one Jacobi rotation zeroing a[p][q] of the symmetric n x n a, accumulated into v */
static void jacobi_rotate(double *a, double *v, int n, int p, int q) {
  double theta = 0.5 * (a[q * n + q] - a[p * n + p]) / a[p * n + q];
  double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
  double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
  for (int k = 0; k < n; k++) {
    double akp = a[k * n + p], akq = a[k * n + q];
    a[k * n + p] = c * akp - s * akq, a[k * n + q] = s * akp + c * akq;
  }
  for (int k = 0; k < n; k++) {
    double apk = a[p * n + k], aqk = a[q * n + k];
    a[p * n + k] = c * apk - s * aqk, a[q * n + k] = s * apk + c * aqk;
  }
  for (int k = 0; k < n; k++) {
    double vkp = v[k * n + p], vkq = v[k * n + q];
    v[k * n + p] = c * vkp - s * vkq, v[k * n + q] = s * vkp + c * vkq;
  }
}

/* the symmetric n x n a (n <= 12, row-major) replaced by V max(Lambda, 0) V^T, its
 * eigenvalues clamped at zero: cyclic Jacobi sweeps until the off-diagonal is negligible */
void ms_sym_clamp(double *a, int n) {
  double v[144] = {0}, off = 1;
  for (int i = 0; i < n; i++) v[i * n + i] = 1.0;
  for (int sweep = 0; sweep < 50 && off > 0; sweep++) {
    double diag = 0;
    off = 0;
    for (int i = 0; i < n; i++) diag += a[i * n + i] * a[i * n + i];
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
    if (!(off > 1e-30 * diag)) break;
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++)
        if (a[p * n + q] != 0) jacobi_rotate(a, v, n, p, q);
  }
  // reassemble with the negative eigenvalues dropped
  double lam[12];
  for (int k = 0; k < n; k++) lam[k] = fmax(a[k * n + k], 0.0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double sum = 0;
      for (int k = 0; k < n; k++) sum += v[i * n + k] * lam[k] * v[j * n + k];
      a[i * n + j] = sum;
    }
}

/* ---------------------------------------------------------------- iterations */

/* the Chebyshev weight of iteration n >= 1 after omega_(n-1) = omega, plain up to delay */
double ms_chebyshev_omega(int n, int delay, double rho, double omega) {
  if (n <= delay) return 1.0;
  return n == delay + 1 ? 2.0 / (2.0 - rho * rho) : 4.0 / (4.0 - rho * rho * omega);
}

/* the iterations of a solver of g from the start point's |grad g| = res and g = obj: step(ctx,
 * k, &res, &obj) runs iteration k, leaving res and obj at the new iterate, until the cap or
 * res < o->tol (o->tol > 0), or until step returns MS_STOPPED (no further progress); fills
 * info's iters, nhist and converged */
ms_status ms_descend(ms_data *d, int cap, const ms_opt *o, double res, double obj,
                     ms_iteration_fn step, void *ctx, ms_info *info) {
  int it = 0;
  ms_hist(d, 0, res, obj);
  while (it < cap && !(o->tol > 0 && res < o->tol)) {
    if (ms_interrupted(d)) return MS_EINTERRUPT;
    ms_status st = step(ctx, it + 1, &res, &obj);
    if (st == MS_STOPPED) break;
    if (st != MS_OK) return st;
    ms_hist(d, ++it, res, obj);
  }
  info->iters = it;
  info->nhist = it + 1;
  info->converged = o->tol > 0 && res < o->tol;
  return MS_OK;
}

/* ---------------------------------------------------------------- linear systems */

/* z = D^-1 r blockwise */
static void precondition(const ms_linear *a, const double *r, double *z) {
  for (int i = 0; i < a->nv; i++) {
    const double *D = a->dinv + 9 * i, *ri = r + 3 * i;
    for (int t = 0; t < 3; t++)
      z[3 * i + t] = D[3 * t] * ri[0] + D[3 * t + 1] * ri[1] + D[3 * t + 2] * ri[2];
  }
}

/* history entry i: relative residual |r| / |b| (0 when b = 0), returned, and the quadratic
 * model q(z) = z.A z / 2 - b.z = -z.(b + r) / 2 [J] */
double ms_linear_record(ms_data *d, int n3, int i, const double *b, const double *z,
                        const double *r, double bnorm) {
  double q = -0.5 * (ms_dot(n3, z, b) + ms_dot(n3, z, r));
  double rel = bnorm > 0 ? sqrt(ms_dot(n3, r, r)) / bnorm : 0.0;
  ms_hist(d, i, rel, q);
  return rel;
}

/* solve A z = b (z starts at 0) by block-Jacobi-preconditioned CG (cg) or block-Jacobi
 * iteration, stopping after cap iterations or at relative residual tol (tol > 0); fills info */
ms_status ms_linear_iterate(const ms_linear *a, ms_data *d, int cg, int cap, double tol,
                            const double *b, double *z, ms_info *info) {
  int n3 = 3 * a->nv, it = 0;
  double bnorm = sqrt(ms_dot(n3, b, b)), *r = a->r, *p = a->p, *q = a->q;
  memset(z, 0, sizeof(double) * n3);
  memcpy(r, b, sizeof(double) * n3);
  precondition(a, r, p);
  double rz = ms_dot(n3, r, p), rel = bnorm > 0 ? 1.0 : 0.0;
  ms_hist(d, 0, rel, 0.0);
  // an exact solution (r = 0, rel = 0) ends the iterations whatever tol: CG's next direction
  // would be zero, its curvature p.A p too, which is not an indefinite A
  while (it < cap && !(tol > 0 && rel <= tol) && rel > 0 && isfinite(rel)) {
    if (ms_interrupted(d)) return MS_EINTERRUPT;
    if (cg) {
      // conjugate gradient step along p; p.A p <= 0 proves A indefinite
      a->apply(a->ctx, p, q);
      double pq = ms_dot(n3, p, q);
      if (!(pq > 0)) return MS_ENOTPD;
      double alpha = rz / pq;
      for (int k = 0; k < n3; k++) z[k] += alpha * p[k], r[k] -= alpha * q[k];
    } else {
      // Jacobi: z += D^-1 (b - A z)
      precondition(a, r, q);
      for (int k = 0; k < n3; k++) z[k] += q[k];
      a->apply(a->ctx, z, q);
      for (int k = 0; k < n3; k++) r[k] = b[k] - q[k];
    }
    rel = ms_linear_record(d, n3, ++it, b, z, r, bnorm);
    if (cg) {
      precondition(a, r, q);
      double rz1 = ms_dot(n3, r, q);
      for (int k = 0; k < n3; k++) p[k] = q[k] + rz1 / rz * p[k];
      rz = rz1;
    }
  }
  info->iters = it;
  info->nhist = it + 1;
  info->converged = rel == 0 || (tol > 0 && rel <= tol);
  return MS_OK;
}
