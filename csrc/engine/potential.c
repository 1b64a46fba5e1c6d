/* potential.c: the incremental potential that implicit Euler, FMS and friends minimise
 *
 *   g(x) = 1/(2 h^2) (x - y)^T M (x - y) + E(x) + D(x),   y = x_t + h v + h^2 M^-1 f_ext,
 *
 * over free vertices (fixed ones stay at x_t). E is the spring energy plus the contact penalty
 * energy (zero out of contact), D the step's lagged friction (friction.c); gravity and the
 * external forces f_ext enter via y.
 *
 * Where the iterations start matters when they stop early. With gravity written as a
 * potential, g(x) = |v - v_t|_M^2 / 2 + E_all(x) up to a constant, v = (x - x_t)/h, so
 * g(x_t) is the total energy at the step's start and the step ends with
 *
 *   E_total(t + h) = g(x) + v_t.M v - |v_t|_M^2 / 2.
 *
 * A solver that never raises g (FMS, L-BFGS, VBD, and Newton with its line search) ends with
 * g(x) <= g(start); from a start whose g is at most g(x_t), a body at rest (v_t = 0) can
 * never gain energy, however few iterations run. The inertial target y minimises the inertia
 * term, but on a body resting on a collider it lies h^2 |g| inside it (the whole step's fall),
 * and the penalty energy there, kc/2 (h^2 g)^2 per vertex, is a budget that an unconverged
 * solver turns into spring stretch step after step; at an impact it lies deep inside. And
 * FMS, whose matrix holds a contact vertex with the stiffness h^2 kc in every direction,
 * keeps it within microns of where it starts, so its start must already slide or stick as
 * friction says. So the iterations start, by default, wherever g is lowest of three
 * ('lowest'): y with every vertex in contact settled against its collider and its friction
 * (each moved to the minimiser of its own share of g, its neighbours held at y: one
 * block-Jacobi step of g over the contact vertices, 'settled'), x_t + h v, and x_t. That is
 * the settled y in free flight and while sliding, x_t at rest and at an impact.
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* settle: Newton steps on one vertex at most, and the relative move that ends them */
#define MS_SETTLE_STEPS 50
#define MS_SETTLED 1e-15

/* y = x + h vn + h^2 (g + f_ext / m) for free vertices, y = x for fixed ones (vn: damped
 * velocity) */
void ms_inertial_target(const ms_model *m, const ms_data *d, double h, double *y) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      y[k] = m->fixed[i] ? d->x[k] : d->x[k] + h * d->vn[k] + h * h * ms_accel(m, d, i, t);
    }
}

/* x_i moved from where it is to the minimiser of its share of g, its neighbours held
 * (vertex.c): Newton steps until one no longer moves it (relative MS_SETTLED) or
 * MS_SETTLE_STEPS have run */
static void settle(const ms_vertex *c, int i) {
  for (int it = 0; it < MS_SETTLE_STEPS; it++) {
    const double *p = c->x + 3 * i;
    double scale = 1 + fabs(p[0]) + fabs(p[1]) + fabs(p[2]);
    if (!(ms_vertex_step(c, i) > MS_SETTLED * scale)) return;
  }
}

/* one of the iterations' initial guesses (ms_start) into x, from base point base->x and
 * velocity base->vn once d->y holds y: 'inertial' y; 'settled' y with each vertex that carries
 * friction or that the step carries into a collider moved to the minimiser of its share of g,
 * its neighbours held at y, in vertex order (settle); 'previous' x_t; 'extrapolated'
 * x_t + h v. Fixed vertices sit at x_t in every choice (y = x_t and vn = 0 there) */
static void start_point(const ms_model *m, const ms_data *d, const ms_data *base, double h,
                        int start, double *x) {
  ms_vertex c = {.m = m, .d = d, .x = x, .y = d->y, .hs2 = 1 / (h * h)};
  for (int k = 0; k < 3 * m->nv; k++)
    x[k] = start == MS_START_PREVIOUS       ? base->x[k]
           : start == MS_START_EXTRAPOLATED ? base->x[k] + h * base->vn[k]
                                            : d->y[k];
  for (int i = 0; start == MS_START_SETTLED && m->kc > 0 && i < m->nv; i++)
    if ((d->fr.active && d->fr.w[i] > 0) ||
        (!m->fixed[i] && ms_contact_path(m, base->x + 3 * i, x + 3 * i)))
      settle(&c, i);
}

