/* memory.c: allocation of model, data and workspace arrays, with a test hook that makes a
 * chosen allocation fail so that recovery from out-of-memory can be tested, and the sorting of
 * the index pairs they hold */
#include <limits.h>
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

int ms_append_pairs(ms_buf *out, int *n, const int *q, int more) {
  if (more > INT_MAX - *n || ms_grow(out, 2 * ((size_t)*n + more), sizeof(int), 2 * (size_t)*n))
    return -1;
  if (more) memcpy((int *)out->p + 2 * (size_t)*n, q, 2 * sizeof(int) * (size_t)more);
  *n += more;
  return 0;
}

int ms_compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int ms_compare_pairs(const void *a, const void *b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* the digits of a radix sort pass [bits] */
#define MS_RADIX_BITS 11
#define MS_RADIX_MASK ((1u << MS_RADIX_BITS) - 1)

/* p (n pairs of indices >= 0) sorted as ms_compare_pairs orders them (keys 2) or by their
 * first index alone, ties in the order they came (keys 1), by a least significant digit radix
 * sort: stable passes over the second index's digits (keys 2), then the first's, through the
 * copy scratch (2 n ints); fewer than two pairs are left as they are (p may then be null) */
static void radix_pairs(int *p, int n, int *copy, int keys) {
  if (n < 2) return;
  int *src = p, *dst = copy;
  unsigned top[2] = {0, 0};
  for (int k = 0; k < 2 * n; k++) top[k & 1] |= (unsigned)p[k];
  for (int key = keys - 1; key >= 0; key--)
    for (int shift = 0; shift < 32 && (shift == 0 || top[key] >> shift); shift += MS_RADIX_BITS) {
      // count each digit, prefix sums to first places, move: the pass keeps the order of ties
      int place[(1 << MS_RADIX_BITS) + 1] = {0};
      for (int k = 0; k < n; k++)
        place[((unsigned)src[2 * k + key] >> shift & MS_RADIX_MASK) + 1]++;
      for (int d = 0; d < 1 << MS_RADIX_BITS; d++) place[d + 1] += place[d];
      for (int k = 0; k < n; k++) {
        int at = place[(unsigned)src[2 * k + key] >> shift & MS_RADIX_MASK]++;
        dst[2 * at] = src[2 * k], dst[2 * at + 1] = src[2 * k + 1];
      }
      int *t = src;
      src = dst, dst = t;
    }
  if (src != p) memcpy(p, src, 2 * sizeof(int) * n);
}

int ms_group_pairs(int *p, int n, ms_buf *scratch) {
  if (ms_grow(scratch, 2 * (size_t)n, sizeof(int), 0)) return -1;
  radix_pairs(p, n, scratch->p, 1);
  return 0;
}

int ms_unique_pairs(int *p, int n, ms_buf *scratch) {
  if (n < 2) return n;
  int kept = 0;
  if (scratch && !ms_grow(scratch, 2 * (size_t)n, sizeof(int), 0))
    radix_pairs(p, n, scratch->p, 2);
  else
    qsort(p, n, 2 * sizeof(int), ms_compare_pairs);
  for (int k = 0; k < n; k++)
    if (!kept || ms_compare_pairs(p + 2 * k, p + 2 * (kept - 1)))
      p[2 * kept] = p[2 * k], p[2 * kept + 1] = p[2 * k + 1], kept++;
  return kept;
}
