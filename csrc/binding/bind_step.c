/* bind_step.c: step options, stepping without the GIL, and status codes as exceptions */
#include "bind.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

static PyObject *range_text(const ms_opt_field *f);

/* ValueError for a step the core refused: an option out of its range, or dt */
static void raise_input(const ms_info *info, const ms_opt *opt, ms_method method, PyObject *hobj) {
  const char *name = ms_methods[method].name;
  if (info->option < 0) {
    PyErr_Format(PyExc_ValueError, "%s: expected a finite dt > 0, got %R", name, hobj);
    return;
  }
  const ms_param *p = &ms_methods[method].params[info->option];
  const ms_opt_field *f = &ms_opt_fields[p->field];
  if (f->type == MS_CHOICE) { /* a choice the chosen solver does not offer */
    PyErr_Format(PyExc_ValueError, "%s: solver '%s' does not take %s='%s'", p->name,
                 ms_solvers[opt->minimizer].name, p->name, f->choices[(int)ms_opt_get(opt, f)]);
    return;
  }
  PyObject *range = range_text(f);
  if (range)
    PyErr_Format(PyExc_ValueError, "%s (dt=%R): option %s is outside its range %U", name, hobj,
                 p->name, range);
  Py_XDECREF(range);
}

/* what to try after method diverged on the System's model: the method's stable step where it
 * has one (ms_stable_step), else a smaller step or more iterations */
static PyObject *stability_advice(SystemObject *self, ms_method method) {
  const ms_method_def *md = &ms_methods[method];
  if (sys_lock(self)) return NULL; /* the model, as another thread may be setting it */
  double omega = ms_omega_max(&self->m), limit = ms_stable_step(&self->m, method, omega);
  sys_unlock(self);
  PyObject *lim = PyFloat_FromDouble(limit), *om = PyFloat_FromDouble(omega), *out = NULL;
  if (!lim || !om)
    out = NULL;
  else if (isinf(md->omega_h))
    out = PyUnicode_FromFormat(
        "%s is stable at every dt on a linear mode, so a nonlinear force "
        "(a stiff spring turning, a contact) outran this step or its "
        "iterations: try a smaller dt, or more iterations (or a tol)",
        md->name);
  else if (limit == 0)
    out = PyUnicode_FromFormat(
        "%s amplifies every undamped mode at any dt: give the System "
        "damping, or use symplectic_euler, velocity_verlet or an implicit "
        "method (implicit_euler, bdf2, fms, xpbd)",
        md->name);
  else
    out = PyUnicode_FromFormat(
        "%s is stable below dt = %R s on this System (omega_max = %R "
        "rad/s, the Gershgorin bound on its stiffest mode): take a "
        "smaller dt, or an implicit method (implicit_euler, bdf2, fms, "
        "xpbd), stable at any dt",
        md->name, lim, om);
  Py_XDECREF(lim);
  Py_XDECREF(om);
  return out;
}

