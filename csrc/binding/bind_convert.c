/* bind_convert.c: Python objects to checked C values and back; every error names the
 * argument, what was expected and what came */
#include "bind.h"

#include <math.h>
#include <string.h>

/* text of an array's shape, like "(4, 2)" */
static void shape_text(PyArrayObject *a, char *buf, size_t size) {
  int len = snprintf(buf, size, "(");
  for (int i = 0; i < PyArray_NDIM(a) && len < (int)size; i++)
    len += snprintf(buf + len, size - len, i ? ", %zd" : "%zd", (Py_ssize_t)PyArray_DIM(a, i));
  if (len < (int)size) snprintf(buf + len, size - len, PyArray_NDIM(a) == 1 ? ",)" : ")");
}

/* obj as a C-contiguous native array of type typenum (NPY_DOUBLE or NPY_INT64); the dtype
 * kind must be real (or integer for NPY_INT64), else TypeError naming the argument */
PyArrayObject *to_array(PyObject *obj, const char *name, int typenum) {
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

/* ValueError unless every value lies within MS_BOUND, the magnitude beyond which a position
 * or velocity counts as diverged */
static int check_bounded(const double *v, npy_intp n, const char *name) {
  for (npy_intp i = 0; i < n; i++) {
    if (fabs(v[i]) <= MS_BOUND) continue;
    PyObject *val = PyFloat_FromDouble(v[i]);
    if (val)
      PyErr_Format(PyExc_ValueError,
                   "%s: expected values of magnitude at most " BOUND_TEXT
                   " (beyond it a state counts as diverged), got %R at flat index %zd",
                   name, val, (Py_ssize_t)i);
    Py_XDECREF(val);
    return -1;
  }
  return 0;
}

/* ValueError unless a is an (n,3) array of finite reals, within MS_BOUND when bounded (a
 * position or velocity); n < 0 accepts any count */
int check_points(PyArrayObject *a, const char *name, npy_intp n, int bounded) {
  char expected[64];
  if (n < 0)
    snprintf(expected, sizeof(expected), "(n, 3)");
  else
    snprintf(expected, sizeof(expected), "(%zd, 3)", (Py_ssize_t)n);
  return check_shape(a, name, 2, n, 3, expected) ||
                 check_values(PyArray_DATA(a), PyArray_SIZE(a), name, -INFINITY, 0) ||
                 (bounded && check_bounded(PyArray_DATA(a), PyArray_SIZE(a), name))
             ? -1
             : 0;
}

/* obj as a validated (rows, k) array of indices into nv vertices, k distinct per row: a
 * spring's two ends (edges) or a triangle's three corners (faces) */
PyArrayObject *get_index_rows(PyObject *obj, const char *name, npy_intp nv, int k,
                              const char *shape, const char *what) {
  PyArrayObject *a = to_array(obj, name, NPY_INT64);
  if (!a) return NULL;
  if (check_shape(a, name, 2, -1, k, shape)) goto fail;
  const int64_t *e = PyArray_DATA(a);
  for (npy_intp s = 0; s < PyArray_DIM(a, 0); s++)
    for (int t = 0; t < k; t++) {
      if (e[k * s + t] < 0 || e[k * s + t] >= nv) {
        PyErr_Format(PyExc_ValueError,
                     "%s: expected vertex indices in [0, %zd), got %lld in row %zd", name,
                     (Py_ssize_t)nv, (long long)e[k * s + t], (Py_ssize_t)s);
        goto fail;
      }
      for (int u = 0; u < t; u++)
        if (e[k * s + u] == e[k * s + t]) {
          PyErr_Format(PyExc_ValueError,
                       "%s: expected %d distinct vertices per %s, got vertex %lld twice in row %zd",
                       name, k, what, (long long)e[k * s + t], (Py_ssize_t)s);
          goto fail;
        }
    }
  return a;
fail:
  Py_DECREF(a);
  return NULL;
}

PyArrayObject *get_edges(PyObject *obj, npy_intp nv) {
  return get_index_rows(obj, "edges", nv, 2, "(m, 2)", "spring");
}

PyArrayObject *get_faces(PyObject *obj, npy_intp nv) {
  return get_index_rows(obj, "faces", nv, 3, "(t, 3)", "triangle");
}

/* a Python or NumPy bool into out */
int get_flag(PyObject *obj, const char *name, int *out) {
  if (!PyBool_Check(obj) && !PyArray_IsScalar(obj, Bool)) {
    PyErr_Format(PyExc_TypeError, "%s: expected True or False, got %R", name, obj);
    return -1;
  }
  *out = PyObject_IsTrue(obj);
  return 0;
}

/* obj as a validated (n,3) array of finite positions within MS_BOUND; n < 0 accepts any
 * count */
PyArrayObject *get_points(PyObject *obj, const char *name, npy_intp n) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (a && check_points(a, name, n, 1)) Py_CLEAR(a);
  return a;
}

