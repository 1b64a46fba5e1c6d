/* friction.c: Coulomb friction, in the form each family of methods takes
 *
 * Friction is passive: it only ever opposes the slip, so it removes energy and never adds
 * any. Each form below keeps that by construction, and each takes its budget from the normal
 * force the contact carries, never from how far an unconverged iterate sank.
 *
 * Implicit schemes (implicit Euler, implicit midpoint, BDF2, with every solver of g, and fms):
 * a lagged friction potential in g, as in IPC (Li et al. 2020, "Incremental Potential
 * Contact", sec. 5). At the step's start x_t, free vertex i in contact carries the penalty's
 * normal force lambda_i = |kc sum phi n| along n_i (contact.c); with w_i = mu lambda_i,
 * P_i = I - n_i n_i^T and the slip u_i = P_i (x_i - a_i) from the scheme's base point a_i,
 *
 *   D(x) = sum_i w_i F(|u_i|),  F(y) = y^2/eps - y^3/(3 eps^2) (y < eps),  y - eps/3 (y >= eps),
 *
 * whose force -w_i F'(|u_i|) u_i/|u_i| has Coulomb's magnitude mu lambda_i once the slip
 * exceeds eps_i and below it grows from zero as a tangential spring of stiffness
 * w_i F''(0) = 2 w_i / eps_i (IPC's C1 mollifier f0, shifted so that F(0) = 0). A vertex held
 * by static friction creeps by up to eps_i per step, as the potential is anchored afresh at
 * every step's start. IPC takes eps = eps_v h, a creep speed eps_v (1 mm/s here); where the
 * step is large, eps_i = 2 w_i / kc is smaller still, 2 mu phi_i (phi_i the resting depth),
 * and makes that spring the contact's own stiffness kc: the penalty's compliance 1/kc across
 * the surface as along it, which FMS's matrix already carries (fms.c). So
 *
 *   eps_i = min(2 w_i / kc, eps_v h),  a stick stiffness 2 w_i / eps_i = max(kc, 2 w_i/(eps_v h)),
 *
 * the creep at most min(2 mu phi_i, eps_v h) per step. Lagged
 * (lambda, n and the contact set from x_t), D is a fixed function within the step, so every
 * solver minimises one g and g never increases; its force does work -w_i F'(y) y <= 0 over
 * the step's slip.
 *
 * The Newton-type solvers (Newton, VBD's vertex steps) model D by its secant stiffness
 * K_i = w_i F'(y)/y P_i, the lagged-viscous form, rather than its Hessian, whose stiffness
 * along the slip, w_i F''(y), vanishes once the vertex slides. A quadratic model with the
 * Hessian holds the friction force constant along the slip, so one Newton step from a sliding
 * start can carry a vertex through the anchor and on, friction still pushing it: on an incline
 * it climbs back up, friction doing positive work. The secant model's force, -K_i u, opposes
 * whatever slip the step ends with and never exceeds mu lambda_i within the start's slip, so
 * even the single default Newton iteration keeps friction passive; the minimiser is the same,
 * and K_i (positive semidefinite, at most the stick stiffness 2 w_i / eps_i) only changes the
 * path to it.
 *
 * Explicit methods and linearised implicit Euler: after the step, a velocity impulse. Free
 * vertex i in contact at x_t loses tangential speed up to mu h lambda_i / m_i, the tangential
 * impulse Coulomb allows for the normal impulse h lambda_i the contact gave it. Positions are
 * left as the step made them, so no spring is stretched; the kinetic energy can only fall,
 * by m |v_t|^2 (a - a^2/2) >= 0 for a loss a |v_t| with a in [0, 1].
 *
 * XPBD: the position rule of Mueller, Macklin, Chentanez, Jeschke and Kim 2020 ("Detailed
 * rigid body simulation with extended position based dynamics", sec. 3.5) on the contact
 * constraints of the substep. After each iteration's contact projection, a vertex whose
 * tangential travel since the substep's start is within mu times its accumulated normal
 * correction (the contact's normal multiplier over the substep) is put back to where that
 * travel began (static friction, a positional constraint among the others); after the
 * substep's velocity update, a vertex that did not stick loses tangential speed up to mu
 * times its normal correction over h (dynamic friction, a velocity impulse).
 */
#include <math.h>

#include "engine.h"

/* ---------------------------------------------------------------- the lagged potential */

/* the friction state of the step that starts at d->x, slip measured from anchor over a step h
 * (the scheme's h'): w_i and n_i of every free vertex from the contact force it carries there */
void ms_friction_begin(const ms_model *m, ms_data *d, const double *anchor, double h) {
  ms_friction *fr = &d->fr;
  fr->active = 0;
  fr->anchor = anchor;
  fr->h = h;
  if (!(m->mu > 0) || !(m->kc > 0) || m->nplane + m->nsphere == 0) return;
  for (int i = 0; i < m->nv; i++) {
    fr->w[i] = m->fixed[i] ? 0.0 : m->mu * ms_contact_normal(m, d->x + 3 * i, fr->n + 3 * i);
    fr->active |= fr->w[i] > 0;
  }
}

