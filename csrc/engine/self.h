/* self.h: self-contact of a triangle mesh: its energy, the pairs it acts on and the
 * displacement bounds that keep the mesh from crossing itself. Internal to the engine. */
#ifndef MSIM_SELF_H
#define MSIM_SELF_H

#include "disk.h"
#include "distance.h"
#include "hash.h"
#include "msim.h"
#include "planar.h"
#include "sweep.h"

/* one pair of primitives: kind MS_PAIR_PT (v: point, triangle) or MS_PAIR_EE (v: edge, edge);
 * ring: 1 for a pair that only bounds (no energy): its vertices lie within the topological
 * ring, or a sweep of the step's end found it */
typedef struct {
  int kind;
  int v[4];
  int ring;
} ms_sc_pair;

/* a pair's lagged friction (selffriction.c): w = mu lambda [N] (0: none), the unit normal n
 * from its second primitive to its first and its vertices' barycentric weights c (+ on the
 * first primitive, - on the second) */
typedef struct {
  double w;
  double n[3];
  double c[4];
} ms_sc_fric;

/* the workspace of self-contact (selfcontact.c, read by bounds.c) */
struct ms_self_ws {
  ms_hash *hash;
  ms_sweep *sweep;
  ms_planar *planar;
  double *plo, *phi;    /* (nv,3) point boxes */
  double *elo, *ehi;    /* (ne,3) edge boxes */
  double *flo, *fhi;    /* (nf,3) triangle boxes */
  double *nearest;      /* (nv) distance to the nearest primitive not sharing the vertex [m] */
  double *blk;          /* (nv,9) per-vertex Hessian blocks (ms_self_blocks) */
  double *target;       /* (nv,3) bounds.c: the method's positions, or a solver's trial */
  double *dev;          /* (nv,3) bounds.c: the displacement a round limits */
  double *scale;        /* (nv) bounds.c: the fraction of its displacement each vertex keeps */
  int64_t *lowered;     /* (nv) bounds.c: when each scale was last lowered (pass npair + pair) */
  unsigned char *only;  /* (nv) bounds.c: the vertices a sweep looks at (the ones that move, or
                           that the planar certificate of the paths leaves) */
  int cap;              /* pairs allocated */
  int npair;            /* the pairs within r, ring pairs included */
  int nring;            /* how many of them are ring pairs */
  ms_sc_pair *pair;     /* (cap) point-triangle, then edge-edge: sorted by their primitives
                           (a detection) or patch pair by patch pair (a sweep) */
  int *vstart;          /* (nv+1) vertex v's energy pairs are vpair[vstart[v] .. vstart[v+1]) */
  int *vpair;           /* (4 cap) */
  double gap;           /* the smallest distance the last detection found between primitives
                           outside each other's ring (r when none) [m] */
  int rings;            /* the last detection measured every ring pair (else only those holding
                           a fixed vertex) */
  double reach;         /* the step's end moves reach times a solver's iterate from x_t */
  ms_sc_fric *fric;     /* (fcap) selffriction.c: the friction of pair p */
  int fcap;             /* friction entries allocated */
  int lagged;           /* 1: the step's g carries the lagged friction (else an impulse after) */
  const double *anchor; /* (nv,3) the scheme's base point the slip is measured from */
  double fh;            /* the scheme's step h' [s] */
  double *kept;         /* (nv,3) bounds.c: a solver's last iterate that lowered g */
  double kept_g;        /* g there [J] (NAN: not computed yet) */
  int confined;         /* the last ms_self_confine cut some vertex */
  double *edge_at;      /* (nv,3) the positions mean_edge was measured at, if edge_valid */
  double mean_edge;     /* their mean triangle edge [m], which the broad phase's cell takes */
  int edge_valid;       /* edge_at and mean_edge hold a measurement */
  ms_buf hdist;         /* (hits) double: the broad phase's hits' distances (selfcontact.c) */
  ms_buf hring;         /* (hits) char: and their ring flags */
  ms_buf slack;         /* (npair) double bounds.c: each pair's room for an iterate from x_t */
  ms_buf plane;         /* (npair,4) double bounds.c: and its plane there (room, normal) */
  ms_buf pvert;         /* (npvert) int bounds.c: the vertices of the pairs, each once */
  ms_buf pmark;         /* (nv) unsigned char: and a mark on each of them while listing */
  int npvert;           /* how many vertices pvert lists */
  ms_buf chess;         /* (ncouple,144) double: ms_self_blocks's pair Hessians, as assembled */
  ms_buf cvert;         /* (ncouple,4) int: and each one's vertices */
  int ncouple;          /* how many pairs the last ms_self_blocks coupled */
  ms_buf cblock;        /* (n,16) double: ms_self_curvature's 4x4 blocks */
  ms_buf cbvert;        /* (n,4) int: and each one's vertices */
  int slack_ok;         /* slack, plane and pvert hold for the pairs there are */
  double t_broad, t_narrow, t_bounds; /* seconds this step in the phases of ms_info */
  int active;                         /* the pairs belong to the step under way */
  int planar_used;                    /* the last detection searched only near tight vertices */
};

