/* chol.c: the SuiteSparse CHOLMOD layer shared by the implicit solvers.
 *
 * A spring matrix has one b x b block per free vertex (diagonal) and per spring joining two
 * free vertices (off-diagonal), and per link: a pair of vertices that something else couples
 * (self-contact's pairs); fixed vertices are eliminated. The pattern is built and analysed once
 * per fixed set and set of links (ms_chol_springs); each solve then zeroes the values, adds
 * vertex, spring and link blocks, factorises numerically and solves. Only the upper triangle
 * is stored (stype = 1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#include <pthread.h>
#define MS_PTHREADS 1
#endif

#include "engine.h"

/* largest factor made simplicial for many solves */
#define MS_SIMPLICIAL_MAX 100000

/* most column groups solved in parallel */
#define MS_SOLVE_PARTS 3

/* what one thread's cholmod_solve2 calls need of their own: CHOLMOD's status and its
 * workspaces, kept between solves */
typedef struct {
  cholmod_common c;
  cholmod_dense *X, *Y, *E;
} solve_ws;

struct ms_chol {
  cholmod_common c;
  cholmod_sparse *A;           /* upper triangle, sorted columns */
  cholmod_factor *L;           /* symbolic analysis, refactorised numerically */
  solve_ws ws[MS_SOLVE_PARTS]; /* per column group; L is only read by solves */
  int b;                       /* block size: 1 (scalar matrix) or 3 */
  int nb;                      /* block columns: free vertices */
  int *bptr;                   /* (nb+1) start of each block column in brow */
  int *brow;                   /* row blocks of each block column, sorted; the diagonal is last */
  int *spos;          /* (ns) position of a spring's block in column max(I,J), -1 if a fixed end */
  int *vert;          /* (nb) vertex of each block column */
  uint64_t rev_fixed; /* fixed-set revision the pattern was built for */
};

/* ---------------------------------------------------------------- the BLAS under CHOLMOD
 *
 * Supernodal factorisations and solves spend their time in BLAS. Two facts about OpenBLAS,
 * the BLAS most CHOLMOD installs use, matter to callers that step several systems at once:
 * its single-threaded build keeps one unlocked buffer pool, so two threads calling it at
 * once corrupt each other's results (wrong positions, false indefinite matrices), and its
 * threaded builds start as many threads as there are cores inside every call, which
 * oversubscribes the cores when the calls already come from several threads and makes the
 * dense kernels of a cloth's small supernodes slower, not faster. At load time msim asks a
 * loaded OpenBLAS for one thread per call; when the build is the single-threaded one,
 * supernodal calls are serialised behind one process-wide lock instead (results are right,
 * parallel throughput is lost: scripts/setup.sh installs the threaded build). Any other
 * BLAS is taken to be safe to call from several threads. */

#ifdef MS_PTHREADS
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_serial; /* the BLAS must not be called from two threads at once */

/* METIS keeps its random number generator in process-wide state, seeded afresh by each
 * call: orderings run one at a time, so a graph gets the same order (and a factor the same
 * bits) whatever other threads order beside it */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;

/* no lock is held across fork(): a child would find it locked forever */
static void fork_prepare(void) {
  pthread_mutex_lock(&order_lock);
  if (blas_serial) pthread_mutex_lock(&blas_lock);
}

static void fork_done(void) {
  if (blas_serial) pthread_mutex_unlock(&blas_lock);
  pthread_mutex_unlock(&order_lock);
}
#endif

/* find the BLAS CHOLMOD loaded and make it safe to call from several threads, and keep the
 * locks out of forked children; once per process (module initialisation) */
void ms_chol_init(void) {
#ifdef MS_PTHREADS
  static const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblas.dylib"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
    lib = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
  if (lib) {
    int (*parallel)(void) = (int (*)(void))dlsym(lib, "openblas_get_parallel");
    void (*set_threads)(int) = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
    blas_serial = parallel && parallel() == 0;
    if (!blas_serial && set_threads) set_threads(1);
    dlclose(lib);
  }
  pthread_atfork(fork_prepare, fork_done, fork_done);
#endif
}

