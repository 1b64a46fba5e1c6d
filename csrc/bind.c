/* bind.c: the Python module msim._core. Turns NumPy arrays into core calls and status codes
 * into exceptions; holds no physics. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <numpy/arrayobject.h>

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msim.h"

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define BOUND_TEXT TEXT(MS_BOUND)

/* ---------------------------------------------------------------- module state */

typedef struct {
  PyObject *Error;
  PyObject *DivergenceError;
  PyObject *NotPositiveDefiniteError;
  PyObject *CholmodError;
  PyObject *SystemType;
  unsigned long main_thread; /* the thread Python's signal handlers run on */
} mod_state;

static struct PyModuleDef core_module;

static mod_state *state_of(PyObject *self) {
  PyObject *mod = PyType_GetModuleByDef(Py_TYPE(self), &core_module);
  return mod ? PyModule_GetState(mod) : NULL;
}

/* method names, in ms_method order */
static const char *method_names[MS_NMETHOD] = {
    [MS_EXPLICIT_EULER] = "explicit_euler",
    [MS_SYMPLECTIC_EULER] = "symplectic_euler",
    [MS_IMPLICIT_EULER] = "implicit_euler",
    [MS_LINEARIZED_IMPLICIT] = "linearized_implicit",
    [MS_FMS] = "fms",
    [MS_XPBD] = "xpbd",
};

/* ---------------------------------------------------------------- argument checking */

/* text of an array's shape, like "(4, 2)" */
static void shape_text(PyArrayObject *a, char *buf, size_t size) {
  int len = snprintf(buf, size, "(");
  for (int i = 0; i < PyArray_NDIM(a) && len < (int)size; i++)
    len += snprintf(buf + len, size - len, i ? ", %zd" : "%zd", (Py_ssize_t)PyArray_DIM(a, i));
  if (len < (int)size) snprintf(buf + len, size - len, PyArray_NDIM(a) == 1 ? ",)" : ")");
}

/* obj as a C-contiguous native array of type typenum (NPY_DOUBLE or NPY_INT64); the dtype
 * kind must be real (or integer for NPY_INT64), else TypeError naming the argument */
static PyArrayObject *to_array(PyObject *obj, const char *name, int typenum) {
  PyArrayObject *any = (PyArrayObject *)PyArray_FROM_O(obj);
  if (!any) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: expected an array of %s, got a %.100s that NumPy cannot "
                 "turn into one (ragged or mixed?)",
                 name, typenum == NPY_DOUBLE ? "real numbers" : "integers", Py_TYPE(obj)->tp_name);
    return NULL;
  }
  char kind = PyArray_DESCR(any)->kind;
  int empty_float = kind == 'f' && PyArray_SIZE(any) == 0; /* [] converts to float64 */
  int ok = kind == 'i' || kind == 'u' || (kind == 'f' && (typenum == NPY_DOUBLE || empty_float));
  if (!ok) {
    PyErr_Format(PyExc_TypeError, "%s: expected an array of %s, got dtype %S", name,
                 typenum == NPY_DOUBLE ? "real numbers" : "integers", PyArray_DESCR(any));
    Py_DECREF(any);
    return NULL;
  }
  PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)any, typenum,
                                                         NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
  Py_DECREF(any);
  return arr;
}

/* ValueError unless a has ndim dims and the given sizes (-1: any size) */
static int check_shape(PyArrayObject *a, const char *name, int ndim, npy_intp d0, npy_intp d1,
                       const char *expected) {
  int ok = PyArray_NDIM(a) == ndim && (d0 < 0 || PyArray_DIM(a, 0) == d0) &&
           (ndim < 2 || d1 < 0 || PyArray_DIM(a, 1) == d1);
  if (ok) return 0;
  char got[128];
  shape_text(a, got, sizeof(got));
  PyErr_Format(PyExc_ValueError, "%s: expected an array of shape %s, got shape %s", name, expected,
               got);
  return -1;
}

/* ValueError unless every value is finite and >= lo (> lo when strict); n < 0 means one
 * scalar value, reported without an index */
static int check_values(const double *v, npy_intp n, const char *name, double lo, int strict) {
  for (npy_intp i = 0; i < (n < 0 ? 1 : n); i++) {
    if (isfinite(v[i]) && (strict ? v[i] > lo : v[i] >= lo)) continue;
    PyObject *val = PyFloat_FromDouble(v[i]), *bound = PyFloat_FromDouble(lo);
    PyObject *where = n < 0 ? PyUnicode_FromString("")
                            : PyUnicode_FromFormat(" at flat index %zd", (Py_ssize_t)i);
    if (val && bound && where && !isfinite(lo))
      PyErr_Format(PyExc_ValueError, "%s: expected finite values, got %R%U", name, val, where);
    else if (val && bound && where)
      PyErr_Format(PyExc_ValueError, "%s: expected finite values %s %R, got %R%U", name,
                   strict ? ">" : ">=", bound, val, where);
    Py_XDECREF(val);
    Py_XDECREF(bound);
    Py_XDECREF(where);
    return -1;
  }
  return 0;
}

/* ValueError unless a is an (n,3) array of finite reals; n < 0 accepts any count */
static int check_points(PyArrayObject *a, const char *name, npy_intp n) {
  char expected[64];
  if (n < 0)
    snprintf(expected, sizeof(expected), "(n, 3)");
  else
    snprintf(expected, sizeof(expected), "(%zd, 3)", (Py_ssize_t)n);
  return check_shape(a, name, 2, n, 3, expected) ||
                 check_values(PyArray_DATA(a), PyArray_SIZE(a), name, -INFINITY, 0)
             ? -1
             : 0;
}

/* validated (m,2) edge array: indices in [0, nv), no self-loops */
static PyArrayObject *get_edges(PyObject *obj, npy_intp nv) {
  PyArrayObject *a = to_array(obj, "edges", NPY_INT64);
  if (!a) return NULL;
  if (check_shape(a, "edges", 2, -1, 2, "(m, 2)")) goto fail;
  const int64_t *e = PyArray_DATA(a);
  for (npy_intp s = 0; s < PyArray_DIM(a, 0); s++) {
    for (int t = 0; t < 2; t++)
      if (e[2 * s + t] < 0 || e[2 * s + t] >= nv) {
        PyErr_Format(PyExc_ValueError,
                     "edges: expected vertex indices in [0, %zd), got %lld in row %zd",
                     (Py_ssize_t)nv, (long long)e[2 * s + t], (Py_ssize_t)s);
        goto fail;
      }
    if (e[2 * s] == e[2 * s + 1]) {
      PyErr_Format(PyExc_ValueError,
                   "edges: expected two distinct vertices per spring, got a self-loop "
                   "(%lld, %lld) in row %zd",
                   (long long)e[2 * s], (long long)e[2 * s], (Py_ssize_t)s);
      goto fail;
    }
  }
  return a;
fail:
  Py_DECREF(a);
  return NULL;
}

