/* contact.h: contact with planes and spheres, and Coulomb friction. Internal to the engine. */
#ifndef MSIM_CONTACT_H
#define MSIM_CONTACT_H

#include "msim.h"

/* contact.c: planes and spheres (penalty energy and its derivatives, projection) */
double ms_contact_point(const ms_model *m, const double *p, double *f);
double ms_contact_forces(const ms_model *m, const double *x, double *f);
int ms_contact_within(const ms_model *m, const double *p, double margin);
double ms_contact_normal(const ms_model *m, const double *p, double n[3]);
int ms_contact_hessian(const ms_model *m, const double *x, int i, double *blk);
void ms_contact_curvature(const ms_model *m, const double *x, int i, double *blk);
int ms_contact_path(const ms_model *m, const double *a, const double *p);
void ms_contact_nearest(const ms_model *m, const double *p, double out[3]);
void ms_contact_project(const ms_model *m, const double *ref, double *x, double *depth,
                        double *normal);

/* friction.c: Coulomb friction in the form each family of methods takes: a lagged potential
 * in g (the implicit schemes and their solvers), a velocity impulse after the step (the
 * explicit methods and linearised implicit Euler), positional static and velocity dynamic
 * friction (xpbd) */
void ms_friction_begin(const ms_model *m, ms_data *d, const double *anchor, double h);
/* eps_v: the creep speed a stick zone allows at most [m/s] (IPC's default) */
#define MS_CREEP_SPEED 1e-3
/* w F(y) [J], the mollified Coulomb potential of slip y [m] with stick zone eps [m], and its
 * secant stiffness w F'(y)/y [N/m] in *per */
double ms_friction_mollified(double w, double eps, double y, double *per);
double ms_friction_stiffness(const ms_model *m, const ms_data *d, int i);
double ms_friction_forces(const ms_model *m, const ms_data *d, const double *x, double *f);
double ms_friction_vertex(const ms_model *m, const ms_data *d, const double *p, int i, double *f,
                          double *blk);
void ms_friction_impulse(const ms_model *m, ms_data *d, double h);
void ms_friction_stick(const ms_model *m, const double *ref, double *x, const double *depth,
                       const double *normal, unsigned char *stuck);
void ms_friction_slide(const ms_model *m, double *v, const double *depth, const double *normal,
                       const unsigned char *stuck, double h);

#endif
