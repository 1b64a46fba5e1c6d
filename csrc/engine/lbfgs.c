/* lbfgs.c: L-BFGS on g with FMS's matrix as initial Hessian (Liu, Bouaziz and Kavan 2017,
 * "Quasi-Newton methods for real-time simulation of hyperelastic materials", ACM TOG 36(3))
 *
 * An implicit step minimises g(x) = |x - y|_M^2 / (2 hs^2) + E(x) over free vertices. Its
 * Hessian is M / hs^2 + grad^2 E; for springs at rest length 0 grad^2 E is the constant
 * Laplacian L (L = sum_s k_s a_s a_s^T), so L-BFGS starts from
 *
 *   H0 = (M + hs^2 L) / hs^2,   H0^-1 r = hs^2 (M + hs^2 L)^-1 r,
 *
 * FMS's prefactored matrix (fms.c: one three-column Cholesky solve per application; it also
 * holds colliders' penalties and self-contact pairs' curvature blocks). With the
 * curvature pairs s_i = x_(i+1) - x_i, y_i = grad g(x_(i+1)) - grad g(x_i), rho_i = 1/(s_i.y_i)
 * of the last m accepted steps, the two-loop recursion gives the direction p = -H grad g:
 *
 *   q = grad g;  for i newest..oldest: a_i = rho_i s_i.q,  q -= a_i y_i
 *   z = H0^-1 q; for i oldest..newest: b = rho_i y_i.z,    z += (a_i - b) s_i;  p = -z
 *
 * The first iteration (no pairs) is exactly one FMS local-global step, as the paper notes:
 * x - hs^2 A^-1 grad g(x) = A^-1 (M y + hs^2 J d(x)); FMS minimises a quadratic upper bound of
 * g with Hessian H0, so that step lowers g by at least |grad g.p| / 2. A pair with s.y <= 0 is
 * skipped, which keeps H positive definite, so p is a descent direction. A backtracking line
 * search on g (alpha = 1, 1/2, 1/4, ...) takes the first step with the Armijo decrease
 *
 *   g(x + alpha p) <= g(x) + c alpha grad g(x).p,
 *
 * so g never increases. Near the minimiser g's change drowns in its rounding (about 1e-16 |g|
 * per evaluation, and the accepted iterate's g is biased low by the selection), so where the
 * evaluated change is within 1e-12 |g| the change is taken instead from the trapezoid rule on
 * the directional derivatives, alpha (grad g(x).p + grad g(x + alpha p).p) / 2 (exact for a
 * quadratic, in error by O(|alpha p|^3) otherwise; Hager and Zhang's approximate Armijo test
 * uses the same idea), and g and its history are carried forward by it. Without this the
 * iterations would stall at |grad g| ~ 1e-7 N on a small cloth; with it they reach 1e-11 N.
 * When no step passes the iterations stop there. The pairs start empty every step.
 *
 * Under self-contact every iterate keeps the step's end within the displacement bounds
 * (bounds.c): p is capped as a whole to the largest fraction 1, 1/2, ... they leave uncut,
 * and where they cut it the whole step is also cut per vertex, as FMS's iterates are (and
 * halved until g falls); the iteration takes the one that lowers g more. Capped alone, the
 * fraction shrinks toward 0 as the iterates near the bounds and the iterations crawl, ending
 * far from the minimiser with more energy than the step began with.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct ms_lbfgs_ws {
  int slots;       /* pair slots allocated: the window and one to write the next pair into */
  double *s, *y;   /* (slots, nv*3) pairs s_i, y_i */
  double *rho, *a; /* (slots) 1/(s_i.y_i), the first loop's a_i */
  double *p;       /* (nv,3) direction */
  double *x1;      /* (nv,3) line-search trial point */
  double *grad[2]; /* (nv,3) grad g at the iterate and at the trial point */
};

void ms_lbfgs_free(void *ws) {
  ms_lbfgs_ws *w = ws;
  if (!w) return;
  free(w->s);
  free(w->y);
  free(w->rho);
  free(w->a);
  free(w->p);
  free(w->x1);
  free(w->grad[0]);
  free(w->grad[1]);
  free(w);
}

/* a workspace for m with `slots` pair slots, or NULL when out of memory */
static ms_lbfgs_ws *workspace_new(const ms_model *m, int slots) {
  size_t n3 = 3 * (size_t)m->nv, cols = (size_t)slots;
  ms_lbfgs_ws *w = ms_alloc(1, sizeof(ms_lbfgs_ws));
  if (!w) return NULL;
  w->slots = slots;
  w->s = ms_alloc(n3 * cols, sizeof(double));
  w->y = ms_alloc(n3 * cols, sizeof(double));
  w->rho = ms_alloc(cols, sizeof(double));
  w->a = ms_alloc(cols, sizeof(double));
  w->p = ms_alloc(n3, sizeof(double));
  w->x1 = ms_alloc(n3, sizeof(double));
  w->grad[0] = ms_alloc(n3, sizeof(double));
  w->grad[1] = ms_alloc(n3, sizeof(double));
  if (!w->s || !w->y || !w->rho || !w->a || !w->p || !w->x1 || !w->grad[0] || !w->grad[1]) {
    ms_lbfgs_free(w);
    return NULL;
  }
  return w;
}

