/* selffriction.c: Coulomb friction between touching parts of a self-contacting mesh
 *
 * The lagged friction of friction.c (IPC, Li et al. 2020, sec. 5), per pair of primitives. At
 * the step's start x_t a pair at distance d < dhat presses with the barrier's normal force
 * lambda = -b'(d) (barrier.c) along the unit normal n from its second primitive to its first.
 * Its closest points are a* = sum_A c_k x_k and b* = -sum_B c_k x_k, c_k >= 0 on the first
 * primitive's vertices and <= 0 on the second's, each side summing to +-1 (distance.c). The
 * closest points' relative slip
 * from the scheme's base point a, across n,
 *
 *   u = P sum_k c_k (x_k - a_k),  P = I - n n^T,
 *
 * carries the potential D = w F(|u|), w = mu lambda, F friction.c's mollifier with the stick
 * zone eps = max(2 w / kappa, eps_v h), so that the stick stiffness 2 w / eps is at most the
 * barrier's own kappa: the barrier's compliance across the surface as along it. Vertex k
 * feels -c_k w F'(y)/y u, and the Newton-type solvers get the secant block c_k^2 w F'(y)/y P
 * (friction.c says why not the Hessian). Lagged (lambda, n, c from x_t), D is a fixed
 * function within the step, so every solver minimises one g and friction stays passive.
 *
 * Methods without the lagged potential (the explicit ones, linearised implicit Euler, XPBD)
 * get an impulse after the step instead: pair by pair in order, the closest points' relative
 * tangential velocity v_r = P sum_k c_k v_k loses up to mu h lambda of momentum,
 * j = min(mu h lambda, |v_r| / W), W = sum_k c_k^2 / m_k, as v_k -= c_k j v_r / (|v_r| m_k),
 * which changes the kinetic energy by -j |v_r| + j^2 W / 2 <= 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* room for the friction of n pairs */
static ms_status reserve(ms_self_ws *w, int n) {
  if (n <= w->fcap) return MS_OK;
  ms_sc_fric *fric = ms_alloc(n, sizeof(ms_sc_fric));
  if (!fric) return MS_ENOMEM;
  free(w->fric);
  w->fric = fric, w->fcap = n;
  return MS_OK;
}

/* pair pr's friction at x: w = mu lambda (0 beyond the thickness or within the ring), n, c */
static void pair_friction(const ms_model *m, const ms_sc_pair *pr, const double *x,
                          ms_sc_fric *fr) {
  double q[12], e1, e2;
  memset(fr, 0, sizeof(*fr));
  if (pr->ring) return;
  ms_self_gather(pr, x, q);
  double dist = ms_pair_closest(pr->kind, q, fr->n, fr->c);
  ms_barrier(dist, m->sc_thickness, m->sc_stiffness, &e1, &e2);
  fr->w = dist > 0 && e1 < 0 ? m->sc_mu * -e1 : 0.0;
}

ms_status ms_self_friction_begin(const ms_model *m, ms_data *d) {
  ms_self_ws *w = d->sc;
  w->lagged = 0;
  if (!(m->sc_mu > 0)) return MS_OK;
  ms_status st = reserve(w, w->npair);
  for (int p = 0; st == MS_OK && p < w->npair; p++)
    pair_friction(m, w->pair + p, d->x, w->fric + p);
  return st;
}

void ms_self_friction_lag(const ms_model *m, ms_data *d, const double *anchor, double h) {
  if (!ms_self_active(m, d) || !(m->sc_mu > 0)) return;
  d->sc->lagged = 1, d->sc->anchor = anchor, d->sc->fh = h;
}

/* the relative slip (or velocity) P sum_k c_k (x_k - a_k) of pair p's closest points (a NULL:
 * zero), vertex i read from xi instead of x (i < 0: none) */
static void relative(const ms_self_ws *w, int p, const double *x, const double *a, int i,
                     const double *xi, double u[3]) {
  const ms_sc_fric *fr = w->fric + p;
  double e[3] = {0, 0, 0};
  for (int k = 0; k < 4; k++) {
    int v = w->pair[p].v[k];
    const double *xv = v == i ? xi : x + 3 * v;
    for (int t = 0; t < 3; t++) e[t] += fr->c[k] * (xv[t] - (a ? a[3 * v + t] : 0.0));
  }
  double en = ms_dot(3, e, fr->n);
  for (int t = 0; t < 3; t++) u[t] = e[t] - en * fr->n[t];
}

/* the stick zone eps of pair p's friction [m] (w > 0) */
static double stick_zone(const ms_model *m, const ms_self_ws *w, int p) {
  return fmax(2 * w->fric[p].w / m->sc_stiffness, MS_CREEP_SPEED * w->fh);
}

double ms_self_friction_stick(const ms_model *m, const ms_data *d, int p) {
  const ms_self_ws *w = d->sc;
  return w->lagged && w->fric[p].w > 0 ? 2 * w->fric[p].w / stick_zone(m, w, p) : 0.0;
}

double ms_self_friction_pair(const ms_model *m, const ms_data *d, const double *x, int p, int i,
                             const double *xi, double u[3], double *per) {
  const ms_self_ws *w = d->sc;
  double wp = w->lagged ? w->fric[p].w : 0.0;
  if (!(wp > 0)) return u[0] = u[1] = u[2] = 0.0, *per = 0.0; /* (callers scale u by per) */
  relative(w, p, x, w->anchor, i, xi, u);
  return ms_friction_mollified(wp, stick_zone(m, w, p), sqrt(ms_dot(3, u, u)), per);
}

void ms_self_friction_impulse(const ms_model *m, ms_data *d, double h) {
  if (!ms_self_active(m, d) || !(m->sc_mu > 0) || d->sc->lagged) return;
  const ms_self_ws *w = d->sc;
  double vr[3];
  for (int p = 0; p < w->npair; p++) {
    const ms_sc_fric *fr = w->fric + p;
    if (!(fr->w > 0)) continue;
    relative(w, p, d->vn, NULL, -1, NULL, vr);
    double speed = sqrt(ms_dot(3, vr, vr)), W = 0;
    for (int k = 0; k < 4; k++) W += fr->c[k] * fr->c[k] * m->imass[w->pair[p].v[k]];
    if (!(speed > 0) || !(W > 0)) continue;
    double j = fmin(fr->w * h, speed / W);
    for (int k = 0; k < 4; k++)
      for (int t = 0; t < 3; t++)
        d->vn[3 * w->pair[p].v[k] + t] -= fr->c[k] * j * vr[t] / speed * m->imass[w->pair[p].v[k]];
  }
}
