/* threads.h: parallel passes: blocks of a fixed size whose results are combined in block order.
 * Internal to the engine. */
#ifndef MSIM_THREADS_H
#define MSIM_THREADS_H

#include "msim.h"

/* threads.c: parallel passes over fixed blocks */
int ms_threads(const ms_model *m);
int ms_thread_count(int want);
int ms_thread_id(void);
typedef void (*ms_block_fn)(void *ctx, int lo, int hi);
void ms_blocks(const ms_model *m, int n, int size, ms_block_fn fn, void *ctx);
int ms_team(int nt, int nb);
void ms_blocks_on(int nt, int n, int size, ms_block_fn fn, void *ctx);
void ms_blocks_dealt_on(int nt, int n, int size, ms_block_fn fn, void *ctx);
typedef double (*ms_block_max_fn)(void *ctx, int lo, int hi);
double ms_blocks_max(int nt, int n, int least, ms_block_max_fn fn, void *ctx);
typedef void (*ms_task_fn)(void *ctx);
void ms_both_on(int nt, ms_task_fn a, void *ca, ms_task_fn b, void *cb);

#endif
