/* fms.c: fast mass-spring (Liu, Bargteil, O'Brien and Kavan 2013) with Chebyshev (Wang 2015)
 * and Anderson (Peng, Deng, Zhang and Liu 2018) acceleration
 *
 * Implicit Euler minimises g(x) = |x - y|_M^2 / (2 h^2) + E(x). Writing every spring energy as
 * k/2 (|x_i - x_j| - r)^2 = min over |d| = r of k/2 |x_i - x_j - d|^2 turns h^2 g into
 *
 *   1/2 |x - y|_M^2 + h^2 sum_s k_s/2 |x_i - x_j - d_s|^2,
 *
 * minimised alternately over d (local step: d_s = r_s (x_i - x_j)/|x_i - x_j|) and over x
 * (global step: (M + h^2 L) x = M y + h^2 J d, one prefactored n x n scalar matrix over the
 * unknowns solved with three right-hand sides). Both halves minimise exactly, so g never
 * increases. A spring from unknown i to an eliminated fixed vertex j adds h^2 k_s to i's
 * diagonal and h^2 k_s (x_j + d_s) to i's right-hand side. Penalty pinning (the course
 * report's variant) keeps fixed vertices as unknowns and adds pin_weight/2 |x_i - x_i^0|^2 to
 * g; ms_step still puts them back exactly afterwards. Contact is the same penalty energy as
 * every implicit method's and friction the same lagged potential (contact_set), so FMS
 * minimises the g the other solvers do. Iterations start from y, x_t or x_t + h v (ms_start;
 * Liu's published code starts from x_t + h v; by default the lowest g of those, y with its
 * contact vertices settled first, potential.c). The factor is rebuilt only when h, the model
 * revision, the pinning or the contact set changed, and in every step with self-contact pairs
 * pressing and the one after (their curvature's blocks change every step).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct ms_fms_ws {
  ms_chol *ch;       /* factor of M + h^2 L (+ pins, contact, pairs' B) over the unknowns */
  double h;          /* step the factor was built for */
  uint64_t rev;      /* model revision it was built for; 0 when stale */
  int pin;           /* pinning it was built for */
  double pin_weight; /* penalty it was built for */
  int64_t nfact;     /* numeric factorisations so far */
  int nv;
  int *all;        /* (nv) identity dof map: every vertex an unknown (penalty pinning) */
  char *touch;     /* (nv) 1 where the factor holds the contact penalty's h^2 kc */
  double *kf;      /* (nv) friction bound the factor holds, times h^2 [N/m] */
  int held;        /* self-contact pairs whose curvature blocks the factor holds */
  ms_buf link;     /* (nlink,2) int: the vertex pairs this step's blocks couple */
  double *rhs;     /* (n,3) column-major right-hand sides, then the solution */
  double *base;    /* (n,3) column-major: the right-hand sides' part fixed within a step */
  double *xa, *xb; /* (nv,3) chebyshev: x^(k-1), G(x^k); anderson: G(x^(k-1)), f^(k-1) */
  double *xc;      /* (nv,3) anderson: G(x^k) */
  double omega;    /* chebyshev weight of the last iteration */
  int wcap;        /* anderson columns allocated */
  int window;      /* anderson columns of this step: the window asked for */
  int cols, next;  /* anderson columns filled, slot written next */
  double accepted; /* anderson: g at the current iterate */
  double *dg, *df; /* (window, nv*3) anderson differences of G(x) and of f = G(x) - x */
  double *gram;    /* (window, window) df^T df */
  double *small;   /* (window, window + 1) scratch of the least-squares solve */
};

/* what one step's iterations share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  ms_fms_ws *w;
  ms_model unk; /* m with the dof map of the unknowns (penalty: every vertex) */
  int n;        /* unknowns */
  double h;
  const ms_opt *o;
  ms_info *info;
  int rhs_ready;     /* the right-hand sides already hold the local step at d->xn */
  int npc;           /* self-contact pairs with a curvature block this step (contact_set) */
  const double *pcb; /* (npc,16) their blocks [N/m] */
  const int *pcv;    /* (npc,4) their vertices */
} fms_ctx;