/* the workspace of d with room for `window` pairs, replaced by a larger one only when
 * complete (the old one stays when out of memory) */
static ms_status workspace(const ms_model *m, ms_data *d, int window) {
  if (d->lbfgs && d->lbfgs->slots > window) return MS_OK;
  ms_lbfgs_ws *w = workspace_new(m, window + 1);
  if (!w) return MS_ENOMEM;
  ms_lbfgs_free(d->lbfgs);
  d->lbfgs = w;
  return MS_OK;
}

/* what one step's iterations share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  ms_lbfgs_ws *w;
  double hs;
  int n3;
  int window;     /* pairs kept: o->window */
  int slots;      /* window + 1 slots in a ring */
  int cols, next; /* pairs stored, the free slot the next pair goes to */
  ms_info *info;
  double obj, slope, noise; /* line search: g at the iterate, grad g.p, g's rounding there */
  double frac;              /* the fraction of p that self-contact's bounds leave uncut */
  double obj1, res1;        /* line search: g and |grad g| at the trial point */
} lbfgs_ctx;

/* a.b over n entries in four interleaved lanes (a fixed order, without one long add chain) */
static double dot(int n, const double *a, const double *b) {
  double l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  int k = 0;
  for (; k + 4 <= n; k += 4)
    l0 += a[k] * b[k], l1 += a[k + 1] * b[k + 1], l2 += a[k + 2] * b[k + 2],
        l3 += a[k + 3] * b[k + 3];
  for (; k < n; k++) l0 += a[k] * b[k];
  return (l0 + l1) + (l2 + l3);
}

/* p = -H grad by the two-loop recursion over the stored pairs, newest first; the H0 solve is
 * timed into info->solve */
static ms_status direction(lbfgs_ctx *c, const double *grad, ms_info *info) {
  ms_lbfgs_ws *w = c->w;
  int n3 = c->n3, m = c->slots;
  double *q = w->p, hs2 = c->hs * c->hs;
  memcpy(q, grad, sizeof(double) * n3);
  // first loop: q -= a_i y_i, newest pair first
  for (int j = 1; j <= c->cols; j++) {
    int i = (c->next - j + m) % m;
    const double *s = w->s + (size_t)i * n3, *y = w->y + (size_t)i * n3;
    w->a[i] = w->rho[i] * dot(n3, s, q);
    for (int k = 0; k < n3; k++) q[k] -= w->a[i] * y[k];
  }
  // z = H0^-1 q = hs^2 (M + hs^2 L)^-1 q
  double t0 = ms_clock();
  ms_status st = ms_fms_apply_inverse(c->m, c->d, q, q);
  info->solve += ms_clock() - t0;
  if (st != MS_OK) return st;
  for (int k = 0; k < n3; k++) q[k] *= hs2;
  // second loop: z += (a_i - b) s_i, oldest pair first; then p = -z
  for (int j = c->cols; j >= 1; j--) {
    int i = (c->next - j + m) % m;
    const double *s = w->s + (size_t)i * n3, *y = w->y + (size_t)i * n3;
    double b = w->rho[i] * dot(n3, y, q);
    for (int k = 0; k < n3; k++) q[k] += (w->a[i] - b) * s[k];
  }
  for (int k = 0; k < n3; k++) q[k] = -q[k];
  return MS_OK;
}

/* line-search trial x1 = x + alpha p, its gradient, |gradient| and g into w->x1, w->grad[1],
 * c->res1 and c->obj1; -1 when alpha p is below the rounding of x. Where g's change drowns in
 * its rounding, the change is taken from the trapezoid rule on the directional derivatives,
 * alpha (slope + slope1) / 2 (exact for a quadratic), and g carried forward by it */
static int trial(void *ctx, double alpha, double bound) {
  lbfgs_ctx *c = ctx;
  ms_lbfgs_ws *w = c->w;
  const double *x = c->d->xn;
  int moved = 0;
  for (int k = 0; k < c->n3; k++) w->x1[k] = x[k] + alpha * w->p[k], moved |= w->x1[k] != x[k];
  if (!moved) return -1;
  c->res1 = ms_objective_grad(c->m, c->d, w->x1, c->d->y, c->hs, w->grad[1], &c->obj1);
  if (c->obj1 <= c->obj + bound) return 1;
  if (fabs(c->obj1 - c->obj) > c->noise) return 0;
  double change = 0.5 * alpha * (c->slope + dot(c->n3, w->grad[1], w->p));
  if (change <= bound) return (c->obj1 = c->obj + change), 1;
  return 0;
}

