/* explicit.c: explicit and symplectic (semi-implicit) Euler
 *
 * On entry d->xn holds x and d->vn the damped velocity (ms_step sets both up).
 */
#include "msim.h"

/* what the vertex blocks of one step share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  double h;
  int symplectic;
} euler_pass;

/* v(t+h) = v + h (M^-1 f + a), f the spring and contact forces, a = g + M^-1 f_ext (ms_accel);
 * x(t+h) = x + h v(t) (explicit) or x + h v(t+h) (symplectic); fixed vertices keep vn = 0 */
static void euler_block(void *ctx, int lo, int hi) {
  const euler_pass *p = ctx;
  const ms_model *m = p->m;
  ms_data *d = p->d;
  for (int i = lo; i < hi; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      int k = 3 * i + t;
      double v = d->vn[k], a = m->imass[i] * d->f[k] + ms_accel(m, d, i, t);
      d->vn[k] = v + p->h * a;
      d->xn[k] += p->h * (p->symplectic ? d->vn[k] : v);
    }
}

static ms_status euler(const ms_model *m, ms_data *d, double h, int symplectic) {
  ms_spring_forces(m, d, d->x, d->f, 0);
  ms_contact_forces(m, d->x, d->f);
  euler_pass p = {.m = m, .d = d, .h = h, .symplectic = symplectic};
  ms_blocks(m, m->nv, MS_VBLOCK, euler_block, &p);
  return MS_OK;
}

ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info) {
  return euler(m, d, h, 0);
}

ms_status ms_symplectic_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              ms_info *info) {
  return euler(m, d, h, 1);
}
