/* sweep.h: the primitive pairs of a triangle mesh that a move may bring within a radius,
 * found patch by patch, each patch in a frame moving with it (sweep.c). Internal to the
 * engine. */
#ifndef MSIM_SWEEP_H
#define MSIM_SWEEP_H

#include "msim.h"

/* a reusable workspace of the sweep (grows as needed; opaque) */
typedef struct ms_sweep ms_sweep;
void ms_sweep_free(void *w);

/* the pairs of m's primitives whose points, moving from x along the straight paths to x + dx
 * (nv,3), may come within r: (vertex, triangle) pairs into *pt (2 *npt ints) and (edge, edge)
 * pairs (m->fedge indices, lower first) into *ee (2 *nee ints), both owned by the workspace
 * *sp (made when NULL) and valid until its next call. Every pair that comes within r is
 * among them; pairs that share a vertex may be too. moving: 1 to sweep each patch in a frame
 * that moves with it (the pairs hold for these paths only), 0 in the frame of x, where they
 * hold for x + sigma_i dx_i too, any sigma_i in [0, 1] per vertex (a move cut short). only:
 * NULL for every pair, or (nv) flags: every pair with a primitive that holds a flagged vertex
 * (others may come too). cell:
 * the broad phase's cell for boxes that do not move [m]; threads: those its passes may use.
 * MS_ENOMEM when out of memory. */
ms_status ms_sweep_pairs(ms_sweep **sp, const ms_model *m, const double *x, const double *dx,
                         int moving, const unsigned char *only, double r, double cell, int threads,
                         const int **pt, int *npt, const int **ee, int *nee);

#endif
