/* distance.c: squared distances of self-contact's primitive pairs with their gradients and
 * Hessians, and the segment-triangle intersection test
 *
 * A pair is four points x = (x0, x1, x2, x3): point-triangle (p, t0, t1, t2) or edge-edge
 * (a0, a1, b0, b1). Its squared distance d2 is that of its closest features, classified as IPC
 * does (Li et al. 2020), in closed form:
 *   point-point  d2 = |y|^2                        y = p - q
 *   point-line   d2 = |w x e|^2 / |e|^2            w = p - e0, e = e1 - e0
 *   point-plane  d2 = (w.(u x v))^2 / |u x v|^2    u = t1 - t0, v = t2 - t0, w = p - t0
 *   line-line    the same with                     u = a1 - a0, v = b1 - b0, w = b0 - a0
 * Each is a function of at most three difference vectors y_j of the points, whose derivatives
 * are closed forms: |u x v|^2 = |u|^2 |v|^2 - (u.v)^2; s = w.(u x v) is trilinear, ds/du = v x w,
 * ds/dv = w x u, ds/dw = u x v; a quotient f = A/B has g = (A' - f B')/B and
 * H = (A'' - f B'' - B' g^T - g B'^T)/B. They are mapped to x by the differences.
 *
 * Point-triangle: the foot of p beyond an edge's line, between its ends, is point-line; in a
 * vertex's wedge point-point; otherwise point-plane. Edge-edge: the parameter s of the closest
 * point on line a, clamped to [0, 1], then t on line b for that s, clamped, then s again for a
 * clamped t: 9 cases, each point-point, point-line or line-line.
 *
 * Degenerate pairs fall back to point-edge distances (the nearer end, or the line between):
 * edges nearly parallel, sin^2 of their angle at most 1e-16 (the cross product has lost half its
 * digits there), take the least of the four, exact for parallel edges and within sin^2 L^2 / 4
 * otherwise (L the longer edge); a triangle with such an angle at t0 takes the least of its
 * three edges; an edge of squared length at most 1e-32 of the pair's squared extent counts as
 * its first end. The points are first scaled by a power of two (exactly) to a largest coordinate
 * in [0.5, 1): no intermediate overflows or underflows, and finite x give finite results.
 *
 * Segment-triangle: with signed volumes, the segment (p, q) misses the triangle when both ends
 * lie strictly on one side of its plane; otherwise the line through them meets the triangle when
 * the volumes (q - p).((t_k - p) x (t_k+1 - p)) share a sign (zero included). A segment in the
 * plane is tested in 2D, dropping the normal's largest axis: an end inside the triangle, or a
 * crossing of one of its edges. A triangle of collinear vertices is its longest edge.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "distance.h"
#include "msim.h"

/* edges count as parallel at sin^2 of their angle at most this */
#define PARALLEL 1e-16
/* an edge counts as a point at squared length at most this times the pair's squared extent */
#define SHORT 1e-32
/* a segment counts as in a triangle's plane when both ends are within this fraction of its
 * length scale from it (then the 3D volumes of the crossing test are rounding noise) */
#define MS_COPLANAR 1e-12
/* row stride of the Hessians in the difference vectors (at most three) */
#define N 9

/* ---------------------------------------------------------------- vectors */

