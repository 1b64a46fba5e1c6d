/* potential.c: the incremental potential that implicit Euler, FMS and friends minimise
 *
 *   g(x) = 1/(2 h^2) (x - y)^T M (x - y) + E(x),   y = x_t + h v + h^2 M^-1 f_ext,
 *
 * over free vertices (fixed ones stay at x_t). E is the spring energy plus the contact penalty
 * energy (zero out of contact); gravity and the external forces f_ext enter via y.
 */
#include <math.h>

#include "msim.h"

/* y = x + h vn + h^2 (g + f_ext / m) for free vertices, y = x for fixed ones (vn: damped
 * velocity) */
void ms_inertial_target(const ms_model *m, const ms_data *d, double h, double *y) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      y[k] = m->fixed[i] ? d->x[k] : d->x[k] + h * d->vn[k] + h * h * ms_accel(m, d, i, t);
    }
}

/* the iterations' initial guess x (ms_start) once d->y holds y; fixed vertices sit at x_t in
 * every choice (y = x_t and vn = 0 there) */
void ms_start_point(const ms_model *m, const ms_data *d, double h, int start, double *x) {
  for (int k = 0; k < 3 * m->nv; k++)
    x[k] = start == MS_START_PREVIOUS       ? d->x[k]
           : start == MS_START_EXTRAPOLATED ? d->x[k] + h * d->vn[k]
                                            : d->y[k];
}

/* g(x) [J] */
double ms_objective(const ms_model *m, const double *x, const double *y, double h) {
  double e = 0;
  for (int i = 0; i < m->nv; i++) {
    if (m->fixed[i]) continue;
    const double *a = x + 3 * i, *b = y + 3 * i;
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    e += 0.5 * m->mass[i] * (dx * dx + dy * dy + dz * dz);
  }
  return e / (h * h) + ms_spring_energy(m, x) + ms_contact_forces(m, x, NULL);
}

/* grad = M (x - y) / h^2 - f_spring(x) - f_contact(x) [N], zero on fixed vertices, and
 * *obj = g(x) [J] from the same pass over the springs; returns |grad| */
double ms_objective_grad(const ms_model *m, ms_data *d, const double *x, const double *y, double h,
                         double *grad, double *obj) {
  double spring = ms_spring_forces(m, d, x, grad, 1);
  return ms_objective_finish(m, x, y, h, grad, spring, obj);
}

/* ms_objective_grad after its pass over the springs: grad holds the spring forces at x and
 * spring their energy; adds contact and inertia */
double ms_objective_finish(const ms_model *m, const double *x, const double *y, double h,
                           double *grad, double spring, double *obj) {
  double e = spring + ms_contact_forces(m, x, grad), inertia = 0, norm = 0;
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      double dx = m->fixed[i] ? 0.0 : x[k] - y[k];
      inertia += m->mass[i] * dx * dx;
      grad[k] = m->fixed[i] ? 0.0 : m->mass[i] * dx / (h * h) - grad[k];
      norm += grad[k] * grad[k];
    }
  *obj = 0.5 * inertia / (h * h) + e;
  return sqrt(norm);
}
