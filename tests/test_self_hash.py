"""The spatial hash broad phase (csrc/engine/hash.c, Teschner et al. 2003) through its test hooks:
its pairs are exactly those of a brute-force overlap check, in order, for any cell size."""

from __future__ import annotations

import time

import numpy as np
import pytest

import msim
from msim import _core

overlaps, primitive_boxes = _core._box_overlaps, _core._primitive_boxes


def brute(alo, ahi, blo=None, bhi=None) -> np.ndarray:
    """(npair, 2) pairs (i, j) of overlapping closed boxes by an O(n m) check, sorted; i < j
    when B is A (blo None)."""
    same = blo is None
    blo, bhi = (alo, ahi) if same else (blo, bhi)
    hit = np.all((alo[:, None, :] <= bhi[None, :, :]) & (blo[None, :, :] <= ahi[:, None, :]),
                 axis=2)
    if same:
        hit = np.triu(hit, 1)
    return np.argwhere(hit).astype(np.int64).reshape(-1, 2)


def check(alo, ahi, blo=None, bhi=None, cells=(None,)) -> np.ndarray:
    """The hash's pairs for every cell size equal brute force's (same pairs, sorted by (i, j),
    no repeats), and a second call gives the same; returns them."""
    want = brute(alo, ahi, blo, bhi)
    for cell in cells:
        got = overlaps(alo, ahi, blo, bhi, cell=cell)
        assert got.dtype == np.int64 and got.shape == want.shape, cell
        np.testing.assert_array_equal(got, want, err_msg=f"cell={cell}")
        np.testing.assert_array_equal(overlaps(alo, ahi, blo, bhi, cell=cell), got)
    return want


def extent(lo, hi) -> float:
    """The mean box extent (the cell the header advises)."""
    return float(np.mean(hi - lo)) if len(lo) else 1.0


def scales(lo, hi) -> list:
    """Cells from much smaller to much larger than the boxes, and the default."""
    e = max(extent(lo, hi), 1e-3)
    return [None, e / 30, e / 8, e / 2, e, 3 * e, 50 * e, 1e6 * e]