static double dot(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void sub(const double *a, const double *b, double *out) {
  for (int t = 0; t < 3; t++) out[t] = a[t] - b[t];
}

static void cross(const double *a, const double *b, double *out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* the axis of v's largest magnitude */
static int axis_max(const double *v) {
  int k = fabs(v[1]) > fabs(v[0]);
  return fabs(v[2]) > fabs(v[k]) ? 2 : k;
}

/* y[i] = x[i] 2^k for n values, as ldexp gives them: one product by the power of two (exact,
 * or rounded once where it underflows) when 2^k is a normal double, else ldexp itself */
static void times_pow2(const double *x, int n, int k, double *y) {
  if (k < -1022 || k > 1023) {
    for (int i = 0; i < n; i++) y[i] = ldexp(x[i], k);
    return;
  }
  union {
    uint64_t bits;
    double value;
  } f = {(uint64_t)(k + 1023) << 52};
  for (int i = 0; i < n; i++) y[i] = x[i] * f.value;
}

/* xs = x 2^-e (exact), e the exponent of x's largest magnitude (frexp's: big = f 2^e, f in
 * [1/2, 1)), NaNs passed over; returns e. A normal big's e is read from its bits (frexp, a call
 * per pair, took half of a detection's exact distances) */
static int normalise(const double *x, int n, double *xs) {
  double big = 0;
  int e = 0;
  for (int i = 0; i < n; i++) big = fabs(x[i]) > big ? fabs(x[i]) : big;
  if (big >= DBL_MIN && big <= DBL_MAX) {
    union {
      double value;
      uint64_t bits;
    } b = {big};
    e = (int)(b.bits >> 52) - 1022;
  } else if (big > 0 && isfinite(big)) {
    frexp(big, &e);
  }
  times_pow2(x, n, -e, xs);
  return e;
}

/* ---------------------------------------------------------------- derivative blocks */

/* block (bi, bj) of h += c I */
static void add_eye(double *h, int bi, int bj, double c) {
  for (int t = 0; t < 3; t++) h[(3 * bi + t) * N + 3 * bj + t] += c;
}

/* block (bi, bj) of h += c a b^T */
static void add_outer(double *h, int bi, int bj, const double *a, const double *b, double c) {
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) h[(3 * bi + r) * N + 3 * bj + s] += c * a[r] * b[s];
}

/* block (bi, bj) of h += c [a]x ([a]x b = a x b), and its transpose to block (bj, bi) */
static void add_skew(double *h, int bi, int bj, const double *a, double c) {
  const double m[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) {
      h[(3 * bi + r) * N + 3 * bj + s] += c * m[3 * r + s];
      h[(3 * bj + s) * N + 3 * bi + r] += c * m[3 * r + s];
    }
}

/* ---------------------------------------------------------------- closed forms */

/* Hessian of |u x v|^2 = |u|^2 |v|^2 - (u.v)^2 added to h; u, v blocks bu, bv of y */
static void cross2_hess(const double *y, int bu, int bv, double *h) {
  const double *u = y + 3 * bu, *v = y + 3 * bv;
  add_eye(h, bu, bu, 2 * dot(v, v)), add_outer(h, bu, bu, v, v, -2);
  add_eye(h, bv, bv, 2 * dot(u, u)), add_outer(h, bv, bv, u, u, -2);
  add_outer(h, bu, bv, u, v, 4), add_outer(h, bu, bv, v, u, -2);
  add_outer(h, bv, bu, v, u, 4), add_outer(h, bv, bu, u, v, -2);
  add_eye(h, bu, bv, -2 * dot(u, v)), add_eye(h, bv, bu, -2 * dot(u, v));
}

/* |u x v|^2 of blocks bu, bv of y; where g is given, its gradient (2 v x n, 2 n x u with
 * n = u x v) added to g, and where h is, its Hessian to h */
static double cross2(const double *y, int bu, int bv, double *g, double *h) {
  double n[3], gu[3], gv[3];
  cross(y + 3 * bu, y + 3 * bv, n);
  if (!g) return dot(n, n);
  cross(y + 3 * bv, n, gu), cross(n, y + 3 * bu, gv);
  for (int t = 0; t < 3; t++) g[3 * bu + t] += 2 * gu[t], g[3 * bv + t] += 2 * gv[t];
  if (h) cross2_hess(y, bu, bv, h);
  return dot(n, n);
}

/* s = w.(u x v), y = (u, v, w); where g is given, g = (v x w, w x u, u x v), and where h is,
 * its Hessian (blocks -[w]x at (u, v), [v]x at (u, w), -[u]x at (v, w)) added to h */
static double triple(const double *y, double *g, double *h) {
  const double *u = y, *v = y + 3, *w = y + 6;
  double n[3];
  cross(u, v, n);
  if (!g) return dot(w, n);
  cross(v, w, g), cross(w, u, g + 3), cross(u, v, g + 6);
  if (h) add_skew(h, 0, 1, w, -1), add_skew(h, 0, 2, v, 1), add_skew(h, 1, 2, u, -1);
  return dot(w, n);
}

/* f = a/b; where ga is given, ga and ha (the derivatives of a, n variables; ha only where
 * given) become those of f from gb and hb (b's): g = (ga - f gb)/b,
 * h = (ha - f hb - gb g^T - g gb^T)/b */
static double quotient(int n, double a, double *ga, double *ha, double b, const double *gb,
                       const double *hb) {
  double f = a / b;
  if (!ga) return f;
  for (int i = 0; i < n; i++) ga[i] = (ga[i] - f * gb[i]) / b;
  for (int i = 0; i < n && ha; i++)
    for (int j = 0; j < n; j++) {
      double *hij = ha + i * N + j;
      *hij = (*hij - f * hb[i * N + j] - gb[i] * ga[j] - ga[i] * gb[j]) / b;
    }
  return f;
}

/* Each closed form below returns the squared distance of the difference vectors y, its
 * gradient into g where g is given (zeroed), and its Hessian into h where h is too (zeroed):
 * a distance alone sets up no derivative arrays. */

/* point-point |y|^2 */
static double pp_d2(const double *y, double *g, double *h) {
  for (int t = 0; g && t < 3; t++) g[t] = 2 * y[t];
  if (h) add_eye(h, 0, 0, 2);
  return dot(y, y);
}

/* point-line |w x e|^2 / |e|^2, y = (w, e) */
static double pl_d2(const double *y, double *g, double *h) {
  double a = cross2(y, 0, 1, g, h), b = dot(y + 3, y + 3);
  if (!g) return a / b;
  double gb[N] = {0}, hb[N * N] = {0};
  for (int t = 0; t < 3; t++) gb[3 + t] = 2 * y[3 + t];
  add_eye(hb, 1, 1, 2);
  return quotient(6, a, g, h, b, gb, hb);
}

/* point-plane and line-line s^2 / |u x v|^2, s = w.(u x v), y = (u, v, w) */
static double plane_d2(const double *y, double *g, double *h) {
  if (!g) {
    double s = triple(y, NULL, NULL);
    return s * s / cross2(y, 0, 1, NULL, NULL);
  }
  double gs[N], gb[N] = {0}, hb[N * N] = {0};
  double s = triple(y, gs, h), b = cross2(y, 0, 1, gb, h ? hb : NULL);
  // derivatives of s^2: 2 s gs and 2 (gs gs^T + s Hs), Hs in h
  for (int i = 0; i < N; i++) {
    g[i] = 2 * s * gs[i];
    for (int j = 0; j < N && h; j++) h[i * N + j] = 2 * (gs[i] * gs[j] + s * h[i * N + j]);
  }
  return quotient(N, s * s, g, h, b, gb, hb);
}

/* ---------------------------------------------------------------- features */

/* closest features as a function of k difference vectors y_j = x[plus_j] - x[minus_j] of the
 * pair's points: k = 1 point-point (p - q), 2 point-line (p - e0, e1 - e0), 3 point-plane
 * (t1 - t0, t2 - t0, p - t0) or line-line (a1 - a0, b1 - b0, b0 - a0) */
typedef struct {
  int k, plus[3], minus[3];
} feature;

static feature point_point(int p, int q) {
  return (feature){1, {p}, {q}};
}

static feature point_line(int p, int e0, int e1) {
  return (feature){2, {p, e1}, {e0, e0}};
}

static feature point_plane(int p, int t0, int t1, int t2) {
  return (feature){3, {t1, t2, p}, {t0, t0, t0}};
}

static feature line_line(int a0, int a1, int b0, int b1) {
  return (feature){3, {a1, b1, b0}, {a0, b0, a0}};
}

/* the coefficient (1, -1 or 0) of point i in difference vector j */
static int coef(const feature *ft, int j, int i) {
  return (ft->plus[j] == i) - (ft->minus[j] == i);
}

/* grad = M^T g, M the map from x to the difference vectors */
static void scatter_grad(const feature *ft, const double *g, double *grad) {
  memset(grad, 0, 12 * sizeof(double));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < ft->k; j++)
      for (int t = 0; t < 3; t++) grad[3 * i + t] += coef(ft, j, i) * g[3 * j + t];
}

