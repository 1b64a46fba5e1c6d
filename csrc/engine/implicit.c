/* implicit.c: Newton on g for the implicit schemes (implicit Euler, implicit midpoint, BDF2:
 * potential.c's ms_scheme sets their target and step), and linearised (Baraff-Witkin)
 * implicit Euler
 *
 * Both solve linear systems A z = b over the free vertices, with A of one shape:
 *
 *   A = blockdiag(V_i) + sum_s S_s + sum_p P_p
 *
 * (S_s on both ends' diagonal blocks, -S_s between them; P_p a self-contact pair's Hessian
 * less its diagonal blocks, which V_i holds: its blocks between the pair's four vertices)
 *
 * Newton on g(x) has V_i = (m_i / h^2 + shift) I + C_i, C_i the contact Hessian, and S_s the
 * spring Hessian block; the linearised step has V_i = (m_i + h^2 shift) I + h^2 C_i and
 * S_s = h^2 times the block. Fixed vertices
 * are not unknowns: vectors are (nv,3) with zeros on fixed vertices, CHOLMOD sees free ones.
 * The iterative solves (CG, block Jacobi), Newton's line search and its loop are numerics.c's.
 * On entry d->xn holds x and d->vn the damped velocity (ms_step sets both up).
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct ms_implicit {
  ms_chol *ch;       /* 3x3-block factor, built when a direct solve first needs it */
  double *vb;        /* (nv,9) vertex blocks V_i of A, row-major [kg/s^2 or kg] */
  double *blk;       /* (ns,9) spring blocks S_s, row-major */
  double *dinv;      /* (nv,9) inverse diagonal blocks of A (jacobi, cg) */
  double *r, *p, *q; /* (nv,3) solver vectors */
  double kscale;     /* the scale of the stiffness in A (build_system) */
  ms_buf link;       /* (nlink,2) int: the vertex pairs self-contact's pairs couple (fill_chol) */
  double *rhs;       /* (3 nv) right-hand side over free vertices for CHOLMOD */
  double *x1;        /* (nv,3) line-search trial point */
};

void ms_implicit_free(void *ws) {
  ms_implicit *w = ws;
  if (!w) return;
  ms_chol_free(w->ch);
  free(w->link.p);
  free(w->vb);
  free(w->blk);
  free(w->dinv);
  free(w->r);
  free(w->p);
  free(w->q);
  free(w->rhs);
  free(w->x1);
  free(w);
}

/* a complete workspace for m, or NULL when out of memory */
static ms_implicit *workspace_new(const ms_model *m) {
  size_t n = m->nv, ns = m->ns;
  ms_implicit *w = ms_alloc(1, sizeof(ms_implicit));
  if (!w) return NULL;
  w->vb = ms_alloc(9 * n, sizeof(double));
  w->blk = ms_alloc(9 * ns, sizeof(double));
  w->dinv = ms_alloc(9 * n, sizeof(double));
  w->r = ms_alloc(3 * n, sizeof(double));
  w->p = ms_alloc(3 * n, sizeof(double));
  w->q = ms_alloc(3 * n, sizeof(double));
  w->rhs = ms_alloc(3 * n, sizeof(double));
  w->x1 = ms_alloc(3 * n, sizeof(double));
  if (!w->vb || !w->blk || !w->dinv || !w->r || !w->p || !w->q || !w->rhs || !w->x1) {
    ms_implicit_free(w);
    return NULL;
  }
  return w;
}

/* the workspace of d, made on first use and published only when complete (nv and ns never
 * change for one ms_data) */
static ms_status workspace(const ms_model *m, ms_data *d, ms_implicit **out) {
  if (!d->implicit && !(d->implicit = workspace_new(m))) return MS_ENOMEM;
  *out = d->implicit;
  return MS_OK;
}

/* V_i = (mscale m_i + kscale shift) I + kscale (C_i + F_i) and S_s = kscale H_s(x) with the
 * spd treatment; F_i the secant stiffness of the step's friction at xf (friction.c; zero where
 * d->fr is not active); C_i holds the diagonal blocks of self-contact's pairs, whose
 * off-diagonal blocks (kscale times them) the factor takes from ms_self_hessians (fill_chol)
 * and products with A from ms_self_couple */