/* obj as a validated (n,3) array of finite reals; n < 0 accepts any count */
static PyArrayObject *get_points(PyObject *obj, const char *name, npy_intp n) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (a && check_points(a, name, n)) Py_CLEAR(a);
  return a;
}

/* write a scalar or (n,) array a of values >= lo (> lo when strict) into out[n]; out is
 * untouched on error */
static int per_values(PyArrayObject *a, const char *name, npy_intp n, const char *per, double lo,
                      int strict, double *out) {
  if (PyArray_NDIM(a) != 0) {
    char expected[96];
    snprintf(expected, sizeof(expected), "(%zd,) (one per %s) or a scalar", (Py_ssize_t)n, per);
    if (check_shape(a, name, 1, n, -1, expected)) return -1;
  }
  const double *v = PyArray_DATA(a);
  if (check_values(v, PyArray_SIZE(a), name, lo, strict)) return -1;
  for (npy_intp i = 0; i < n; i++) out[i] = PyArray_NDIM(a) ? v[i] : v[0];
  return 0;
}

/* per_values of obj converted to an array */
static int get_per(PyObject *obj, const char *name, npy_intp n, const char *per, double lo,
                   int strict, double *out) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (!a) return -1;
  int err = per_values(a, name, n, per, lo, strict, out);
  Py_DECREF(a);
  return err;
}

/* the fixed set as given: a boolean mask, or int64 vertex indices (None: none) */
static PyArrayObject *fixed_array(PyObject *obj) {
  if (obj == Py_None) {
    npy_intp none = 0;
    return (PyArrayObject *)PyArray_SimpleNew(1, &none, NPY_INT64);
  }
  PyArrayObject *probe = (PyArrayObject *)PyArray_FROM_O(obj);
  if (probe && PyArray_DESCR(probe)->kind == 'b') {
    PyArrayObject *mask =
        (PyArrayObject *)PyArray_FROM_OTF((PyObject *)probe, NPY_BOOL, NPY_ARRAY_IN_ARRAY);
    Py_DECREF(probe);
    return mask;
  }
  Py_XDECREF(probe);
  PyErr_Clear();
  return to_array(obj, "fixed", NPY_INT64);
}

/* write the fixed mask of nv vertices from fixed_array's a into out[nv]; out is untouched on
 * error */
static int fixed_mask(PyArrayObject *a, npy_intp nv, unsigned char *out) {
  if (PyArray_TYPE(a) == NPY_BOOL) {
    char expected[64];
    snprintf(expected, sizeof(expected), "(%zd,) for a boolean mask", (Py_ssize_t)nv);
    if (check_shape(a, "fixed", 1, nv, -1, expected)) return -1;
    memcpy(out, PyArray_DATA(a), nv);
    return 0;
  }
  if (PyArray_NDIM(a) > 1) return check_shape(a, "fixed", 1, -1, -1, "(k,) of vertex indices");
  const int64_t *v = PyArray_DATA(a);
  for (npy_intp i = 0; i < PyArray_SIZE(a); i++)
    if (v[i] < 0 || v[i] >= nv) {
      PyErr_Format(PyExc_ValueError, "fixed: expected vertex indices in [0, %zd), got %lld",
                   (Py_ssize_t)nv, (long long)v[i]);
      return -1;
    }
  memset(out, 0, nv);
  for (npy_intp i = 0; i < PyArray_SIZE(a); i++) out[v[i]] = 1;
  return 0;
}

/* fixed_mask of obj converted by fixed_array */
static int get_fixed(PyObject *obj, npy_intp nv, unsigned char *out) {
  PyArrayObject *a = fixed_array(obj);
  if (!a) return -1;
  int err = fixed_mask(a, nv, out);
  Py_DECREF(a);
  return err;
}

/* write a finite 3-vector into out */
static int get_vec3(PyObject *obj, const char *name, double *out) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (!a) return -1;
  int bad = check_shape(a, name, 1, 3, -1, "(3,)") ||
            check_values(PyArray_DATA(a), 3, name, -INFINITY, 0);
  if (!bad) memcpy(out, PyArray_DATA(a), 3 * sizeof(double));
  Py_DECREF(a);
  return bad ? -1 : 0;
}

/* TypeError naming the argument: obj is not a `what`; an array says its shape */
static int wrong_type(PyObject *obj, const char *name, const char *what) {
  char shape[128] = "";
  if (PyArray_Check(obj)) {
    strcpy(shape, " of shape ");
    shape_text((PyArrayObject *)obj, shape + strlen(shape), sizeof(shape) - strlen(shape));
  }
  PyErr_Format(PyExc_TypeError, "%s: expected %s, got %.100s%s", name, what, Py_TYPE(obj)->tp_name,
               shape);
  return -1;
}

/* a finite real >= lo */
static int get_real(PyObject *obj, const char *name, double lo, int strict, double *out) {
  if (!PyNumber_Check(obj) || PyComplex_Check(obj) || PyBool_Check(obj))
    return wrong_type(obj, name, "a real number");
  double v = PyFloat_AsDouble(obj);
  if (v == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return wrong_type(obj, name, "a real number");
  }
  if (check_values(&v, -1, name, lo, strict)) return -1;
  *out = v;
  return 0;
}

/* an integer in [lo, hi] */
static int get_integer(PyObject *obj, const char *name, long long lo, long long hi,
                       long long *out) {
  if (!PyIndex_Check(obj) || PyBool_Check(obj)) return wrong_type(obj, name, "an integer");
  PyObject *index = PyNumber_Index(obj);
  if (!index) return -1;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow || v < lo || v > hi) {
    PyErr_Format(PyExc_ValueError, "%s: expected an integer in [%lld, %lld], got %R", name, lo, hi,
                 obj);
    return -1;
  }
  *out = v;
  return 0;
}

/* threads of the passes inside a step: an integer in [1, MS_MAX_THREADS] */
#define MS_MAX_THREADS 1024
static int get_threads(PyObject *obj, int *out) {
  long long v;
  if (get_integer(obj, "threads", 1, MS_MAX_THREADS, &v)) return -1;
  *out = (int)v;
  return 0;
}

/* ---------------------------------------------------------------- the System type */

typedef struct {
  PyObject_HEAD
  ms_model m;
  ms_data d;
  PyThread_type_lock lock; /* serialises stepping and state access across threads */
  uint64_t lock_forks;     /* ms_fork_generation() when the lock was last known good */
  unsigned long stepping;  /* thread running a step of this System, 0 when none */
  int ready;
} SystemObject;

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
    s->d.implicit = NULL, s->d.fms = NULL, s->d.xpbd = NULL;
  }
  s->lock_forks = forks;
  return 0;
}

