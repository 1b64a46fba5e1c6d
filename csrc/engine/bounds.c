/* bounds.c: displacement bounds that keep a triangle mesh from crossing itself
 *
 * Two primitives (a point and a triangle, or two edges) that share no vertex can only start
 * to cross by meeting. Two convex primitives A and B at distance D with closest points a*, b*
 * are separated by the plane normal to n = (a* - b*)/D: n.(y - a*) >= 0 on A and
 * n.(z - b*) <= 0 on B. Move their vertices along straight paths x + t dx (t in [0, 1]); a
 * point of a primitive moves by a convex combination of its vertices' displacements, so with
 * c_A = max over A's vertices of -n.dx_a and c_B = max over B's of n.dx_b (signed),
 *
 *   c_A + c_B <= 2 gamma (D - delta)
 *
 * keeps every point pair at n.(y - z) >= (1 - 2 gamma) D + 2 gamma delta > 0 on the whole
 * path: they never meet, not even between steps, while moving apart (or sideways) is free,
 * and so is moving together: one translation of both primitives leaves c_A + c_B as it was,
 * as for neighbours in a falling cloth.
 * Pairs farther than r apart need no plane while |dx_i - u| <= gamma (r - dhat) for one common
 * translation u of all vertices (they stay outside the thickness dhat, where the method never
 * saw them); when some vertex moves farther, the pairs whose primitives' boxes swept along the
 * paths come within r take their planes too (no other pair comes within r on the way; sweep.c
 * sweeps patch by patch in frames moving with the mesh, and again in the start's frame, which
 * holds for paths cut short, when a vertex was cut), so a cloth that swings or sags far in one
 * step moves as the method moves it unless some pair closes. A mesh that projects one to one
 * onto a plane all along the paths (planar.c) keeps the pairs away from the few vertices that
 * certificate leaves loose outside the thickness, as the translation does: only those are
 * swept. Each vertex keeps the largest fraction s_i of its displacement that meets all its pairs'
 * conditions (each holds at s_i = 0), a pair that must be cut sharing its room between its sides in
 * proportion to their closings, as Offset Geometric Contact's per-vertex bounds (Chen et al. 2025)
 * do, here per pair direction so that pairs at their floor can still separate; the floor delta (a
 * tiny fraction of the thickness) keeps rounding in x + dx from closing the last gap. One plane at
 * the start must hold a pair's closings over the whole path, so it cuts pairs that swing past each
 * other or close far without coming near; such a pair is let through when its paths, split into
 * equal parts, are held by the plane at each part's start (the same argument from there) and stay
 * outside the thickness, so that the single plane still limits how fast a pair enters the barrier.
 *
 * The solvers of g keep their iterates apart the same way over the energy pairs: a Newton or
 * L-BFGS step p is cut to the largest fraction all pairs allow before its line search, so the
 * line search sees the barrier rise instead of stepping over it, and every solver's start is
 * shrunk toward x_t as a whole the same way (cut per vertex, it would stretch the springs
 * between cut and uncut vertices, a strain one Newton iteration carries into the step), a pair
 * that was outside the contact zone at x_t going at most halfway into it: deep in the log
 * barrier an exact Newton step on -log D only doubles D, and a single iteration from a start a
 * few um apart ends there with the barrier's energy added to the kinetic energy kept; FMS
 * and VBD iterates are cut per vertex, and halved back until g falls. Where every fraction of a
 * Newton step is cut, it is cut per vertex too, lest the iterate stall on the bound it reached;
 * L-BFGS takes its step cut per vertex wherever that lowers g more than the capped one, as the
 * capped fraction shrinks toward 0 near the bounds. After a method's step, the displacement from
 * x_t to its result is limited over the pairs within r detected at x_t, or swept. Where every
 * deviation stays within reach, those must be all the pairs within r, ring pairs too; a step
 * whose velocities carry it farther (h v beyond reach of the radius) gives its detection the
 * pairs outside the ring alone, those that carry energy (and the ring pairs of the fixed
 * vertices, whose nearest distances cap the translation), and its end is swept (the planar
 * certificate and the sweep hold every pair that comes close, ring pairs with the rest) unless
 * it stayed within reach after all, when the ring pairs are measured then: a cloth swinging far
 * spares measuring and bounding the thousands of ring pairs a crumpled corner holds within r. Where
 * a vertex was limited, the pairs are swept again from the new positions and the rest of the way is
 * limited again, up to MS_SC_ROUNDS rounds or until a round barely moves them. A limited vertex
 * ends where the bounds let it and moves on with v = (x - x_t)/h, as a collision response that
 * removes the approach speed. That response must do no work: a pair the step's end cuts is stopped
 * at the contact zone's edge (D >= dhat, the room gamma (D - dhat)) where it feels no barrier, or
 * where it is if already within the zone, and later rounds carry no pair that feels the barrier
 * closer than the edge; the first round lets a pair into the zone uncut, by one plane's room, only
 * where the method felt it: within r at x_t (the step's pairs) for a method that minimises g along
 * its step, within the zone at x_t for one that samples the barrier there (a linearised step meets
 * no force or stiffness from a pair outside the zone); a pair no solver or force met would bring
 * the barrier's energy from nowhere (stopped at the floor, a collision only the bounds see would
 * store the barrier's energy at 1e-9 m, several times the kinetic energy it removes). The cut moves
 * a pair's sides toward the common translation: for a free mesh the motion of its centre of mass,
 * as a perfectly inelastic collision brings two bodies to a common velocity (keeping their
 * momentum); where a collider holds some of the mesh, the colliders' frame (no translation), so a
 * cut only shortens each vertex's own displacement and never carries a layer resting on the ground
 * into it.
 */
