/* chol.h: sparse Cholesky (CHOLMOD) of the spring matrices. Internal to the engine. */
#ifndef MSIM_CHOL_H
#define MSIM_CHOL_H

#include "msim.h"

/* chol.c: sparse Cholesky of spring matrices over free vertices (fixed ones eliminated), with
 * blocks for links (vertex pairs) beyond the springs; analyse once per fixed set and set of
 * links, then zero / add blocks / factor / solve as often as needed */
typedef struct ms_chol ms_chol;
ms_status ms_chol_springs(ms_chol **out, const ms_model *m, int b, int many_solves, const int *link,
                          int nlink);
void ms_chol_free(ms_chol *ch);
int ms_chol_current(const ms_chol *ch, const ms_model *m);
int ms_chol_links(ms_buf *link, const int *vert, int n);
int ms_chol_holds(const ms_chol *ch, const ms_model *m, const int *link, int nlink);
void ms_chol_add_group(ms_chol *ch, const ms_model *m, const int v[4], const double *H,
                       double scale, int own);
int ms_chol_size(const ms_chol *ch);
void ms_chol_zero(ms_chol *ch);
void ms_chol_add_vertex(ms_chol *ch, const ms_model *m, int v, const double *blk);
void ms_chol_add_spring(ms_chol *ch, const ms_model *m, int s, const double *blk);
ms_status ms_chol_factor(ms_chol *ch, int *vertex, int *axis);
ms_status ms_chol_solve(ms_chol *ch, double *rhs, int nrhs, int nthread);

#endif