static ms_status build_system(const ms_model *m, const ms_data *d, const double *x,
                              const double *xf, ms_implicit *w, const ms_opt *o, double mscale,
                              double kscale) {
  double shift = o->spd == MS_SPD_SHIFT ? kscale * o->shift : 0.0;
  const double *sc = ms_self_active(m, d) ? d->sc->blk : NULL;
  ms_status st = sc ? ms_self_blocks(m, d, x, (ms_spd)o->spd, d->sc->blk) : MS_OK;
  if (st != MS_OK) return st;
  w->kscale = kscale;
  for (int i = 0; i < m->nv; i++) {
    double *v = w->vb + 9 * i;
    ms_contact_hessian(m, x, i, v);
    ms_friction_vertex(m, d, xf + 3 * i, i, NULL, v);
    for (int t = 0; t < 9 && sc; t++) v[t] += sc[9 * i + t];
    for (int t = 0; t < 9; t++) v[t] *= kscale;
    for (int t = 0; t < 3; t++) v[4 * t] += mscale * m->mass[i] + shift;
  }
  for (int s = 0; s < m->ns; s++) {
    double *b = w->blk + 9 * s;
    ms_spring_hessian(m, x, s, (ms_spd)o->spd, b);
    for (int t = 0; t < 9; t++) b[t] *= kscale;
  }
  return MS_OK;
}

/* out = A p; p is zero on fixed vertices and so is out */
static void apply(const ms_model *m, const ms_data *d, const ms_implicit *w, const double *p,
                  double *out) {
  for (int i = 0; i < m->nv; i++) {
    const double *v = w->vb + 9 * i, *pi = p + 3 * i;
    for (int t = 0; t < 3; t++)
      out[3 * i + t] =
          m->fixed[i] ? 0.0 : v[3 * t] * pi[0] + v[3 * t + 1] * pi[1] + v[3 * t + 2] * pi[2];
  }
  for (int s = 0; s < m->ns; s++) {
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    const double *b = w->blk + 9 * s;
    double e[3] = {p[3 * i] - p[3 * j], p[3 * i + 1] - p[3 * j + 1], p[3 * i + 2] - p[3 * j + 2]};
    for (int r = 0; r < 3; r++) {
      double t = b[3 * r] * e[0] + b[3 * r + 1] * e[1] + b[3 * r + 2] * e[2];
      if (!m->fixed[i]) out[3 * i + r] += t;
      if (!m->fixed[j]) out[3 * j + r] -= t;
    }
  }
  ms_self_couple(m, d, w->kscale, p, out);
}

/* A as the iterative solves apply it (ms_linear) */
typedef struct {
  const ms_model *m;
  const ms_data *d;
  const ms_implicit *w;
} operator_ctx;

static void apply_operator(const void *ctx, const double *p, double *out) {
  const operator_ctx *a = ctx;
  apply(a->m, a->d, a->w, p, out);
}

/* ---------------------------------------------------------------- direct solves */

/* copy A into CHOLMOD: the vertex and spring blocks, and the off-diagonal blocks of the
 * self-contact pairs' Hessians (their diagonal ones are in the vertex blocks). The pattern is
 * built on first use and again when the fixed set changed or a pair couples two vertices it
 * holds no block for (analysed once per such change, refactorised every iteration) */
static ms_status fill_chol(const ms_model *m, const ms_data *d, ms_implicit *w) {
  const double *hess;
  const int *vert;
  int npair = ms_self_hessians(m, d, &hess, &vert), nlink = ms_chol_links(&w->link, vert, npair);
  if (nlink < 0) return MS_ENOMEM;
  if (!ms_chol_current(w->ch, m) || !ms_chol_holds(w->ch, m, w->link.p, nlink)) {
    ms_chol_free(w->ch);
    w->ch = NULL;
    ms_status st = ms_chol_springs(&w->ch, m, 3, 0, w->link.p, nlink);
    if (st != MS_OK) return st;
  }
  ms_chol_zero(w->ch);
  for (int i = 0; i < m->nv; i++) ms_chol_add_vertex(w->ch, m, i, w->vb + 9 * i);
  for (int s = 0; s < m->ns; s++) ms_chol_add_spring(w->ch, m, s, w->blk + 9 * s);
  for (int c = 0; c < npair; c++)
    ms_chol_add_group(w->ch, m, vert + 4 * c, hess + 144 * (size_t)c, w->kscale, 0);
  return MS_OK;
}

