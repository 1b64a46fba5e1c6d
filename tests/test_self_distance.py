"""Self-contact distance kernels (csrc/engine/distance.c, through the test hooks
msim._core._pair_distance and _segment_meets_triangle): squared distances of point-triangle and
edge-edge pairs with their gradients and Hessians, against ipctk (IPC's toolkit, whose
*_distance functions also return squared distances), against an independent brute force, and
against central finite differences; the segment-triangle test against ipctk and a brute
force."""

import itertools

import numpy as np
import pytest

from msim import _core

try:
    import ipctk
except ImportError:  # the test extra installs it
    ipctk = None

needs_ipctk = pytest.mark.skipif(ipctk is None, reason="ipctk (msim[test]) is not installed")

PT_TYPES = 7  # ipctk's point-triangle cases: 3 vertices, 3 edges, the face
EE_TYPES = 9  # ipctk's edge-edge cases


def ours(kind, x):
    return _core._pair_distance(kind, x)


def theirs(kind, x):
    if kind == "pt":
        f = (ipctk.point_triangle_distance, ipctk.point_triangle_distance_gradient,
             ipctk.point_triangle_distance_hessian)
    else:
        f = (ipctk.edge_edge_distance, ipctk.edge_edge_distance_gradient,
             ipctk.edge_edge_distance_hessian)
    return tuple(fn(*x) for fn in f)


def their_type(kind, x):
    return (ipctk.point_triangle_distance_type if kind == "pt" else ipctk.edge_edge_distance_type)(*x)


