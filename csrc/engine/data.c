/* data.c: the changing part of a system (state, scratch, history) */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* allocate state and scratch for model m, zeroed; on failure nothing stays allocated */
ms_status ms_data_alloc(ms_data *d, const ms_model *m) {
  size_t n3 = 3 * (size_t)m->nv, ns = m->ns;
  memset(d, 0, sizeof(*d));
  // positions: one double more, which ms_spring_gather_range may read (and ignore)
  d->x = ms_alloc(n3 + 1, sizeof(double));
  d->v = ms_alloc(n3, sizeof(double));
  d->xn = ms_alloc(n3 + 1, sizeof(double));
  d->vn = ms_alloc(n3, sizeof(double));
  d->f = ms_alloc(n3, sizeof(double));
  d->y = ms_alloc(n3, sizeof(double));
  d->g = ms_alloc(n3, sizeof(double));
  d->s = ms_alloc(n3, sizeof(double));
  d->vb = ms_alloc(n3, sizeof(double));
  d->xp = ms_alloc(n3 + 1, sizeof(double));
  d->vp = ms_alloc(n3, sizeof(double));
  d->fext = ms_alloc(n3, sizeof(double));
  d->fc = ms_alloc(ns, sizeof(double));
  d->rc = ms_alloc(ns, sizeof(double));
  d->es = ms_alloc(ns, sizeof(double));
  d->eblk = ms_alloc(ms_spring_blocks(m->ns) + 1, sizeof(double));
  d->fr.w = ms_alloc(m->nv, sizeof(double));
  d->fr.n = ms_alloc(n3, sizeof(double));
  if (!d->x || !d->v || !d->xn || !d->vn || !d->f || !d->y || !d->g || !d->s || !d->vb || !d->xp ||
      !d->vp || !d->fext || !d->fc || !d->rc || !d->es || !d->eblk || !d->fr.w || !d->fr.n ||
      ms_data_reserve(d, 16) != MS_OK) {
    ms_data_free(d);
    return MS_ENOMEM;
  }
  return MS_OK;
}

void ms_data_free(ms_data *d) {
  free(d->x);
  free(d->v);
  free(d->xn);
  free(d->vn);
  free(d->f);
  free(d->y);
  free(d->g);
  free(d->s);
  free(d->vb);
  free(d->xp);
  free(d->vp);
  free(d->fext);
  free(d->fc);
  free(d->rc);
  free(d->es);
  free(d->eblk);
  free(d->fr.w);
  free(d->fr.n);
  free(d->hres);
  free(d->hobj);
  for (int k = 0; k < ms_nworkspace; k++)
    ms_workspaces[k].release(*(void **)((char *)d + ms_workspaces[k].offset));
  memset(d, 0, sizeof(*d));
}

/* make the history arrays hold at least hcap entries (at most MS_HIST_MAX); grows only, so
 * steps stop allocating */
ms_status ms_data_reserve(ms_data *d, int hcap) {
  if (hcap > MS_HIST_MAX) hcap = MS_HIST_MAX;
  if (hcap <= d->hcap) return MS_OK;
  double *res = realloc(d->hres, sizeof(double) * hcap);
  if (!res) return MS_ENOMEM;
  d->hres = res;
  double *obj = realloc(d->hobj, sizeof(double) * hcap);
  if (!obj) return MS_ENOMEM;
  d->hobj = obj;
  d->hcap = hcap;
  return MS_OK;
}

/* history entry k: residual and objective; entries beyond the capacity are not kept */
void ms_hist(ms_data *d, int k, double res, double obj) {
  if (k >= d->hcap) return;
  d->hres[k] = res;
  d->hobj[k] = obj;
}

/* how many of `entries` history entries were kept */
int ms_hist_count(const ms_data *d, int entries) {
  return entries < d->hcap ? entries : d->hcap;
}
