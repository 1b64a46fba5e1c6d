/* model.c: the constant part of a system (topology and parameters) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

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
  free(m->face);
  free(m->fedge);
  free(m->fside);
  free(m->vf_start);
  free(m->vf);
  free(m->ve_start);
  free(m->ve);
  free(m->ring_start);
  free(m->ring);
  free(m->ftwin);
  free(m->fbound);
  memset(m, 0, sizeof(*m));
}

// clang-format off
const ms_model_param ms_model_params[MS_NPARAM] = {
    /* name, shape, kind of value, lower bound, strict, default, its size, what a change
     * invalidates, doc */
    [MS_P_MASS] = {"mass", "(n,)", MS_REAL, 0, 1, {0.01}, 1, MS_VALUES, "vertex masses [kg]"},
    [MS_P_STIFFNESS] = {"stiffness", "(m,)", MS_REAL, 0, 0, {1000.0}, 1, MS_VALUES,
        "spring stiffness [N/m]"},
    [MS_P_REST_LENGTHS] = {"rest_lengths", "(m,)", MS_REAL, 0, 0, {0}, 0, MS_KEEPS,
        "spring rest lengths [m]; default: the lengths at construction"},
    [MS_P_FIXED] = {"fixed", "(f,)", MS_INT, NAN, 0, {0}, 0, MS_PATTERN,
        "sorted indices of fixed (kinematic) vertices; set with indices or a boolean mask"},
    [MS_P_GRAVITY] = {"gravity", "(3,)", MS_REAL, NAN, 0, {0.0, -9.81, 0.0}, 3, MS_KEEPS,
        "gravity [m/s^2]"},
    [MS_P_DAMPING] = {"damping", "()", MS_REAL, 0, 0, {0.0}, 1, MS_KEEPS,
        "ether drag rate [1/s]: v *= exp(-damping h) each step"},
    [MS_P_PLANES] = {"planes", "(k,4)", MS_REAL, NAN, 0, {0}, 0, MS_KEEPS,
        "contact planes: unit normal and offset, outside where n.x >= offset; assign to move"},
    [MS_P_SPHERES] = {"spheres", "(k,4)", MS_REAL, NAN, 0, {0}, 0, MS_KEEPS,
        "contact spheres: centre [m] and radius [m]; assign to move"},
    [MS_P_CONTACT_STIFFNESS] = {"contact_stiffness", "()", MS_REAL, 0, 0, {1e4}, 1, MS_VALUES,
        "penalty stiffness k_c of contacts [N/m]"},
    [MS_P_CONTACT_SCALE] = {"contact_scale", "()", MS_REAL, 0, 1, {1.1}, 1, MS_KEEPS,
        "sphere contact radius factor s: contact happens at s * radius"},
    [MS_P_FRICTION] = {"friction", "()", MS_REAL, 0, 0, {0.0}, 1, MS_KEEPS,
        "Coulomb friction coefficient mu"},
    [MS_P_FACES] = {"faces", "(t,3)", MS_INT, NAN, 0, {0}, 0, MS_KEEPS,
        "collision triangles of self-contact: vertex indices; their edges are the collision "
        "edges; default: none"},
    [MS_P_SELF_CONTACT] = {"self_contact", "()", MS_FLAG, NAN, 0, {0}, 1, MS_KEEPS,
        "True: the triangles (faces) keep self_thickness apart and no triangle edge ever "
        "crosses a triangle, in every method"},
    [MS_P_SELF_THICKNESS] = {"self_thickness", "()", MS_REAL, 0, 1, {0}, 0, MS_KEEPS,
        "the distance self-contact keeps between triangles [m]; default: a quarter of the "
        "mean triangle edge"},
    [MS_P_SELF_STIFFNESS] = {"self_stiffness", "()", MS_REAL, 0, 1, {1e4}, 1, MS_KEEPS,
        "stiffness kappa of the self-contact energy [N/m]: kappa/2 (thickness - d)^2, a log "
        "barrier below half the thickness"},
    [MS_P_SELF_RING] = {"self_contact_ring", "()", MS_INT, 0, 0, {2}, 1, MS_KEEPS,
        "pairs of triangles within this many triangle edges of each other never repel"},
    [MS_P_SELF_FRICTION] = {"self_friction", "()", MS_REAL, 0, 0, {0.0}, 1, MS_KEEPS,
        "Coulomb friction coefficient mu between touching triangles (lagged, as against "
        "colliders)"},
    [MS_P_THREADS] = {"threads", "()", MS_INT, 1, 0, {1}, 1, MS_KEEPS,
        "threads of the passes inside a step (results do not depend on it)"},
};
// clang-format on

/* the model's scalar parameters at their defaults (masses and stiffness are per element) */
void ms_model_defaults(ms_model *m) {
  for (int t = 0; t < 3; t++) m->gravity[t] = ms_model_params[MS_P_GRAVITY].value[t];
  m->damping = ms_model_params[MS_P_DAMPING].value[0];
  m->kc = ms_model_params[MS_P_CONTACT_STIFFNESS].value[0];
  m->cscale = ms_model_params[MS_P_CONTACT_SCALE].value[0];
  m->mu = ms_model_params[MS_P_FRICTION].value[0];
  m->self_contact = (int)ms_model_params[MS_P_SELF_CONTACT].value[0];
  m->sc_stiffness = ms_model_params[MS_P_SELF_STIFFNESS].value[0];
  m->sc_ring = (int)ms_model_params[MS_P_SELF_RING].value[0];
  m->sc_mu = ms_model_params[MS_P_SELF_FRICTION].value[0];
  m->nthread = (int)ms_model_params[MS_P_THREADS].value[0];
}

/* after parameter id changed: recompute the derived arrays (inverse masses, free-vertex
 * numbering) and bump the revisions that caches built from it compare */
void ms_model_changed(ms_model *m, ms_param_id id) {
  ms_invalidates what = ms_model_params[id].invalidates;
  if (what == MS_KEEPS) return;
  m->nfree = 0;
  for (int i = 0; i < m->nv; i++) {
    m->imass[i] = m->fixed[i] ? 0.0 : 1.0 / m->mass[i];
    m->dof[i] = m->fixed[i] ? -1 : m->nfree++;
  }
  m->rev++;
  if (what == MS_PATTERN) m->rev_fixed++;
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
