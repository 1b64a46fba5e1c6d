/* walk.h: the triangles whose projections come near a vertex's, found by walking across the
 * edges of a mesh that projects one to one onto a plane (walk.c). Internal to the engine. */
#ifndef MSIM_WALK_H
#define MSIM_WALK_H

#include "msim.h"

/* The triangles f with good[f] = 1 whose projections (uv: (nv,3) plane coordinates, third
 * ignored) come within bar of vertex v's, walked across edges from f0 (a good triangle holding
 * v) into list (the first n of them; seen[f] set to mark on each); n, or -1 when a boundary
 * edge of the good triangles that does not hold v comes within bar (the disk about v may reach
 * another part of them across the gap) or more than cap are found. m a disk (m->ftwin); v on
 * the good triangles' boundary: no boundary edge without v within bar (walk.c). */
int ms_walk_disk(const ms_model *m, const double *uv, const unsigned char *good, int v, int f0,
                 double bar, int *seen, int mark, int *list, int cap);

#endif