/* block (i, l) of hess += c times block (j, m) of h */
static void add_block(double *hess, int i, int l, const double *h, int j, int m, int c) {
  for (int r = 0; r < 3 && c; r++)
    for (int s = 0; s < 3; s++)
      hess[(3 * i + r) * 12 + 3 * l + s] += c * h[(3 * j + r) * N + 3 * m + s];
}

/* hess = M^T h M */
static void scatter_hess(const feature *ft, const double *h, double *hess) {
  memset(hess, 0, 144 * sizeof(double));
  for (int i = 0; i < 4; i++)
    for (int l = 0; l < 4; l++)
      for (int j = 0; j < ft->k; j++)
        for (int m = 0; m < ft->k; m++)
          add_block(hess, i, l, h, j, m, coef(ft, j, i) * coef(ft, m, l));
}

/* the closed form of each k */
static double (*const form[4])(const double *, double *, double *) = {NULL, pp_d2, pl_d2, plane_d2};

/* squared distance of feature ft of the points x, with its gradient and Hessian in x where
 * asked */
static double eval(const double *x, const feature *ft, double *grad, double *hess) {
  double y[N];
  for (int j = 0; j < ft->k; j++) sub(x + 3 * ft->plus[j], x + 3 * ft->minus[j], y + 3 * j);
  if (!grad && !hess) return form[ft->k](y, NULL, NULL);
  double g[N] = {0}, h[N * N];
  if (hess) memset(h, 0, sizeof(h));
  double f = form[ft->k](y, g, hess ? h : NULL);
  if (grad) scatter_grad(ft, g, grad);
  if (hess) scatter_hess(ft, h, hess);
  return f;
}