#include <math.h>
#include <string.h>

#include "engine.h"

/* half the fraction of its distance a pair may close per detection or iterate */
#define MS_SC_GAMMA 0.45
/* detections per step at most */
#define MS_SC_ROUNDS 8
/* a later round whose largest move is under this fraction of the thickness ends the rounds */
#define MS_SC_SETTLED 1e-3
/* the floor delta of the distances, as a fraction of the thickness */
#define MS_SC_FLOOR 1e-6
/* a solver's step is halved at most this often to stay within the bounds, then dropped */
#define MS_SC_HALVINGS 30
/* a solver's start takes a pair that was outside the contact zone at most this fraction of the
 * zone's room into it */
#define MS_SC_START_DEPTH 0.5
/* an iterate cut per vertex (FMS's, VBD's, a Newton or L-BFGS step's) that raised g is halved
 * at most this often, then undone */
#define MS_SC_BACKTRACK 10
/* the equal parts a pair's paths are split into when one plane at their start cannot hold them */
#define MS_SC_PARTS 4

/* how a round finds the pairs that bound it (the solver's kinds first: kind <= MS_SC_ITERATE
 * tells them): a solver's start and iterates by the step's pairs
 * (within r of x_t); the step's end from x_t by them too when no deviation from the common
 * translation reaches beyond r, else by a sweep along the deviations (a translation brings no
 * pair closer); a later round by a sweep along its whole displacement (no translation) */
typedef enum { MS_SC_START, MS_SC_ITERATE, MS_SC_FIRST, MS_SC_AGAIN } ms_sc_round;

/* the room each side of a pair of kind at positions q may close, gamma (D - delta) [m] (<= 0
 * within the floor), and the unit normal n from its second primitive to its first */
static double plane_room(const ms_model *m, ms_pair_kind kind, const double q[12], double n[3]) {
  double c[4];
  return MS_SC_GAMMA * (ms_pair_closest(kind, q, n, c) - MS_SC_FLOOR * m->sc_thickness);
}

/* the room gamma (dhat - delta) [m] of a pair at the contact zone's edge (D = dhat) */
static double zone_room(const ms_model *m) {
  return MS_SC_GAMMA * (m->sc_thickness - MS_SC_FLOOR * m->sc_thickness);
}

/* plane_room of pair pr at x */
static double pair_plane(const ms_model *m, const ms_sc_pair *pr, const double *x, double n[3]) {
  double q[12];
  ms_self_gather(pr, x, q);
  return plane_room(m, pr->kind, q, n);
}

/* how fast the pair's slot k closes toward the other primitive when it moves by e: the first
 * primitive's vertices close along -n, the second's along +n */
static double closing(const ms_sc_pair *pr, int k, const double n[3], const double e[3]) {
  double c = n[0] * e[0] + n[1] * e[1] + n[2] * e[2];
  return k < (pr->kind == MS_PAIR_PT ? 1 : 2) ? -c : c;
}

/* a lower bound on pair pr's distance at x: the gap between its primitives' boxes [m] */
static double box_gap(const ms_sc_pair *pr, const double *x) {
  double q[12];
  ms_self_gather(pr, x, q);
  return sqrt(ms_pair_box_dist2(pr->kind, q));
}

/* a lower bound on pair pr's distance at the positions of the last detection, whose nearest
 * distances (capped at its radius) are near: a pair it found within the radius lowered each
 * of its vertices' nearest to at most its distance, any other is at least the radius apart;
 * but where it left the ring pairs out (w->rings 0), a pair flagged as one (or swept) may be
 * closer than its vertices' nearest: 0 for it */
static double near_floor(const ms_self_ws *w, const ms_sc_pair *pr, const double *near) {
  double least = INFINITY;
  if (!w->rings && pr->ring) return 0.0;
  for (int k = 0; k < 4; k++) least = ms_min(least, near[pr->v[k]]);
  return least;
}

/* the largest move of a vertex of pair pr's first primitive relative to one of its second,
 * each vertex v moved by scale[v] dx[v] [m] */
