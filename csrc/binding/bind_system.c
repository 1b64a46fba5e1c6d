/* bind_system.c: the System type: its lock, construction, state access and type spec */
#include "bind.h"

#include <math.h>
#include <string.h>

#include "self.h"

/* in a forked child, a lock that a thread which did not survive the fork was holding is
 * replaced, and the workspaces that thread may have been writing are dropped (leaked, as
 * they may be torn; the state itself is only written when a step succeeds) */
static int renew_after_fork(SystemObject *s) {
  uint64_t forks = ms_fork_generation();
  if (s->lock_forks == forks || !s->lock) return 0;
  if (PyThread_acquire_lock(s->lock, NOWAIT_LOCK)) {
    PyThread_release_lock(s->lock);
  } else {
    PyThread_type_lock fresh = PyThread_allocate_lock();
    if (!fresh) return (PyErr_NoMemory(), -1);
    s->lock = fresh;
    s->stepping = 0;
    for (int k = 0; k < ms_nworkspace; k++)
      *(void **)((char *)&s->d + ms_workspaces[k].offset) = NULL;
  }
  s->lock_forks = forks;
  return 0;
}

/* take the System's lock, letting other threads run while waiting; RuntimeError when this
 * thread is inside a step of this System (a signal handler run by the step's interrupt
 * check) */
int sys_lock(SystemObject *s) {
  if (s->stepping && s->stepping == PyThread_get_thread_ident()) {
    PyErr_SetString(PyExc_RuntimeError,
                    "System: in use by a step on this thread; a signal handler cannot use "
                    "the System whose step it interrupted");
    return -1;
  }
  if (renew_after_fork(s)) return -1;
  if (PyThread_acquire_lock(s->lock, NOWAIT_LOCK)) return 0;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
  return 0;
}

void sys_unlock(SystemObject *s) {
  PyThread_release_lock(s->lock);
}

int check_ready(SystemObject *s) {
  if (s->ready) return 0;
  PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
  return -1;
}

static void System_dealloc(SystemObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  ms_data_free(&self->d);
  ms_model_free(&self->m);
  if (self->lock) PyThread_free_lock(self->lock);
  tp->tp_free((PyObject *)self);
  Py_DECREF(tp);
}

/* rest lengths from vertex positions */
static void rest_from_positions(ms_model *m, const double *x) {
  for (int s = 0; s < m->ns; s++) {
    const double *a = x + 3 * m->edge[2 * s], *b = x + 3 * m->edge[2 * s + 1];
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    m->rest[s] = sqrt(dx * dx + dy * dy + dz * dz);
  }
}

/* constructor arguments: vertices, edges, and the model parameters by their ms_param_id (the
 * engine table's rows are the keywords); NULL where the caller left the default */
typedef struct {
  PyObject *vertices, *edges;
  PyObject *p[MS_NPARAM];
} sys_args;

/* the argument slot of keyword key, or NULL when the constructor takes no such keyword */
static PyObject **arg_slot(sys_args *a, PyObject *key) {
  if (PyUnicode_CompareWithASCIIString(key, "vertices") == 0) return &a->vertices;
  if (PyUnicode_CompareWithASCIIString(key, "edges") == 0) return &a->edges;
  for (int i = 0; i < MS_NPARAM; i++)
    if (PyUnicode_CompareWithASCIIString(key, ms_model_params[i].name) == 0) return &a->p[i];
  return NULL;
}

/* System(vertices, edges, *, <a keyword per row of ms_model_params>) into a; TypeError in
 * PyArg_ParseTupleAndKeywords' words */