/* 1 when supernodal CHOLMOD calls are serialised (a BLAS not safe for concurrent calls) */
int ms_chol_serialised(void) {
#ifdef MS_PTHREADS
  return blas_serial;
#else
  return 0;
#endif
}

/* ---------------------------------------------------------------- around every CHOLMOD call
 *
 * CHOLMOD's own OpenMP regions ask for a fixed four threads for loops over one supernode's
 * columns, whatever the machine or the caller wants; starting them costs more than the loops
 * save (2 cores, 40x40 cloth: a Newton factorisation takes 40 ms with them, 10 ms without),
 * and a team they start is lost in a forked child. So CHOLMOD runs with max-active-levels 0
 * on the calling thread (an OpenMP 5 per-thread setting, restored afterwards): its regions
 * run on that thread alone. Supernodal calls on factor L also hold the BLAS lock when the
 * BLAS needs it (simplicial factors never call the BLAS). */

static int chol_enter(const cholmod_factor *L) {
  int levels = 0;
#if defined(_OPENMP)
  levels = omp_get_max_active_levels();
  omp_set_max_active_levels(0);
#endif
#ifdef MS_PTHREADS
  if (blas_serial && L && L->is_super) pthread_mutex_lock(&blas_lock);
#endif
  return levels;
}

/* undo chol_enter, given what it returned */
static void chol_leave(const cholmod_factor *L, int levels) {
#ifdef MS_PTHREADS
  if (blas_serial && L && L->is_super) pthread_mutex_unlock(&blas_lock);
#endif
#if defined(_OPENMP)
  omp_set_max_active_levels(levels);
#endif
  (void)levels;
}

/* version of the CHOLMOD library linked at run time */
void ms_cholmod_version(int version[3]) {
  cholmod_version(version);
}

