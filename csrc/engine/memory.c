/* memory.c: allocation of model, data and workspace arrays, with a test hook that makes a
 * chosen allocation fail so that recovery from out-of-memory can be tested, and the sorting of
 * the index pairs they hold */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* allocations left before the one that fails; 0: none fails */
static atomic_int fail_countdown;

void ms_fail_alloc(int k) {
  atomic_store(&fail_countdown, k > 0 ? k : 0);
}

void *ms_alloc(size_t n, size_t size) {
  int left = atomic_load(&fail_countdown);
  while (left > 0 && !atomic_compare_exchange_weak(&fail_countdown, &left, left - 1)) {
  }
  if (left == 1) return NULL;
  return calloc(n ? n : 1, size);
}

int ms_grow(ms_buf *b, size_t n, size_t size, size_t keep) {
  if (b->p && n <= b->cap) return 0;
  size_t more = n > b->cap + b->cap / 2 ? n : b->cap + b->cap / 2;
  void *q = ms_alloc(more, size);
  if (!q) return -1;
  if (keep) memcpy(q, b->p, keep * size);
  free(b->p);
  b->p = q, b->cap = more;
  return 0;
}

int ms_compare_pairs(const void *a, const void *b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

int ms_unique_pairs(int *p, int n) {
  int kept = 0;
  qsort(p, n, 2 * sizeof(int), ms_compare_pairs);
  for (int k = 0; k < n; k++)
    if (!kept || ms_compare_pairs(p + 2 * k, p + 2 * (kept - 1)))
      p[2 * kept] = p[2 * k], p[2 * kept + 1] = p[2 * k + 1], kept++;
  return kept;
}
