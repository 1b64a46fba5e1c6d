/* threads.c: how many threads a parallel pass may use, and what a fork() leaves behind
 *
 * GNU libgomp keeps the worker threads of a thread's parallel regions in a pool that fork()
 * does not copy: a child process whose forking thread had started a team waits forever at
 * its next region that asks for more than one thread. msim's passes with threads > 1 start
 * teams (CHOLMOD's regions never do: chol.c runs them on the calling thread). So a child of
 * a process that started one runs every OpenMP region on one thread (max-active-levels 0 on
 * the forking thread, the child's only one): the same results, since they never depend on
 * the thread count. Each fork also counts one generation, so that the binding can renew
 * locks held by threads that did not survive the fork.
 */
#include <stdatomic.h>

#include "engine.h"

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define MS_FORK_GUARD 1
#endif

static atomic_int team_started;     /* this process ran a pass on more than one thread */
static atomic_int team_lost;        /* forked from a process that had */
static atomic_ullong fork_children; /* forks between the first process and this one */

#ifdef MS_FORK_GUARD
static void forked_child(void) {
  atomic_fetch_add(&fork_children, 1);
  if (!atomic_load(&team_started)) return;
  atomic_store(&team_lost, 1);
#if defined(_OPENMP)
  omp_set_max_active_levels(0);
#endif
}
#endif

/* install the fork handler; once per process (module initialisation) */
void ms_threads_init(void) {
#ifdef MS_FORK_GUARD
  static atomic_flag done = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&done)) pthread_atfork(NULL, NULL, forked_child);
#endif
}

/* forks between the process that loaded msim and this one: a change means that locks held
 * by other threads at the fork are held for ever */
uint64_t ms_fork_generation(void) {
  return atomic_load(&fork_children);
}

/* the threads a pass that wants `want` may use: want, or 1 in a child that lost the pool */
int ms_thread_count(int want) {
  if (want <= 1 || atomic_load(&team_lost)) return 1;
  atomic_store(&team_started, 1);
  return want;
}

/* the threads a pass of m may use */
int ms_threads(const ms_model *m) {
  return ms_thread_count(m->nthread);
}

/* the calling thread's number in the team of the parallel pass it runs (0 outside one) */
int ms_thread_id(void) {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* fn(ctx, lo, hi) for block b of size `size` in [0, n) */
static void run_block(int n, int size, ms_block_fn fn, void *ctx, int b) {
  int lo = b * size;
  fn(ctx, lo, lo + size < n ? lo + size : n);
}

/* the threads a pass of nb blocks on nt threads starts: no idle ones, at least one (a pass
 * with scratch per thread holds that many, numbered by ms_thread_id) */
int ms_team(int nt, int nb) {
  return nt > nb ? (nb > 1 ? nb : 1) : (nt > 1 ? nt : 1);
}

/* fn(ctx, lo, hi) for the blocks [lo, hi) of size `size` that cover [0, n), on nt threads (at
 * most), `chunk` blocks at a time dealt to them in turn (0: one run of blocks each) */
static void blocks(int nt, int n, int size, int chunk, ms_block_fn fn, void *ctx) {
  int nb = (n + size - 1) / size;
  nt = ms_team(nt, nb);
  if (nt <= 1) { /* no OpenMP region: libgomp would allocate a team for each one */
    for (int b = 0; b < nb; b++) run_block(n, size, fn, ctx, b);
    return;
  }
  if (!chunk) chunk = (nb + nt - 1) / nt;
#pragma omp parallel for schedule(static, chunk) num_threads(nt)
  for (int b = 0; b < nb; b++) run_block(n, size, fn, ctx, b);
}

/* fn over the blocks of size `size` that cover [0, n), on nt threads (from ms_threads), each
 * thread a run of neighbouring blocks; which thread runs a block never changes what the block
 * computes */
void ms_blocks_on(int nt, int n, int size, ms_block_fn fn, void *ctx) {
  blocks(nt, n, size, 0, fn, ctx);
}

/* ms_blocks_on with the blocks dealt to the threads one at a time, for work that gathers in a
 * few places (the tight vertices of a crumpled corner); a run each keeps a pass over every
 * element faster where the work is even (an FMS step's springs: 3% on two threads) */
void ms_blocks_dealt_on(int nt, int n, int size, ms_block_fn fn, void *ctx) {
  blocks(nt, n, size, 1, fn, ctx);
}

/* the most blocks of ms_blocks_max */
#define MS_PARTS 64

/* a block size for n elements that makes at most MS_PARTS blocks, each at least `least` long:
 * from n alone, so that values per block, joined in block order, do not depend on the thread
 * count, and fit an array of MS_PARTS */
static int part_size(int n, int least) {
  int size = (int)(((int64_t)n + MS_PARTS - 1) / MS_PARTS);
  return size > least ? size : least;
}

/* what the blocks of ms_blocks_max share: the block function, and each block's value */
typedef struct {
  ms_block_max_fn fn;
  void *ctx;
  int size;
  double *most;
} maxing;

/* block [lo, hi)'s value into its slot */
static void max_block(void *ctx, int lo, int hi) {
  const maxing *c = ctx;
  c->most[lo / c->size] = c->fn(c->ctx, lo, hi);
}

/* the largest of 0 and fn(ctx, lo, hi) (never NaN) over at most MS_PARTS blocks, each at least
 * `least` long, that cover [0, n), on nt threads: a maximum in any order, so the same on any
 * thread count */
double ms_blocks_max(int nt, int n, int least, ms_block_max_fn fn, void *ctx) {
  double most[MS_PARTS], big = 0;
  maxing c = {fn, ctx, part_size(n, least), most};
  ms_blocks_on(nt, n, c.size, max_block, &c);
  for (int b = 0; b * c.size < n; b++) big = most[b] > big ? most[b] : big;
  return big;
}

/* ms_blocks_on with the threads of m */
void ms_blocks(const ms_model *m, int n, int size, ms_block_fn fn, void *ctx) {
  ms_blocks_on(ms_threads(m), n, size, fn, ctx);
}

/* a(ca) and b(cb): side by side on two threads when nt > 1 (from ms_threads), else one after
 * the other; each must write only what the other does not read */
void ms_both_on(int nt, ms_task_fn a, void *ca, ms_task_fn b, void *cb) {
  if (nt <= 1) {
    a(ca), b(cb);
    return;
  }
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    a(ca);
#pragma omp section
    b(cb);
  }
}