/* write a scalar or (n,) array a of values >= lo (> lo when strict) into out[n]; out is
 * untouched on error */
int per_values(PyArrayObject *a, const char *name, npy_intp n, const char *per, double lo,
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
int get_per(PyObject *obj, const char *name, npy_intp n, const char *per, double lo, int strict,
            double *out) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (!a) return -1;
  int err = per_values(a, name, n, per, lo, strict, out);
  Py_DECREF(a);
  return err;
}

/* the fixed set as given: a boolean mask, or int64 vertex indices (None: none) */
PyArrayObject *fixed_array(PyObject *obj) {
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
int fixed_mask(PyArrayObject *a, npy_intp nv, unsigned char *out) {
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
int get_fixed(PyObject *obj, npy_intp nv, unsigned char *out) {
  PyArrayObject *a = fixed_array(obj);
  if (!a) return -1;
  int err = fixed_mask(a, nv, out);
  Py_DECREF(a);
  return err;
}

/* write a finite 3-vector into out */
int get_vec3(PyObject *obj, const char *name, double *out) {
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

/* a real number (not a bool), any value; scalar = 1 refuses arrays, even of one element */
int get_number(PyObject *obj, const char *name, int scalar, double *out) {
  if (!PyNumber_Check(obj) || PyComplex_Check(obj) || PyBool_Check(obj) ||
      PyArray_IsScalar(obj, Bool) || (scalar && PyArray_Check(obj)))
    return wrong_type(obj, name, "a real number");
  *out = PyFloat_AsDouble(obj);
  if (*out == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return wrong_type(obj, name, "a real number");
  }
  return 0;
}

/* a finite real >= lo */
int get_real(PyObject *obj, const char *name, double lo, int strict, double *out) {
  double v;
  if (get_number(obj, name, 0, &v) || check_values(&v, -1, name, lo, strict)) return -1;
  *out = v;
  return 0;
}

/* an integer in [lo, hi] */
int get_integer(PyObject *obj, const char *name, long long lo, long long hi, long long *out) {
  if (!PyIndex_Check(obj) || PyBool_Check(obj) || PyArray_IsScalar(obj, Bool))
    return wrong_type(obj, name, "an integer");
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
int get_threads(PyObject *obj, int *out) {
  long long v = 0;
  if (get_integer(obj, "threads", 1, MS_MAX_THREADS, &v)) return -1;
  *out = (int)v;
  return 0;
}

/* new (n,3) or (n,) double array copied from src */
PyObject *array_copy(const double *src, npy_intp n, int cols) {
  npy_intp dims[2] = {n, cols};
  PyObject *a = PyArray_SimpleNew(cols ? 2 : 1, dims, NPY_DOUBLE);
  if (a && n) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(double) * n * (cols ? cols : 1));
  return a;
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
int get_colliders(PyObject *obj, const char *name, int spheres, double **out, int *count) {
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
