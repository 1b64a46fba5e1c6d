/* dense.c: small dense solves of the iterative methods: a 3x3 Newton step (VBD's vertex blocks,
 * the start point's contact vertices) and the c x c least squares of Anderson mixing */
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