/* barrier.c: the self-contact energy of one pair at distance d, for thickness dhat and
 * stiffness kappa: kappa/2 (dhat - d)^2 down to tau = dhat/2, below it a log barrier that
 * meets the quadratic with equal value, slope and curvature at tau */
double ms_barrier(double d, double dhat, double kappa, double *e1, double *e2);
double ms_pair_energy(const ms_model *m, int kind, const double q[12], ms_spd spd, double grad[12],
                      double hess[144]);

/* selfcontact.c: the step's pairs (those closer than twice the thickness at the step's start,
 * ms_self_begin, for a step of h [s]) and the self-contact energy over them */
void ms_self_free(void *w);
ms_status ms_self_begin(const ms_model *m, ms_data *d, double h, ms_info *info);
int ms_self_active(const ms_model *m, const ms_data *d);
/* 1 when vertex i is in one of the step's energy pairs (0 without self-contact) */
int ms_self_paired(const ms_model *m, const ms_data *d, int i);
ms_status ms_self_at(const ms_model *m, ms_data *d);
void ms_self_end(ms_data *d);
double ms_self_forces(const ms_model *m, const ms_data *d, const double *x, double *f,
                      double scale);
double ms_self_vertex(const ms_model *m, const ms_data *d, const double *x, const double *p, int i,
                      double *f, double *H);
ms_status ms_self_blocks(const ms_model *m, const ms_data *d, const double *x, ms_spd spd,
                         double *blk);
/* the pairs' whole Hessians the last ms_self_blocks kept (*hess (n,144), row-major over the
 * pairs' 12 coordinates, *vert (n,4) their vertices): n, 0 when self-contact is not active */
int ms_self_hessians(const ms_model *m, const ms_data *d, const double **hess, const int **vert);
/* out = scale times block (a, b) of a pair's 12x12 Hessian hs: rows of its vertex a, columns of
 * its vertex b (3x3, row-major) */
static inline void ms_self_block(const double *hs, int a, int b, double scale, double out[9]) {
  for (int r = 0; r < 9; r++) out[r] = scale * hs[12 * (3 * a + r / 3) + 3 * b + r % 3];
}
void ms_self_couple(const ms_model *m, const ms_data *d, double scale, const double *p,
                    double *out);
void ms_self_project(const ms_model *m, ms_data *d, double *x, double compliance);
/* a 4x4 scalar block per energy pair that bounds its curvature [N/m] (the barrier's and the
 * stick's at x plus the barrier's at x1; translations in its null space): *n blocks *B (n,16),
 * row-major over the pair's vertices *v (n,4) */
ms_status ms_self_curvature(const ms_model *m, ms_data *d, const double *x, const double *x1,
                            int *n, const double **B, const int **v);

/* selffriction.c: the pairs' friction at the step's start (after detection), the scheme's
 * anchor and step that make it a lagged potential, pair p's stick stiffness 2 w / eps [N/m]
 * (0 without friction), pair p's potential at x with vertex i at xi
 * (i < 0: none; its relative slip u and secant stiffness per = w F'(y)/y), and the impulse
 * after a step without it */
ms_status ms_self_friction_begin(const ms_model *m, ms_data *d);
void ms_self_friction_lag(const ms_model *m, ms_data *d, const double *anchor, double h);
double ms_self_friction_stick(const ms_model *m, const ms_data *d, int p);
double ms_self_friction_pair(const ms_model *m, const ms_data *d, const double *x, int p, int i,
                             const double *xi, double u[3], double *per);
void ms_self_friction_impulse(const ms_model *m, ms_data *d, double h);

/* bounds.c: the step's positions d->xn limited so that no primitive pair meets on the way
 * from x_t (Offset Geometric Contact's displacement bounds, Chen et al. 2025). The solvers keep
 * the step's end their iterates give (x_t + reach (x - x_t)) within the same bounds of x_t, so
 * that it needs no cut: a step p from x halved until x + p does (Newton, L-BFGS, and every
 * solver's start, shrunk toward x_t as a whole: cut per vertex, a start strains the springs
 * between cut and uncut vertices, and one Newton iteration carries that strain into the step),
 * an iterate x1 cut per vertex (FMS and VBD; Newton's step too where every fraction of it is
 * cut, lest the iterate stall on the bound it reached, and L-BFGS's where that lowers g more);
 * within its sweep VBD takes the fraction of vertex i's step dx from x that keeps its energy
 * pairs apart */
