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
static void start_point(const ms_model *m, const ms_data *d, double h, int start, double *x) {
  for (int k = 0; k < 3 * m->nv; k++)
    x[k] = start == MS_START_PREVIOUS       ? d->x[k]
           : start == MS_START_EXTRAPOLATED ? d->x[k] + h * d->vn[k]
                                            : d->y[k];
}

/* ---------------------------------------------------------------- implicit schemes */

/* BDF2's base point xb = 4/3 x_t - 1/3 x_{t-h} into d->s and base velocity
 * vb = 4/3 q v_t - 1/3 q^2 v_{t-h} into d->vb, q = exp(-damping h): each velocity carries the
 * drag of every step since it was reached, so with no force vb = q v_t and v decays as
 * exp(-damping t) whatever h; fixed vertices at x_t, at rest */
static void bdf2_base(const ms_model *m, ms_data *d, double h) {
  double decay = exp(-2 * m->damping * h);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      d->s[k] = m->fixed[i] ? d->x[k] : (4 * d->x[k] - d->xp[k]) / 3;
      d->vb[k] = m->fixed[i] ? 0.0 : (4 * d->vn[k] - decay * d->vp[k]) / 3;
    }
}

/* the target y = xb + hs vb + hs^2 a of `method`'s step h into d->y, the start point (ms_start,
 * taken from xb and vb) into d->xn, and how v and x move (d->kick) for the friction after the
 * step; d->vn holds the damped velocity (ms_step sets it up).
 * Implicit midpoint minimises over z = (x_t + x_{t+h})/2 = x_t + (h/2) v_t + (h/2)^2 a(z);
 * BDF2 x_{t+h} = xb + (2h/3) v_{t+h}, v_{t+h} = vb + (2h/3) a(x_{t+h}) needs the previous state
 * one step h back, and is implicit Euler without it */
ms_scheme ms_scheme_begin(const ms_model *m, ms_data *d, ms_method method, double h, int start) {
  ms_scheme sc = {.method = method, .h = h, .hs = h, .xb = d->x};
  const double *vb = d->vn;
  if (method == MS_IMPLICIT_MIDPOINT) {
    sc.hs = h / 2;
    d->kick.hx = h / 2; /* x = x_t + h (v_t + v)/2 */
  }
  if (method == MS_BDF2 && d->hp == h) {
    bdf2_base(m, d, h);
    sc.hs = 2 * h / 3, sc.xb = d->s, vb = d->vb;
    d->kick = (ms_kick){.v0 = d->vb, .hv = sc.hs, .hx = sc.hs}; /* v = vb + hs a, x = xb + hs v */
  }
  ms_data base = {.x = (double *)sc.xb, .vn = (double *)vb, .fext = d->fext, .y = d->y};
  ms_inertial_target(m, &base, sc.hs, d->y);
  start_point(m, &base, sc.hs, start, d->xn);
  return sc;
}

/* the step's positions and velocities from g's minimiser in d->xn: implicit midpoint
 * x = 2 z - x_t, v = 2 (x - x_t)/h - v_t = 4 (z - x_t)/h - v_t; implicit Euler and BDF2
 * v = (x - xb)/hs */
void ms_scheme_end(const ms_model *m, ms_data *d, const ms_scheme *sc) {
  for (int k = 0; k < 3 * m->nv; k++) {
    if (sc->method == MS_IMPLICIT_MIDPOINT) {
      d->vn[k] = 4 * (d->xn[k] - d->x[k]) / sc->h - d->vn[k];
      d->xn[k] = 2 * d->xn[k] - d->x[k];
    } else {
      d->vn[k] = (d->xn[k] - sc->xb[k]) / sc->hs;
    }
  }
}

/* ---------------------------------------------------------------- the potential */

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
