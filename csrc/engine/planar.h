/* planar.h: where a triangle mesh that projects one to one onto a plane can have close pairs
 * of primitives: only at its tight vertices (planar.c). Internal to the engine. */
#ifndef MSIM_PLANAR_H
#define MSIM_PLANAR_H

#include "msim.h"

/* a reusable workspace of the certificate (grows as needed; opaque) */
typedef struct ms_planar ms_planar;
void ms_planar_free(void *w);

/* the broad phase's boxes at x: points (nv) inflated by r, edges (m->ne) by r/2, triangles
 * (m->nf) not inflated, as self-contact's detection makes them */
typedef struct {
  const double *plo, *phi, *elo, *ehi, *flo, *fhi;
} ms_planar_boxes;

/* When m is a disk (m->disk, disk.c) whose triangles x projects one to one onto the plane
 * normal to its mean normal, all but a few that face away from it, whose corners are then tight
 * (*certified 1): (point, triangle) pairs *pt and (edge, edge) pairs *ee (m->fedge indices,
 * lower first) whose boxes b overlap and that have a tight vertex (those near it in the plane,
 * found by walking the mesh, or all of them, found by hashing), each sorted: every pair closer
 * than r is among them, and they are in the order ms_hash_overlaps gives all pairs. Both owned
 * by the workspace *wp (made when NULL), valid until its next call.
 * *certified 0: x folds over that plane (or m is no disk), and nothing is said. cell: the
 * broad phase's cell [m]; threads: those its passes may use. MS_ENOMEM when out of memory. */
ms_status ms_planar_pairs(ms_planar **wp, const ms_model *m, const double *x, double r, double cell,
                          int threads, const ms_planar_boxes *b, int *certified, const int **pt,
                          int *npt, const int **ee, int *nee);

/* *certified 1 when m is a disk whose triangles, all but a few, project one to one onto the
 * plane normal to its mean normal at x and at every point of the straight paths from x to y
 * (they keep their orientation there, their boundary stays simple); then two primitives that
 * share no vertex stay at least `floor` apart along the paths unless they are among the
 * (point, triangle) pairs *pt or the (edge, edge) pairs *ee (m->fedge indices, lower first;
 * found by walking the mesh about the vertices that may come within floor of another
 * primitive, owned by the workspace, valid until its next call) or one holds a vertex v with
 * loose[v] = 1 (nv flags, set here: a corner of a triangle left out, or one whose neighbourhood
 * the walk cannot cover). *certified 0: nothing is said. MS_ENOMEM when out of memory. */
ms_status ms_planar_path(ms_planar **wp, const ms_model *m, const double *x, const double *y,
                         double floor, double cell, int threads, int *certified,
                         unsigned char *loose, const int **pt, int *npt, const int **ee, int *nee);

#endif