/* z = A^-1 b through the factor; b and z are (nv,3), z is zero on fixed vertices */
static ms_status chol_solve(const ms_model *m, ms_implicit *w, const double *b, double *z) {
  for (int i = 0; i < m->nv; i++)
    if (m->dof[i] >= 0) memcpy(w->rhs + 3 * m->dof[i], b + 3 * i, 3 * sizeof(double));
  ms_status st = ms_chol_solve(w->ch, w->rhs, 1, 1);
  if (st != MS_OK) return st;
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) z[3 * i + t] = m->dof[i] >= 0 ? w->rhs[3 * m->dof[i] + t] : 0.0;
  return MS_OK;
}

/* assemble (timed), factorise (timed); info->vertex and info->axis say where A is not
 * positive definite or holds a non-finite value */
static ms_status factor(const ms_model *m, const ms_data *d, ms_implicit *w, ms_info *info) {
  double t0 = ms_clock();
  ms_status st = fill_chol(m, d, w);
  double t1 = ms_clock();
  if (st == MS_OK) st = ms_chol_factor(w->ch, &info->vertex, &info->axis);
  info->assemble += t1 - t0;
  info->factor += ms_clock() - t1;
  return st;
}

/* the blocks of Newton's matrix of g at x, M/h^2 + H(x), the spring and contact Hessian H
 * treated by spd (MS_SPD_NONE: exact, a sphere's lateral curvature included), into w */
static ms_status newton_blocks(const ms_model *m, const ms_data *d, ms_implicit *w, const double *x,
                               double h, ms_spd spd) {
  ms_opt o = {.spd = spd};
  ms_status st = build_system(m, d, x, x, w, &o, 1.0 / (h * h), 1.0);
  if (st != MS_OK) return st;
  for (int i = 0; i < m->nv && spd == MS_SPD_NONE && m->nsphere > 0; i++) {
    double blk[9];
    ms_contact_curvature(m, x, i, blk);
    for (int t = 0; t < 9; t++) w->vb[9 * i + t] += blk[t];
  }
  return MS_OK;
}

/* the adjoint's solves with Newton's matrix of g over the free vertices, through the factor
 * Newton keeps (its symbolic analysis reused, the values refactorised). ms_newton_factor
 * assembles the matrix at x with spd and factorises it (MS_ENOTPD with info->vertex and
 * info->axis where it is not positive definite); ms_newton_blocks assembles it without
 * factorising, for ms_newton_product out = A p, leaving the last factor in place for
 * ms_newton_apply z = A^-1 b. Vectors are (nv,3), zero on fixed vertices */
ms_status ms_newton_factor(const ms_model *m, ms_data *d, const double *x, double h, ms_spd spd,
                           ms_info *info) {
  ms_implicit *w;
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  if ((st = newton_blocks(m, d, w, x, h, spd)) != MS_OK) return st;
  return factor(m, d, w, info);
}

ms_status ms_newton_blocks(const ms_model *m, ms_data *d, const double *x, double h, ms_spd spd) {
  return newton_blocks(m, d, d->implicit, x, h, spd);
}

void ms_newton_product(const ms_model *m, const ms_data *d, const double *p, double *out) {
  apply(m, d, d->implicit, p, out);
}

ms_status ms_newton_apply(const ms_model *m, ms_data *d, const double *b, double *z) {
  return chol_solve(m, d->implicit, b, z);
}

/* ---------------------------------------------------------------- Newton on g */

/* what Newton's iterations share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  ms_implicit *w;
  double h;
  const ms_opt *o;
  ms_info *info;
  double obj, noise; /* line search: g at the iterate and its rounding allowance */
} newton_ctx;

/* line-search trial x1 = x + alpha p: it passes the Armijo test, or g's change drowns in its
 * rounding near the minimum */
static int newton_trial(void *ctx, double alpha, double bound) {
  newton_ctx *c = ctx;
  ms_implicit *w = c->w;
  for (int k = 0; k < 3 * c->m->nv; k++) w->x1[k] = c->d->xn[k] + alpha * w->p[k];
  double g1 = ms_objective(c->m, c->d, w->x1, c->d->y, c->h);
  return g1 <= c->obj + bound || fabs(g1 - c->obj) <= c->noise;
}

