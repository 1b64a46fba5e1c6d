/* explicit.c: explicit and symplectic (semi-implicit) Euler, classical fourth-order
 * Runge-Kutta and velocity Verlet, all on a(x) = M^-1 (f_spring(x) + f_contact(x)) + g +
 * M^-1 f_ext
 *
 * On entry d->xn holds x and d->vn the damped velocity (ms_step sets both up), except in
 * explicit and symplectic Euler and velocity Verlet, whose first kick sets them up in its own
 * pass over the vertices. Fixed vertices keep xn = x and vn = 0.
 */
#include <math.h>
#include <stdatomic.h>

#include "engine.h"

/* how a kick-drift pass moves positions after its kick */
typedef enum { DRIFT_NONE = 0, DRIFT_OLD, DRIFT_NEW } drift_kind;

/* what the vertex blocks of one step share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  double h;
  double kick;      /* kick-drift: the kick's fraction of h */
  drift_kind drift; /* kick-drift: the drift */
  int stage;        /* rk4: stage 0..3 */
  const double *at; /* kick-drift: sum the spring forces at these positions into d->f first
                       (NULL: d->f holds the forces) */
  double decay;     /* kick-drift: exp(-damping h) */
  int first;        /* kick-drift: the step's first pass, which prepares xn and vn */
  atomic_int *bad;  /* kick-drift: where the step's last pass reports the first diverged
                       vertex (ms_check_vertices), or NULL */
} step_pass;

/* d->f = spring, contact and self-contact forces at x [N] */
static void forces(const ms_model *m, ms_data *d, const double *x) {
  ms_spring_forces(m, d, x, d->f, 0);
  ms_contact_forces(m, x, d->f);
  ms_self_forces(m, d, x, d->f, 1.0);
}

/* M^-1 f + (g + M^-1 f_ext) from the values: inverse mass im, force f, gravity g and
 * external force fext [m/s^2] */
static inline double accel_of(double im, double f, double g, double fext) {
  return im * f + ms_accel_of(g, im, fext);
}

/* acceleration of free vertex i along t, d->f holding the forces [m/s^2] */
static double accel(const ms_model *m, const ms_data *d, int i, int t) {
  return accel_of(m->imass[i], d->f[3 * i + t], m->gravity[t], d->fext[3 * i + t]);
}

/* kick vn += kick h a, a = M^-1 f + g + M^-1 f_ext with f the spring and contact forces in
 * d->f, then drift xn += h v with the velocity before the kick (DRIFT_OLD) or after it
 * (DRIFT_NEW), for the vertices [lo, hi); first: the step's first pass, which starts from x
 * and the damped velocity (ms_prepare_vertex). Fixed vertices keep xn = x and vn = 0, chosen
 * per component after the arithmetic: no branch, and the fields are read once per block.
 * Inline with constant first and drift, each caller gets a loop without their branches */
static inline void kick_drift_range(const step_pass *p, int lo, int hi, int first,
                                    drift_kind drift) {
  const ms_model *m = p->m;
  ms_data *d = p->d;
  const double *restrict x = d->x, *restrict v = d->v, *restrict f = d->f, *restrict fext = d->fext,
                         *restrict imass = m->imass;
  const unsigned char *restrict fixed = m->fixed;
  double *restrict xn = d->xn, *restrict vn = d->vn;
  const double h = p->h, hk = p->kick * p->h, decay = p->decay;
  const double g[3] = {m->gravity[0], m->gravity[1], m->gravity[2]};
  for (int i = lo; i < hi; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      double v0 = first ? decay * v[k] : vn[k], x0 = first ? x[k] : xn[k];
      double v1 = v0 + hk * accel_of(imass[i], f[k], g[t], fext[k]);
      double x1 = drift == DRIFT_NONE ? x0 : x0 + h * (drift == DRIFT_NEW ? v1 : v0);
      vn[k] = fixed[i] ? 0.0 : v1;
      xn[k] = fixed[i] ? x[k] : x1;
    }
}

/* kick_drift_range over a block, after summing the spring forces there from the coefficients
 * in d->fc when p->at is given */
static void kick_drift_block(void *ctx, int lo, int hi) {
  const step_pass *p = ctx;
  if (p->at) ms_spring_gather_range(p->m, p->at, p->d->fc, p->d->f, lo, hi);
  if (p->first && p->drift == DRIFT_OLD)
    kick_drift_range(p, lo, hi, 1, DRIFT_OLD);
  else if (p->first && p->drift == DRIFT_NEW)
    kick_drift_range(p, lo, hi, 1, DRIFT_NEW);
  else
    kick_drift_range(p, lo, hi, p->first, p->drift);
  if (p->bad) ms_check_vertices(p->d, lo, hi, p->bad);
}

