/* xpbd.c: extended position-based dynamics (Macklin, Mueller and Chentanez 2016) on springs
 *
 * Each (sub)step of length hs predicts x~ = x + hs v + hs^2 (g + f_ext / m) (ms_inertial_target, v
 * already damped), then projects the spring constraints C_s = |x_i - x_j| - r_s Gauss-Seidel, one
 * spring after the other, with compliance alpha_s = 1/k_s, alpha~ = alpha/hs^2 and a
 * multiplier lambda_s that starts at 0 every (sub)step and accumulates over its iterations:
 *
 *   dlambda = (-C - alpha~ lambda - gamma grad C (x - x^n)) / ((1 + gamma)(w_i + w_j) + alpha~),
 *
 * with inverse masses w (0 on fixed vertices) and Macklin's constraint damping
 * gamma = alpha~ (hs^2 beta) / hs = beta / (k hs) (beta = xpbd_damping [N s/m]; 0 by default).
 * Springs of zero stiffness (infinite compliance) do nothing. After every sweep, contact
 * projects each vertex whose path from x^n entered a collider onto its surface
 * (ms_contact_project), accumulating its normal correction over the substep (the contact's
 * multiplier), and static friction puts a vertex back where its tangential travel began while
 * that travel is within friction times the correction (ms_friction_stick). Then
 * v = (x - x^n)/hs, and a vertex in contact that did not stick loses tangential speed by
 * dynamic friction (ms_friction_slide; Mueller et al. 2020).
 * History of the last substep, only when asked for (its two passes per sweep cost about as
 * much as the sweep): the residual |C + alpha~ lambda| over springs with stiffness and a free
 * end [m], and the substep's incremental potential g (ms_objective with y = x~, h = hs).
 * The sweep reads a per-step table of the active springs (ends, rest length, alpha~ and the
 * inverse denominator), so it divides once per projection (1/|x_i - x_j|) and tests no
 * stiffness; it runs them in an order with the same result as spring order (schedule), or,
 * with sweep='coloured', colour by colour over a greedy colouring of the springs (colour):
 * the projections of one colour touch disjoint vertices, so threads share them and the
 * result is the same for any thread count (Gauss-Seidel in colour order).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* active springs rescheduled together (see schedule) */
#define MS_XPBD_CHUNK 1024
/* springs of one colour per parallel block */
#define MS_XPBD_BLOCK 512

/* one active spring as a sweep reads it (32 bytes, in sweep order): its ends, its rest
 * length [m], alpha~ = 1/(k hs^2) [m/N] and the inverse of the denominator
 * (1 + gamma)(w_i + w_j) + alpha~ (a multiplication in the sweep instead of a division) */
typedef struct {
  int i, j;
  double rest, at, rden;
} xpbd_row;

struct ms_xpbd_ws {
  xpbd_row *row;        /* (ns) the active springs of this step in sweep order, nrow of them */
  double *gamma;        /* (ns) per row: Macklin's damping beta / (k hs) */
  double *lambda;       /* (ns) per row: multipliers of the current substep [N s^2] */
  double *x0;           /* (nv,3) positions at the start of the substep */
  double *depth;        /* (nv) contact: normal correction accumulated over the substep [m] */
  double *normal;       /* (nv,3) contact: outward surface normal where the projection left it */
  unsigned char *stuck; /* (nv) contact: held by static friction in the last iteration */
  int *order;           /* (ns) the active springs in sweep order */
  int *level;           /* (nv) schedule: level of the last spring at a vertex in the chunk */
  int *seen;            /* (nv) schedule: 1 + the chunk that set level */
  int *key;             /* (2 MS_XPBD_CHUNK + 1) schedule: a chunk's levels, then their counts */
  int *colour;          /* (ns) colour: each spring's colour, -1 before it has one */
  int *mark;            /* (ns + 1) colour: the spring that last found a colour taken */
  int *cstart;          /* (ns + 1) rows of colour c: cstart[c] .. cstart[c + 1] */
  int nrow, ncolour;    /* ncolour 0: the sequential order */
  uint64_t rev;         /* model revision the order was made for; 0: none */
  int sweep;            /* ms_xpbd_sweep the order was made for */
};

