"""Strain of springs: how far each is stretched past its rest length, (l - r) / r.

Per spring (`edge_strain`, `spring_strain`), the largest of a System (`max_strain`) and per
vertex, the mean over its springs (`vertex_strain`, what ParaView exports and the viewer
colour by). All dimensionless; 0 where a rest length r is 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .system import System


def edge_strain(positions: np.ndarray, edges: np.ndarray, rest_lengths: np.ndarray) -> np.ndarray:
    """(m,) strain (l - r) / r of springs `edges` (m,2) at `positions` (n,3) [m]
    (dimensionless), 0 where the rest length r is 0."""
    x, e, r = positions, edges, rest_lengths
    length = np.linalg.norm(x[e[:, 0]] - x[e[:, 1]], axis=1)
    return np.divide(length - r, r, out=np.zeros_like(r), where=r > 0)


def spring_strain(sim: System) -> np.ndarray:
    """(m,) strain (l - r) / r of every spring of `sim` (dimensionless), 0 where r is 0."""
    return edge_strain(sim.positions, sim.edges, sim.rest_lengths)


def max_strain(sim: System) -> float:
    """Largest |l - r| / r over springs with r > 0 (dimensionless)."""
    return float(np.max(np.abs(spring_strain(sim)), initial=0.0))


def vertex_strain(positions: np.ndarray, edges: np.ndarray,
                  rest_lengths: np.ndarray) -> np.ndarray:
    """(n,) mean strain (l - r)/r of the springs at each vertex, 0 at a vertex without any."""
    per_spring = edge_strain(positions, edges, rest_lengths)
    n = len(positions)
    total = np.bincount(edges.ravel(), weights=np.repeat(per_spring, 2), minlength=n)
    count = np.bincount(edges.ravel(), minlength=n)
    return np.divide(total, count, out=np.zeros(n), where=count > 0)
