/* adjoint.c: the vector-Jacobian product of one step, the discrete adjoint of a run
 *
 * A step maps the state (x0, v0) and the parameters p = (k, r, m, f_ext, c) (stiffness and
 * rest length per spring, mass per vertex, external forces, damping rate) to (x1, v1). Given
 * the adjoints xb1 = dL/dx1 and vb1 = dL/dv1 of a loss L, ms_step_vjp returns the adjoints
 * xb0, vb0 of the step's start and pb of the parameters: the transpose of the step's Jacobian
 * applied to (xb1, vb1), reverse accumulation one step at a time (the discrete adjoint). On
 * free vertices, with q = exp(-c h) the damping's decay, vq = q v0, and
 *
 *   a(x) = M^-1 (f(x) + f_ext) + g,   f = -grad E,   E = sum_s k_s/2 (|x_i - x_j| - r_s)^2
 *                                                          + sum_i kc/2 phi_i(x_i)^2,
 *
 * the springs' energy and the contact penalty (phi_i > 0: vertex i's depth in a plane or a
 * sphere, contact.c). E is smooth except where a vertex meets a collider (phi_i = 0, where its
 * Hessian jumps): the gradient is that of the run as it went, exact away from those instants.
 * Friction (a velocity rule or a lagged potential) and self-contact (a projection) are not
 * differentiated: ms_adjoint_refusal names them.
 *
 * the explicit methods and their transposes are (J_a the Jacobian of a over x and p, |x its
 * x-part; the stage points are recomputed from x0, v0):
 *
 *   symplectic Euler  v1 = vq + h a(x0), x1 = x0 + h v1:
 *     u = vb1 + h xb1,   xb0 = xb1 + J_a(x0)^T (h u),   vqb = u
 *   explicit Euler    v1 = vq + h a(x0), x1 = x0 + h vq:
 *     xb0 = xb1 + J_a(x0)^T (h vb1),   vqb = vb1 + h xb1
 *   velocity Verlet   v' = vq + (h/2) a(x0), x1 = x0 + h v', v1 = v' + (h/2) a(x1):
 *     xt = xb1 + J_a(x1)^T ((h/2) vb1),   u = vb1 + h xt,   xb0 = xt + J_a(x0)^T ((h/2) u),
 *     vqb = u
 *   classical Runge-Kutta, stages xa = x0, va = vq; xb = x0 + (h/2) va, vb = vq + (h/2) a1;
 *   xc = x0 + (h/2) vb, vc = vq + (h/2) a2; xd = x0 + h vc, vd = vq + h a3 (a1..a4 = a at
 *   xa..xd); x1 = x0 + h/6 (va + 2 vb + 2 vc + vd), v1 = vq + h/6 (a1 + 2 a2 + 2 a3 + a4):
 *     a4b = h/6 vb1                     vcb = 2h/6 xb1 + h J_a(xd)^T a4b|x
 *     a2b = 2h/6 vb1 + (h/2) vcb        a3b = 2h/6 vb1 + h^2/6 xb1
 *     vbb = 2h/6 xb1 + (h/2) J_a(xc)^T a3b|x     a1b = h/6 vb1 + (h/2) vbb
 *     xb0 = xb1 + sum_s J_a(xs)^T asb|x,   vqb = vb1 + 2h/6 xb1 + vcb + vbb + (h/2) J_a(xb)^T a2b|x
 *
 * and every method ends with vb0 = q vqb, cb = -h vq.vqb. J_a(x)^T z, with w = M^-1 z, is one
 * Hessian-vector product: x: -H(x) w (H = grad^2 E, exact, a sphere's lateral curvature
 * included), and per spring s = (i, j) with
 * d = x_i - x_j, l = |d|: k_s: (r_s/l - 1) d.(w_i - w_j), r_s: (k_s/l) d.(w_i - w_j); per
 * vertex m_i: -w_i.(f_i + f_ext,i)/m_i, f_ext,i: w_i.
 *
 * Implicit Euler solved to tolerance, by any solver (the fms method is implicit Euler solved by
 * local-global iterations; with a fixed iteration count and no tol they are unrolled instead,
 * unroll.c, as are implicit Euler's with solver fms): x1 minimises
 * g(x) = |x - y|_M^2 / (2 h^2) + E(x), y = x0 + h vq + h^2 (g + M^-1 f_ext), so
 * G(x1, p) = M (x1 - y)/h^2 + grad E(x1) = 0 on free vertices, and v1 = (x1 - x0)/h. The
 * implicit function theorem gives dx1/dp = -A^-1 dG/dp, A = M/h^2 + H(x1) the exact Hessian
 * of g (as in DiffPD, Du et al. 2021), so one solve
 *
 *   A lam = xb1 + vb1/h
 *
 * gives pb = -lam^T dG/dp: y's adjoint yb = M lam/h^2, xb0 = yb - vb1/h, vqb = h yb,
 * f_ext: lam, m_i: -lam_i.((x1 - y)_i/h^2 + f_ext,i/m_i), the springs' k and r as above with
 * w = lam. Implicit midpoint is the same with g's unknown the midpoint z = (x0 + x1)/2 and
 * step h/2 (y = x0 + (h/2) vq + (h/2)^2 (g + M^-1 f_ext)), x1 = 2z - x0 and
 * v1 = 4 (z - x0)/h - vq: A lam = 2 xb1 + 4 vb1/h, xb0 = yb - xb1 - 4 vb1/h,
 * vqb = (h/2) yb - vb1. BDF2 with a history (xp, vp one step h back; without one its step is
 * implicit Euler's) minimises g with step h' = 2h/3 and y = xb + h' vb + h'^2 (g + M^-1 f_ext)
 * from xb = (4 x0 - xp)/3 and vb = (4 vq - q^2 vp)/3, x1 = z, v1 = (z - xb)/h': A lam = xb1 +
 * vb1/h', xbb = yb - vb1/h' gives xb0 = 4 xbb/3 and xpb = -xbb/3, vbb = h' yb gives
 * vb0 = 4 q vbb/3 and vpb = -q^2 vbb/3. A is refactorised with the symbolic analysis Newton
 * keeps (implicit.c). The theorem needs A nonsingular, not positive definite: where the exact
 * A is indefinite (a saddle of g, or a step stopped short of a minimum) A lam = rhs is solved
 * by MINRES preconditioned by the clamped, positive definite factor; where that fails too (A
 * singular: the solution is not an isolated stationary point) the gradient is refused
 * (MS_ENOTPD) rather than made up.
 *
 * Fixed vertices keep x1 = x0 and v1 = 0: their xb0 is xb1 plus the pull -H w of their springs
 * to free vertices, their vb0 is 0, and their masses and external forces have no adjoint.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* the indefinite solve's relative residual, and the iterations it adds to twice the unknowns */
