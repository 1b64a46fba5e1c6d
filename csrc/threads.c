/* threads.c: how many threads a parallel pass may use
 *
 * GNU libgomp keeps its worker threads in a pool that a fork() does not copy: a child
 * process that starts a parallel region after its parent ran one waits for them forever
 * (multiprocessing with "fork", the default on Linux). A child of such a parent therefore
 * runs every pass on one thread; the results are the same, since they never depend on the
 * thread count.
 */
#include <stdatomic.h>

#include "msim.h"

#if defined(_OPENMP) && (defined(__unix__) || defined(__APPLE__))
#include <pthread.h>
#define MS_FORK_GUARD 1
#endif

static atomic_int team_started; /* this process ran a region on more than one thread */
static atomic_int team_lost;    /* forked from a process that had */

#ifdef MS_FORK_GUARD
static void forked_child(void) {
  atomic_store(&team_lost, atomic_load(&team_started));
}
#endif

/* install the fork handler; once per process (module initialisation) */
void ms_threads_init(void) {
#ifdef MS_FORK_GUARD
  static atomic_flag done = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&done)) pthread_atfork(NULL, NULL, forked_child);
#endif
}

/* the threads a pass of m may use: m->nthread, or 1 in a child that lost the pool */
int ms_threads(const ms_model *m) {
  if (m->nthread <= 1 || atomic_load(&team_lost)) return 1;
  atomic_store(&team_started, 1);
  return m->nthread;
}

/* fn(ctx, lo, hi) for the blocks [lo, hi) of size `size` that cover [0, n), on ms_threads(m)
 * threads; which thread runs a block never changes what the block computes */
void ms_blocks(const ms_model *m, int n, int size, ms_block_fn fn, void *ctx) {
  int nb = (n + size - 1) / size, nt = ms_threads(m);
  if (nt > nb) nt = nb; /* no idle threads started */
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (int b = 0; b < nb; b++) fn(ctx, b * size, b * size + size < n ? b * size + size : n);
}