static double relative_move(const ms_sc_pair *pr, const double *dx, const double *scale) {
  int na = pr->kind == MS_PAIR_PT ? 1 : 2;
  double most = 0;
  for (int a = 0; a < na; a++)
    for (int b = na; b < 4; b++) {
      const double *ea = dx + 3 * pr->v[a], *eb = dx + 3 * pr->v[b];
      double sa = scale[pr->v[a]], sb = scale[pr->v[b]], r2 = 0;
      for (int t = 0; t < 3; t++) r2 += (sb * eb[t] - sa * ea[t]) * (sb * eb[t] - sa * ea[t]);
      most = ms_max(most, r2);
    }
  return sqrt(most);
}

/* whether pair pr's straight paths x + t scale dx (t in [0, 1]; a fixed vertex takes its whole
 * dx, which is how far the translation leaves it behind) hold in MS_SC_PARTS equal parts, each
 * by the plane between the closest points at the part's start, as one plane holds the whole
 * path from x (the same argument from there), and stay outside the thickness at the parts'
 * ends. A pair that swings past the other, or closes far yet never comes near, needs no cut;
 * one that reaches into the contact zone keeps the single plane, which also limits how fast
 * it enters the barrier (the explicit methods integrate the barrier's stiffness only there).
 * room, n: pair_plane at x, the first part's plane */
static int holds_in_parts(const ms_model *m, const ms_sc_pair *pr, const double *x,
                          const double *dx, const double *scale, double room, const double n[3]) {
  int na = pr->kind == MS_PAIR_PT ? 1 : 2;
  double q0[12], e[12], q[12], at[3], outside = zone_room(m);
  ms_self_gather(pr, x, q0);
  for (int k = 0; k < 4; k++) {
    double s = m->fixed[pr->v[k]] ? 1.0 : scale[pr->v[k]];
    for (int t = 0; t < 3; t++) e[3 * k + t] = s * dx[3 * pr->v[k] + t] / MS_SC_PARTS;
  }
  memcpy(at, n, sizeof(at));
  for (int j = 0;; j++) {
    // the plane at the part's start (the first one given; the last: the paths' end) keeps
    // the pair outside the thickness
    if (j) {
      for (int k = 0; k < 12; k++) q[k] = q0[k] + j * e[k];
      room = plane_room(m, pr->kind, q, at);
    }
    if (room < outside) return 0;
    if (j == MS_SC_PARTS) return 1;
    // and holds the part's largest closings on each side within twice its room
    double most[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < 4; k++)
      most[k >= na] = ms_max(most[k >= na], closing(pr, k, at, e + 3 * k));
    if (most[0] + most[1] > 2 * room) return 0;
  }
}

/* a pair's room gamma (gap - delta) from a lower bound gap on its distance, less the contact
 * zone's room where it may feel the barrier (gap at least `seen`: the method saw no pair so
 * far); gap >= seen where the room is at least seen's */
static double seen_slack(const ms_model *m, double room, double seen) {
  double sight = MS_SC_GAMMA * (seen - MS_SC_FLOOR * m->sc_thickness), zone = zone_room(m);
  return room >= sight ? room - zone : ms_min(room, sight - zone);
}

/* the room that pair pr surely has at x: seen_slack of a lower bound on its distance (the gap
 * between its boxes, or the last detection's nearest distances near where x is where it ran) */
static double pair_slack(const ms_model *m, const ms_self_ws *w, const ms_sc_pair *pr,
                         const double *x, const double *near, double seen) {
  double gap = box_gap(pr, x);
  if (near) gap = ms_max(gap, near_floor(w, pr, near));
  return seen_slack(m, MS_SC_GAMMA * (gap - MS_SC_FLOOR * m->sc_thickness), seen);
}

/* for a solver's iterate, which starts from x = x_t with the step's nearest distances and
 * sees every pair: pair_slack of each of w's pairs (returned) and their vertices, each once
 * (w->pvert), the same at every iterate of the step, so kept until the pairs change, as are
 * their planes at x once measured (w->plane, NAN until then); NULL when out of memory (the
 * iterate then measures every pair and vertex) */
static const double *iterate_slack(const ms_model *m, ms_self_ws *w, const double *x,
                                   const double *near) {
  if (w->slack_ok) return w->slack.p;
  if (ms_grow(&w->slack, w->npair, sizeof(double), 0) ||
      ms_grow(&w->plane, 4 * (size_t)w->npair, sizeof(double), 0) ||
      ms_grow(&w->pvert, m->nv, sizeof(int), 0) || ms_grow(&w->pmark, m->nv, 1, 0))
    return NULL;
  double *slack = w->slack.p, *plane = w->plane.p;
  for (int p = 0; p < w->npair; p++) plane[4 * p] = NAN;
  int *list = w->pvert.p;
  unsigned char *mark = w->pmark.p;
  memset(mark, 0, m->nv);
  w->npvert = 0;
  for (int p = 0; p < w->npair; p++) {
    const ms_sc_pair *pr = w->pair + p;
    slack[p] = pair_slack(m, w, pr, x, near, INFINITY);
    for (int k = 0; k < 4; k++)
      if (!mark[pr->v[k]]) mark[pr->v[k]] = 1, list[w->npvert++] = pr->v[k];
  }
  w->slack_ok = 1;
  return slack;
}