/* ---------------------------------------------------------------- classification */

/* the pair's squared extent: the largest |x_i - x_0|^2 */
static double extent2(const double *x) {
  double l2 = 0, d[3];
  for (int i = 1; i < 4; i++) sub(x + 3 * i, x, d), l2 = ms_max(l2, dot(d, d));
  return l2;
}

/* point p against segment (e0, e1): the end its foot falls beyond, else the line (also for a
 * foot exactly on an end, as ipctk); a short segment is its first end */
static feature point_edge(const double *x, int p, int e0, int e1, double l2) {
  double e[3], r[3];
  sub(x + 3 * e1, x + 3 * e0, e), sub(x + 3 * p, x + 3 * e0, r);
  double ee = dot(e, e), re = dot(r, e);
  if (ee <= SHORT * l2 || re < 0) return point_point(p, e0);
  return re > ee ? point_point(p, e1) : point_line(p, e0, e1);
}

/* the feature of least squared distance among f[0 .. n) (the first of equals) */
static feature least(const double *x, const feature *f, int n) {
  int best = 0;
  double d = eval(x, f, NULL, NULL);
  for (int i = 1; i < n; i++) {
    double di = eval(x, f + i, NULL, NULL);
    if (di < d) best = i, d = di;
  }
  return f[best];
}

/* 1 when u or v is short or they are nearly parallel */
static int degenerate(const double *u, const double *v, double l2) {
  double n[3], uu = dot(u, u), vv = dot(v, v);
  cross(u, v, n);
  return uu <= SHORT * l2 || vv <= SHORT * l2 || dot(n, n) <= PARALLEL * uu * vv;
}

/* s = the parameter of the foot of p (point 0) along triangle edge (a, b), n the triangle's
 * normal; 1 when the foot lies beyond the edge's line, between its ends */
static int edge_region(const double *x, int a, int b, const double *n, double *s) {
  double e[3], r[3], out[3];
  sub(x + 3 * b, x + 3 * a, e), sub(x, x + 3 * a, r), cross(e, n, out);
  *s = dot(r, e) / dot(e, e);
  return dot(r, out) >= 0 && *s > 0 && *s < 1;
}

/* point-triangle: an edge's line the foot of p lies beyond, between the edge's ends; else the
 * vertex in whose wedge it lies (before one edge's start and past the previous one's end);
 * else the plane. A degenerate triangle: the nearest of its edges */
