/* solvers.h: the solvers of g (Newton, FMS, L-BFGS, VBD) and the small dense solves they share.
 * Internal to the engine. */
#ifndef MSIM_SOLVERS_H
#define MSIM_SOLVERS_H

#include "msim.h"

/* dense.c: small dense solves */
int ms_spd3_step(const double H[9], const double grad[3], double dx[3]);
int ms_spd_solve(double *a, double *b, int c);
void ms_sym_clamp(double *a, int n);

/* solvers of g: on entry d->y holds y and d->xn the start point (fixed vertices at x_t in both);
 * d->x, d->vn, d->s and d->vb (the step's start state and BDF2's base) stay untouched. At most
 * cap iterations, stopping once |grad g| < o->tol when o->tol > 0; d->xn ends at the last
 * iterate. History entry k: |grad g| [N] and g [J] at iterate k (entry 0: the start point).
 * Fills info->iters, nhist, converged and its timings; results do not depend on m->nthread */
/* the line searches of the solvers of g: Armijo sufficient-decrease constant, the smallest
 * step tried, and the relative rounding allowance on g near a minimum (Hager and Zhang's
 * approximate Armijo condition) */
#define MS_ARMIJO 1e-4
#define MS_MIN_STEP 0x1p-30
#define MS_ROUNDING 1e-12

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
} ms_vertex;
double ms_vertex_step(const ms_vertex *c, int i);

/* lbfgs.c: L-BFGS on g with FMS's matrix as initial Hessian (Liu, Bouaziz and Kavan 2017) */
void ms_lbfgs_free(void *w);
/* vbd.c: vertex block descent (Chen et al. 2024) on g, Gauss-Seidel over a vertex colouring */
ms_status ms_vbd_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info);
void ms_vbd_free(void *w);

#endif