#define MS_ADJ_RTOL 1e-13
#define MS_ADJ_CAP 100

/* xb -= H(x) w (and xb2 -= c2 H(x) w where xb2 is given), and each spring's k and r
 * adjoints, for the force adjoint w (nv,3): sum_s c_s (x_i - x_j).(w_i - w_j) with
 * c_s = k_s (r_s/l - 1) differentiated. Spring s's block of H applied to dw = w_i - w_j is
 * k (1 - a) d (d.dw)/l^2 + k a dw, a = 1 - r/l (ms_spring_block, without building it; a
 * spring of zero length: k dw) */
static void springs_vjp(const ms_model *m, const double *x, const double *w, double *xb,
                        double *xb2, double c2, ms_adj_out *out) {
  for (int s = 0; s < m->ns; s++) {
    int i = m->edge[2 * s], j = m->edge[2 * s + 1];
    double d[3], dw[3], dot = 0;
    for (int t = 0; t < 3; t++) {
      d[t] = x[3 * i + t] - x[3 * j + t];
      dw[t] = w[3 * i + t] - w[3 * j + t];
      dot += d[t] * dw[t];
    }
    double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]),
           il = 1.0 / (l > MS_TINY ? l : MS_TINY), k = m->k[s], r = m->rest[s];
    out->k[s] += (r * il - 1.0) * dot;
    out->rest[s] += k * il * dot;
    double across = l > 0 ? k * (1.0 - r * il) : k, along = l > 0 ? k * r * il * il * il * dot : 0;
    for (int t = 0; t < 3; t++) {
      double hw = along * d[t] + across * dw[t];
      xb[3 * i + t] -= hw;
      xb[3 * j + t] += hw;
      if (!xb2) continue;
      xb2[3 * i + t] -= c2 * hw;
      xb2[3 * j + t] += c2 * hw;
    }
  }
}

