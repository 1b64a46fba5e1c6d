/* bind_adjoint.c: the adjoint of one step (csrc/engine/adjoint.c) as System methods for
 * msim.adjoint; conversions and exceptions only */
#include "bind.h"

#include <string.h>

/* _adjoint_refusal(method, **options) -> why method with these step options has no gradient
 * on this System (a sentence), or None */
PyObject *System_adjoint_refusal(SystemObject *self, PyObject *args, PyObject *kw) {
  PyObject *name;
  ms_method method;
  ms_opt opt;
  if (!PyArg_ParseTuple(args, "O:_adjoint_refusal", &name) || get_method(name, &method) ||
      method_options(method, kw, &opt) || check_ready(self) || sys_lock(self))
    return NULL;
  const char *why = ms_adjoint_refusal(&self->m, method, &opt);
  sys_unlock(self);
  if (!why) Py_RETURN_NONE;
  return PyUnicode_FromString(why);
}

/* the exception of a failed step_vjp */
static PyObject *raise_vjp(SystemObject *self, ms_status st, const ms_info *info, ms_method method,
                           const ms_opt *opt, double residual) {
  mod_state *ms = state_of((PyObject *)self);
  const char *name = ms_methods[method].name;
  PyObject *res = PyFloat_FromDouble(residual);
  if (!ms || !res) {
    Py_XDECREF(res);
    return NULL;
  }
  if (st == MS_ENOMEM)
    PyErr_NoMemory();
  else if (st == MS_EINPUT)
    PyErr_Format(PyExc_ValueError, "%s has no gradient here: %s", name,
                 ms_adjoint_refusal(&self->m, method, opt));
  else if (st == MS_ENOTPD)
    PyErr_Format(ms->NotPositiveDefiniteError,
                 "%s adjoint: the exact Hessian of g at the step's solution is singular or "
                 "nearly so (not positive definite at vertex %d, axis %d, and MINRES "
                 "preconditioned by its clamped factor did not solve with it): x_next, where "
                 "|grad g| = %R N, is no isolated stationary point of g, and the implicit "
                 "function theorem gives no gradient there",
                 name, info->vertex, info->axis, res);
  else if (st == MS_EDIVERGED)
    PyErr_Format(ms->DivergenceError, "%s adjoint: a non-finite value in the Hessian of g", name);
  else
    PyErr_Format(ms->CholmodError, "%s adjoint: CHOLMOD failed (status %d)", name, (int)st);
  Py_DECREF(res);
  return NULL;
}

/* the adjoints of step h of method with options opt from the arrays a (x, v, x_next, v_next,
 * external_forces, adj_x, adj_v, x_prev, v_prev; the last two NULL without a history), checked,
 * under the System's lock, as _step_vjp's tuple; NULL with an exception set */
static PyObject *vjp_locked(SystemObject *self, ms_method method, double h, const ms_opt *opt,
                            PyArrayObject **a) {
  int nv = self->m.nv, ns = self->m.ns, prev = a[7] != NULL;
  npy_intp dims[8][2] = {{nv, 3}, {nv, 3}, {ns, 0}, {ns, 0}, {nv, 0}, {nv, 3}, {nv, 3}, {nv, 3}};
  PyObject *out[8] = {NULL}, *result = NULL;
  int err = 0;
  for (int k = 0; k < (prev ? 8 : 6) && !err; k++)
    err = !(out[k] = PyArray_ZEROS(dims[k][1] ? 2 : 1, dims[k], NPY_DOUBLE, 0));
  if (!err) {
    double *p[9] = {NULL}, *o[8] = {NULL};
    for (int k = 0; k < 9; k++) p[k] = a[k] ? PyArray_DATA(a[k]) : NULL;
    for (int k = 0; k < 8; k++) o[k] = out[k] ? PyArray_DATA((PyArrayObject *)out[k]) : NULL;
    ms_adj_step step = {
        .x = p[0], .v = p[1], .xn = p[2], .vn = p[3], .fext = p[4], .xp = p[7], .vp = p[8]};
    ms_adj_out adj = {.x = o[0],
                      .v = o[1],
                      .k = o[2],
                      .rest = o[3],
                      .mass = o[4],
                      .fext = o[5],
                      .xp = o[6],
                      .vp = o[7]};
    ms_info info;
    ms_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ms_step_vjp(&self->m, &self->d, method, h, opt, &step, p[5], p[6], &adj, &info);
    Py_END_ALLOW_THREADS
    if (st != MS_OK)
      raise_vjp(self, st, &info, method, opt, adj.residual);
    else
      result =
          Py_BuildValue("(OOOOOOddOO)", out[0], out[1], out[2], out[3], out[4], out[5], adj.damping,
                        adj.residual, prev ? out[6] : Py_None, prev ? out[7] : Py_None);
  }
  for (int k = 0; k < 8; k++) Py_XDECREF(out[k]);
  return result;
}

/* _step_vjp(method, dt, x, v, x_next, v_next, external_forces, adj_x, adj_v, x_prev=None,
 * v_prev=None, **options) -> (x, v, stiffness, rest_lengths, mass, external_forces, damping,
 * residual, x_prev, v_prev): the adjoints of one step of the System's model
 * (csrc/engine/adjoint.c) taken with the step options `options`; x_prev and v_prev, bdf2's
 * state one step back, both or neither (then their adjoints are None) */
PyObject *System_step_vjp(SystemObject *self, PyObject *args, PyObject *kw) {
  static const char *names[9] = {"x",     "v",     "x_next", "v_next", "external_forces",
                                 "adj_x", "adj_v", "x_prev", "v_prev"};
  PyObject *name, *dtobj, *obj[9] = {NULL}, *result = NULL;
  ms_method method;
  ms_opt opt;
  double h;
  if (check_ready(self) ||
      !PyArg_ParseTuple(args, "OOOOOOOOO|OO:_step_vjp", &name, &dtobj, &obj[0], &obj[1], &obj[2],
                        &obj[3], &obj[4], &obj[5], &obj[6], &obj[7], &obj[8]) ||
      get_method(name, &method) || get_real(dtobj, "dt", 0, 1, &h) ||
      method_options(method, kw, &opt))
    return NULL;
  int n = obj[7] && obj[7] != Py_None ? 9 : 7;
  if (n == 9 && (!obj[8] || obj[8] == Py_None)) {
    PyErr_SetString(PyExc_ValueError, "v_prev: expected an (n,3) array with x_prev, got None");
    return NULL;
  }

  // convert first (NumPy may run Python code), then check the shapes under the lock
  PyArrayObject *a[9] = {NULL};
  int err = 0;
  for (int k = 0; k < n && !err; k++) err = !(a[k] = to_array(obj[k], names[k], NPY_DOUBLE));
  if (!err && !sys_lock(self)) {
    for (int k = 0; k < n && !err; k++) err = check_points(a[k], names[k], self->m.nv, 0);
    if (!err) result = vjp_locked(self, method, h, &opt, a);
    sys_unlock(self);
  }
  for (int k = 0; k < n; k++) Py_XDECREF(a[k]);
  return result;
}
