/* explicit.c: explicit and symplectic (semi-implicit) Euler
 *
 * On entry d->xn holds x and d->vn the damped velocity (ms_step sets both up).
 */
#include <string.h>

#include "msim.h"

/* d->f = spring and gravity forces at positions x */
static void total_forces(const ms_model *m, ms_data *d, const double *x) {
  memset(d->f, 0, sizeof(double) * 3 * m->nv);
  ms_spring_forces(m, x, d->f);
  ms_add_gravity(m, d->f);
}

/* x(t+h) = x + h v(t); v(t+h) = v + h M^-1 f(x(t)) */
ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info) {
  total_forces(m, d, d->x);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      d->xn[3 * i + t] += h * d->vn[3 * i + t];
      d->vn[3 * i + t] += h * m->imass[i] * d->f[3 * i + t];
    }
  return MS_OK;
}

/* v(t+h) = v + h M^-1 f(x(t)); x(t+h) = x + h v(t+h) */
ms_status ms_symplectic_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              ms_info *info) {
  total_forces(m, d, d->x);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      d->vn[3 * i + t] += h * m->imass[i] * d->f[3 * i + t];
      d->xn[3 * i + t] += h * d->vn[3 * i + t];
    }
  return MS_OK;
}
