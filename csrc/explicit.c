/* explicit.c: explicit and symplectic (semi-implicit) Euler
 *
 * On entry d->xn holds x and d->vn the damped velocity (ms_step sets both up).
 */
#include "msim.h"

/* x(t+h) = x + h v(t); v(t+h) = v + h M^-1 f(x(t)) */
ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info) {
  ms_total_forces(m, d, d->x, d->f);
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
  ms_total_forces(m, d, d->x, d->f);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      d->vn[3 * i + t] += h * m->imass[i] * d->f[3 * i + t];
      d->xn[3 * i + t] += h * d->vn[3 * i + t];
    }
  return MS_OK;
}