/* take the System's lock, letting other threads run while waiting; RuntimeError when this
 * thread is inside a step of this System (a signal handler run by the step's interrupt
 * check) */
static int sys_lock(SystemObject *s) {
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

static void sys_unlock(SystemObject *s) {
  PyThread_release_lock(s->lock);
}

static int check_ready(SystemObject *s) {
  if (s->ready) return 0;
  PyErr_SetString(PyExc_RuntimeError, "System.__init__ was not called");
  return -1;
}

/* new (n,3) or (n,) double array copied from src */
static PyObject *array_copy(const double *src, npy_intp n, int cols) {
  npy_intp dims[2] = {n, cols};
  PyObject *a = PyArray_SimpleNew(cols ? 2 : 1, dims, NPY_DOUBLE);
  if (a && n) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(double) * n * (cols ? cols : 1));
  return a;
}

/* per-vertex state arrays: 0 positions, 1 velocities, 2 external forces */
static const char *points_name[] = {"positions", "velocities", "external_forces"};

static double *points_of(SystemObject *self, intptr_t which) {
  double *arrays[] = {self->d.x, self->d.v, self->d.fext};
  return arrays[which];
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

/* plane row c = (normal, offset) divided by |normal| into out, without overflow or underflow
 * of |normal|; NULL, or what was expected when the row cannot be normalised */
static const char *unit_plane(const double *c, double *out) {
  double big = fmax(fabs(c[0]), fmax(fabs(c[1]), fabs(c[2])));
  if (!(big > 0)) return "a non-zero normal";
  double n[3] = {c[0] / big, c[1] / big, c[2] / big};
  double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]); /* in [1, sqrt 3] */
  for (int t = 0; t < 3; t++) out[t] = n[t] / len;
  out[3] = c[3] / big / len;
  return isfinite(out[3]) ? NULL : "an offset / |normal| that stays finite";
}

/* validated colliders: (k,4) rows (or one (4,) row) of planes (normal, offset; the normal
 * must be non-zero and is normalised together with the offset) or spheres (centre,
 * radius > 0); *out is malloc'd for the model (NULL on error) */
static int get_colliders(PyObject *obj, const char *name, int spheres, double **out, int *count) {
  *out = NULL, *count = 0;
  if (obj == Py_None) return 0;
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (!a) return -1;
  const char *expected = spheres ? "(k, 4) of centre and radius" : "(k, 4) of normal and offset";
  int one = PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == 4; /* a single collider */
  if ((!one && check_shape(a, name, 2, -1, 4, expected)) ||
      check_values(PyArray_DATA(a), PyArray_SIZE(a), name, -INFINITY, 0))
    goto fail;
  int k = one ? 1 : (int)PyArray_DIM(a, 0);
  const double *v = PyArray_DATA(a);
  *out = malloc(sizeof(double) * 4 * (k ? k : 1));
  if (!*out) {
    PyErr_NoMemory();
    goto fail;
  }
  for (int r = 0; r < k; r++) {
    const double *c = v + 4 * r;
    double *row = *out + 4 * r;
    memcpy(row, c, 4 * sizeof(double));
    const char *want = spheres ? (c[3] > 0 ? NULL : "a radius > 0") : unit_plane(c, row);
    if (!want) continue;
    PyErr_Format(PyExc_ValueError, "%s: expected %s in row %d", name, want, r);
    free(*out);
    *out = NULL;
    goto fail;
  }
  *count = k;
  Py_DECREF(a);
  return 0;
fail:
  Py_DECREF(a);
  return -1;
}

/* constructor arguments; NULL where the caller left the default */
typedef struct {
  PyObject *vertices, *edges, *mass, *stiffness, *rest, *fixed, *gravity, *damping;
  PyObject *planes, *spheres, *kc, *cscale, *mu, *threads;
} sys_args;

/* the contract's defaults */
#define DEFAULT_MASS 0.01
#define DEFAULT_STIFFNESS 1000.0
#define DEFAULT_CONTACT_STIFFNESS 1e4
#define DEFAULT_CONTACT_SCALE 1.1

static void fill(double *dst, npy_intp n, double value) {
  for (npy_intp i = 0; i < n; i++) dst[i] = value;
}

/* the parameters of m from a, each validated before it is written */
static int build_parameters(ms_model *m, const sys_args *a, const double *x) {
  npy_intp nv = m->nv, ns = m->ns;
  const double g[3] = {0.0, -9.81, 0.0};
  if (!a->rest || a->rest == Py_None)
    rest_from_positions(m, x);
  else if (get_per(a->rest, "rest_lengths", ns, "spring", 0, 0, m->rest))
    return -1;
  if (a->mass ? get_per(a->mass, "mass", nv, "vertex", 0, 1, m->mass)
              : (fill(m->mass, nv, DEFAULT_MASS), 0))
    return -1;
  if (a->stiffness ? get_per(a->stiffness, "stiffness", ns, "spring", 0, 0, m->k)
                   : (fill(m->k, ns, DEFAULT_STIFFNESS), 0))
    return -1;
  memcpy(m->gravity, g, sizeof(g));
  m->kc = DEFAULT_CONTACT_STIFFNESS, m->cscale = DEFAULT_CONTACT_SCALE;
  if (get_fixed(a->fixed ? a->fixed : Py_None, nv, m->fixed) ||
      (a->gravity && get_vec3(a->gravity, "gravity", m->gravity)) ||
      (a->damping && get_real(a->damping, "damping", 0, 0, &m->damping)) ||
      (a->kc && get_real(a->kc, "contact_stiffness", 0, 0, &m->kc)) ||
      (a->cscale && get_real(a->cscale, "contact_scale", 0, 1, &m->cscale)) ||
      (a->mu && get_real(a->mu, "friction", 0, 0, &m->mu)) ||
      (a->threads && get_threads(a->threads, &m->nthread)))
    return -1;
  double *planes, *spheres;
  if (get_colliders(a->planes ? a->planes : Py_None, "planes", 0, &planes, &m->nplane)) return -1;
  if (get_colliders(a->spheres ? a->spheres : Py_None, "spheres", 1, &spheres, &m->nsphere)) {
    free(planes);
    return -1;
  }
  m->plane = planes, m->sphere = spheres;
  return 0;
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
  ms_model_update(m, 1);

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
  static char *kwlist[] = {
      "vertices", "edges",   "mass",   "stiffness", "rest_lengths",      "fixed",
      "gravity",  "damping", "planes", "spheres",   "contact_stiffness", "contact_scale",
      "friction", "threads", NULL};
  sys_args a = {0};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOOOOOOOOOOO:System", kwlist, &a.vertices,
                                   &a.edges, &a.mass, &a.stiffness, &a.rest, &a.fixed, &a.gravity,
                                   &a.damping, &a.planes, &a.spheres, &a.kc, &a.cscale, &a.mu,
                                   &a.threads))
    return -1;
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