void ms_fms_free(void *ws) {
  ms_fms_ws *w = ws;
  if (!w) return;
  ms_chol_free(w->ch);
  free(w->link.p);
  free(w->all);
  free(w->touch);
  free(w->kf);
  free(w->rhs);
  free(w->base);
  free(w->xa);
  free(w->xb);
  free(w->xc);
  free(w->dg);
  free(w->df);
  free(w->gram);
  free(w->small);
  free(w);
}

int64_t ms_fms_factorizations(const ms_data *d) {
  return d->fms ? d->fms->nfact : 0;
}

/* a new workspace for m with its per-vertex arrays, or NULL when out of memory */
static ms_fms_ws *workspace_new(const ms_model *m) {
  size_t n3 = 3 * (size_t)m->nv;
  ms_fms_ws *w = ms_alloc(1, sizeof(ms_fms_ws));
  if (!w) return NULL;
  w->nv = m->nv;
  w->all = ms_alloc(m->nv, sizeof(int));
  w->touch = ms_alloc(m->nv, 1);
  w->kf = ms_alloc(m->nv, sizeof(double));
  w->rhs = ms_alloc(n3, sizeof(double));
  w->base = ms_alloc(n3, sizeof(double));
  w->xa = ms_alloc(n3, sizeof(double));
  w->xb = ms_alloc(n3, sizeof(double));
  w->xc = ms_alloc(n3, sizeof(double));
  if (!w->all || !w->touch || !w->kf || !w->rhs || !w->base || !w->xa || !w->xb || !w->xc) {
    ms_fms_free(w);
    return NULL;
  }
  for (int i = 0; i < m->nv; i++) w->all[i] = i;
  return w;
}

/* make w's anderson arrays hold `window` columns; they only grow, and stay as they were when
 * out of memory */
static ms_status anderson_reserve(ms_fms_ws *w, int window) {
  if (window <= w->wcap) return MS_OK;
  size_t n3 = 3 * (size_t)w->nv, cols = (size_t)window;
  double *dg = ms_alloc(n3 * cols, sizeof(double)), *df = ms_alloc(n3 * cols, sizeof(double));
  double *gram = ms_alloc(cols * cols, sizeof(double));
  double *small = ms_alloc(cols * (cols + 1), sizeof(double));
  if (!dg || !df || !gram || !small) {
    free(dg), free(df), free(gram), free(small);
    return MS_ENOMEM;
  }
  free(w->dg), free(w->df), free(w->gram), free(w->small);
  w->dg = dg, w->df = df, w->gram = gram, w->small = small;
  w->wcap = window;
  return MS_OK;
}

/* the workspace of d, made on first use and published only when complete; anderson arrays
 * grow to the window asked for */
static ms_status workspace(const ms_model *m, ms_data *d, int window) {
  if (!d->fms && !(d->fms = workspace_new(m))) return MS_ENOMEM;
  return anderson_reserve(d->fms, window);
}

/* numeric factorisation of M + h^2 L (+ h^2 w on pins, + h^2 B for the self-contact pairs'
 * curvature blocks) into the analysed pattern */
static ms_status refactor(fms_ctx *c, ms_info *info) {
  const ms_model *m = c->m;
  ms_fms_ws *w = c->w;
  double h2 = c->h * c->h, pinned = h2 * c->o->pin_weight;
  ms_chol_zero(w->ch);
  for (int v = 0; v < m->nv; v++) {
    double blk = m->mass[v] + (m->fixed[v] ? pinned : 0.0) + h2 * (w->touch[v] * m->kc + w->kf[v]);
    ms_chol_add_vertex(w->ch, &c->unk, v, &blk);
  }
  for (int s = 0; s < m->ns; s++) {
    double blk = h2 * m->k[s];
    ms_chol_add_spring(w->ch, &c->unk, s, &blk);
  }
  for (int p = 0; p < c->npc; p++)
    ms_chol_add_group(w->ch, &c->unk, c->pcv + 4 * p, c->pcb + 16 * p, h2, 1);
  ms_status st = ms_chol_factor(w->ch, &info->vertex, &info->axis);
  if (st != MS_OK) return st;
  w->nfact++;
  w->rev = m->rev;
  w->h = c->h;
  w->pin = c->o->pin;
  w->pin_weight = c->o->pin_weight;
  w->held = c->npc;
  return MS_OK;
}

