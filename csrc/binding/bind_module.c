/* bind_module.c: the module msim._core: functions, exceptions and multi-phase init */
#define MS_BIND_MODULE /* the one file that imports NumPy's C API */
#include "bind.h"

#include <string.h>

static struct PyModuleDef core_module;

mod_state *state_of(PyObject *self) {
  PyObject *mod = PyType_GetModuleByDef(Py_TYPE(self), &core_module);
  return mod ? PyModule_GetState(mod) : NULL;
}

static PyObject *cholmod_version_py(PyObject *mod, PyObject *unused) {
  int v[3];
  ms_cholmod_version(v);
  return PyUnicode_FromFormat("%d.%d.%d", v[0], v[1], v[2]);
}

static PyObject *blas_serialised_py(PyObject *mod, PyObject *unused) {
  return PyBool_FromLong(ms_chol_serialised());
}

/* _fail_allocation(k): the k-th allocation of the core from now fails (0: none); tests use it
 * to check that nothing half-built survives an out-of-memory step */
static PyObject *fail_allocation_py(PyObject *mod, PyObject *arg) {
  long long k;
  if (get_integer(arg, "k", 0, INT_MAX, &k)) return NULL;
  ms_fail_alloc((int)k);
  Py_RETURN_NONE;
}

static PyMethodDef core_functions[] = {
    {"cholmod_version", cholmod_version_py, METH_NOARGS,
     "cholmod_version() -> the version of the CHOLMOD library msim is linked against"},
    {"methods", methods_py, METH_NOARGS,
     "methods() -> {method: {'summary': str, 'options': {name: {'core', 'type', 'low', 'high', "
     "'high_open', 'choices', 'default', 'doc'}}}}: the one table of step options"},
    {"check_options", (PyCFunction)(void (*)(void))check_options_py, METH_VARARGS | METH_KEYWORDS,
     "check_options(method, **options): raise what System.step(dt, method, **options) raises "
     "for its method and options (ValueError or TypeError naming the option), else None"},
    {"solvers", solvers_py, METH_NOARGS,
     "solvers() -> {solver of g: {'iterations': default cap, 'reads': core option names}}"},
    {"model_parameters", model_parameters_py, METH_NOARGS,
     "model_parameters() -> {name: {'shape', 'low', 'low_open', 'invalidates', 'doc'}} of "
     "System's model parameters, in constructor order"},
    {"defaults", defaults_py, METH_NOARGS,
     "defaults() -> {constructor keyword: default} of System's scalar parameters"},
    {"blas_serialised", blas_serialised_py, METH_NOARGS,
     "blas_serialised() -> True when supernodal CHOLMOD calls are serialised process-wide "
     "because the BLAS is not safe to call from several threads at once"},
    {"_fail_allocation", fail_allocation_py, METH_O,
     "_fail_allocation(k): the k-th allocation of the core from now fails (0: none); a test "
     "hook"},
    {"_box_overlaps", (PyCFunction)(void (*)(void))box_overlaps_py, METH_VARARGS | METH_KEYWORDS,
     "_box_overlaps(alo, ahi, blo=None, bhi=None, cell=None) -> (npair, 2) int64 array of the "
     "pairs (i, j) of overlapping axis-aligned boxes (closed), box i of A = (alo, ahi) and j of "
     "B = (blo, bhi), sorted; B is A with i < j when blo is None. cell: the spatial hash's cell "
     "size [m], by default the mean box diagonal; a test hook"},
    {"_primitive_boxes", (PyCFunction)(void (*)(void))primitive_boxes_py,
     METH_VARARGS | METH_KEYWORDS,
     "_primitive_boxes(x, idx, r) -> (lo, hi): the (n, 3) bounding boxes of the points, edges "
     "or triangles idx (n, k), k in 1..3, of the vertices x (nv, 3), inflated by r >= 0; a test "
     "hook"},
    {"_pair_distance", pair_distance_py, METH_VARARGS,
     "_pair_distance(kind, x) -> (d2, grad, hess): squared distance of the pair x (4, 3), kind "
     "'pt' (point, triangle) or 'ee' (edge, edge), its gradient (12,) and Hessian (12, 12); a "
     "test hook"},
    {"_segment_meets_triangle", segment_meets_triangle_py, METH_VARARGS,
     "_segment_meets_triangle(x) -> True when segment x[0] x[1] meets triangle x[2] x[3] x[4], "
     "touching included; a test hook"},
    {NULL},
};

/* add an exception class named name with the given bases to the module */
static PyObject *add_exception(PyObject *mod, const char *name, const char *doc, PyObject *bases) {
  if (!bases) return NULL; /* Py_BuildValue failed */
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
      "A linear system was not positive definite. Attributes: vertex and axis where it was "
      "found (axis -1 in FMS's per-vertex matrix; both -1 when CG found it), column (3 * vertex + "
      "axis, or the vertex when axis is -1).",
      Py_BuildValue("(OO)", st->Error, linalg_error));
  st->CholmodError = add_exception(mod, "msim.CholmodError", "CHOLMOD reported a failure.",
                                   Py_BuildValue("(O)", st->Error));
  st->SelfIntersectionError = add_exception(
      mod, "msim.SelfIntersectionError",
      "Self-contact cannot start from a state whose triangles already cross each other. "
      "Attribute: crossings, the (triangle edge, triangle) pairs that cross.",
      Py_BuildValue("(OO)", st->Error, PyExc_ValueError));
  Py_CLEAR(linalg_error);
  if (!st->DivergenceError || !st->NotPositiveDefiniteError || !st->CholmodError ||
      !st->SelfIntersectionError)
    goto fail;

  // the System type
  fill_parameter_docs();
  st->SystemType = PyType_FromModuleAndSpec(mod, &System_spec, NULL);
  if (!st->SystemType || PyModule_AddObjectRef(mod, "System", st->SystemType)) goto fail;
  // the most entries a step's iteration history keeps
  if (PyModule_AddIntConstant(mod, "HISTORY_MAX", MS_HIST_MAX)) goto fail;
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
  Py_VISIT(st->SelfIntersectionError);
  Py_VISIT(st->SystemType);
  return 0;
}

static int core_clear(PyObject *mod) {
  mod_state *st = PyModule_GetState(mod);
  Py_CLEAR(st->Error);
  Py_CLEAR(st->DivergenceError);
  Py_CLEAR(st->NotPositiveDefiniteError);
  Py_CLEAR(st->CholmodError);
  Py_CLEAR(st->SelfIntersectionError);
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
