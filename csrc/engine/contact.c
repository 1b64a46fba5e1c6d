/* contact.c: planes and spheres, as a penalty energy and as a projection
 *
 * A vertex penetrates a plane (unit normal n, offset c) by phi = c - n.x, and a sphere
 * (centre c, radius r) by phi = s r - |x - c| with the contact radius factor s (~ 1.1);
 * phi > 0 means inside, and n is the outward contact normal. Every method but XPBD adds the
 * energy kc/2 phi^2 per contact (force kc phi n, Hessian kc n n^T: the negative lateral part
 * of a sphere's Hessian, ms_contact_curvature, is dropped to keep it positive semidefinite); FMS
 * writes it in local-global form (ms_contact_path, ms_contact_nearest). XPBD projects inside its
 * iterations: the projection tests each vertex's path from the step's start and moves it onto
 * the surface where the path entered a collider. Friction is friction.c's.
 */
#include <math.h>

#include "engine.h"

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

/* the penalty energy sum of kc/2 phi^2 of a free vertex at point p over the colliders it
 * penetrates [J]; where f is given, also f += kc phi n (3 entries), from the same penetrations */
double ms_contact_point(const ms_model *m, const double *p, double *f) {
  double e = 0, n[3];
  for (int k = 0; k < ncollider(m); k++) {
    double phi = penetration(m, k, p, n);
    if (phi <= 0) continue;
    e += 0.5 * m->kc * phi * phi;
    for (int t = 0; t < 3 && f; t++) f[t] += m->kc * phi * n[t];
  }
  return e;
}

/* 1 when point p lies within margin [m] of some collider's contact surface, or inside one */
int ms_contact_within(const ms_model *m, const double *p, double margin) {
  double n[3];
  for (int k = 0; k < ncollider(m); k++)
    if (penetration(m, k, p, n) > -margin) return 1;
  return 0;
}

/* the penalty energy of all free vertices at x [J] (ms_contact_point); where f is given, also
 * their contact forces added to f */
double ms_contact_forces(const ms_model *m, const double *x, double *f) {
  double e = 0;
  if (!ncollider(m)) return 0;
  for (int i = 0; i < m->nv; i++)
    if (!m->fixed[i]) e += ms_contact_point(m, x + 3 * i, f ? f + 3 * i : NULL);
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

/* blk = the lateral curvature that ms_contact_hessian drops, -kc phi/|x_i - c| (I - n n^T)
 * summed over the spheres vertex i penetrates (row-major 3x3; planes have none): added to
 * ms_contact_hessian's block it gives the penalty energy's exact Hessian (the adjoint's) */
void ms_contact_curvature(const ms_model *m, const double *x, int i, double *blk) {
  double n[3];
  for (int t = 0; t < 9; t++) blk[t] = 0;
  for (int k = m->nplane; k < ncollider(m) && !m->fixed[i]; k++) {
    double phi = penetration(m, k, x + 3 * i, n),
           len = m->cscale * m->sphere[4 * (k - m->nplane) + 3] - phi;
    if (phi <= 0 || !(len > 0)) continue;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) blk[3 * r + c] -= m->kc * phi / len * ((r == c) - n[r] * n[c]);
  }
}

/* distance t >= 0 that moves point p along unit direction n onto collider k's surface: a
 * plane's depth, the far root of |p + t n - c| = s r for a sphere, or, where that line misses
 * the sphere or its far root is behind p (p went through the sphere sideways), the distance to
 * the tangent plane at c + s r n */
static double exit_distance(const ms_model *m, int k, const double *p, const double *n) {
  double normal[3];
  if (k < m->nplane) return fmax(penetration(m, k, p, normal), 0.0);
  const double *sp = m->sphere + 4 * (k - m->nplane);
  double d[3] = {p[0] - sp[0], p[1] - sp[1], p[2] - sp[2]}, r = m->cscale * sp[3];
  double b = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
  double disc = b * b + r * r - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  double t = disc >= 0 ? -b + sqrt(disc) : -1.0;
  return t > 0 ? t : fmax(r - b, 0.0);
}

/* move p along n onto collider k's surface; returns the distance moved [m] */
static double push_out(const ms_model *m, int k, double *p, const double *n) {
  double t = exit_distance(m, k, p, n);
  for (int c = 0; c < 3; c++) p[c] += t * n[c];
  return t;
}

