"""Writes the hostile files beside this script: malformed, truncated, oversized and malicious
meshes and trajectories that users met, each a regression case for tests/test_fuzz.py.

A file named ok-* must load (read_mesh or Trajectory.load); bad-* must raise the documented
error (msim.MeshFileError, msim.TrajectoryFileError) and nothing else. Run it again after a
change of the formats: `python tests/data/hostile/make_hostile.py`.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

import msim

HERE = Path(__file__).parent


def write(name: str, data: bytes | str) -> None:
    (HERE / name).write_bytes(data.encode() if isinstance(data, str) else data)


def vtu(points: str, connectivity: str, offsets: str, types: str, n: int, cells: int,
        doctype: str = "") -> str:
    """An ASCII VTU of one piece."""
    return (f'<?xml version="1.0"?>\n{doctype}<VTKFile type="UnstructuredGrid" version="0.1">\n'
            f'<UnstructuredGrid><Piece NumberOfPoints="{n}" NumberOfCells="{cells}">\n'
            f'<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">{points}'
            '</DataArray></Points>\n<Cells>\n'
            f'<DataArray type="Int64" Name="connectivity" format="ascii">{connectivity}</DataArray>\n'
            f'<DataArray type="Int64" Name="offsets" format="ascii">{offsets}</DataArray>\n'
            f'<DataArray type="UInt8" Name="types" format="ascii">{types}</DataArray>\n'
            '</Cells></Piece></UnstructuredGrid></VTKFile>\n')


SQUARE = "0 0 0  1 0 0  1 1 0  0 1 0"


def meshes() -> None:
    # VTU
    write("ok-ascii.vtu", vtu(SQUARE, "0 1 2  0 2 3", "3 6", "5 5", 4, 2))
    write("ok-wedge-left-out.vtu", vtu(SQUARE + "  0 0 1  1 0 1", "0 1 2  0 1 4 3 2 5",
                                       "3 9", "5 13", 6, 2))
    cloth = msim.mesh.cloth_grid(4, 4)
    msim.io.write_mesh(HERE / "ok-binary-zlib.vtu", cloth.vertices, faces=cloth.faces)
    whole = (HERE / "ok-binary-zlib.vtu").read_bytes()
    write("bad-truncated.vtu", whole[: len(whole) // 2])
    write("bad-truncated-tail.vtu", whole[:-40])
    laughs = "".join(f'<!ENTITY l{i} "{"&l%d;" % (i - 1) * 10}">' for i in range(1, 10))
    write("bad-entity-bomb.vtu", vtu(SQUARE, "&l9;", "3", "5", 4, 1,
                                     f'<!DOCTYPE VTKFile [<!ENTITY l0 "0 1 2 ">{laughs}]>\n'))
    write("bad-external-entity.vtu", vtu(SQUARE, "&xxe;", "3", "5", 4, 1,
                                         '<!DOCTYPE VTKFile [<!ENTITY xxe SYSTEM '
                                         '"file:///etc/passwd">]>\n'))
    write("bad-index-out-of-range.vtu", vtu(SQUARE, "0 1 999", "3", "5", 4, 1))
    write("bad-negative-index.vtu", vtu(SQUARE, "0 1 -2", "3", "5", 4, 1))
    write("bad-nan-point.vtu", vtu("0 0 0  1 0 0  nan 1 0  0 1 0", "0 1 2", "3", "5", 4, 1))
    write("bad-billion-points.vtu", vtu(SQUARE, "0 1 2", "3", "5", 10**9, 1))
    write("bad-offsets-backwards.vtu", vtu(SQUARE, "0 1 2  0 2 3", "6 3", "5 5", 4, 2))
    # a compressed block whose header declares 96 bytes but which inflates to 1 MiB
    block = zlib.compress(bytes(2**20), 9)
    header = np.array([1, 96, 96, len(block)], dtype="<u4").tobytes()
    points = base64.b64encode(header).decode() + base64.b64encode(block).decode()
    write("bad-block-inflates-past-header.vtu",
          '<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1" '
          'compressor="vtkZLibDataCompressor">\n<UnstructuredGrid><Piece NumberOfPoints="4" '
          'NumberOfCells="0"><Points><DataArray type="Float64" NumberOfComponents="3" '
          f'format="binary">{points}</DataArray></Points><Cells>'
          '<DataArray type="Int64" Name="connectivity" format="ascii"></DataArray>'
          '<DataArray type="Int64" Name="offsets" format="ascii"></DataArray>'
          '<DataArray type="UInt8" Name="types" format="ascii"></DataArray>'
          '</Cells></Piece></UnstructuredGrid></VTKFile>\n')
    # OBJ
    blender = ["# Blender 4.1", "mtllib cube.mtl", "o Plane", "v 0 0 0", "v 1 0 0", "v 1 1 0",
               "v 0 1 0", "vn 0 0 1", "vt 0 0", "vt 1 0", "vt 1 1", "vt 0 1", "s 0",
               "usemtl Material", "f 1/1/1 2/2/1 3/3/1 4/4/1"]
    write("ok-blender-v-vt-vn.obj", "\n".join(blender) + "\n")
    pentagons = [f"v {np.cos(a):.6f} {np.sin(a):.6f} 0" for a in np.linspace(0, 2 * np.pi, 6)[:5]]
    pentagons += ["v 0 0 1", "f 1 2 3 4 5", "f 1 2 6"]
    write("ok-pentagon.obj", "\n".join(pentagons) + "\n")
    write("ok-relative-indices.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nl 1 2 3\n")
    write("ok-free-form-left-out.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\ncstype bspline\n"
          "curv 0 1 1 2\n")
    write("bad-face-index-999.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 999\n")
    write("bad-zero-index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n")
    write("bad-relative-before-start.obj", "v 0 0 0\nf -1 -2 -3\n")
    write("bad-nan-vertex.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n")
    write("bad-short-vertex.obj", "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    write("bad-word-in-face.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf one two three\n")
    write("bad-repeated-vertex.obj", "v 0 0 0\nv 1 0 0\nf 1 1 2\n")
    write("bad-binary-noise.obj", np.random.default_rng(0).bytes(512))
    # the formats read through meshio
    import meshio

    surface = meshio.Mesh(cloth.vertices, [("triangle", cloth.faces)])
    meshio.write(HERE / "ok-gmsh22.msh", surface, file_format="gmsh22", binary=False)
    vertices, tets = msim.mesh.box_tets(2, 2, 3)
    meshio.write(HERE / "ok-gmsh41-binary.msh", meshio.Mesh(vertices, [("tetra", tets)]),
                 file_format="gmsh", binary=True)
    for suffix, kwargs in [(".vtk", {"binary": False}), (".ply", {"binary": False}),
                           (".off", {}), (".mesh", {}), (".stl", {"binary": True})]:
        meshio.write(HERE / f"ok-cloth{suffix}", surface, **kwargs)
    gmsh = (HERE / "ok-gmsh22.msh").read_bytes()
    write("bad-truncated.msh", gmsh[: len(gmsh) // 3])
    write("bad-billion-nodes.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1000000000\n"
          "1 0 0 0\n$EndNodes\n")
    write("bad-element-index-999.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n"
          "1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n$Elements\n1\n1 2 0 1 2 999\n$EndElements\n")
    write("bad-garbage.msh", "$MeshFormat\nfour point one\n$EndMeshFormat\n")


def npz(name: str, meta, arrays: dict, compressed: bool = False) -> None:
    buffer = io.BytesIO()
    text = meta if isinstance(meta, str) else json.dumps(meta)
    (np.savez_compressed if compressed else np.savez)(buffer, meta=np.array(text), **arrays)
    write(name, buffer.getvalue())


def trajectories() -> None:
    traj = msim.scenes.rope_pendulum(4).run(3, "fms")
    traj.save(HERE / "ok-run.npz")
    whole = (HERE / "ok-run.npz").read_bytes()
    write("bad-truncated.npz", whole[: len(whole) // 2])
    with np.load(HERE / "ok-run.npz") as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    npz("bad-positions-2d.npz", meta, dict(arrays, positions=arrays["positions"][0]))
    npz("bad-string-positions.npz", meta, dict(arrays, positions=arrays["positions"].astype(str)))
    npz("bad-times-length.npz", meta, dict(arrays, times=arrays["times"][:2]))
    npz("bad-dt-text.npz", dict(meta, dt="abc"), arrays)
    npz("bad-no-method.npz", {k: v for k, v in meta.items() if k != "method"}, arrays)
    npz("bad-deep-json.npz", "[" * 5_000 + "]" * 5_000, arrays)
    npz("bad-zip-bomb.npz", meta, dict(arrays, velocities=np.zeros((4, 2**18, 3)),
                                       positions=np.zeros((4, 2**18, 3))), compressed=True)
    pickled = io.BytesIO()
    np.save(pickled, np.array([print], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(HERE / "ok-run.npz") as good, \
            zipfile.ZipFile(HERE / "bad-pickle.npz", "w") as bad:
        for item in good.infolist():
            bad.writestr(item, good.read(item))
        bad.writestr("energy_evil.npy", pickled.getvalue())


if __name__ == "__main__":
    meshes()
    trajectories()
    sizes = {p.name: p.stat().st_size for p in HERE.iterdir() if p.suffix != ".py"}
    print(f"{len(sizes)} files, {sum(sizes.values())} bytes")