/* raise type(msg) with integer attributes a1 (and a2 when named); steals msg */
static void raise_with(PyObject *type, PyObject *msg, const char *a1, long long v1, const char *a2,
                       long long v2) {
  if (!msg) return;
  PyObject *exc = PyObject_CallOneArg(type, msg);
  Py_DECREF(msg);
  PyObject *o1 = PyLong_FromLongLong(v1), *o2 = PyLong_FromLongLong(v2);
  int err = !exc || !o1 || !o2 || PyObject_SetAttrString(exc, a1, o1) ||
            (a2 && PyObject_SetAttrString(exc, a2, o2));
  if (!err) PyErr_SetObject(type, exc);
  Py_XDECREF(o1);
  Py_XDECREF(o2);
  Py_XDECREF(exc);
}

/* raise the exception that matches a failed step */
static PyObject *raise_status(SystemObject *self, ms_status st, const ms_info *info,
                              const char *method, double h) {
  // an interrupted step: the signal handler's exception (KeyboardInterrupt for Ctrl-C) is set
  if (st == MS_EINTERRUPT) {
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return NULL;
  }
  mod_state *ms = state_of((PyObject *)self);
  PyObject *hobj = PyFloat_FromDouble(h);
  if (!ms || !hobj) {
    Py_XDECREF(hobj);
    return NULL;
  }
  switch (st) {
    case MS_ENOMEM:
      PyErr_NoMemory();
      break;
    case MS_EDIVERGED:
      raise_with(
          ms->DivergenceError,
          PyUnicode_FromFormat("%s diverged at step %lld (dt=%R): vertex %d has a "
                               "non-finite or absurd (> " BOUND_TEXT ") position or velocity; the "
                               "state is left as it was before the step. Try a smaller dt, or "
                               "an implicit method (implicit_euler, fms, xpbd) for stiff springs",
                               method, (long long)self->d.nstep, hobj, info->bad),
          "step", self->d.nstep, "vertex", info->bad);
      break;
    case MS_ENOTPD:
      raise_with(ms->NotPositiveDefiniteError,
                 PyUnicode_FromFormat("%s (dt=%R): the system matrix is not positive definite "
                                      "at column %d (3 * vertex + axis; -1: found by CG); use "
                                      "spd='clamp' or 'project', or a larger shift with "
                                      "spd='shift'; the state is left as it was",
                                      method, hobj, info->bad),
                 "column", info->bad, NULL, 0);
      break;
    case MS_ECHOLMOD:
      PyErr_Format(ms->CholmodError, "%s (dt=%R): CHOLMOD failed; the state is left as it was",
                   method, hobj);
      break;
    default:
      PyErr_Format(PyExc_ValueError, "%s (dt=%R): invalid step arguments (status %d)", method, hobj,
                   (int)st);
  }
  Py_DECREF(hobj);
  return NULL;
}

/* a core call run without the GIL: its arguments, and what it reports */
typedef struct {
  int method; /* ms_method for steps, ms_fms_part for kernels */
  double h;
  ms_opt opt;
  int reps;
  ms_info info;
  double seconds; /* wall time of the call */
} core_call;

static ms_status step_call(SystemObject *self, core_call *c) {
  ms_status st = ms_data_reserve(&self->d, c->opt.iterations + 1); /* capped at MS_HIST_MAX */
  return st != MS_OK ? st
                     : ms_step(&self->m, &self->d, (ms_method)c->method, c->h, &c->opt, &c->info);
}

static ms_status kernel_call(SystemObject *self, core_call *c) {
  return ms_fms_kernel(&self->m, &self->d, c->h, &c->opt, (ms_fms_part)c->method, c->reps);
}

/* the interrupt check of a step: Python's signal handlers run (Ctrl-C raises
 * KeyboardInterrupt) with the GIL taken for that moment; nonzero when one raised, whose
 * exception the step's caller then finds set */
static int check_signals(void *unused) {
  PyGILState_STATE gil = PyGILState_Ensure();
  int raised = PyErr_CheckSignals() < 0;
  PyGILState_Release(gil);
  return raised;
}

/* run fn on a System whose lock the caller holds, without the GIL, timing it into
 * c->seconds; on the main thread (the one Python's signal handlers run on) long loops poll
 * for Ctrl-C */
static ms_status run_core(SystemObject *self, ms_status (*fn)(SystemObject *, core_call *),
                          core_call *c) {
  mod_state *ms = state_of((PyObject *)self);
  unsigned long me = PyThread_get_thread_ident();
  ms_status st;
  self->stepping = me;
  self->d.interrupt = ms && me == ms->main_thread ? check_signals : NULL;
  self->d.polled = ms_clock();
  Py_BEGIN_ALLOW_THREADS
  double t0 = ms_clock();
  st = fn(self, c);
  c->seconds = ms_clock() - t0;
  Py_END_ALLOW_THREADS
  self->d.interrupt = NULL;
  self->stepping = 0;
  return st;
}

/* step options the core understands: keyword, type ('i' int, 'd' double), field, range */
typedef struct {
  const char *name;
  char type;
  size_t offset;
  double lo, hi;
} opt_field;

/* iteration caps, substeps and delays: loops count in int, so caps stay well inside it */
#define MS_MAX_COUNT 1000000000
/* anderson history columns: each holds two (n,3) arrays */
#define MS_MAX_WINDOW 100

static const opt_field opt_fields[] = {
    {"iterations", 'i', offsetof(ms_opt, iterations), 1, MS_MAX_COUNT},
    {"tol", 'd', offsetof(ms_opt, tol), 0, INFINITY},
    /* implicit_euler, linearized_implicit */
    {"spd", 'i', offsetof(ms_opt, spd), 0, MS_NSPD - 1},
    {"shift", 'd', offsetof(ms_opt, shift), 0, INFINITY},
    {"line_search", 'i', offsetof(ms_opt, line_search), 0, 1},
    {"solver", 'i', offsetof(ms_opt, solver), 0, MS_NSOLVE - 1},
    /* fms, xpbd */
    {"pin", 'i', offsetof(ms_opt, pin), 0, MS_PIN_PENALTY},
    {"pin_weight", 'd', offsetof(ms_opt, pin_weight), 0, INFINITY},
    {"acceleration", 'i', offsetof(ms_opt, acceleration), 0, MS_ACCEL_ANDERSON},
    {"rho", 'd', offsetof(ms_opt, rho), 0, INFINITY},
    {"chebyshev_delay", 'i', offsetof(ms_opt, chebyshev_delay), 0, MS_MAX_COUNT},
    {"relax", 'd', offsetof(ms_opt, relax), 0, INFINITY},
    {"window", 'i', offsetof(ms_opt, window), 1, MS_MAX_WINDOW},
    {"start", 'i', offsetof(ms_opt, start), 0, MS_NSTART - 1},
    {"substeps", 'i', offsetof(ms_opt, substeps), 1, MS_MAX_COUNT},
    {"xpbd_damping", 'd', offsetof(ms_opt, xpbd_damping), 0, INFINITY},
};
#define MS_NOPT (sizeof(opt_fields) / sizeof(opt_fields[0]))