ms_status ms_self_limit(const ms_model *m, ms_data *d, double h, int sampled, ms_info *info);
/* 1 when a step of h [s] that moves each vertex by h v from d->x stays within reach of the
 * radius (every deviation from the free vertices' mean move within gamma (r - dhat)): its end
 * is then likely bounded by the pairs within r at the start, ring pairs included, which the
 * step's detection then measures (w->target and w->dev its scratch) */
int ms_self_within_reach(const ms_model *m, ms_data *d, double h);
/* FMS's safeguard under self-contact, whose barrier its matrix carries by a bound on its
 * curvature at x_t that a closing gap can outgrow (and VBD's, where the bounds cut a sweep):
 * the iterate x before an iteration is kept, and an iterate d->xn that raised g is moved back
 * toward it, halving the iteration's step until g falls, or put back (returns 1: stop); an
 * iteration with no energy pair and no cut is the solver's own and is left as it is */
void ms_self_keep(const ms_model *m, ms_data *d, const double *x, double hs, int first);
int ms_self_rises(const ms_model *m, ms_data *d, double hs);
/* Newton's and L-BFGS's step p from x, scaled to the largest fraction 1, 1/2, 1/4, ... whose end
 * the bounds cut nowhere; returns that fraction, or 0 leaving p as it was when every fraction
 * is cut. The step x1 = x + p cut per vertex instead, as FMS's iterates are, and halved toward
 * x until g (*g1) <= gx: 1, or 0 when it never falls (x1 is then scratch) */
double ms_self_cap_step(const ms_model *m, ms_data *d, const double *x, double *p);
int ms_self_confined_step(const ms_model *m, ms_data *d, const double *x, double gx,
                          const double *p, double hs, double *x1, double *g1);
/* the iterate x1 cut per vertex where its step's end leaves the bounds (FMS's and VBD's
 * iterates); 1 when it cut */
int ms_self_confine(const ms_model *m, ms_data *d, double *x1);
void ms_self_shrink(const ms_model *m, ms_data *d, double *x1);
double ms_self_vertex_cap(const ms_model *m, const ms_data *d, const double *x, int i,
                          const double dx[3]);

/* selfcontact.c: detection at x within r: the pairs within r that share no vertex (ring pairs
 * flagged; rings 1: every one, 0: only those holding a fixed vertex) and each vertex's distance
 * to the nearest primitive of those pairs (capped at r; INFINITY for a vertex in no triangle:
 * rings 0 leaves it a lower bound on the distances of the pairs outside the ring alone).
 * planar: 1 to search only near the tight vertices where the mesh projects one to one onto a
 * plane (planar.c; the same pairs in the same order, w->planar_used says whether it did), 0 to
 * hash every box */
ms_status ms_self_detect(const ms_model *m, ms_data *d, const double *x, double r, int planar,
                         int rings);
/* the pairs a move from x by dx (nv,3) must keep apart: every pair that shares no vertex and
 * whose points may come within the detection radius r on the straight paths (sweep.c: moving
 * 1, swept in frames that move with the mesh, for these paths only; 0, in x's frame, also for
 * any of them cut short), kept whatever their distance at x and flagged to carry no energy;
 * only: NULL, or (nv) flags: those with a flagged vertex (others may come too); keep: 1 to add
 * them to w's pairs, 0 to replace those;
 * the vertices' nearest and the gap stay those of the last detection */
ms_status ms_self_sweep(const ms_model *m, ms_data *d, const double *x, const double *dx,
                        int moving, const unsigned char *only, int keep);
/* whether no two primitives that share no vertex come within floor of each other on the
 * straight paths from x to y, by the planar certificate (planar.c; 0: it could not say),
 * except the pairs it adds to w's pairs (as a sweep does, flagged to carry no energy) and
 * those holding a vertex it flags in w->only */
ms_status ms_self_planar_path(const ms_model *m, ms_data *d, const double *x, const double *y,
                              double floor, int *certified);
double ms_self_radius(const ms_model *m);
/* 1 when some vertex of pair p's first primitive lies within the topological ring of some
 * vertex of its second (m->ring is symmetric): the pair feels no energy */
int ms_self_in_ring(const ms_model *m, const ms_sc_pair *p);
void ms_self_gather(const ms_sc_pair *p, const double *x, double q[12]);

#endif
