/* bind.h: what the files of the Python module msim._core share (bind_*.c). The binding turns
 * NumPy arrays into core calls and status codes into exceptions; it holds no physics.
 *
 *   bind_convert.c  Python objects to checked C values (errors name the argument) and back
 *   bind_system.c   the System type: lock, construction, state access, type spec
 *   bind_step.c     step options and their table (methods(), defaults()), stepping without
 *                   the GIL, exceptions from status codes
 *   bind_props.c    the System's properties
 *   bind_module.c   module functions, exceptions, multi-phase init
 *   bind_adjoint.c  the adjoint of one step (msim.adjoint)
 *   bind_hash.c     test hooks of the spatial hash broad phase
 */
#ifndef MSIM_BIND_H
#define MSIM_BIND_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

/* one NumPy C-API table for all binding files, filled by import_array in bind_module.c */
#define PY_ARRAY_UNIQUE_SYMBOL ms_numpy_api
#ifndef MS_BIND_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "msim.h"

/* MS_BOUND as text, for messages */
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define BOUND_TEXT TEXT(MS_BOUND)

/* ---------------------------------------------------------------- module state */

typedef struct {
  PyObject *Error;
  PyObject *DivergenceError;
  PyObject *NotPositiveDefiniteError;
  PyObject *CholmodError;
  PyObject *SelfIntersectionError;
  PyObject *SystemType;
  unsigned long main_thread; /* the thread Python's signal handlers run on */
} mod_state;

/* the state of the module that defined self's type; NULL with an exception set */
mod_state *state_of(PyObject *self);

/* ---------------------------------------------------------------- the System object */

typedef struct {
  PyObject_HEAD
  ms_model m;
  ms_data d;
  PyThread_type_lock lock; /* serialises stepping and state access across threads */
  uint64_t lock_forks;     /* ms_fork_generation() when the lock was last known good */
  unsigned long stepping;  /* thread running a step of this System, 0 when none */
  int ready;
} SystemObject;

int sys_lock(SystemObject *s);
void sys_unlock(SystemObject *s);
int check_ready(SystemObject *s);

extern PyType_Spec System_spec;
extern PyGetSetDef System_getset[];
void fill_parameter_docs(void);

/* ---------------------------------------------------------------- bind_convert.c */

/* threads of the passes inside a step: an integer in [1, MS_MAX_THREADS] */
#define MS_MAX_THREADS 1024

PyArrayObject *to_array(PyObject *obj, const char *name, int typenum);
int check_points(PyArrayObject *a, const char *name, npy_intp n, int bounded);
PyArrayObject *get_edges(PyObject *obj, npy_intp nv);
/* obj as an (n, k) int64 array of k distinct vertex indices in [0, nv) per row (`what` names a
 * row in the error, `shape` the expected shape) */
PyArrayObject *get_index_rows(PyObject *obj, const char *name, npy_intp nv, int k,
                              const char *shape, const char *what);
PyArrayObject *get_faces(PyObject *obj, npy_intp nv);
int get_flag(PyObject *obj, const char *name, int *out);
int check_self_contact(const ms_model *m);
PyArrayObject *get_points(PyObject *obj, const char *name, npy_intp n);
int per_values(PyArrayObject *a, const char *name, npy_intp n, const char *per, double lo,
               int strict, double *out);
int get_per(PyObject *obj, const char *name, npy_intp n, const char *per, double lo, int strict,
            double *out);
PyArrayObject *fixed_array(PyObject *obj);
int fixed_mask(PyArrayObject *a, npy_intp nv, unsigned char *out);
int get_fixed(PyObject *obj, npy_intp nv, unsigned char *out);
int get_vec3(PyObject *obj, const char *name, double *out);
int get_number(PyObject *obj, const char *name, int scalar, double *out);
int get_real(PyObject *obj, const char *name, double lo, int strict, double *out);
int get_integer(PyObject *obj, const char *name, long long lo, long long hi, long long *out);
int get_threads(PyObject *obj, int *out);
int get_colliders(PyObject *obj, const char *name, int spheres, double **out, int *count);
PyObject *array_copy(const double *src, npy_intp n, int cols);

/* per-vertex state arrays by number: 0 positions, 1 velocities, 2 external forces, 3 and 4
 * positions and velocities one step back (the bdf2 history); all but the external forces are
 * positions or velocities, bounded by MS_BOUND */
extern const char *const points_name[5];
double *points_of(SystemObject *self, intptr_t which);

/* ---------------------------------------------------------------- bind_step.c */

int get_method(PyObject *obj, ms_method *out);
PyObject *check_options_py(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *System_step(SystemObject *self, PyObject *args, PyObject *kw);
/* method's options: its defaults, then the keyword dict kw of public option names, each
 * checked, and the combination checked against the chosen solver's registry row */
int method_options(ms_method method, PyObject *kw, ms_opt *opt);
PyObject *System_fms_kernel(SystemObject *self, PyObject *args, PyObject *kw);
PyObject *methods_py(PyObject *mod, PyObject *unused);
PyObject *defaults_py(PyObject *mod, PyObject *unused);
PyObject *solvers_py(PyObject *mod, PyObject *unused);
PyObject *model_parameters_py(PyObject *mod, PyObject *unused);

/* ---------------------------------------------------------------- bind_adjoint.c */

PyObject *System_adjoint_refusal(SystemObject *self, PyObject *args, PyObject *kw);
PyObject *System_step_vjp(SystemObject *self, PyObject *args, PyObject *kw);

/* ---------------------------------------------------------------- bind_hash.c */

/* test hooks of the broad phase (csrc/engine/hash.c): _box_overlaps(alo, ahi, blo=None,
 * bhi=None, cell=None), the overlapping pairs of boxes; _primitive_boxes(x, idx, r), the
 * boxes of points, edges or triangles */
PyObject *box_overlaps_py(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *primitive_boxes_py(PyObject *mod, PyObject *args, PyObject *kw);

/* ---------------------------------------------------------------- bind_geometry.c */

/* test hooks of the self-contact kernels: _pair_distance(kind, x), _segment_meets_triangle(x) */
PyObject *pair_distance_py(PyObject *self, PyObject *args);
PyObject *segment_meets_triangle_py(PyObject *self, PyObject *args);

#endif