/* xb -= Hc(x) w (and xb2 -= c2 Hc(x) w where given), Hc the exact Hessian of the contact
 * penalty, one 3x3 block per free vertex in contact */
static void contact_vjp(const ms_model *m, const double *x, const double *w, double *xb,
                        double *xb2, double c2) {
  for (int i = 0; i < m->nv && m->nplane + m->nsphere > 0; i++) {
    double blk[9], lateral[9];
    if (!ms_contact_hessian(m, x, i, blk)) continue;
    ms_contact_curvature(m, x, i, lateral);
    for (int r = 0; r < 3; r++) {
      const double *row = blk + 3 * r, *lat = lateral + 3 * r, *wi = w + 3 * i;
      double hw = (row[0] + lat[0]) * wi[0] + (row[1] + lat[1]) * wi[1] + (row[2] + lat[2]) * wi[2];
      xb[3 * i + r] -= hw;
      if (xb2) xb2[3 * i + r] -= c2 * hw;
    }
  }
}

/* d->f = the spring and contact forces at x [N] */
static void forces(const ms_model *m, ms_data *d, const double *x) {
  ms_spring_forces(m, d, x, d->f, 0);
  ms_contact_forces(m, x, d->f);
}

/* J_a(x)^T z with z = scale * d->g on free vertices (d->g is overwritten by w = M^-1 z):
 * its x-part added to xb (and times c2 to xb2 where given), its parameter parts to out */
static void accel_vjp(const ms_model *m, ms_data *d, const double *x, const double *fext,
                      double scale, double *xb, double *xb2, double c2, ms_adj_out *out) {
  forces(m, d, x);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      d->g[k] = m->fixed[i] ? 0.0 : scale * d->g[k] / m->mass[i];
      out->mass[i] -= d->g[k] * (d->f[k] + fext[k]) / m->mass[i];
      out->fext[k] += d->g[k];
    }
  springs_vjp(m, x, d->g, xb, xb2, c2, out);
  contact_vjp(m, x, d->g, xb, xb2, c2);
}

/* d->s = vq, the damped velocity q v (zero on fixed vertices) */
static void damped(const ms_model *m, ms_data *d, const double *v, double q) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) d->s[3 * i + t] = m->fixed[i] ? 0.0 : q * v[3 * i + t];
}

/* from vq's adjoint vqb (nv,3): vb0 = q vqb on free vertices (0 on fixed), and the damping's
 * adjoint -h vq.vqb; vqb may be out->v */
static void damped_vjp(const ms_model *m, const ms_data *d, const double *vqb, double q, double h,
                       ms_adj_out *out) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      out->damping -= h * d->s[k] * vqb[k];
      out->v[k] = m->fixed[i] ? 0.0 : q * vqb[k];
    }
}

/* u = a + h b into u (nv,3) */
static void axpy(int n3, const double *a, double h, const double *b, double *u) {
  for (int k = 0; k < n3; k++) u[k] = a[k] + h * b[k];
}

/* symplectic Euler (DRIFT_NEW) or explicit Euler (DRIFT_OLD): one kick, one drift */
static void euler_vjp(const ms_model *m, ms_data *d, int symplectic, double h, const ms_adj_step *s,
                      const double *ax, const double *av, ms_adj_out *out) {
  int n3 = 3 * m->nv;
  double *u = d->vn;
  axpy(n3, av, h, ax, u);
  memcpy(d->g, symplectic ? u : av, sizeof(double) * n3);
  accel_vjp(m, d, s->x, s->fext, h, out->x, NULL, 0, out);
  damped_vjp(m, d, u, exp(-m->damping * h), h, out);
}

