/* hash.c: the broad phase: which pairs of axis-aligned boxes overlap, by the spatial hash of
 * Teschner, Heidelberger, Mueller, Pomeranets and Gross 2003, "Optimized Spatial Hashing for
 * Collision Detection of Deformable Objects" (Proc. Vision, Modeling, Visualization).
 *
 * Space is cut into cubic cells of side `cell`: the point x lies in the cell of integer
 * coordinates c = floor(x * (1 / cell)) (a product, cheaper than a quotient and as monotone in
 * x, which is all the search below relies on). Every box of B is entered once, in the cell of its
 * lower corner, into the slot of that cell: when the grid box of those cells has at most
 * MS_HASH_DENSE cells per box (a cloth, a heap), a slot per cell of it, indexed directly, so
 * that a row of cells along x is a run of slots; else one of T = 2^k buckets by
 *
 *   h = c_x p1 xor c_y p2 xor c_z p3,  p1 = 73856093, p2 = 19349663, p3 = 83492791,
 *
 * taking the top k bits of h times 2^64 / golden ratio (Knuth's multiplicative hashing, which
 * spreads the xor's low bits over the table), with T >= 2 n for n boxes. The boxes are placed
 * by a counting sort (count per slot, prefix sum, fill), so their layout, and so everything
 * after it, is the same on every run.
 *
 * A box of B that spans at most d_t + 1 cells along axis t (d, the reach, is B's largest
 * span but for a few long boxes, below) and overlaps a box of A covering cells [a_t, b_t] has its
 * lower corner's cell in [a_t - d_t, b_t] (floor is monotone). Each box of A visits those cells and
 * keeps the boxes entered there (in a bucket, of that very cell: the others are hash collisions)
 * that overlap its own; as each box of B sits in one cell, no pair repeats without a set or a sort,
 * and in the direct grid each row of cells is one run of boxes, kept by a test without a branch
 * (its outcome is a coin toss). A's boxes are visited in order and each one's partners sorted
 * (unless the caller sorts them itself), so the pairs come out sorted by (i, j). Blocks of
 * A's boxes run in parallel, each into its own list, and the lists are joined in block order:
 * the pairs, and their order, do not depend on the thread count. Each search visits its box's
 * cells and those about them, so when B is the smaller set its boxes search A's table instead,
 * and the pairs (j, i) so found, B's boxes in order, are turned into (i, j) and grouped by i
 * by a stable sort, which keeps each i's partners in the order of j: sorted.
 *
 * A box covering more than MS_HASH_CELLS cells, or cells beyond int, is not hashed: such an
 * oversized box is checked against every box of the other set directly, as are the few boxes
 * of B longer along an axis than the rest (d_t is chosen so that at most one box in
 * MS_HASH_LONG spans more: one long box would widen every search). When A's searches would
 * visit too many cells in all (a cell much smaller than the boxes) or many boxes are
 * oversized, the cell is doubled until they do not: the pairs do not depend on the cell, only
 * the work does.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "threads.h"

/* a box covering more cells than this is oversized: checked directly, not hashed */
#define MS_HASH_CELLS 4096
/* cell coordinates beyond this magnitude make a box oversized (their range fits an int) */
#define MS_HASH_COORD 1073741824.0
/* along each axis, at most one in MS_HASH_LONG of B's boxes is long (spans more cells than
 * the others, which each search must reach back over): those are checked directly */
#define MS_HASH_LONG 64
/* the spans told apart when choosing the reach (longer ones count as one) */
#define MS_HASH_SPANS 8
/* the cell is doubled while A's searches visit more than MS_HASH_SPAN cells per box plus
 * MS_HASH_SLACK, or more than MS_HASH_BIG boxes are oversized */
#define MS_HASH_SPAN 64
#define MS_HASH_SLACK 65536
#define MS_HASH_BIG 64
/* partner lists longer than this are sorted by qsort, shorter ones by insertion */
#define MS_HASH_SHORT 32
/* a dense grid is used when it has at most this many cells per box (each query clears and sums
 * its counts, a word a cell: cheaper than hashing every cell the searches visit while the
 * cells are this few; a hanging cloth's boundary in the plane has about 7 per box) */
#define MS_HASH_DENSE 16
/* boxes of A per block of a parallel pass */
#define MS_HASH_BLOCK 1024
/* one box of B entered in the cell of its lower corner */
typedef struct {
  int b;    /* the box */
  int c[3]; /* the cell (hashed only: a bucket holds several) */
} entry;