/* the forces at x, then a kick of kick h and a drift (first: the step's first kick, which
 * prepares xn and vn). Without colliders the spring forces are summed inside the kick's pass
 * over the vertices (one pass instead of two; the gather reads x at neighbours in other
 * blocks, so x is never what the pass writes: d->x, or d->xn with no drift), and the step's
 * last pass (last) also checks the state while it is in cache: MS_EDIVERGED at the first
 * diverged vertex, info->checked set. With colliders or self-contact, contact friction comes after
 * the pass and the step checks the state itself */
static ms_status kick_drift(const ms_model *m, ms_data *d, const double *x, double h, double kick,
                            drift_kind drift, int first, int last, ms_info *info) {
  int fused = m->nplane + m->nsphere == 0 && !ms_self_active(m, d);
  if (fused)
    ms_spring_coefs(m, x, d->fc, NULL, 0.0, NULL, d->eblk);
  else
    forces(m, d, x);
  atomic_int bad;
  atomic_init(&bad, m->nv);
  step_pass p = {.m = m,
                 .d = d,
                 .h = h,
                 .kick = kick,
                 .drift = drift,
                 .at = fused ? x : NULL,
                 .decay = exp(-m->damping * h),
                 .first = first,
                 .bad = fused && last ? &bad : NULL};
  ms_blocks(m, m->nv, MS_VBLOCK, kick_drift_block, &p);
  if (!p.bad) return MS_OK;
  int first_bad = atomic_load(&bad);
  info->checked = 1;
  info->vertex = first_bad < m->nv ? first_bad : -1;
  return info->vertex >= 0 ? MS_EDIVERGED : MS_OK;
}

/* v(t+h) = v + h a(x); x(t+h) = x + h v(t) */
ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info) {
  return kick_drift(m, d, d->x, h, 1.0, DRIFT_OLD, 1, 1, info);
}

/* v(t+h) = v + h a(x); x(t+h) = x + h v(t+h) */
ms_status ms_symplectic_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              ms_info *info) {
  return kick_drift(m, d, d->x, h, 1.0, DRIFT_NEW, 1, 1, info);
}

/* rk4 stage s with the forces at its position xs = d->y in d->f and its velocity vs = d->s:
 * xn += h w_s vs / 6 and d->g += w_s a(xs) (weights 1, 2, 2, 1), then the next stage's
 * xs = x + c h vs, vs = vn + c h a(xs) (c = 1/2, 1/2, 1) */
static void rk4_block(void *ctx, int lo, int hi) {
  static const double weight[4] = {1, 2, 2, 1}, frac[4] = {0.5, 0.5, 1, 0};
  const step_pass *p = ctx;
  const ms_model *m = p->m;
  ms_data *d = p->d;
  double w = weight[p->stage], c = frac[p->stage] * p->h;
  for (int i = lo; i < hi; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      int k = 3 * i + t;
      double a = accel(m, d, i, t);
      d->xn[k] += p->h * w * d->s[k] / 6;
      d->g[k] += w * a;
      d->y[k] = d->x[k] + c * d->s[k];
      d->s[k] = d->vn[k] + c * a;
    }
}

/* last rk4 pass: vn += h (a1 + 2 a2 + 2 a3 + a4) / 6 */
static void rk4_finish(void *ctx, int lo, int hi) {
  const step_pass *p = ctx;
  ms_data *d = p->d;
  for (int k = 3 * lo; k < 3 * hi; k++) d->vn[k] += p->h * d->g[k] / 6;
}

/* classical Runge-Kutta on (x, v): four stages from x_t and the damped velocity */
ms_status ms_rk4(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info) {
  int n3 = 3 * m->nv;
  for (int k = 0; k < n3; k++) d->y[k] = d->x[k], d->s[k] = d->vn[k], d->g[k] = 0.0;
  step_pass p = {.m = m, .d = d, .h = h};
  for (p.stage = 0; p.stage < 4; p.stage++) {
    forces(m, d, d->y);
    ms_blocks(m, m->nv, MS_VBLOCK, rk4_block, &p);
  }
  ms_blocks(m, m->nv, MS_VBLOCK, rk4_finish, &p);
  return MS_OK;
}

/* kick-drift-kick: v' = v + (h/2) a(x_t); x = x_t + h v'; v = v' + (h/2) a(x) */
ms_status ms_velocity_verlet(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                             ms_info *info) {
  kick_drift(m, d, d->x, h, 0.5, DRIFT_NEW, 1, 0, info);
  return kick_drift(m, d, d->xn, h, 0.5, DRIFT_NONE, 0, 1, info);
}