/* velocity Verlet: kick, drift, kick */
static void verlet_vjp(const ms_model *m, ms_data *d, double h, const ms_adj_step *s,
                       const double *av, ms_adj_out *out) {
  int n3 = 3 * m->nv;
  double *u = d->vn;
  memcpy(d->g, av, sizeof(double) * n3);
  accel_vjp(m, d, s->xn, s->fext, h / 2, out->x, NULL, 0, out);
  axpy(n3, av, h, out->x, u);
  memcpy(d->g, u, sizeof(double) * n3);
  accel_vjp(m, d, s->x, s->fext, h / 2, out->x, NULL, 0, out);
  damped_vjp(m, d, u, exp(-m->damping * h), h, out);
}

/* d->g = a(x) = M^-1 (f(x) + f_ext) + g on free vertices, 0 on fixed ones */
static void accel(const ms_model *m, ms_data *d, const double *x, const double *fext) {
  forces(m, d, x);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      d->g[k] = m->fixed[i] ? 0.0 : (d->f[k] + fext[k]) / m->mass[i] + m->gravity[t];
    }
}

/* the next rk4 stage from the acceleration in d->g: xs = x0 + c vs, then vs = vq + c a
 * (vs: d->vb, the stage's velocity) */
static void rk4_stage(const ms_model *m, ms_data *d, const double *x0, double c, double *xs) {
  for (int k = 0; k < 3 * m->nv; k++) {
    xs[k] = x0[k] + c * d->vb[k];
    d->vb[k] = d->s[k] + c * d->g[k];
  }
}

/* d->g = a (adjoint of an rk4 acceleration) + c v */
static void rk4_adjoint(int n3, ms_data *d, double a, const double *av, double c, const double *v) {
  for (int k = 0; k < n3; k++) d->g[k] = a * av[k] + c * v[k];
}

/* classical Runge-Kutta: the stage points xb, xc, xd are recomputed (d->xn, d->vn, d->y), then
 * the stages are reversed in the order 4, 2, 3, 1, the one that needs a single stage-velocity
 * adjoint (d->vb) at a time; vq's adjoint gathers in out->v */
static void rk4_vjp(const ms_model *m, ms_data *d, double h, const ms_adj_step *s, const double *ax,
                    const double *av, ms_adj_out *out) {
  int n3 = 3 * m->nv;
  double *xb = d->xn, *xc = d->vn, *xd = d->y, *vs = d->vb, *vqb = out->v;
  memcpy(vs, d->s, sizeof(double) * n3);
  accel(m, d, s->x, s->fext);
  rk4_stage(m, d, s->x, h / 2, xb);
  accel(m, d, xb, s->fext);
  rk4_stage(m, d, s->x, h / 2, xc);
  accel(m, d, xc, s->fext);
  rk4_stage(m, d, s->x, h, xd);

  // x1 = x0 + h/6 (vq + 2 vb + 2 vc + vd), v1 = vq + h/6 (a1 + 2 a2 + 2 a3 + a4),
  // vd = vq + h a3: vq's adjoint starts at vb1 + 2 h/6 xb1; stage 4 at xd = x0 + h vc
  axpy(n3, av, 2 * h / 6, ax, vqb);
  for (int k = 0; k < n3; k++) vs[k] = 2 * h / 6 * ax[k];
  memcpy(d->g, av, sizeof(double) * n3);
  accel_vjp(m, d, xd, s->fext, h / 6, out->x, vs, h, out);

  // stage 2 at xb = x0 + (h/2) vq, a2's adjoint 2h/6 vb1 + (h/2) vcb; vc = vq + (h/2) a2
  for (int k = 0; k < n3; k++) vqb[k] += vs[k];
  rk4_adjoint(n3, d, 2 * h / 6, av, h / 2, vs);
  accel_vjp(m, d, xb, s->fext, 1.0, out->x, vqb, h / 2, out);

  // stage 3 at xc = x0 + (h/2) vb, a3's adjoint 2h/6 vb1 + h vdb (vdb = h/6 xb1)
  for (int k = 0; k < n3; k++) vs[k] = 2 * h / 6 * ax[k];
  rk4_adjoint(n3, d, 2 * h / 6, av, h * h / 6, ax);
  accel_vjp(m, d, xc, s->fext, 1.0, out->x, vs, h / 2, out);

  // stage 1 at x0, a1's adjoint h/6 vb1 + (h/2) vbb; vb = vq + (h/2) a1
  for (int k = 0; k < n3; k++) vqb[k] += vs[k];
  rk4_adjoint(n3, d, h / 6, av, h / 2, vs);
  accel_vjp(m, d, s->x, s->fext, 1.0, out->x, NULL, 0, out);
  damped_vjp(m, d, vqb, exp(-m->damping * h), h, out);
}

