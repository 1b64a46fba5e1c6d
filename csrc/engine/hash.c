/* hash.c: the broad phase: which pairs of axis-aligned boxes overlap, by the spatial hash of
 * Teschner, Heidelberger, Mueller, Pomeranets and Gross 2003, "Optimized Spatial Hashing for
 * Collision Detection of Deformable Objects" (Proc. Vision, Modeling, Visualization).
 *
 * Space is cut into cubic cells of side `cell`: the point x lies in the cell of integer
 * coordinates c = floor(x / cell), which maps to one of T buckets by
 *
 *   (c_x p1 xor c_y p2 xor c_z p3) mod T,  p1 = 73856093, p2 = 19349663, p3 = 83492791,
 *
 * with T = 2 n + 1 for n insertions. Every box of B is entered in each cell it covers, and the
 * entries are bucketed by a counting sort (count per bucket, prefix sum, fill), so their layout,
 * and so everything after it, is the same on every run. Each box of A then visits the cells it
 * covers and reads their buckets, keeping the entries of that very cell (the others are hash
 * collisions) whose boxes overlap its own. A pair sharing several cells is reported from one:
 * the cell of the lower corner max(lo_a, lo_b) of the two boxes' intersection, which both cover
 * (its cell coordinates are the max of the boxes' lower cell coordinates, as floor is monotone),
 * so no pair repeats without a set or a sort. A's boxes are visited in order and each one's
 * partners sorted, so the pairs come out sorted by (i, j).
 *
 * A box covering more than MS_HASH_CELLS cells, or cells beyond int, is not hashed: such an
 * oversized box is checked against every box of the other set directly. When the boxes would
 * cover too many cells in all (a cell much smaller than they are) or many are oversized, the
 * cell is doubled until they do not: the pairs do not depend on the cell, only the work does.
 * Serial, so deterministic by construction.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* a box covering more cells than this is oversized: checked directly, not hashed */
#define MS_HASH_CELLS 4096
/* cell coordinates beyond this magnitude make a box oversized (their range fits an int) */
#define MS_HASH_COORD 1073741824.0
/* the cell is doubled while the hashed boxes cover more than MS_HASH_SPAN cells per box plus
 * MS_HASH_SLACK, or more than MS_HASH_BIG boxes are oversized */
#define MS_HASH_SPAN 64
#define MS_HASH_SLACK 65536
#define MS_HASH_BIG 64
/* partner lists longer than this are sorted by qsort, shorter ones by insertion */
#define MS_HASH_SHORT 32

/* a growable array of the workspace */
typedef struct {
  void *p;
  size_t cap; /* elements */
} buf;

/* one box of B entered in one cell */
typedef struct {
  int b;    /* the box */
  int c[3]; /* the cell's coordinates */
} entry;

struct ms_hash {
  buf range;      /* (nb, 6) int: B's cell range, lower then upper coordinates (empty: oversized) */
  buf big;        /* (nb) int: B's oversized boxes, ascending */
  buf start;      /* (T + 1) size_t: bucket t's entries are entry[start[t] .. start[t+1]) */
  buf entry;      /* (n) entry: B's boxes in their cells, bucketed */
  buf js;         /* (nb) int: the partners of one box of A */
  buf pairs;      /* (npair, 2) int: the result */
  int nbig;       /* oversized boxes of B */
  size_t nbucket; /* buckets T */
  int npair;      /* pairs found */
};

/* one set of boxes */
typedef struct {
  const double *lo, *hi;
  int n;
} boxes;

/* one call: the sets, whether B is A, and the cell size [m] */
typedef struct {
  boxes a, b;
  int same;
  double cell;
} query;

void ms_hash_free(void *ws) {
  ms_hash *w = ws;
  if (!w) return;
  free(w->range.p);
  free(w->big.p);
  free(w->start.p);
  free(w->entry.p);
  free(w->js.p);
  free(w->pairs.p);
  free(w);
}

