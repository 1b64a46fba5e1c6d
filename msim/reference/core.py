"""Mass-spring primitives written with vectorised NumPy and SciPy sparse.

An independent implementation of what the C core computes: benchmarks time msim against
algorithms built from these, and tests use them as an oracle. Shapes: x (n,3) [m],
edges (m,2), k and rest (m,), mass (n,) [kg].
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def spring_energy(x: np.ndarray, edges: np.ndarray, k: np.ndarray, rest: np.ndarray) -> float:
    """Sum of k/2 (|x_i - x_j| - r)^2 [J]."""
    d = x[edges[:, 0]] - x[edges[:, 1]]
    return float(0.5 * np.sum(k * (np.linalg.norm(d, axis=1) - rest) ** 2))


def spring_forces(x: np.ndarray, edges: np.ndarray, k: np.ndarray,
                  rest: np.ndarray) -> np.ndarray:
    """-grad of the spring energy, (n,3) [N]; zero-length springs push nothing."""
    d = x[edges[:, 0]] - x[edges[:, 1]]
    length = np.linalg.norm(d, axis=1)
    safe = np.where(length > 0, length, 1.0)
    fs = (-k * (length - rest) / safe * (length > 0))[:, None] * d
    return scatter_pairs(edges, fs, len(x))


def scatter_pairs(edges: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """(n,3) sums: +values[s] onto vertex edges[s,0], -values[s] onto edges[s,1]."""
    out = np.empty((n, 3))
    for t in range(3):
        out[:, t] = (np.bincount(edges[:, 0], values[:, t], n)
                     - np.bincount(edges[:, 1], values[:, t], n))
    return out


def spring_hessian_blocks(x: np.ndarray, edges: np.ndarray, k: np.ndarray, rest: np.ndarray,
                          clamp: bool = True) -> np.ndarray:
    """Per-spring 3x3 blocks k uu^T + k (1 - r/l)(I - uu^T), (m,3,3) [N/m].

    clamp=True drops the negative part of compressed springs ((1 - r/l) clamped at 0).
    """
    d = x[edges[:, 0]] - x[edges[:, 1]]
    length = np.linalg.norm(d, axis=1)
    u = d / np.where(length > 0, length, 1.0)[:, None]
    uu = u[:, :, None] * u[:, None, :]
    lateral = 1.0 - rest / np.where(length > 0, length, np.inf)
    if clamp:
        lateral = np.maximum(lateral, 0.0)
    eye = np.eye(3)[None]
    return k[:, None, None] * (uu + lateral[:, None, None] * (eye - uu))


def spring_hessian(x: np.ndarray, edges: np.ndarray, k: np.ndarray, rest: np.ndarray,
                   clamp: bool = True) -> sp.csr_matrix:
    """The (3n,3n) Hessian of the spring energy assembled from `spring_hessian_blocks`."""
    n = len(x)
    blocks = spring_hessian_blocks(x, edges, k, rest, clamp)
    i, j = edges[:, 0], edges[:, 1]
    r = (3 * np.repeat(np.stack([i, j, i, j], 1), 9, 1) + np.tile(np.repeat(np.arange(3), 3), 4))
    c = (3 * np.repeat(np.stack([i, j, j, i], 1), 9, 1) + np.tile(np.tile(np.arange(3), 3), 4))
    flat = blocks.reshape(-1, 9)
    v = np.concatenate([flat, flat, -flat, -flat], axis=1)
    return sp.csr_matrix((v.ravel(), (r.ravel(), c.ravel())), shape=(3 * n, 3 * n))


def inertial_target(x: np.ndarray, v: np.ndarray, h: float, gravity: np.ndarray,
                    fixed: np.ndarray) -> np.ndarray:
    """y = x + h v + h^2 g on free vertices, y = x on fixed ones; (n,3) [m]."""
    y = x + h * v + h * h * np.asarray(gravity)[None]
    y[fixed] = x[fixed]
    return y


def objective(x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray, edges: np.ndarray,
              k: np.ndarray, rest: np.ndarray, fixed: np.ndarray) -> float:
    """g(x) = |x - y|_M^2 / (2 h^2) + E_spring(x) over free vertices [J]."""
    free = ~fixed_mask(len(x), fixed)
    inertia = 0.5 * np.sum(mass[free, None] * (x[free] - y[free]) ** 2) / h**2
    return float(inertia + spring_energy(x, edges, k, rest))


def objective_grad(x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray,
                   edges: np.ndarray, k: np.ndarray, rest: np.ndarray,
                   fixed: np.ndarray) -> np.ndarray:
    """M (x - y) / h^2 - f_spring(x), zero on fixed vertices; (n,3) [N]."""
    g = mass[:, None] * (x - y) / h**2 - spring_forces(x, edges, k, rest)
    g[fixed_mask(len(x), fixed)] = 0.0
    return g


def fixed_mask(n: int, fixed: np.ndarray) -> np.ndarray:
    """Boolean (n,) mask from vertex indices or a mask."""
    fixed = np.asarray(fixed)
    if fixed.dtype == bool:
        return fixed
    mask = np.zeros(n, bool)
    mask[fixed.astype(int)] = True
    return mask
