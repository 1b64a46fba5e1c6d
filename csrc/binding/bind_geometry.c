/* bind_geometry.c: test hooks for the engine's geometry kernels (distance.c): the distance of a
 * primitive pair with its derivatives, and the segment-triangle test */
#include "bind.h"

#include <string.h>

#include "distance.h"

/* obj as a C-contiguous (n, 3) array of finite reals; errors name the argument */
static PyArrayObject *get_rows(PyObject *obj, const char *name, npy_intp n) {
  PyArrayObject *a = to_array(obj, name, NPY_DOUBLE);
  if (a && check_points(a, name, n, 0)) Py_CLEAR(a);
  return a;
}

/* the pair kind named by obj: 'pt' or 'ee'; -1 with an exception set otherwise */
static int get_kind(PyObject *obj, ms_pair_kind *out) {
  const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
  if (s && (!strcmp(s, "pt") || !strcmp(s, "ee"))) {
    *out = s[0] == 'p' ? MS_PAIR_PT : MS_PAIR_EE;
    return 0;
  }
  if (PyUnicode_Check(obj) && !s) return -1;
  PyErr_Format(PyUnicode_Check(obj) ? PyExc_ValueError : PyExc_TypeError,
               "kind: expected 'pt' or 'ee', got %R", obj);
  return -1;
}

/* _pair_distance(kind, x) -> (d2, grad (12,), hess (12, 12)) */
PyObject *pair_distance_py(PyObject *self, PyObject *args) {
  PyObject *kind_obj, *x_obj;
  ms_pair_kind kind;
  if (!PyArg_ParseTuple(args, "OO:_pair_distance", &kind_obj, &x_obj)) return NULL;
  if (get_kind(kind_obj, &kind)) return NULL;
  PyArrayObject *x = get_rows(x_obj, "x", 4);
  if (!x) return NULL;
  double grad[12], hess[144];
  double d2 = ms_pair_dist2(kind, PyArray_DATA(x), grad, hess);
  Py_DECREF(x);
  PyObject *g = array_copy(grad, 12, 0), *h = g ? array_copy(hess, 12, 12) : NULL;
  if (!h) {
    Py_XDECREF(g);
    return NULL;
  }
  return Py_BuildValue("dNN", d2, g, h);
}

/* _segment_meets_triangle(x) -> bool, x rows a, b, t0, t1, t2 */
PyObject *segment_meets_triangle_py(PyObject *self, PyObject *args) {
  PyObject *x_obj;
  if (!PyArg_ParseTuple(args, "O:_segment_meets_triangle", &x_obj)) return NULL;
  PyArrayObject *x = get_rows(x_obj, "x", 5);
  if (!x) return NULL;
  const double *p = PyArray_DATA(x);
  int hit = ms_segment_meets_triangle(p, p + 3, p + 6, p + 9, p + 12);
  Py_DECREF(x);
  return PyBool_FromLong(hit);
}