/* fill opt from a keyword dict, each value checked against its field */
static int parse_options(PyObject *kw, ms_opt *opt) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kw && PyDict_Next(kw, &pos, &key, &value)) {
    const opt_field *f = NULL;
    for (size_t i = 0; i < MS_NOPT; i++)
      if (PyUnicode_CompareWithASCIIString(key, opt_fields[i].name) == 0) f = &opt_fields[i];
    if (!f) {
      PyErr_Format(PyExc_ValueError, "%U: not a step option of the core", key);
      return -1;
    }
    long long count;
    if (f->type == 'i' && get_integer(value, f->name, (long long)f->lo, (long long)f->hi, &count))
      return -1;
    if (f->type == 'i') *(int *)((char *)opt + f->offset) = (int)count;
    if (f->type == 'd' && get_real(value, f->name, f->lo, 0, (double *)((char *)opt + f->offset)))
      return -1;
  }
  return 0;
}

/* step_options() -> {core option: (type, low, high)}: the ranges the core accepts */
static PyObject *step_options_py(PyObject *mod, PyObject *unused) {
  PyObject *out = PyDict_New();
  for (size_t i = 0; out && i < MS_NOPT; i++) {
    const opt_field *f = &opt_fields[i];
    PyObject *row = f->type == 'i'
                        ? Py_BuildValue("(sLL)", "int", (long long)f->lo, (long long)f->hi)
                        : Py_BuildValue("(sdd)", "float", f->lo, f->hi);
    if (!row || PyDict_SetItemString(out, f->name, row)) Py_CLEAR(out);
    Py_XDECREF(row);
  }
  return out;
}

/* _step(dt, method, **options) -> (iterations, converged, residuals, objectives, seconds,
 * timings) */
static PyObject *System_step(SystemObject *self, PyObject *args, PyObject *kw) {
  PyObject *dtobj;
  const char *name;
  ms_opt opt = {.iterations = 1, .tol = 0.0};
  if (check_ready(self) || !PyArg_ParseTuple(args, "Os:_step", &dtobj, &name)) return NULL;
  double h;
  if (get_real(dtobj, "dt", 0, 1, &h) || parse_options(kw, &opt)) return NULL;
  int method = -1;
  for (int i = 0; i < MS_NMETHOD; i++)
    if (method_names[i] && !strcmp(name, method_names[i])) method = i;
  if (method < 0) {
    PyErr_Format(PyExc_ValueError, "method: expected one of the integrator names, got '%s'", name);
    return NULL;
  }

  // step without the GIL, one thread per System at a time; its history is read under the lock
  core_call call = {.method = method, .h = h, .opt = opt};
  if (sys_lock(self)) return NULL;
  ms_status st = run_core(self, step_call, &call);
  ms_info info = call.info;
  PyObject *res = NULL, *obj = NULL;
  if (st == MS_OK) {
    res = array_copy(self->d.hres, info.nhist, 0);
    obj = array_copy(self->d.hobj, info.nhist, 0);
  }
  sys_unlock(self);
  if (st != MS_OK) return raise_status(self, st, &info, name, h);
  if (!res || !obj) {
    Py_XDECREF(res);
    Py_XDECREF(obj);
    return NULL;
  }
  return Py_BuildValue("(iONNd{sdsdsd})", info.iters, info.converged ? Py_True : Py_False, res, obj,
                       call.seconds, "assemble", info.timing[0], "factor", info.timing[1], "solve",
                       info.timing[2]);
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

/* _fms_kernel(dt, part, repeats, **options) -> seconds for `repeats` runs of one FMS kernel:
 * part "setup" (analyse and factorise from scratch; repeats ignored), "local" (local step into
 * the right-hand sides) or "solve" (one three-column CHOLMOD solve); the state is untouched */
static PyObject *System_fms_kernel(SystemObject *self, PyObject *args, PyObject *kw) {
  static const char *parts[] = {
      [MS_FMS_SETUP] = "setup", [MS_FMS_LOCAL] = "local", [MS_FMS_SOLVE] = "solve"};
  PyObject *dtobj;
  const char *name;
  int reps, part = -1;
  ms_opt opt = {.iterations = 1};
  double h;
  if (check_ready(self) || !PyArg_ParseTuple(args, "Osi:_fms_kernel", &dtobj, &name, &reps) ||
      get_real(dtobj, "dt", 0, 1, &h) || parse_options(kw, &opt))
    return NULL;
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, parts[i])) part = i;
  if (part < 0 || reps < 1) {
    PyErr_Format(PyExc_ValueError,
                 "part: expected 'setup', 'local' or 'solve' and repeats >= "
                 "1, got '%s' and %d",
                 name, reps);
    return NULL;
  }
  core_call call = {.method = part, .h = h, .opt = opt, .reps = reps};
  if (sys_lock(self)) return NULL;
  ms_status st = run_core(self, kernel_call, &call);
  sys_unlock(self);
  if (st != MS_OK) {
    ms_info info = {.bad = -1};
    return raise_status(self, st, &info, "fms", h);
  }
  return PyFloat_FromDouble(call.seconds);
}

/* energy() -> {"kinetic", "spring", "gravity", "total"} in joules */
static PyObject *System_energy(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  ms_energies e = ms_energy(&self->m, &self->d);
  sys_unlock(self);
  return Py_BuildValue("{sdsdsdsdsd}", "kinetic", e.kinetic, "spring", e.spring, "gravity",
                       e.gravity, "collision", e.collision, "total",
                       e.kinetic + e.spring + e.gravity + e.collision);
}

/* forces() -> (n,3) spring, gravity and external force on every vertex [N], fixed ones included
 * (they ignore their external force) */
static PyObject *System_forces(SystemObject *self, PyObject *unused) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  npy_intp dims[2] = {self->m.nv, 3};
  PyObject *f = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
  if (f) ms_total_forces(&self->m, &self->d, self->d.x, PyArray_DATA((PyArrayObject *)f));
  sys_unlock(self);
  return f;
}