void ms_xpbd_free(void *ws) {
  ms_xpbd_ws *w = ws;
  if (!w) return;
  free(w->row);
  free(w->gamma);
  free(w->lambda);
  free(w->x0);
  free(w->depth);
  free(w->normal);
  free(w->stuck);
  free(w->order);
  free(w->level);
  free(w->seen);
  free(w->key);
  free(w->colour);
  free(w->mark);
  free(w->cstart);
  free(w);
}

/* a complete workspace for m, or NULL when out of memory */
static ms_xpbd_ws *workspace_new(const ms_model *m) {
  ms_xpbd_ws *w = ms_alloc(1, sizeof(ms_xpbd_ws));
  if (!w) return NULL;
  w->row = ms_alloc(m->ns, sizeof(xpbd_row));
  w->gamma = ms_alloc(m->ns, sizeof(double));
  w->lambda = ms_alloc(m->ns, sizeof(double));
  w->x0 = ms_alloc(3 * (size_t)m->nv, sizeof(double));
  w->depth = ms_alloc(m->nv, sizeof(double));
  w->normal = ms_alloc(3 * (size_t)m->nv, sizeof(double));
  w->stuck = ms_alloc(m->nv, 1);
  w->order = ms_alloc(m->ns, sizeof(int));
  w->level = ms_alloc(m->nv, sizeof(int));
  w->seen = ms_alloc(m->nv, sizeof(int));
  w->key = ms_alloc(2 * MS_XPBD_CHUNK + 1, sizeof(int));
  w->colour = ms_alloc(m->ns, sizeof(int));
  w->mark = ms_alloc((size_t)m->ns + 1, sizeof(int));
  w->cstart = ms_alloc((size_t)m->ns + 1, sizeof(int));
  if (!w->row || !w->gamma || !w->lambda || !w->x0 || !w->depth || !w->normal || !w->stuck ||
      !w->order || !w->level || !w->seen || !w->key || !w->colour || !w->mark || !w->cstart) {
    ms_xpbd_free(w);
    return NULL;
  }
  return w;
}

/* the workspace of d, made on first use and published only when complete (nv and ns never
 * change) */
static ms_status workspace(const ms_model *m, ms_data *d) {
  return d->xpbd || (d->xpbd = workspace_new(m)) ? MS_OK : MS_ENOMEM;
}

/* 1 when spring s can act: finite compliance and at least one free end */
static int active(const ms_model *m, int s) {
  return m->k[s] > 0 && m->imass[m->edge[2 * s]] + m->imass[m->edge[2 * s + 1]] > 0;
}

/* order[c0 .. c1) of one chunk by level (stable): a spring's level is one more than the
 * highest level of the chunk's earlier springs at its ends */
static void schedule_chunk(const ms_model *m, ms_xpbd_ws *w, int c0, int c1, int *out) {
  int *key = w->key, *count = w->key + MS_XPBD_CHUNK, top = 0, chunk = 1 + c0 / MS_XPBD_CHUNK;
  for (int p = c0; p < c1; p++) {
    int s = w->order[p], i = m->edge[2 * s], j = m->edge[2 * s + 1];
    int li = w->seen[i] == chunk ? w->level[i] : 0, lj = w->seen[j] == chunk ? w->level[j] : 0;
    int lev = (li > lj ? li : lj) + 1;
    w->level[i] = w->level[j] = lev, w->seen[i] = w->seen[j] = chunk;
    key[p - c0] = lev;
    if (lev > top) top = lev;
  }
  memset(count, 0, sizeof(int) * (top + 1));
  for (int p = c0; p < c1; p++) count[key[p - c0]]++;
  for (int l = 1; l <= top; l++) count[l] += count[l - 1];
  for (int p = c1 - 1; p >= c0; p--) out[--count[key[p - c0]]] = w->order[p];
  memcpy(w->order + c0, out, sizeof(int) * (c1 - c0));
}

/* the active springs (w->order[0 .. nrow)) in colour order: each takes, in spring order, the
 * lowest colour no spring at its ends has yet (at most 2 d - 1 colours, d the largest
 * number of springs at a vertex), then a counting sort by colour keeps spring order inside
 * each colour */
