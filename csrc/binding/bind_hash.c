/* bind_hash.c: test hooks of the spatial hash broad phase (csrc/engine/hash.c): the
 * overlapping pairs of two sets of boxes, and the boxes of points, edges and triangles, so
 * tests can compare them with a brute-force check */
#include "bind.h"
#include "hash.h"
#include "threads.h"

#include <math.h>

/* obj as an (n,3) array of finite reals (n < 0: any count); NULL with ValueError naming it */
static PyArrayObject *box_corners(PyObject *obj, const char *name, npy_intp n) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (a && check_points(a, name, n, 0)) Py_CLEAR(a);
  if (a && PyArray_DIM(a, 0) > INT_MAX) {
    PyErr_Format(PyExc_ValueError, "%s: expected at most %d rows", name, INT_MAX);
    Py_CLEAR(a);
  }
  return a;
}

/* ValueError unless lo <= hi in every coordinate */
static int check_order(PyArrayObject *lo, PyArrayObject *hi, const char *lname, const char *hname) {
  const double *l = PyArray_DATA(lo), *h = PyArray_DATA(hi);
  for (npy_intp k = 0; k < PyArray_SIZE(lo); k++)
    if (l[k] > h[k]) {
      PyErr_Format(PyExc_ValueError, "%s: expected values >= %s, got a smaller one in row %zd",
                   hname, lname, (Py_ssize_t)(k / 3));
      return -1;
    }
  return 0;
}

/* the mean diagonal |hi - lo| of the boxes (lo, hi) of both sets, or 1 when it is 0 */
static double mean_diagonal(PyArrayObject *const c[4]) {
  double sum = 0;
  npy_intp n = 0;
  for (int s = 0; s < 4; s += 2) {
    const double *l = PyArray_DATA(c[s]), *h = PyArray_DATA(c[s + 1]);
    for (npy_intp i = 0; i < PyArray_DIM(c[s], 0); i++, n++) {
      double dx = h[3 * i] - l[3 * i], dy = h[3 * i + 1] - l[3 * i + 1];
      double dz = h[3 * i + 2] - l[3 * i + 2];
      sum += sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  double mean = n ? sum / n : 0;
  return mean > 0 && isfinite(mean) ? mean : 1.0;
}

/* the (npair, 2) int64 array of pairs */
static PyObject *pairs_array(const int *pairs, int npair) {
  npy_intp dims[2] = {npair, 2};
  PyObject *out = PyArray_SimpleNew(2, dims, NPY_INT64);
  if (!out) return NULL;
  int64_t *o = PyArray_DATA((PyArrayObject *)out);
  for (npy_intp k = 0; k < 2 * (npy_intp)npair; k++) o[k] = pairs[k];
  return out;
}

/* the four corner arrays alo, ahi, blo, bhi checked (B is A when blo and bhi are None);
 * 0, or -1 with an exception and c cleared */
static int get_boxes(PyObject *const obj[4], PyArrayObject *c[4]) {
  static const char *const names[4] = {"alo", "ahi", "blo", "bhi"};
  if ((obj[2] == Py_None) != (obj[3] == Py_None)) {
    PyErr_SetString(PyExc_ValueError, "blo, bhi: expected both or neither");
    return -1;
  }
  int sets = obj[2] == Py_None ? 1 : 2, bad = 0;
  for (int s = 0; s < sets && !bad; s++) {
    c[2 * s] = box_corners(obj[2 * s], names[2 * s], -1);
    c[2 * s + 1] =
        c[2 * s] ? box_corners(obj[2 * s + 1], names[2 * s + 1], PyArray_DIM(c[2 * s], 0)) : NULL;
    bad = !c[2 * s + 1] || check_order(c[2 * s], c[2 * s + 1], names[2 * s], names[2 * s + 1]);
  }
  if (sets == 1 && !bad) {
    c[2] = c[0], c[3] = c[1];
    Py_INCREF(c[2]), Py_INCREF(c[3]);
  }
  if (bad)
    for (int s = 0; s < 4; s++) Py_CLEAR(c[s]);
  return bad ? -1 : 0;
}

/* _box_overlaps(alo, ahi, blo=None, bhi=None, cell=None, threads=1, sorted=True): the
 * overlapping pairs (sorted=False: each box's partners in the grid's order) */
PyObject *box_overlaps_py(PyObject *mod, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"alo", "ahi", "blo", "bhi", "cell", "threads", "sorted", NULL};
  PyObject *obj[4] = {NULL, NULL, Py_None, Py_None}, *cell_obj = Py_None, *threads_obj = NULL;
  int threads = 1, sorted = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOOOp:_box_overlaps", kwlist, &obj[0], &obj[1],
                                   &obj[2], &obj[3], &cell_obj, &threads_obj, &sorted))
    return NULL;
  if (threads_obj && get_threads(threads_obj, &threads)) return NULL;
  PyArrayObject *c[4] = {NULL, NULL, NULL, NULL};
  if (get_boxes(obj, c)) return NULL;
  double cell = 1;
  PyObject *out = NULL;
  ms_hash *w = NULL;
  const int *pairs = NULL;
  int npair = 0, same = obj[2] == Py_None;
  if (cell_obj == Py_None)
    cell = mean_diagonal(c);
  else if (get_real(cell_obj, "cell", 0, 1, &cell))
    goto done;
  ms_status st =
      ms_hash_overlaps(&w, PyArray_DATA(c[0]), PyArray_DATA(c[1]), (int)PyArray_DIM(c[0], 0),
                       PyArray_DATA(c[2]), PyArray_DATA(c[3]), (int)PyArray_DIM(c[2], 0), same,
                       sorted, cell, ms_thread_count(threads), &pairs, &npair);
  if (st == MS_OK)
    out = pairs_array(pairs, npair);
  else if (st == MS_ENOMEM)
    PyErr_NoMemory();
  else
    PyErr_SetString(PyExc_ValueError, "the boxes were refused by the core");
  ms_hash_free(w);
