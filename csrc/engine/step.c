/* step.c: what every method shares: damping, fixed vertices, divergence and rollback */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine.h"

/* what the vertex blocks of one step share */
typedef struct {
  const ms_model *m;
  ms_data *d;
  double decay;   /* prepare: exp(-damping h) */
  atomic_int bad; /* finish: first diverged vertex, nv if none */
} step_pass;

/* xn = x and vn = exp(-damping h) v, with fixed vertices at rest */
static void prepare_block(void *ctx, int lo, int hi) {
  step_pass *p = ctx;
  for (int i = lo; i < hi; i++) ms_prepare_vertex(p->m, p->d, p->decay, i);
}

/* 1 when some position or velocity of the vertices [lo, hi) is non-finite or beyond
 * MS_BOUND: for a double without its sign bit, the bits as an integer order like the value,
 * with infinities and NaNs above every finite number, so one integer maximum (vectorised)
 * replaces a test per entry */
MS_CLONES static int out_of_bounds(const ms_data *d, int lo, int hi) {
  const double *restrict xn = d->xn, *restrict vn = d->vn, bound = MS_BOUND;
  int64_t worst = 0, limit;
  memcpy(&limit, &bound, sizeof(limit));
  for (int k = 3 * lo; k < 3 * hi; k++) {
    int64_t a, b;
    memcpy(&a, xn + k, sizeof(a));
    memcpy(&b, vn + k, sizeof(b));
    a &= INT64_MAX, b &= INT64_MAX;
    worst = a > worst ? a : worst;
    worst = b > worst ? b : worst;
  }
  return worst > limit;
}

/* the first of the vertices [lo, hi) whose next position or velocity is non-finite or
 * beyond MS_BOUND lowers *bad (a minimum: the same whichever block finds it first) */
void ms_check_vertices(const ms_data *d, int lo, int hi, atomic_int *bad) {
  if (!out_of_bounds(d, lo, hi)) return;
  for (int i = lo; i < hi; i++)
    if (out_of_bounds(d, i, i + 1)) {
      int seen = atomic_load(bad);
      while (i < seen && !atomic_compare_exchange_weak(bad, &seen, i)) {
      }
      return;
    }
}

/* fixed vertices back exactly where the user put them, then ms_check_vertices */
static void finish_block(void *ctx, int lo, int hi) {
  step_pass *p = ctx;
  const ms_model *m = p->m;
  ms_data *d = p->d;
  for (int i = lo; i < hi; i++)
    for (int t = 0; t < 3 && m->fixed[i]; t++) {
      d->xn[3 * i + t] = d->x[3 * i + t];
      d->vn[3 * i + t] = 0.0;
    }
  ms_check_vertices(d, lo, hi, &p->bad);
}

/* monotonic wall clock [s] */
double ms_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* nonzero when the caller's interrupt check, polled at most every MS_POLL_INTERVAL, asks the
 * step to stop; long loops call it once per iteration */
int ms_interrupted(ms_data *d) {
  if (!d->interrupt) return 0;
  double now = ms_clock();
  if (now - d->polled < MS_POLL_INTERVAL) return 0;
  d->polled = now;
  return d->interrupt(d->interrupt_ctx);
}

/* ms_step without the end of the self-contact pairs' life */
static ms_status step(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                      ms_info *info) {
  memset(info, 0, sizeof(*info));
  info->option = info->vertex = info->axis = -1;
  if (method < 0 || method >= MS_NMETHOD || !(h > 0) || !isfinite(h)) return MS_EINPUT;
  info->option = ms_opt_check(method, o);
  if (info->option >= 0) return MS_EINPUT;

  // integrate into xn, vn
  const ms_method_def *md = &ms_methods[method];
  step_pass p = {.m = m, .d = d, .decay = exp(-m->damping * h)};
  if (!(md->flags & MS_SELF_PREPARED)) ms_blocks(m, m->nv, MS_VBLOCK, prepare_block, &p);
  d->fr.active = 0;
  ms_status st = ms_self_begin(m, d, h, info);
  if (st != MS_OK) return st;
  st = md->step(m, d, h, o, info);
  if (st != MS_OK) return st;
  if (md->flags & MS_IMPULSE_FRICTION) ms_friction_impulse(m, d, h);
  ms_self_friction_impulse(m, d, h); /* where the step's g did not carry it */

  // reject a diverged state, otherwise swap it in and keep the old one as history
  if (!info->checked) {
    atomic_init(&p.bad, m->nv);
    ms_blocks(m, m->nv, MS_VBLOCK, finish_block, &p);
    int bad = atomic_load(&p.bad);
    info->vertex = bad < m->nv ? bad : -1;
    if (info->vertex >= 0) return MS_EDIVERGED;
  }

  // self-contact: no primitive pair may meet on the way there
  if ((st = ms_self_limit(m, d, h, !!(md->flags & MS_SAMPLED_BARRIER), info)) != MS_OK) return st;
  double *x = d->x, *v = d->v;
  d->x = d->xn, d->v = d->vn;
  d->xn = d->xp, d->vn = d->vp;
  d->xp = x, d->vp = v, d->hp = h;
  d->time += h;
  d->nstep++;
  if (info->nhist == 0) info->iters = 1, info->converged = 1; /* single-pass methods */
  info->nhist = o->history ? ms_hist_count(d, info->nhist) : 0;
  return MS_OK;
}

ms_status ms_step(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                  ms_info *info) {
  ms_status st = step(m, d, method, h, o, info);
  ms_self_end(d);
  return st;
}
