"""Mesh input and trajectory output.

Reading goes through meshio (OBJ, PLY, MEDIT .mesh, Gmsh .msh, VTK/VTU and more): springs are
every distinct edge of the mesh's cells (all six edges of each tetrahedron, as the paper's
hippo, frog and dog examples do; the three of each triangle). Trajectories are written as an
OBJ sequence (Blender) or a VTU series with a PVD index (ParaView), and saved whole as .npz
(`Trajectory.save` / `Trajectory.load`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import quoteattr

import numpy as np

from .compare import edge_strain
from .mesh import Mesh, boundary_faces, springs_from_cells
from .system import System, Trajectory

# the tag Trajectory.save writes into its .npz, checked by load
TRAJECTORY_FORMAT = "msim.Trajectory 1"


def read_mesh(path: str | Path) -> Mesh:
    """Read a mesh file with meshio; springs are the distinct edges of all its cells.

    Faces for drawing: the file's triangles (quads split in two), else the boundary of its
    tetrahedra. Vertices unused by any cell are kept (they become free particles).
    """
    try:
        import meshio
    except ImportError as err:
        raise ImportError("msim.io.read_mesh needs meshio: pip install meshio") from err
    m = meshio.read(path)
    cells: dict[str, list[np.ndarray]] = {}
    for block in m.cells:
        cells.setdefault(block.type, []).append(np.asarray(block.data, dtype=np.int64))
    merged = {kind: np.concatenate(blocks) for kind, blocks in cells.items()}
    faces = [merged["triangle"]] if "triangle" in merged else []
    if "quad" in merged:
        q = merged["quad"]
        faces += [q[:, [0, 1, 2]], q[:, [0, 2, 3]]]
    if not faces and "tetra" in merged:
        faces = [boundary_faces(merged["tetra"])]
    vertices = np.zeros((len(m.points), 3))
    vertices[:, : m.points.shape[1]] = m.points
    face_array = np.concatenate(faces).astype(np.int64) if faces else np.zeros((0, 3), np.int64)
    return Mesh(vertices, springs_from_cells(merged), face_array)


def write_obj_sequence(traj: Trajectory, faces: np.ndarray, folder: str | Path,
                       stem: str = "frame") -> list[Path]:
    """Write each recorded frame as folder/stem_0000.obj with `faces` (f,3); return the paths.

    Blender imports the sequence with its "Stop-motion OBJ" importer or frame by frame.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    face_lines = "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in np.asarray(faces))
    paths = []
    for k, x in enumerate(traj.positions):
        path = folder / f"{stem}_{k:04d}.obj"
        vertex_lines = "".join(f"v {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n" for p in x)
        path.write_text(f"# msim {traj.method} t={traj.times[k]:.9g}\n{vertex_lines}{face_lines}")
        paths.append(path)
    return paths


def write_vtu_series(traj: Trajectory, folder: str | Path, *, faces: np.ndarray | None = None,
                     edges: np.ndarray | None = None, system: System | None = None,
                     stem: str = "frame") -> Path:
    """Write each frame as VTU (triangles `faces` and/or line springs `edges`) plus stem.pvd
    indexing them by time; return the .pvd path, which ParaView opens as an animation.

    Point data, for colouring in ParaView: "velocity" (n,3) [m/s], the recorded velocities
    (for a Trajectory without them, central differences of the frames, one-sided at the
    ends); with `system` (the run's System) also "strain", the mean (l - r)/r of the springs
    at each vertex, and "fixed", 1 for kinematic vertices and 0 for free ones.
    """
    import meshio

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cells = [(kind, np.asarray(c)) for kind, c in (("triangle", faces), ("line", edges))
             if c is not None and len(c)]
    velocities = traj.velocities
    if velocities is None:
        velocities = (np.gradient(traj.positions, traj.times, axis=0)
                      if len(traj.times) > 1 else np.zeros_like(traj.positions))
    fixed = None
    if system is not None:
        fixed = np.zeros(system.n_vertices, dtype=np.int8)
        fixed[system.fixed] = 1
    entries = []
    for k, x in enumerate(traj.positions):
        data = {"velocity": velocities[k]}
        if system is not None:
            data["strain"] = vertex_strain(x, system.edges, system.rest_lengths)
            data["fixed"] = fixed
        name = f"{stem}_{k:04d}.vtu"
        meshio.write(folder / name, meshio.Mesh(x, cells, point_data=data))
        entries.append(f'    <DataSet timestep="{traj.times[k]:.9g}" file={quoteattr(name)}/>')
    pvd = folder / f"{stem}.pvd"
    pvd.write_text('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n'
                   "  <Collection>\n" + "\n".join(entries) + "\n  </Collection>\n</VTKFile>\n")
    return pvd


def vertex_strain(positions: np.ndarray, edges: np.ndarray,
                  rest_lengths: np.ndarray) -> np.ndarray:
    """(n,) mean strain (l - r)/r of the springs at each vertex, 0 at a vertex without any."""
    per_spring = edge_strain(positions, edges, rest_lengths)
    n = len(positions)
    total = np.bincount(edges.ravel(), weights=np.repeat(per_spring, 2), minlength=n)
    count = np.bincount(edges.ravel(), minlength=n)
    return np.divide(total, count, out=np.zeros(n), where=count > 0)


def write_mesh(path: str | Path, vertices: np.ndarray, *, faces: np.ndarray | None = None,
               tets: np.ndarray | None = None) -> None:
    """Write vertices with triangles and/or tetrahedra in any format meshio knows."""
    import meshio

    cells: Sequence = [(kind, np.asarray(c)) for kind, c in (("triangle", faces), ("tetra", tets))
                       if c is not None and len(c)]
    meshio.write(path, meshio.Mesh(np.asarray(vertices, dtype=float), cells))


def save_trajectory(traj: Trajectory, path: str | Path) -> None:
    """Write `traj` to an .npz: its arrays as they are, the rest (method, dt, diverged,
    options, the order of the energy terms) as JSON, which keeps floats exact.

    Options must be numbers, strings, bools or None (NumPy scalars are saved as Python ones).
    """
    options = {}
    for key, value in traj.options.items():
        value = value.item() if isinstance(value, np.generic) else value
        if not isinstance(value, (bool, int, float, str, type(None))):
            raise TypeError(f"options[{key!r}]: expected a number, string, bool or None to save, "
                            f"got {type(value).__name__}")
        options[key] = value
    meta = {"format": TRAJECTORY_FORMAT, "method": traj.method, "dt": float(traj.dt),
            "diverged": traj.diverged, "options": options, "energies": list(traj.energies)}
    arrays = {"positions": traj.positions, "times": traj.times, "seconds": traj.seconds,
              "iterations": traj.iterations}
    arrays.update({f"energy_{name}": values for name, values in traj.energies.items()})
    if traj.velocities is not None:
        arrays["velocities"] = traj.velocities
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)


def load_trajectory(path: str | Path) -> Trajectory:
    """Read a Trajectory written by `save_trajectory` (Trajectory.save)."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"])) if "meta" in data.files else {}
        if meta.get("format") != TRAJECTORY_FORMAT:
            raise ValueError(f"path: expected an .npz written by Trajectory.save, got {path} "
                             f"holding {sorted(data.files)}")
        return Trajectory(
            method=meta["method"], dt=meta["dt"], positions=data["positions"],
            times=data["times"], energies={k: data[f"energy_{k}"] for k in meta["energies"]},
            seconds=data["seconds"], iterations=data["iterations"], diverged=meta["diverged"],
            options=meta["options"],
            velocities=data["velocities"] if "velocities" in data.files else None)