static int parse_args(PyObject *args, PyObject *kw, sys_args *a) {
  Py_ssize_t n = PyTuple_GET_SIZE(args), pos = 0;
  PyObject *key, *value;
  if (n > 2)
    return PyErr_Format(PyExc_TypeError,
                        "System() takes at most 2 positional arguments (%zd given)", n),
           -1;
  a->vertices = n > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
  a->edges = n > 1 ? PyTuple_GET_ITEM(args, 1) : NULL;
  while (kw && PyDict_Next(kw, &pos, &key, &value)) {
    PyObject **slot = PyUnicode_Check(key) ? arg_slot(a, key) : NULL;
    if (!slot)
      return PyErr_Format(PyExc_TypeError, "%R is an invalid keyword argument for System()", key),
             -1;
    if (*slot)
      return PyErr_Format(PyExc_TypeError,
                          "argument for System() given by name (%R) and position (%d)", key,
                          slot == &a->vertices ? 1 : 2),
             -1;
    *slot = value;
  }
  if (!a->vertices || !a->edges)
    return PyErr_Format(PyExc_TypeError, "System() missing required argument '%s' (pos %d)",
                        a->vertices ? "edges" : "vertices", a->vertices ? 2 : 1),
           -1;
  return 0;
}

/* scalar parameter id from a, checked against its table row's bound; untouched when not given */
static int scalar_arg(const sys_args *a, ms_param_id id, double *out) {
  const ms_model_param *row = &ms_model_params[id];
  return a->p[id] ? get_real(a->p[id], row->name, row->lo, row->strict, out) : 0;
}

/* parameter id, one value per `per` (n of them) or one for all, checked against its table
 * row's bound; the row's default when not given */
static int per_arg(const sys_args *a, ms_param_id id, npy_intp n, const char *per, double *out) {
  const ms_model_param *row = &ms_model_params[id];
  if (a->p[id]) return get_per(a->p[id], row->name, n, per, row->lo, row->strict, out);
  for (npy_intp i = 0; i < n; i++) out[i] = row->value[0];
  return 0;
}

/* 0 when self-contact can be on: it has triangles and a positive thickness */
int check_self_contact(const ms_model *m) {
  if (!m->self_contact) return 0;
  if (m->nf == 0)
    PyErr_SetString(PyExc_ValueError,
                    "self_contact: needs faces (the collision triangles), got none");
  else if (!(m->sc_thickness > 0))
    PyErr_SetString(PyExc_ValueError,
                    "self_thickness: expected > 0 with self_contact, got 0.0 (the default is a "
                    "quarter of the mean triangle edge, zero here)");
  return PyErr_Occurred() ? -1 : 0;
}

/* the triangles of self-contact and its parameters from a */
static int build_self_contact(ms_model *m, const sys_args *a, const double *x) {
  PyObject *faces = a->p[MS_P_FACES], *ring_arg = a->p[MS_P_SELF_RING];
  PyObject *flag = a->p[MS_P_SELF_CONTACT], *thickness = a->p[MS_P_SELF_THICKNESS];
  long long ring = m->sc_ring;
  if ((flag && get_flag(flag, "self_contact", &m->self_contact)) ||
      scalar_arg(a, MS_P_SELF_STIFFNESS, &m->sc_stiffness) ||
      (ring_arg && get_integer(ring_arg, "self_contact_ring", 0, 64, &ring)) ||
      scalar_arg(a, MS_P_SELF_FRICTION, &m->sc_mu))
    return -1;
  m->sc_ring = (int)ring;
  PyArrayObject *f = faces && faces != Py_None ? get_faces(faces, m->nv) : NULL;
  if (faces && faces != Py_None && !f) return -1;
  npy_intp nf = f ? PyArray_DIM(f, 0) : 0;
  if (nf > INT_MAX / 6) {
    Py_DECREF(f);
    return PyErr_Format(PyExc_ValueError, "faces: expected at most %d triangles, got %zd",
                        INT_MAX / 6, (Py_ssize_t)nf),
           -1;
  }
  m->face = ms_alloc(3 * (size_t)nf, sizeof(int));
  for (npy_intp k = 0; m->face && k < 3 * nf; k++)
    m->face[k] = (int)((int64_t *)PyArray_DATA(f))[k];
  Py_XDECREF(f);
  m->nf = (int)nf;
  if (!m->face || ms_model_faces(m) != MS_OK) return PyErr_NoMemory(), -1;
  m->sc_thickness = 0.25 * ms_mean_face_edge(m, x); /* a quarter of the mean triangle edge */
  // 0 passes here (its row says > 0): without self-contact it is unused, with it refused below
  if (thickness && get_real(thickness, "self_thickness", 0, 0, &m->sc_thickness)) return -1;
  return check_self_contact(m);
}