/* make b hold at least n elements of `size` bytes (and be allocated, even for n = 0), keeping
 * its first `keep`; 0, or -1 with b untouched when out of memory */
static int reserve(buf *b, size_t n, size_t size, size_t keep) {
  if (b->p && n <= b->cap) return 0;
  size_t cap = n > b->cap + b->cap / 2 ? n : b->cap + b->cap / 2;
  void *p = ms_alloc(cap, size);
  if (!p) return -1;
  if (keep) memcpy(p, b->p, keep * size);
  free(b->p);
  b->p = p, b->cap = cap;
  return 0;
}

/* ---------------------------------------------------------------- boxes and cells */

/* 1 when every coordinate of s is finite and lo <= hi */
static int valid(const boxes *s) {
  for (size_t k = 0; k < 3 * (size_t)s->n; k++)
    if (!isfinite(s->lo[k]) || !isfinite(s->hi[k]) || s->lo[k] > s->hi[k]) return 0;
  return 1;
}

/* closed boxes a and b overlap */
static int overlap(const double *alo, const double *ahi, const double *blo, const double *bhi) {
  return alo[0] <= bhi[0] && blo[0] <= ahi[0] && alo[1] <= bhi[1] && blo[1] <= ahi[1] &&
         alo[2] <= bhi[2] && blo[2] <= ahi[2];
}

/* the cells box (lo, hi) covers: c[0..2] the lower cell coordinates, c[3..5] the upper; the
 * count, or -1 for an oversized box (c is then an empty range). Coordinates beyond int, or
 * infinite once divided by a tiny cell, make the count infinite or NaN: oversized */
static double cells(const double *lo, const double *hi, double cell, int c[6]) {
  double n = 1, f[6];
  for (int t = 0; t < 3; t++) {
    f[t] = floor(lo[t] / cell), f[t + 3] = floor(hi[t] / cell);
    if (!(fabs(f[t]) <= MS_HASH_COORD && fabs(f[t + 3]) <= MS_HASH_COORD)) n = INFINITY;
    n *= f[t + 3] - f[t] + 1;
  }
  for (int t = 0; t < 6; t++) c[t] = n <= MS_HASH_CELLS ? (int)f[t] : t < 3 ? 0 : -1;
  return n <= MS_HASH_CELLS ? n : -1;
}

/* the cells the hashed boxes of s cover in all; *big counts the oversized ones */
static double cover(const boxes *s, double cell, int *big) {
  double total = 0, n;
  int c[6];
  for (int i = 0; i < s->n; i++) {
    n = cells(s->lo + 3 * (size_t)i, s->hi + 3 * (size_t)i, cell, c);
    if (n < 0)
      (*big)++;
    else
      total += n;
  }
  return total;
}

/* q's cell, doubled until the boxes cover few enough cells and few are oversized (or it would
 * overflow) */
static double adapt_cell(const query *q) {
  double cell = q->cell, nbox = (double)q->a.n + (q->same ? 0 : q->b.n);
  for (;;) {
    int big = 0;
    double n = cover(&q->a, cell, &big) + (q->same ? 0 : cover(&q->b, cell, &big));
    if ((n <= MS_HASH_SPAN * nbox + MS_HASH_SLACK && big <= MS_HASH_BIG) || !isfinite(2 * cell))
      return cell;
    cell *= 2;
  }
}

/* Teschner's hash of cell c into T buckets */
static size_t bucket(const int c[3], size_t T) {
  uint64_t h = (uint64_t)(uint32_t)c[0] * 73856093u ^ (uint64_t)(uint32_t)c[1] * 19349663u ^
               (uint64_t)(uint32_t)c[2] * 83492791u;
  return (size_t)(h % T);
}

/* ---------------------------------------------------------------- the table of B */

/* B's cell ranges and oversized list into w; the entries they make */
static size_t ranges(ms_hash *w, const query *q) {
  int *range = w->range.p, *big = w->big.p;
  size_t n = 0;
  w->nbig = 0;
  for (int j = 0; j < q->b.n; j++) {
    double k =
        cells(q->b.lo + 3 * (size_t)j, q->b.hi + 3 * (size_t)j, q->cell, range + 6 * (size_t)j);
    if (k < 0)
      big[w->nbig++] = j;
    else
      n += (size_t)k;
  }
  return n;
}

