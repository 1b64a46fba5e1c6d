/* contact.c: planes and spheres, handled in each method's natural way
 *
 * A vertex penetrates a plane (unit normal n, offset c) by phi = c - n.x, and a sphere
 * (centre c, radius r) by phi = s r - |x - c| with the contact radius factor s (seed 001's
 * s ~ 1.1); phi > 0 means inside, and n is the outward contact normal. Penalty methods add
 * the energy kc/2 phi^2 per contact (force kc phi n, Hessian kc n n^T: the negative lateral
 * part of a sphere's Hessian is dropped to keep it positive semidefinite); projection methods
 * move free vertices onto the surface. Friction is one post-step rule for every method.
 */
#include <math.h>

#include "msim.h"

/* penetration phi (> 0 inside) of point p into collider k and its outward normal n */
static double penetration(const ms_model *m, int k, const double *p, double n[3]) {
  if (k < m->nplane) {
    const double *pl = m->plane + 4 * k;
    for (int t = 0; t < 3; t++) n[t] = pl[t];
    return pl[3] - (pl[0] * p[0] + pl[1] * p[1] + pl[2] * p[2]);
  }
  const double *sp = m->sphere + 4 * (k - m->nplane);
  double d[3] = {p[0] - sp[0], p[1] - sp[1], p[2] - sp[2]};
  double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (int t = 0; t < 3; t++) n[t] = len > 0 ? d[t] / len : (t == 1);
  return m->cscale * sp[3] - len;
}

static int ncollider(const ms_model *m) {
  return m->nplane + m->nsphere;
}

/* the penalty energy sum of kc/2 phi^2 over free vertices and penetrated colliders [J];
 * where f is given, also f += kc phi n, from the same penetrations */
double ms_contact_forces(const ms_model *m, const double *x, double *f) {
  double e = 0, n[3];
  if (!ncollider(m)) return 0;
  for (int i = 0; i < m->nv; i++)
    for (int k = 0; k < ncollider(m) && !m->fixed[i]; k++) {
      double phi = penetration(m, k, x + 3 * i, n);
      if (phi <= 0) continue;
      e += 0.5 * m->kc * phi * phi;
      for (int t = 0; t < 3 && f; t++) f[3 * i + t] += m->kc * phi * n[t];
    }
  return e;
}

/* blk = kc sum n n^T over the colliders vertex i penetrates (row-major 3x3); 1 if any */
int ms_contact_hessian(const ms_model *m, const double *x, int i, double *blk) {
  double n[3];
  int any = 0;
  for (int t = 0; t < 9; t++) blk[t] = 0;
  for (int k = 0; k < ncollider(m) && !m->fixed[i]; k++) {
    if (penetration(m, k, x + 3 * i, n) <= 0) continue;
    any = 1;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) blk[3 * r + c] += m->kc * n[r] * n[c];
  }
  return any;
}

/* distance t >= 0 that moves point p along unit direction n out of collider k (0 outside):
 * a plane's depth over n.normal, the exit of the ray p + t n through a sphere */
static double exit_distance(const ms_model *m, int k, const double *p, const double *n) {
  double normal[3], phi = penetration(m, k, p, normal);
  if (phi <= 0) return 0;
  if (k < m->nplane) {
    double cosine = n[0] * normal[0] + n[1] * normal[1] + n[2] * normal[2];
    return cosine > 0 ? phi / cosine : phi;
  }
  const double *sp = m->sphere + 4 * (k - m->nplane);
  double d[3] = {p[0] - sp[0], p[1] - sp[1], p[2] - sp[2]}, r = m->cscale * sp[3];
  double b = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
  return -b + sqrt(b * b + r * r - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
}

/* move free vertices that are inside a collider out onto its surface along the collider's
 * normal at ref, their positions at the start of the step: pushing along the normal where a
 * vertex came from, rather than to the nearest surface point, keeps a sheet that went deep
 * into a sphere in one step from being spread sideways (and stretched) by the projection */
void ms_contact_project(const ms_model *m, const double *ref, double *x) {
  double n[3];
  for (int i = 0; i < m->nv; i++)
    for (int k = 0; k < ncollider(m) && !m->fixed[i]; k++) {
      if (penetration(m, k, x + 3 * i, n) <= 0) continue;
      penetration(m, k, ref + 3 * i, n);
      double t = exit_distance(m, k, x + 3 * i, n);
      for (int c = 0; c < 3; c++) x[3 * i + c] += t * n[c];
    }
}

/* Coulomb friction after any method: a free vertex touching a collider at the end of the step
 * (phi > -MS_CONTACT_SKIN) loses tangential speed up to mu times the normal speed the step
 * took away from it, dv_n = max(0, (v_new - v_pred).n), where v_pred = exp(-damping h) v + h g
 * is the velocity before springs and contact. Positions follow (x_new -= h dv_t). */
void ms_contact_friction(const ms_model *m, ms_data *d, double h) {
  double n[3], decay = exp(-m->damping * h);
  if (m->mu <= 0) return;
  for (int i = 0; i < m->nv; i++)
    for (int k = 0; k < ncollider(m) && !m->fixed[i]; k++) {
      double *x = d->xn + 3 * i, *v = d->vn + 3 * i;
      if (penetration(m, k, x, n) <= -MS_CONTACT_SKIN) continue;
      double dvn = 0, vn = 0;
      for (int t = 0; t < 3; t++) {
        dvn += (v[t] - decay * d->v[3 * i + t] - h * m->gravity[t]) * n[t];
        vn += v[t] * n[t];
      }
      double vt[3] = {v[0] - vn * n[0], v[1] - vn * n[1], v[2] - vn * n[2]};
      double speed = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
      if (dvn <= 0 || speed == 0) continue;
      double lose = fmin(1.0, m->mu * dvn / speed);
      for (int t = 0; t < 3; t++) {
        x[t] -= h * lose * vt[t];
        v[t] -= lose * vt[t];
      }
    }
}