/* the parameters of m from a, each validated before it is written */
static int build_parameters(ms_model *m, const sys_args *a, const double *x) {
  npy_intp nv = m->nv, ns = m->ns;
  PyObject *const *p = a->p, *none = Py_None;
  if (!p[MS_P_REST_LENGTHS] || p[MS_P_REST_LENGTHS] == Py_None)
    rest_from_positions(m, x);
  else if (per_arg(a, MS_P_REST_LENGTHS, ns, "spring", m->rest))
    return -1;
  if (per_arg(a, MS_P_MASS, nv, "vertex", m->mass) ||
      per_arg(a, MS_P_STIFFNESS, ns, "spring", m->k))
    return -1;
  ms_model_defaults(m);
  if (get_fixed(p[MS_P_FIXED] ? p[MS_P_FIXED] : none, nv, m->fixed) ||
      (p[MS_P_GRAVITY] && get_vec3(p[MS_P_GRAVITY], "gravity", m->gravity)) ||
      scalar_arg(a, MS_P_DAMPING, &m->damping) || scalar_arg(a, MS_P_CONTACT_STIFFNESS, &m->kc) ||
      scalar_arg(a, MS_P_CONTACT_SCALE, &m->cscale) || scalar_arg(a, MS_P_FRICTION, &m->mu) ||
      (p[MS_P_THREADS] && get_threads(p[MS_P_THREADS], &m->nthread)))
    return -1;
  double *planes, *spheres;
  if (get_colliders(p[MS_P_PLANES] ? p[MS_P_PLANES] : none, "planes", 0, &planes, &m->nplane))
    return -1;
  if (get_colliders(p[MS_P_SPHERES] ? p[MS_P_SPHERES] : none, "spheres", 1, &spheres,
                    &m->nsphere)) {
    free(planes);
    return -1;
  }
  m->plane = planes, m->sphere = spheres;
  return build_self_contact(m, a, x);
}

/* build a model and data from the arguments; on error nothing is left allocated */
static int build(ms_model *m, ms_data *d, const sys_args *a) {
  PyArrayObject *x = get_points(a->vertices, "vertices", -1), *e = NULL;
  if (!x) return -1;
  npy_intp nv = PyArray_DIM(x, 0);
  e = get_edges(a->edges, nv);
  if (!e) goto fail_arrays;
  npy_intp ns = PyArray_DIM(e, 0);
  if (nv > INT_MAX / 4 || ns > INT_MAX / 4) {
    PyErr_Format(PyExc_ValueError,
                 "vertices: expected at most %d vertices and springs, got %zd "
                 "and %zd",
                 INT_MAX / 4, (Py_ssize_t)nv, (Py_ssize_t)ns);
    goto fail_arrays;
  }
  if (ms_model_alloc(m, (int)nv, (int)ns) != MS_OK) {
    PyErr_NoMemory();
    goto fail_arrays;
  }
  for (npy_intp i = 0; i < 2 * ns; i++) m->edge[i] = (int)((int64_t *)PyArray_DATA(e))[i];
  ms_model_topology(m);
  if (build_parameters(m, a, PyArray_DATA(x))) goto fail_model;
  ms_model_changed(m, MS_P_FIXED);

  // state: at rest in the given positions
  if (ms_data_alloc(d, m) != MS_OK) {
    PyErr_NoMemory();
    goto fail_model;
  }
  memcpy(d->x, PyArray_DATA(x), sizeof(double) * 3 * nv);
  Py_DECREF(x);
  Py_DECREF(e);
  return 0;
fail_model:
  ms_model_free(m);
fail_arrays:
  Py_XDECREF(x);
  Py_XDECREF(e);
  return -1;
}