def assert_close(a, b, rtol=1e-12, what=""):
    """a == b to rtol, relative to b's largest magnitude (a Hessian's small entries included)."""
    scale = np.max(np.abs(b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what)


def assert_finite(d2, g, h):
    assert np.isfinite(d2) and d2 >= 0
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


# ---------------------------------------------------------------- generators


def _unit(v):
    return v / np.linalg.norm(v)


def _angles(t):
    """the three angles of triangle t (3, 3) [rad]"""
    out = []
    for i in range(3):
        a, b = t[(i + 1) % 3] - t[i], t[(i + 2) % 3] - t[i]
        out.append(np.arccos(np.clip(np.dot(_unit(a), _unit(b)), -1, 1)))
    return out


def _triangle(rng):
    """a random triangle with no angle under 15 degrees"""
    while True:
        t = rng.normal(size=(3, 3))
        if min(_angles(t)) > np.radians(15):
            return t


def pt_cases(rng, n):
    """point-triangle pairs (4, 3) with the point above the face, beyond an edge or in a
    vertex's wedge, in turn, each at least 0.05 (relative) inside its region"""
    cases = []
    for k in range(n):
        t = _triangle(rng)
        normal = _unit(np.cross(t[1] - t[0], t[2] - t[0]))
        h = rng.choice([-1, 1]) * rng.uniform(0.05, 1.0)
        region, i = k % 3, rng.integers(3)
        j, l = (i + 1) % 3, (i + 2) % 3
        if region == 0:  # above the face
            w = rng.dirichlet([2, 2, 2])
            while w.min() < 0.05:
                w = rng.dirichlet([2, 2, 2])
            p = w @ t + h * normal
        elif region == 1:  # beyond edge (i, j), between its ends
            e = t[j] - t[i]
            out = _unit(np.cross(e, normal))
            p = t[i] + rng.uniform(0.1, 0.9) * e + rng.uniform(0.1, 1.0) * out
            p += rng.uniform(-1, 1) * normal
        else:  # in vertex i's wedge: along minus the bisector of its edges
            bis = _unit(_unit(t[j] - t[i]) + _unit(t[l] - t[i]))
            p = t[i] - rng.uniform(0.1, 1.0) * bis + rng.uniform(-1, 1) * normal
        cases.append(np.vstack([p, t]))
    return cases


def ee_cases(rng, n):
    """edge-edge pairs (4, 3): two segments on skew lines at least 15 degrees apart, the lines'
    closest points c on a and c + d n on b at parameters s0, t0 in [-1, 2] (so every one of
    the 9 clamped cases comes up)"""
    cases = []
    while len(cases) < n:
        c, nrm = rng.normal(size=3), _unit(rng.normal(size=3))
        u = rng.normal(size=3)
        v = rng.normal(size=3)
        u -= np.dot(u, nrm) * nrm
        v -= np.dot(v, nrm) * nrm
        cos = abs(np.dot(_unit(u), _unit(v)))
        if cos > np.cos(np.radians(15)):
            continue
        s0, t0, d = rng.uniform(-1, 2), rng.uniform(-1, 2), rng.uniform(0.05, 1.0)
        a0 = c - s0 * u
        b0 = c + d * nrm - t0 * v
        cases.append(np.array([a0, a0 + u, b0, b0 + v]))
    return cases


# ---------------------------------------------------------------- an independent brute force


def _point_segment(p, a, b):
    e = b - a
    ee = np.dot(e, e)
    s = 0.0 if ee == 0 else np.clip(np.dot(p - a, e) / ee, 0, 1)
    r = p - a - s * e
    return np.dot(r, r)


def brute_pt(x):
    """least squared distance over the triangle's edges and, where the foot of p falls inside,
    the plane"""
    p, t0, t1, t2 = x
    d = [_point_segment(p, t0, t1), _point_segment(p, t1, t2), _point_segment(p, t2, t0)]
    n = np.cross(t1 - t0, t2 - t0)
    q = p - np.dot(p - t0, n) / np.dot(n, n) * n
    inside = all(np.dot(np.cross(t[1] - t[0], q - t[0]), n) >= 0
                 for t in [(t0, t1), (t1, t2), (t2, t0)])
    if inside:
        d.append(np.dot(p - t0, n) ** 2 / np.dot(n, n))
    return min(d)


def brute_ee(x):
    """least squared distance over the four point-segment distances and, where the lines'
    closest points lie on both segments, the lines' distance (not for nearly parallel lines,
    where the ends' distances are within sin^2 L^2 of it)"""
    a0, a1, b0, b1 = x
    d = [_point_segment(a0, b0, b1), _point_segment(a1, b0, b1), _point_segment(b0, a0, a1),
         _point_segment(b1, a0, a1)]
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    m = np.array([[np.dot(u, u), -np.dot(u, v)], [-np.dot(u, v), np.dot(v, v)]])
    if np.linalg.det(m) < 1e-12 * m[0, 0] * m[1, 1]:
        return min(d)
    s, t = np.linalg.solve(m, [-np.dot(u, w), np.dot(v, w)])
    if 0 <= s <= 1 and 0 <= t <= 1:
        r = w + s * u - t * v
        d.append(np.dot(r, r))
    return min(d)


# ---------------------------------------------------------------- finite differences


def fd_check(kind, x, h=1e-6, rtol=1e-6):
    """our gradient against central differences of our d2, our Hessian against central
    differences of our gradient; returns False (unchecked) where the Hessian jumps across the
    step (the closest features change within it)"""
    d2, g, hess = ours(kind, x)
    fd_g, fd_h = np.zeros(12), np.zeros((12, 12))
    for i in range(12):
        xp, xm = x.copy(), x.copy()
        xp.flat[i] += h
        xm.flat[i] -= h
        (dp, gp, hp), (dm, gm, hm) = ours(kind, xp), ours(kind, xm)
        if np.max(np.abs(hp - hm)) > 1e-3 * (1 + np.max(np.abs(hess))):
            return False
        fd_g[i] = (dp - dm) / (2 * h)
        fd_h[i] = (gp - gm) / (2 * h)
    assert_close(g, fd_g, rtol, "gradient vs finite differences")
    assert_close(hess, fd_h, rtol, "Hessian vs finite differences")
    return True


# ---------------------------------------------------------------- against ipctk


@needs_ipctk
@pytest.mark.parametrize("kind, cases", [
    ("pt", lambda: pt_cases(np.random.default_rng(1), 600)),
    ("ee", lambda: ee_cases(np.random.default_rng(2), 900)),
], ids=["pt", "ee"])
def test_distance_gradient_hessian_match_ipctk_in_every_region(kind, cases):
    seen = set()
    for x in cases():
        d2, g, h = ours(kind, x)
        td2, tg, th = theirs(kind, x)
        seen.add(their_type(kind, x))
        what = f"{kind} {their_type(kind, x)} at {x.tolist()}"
        assert_close(d2, td2, what=what)
        assert_close(g, tg, what=what)
        assert_close(h, th, what=what)
        assert_finite(d2, g, h)
    assert len(seen) == (PT_TYPES if kind == "pt" else EE_TYPES), seen


@needs_ipctk
@pytest.mark.parametrize("kind", ["pt", "ee"])
def test_random_pairs_match_ipctk(kind):
    rng = np.random.default_rng(3)
    for _ in range(500):
        x = rng.normal(size=(4, 3))
        d2, g, h = ours(kind, x)
        td2, tg, th = theirs(kind, x)
        assert_close(d2, td2)
        assert_close(g, tg)
        assert_close(h, th)


@pytest.mark.parametrize("kind, cases", [
    ("pt", lambda: pt_cases(np.random.default_rng(4), 300)),
    ("ee", lambda: ee_cases(np.random.default_rng(5), 300)),
], ids=["pt", "ee"])
def test_distance_matches_a_brute_force(kind, cases):
    brute = brute_pt if kind == "pt" else brute_ee
    for x in cases():
        assert_close(ours(kind, x)[0], brute(x), 1e-10, f"{kind} at {x.tolist()}")


@pytest.mark.parametrize("kind, cases", [
    ("pt", lambda: pt_cases(np.random.default_rng(6), 150)),
    ("ee", lambda: ee_cases(np.random.default_rng(7), 150)),
], ids=["pt", "ee"])
def test_gradient_and_hessian_are_the_derivatives_of_the_distance(kind, cases):
    checked = [fd_check(kind, x) for x in cases()]
    assert np.mean(checked) > 0.95


def test_hessian_is_symmetric():
    rng = np.random.default_rng(8)
    for x in pt_cases(rng, 60) + ee_cases(rng, 60):
        for kind in ["pt", "ee"]:
            h = ours(kind, x)[2]
            assert_close(h, h.T)


# ---------------------------------------------------------------- near-parallel edges


def _frame(rng):
    e1 = _unit(rng.normal(size=3))
    e2 = _unit(np.cross(e1, rng.normal(size=3)))
    return e1, e2, np.cross(e1, e2)


def near_parallel_cases(rng, n, angle, overlap=True):
    """segments at the given angle: b beside a (offset 0.05..1 across) and overlapping it along
    its direction, or beyond a's end; tilted in or out of their plane, b reversed or not"""
    cases = []
    for k in range(n):
        e1, e2, e3 = _frame(rng)
        tilt = e2 if k % 2 else e3
        la, lb = rng.uniform(0.5, 2, size=2)
        along = rng.uniform(-0.5 * lb, la) if overlap else la + rng.uniform(0.1, 1)
        a0 = rng.normal(size=3)
        b0 = a0 + along * e1 + rng.uniform(0.05, 1) * e2
        v = lb * (np.cos(angle) * e1 + np.sin(angle) * tilt)
        seg = [b0, b0 + v] if k % 4 < 2 else [b0 + v, b0]
        cases.append(np.array([a0, a0 + la * e1, *seg]))
    return cases


def exactly_parallel_cases(rng, n):
    """segments along one small-integer direction from dyadic points: u x v is exactly 0"""
    cases = []
    for _ in range(n):
        direction = rng.integers(-3, 4, size=3)
        while not direction.any():
            direction = rng.integers(-3, 4, size=3)
        a0, b0 = rng.integers(-16, 17, size=(2, 3)) / 8
        ka, kb = rng.choice([-2, -1, 1, 2], size=2)
        x = np.array([a0, a0 + ka * direction, b0, b0 + kb * direction], dtype=float)
        if np.linalg.norm(np.cross(direction, b0 - a0)) > 0:  # not on one line
            cases.append(x)
    return cases


def point_edge_candidates(x, triples):
    """ipctk's point-edge distance of each (point, edge) in triples with its gradient and
    Hessian in the pair's 12 coordinates"""
    out = []
    for p, e0, e1 in triples:
        idx = np.concatenate([np.arange(3 * i, 3 * i + 3) for i in (p, e0, e1)])
        pts = (x[p], x[e0], x[e1])
        g, h = np.zeros(12), np.zeros((12, 12))
        g[idx] = ipctk.point_edge_distance_gradient(*pts)
        h[np.ix_(idx, idx)] = ipctk.point_edge_distance_hessian(*pts)
        out.append((ipctk.point_edge_distance(*pts), g, h))
    return out


EE_POINT_EDGES = [(0, 2, 3), (1, 2, 3), (2, 0, 1), (3, 0, 1)]
PT_POINT_EDGES = [(0, 1, 2), (0, 2, 3), (0, 3, 1)]


def assert_least_point_edge(kind, x, triples):
    """d2 is the least of the point-edge distances, and its gradient and Hessian those of one
    attaining it"""
    d2, g, h = ours(kind, x)
    assert_finite(d2, g, h)
    cands = point_edge_candidates(x, triples)
    least = min(c[0] for c in cands)
    assert_close(d2, least, what=str(x.tolist()))
    tied = [c for c in cands if abs(c[0] - least) <= 1e-12 * max(least, 1e-300)]
    assert any(np.allclose(g, cg, rtol=0, atol=1e-12 * np.max(np.abs(cg)))
               and np.allclose(h, ch, rtol=0, atol=1e-12 * np.max(np.abs(ch)))
               for _, cg, ch in tied), str(x.tolist())


@needs_ipctk
@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-9])
def test_near_parallel_edges_take_the_least_point_edge_distance(angle):
    rng = np.random.default_rng(9)
    cases = near_parallel_cases(rng, 200, angle) + near_parallel_cases(rng, 50, angle, False)
    for x in cases:
        assert_least_point_edge("ee", x, EE_POINT_EDGES)
        # ipctk takes one point-edge pair by its own rule: the same distance up to ~angle L d
        assert_close(ours("ee", x)[0], ipctk.edge_edge_distance(*x), 1e-7)
        assert_close(ours("ee", x)[0], brute_ee(x), 1e-7)