/* make the factor match h, the model, the pinning and the pairs' curvature blocks (new
 * values every step that has or had them); analyse only when the pattern changed: the
 * fixed set, the pinning, or a pair coupling two vertices it holds no block for */
static ms_status factor(fms_ctx *c, ms_info *info) {
  ms_fms_ws *w = c->w;
  const ms_opt *o = c->o;
  int nlink = ms_chol_links(&w->link, c->pcv, c->npc);
  if (nlink < 0) return MS_ENOMEM;
  int pattern = w->ch && ms_chol_current(w->ch, c->m) && w->pin == o->pin &&
                ms_chol_holds(w->ch, &c->unk, w->link.p, nlink);
  int values = pattern && w->rev == c->m->rev && w->h == c->h && !w->held && !c->npc &&
               (o->pin != MS_PIN_PENALTY || w->pin_weight == o->pin_weight);
  if (values) return MS_OK;
  w->rev = 0;
  if (!pattern) {
    ms_chol_free(w->ch);
    w->ch = NULL;
    ms_status st = ms_chol_springs(&w->ch, &c->unk, 1, 1, w->link.p, nlink);
    if (st != MS_OK) return st;
    w->pin = o->pin; /* the pattern's unknowns, even if the factorisation fails */
  }
  return refactor(c, info);
}

/* contact in the local-global form: kc/2 phi^2 = min over points q outside the colliders of
 * kc/2 |x - q|^2, so a vertex in contact adds h^2 kc to its diagonal and h^2 kc q (q its
 * nearest outside point, local step) to its right-hand side. The vertices whose step from x to
 * the target y touches a collider carry it. Friction's potential D_i (friction.c) has a
 * Hessian of at most its stick stiffness c_i, so D_i(x) <= D_i(x^k) - f_i.(x - x^k) +
 * c_i/2 |x - x^k|^2 (f_i its force at the iterate x^k), a majorant of the same form with
 * target x^k + f_i / c_i: a vertex with friction carries h^2 c_i and h^2 (c_i x^k + f_i). Each
 * global step minimises a bound of g that touches it at x^k, so g still never increases. The
 * factor is rebuilt when the contact set changed or a vertex needs a stiffer friction bound
 * than it holds; one held above twice what is needed (a bound that slows the iterations) is
 * rebuilt too, with a quarter more than needed where that is more than kc, so that a normal
 * force that creeps does not rebuild it every step (c_i is kc on large steps, friction.c).
 * Self-contact's barrier and friction are bounded the same way, but pair by pair: each pair's
 * curvature at x_t, and its barrier's at the start point (a start that the inertia carried
 * into the contact zone from x_t outside it would else meet a matrix without the barrier, and
 * its iterations, each undone, would end the step there with the barrier's energy added to the
 * kinetic energy it kept), as a block B coupling its four vertices (ms_self_curvature): the
 * matrix gains h^2 B and the right-hand side h^2 B x^k. A common translation is in B's null
 * space, so each global step, like the springs' Laplacian, keeps the momentum of the forces
 * between the layers at zero; a bound per vertex alone (Jacobi's) let each layer's friction
 * pull against its own anchor, and the layers did not carry each other. The blocks change
 * with the pairs, so a step with any refactorises. The barrier's curvature grows as a gap
 * closes, so under self-contact an iteration that still raises g is undone and ends the
 * iterations */
