"""Mesh reading round-trips through every format; trajectories write OBJ and VTU series."""

import os
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

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


# ---------------------------------------------------------------- read_mesh: hostile files

HOSTILE = Path(__file__).parent / "data" / "hostile"


@pytest.mark.parametrize("name, message", [
    ("bad-truncated.vtu", r"not well-formed XML \(truncated\?\)"),
    ("bad-truncated-tail.vtu", r"not well-formed XML \(truncated\?\)"),
    ("bad-entity-bomb.vtu", r"refused XML: it declares a DTD"),
    ("bad-external-entity.vtu", r"refused XML: it declares a DTD"),
    ("bad-truncated.msh", r"section \$Nodes has no \$EndNodes \(truncated\?\)"),
    ("bad-garbage.msh", r"\$MeshFormat: expected version 2.2 or 4.1"),
    ("bad-face-index-999.obj", r"triangle cells: vertex index 998 out of range: the file has 3"),
    ("bad-index-out-of-range.vtu", r"vertex index 999 out of range: the file has 4 vertices"),
    ("bad-negative-index.vtu", r"vertex index -2 out of range"),
    ("bad-zero-index.obj", r"line 4: vertex reference 0 out of range"),
    ("bad-relative-before-start.obj", r"line 2: vertex reference -2 out of range"),
    ("bad-nan-vertex.obj", r"vertex 1 has a non-finite coordinate \[nan, 0.0, 0.0\]"),
    ("bad-nan-point.vtu", r"vertex 2 has a non-finite coordinate"),
    ("bad-short-vertex.obj", r"line 1: a vertex needs x y z, got 'v 0 0'"),
    ("bad-word-in-face.obj", r"line 4: expected a vertex reference .* got 'one'"),
    ("bad-repeated-vertex.obj", r"a cell repeats vertex 0"),
    ("bad-binary-noise.obj", r"line 1: not an OBJ statement"),
    ("bad-offsets-backwards.vtu", r"offsets: expected non-decreasing cell ends"),
    ("bad-element-index-999.msh", r"a triangle element refers to node 999, which \$Nodes does not"),
])
def test_a_broken_or_malicious_file_is_an_error_naming_the_file_and_what_is_wrong(name, message):
    # meshio ends the process (sys.exit) on the first six: a sweep worker died with no
    # exception; the others gave IndexError, KeyError or loaded wrongly
    path = HOSTILE / name
    with pytest.raises(msim.MeshFileError, match=message) as caught:
        read_mesh(path)
    assert str(caught.value).startswith(f"{path}: ") and isinstance(caught.value, ValueError)
    assert caught.value.path == str(path)
    assert "root:" not in str(caught.value)  # /etc/passwd was not read into it