@needs_ipctk
def test_exactly_parallel_edges_match_ipctk():
    for x in exactly_parallel_cases(np.random.default_rng(10), 300):
        assert_least_point_edge("ee", x, EE_POINT_EDGES)
        assert_close(ours("ee", x)[0], ipctk.edge_edge_distance(*x))


def test_near_parallel_edges_apart_along_their_line_follow_finite_differences():
    # b beyond a's end: one nearest pair of ends, no tie, so d2 is smooth there
    rng = np.random.default_rng(11)
    for angle in [0.0, 1e-9]:
        cases = near_parallel_cases(rng, 40, angle, overlap=False)
        assert all(fd_check("ee", x) for x in cases)


@needs_ipctk
def test_the_parallel_switch_is_continuous():
    # the formula changes at sin = 1e-8 (line-line to the least point-edge distance), ipctk's at
    # 1.6e-8: on both sides of each, the two agree to the error of either formula there
    for seed in range(20):
        for angle in np.geomspace(1e-10, 1e-6, 17):
            x = near_parallel_cases(np.random.default_rng(seed), 1, angle)[0]
            assert_close(ours("ee", x)[0], ipctk.edge_edge_distance(*x), 1e-6, str(angle))


# ---------------------------------------------------------------- degenerate primitives


def degenerate_triangle_cases(rng, n):
    """a point against collinear triangles (third vertex on the line of the others, before,
    between or beyond them) and triangles with coincident vertices"""
    cases = []
    for k in range(n):
        p, t0, t1 = rng.normal(size=(3, 3))
        shape = k % 4
        if shape == 0:
            t2 = t0 + rng.choice([-1.0, 0.5, 2.0]) * (t1 - t0)
            tri = [t0, t1, t2]
        elif shape == 1:
            tri = [t0, t0.copy(), t1]  # t0 = t1
        elif shape == 2:
            tri = [t0, t1, t1.copy()]  # t1 = t2
        else:
            tri = [t0, t0.copy(), t0.copy()]  # a point
        roll = k % 3
        cases.append(np.array([p, *tri[roll:], *tri[:roll]]))
    return cases