/* set_state(positions, velocities, time=0.0, steps=0, external_forces=None): all validated
 * before any is written; external_forces None means none (zeros) */
static PyObject *System_set_state(SystemObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"positions", "velocities", "time", "steps", "external_forces", NULL};
  PyObject *obj[3] = {NULL, NULL, Py_None}, *timeobj = NULL, *stepsobj = NULL;
  long long steps = 0;
  double t = 0.0;
  if (check_ready(self) ||
      !PyArg_ParseTupleAndKeywords(args, kw, "OO|OOO:_set_state", kwlist, &obj[0], &obj[1],
                                   &timeobj, &stepsobj, &obj[2]))
    return NULL;
  if ((timeobj && get_real(timeobj, "time", -INFINITY, 0, &t)) ||
      (stepsobj && get_integer(stepsobj, "steps", 0, INT64_MAX, &steps)))
    return NULL;

  // convert first (NumPy may run Python code, re-initialisation included), then check the
  // arrays against the System as it is under the lock
  PyArrayObject *a[3] = {NULL, NULL, NULL};
  int err = 0, given = obj[2] != Py_None ? 3 : 2;
  for (int k = 0; k < given && !err; k++)
    err = !(a[k] = to_array(obj[k], points_name[k], NPY_DOUBLE));
  err = err || sys_lock(self);
  if (!err) {
    for (int k = 0; k < given && !err; k++) err = check_points(a[k], points_name[k], self->m.nv);
    for (int k = 0; k < 3 && !err; k++) {
      if (a[k])
        memcpy(points_of(self, k), PyArray_DATA(a[k]), sizeof(double) * 3 * self->m.nv);
      else
        memset(points_of(self, k), 0, sizeof(double) * 3 * self->m.nv);
    }
    if (!err) self->d.time = t, self->d.nstep = steps;
    sys_unlock(self);
  }
  for (int k = 0; k < 3; k++) Py_XDECREF(a[k]);
  if (err) return NULL;
  Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- properties */

static int refuse_delete(PyObject *value, const char *name) {
  if (value) return 0;
  PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", name);
  return -1;
}

/* positions, velocities and external forces getters and setters: closure 0, 1, 2 */
static PyObject *get_points_prop(SystemObject *self, void *which) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  PyObject *a = array_copy(points_of(self, (intptr_t)which), self->m.nv, 3);
  sys_unlock(self);
  return a;
}

static int set_points(SystemObject *self, PyObject *value, void *which) {
  const char *name = points_name[(intptr_t)which];
  if (check_ready(self) || refuse_delete(value, name)) return -1;
  // convert first: NumPy may run Python code (__array__), re-initialisation included
  PyArrayObject *a = to_array(value, name, NPY_DOUBLE);
  int err = !a || sys_lock(self);
  if (!err) {
    err = check_points(a, name, self->m.nv);
    if (!err)
      memcpy(points_of(self, (intptr_t)which), PyArray_DATA(a), sizeof(double) * 3 * self->m.nv);
    sys_unlock(self);
  }
  Py_XDECREF(a);
  return err ? -1 : 0;
}

static PyObject *get_edges_prop(SystemObject *self, void *c) {
  if (check_ready(self)) return NULL;
  npy_intp dims[2] = {self->m.ns, 2};
  PyObject *a = PyArray_SimpleNew(2, dims, NPY_INT64);
  if (!a) return NULL;
  int64_t *e = PyArray_DATA((PyArrayObject *)a);
  for (npy_intp i = 0; i < 2 * (npy_intp)self->m.ns; i++) e[i] = self->m.edge[i];
  return a;
}

static PyObject *get_mass(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : array_copy(self->m.mass, self->m.nv, 0);
}

static PyObject *get_stiffness(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : array_copy(self->m.k, self->m.ns, 0);
}

static PyObject *get_rest(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : array_copy(self->m.rest, self->m.ns, 0);
}

/* a per-vertex or per-spring model array: its name, the place of its pointer in ms_model,
 * whether its lower bound 0 is excluded, and whether factorisations depend on it */
typedef struct {
  const char *name;
  size_t offset;
  int per_vertex, strict, bump;
} array_param;

static const array_param mass_param = {"mass", offsetof(ms_model, mass), 1, 1, 1};
static const array_param stiffness_param = {"stiffness", offsetof(ms_model, k), 0, 0, 1};
static const array_param rest_param = {"rest_lengths", offsetof(ms_model, rest), 0, 0, 0};

/* mass, stiffness and rest-length setters: convert, then check against the System as it is
 * under the lock and write (nothing is written on error) */
static int set_array_param(SystemObject *self, PyObject *value, void *param) {
  const array_param *p = param;
  if (check_ready(self) || refuse_delete(value, p->name)) return -1;
  // convert first: NumPy may run Python code (__array__), re-initialisation included
  PyArrayObject *a = to_array(value, p->name, NPY_DOUBLE);
  int err = !a || sys_lock(self);
  if (!err) {
    double *dst = *(double **)((char *)&self->m + p->offset);
    npy_intp n = p->per_vertex ? self->m.nv : self->m.ns;
    err = per_values(a, p->name, n, p->per_vertex ? "vertex" : "spring", 0, p->strict, dst);
    if (!err && p->bump) ms_model_update(&self->m, 0);
    sys_unlock(self);
  }
  Py_XDECREF(a);
  return err ? -1 : 0;
}

static PyObject *get_fixed_prop(SystemObject *self, void *c) {
  if (check_ready(self)) return NULL;
  npy_intp count = 0;
  for (int i = 0; i < self->m.nv; i++) count += self->m.fixed[i];
  PyObject *a = PyArray_SimpleNew(1, &count, NPY_INT64);
  if (!a) return NULL;
  int64_t *idx = PyArray_DATA((PyArrayObject *)a);
  for (int i = 0, k = 0; i < self->m.nv; i++)
    if (self->m.fixed[i]) idx[k++] = i;
  return a;
}

static int set_fixed_prop(SystemObject *self, PyObject *value, void *c) {
  if (check_ready(self) || refuse_delete(value, "fixed")) return -1;
  // convert first: NumPy may run Python code (__array__), re-initialisation included
  PyArrayObject *a = fixed_array(value);
  int err = !a || sys_lock(self);
  if (!err) {
    err = fixed_mask(a, self->m.nv, self->m.fixed);
    if (!err) ms_model_update(&self->m, 1);
    sys_unlock(self);
  }
  Py_XDECREF(a);
  return err ? -1 : 0;
}

static PyObject *get_gravity(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : array_copy(self->m.gravity, 3, 0);
}