static ms_status contact_set(fms_ctx *c) {
  const ms_model *m = c->m;
  ms_data *d = c->d;
  const double *x = d->x, *y = d->y;
  ms_status st = ms_self_curvature(m, d, x, d->xn, &c->npc, &c->pcb, &c->pcv);
  for (int v = 0; v < m->nv; v++) {
    char t = !m->fixed[v] && m->kc > 0 && ms_contact_path(m, x + 3 * v, y + 3 * v);
    double need = t ? ms_friction_stiffness(m, d, v) : 0.0;
    double *kf = c->w->kf + v;
    if (t != c->w->touch[v]) c->w->touch[v] = t, c->w->rev = 0;
    if (need > *kf || need < 0.5 * *kf) *kf = need > m->kc ? 1.25 * need : need, c->w->rev = 0;
  }
  return st;
}

/* vertices the iterations carried into a collider though their step's path missed it join the
 * contact set (their penalty is in g, so the global step must bound it too); the factor is
 * made current for the grown set and the next local step made afresh. Returns 1 when it grew */
static int contact_grow(fms_ctx *c) {
  const ms_model *m = c->m;
  const ms_data *d = c->d;
  int grew = 0;
  for (int v = 0; v < m->nv; v++) {
    if (m->fixed[v] || c->w->touch[v] || !(ms_contact_point(m, d->xn + 3 * v, NULL) > 0)) continue;
    c->w->touch[v] = 1;
    c->w->kf[v] = fmax(c->w->kf[v], ms_friction_stiffness(m, d, v));
    grew = 1;
  }
  if (grew) c->w->rev = 0, c->rhs_ready = 0;
  return grew;
}

/* set up the context of one step once d->y holds its target: workspace, unknowns, contact set
 * and a current factor */
static ms_status start(fms_ctx *c, const ms_model *m, ms_data *d, double h, const ms_opt *o,
                       ms_info *info) {
  int penalty = o->pin == MS_PIN_PENALTY;
  ms_status st = workspace(m, d, o->acceleration == MS_ACCEL_ANDERSON ? o->window : 0);
  if (st != MS_OK) return st;
  *c = (fms_ctx){.m = m, .d = d, .w = d->fms, .unk = *m, .h = h, .o = o, .info = info};
  if (penalty) c->unk.dof = c->w->all, c->unk.nfree = m->nv;
  c->n = c->unk.nfree;
  if ((st = contact_set(c)) != MS_OK) return st;
  return c->n ? factor(c, info) : MS_OK;
}

ms_status ms_fms_prepare(const ms_model *m, ms_data *d, double hs, const ms_opt *o, ms_info *info) {
  fms_ctx c;
  return start(&c, m, d, hs, o, info);
}

ms_status ms_fms_apply_inverse(const ms_model *m, ms_data *d, const double *r, double *z) {
  ms_fms_ws *w = d->fms;
  int penalty = w->pin == MS_PIN_PENALTY, n = penalty ? m->nv : m->nfree;
  const int *dof = penalty ? w->all : m->dof;
  for (int v = 0; v < m->nv; v++)
    for (int t = 0; t < 3 && dof[v] >= 0; t++) w->rhs[t * n + dof[v]] = r[3 * v + t];
  ms_status st = n ? ms_chol_solve(w->ch, w->rhs, 3, ms_threads(m)) : MS_OK;
  if (st != MS_OK) return st;
  for (int v = 0; v < m->nv; v++)
    for (int t = 0; t < 3; t++) z[3 * v + t] = m->fixed[v] ? 0.0 : w->rhs[t * n + dof[v]];
  return MS_OK;
}

/* the right-hand sides' part that stays fixed within a step: M y (+ h^2 w y on pinned
 * vertices, where y_i = x_i^0) plus h^2 k_s x_j for every spring from an unknown to an
 * eliminated (fixed) vertex j */
static void rhs_base(const fms_ctx *c) {
  const ms_model *m = c->m;
  const int *dof = c->unk.dof, n = c->n;
  const double *y = c->d->y, *x = c->d->x;
  double h2 = c->h * c->h, pinned = h2 * c->o->pin_weight, *base = c->w->base;
  for (int v = 0; v < m->nv; v++) {
    int I = dof[v];
    if (I < 0) continue;
    double a = m->mass[v] + (m->fixed[v] ? pinned : 0.0);
    for (int t = 0; t < 3; t++) base[t * n + I] = a * y[3 * v + t];
    for (int p = m->adj_start[v]; p < m->adj_start[v + 1]; p++) {
      int j = m->adj[2 * p], s = m->adj[2 * p + 1];
      for (int t = 0; t < 3 && dof[j] < 0; t++) base[t * n + I] += h2 * m->k[s] * x[3 * j + t];
    }
  }
}