/* raise the exception that matches a failed step */
static PyObject *raise_status(SystemObject *self, ms_status st, const ms_info *info,
                              const ms_opt *opt, ms_method method_id, double h) {
  const char *method = ms_methods[method_id].name;
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
      PyObject *advice = stability_advice(self, method_id);
      if (advice)
        raise_with(
            ms->DivergenceError,
            PyUnicode_FromFormat("%s diverged at step %lld (dt=%R): vertex %d has a "
                                 "non-finite or absurd (> " BOUND_TEXT ") position or "
                                 "velocity; the state is left as it was before the step. %U",
                                 method, (long long)self->d.nstep, hobj, info->vertex, advice),
            attrs, 2);
      Py_XDECREF(advice);
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
    case MS_EINPUT:
      raise_input(info, opt, method_id, hobj);
      break;
    case MS_ECROSSING: {
      exc_attr attrs[] = {{"crossings", info->crossings}};
      raise_with(ms->SelfIntersectionError,
                 PyUnicode_FromFormat("%s: self-contact cannot start here: %d (triangle edge, "
                                      "triangle) pairs already cross; start from a state that "
                                      "does not cross itself (self_intersections() counts), or "
                                      "set self_contact=False",
                                      method, info->crossings),
                 attrs, 1);
      break;
    }
    default:
      PyErr_Format(PyExc_SystemError, "%s (dt=%R): unknown status %d from the core", method, hobj,
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
  /* history arrays for the iterations, capped at MS_HIST_MAX */
  ms_status st = c->opt.history ? ms_data_reserve(&self->d, ms_opt_iterations(&c->opt) + 1) : MS_OK;
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

/* the range of field f as text, like "[0, 1)" or "[1, 1000000000]" */
static PyObject *range_text(const ms_opt_field *f) {
  PyObject *lo = f->type == MS_REAL ? PyFloat_FromDouble(f->lo) : PyLong_FromDouble(f->lo);
  PyObject *hi = f->type == MS_REAL ? PyFloat_FromDouble(f->hi) : PyLong_FromDouble(f->hi);
  PyObject *text =
      lo && hi ? PyUnicode_FromFormat("[%R, %R%c", lo, hi, f->hi_open ? ')' : ']') : NULL;
  Py_XDECREF(lo);
  Py_XDECREF(hi);
  return text;
}

/* ValueError: option `name` (field f) got value, outside its range */
static int out_of_range(const char *name, const ms_opt_field *f, PyObject *value) {
  PyObject *range = range_text(f);
  if (range)
    PyErr_Format(PyExc_ValueError, "%s: expected %s in %U, got %R", name,
                 f->type == MS_REAL ? "a real number" : "an integer", range, value);
  Py_XDECREF(range);
  return -1;
}

/* the field of ms_opt named key, or NULL */
static const ms_opt_field *find_field(PyObject *key) {
  for (int i = 0; i < MS_NOPT; i++)
    if (PyUnicode_CompareWithASCIIString(key, ms_opt_fields[i].name) == 0) return &ms_opt_fields[i];
  return NULL;
}

/* fill opt from a keyword dict of core option names, each value checked against its field;
 * *given gets the bit (1 << ms_opt_id) of every option the dict sets */
static int parse_options(PyObject *kw, ms_opt *opt, uint32_t *given) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  *given = 0;
  while (kw && PyDict_Next(kw, &pos, &key, &value)) {
    const ms_opt_field *f = find_field(key);
    if (!f) {
      PyErr_Format(PyExc_ValueError, "%U: not a step option of the core", key);
      return -1;
    }
    double v;
    if (f->type == MS_REAL) {
      if (get_real(value, f->name, -INFINITY, 0, &v)) return -1;
    } else {
      long long n;
      if (get_integer(value, f->name, LLONG_MIN, LLONG_MAX, &n)) return -1;
      v = (double)n;
    }
    if (!ms_opt_in_range(f, v)) return out_of_range(f->name, f, value);
    ms_opt_set(opt, f, v);
    *given |= 1u << (f - ms_opt_fields);
  }
  return 0;
}

/* ValueError for an option given to a method whose chosen solver of g does not read it */
static int refuse_unread(ms_method method, const ms_opt *opt, uint32_t given) {
  int bad = ms_opt_refused(method, opt, given);
  if (bad < 0) return 0;
  const ms_method_def *md = &ms_methods[method];
  const ms_solver_def *sd = &ms_solvers[opt->minimizer];
  PyObject *read = PyUnicode_FromString("");
  for (int i = 0; read && i < md->nparam; i++)
    if (sd->reads & (1u << md->params[i].field) && md->params[i].field != MS_OPT_MINIMIZER) {
      const char *comma = PyUnicode_GET_LENGTH(read) ? ", " : "";
      Py_SETREF(read, PyUnicode_FromFormat("%U%s%s", read, comma, md->params[i].name));
    }
  if (read)
    PyErr_Format(PyExc_ValueError, "%s: solver '%s' does not read it (it reads %U)",
                 md->params[bad].name, sd->name, read);
  Py_XDECREF(read);
  return -1;
}

int method_options(int method, PyObject *kw, ms_opt *opt) {
  uint32_t given;
  ms_opt_defaults(method, opt);
  return parse_options(kw, opt, &given);
}

/* the default of param p as the Python value users pass; None for a cap left to the solver */
static PyObject *param_default(const ms_param *p) {
  const ms_opt_field *f = &ms_opt_fields[p->field];
  if (f->type == MS_INT && p->value == MS_BY_SOLVER) Py_RETURN_NONE;
  switch (f->type) {
    case MS_REAL:
      return PyFloat_FromDouble(p->value);
    case MS_FLAG:
      return PyBool_FromLong(p->value != 0);
    case MS_CHOICE:
      return PyUnicode_FromString(f->choices[(int)p->value]);
    default:
      return PyLong_FromDouble(p->value);
  }
}

/* the choice names of field f as a tuple, or None */
static PyObject *choice_tuple(const ms_opt_field *f) {
  if (f->type != MS_CHOICE) Py_RETURN_NONE;
  PyObject *out = PyTuple_New((Py_ssize_t)(f->hi + 1));
  for (int i = 0; out && i <= (int)f->hi; i++) {
    PyObject *name = PyUnicode_FromString(f->choices[i]);
    if (!name)
      Py_CLEAR(out);
    else
      PyTuple_SET_ITEM(out, i, name);
  }
  return out;
}

/* one option of a method as a dict: core, type, low, high, high_open, choices, default, doc */
static PyObject *param_dict(const ms_param *p) {
  static const char *types[] = {
      [MS_INT] = "int", [MS_REAL] = "float", [MS_FLAG] = "bool", [MS_CHOICE] = "choice"};
  const ms_opt_field *f = &ms_opt_fields[p->field];
  PyObject *low = f->type == MS_REAL ? PyFloat_FromDouble(f->lo) : PyLong_FromDouble(f->lo);
  PyObject *high = f->type == MS_REAL ? PyFloat_FromDouble(f->hi) : PyLong_FromDouble(f->hi);
  PyObject *choices = choice_tuple(f), *value = param_default(p);
  PyObject *out =
      low && high && choices && value
          ? Py_BuildValue("{sssssOsOsOsOsOss}", "core", f->name, "type", types[f->type], "low", low,
                          "high", high, "high_open", f->hi_open ? Py_True : Py_False, "choices",
                          choices, "default", value, "doc", p->doc)
          : NULL;
  Py_XDECREF(low);
  Py_XDECREF(high);
  Py_XDECREF(choices);
  Py_XDECREF(value);
  return out;
}

/* methods() -> {method: {"summary": str, "options": {public name: param_dict}, "omega_h":
 * omega h at its stability limit (inf: none)}} in ms_method order, from the registry */
PyObject *methods_py(PyObject *mod, PyObject *unused) {
  PyObject *out = PyDict_New();
  for (int m = 0; out && m < MS_NMETHOD; m++) {
    const ms_method_def *md = &ms_methods[m];
    PyObject *options = PyDict_New(), *row = NULL;
    for (int i = 0; options && i < md->nparam; i++) {
      PyObject *param = param_dict(&md->params[i]);
      if (!param || PyDict_SetItemString(options, md->params[i].name, param)) Py_CLEAR(options);
      Py_XDECREF(param);
    }
    if (options)
      row = Py_BuildValue("{sssOsd}", "summary", md->summary, "options", options, "omega_h",
                          md->omega_h);
    if (!row || PyDict_SetItemString(out, md->name, row)) Py_CLEAR(out);
    Py_XDECREF(options);
    Py_XDECREF(row);
  }
  return out;
}

/* defaults() -> {constructor keyword: default} of a System's parameters that have one, from
 * the engine's table of model parameters */
PyObject *defaults_py(PyObject *mod, PyObject *unused) {
  PyObject *out = PyDict_New();
  for (int i = 0; out && i < MS_NPARAM; i++) {
    const ms_model_param *p = &ms_model_params[i];
    if (!p->size) continue;
    PyObject *value = p->size == 3 ? Py_BuildValue("(ddd)", p->value[0], p->value[1], p->value[2])
                      : i == MS_P_THREADS ? PyLong_FromDouble(p->value[0])
                                          : PyFloat_FromDouble(p->value[0]);
    if (!value || PyDict_SetItemString(out, p->name, value)) Py_CLEAR(out);
    Py_XDECREF(value);
  }
  return out;
}

/* _step(dt, method, history=True, **options) -> (iterations, converged, residuals,
 * objectives, seconds, timings); history False: empty residuals and objectives, and the
 * passes that only compute them are skipped */
PyObject *System_step(SystemObject *self, PyObject *args, PyObject *kw) {
  PyObject *dtobj;
  const char *name;
  int history = 1;
  if (check_ready(self) || !PyArg_ParseTuple(args, "Os|p:_step", &dtobj, &name, &history))
    return NULL;
  int method = -1;
  for (int i = 0; i < MS_NMETHOD; i++)
    if (!strcmp(name, ms_methods[i].name)) method = i;
  if (method < 0) {
    PyErr_Format(PyExc_ValueError, "method: expected one of the integrator names, got '%s'", name);
    return NULL;
  }
  double h;
  ms_opt opt;
  uint32_t given;
  ms_opt_defaults(method, &opt); /* options not given keep the method's defaults */
  if (get_real(dtobj, "dt", 0, 1, &h) || parse_options(kw, &opt, &given) ||
      refuse_unread(method, &opt, given))
    return NULL;
  opt.history = history;

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
  if (st != MS_OK) return raise_status(self, st, &info, &opt, method, h);
  if (!res || !obj) {
    Py_XDECREF(res);
    Py_XDECREF(obj);
    return NULL;
  }
  return Py_BuildValue("(iONNd{sdsdsd}{sisdsisi})", info.iters, info.converged ? Py_True : Py_False,
                       res, obj, call.seconds, "assemble", info.assemble, "factor", info.factor,
                       "solve", info.solve, "pairs", info.pairs, "gap", info.gap, "limited",
                       info.limited, "rounds", info.rounds);
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
  ms_opt opt;
  ms_opt_defaults(MS_FMS, &opt);
  double h;
  if (check_ready(self) || !PyArg_ParseTuple(args, "Osi:_fms_kernel", &dtobj, &name, &reps) ||
      get_real(dtobj, "dt", 0, 1, &h) || parse_options(kw, &opt, &(uint32_t){0}))
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
    ms_info info = {.option = -1, .vertex = -1, .axis = -1};
    return raise_status(self, st, &info, &opt, MS_FMS, h);
  }
  return PyFloat_FromDouble(call.seconds);
}

