"""Mesh generators: cloth grids, ropes and volumetric cube lattices.

Each returns a `Mesh` of NumPy arrays: vertices (n,3) float64 [m], edges (m,2) int64 (one
spring per row) and faces (f,3) int64 triangles for drawing (empty for a rope).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .methods import as_int


class Mesh(NamedTuple):
    """vertices (n,3) float64 [m]; edges (m,2) int64; faces (f,3) int64 triangles."""

    vertices: np.ndarray
    edges: np.ndarray
    faces: np.ndarray


def lattice_pairs(shape: Sequence[int], offset: Sequence[int]) -> np.ndarray:
    """Pairs (p, p + offset) of a C-ordered index lattice of `shape`, both inside it: (k,2)."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    src = tuple(slice(max(0, -o), s - max(0, o)) for s, o in zip(shape, offset))
    dst = tuple(slice(max(0, o), s - max(0, -o)) for s, o in zip(shape, offset))
    return np.stack([index[src].ravel(), index[dst].ravel()], axis=1).astype(np.int64)


def grid_faces(index: np.ndarray) -> np.ndarray:
    """Two triangles per cell of a 2-D array of vertex indices: (2 (a-1)(b-1), 3)."""
    a, b, c, d = index[:-1, :-1], index[:-1, 1:], index[1:, 1:], index[1:, :-1]
    tri = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], axis=2)
    return tri.reshape(-1, 3).astype(np.int64)


def _springs(shape: Sequence[int], groups: dict[str, list[tuple[int, ...]]],
             chosen: dict[str, bool]) -> np.ndarray:
    """Edges of every chosen group of lattice offsets, concatenated: (m,2)."""
    parts = [lattice_pairs(shape, off) for name, offs in groups.items() if chosen[name]
             for off in offs]
    return np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)


def _extent(name: str, size: float | Sequence[float], dims: int) -> np.ndarray:
    """`size` as `dims` positive lengths."""
    ext = np.broadcast_to(np.asarray(size, dtype=float), (dims,)).copy()
    if not np.all(np.isfinite(ext) & (ext > 0)):
        raise ValueError(f"{name}: expected positive finite length(s), got {size!r}")
    return ext


def cloth_grid(nx: int, ny: int, size: float | Sequence[float] = 1.0, *,
               structural: bool = True, shear: bool = True, bending: bool = True,
               plane: str = "xz", origin: Sequence[float] = (0.0, 0.0, 0.0)) -> Mesh:
    """A rectangular cloth of nx x ny vertices spanning `size` metres (scalar or (sx, sy)).

    Vertex (i, j), i < nx along the first axis, j < ny along the second, has index j*nx + i,
    so vertices 0 and nx-1 are the two corners of the first row. plane="xz" lays the cloth
    horizontally (y-up worlds); plane="xy" hangs it vertically with row 0 on top. Springs:
    structural (grid neighbours), shear (cell diagonals), bending (second neighbours).
    """
    nx, ny = as_int("nx", nx, 2), as_int("ny", ny, 2)
    sx, sy = _extent("size", size, 2)
    if plane not in ("xz", "xy"):
        raise ValueError(f"plane: expected 'xz' or 'xy', got {plane!r}")
    u, w = np.meshgrid(np.linspace(0, sx, nx), np.linspace(0, sy, ny))
    zero = np.zeros_like(u)
    coords = (u, zero, w) if plane == "xz" else (u, -w, zero)
    vertices = np.stack([c.ravel() for c in coords], axis=1) + np.asarray(origin, float)
    groups = {"structural": [(0, 1), (1, 0)], "shear": [(1, 1), (1, -1)],
              "bending": [(0, 2), (2, 0)]}
    edges = _springs((ny, nx), groups,
                     {"structural": structural, "shear": shear, "bending": bending})
    faces = grid_faces(np.arange(nx * ny).reshape(ny, nx))
    return Mesh(vertices, edges, faces)


def rope(n: int, length: float = 1.0, *, start: Sequence[float] = (0.0, 0.0, 0.0),
         direction: Sequence[float] = (0.0, -1.0, 0.0), bending: bool = False) -> Mesh:
    """A chain of n vertices over `length` metres from `start` along `direction`.

    Springs join neighbours; bending=True adds springs between second neighbours.
    """
    n = as_int("n", n, 2)
    length = float(_extent("length", length, 1)[0])
    d = np.asarray(direction, dtype=float)
    if d.shape != (3,) or not np.all(np.isfinite(d)) or not np.linalg.norm(d) > 0:
        raise ValueError(f"direction: expected a non-zero finite 3-vector, got {direction!r}")
    t = np.linspace(0.0, length, n)[:, None]
    vertices = np.asarray(start, float) + t * d / np.linalg.norm(d)
    edges = _springs((n,), {"chain": [(1,)], "bending": [(2,)]},
                     {"chain": True, "bending": bending and n > 2})
    return Mesh(vertices, edges, np.zeros((0, 3), np.int64))