static int System_init(SystemObject *self, PyObject *args, PyObject *kw) {
  sys_args a = {0};
  if (parse_args(args, kw, &a)) return -1;
  ms_model m;
  ms_data d;
  if (build(&m, &d, &a)) return -1;

  // swap the new system in; a re-initialised object drops its old one
  if (!self->lock && !(self->lock = PyThread_allocate_lock())) PyErr_NoMemory();
  if (!self->lock || sys_lock(self)) {
    ms_data_free(&d);
    ms_model_free(&m);
    return -1;
  }
  if (self->ready) {
    ms_data_free(&self->d);
    ms_model_free(&self->m);
  }
  self->m = m;
  self->d = d;
  self->ready = 1;
  sys_unlock(self);
  return 0;
}

/* _hessian_blocks(spd) -> (m,3,3) spring Hessian blocks at the current positions [N/m] */
static PyObject *System_hessian_blocks(SystemObject *self, PyObject *arg) {
  if (check_ready(self)) return NULL;
  long spd = PyLong_AsLong(arg);
  if (spd == -1 && PyErr_Occurred()) return NULL;
  if (spd < 0 || spd >= MS_NSPD) {
    PyErr_Format(PyExc_ValueError, "spd: expected an index in [0, %d), got %ld", MS_NSPD, spd);
    return NULL;
  }
  if (sys_lock(self)) return NULL;
  npy_intp dims[3] = {self->m.ns, 3, 3};
  PyObject *a = PyArray_SimpleNew(3, dims, NPY_DOUBLE);
  double *blk = a ? PyArray_DATA((PyArrayObject *)a) : NULL;
  for (int s = 0; blk && s < self->m.ns; s++)
    ms_spring_hessian(&self->m, self->d.x, s, (ms_spd)spd, blk + 9 * s);
  sys_unlock(self);
  return a;
}

/* _fms_factorizations() -> numeric factorisations FMS has done so far (cache checks) */
static PyObject *System_fms_factorizations(SystemObject *self, PyObject *unused) {
  if (check_ready(self)) return NULL;
  if (sys_lock(self)) return NULL;
  long long n = ms_fms_factorizations(&self->d);
  sys_unlock(self);
  return PyLong_FromLongLong(n);
}

/* _stable_step(method) -> (largest stable step [s], omega_max [rad/s]) of the model
 * (ms_stable_step, ms_omega_max); inf when the method is stable at every step */
static PyObject *System_stable_step(SystemObject *self, PyObject *name) {
  ms_method method;
  if (check_ready(self) || get_method(name, &method) || sys_lock(self)) return NULL;
  double omega = ms_omega_max(&self->m);
  double limit = ms_stable_step(&self->m, method, omega);
  sys_unlock(self);
  if (isnan(limit) || isnan(omega)) return PyErr_NoMemory();
  return Py_BuildValue("(dd)", limit, omega);
}

/* energy() -> {"kinetic", "spring", "gravity", "collision", "self_contact", "total"} [J] */
static PyObject *System_energy(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  ms_energies e;
  ms_status st = ms_energy(&self->m, &self->d, &e);
  sys_unlock(self);
  if (st != MS_OK) return PyErr_NoMemory();
  return Py_BuildValue("{sdsdsdsdsdsd}", "kinetic", e.kinetic, "spring", e.spring, "gravity",
                       e.gravity, "collision", e.collision, "self_contact", e.self_contact, "total",
                       e.kinetic + e.spring + e.gravity + e.collision + e.self_contact);
}

/* self_intersections() -> the (triangle edge, triangle) pairs of faces that cross now */
static PyObject *System_self_intersections(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  int count = 0;
  ms_status st = ms_self_crossings(&self->m, &self->d, self->d.x, &count);
  sys_unlock(self);
  if (st != MS_OK) return PyErr_NoMemory();
  return PyLong_FromLong(count);
}

/* the self-contact workspace's pairs from the from-th on as a (k, 5) int64 array: each pair's
 * kind (0 point-triangle, 1 edge-edge) and its four vertices; NULL with an exception set on
 * failure */