/* count (fill = 0) or fill (fill = 1) B's entries into the buckets: counts land in start[t],
 * then fill places each entry at --start[t], leaving start[t] at the bucket's beginning */
static void enter(ms_hash *w, const query *q, int fill) {
  const int *range = w->range.p;
  size_t *start = w->start.p;
  entry *e = w->entry.p;
  for (int j = 0; j < q->b.n; j++) {
    const int *r = range + 6 * (size_t)j;
    int c[3];
    for (c[2] = r[2]; c[2] <= r[5]; c[2]++)
      for (c[1] = r[1]; c[1] <= r[4]; c[1]++)
        for (c[0] = r[0]; c[0] <= r[3]; c[0]++) {
          size_t t = bucket(c, w->nbucket);
          if (!fill)
            start[t]++;
          else
            e[--start[t]] = (entry){j, {c[0], c[1], c[2]}};
        }
  }
}

/* the bucketed entries of B by a counting sort: count per bucket, prefix sum, fill */
static ms_status build(ms_hash *w, const query *q) {
  size_t nb = q->b.n;
  if (reserve(&w->range, 6 * nb, sizeof(int), 0) || reserve(&w->big, nb, sizeof(int), 0) ||
      reserve(&w->js, nb, sizeof(int), 0))
    return MS_ENOMEM;
  size_t n = ranges(w, q);
  w->nbucket = 2 * n + 1;
  if (reserve(&w->start, w->nbucket + 1, sizeof(size_t), 0) ||
      reserve(&w->entry, n, sizeof(entry), 0))
    return MS_ENOMEM;
  size_t *start = w->start.p;
  memset(start, 0, sizeof(size_t) * (w->nbucket + 1));
  enter(w, q, 0);
  for (size_t t = 1; t <= w->nbucket; t++) start[t] += start[t - 1];
  enter(w, q, 1);
  return MS_OK;
}

/* ---------------------------------------------------------------- the boxes of A */

/* box i of A meets box j of B (only j > i when B is A) */
static int meets(const query *q, int i, int j) {
  if (q->same && j <= i) return 0;
  return overlap(q->a.lo + 3 * (size_t)i, q->a.hi + 3 * (size_t)i, q->b.lo + 3 * (size_t)j,
                 q->b.hi + 3 * (size_t)j);
}

/* the partners of hashed box i (lower cell a) found in cell c, appended to js at k; the new
 * count. B's entries of other cells are collisions; a pair is taken in its corner's cell */
static int from_cell(const ms_hash *w, const query *q, int i, const int a[3], const int c[3],
                     int *js, int k) {
  const size_t *start = w->start.p;
  const entry *e = w->entry.p;
  const int *range = w->range.p;
  size_t t = bucket(c, w->nbucket);
  for (size_t p = start[t]; p < start[t + 1]; p++) {
    const int *ec = e[p].c, *b = range + 6 * (size_t)e[p].b;
    if (ec[0] != c[0] || ec[1] != c[1] || ec[2] != c[2]) continue;
    int corner = (a[0] > b[0] ? a[0] : b[0]) == c[0] && (a[1] > b[1] ? a[1] : b[1]) == c[1] &&
                 (a[2] > b[2] ? a[2] : b[2]) == c[2];
    if (corner && meets(q, i, e[p].b)) js[k++] = e[p].b;
  }
  return k;
}

/* the partners of hashed box i of A (cell range r) into js: from the cells it covers, then
 * B's oversized boxes; their count */