/* x = A^-1 b (b and x (nv,3), x zero on fixed vertices) by MINRES (Paige and Saunders 1975)
 * on the symmetric, possibly indefinite A of the last ms_newton_blocks, preconditioned by the
 * positive definite factor of the last ms_newton_factor; MS_ENOTPD when A x = b is not met to
 * MS_ADJ_RTOL relative residual within MS_ADJ_CAP + 2 (3 nv) iterations (A singular). The
 * rare path that meets an indefinite A allocates its seven vectors here */
static ms_status minres(const ms_model *m, ms_data *d, const double *b, double *x) {
  int n3 = 3 * m->nv;
  double *buf = ms_alloc(7 * (size_t)n3, sizeof(double));
  if (!buf) return MS_ENOMEM;
  double *r1 = buf, *r2 = buf + n3, *y = buf + 2 * n3, *v = buf + 3 * n3, *w = buf + 4 * n3,
         *w1 = buf + 5 * n3, *w2 = buf + 6 * n3, *tmp;
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) r1[3 * i + t] = m->fixed[i] ? 0.0 : b[3 * i + t];
  memcpy(r2, r1, sizeof(double) * n3);
  memset(x, 0, sizeof(double) * n3);
  ms_status st = ms_newton_apply(m, d, r1, y);
  double beta1 = sqrt(fmax(ms_dot(n3, r1, y), 0.0)), beta = beta1, oldb = 0, dbar = 0, epsln = 0,
         phibar = beta1, cs = -1, sn = 0;
  for (int it = 0; st == MS_OK && phibar > MS_ADJ_RTOL * beta1 && it < MS_ADJ_CAP + 2 * n3; it++) {
    // the next Lanczos vector v and the tridiagonal's column (alfa, beta)
    for (int k = 0; k < n3; k++) v[k] = y[k] / beta;
    ms_newton_product(m, d, v, y);
    for (int k = 0; k < n3 && it > 0; k++) y[k] -= beta / oldb * r1[k];
    double alfa = ms_dot(n3, v, y);
    for (int k = 0; k < n3; k++) y[k] -= alfa / beta * r2[k];
    tmp = r1, r1 = r2, r2 = y, y = tmp;
    if ((st = ms_newton_apply(m, d, r2, y)) != MS_OK) break;
    oldb = beta, beta = sqrt(fmax(ms_dot(n3, r2, y), 0.0));

    // a Givens rotation keeps the QR factorisation of the tridiagonal; x moves along w
    double oldeps = epsln, delta = cs * dbar + sn * alfa, gbar = sn * dbar - cs * alfa;
    epsln = sn * beta, dbar = -cs * beta;
    double gamma = fmax(hypot(gbar, beta), 1e-300), phi;
    cs = gbar / gamma, sn = beta / gamma, phi = cs * phibar, phibar = sn * phibar;
    tmp = w1, w1 = w2, w2 = w, w = tmp;
    for (int k = 0; k < n3; k++) {
      w[k] = (v[k] - oldeps * w1[k] - delta * w2[k]) / gamma;
      x[k] += phi * w[k];
    }
    if (!(beta > 0)) break; /* an invariant subspace: x is exact */
  }

  // the true residual decides
  if (st == MS_OK) {
    ms_newton_product(m, d, x, y);
    double res = 0, norm = 0;
    for (int i = 0; i < m->nv; i++)
      for (int t = 0; t < 3 && !m->fixed[i]; t++) {
        int k = 3 * i + t;
        res += (b[k] - y[k]) * (b[k] - y[k]), norm += b[k] * b[k];
      }
    st = res <= MS_ADJ_RTOL * MS_ADJ_RTOL * 1e4 * norm ? MS_OK : MS_ENOTPD;
  }
  free(buf);
  return st;
}