/* sum += h^2 B x over the self-contact pairs' curvature blocks (contact_set), between unknowns
 * only: the part of an eliminated vertex j in B x^k, h^2 B_ij x_j, is the same as what moving
 * the matrix's column j to the right-hand side takes away */
static void curvature_product(const fms_ctx *c, const double *x, double *sum) {
  const int *dof = c->unk.dof;
  double h2 = c->h * c->h;
  for (int p = 0; p < c->npc; p++) {
    const int *v = c->pcv + 4 * p;
    const double *B = c->pcb + 16 * p;
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        if (dof[v[a]] < 0 || dof[v[b]] < 0) continue;
        for (int t = 0; t < 3; t++) sum[3 * v[a] + t] += h2 * B[4 * a + b] * x[3 * v[b] + t];
      }
  }
}

/* local step at x into the right-hand sides: base + h^2 J d, where spring s's projection
 * d_s = r_s (x_i - x_j)/|x_i - x_j| enters as h^2 k_s r_s/l_s (x_i - x_j), the contact and
 * friction targets (contact_set), and self-contact's forces at x plus h^2 B x
 * (curvature_product); with force, the same passes also put the spring forces
 * at x there and return the spring energy [J] */
static double local_step(const fms_ctx *c, const double *x, double *force) {
  const ms_model *m = c->m;
  ms_data *d = c->d;
  const int *dof = c->unk.dof, n = c->n;
  double *rhs = c->w->rhs, *sum = d->f;
  double e = ms_spring_coefs(m, x, d->fc, d->rc, c->h * c->h, force ? d->es : NULL, d->eblk);
  ms_spring_gather(m, x, d->rc, sum, force ? d->fc : NULL, force);
  ms_self_forces(m, d, x, sum, c->h * c->h);
  curvature_product(c, x, sum);
  for (int v = 0; v < m->nv; v++) {
    int I = dof[v];
    double q[3] = {0, 0, 0}, f[3] = {0, 0, 0}, h2 = c->h * c->h, kf = c->w->kf[v];
    if (c->w->touch[v]) ms_contact_nearest(m, x + 3 * v, q);
    if (kf > 0) ms_friction_vertex(m, d, x + 3 * v, v, f, NULL);
    for (int t = 0; t < 3 && I >= 0; t++)
      rhs[t * n + I] = c->w->base[t * n + I] + sum[3 * v + t] +
                       h2 * (c->w->touch[v] * m->kc * q[t] + kf * x[3 * v + t] + f[t]);
  }
  return e;
}

/* one local-global iteration: out = G(x); out may alias x; eliminated vertices keep out's
 * values (x^0) */
static ms_status iterate(fms_ctx *c, const double *x, double *out) {
  if (!c->rhs_ready) local_step(c, x, NULL);
  c->rhs_ready = 0;
  ms_status st = ms_chol_solve(c->w->ch, c->w->rhs, 3, ms_threads(c->m));
  if (st != MS_OK) return st;
  const int *dof = c->unk.dof;
  for (int v = 0; v < c->m->nv; v++)
    if (dof[v] >= 0)
      for (int t = 0; t < 3; t++) out[3 * v + t] = c->w->rhs[t * c->n + dof[v]];
  return MS_OK;
}

/* plain FMS: x = G(x) */
static ms_status plain_next(fms_ctx *c, int k) {
  double *x = c->d->xn;
  return iterate(c, x, x);
}

/* Chebyshev semi-iteration (Wang 2015): after chebyshev_delay plain iterations,
 * x^(k+1) = omega (gamma (G(x^k) - x^k) + x^k - x^(k-1)) + x^(k-1) with omega from rho */
