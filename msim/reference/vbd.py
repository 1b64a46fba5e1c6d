"""Vertex block descent (Chen, Liu, Yang and Yuksel 2024) in NumPy, without contact.

The oracle for msim's solver="vbd": a greedy colouring of the spring graph and one sweep in
which each colour's vertices all read the positions left by the previous colours (Jacobi
within a colour, Gauss-Seidel across colours), as a parallel sweep computes them. Vertex i
takes the Newton step dx = -H^-1 grad of its share of g,

    G_i(x_i) = m_i/(2 h^2) |x_i - y_i|^2 + sum over springs s at i of k_s/2 (l_s - r_s)^2,

with each spring's Hessian block clamped positive semidefinite, halved until
G_i(x_i + dx) - G_i(x_i) <= 1e-4 grad.dx (at most 20 halvings; otherwise x_i stays). Shapes as
in msim.reference.core: x, y (n,3) [m], edges (m,2), k, rest (m,), mass (n,) [kg].
"""

from __future__ import annotations

import numpy as np

from . import core as ref

ARMIJO = 1e-4
HALVINGS = 20


def greedy_colors(n: int, edges: np.ndarray) -> np.ndarray:
    """(n,) colour of each vertex: in index order, the smallest colour that none of its
    lower-numbered neighbours has."""
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for i, j in edges:
        neighbours[i].append(j)
        neighbours[j].append(i)
    color = np.zeros(n, dtype=int)
    for v in range(n):
        taken = {color[w] for w in neighbours[v] if w < v}
        color[v] = next(c for c in range(n) if c not in taken)
    return color


def local_energy(xi: np.ndarray, i: int, x: np.ndarray, y: np.ndarray, h: float,
                 mass: np.ndarray, edges: np.ndarray, k: np.ndarray, rest: np.ndarray) -> float:
    """G_i with vertex i at xi and every other vertex at x [J]."""
    at = np.flatnonzero((edges[:, 0] == i) | (edges[:, 1] == i))
    other = np.where(edges[at, 0] == i, edges[at, 1], edges[at, 0])
    length = np.linalg.norm(xi - x[other], axis=1)
    spring = 0.5 * np.sum(k[at] * (length - rest[at]) ** 2)
    return float(0.5 * mass[i] / h**2 * np.sum((xi - y[i]) ** 2) + spring)


def vertex_step(i: int, x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray,
                edges: np.ndarray, k: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Vertex i's new position (3,) after its safeguarded Newton step on G_i."""
    at = np.flatnonzero((edges[:, 0] == i) | (edges[:, 1] == i))
    pair = np.stack([np.full(len(at), i), np.where(edges[at, 0] == i, edges[at, 1],
                                                     edges[at, 0])], axis=1)
    blocks = ref.spring_hessian_blocks(x, pair, k[at], rest[at], clamp=True)
    force = ref.spring_forces(x, pair, k[at], rest[at])[i]
    grad = mass[i] / h**2 * (x[i] - y[i]) - force
    hess = mass[i] / h**2 * np.eye(3) + blocks.sum(axis=0)
    dx = -np.linalg.solve(hess, grad)
    slope = grad @ dx
    g0 = local_energy(x[i], i, x, y, h, mass, edges, k, rest)
    for alpha in 0.5 ** np.arange(HALVINGS + 1):
        trial = x[i] + alpha * dx
        if local_energy(trial, i, x, y, h, mass, edges, k, rest) - g0 <= ARMIJO * alpha * slope:
            return trial
    return x[i].copy()


def sweep(x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray, edges: np.ndarray,
          k: np.ndarray, rest: np.ndarray, fixed: np.ndarray, color: np.ndarray) -> np.ndarray:
    """x after one VBD sweep, colour by colour; fixed (boolean mask) vertices stay."""
    x = x.copy()
    for c in range(color.max() + 1):
        members = [i for i in np.flatnonzero(color == c) if not fixed[i]]
        moved = [vertex_step(i, x, y, h, mass, edges, k, rest) for i in members]
        for i, xi in zip(members, moved):
            x[i] = xi
    return x