/* lam = A^-1 b, A = M/hs^2 + H(z) exact: through its Cholesky factor where it is positive
 * definite; where it is not (z a saddle of g, or an iterate short of a minimum), by MINRES
 * preconditioned by the positive definite factor (springs' lateral stiffness clamped at 0),
 * the implicit function theorem needing A nonsingular only; MS_ENOTPD when that fails too,
 * info saying where the exact A was not positive definite */
static ms_status ift_solve(const ms_model *m, ms_data *d, const double *z, double hs,
                           const double *b, double *lam, ms_info *info) {
  ms_status st = ms_newton_factor(m, d, z, hs, MS_SPD_NONE, info);
  if (st == MS_OK) return ms_newton_apply(m, d, b, lam);
  if (st != MS_ENOTPD) return st;
  ms_info spd;
  st = ms_newton_factor(m, d, z, hs, MS_SPD_CLAMP, &spd);
  if (st != MS_OK) return st;
  if ((st = ms_newton_blocks(m, d, z, hs, MS_SPD_NONE)) != MS_OK) return st;
  return minres(m, d, b, lam);
}

/* the implicit schemes as potential.c writes them: g's unknown z and step hs, its target
 * y = xb + hs vb + hs^2 (g + M^-1 f_ext) from the base point xb = x0 (bdf2: (4 x0 - xp)/3)
 * and base velocity vb = vq (bdf2: (4 vq - q^2 vp)/3), and the step's end
 * x1 = a z - (a - 1) x0, v1 = b (z - xb) - c vq */
typedef struct {
  int midpoint, bdf2; /* implicit midpoint; bdf2 with a history (else implicit Euler) */
  double hs, a, b, c;
} scheme;

static scheme scheme_of(ms_method method, double h, const ms_adj_step *s) {
  if (method == MS_IMPLICIT_MIDPOINT) return (scheme){1, 0, h / 2, 2, 4 / h, 1};
  if (method == MS_BDF2 && s->xp) return (scheme){0, 1, 2 * h / 3, 1, 3 / (2 * h), 0};
  return (scheme){0, 0, h, 1, 1 / h, 0};
}

/* y into d->y and, for bdf2, vb into d->vb (d->s holds vq) */
static void scheme_target(const ms_model *m, ms_data *d, const scheme *sc, const ms_adj_step *s,
                          double q) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && sc->bdf2; t++) {
      int k = 3 * i + t;
      d->y[k] = m->fixed[i] ? s->x[k] : (4 * s->x[k] - s->xp[k]) / 3;
      d->vb[k] = m->fixed[i] ? 0.0 : (4 * d->s[k] - q * q * s->vp[k]) / 3;
    }
  ms_data base = {.x = sc->bdf2 ? d->y : (double *)s->x,
                  .vn = sc->bdf2 ? d->vb : d->s,
                  .fext = (double *)s->fext};
  ms_inertial_target(m, &base, sc->hs, d->y);
}

/* from vb's adjoint vbb: bdf2's vb = (4 q v0 - q^2 vp)/3 into out->v, out->vp and the
 * damping's adjoint (the others' vb = vq: damped_vjp) */
