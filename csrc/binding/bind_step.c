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

/* ValueError: the chosen solver of g does not offer the choice that option p of opt holds */
static int refuse_choice(const ms_param *p, const ms_opt *opt) {
  const ms_opt_field *f = &ms_opt_fields[p->field];
  PyErr_Format(PyExc_ValueError, "%s: solver '%s' does not take %s='%s'", p->name,
               ms_solvers[opt->minimizer].name, p->name, f->choices[(int)ms_opt_get(opt, f)]);
  return -1;
}

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
    refuse_choice(p, opt);
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

/* append the string name to list; -1 when out of memory */
static int append_name(PyObject *list, const char *name) {
  PyObject *s = PyUnicode_FromString(name);
  int err = !s || PyList_Append(list, s);
  Py_XDECREF(s);
  return err ? -1 : 0;
}

/* the list of the n names at base, base + stride, ... (a table's name column), sorted when
 * sort is 1 */
static PyObject *name_list(const void *base, size_t stride, int n, int sort) {
  PyObject *out = PyList_New(0);
  for (int i = 0; out && i < n; i++)
    if (append_name(out, *(const char *const *)((const char *)base + i * stride))) Py_CLEAR(out);
  if (out && sort && PyList_Sort(out)) Py_CLEAR(out);
  return out;
}

/* the method named obj: TypeError for a non-string, ValueError listing the methods */
int get_method(PyObject *obj, ms_method *out) {
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "method: expected a string, got %.100s", Py_TYPE(obj)->tp_name);
    return -1;
  }
  for (int i = 0; i < MS_NMETHOD; i++)
    if (PyUnicode_CompareWithASCIIString(obj, ms_methods[i].name) == 0) return *out = i, 0;
  PyObject *names = name_list(&ms_methods[0].name, sizeof(ms_method_def), MS_NMETHOD, 1);
  if (names) PyErr_Format(PyExc_ValueError, "method: expected one of %R, got %R", names, obj);
  Py_XDECREF(names);
  return -1;
}

/* the option of method md named key (a public name), or NULL */
static const ms_param *find_param(const ms_method_def *md, PyObject *key) {
  for (int i = 0; i < md->nparam; i++)
    if (PyUnicode_CompareWithASCIIString(key, md->params[i].name) == 0) return &md->params[i];
  return NULL;
}

/* ValueError for the first (in sorted order) key of kw that is not an option of md */
static int refuse_unknown(const ms_method_def *md, PyObject *kw) {
  PyObject *key, *value, *unknown = NULL, *allowed = NULL;
  Py_ssize_t pos = 0;
  // a step's options are most often all known: the list is made at the first unknown one
  while (PyDict_Next(kw, &pos, &key, &value)) {
    if (find_param(md, key)) continue;
    if (!unknown) unknown = PyList_New(0);
    if (!unknown || PyList_Append(unknown, key)) {
      Py_XDECREF(unknown);
      return -1;
    }
  }
  if (!unknown) return 0;
  if (!PyList_Sort(unknown))
    allowed = md->nparam ? name_list(&md->params[0].name, sizeof(ms_param), md->nparam, 1)
                         : PyUnicode_FromString("none");
  if (allowed)
    PyErr_Format(PyExc_ValueError, "%S: not an option of method '%s' (options: %S)",
                 PyList_GET_ITEM(unknown, 0), md->name, allowed);
  Py_DECREF(unknown);
  Py_XDECREF(allowed);
  return -1;
}

/* a choice's index from its name; TypeError for a non-string, ValueError listing the choices */
static int get_choice(PyObject *obj, const char *name, const ms_opt_field *f, double *out) {
  int text = PyUnicode_Check(obj);
  for (int i = 0; text && i <= (int)f->hi; i++)
    if (PyUnicode_CompareWithASCIIString(obj, f->choices[i]) == 0) return *out = i, 0;
  PyObject *names = name_list(f->choices, sizeof(char *), (int)f->hi + 1, 0);
  const char *type = Py_TYPE(obj)->tp_name, *dot = strrchr(type, '.'); /* ndarray, not numpy. */
  if (names && text)
    PyErr_Format(PyExc_ValueError, "%s: expected one of %R, got %R", name, names, obj);
  else if (names)
    PyErr_Format(PyExc_TypeError, "%s: expected one of %R (a string), got %.100s", name, names,
                 dot ? dot + 1 : type);
  Py_XDECREF(names);
  return -1;
}

/* obj as the value of option p (a choice's name to its index, a flag to 0 or 1), checked
 * against its field's type and range */
static int get_option(PyObject *obj, const ms_param *p, double *out) {
  const ms_opt_field *f = &ms_opt_fields[p->field];
  int flag;
  long long n;
  switch (f->type) {
    case MS_CHOICE:
      return get_choice(obj, p->name, f, out);
    case MS_FLAG:
      if (get_flag(obj, p->name, &flag)) return -1;
      return *out = flag, 0;
    case MS_INT:
      if (get_integer(obj, p->name, (long long)f->lo, (long long)f->hi, &n)) return -1;
      return *out = (double)n, 0;
    default:
      if (get_number(obj, p->name, 1, out)) return -1;
      return ms_opt_in_range(f, *out) ? 0 : out_of_range(p->name, f, obj);
  }
}

