/* vertex.c: one vertex's share of g and a safeguarded Newton step on it
 *
 * Vertex i's share of g holds every term that depends on x_i, the others held where they are:
 *
 *   G_i(x_i) = m_i/(2 hs^2) |x_i - y_i|^2 + sum_{s at i} k_s/2 (l_s - r_s)^2 + C_i(x_i) + D_i(x_i),
 *
 * l_s = |x_i - x_j|, C_i the contact penalty (contact.c) and D_i the lagged friction
 * (friction.c), so moving x_i alone changes g by exactly the change in G_i. A Newton step on
 * it (Chen, Liu, Yang and Yuksel 2024, "Vertex Block Descent", eqs. 9-10) takes
 *
 *   grad = m_i/hs^2 (x_i - y_i) + sum_s k_s (1 - r_s/l_s)(x_i - x_j) - f_contact - f_friction,
 *   H    = m_i/hs^2 I + sum_s k_s (uu^T + max(0, 1 - r_s/l_s)(I - uu^T)) + kc sum n n^T + K_f,
 *
 * each spring's block made positive semidefinite by the clamp (ms_spring_block), the
 * contact's by dropping a sphere's lateral curvature (ms_contact_hessian), friction by its
 * secant stiffness K_f (friction.c); dx = -H^-1 grad, skipped where H is nearly singular (the
 * paper's det H test), then halved until G_i falls by MS_ARMIJO of its slope, so g never
 * increases. VBD sweeps it over a colouring (vbd.c); the settled start point of the implicit
 * solvers repeats it on the vertices in contact (potential.c).
 */
#include <math.h>

#include "engine.h"

/* the shortest step tried, as a fraction of dx (a vertex's step is cheap to give up) */
#define MS_VERTEX_MIN_STEP 0x1p-20

/* G_i's contact and friction energy [J] of vertex i at p (self-contact's too where c asks);
 * where given, their forces added to f and their stiffness to H */
static double surface(const ms_vertex *c, const double *p, int i, double *f, double *H) {
  return ms_contact_point(c->m, p, f) + ms_friction_vertex(c->m, c->d, p, i, f, H) +
         (c->self_contact ? ms_self_vertex(c->m, c->d, c->x, p, i, f, H) : 0.0);
}

/* gradient and Hessian of G_i at the iterate (file comment) */
static void local_system(const ms_vertex *c, int i, double wi, double grad[3], double H[9]) {
  const ms_model *m = c->m;
  const double *x = c->x, *y = c->y, *xi = x + 3 * i;
  double f[3] = {0, 0, 0}, blk[9];
  ms_contact_hessian(m, x, i, H);
  surface(c, xi, i, f, H);
  for (int t = 0; t < 3; t++) {
    grad[t] = wi * (xi[t] - y[3 * i + t]) - f[t];
    H[4 * t] += wi;
  }
  for (int p = m->adj_start[i]; p < m->adj_start[i + 1]; p++) {
    int s = m->adj[2 * p + 1];
    const double *xj = x + 3 * m->adj[2 * p];
    double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
    double l = sqrt(ms_dot(3, d, d)),
           k = m->k[s] * (1.0 - m->rest[s] / (l > MS_TINY ? l : MS_TINY));
    ms_spring_block(d, l, m->k[s], m->rest[s], MS_SPD_CLAMP, blk);
    for (int t = 0; t < 3; t++) grad[t] += k * d[t];
    for (int t = 0; t < 9; t++) H[t] += blk[t];
  }
}

/* G_i(x_i + e) - G_i(x_i) [J], in forms that keep the digits of a small change:
 * |a + e|^2 - |a|^2 = e.(2a + e) and (l' - r)^2 - (l - r)^2 = (l' - l)(l' + l - 2r) with
 * l' - l = (l'^2 - l^2)/(l' + l); e_surface is G_i's contact and friction energy at x_i */
static double local_change(const ms_vertex *c, int i, double wi, const double e[3],
                           double e_surface) {
  const ms_model *m = c->m;
  const double *x = c->x, *y = c->y, *xi = x + 3 * i;
  double moved[3] = {xi[0] + e[0], xi[1] + e[1], xi[2] + e[2]}, a[3];
  for (int t = 0; t < 3; t++) a[t] = 2 * (xi[t] - y[3 * i + t]) + e[t];
  double change = 0.5 * wi * ms_dot(3, e, a) + surface(c, moved, i, NULL, NULL) - e_surface;
  for (int p = m->adj_start[i]; p < m->adj_start[i + 1]; p++) {
    int s = m->adj[2 * p + 1];
    const double *xj = x + 3 * m->adj[2 * p];
    double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
    double d1[3] = {d[0] + e[0], d[1] + e[1], d[2] + e[2]};
    for (int t = 0; t < 3; t++) a[t] = 2 * d[t] + e[t];
    double sum = sqrt(ms_dot(3, d1, d1)) + sqrt(ms_dot(3, d, d));
    double dl = sum > 0 ? ms_dot(3, e, a) / sum : 0.0;
    change += 0.5 * m->k[s] * dl * (sum - 2 * m->rest[s]);
  }
  return change;
}

/* a step of vertex i on G_i as the line search tries it (ms_trial_fn) */
typedef struct {
  const ms_vertex *c;
  int i;
  double wi, e_surface, dx[3];
} vertex_trial;

/* x_i + alpha dx passes when G_i falls by at least the Armijo bound */
static int trial(void *ctx, double alpha, double bound) {
  const vertex_trial *v = ctx;
  double e[3] = {alpha * v->dx[0], alpha * v->dx[1], alpha * v->dx[2]};
  return local_change(v->c, v->i, v->wi, e, v->e_surface) <= bound;
}

/* one safeguarded Newton step of vertex i on G_i (file comment); returns the largest
 * coordinate it moved [m], 0 when no step lowers G_i or H is singular */
double ms_vertex_step(const ms_vertex *c, int i) {
  const ms_model *m = c->m;
  double wi = m->mass[i] * c->hs2, grad[3], H[9], dx[3];
  local_system(c, i, wi, grad, H);
  if (!ms_spd3_step(H, grad, dx)) return 0.0;
  double cap = c->self_contact ? ms_self_vertex_cap(m, c->d, c->x, i, dx) : 1.0;
  for (int t = 0; t < 3; t++) dx[t] *= cap;
  double slope = ms_dot(3, grad, dx), e_surface = surface(c, c->x + 3 * i, i, NULL, NULL);
  if (!(slope < 0)) return 0.0;
  // a trial that does not escape (ms_backtrack is inline), so it stays in registers
  vertex_trial v = {.c = c, .i = i, .wi = wi, .e_surface = e_surface, .dx = {dx[0], dx[1], dx[2]}};
  double alpha = ms_backtrack(trial, &v, slope, MS_VERTEX_MIN_STEP);
  if (alpha == 0) return 0.0;
  double e[3] = {alpha * dx[0], alpha * dx[1], alpha * dx[2]};
  for (int t = 0; t < 3; t++) c->x[3 * i + t] += e[t];
  return fmax(fabs(e[0]), fmax(fabs(e[1]), fabs(e[2])));
}