static void bdf2_velocity_vjp(const ms_model *m, const ms_data *d, const ms_adj_step *s,
                              const double *vbb, double q, double h, ms_adj_out *out) {
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      out->damping += vbb[k] * (-4 * h * d->s[k] + 2 * h * q * q * s->vp[k]) / 3;
      out->v[k] = m->fixed[i] ? 0.0 : 4 * q * vbb[k] / 3;
      out->vp[k] = m->fixed[i] ? 0.0 : -q * q * vbb[k] / 3;
    }
}

/* implicit Euler, implicit midpoint and bdf2 by the implicit function theorem on
 * grad g(z) = 0 (scheme) */
static ms_status implicit_vjp(const ms_model *m, ms_data *d, ms_method method, double h,
                              const ms_adj_step *s, const double *ax, const double *av,
                              ms_adj_out *out, ms_info *info) {
  int n3 = 3 * m->nv;
  scheme sc = scheme_of(method, h, s);
  double hs = sc.hs, hs2 = hs * hs, q = exp(-m->damping * h), obj;
  double *lam = d->g, *pull = d->vn, *yb = d->xn, *z = sc.midpoint ? d->f : (double *)s->xn;
  for (int k = 0; k < n3 && sc.midpoint; k++) z[k] = (s->x[k] + s->xn[k]) / 2;

  // y and how far z is from g's minimiser
  scheme_target(m, d, &sc, s, q);
  d->fr.active = 0;
  out->residual = ms_objective_grad(m, d, z, d->y, hs, d->g, &obj);

  // A lam = zb, z's adjoint a xb1 + b vb1 (into pull, then solved in place)
  for (int k = 0; k < n3; k++) pull[k] = sc.a * ax[k] + sc.b * av[k];
  ms_status st = ift_solve(m, d, z, hs, pull, lam, info);
  if (st != MS_OK) return st;

  // the springs' adjoints and their pull on fixed vertices; y's adjoint yb, then xb's
  // (x0's and xp's) and vb's
  memset(pull, 0, sizeof(double) * n3);
  springs_vjp(m, z, lam, pull, NULL, 0, out);
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3; t++) {
      int k = 3 * i + t;
      double mi = m->mass[i], xbb;
      yb[k] = m->fixed[i] ? 0.0 : mi * lam[k] / hs2;
      xbb = yb[k] - (sc.a - 1) * ax[k] - sc.b * av[k];
      out->x[k] = m->fixed[i] ? ax[k] + pull[k] : sc.bdf2 ? 4 * xbb / 3 : xbb;
      if (sc.bdf2) out->xp[k] = m->fixed[i] ? 0.0 : -xbb / 3;
      out->fext[k] += m->fixed[i] ? 0.0 : lam[k];
      out->mass[i] -= m->fixed[i] ? 0.0 : lam[k] * ((z[k] - d->y[k]) / hs2 + s->fext[k] / mi);
      yb[k] = hs * yb[k] - sc.c * av[k];
    }
  if (sc.bdf2)
    bdf2_velocity_vjp(m, d, s, yb, q, h, out);
  else
    damped_vjp(m, d, yb, q, h, out);
  return MS_OK;
}

/* whether a step of method with options o is FMS iterations with no tol: fms, or implicit
 * Euler with solver fms (the same iterations from the same start) */
static int unrolls(ms_method method, const ms_opt *o) {
  int fms = method == MS_FMS || (method == MS_IMPLICIT_EULER && o->minimizer == MS_MIN_FMS);
  return fms && !(o->tol > 0);
}

/* FMS with no tol: its iterations unrolled (unroll.c), then vq's adjoint to v0 and damping */
static ms_status unrolled_vjp(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              const ms_adj_step *s, const double *ax, const double *av,
                              ms_adj_out *out, ms_info *info) {
  ms_status st = ms_fms_unroll_vjp(m, d, h, o, s, ax, av, out->v, out, info);
  if (st == MS_OK) damped_vjp(m, d, out->v, exp(-m->damping * h), h, out);
  return st;
}

/* why method on model m with options o has no gradient here, in a sentence; NULL when it
 * has one */