/* eps_i [m] of a vertex with w = mu lambda_i (file comment) */
static double stick_zone(const ms_model *m, const ms_friction *fr, double w) {
  return fmin(2 * w / m->kc, MS_CREEP_SPEED * fr->h);
}

/* the stick stiffness 2 w_i / eps_i [N/m] of vertex i, the most its friction's Hessian and
 * secant reach; 0 where it carries no contact */
double ms_friction_stiffness(const ms_model *m, const ms_data *d, int i) {
  double w = d->fr.active ? d->fr.w[i] : 0.0;
  return w > 0 ? 2 * w / stick_zone(m, &d->fr, w) : 0.0;
}

double ms_friction_mollified(double w, double eps, double y, double *per) {
  int stick = y < eps;
  *per = w * (stick ? 2 / eps - y / (eps * eps) : 1 / y);
  return w * (stick ? y * y / eps - y * y * y / (3 * eps * eps) : y - eps / 3);
}

/* D_i [J] of vertex i at p; where given, its force -grad D_i added to f (3 entries) and its
 * secant stiffness w F'(y)/y P added to blk (row-major 3x3, see the file comment). 0 and
 * nothing added where i carries no contact */
double ms_friction_vertex(const ms_model *m, const ms_data *d, const double *p, int i, double *f,
                          double *blk) {
  const ms_friction *fr = &d->fr;
  double w = fr->active ? fr->w[i] : 0.0;
  if (!(w > 0)) return 0.0;
  const double *n = fr->n + 3 * i, *a = fr->anchor + 3 * i;
  double e[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, en = ms_dot(3, e, n), u[3];
  for (int t = 0; t < 3; t++) u[t] = e[t] - en * n[t];
  double per, energy = ms_friction_mollified(w, stick_zone(m, fr, w), sqrt(ms_dot(3, u, u)), &per);
  for (int t = 0; t < 3 && f; t++) f[t] -= per * u[t];
  for (int r = 0; r < 3 && blk; r++)
    for (int c = 0; c < 3; c++) blk[3 * r + c] += per * ((r == c) - n[r] * n[c]);
  return energy;
}

/* D(x) [J]; where f is given, the friction forces -grad D added to it */
double ms_friction_forces(const ms_model *m, const ms_data *d, const double *x, double *f) {
  double e = 0;
  for (int i = 0; d->fr.active && i < m->nv; i++)
    e += ms_friction_vertex(m, d, x + 3 * i, i, f ? f + 3 * i : NULL, NULL);
  return e;
}

/* ---------------------------------------------------------------- velocity impulses */

/* v loses its part across unit normal n by up to `budget` [m/s] */
static void slow_across(double *v, const double *n, double budget) {
  double vn = ms_dot(3, v, n), vt[3] = {v[0] - vn * n[0], v[1] - vn * n[1], v[2] - vn * n[2]};
  double speed = sqrt(ms_dot(3, vt, vt));
  if (!(speed > 0) || !(budget > 0)) return;
  double lose = budget < speed ? budget / speed : 1.0;
  for (int t = 0; t < 3; t++) v[t] -= lose * vt[t];
}

/* the explicit methods' friction: d->vn, the step's new velocities, lose the tangential
 * impulse mu h lambda_i / m_i of the contact force at the step's start d->x */
void ms_friction_impulse(const ms_model *m, ms_data *d, double h) {
  double n[3];
  if (!(m->mu > 0) || m->nplane + m->nsphere == 0) return;
  for (int i = 0; i < m->nv; i++) {
    double lambda = m->fixed[i] ? 0.0 : ms_contact_normal(m, d->x + 3 * i, n);
    if (lambda > 0) slow_across(d->vn + 3 * i, n, m->mu * h * lambda * m->imass[i]);
  }
}

/* ---------------------------------------------------------------- xpbd */

/* static friction of a substep that started at ref: a free vertex whose tangential travel
 * since ref (across normal[i]) is within mu depth[i], its accumulated normal correction, is
 * put back to ref's tangential position (stuck[i] = 1), else left (stuck[i] = 0). With the
 * outward surface normal where the projection left it, the vertex stays outside: a sphere's
 * radius to it only grows by the tangential part removed */
void ms_friction_stick(const ms_model *m, const double *ref, double *x, const double *depth,
                       const double *normal, unsigned char *stuck) {
  for (int i = 0; i < m->nv; i++) {
    if (!(depth[i] > 0)) continue;
    double *p = x + 3 * i;
    const double *n = normal + 3 * i, *a = ref + 3 * i;
    double e[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, en = ms_dot(3, e, n), et[3];
    for (int t = 0; t < 3; t++) et[t] = e[t] - en * n[t];
    stuck[i] = sqrt(ms_dot(3, et, et)) <= m->mu * depth[i];
    for (int t = 0; t < 3 && stuck[i]; t++) p[t] -= et[t];
  }
}

/* dynamic friction after a substep of h: a free vertex in contact that did not stick loses
 * tangential speed up to mu depth[i] / h */
void ms_friction_slide(const ms_model *m, double *v, const double *depth, const double *normal,
                       const unsigned char *stuck, double h) {
  for (int i = 0; i < m->nv; i++)
    if (depth[i] > 0 && !stuck[i]) slow_across(v + 3 * i, normal + 3 * i, m->mu * depth[i] / h);
}
