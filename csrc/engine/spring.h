/* spring.h: springs: energies, forces, Hessian blocks, and the per-vertex helpers every method
 * uses. Internal to the engine. */
#ifndef MSIM_SPRING_H
#define MSIM_SPRING_H

#include "msim.h"

/* spring.c: energies and forces. The passes over springs and vertices run over fixed blocks
 * whose results are combined in block order, so m->nthread changes their speed, never their
 * result. Spring s pulls its end i by c_s (x_i - x_j) with c_s = k (r/l - 1). */
#define MS_SBLOCK 2048 /* springs per block */
#define MS_VBLOCK 256  /* vertices per block */
/* a spring shorter than this counts as this long [m]: its x_i - x_j is ~0, so it pushes
 * nothing, and its force coefficient stays finite */
#define MS_TINY 1e-150
int ms_spring_blocks(int ns);
double ms_spring_energy(const ms_model *m, const double *x);
double ms_spring_coefs(const ms_model *m, const double *x, double *fc, double *rc, double rscale,
                       double *es, double *eblk);
void ms_spring_gather(const ms_model *m, const double *x, const double *c, double *out,
                      const double *c2, double *out2);
void ms_spring_gather_range(const ms_model *m, const double *x, const double *c, double *out,
                            int v0, int v1);
double ms_spring_forces(const ms_model *m, ms_data *d, const double *x, double *f, int energy);
void ms_total_forces(const ms_model *m, ms_data *d, const double *x, double *f);

/* 3x3 Hessian block, row-major [N/m], of a spring of stiffness k and rest length r whose ends
 * differ by d, of length len: k uu^T + k (1 - r/len)(I - uu^T), u = d/len. Its eigenvalues are
 * k (along u) and k (1 - r/len) twice (across), so projecting them onto [0, inf)
 * (MS_SPD_PROJECT) is the same as clamping (1 - r/len) at 0 (MS_SPD_CLAMP); the other variants
 * return the exact block. A spring of zero length has no direction: k I. */
static inline void ms_spring_block(const double d[3], double len, double k, double r, ms_spd spd,
                                   double blk[9]) {
  double across = len > 0 ? 1.0 - r / len : 1.0, u[3];
  if ((spd == MS_SPD_CLAMP || spd == MS_SPD_PROJECT) && across < 0) across = 0;
  for (int t = 0; t < 3; t++) u[t] = len > 0 ? d[t] / len : 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      blk[3 * i + j] = k * ((1.0 - across) * u[i] * u[j] + (i == j ? across : 0.0));
}

/* g + f_ext / m from the values: gravity g, inverse mass im and external force fext, for a
 * loop that holds them in locals [m/s^2] */
static inline double ms_accel_of(double g, double im, double fext) {
  return g + im * fext;
}

/* acceleration of vertex i along axis t from gravity and its external force [m/s^2]; the
 * external force moves free vertices only (imass is 0 on fixed ones) */
static inline double ms_accel(const ms_model *m, const ms_data *d, int i, int t) {
  return ms_accel_of(m->gravity[t], m->imass[i], d->fext[3 * i + t]);
}

/* step.c's start of every step for vertex i: xn = x and vn = decay v (decay = exp(-damping
 * h)), a fixed vertex at rest; methods whose first pass does it themselves skip ms_step's */
static inline void ms_prepare_vertex(const ms_model *m, ms_data *d, double decay, int i) {
  for (int t = 0; t < 3; t++) {
    d->xn[3 * i + t] = d->x[3 * i + t];
    d->vn[3 * i + t] = m->fixed[i] ? 0.0 : decay * d->v[3 * i + t];
  }
}

/* a.b over n entries */
static inline double ms_dot(int n, const double *a, const double *b) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}

#endif
