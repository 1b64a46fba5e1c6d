"""3D geometry shared by msim.plot (matplotlib) and msim.view (k3d): what one frame draws,
checked (`_Scene`), world bounds, and triangles of spheres and plane patches."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._core import System  # the base of msim.System: this module needs no more of it
from .mesh import grid_faces


def _float_rows(name: str, value, width: int, what: str, row: str = "row") -> np.ndarray:
    """value as a float (k, width) array of `what`, every number finite; a TypeError or
    ValueError naming `name` and, for a NaN or infinite number, the first `row` holding one.
    A single row (width,) is taken as (1, width)."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected {what}, got {type(value).__name__}") from err
    a = a.reshape(1, width) if a.shape == (width,) else a
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name}: expected {what}, got shape {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
    if len(bad):
        raise ValueError(f"{name}: expected finite numbers, got {a[bad[0]].tolist()} in {row} "
                         f"{bad[0]} ({len(bad)} of {len(a)} not finite)")
    return a


def _finite_points(name: str, value) -> np.ndarray:
    """value as (n,3) finite float positions [m] (see _float_rows)."""
    if np.ndim(value) != 2:
        raise ValueError(f"{name}: expected (n, 3) positions [m], got shape {np.shape(value)}")
    return _float_rows(name, value, 3, "(n, 3) positions [m]", "vertex")


def _indices(name: str, value, width: int, n: int) -> np.ndarray | None:
    """value as an (k, width) array of vertex indices below n, None when value is None."""
    if value is None:
        return None
    a = np.asarray(value)
    what = {1: "(k,) indices", 2: "(m, 2) springs", 3: "(f, 3) triangles",
            4: "(k, 4) tetrahedra"}[width]
    if a.size == 0:
        return np.zeros((0, width), np.int64)
    if a.ndim != 2 or a.shape[1] != width:
        hint = "; springs go in edges=" if width == 3 and a.ndim == 2 and a.shape[1] == 2 else ""
        raise ValueError(f"{name}: expected {what} of vertex indices, got shape {a.shape}{hint}")
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name}: expected integer vertex indices, got dtype {a.dtype}")
    if a.min() < 0 or a.max() >= n:
        bad = a.max() if a.max() >= n else a.min()
        raise ValueError(f"{name}: expected vertex indices below {n}, got {bad}")
    return a.astype(np.int64)


def _rows4(name: str, value, kind: str | None = None) -> np.ndarray:
    """Collider rows (k,4) (one (4,) row allowed); empty when value is None. Every number
    finite, and for kind "planes" a non-zero normal, for "spheres" a radius > 0 [m]."""
    a = np.zeros((0, 4)) if value is None else _float_rows(name, value, 4, "(k, 4) rows")
    if kind == "planes" and len(a) and not (np.linalg.norm(a[:, :3], axis=1) > 0).all():
        row = int(np.argmin(np.linalg.norm(a[:, :3], axis=1)))
        raise ValueError(f"{name}: expected rows of a non-zero normal and an offset, got a zero "
                         f"normal in row {row}")
    if kind == "spheres" and len(a) and not (a[:, 3] > 0).all():
        row = int(np.argmin(a[:, 3]))
        raise ValueError(f"{name}: expected rows of centre and radius > 0 [m], got radius "
                         f"{a[row, 3]:g} in row {row}")
    return a