/* pair_plane of w's pair p at x = x_t for a solver's iterate, measured once a step */
static double iterate_plane(const ms_model *m, ms_self_ws *w, int p, const double *x, double n[3]) {
  double *c = (double *)w->plane.p + 4 * p;
  if (isnan(c[0])) c[0] = pair_plane(m, w->pair + p, x, c + 1);
  memcpy(n, c + 1, 3 * sizeof(double));
  return c[0];
}

/* scale[v] lowered so that x + scale[v] dx[v] keeps each of w's pairs (ring pairs too)
 * separated by the plane between its closest points: the two sides' largest signed closings
 * c_A, c_B at the scales so far may sum to 2 room. A pair that needs cutting is cut on its
 * closings' positive parts, which no later cut of a vertex can raise (a signed sum can rise
 * when a vertex moving away is cut by another pair: hence the passes), sharing the room in
 * proportion to them, or equally where a fixed vertex (which no scale moves) takes part; a
 * pair within the floor may only separate. near: the last detection's nearest distances when
 * x is where it ran (else NULL), a floor on the distances there. pass: the passes before this
 * one; a pair left within its room by the last pass stays so unless a scale of its vertices
 * was lowered since (w->lowered: when, as pass npair + pair), so a later pass looks at those
 * alone. kind: the round; at the step's end a pair that feels the barrier (not in the ring)
 * is cut to the room outside the contact zone, and has only that room where it is at least
 * seen apart at x (the method saw no pair so far: r in the first round, 0 in a later one); at
 * a solver's start (seen the thickness) a pair outside the zone at x has the room outside its
 * deeper half, one within it an iterate's room.
 * Returns how many scales it lowered: a pass that lowers none leaves every pair's signed sum
 * within its room (a pair once cut stays so); *cut counts the free vertices it cut first */
static int pair_scales(const ms_model *m, ms_self_ws *w, const double *x, const double *dx,
                       const double *near, double *scale, int64_t pass, ms_sc_round kind,
                       double seen, int *cut) {
  // the room the contact zone takes from a pair that feels the barrier; the room of a pair
  // as far apart as the method saw pairs
  double floor = MS_SC_FLOOR * m->sc_thickness, zone = zone_room(m);
  double sight = MS_SC_GAMMA * (seen - floor);
  const double *kept = kind <= MS_SC_ITERATE ? iterate_slack(m, w, x, near) : NULL;
  int cuts = 0;
  for (int p = 0; p < w->npair; p++) {
    const ms_sc_pair *pr = w->pair + p;
    // left within its room by the last pass, and no scale of its lowered since: so it stays
    int64_t last = -1;
    for (int k = 0; k < 4 && pass; k++)
      last = last > w->lowered[pr->v[k]] ? last : w->lowered[pr->v[k]];
    if (pass && last < (pass - 1) * w->npair + p) continue;
    // c_A + c_B <= the largest relative move: within the least room a lower bound on D
    // leaves (as if the pair felt the barrier) it holds
    double slack = !kept                 ? pair_slack(m, w, pr, x, near, seen)
                   : kind == MS_SC_START ? seen_slack(m, kept[p], seen)
                                         : kept[p];
    if (relative_move(pr, dx, scale) <= 2 * slack) continue;
    // a pair that feels the barrier enters the zone uncut only where the method saw it
    double n[3], c[4], side[2] = {0, 0}, now[2] = {-INFINITY, -INFINITY},
                       plane = kept ? iterate_plane(m, w, p, x, n) : pair_plane(m, pr, x, n);
    // (a detected pair's ring flag is its topology; a swept pair's flag is 1 for every one)
    int felt = kind != MS_SC_ITERATE && !(pr->ring && ms_self_in_ring(m, pr));
    // (a solver's start keeps those outside the zone at x from going deeper than its middle)
    double deep = kind == MS_SC_START ? MS_SC_START_DEPTH * zone : zone;
    double stop = felt && (kind != MS_SC_START || plane >= sight) ? deep : 0.0,
           room = ms_max(plane - (felt && plane >= sight ? deep : 0.0), 0.0);
    int na = pr->kind == MS_PAIR_PT ? 1 : 2, fixed = 0;
    for (int k = 0; k < 4; k++) {
      c[k] = closing(pr, k, n, dx + 3 * pr->v[k]);
      now[k >= na] = ms_max(now[k >= na], c[k] * scale[pr->v[k]]);
      side[k >= na] = ms_max(side[k >= na], c[k]);
      fixed |= m->fixed[pr->v[k]];
    }
    if (now[0] + now[1] <= 2 * room || holds_in_parts(m, pr, x, dx, scale, plane, n)) continue;
    room = ms_max(plane - stop, 0.0);
    double total = side[0] + side[1], share[2] = {room, room};
    if (!fixed) share[0] = 2 * room * side[0] / total, share[1] = 2 * room - share[0];
    for (int k = 0; k < 4; k++) {
      int v = pr->v[k];
      double s = c[k] > 0 ? share[k >= na] / c[k] : 1.0;
      if (!(s < scale[v])) continue;
      *cut += scale[v] == 1.0 && !m->fixed[v];
      scale[v] = s, w->lowered[v] = pass * w->npair + p, cuts++;
    }
  }
  return cuts;
}

