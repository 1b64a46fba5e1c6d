/* dense.c: small dense linear algebra: a 3x3 Newton step (VBD's vertex blocks,
 * the start point's contact vertices), the c x c least squares of Anderson mixing and the
 * eigenvalue clamp of a self-contact pair's Hessian */
#include <math.h>

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
