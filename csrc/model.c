/* model.c: the constant part of a system (topology and parameters) */
#include <stdlib.h>
#include <string.h>

#include "msim.h"

/* allocate every model array; on failure nothing stays allocated */
ms_status ms_model_alloc(ms_model *m, int nv, int ns) {
  memset(m, 0, sizeof(*m));
  m->nv = nv;
  m->ns = ns;
  m->nthread = 1;
  m->edge = ms_alloc(2 * (size_t)ns, sizeof(int));
  m->adj_start = ms_alloc((size_t)nv + 1, sizeof(int));
  m->adj = ms_alloc(4 * (size_t)ns, sizeof(int));
  m->rest = ms_alloc(ns, sizeof(double));
  m->k = ms_alloc(ns, sizeof(double));
  m->mass = ms_alloc(nv, sizeof(double));
  m->imass = ms_alloc(nv, sizeof(double));
  m->fixed = ms_alloc(nv, 1);
  m->dof = ms_alloc(nv, sizeof(int));
  if (!m->edge || !m->adj_start || !m->adj || !m->rest || !m->k || !m->mass || !m->imass ||
      !m->fixed || !m->dof) {
    ms_model_free(m);
    return MS_ENOMEM;
  }
  return MS_OK;
}

void ms_model_free(ms_model *m) {
  free(m->edge);
  free(m->adj_start);
  free(m->adj);
  free(m->rest);
  free(m->k);
  free(m->mass);
  free(m->imass);
  free(m->fixed);
  free(m->dof);
  free(m->plane);
  free(m->sphere);
  memset(m, 0, sizeof(*m));
}

/* recompute derived arrays after a parameter changed; bump the revisions caches compare */
void ms_model_update(ms_model *m, int fixed_changed) {
  m->nfree = 0;
  for (int i = 0; i < m->nv; i++) {
    m->imass[i] = m->fixed[i] ? 0.0 : 1.0 / m->mass[i];
    m->dof[i] = m->fixed[i] ? -1 : m->nfree++;
  }
  m->rev++;
  if (fixed_changed) m->rev_fixed++;
}

/* the springs at every vertex (m->adj) from m->edge, by counting sort: each vertex lists its
 * springs in spring order */
void ms_model_topology(ms_model *m) {
  int *start = m->adj_start;
  memset(start, 0, sizeof(int) * (m->nv + 1));
  for (int e = 0; e < 2 * m->ns; e++) start[m->edge[e] + 1]++;
  for (int v = 0; v < m->nv; v++) start[v + 1] += start[v];
  for (int s = 0; s < m->ns; s++)
    for (int end = 0; end < 2; end++) {
      int v = m->edge[2 * s + end], p = start[v]++;
      m->adj[2 * p] = m->edge[2 * s + 1 - end];
      m->adj[2 * p + 1] = s;
    }
  // the fill moved every start to its end: shift back
  for (int v = m->nv; v > 0; v--) start[v] = start[v - 1];
  start[0] = 0;
}
