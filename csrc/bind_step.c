/* bind_step.c: step options, stepping without the GIL, and status codes as exceptions */
#include "bind.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define BOUND_TEXT TEXT(MS_BOUND)

/* method names, in ms_method order */
static const char *method_names[MS_NMETHOD] = {
    [MS_EXPLICIT_EULER] = "explicit_euler",
    [MS_SYMPLECTIC_EULER] = "symplectic_euler",
    [MS_IMPLICIT_EULER] = "implicit_euler",
    [MS_LINEARIZED_IMPLICIT] = "linearized_implicit",
    [MS_FMS] = "fms",
    [MS_XPBD] = "xpbd",
};

/* an integer attribute of an exception */
typedef struct {
  const char *name;
  long long value;
} exc_attr;

/* raise type(msg) with the n integer attributes attrs; steals msg */
static void raise_with(PyObject *type, PyObject *msg, const exc_attr *attrs, int n) {
  if (!msg) return;
  PyObject *exc = PyObject_CallOneArg(type, msg);
  Py_DECREF(msg);
  int err = !exc;
  for (int i = 0; i < n && !err; i++) {
    PyObject *v = PyLong_FromLongLong(attrs[i].value);
    err = !v || PyObject_SetAttrString(exc, attrs[i].name, v);
    Py_XDECREF(v);
  }
  if (!err) PyErr_SetObject(type, exc);
  Py_XDECREF(exc);
}

/* where a matrix was found not positive definite, in words */
static PyObject *place_text(const ms_info *info) {
  if (info->vertex < 0)
    return PyUnicode_FromString("(CG met a direction of non-positive curvature)");
  if (info->axis < 0) return PyUnicode_FromFormat("at vertex %d", info->vertex);
  return PyUnicode_FromFormat("at vertex %d, axis %d", info->vertex, info->axis);
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
    case MS_EDIVERGED: {
      exc_attr attrs[] = {{"step", self->d.nstep}, {"vertex", info->vertex}};
      raise_with(
          ms->DivergenceError,
          PyUnicode_FromFormat("%s diverged at step %lld (dt=%R): vertex %d has a "
                               "non-finite or absurd (> " BOUND_TEXT ") position or velocity; the "
                               "state is left as it was before the step. Try a smaller dt, or "
                               "an implicit method (implicit_euler, fms, xpbd) for stiff springs",
                               method, (long long)self->d.nstep, hobj, info->vertex),
          attrs, 2);
      break;
    }
    case MS_ENOTPD: {
      // column: the row of the 3n x 3n matrix (the vertex in a scalar one), -1 when unknown
      int column = info->axis < 0 ? info->vertex : 3 * info->vertex + info->axis;
      exc_attr attrs[] = {{"vertex", info->vertex}, {"axis", info->axis}, {"column", column}};
      PyObject *where = place_text(info);
      if (where)
        raise_with(ms->NotPositiveDefiniteError,
                   PyUnicode_FromFormat("%s (dt=%R): the system matrix is not positive definite "
                                        "%U; use spd='clamp' or 'project', or a larger shift "
                                        "with spd='shift'; the state is left as it was",
                                        method, hobj, where),
                   attrs, 3);
      Py_XDECREF(where);
      break;
    }
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
PyObject *step_options_py(PyObject *mod, PyObject *unused) {
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
PyObject *System_step(SystemObject *self, PyObject *args, PyObject *kw) {
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
                       call.seconds, "assemble", info.assemble, "factor", info.factor, "solve",
                       info.solve);
}

/* _fms_kernel(dt, part, repeats, **options) -> seconds for `repeats` runs of one FMS kernel:
 * part "setup" (analyse and factorise from scratch; repeats ignored), "local" (local step into
 * the right-hand sides) or "solve" (one three-column CHOLMOD solve); the state is untouched */
PyObject *System_fms_kernel(SystemObject *self, PyObject *args, PyObject *kw) {
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
    ms_info info = {.vertex = -1, .axis = -1};
    return raise_status(self, st, &info, "fms", h);
  }
  return PyFloat_FromDouble(call.seconds);
}