def random_boxes(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n boxes in the unit cube of sizes from ~0 to ~0.5 (cubed uniform: mostly small)."""
    lo = rng.uniform(0, 1, (n, 3))
    return lo, lo + 0.5 * rng.uniform(0, 1, (n, 3)) ** 3


# ---------------------------------------------------------------- crumpled cloth


def grid(n: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An n x n, 1 m cloth in the xz plane: vertices, structural edges, triangles."""
    mesh = msim.mesh.cloth_grid(n, n, size=1.0, shear=False, bending=False)
    return mesh.vertices.copy(), np.asarray(mesh.edges), np.asarray(mesh.faces)


def smooth_field(rng, x: np.ndarray, amplitude: float) -> np.ndarray:
    """x displaced by a random smooth field: a few sine modes per axis."""
    out = x.copy()
    for t in range(3):
        for _ in range(4):
            k, phase = rng.normal(0, 6, 3), rng.uniform(0, 2 * np.pi)
            out[:, t] += amplitude * rng.uniform(0.3, 1) * np.sin(x @ k + phase)
    return out


def folded(x: np.ndarray) -> np.ndarray:
    """x folded onto itself twice (at x = 0.5, then z = 0.5), layers 2 mm apart."""
    out = x.copy()
    for t in (0, 2):
        far = out[:, t] > 0.5
        out[far, t] = 1.0 - out[far, t]
        out[far, 1] += 0.002 * (1 + t)
    return out


def squashed(rng, x: np.ndarray) -> np.ndarray:
    """x crumpled then squashed into a ball of radius ~5 cm, so most primitives overlap."""
    y = smooth_field(rng, x, 0.3) - 0.5
    r = np.linalg.norm(y, axis=1, keepdims=True)
    return 0.05 * y / (1 + r) + 0.002 * rng.standard_normal(x.shape)


def crumpled(kind: str) -> np.ndarray:
    rng = np.random.default_rng({"smooth": 1, "folded": 2, "squashed": 3}[kind])
    x, _, _ = grid()
    if kind == "smooth":
        return smooth_field(rng, x, 0.15)
    if kind == "folded":
        return folded(smooth_field(rng, x, 0.004))
    return squashed(rng, x)


CRUMPLED = ["smooth", "folded", "squashed"]


def test_primitive_boxes_bound_their_vertices_inflated_by_r():
    x, edges, faces = grid(6)
    x = smooth_field(np.random.default_rng(0), x, 0.1)
    for idx in (np.arange(len(x))[:, None], edges, faces):
        lo, hi = primitive_boxes(x, idx, 0.01)
        np.testing.assert_array_equal(lo, x[idx].min(axis=1) - 0.01)
        np.testing.assert_array_equal(hi, x[idx].max(axis=1) + 0.01)


def test_random_boxes_of_mixed_sizes_match_brute_force():
    rng = np.random.default_rng(7)
    lo, hi = random_boxes(rng, 400)
    assert len(check(lo, hi, cells=scales(lo, hi))) > 500
    alo, ahi = random_boxes(rng, 150)
    assert len(check(alo, ahi, lo, hi, cells=scales(lo, hi))) > 500


@pytest.mark.parametrize("kind", CRUMPLED)
def test_points_against_triangles_of_a_crumpled_cloth_match_brute_force(kind):
    x = crumpled(kind)
    _, _, faces = grid()
    h = 1 / 19
    plo, phi = primitive_boxes(x, np.arange(len(x))[:, None], 0.3 * h)
    tlo, thi = primitive_boxes(x, faces, 0.3 * h)
    pairs = check(plo, phi, tlo, thi, cells=scales(tlo, thi))
    assert len(pairs) > 3 * len(x)  # every point meets at least its own triangles


@pytest.mark.parametrize("kind", CRUMPLED)
def test_edges_against_edges_of_a_crumpled_cloth_match_brute_force(kind):
    x = crumpled(kind)
    _, edges, _ = grid()
    lo, hi = primitive_boxes(x, edges, 0.3 / 19)
    pairs = check(lo, hi, cells=scales(lo, hi))
    assert len(pairs) > len(edges)
    if kind == "squashed":  # most edges of the ball meet
        assert len(pairs) > 0.2 * len(edges) ** 2 / 2


def test_one_huge_box_meets_every_box():
    rng = np.random.default_rng(3)
    lo, hi = random_boxes(rng, 200)
    lo = np.vstack([lo[:100], [[-1e9, -1e9, -1e9]], lo[100:]])
    hi = np.vstack([hi[:100], [[1e9, 1e9, 1e9]], hi[100:]])
    pairs = check(lo, hi, cells=scales(lo[:100], hi[:100]))
    assert np.sum((pairs[:, 0] == 100) | (pairs[:, 1] == 100)) == 200
    # and as a set of its own, against the others
    check(lo[100:101], hi[100:101], lo, hi, cells=[None, 0.01, 1.0])
    check(lo, hi, lo[100:101], hi[100:101], cells=[None, 0.01, 1.0])


def test_a_few_long_boxes_among_short_ones_match_brute_force():
    # sticks along each axis among 900 short boxes: a few are checked against every box, as a
    # search that reached back over one would visit many cells; many set how far searches reach
    rng = np.random.default_rng(13)
    lo = rng.uniform(0, 1, (900, 3))
    hi = lo + 0.03
    for sticks in (3, 40):
        slo = rng.uniform(0, 1, (3 * sticks, 3))
        shi = slo + 0.05
        for t in range(3):
            shi[t * sticks : (t + 1) * sticks, t] += 0.5
        blo, bhi = np.vstack([lo, slo]), np.vstack([hi, shi])
        cells = [None, 0.03, 0.01]
        for args in ((blo, bhi), (lo, hi, blo, bhi), (blo, bhi, lo, hi)):
            pairs = check(*args, cells=cells)
            assert np.sum(np.any(pairs >= len(lo), axis=1)) > 2 * sticks  # pairs with a stick


def test_boxes_far_beyond_the_cells_integer_range():
    # 1e9 m / 1e-3 m cells: cell coordinates beyond int; a few boxes, or many
    rng = np.random.default_rng(4)
    for far in (3, 200):
        lo, hi = random_boxes(rng, 600)
        lo[:far] += 1e9
        hi[:far] += 1e9
        lo[far : 2 * far] = 1e9 + rng.uniform(0, 1, (far, 3))
        hi[far : 2 * far] = lo[far : 2 * far] + 0.3
        check(lo, hi, cells=[1e-3, 0.05, None])


def test_zero_size_touching_and_identical_boxes():
    rng = np.random.default_rng(5)
    # points on a lattice, some repeated: zero-size boxes meet only where they coincide
    p = rng.integers(0, 6, (300, 3)) * 0.25
    assert len(check(p, p, cells=[None, 0.25, 0.1, 1.0, 0.3])) > 0
    # boxes of a lattice that touch face to face on cell boundaries (closed intervals meet)
    c = np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3) * 0.25
    pairs = check(c, c + 0.25, cells=[None, 0.25, 0.125, 0.5, 1.0])
    # each meets the boxes one step away along every axis: 4 + 2 * 3 ordered per axis
    assert len(pairs) == (10**3 - 64) // 2
    # points against boxes, and zero-size boxes against themselves
    lo, hi = random_boxes(rng, 100)
    check(p, p, lo, hi, cells=scales(lo, hi))
    check(lo, lo, cells=[None, 0.1])