double ms_self_vertex_cap(const ms_model *m, const ms_data *d, const double *x, int i,
                          const double dx[3]) {
  if (!ms_self_active(m, d)) return 1.0;
  const ms_self_ws *w = d->sc;
  double cap = 1.0;
  for (int k = w->vstart[i]; k < w->vstart[i + 1]; k++) {
    const ms_sc_pair *pr = w->pair + w->vpair[k];
    double n[3], room = fmax(pair_plane(m, pr, x, n), 0.0);
    for (int s = 0; s < 4; s++) {
      double c = pr->v[s] == i ? closing(pr, s, n, dx) : 0.0;
      if (c > 0 && room < c * cap) cap = room / c;
    }
  }
  return cap;
}

/* 1 when a collider may hold some free vertex: it lies within the thickness of one at x or at
 * target (XPBD leaves a vertex it stopped on the surface) */
static int supported(const ms_model *m, const double *x, const double *target) {
  double margin = m->sc_thickness;
  if (!m->nplane && !m->nsphere) return 0; /* no collider: nothing to ask each vertex */
  for (int i = 0; i < m->nv; i++)
    if (!m->fixed[i] &&
        (ms_contact_within(m, x + 3 * i, margin) || ms_contact_within(m, target + 3 * i, margin)))
      return 1;
  return 0;
}

/* u: the displacement of the free vertices' centre of mass from x toward target (0 when none
 * is free) */
static void mean_move(const ms_model *m, const double *x, const double *target, double u[3]) {
  double mass = 0, sum[3] = {0, 0, 0}; /* (sums kept apart from the arrays) */
  for (int i = 0; i < m->nv; i++) {
    for (int t = 0; t < 3 && !m->fixed[i]; t++)
      sum[t] += m->mass[i] * (target[3 * i + t] - x[3 * i + t]);
    mass += m->fixed[i] ? 0.0 : m->mass[i];
  }
  for (int t = 0; t < 3; t++) u[t] = mass > 0 ? sum[t] / mass : 0.0;
}

/* the common translation: the displacement of the free vertices' centre of mass (a cut that
 * moves a pair's sides toward it in proportion to their closings keeps the momentum), shortened
 * so that the fixed vertices (displacement 0) stay within their bounds, and outside the contact
 * zone where they were at least `felt` apart (pair_scales; at a solver's start, which lets a
 * pair halfway into the zone, this holds them to its edge: stricter); 0 where a collider holds the
 * mesh, whose frame is then the colliders' (a cut toward the mean motion would carry a vertex that
 * rests on one into it, and the penalty would hand the bounds' work back) */
static void translation(const ms_model *m, const double *x, const double *target,
                        const double *bound, double felt, double u[3]) {
  double floor = MS_SC_FLOOR * m->sc_thickness, zone = zone_room(m), cap = INFINITY;
  u[0] = u[1] = u[2] = 0;
  if (supported(m, x, target)) return;
  // each fixed vertex's room, less the zone where it was felt apart
  for (int i = 0; i < m->nv; i++)
    if (m->fixed[i])
      cap = fmin(cap, fmax(MS_SC_GAMMA * (bound[i] - floor) - (bound[i] >= felt) * zone, 0.0));
  mean_move(m, x, target, u);
  double len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int t = 0; t < 3 && len > cap; t++) u[t] *= cap / len;
}

/* the vertices a round touches: every one (all; *list NULL) or those of w's pairs alone, the
 * only ones a round of them reads (*list = w->pvert); how many */
static int touched(const ms_model *m, const ms_self_ws *w, int all, const int **list) {
  *list = all ? NULL : w->pvert.p;
  return all ? m->nv : w->npvert;
}

/* w->dev: the deviation from x toward target, less the translation u, of the vertices
 * touched(all) lists (a fixed vertex stays behind by -u) */
static void deviate(const ms_model *m, ms_self_ws *w, const double *x, const double *target,
                    const double u[3], int all) {
  double *dev = w->dev;
  const double c[3] = {u[0], u[1], u[2]}; /* (not reread after each store to dev) */
  const int *list;
  for (int j = 0, n = touched(m, w, all, &list); j < n; j++) {
    int i = list ? list[j] : j;
    for (int t = 0; t < 3; t++)
      dev[3 * i + t] = m->fixed[i] ? -c[t] : target[3 * i + t] - x[3 * i + t] - c[t];
  }
}

/* the common translation u (0 unless translate) and the deviation w->dev from x toward target
 * of the vertices touched(all) lists */
