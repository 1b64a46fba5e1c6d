/* stability.c: how large a step each method takes before a linear mode grows.
 *
 * omega_max^2, the largest eigenvalue of M^-1 K over the free vertices, is at most the
 * largest Gershgorin row sum of M^-1 L: a spring's Hessian k uu^T + k (1 - r/l)(I - uu^T) has
 * eigenvalues k and k (1 - r/l) < k, so K is at most the spring Laplacian L (times I3), whose
 * row i over the free vertices holds sum_s k_s on the diagonal and k_s for each spring to a
 * free neighbour. A contact adds k_c to the diagonal, counted for every vertex when the model
 * has colliders. Exact for one free vertex on a spring to a fixed one: sqrt(k/m).
 *
 * A method whose stability region meets the imaginary axis at |z| = c (ms_method_def.omega_h:
 * 2 for symplectic Euler and velocity Verlet, 2 sqrt 2 for RK4) is stable below c / omega_max.
 * Explicit Euler maps a mode (x, v) to (x + h d v, d v - h omega^2 x), d = exp(-c h) the ether
 * damping of rate c, a map of determinant d (1 + (omega h)^2): stable while
 * exp(-c h) (1 + (omega h)^2) <= 1, up to the first root of phi(u) = log(1 + u^2) - (c/omega) u
 * in u = omega h (about c / omega^2 for c << omega; 0 without damping).
 */
#include <math.h>
#include <stdlib.h>

#include "engine.h"

/* the Gershgorin bound on the largest angular frequency [rad/s]; 0 when nothing is stiff */
double ms_omega_max(const ms_model *m) {
  double *row = ms_alloc(m->nv, sizeof(double)), worst = 0;
  if (!row) return NAN;
  for (int s = 0; s < m->ns; s++)
    for (int end = 0; end < 2; end++) {
      int i = m->edge[2 * s + end], j = m->edge[2 * s + 1 - end];
      row[i] += m->k[s] * (m->fixed[j] ? 1.0 : 2.0);
    }
  double contact = m->nplane || m->nsphere ? m->kc : 0.0;
  for (int i = 0; i < m->nv; i++)
    if (!m->fixed[i] && (row[i] + contact) / m->mass[i] > worst)
      worst = (row[i] + contact) / m->mass[i];
  free(row);
  return sqrt(worst);
}

/* explicit Euler's limit omega h = u: the first root of phi above its minimum, where phi
 * falls from 0 and rises to its maximum at u = (1 -+ sqrt(1 - r^2)) / r, r = c / omega */
static double euler_root(double r) {
  if (r == 0) return 0.0;
  if (r >= 1) return INFINITY; /* phi falls for every u: damping wins at every step */
  double lo = (1 - sqrt(1 - r * r)) / r, hi = (1 + sqrt(1 - r * r)) / r;
  if (log1p(hi * hi) - r * hi <= 0) return INFINITY;
  for (int k = 0; k < 200; k++) { /* bisection to the last bit */
    double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    if (log1p(mid * mid) - r * mid <= 0)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* the largest step [s] at which method keeps every linear mode of m bounded, given m's
 * omega_max (ms_omega_max); INFINITY when it is stable at every step or nothing is stiff */
double ms_stable_step(const ms_model *m, ms_method method, double omega) {
  const ms_method_def *md = &ms_methods[method];
  if (isinf(md->omega_h)) return INFINITY;
  if (!(omega > 0)) return omega == 0 ? INFINITY : omega;
  if (md->flags & MS_UNDAMPED_UNSTABLE) return euler_root(m->damping / omega) / omega;
  return md->omega_h / omega;
}