/* the pairs of one block of A's boxes */
typedef struct {
  ms_buf js;    /* (nb) int: the partners of one box */
  ms_buf pairs; /* (npair, 2) int */
  int npair;    /* pairs found */
  ms_status st; /* MS_ENOMEM when a buffer could not grow */
} part;

struct ms_hash {
  ms_buf arange; /* (na, 6) int: A's cell ranges, lower then upper coordinates (empty: oversized) */
  ms_buf brange; /* (nb, 6) int: B's, when B is not A */
  ms_buf big;    /* (nb) int: B's oversized and long boxes, ascending */
  ms_buf start;  /* (slots + 1) size_t: slot t's entries are entry[start[t] .. start[t+1]) */
  ms_buf entry;  /* (n) entry: B's other boxes in their lower corners' cells, by slot */
  ms_buf part;   /* (blocks of A) part, zeroed when allocated (ms_alloc zeroes) */
  ms_buf pairs;  /* (npair, 2) int: the result */
  ms_buf turned; /* (npair, 2) int: the sort's copy of a search from B's pairs */
  int nbig;      /* oversized and long boxes of B */
  int bits;      /* the hash table has T = 2^bits buckets */
  int dense;     /* 1: a slot per cell of the grid box org + [0, dim) instead of a hash */
  int org[3];    /* the lowest cell of that box */
  int64_t dim[3]; /* its cells along each axis */
  int reach[3];   /* the most cells a hashed box of B spans along each axis, less one */
  int npair;      /* pairs found */
};

/* one set of boxes and their cell ranges */
typedef struct {
  const double *lo, *hi;
  int n;
  int *range; /* (n, 6) */
} boxes;

/* one call: the sets, whether B is A, whether each box's partners are sorted, the cell size
 * [m] and the threads of its passes */
typedef struct {
  boxes a, b;
  int same, sorted;
  double cell;
  int threads;
} query;

/* what the blocks of collect share */
typedef struct {
  ms_hash *w;
  const query *q;
} collecting;

void ms_hash_free(void *ws) {
  ms_hash *w = ws;
  if (!w) return;
  free(w->arange.p);
  free(w->brange.p);
  free(w->big.p);
  free(w->start.p);
  free(w->entry.p);
  for (size_t b = 0; b < w->part.cap; b++) {
    part *pt = (part *)w->part.p + b;
    free(pt->js.p), free(pt->pairs.p);
  }
  free(w->part.p);
  free(w->pairs.p);
  free(w->turned.p);
  free(w);
}

/* ---------------------------------------------------------------- boxes and cells */

/* 1 when every coordinate of s is finite and lo <= hi */
static int valid(const boxes *s) {
  for (size_t k = 0; k < 3 * (size_t)s->n; k++)
    if (!isfinite(s->lo[k]) || !isfinite(s->hi[k]) || s->lo[k] > s->hi[k]) return 0;
  return 1;
}

/* the cells box (lo, hi) covers: c[0..2] the lower cell coordinates, c[3..5] the upper; the
 * count, or -1 for an oversized box (c is then an empty range). Coordinates beyond int, or
 * infinite once scaled by the inverse of a tiny cell, make the count infinite or NaN: oversized */
static double cells(const double *lo, const double *hi, double inv, int c[6]) {
  double n = 1, f[6];
  for (int t = 0; t < 3; t++) {
    f[t] = floor(lo[t] * inv), f[t + 3] = floor(hi[t] * inv);
    if (!(fabs(f[t]) <= MS_HASH_COORD && fabs(f[t + 3]) <= MS_HASH_COORD)) n = INFINITY;
    n *= f[t + 3] - f[t] + 1;
  }
  for (int t = 0; t < 6; t++) c[t] = n <= MS_HASH_CELLS ? (int)f[t] : t < 3 ? 0 : -1;
  return n <= MS_HASH_CELLS ? n : -1;
}

/* what the blocks of a pass over one set of boxes share */
typedef struct {
  const boxes *s;
  double inv; /* 1 / the cell */
} ranging;

/* the cell ranges of boxes [lo, hi) */
static void range_block(void *ctx, int lo, int hi) {
  const ranging *c = ctx;
  for (int i = lo; i < hi; i++)
    cells(c->s->lo + 3 * (size_t)i, c->s->hi + 3 * (size_t)i, c->inv, c->s->range + 6 * (size_t)i);
}