static int set_gravity(SystemObject *self, PyObject *value, void *c) {
  double g[3];
  if (check_ready(self) || refuse_delete(value, "gravity") || get_vec3(value, "gravity", g) ||
      sys_lock(self))
    return -1;
  memcpy(self->m.gravity, g, sizeof(g));
  sys_unlock(self);
  return 0;
}

/* a real model parameter: its name, place in ms_model and lower bound */
typedef struct {
  const char *name;
  size_t offset;
  double lo;
  int strict;
} scalar_param;

static const scalar_param damping_param = {"damping", offsetof(ms_model, damping), 0, 0};
static const scalar_param kc_param = {"contact_stiffness", offsetof(ms_model, kc), 0, 0};
static const scalar_param cscale_param = {"contact_scale", offsetof(ms_model, cscale), 0, 1};
static const scalar_param mu_param = {"friction", offsetof(ms_model, mu), 0, 0};

static PyObject *get_scalar(SystemObject *self, void *param) {
  const scalar_param *p = param;
  return check_ready(self) ? NULL : PyFloat_FromDouble(*(double *)((char *)&self->m + p->offset));
}

static int set_scalar(SystemObject *self, PyObject *value, void *param) {
  const scalar_param *p = param;
  double v = 0;
  if (check_ready(self) || refuse_delete(value, p->name) ||
      get_real(value, p->name, p->lo, p->strict, &v) || sys_lock(self))
    return -1;
  *(double *)((char *)&self->m + p->offset) = v;
  sys_unlock(self);
  return 0;
}

/* planes and spheres: closure 0 for planes, 1 for spheres */
static PyObject *get_colliders_prop(SystemObject *self, void *which) {
  if (check_ready(self)) return NULL;
  return array_copy(which ? self->m.sphere : self->m.plane,
                    which ? self->m.nsphere : self->m.nplane, 4);
}

static int set_colliders_prop(SystemObject *self, PyObject *value, void *which) {
  const char *name = which ? "spheres" : "planes";
  double *rows;
  int k;
  if (check_ready(self) || refuse_delete(value, name) ||
      get_colliders(value, name, which != NULL, &rows, &k))
    return -1;
  if (sys_lock(self)) {
    free(rows);
    return -1;
  }
  double **slot = which ? &self->m.sphere : &self->m.plane;
  free(*slot);
  *slot = rows;
  *(which ? &self->m.nsphere : &self->m.nplane) = k;
  sys_unlock(self);
  return 0;
}

static PyObject *get_threads_prop(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyLong_FromLong(self->m.nthread);
}

static int set_threads_prop(SystemObject *self, PyObject *value, void *c) {
  int t;
  if (check_ready(self) || refuse_delete(value, "threads") || get_threads(value, &t) ||
      sys_lock(self))
    return -1;
  self->m.nthread = t;
  sys_unlock(self);
  return 0;
}

static PyObject *get_time(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyFloat_FromDouble(self->d.time);
}

static PyObject *get_steps(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyLong_FromLongLong(self->d.nstep);
}

static PyObject *get_nv(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyLong_FromLong(self->m.nv);
}

static PyObject *get_ns(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyLong_FromLong(self->m.ns);
}

static PyGetSetDef System_getset[] = {
    {"positions", (getter)get_points_prop, (setter)set_points, "(n,3) positions [m] (a copy)",
     NULL},
    {"velocities", (getter)get_points_prop, (setter)set_points, "(n,3) velocities [m/s] (a copy)",
     (void *)1},
    {"external_forces", (getter)get_points_prop, (setter)set_points,
     "(n,3) external force on every vertex [N] (a copy), zero by default; fixed vertices ignore it",
     (void *)2},
    {"edges", (getter)get_edges_prop, NULL, "(m,2) spring vertex indices (int64)", NULL},
    {"mass", (getter)get_mass, (setter)set_array_param, "(n,) vertex masses [kg]",
     (void *)&mass_param},
    {"stiffness", (getter)get_stiffness, (setter)set_array_param, "(m,) stiffness [N/m]",
     (void *)&stiffness_param},
    {"rest_lengths", (getter)get_rest, (setter)set_array_param, "(m,) rest lengths [m]",
     (void *)&rest_param},
    {"fixed", (getter)get_fixed_prop, (setter)set_fixed_prop,
     "sorted indices of fixed (kinematic) vertices; set with indices or a boolean mask", NULL},
    {"gravity", (getter)get_gravity, (setter)set_gravity, "(3,) gravity [m/s^2]", NULL},
    {"damping", (getter)get_scalar, (setter)set_scalar, "ether drag rate [1/s]",
     (void *)&damping_param},
    {"planes", (getter)get_colliders_prop, (setter)set_colliders_prop,
     "(k,4) contact planes: unit normal and offset, outside where n.x >= offset; assign to move",
     NULL},
    {"spheres", (getter)get_colliders_prop, (setter)set_colliders_prop,
     "(k,4) contact spheres: centre [m] and radius [m]; assign to move", (void *)1},
    {"contact_stiffness", (getter)get_scalar, (setter)set_scalar,
     "penalty stiffness of contacts in the force-based methods [N/m]", (void *)&kc_param},
    {"contact_scale", (getter)get_scalar, (setter)set_scalar,
     "sphere contact radius factor s: contact happens at s * radius", (void *)&cscale_param},
    {"friction", (getter)get_scalar, (setter)set_scalar, "Coulomb friction coefficient",
     (void *)&mu_param},
    {"threads", (getter)get_threads_prop, (setter)set_threads_prop,
     "threads of the passes inside a step (results do not depend on it)", NULL},
    {"time", (getter)get_time, NULL, "simulated time [s]", NULL},
    {"steps", (getter)get_steps, NULL, "steps taken", NULL},
    {"n_vertices", (getter)get_nv, NULL, "number of vertices", NULL},
    {"n_springs", (getter)get_ns, NULL, "number of springs", NULL},
    {NULL},
};

