/* bind_props.c: the System's properties; setters convert first, then check and write
 * under the lock */
#include "bind.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int refuse_delete(PyObject *value, const char *name) {
  if (value) return 0;
  PyErr_Format(PyExc_AttributeError, "%s cannot be deleted", name);
  return -1;
}

/* positions, velocities and external forces getters and setters: closure 0, 1, 2; assigning
 * positions or velocities ends the history (bdf2 starts afresh) */
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
    err = check_points(a, name, self->m.nv, (intptr_t)which != 2);
    if (!err)
      memcpy(points_of(self, (intptr_t)which), PyArray_DATA(a), sizeof(double) * 3 * self->m.nv);
    if (!err && (intptr_t)which < 2) self->d.hp = 0.0;
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

PyGetSetDef System_getset[] = {
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