/* the cell ranges of s into s->range (in parallel blocks); *big counting the oversized ones */
static void cover(const boxes *s, double cell, int threads, int *big) {
  ranging c = {s, 1.0 / cell};
  ms_blocks_on(threads, s->n, MS_HASH_BLOCK, range_block, &c);
  for (int i = 0; i < s->n; i++) *big += s->range[6 * (size_t)i + 3] < s->range[6 * (size_t)i];
}

/* d: along each axis, the least span (in cells, less one) that at most one in MS_HASH_LONG of
 * B's boxes exceeds, or their longest (B's cell ranges filled) */
static void reach(const query *q, int d[3]) {
  int count[3][MS_HASH_SPANS + 1] = {{0}}, most[3] = {0, 0, 0}, hashed = 0;
  for (int j = 0; j < q->b.n; j++) {
    const int *r = q->b.range + 6 * (size_t)j;
    if (r[3] < r[0]) continue;
    hashed++;
    for (int t = 0; t < 3; t++) {
      int span = r[t + 3] - r[t];
      count[t][span < MS_HASH_SPANS ? span : MS_HASH_SPANS]++;
      most[t] = span > most[t] ? span : most[t];
    }
  }
  for (int t = 0; t < 3; t++) {
    int longer = hashed - count[t][0];
    for (d[t] = 0; d[t] < MS_HASH_SPANS && longer > q->b.n / MS_HASH_LONG; d[t]++)
      longer -= count[t][d[t] + 1];
    if (longer > q->b.n / MS_HASH_LONG) d[t] = most[t];
  }
}

/* the cells the searches of A's hashed boxes visit for B's reach d */
static double searched(const boxes *a, const int d[3]) {
  double total = 0;
  for (int i = 0; i < a->n; i++) {
    const int *r = a->range + 6 * (size_t)i;
    if (r[3] >= r[0])
      total +=
          (double)(r[3] - r[0] + 1 + d[0]) * (r[4] - r[1] + 1 + d[1]) * (r[5] - r[2] + 1 + d[2]);
  }
  return total;
}

/* q's cell, doubled until A's searches visit few enough cells and few boxes are oversized
 * (or it would overflow), with the sets' cell ranges and B's reach (into w) filled for it */
static double adapt_cell(ms_hash *w, const query *q) {
  double cell = q->cell, nbox = (double)q->a.n + (q->same ? 0 : q->b.n);
  for (;;) {
    int big = 0;
    cover(&q->a, cell, q->threads, &big);
    if (!q->same) cover(&q->b, cell, q->threads, &big);
    reach(q, w->reach);
    double n = searched(&q->a, w->reach);
    if ((n <= MS_HASH_SPAN * nbox + MS_HASH_SLACK && big <= MS_HASH_BIG) || !isfinite(2 * cell))
      return cell;
    cell *= 2;
  }
}

/* the bucket of cell c among 2^bits: Teschner's hash, spread by Fibonacci hashing */
static inline size_t bucket(const int c[3], int bits) {
  uint64_t h = (uint64_t)(uint32_t)c[0] * 73856093u ^ (uint64_t)(uint32_t)c[1] * 19349663u ^
               (uint64_t)(uint32_t)c[2] * 83492791u;
  return (size_t)((h * 0x9E3779B97F4A7C15u) >> (64 - bits));
}

/* ---------------------------------------------------------------- the table of B */

/* the slot of cell c: its bucket, or (dense) its index in the grid box, -1 outside it */
static inline int64_t slot(const ms_hash *w, const int c[3]) {
  if (!w->dense) return (int64_t)bucket(c, w->bits);
  int64_t i = (int64_t)c[0] - w->org[0], j = (int64_t)c[1] - w->org[1],
          k = (int64_t)c[2] - w->org[2];
  if (i < 0 || j < 0 || k < 0 || i >= w->dim[0] || j >= w->dim[1] || k >= w->dim[2]) return -1;
  return (k * w->dim[1] + j) * w->dim[0] + i;
}

/* 1 when box range r of B is not hashed: oversized (empty) or longer than the reach */
static inline int unhashed(const ms_hash *w, const int r[6]) {
  return (r[3] - r[0] > w->reach[0]) | (r[4] - r[1] > w->reach[1]) | (r[5] - r[2] > w->reach[2]) |
         (r[3] < r[0]);
}

/* B's oversized and long boxes into w->big, and of its other (hashed) boxes the grid box of
 * their lower corners' cells into w; how many are hashed */
