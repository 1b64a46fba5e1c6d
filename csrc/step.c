/* step.c: what every method shares: damping, fixed vertices, divergence and rollback */
#include <math.h>
#include <string.h>

#include "msim.h"

typedef ms_status (*ms_integrator)(const ms_model *, ms_data *, double, const ms_opt *, ms_info *);

static const ms_integrator integrators[MS_NMETHOD] = {
    [MS_EXPLICIT_EULER] = ms_explicit_euler,
    [MS_SYMPLECTIC_EULER] = ms_symplectic_euler,
    [MS_IMPLICIT_EULER] = ms_implicit_euler,
    [MS_LINEARIZED_IMPLICIT] = ms_linearized_implicit,
    [MS_FMS] = ms_fms,
    [MS_XPBD] = ms_xpbd,
};

/* xn = x and vn = exp(-damping h) v, with fixed vertices at rest */
static void prepare(const ms_model *m, ms_data *d, double h) {
  double decay = exp(-m->damping * h);
  memcpy(d->xn, d->x, sizeof(double) * 3 * m->nv);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) d->vn[3 * i + t] = m->fixed[i] ? 0.0 : decay * d->v[3 * i + t];
}

/* first vertex whose next position or velocity is non-finite or beyond MS_BOUND, else -1 */
static int diverged_vertex(const ms_model *m, const ms_data *d) {
  for (int i = 0; i < 3 * m->nv; i++)
    if (!(fabs(d->xn[i]) <= MS_BOUND && fabs(d->vn[i]) <= MS_BOUND)) return i / 3;
  return -1;
}

/* fixed vertices stay exactly where the user put them */
static void hold_fixed(const ms_model *m, ms_data *d) {
  for (int i = 0; i < m->nv; i++)
    if (m->fixed[i])
      for (int t = 0; t < 3; t++) {
        d->xn[3 * i + t] = d->x[3 * i + t];
        d->vn[3 * i + t] = 0.0;
      }
}

ms_status ms_step(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                  ms_info *info) {
  memset(info, 0, sizeof(*info));
  info->bad = -1;
  if (method < 0 || method >= MS_NMETHOD || !integrators[method] || !(h > 0) || !isfinite(h))
    return MS_EINPUT;

  // integrate into xn, vn
  prepare(m, d, h);
  ms_status st = integrators[method](m, d, h, o, info);
  if (st != MS_OK) return st;
  ms_contact_friction(m, d, h);
  hold_fixed(m, d);

  // reject a diverged state, otherwise swap it in
  info->bad = diverged_vertex(m, d);
  if (info->bad >= 0) return MS_EDIVERGED;
  double *x = d->x, *v = d->v;
  d->x = d->xn, d->v = d->vn;
  d->xn = x, d->vn = v;
  d->time += h;
  d->nstep++;
  if (info->nhist == 0) info->iters = 1, info->converged = 1; /* single-pass methods */
  return MS_OK;
}