/* solvers() -> {solver: {"iterations": default cap, "reads": (core option names)}} of the
 * solvers of g, from the registry */
PyObject *solvers_py(PyObject *mod, PyObject *unused) {
  PyObject *out = PyDict_New();
  for (int k = 0; out && k < MS_NMIN; k++) {
    const ms_solver_def *sd = &ms_solvers[k];
    PyObject *reads = PyList_New(0), *row = NULL;
    for (int i = 0; reads && i < MS_NOPT; i++) {
      PyObject *name = sd->reads & (1u << i) ? PyUnicode_FromString(ms_opt_fields[i].name) : NULL;
      if (sd->reads & (1u << i) && (!name || PyList_Append(reads, name))) Py_CLEAR(reads);
      Py_XDECREF(name);
    }
    if (reads) row = Py_BuildValue("{sisN}", "iterations", sd->cap, "reads", PyList_AsTuple(reads));
    if (!row || PyDict_SetItemString(out, sd->name, row)) Py_CLEAR(out);
    Py_XDECREF(reads);
    Py_XDECREF(row);
  }
  return out;
}

/* model_parameters() -> {name: {"shape", "low", "low_open", "invalidates", "doc"}} of the
 * System's model parameters in constructor order, from the engine's table */
PyObject *model_parameters_py(PyObject *mod, PyObject *unused) {
  static const char *caches[] = {
      [MS_KEEPS] = "nothing", [MS_VALUES] = "factorisations", [MS_PATTERN] = "sparsity patterns"};
  PyObject *out = PyDict_New();
  for (int i = 0; out && i < MS_NPARAM; i++) {
    const ms_model_param *p = &ms_model_params[i];
    PyObject *row = Py_BuildValue("{sssdsOssss}", "shape", p->shape, "low", p->lo, "low_open",
                                  p->strict ? Py_True : Py_False, "invalidates",
                                  caches[p->invalidates], "doc", p->doc);
    if (!row || PyDict_SetItemString(out, p->name, row)) Py_CLEAR(out);
    Py_XDECREF(row);
  }
  return out;
}