@needs_ipctk
def test_degenerate_triangles_take_the_least_point_edge_distance():
    for x in degenerate_triangle_cases(np.random.default_rng(15), 200):
        assert_least_point_edge("pt", x, PT_POINT_EDGES)


@needs_ipctk
def test_degenerate_edges_take_the_least_point_edge_distance():
    rng = np.random.default_rng(16)
    for k in range(200):
        x = rng.normal(size=(4, 3))
        x[1 + 2 * (k % 2)] = x[2 * (k % 2)]  # a0 = a1 or b0 = b1
        if k % 5 == 0:
            x[1], x[3] = x[0], x[2]  # both
        assert_least_point_edge("ee", x, EE_POINT_EDGES)


def test_no_output_is_ever_nan():
    rng = np.random.default_rng(17)
    cases = [np.zeros((4, 3)), np.ones((4, 3))]
    for scale in [1e-300, 1e-150, 1e-20, 1.0, 1e20, 1e100]:
        for _ in range(20):
            x = rng.normal(size=(4, 3))
            cases += [scale * x, 1.0 + scale * x, scale * np.round(x)]
            y = x.copy()
            y[1:] = x[0] + 1e-200 * y[1:]  # three points within 1e-200 of the first
            cases.append(y)
    cases += degenerate_triangle_cases(rng, 20) + exactly_parallel_cases(rng, 20)
    cases += near_parallel_cases(rng, 20, 1e-15)
    for x in cases:
        for kind in ["pt", "ee"]:
            d2, g, h = ours(kind, x)
            assert_finite(d2, g, h)