/* ValueError for an option given to a method whose chosen solver of g does not read it */ /* ValueError
                                                                                              for an
                                                                                              option
                                                                                              given
                                                                                              to a
                                                                                              method
                                                                                              whose
                                                                                              chosen
                                                                                              solver
                                                                                              of g
                                                                                              does
                                                                                              not
                                                                                              read
                                                                                              it */
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

/* opt for a step of method with the options of the keyword dict kw (public names; NULL:
 * none), each converted and checked (get_option), the rest at the method's defaults; then an
 * option its chosen solver of g does not read, or a choice it does not offer, is refused */
int method_options(ms_method method, PyObject *kw, ms_opt *opt) {
  const ms_method_def *md = &ms_methods[method];
  const ms_param *by[MS_NOPT] = {0}; /* the name that set each field */
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  uint32_t given = 0;
  ms_opt_defaults(method, opt);
  if (kw && refuse_unknown(md, kw)) return -1;
  while (kw && PyDict_Next(kw, &pos, &key, &value)) {
    const ms_param *p = find_param(md, key);
    double v;
    if (by[p->field]) {
      PyErr_Format(PyExc_ValueError, "%s: another name of %s; give one of the two", p->name,
                   by[p->field]->name);
      return -1;
    }
    by[p->field] = p;
    given |= 1u << p->field;
    if (value == Py_None && p->value == MS_BY_SOLVER) continue; /* the solver's own cap */
    if (get_option(value, p, &v)) return -1;
    ms_opt_set(opt, &ms_opt_fields[p->field], v);
  }
  int bad = refuse_unread(method, opt, given) ? -2 : ms_opt_check(method, opt);
  return bad == -1 ? 0 : bad == -2 ? -1 : refuse_choice(&md->params[bad], opt);
}

/* check_options(method, **options) -> None: the checks of System.step's method and options
 * (ValueError or TypeError naming the option), without a System */
PyObject *check_options_py(PyObject *mod, PyObject *args, PyObject *kw) {
  PyObject *name;
  ms_method method;
  ms_opt opt;
  if (!PyArg_ParseTuple(args, "O:check_options", &name) || get_method(name, &method) ||
      method_options(method, kw, &opt))
    return NULL;
  Py_RETURN_NONE;
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
                      : p->type == MS_FLAG ? PyBool_FromLong(p->value[0] != 0)
                      : p->type == MS_INT  ? PyLong_FromDouble(p->value[0])
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
  PyObject *dtobj, *name;
  ms_method method;
  int history = 1;
  double h;
  ms_opt opt;
  if (check_ready(self) || !PyArg_ParseTuple(args, "OO|p:_step", &dtobj, &name, &history) ||
      get_method(name, &method) || method_options(method, kw, &opt) ||
      get_real(dtobj, "dt", 0, 1, &h))
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
  return Py_BuildValue("(iONNd{sdsdsdsdsdsd}{sisdsisi})", info.iters,
                       info.converged ? Py_True : Py_False, res, obj, call.seconds, "assemble",
                       info.assemble, "factor", info.factor, "solve", info.solve, "broad_phase",
                       info.broad, "narrow_phase", info.narrow, "bounds", info.bounds, "pairs",
                       info.pairs, "gap", info.gap, "limited", info.limited, "rounds", info.rounds);
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
  double h;
  if (check_ready(self) || !PyArg_ParseTuple(args, "Osi:_fms_kernel", &dtobj, &name, &reps) ||
      get_real(dtobj, "dt", 0, 1, &h) || method_options(MS_FMS, kw, &opt))
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

/* solvers() -> {solver: {"iterations": default cap, "reads": (core option names),
 * "accelerations": (the acceleration choices it offers; () where it reads none)}} of the
 * solvers of g, from the registry */
PyObject *solvers_py(PyObject *mod, PyObject *unused) {
  const ms_opt_field *accel = &ms_opt_fields[MS_OPT_ACCELERATION];
  PyObject *out = PyDict_New();
  for (int k = 0; out && k < MS_NMIN; k++) {
    const ms_solver_def *sd = &ms_solvers[k];
    uint32_t offers = sd->reads & (1u << MS_OPT_ACCELERATION) ? sd->accel : 0;
    PyObject *reads = PyList_New(0), *accels = PyList_New(0), *row = NULL;
    for (int i = 0; reads && i < MS_NOPT; i++)
      if (sd->reads & (1u << i) && append_name(reads, ms_opt_fields[i].name)) Py_CLEAR(reads);
    for (int i = 0; accels && i <= (int)accel->hi; i++)
      if (offers & (1u << i) && append_name(accels, accel->choices[i])) Py_CLEAR(accels);
    if (reads && accels)
      row = Py_BuildValue("{sisNsN}", "iterations", sd->cap, "reads", PyList_AsTuple(reads),
                          "accelerations", PyList_AsTuple(accels));
    if (!row || PyDict_SetItemString(out, sd->name, row)) Py_CLEAR(out);
    Py_XDECREF(reads);
    Py_XDECREF(accels);
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