/* contact normal n of the path from a (the step's start) to p against sphere k, 1 when the
 * path touches it. From a outside: the normal where the segment first enters the sphere, so a
 * vertex that crossed the whole sphere in one step is caught. From a on the surface (or
 * inside): the normal at p when p is inside (its nearest surface point: a vertex resting on
 * the sphere that springs pull in along a chord is not pushed out along a neighbour-diverging
 * normal), else the normal at a for any path heading inward, however far it goes */
static int sphere_path(const ms_model *m, int k, const double *a, const double *p, double n[3]) {
  const double *sp = m->sphere + 4 * (k - m->nplane);
  double f[3] = {a[0] - sp[0], a[1] - sp[1], a[2] - sp[2]};
  double e[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, r = m->cscale * sp[3];
  double ee = ms_dot(3, e, e), fe = ms_dot(3, f, e), ff = ms_dot(3, f, f) - r * r;
  double disc = fe * fe - ee * ff, q[3];
  if (ff <= 0) { /* a on or inside: p inside (its own normal), or a path inward through */
    if (penetration(m, k, p, n) > 0) return 1;
    penetration(m, k, a, n);
    return fe < 0;
  }
  if (!(fe < 0 && disc >= 0)) return 0; /* a path that never enters */
  // the smaller root of |f + s e| = r, in the form that keeps its digits
  double s = ff / (-fe + sqrt(disc));
  if (s > 1) return 0;
  for (int t = 0; t < 3; t++) q[t] = a[t] + s * e[t];
  penetration(m, k, q, n);
  return 1;
}

/* 1 when collider k stops the path from a to p: p inside it, or the path through a sphere;
 * n its contact normal */
static int stops(const ms_model *m, int k, const double *a, const double *p, double n[3]) {
  return k < m->nplane ? penetration(m, k, p, n) > 0 : sphere_path(m, k, a, p, n);
}

/* 1 when the path of a vertex from a to p touches any collider */
int ms_contact_path(const ms_model *m, const double *a, const double *p) {
  double n[3];
  for (int k = 0; k < ncollider(m); k++)
    if (stops(m, k, a, p, n)) return 1;
  return 0;
}

/* out = p moved by its depth along the normal of each collider it is inside: the nearest
 * point outside them, where the penalty kc/2 phi^2 = min over outside points q of
 * kc/2 |p - q|^2 is attained */
void ms_contact_nearest(const ms_model *m, const double *p, double out[3]) {
  double n[3];
  for (int t = 0; t < 3; t++) out[t] = p[t];
  for (int k = 0; k < ncollider(m); k++) {
    double phi = penetration(m, k, out, n);
    for (int t = 0; t < 3 && phi > 0; t++) out[t] += phi * n[t];
  }
}

/* the normal force [N] of the penalty on a free vertex at p, |kc sum phi n| over the
 * colliders it penetrates, with its direction into n (unit); 0 out of contact */
double ms_contact_normal(const ms_model *m, const double *p, double n[3]) {
  double f[3] = {0, 0, 0};
  ms_contact_point(m, p, f);
  double len = sqrt(ms_dot(3, f, f));
  for (int t = 0; t < 3; t++) n[t] = len > 0 ? f[t] / len : 0.0;
  return len;
}

/* XPBD's contact: a free vertex whose path from ref (the step's start) to x enters a collider
 * is moved along the contact normal onto the surface (plane: its normal; sphere: see
 * sphere_path); the distance moved is added to depth[i] (the substep's accumulated normal
 * correction) and the outward surface normal where it ends goes to normal[i]. Pushing along
 * the normal where the path entered, rather than to the nearest surface point, keeps a vertex
 * that went deep into a sphere, or through it, on the side it came from. */
void ms_contact_project(const ms_model *m, const double *ref, double *x, double *depth,
                        double *normal) {
  double n[3];
  for (int i = 0; i < m->nv; i++)
    for (int k = 0; k < ncollider(m) && !m->fixed[i]; k++) {
      double *p = x + 3 * i;
      if (!stops(m, k, ref + 3 * i, p, n)) continue;
      depth[i] += push_out(m, k, p, n);
      penetration(m, k, p, normal + 3 * i);
    }
}
