/* hash.h: the broad phase of collision detection: which pairs of axis-aligned boxes overlap,
 * found by a spatial hash (Teschner et al. 2003; hash.c). Internal to the engine.
 *
 * The cell size only changes the work, never the pairs: pass about the mean box extent (for
 * the boxes of edges inflated by r, the mean edge length + 2 r). Much smaller cells make each
 * search visit many cells, much larger ones fill each cell with many boxes; hash.c enlarges a
 * cell so small that the searches would visit too many cells in all. ms_hash_overlaps returns
 * MS_EINPUT for a non-finite coordinate, a box with lo > hi, n < 0 or a cell that is not finite and
 * > 0, MS_ENOMEM when out of memory (or past INT_MAX pairs); a workspace it made is then freed, one
 * it was given stays usable. */
#ifndef MSIM_HASH_H
#define MSIM_HASH_H
#include "msim.h"
/* a reusable workspace of the broad phase (grows as needed; opaque) */
typedef struct ms_hash ms_hash;
void ms_hash_free(void *w);
/* the pairs (i, j) of boxes, i from set A and j from set B, whose axis-aligned boxes overlap
 * (closed intervals), each once, by i, and for each i sorted by j when sorted is 1 (else in an
 * order of the grid's, the same on every run: for a caller that sorts them itself or keeps a
 * set). Boxes are given as lo[3 n], hi[3 n]. When same is 1, B is A, and only pairs i < j are
 * reported. *hp is the workspace (made when NULL; published only when complete). On MS_OK,
 * *pairs points at 2 *npair ints owned by the workspace, valid until its next call. cell: the
 * grid cell size [m] (> 0); threads: those a parallel pass may use (ms_threads), which never
 * change the result. */
ms_status ms_hash_overlaps(ms_hash **hp, const double *alo, const double *ahi, int na,
                           const double *blo, const double *bhi, int nb, int same, int sorted,
                           double cell, int threads, const int **pairs, int *npair);
/* 1 when the closed boxes (alo, ahi) and (blo, bhi), 3 coordinates each, overlap: every
 * comparison made and joined without a branch (the broad phase's outcomes are unpredictable, and
 * a mispredicted branch costs more than the comparisons left) */
static inline int ms_boxes_overlap(const double *alo, const double *ahi, const double *blo,
                                   const double *bhi) {
  return (alo[0] <= bhi[0]) & (blo[0] <= ahi[0]) & (alo[1] <= bhi[1]) & (blo[1] <= ahi[1]) &
         (alo[2] <= bhi[2]) & (blo[2] <= ahi[2]);
}
/* the bounding boxes lo, hi (3 n each) of n primitives of k vertices each (k = 1 points,
 * 2 edges, 3 triangles; idx (n, k) their vertex indices into x (nv,3), or NULL when the
 * primitives are the points of x, k = 1), inflated by r >= 0, on `threads` threads */
void ms_hash_boxes(const double *x, const int *idx, int n, int k, double r, int threads, double *lo,
                   double *hi);
#endif