static ms_status chebyshev_next(fms_ctx *c, int k) {
  ms_fms_ws *w = c->w;
  double *x = c->d->xn, gamma = c->o->relax;
  memcpy(w->xb, x, sizeof(double) * 3 * c->m->nv);
  ms_status st = iterate(c, x, w->xb);
  if (st != MS_OK) return st;
  if (k == 1) memcpy(w->xa, x, sizeof(double) * 3 * c->m->nv);
  w->omega = ms_chebyshev_omega(k, c->o->chebyshev_delay, c->o->rho, w->omega);
  for (int i = 0; i < 3 * c->m->nv; i++) {
    double next = w->omega * (gamma * (w->xb[i] - x[i]) + x[i] - w->xa[i]) + w->xa[i];
    w->xa[i] = x[i];
    x[i] = next;
  }
  return MS_OK;
}

/* store the differences of G(x^k) = g and f^k = g - x^k against the previous pair in the
 * next history slot and refresh that slot's row of df^T df; xa, xb become g, f^k */
static void anderson_push(ms_fms_ws *w, const double *x, const double *g, int n3, int first) {
  if (first) {
    for (int i = 0; i < n3; i++) w->xa[i] = g[i], w->xb[i] = g[i] - x[i];
    return;
  }
  int p = w->next, m = w->window;
  double *dg = w->dg + (size_t)p * n3, *df = w->df + (size_t)p * n3;
  for (int i = 0; i < n3; i++) {
    double f = g[i] - x[i];
    dg[i] = g[i] - w->xa[i];
    df[i] = f - w->xb[i];
    w->xa[i] = g[i];
    w->xb[i] = f;
  }
  w->next = (p + 1) % m;
  if (w->cols < m) w->cols++;
  for (int q = 0; q < w->cols; q++)
    w->gram[p * m + q] = w->gram[q * m + p] = ms_dot(n3, df, w->df + (size_t)q * n3);
}

/* Anderson mixing x = G(x^k) - dG theta with theta = argmin |f^k - dF theta|; 0 when the
 * least-squares problem is singular */
static int anderson_mix(ms_fms_ws *w, double *x, const double *g, int n3) {
  int c = w->cols, m = w->window;
  double *a = w->small, *b = w->small + c * c;
  for (int i = 0; i < c; i++) {
    for (int q = 0; q < c; q++) a[i * c + q] = w->gram[i * m + q];
    b[i] = ms_dot(n3, w->df + (size_t)i * n3, w->xb);
  }
  if (!ms_spd_solve(a, b, c)) return 0;
  memcpy(x, g, sizeof(double) * n3);
  for (int q = 0; q < c; q++) {
    const double *dg = w->dg + (size_t)q * n3;
    for (int i = 0; i < n3; i++) x[i] -= b[q] * dg[i];
  }
  return 1;
}

/* Anderson acceleration (Peng 2018) of the fixed point x = G(x) with window m and the energy
 * safeguard: an accelerated iterate that raises g above the current one is replaced by the
 * plain FMS iterate G(x^k), so g still never increases */
static ms_status anderson_next(fms_ctx *c, int k) {
  ms_fms_ws *w = c->w;
  int n3 = 3 * c->m->nv;
  double *x = c->d->xn, *g = w->xc;
  if (k == 1) {
    w->window = c->o->window;
    w->cols = w->next = 0;
    w->accepted = ms_objective(c->m, c->d, x, c->d->y, c->h);
  }
  memcpy(g, x, sizeof(double) * n3);
  ms_status st = iterate(c, x, g);
  if (st != MS_OK) return st;
  anderson_push(w, x, g, n3, k == 1);
  double e = INFINITY;
  if (w->cols && anderson_mix(w, x, g, n3)) e = ms_objective(c->m, c->d, x, c->d->y, c->h);
  if (!(e <= w->accepted)) {
    memcpy(x, g, sizeof(double) * n3);
    e = ms_objective(c->m, c->d, x, c->d->y, c->h);
  }
  w->accepted = e;
  return MS_OK;
}

