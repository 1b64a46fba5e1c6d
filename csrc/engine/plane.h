/* plane.h: lengths, distances and orientation of points in a plane, each a double[2] (or the
 * first two of a double[3]). Internal to the engine. */
#ifndef MSIM_PLANE_H
#define MSIM_PLANE_H

#include <math.h>

/* the length of the plane vector (u, v) (for coordinates below 1e100: no overflow) */
static inline double ms_plane_norm(double u, double v) {
  return sqrt(u * u + v * v);
}

/* the distance from p to the segment ab */
static inline double ms_plane_gap(const double *p, const double *a, const double *b) {
  double ab[2] = {b[0] - a[0], b[1] - a[1]}, ap[2] = {p[0] - a[0], p[1] - a[1]};
  double l2 = ab[0] * ab[0] + ab[1] * ab[1], t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1]) / l2 : 0;
  t = t < 0 ? 0 : t; /* (clamped by two selects, without a branch) */
  t = t > 1 ? 1 : t;
  return ms_plane_norm(ap[0] - t * ab[0], ap[1] - t * ab[1]);
}

/* twice the signed area of the triangle abc (positive: counterclockwise) */
static inline double ms_plane_orient(const double *a, const double *b, const double *c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

#endif