/* the initial guess into d->xn (ms_start); 'lowest' tries its three in d->f and keeps the
 * first of the lowest g */
static void choose_start(const ms_model *m, ms_data *d, const ms_data *base, double h, int start) {
  if (start != MS_START_LOWEST) return start_point(m, d, base, h, start, d->xn);
  static const int tried[] = {MS_START_SETTLED, MS_START_EXTRAPOLATED, MS_START_PREVIOUS};
  double best = INFINITY;
  for (int c = 0; c < 3; c++) {
    start_point(m, d, base, h, tried[c], d->f);
    double g = ms_objective(m, d, d->f, d->y, h);
    if (c == 0 || g < best) best = g, memcpy(d->xn, d->f, sizeof(double) * 3 * m->nv);
  }
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

/* the target y = xb + hs vb + hs^2 a of `method`'s step h into d->y, the friction lagged from
 * x_t with slip measured from xb (d->fr), and the start point (ms_start, taken from xb and vb)
 * into d->xn; d->vn holds the damped velocity (ms_step sets it up).
 * Implicit midpoint minimises over z = (x_t + x_{t+h})/2 = x_t + (h/2) v_t + (h/2)^2 a(z);
 * BDF2 x_{t+h} = xb + (2h/3) v_{t+h}, v_{t+h} = vb + (2h/3) a(x_{t+h}) needs the previous state
 * one step h back, and is implicit Euler without it */
ms_scheme ms_scheme_begin(const ms_model *m, ms_data *d, ms_method method, double h, int start) {
  ms_scheme sc = {.method = method, .h = h, .hs = h, .xb = d->x};
  const double *vb = d->vn;
  if (method == MS_IMPLICIT_MIDPOINT) sc.hs = h / 2;
  if (method == MS_BDF2 && d->hp == h) {
    bdf2_base(m, d, h);
    sc.hs = 2 * h / 3, sc.xb = d->s, vb = d->vb;
  }
  ms_data base = {.x = (double *)sc.xb, .vn = (double *)vb, .fext = d->fext, .y = d->y};
  ms_inertial_target(m, &base, sc.hs, d->y);
  ms_friction_begin(m, d, sc.xb, sc.hs);
  ms_self_friction_lag(m, d, sc.xb, sc.hs);
  choose_start(m, d, &base, sc.hs, start);

  // the iterates start within self-contact's bounds (the midpoint z moves the end twice as far)
  if (ms_self_active(m, d)) d->sc->reach = method == MS_IMPLICIT_MIDPOINT ? 2.0 : 1.0;
  ms_self_shrink(m, d, d->xn);
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
double ms_objective(const ms_model *m, const ms_data *d, const double *x, const double *y,
                    double h) {
  double e = 0;
  for (int i = 0; i < m->nv; i++) {
    if (m->fixed[i]) continue;
    const double *a = x + 3 * i, *b = y + 3 * i;
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    e += 0.5 * m->mass[i] * (dx * dx + dy * dy + dz * dz);
  }
  return e / (h * h) + ms_spring_energy(m, x) + ms_contact_forces(m, x, NULL) +
         ms_friction_forces(m, d, x, NULL) + ms_self_forces(m, d, x, NULL, 1.0);
}

/* grad = M (x - y) / h^2 - f_spring(x) - f_contact(x) - f_friction(x) [N], zero on fixed
 * vertices, and *obj = g(x) [J] from the same pass over the springs; returns |grad| */
double ms_objective_grad(const ms_model *m, ms_data *d, const double *x, const double *y, double h,
                         double *grad, double *obj) {
  double spring = ms_spring_forces(m, d, x, grad, 1);
  return ms_objective_finish(m, d, x, y, h, grad, spring, obj);
}

/* ms_objective_grad after its pass over the springs: grad holds the spring forces at x and
 * spring their energy; adds contact, friction and inertia */
double ms_objective_finish(const ms_model *m, const ms_data *d, const double *x, const double *y,
                           double h, double *grad, double spring, double *obj) {
  double e = spring + ms_contact_forces(m, x, grad) + ms_friction_forces(m, d, x, grad) +
             ms_self_forces(m, d, x, grad, 1.0);
  double inertia = 0, norm = 0;
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
