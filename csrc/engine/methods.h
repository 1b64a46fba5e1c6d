/* methods.h: the integrators' step functions and workspaces, and what the steps share. Internal to
 * the engine. */
#ifndef MSIM_METHODS_H
#define MSIM_METHODS_H

#include "msim.h"

/* explicit.c: explicit and symplectic Euler, classical Runge-Kutta, velocity Verlet */
ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info);
ms_status ms_symplectic_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              ms_info *info);
ms_status ms_rk4(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_velocity_verlet(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                             ms_info *info);

/* implicit.c: implicit Euler, implicit midpoint and BDF2 by any solver of g; linearised
 * implicit Euler; Newton's matrix of g factorised, applied and solved with (for the adjoint) */
ms_status ms_implicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info);
ms_status ms_implicit_midpoint(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                               ms_info *info);
ms_status ms_bdf2(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_linearized_implicit(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                                 ms_info *info);
void ms_implicit_free(void *w);
ms_status ms_newton_factor(const ms_model *m, ms_data *d, const double *x, double h, ms_spd spd,
                           ms_info *info);
ms_status ms_newton_blocks(const ms_model *m, ms_data *d, const double *x, double h, ms_spd spd);
void ms_newton_product(const ms_model *m, const ms_data *d, const double *p, double *out);
ms_status ms_newton_apply(const ms_model *m, ms_data *d, const double *b, double *z);
/* fms.c: fast mass-spring (Liu 2013) with Chebyshev or Anderson acceleration, as the fms method
 * and as a solver of g; ms_fms_prepare makes the prefactored matrix A = M + hs^2 L (+ contact
 * and pin penalties, + hs^2 B for self-contact's pairs) current for this step, ms_fms_apply_inverse
 * z = A^-1 r ((nv,3), zero on fixed vertices; r and z may alias) */
ms_status ms_fms(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_fms_prepare(const ms_model *m, ms_data *d, double hs, const ms_opt *o, ms_info *info);
ms_status ms_fms_apply_inverse(const ms_model *m, ms_data *d, const double *r, double *z);
void ms_fms_free(void *w);

/* unroll.c: the adjoint of an FMS step with no tol (fms, or implicit Euler with solver fms),
 * its K plain iterations reversed with the same factor: out's x, k, rest, mass and fext, and
 * vq's adjoint into vqb ((nv,3)); out's arrays zeroed but x (= ax) on entry.
 * ms_unroll_refusal: why it is not here, or NULL */
const char *ms_unroll_refusal(const ms_model *m, const ms_opt *o);
ms_status ms_fms_unroll_vjp(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            const ms_adj_step *s, const double *ax, const double *av, double *vqb,
                            ms_adj_out *out, ms_info *info);

/* xpbd.c: extended position-based dynamics (Macklin 2016) on spring constraints */
ms_status ms_xpbd(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
void ms_xpbd_free(void *w);

/* step.c: what the methods share: interrupt polls and the divergence check */
int ms_interrupted(ms_data *d);
void ms_check_vertices(const ms_data *d, int lo, int hi, _Atomic int *bad);

#endif