@dataclass
class _Scene:
    """What one frame draws, checked: positions, faces, edges, fixed indices, colliders."""

    x: np.ndarray
    faces: np.ndarray
    edges: np.ndarray | None
    fixed: np.ndarray
    spheres: np.ndarray
    planes: np.ndarray

    @classmethod
    def of(cls, system, x, faces, edges, fixed, spheres, planes) -> _Scene:
        """Check the arguments; what is not given comes from `system` when there is one."""
        if system is not None and not isinstance(system, System):
            raise TypeError(f"system: expected an msim.System, got {type(system).__name__}")
        n = len(x)
        faces = _indices("faces", faces, 3, n)
        faces = np.zeros((0, 3), np.int64) if faces is None else faces
        edges = _indices("edges", edges, 2, n)
        if system is not None:
            if system.n_vertices != n:
                raise ValueError(f"system: expected {n} vertices like positions, got "
                                 f"{system.n_vertices}")
            edges = system.edges if edges is None and not len(faces) else edges
            fixed = system.fixed if fixed is None else fixed
            spheres = system.spheres if spheres is None else spheres
            planes = system.planes if planes is None else planes
        if not len(faces) and (edges is None or not len(edges)):
            raise ValueError("nothing to draw: faces is empty or None (a rope has no faces) and "
                             "no edges were given; draw springs as lines with edges=mesh.edges")
        fixed = np.asarray([] if fixed is None else list(fixed), dtype=np.int64)
        _indices("fixed", fixed.reshape(-1, 1), 1, n)
        return cls(x, faces, edges, fixed, _rows4("spheres", spheres, "spheres"),
                   _rows4("planes", planes, "planes"))

    def limits(self, points: np.ndarray | None = None) -> np.ndarray:
        """(3,2) world bounds holding `points` (default the positions), spheres and planes."""
        points = self.x if points is None else points
        body = _bounds(np.concatenate([points, self.spheres[:, :3] - self.spheres[:, 3:],
                                       self.spheres[:, :3] + self.spheres[:, 3:]]))
        patches = [_plane_patch(p, body).reshape(-1, 3) for p in self.planes]
        return _bounds(np.concatenate([points, *patches]) if patches else points, body)

    def surfaces(self, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shaded triangles (k,3,3) in world coordinates and RGBA colours (k,4): the faces,
        then the spheres, then the plane patches, sorted by depth together when drawn."""
        parts = [(self.x[self.faces], (0.35, 0.55, 0.85, 1.0))]
        parts += [(_sphere_triangles(s), (0.85, 0.6, 0.35, 1.0)) for s in self.spheres]
        parts += [(_grid_triangles(_plane_patch(p, box)), (0.6, 0.6, 0.6, 0.35))
                  for p in self.planes]
        triangles = np.concatenate([t for t, _ in parts])
        colours = np.concatenate([_shade(t, c) for t, c in parts])
        return triangles, colours


def _bounds(points: np.ndarray, also: np.ndarray | None = None) -> np.ndarray:
    """(3,2) lower and upper bounds of (k,3) points (and of a (3,2) box), padded by 5 % of
    the largest span on every side so that a flat cloth keeps a visible thickness."""
    lo, hi = points.min(0), points.max(0)
    if also is not None:
        lo, hi = np.minimum(lo, also[:, 0]), np.maximum(hi, also[:, 1])
    pad = 0.05 * max(float((hi - lo).max()), 1e-3)
    return np.stack([lo - pad, hi + pad], axis=1)


def _shade(triangles: np.ndarray, rgba) -> np.ndarray:
    """RGBA (k,4) of `rgba` darkened by the angle between each triangle and a fixed light."""
    normal = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
    light = np.array([0.3, 0.8, -0.5]) / np.sqrt(0.98)  # world y-up: from above and in front
    shade = 0.35 + 0.65 * np.abs(normal @ light)
    colours = np.empty((len(triangles), 4))
    colours[:, :3] = np.clip(shade[:, None] * np.asarray(rgba[:3]), 0, 1)
    colours[:, 3] = rgba[3]
    return colours


def _sphere_triangles(sphere: np.ndarray, rings: int = 12, sectors: int = 24) -> np.ndarray:
    """Triangles (k,3,3) [m] on the sphere (centre, radius): a latitude-longitude grid."""
    theta, phi = np.meshgrid(np.linspace(0, np.pi, rings + 1),
                             np.linspace(0, 2 * np.pi, sectors + 1), indexing="ij")
    unit = np.stack([np.sin(theta) * np.cos(phi), np.cos(theta), np.sin(theta) * np.sin(phi)],
                    axis=-1)
    return _grid_triangles(sphere[:3] + sphere[3] * unit)


def _plane_patch(plane: np.ndarray, box: np.ndarray, cells: int = 8) -> np.ndarray:
    """A (cells+1, cells+1, 3) grid of points [m] on the plane n.x = offset, a square centred
    under the middle of `box` (3,2) and as wide as the box's largest span."""
    n = plane[:3] / np.linalg.norm(plane[:3])
    offset = plane[3] / np.linalg.norm(plane[:3])
    middle = box.mean(axis=1)
    centre = middle - (n @ middle - offset) * n
    t1 = np.cross(n, np.eye(3)[np.argmin(np.abs(n))])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    s = np.linspace(-0.5, 0.5, cells + 1) * float((box[:, 1] - box[:, 0]).max())
    return centre + s[:, None, None] * t1 + s[None, :, None] * t2


def _grid_triangles(grid: np.ndarray) -> np.ndarray:
    """Two triangles (k,3,3) per cell of an (a,b,3) grid of points."""
    return grid.reshape(-1, 3)[grid_faces(np.arange(grid.shape[0] * grid.shape[1]).reshape(
        grid.shape[:2]))]