done:
  for (int s = 0; s < 4; s++) Py_XDECREF(c[s]);
  return out;
}

/* idx as an (n, k) array of distinct vertex indices in [0, nv) per row, k in 1..3, converted
 * to C int */
static PyArrayObject *get_indices(PyObject *obj, npy_intp nv) {
  PyArrayObject *a = to_array(obj, "idx", NPY_INT64);
  if (!a) return NULL;
  int k = PyArray_NDIM(a) == 2 ? (int)PyArray_DIM(a, 1) : 0;
  PyArrayObject *rows = k >= 1 && k <= 3 && PyArray_DIM(a, 0) <= INT_MAX
                            ? get_index_rows((PyObject *)a, "idx", nv, k, "(n, k)", "primitive")
                            : NULL;
  if (!rows && !PyErr_Occurred())
    PyErr_SetString(PyExc_ValueError,
                    "idx: expected an array of shape (n, k), k in 1..3 (points, edges, "
                    "triangles)");
  Py_DECREF(a);
  if (!rows) return NULL;
  PyArrayObject *ints = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)rows, NPY_INT,
                                                          NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
  Py_DECREF(rows);
  return ints;
}

/* _primitive_boxes(x, idx, r): (lo, hi) of the primitives idx of x inflated by r */
PyObject *primitive_boxes_py(PyObject *mod, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"x", "idx", "r", NULL};
  PyObject *xo, *io, *ro;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:_primitive_boxes", kwlist, &xo, &io, &ro))
    return NULL;
  double r;
  PyArrayObject *x = box_corners(xo, "x", -1), *idx = x ? get_indices(io, PyArray_DIM(x, 0)) : NULL;
  PyObject *lo = NULL, *hi = NULL, *out = NULL;
  if (!idx || get_real(ro, "r", 0, 0, &r)) goto done;
  npy_intp dims[2] = {PyArray_DIM(idx, 0), 3};
  lo = PyArray_SimpleNew(2, dims, NPY_DOUBLE), hi = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
  if (!lo || !hi) goto done;
  ms_hash_boxes(PyArray_DATA(x), PyArray_DATA(idx), (int)dims[0], (int)PyArray_DIM(idx, 1), r, 1,
                PyArray_DATA((PyArrayObject *)lo), PyArray_DATA((PyArrayObject *)hi));
  out = PyTuple_Pack(2, lo, hi);
done:
  Py_XDECREF(x);
  Py_XDECREF(idx);
  Py_XDECREF(lo);
  Py_XDECREF(hi);
  return out;
}