static void deviations(const ms_model *m, ms_self_ws *w, const double *x, const double *target,
                       int translate, double felt, int all, double u[3]) {
  if (translate)
    translation(m, x, target, w->nearest, felt, u);
  else
    u[0] = u[1] = u[2] = 0;
  deviate(m, w, x, target, u, all);
}

/* 1 when every deviation dev (nv,3) of a vertex in a triangle stays within reach of the radius,
 * gamma (r - dhat) */
static int reaches(const ms_model *m, const double *dev) {
  double room = MS_SC_GAMMA * (ms_self_radius(m) - m->sc_thickness);
  int inside = 1;
  for (int i = 0; i < m->nv; i++) {
    double len = 0;
    for (int t = 0; t < 3; t++) len += dev[3 * i + t] * dev[3 * i + t];
    inside &= m->vf_start[i + 1] == m->vf_start[i] || len <= room * room;
  }
  return inside;
}

int ms_self_within_reach(const ms_model *m, ms_data *d, double h) {
  ms_self_ws *w = d->sc;
  double u[3];
  for (int k = 0; k < 3 * m->nv; k++) w->target[k] = d->x[k] + h * d->v[k];
  mean_move(m, d->x, w->target, u);
  deviate(m, w, d->x, w->target, u, 1);
  return reaches(m, w->dev);
}

/* w->scale: the fraction of its deviation each vertex touched(all) lists keeps under w's pairs
 * from x (where the step's detection ran but in a later round) in a round of kind; the number
 * of free vertices cut */
static int scales(const ms_model *m, ms_self_ws *w, const double *x, ms_sc_round kind, double seen,
                  int all) {
  int cut = 0;
  const double *near = kind != MS_SC_AGAIN ? w->nearest : NULL;
  const int *list;
  for (int j = 0, n = touched(m, w, all, &list); j < n; j++) {
    int i = list ? list[j] : j;
    w->scale[i] = 1.0, w->lowered[i] = -1;
  }
  for (int64_t pass = 0; pair_scales(m, w, x, w->dev, near, w->scale, pass, kind, seen, &cut);
       pass++)
    continue;
  return cut;
}

/* w->only: the vertices with a deviation (the others keep their distances to each other) */
static void flag_moving(const ms_model *m, ms_self_ws *w) {
  for (int i = 0; i < m->nv; i++) {
    const double *e = w->dev + 3 * i;
    w->only[i] = e[0] != 0 || e[1] != 0 || e[2] != 0;
  }
}

/* one round's cut from x toward target: the common translation u, each vertex's deviation
 * (w->dev) and the fraction of it the round's pairs allow (w->scale); *cut counts the free
 * vertices cut. A first round whose paths the planar certificate holds keeps the pairs
 * farther than r at x outside the thickness but those near the vertices it leaves
 * loose: the step's pairs and a sweep of those bound it, unless they cut (a cut path leaves
 * the certified one). A sweep in frames moving with the mesh holds for whole paths: when its
 * pairs cut some, the paths are swept again in x's frame, which holds for paths cut short. A
 * later round moves only the vertices cut before: it sweeps their primitives alone */
static ms_status round_scales(const ms_model *m, ms_data *d, const double *x, const double *target,
                              ms_sc_round kind, double felt, double u[3], int *cut) {
  ms_self_ws *w = d->sc;
  int planar = 0;
  double seen = kind == MS_SC_AGAIN ? 0.0 : ms_min(ms_self_radius(m), felt);
  // every vertex: an iterate's round runs once its pairs alone were found to cut (surely_uncut),
  // and apply() then reads every scale
  deviations(m, w, x, target, kind != MS_SC_AGAIN, felt, 1, u);
  // every deviation within reach of the radius: the pairs within r at x_t hold every pair
  // (those farther than r stay outside the thickness, where no barrier can gain energy a
  // method never saw), ring pairs too, which a step expected to move farther left out and
  // measures now (a collider stopped what its velocities carried: one detection costs less
  // than the sweeps)
  ms_status st = MS_OK;
  int within = kind == MS_SC_FIRST && reaches(m, w->dev);
  if (within && !w->rings && (st = ms_self_detect(m, d, x, ms_self_radius(m), 1, 1)) != MS_OK)
    return st;
  if (kind <= MS_SC_ITERATE || within) {
    *cut = scales(m, w, x, kind, felt, 1);
    return MS_OK;
  }
  if (kind == MS_SC_FIRST) {
    st = ms_self_planar_path(m, d, x, target, m->sc_thickness, &planar);
    if (st == MS_OK && planar && (st = ms_self_sweep(m, d, x, w->dev, 1, w->only, 1)) == MS_OK &&
        !(*cut = scales(m, w, x, kind, seen, 1)))
      return MS_OK;
  } else {
    flag_moving(m, w);
  }
  for (int moving = 1; moving >= 0 && st == MS_OK; moving--)
    if ((st = ms_self_sweep(m, d, x, w->dev, moving, kind == MS_SC_AGAIN ? w->only : NULL, 0)) ==
            MS_OK &&
        !(*cut = scales(m, w, x, kind, seen, 1)))
      break;
  return st;
}

