"""Mesh generators: counts, lengths and faces from the lattice geometry."""

import numpy as np
import pytest

import msim
from msim.mesh import cloth_grid, cube_lattice, rope

from builders import lengths


def _unique_edges(mesh):
    return len({tuple(sorted(e)) for e in mesh.edges.tolist()}) == len(mesh.edges)


@pytest.mark.parametrize("nx,ny", [(2, 2), (5, 3), (20, 20)])
def test_cloth_grid_counts_and_lengths(nx, ny):
    sx, sy = 2.0, 1.0
    dx, dy = sx / (nx - 1), sy / (ny - 1)
    full = cloth_grid(nx, ny, size=(sx, sy))
    structural = nx * (ny - 1) + ny * (nx - 1)
    shear = 2 * (nx - 1) * (ny - 1)
    bending = nx * max(ny - 2, 0) + ny * max(nx - 2, 0)
    assert full.vertices.shape == (nx * ny, 3)
    assert full.edges.shape == (structural + shear + bending, 2) and _unique_edges(full)
    assert full.faces.shape == (2 * (nx - 1) * (ny - 1), 3)
    measured = np.sort(np.unique(np.round(lengths(full), 12)))
    expected = {dx, dy, np.hypot(dx, dy)} | ({2 * dx} if nx > 2 else set()) | (
        {2 * dy} if ny > 2 else set())
    np.testing.assert_allclose(measured, np.sort(np.round(list(expected), 12)))
    only = cloth_grid(nx, ny, structural=True, shear=False, bending=False)
    assert len(only.edges) == structural
    # horizontal in y-up worlds; corners 0 and nx-1 share the first row
    assert np.all(full.vertices[:, 1] == 0)
    assert full.vertices[nx - 1, 0] == pytest.approx(sx) and full.vertices[nx - 1, 2] == 0


def test_cloth_faces_cover_the_area():
    mesh = cloth_grid(7, 4, size=(3.0, 2.0), plane="xy")
    a, b, c = (mesh.vertices[mesh.faces[:, i]] for i in range(3))
    areas = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    assert areas.sum() == pytest.approx(6.0) and np.all(areas > 0)
    assert mesh.vertices[:, 1].max() == 0 and mesh.vertices[:, 1].min() == -2.0


def test_rope():
    mesh = rope(5, 2.0, start=(0, 1, 0), direction=(0, -2, 0), bending=True)
    np.testing.assert_allclose(mesh.vertices[-1], [0, -1, 0])
    np.testing.assert_allclose(np.sort(lengths(mesh)), [0.5] * 4 + [1.0] * 3)
    assert mesh.faces.shape == (0, 3)


def test_cube_lattice_counts_and_surface():
    n = (3, 4, 5)
    mesh = cube_lattice(*n, size=(2.0, 3.0, 4.0), bending=True)
    cells = np.prod([k - 1 for k in n])
    structural = sum(np.prod(n) // k * (k - 1) for k in n)
    face_diagonals = 2 * sum((n[a] - 1) * (n[b] - 1) * n[c]
                             for a, b, c in [(0, 1, 2), (0, 2, 1), (1, 2, 0)])
    bending = sum(np.prod(n) // k * (k - 2) for k in n)
    assert len(mesh.edges) == structural + face_diagonals + 4 * cells + bending
    assert _unique_edges(mesh)
    a, b, c = (mesh.vertices[mesh.faces[:, i]] for i in range(3))
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
    assert area == pytest.approx(2 * (2 * 3 + 2 * 4 + 3 * 4))
    # outward normals: the enclosed volume by the divergence theorem is the box's
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6
    assert abs(volume) == pytest.approx(24.0)


@pytest.mark.parametrize("call,message", [
    (lambda: cloth_grid(1, 5), r"nx: expected an integer >= 2, got 1"),
    (lambda: cloth_grid(3, 3, size=-1), r"size: expected positive"),
    (lambda: cloth_grid(3, 3, plane="yz"), r"plane: expected 'xz' or 'xy'"),
    (lambda: rope(3, direction=(0, 0, 0)), r"direction: expected a non-zero"),
    (lambda: cube_lattice(2, 2, 2.5), r"nz: expected an integer, got float"),
])
def test_generators_reject_bad_arguments(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_meshes_build_unstressed_systems_that_fall_rigidly():
    # rest lengths come from the mesh, so a free, unpinned body starts unstressed and a
    # symplectic step translates it by h^2 g without deforming it
    h, g = 1e-3, np.array([0.0, -9.81, 0.0])
    for mesh in (cloth_grid(4, 4), rope(4), cube_lattice(2, 2, 2)):
        sim = msim.System(*mesh[:2])
        assert sim.energy()["spring"] == 0.0
        sim.step(h, method="symplectic_euler")
        np.testing.assert_allclose(sim.positions, mesh.vertices + h * h * g, rtol=0, atol=1e-15)
        assert sim.energy()["spring"] < 1e-25