static size_t oversized(ms_hash *w, const query *q) {
  int *big = w->big.p, lo[3] = {INT_MAX, INT_MAX, INT_MAX}, hi[3] = {INT_MIN, INT_MIN, INT_MIN};
  size_t n = 0;
  w->nbig = 0;
  for (int j = 0; j < q->b.n; j++) {
    const int *r = q->b.range + 6 * (size_t)j;
    if (unhashed(w, r)) {
      big[w->nbig++] = j;
      continue;
    }
    n++;
    for (int t = 0; t < 3; t++)
      lo[t] = r[t] < lo[t] ? r[t] : lo[t], hi[t] = r[t] > hi[t] ? r[t] : hi[t];
  }
  for (int t = 0; t < 3; t++) w->org[t] = lo[t], w->dim[t] = n ? (int64_t)hi[t] - lo[t] + 1 : 0;
  return n;
}

/* the slots of the table: a dense grid when the grid box of B's hashed boxes' cells has at
 * most MS_HASH_DENSE cells per box, else the smallest power of two >= 2 n (n boxes) */
static size_t slots(ms_hash *w, size_t n) {
  double cells = (double)w->dim[0] * (double)w->dim[1] * (double)w->dim[2];
  w->dense = cells <= MS_HASH_DENSE * (double)n;
  if (w->dense) return (size_t)cells;
  size_t nbucket = 2;
  for (w->bits = 1; nbucket < 2 * n && w->bits < 62; w->bits++) nbucket *= 2;
  return nbucket;
}

/* count (fill = 0) or fill (fill = 1) B's hashed boxes into the slots of their lower corners'
 * cells: counts land in start[t], then fill places each box at --start[t], leaving start[t] at
 * the slot's beginning */
static void enter(ms_hash *w, const query *q, int fill) {
  size_t *start = w->start.p;
  entry *e = w->entry.p;
  for (int j = 0; j < q->b.n; j++) {
    const int *r = q->b.range + 6 * (size_t)j;
    if (unhashed(w, r)) continue;
    int64_t t = slot(w, r);
    if (fill)
      e[--start[t]] = (entry){j, {r[0], r[1], r[2]}};
    else
      start[t]++;
  }
}

/* B's hashed boxes in their slots by a counting sort: count per slot, prefix sum, fill */
static ms_status build(ms_hash *w, const query *q) {
  if (ms_grow(&w->big, q->b.n, sizeof(int), 0)) return MS_ENOMEM;
  size_t n = oversized(w, q), nslot = slots(w, n);
  if (ms_grow(&w->start, nslot + 1, sizeof(size_t), 0) || ms_grow(&w->entry, n, sizeof(entry), 0))
    return MS_ENOMEM;
  size_t *start = w->start.p;
  memset(start, 0, sizeof(size_t) * (nslot + 1));
  enter(w, q, 0);
  for (size_t t = 1; t <= nslot; t++) start[t] += start[t - 1];
  enter(w, q, 1);
  return MS_OK;
}

/* ---------------------------------------------------------------- the boxes of A */

/* box i of A as its partners are sought: its corners, and B's, in fields of their own (a
 * search copies it to locals, which the stores into its partner list cannot alias) */
typedef struct {
  double a[6];             /* lower then upper corner */
  int i, other;            /* the box; 1 when B is not A (else only boxes j > i are partners) */
  const double *blo, *bhi; /* B's boxes */
} seeker;

/* box j of B is a partner of s's box: overlaps it (only j > i when B is A), without a branch */
static inline int meets(const seeker *s, int j) {
  return (s->other | (j > s->i)) &
         ms_boxes_overlap(s->a, s->a + 3, s->blo + 3 * (size_t)j, s->bhi + 3 * (size_t)j);
}

/* the partners of s's box among B's entries [from, to), appended to js at k (each written and
 * counted only when it meets the box, so that no branch depends on the outcome); the new count.
 * c: the cell they must be entered in (the others in a bucket are collisions), or NULL */
static int scan(const ms_hash *w, const seeker *s, size_t from, size_t to, const int *c, int *js,
                int k) {
  const entry *e = w->entry.p;
  const seeker me = *s;
  for (size_t p = from; p < to; p++) {
    int j = e[p].b, in = 1;
    if (c) in = (e[p].c[0] == c[0]) & (e[p].c[1] == c[1]) & (e[p].c[2] == c[2]);
    js[k] = j, k += in & meets(&me, j);
  }
  return k;
}

