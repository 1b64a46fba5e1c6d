/* walk.c: the triangles near a vertex of a mesh that projects one to one onto a plane
 *
 * Let P be one to one on a set G of triangles (planar.c) and D the disk of radius bar about
 * the projection of a vertex v. Where D lies inside P(G), the projections of the triangles
 * that meet D tile it, and any two of them are joined by a chain of such triangles sharing
 * edges (a path in D from one to the other that misses the vertices crosses only their
 * edges). A walk from v's triangles across edges into triangles that meet D therefore finds
 * them all. Where D is not inside P(G), the part of D the walk reaches is bounded inside D by
 * boundary edges of G, which the walk sees when v lies inside G: a sign that another part of G
 * may lie in D across the gap, and the walk gives up. For v on G's boundary its own boundary
 * edges bound that part too, and beyond them D may reach G again unseen: the caller walks only
 * from such a v whose distance to every other boundary edge is at least bar (then only v's own
 * boundary edges meet D, each cut off near v on the outside, and D meets P(G) in one part).
 */
#include "walk.h"

#include "plane.h"

/* 1 when the projection of triangle f (positively oriented) comes within bar of point p */
static int meets(const ms_model *m, const double *uv, int f, const double *p, double bar) {
  const double *a = uv + 3 * m->face[3 * f], *b = uv + 3 * m->face[3 * f + 1],
               *c = uv + 3 * m->face[3 * f + 2];
  if (ms_plane_orient(a, b, p) >= 0 && ms_plane_orient(b, c, p) >= 0 &&
      ms_plane_orient(c, a, p) >= 0)
    return 1;
  return ms_plane_gap(p, a, b) <= bar || ms_plane_gap(p, b, c) <= bar ||
         ms_plane_gap(p, c, a) <= bar;
}

int ms_walk_disk(const ms_model *m, const double *uv, const unsigned char *good, int v, int f0,
                 double bar, int *seen, int mark, int *list, int cap) {
  const double *p = uv + 3 * v;
  int n = 1;
  list[0] = f0, seen[f0] = mark;
  for (int i = 0; i < n; i++) {
    const int *c = m->face + 3 * list[i];
    for (int k = 0; k < 3; k++) {
      int t = m->ftwin[3 * list[i] + k], a = c[k], b = c[(k + 1) % 3];
      // a boundary edge of G within bar that does not hold v: D may leave P(G)
      if (t < 0 || !good[t]) {
        if (a != v && b != v && ms_plane_gap(p, uv + 3 * a, uv + 3 * b) <= bar) return -1;
        continue;
      }
      if (seen[t] == mark || !meets(m, uv, t, p, bar)) continue;
      if (n == cap) return -1;
      seen[t] = mark, list[n++] = t;
    }
  }
  return n;
}