/* Newton iteration k: p = -(grad^2 g)^-1 grad g, then x += alpha p with alpha from the line
 * search (the shortest step when none passes) or 1 (ms_iteration_fn) */
static ms_status newton_iteration(void *ctx, int it, double *res, double *obj) {
  newton_ctx *c = ctx;
  const ms_model *m = c->m;
  ms_data *d = c->d;
  ms_implicit *w = c->w;
  int n3 = 3 * m->nv;
  double *x = d->xn;
  ms_status st = build_system(m, d, x, x, w, c->o, 1.0 / (c->h * c->h), 1.0);
  if (st == MS_OK) st = factor(m, d, w, c->info);
  if (st != MS_OK) return st;
  double t0 = ms_clock();
  for (int k = 0; k < n3; k++) d->f[k] = -d->g[k];
  st = chol_solve(m, w, d->f, w->p);
  c->info->solve += ms_clock() - t0;
  if (st != MS_OK) return st;

  // where self-contact's bounds cut every fraction of the step, it is cut per vertex instead
  // and halved until g falls, or the iterations stop
  if (ms_self_cap_step(m, d, x, w->p) == 0.0) {
    double g1;
    if (!ms_self_confined_step(m, d, x, *obj, w->p, c->h, w->x1, &g1)) return MS_STOPPED;
    memcpy(x, w->x1, sizeof(double) * n3);
    *res = ms_objective_grad(m, d, x, d->y, c->h, d->g, obj);
    return MS_OK;
  }

  // else the step within the bounds, optionally shortened until g decreases enough
  double alpha = 1.0;
  if (c->o->line_search) {
    c->obj = *obj, c->noise = MS_ROUNDING * fabs(*obj);
    alpha = ms_backtrack(newton_trial, c, ms_dot(n3, d->g, w->p), MS_MIN_STEP);
    if (alpha == 0) alpha = MS_MIN_STEP;
  }
  for (int k = 0; k < n3; k++) x[k] += alpha * w->p[k];
  *res = ms_objective_grad(m, d, x, d->y, c->h, d->g, obj);
  return MS_OK;
}

/* minimise g(x) = |x - y|_M^2 / (2 h^2) + E(x), y = d->y, by Newton from the start point in
 * d->xn (ms_minimize_fn); every start keeps fixed vertices at x_t, so they never move (p is zero
 * there). History: entry 0 at the start point, one entry per Newton iteration. */
ms_status ms_newton_minimize(const ms_model *m, ms_data *d, double h, int cap, const ms_opt *o,
                             ms_info *info) {
  ms_implicit *w;
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  newton_ctx c = {.m = m, .d = d, .w = w, .h = h, .o = o, .info = info};
  double obj, res = ms_objective_grad(m, d, d->xn, d->y, h, d->g, &obj);
  return ms_descend(d, cap, o, res, obj, newton_iteration, &c, info);
}

/* one step of an implicit scheme (ms_scheme): its target, friction and start point, the
 * chosen solver of g from there, then the scheme's positions and velocities */
static ms_status implicit_step(const ms_model *m, ms_data *d, ms_method method, double h,
                               const ms_opt *o, ms_info *info) {
  ms_scheme sc = ms_scheme_begin(m, d, method, h, o->start);
  ms_status st = ms_solvers[o->minimizer].minimize(m, d, sc.hs, ms_opt_iterations(o), o, info);
  if (st == MS_OK) ms_scheme_end(m, d, &sc);
  return st;
}

ms_status ms_implicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info) {
  return implicit_step(m, d, MS_IMPLICIT_EULER, h, o, info);
}

ms_status ms_implicit_midpoint(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                               ms_info *info) {
  return implicit_step(m, d, MS_IMPLICIT_MIDPOINT, h, o, info);
}

ms_status ms_bdf2(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info) {
  return implicit_step(m, d, MS_BDF2, h, o, info);
}

/* ---------------------------------------------------------------- iterative solves */