@pytest.mark.parametrize("name, message", [
    ("bad-billion-points.vtu", r"Points: declares 24000000000 bytes, more than this file can hold"),
    ("bad-block-inflates-past-header.vtu", r"compressed block 0 inflates to more than 96 bytes"),
    ("bad-billion-nodes.msh", r"\$Nodes: declares 1000000000 nodes, the section holds 1 "),
])
def test_declared_sizes_are_checked_before_anything_is_allocated(name, message):
    tracemalloc.start()
    try:
        with pytest.raises(msim.MeshFileError, match=message):
            read_mesh(HOSTILE / name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB allocated"


def test_a_blender_obj_with_texture_and_normal_references_loads():
    mesh = read_mesh(HOSTILE / "ok-blender-v-vt-vn.obj")  # f v/vt/vn: a quad
    np.testing.assert_array_equal(mesh.vertices, [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    np.testing.assert_array_equal(mesh.edges, [[0, 1], [0, 3], [1, 2], [2, 3]])  # its sides
    np.testing.assert_array_equal(mesh.faces, [[0, 1, 2], [0, 2, 3]])
    for form in ("{a}/{a}", "{a}//{a}", "{a}"):
        text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf " + " ".join(form.format(a=a) for a in (1, 2, 3))
        assert read_mesh(_text_file(text)).faces.tolist() == [[0, 1, 2]]


def _text_file(text: str, suffix: str = ".obj") -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp())
    path = folder / f"mesh{suffix}"
    path.write_text(text)
    return path


def test_pentagons_become_springs_along_their_sides_and_a_fan_of_triangles():
    mesh = read_mesh(HOSTILE / "ok-pentagon.obj")  # a regular pentagon and a triangle
    sides = {(i, (i + 1) % 5) for i in range(5)}
    assert {tuple(sorted(e)) for e in mesh.edges.tolist()} == \
        {tuple(sorted(e)) for e in sides} | {(1, 5), (0, 5)}
    triangle, fan = mesh.faces[0], mesh.faces[1:]  # triangles first, then the fans
    assert triangle.tolist() == [0, 1, 5]
    # the fan covers the pentagon: its area, (5/2) sin(72 deg) for a unit circumradius
    x = mesh.vertices[fan]
    area = 0.5 * np.linalg.norm(np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), axis=1).sum()
    assert area == pytest.approx(2.5 * np.sin(np.radians(72)), rel=1e-5)


def test_relative_indices_count_back_from_the_latest_vertex():
    mesh = read_mesh(HOSTILE / "ok-relative-indices.obj")  # f -3 -2 -1, l 1 2 3
    assert mesh.faces.tolist() == [[0, 1, 2]] and len(mesh.edges) == 3


def test_cells_msim_has_no_springs_for_are_named_not_dropped_silently():
    with pytest.warns(msim.io.MeshFileWarning, match=r"left out cells .*: 1 wedge"):
        mesh = read_mesh(HOSTILE / "ok-wedge-left-out.vtu")
    assert mesh.faces.tolist() == [[0, 1, 2]] and len(mesh.vertices) == 6
    with pytest.warns(msim.io.MeshFileWarning, match=r"left out OBJ statements .*1 'curv'"):
        read_mesh(HOSTILE / "ok-free-form-left-out.obj")


def _vtu_variants(tmp_path):
    """One tet mesh as VTU in every layout msim reads: (name, path)."""
    v, t = box_tets(3, 3, 2)
    out = []
    for name, kwargs in [("ascii", dict(binary=False)), ("base64", dict(compression=None)),
                         ("zlib", dict(compression="zlib")), ("lzma", dict(compression="lzma")),
                         ("uint64", dict(compression="zlib", header_type="UInt64"))]:
        path = tmp_path / f"{name}.vtu"
        meshio.write(path, meshio.Mesh(v, [("tetra", t)]), **kwargs)
        out.append((name, path))
    # appended raw binary, as ParaView writes by default: the arrays after '_' as bytes
    path = tmp_path / "raw.vtu"
    arrays = [v.astype("<f8"), t.ravel().astype("<i8"), (4 * np.arange(1, len(t) + 1)).astype("<i8"),
              np.full(len(t), 10, np.uint8)]
    raw, offsets = b"", []
    for a in arrays:
        offsets.append(len(raw))
        raw += np.array([a.nbytes], "<u4").tobytes() + a.tobytes()
    path.write_bytes(
        b'<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="1.0" '
        b'byte_order="LittleEndian" header_type="UInt32">\n<UnstructuredGrid>'
        + f'<Piece NumberOfPoints="{len(v)}" NumberOfCells="{len(t)}"><Points>'
          f'<DataArray type="Float64" NumberOfComponents="3" format="appended" '
          f'offset="{offsets[0]}"/></Points><Cells>'
          f'<DataArray type="Int64" Name="connectivity" format="appended" offset="{offsets[1]}"/>'
          f'<DataArray type="Int64" Name="offsets" format="appended" offset="{offsets[2]}"/>'
          f'<DataArray type="UInt8" Name="types" format="appended" offset="{offsets[3]}"/>'
          '</Cells></Piece></UnstructuredGrid>\n<AppendedData encoding="raw">\n_'.encode()
        + raw + b"\n</AppendedData>\n</VTKFile>\n")
    out.append(("raw", path))
    return out


def test_every_vtu_layout_reads_as_meshio_reads_it(tmp_path):
    v, t = box_tets(3, 3, 2)
    expected = tet_mesh(v, t)
    for name, path in _vtu_variants(tmp_path):
        mesh = read_mesh(path)
        np.testing.assert_array_equal(mesh.vertices, v, err_msg=name)
        np.testing.assert_array_equal(mesh.edges, expected.edges, err_msg=name)
        np.testing.assert_array_equal(mesh.faces, expected.faces, err_msg=name)
        if name != "raw":  # meshio, the oracle, reads the rest the same
            np.testing.assert_array_equal(meshio.read(path).points, mesh.vertices)


def test_every_prefix_of_a_vtu_is_a_clear_error_or_the_mesh(tmp_path):
    from hostile import attempt

    for name, path in _vtu_variants(tmp_path):
        whole = path.read_bytes()
        for end in range(0, len(whole), max(1, len(whole) // 60)):
            cut = tmp_path / f"cut-{name}.vtu"
            cut.write_bytes(whole[:end])
            attempt(lambda: read_mesh(cut), msim.MeshFileError)


# ---------------------------------------------------------------- writers


def test_writers_refuse_non_finite_positions_and_faces_out_of_range(tmp_path):
    cloth = cloth_grid(4, 4)
    sim = msim.System(cloth.vertices, cloth.edges, stiffness=100.0, fixed=[0, 3])
    traj = sim.simulate(2, 1e-3, "symplectic_euler")
    bad_faces = cloth.faces.copy()
    bad_faces[3, 1] = 16
    with pytest.raises(ValueError, match=r"faces: expected vertex indices below 16, got 16"):
        write_obj_sequence(traj, bad_faces, tmp_path / "a")
    with pytest.raises(ValueError, match=r"faces: expected vertex indices below 16, got 16"):
        write_vtu_series(traj, tmp_path / "b", faces=bad_faces)
    with pytest.raises(ValueError, match=r"faces: expected vertex indices below 16, got -1"):
        write_mesh(tmp_path / "c.vtu", cloth.vertices, faces=-bad_faces)
    traj.positions[1, 5, 2] = np.nan
    with pytest.raises(ValueError, match=r"traj.positions\[1\]: expected finite numbers, got "
                                         r"\[.*nan\] in vertex 5"):
        write_obj_sequence(traj, cloth.faces, tmp_path / "d")
    with pytest.raises(ValueError, match=r"traj.positions\[1\]: expected finite numbers"):
        write_vtu_series(traj, tmp_path / "e", faces=cloth.faces)
    with pytest.raises(ValueError, match=r"vertices: expected finite numbers"):
        write_mesh(tmp_path / "f.vtu", traj.positions[1], faces=cloth.faces)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_exports_take_the_mesh_and_the_colliders_from_the_trajectory(tmp_path):
    scene = msim.scenes.pushed_cloth(5)
    traj = scene.run(4, "fms", iterations=3)
    traj.faces = scene.faces
    objs = write_obj_sequence(traj, tmp_path / "obj")  # faces and sphere from the run
    text = objs[-1].read_text()
    assert text.count("\no ") == 2 and "\no sphere_0\n" in text
    body, sphere = text.split("\no sphere_0\n")
    assert body.count("\nf ") == len(scene.faces)
    points = np.array([line.split()[1:] for line in sphere.splitlines() if line.startswith("v ")],
                      dtype=float)
    centre, radius = traj.spheres[-1, 0, :3], traj.spheres[-1, 0, 3]
    np.testing.assert_allclose(np.linalg.norm(points - centre, axis=1), radius, rtol=1e-6)
    # ParaView: the body's series, and the colliders' own, one file per frame as they moved
    pvd = write_vtu_series(traj, tmp_path / "vtu")
    colliders = ET.parse(pvd.parent / "frame_colliders.pvd").getroot().find("Collection")
    files = [d.get("file") for d in colliders.findall("DataSet")]
    assert len(files) == len(traj.times)
    for k, name in enumerate(files):
        drawn = meshio.read(pvd.parent / name).points
        np.testing.assert_allclose(np.linalg.norm(drawn - traj.spheres[k, 0, :3], axis=1),
                                   traj.spheres[k, 0, 3], rtol=1e-6)
    # a rope has no faces: its springs are written as OBJ lines and VTU line cells
    rope = msim.scenes.rope_pendulum(4).run(2, "fms")
    line = write_obj_sequence(rope, tmp_path / "rope")[0].read_text()
    assert line.count("\nl ") == len(rope.edges)
    last = meshio.read(write_vtu_series(rope, tmp_path / "rope-vtu").parent / "frame_0002.vtu")
    np.testing.assert_array_equal(last.cells_dict["line"], rope.edges)


# ---------------------------------------------------------------- read_mesh: Gmsh


@pytest.mark.parametrize("binary", [False, True])
def test_gmsh22_in_ascii_and_binary_reads_what_meshio_wrote(tmp_path, binary):
    v, t = box_tets(2, 2, 2)
    path = tmp_path / "box.msh"
    meshio.write(path, meshio.Mesh(v, [("tetra", t)]), file_format="gmsh22", binary=binary)
    mesh = read_mesh(path)
    np.testing.assert_array_equal(mesh.vertices, v)
    np.testing.assert_array_equal(mesh.edges, tet_mesh(v, t).edges)


def test_gmsh41_with_entities_and_parametric_nodes_reads_every_block(tmp_path):
    # the layout of the Gmsh manual's example: a point, a curve node with its parameter u and
    # four surface nodes with (u, v), sparse element blocks of lines and triangles
    path = tmp_path / "square.msh"
    path.write_text("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n2 1 \"cloth\"\n"
                    "$EndPhysicalNames\n$Nodes\n3 6 1 6\n0 1 0 1\n1\n0 0 0\n1 1 1 1\n2\n"
                    "0.5 0 0 0.5\n2 1 1 4\n3\n4\n5\n6\n1 0 0 0.1 0.2\n1 1 0 0.3 0.4\n"
                    "0.5 1 0 0.5 0.6\n0.5 0.5 0 0.2 0.2\n$EndNodes\n$Elements\n2 3 1 3\n"
                    "1 1 1 1\n1 1 2\n2 1 2 2\n2 1 2 3\n3 2 4 6\n$EndElements\n")
    mesh = read_mesh(path)
    np.testing.assert_array_equal(mesh.vertices[:, 1], [0, 0, 0, 1, 1, 0.5])
    np.testing.assert_array_equal(mesh.faces, [[0, 1, 2], [1, 3, 5]])
    assert len(mesh.edges) == 6  # the line (0,1) is also a triangle's edge: counted once


def test_gmsh_node_tags_map_by_value_without_an_array_as_long_as_the_largest(tmp_path):
    # tags 2^40 and up: meshio allocates max(tag) + 1 entries (8 TiB); a sorted search needs
    # none, so this loads with a few KiB
    path = tmp_path / "sparse.msh"
    big = 2**40
    path.write_text(f"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 {big} {big + 2}\n"
                    f"2 1 0 3\n{big + 2}\n{big}\n{big + 1}\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n"
                    f"$Elements\n1 1 1 1\n2 1 2 1\n1 {big} {big + 1} {big + 2}\n$EndElements\n")
    tracemalloc.start()
    try:
        mesh = read_mesh(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(mesh.faces, [[1, 2, 0]])
    assert peak < 2**20


@pytest.mark.parametrize("where", [0x37, 0x5B])  # $Nodes' total count; its block's count
def test_a_binary_gmsh_count_beyond_the_file_is_refused_before_allocating(tmp_path, where):
    data = bytearray((HOSTILE / "ok-gmsh41-binary.msh").read_bytes())
    data[where:where + 8] = (2**40).to_bytes(8, "little")
    path = tmp_path / "lying.msh"
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        with pytest.raises(msim.MeshFileError, match=r"\$Nodes: declares 1099511627776 node"):
            read_mesh(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