static feature pt_closest(const double *x) {
  double l2 = extent2(x), u[3], v[3], n[3], s[3];
  sub(x + 6, x + 3, u), sub(x + 9, x + 3, v);
  if (degenerate(u, v, l2)) {
    feature f[3] = {point_edge(x, 0, 1, 2, l2), point_edge(x, 0, 2, 3, l2),
                    point_edge(x, 0, 3, 1, l2)};
    return least(x, f, 3);
  }
  cross(u, v, n);
  for (int i = 0; i < 3; i++)
    if (edge_region(x, 1 + i, 1 + (i + 1) % 3, n, s + i))
      return point_line(0, 1 + i, 1 + (i + 1) % 3);
  for (int i = 0; i < 3; i++)
    if (s[i] <= 0 && s[(i + 2) % 3] >= 1) return point_point(0, 1 + i);
  return point_plane(0, 1, 2, 3);
}

/* where a segment's closest point lies: its first end, its second, or between */
enum { END0, END1, INSIDE };

/* where the parameter num/den (den > 0) falls when clamped to [0, 1] */
static int part(double num, double den) {
  return num <= 0 ? END0 : num >= den ? END1 : INSIDE;
}

/* the feature pair of segment a's part fa and segment b's part fb */
static feature ee_feature(int fa, int fb) {
  if (fa != INSIDE && fb != INSIDE) return point_point(fa, 2 + fb);
  if (fa == INSIDE && fb == INSIDE) return line_line(0, 1, 2, 3);
  return fa == INSIDE ? point_line(2 + fb, 0, 1) : point_line(fa, 2, 3);
}

/* edge-edge: s on line a from the lines' closest points, s |n|^2 = (w x v).n (w = b0 - a0,
 * n = u x v), clamped; t on line b for it, clamped; s on line a for a clamped t, clamped. Nearly
 * parallel or short edges: the least of the four point-edge distances */
static feature ee_closest(const double *x) {
  double l2 = extent2(x), u[3], v[3], w[3], n[3], m[3], r[3];
  sub(x + 3, x, u), sub(x + 9, x + 6, v), sub(x + 6, x, w);
  if (degenerate(u, v, l2)) {
    feature f[4] = {point_edge(x, 0, 2, 3, l2), point_edge(x, 1, 2, 3, l2),
                    point_edge(x, 2, 0, 1, l2), point_edge(x, 3, 0, 1, l2)};
    return least(x, f, 4);
  }
  cross(u, v, n), cross(w, v, m);
  int fa = part(dot(m, n), dot(n, n)), fb;
  if (fa == INSIDE) cross(w, u, m), fb = part(dot(m, n), dot(n, n));
  if (fa != INSIDE) sub(x + 3 * fa, x + 6, r), fb = part(dot(r, v), dot(v, v));
  if (fb != INSIDE) sub(x + 6 + 3 * fb, x, r), fa = part(dot(r, u), dot(u, u));
  return ee_feature(fa, fb);
}

/* ---------------------------------------------------------------- distances */

double ms_pair_dist2(ms_pair_kind kind, const double x[12], double grad[12], double hess[144]) {
  double xs[12];
  int e = normalise(x, 12, xs);
  feature ft = kind == MS_PAIR_PT ? pt_closest(xs) : ee_closest(xs);
  double d2 = eval(xs, &ft, grad, hess);
  // d2 scales as x^2, its gradient as x, its Hessian not at all
  if (grad) times_pow2(grad, 12, e, grad);
  times_pow2(&d2, 1, 2 * e, &d2);
  return d2;
}