def test_scaling_is_exact():
    # d2 scales as x^2, its gradient as x, its Hessian not at all; by a power of two, exactly
    rng = np.random.default_rng(18)
    for x in pt_cases(rng, 20) + ee_cases(rng, 20):
        for kind in ["pt", "ee"]:
            d2, g, h = ours(kind, x)
            d2s, gs, hs = ours(kind, x * 2.0**-600)
            assert d2s == d2 * 2.0**-1200 and np.array_equal(gs, g * 2.0**-600)
            assert np.array_equal(hs, h)


# ---------------------------------------------------------------- segment-triangle


def brute_meets(x):
    """(meets, margin): the segment's parameter s and the barycentrics (u, v) of where its line
    crosses the triangle's plane, solved directly; the margin is how far inside (> 0) or
    outside (< 0) the nearest of s in [0, 1], u, v >= 0, u + v <= 1 is, None when the segment
    is nearly parallel to the plane"""
    p, q, t0, t1, t2 = x
    m = np.column_stack([t1 - t0, t2 - t0, p - q])
    if np.linalg.cond(m) > 1e8:
        return None, None
    u, v, s = np.linalg.solve(m, p - t0)
    margin = min(s, 1 - s, u, v, 1 - u - v)
    return bool(margin >= 0), margin