/* the partners of s's box (hashed, cell range r) into js: from the cells B's boxes that may
 * meet it start in (in the direct grid, row by row), then B's unhashed boxes; their count */
static int hashed_partners(const ms_hash *w, const seeker *s, const int r[6], int *js) {
  const size_t *start = w->start.p;
  int k = 0, lo[3], hi[3], c[3];
  for (int t = 0; t < 3; t++) lo[t] = r[t] - w->reach[t], hi[t] = r[t + 3];
  if (w->dense)
    for (int t = 0; t < 3; t++)
      lo[t] = lo[t] > w->org[t] ? lo[t] : w->org[t],
      hi[t] = hi[t] < w->org[t] + w->dim[t] - 1 ? hi[t] : (int)(w->org[t] + w->dim[t] - 1);
  for (c[2] = lo[2]; c[2] <= hi[2]; c[2]++)
    for (c[1] = lo[1]; c[1] <= hi[1]; c[1]++) {
      c[0] = lo[0];
      if (!w->dense) {
        for (; c[0] <= hi[0]; c[0]++) {
          int64_t t = slot(w, c);
          k = scan(w, s, start[t], start[t + 1], c, js, k);
        }
      } else if (lo[0] <= hi[0]) {
        int64_t t = slot(w, c); /* the row's cells are slots t .. t + hi - lo */
        k = scan(w, s, start[t], start[t + hi[0] - lo[0] + 1], NULL, js, k);
      }
    }
  const int *big = w->big.p;
  for (int p = 0; p < w->nbig; p++) js[k] = big[p], k += meets(s, big[p]);
  return k;
}

/* v[0 .. n) ascending: insertion sort when short, else qsort (the values are distinct, so
 * the result is unique) */
static void sort_ints(int *v, int n) {
  if (n > MS_HASH_SHORT) {
    qsort(v, n, sizeof(int), ms_compare_ints);
    return;
  }
  for (int k = 1; k < n; k++) {
    int t = v[k], m = k;
    for (; m > 0 && v[m - 1] > t; m--) v[m] = v[m - 1];
    v[m] = t;
  }
}

/* the partners of box i of A into js, sorted when the query asks: hashed, or every box of B
 * when i is oversized (already in order); their count */
static int partners(const ms_hash *w, const query *q, int i, int *js) {
  const int *r = q->a.range + 6 * (size_t)i;
  const double *lo = q->a.lo + 3 * (size_t)i, *hi = q->a.hi + 3 * (size_t)i;
  const seeker s = {{lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]}, i, !q->same, q->b.lo, q->b.hi};
  int k = 0;
  if (r[3] < r[0]) {
    for (int j = 0; j < q->b.n; j++) js[k] = j, k += meets(&s, j);
    return k;
  }
  k = hashed_partners(w, &s, r, js);
  if (q->sorted) sort_ints(js, k);
  return k;
}

/* block b's pairs: its boxes of A in order, each one's partners sorted */
static void collect_block(void *ctx, int lo, int hi) {
  const collecting *c = ctx;
  part *pt = (part *)c->w->part.p + lo / MS_HASH_BLOCK;
  pt->npair = 0, pt->st = MS_ENOMEM;
  if (ms_grow(&pt->js, c->q->b.n, sizeof(int), 0)) return;
  int *js = pt->js.p;
  for (int i = lo; i < hi; i++) {
    int k = partners(c->w, c->q, i, js);
    if (k > INT_MAX - pt->npair ||
        ms_grow(&pt->pairs, 2 * ((size_t)pt->npair + k), sizeof(int), 2 * (size_t)pt->npair))
      return;
    int *out = (int *)pt->pairs.p + 2 * (size_t)pt->npair;
    for (int p = 0; p < k; p++) out[2 * p] = i, out[2 * p + 1] = js[p];
    pt->npair += k;
  }
  pt->st = MS_OK;
}

/* the pairs of every box of A, in order, into w->pairs: blocks of A on q's threads, each
 * into its own part, joined in block order (so the same on any thread count) */
static ms_status collect(ms_hash *w, const query *q) {
  size_t nblock = ((size_t)q->a.n + MS_HASH_BLOCK - 1) / MS_HASH_BLOCK, had = w->part.cap;
  if (ms_grow(&w->part, nblock, sizeof(part), had)) return MS_ENOMEM;
  collecting c = {w, q};
  ms_blocks_on(q->threads, q->a.n, MS_HASH_BLOCK, collect_block, &c);
  const part *pt = w->part.p;
  w->npair = 0;
  for (size_t b = 0; b < nblock; b++) {
    if (pt[b].st != MS_OK) return pt[b].st;
    if (ms_append_pairs(&w->pairs, &w->npair, pt[b].pairs.p, pt[b].npair)) return MS_ENOMEM;
  }
  return MS_OK;
}

