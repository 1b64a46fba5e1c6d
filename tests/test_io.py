"""Mesh reading round-trips through every format; trajectories write OBJ and VTU series."""

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import msim
from msim.mesh import box_tets, cloth_grid, tet_mesh, triangle_mesh

meshio = pytest.importorskip("meshio")
from msim.io import read_mesh, write_mesh, write_obj_sequence, write_vtu_series  # noqa: E402


def test_box_tets_fill_the_box_with_positive_volumes():
    v, t = box_tets(3, 4, 2, size=(2.0, 3.0, 1.0))
    x = v[t]
    vol = np.einsum("ij,ij->i", x[:, 1] - x[:, 0], np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 0])) / 6
    assert len(t) == 6 * 2 * 3 * 1 and np.all(vol > 0) and vol.sum() == pytest.approx(6.0)
    mesh = tet_mesh(v, t)
    a, b, c = (mesh.vertices[mesh.faces[:, i]] for i in range(3))
    # the boundary is the box surface, oriented outwards (divergence theorem gives +volume)
    assert np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6 == pytest.approx(6.0)
    # every tet edge once: Euler for a triangulated ball, V - E + F - T = 1
    assert len(v) - len(mesh.edges) + _interior_and_boundary_faces(t) - len(t) == 1


def _interior_and_boundary_faces(tets):
    faces = np.sort(tets[:, [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]].reshape(-1, 3), axis=1)
    return len(np.unique(faces, axis=0))


@pytest.mark.parametrize("suffix", [".mesh", ".msh", ".vtk", ".vtu"])
def test_volume_formats_round_trip(tmp_path, suffix):
    v, t = box_tets(3, 3, 3)
    expected = tet_mesh(v, t)
    path = tmp_path / f"box{suffix}"
    write_mesh(path, v, tets=t)
    mesh = read_mesh(path)
    assert mesh.vertices.shape == v.shape and len(mesh.edges) == len(expected.edges)
    np.testing.assert_array_equal(mesh.edges, expected.edges)
    assert len(mesh.faces) == len(expected.faces)
    np.testing.assert_array_equal(mesh.vertices, v)  # float64 text or binary: bit-exact


@pytest.mark.parametrize("suffix", [".obj", ".ply", ".off"])
def test_surface_formats_round_trip(tmp_path, suffix):
    cloth = cloth_grid(5, 4)
    expected = triangle_mesh(cloth.vertices, cloth.faces)  # springs: triangle edges only
    path = tmp_path / f"cloth{suffix}"
    write_mesh(path, cloth.vertices, faces=cloth.faces)
    mesh = read_mesh(path)
    assert len(mesh.faces) == len(cloth.faces)
    assert len(mesh.vertices) == 20 and len(mesh.edges) == len(expected.edges) == 43
    np.testing.assert_array_equal(mesh.vertices, cloth.vertices)
    np.testing.assert_array_equal(mesh.faces, cloth.faces)


def test_trajectory_writes_obj_sequence_and_vtu_series(tmp_path):
    cloth = cloth_grid(4, 4)
    sim = msim.System(cloth.vertices, cloth.edges, stiffness=100.0, fixed=[0, 3])
    traj = sim.simulate(20, 1e-3, "symplectic_euler", record_every=10)
    objs = write_obj_sequence(traj, cloth.faces, tmp_path / "obj")
    assert [p.name for p in objs] == ["frame_0000.obj", "frame_0001.obj", "frame_0002.obj"]
    back = meshio.read(objs[-1])
    np.testing.assert_allclose(back.points, traj.positions[-1], rtol=1e-8)
    pvd = write_vtu_series(traj, tmp_path / "vtu", faces=cloth.faces, edges=cloth.edges)
    sets = ET.parse(pvd).getroot().find("Collection").findall("DataSet")
    assert [float(d.get("timestep")) for d in sets] == pytest.approx(traj.times)
    last = meshio.read(pvd.parent / sets[-1].get("file"))
    np.testing.assert_allclose(last.points, traj.positions[-1])
    assert {c.type for c in last.cells} == {"triangle", "line"}
    np.testing.assert_array_equal(last.point_data["velocity"], traj.velocities[-1])


def test_vtu_series_carries_velocity_strain_and_the_fixed_flag(tmp_path):
    cloth = cloth_grid(4, 4)
    sim = msim.System(cloth.vertices, cloth.edges, stiffness=100.0, fixed=[0, 3])
    traj = sim.simulate(200, 1e-3, "symplectic_euler", record_every=100)
    pvd = write_vtu_series(traj, tmp_path, faces=cloth.faces, system=sim)
    last = meshio.read(sorted(pvd.parent.glob("frame_*.vtu"))[-1])
    assert {c.type for c in last.cells} == {"triangle"}  # springs are not drawn unless asked
    np.testing.assert_array_equal(last.point_data["velocity"], sim.velocities)
    np.testing.assert_array_equal(last.point_data["fixed"], [1, 0, 0, 1] + [0] * 12)
    # strain of a vertex: the mean (l - r) / r of its springs, computed here spring by spring
    x, expected = traj.positions[-1], np.zeros(16)
    for i in range(16):
        touching = [(a, b, r) for (a, b), r in zip(sim.edges, sim.rest_lengths) if i in (a, b)]
        expected[i] = np.mean([np.linalg.norm(x[a] - x[b]) / r - 1 for a, b, r in touching])
    np.testing.assert_allclose(last.point_data["strain"], expected, rtol=1e-12, atol=1e-15)
    assert np.abs(expected).max() > 1e-4  # the cloth has started to stretch
    # without recorded velocities: central differences of the frames (one-sided at the ends)
    traj.velocities = None
    pvd = write_vtu_series(traj, tmp_path / "fd", faces=cloth.faces)
    last = meshio.read(pvd.parent / "frame_0002.vtu")
    np.testing.assert_allclose(last.point_data["velocity"],
                               (traj.positions[2] - traj.positions[1]) / 0.1, rtol=1e-12)


def test_submodules_load_on_first_use():
    # a fresh interpreter, as a student's first cell: `import msim`, then msim.io / msim.plot
    import subprocess
    import sys

    code = ("import sys, msim\n"
            "assert 'msim.io' not in sys.modules and 'msim.plot' not in sys.modules\n"
            "assert {'io', 'plot', 'table', 'mesh', 'System'} <= set(dir(msim))\n"
            "print(msim.io.read_mesh.__name__, msim.plot.energy.__name__,"
            " msim.table.make_table.__name__)\n"
            "try:\n    msim.nonexistent\nexcept AttributeError as err:\n    print(err)\n")
    # the environment as it is (sanitizer runs preload their runtimes), plus a headless backend
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["read_mesh energy make_table",
                                        "module 'msim' has no attribute 'nonexistent'"]
