/* spring.c: spring and gravity energies and forces
 *
 * The force passes split the springs' work in two: ms_spring_coefs computes one coefficient
 * per spring from its length (the square root and division, vectorised), ms_spring_gather
 * sums c_s (x_v - x_w) over the springs at each vertex (no scatter, so no write conflicts).
 * Both run over fixed blocks, in parallel when m->nthread > 1; every output element is
 * written by one block and block sums are added in block order, so the result is the same
 * for any thread count.
 */
#include <math.h>
#include <string.h>

#include "engine.h"

int ms_spring_blocks(int ns) {
  return (ns + MS_SBLOCK - 1) / MS_SBLOCK;
}

/* E = sum_s k_s/2 (|x_i - x_j| - r_s)^2 [J] */
double ms_spring_energy(const ms_model *m, const double *x) {
  double e = 0;
  for (int s = 0; s < m->ns; s++) {
    const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    double stretch = sqrt(dx * dx + dy * dy + dz * dz) - m->rest[s];
    e += 0.5 * m->k[s] * stretch * stretch;
  }
  return e;
}

/* l2[s] = |x_i - x_j|^2 for s in [s0, s1) */
static void squared_lengths(const ms_model *m, const double *restrict x, int s0, int s1,
                            double *restrict l2) {
  const unsigned *restrict edge = (const unsigned *)m->edge; /* no sign extensions */
  for (int s = s0; s < s1; s++) {
    const double *a = x + 3 * (size_t)edge[2 * s], *b = x + 3 * (size_t)edge[2 * s + 1];
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    l2[s] = dx * dx + dy * dy + dz * dz;
  }
}

/* in place fc[s] = l^2 -> k (r/l - 1); where given, rc[s] = rscale k r / l and es[s] the
 * spring's energy k/2 (l - r)^2 [J] */
MS_CLONES static void coefs(const ms_model *m, int s0, int s1, double *restrict fc,
                            double *restrict rc, double rscale, double *restrict es) {
  const double *restrict k = m->k, *restrict rest = m->rest;
  for (int s = s0; s < s1; s++) {
    double l = sqrt(fc[s]), ratio = rest[s] / (l > MS_TINY ? l : MS_TINY), stretch = l - rest[s];
    fc[s] = k[s] * (ratio - 1.0);
    if (rc) rc[s] = rscale * k[s] * ratio;
    if (es) es[s] = 0.5 * k[s] * stretch * stretch;
  }
}

/* sum of a[s0 .. s1) in four interleaved lanes: a fixed order without one long add chain */
static double lane_sum(const double *a, int s0, int s1) {
  double l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  int s = s0;
  for (; s + 4 <= s1; s += 4) l0 += a[s], l1 += a[s + 1], l2 += a[s + 2], l3 += a[s + 3];
  for (; s < s1; s++) l0 += a[s];
  return (l0 + l1) + (l2 + l3);
}

/* what the blocks of one coefficient or gather pass share */
typedef struct {
  const ms_model *m;
  const double *x;
  const double *c, *c2; /* gather: coefficients */
  double *fc, *rc, *es, *eblk, rscale;
  double *out, *out2; /* gather: outputs */
} pass;

static void coef_block(void *ctx, int s0, int s1) {
  const pass *p = ctx;
  squared_lengths(p->m, p->x, s0, s1, p->fc);
  coefs(p->m, s0, s1, p->fc, p->rc, p->rscale, p->es);
  if (p->es) p->eblk[s0 / MS_SBLOCK] = lane_sum(p->es, s0, s1);
}

/* fc = force coefficients k (r/l - 1) at x and, where rc is given, rc = rscale k r / l (FMS's
 * projected spring d_s = r (x_i - x_j)/l, weighted); returns the spring energy [J] when es (ns
 * doubles) and eblk (ms_spring_blocks(ns) doubles) are given as scratch, else 0 */
double ms_spring_coefs(const ms_model *m, const double *x, double *fc, double *rc, double rscale,
                       double *es, double *eblk) {
  pass p = {.m = m, .x = x, .fc = fc, .rc = rc, .rscale = rscale, .es = es, .eblk = eblk};
  ms_blocks(m, m->ns, MS_SBLOCK, coef_block, &p);
  double e = 0;
  for (int b = 0; es && b < ms_spring_blocks(m->ns); b++) e += eblk[b];
  return e;
}

/* out_v = sum over the springs s at v of c_s (x_v - x_w), w the other end, for v in [v0, v1);
 * with two, also out2 from c2 in the same pass */
static inline void gather(const ms_model *m, const double *restrict x, int v0, int v1,
                          const double *restrict c, double *restrict out, const double *restrict c2,
                          double *restrict out2, int two) {
  const int *restrict start = m->adj_start;
  for (int v = v0; v < v1; v++) {
    const double *a = x + 3 * v;
    double s[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
    // walk the (other end, spring) pairs by pointer, indices unsigned: no sign extensions
    const unsigned *pair = (const unsigned *)m->adj + 2 * (size_t)start[v];
    const unsigned *end = (const unsigned *)m->adj + 2 * (size_t)start[v + 1];
    for (; pair < end; pair += 2) {
      const double *b = x + 3 * (size_t)pair[0];
      double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]}, cs = c[pair[1]];
      double cs2 = two ? c2[pair[1]] : 0.0;
      for (int t = 0; t < 3; t++) {
        s[t] += cs * d[t];
        if (two) s2[t] += cs2 * d[t];
      }
    }
    for (int t = 0; t < 3; t++) {
      out[3 * v + t] = s[t];
      if (two) out2[3 * v + t] = s2[t];
    }
  }
}