/* out = x + u + scale dev for the free vertices of round_scales's last round from x toward
 * target, exactly target where a vertex is not cut (out may be x or target); the largest
 * change of a coordinate of out [m] */
static double apply(const ms_model *m, const ms_self_ws *w, const double *x, const double *target,
                    const double u[3], double *out) {
  double most = 0;
  for (int i = 0; i < m->nv; i++)
    for (int t = 0; t < 3 && !m->fixed[i]; t++) {
      int k = 3 * i + t;
      double next = w->scale[i] < 1.0 ? x[k] + u[t] + w->scale[i] * w->dev[k] : target[k];
      most = fmax(most, fabs(next - out[k])), out[k] = next;
    }
  return most;
}

/* coordinate k of the step's end x_t + reach (x + alpha p - x_t) that the iterate x + alpha p
 * gives, or x_t + reach alpha (x - x_t) when p is NULL (x's own step from x_t, scaled) */
static double end_point(const ms_data *d, const double *x, const double *p, double alpha,
                        size_t k) {
  const double *xt = d->x;
  return xt[k] + d->sc->reach * (p ? x[k] + alpha * p[k] - xt[k] : alpha * (x[k] - xt[k]));
}

/* 1 when that step's end surely cuts no vertex: a round from x_t over the step's pairs, their
 * vertices' ends alone in w->target, cuts none without the common translation. Whether a pair
 * is cut in a first pass does not depend on a translation of both its sides (its relative moves,
 * its closings' sum and its distances along the paths do not), so that round decides it for a
 * fraction of the cost: no pass over every vertex; 0 when a full round must look */
static int surely_uncut(const ms_model *m, ms_data *d, const double *x, const double *p,
                        double alpha, ms_sc_round kind, double seen) {
  ms_self_ws *w = d->sc;
  double none[3];
  if (!iterate_slack(m, w, d->x, w->nearest)) return 0;
  const int *list = w->pvert.p;
  for (int j = 0; j < w->npvert; j++)
    for (int t = 0; t < 3; t++) {
      size_t k = 3 * (size_t)list[j] + t;
      w->target[k] = end_point(d, x, p, alpha, k);
    }
  deviations(m, w, d->x, w->target, 0, seen, 0, none);
  return !scales(m, w, d->x, kind, seen, 0);
}

/* w->target = the step's end that the iterate x + alpha p gives (end_point); returns how many
 * vertices the pairs of x_t cut there in a round of kind (MS_SC_START or MS_SC_ITERATE; pairs
 * farther apart are left to the step's end), and in u the common translation when some are */
static int end_cut(const ms_model *m, ms_data *d, const double *x, const double *p, double alpha,
                   ms_sc_round kind, double u[3]) {
  ms_self_ws *w = d->sc;
  double seen = kind == MS_SC_START ? m->sc_thickness : INFINITY;
  int cut;
  if (surely_uncut(m, d, x, p, alpha, kind, seen)) return 0;
  for (int k = 0; k < 3 * m->nv; k++) w->target[k] = end_point(d, x, p, alpha, k);
  /* finds no pairs: cannot fail */
  round_scales(m, d, d->x, w->target, kind, seen, u, &cut);
  return cut;
}

/* the largest alpha in 1, 1/2, 1/4, ... whose end_cut(x, p, alpha, kind) cuts nothing, 0 if
 * none */
static double uncut_fraction(const ms_model *m, ms_data *d, const double *x, const double *p,
                             ms_sc_round kind) {
  double u[3], alpha = 1.0;
  int halvings = 0;
  while (end_cut(m, d, x, p, alpha, kind, u) && halvings++ < MS_SC_HALVINGS) alpha *= 0.5;
  return halvings > MS_SC_HALVINGS ? 0.0 : alpha;
}

double ms_self_cap_step(const ms_model *m, ms_data *d, const double *x, double *p) {
  if (!ms_self_active(m, d)) return 1.0;
  double t0 = ms_clock(), alpha = uncut_fraction(m, d, x, p, MS_SC_ITERATE);
  for (int k = 0; k < 3 * m->nv && alpha > 0.0 && alpha < 1.0; k++) p[k] *= alpha;
  d->sc->t_bounds += ms_clock() - t0;
  return alpha;
}

void ms_self_shrink(const ms_model *m, ms_data *d, double *x1) {
  if (!ms_self_active(m, d)) return;
  // x1's step from x_t, capped as a solver's step is, and keeping the pairs outside the contact
  // zone at x_t out of its deeper half (x1 is left bit for bit when whole)
  double t0 = ms_clock(), alpha = uncut_fraction(m, d, x1, NULL, MS_SC_START);
  for (int k = 0; k < 3 * m->nv && alpha < 1.0; k++) x1[k] = d->x[k] + alpha * (x1[k] - d->x[k]);
  d->sc->t_bounds += ms_clock() - t0;
}