/* ---------------------------------------------------------------- entry points */

/* the pairs (j, i) of a search from B (w->pairs) turned into (i, j), i ascending and each i's
 * partners in the order found (w->turned: the sort's scratch) */
static ms_status turn(ms_hash *w) {
  int *p = w->pairs.p;
  for (int k = 0; k < w->npair; k++) {
    int j = p[2 * k];
    p[2 * k] = p[2 * k + 1], p[2 * k + 1] = j;
  }
  return ms_group_pairs(p, w->npair, &w->turned) ? MS_ENOMEM : MS_OK;
}

ms_status ms_hash_overlaps(ms_hash **hp, const double *alo, const double *ahi, int na,
                           const double *blo, const double *bhi, int nb, int same, int sorted,
                           double cell, int threads, const int **pairs, int *npair) {
  query q = {{alo, ahi, na, NULL}, {blo, bhi, nb, NULL}, same, sorted, cell, threads};
  if (same) q.b = q.a;
  if (na < 0 || q.b.n < 0 || !(cell > 0 && isfinite(cell)) || !valid(&q.a) || !valid(&q.b))
    return MS_EINPUT;
  ms_hash *w = *hp ? *hp : ms_alloc(1, sizeof(ms_hash));
  if (!w) return MS_ENOMEM;
  ms_status st = MS_ENOMEM;
  // the smaller set searches the other's table (turned pairs come out sorted)
  int turned = !same && nb < na;
  if (turned) {
    boxes a = q.a;
    q.a = q.b, q.b = a, q.sorted = 0;
  }
  if (!ms_grow(&w->arange, 6 * (size_t)q.a.n, sizeof(int), 0) &&
      !ms_grow(&w->brange, 6 * (size_t)q.b.n, sizeof(int), 0)) {
    q.a.range = w->arange.p, q.b.range = same ? q.a.range : w->brange.p;
    q.cell = adapt_cell(w, &q);
    st = build(w, &q);
  }
  if (st == MS_OK) st = collect(w, &q);
  if (st == MS_OK && turned) st = turn(w);
  if (st != MS_OK) {
    if (!*hp) ms_hash_free(w);
    return st;
  }
  *hp = w;
  *pairs = w->pairs.p, *npair = w->npair;
  return MS_OK;
}

/* ms_hash_boxes's loop over primitives [p0, p1), inlined below with idx and k constant where
 * they are */
static inline void boxes_of(const double *x, const int *idx, int p0, int p1, int k, double r,
                            double *lo, double *hi) {
  for (int p = p0; p < p1; p++)
    for (int t = 0; t < 3; t++) {
      double a = INFINITY, b = -INFINITY;
      for (int v = 0; v < k; v++) {
        double c = x[3 * (size_t)(idx ? idx[k * (size_t)p + v] : p) + t];
        a = ms_min(a, c), b = ms_max(b, c);
      }
      lo[3 * (size_t)p + t] = a - r, hi[3 * (size_t)p + t] = b + r;
    }
}

/* what the blocks of ms_hash_boxes share */
typedef struct {
  const double *x;
  const int *idx;
  int k;
  double r, *lo, *hi;
} boxing;

/* the boxes of primitives [p0, p1): points, edges and triangles each a loop of their own,
 * unrolled */
static void boxes_block(void *ctx, int p0, int p1) {
  const boxing *c = ctx;
  if (!c->idx && c->k == 1)
    boxes_of(c->x, NULL, p0, p1, 1, c->r, c->lo, c->hi);
  else if (c->idx && c->k == 2)
    boxes_of(c->x, c->idx, p0, p1, 2, c->r, c->lo, c->hi);
  else if (c->idx && c->k == 3)
    boxes_of(c->x, c->idx, p0, p1, 3, c->r, c->lo, c->hi);
  else
    boxes_of(c->x, c->idx, p0, p1, c->k, c->r, c->lo, c->hi);
}

void ms_hash_boxes(const double *x, const int *idx, int n, int k, double r, int threads, double *lo,
                   double *hi) {
  boxing c = {x, idx, k, r, lo, hi};
  ms_blocks_on(threads, n, MS_HASH_BLOCK, boxes_block, &c);
}