const char *ms_adjoint_refusal(const ms_model *m, ms_method method, const ms_opt *o) {
  if (m->nplane + m->nsphere > 0 && m->mu > 0)
    return "friction (a velocity impulse after the explicit steps, a lagged potential in the "
           "implicit ones) is not differentiated: set friction=0";
  if (m->self_contact)
    return "self-contact's displacement bounds are a projection, not differentiable: set "
           "self_contact=False";
  // the implicit steps: FMS's penalty pins, then a fixed iteration count or a tol
  int scheme = method == MS_IMPLICIT_EULER || method == MS_IMPLICIT_MIDPOINT || method == MS_BDF2;
  int fms = method == MS_FMS || (scheme && o && o->minimizer == MS_MIN_FMS);
  if (o && fms && o->pin != MS_PIN_ELIMINATE)
    return "pin='penalty' adds a penalty on the fixed vertices to g that the step then "
           "undoes; its gradient is not implemented: use pin='eliminate'";
  if (o && unrolls(method, o)) return ms_unroll_refusal(m, o);
  if (o && (scheme || method == MS_FMS) && !(o->tol > 0))
    return "its gradient comes from the implicit function theorem, which needs each step "
           "solved to a tolerance: give tol > 0 (and iterations enough to reach it), or run "
           "FMS (method='fms', or solver='fms') for a fixed number of iterations, whose "
           "gradient unrolls them";
  switch (method) {
    case MS_EXPLICIT_EULER:
    case MS_SYMPLECTIC_EULER:
    case MS_VELOCITY_VERLET:
    case MS_RK4:
    case MS_IMPLICIT_EULER:
    case MS_IMPLICIT_MIDPOINT:
    case MS_BDF2:
    case MS_FMS: /* implicit Euler by local-global iterations: to a tol, or unrolled (unroll.c) */
      return NULL;
    case MS_XPBD:
      return "xpbd's projections are not differentiated";
    case MS_LINEARIZED_IMPLICIT:
      return "linearized_implicit's one linear solve would need the derivative of its Hessian, "
             "not implemented: use implicit_euler with a tol";
    default:
      return "its adjoint is not implemented yet";
  }
}

/* the adjoints of step h of method from (s->x, s->v) to (s->xn, s->vn), given ax = dL/dxn and
 * av = dL/dvn, into out (every array written, xp and vp by bdf2 with a history only); d's
 * scratch is used, its state untouched */
ms_status ms_step_vjp(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                      const ms_adj_step *s, const double *ax, const double *av, ms_adj_out *out,
                      ms_info *info) {
  memset(info, 0, sizeof(*info));
  info->option = info->vertex = info->axis = -1;
  if (method < 0 || method >= MS_NMETHOD || !(h > 0) || !isfinite(h) ||
      ms_adjoint_refusal(m, method, o))
    return MS_EINPUT;
  size_t n3 = 3 * (size_t)m->nv;
  memcpy(out->x, ax, sizeof(double) * n3);
  memset(out->fext, 0, sizeof(double) * n3);
  memset(out->mass, 0, sizeof(double) * m->nv);
  memset(out->k, 0, sizeof(double) * m->ns);
  memset(out->rest, 0, sizeof(double) * m->ns);
  out->damping = out->residual = 0;
  damped(m, d, s->v, exp(-m->damping * h));
  if (unrolls(method, o)) return unrolled_vjp(m, d, h, o, s, ax, av, out, info);
  switch (method) {
    case MS_EXPLICIT_EULER:
    case MS_SYMPLECTIC_EULER:
      euler_vjp(m, d, method == MS_SYMPLECTIC_EULER, h, s, ax, av, out);
      return MS_OK;
    case MS_VELOCITY_VERLET:
      verlet_vjp(m, d, h, s, av, out);
      return MS_OK;
    case MS_RK4:
      rk4_vjp(m, d, h, s, ax, av, out);
      return MS_OK;
    default:
      return implicit_vjp(m, d, method, h, s, ax, av, out, info);
  }
}
