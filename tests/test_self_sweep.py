"""The pairs that bound a step's end when the vertices move far (csrc/engine/sweep.c: patches of
the mesh, each swept in a frame that moves with it): every pair whose points come within the
detection radius on the straight paths is among them, checked against exact distances sampled
along the paths; under a translation they are exactly the pairs whose boxes overlap at the
start."""

from __future__ import annotations

import numpy as np
import pytest

import msim
from msim import _core

overlaps, primitive_boxes = _core._box_overlaps, _core._primitive_boxes


def crumpled(n: int = 30) -> msim.System:
    """An n x n, 1 m cloth, its heights a smooth random field, with self-contact."""
    mesh = msim.mesh.cloth_grid(n, n, size=1.0)
    x = mesh.vertices.copy()
    rng = np.random.default_rng(5)
    for _ in range(4):
        k = rng.normal(0, 6, 2)
        x[:, 1] += 0.04 * np.sin(k[0] * x[:, 0] + k[1] * x[:, 2] + rng.uniform(0, 2 * np.pi))
    return msim.System(x, mesh.edges, faces=mesh.faces, self_contact=True)


def face_edges(faces: np.ndarray) -> np.ndarray:
    """The triangles' edges, each once, lower vertex first, sorted (as the engine keeps them)."""
    e = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    return np.unique(e, axis=0)


def key(kind: int, v) -> tuple:
    """A pair as a hashable value that ignores the order of a triangle's or an edge's vertices
    and of the two edges."""
    if kind == 0:
        return (0, int(v[0]), tuple(sorted(int(a) for a in v[1:])))
    return (1, frozenset([tuple(sorted((int(v[0]), int(v[1])))),
                          tuple(sorted((int(v[2]), int(v[3]))))]))


def swept(sim: msim.System, dx: np.ndarray, moving: bool = True, only=None) -> set:
    rows = sim._swept_pairs(dx, moving) if only is None else sim._swept_pairs(dx, moving, only)
    keys = [key(int(r[0]), r[1:]) for r in rows]
    assert len(set(keys)) == len(keys)  # each pair once
    return set(keys)


def close_pairs(y: np.ndarray, faces: np.ndarray, edges: np.ndarray, r: float) -> set:
    """The pairs sharing no vertex whose exact distance at positions y is below r."""
    found = set()
    plo, phi = primitive_boxes(y, np.arange(len(y))[:, None], r)
    pt = overlaps(plo, phi, *primitive_boxes(y, faces, 0.0))
    pt = np.c_[pt[:, 0], faces[pt[:, 1]]]
    elo, ehi = primitive_boxes(y, edges, 0.5 * r)
    ee = overlaps(elo, ehi)
    ee = np.c_[edges[ee[:, 0]], edges[ee[:, 1]]]
    for kind, name, v4 in ((0, "pt", pt), (1, "ee", ee)):
        apart = np.all(np.sort(v4, axis=1)[:, 1:] != np.sort(v4, axis=1)[:, :-1], axis=1)
        for v in v4[apart]:
            if _core._pair_distance(name, y[v])[0] < r * r:
                found.add(key(kind, v))
    return found


def vertices(k: tuple) -> set:
    """The vertices of a pair given as key() gives it."""
    return {k[1], *k[2]} if k[0] == 0 else {v for edge in k[1] for v in edge}


def swing(x: np.ndarray, angle: float, seed: int) -> np.ndarray:
    """A rotation by angle about the cloth's first row (as a cloth pinned there swings), a
    smooth stretch and a little noise: the displacement of each vertex [m]."""
    rng = np.random.default_rng(seed)
    c, s = np.cos(angle), np.sin(angle)
    rotation = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    pivot = np.array([0.0, 0.0, x[:, 2].min()])
    dx = (x - pivot) @ rotation.T + pivot - x
    dx += 0.05 * np.sin(3 * x[:, [2, 0, 0]]) + rng.normal(0, 0.004, x.shape)
    return dx


def close_on_paths(sim: msim.System, dx: np.ndarray, samples: int = 41) -> set:
    """The pairs that come within the detection radius at some of `samples` points of the
    straight paths from the positions to positions + dx."""
    x, faces = sim.positions, np.asarray(sim.faces)
    edges, r = face_edges(faces), 2 * sim.self_thickness
    close = set()
    for s in np.linspace(0.0, 1.0, samples):
        close |= close_pairs(x + s * dx, faces, edges, r)
    return close


@pytest.mark.parametrize("angle, seed", [(0.3, 1), (0.8, 2), (1.6, 3)])
def test_every_pair_that_comes_close_on_the_paths_is_swept(angle, seed):
    sim = crumpled()
    dx = swing(sim.positions, angle, seed)
    close = close_on_paths(sim, dx)
    assert len(close) > 500  # the swing folds the cloth onto itself
    for moving in (True, False):
        got = swept(sim, dx, moving)
        assert close <= got, (moving, sorted(close - got, key=str)[:5])


@pytest.mark.parametrize("seed", [1, 2])
def test_a_sweep_of_a_few_vertices_finds_every_pair_of_theirs_that_comes_close(seed):
    # a tenth of the vertices flagged (they fill few patches of the 30 x 30 cloth, each swept
    # in one pass in its own frame): every pair with a primitive holding one of them that
    # comes within the radius on the paths is found, and no pair without one
    sim = crumpled()
    dx = swing(sim.positions, 0.8, seed)
    only = np.random.default_rng(seed).uniform(size=sim.n_vertices) < 0.1
    close = {k for k in close_on_paths(sim, dx) if only[list(vertices(k))].any()}
    assert len(close) > 50
    for moving in (True, False):
        got = swept(sim, dx, moving, only)
        assert close <= got, (moving, sorted(close - got, key=str)[:5])
        assert all(only[list(vertices(k))].any() for k in got)


def test_in_the_start_frame_paths_cut_short_are_swept_too():
    # the bounds cut a vertex's move to a fraction of it; in the frame of the start every box
    # of a path holds the shorter path, in frames moving with the cloth it does not
    sim = crumpled()
    dx = swing(sim.positions, 0.8, 2)
    cut = dx * np.random.default_rng(4).choice([0.0, 0.3, 1.0], (len(dx), 1))
    close = close_on_paths(sim, cut)
    assert close <= swept(sim, dx, moving=False)
    assert not close <= swept(sim, dx, moving=True)


def test_under_a_translation_the_swept_pairs_are_those_whose_boxes_overlap():
    # every patch moves by the same vector, so every path is a point in its frame: the pairs
    # are detection's candidates at the start, those that share no vertex
    sim = crumpled()
    x, faces = sim.positions, np.asarray(sim.faces)
    edges, r = face_edges(faces), 2 * sim.self_thickness
    want = set()
    plo, phi = primitive_boxes(x, np.arange(len(x))[:, None], r)
    tlo, thi = primitive_boxes(x, faces, 0.0)
    for p, f in overlaps(plo, phi, tlo, thi):
        if p not in faces[f]:
            want.add(key(0, np.r_[p, faces[f]]))
    elo, ehi = primitive_boxes(x, edges, 0.5 * r)
    for a, b in overlaps(elo, ehi):
        v = np.r_[edges[a], edges[b]]
        if len(set(v)) == 4:
            want.add(key(1, v))
    assert swept(sim, np.tile([0.3, -0.5, 0.2], (len(x), 1))) == want