def cube_lattice(nx: int, ny: int, nz: int, size: float | Sequence[float] = 1.0, *,
                 shear: bool = True, bending: bool = False,
                 origin: Sequence[float] = (0.0, 0.0, 0.0)) -> Mesh:
    """A solid box of nx x ny x nz vertices spanning `size` metres (scalar or (sx, sy, sz)).

    Vertex (i, j, k) has index (k*ny + j)*nx + i. Springs: structural (axis neighbours), shear
    (face and body diagonals of every cell) and bending (second axis neighbours). Faces
    triangulate the six sides for drawing.
    """
    nx, ny, nz = as_int("nx", nx, 2), as_int("ny", ny, 2), as_int("nz", nz, 2)
    ext = _extent("size", size, 3)
    z, y, x = np.meshgrid(*(np.linspace(0, e, n) for e, n in zip(ext[::-1], (nz, ny, nx))),
                          indexing="ij")
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], 1) + np.asarray(origin, float)
    groups = {
        "structural": [(1, 0, 0), (0, 1, 0), (0, 0, 1)],
        "shear": [(0, 1, 1), (0, 1, -1), (1, 0, 1), (1, 0, -1), (1, 1, 0), (1, -1, 0),
                  (1, 1, 1), (1, 1, -1), (1, -1, 1), (1, -1, -1)],
        "bending": [(2, 0, 0), (0, 2, 0), (0, 0, 2)],
    }
    edges = _springs((nz, ny, nx), groups,
                     {"structural": True, "shear": shear, "bending": bending})
    index = np.arange(nx * ny * nz).reshape(nz, ny, nx)
    sides = [index[0], index[-1].T, index[:, 0].T, index[:, -1], index[:, :, 0],
             index[:, :, -1].T]
    faces = np.concatenate([grid_faces(side) for side in sides])
    return Mesh(vertices, edges, faces)


# the edges of each cell type as pairs of local vertex numbers
CELL_EDGES = {
    "line": [(0, 1)],
    "triangle": [(0, 1), (1, 2), (2, 0)],
    "quad": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "tetra": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
    "hexahedron": [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                   (0, 4), (1, 5), (2, 6), (3, 7)],
}

# the faces of a tetrahedron (0,1,2,3), each ordered to face outwards for positive volume
TET_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def unique_edges(pairs: np.ndarray) -> np.ndarray:
    """Distinct undirected edges of (k,2) vertex pairs, each row sorted, in sorted order."""
    pairs = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    return np.unique(pairs, axis=0)


def cell_edges(kind: str, cells: np.ndarray) -> np.ndarray:
    """All edges of cells of one meshio `kind` (k, nodes) as (k * edges_per_cell, 2) pairs."""
    local = np.array(CELL_EDGES[kind])
    return np.asarray(cells)[:, local].reshape(-1, 2)


def boundary_faces(tets: np.ndarray) -> np.ndarray:
    """Triangles that belong to exactly one tetrahedron: the surface of a tet mesh, (f,3)."""
    faces = np.asarray(tets)[:, np.array(TET_FACES)].reshape(-1, 3)
    key = np.sort(faces, axis=1)
    _, first, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
    return faces[np.sort(first[counts == 1])]


def springs_from_cells(cells: dict[str, np.ndarray]) -> np.ndarray:
    """Distinct edges of every supported cell block: {meshio kind: (k, nodes)} -> (m,2)."""
    parts = [cell_edges(kind, c) for kind, c in cells.items() if kind in CELL_EDGES]
    return unique_edges(np.concatenate(parts)) if parts else np.zeros((0, 2), np.int64)


def box_tets(nx: int, ny: int, nz: int, size: float | Sequence[float] = 1.0, *,
             origin: Sequence[float] = (0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """A box of nx x ny x nz lattice vertices cut into tetrahedra, six per cell (Kuhn).

    Returns vertices (n,3) [m] and tets (6 (nx-1)(ny-1)(nz-1), 4), all positively oriented.
    """
    lattice = cube_lattice(nx, ny, nz, size, shear=False, origin=origin)
    index = np.arange(nx * ny * nz).reshape(nz, ny, nx)
    corner = lambda di, dj, dk: index[dk:nz - 1 + dk, dj:ny - 1 + dj, di:nx - 1 + di].ravel()
    tets = []
    for axes in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]:
        step, path = [0, 0, 0], [corner(0, 0, 0)]
        for a in axes:  # walk from corner 000 to 111 one axis at a time
            step[a] = 1
            path.append(corner(*step))
        tets.append(np.stack(path, axis=1))
    tets = np.concatenate(tets)
    x = lattice.vertices[tets]
    volume = np.einsum("ij,ij->i", x[:, 1] - x[:, 0], np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]))
    tets[volume < 0] = tets[volume < 0][:, [0, 2, 1, 3]]
    return lattice.vertices, tets.astype(np.int64)


def tet_mesh(vertices: np.ndarray, tets: np.ndarray) -> Mesh:
    """A volumetric spring mesh: every distinct tetrahedron edge a spring, boundary faces."""
    return Mesh(np.asarray(vertices, dtype=float), springs_from_cells({"tetra": tets}),
                boundary_faces(tets))


def triangle_mesh(vertices: np.ndarray, faces: np.ndarray) -> Mesh:
    """A surface spring mesh: every distinct triangle edge a spring."""
    faces = np.asarray(faces, dtype=np.int64)
    return Mesh(np.asarray(vertices, dtype=float), springs_from_cells({"triangle": faces}), faces)