void ms_chol_free(ms_chol *ch) {
  if (!ch) return;
  cholmod_free_sparse(&ch->A, &ch->c);
  cholmod_free_factor(&ch->L, &ch->c);
  for (int p = 0; p < MS_SOLVE_PARTS; p++) {
    solve_ws *w = &ch->ws[p];
    cholmod_free_dense(&w->X, &w->c);
    cholmod_free_dense(&w->Y, &w->c);
    cholmod_free_dense(&w->E, &w->c);
    cholmod_finish(&w->c);
  }
  cholmod_finish(&ch->c);
  free(ch->bptr);
  free(ch->brow);
  free(ch->spos);
  free(ch->vert);
  free(ch);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* the position in brow of block (lo, col), lo <= col, or -1 where the pattern has none */
static int block_at(const ms_chol *ch, int lo, int col) {
  const int *hit = bsearch(&lo, ch->brow + ch->bptr[col], ch->bptr[col + 1] - ch->bptr[col],
                           sizeof(int), cmp_int);
  return hit ? (int)(hit - ch->brow) : -1;
}

/* the block column and row (lo <= col) of the coupling of vertices u and v; 0 when one is fixed */
static int block_of(const ms_model *m, int u, int v, int *lo, int *col) {
  int I = m->dof[u], J = m->dof[v];
  *lo = I < J ? I : J, *col = I > J ? I : J;
  return I >= 0 && J >= 0;
}

/* block columns: for free vertex J the sorted distinct free neighbours I < J, across springs
 * and the nlink links (vertex pairs), then J */
static ms_status block_pattern(ms_chol *ch, const ms_model *m, const int *link, int nlink) {
  int nb = m->nfree;
  ch->bptr = ms_alloc((size_t)nb + 1, sizeof(int));
  ch->spos = ms_alloc(m->ns, sizeof(int));
  ch->vert = ms_alloc(nb, sizeof(int));
  if (!ch->bptr || !ch->spos || !ch->vert) return MS_ENOMEM;
  for (int v = 0; v < m->nv; v++)
    if (m->dof[v] >= 0) ch->vert[m->dof[v]] = v;

  // count candidate blocks per column (duplicates included), then fill and sort
  int lo, col;
  for (int k = 0; k < m->ns + nlink; k++) {
    const int *e = k < m->ns ? m->edge + 2 * k : link + 2 * (k - m->ns);
    if (block_of(m, e[0], e[1], &lo, &col) && lo < col) ch->bptr[col + 1]++;
  }
  for (int J = 0; J < nb; J++) ch->bptr[J + 1] += ch->bptr[J] + 1;
  ch->brow = ms_alloc(ch->bptr[nb], sizeof(int));
  int *fill = ms_alloc(nb, sizeof(int));
  if (!ch->brow || !fill) {
    free(fill);
    return MS_ENOMEM;
  }
  memcpy(fill, ch->bptr, sizeof(int) * nb);
  for (int k = 0; k < m->ns + nlink; k++) {
    const int *e = k < m->ns ? m->edge + 2 * k : link + 2 * (k - m->ns);
    if (block_of(m, e[0], e[1], &lo, &col) && lo < col) ch->brow[fill[col]++] = lo;
  }
  for (int J = 0; J < nb; J++) ch->brow[fill[J]] = J;
  free(fill);

  // sort and drop duplicates in place, compacting the columns
  int out = 0;
  for (int J = 0; J < nb; J++) {
    int start = ch->bptr[J], end = ch->bptr[J + 1];
    qsort(ch->brow + start, end - start, sizeof(int), cmp_int);
    ch->bptr[J] = out;
    for (int p = start; p < end; p++)
      if (p == start || ch->brow[p] != ch->brow[p - 1]) ch->brow[out++] = ch->brow[p];
  }
  ch->bptr[nb] = out;

  // each spring's position in its column
  for (int s = 0; s < m->ns; s++)
    ch->spos[s] = block_of(m, m->edge[2 * s], m->edge[2 * s + 1], &lo, &col)
                      ? block_at(ch, lo, col) - ch->bptr[col]
                      : -1;
  return MS_OK;
}

/* scalar CSC pattern of the upper triangle from the block pattern */
static ms_status scalar_pattern(ms_chol *ch) {
  int b = ch->b, n = b * ch->nb;
  size_t nnz = 0;
  for (int J = 0; J < ch->nb; J++) {
    int cnt = ch->bptr[J + 1] - ch->bptr[J];
    nnz += (size_t)b * b * (cnt - 1) + (size_t)b * (b + 1) / 2;
  }
  ch->A = cholmod_allocate_sparse(n, n, nnz ? nnz : 1, 1, 1, 1, CHOLMOD_REAL, &ch->c);
  if (!ch->A) return MS_ENOMEM;
  int *Ap = ch->A->p, *Ai = ch->A->i;
  int k = 0;
  for (int J = 0; J < ch->nb; J++)
    for (int c = 0; c < b; c++) {
      Ap[b * J + c] = k;
      for (int p = ch->bptr[J]; p < ch->bptr[J + 1]; p++) {
        int I = ch->brow[p];
        for (int r = 0; r < (I == J ? c + 1 : b); r++) Ai[k++] = b * I + r;
      }
    }
  Ap[n] = k;
  return MS_OK;
}

/* fill-reducing order of the b * nb unknowns for a factor refactorised every iteration:
 * nested dissection (CHOLMOD's NESDIS, on METIS) of the vertex graph, each vertex's b
 * unknowns kept together (the vertex graph has a ninth of the unknowns' entries to order).
 * On the 200x200 Newton matrix it needs 4.0 GFlop to factorise against minimum degree's 4.9.
 * NULL with MS_OK when the CHOLMOD build has no METIS: then CHOLMOD's default ordering
 * serves. */
static ms_status vertex_order(ms_chol *ch, int **out) {
  int nb = ch->nb, b = ch->b;
  cholmod_sparse G = {.nrow = nb,
                      .ncol = nb,
                      .nzmax = ch->bptr[nb],
                      .p = ch->bptr,
                      .i = ch->brow,
                      .stype = 1,
                      .itype = CHOLMOD_INT,
                      .xtype = CHOLMOD_PATTERN,
                      .dtype = CHOLMOD_DOUBLE,
                      .sorted = 1,
                      .packed = 1};
  cholmod_common c;
  cholmod_start(&c);
  c.print = 0;
  c.nmethods = 1;
  c.method[0].ordering = CHOLMOD_NESDIS;
#ifdef MS_PTHREADS
  pthread_mutex_lock(&order_lock);
#endif
  cholmod_factor *F = cholmod_analyze(&G, &c);
#ifdef MS_PTHREADS
  pthread_mutex_unlock(&order_lock);
#endif
  ms_status st = c.status == CHOLMOD_OUT_OF_MEMORY ? MS_ENOMEM : MS_OK;
  *out = NULL;
  if (F && c.status >= 0) {
    const int *vp = F->Perm;
    int *perm = ms_alloc((size_t)b * nb, sizeof(int));
    if (perm)
      for (int k = 0; k < b * nb; k++) perm[k] = b * vp[k / b] + k % b;
    st = perm ? MS_OK : MS_ENOMEM;
    *out = perm;
  }
  cholmod_free_factor(&F, &c);
  cholmod_finish(&c);
  return st;
}

/* symbolic analysis of ch->A, refactorised: ordered by vertex_order */
static ms_status analyse(ms_chol *ch, int refactorised) {
  int *perm = NULL, levels = chol_enter(NULL);
  ms_status st = refactorised ? vertex_order(ch, &perm) : MS_OK;
  if (st == MS_OK && perm) {
    ch->c.nmethods = 1;
    ch->c.method[0].ordering = CHOLMOD_GIVEN;
  }
  if (st == MS_OK) {
    ch->L = cholmod_analyze_p(ch->A, perm, NULL, 0, &ch->c);
    if (!ch->L || ch->c.status < 0)
      st = ch->c.status == CHOLMOD_OUT_OF_MEMORY ? MS_ENOMEM : MS_ECHOLMOD;
  }
  chol_leave(NULL, levels);
  free(perm);
  return st;
}

/* build and analyse the pattern of model m with b x b blocks and the nlink links (vertex
 * pairs, (nlink,2)); many_solves: the factor will serve many solves per factorisation */
ms_status ms_chol_springs(ms_chol **out, const ms_model *m, int b, int many_solves, const int *link,
                          int nlink) {
  ms_chol *ch = ms_alloc(1, sizeof(ms_chol));
  if (!ch) return MS_ENOMEM;
  cholmod_start(&ch->c);
  ch->c.print = 0;
  ch->c.final_ll = 1;
  for (int p = 0; p < MS_SOLVE_PARTS; p++) {
    cholmod_start(&ch->ws[p].c);
    ch->ws[p].c.print = 0;
  }
  // a factor reused for many solves (FMS) is simplicial up to MS_SIMPLICIAL_MAX unknowns: its
  // solves avoid the supernodal BLAS calls on small blocks (100x100 cloth, n x 3 solve 1.85 ->
  // 1.24 ms) at the price of a slower factorisation (30 -> 51 ms), which beyond that size
  // dominates (10^6 unknowns: 89 s); refactored every iteration (Newton), CHOLMOD picks
  int simplicial = many_solves && b * m->nfree <= MS_SIMPLICIAL_MAX;
  ch->c.supernodal = simplicial ? CHOLMOD_SIMPLICIAL : CHOLMOD_AUTO;
  // refactorised every iteration, a mesh's factor has thousands of supernodes of a few
  // columns, each a handful of small BLAS calls: relaxed further than CHOLMOD's default
  // (4, 16, 48 columns) they are half as many, and the 200x200 Newton factorisation takes
  // 211 ms instead of 233 (its solve 29.5 instead of 27 ms, the explicit zeros)
  if (!many_solves) memcpy(ch->c.nrelax, (size_t[3]){8, 32, 96}, sizeof(ch->c.nrelax));
  ch->b = b;
  ch->nb = m->nfree;
  ch->rev_fixed = m->rev_fixed;
  ms_status st = block_pattern(ch, m, link, nlink);
  if (st == MS_OK) st = scalar_pattern(ch);
  if (st == MS_OK) st = analyse(ch, !many_solves);
  if (st != MS_OK) {
    ms_chol_free(ch);
    return st;
  }
  *out = ch;
  return MS_OK;
}

/* 1 when the pattern still matches the model's fixed set */
int ms_chol_current(const ms_chol *ch, const ms_model *m) {
  return ch && ch->rev_fixed == m->rev_fixed;
}

/* into *link the six vertex pairs of each of n groups of four vertices vert (n,4) (a
 * self-contact pair's, which couples each two of them); their count, or -1 when out of memory */
int ms_chol_links(ms_buf *link, const int *vert, int n) {
  if (ms_grow(link, 12 * (size_t)n, sizeof(int), 0)) return -1;
  int *out = link->p, k = 0;
  for (int c = 0; c < n; c++)
    for (int a = 0; a < 4; a++)
      for (int b = a + 1; b < 4; b++) out[k++] = vert[4 * c + a], out[k++] = vert[4 * c + b];
  return k / 2;
}

/* 1 when the pattern holds a block for each of the nlink links */
int ms_chol_holds(const ms_chol *ch, const ms_model *m, const int *link, int nlink) {
  int lo, col;
  for (int k = 0; k < nlink; k++)
    if (block_of(m, link[2 * k], link[2 * k + 1], &lo, &col) && block_at(ch, lo, col) < 0) return 0;
  return 1;
}

/* free unknowns: b * free vertices */
int ms_chol_size(const ms_chol *ch) {
  return ch->b * ch->nb;
}

void ms_chol_zero(ms_chol *ch) {
  memset(ch->A->x, 0, sizeof(double) * ch->A->nzmax);
}

/* add the symmetric b x b block blk (row-major) at block (I, J), I <= J, position p */
static void add_block(ms_chol *ch, int I, int J, int p, double scale, const double *blk) {
  int b = ch->b, *Ap = ch->A->p;
  double *Ax = ch->A->x;
  for (int c = 0; c < b; c++)
    for (int r = 0; r < (I == J ? c + 1 : b); r++)
      Ax[Ap[b * J + c] + b * (p - ch->bptr[J]) + r] += scale * blk[r * b + c];
}

/* A(v, v) += blk for a free vertex v; fixed vertices are eliminated */
void ms_chol_add_vertex(ms_chol *ch, const ms_model *m, int v, const double *blk) {
  int J = m->dof[v];
  if (J >= 0) add_block(ch, J, J, ch->bptr[J + 1] - 1, 1.0, blk);
}

/* spring s with stiffness block blk: +blk on both diagonal blocks, -blk off the diagonal */
void ms_chol_add_spring(ms_chol *ch, const ms_model *m, int s, const double *blk) {
  int I = m->dof[m->edge[2 * s]], J = m->dof[m->edge[2 * s + 1]];
  if (I >= 0) add_block(ch, I, I, ch->bptr[I + 1] - 1, 1.0, blk);
  if (J >= 0) add_block(ch, J, J, ch->bptr[J + 1] - 1, 1.0, blk);
  if (I >= 0 && J >= 0) {
    int lo = I < J ? I : J, col = I > J ? I : J;
    add_block(ch, lo, col, ch->bptr[col] + ch->spos[s], -1.0, blk);
  }
}

/* scale times the symmetric matrix H (4b x 4b, row-major in b x b blocks) that couples the
 * four vertices v (a self-contact pair's; ms_chol_links gave the pattern their links): its
 * blocks between each two vertices, and its blocks on the vertices themselves where own */
void ms_chol_add_group(ms_chol *ch, const ms_model *m, const int v[4], const double *H,
                       double scale, int own) {
  int b = ch->b, lo, col;
  for (int i = 0; i < 4; i++)
    for (int j = own ? i : i + 1; j < 4; j++) {
      if (!block_of(m, v[i], v[j], &lo, &col)) continue;
      // H's block whose rows are lo's (H symmetric: block (j, i) is block (i, j) transposed)
      int r0 = m->dof[v[i]] == lo ? i : j, c0 = r0 == i ? j : i;
      double blk[9];
      for (int r = 0; r < b * b; r++) blk[r] = H[4 * b * (b * r0 + r / b) + b * c0 + r % b];
      add_block(ch, lo, col, i == j ? ch->bptr[col + 1] - 1 : block_at(ch, lo, col), scale, blk);
    }
}

/* column j of the matrix as b * vertex + component, the numbering of all vertices */
static void model_place(const ms_chol *ch, int j, int *vertex, int *axis) {
  int known = j >= 0 && j < ms_chol_size(ch);
  *vertex = known ? ch->vert[j / ch->b] : -1;
  *axis = known && ch->b > 1 ? j % ch->b : -1;
}

/* numeric factorisation; MS_ENOTPD when not positive definite, MS_EDIVERGED when the matrix
 * holds a non-finite value; either way *vertex and *axis (-1 for scalar blocks) say where */
ms_status ms_chol_factor(ms_chol *ch, int *vertex, int *axis) {
  const double *Ax = ch->A->x;
  const int *Ap = ch->A->p;
  for (int j = 0; j < (int)ch->A->ncol; j++)
    for (int k = Ap[j]; k < Ap[j + 1]; k++)
      if (!isfinite(Ax[k])) {
        model_place(ch, j, vertex, axis);
        return MS_EDIVERGED;
      }
  int levels = chol_enter(ch->L);
  cholmod_factorize(ch->A, ch->L, &ch->c);
  chol_leave(ch->L, levels);
  if (ch->c.status == CHOLMOD_NOT_POSDEF || ch->L->minor < ch->L->n) {
    // minor counts columns of the permuted matrix P A P^T; Perm maps it back to A's
    int j = (int)ch->L->minor;
    if (ch->L->Perm) j = ((const int *)ch->L->Perm)[j];
    model_place(ch, j, vertex, axis);
    return MS_ENOTPD;
  }
  if (ch->c.status < 0) return ch->c.status == CHOLMOD_OUT_OF_MEMORY ? MS_ENOMEM : MS_ECHOLMOD;
  return MS_OK;
}

/* solve A X = B in place for the ncol columns of rhs (column-major, n rows) with w */
static ms_status solve_columns(const ms_chol *ch, solve_ws *w, double *rhs, int ncol) {
  int n = ms_chol_size(ch);
  cholmod_dense B = {.nrow = n,
                     .ncol = ncol,
                     .nzmax = (size_t)n * ncol,
                     .d = n,
                     .x = rhs,
                     .xtype = CHOLMOD_REAL,
                     .dtype = CHOLMOD_DOUBLE};
  int levels = chol_enter(ch->L);
  int ok = cholmod_solve2(CHOLMOD_A, ch->L, &B, NULL, &w->X, NULL, &w->Y, &w->E, &w->c);
  chol_leave(ch->L, levels);
  if (!ok) return w->c.status == CHOLMOD_OUT_OF_MEMORY ? MS_ENOMEM : MS_ECHOLMOD;
  memcpy(rhs, w->X->x, sizeof(double) * n * ncol);
  return MS_OK;
}

/* solve A X = B in place; rhs is column-major (size x nrhs). With nthread > 1 the columns
 * are split into groups solved in parallel; each column's arithmetic is the same either way
 * (100x100 cloth: 3 columns 1.2 ms, 2 columns 0.97 ms, 1 column 0.65 ms) */
ms_status ms_chol_solve(ms_chol *ch, double *rhs, int nrhs, int nthread) {
  int parts = nthread < nrhs ? nthread : nrhs, n = ms_chol_size(ch);
  if (parts > MS_SOLVE_PARTS) parts = MS_SOLVE_PARTS;
  if (parts < 1) parts = 1;
  if (parts == 1) return solve_columns(ch, &ch->ws[0], rhs, nrhs); /* no OpenMP region */
  ms_status st[MS_SOLVE_PARTS] = {MS_OK};
#pragma omp parallel for schedule(static) num_threads(parts)
  for (int p = 0; p < parts; p++) {
    int c0 = p * nrhs / parts, c1 = (p + 1) * nrhs / parts;
    st[p] = solve_columns(ch, &ch->ws[p], rhs + (size_t)n * c0, c1 - c0);
  }
  for (int p = 0; p < parts; p++)
    if (st[p] != MS_OK) return st[p];
  return MS_OK;
}