double ms_pair_box_dist2(ms_pair_kind kind, const double x[12]) {
  // plain comparisons (no NaN rule: a pair with a NaN has no distance, and no energy, either way)
  const double *b = x + (kind == MS_PAIR_PT ? 3 : 6);
  double d2 = 0;
  for (int t = 0; t < 3; t++) {
    double alo = x[t], ahi = x[t], blo = b[t], bhi = b[t];
    if (kind == MS_PAIR_EE) {
      alo = x[3 + t] < alo ? x[3 + t] : alo, ahi = x[3 + t] > ahi ? x[3 + t] : ahi;
      blo = b[3 + t] < blo ? b[3 + t] : blo, bhi = b[3 + t] > bhi ? b[3 + t] : bhi;
    } else {
      for (int k = 3; k < 9; k += 3)
        blo = b[k + t] < blo ? b[k + t] : blo, bhi = b[k + t] > bhi ? b[k + t] : bhi;
    }
    double gap = blo - ahi > alo - bhi ? blo - ahi : alo - bhi;
    d2 += gap > 0 ? gap * gap : 0.0;
  }
  return d2;
}

/* ---------------------------------------------------------------- segment-triangle */

/* 1 when none of o[0 .. 3) is negative or none positive */
static int one_sign(const double *o) {
  int neg = 0, pos = 0;
  for (int k = 0; k < 3; k++) {
    neg |= o[k] < 0;
    pos |= o[k] > 0;
  }
  return !(neg && pos);
}

/* twice the signed area of (a, b, c) in the plane of axes i, j */
static double orient2(const double *a, const double *b, const double *c, int i, int j) {
  return (b[i] - a[i]) * (c[j] - a[j]) - (b[j] - a[j]) * (c[i] - a[i]);
}

/* 1 when c lies in the box of a and b in axes i, j */
static int in_box(const double *a, const double *b, const double *c, int i, int j) {
  return fmin(a[i], b[i]) <= c[i] && c[i] <= fmax(a[i], b[i]) && fmin(a[j], b[j]) <= c[j] &&
         c[j] <= fmax(a[j], b[j]);
}

/* 1 when a and b have strictly opposite signs */
static int opposite(double a, double b) {
  return (a > 0 && b < 0) || (a < 0 && b > 0);
}

/* 1 when segments (a, b) and (c, d) meet in the plane of axes i, j, touching included */
static int segments_meet(const double *a, const double *b, const double *c, const double *d, int i,
                         int j) {
  double o1 = orient2(a, b, c, i, j), o2 = orient2(a, b, d, i, j);
  double o3 = orient2(c, d, a, i, j), o4 = orient2(c, d, b, i, j);
  if (opposite(o1, o2) && opposite(o3, o4)) return 1;
  return (o1 == 0 && in_box(a, b, c, i, j)) || (o2 == 0 && in_box(a, b, d, i, j)) ||
         (o3 == 0 && in_box(c, d, a, i, j)) || (o4 == 0 && in_box(c, d, b, i, j));
}

/* segment (p, q) and the triangle t (9 coordinates) in one plane, compared in the plane of the
 * axes other than drop: an end inside the triangle (when it has an area there) or a crossing of
 * an edge */
static int coplanar_meet(const double *p, const double *q, const double *t, int drop) {
  int i = (drop + 1) % 3, j = (drop + 2) % 3, hit = 0;
  if (orient2(t, t + 3, t + 6, i, j) != 0) {
    double op[3], oq[3];
    for (int k = 0; k < 3; k++) op[k] = orient2(t + 3 * k, t + 3 * ((k + 1) % 3), p, i, j);
    for (int k = 0; k < 3; k++) oq[k] = orient2(t + 3 * k, t + 3 * ((k + 1) % 3), q, i, j);
    hit = one_sign(op) || one_sign(oq);
  }
  for (int k = 0; k < 3 && !hit; k++)
    hit = segments_meet(p, q, t + 3 * k, t + 3 * ((k + 1) % 3), i, j);
  return hit;
}

/* the axis to drop for 2D tests of points on the line of direction d: its smallest */
static int line_drop(const double *d) {
  int k = fabs(d[1]) < fabs(d[0]);
  return fabs(d[2]) < fabs(d[k]) ? 2 : k;
}

/* the axis of the largest magnitude among the three vectors m, -1 when all are zero */
static int normal_axis(double m[3][3]) {
  int best = 0;
  for (int k = 1; k < 3; k++)
    if (fabs(m[k][axis_max(m[k])]) > fabs(m[best][axis_max(m[best])])) best = k;
  return m[best][axis_max(m[best])] != 0 ? axis_max(m[best]) : -1;
}