/* w->dinv = inverse diagonal blocks of A over free vertices; MS_ENOTPD when one is not
 * positive definite (info->vertex and info->axis say where) */
static ms_status diag_inverse(const ms_model *m, ms_implicit *w, ms_info *info) {
  memset(w->dinv, 0, sizeof(double) * 9 * m->nv);
  for (int s = 0; s < m->ns; s++)
    for (int e = 0; e < 2; e++) {
      double *acc = w->dinv + 9 * m->edge[2 * s + e];
      for (int t = 0; t < 9; t++) acc[t] += w->blk[9 * s + t];
    }
  for (int i = 0; i < m->nv; i++) {
    double blk[9];
    memcpy(blk, w->dinv + 9 * i, sizeof(blk));
    for (int t = 0; t < 9; t++) blk[t] += w->vb[9 * i + t];
    int fail = m->fixed[i] ? -1 : ms_spd3_inverse(blk, w->dinv + 9 * i);
    if (m->fixed[i]) memset(w->dinv + 9 * i, 0, sizeof(blk));
    if (fail >= 0) {
      info->vertex = i, info->axis = fail;
      return MS_ENOTPD;
    }
  }
  return MS_OK;
}

/* ---------------------------------------------------------------- linearised implicit */

/* one linear solve on velocities: (M - h^2 K) dv = h (f + h K v), K = -(spring Hessian)
 * at x_t with the spd treatment; v += dv, x = x_t + h v. This is one Newton step on implicit
 * Euler's g, so friction is its lagged potential (ms_scheme_begin sets it up), linearised by
 * its secant stiffness at the settled start (where each vertex in contact has slid or stuck
 * as Coulomb says): a force -K_f (x - x_t) across the contact normal, implicit in dv like the
 * springs */
ms_status ms_linearized_implicit(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                                 ms_info *info) {
  ms_implicit *w; /* options are in range: ms_step checked them */
  ms_status st = workspace(m, d, &w);
  if (st != MS_OK) return st;
  int n3 = 3 * m->nv;
  double t0 = ms_clock();
  ms_scheme_begin(m, d, MS_IMPLICIT_EULER, h, MS_START_SETTLED);
  if ((st = build_system(m, d, d->x, d->xn, w, o, 1.0, h * h)) != MS_OK) return st;

  // b = h f - h^2 H v = h f - (A - M) v, zero on fixed vertices
  ms_total_forces(m, d, d->x, d->f);
  apply(m, d, w, d->vn, w->q);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      d->y[k] = m->fixed[i] ? 0.0 : h * d->f[k] - w->q[k] + m->mass[i] * d->vn[k];
    }
  double *b = d->y, *dv = d->g;

  // solve into dv
  if (o->solver == MS_SOLVE_DIRECT) {
    info->assemble += ms_clock() - t0;
    st = factor(m, d, w, info);
    double t1 = ms_clock();
    if (st == MS_OK) st = chol_solve(m, w, b, dv);
    info->solve += ms_clock() - t1;
    if (st != MS_OK) return st;
    apply(m, d, w, dv, w->r);
    for (int k = 0; k < n3; k++) w->r[k] = b[k] - w->r[k];
    double bnorm = sqrt(ms_dot(n3, b, b));
    ms_hist(d, 0, bnorm > 0 ? 1.0 : 0.0, 0.0);
    ms_linear_record(d, n3, 1, b, dv, w->r, bnorm);
    info->iters = 1, info->nhist = 2, info->converged = 1;
  } else {
    operator_ctx op = {m, d, w};
    ms_linear a = {.nv = m->nv,
                   .apply = apply_operator,
                   .ctx = &op,
                   .dinv = w->dinv,
                   .r = w->r,
                   .p = w->p,
                   .q = w->q};
    st = diag_inverse(m, w, info);
    double t1 = ms_clock();
    info->assemble += t1 - t0;
    if (st == MS_OK)
      st = ms_linear_iterate(&a, d, o->solver == MS_SOLVE_CG, o->iterations, o->tol, b, dv, info);
    info->solve += ms_clock() - t1;
    if (st != MS_OK) return st;
  }
  for (int k = 0; k < n3; k++) {
    d->vn[k] += dv[k];
    d->xn[k] = d->x[k] + h * d->vn[k];
  }
  return MS_OK;
}