static PyMethodDef System_methods[] = {
    {"_step", (PyCFunction)(void (*)(void))System_step, METH_VARARGS | METH_KEYWORDS,
     "_step(dt, method, **options) -> (iterations, converged, residuals, objectives, "
     "seconds, timings); use System.step"},
    {"_hessian_blocks", (PyCFunction)System_hessian_blocks, METH_O,
     "_hessian_blocks(spd) -> (m,3,3) spring Hessian blocks at the current positions [N/m]; "
     "spd is the index of the treatment in METHODS['implicit_euler']['spd'].kind"},
    {"_fms_factorizations", (PyCFunction)System_fms_factorizations, METH_NOARGS,
     "_fms_factorizations() -> numeric factorisations FMS has done (tests of the cache)"},
    {"_fms_kernel", (PyCFunction)(void (*)(void))System_fms_kernel, METH_VARARGS | METH_KEYWORDS,
     "_fms_kernel(dt, part, repeats, **core_options) -> seconds of one FMS kernel (benchmarks)"},
    {"energy", (PyCFunction)System_energy, METH_NOARGS,
     "energy() -> dict of kinetic, spring, gravity, collision and total energy [J]; the "
     "external forces have no potential in it (their work changes the total)"},
    {"forces", (PyCFunction)System_forces, METH_NOARGS,
     "forces() -> (n,3) spring, gravity and external force on every vertex [N]"},
    {"_set_state", (PyCFunction)(void (*)(void))System_set_state, METH_VARARGS | METH_KEYWORDS,
     "_set_state(positions, velocities, time=0.0, steps=0, external_forces=None): replace the "
     "state atomically; use System.set_state"},
    {NULL},
};

static PyType_Slot System_slots[] = {
    {Py_tp_doc,
     "System(vertices, edges, *, mass=0.01, stiffness=1000.0, rest_lengths=None, "
     "fixed=None, gravity=(0, -9.81, 0), damping=0.0, planes=None, spheres=None, "
     "contact_stiffness=1e4, contact_scale=1.1, friction=0.0, threads=1): C core of "
     "msim.System"},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, System_init},
    {Py_tp_dealloc, System_dealloc},
    {Py_tp_methods, System_methods},
    {Py_tp_getset, System_getset},
    {0, NULL},
};

static PyType_Spec System_spec = {
    .name = "msim._core.System",
    .basicsize = sizeof(SystemObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = System_slots,
};

/* ---------------------------------------------------------------- module */

static PyObject *cholmod_version_py(PyObject *mod, PyObject *unused) {
  int v[3];
  ms_cholmod_version(v);
  return PyUnicode_FromFormat("%d.%d.%d", v[0], v[1], v[2]);
}

static PyObject *blas_serialised_py(PyObject *mod, PyObject *unused) {
  return PyBool_FromLong(ms_chol_serialised());
}

static PyMethodDef core_functions[] = {
    {"cholmod_version", cholmod_version_py, METH_NOARGS,
     "cholmod_version() -> the version of the CHOLMOD library msim is linked against"},
    {"step_options", step_options_py, METH_NOARGS,
     "step_options() -> {core option: (type, low, high)}: the values the core accepts"},
    {"blas_serialised", blas_serialised_py, METH_NOARGS,
     "blas_serialised() -> True when supernodal CHOLMOD calls are serialised process-wide "
     "because the BLAS is not safe to call from several threads at once"},
    {NULL},
};

/* add an exception class named name with the given bases to the module */
static PyObject *add_exception(PyObject *mod, const char *name, const char *doc, PyObject *bases) {
  PyObject *exc = PyErr_NewExceptionWithDoc(name, doc, bases, NULL);
  Py_DECREF(bases);
  if (!exc || PyModule_AddObjectRef(mod, strrchr(name, '.') + 1, exc)) {
    Py_XDECREF(exc);
    return NULL;
  }
  return exc;
}

/* the identity of the main thread, where Python runs its signal handlers */
static int main_thread_ident(unsigned long *out) {
  PyObject *threading = PyImport_ImportModule("threading");
  PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
  PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
  *out = ident ? PyLong_AsUnsignedLong(ident) : 0;
  Py_XDECREF(threading);
  Py_XDECREF(main);
  Py_XDECREF(ident);
  return PyErr_Occurred() ? -1 : 0;
}

static int core_exec(PyObject *mod) {
  if (_import_array() < 0) return -1;
  ms_threads_init();
  ms_chol_init();
  mod_state *st = PyModule_GetState(mod);
  if (main_thread_ident(&st->main_thread)) return -1;
  PyObject *linalg = PyImport_ImportModule("numpy.linalg");
  if (!linalg) return -1;
  PyObject *linalg_error = PyObject_GetAttrString(linalg, "LinAlgError");
  Py_DECREF(linalg);
  if (!linalg_error) return -1;

  // the exception hierarchy
  st->Error = add_exception(mod, "msim.Error", "Base class of msim's runtime errors.",
                            Py_BuildValue("(O)", PyExc_Exception));
  if (!st->Error) goto fail;
  st->DivergenceError = add_exception(
      mod, "msim.DivergenceError",
      "A step produced a non-finite or absurd position or velocity. Attributes: step, vertex. "
      "The state is left as it was before the step.",
      Py_BuildValue("(OO)", st->Error, PyExc_FloatingPointError));
  st->NotPositiveDefiniteError = add_exception(
      mod, "msim.NotPositiveDefiniteError",
      "A linear system was not positive definite. Attribute: column (where CHOLMOD stopped).",
      Py_BuildValue("(OO)", st->Error, linalg_error));
  st->CholmodError = add_exception(mod, "msim.CholmodError", "CHOLMOD reported a failure.",
                                   Py_BuildValue("(O)", st->Error));
  Py_CLEAR(linalg_error);
  if (!st->DivergenceError || !st->NotPositiveDefiniteError || !st->CholmodError) goto fail;

  // the System type
  st->SystemType = PyType_FromModuleAndSpec(mod, &System_spec, NULL);
  if (!st->SystemType || PyModule_AddObjectRef(mod, "System", st->SystemType)) goto fail;
  return 0;
fail:
  Py_XDECREF(linalg_error);
  return -1;
}

static int core_traverse(PyObject *mod, visitproc visit, void *arg) {
  mod_state *st = PyModule_GetState(mod);
  Py_VISIT(st->Error);
  Py_VISIT(st->DivergenceError);
  Py_VISIT(st->NotPositiveDefiniteError);
  Py_VISIT(st->CholmodError);
  Py_VISIT(st->SystemType);
  return 0;
}

static int core_clear(PyObject *mod) {
  mod_state *st = PyModule_GetState(mod);
  Py_CLEAR(st->Error);
  Py_CLEAR(st->DivergenceError);
  Py_CLEAR(st->NotPositiveDefiniteError);
  Py_CLEAR(st->CholmodError);
  Py_CLEAR(st->SystemType);
  return 0;
}

static void core_free(void *mod) {
  core_clear(mod);
}

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "msim._core",
    .m_doc = "C core of msim: the System type, integrators and the CHOLMOD layer.",
    .m_size = sizeof(mod_state),
    .m_methods = core_functions,
    .m_slots = core_slots,
    .m_traverse = core_traverse,
    .m_clear = core_clear,
    .m_free = core_free,
};

PyMODINIT_FUNC PyInit__core(void) {
  return PyModuleDef_Init(&core_module);
}
