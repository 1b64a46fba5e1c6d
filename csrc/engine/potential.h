/* potential.h: the implicit schemes' incremental potential g and its step as a minimisation.
 * Internal to the engine. */
#ifndef MSIM_POTENTIAL_H
#define MSIM_POTENTIAL_H

#include "msim.h"

/* potential.c: an implicit scheme's step as the minimisation of g with step hs and target y:
 * implicit Euler (hs = h), implicit midpoint (the midpoint z, hs = h/2) and BDF2 (hs = 2h/3,
 * built from two states; implicit Euler without a history of step h). ms_scheme_begin writes
 * y into d->y and the start point into d->xn; once d->xn holds g's minimiser,
 * ms_scheme_end turns it into the step's positions and velocities (xn, vn). */
typedef struct {
  ms_method method; /* MS_IMPLICIT_EULER, MS_IMPLICIT_MIDPOINT or MS_BDF2 */
  double h;         /* the step [s] */
  double hs;        /* g's effective step h' [s] */
  const double *xb; /* base point: y = xb + hs vb + hs^2 a [m] */
} ms_scheme;
ms_scheme ms_scheme_begin(const ms_model *m, ms_data *d, ms_method method, double h, int start);
void ms_scheme_end(const ms_model *m, ms_data *d, const ms_scheme *sc);

/* potential.c: the incremental potential g(x) = |x - y|_M^2 / (2 h^2) + E(x) + D(x), E the
 * spring and contact energy, D the step's lagged friction (d->fr) */
void ms_inertial_target(const ms_model *m, const ms_data *d, double h, double *y);
double ms_objective(const ms_model *m, const ms_data *d, const double *x, const double *y,
                    double h);
double ms_objective_grad(const ms_model *m, ms_data *d, const double *x, const double *y, double h,
                         double *grad, double *obj);
double ms_objective_finish(const ms_model *m, const ms_data *d, const double *x, const double *y,
                           double h, double *grad, double spring, double *obj);

#endif
