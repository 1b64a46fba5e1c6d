/* spring.c: spring and gravity energies and forces */
#include <math.h>
#include <string.h>

#include "msim.h"

/* E = sum_s k_s/2 (|x_i - x_j| - r_s)^2 [J] */
double ms_spring_energy(const ms_model *m, const double *x) {
  double e = 0;
  for (int s = 0; s < m->ns; s++) {
    const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    double stretch = sqrt(dx * dx + dy * dy + dz * dz) - m->rest[s];
    e += 0.5 * m->k[s] * stretch * stretch;
  }
  return e;
}

/* f += -grad E and return E [J] in the same pass; a spring of zero length has no direction
 * and pushes nothing */
double ms_spring_forces(const ms_model *m, const double *x, double *f) {
  double e = 0;
  for (int s = 0; s < m->ns; s++) {
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    const double *a = x + 3 * i, *b = x + 3 * j;
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), stretch = len - m->rest[s];
    e += 0.5 * m->k[s] * stretch * stretch;
    if (len == 0) continue;
    double c = -m->k[s] * stretch / len;
    for (int t = 0; t < 3; t++) {
      f[3 * i + t] += c * d[t];
      f[3 * j + t] -= c * d[t];
    }
  }
  return e;
}

/* f += m g */
void ms_add_gravity(const ms_model *m, double *f) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) f[3 * i + t] += m->mass[i] * m->gravity[t];
}

/* f = spring, gravity and contact forces at x [N] */
void ms_total_forces(const ms_model *m, const double *x, double *f) {
  memset(f, 0, sizeof(double) * 3 * m->nv);
  ms_spring_forces(m, x, f);
  ms_add_gravity(m, f);
  ms_contact_forces(m, x, f);
}

/* kinetic 1/2 m v^2, spring, gravity -m g.x and contact penalty energies of the state */
ms_energies ms_energy(const ms_model *m, const ms_data *d) {
  ms_energies e = {.spring = ms_spring_energy(m, d->x), .collision = ms_contact_energy(m, d->x)};
  for (int i = 0; i < m->nv; i++) {
    const double *x = d->x + 3 * i, *v = d->v + 3 * i;
    e.kinetic += 0.5 * m->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    e.gravity -= m->mass[i] * (m->gravity[0] * x[0] + m->gravity[1] * x[1] + m->gravity[2] * x[2]);
  }
  return e;
}

/* 3x3 Hessian block of spring s at x, row-major [N/m]: k uu^T + k (1 - L/l)(I - uu^T).
 * Its eigenvalues are k (along u) and k (1 - L/l) twice (across), so projecting them onto
 * [0, inf) (MS_SPD_PROJECT) is the same as clamping (1 - L/l) at 0 (MS_SPD_CLAMP); the other
 * variants return the exact block. A spring of zero length has no direction: k I. */
void ms_spring_hessian(const ms_model *m, const double *x, int s, ms_spd spd, double blk[9]) {
  const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
  double u[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  double len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), k = m->k[s];
  double across = len > 0 ? 1.0 - m->rest[s] / len : 1.0;
  if ((spd == MS_SPD_CLAMP || spd == MS_SPD_PROJECT) && across < 0) across = 0;
  for (int t = 0; t < 3; t++) u[t] = len > 0 ? u[t] / len : 0.0;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      blk[3 * r + c] = k * ((1.0 - across) * u[r] * u[c] + (r == c ? across : 0.0));
}