/* g and |grad g| at the iterate d->xn (history entry k), from the pass over the springs that
 * also makes the next iteration's local step there; returns the norm and g in *obj. Without a
 * history (o->history 0) and without a positive tol nothing reads them: it returns 0 and
 * computes nothing, and the next iteration makes its own local step (the same numbers) */
static double record(fms_ctx *c, double *obj) {
  *obj = 0.0;
  if (!c->o->history && !(c->o->tol > 0)) return 0.0;
  ms_data *d = c->d;
  double spring = local_step(c, d->xn, d->g);
  c->rhs_ready = 1;
  return ms_objective_finish(c->m, d, d->xn, d->y, c->h, d->g, spring, obj);
}

typedef ms_status (*fms_next)(fms_ctx *, int);

/* iteration k by the chosen acceleration; contact vertices it carried into a collider join
 * the contact set (ms_iteration_fn) */
static ms_status fms_iteration(void *ctx, int k, double *res, double *obj) {
  static const fms_next next[] = {
      [MS_ACCEL_NONE] = plain_next,
      [MS_ACCEL_CHEBYSHEV] = chebyshev_next,
      [MS_ACCEL_ANDERSON] = anderson_next,
  };
  fms_ctx *c = ctx;
  if (!c->n) return MS_STOPPED; /* nothing to solve for */
  ms_self_keep(c->m, c->d, c->d->xn, c->h, k == 1);
  ms_status st = next[c->o->acceleration](c, k); /* options are in range: ms_step checked them */
  ms_self_confine(c->m, c->d, c->d->xn);         /* within self-contact's bounds */
  if (st == MS_OK && ms_self_rises(c->m, c->d, c->h)) return MS_STOPPED;
  if (st == MS_OK && c->m->kc > 0 && contact_grow(c)) st = factor(c, c->info);
  if (st != MS_OK) return st;
  *res = record(c, obj);
  return MS_OK;
}

/* minimise g by FMS from the start point in d->xn (ms_minimize_fn), recording g and |grad g|
 * at the start point and after every iteration */
ms_status ms_fms_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info) {
  fms_ctx c;
  ms_status st = start(&c, m, d, hs, o, info);
  if (st != MS_OK) return st;
  rhs_base(&c);
  double obj, res = record(&c, &obj);
  return ms_descend(d, cap, o, res, obj, fms_iteration, &c, info);
}

/* one implicit Euler step by FMS (Liu et al. 2013's method) */
ms_status ms_fms(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info) {
  ms_scheme sc = ms_scheme_begin(m, d, MS_IMPLICIT_EULER, h, o->start);
  ms_status st = ms_fms_minimize(m, d, h, o->iterations, o, info);
  if (st == MS_OK) ms_scheme_end(m, d, &sc);
  return st;
}

/* benchmark kernels: SETUP analyses and factorises from scratch, LOCAL runs reps local steps
 * at the current positions, SOLVE runs reps three-column solves; the state is untouched */
ms_status ms_fms_kernel(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_fms_part part,
                        int reps) {
  fms_ctx c;
  ms_info info;
  if (part == MS_FMS_SETUP && d->fms) {
    ms_chol_free(d->fms->ch);
    d->fms->ch = NULL;
  }
  ms_inertial_target(m, d, h, d->y);
  d->fr.active = 0;
  ms_status st = start(&c, m, d, h, o, &info);
  if (st != MS_OK || !c.n || part == MS_FMS_SETUP) return st;
  rhs_base(&c);
  for (int r = 0; r < (part == MS_FMS_LOCAL ? reps : 1); r++) local_step(&c, d->x, NULL);
  memcpy(c.w->xa, c.w->rhs, sizeof(double) * 3 * c.n);
  for (int r = 0; r < reps && st == MS_OK && part == MS_FMS_SOLVE; r++) {
    memcpy(c.w->rhs, c.w->xa, sizeof(double) * 3 * c.n);
    st = ms_chol_solve(c.w->ch, c.w->rhs, 3, ms_threads(m));
  }
  return st;
}
