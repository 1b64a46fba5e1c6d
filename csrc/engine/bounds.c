/* bounds.c: displacement bounds that keep a triangle mesh from crossing itself
 *
 * Two primitives (a point and a triangle, or two edges) that share no vertex can only start
 * to cross by meeting: at the first crossing some point-triangle or edge-edge distance is
 * zero. Along the straight path from x to x + dx, the distance of a pair at distance D
 * changes by at most the largest relative displacement of a point of one primitive against a
 * point of the other, and a point of a primitive moves by a convex combination of its
 * vertices' displacements. So if every vertex i keeps |dx_i - u| <= b_i for one common
 * translation u, with b_i = gamma (min(r, D_i) - delta), D_i the distance from i's primitives
 * to the nearest primitive they do not share a vertex with (within r; beyond r every pair is
 * at least r apart), a pair D >= delta apart stays at least (1 - 2 gamma) D + 2 gamma delta
 * >= delta apart on the whole path: no crossing, not even between steps; the floor delta (a
 * tiny fraction of the thickness) keeps rounding in x + dx from closing the last gap (Offset
 * Geometric Contact, Chen et al. 2025, whose bound this is, with the common translation taken out
 * so that a falling or sliding cloth is not slowed).
 *
 * After a method's step, the displacement from x_t to its result is limited this way from
 * the bounds detected at x_t; where a vertex was limited, the bounds are detected again at
 * the new positions and the rest of the way is limited again, up to MS_SC_ROUNDS detections.
 * A limited vertex ends where the bounds let it and moves on with v = (x - x_t)/h, as
 * a collision response that removes the approach speed.
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* the fraction of the distance to the nearest primitive a vertex may move per detection */
#define MS_SC_GAMMA 0.45
/* detections per step at most */
#define MS_SC_ROUNDS 8
/* the floor delta of the distances, as a fraction of the thickness */
#define MS_SC_FLOOR 1e-6

/* the common translation: the mean displacement of the free vertices, shortened so that the
 * fixed vertices (displacement 0) stay within their bounds */
static void translation(const ms_model *m, const double *x, const double *target,
                        const double *bound, double u[3]) {
  double floor = MS_SC_FLOOR * m->sc_thickness;
  double cap = INFINITY;
  int n = 0;
  u[0] = u[1] = u[2] = 0;
  for (int i = 0; i < m->nv; i++) {
    if (m->fixed[i]) cap = fmin(cap, MS_SC_GAMMA * fmax(bound[i] - floor, 0.0));
    for (int t = 0; t < 3 && !m->fixed[i]; t++) u[t] += target[3 * i + t] - x[3 * i + t];
    n += !m->fixed[i];
  }
  double len = n ? sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) / n : 0.0;
  for (int t = 0; t < 3; t++) u[t] = len > cap ? u[t] / n * cap / len : n ? u[t] / n : 0.0;
}

/* one round: x moves toward target by u plus each vertex's deviation, cut to its bound;
 * returns the vertices cut */
static int advance(const ms_model *m, double *x, const double *target, const double *bound,
                   unsigned char *cut) {
  double u[3], floor = MS_SC_FLOOR * m->sc_thickness;
  int n = 0;
  translation(m, x, target, bound, u);
  for (int i = 0; i < m->nv; i++) {
    double dev[3], len = 0;
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      dev[t] = target[3 * i + t] - x[3 * i + t] - u[t];
      len += dev[t] * dev[t];
    }
    double b = MS_SC_GAMMA * fmax(bound[i] - floor, 0.0), s = len > b * b ? b / sqrt(len) : 1.0;
    for (int t = 0; t < 3 && !m->fixed[i]; t++) x[3 * i + t] += u[t] + s * dev[t];
    if (s < 1.0) cut[i] = 1, n++;
  }
  return n;
}

ms_status ms_self_limit(const ms_model *m, ms_data *d, double h, ms_info *info) {
  if (!ms_self_active(m, d)) return MS_OK;
  ms_self_ws *w = d->sc;
  double *target = w->target, *x = d->xn;
  unsigned char *cut = w->cut;
  size_t bytes = sizeof(double) * 3 * m->nv;
  memcpy(target, d->xn, bytes);
  memcpy(x, d->x, bytes);
  memset(cut, 0, m->nv);

  // the bounds of x_t came with the step's pairs; later rounds detect their own
  int left = advance(m, x, target, w->nearest, cut);
  info->rounds = 1;
  for (; left && info->rounds < MS_SC_ROUNDS; info->rounds++) {
    ms_status st = ms_self_detect(m, d, x, ms_self_radius(m), 0);
    if (st != MS_OK) return st;
    left = advance(m, x, target, w->nearest, cut);
  }

  // limited vertices move on with the speed of their limited displacement
  for (int i = 0; i < m->nv; i++) {
    info->limited += cut[i];
    for (int t = 0; t < 3 && cut[i]; t++) d->vn[3 * i + t] = (x[3 * i + t] - d->x[3 * i + t]) / h;
  }
  return MS_OK;
}