def test_segment_triangle_matches_ipctk_and_a_brute_force():
    rng = np.random.default_rng(19)
    hits = misses = 0
    for k in range(3000):
        x = rng.normal(size=(5, 3))
        if k % 2:  # aimed near the triangle's centroid
            c = x[2:].mean(axis=0) + 0.3 * rng.normal(size=3)
            x[1] = c + rng.uniform(0.2, 2) * (c - x[0])
        expected, margin = brute_meets(x)
        if expected is None or abs(margin) < 1e-9:
            continue
        got = _core._segment_meets_triangle(x)
        assert got is expected, x.tolist()
        if ipctk is not None:
            assert ipctk.is_edge_intersecting_triangle(*x) is expected
        hits, misses = hits + got, misses + (not got)
    assert hits > 500 and misses > 500


T = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
LINE = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float)
POINT = np.zeros((3, 3))
TINY = 2.0**-20
# (segment, triangle, meets, across): dyadic coordinates, so touching is exact; across: the
# segment crosses the triangle's plane (one end strictly off it) and the triangle has an area
CONSTRUCTED = [
    ([[0.25, 0.25, -1], [0.25, 0.25, 1]], T, True, True),  # through the face
    ([[0.75, 0.75, -1], [0.75, 0.75, 1]], T, False, True),  # beside it
    ([[0.25, 0.25, 0.5], [0.25, 0.25, 1]], T, False, True),  # short of it
    ([[0.25, 0.25, 0], [0.25, 0.25, 1]], T, True, True),  # an end on the face
    ([[0, 0, -1], [0, 0, 1]], T, True, True),  # through a vertex
    ([[0.5, 0, -1], [0.5, 0, 1]], T, True, True),  # through an edge
    ([[0.5, 0.5, -1], [0.5, 0.5, 1]], T, True, True),  # through the hypotenuse
    ([[0.5, 0.5 + TINY, -1], [0.5, 0.5 + TINY, 1]], T, False, True),  # just beside it
    ([[0.5, 0, 0], [0.5, -1, 1]], T, True, True),  # an end on an edge
    ([[1, 1, 0], [2, 2, 1]], T, False, True),  # an end in the plane, outside
    ([[-1, 0.25, 0], [2, 0.25, 0]], T, True, False),  # in the plane, across
    ([[0.125, 0.125, 0], [0.25, 0.25, 0]], T, True, False),  # in the plane, inside
    ([[1, 1, 0], [2, 2, 0]], T, False, False),  # in the plane, outside
    ([[1, 0, 0], [2, 0, 0]], T, True, False),  # along an edge's line, touching a vertex
    ([[-0.5, 0, 0], [0.5, 0, 0]], T, True, False),  # overlapping an edge
    ([[2, 0, 0], [3, 0, 0]], T, False, False),  # on an edge's line, apart
    ([[0.5, 0.5, 0], [1, 1, 0]], T, True, False),  # an end on the hypotenuse
    ([[0, -0.5, 0], [1, -0.5, 0]], T, False, False),  # parallel to an edge, outside
    ([[0.25, 0.25, 0], [0.25, 0.25, 0]], T, True, False),  # a point on the face
    ([[0.25, 0.25, 1], [0.25, 0.25, 1]], T, False, False),  # a point above it
    ([[2, 2, 0], [2, 2, 0]], T, False, False),  # a point in the plane, outside
    ([[0.5, -1, 0], [0.5, 1, 0]], LINE, True, False),  # collinear triangle: across its line
    ([[0.5, 0, -1], [0.5, 0, 1]], LINE, True, False),  # through it, out of any plane
    ([[0.5, -1, 1], [0.5, 1, 1]], LINE, False, False),  # skew
    ([[3, 0, -1], [3, 0, 1]], LINE, False, False),  # through its line beyond it
    ([[1.5, 0, 0], [5, 0, 0]], LINE, True, False),  # along it, overlapping
    ([[3, 0, 0], [4, 0, 0]], LINE, False, False),  # along its line, apart
    ([[0, 1, 0], [1, 1, 0]], LINE, False, False),  # parallel to it
    ([[0, 0, -1], [0, 0, 1]], POINT, True, False),  # a point triangle, through it
    ([[0, TINY, -1], [0, TINY, 1]], POINT, False, False),  # beside it
]