int ms_self_confine(const ms_model *m, ms_data *d, double *x1) {
  if (!ms_self_active(m, d)) return 0;
  ms_self_ws *w = d->sc;
  double u[3], t0 = ms_clock();
  if ((w->confined = end_cut(m, d, x1, NULL, 1.0, MS_SC_ITERATE, u))) {
    apply(m, w, d->x, w->target, u, w->target);
    for (int i = 0; i < m->nv; i++)
      for (int t = 0; t < 3 && !m->fixed[i]; t++)
        x1[3 * i + t] = d->x[3 * i + t] + (w->target[3 * i + t] - d->x[3 * i + t]) / w->reach;
  }
  w->t_bounds += ms_clock() - t0;
  return w->confined;
}

/* x1's step from x halved until g(x1) <= bar (it descends: the bound touches g at x), g(x1)
 * in *g; 1 when it fell within MS_SC_BACKTRACK halvings, else 0 */
static int falls(const ms_model *m, ms_data *d, const double *x, double bar, double *x1, double hs,
                 double *g) {
  for (int halvings = 0; halvings <= MS_SC_BACKTRACK; halvings++) {
    if ((*g = ms_objective(m, d, x1, d->y, hs)) <= bar) return 1;
    for (int k = 0; k < 3 * m->nv; k++) x1[k] = x[k] + 0x1p-1 * (x1[k] - x[k]);
  }
  return 0;
}

void ms_self_keep(const ms_model *m, ms_data *d, const double *x, double hs, int first) {
  if (!ms_self_active(m, d)) return;
  memcpy(d->sc->kept, x, sizeof(double) * 3 * m->nv);
  if (first) d->sc->kept_g = NAN;
}

int ms_self_rises(const ms_model *m, ms_data *d, double hs) {
  if (!ms_self_active(m, d)) return 0;
  ms_self_ws *w = d->sc;
  // no pair carries energy and nothing was cut: the iteration is FMS's own, as without contact
  if (w->npair == w->nring && !w->confined) return w->kept_g = NAN, 0;
  if (isnan(w->kept_g)) w->kept_g = ms_objective(m, d, w->kept, d->y, hs);
  double g;
  if (falls(m, d, w->kept, w->kept_g + MS_ROUNDING * fabs(w->kept_g), d->xn, hs, &g))
    return w->kept_g = g, 0;
  memcpy(d->xn, w->kept, sizeof(double) * 3 * m->nv);
  return 1;
}

int ms_self_confined_step(const ms_model *m, ms_data *d, const double *x, double gx,
                          const double *p, double hs, double *x1, double *g1) {
  for (int k = 0; k < 3 * m->nv; k++) x1[k] = x[k] + p[k];
  ms_self_confine(m, d, x1);
  return falls(m, d, x, gx, x1, hs, g1);
}

ms_status ms_self_limit(const ms_model *m, ms_data *d, double h, int sampled, ms_info *info) {
  if (!ms_self_active(m, d)) return MS_OK;
  ms_self_ws *w = d->sc;
  double *target = w->target, *x = d->xn, u[3], t0 = ms_clock(), detect = w->t_broad + w->t_narrow;
  size_t bytes = sizeof(double) * 3 * m->nv;
  memcpy(target, d->xn, bytes);
  memcpy(x, d->x, bytes);

  // the pairs of x_t came with the step, and the method felt those within the contact zone
  // there (sampled) or every one (it minimised g along its step); later rounds sweep from
  // their own start
  int left;
  double felt = sampled ? m->sc_thickness : INFINITY;
  ms_status st = round_scales(m, d, x, target, MS_SC_FIRST, felt, u, &left);
  // until no vertex is cut, or a later round moves none of them by MS_SC_SETTLED of the
  // thickness: they rest at their bounds (a pair cut short of the zone's edge closes 90% of
  // what is left per round, a geometric crawl no barrier or detection resolves)
  for (info->rounds = 1; st == MS_OK; info->rounds++) {
    double moved = apply(m, w, x, target, u, x);
    if (!left || info->rounds == MS_SC_ROUNDS ||
        (info->rounds > 1 && moved < MS_SC_SETTLED * m->sc_thickness))
      break;
    st = round_scales(m, d, x, target, MS_SC_AGAIN, felt, u, &left);
  }
  if (st != MS_OK) return st;

  // vertices short of the method's positions move on with the speed of their displacement
  for (int i = 0; i < m->nv; i++) {
    const double *xi = x + 3 * i, *ti = target + 3 * i;
    int limited = xi[0] != ti[0] || xi[1] != ti[1] || xi[2] != ti[2];
    info->limited += limited;
    for (int t = 0; t < 3 && limited; t++) d->vn[3 * i + t] = (xi[t] - d->x[3 * i + t]) / h;
  }

  // the step's phases: the rounds' detections count as broad and narrow phase
  w->t_bounds += ms_clock() - t0 - (w->t_broad + w->t_narrow - detect);
  info->broad = w->t_broad, info->narrow = w->t_narrow, info->bounds = w->t_bounds;
  return MS_OK;
}