static void colour(const ms_model *m, ms_xpbd_ws *w, int *out) {
  memset(w->colour, -1, sizeof(int) * m->ns);
  memset(w->mark, -1, sizeof(int) * ((size_t)m->ns + 1));
  memset(w->cstart, 0, sizeof(int) * ((size_t)m->ns + 1));
  w->ncolour = 0;
  for (int r = 0; r < w->nrow; r++) {
    int s = w->order[r], c = 0;
    for (int e = 0; e < 2; e++) {
      int v = m->edge[2 * s + e];
      for (int p = m->adj_start[v]; p < m->adj_start[v + 1]; p++) {
        int taken = w->colour[m->adj[2 * p + 1]];
        if (taken >= 0) w->mark[taken] = s;
      }
    }
    while (w->mark[c] == s) c++;
    w->colour[s] = c;
    w->cstart[c + 1]++;
    if (c + 1 > w->ncolour) w->ncolour = c + 1;
  }
  for (int c = 0; c < w->ncolour; c++) w->cstart[c + 1] += w->cstart[c];
  int *fill = w->mark; /* the colours' next free slots */
  memcpy(fill, w->cstart, sizeof(int) * w->ncolour);
  for (int r = 0; r < w->nrow; r++) out[fill[w->colour[w->order[r]]]++] = w->order[r];
  memcpy(w->order, out, sizeof(int) * w->nrow);
}

/* the sweep order of the active springs, for the model revision and the sweep kind:
 * sequential, chunk by chunk in spring order, and inside a chunk by level (schedule_chunk);
 * springs of one level share no vertex, so moving one ahead of earlier springs of higher
 * levels only swaps operations on disjoint vertices and multipliers: the sweep's result is
 * Gauss-Seidel's in spring order bit for bit, while the processor overlaps independent
 * projections instead of waiting on a chain (the structural springs along a grid row each
 * need the end their predecessor moved). Coloured: by colour (colour) */
static void schedule(const ms_model *m, ms_xpbd_ws *w, int sweep) {
  if (w->rev == m->rev && w->sweep == sweep) return;
  w->nrow = 0;
  for (int s = 0; s < m->ns; s++)
    if (active(m, s)) w->order[w->nrow++] = s;
  int *out = (int *)w->row; /* scratch until rows() fills it */
  w->ncolour = 0;
  if (sweep == MS_SWEEP_COLOURED) {
    colour(m, w, out);
  } else {
    memset(w->seen, 0, sizeof(int) * m->nv);
    for (int c0 = 0; c0 < w->nrow; c0 += MS_XPBD_CHUNK)
      schedule_chunk(m, w, c0, c0 + MS_XPBD_CHUNK < w->nrow ? c0 + MS_XPBD_CHUNK : w->nrow, out);
  }
  w->rev = m->rev;
  w->sweep = sweep;
}

/* the rows of the active springs in sweep order for substeps of hs */
static void rows(const ms_model *m, ms_xpbd_ws *w, double hs, double beta, int sweep) {
  schedule(m, w, sweep);
  for (int r = 0; r < w->nrow; r++) {
    int s = w->order[r], i = m->edge[2 * s], j = m->edge[2 * s + 1];
    double at = 1.0 / (m->k[s] * hs * hs), gamma = beta / (m->k[s] * hs);
    w->gamma[r] = gamma;
    double den = (1 + gamma) * (m->imass[i] + m->imass[j]) + at;
    w->row[r] = (xpbd_row){i, j, m->rest[s], at, 1.0 / den};
  }
}

/* x_i - x_j of row r, its length and the unit vector u along it (+x at zero length) */
static inline double row_dir(const xpbd_row *r, const double *x, double u[3]) {
  const double *a = x + 3 * r->i, *b = x + 3 * r->j;
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), inv = len > 0 ? 1.0 / len : 0.0;
  for (int t = 0; t < 3; t++) u[t] = len > 0 ? d[t] * inv : (t == 0);
  return len;
}

/* Gauss-Seidel over the rows [r0, r1), updating x and lambda; damped adds the rate term
 * gamma grad C (x - x^n) (a constant, so the undamped sweep compiles without it) */
static inline void sweep_rows(const ms_xpbd_ws *w, const double *restrict imass, double *x, int r0,
                              int r1, int damped) {
  const xpbd_row *restrict row = w->row;
  const double *restrict x0 = w->x0, *restrict gamma = w->gamma;
  double *restrict lambda = w->lambda;
  for (int r = r0; r < r1; r++) {
    const xpbd_row *p = &row[r];
    int i = p->i, j = p->j;
    double u[3], c = row_dir(p, x, u) - p->rest, num = -c - p->at * lambda[r];
    if (damped) {
      double rate = 0;
      for (int t = 0; t < 3; t++)
        rate += u[t] * ((x[3 * i + t] - x0[3 * i + t]) - (x[3 * j + t] - x0[3 * j + t]));
      num -= gamma[r] * rate;
    }
    double dl = num * p->rden, wi = imass[i] * dl, wj = imass[j] * dl;
    lambda[r] += dl;
    for (int t = 0; t < 3; t++) {
      x[3 * i + t] += wi * u[t];
      x[3 * j + t] -= wj * u[t];
    }
  }
}