static int hashed_partners(const ms_hash *w, const query *q, int i, const int r[6], int *js) {
  int k = 0, c[3];
  for (c[2] = r[2]; c[2] <= r[5]; c[2]++)
    for (c[1] = r[1]; c[1] <= r[4]; c[1]++)
      for (c[0] = r[0]; c[0] <= r[3]; c[0]++) k = from_cell(w, q, i, r, c, js, k);
  const int *big = w->big.p;
  for (int p = 0; p < w->nbig; p++)
    if (meets(q, i, big[p])) js[k++] = big[p];
  return k;
}

static int compare_ints(const void *p, const void *q) {
  int a = *(const int *)p, b = *(const int *)q;
  return (a > b) - (a < b);
}

/* v[0 .. n) ascending: insertion sort when short, else qsort (the values are distinct, so
 * the result is unique) */
static void sort_ints(int *v, int n) {
  if (n > MS_HASH_SHORT) {
    qsort(v, n, sizeof(int), compare_ints);
    return;
  }
  for (int k = 1; k < n; k++) {
    int t = v[k], m = k;
    for (; m > 0 && v[m - 1] > t; m--) v[m] = v[m - 1];
    v[m] = t;
  }
}

/* the partners of box i of A, sorted, into js: hashed, or every box of B when i is oversized
 * (already in order); their count */
static int partners(const ms_hash *w, const query *q, int i, int *js) {
  int r[6], k = 0;
  if (cells(q->a.lo + 3 * (size_t)i, q->a.hi + 3 * (size_t)i, q->cell, r) < 0) {
    for (int j = 0; j < q->b.n; j++)
      if (meets(q, i, j)) js[k++] = j;
    return k;
  }
  k = hashed_partners(w, q, i, r, js);
  sort_ints(js, k);
  return k;
}

/* the pairs of every box of A, in order, into w->pairs */
static ms_status collect(ms_hash *w, const query *q) {
  int *js = w->js.p;
  w->npair = 0;
  for (int i = 0; i < q->a.n; i++) {
    int k = partners(w, q, i, js);
    if (k > INT_MAX - w->npair) return MS_ENOMEM;
    if (reserve(&w->pairs, 2 * ((size_t)w->npair + k), sizeof(int), 2 * (size_t)w->npair))
      return MS_ENOMEM;
    int *out = (int *)w->pairs.p + 2 * (size_t)w->npair;
    for (int p = 0; p < k; p++) out[2 * p] = i, out[2 * p + 1] = js[p];
    w->npair += k;
  }
  return MS_OK;
}

/* ---------------------------------------------------------------- entry points */

ms_status ms_hash_overlaps(ms_hash **hp, const double *alo, const double *ahi, int na,
                           const double *blo, const double *bhi, int nb, int same, double cell,
                           const int **pairs, int *npair) {
  query q = {{alo, ahi, na}, {blo, bhi, nb}, same, cell};
  if (same) q.b = q.a;
  if (na < 0 || q.b.n < 0 || !(cell > 0 && isfinite(cell)) || !valid(&q.a) || !valid(&q.b))
    return MS_EINPUT;
  ms_hash *w = *hp ? *hp : ms_alloc(1, sizeof(ms_hash));
  if (!w) return MS_ENOMEM;
  q.cell = adapt_cell(&q);
  ms_status st = build(w, &q);
  if (st == MS_OK) st = collect(w, &q);
  if (st != MS_OK) {
    if (!*hp) ms_hash_free(w);
    return st;
  }
  *hp = w;
  *pairs = w->pairs.p, *npair = w->npair;
  return MS_OK;
}

void ms_hash_boxes(const double *x, const double *dx, const int *idx, int n, int k, double r,
                   double *lo, double *hi) {
  for (int p = 0; p < n; p++)
    for (int t = 0; t < 3; t++) {
      double a = INFINITY, b = -INFINITY;
      for (int v = 0; v < k; v++) {
        size_t i = 3 * (size_t)idx[k * (size_t)p + v] + t;
        double c = x[i], e = dx ? c + dx[i] : c;
        a = fmin(a, fmin(c, e)), b = fmax(b, fmax(c, e));
      }
      lo[3 * (size_t)p + t] = a - r, hi[3 * (size_t)p + t] = b + r;
    }
}