/* segments (p, q) and (a, b) in 3D: apart unless coplanar, then compared in 2D in their plane
 * (its normal the largest of d x e, d x r, e x r) or, all collinear, along their line */
static int segments_meet3(const double *p, const double *q, const double *a, const double *b) {
  double d[3], e[3], r[3], m[3][3];
  sub(q, p, d), sub(b, a, e), sub(a, p, r);
  cross(d, e, m[0]), cross(d, r, m[1]), cross(e, r, m[2]);
  if (dot(m[0], r) != 0) return 0;
  int drop = normal_axis(m);
  const double *dir = dot(d, d) >= dot(e, e) ? d : e;
  if (drop < 0 && dot(dir, dir) == 0) return p[0] == a[0] && p[1] == a[1] && p[2] == a[2];
  if (drop < 0) drop = line_drop(dir);
  return segments_meet(p, q, a, b, (drop + 1) % 3, (drop + 2) % 3);
}

/* the line through p and q, which crosses the triangle's plane, meets the triangle when the
 * volumes (q - p).((t_k - p) x (t_k+1 - p)) share a sign */
static int line_meets(const double *p, const double *q, const double *t) {
  double d[3], r0[3], r1[3], m[3], o[3];
  sub(q, p, d);
  for (int k = 0; k < 3; k++) {
    sub(t + 3 * k, p, r0), sub(t + 3 * ((k + 1) % 3), p, r1), cross(r0, r1, m);
    o[k] = dot(d, m);
  }
  return one_sign(o);
}

/* segment (p, q) against a triangle of collinear vertices: against its longest edge */
static int collinear_meet(const double *p, const double *q, const double *t) {
  int best = 0;
  double len[3], e[3];
  for (int k = 0; k < 3; k++) sub(t + 3 * ((k + 1) % 3), t + 3 * k, e), len[k] = dot(e, e);
  for (int k = 1; k < 3; k++)
    if (len[k] > len[best]) best = k;
  return segments_meet3(p, q, t + 3 * best, t + 3 * ((best + 1) % 3));
}

int ms_segment_meets_triangle(const double a[3], const double b[3], const double t0[3],
                              const double t1[3], const double t2[3]) {
  double x[15], e1[3], e2[3], n[3], rp[3], rq[3];
  const double *in[5] = {a, b, t0, t1, t2}, *p = x, *q = x + 3, *t = x + 6;
  for (int k = 0; k < 5; k++) memcpy(x + 3 * k, in[k], 3 * sizeof(double));
  normalise(x, 15, x);
  sub(t + 3, t, e1), sub(t + 6, t, e2), cross(e1, e2, n);
  if (n[axis_max(n)] == 0) return collinear_meet(p, q, t);
  sub(p, t, rp), sub(q, t, rq);
  double sp = dot(n, rp), sq = dot(n, rq);
  // both ends in the plane up to rounding: the volumes of line_meets would be rounding noise
  double tol = MS_COPLANAR * sqrt(dot(n, n)) * sqrt(fmax(dot(rp, rp), dot(rq, rq)));
  if (fabs(sp) <= tol && fabs(sq) <= tol) return coplanar_meet(p, q, t, axis_max(n));
  if ((sp > 0 && sq > 0) || (sp < 0 && sq < 0)) return 0;
  return line_meets(p, q, t);
}

double ms_pair_closest(ms_pair_kind kind, const double x[12], double n[3], double c[4]) {
  double g[12], ga[3] = {0, 0, 0};
  double dist = sqrt(ms_pair_dist2(kind, x, g, NULL));
  for (int a = 0; a < (kind == MS_PAIR_PT ? 1 : 2); a++)
    for (int t = 0; t < 3; t++) ga[t] += g[3 * a + t];
  double len2 = dot(ga, ga);
  for (int t = 0; t < 3; t++) n[t] = len2 > 0 ? ga[t] / sqrt(len2) : 0.0;
  for (int k = 0; k < 4; k++) c[k] = len2 > 0 ? dot(g + 3 * k, ga) / len2 : 0.0;
  return dist;
}