static PyObject *pairs_array(const ms_self_ws *w, int from) {
  npy_intp dims[2] = {w->npair - from, 5};
  PyObject *out = PyArray_SimpleNew(2, dims, NPY_INT64);
  for (npy_intp p = 0; out && p < dims[0]; p++) {
    const ms_sc_pair *pr = w->pair + from + p;
    int64_t *row = (int64_t *)PyArray_DATA((PyArrayObject *)out) + 5 * p;
    row[0] = pr->kind == MS_PAIR_EE;
    for (int k = 0; k < 4; k++) row[k + 1] = pr->v[k];
  }
  return out;
}

/* 0 when self-contact is on, else -1 with a ValueError naming what the hook needs */
static int need_self_contact(SystemObject *self, const char *what) {
  if (self->m.self_contact) return 0;
  PyErr_Format(PyExc_ValueError, "self_contact: expected True for %s, got False", what);
  return -1;
}

/* _swept_pairs(dx, moving, only=None) -> (k, 5) int64: the pairs that bound a move by dx (n,3)
 * from the positions (ms_self_sweep, in moving frames or not; only: None, or (n,) bool, the
 * vertices whose primitives' pairs are wanted), as pairs_array gives them: a test hook */
static PyObject *System_swept_pairs(SystemObject *self, PyObject *args) {
  PyObject *dx_obj, *only_obj = Py_None;
  int moving;
  if (!PyArg_ParseTuple(args, "Op|O:_swept_pairs", &dx_obj, &moving, &only_obj) ||
      check_ready(self) || need_self_contact(self, "swept pairs"))
    return NULL;
  PyArrayObject *dx = get_points(dx_obj, "dx", self->m.nv), *only = NULL;
  if (dx && only_obj != Py_None) {
    only = (PyArrayObject *)PyArray_FROMANY(only_obj, NPY_BOOL, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (only && PyArray_DIM(only, 0) != self->m.nv) {
      PyErr_Format(PyExc_ValueError, "only: expected shape (%d,), got (%zd,)", self->m.nv,
                   (Py_ssize_t)PyArray_DIM(only, 0));
      Py_CLEAR(only);
    }
    if (!only) Py_CLEAR(dx);
  }
  if (!dx || sys_lock(self)) return Py_XDECREF(dx), Py_XDECREF(only), NULL;
  ms_status st = ms_self_sweep(&self->m, &self->d, self->d.x, PyArray_DATA(dx), moving,
                               only ? PyArray_DATA(only) : NULL, 0);
  PyObject *out = st == MS_OK ? pairs_array(self->d.sc, 0) : PyErr_NoMemory();
  sys_unlock(self);
  Py_DECREF(dx), Py_XDECREF(only);
  return out;
}

/* _detected_pairs(planar, rings=True) -> (pairs, nearest, gap, planar_used): detection at the
 * positions (ms_self_detect, by the planar certificate where it holds or not; every ring pair
 * measured, or only those holding a fixed vertex): the pairs within the radius as pairs_array
 * gives them, each vertex's nearest distance (n,) [m], the smallest distance outside the ring
 * [m] and whether the certificate held: a test hook */
static PyObject *System_detected_pairs(SystemObject *self, PyObject *args) {
  int planar, rings = 1;
  if (!PyArg_ParseTuple(args, "p|p:_detected_pairs", &planar, &rings) || check_ready(self) ||
      need_self_contact(self, "detected pairs") || sys_lock(self))
    return NULL;
  ms_status st =
      ms_self_detect(&self->m, &self->d, self->d.x, ms_self_radius(&self->m), planar, rings);
  npy_intp n = self->m.nv;
  PyObject *pairs = st == MS_OK ? pairs_array(self->d.sc, 0) : PyErr_NoMemory();
  PyObject *nearest = pairs ? PyArray_SimpleNew(1, &n, NPY_FLOAT64) : NULL;
  if (nearest)
    memcpy(PyArray_DATA((PyArrayObject *)nearest), self->d.sc->nearest, sizeof(double) * n);
  PyObject *out = nearest ? Py_BuildValue("(OOdO)", pairs, nearest, self->d.sc->gap,
                                          self->d.sc->planar_used ? Py_True : Py_False)
                          : NULL;
  Py_XDECREF(pairs), Py_XDECREF(nearest);
  sys_unlock(self);
  return out;
}

/* _planar_path(y, floor) -> (certified, loose, pairs): the planar certificate of the straight
 * paths from the positions to y (n,3) (ms_self_planar_path), the (n,) bool vertices it leaves
 * loose and the pairs it adds, as pairs_array gives them: a test hook */
static PyObject *System_planar_path(SystemObject *self, PyObject *args) {
  PyObject *y_obj;
  double floor;
  int certified = 0, from = 0;
  if (!PyArg_ParseTuple(args, "Od:_planar_path", &y_obj, &floor) || check_ready(self) ||
      need_self_contact(self, "a planar path"))
    return NULL;
  PyArrayObject *y = get_points(y_obj, "y", self->m.nv);
  if (!y || sys_lock(self)) return Py_XDECREF(y), NULL;
  ms_self_ws *w = NULL;
  ms_status st = ms_self_at(&self->m, &self->d); /* makes the workspace */
  if (st == MS_OK) {
    ms_self_end(&self->d), w = self->d.sc, from = w->npair;
    st = ms_self_planar_path(&self->m, &self->d, self->d.x, PyArray_DATA(y), floor, &certified);
  }
  npy_intp n = self->m.nv;
  PyObject *loose = st == MS_OK ? PyArray_SimpleNew(1, &n, NPY_BOOL) : PyErr_NoMemory();
  PyObject *pairs = loose ? pairs_array(w, certified ? from : w->npair) : NULL;
  for (npy_intp v = 0; loose && v < n; v++)
    ((npy_bool *)PyArray_DATA((PyArrayObject *)loose))[v] = certified && w->only[v];
  PyObject *out =
      pairs ? Py_BuildValue("(OOO)", certified ? Py_True : Py_False, loose, pairs) : NULL;
  Py_XDECREF(loose), Py_XDECREF(pairs);
  sys_unlock(self);
  Py_DECREF(y);
  return out;
}

/* per-vertex state arrays: 0 positions, 1 velocities, 2 external forces, and the state one step
 * back (the bdf2 history): 3 positions, 4 velocities */
const char *const points_name[5] = {"positions", "velocities", "external_forces",
                                    "previous_positions", "previous_velocities"};

double *points_of(SystemObject *self, intptr_t which) {
  double *arrays[] = {self->d.x, self->d.v, self->d.fext, self->d.xp, self->d.vp};
  return arrays[which];
}

/* forces() -> (n,3) spring, gravity, contact, self-contact and external force on every vertex
 * [N], fixed ones included (they ignore their external force) */
static PyObject *System_forces(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  npy_intp dims[2] = {self->m.nv, 3};
  PyObject *f = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
  ms_status st = f ? ms_forces(&self->m, &self->d, PyArray_DATA((PyArrayObject *)f)) : MS_OK;
  sys_unlock(self);
  if (st != MS_OK) {
    Py_CLEAR(f);
    PyErr_NoMemory();
  }
  return f;
}

/* set_state(positions, velocities, time=0.0, steps=0, external_forces=None,
 * previous_positions=None, previous_velocities=None, previous_dt=0.0): all validated before any
 * is written; external_forces None means none (zeros); the previous state one step of
 * previous_dt back (bdf2's history) is kept when previous_dt > 0, else there is none */
static PyObject *System_set_state(SystemObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {
      "positions",          "velocities",          "time",        "steps", "external_forces",
      "previous_positions", "previous_velocities", "previous_dt", NULL};
  PyObject *obj[5] = {NULL, NULL, Py_None, Py_None, Py_None}, *timeobj = NULL, *stepsobj = NULL,
           *hpobj = NULL;
  long long steps = 0;
  double t = 0.0, hp = 0.0;
  if (check_ready(self) ||
      !PyArg_ParseTupleAndKeywords(args, kw, "OO|OOOOOO:_set_state", kwlist, &obj[0], &obj[1],
                                   &timeobj, &stepsobj, &obj[2], &obj[3], &obj[4], &hpobj))
    return NULL;
  if ((timeobj && get_real(timeobj, "time", -INFINITY, 0, &t)) ||
      (stepsobj && get_integer(stepsobj, "steps", 0, INT64_MAX, &steps)) ||
      (hpobj && get_real(hpobj, "previous_dt", 0, 0, &hp)))
    return NULL;
  if (hp > 0 && (obj[3] == Py_None || obj[4] == Py_None)) {
    PyErr_SetString(PyExc_ValueError,
                    "previous_dt: a history of step previous_dt > 0 needs "
                    "previous_positions and previous_velocities, got None");
    return NULL;
  }
  if (hp == 0) obj[3] = obj[4] = Py_None;

  // convert first (NumPy may run Python code, re-initialisation included), then check the
  // arrays against the System as it is under the lock
  PyArrayObject *a[5] = {NULL};
  int err = 0;
  for (int k = 0; k < 5 && !err; k++)
    err = obj[k] != Py_None && !(a[k] = to_array(obj[k], points_name[k], NPY_DOUBLE));
  err = err || sys_lock(self);
  if (!err) {
    for (int k = 0; k < 5 && !err; k++)
      err = a[k] && check_points(a[k], points_name[k], self->m.nv, k != 2);
    for (int k = 0; k < 5 && !err; k++) {
      if (a[k])
        memcpy(points_of(self, k), PyArray_DATA(a[k]), sizeof(double) * 3 * self->m.nv);
      else if (k < 3)
        memset(points_of(self, k), 0, sizeof(double) * 3 * self->m.nv);
    }
    if (!err) self->d.time = t, self->d.nstep = steps, self->d.hp = hp, self->d.sc_clean = 0;
    sys_unlock(self);
  }
  for (int k = 0; k < 5; k++) Py_XDECREF(a[k]);
  if (err) return NULL;
  Py_RETURN_NONE;
}

/* _state() -> the state as get_state() returns it, read under one lock so that no step of
 * another thread lands between its parts: positions, velocities, external_forces, time, steps,
 * and the state one step back (bdf2's history), previous_positions and previous_velocities
 * ((n,3), or None with previous_dt 0 when there is none) */
static PyObject *System_state(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  int nv = self->m.nv, history = self->d.hp > 0;
  PyObject *xp = history ? array_copy(self->d.xp, nv, 3) : Py_NewRef(Py_None);
  PyObject *vp = history ? array_copy(self->d.vp, nv, 3) : Py_NewRef(Py_None);
  PyObject *out =
      xp && vp ? Py_BuildValue("{sNsNsNsdsLsOsOsd}", "positions", array_copy(self->d.x, nv, 3),
                               "velocities", array_copy(self->d.v, nv, 3), "external_forces",
                               array_copy(self->d.fext, nv, 3), "time", self->d.time, "steps",
                               (long long)self->d.nstep, "previous_positions", xp,
                               "previous_velocities", vp, "previous_dt", self->d.hp)
               : NULL;
  sys_unlock(self);
  Py_XDECREF(xp);
  Py_XDECREF(vp);
  return out;
}

static PyMethodDef System_methods[] = {
    {"_step", (PyCFunction)(void (*)(void))System_step, METH_VARARGS | METH_KEYWORDS,
     "_step(dt, method, history=True, **options) -> (iterations, converged, residuals, "
     "objectives, seconds, timings); use System.step"},
    {"_hessian_blocks", (PyCFunction)System_hessian_blocks, METH_O,
     "_hessian_blocks(spd) -> (m,3,3) spring Hessian blocks at the current positions [N/m]; "
     "spd is the index of the treatment in METHODS['implicit_euler']['spd'].kind"},
    {"_fms_factorizations", (PyCFunction)System_fms_factorizations, METH_NOARGS,
     "_fms_factorizations() -> numeric factorisations FMS has done (tests of the cache)"},
    {"_fms_kernel", (PyCFunction)(void (*)(void))System_fms_kernel, METH_VARARGS | METH_KEYWORDS,
     "_fms_kernel(dt, part, repeats, **options) -> seconds of one FMS kernel (benchmarks)"},
    {"_step_vjp", (PyCFunction)(void (*)(void))System_step_vjp, METH_VARARGS | METH_KEYWORDS,
     "_step_vjp(method, dt, x, v, x_next, v_next, external_forces, adj_x, adj_v, x_prev=None, "
     "v_prev=None, **options) -> (x, v, stiffness, rest_lengths, mass, external_forces, damping, "
     "residual, x_prev, v_prev): the adjoints of one step; use msim.adjoint.step_vjp"},
    {"_adjoint_refusal", (PyCFunction)(void (*)(void))System_adjoint_refusal,
     METH_VARARGS | METH_KEYWORDS,
     "_adjoint_refusal(method, **options) -> why method with these core options has no "
     "gradient on this System, or None"},
    {"_stable_step", (PyCFunction)System_stable_step, METH_O,
     "_stable_step(method) -> (largest stable step [s], omega_max [rad/s]); use "
     "msim.scenes.stability_limit and omega_max"},
    {"energy", (PyCFunction)System_energy, METH_NOARGS,
     "energy() -> dict of kinetic, spring, gravity, collision, self_contact and total energy "
     "[J]; the external forces have no potential in it (their work changes the total)"},
    {"self_intersections", (PyCFunction)System_self_intersections, METH_NOARGS,
     "self_intersections() -> the number of (triangle edge, triangle) pairs of faces that "
     "cross now, touching included, pairs sharing a vertex excepted: an exact test, zero at "
     "every step of a run with self_contact"},
    {"_detected_pairs", (PyCFunction)System_detected_pairs, METH_VARARGS,
     "_detected_pairs(planar, rings=True) -> (pairs, nearest, gap, planar_used): detection at "
     "the positions, by the planar certificate where it holds or hashing every box, measuring "
     "every ring pair or only those holding a fixed vertex (a test hook)"},
    {"_planar_path", (PyCFunction)System_planar_path, METH_VARARGS,
     "_planar_path(y, floor) -> (certified, loose, pairs): the planar certificate of the "
     "straight paths from the positions to y, the vertices it leaves loose and the pairs it "
     "adds (a test hook)"},
    {"_swept_pairs", (PyCFunction)System_swept_pairs, METH_VARARGS,
     "_swept_pairs(dx, moving, only=None) -> (k, 5) int64: the pairs that bound a move by dx "
     "from the positions, swept in moving frames or in the positions' frame (only those of the "
     "primitives of the vertices flagged in only, when given), as kind (0 point-triangle, "
     "1 edge-edge) and four vertices (a test hook)"},
    {"forces", (PyCFunction)System_forces, METH_NOARGS,
     "forces() -> (n,3) spring, gravity, contact, self-contact and external force on every "
     "vertex [N]"},
    {"_state", (PyCFunction)System_state, METH_NOARGS,
     "_state() -> dict of the state, read at once (no step lands between its parts); use "
     "System.get_state"},
    {"_set_state", (PyCFunction)(void (*)(void))System_set_state, METH_VARARGS | METH_KEYWORDS,
     "_set_state(positions, velocities, time=0.0, steps=0, external_forces=None, "
     "previous_positions=None, previous_velocities=None, previous_dt=0.0): replace the "
     "state atomically; use System.set_state"},
    {NULL},
};

static PyType_Slot System_slots[] = {
    {Py_tp_doc,
     "System(vertices, edges, **parameters): C core of msim.System, whose documentation "
     "gives the parameters; their defaults are msim._core.defaults()"},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, System_init},
    {Py_tp_dealloc, System_dealloc},
    {Py_tp_methods, System_methods},
    {Py_tp_getset, System_getset},
    {0, NULL},
};

PyType_Spec System_spec = {
    .name = "msim._core.System",
    .basicsize = sizeof(SystemObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = System_slots,
};