def test_boxes_strung_along_a_space_diagonal_match_brute_force():
    # the cells' grid box holds ~n^3 cells for n boxes: too sparse for a dense grid, so the
    # table hashes them (a cloth fills its grid box densely and is indexed without hashing)
    t = np.linspace(0, 1, 600)[:, None]
    lo = t * np.array([1.0, 0.8, 0.6]) + np.random.default_rng(11).uniform(0, 1e-3, (600, 3))
    hi = lo + 0.004
    pairs = check(lo, hi, cells=[None, 0.002, 0.004])
    assert len(pairs) >= 599  # each box meets the next


@pytest.mark.parametrize("in_order", [True, False])
def test_pairs_do_not_depend_on_the_thread_count(in_order):
    # 50 x 50: several blocks of boxes, which threads share out and which are joined in order.
    # Unsorted (for a caller that sorts them itself or keeps a set, as the planar certificate's
    # searches and boundary test do): the same pairs, A's boxes still ascending, each one's
    # partners in the grid's order, which is not the sorted one but as fixed; where B is the
    # smaller set (its boxes search A's table and the pairs are turned), sorted all the same
    x, edges, faces = grid(50)
    x = smooth_field(np.random.default_rng(12), x, 0.15)
    lo, hi = primitive_boxes(x, edges, 0.005)
    tlo, thi = primitive_boxes(x, faces, 0.0)
    for args in ((lo, hi), (tlo, thi, lo, hi), (lo, hi, tlo, thi)):
        serial = overlaps(*args, sorted=in_order)
        assert len(serial) > 4 * min(len(args[0]), len(args[-2]))
        if not in_order:
            turned = len(args) == 4 and len(args[2]) < len(args[0])
            in_sorted_order = np.lexsort((serial[:, 1], serial[:, 0])) == np.arange(len(serial))
            assert np.all(np.diff(serial[:, 0]) >= 0) and np.all(in_sorted_order) == turned
            np.testing.assert_array_equal(np.unique(serial, axis=0), overlaps(*args))
        for threads in (2, 3):
            np.testing.assert_array_equal(overlaps(*args, threads=threads, sorted=in_order),
                                          serial)


def test_empty_sets():
    none = np.zeros((0, 3))
    lo, hi = random_boxes(np.random.default_rng(6), 10)
    for args in [(none, none), (none, none, none, none), (none, none, lo, hi),
                 (lo, hi, none, none), (lo[:1], hi[:1])]:
        got = overlaps(*args)
        assert got.shape == (0, 2) and got.dtype == np.int64
        got = overlaps(*args, cell=0.01)
        assert got.shape == (0, 2)


