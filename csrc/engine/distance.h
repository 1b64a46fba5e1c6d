/* distance.h: distances between the primitives of self-contact (point-triangle, edge-edge) with
 * their derivatives, and the segment-triangle intersection test. No allocation, no state. */
#ifndef MSIM_DISTANCE_H
#define MSIM_DISTANCE_H
/* the primitive pairs of self-contact, as 4 points x[12]: MS_PAIR_PT point p, triangle t0 t1 t2;
 * MS_PAIR_EE segment a0 a1, segment b0 b1 */
typedef enum { MS_PAIR_PT = 0, MS_PAIR_EE } ms_pair_kind;
/* squared distance [m^2] between the pair's primitives; grad (12) and hess (12x12 row-major)
 * of it with respect to x when not NULL */
double ms_pair_dist2(ms_pair_kind kind, const double x[12], double grad[12], double hess[144]);
/* squared distance [m^2] between the bounding boxes of the pair's primitives: at most
 * ms_pair_dist2, for a fraction of its cost */
double ms_pair_box_dist2(ms_pair_kind kind, const double x[12]);
/* the distance [m] between the pair's primitives and their closest points: the unit normal n
 * from the second primitive's closest point b* to the first's a*, and the vertices' weights c
 * (a* = sum of c_k x_k over the first primitive, b* = -sum over the second: c >= 0 on the
 * first, <= 0 on the second), read off grad_k d^2 = 2 c_k (a* - b*); n and c zero at d = 0 */
double ms_pair_closest(ms_pair_kind kind, const double x[12], double n[3], double c[4]);
/* 1 when the primitives v[0 .. na) and v[na .. n) (vertex indices) share a vertex: every
 * comparison made and joined without a branch (the broad phase's candidates share a vertex
 * about as often as not), inline so that a caller's constant na and n unroll the loops */
static inline int ms_shares_vertex(const int *v, int na, int n) {
  int shared = 0;
  for (int a = 0; a < na; a++)
    for (int b = na; b < n; b++) shared |= v[a] == v[b];
  return shared;
}
/* 1 when segment (a, b) meets triangle (t0, t1, t2), touching included; 0 otherwise */
int ms_segment_meets_triangle(const double a[3], const double b[3], const double t0[3],
                              const double t1[3], const double t2[3]);
#endif