def _placements(seg, tri):
    """the case under exact transformations: axes permuted and flipped, a dyadic shift, the
    triangle's vertices rotated or reversed, the segment's ends swapped"""
    rng = np.random.default_rng(20)
    flips = [(1, 1, 1), (-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, 1), (-1, -1, -1)]
    for k, (perm, flip) in enumerate(zip(itertools.permutations(range(3)), flips)):
        shift = rng.integers(-8, 9, size=3) / 4
        x = np.vstack([seg, tri])[:, perm] * np.array(flip, float) + shift
        order = [[2, 3, 4], [3, 4, 2], [4, 3, 2]][k % 3]
        ends = [0, 1] if k % 2 else [1, 0]
        yield x[ends + order]


@pytest.mark.parametrize("seg, tri, meets, across", CONSTRUCTED)
def test_segment_triangle_constructed_cases(seg, tri, meets, across):
    for x in _placements(np.array(seg, float), tri):
        assert _core._segment_meets_triangle(x) is meets, x.tolist()
        if across and ipctk is not None:  # ipctk is exact for these
            assert ipctk.is_edge_intersecting_triangle(*x) is meets, x.tolist()


def test_segment_triangle_at_extreme_scales():
    for seg, tri, meets, _ in CONSTRUCTED:
        x = np.vstack([seg, tri])
        for scale in [2.0**-1000, 2.0**900]:
            assert _core._segment_meets_triangle(x * scale) is meets


# ---------------------------------------------------------------- the hooks' arguments


def test_hooks_refuse_bad_arguments():
    x = np.zeros((4, 3))
    with pytest.raises(ValueError, match="kind"):
        _core._pair_distance("tt", x)
    with pytest.raises(TypeError, match="kind"):
        _core._pair_distance(0, x)
    with pytest.raises(ValueError, match=r"x: expected an array of shape \(4, 3\)"):
        _core._pair_distance("pt", np.zeros((3, 3)))
    with pytest.raises(ValueError, match="x: expected finite"):
        _core._pair_distance("ee", np.full((4, 3), np.nan))
    with pytest.raises(TypeError, match="x"):
        _core._pair_distance("ee", [["a"] * 3] * 4)
    with pytest.raises(ValueError, match=r"x: expected an array of shape \(5, 3\)"):
        _core._segment_meets_triangle(x)
    with pytest.raises(ValueError, match="x: expected finite"):
        _core._segment_meets_triangle(np.full((5, 3), np.inf))
    d2, g, h = _core._pair_distance("pt", x.tolist())  # any array-like
    assert d2 == 0.0 and g.shape == (12,) and h.shape == (12, 12)


def test_a_segment_parallel_to_a_triangle_in_its_plane_up_to_rounding_does_not_meet_it():
    # a folded cloth's fold: an edge and a triangle 0.13 m apart along z, coplanar in exact
    # arithmetic but not after rounding; the 3D volumes were rounding noise and said "meets"
    a, b = [-0.05287611, 0.1, -0.5], [0.01330998, 0.10311423, -0.5]
    t = [[-0.05287611, 0.1, -0.36666667], [0.01330998, 0.10311423, -0.36666667],
         [0.01330998, 0.10311423, -0.3]]
    x = np.array([a, b, *t])
    assert not _core._segment_meets_triangle(x)
    assert not ipctk.is_edge_intersecting_triangle(*x)