def test_pairs_do_not_depend_on_the_cell_or_the_call():
    x = crumpled("smooth")
    _, edges, _ = grid()
    lo, hi = primitive_boxes(x, edges, 0.01)
    first = overlaps(lo, hi)
    for cell in [1e-4, 0.003, 0.02, 0.1, 1.0, 1e3]:
        for _ in range(2):
            np.testing.assert_array_equal(overlaps(lo, hi, cell=cell), first)


def test_bad_input_is_refused_naming_the_argument():
    lo, hi = random_boxes(np.random.default_rng(8), 5)
    for bad in (np.nan, np.inf, -np.inf):
        worse = lo.copy()
        worse[2, 1] = bad
        with pytest.raises(ValueError, match="alo"):
            overlaps(worse, hi)
        with pytest.raises(ValueError, match="bhi"):
            overlaps(lo, hi, lo, np.where(hi > 0.5, bad, hi))
        with pytest.raises(ValueError, match="x"):
            primitive_boxes(worse, [[0, 1]], 0.1)
    with pytest.raises(ValueError, match="ahi"):
        overlaps(lo, lo - 1)  # lo > hi
    with pytest.raises(ValueError, match="ahi"):
        overlaps(lo, hi[:4])
    with pytest.raises(ValueError, match="alo"):
        overlaps(lo[:, :2], hi[:, :2])
    with pytest.raises(ValueError, match="blo"):
        overlaps(lo, hi, lo)
    for cell in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="cell"):
            overlaps(lo, hi, cell=cell)
    with pytest.raises(ValueError, match="idx"):
        primitive_boxes(lo, [[0, 5]], 0.1)
    with pytest.raises(ValueError, match="idx"):
        primitive_boxes(lo, [[0, 1, 2, 3]], 0.1)
    with pytest.raises(ValueError, match="r"):
        primitive_boxes(lo, [[0, 1]], -0.1)
    with pytest.raises(ValueError, match="threads"):
        overlaps(lo, hi, threads=0)


@pytest.mark.parametrize("turned", [False, True])
def test_out_of_memory_leaves_nothing_half_built(turned):
    # every allocation of a call failing in turn (the k-th from the call's start), until one
    # that makes none fails; turned: B the smaller set, whose boxes search A's table (its pairs
    # are turned in buffers of their own)
    lo, hi = random_boxes(np.random.default_rng(9), 200)
    args = (lo, hi, lo[:50], hi[:50]) if turned else (lo, hi)
    want = brute(*args)
    failed = 0
    try:
        for k in range(1, 100):
            _core._fail_allocation(k)
            try:
                got = overlaps(*args, cell=0.05)
            except MemoryError:
                failed += 1
                continue
            finally:
                _core._fail_allocation(0)
            np.testing.assert_array_equal(got, want)
            break
    finally:
        _core._fail_allocation(0)
    assert 10 <= failed < 99  # the workspace and each of its arrays, then a whole call
    np.testing.assert_array_equal(overlaps(*args), want)


def test_time_of_a_flat_100x100_cloth():
    # printed, not asserted: points vs triangles and edges vs edges, r = 0.3 edge lengths
    mesh = msim.mesh.cloth_grid(100, 100, size=1.0, shear=False, bending=False)
    x, h = mesh.vertices, 1 / 99
    r = 0.3 * h
    plo, phi = primitive_boxes(x, np.arange(len(x))[:, None], r)
    tlo, thi = primitive_boxes(x, np.asarray(mesh.faces), r)
    elo, ehi = primitive_boxes(x, np.asarray(mesh.edges), r)
    for name, args in [("points-triangles", (plo, phi, tlo, thi)), ("edges-edges", (elo, ehi))]:
        best = np.inf
        for _ in range(5):
            t0 = time.perf_counter()
            pairs = overlaps(*args, cell=h + 2 * r)
            best = min(best, time.perf_counter() - t0)
        print(f"\nhash {name}: {len(args[0])} x {len(args[-2])} boxes, {len(pairs)} pairs, "
              f"{1e3 * best:.2f} ms")
        assert len(pairs) > len(args[0])