/* what the blocks of one colour share */
typedef struct {
  const ms_model *m;
  const ms_xpbd_ws *w;
  double *x;
  int r0;     /* the colour's first row */
  int damped; /* with the rate term */
} colour_pass;

/* the rows [lo, hi) of a colour, counted from its first */
static void colour_block(void *ctx, int lo, int hi) {
  const colour_pass *p = ctx;
  if (p->damped)
    sweep_rows(p->w, p->m->imass, p->x, p->r0 + lo, p->r0 + hi, 1);
  else
    sweep_rows(p->w, p->m->imass, p->x, p->r0 + lo, p->r0 + hi, 0);
}

/* one sweep, with the rate term only where there is damping; coloured, each colour's rows in
 * parallel blocks */
static void sweep(const ms_model *m, const ms_xpbd_ws *w, double *x, double beta) {
  colour_pass p = {.m = m, .w = w, .x = x, .damped = beta > 0};
  for (int c = 0; c < w->ncolour; c++) {
    p.r0 = w->cstart[c];
    ms_blocks(m, w->cstart[c + 1] - p.r0, MS_XPBD_BLOCK, colour_block, &p);
  }
  if (w->ncolour == 0) colour_block(&p, 0, w->nrow);
}

/* |C + alpha~ lambda| over the active springs [m] */
static double residual(const ms_xpbd_ws *w, const double *x) {
  double r2 = 0;
  for (int r = 0; r < w->nrow; r++) {
    double u[3], c = row_dir(&w->row[r], x, u) - w->row[r].rest + w->row[r].at * w->lambda[r];
    r2 += c * c;
  }
  return sqrt(r2);
}

/* history entry k of the substep whose prediction is d->y */
static void record(const ms_model *m, ms_data *d, double hs, int k) {
  ms_hist(d, k, residual(d->xpbd, d->xn), ms_objective(m, d, d->xn, d->y, hs));
}

/* one step of `substeps` substeps of `iterations` sweeps each */
ms_status ms_xpbd(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info) {
  ms_status st = workspace(m, d);
  if (st != MS_OK) return st;
  ms_xpbd_ws *w = d->xpbd;
  int nsub = o->substeps > 0 ? o->substeps : 1, iters = o->iterations > 0 ? o->iterations : 1;
  double hs = h / nsub;
  rows(m, w, hs, o->xpbd_damping, o->sweep);
  for (int sub = 0; sub < nsub; sub++) {
    int record_it = o->history && sub == nsub - 1;
    // predict from the substep's start (a view of d with x = x^n, vn = current velocity)
    memcpy(w->x0, d->xn, sizeof(double) * 3 * m->nv);
    ms_data start = {.x = w->x0, .vn = d->vn, .fext = d->fext};
    ms_inertial_target(m, &start, hs, d->y);
    memcpy(d->xn, d->y, sizeof(double) * 3 * m->nv);
    memset(w->lambda, 0, sizeof(double) * w->nrow);
    memset(w->depth, 0, sizeof(double) * m->nv);
    if (record_it) record(m, d, hs, 0);
    for (int k = 1; k <= iters; k++) {
      if (ms_interrupted(d)) return MS_EINTERRUPT;
      sweep(m, w, d->xn, o->xpbd_damping);
      ms_contact_project(m, w->x0, d->xn, w->depth, w->normal);
      ms_self_project(m, d, d->xn, 1.0 / (m->sc_stiffness * hs * hs));
      if (m->mu > 0) ms_friction_stick(m, w->x0, d->xn, w->depth, w->normal, w->stuck);
      if (record_it) record(m, d, hs, k);
    }
    for (int i = 0; i < 3 * m->nv; i++) d->vn[i] = (d->xn[i] - w->x0[i]) / hs;
    if (m->mu > 0) ms_friction_slide(m, d->vn, w->depth, w->normal, w->stuck, hs);
  }
  info->iters = iters;
  info->nhist = iters + 1;
  return MS_OK;
}
