/* barrier.c: the energy of one self-contact pair
 *
 * A pair of primitives (point-triangle or edge-edge) at distance d stores, for the thickness
 * dhat and stiffness kappa,
 *
 *   b(d) = kappa/2 (dhat - d)^2                                   tau <= d < dhat,
 *   b(d) = kappa tau^2 (1/2 - ln(d / tau))                         0 < d < tau,      tau = dhat/2,
 *
 * and nothing beyond dhat: a quadratic penalty where contact begins (as in Vertex Block
 * Descent, Chen et al. 2024) and a log barrier close to zero distance (as in IPC, Li et al.
 * 2020) that grows without bound, so no finite energy brings two primitives together. The two
 * meet at tau with equal value, slope -kappa tau and curvature kappa (C2 there); at dhat the
 * energy and its slope vanish (C1, as every quadratic penalty). With s = d^2 from distance.c,
 *
 *   grad b = b'(d) grad s / (2d),   hess b = b''(d) grad d grad d^T + b'(d) hess d,
 *   hess d = hess s / (2d) - grad s grad s^T / (4 d^3).
 *
 * b' <= 0, so the second term may be indefinite; the spd option decides what the solvers
 * get: 'clamp' keeps b'' grad d grad d^T (Gauss-Newton), 'project' clamps the eigenvalues of
 * the 12x12 Hessian at zero, 'shift' and 'none' the exact Hessian.
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* below this fraction of dhat a distance counts as this fraction (keeps b finite) */
#define MS_BARRIER_FLOOR 1e-9
/* a pair whose bounding boxes are more than (1 + this) dhat^2 apart (squared) has no energy,
 * far beyond the rounding of its squared distance: its exact distance is not computed */
#define MS_BARRIER_BOXES 1e-6

/* b(d) [J], its slope e1 [N] and curvature e2 [N/m] */
double ms_barrier(double d, double dhat, double kappa, double *e1, double *e2) {
  double tau = 0.5 * dhat;
  d = fmax(d, MS_BARRIER_FLOOR * dhat);
  if (d >= dhat) return *e1 = *e2 = 0.0;
  if (d >= tau) {
    *e1 = -kappa * (dhat - d), *e2 = kappa;
    return 0.5 * kappa * (dhat - d) * (dhat - d);
  }
  double t2 = kappa * tau * tau;
  *e1 = -t2 / d, *e2 = t2 / (d * d);
  return t2 * (0.5 - log(d / tau));
}

/* hess = b'' gd gd^T, plus b' hess d unless clamped (spd 'clamp') */
static void pair_hessian(double d, double e1, double e2, const double gs[12], double hs[144],
                         ms_spd spd) {
  double gd[12];
  for (int a = 0; a < 12; a++) gd[a] = gs[a] / (2 * d);
  for (int a = 0; a < 12; a++)
    for (int b = 0; b < 12; b++) {
      double exact = hs[12 * a + b] / (2 * d) - gd[a] * gd[b] / d;
      hs[12 * a + b] = e2 * gd[a] * gd[b] + (spd == MS_SPD_CLAMP ? 0.0 : e1 * exact);
    }
  if (spd == MS_SPD_PROJECT) ms_sym_clamp(hs, 12);
}

/* the energy [J] of a pair of kind (ms_pair_kind) at its four points q; its gradient (12) and
 * Hessian (12x12, treated by spd) with respect to q where given */
double ms_pair_energy(const ms_model *m, int kind, const double q[12], ms_spd spd, double grad[12],
                      double hess[144]) {
  double gs[12], hs[144], e1, e2, dhat = m->sc_thickness;
  if (grad) memset(grad, 0, sizeof(gs));
  if (hess) memset(hess, 0, sizeof(hs));
  // most pairs (found within twice the thickness) lie beyond it: their boxes say so
  if (ms_pair_box_dist2(kind, q) > (1 + MS_BARRIER_BOXES) * dhat * dhat) return 0.0;
  double s = ms_pair_dist2(kind, q, NULL, NULL);
  if (!(s < dhat * dhat)) return 0.0;

  // within the thickness: the derivatives of s, then the chain rule of the file comment
  ms_pair_dist2(kind, q, gs, hess ? hs : NULL);
  double d = fmax(sqrt(s), MS_BARRIER_FLOOR * dhat);
  double e = ms_barrier(d, dhat, m->sc_stiffness, &e1, &e2);
  for (int a = 0; grad && a < 12; a++) grad[a] = e1 * gs[a] / (2 * d);
  if (hess) {
    pair_hessian(d, e1, e2, gs, hs, spd);
    memcpy(hess, hs, sizeof(hs));
  }
  return e;
}
