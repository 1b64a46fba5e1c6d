/* disk.c: whether a triangle mesh is one topological disk, its triangles' neighbours and those
 * on its boundary
 *
 * A surface is a disk when it is connected, orientable, a manifold with boundary and of Euler
 * characteristic V - E + F = 2 - 2g - b = 1 with one boundary loop; all of that is read from
 * the triangles' half-edges: each inner edge in exactly two triangles that run along it in
 * opposite directions (orientable, no edge in three), the corners around each vertex joined
 * across its inner edges into one fan (no two sheets pinched at a vertex), the triangles
 * joined across inner edges into one piece, and V - E + F = 1 (with one fan per vertex, one
 * boundary loop follows). planar.c's certificate holds for disks only.
 */
#include <stdlib.h>

#include "disk.h"

/* one half-edge: face f's edge from its corner k to corner k + 1, keyed by its ends */
typedef struct {
  int lo, hi, f, k;
} half;

static int compare_half(const void *a, const void *b) {
  const half *x = a, *y = b;
  if (x->lo != y->lo) return (x->lo > y->lo) - (x->lo < y->lo);
  return (x->hi > y->hi) - (x->hi < y->hi);
}

static int root(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

static void unite(int *parent, int i, int j) {
  parent[root(parent, i)] = root(parent, j);
}

/* the halves of m's triangles, sorted by their ends */
static void halves(const ms_model *m, half *h) {
  for (int f = 0; f < m->nf; f++)
    for (int k = 0; k < 3; k++) {
      int a = m->face[3 * f + k], b = m->face[3 * f + (k + 1) % 3];
      h[3 * f + k] = (half){a < b ? a : b, a < b ? b : a, f, k};
    }
  qsort(h, 3 * (size_t)m->nf, sizeof(half), compare_half);
}

/* the vertex at corner k (mod 3) of face f */
static int corner_vertex(const ms_model *m, int f, int k) {
  return m->face[3 * f + k % 3];
}

/* 1 when the sorted halves make m a disk: corners joined across each inner edge into fans
 * (corner[] a union-find over the 3 nf corners), faces across it into pieces (piece[]) and
 * neighbours (twin[3 f + k]: the face across f's edge from corner k, -1 on the boundary) */
static int is_disk(const ms_model *m, const half *h, int *corner, int *piece, int *vfan,
                   int *twin) {
  int n = 3 * m->nf;
  for (int c = 0; c < n; c++) corner[c] = c, twin[c] = -1;
  for (int f = 0; f < m->nf; f++) piece[f] = f;
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && !compare_half(h + i, h + j)) j++;
    const half *p = h + i, *q = h + i + 1;
    if (j - i == 2 && corner_vertex(m, p->f, p->k) == corner_vertex(m, q->f, q->k + 1)) {
      // p runs a -> b, q b -> a: the corners at a, and those at b, share the edge
      unite(corner, 3 * p->f + p->k, 3 * q->f + (q->k + 1) % 3);
      unite(corner, 3 * p->f + (p->k + 1) % 3, 3 * q->f + q->k);
      unite(piece, p->f, q->f);
      twin[3 * p->f + p->k] = q->f, twin[3 * q->f + q->k] = p->f;
    } else if (j - i != 1) {
      return 0; /* three triangles on an edge, or two running the same way */
    }
    i = j;
  }
  // one fan per vertex, one piece
  for (int v = 0; v < m->nv; v++) vfan[v] = -1;
  for (int c = 0; c < n; c++) {
    int v = m->face[c], r = root(corner, c);
    if (vfan[v] >= 0 && vfan[v] != r) return 0;
    vfan[v] = r;
  }
  for (int f = 0; f < m->nf; f++)
    if (root(piece, f) != root(piece, 0)) return 0;
  return 1;
}

/* the triangles with an edge on the boundary (twin -1), ascending, into list; their count */
static int boundary_faces(const ms_model *m, const int *twin, int *list) {
  int n = 0;
  for (int f = 0; f < m->nf; f++)
    if (twin[3 * f] < 0 || twin[3 * f + 1] < 0 || twin[3 * f + 2] < 0) list[n++] = f;
  return n;
}

ms_status ms_model_disk(ms_model *m) {
  size_t n = 3 * (size_t)m->nf;
  // V - E + F = 1 (E counted by ms_model_faces) first: a vertex in no triangle breaks it too
  int disk = m->nf > 0 && (long long)m->nv - m->ne + m->nf == 1;
  half *h = disk ? ms_alloc(n, sizeof(half)) : NULL;
  int *corner = disk ? ms_alloc(n, sizeof(int)) : NULL;
  int *piece = disk ? ms_alloc(m->nf, sizeof(int)) : NULL;
  int *vfan = disk ? ms_alloc(m->nv, sizeof(int)) : NULL;
  int *twin = disk ? ms_alloc(n, sizeof(int)) : NULL;
  int *bound = disk ? ms_alloc(m->nf, sizeof(int)) : NULL;
  if (disk && (!h || !corner || !piece || !vfan || !twin || !bound)) {
    free(h), free(corner), free(piece), free(vfan), free(twin), free(bound);
    return MS_ENOMEM;
  }
  if (disk) {
    halves(m, h);
    disk = is_disk(m, h, corner, piece, vfan, twin);
    for (int v = 0; v < m->nv && disk; v++) disk = vfan[v] >= 0;
  }
  free(h), free(corner), free(piece), free(vfan), free(m->ftwin), free(m->fbound);
  if (!disk) free(twin), free(bound), twin = bound = NULL;
  m->disk = disk, m->ftwin = twin, m->fbound = bound;
  m->nfbound = disk ? boundary_faces(m, twin, bound) : 0;
  return MS_OK;
}
