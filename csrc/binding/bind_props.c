/* bind_props.c: the System's properties; setters convert first, then check and write
 * under the lock */
#include "bind.h"

#include <stddef.h>
#include <stdio.h>
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
    if (!err && which == NULL)
      self->d.sc_clean = 0; /* new positions: check them at the next step */
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

/* a model parameter's row in the engine's parameter table and its place in ms_model (of its
 * pointer, for the per-vertex and per-spring arrays) */
typedef struct {
  ms_param_id id;
  size_t offset;
} model_field;

static const model_field mass_param = {MS_P_MASS, offsetof(ms_model, mass)};
static const model_field stiffness_param = {MS_P_STIFFNESS, offsetof(ms_model, k)};
static const model_field rest_param = {MS_P_REST_LENGTHS, offsetof(ms_model, rest)};

/* mass, stiffness and rest-length setters: convert, then check against the System as it is
 * under the lock and write (nothing is written on error) */
static int set_array_param(SystemObject *self, PyObject *value, void *param) {
  const model_field *p = param;
  const ms_model_param *row = &ms_model_params[p->id];
  if (check_ready(self) || refuse_delete(value, row->name)) return -1;
  // convert first: NumPy may run Python code (__array__), re-initialisation included
  PyArrayObject *a = to_array(value, row->name, NPY_DOUBLE);
  int err = !a || sys_lock(self);
  if (!err) {
    double *dst = *(double **)((char *)&self->m + p->offset);
    int per_vertex = p->id == MS_P_MASS;
    npy_intp n = per_vertex ? self->m.nv : self->m.ns;
    err = per_values(a, row->name, n, per_vertex ? "vertex" : "spring", row->lo, row->strict, dst);
    if (!err) ms_model_changed(&self->m, p->id);
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
    if (!err) ms_model_changed(&self->m, MS_P_FIXED);
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
  ms_model_changed(&self->m, MS_P_GRAVITY);
  sys_unlock(self);
  return 0;
}

static const model_field damping_param = {MS_P_DAMPING, offsetof(ms_model, damping)};
static const model_field kc_param = {MS_P_CONTACT_STIFFNESS, offsetof(ms_model, kc)};
static const model_field cscale_param = {MS_P_CONTACT_SCALE, offsetof(ms_model, cscale)};
static const model_field mu_param = {MS_P_FRICTION, offsetof(ms_model, mu)};
static const model_field sct_param = {MS_P_SELF_THICKNESS, offsetof(ms_model, sc_thickness)};
static const model_field scs_param = {MS_P_SELF_STIFFNESS, offsetof(ms_model, sc_stiffness)};
static const model_field scf_param = {MS_P_SELF_FRICTION, offsetof(ms_model, sc_mu)};

static PyObject *get_scalar(SystemObject *self, void *param) {
  const model_field *p = param;
  return check_ready(self) ? NULL : PyFloat_FromDouble(*(double *)((char *)&self->m + p->offset));
}

static int set_scalar(SystemObject *self, PyObject *value, void *param) {
  const model_field *p = param;
  const ms_model_param *row = &ms_model_params[p->id];
  double v = 0;
  if (check_ready(self) || refuse_delete(value, row->name) ||
      get_real(value, row->name, row->lo, row->strict, &v) || sys_lock(self))
    return -1;
  double *slot = (double *)((char *)&self->m + p->offset), old = *slot;
  *slot = v;
  if (check_self_contact(&self->m)) {
    *slot = old;
    sys_unlock(self);
    return -1;
  }
  ms_model_changed(&self->m, p->id);
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
  ms_model_changed(&self->m, which ? MS_P_SPHERES : MS_P_PLANES);
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
  ms_model_changed(&self->m, MS_P_THREADS);
  sys_unlock(self);
  return 0;
}

static PyObject *get_faces_prop(SystemObject *self, void *c) {
  if (check_ready(self) || sys_lock(self)) return NULL;
  npy_intp dims[2] = {self->m.nf, 3};
  PyObject *a = PyArray_SimpleNew(2, dims, NPY_INT64);
  for (npy_intp k = 0; a && k < 3 * (npy_intp)self->m.nf; k++)
    ((int64_t *)PyArray_DATA((PyArrayObject *)a))[k] = self->m.face[k];
  sys_unlock(self);
  return a;
}

static PyObject *get_self_contact(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyBool_FromLong(self->m.self_contact);
}

/* turning self-contact on needs faces; the next step checks the state does not cross */
static int set_self_contact(SystemObject *self, PyObject *value, void *c) {
  int on;
  if (check_ready(self) || refuse_delete(value, "self_contact") ||
      get_flag(value, "self_contact", &on) || sys_lock(self))
    return -1;
  int old = self->m.self_contact;
  self->m.self_contact = on;
  if (check_self_contact(&self->m)) {
    self->m.self_contact = old;
    sys_unlock(self);
    return -1;
  }
  self->d.sc_clean = 0;
  ms_model_changed(&self->m, MS_P_SELF_CONTACT);
  sys_unlock(self);
  return 0;
}

static PyObject *get_ring(SystemObject *self, void *c) {
  return check_ready(self) ? NULL : PyLong_FromLong(self->m.sc_ring);
}

/* a new ring depth: the rings derived again (on failure the old ones stay) */
static int set_ring(SystemObject *self, PyObject *value, void *c) {
  long long ring;
  if (check_ready(self) || refuse_delete(value, "self_contact_ring") ||
      get_integer(value, "self_contact_ring", 0, 64, &ring) || sys_lock(self))
    return -1;
  int old = self->m.sc_ring;
  self->m.sc_ring = (int)ring;
  ms_status st = ms_model_faces(&self->m);
  if (st != MS_OK)
    self->m.sc_ring = old;
  else
    ms_model_changed(&self->m, MS_P_SELF_RING);
  sys_unlock(self);
  return st == MS_OK ? 0 : (PyErr_NoMemory(), -1);
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
    {"mass", (getter)get_mass, (setter)set_array_param, NULL, (void *)&mass_param},
    {"stiffness", (getter)get_stiffness, (setter)set_array_param, NULL, (void *)&stiffness_param},
    {"rest_lengths", (getter)get_rest, (setter)set_array_param, NULL, (void *)&rest_param},
    {"fixed", (getter)get_fixed_prop, (setter)set_fixed_prop, NULL, NULL},
    {"gravity", (getter)get_gravity, (setter)set_gravity, NULL, NULL},
    {"damping", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&damping_param},
    {"planes", (getter)get_colliders_prop, (setter)set_colliders_prop, NULL, NULL},
    {"spheres", (getter)get_colliders_prop, (setter)set_colliders_prop, NULL, (void *)1},
    {"contact_stiffness", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&kc_param},
    {"contact_scale", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&cscale_param},
    {"friction", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&mu_param},
    {"faces", (getter)get_faces_prop, NULL, NULL, NULL},
    {"self_contact", (getter)get_self_contact, (setter)set_self_contact, NULL, NULL},
    {"self_thickness", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&sct_param},
    {"self_stiffness", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&scs_param},
    {"self_contact_ring", (getter)get_ring, (setter)set_ring, NULL, NULL},
    {"self_friction", (getter)get_scalar, (setter)set_scalar, NULL, (void *)&scf_param},
    {"threads", (getter)get_threads_prop, (setter)set_threads_prop, NULL, NULL},
    {"time", (getter)get_time, NULL, "simulated time [s]", NULL},
    {"steps", (getter)get_steps, NULL, "steps taken", NULL},
    {"n_vertices", (getter)get_nv, NULL, "number of vertices", NULL},
    {"n_springs", (getter)get_ns, NULL, "number of springs", NULL},
    {NULL},
};

/* the model parameters' docstrings, "shape doc" from the engine's table, written into
 * System_getset before the type is made */
void fill_parameter_docs(void) {
  static char docs[MS_NPARAM][320];
  for (PyGetSetDef *g = System_getset; g->name; g++)
    for (int i = 0; i < MS_NPARAM; i++)
      if (!strcmp(g->name, ms_model_params[i].name)) {
        const ms_model_param *p = &ms_model_params[i];
        snprintf(docs[i], sizeof(docs[i]), "%s%s%s", strcmp(p->shape, "()") ? p->shape : "",
                 strcmp(p->shape, "()") ? " " : "", p->doc);
        g->doc = docs[i];
      }
}
