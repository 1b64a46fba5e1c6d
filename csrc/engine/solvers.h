/* solvers.h: the solvers of g (Newton, FMS, L-BFGS, VBD) and the numerics they share
 * (numerics.c). Internal to the engine. */
#ifndef MSIM_SOLVERS_H
#define MSIM_SOLVERS_H

#include "msim.h"

/* the line searches of the solvers of g: Armijo sufficient-decrease constant, the smallest
 * step tried, and the relative rounding allowance on g near a minimum (Hager and Zhang's
 * approximate Armijo condition) */
#define MS_ARMIJO 1e-4
#define MS_MIN_STEP 0x1p-30
#define MS_ROUNDING 1e-12

/* numerics.c: the numerics the solvers share (see the top of the file). Small dense solves */
int ms_spd3_step(const double H[9], const double grad[3], double dx[3]);
int ms_spd3_inverse(const double *D, double *inv);
int ms_spd_solve(double *a, double *b, int c);
void ms_sym_clamp(double *a, int n);

/* numerics.c: Chebyshev semi-iteration weights */
double ms_chebyshev_omega(int n, int delay, double rho, double omega);

/* backtracking line search (inline: a vertex's step runs it per vertex); trial(ctx, alpha, bound)
 * tries the step alpha, where g's change must not exceed bound = MS_ARMIJO alpha grad g.p: 1 it
 * passes, 0 it does not, -1 give up (the step no longer moves x) */
typedef int (*ms_trial_fn)(void *ctx, double alpha, double bound);

/* the first alpha = 1, 1/2, ... >= min_step that trial passes with the Armijo bound
 * MS_ARMIJO alpha slope on g's change (slope = grad g.p < 0); 0 when none passes or trial
 * gives up */
static inline double ms_backtrack(ms_trial_fn trial, void *ctx, double slope, double min_step) {
  for (double alpha = 1.0; alpha >= min_step; alpha *= 0.5) {
    int pass = trial(ctx, alpha, MS_ARMIJO * alpha * slope);
    if (pass) return pass > 0 ? alpha : 0.0;
  }
  return 0.0;
}

/* numerics.c: the loop of the solvers of g; an iteration (ms_iteration_fn) returns MS_OK,
 * an error, or MS_STOPPED when it could make no progress (never returned by the engine) */
#define MS_STOPPED ((ms_status)-1)
typedef ms_status (*ms_iteration_fn)(void *ctx, int k, double *res, double *obj);
ms_status ms_descend(ms_data *d, int cap, const ms_opt *o, double res, double obj,
                     ms_iteration_fn step, void *ctx, ms_info *info);

/* numerics.c: iterative solves of A z = b on (nv,3) vectors, zero on fixed vertices */
typedef struct {
  int nv;
  void (*apply)(const void *ctx, const double *p, double *out); /* out = A p */
  const void *ctx;
  const double *dinv; /* (nv,9) inverse diagonal blocks of A, zero on fixed vertices */
  double *r, *p, *q;  /* (nv,3) scratch */
} ms_linear;
ms_status ms_linear_iterate(const ms_linear *a, ms_data *d, int cg, int cap, double tol,
                            const double *b, double *z, ms_info *info);
double ms_linear_record(ms_data *d, int n3, int i, const double *b, const double *z,
                        const double *r, double bnorm);

/* solvers of g: on entry d->y holds y and d->xn the start point (fixed vertices at x_t in both);
 * d->x, d->vn, d->s and d->vb (the step's start state and BDF2's base) stay untouched. At most
 * cap iterations, stopping once |grad g| < o->tol when o->tol > 0; d->xn ends at the last
 * iterate. History entry k: |grad g| [N] and g [J] at iterate k (entry 0: the start point).
 * Fills info->iters, nhist, converged and its timings; results do not depend on m->nthread */
ms_status ms_newton_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                             ms_info *info);
ms_status ms_fms_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info);
ms_status ms_lbfgs_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                            ms_info *info);

/* vertex.c: one vertex's share G_i of g (its neighbours held) and a safeguarded Newton step on
 * it */
typedef struct {
  const ms_model *m;
  const ms_data *d; /* the step's friction (d->fr) */
  double *x;        /* (nv,3) the iterate, updated in place */
  const double *y;  /* (nv,3) the target */
  double hs2;       /* 1/hs^2 [1/s^2] */
  int self_contact; /* 1: G_i holds the vertex's self-contact pairs (VBD); the settled start
                       leaves them to the solver, whose iterates they would slow */
} ms_vertex;
double ms_vertex_step(const ms_vertex *c, int i);

/* lbfgs.c: L-BFGS on g with FMS's matrix as initial Hessian (Liu, Bouaziz and Kavan 2017) */
void ms_lbfgs_free(void *w);
/* vbd.c: vertex block descent (Chen et al. 2024) on g, Gauss-Seidel over a vertex colouring */
ms_status ms_vbd_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info);
void ms_vbd_free(void *w);

#endif