/* move x to the accepted trial point w->x1, its gradient becoming the current one; the pair
 * s = x1 - x, y = grad1 - grad goes into the free slot and is kept when s.y > 0, the oldest
 * pair then dropping out of the window */
static void accept(lbfgs_ctx *c, double *x) {
  ms_lbfgs_ws *w = c->w;
  int n3 = c->n3, i = c->next;
  double *s = w->s + (size_t)i * n3, *y = w->y + (size_t)i * n3, *g0 = w->grad[0];
  for (int k = 0; k < n3; k++) s[k] = w->x1[k] - x[k], y[k] = w->grad[1][k] - g0[k];
  double sy = dot(n3, s, y);
  if (sy > 0) {
    w->rho[i] = 1.0 / sy;
    c->next = (i + 1) % c->slots;
    if (c->cols < c->window) c->cols++;
  }
  memcpy(x, w->x1, sizeof(double) * n3);
  w->grad[0] = w->grad[1], w->grad[1] = g0;
}

/* p = -H grad g and its slope grad g.p; p is a descent direction but for rounding in the
 * pairs: then they start afresh */
static ms_status descent(lbfgs_ctx *c) {
  for (;;) {
    ms_status st = direction(c, c->w->grad[0], c->info);
    if (st != MS_OK) return st;
    c->slope = dot(c->n3, c->w->grad[0], c->w->p);
    if (c->slope < 0 || !c->cols) return MS_OK;
    c->cols = 0;
  }
}

/* the trial point w->x1 of a step along p, its g and gradient as trial's: by the line search
 * along p capped as a whole to self-contact's bounds (c->frac the fraction kept: 1 uncut, 0
 * where every fraction is cut); where they cut p, also p cut per vertex, as FMS's iterates
 * are, and halved until g falls, if that lowers g more (the capped fraction can shrink toward
 * 0 as the iterates near the bounds, and the iterations then crawl); 0 when neither passes */
static int step_to(lbfgs_ctx *c) {
  ms_lbfgs_ws *w = c->w;
  size_t at = (size_t)c->next * c->n3, bytes = sizeof(double) * c->n3;
  double *whole = w->s + at, *cut = w->y + at, g;             /* the free pair slot as scratch */
  if (ms_self_active(c->m, c->d)) memcpy(whole, w->p, bytes); /* read only where cut */
  c->frac = ms_self_cap_step(c->m, c->d, c->d->xn, w->p);
  c->slope = dot(c->n3, w->grad[0], w->p);
  int found = c->frac > 0 && c->slope < 0 && ms_backtrack(trial, c, c->slope, MS_MIN_STEP) > 0;
  if (c->frac == 1.0 ||
      !ms_self_confined_step(c->m, c->d, c->d->xn, c->obj, whole, c->hs, cut, &g) ||
      (found && c->obj1 <= g))
    return found;
  memcpy(w->x1, cut, bytes);
  c->res1 = ms_objective_grad(c->m, c->d, w->x1, c->d->y, c->hs, w->grad[1], &c->obj1);
  return 1;
}

/* iteration k: direction, step and the new pair; where self-contact's bounds cut the step and
 * none passes, once more along FMS's direction (the pairs afresh); MS_STOPPED at a minimiser
 * or where no step passes (rounding) (ms_iteration_fn) */
static ms_status lbfgs_iteration(void *ctx, int k, double *res, double *obj) {
  lbfgs_ctx *c = ctx;
  if (!(*res > 0)) return MS_STOPPED;
  c->obj = *obj, c->noise = MS_ROUNDING * fabs(*obj);
  for (;;) {
    ms_status st = descent(c);
    if (st != MS_OK) return st;
    if (step_to(c)) break;
    if (!c->cols || c->frac == 1.0) return MS_STOPPED;
    c->cols = 0;
  }
  accept(c, c->d->xn);
  *obj = c->obj1, *res = c->res1;
  return MS_OK;
}

/* minimise g from d->xn by L-BFGS (see the top of the file); history entry k at iterate k */
ms_status ms_lbfgs_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                            ms_info *info) {
  ms_status st = workspace(m, d, o->window);
  if (st == MS_OK) st = ms_fms_prepare(m, d, hs, o, info);
  if (st != MS_OK) return st;
  lbfgs_ctx c = {.m = m,
                 .d = d,
                 .w = d->lbfgs,
                 .hs = hs,
                 .n3 = 3 * m->nv,
                 .window = o->window,
                 .slots = o->window + 1,
                 .info = info};
  double obj, res = ms_objective_grad(m, d, d->xn, d->y, hs, c.w->grad[0], &obj);
  return ms_descend(d, cap, o, res, obj, lbfgs_iteration, &c, info);
}