MS_CLONES static void gather_block(void *ctx, int v0, int v1) {
  const pass *p = ctx;
  if (p->c2)
    gather(p->m, p->x, v0, v1, p->c, p->out, p->c2, p->out2, 1);
  else
    gather(p->m, p->x, v0, v1, p->c, p->out, NULL, NULL, 0);
}

/* four doubles in one register: a vertex's x, y, z and a lane that is never used */
typedef double xyzw __attribute__((vector_size(32)));

/* the 4 doubles from p on (the last one unused: p's array must extend one double past its
 * last vertex) */
static inline xyzw load_xyzw(const double *p) {
  xyzw r;
  memcpy(&r, p, sizeof(r));
  return r;
}

/* ms_spring_gather's out for the vertices [v0, v1) only, for a block of a caller's vertex
 * pass, on positions x readable one double past their end (ms_data's position arrays are).
 * Each spring end is one vector subtraction, multiplication and addition on (x, y, z, -), and
 * even and odd ends go to two sums added at the end: a single sum would wait on its
 * addition's latency at every end. Per component that is another order of the same terms as
 * ms_spring_gather's, the same for any thread count. */
MS_CLONES void ms_spring_gather_range(const ms_model *m, const double *x, const double *c,
                                      double *out, int v0, int v1) {
  const int *restrict start = m->adj_start;
  for (int v = v0; v < v1; v++) {
    xyzw a = load_xyzw(x + 3 * (size_t)v), even = {0, 0, 0, 0}, odd = {0, 0, 0, 0};
    const unsigned *pair = (const unsigned *)m->adj + 2 * (size_t)start[v];
    const unsigned *end = (const unsigned *)m->adj + 2 * (size_t)start[v + 1];
    for (; pair + 2 < end; pair += 4) {
      even += c[pair[1]] * (a - load_xyzw(x + 3 * (size_t)pair[0]));
      odd += c[pair[3]] * (a - load_xyzw(x + 3 * (size_t)pair[2]));
    }
    if (pair < end) even += c[pair[1]] * (a - load_xyzw(x + 3 * (size_t)pair[0]));
    xyzw sum = even + odd;
    for (int t = 0; t < 3; t++) out[3 * v + t] = sum[t];
  }
}

/* out = sum over each vertex's springs of c_s (x_v - x_w), (nv,3); and out2 from c2 when given */
void ms_spring_gather(const ms_model *m, const double *x, const double *c, double *out,
                      const double *c2, double *out2) {
  pass p = {.m = m, .x = x, .c = c, .out = out, .c2 = c2, .out2 = out2};
  ms_blocks(m, m->nv, MS_VBLOCK, gather_block, &p);
}

/* f = -grad E at x (d's coefficient scratch); returns E [J] when energy != 0, else 0 */
double ms_spring_forces(const ms_model *m, ms_data *d, const double *x, double *f, int energy) {
  double e = ms_spring_coefs(m, x, d->fc, NULL, 0.0, energy ? d->es : NULL, d->eblk);
  ms_spring_gather(m, x, d->fc, f, NULL, NULL);
  return e;
}

/* f = spring, gravity, external (free vertices) and contact forces at x [N] */
void ms_total_forces(const ms_model *m, ms_data *d, const double *x, double *f) {
  ms_spring_forces(m, d, x, f, 0);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++)
      f[3 * i + t] += m->mass[i] * m->gravity[t] + (m->fixed[i] ? 0.0 : d->fext[3 * i + t]);
  ms_contact_forces(m, x, f);
  ms_self_forces(m, d, x, f, 1.0);
}

/* f = the forces on the state (ms_total_forces at d->x, with the self-contact pairs there) */
ms_status ms_forces(const ms_model *m, ms_data *d, double *f) {
  ms_status st = ms_self_at(m, d);
  if (st != MS_OK) return st;
  ms_total_forces(m, d, d->x, f);
  ms_self_end(d);
  return MS_OK;
}

/* kinetic 1/2 m v^2, spring, gravity -m g.x, contact penalty and self-contact energies of the
 * state; the external forces have no potential here (they need not be conservative) */
ms_status ms_energy(const ms_model *m, ms_data *d, ms_energies *out) {
  ms_energies e = {.spring = ms_spring_energy(m, d->x),
                   .collision = ms_contact_forces(m, d->x, NULL)};
  ms_status st = ms_self_at(m, d);
  if (st != MS_OK) return st;
  e.self_contact = ms_self_forces(m, d, d->x, NULL, 1.0);
  ms_self_end(d);
  for (int i = 0; i < m->nv; i++) {
    const double *x = d->x + 3 * i, *v = d->v + 3 * i;
    e.kinetic += 0.5 * m->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    e.gravity -= m->mass[i] * (m->gravity[0] * x[0] + m->gravity[1] * x[1] + m->gravity[2] * x[2]);
  }
  *out = e;
  return MS_OK;
}

/* 3x3 Hessian block of spring s at x, row-major [N/m] (ms_spring_block) */
void ms_spring_hessian(const ms_model *m, const double *x, int s, ms_spd spd, double blk[9]) {
  const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  ms_spring_block(d, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), m->k[s], m->rest[s], spd, blk);
}
