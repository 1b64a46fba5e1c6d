"""Implicit Euler (Newton) and linearised implicit Euler in NumPy/SciPy.

The oracle the tests compare msim's implicit methods with, and the baseline
benchmarks/run.py times. Built from msim.reference.core; fixed vertices are
eliminated (only free vertices' coordinates are unknowns). Shapes: x, v (n,3) [m, m/s];
edges (m,2); k, rest (m,); mass (n,) [kg]; fixed: indices or a boolean mask. `v` is the
velocity after damping (msim multiplies by exp(-damping h) before a step).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import core as ref



def spd_lu(a: sp.csc_matrix) -> spla.SuperLU:
    """SuperLU factor of a symmetric positive definite matrix, configured as a Cholesky.

    SciPy has no sparse Cholesky, so LU stands in for CHOLMOD's LL^T with what makes it the
    same algorithm: a symmetric fill-reducing ordering (minimum degree on A^T + A, as AMD) and
    diagonal pivots (SymmetricMode). spsolve's defaults (COLAMD, partial pivoting) fill these
    matrices ~1.6x more, and partial pivoting undoes a symmetric ordering (5 s instead of 0.7
    s on the 100 x 100 cloth's Newton matrix).
    """
    return spla.splu(a, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                     options={"SymmetricMode": True})


def free_dofs(n: int, fixed: np.ndarray) -> np.ndarray:
    """Indices of the 3n coordinates that belong to free vertices."""
    free = ~ref.fixed_mask(n, fixed)
    return (3 * np.flatnonzero(free)[:, None] + np.arange(3)).ravel()


def newton_system(x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray, edges: np.ndarray,
                  k: np.ndarray, rest: np.ndarray, fixed: np.ndarray,
                  clamp: bool = True) -> tuple[sp.csc_matrix, np.ndarray]:
    """Hessian M/h^2 + H(x) [N/m] and gradient [N] of g over free coordinates."""
    dofs = free_dofs(len(x), fixed)
    hess = sp.diags(np.repeat(mass, 3) / h**2) + ref.spring_hessian(x, edges, k, rest, clamp)
    grad = ref.objective_grad(x, y, h, mass, edges, k, rest, fixed).ravel()
    return hess.tocsr()[dofs][:, dofs].tocsc(), grad[dofs]


def newton_iteration(x: np.ndarray, y: np.ndarray, h: float, mass: np.ndarray,
                     edges: np.ndarray, k: np.ndarray, rest: np.ndarray, fixed: np.ndarray,
                     clamp: bool = True) -> np.ndarray:
    """x - (grad^2 g)^-1 grad g on free coordinates (SciPy SuperLU, see spd_lu); (n,3) [m]."""
    hess, grad = newton_system(x, y, h, mass, edges, k, rest, fixed, clamp)
    out = x.copy().ravel()
    out[free_dofs(len(x), fixed)] -= spd_lu(hess).solve(grad)
    return out.reshape(x.shape)


def implicit_euler(x: np.ndarray, v: np.ndarray, h: float, mass: np.ndarray,
                   edges: np.ndarray, k: np.ndarray, rest: np.ndarray, fixed: np.ndarray,
                   gravity: np.ndarray, iterations: int = 1,
                   clamp: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """`iterations` Newton iterations on g from x = y; returns (x_new, (x_new - x) / h)."""
    y = ref.inertial_target(x, v, h, gravity, ref.fixed_mask(len(x), fixed))
    x_new = y
    for _ in range(iterations):
        x_new = newton_iteration(x_new, y, h, mass, edges, k, rest, fixed, clamp)
    return x_new, (x_new - x) / h


def linearized_system(x: np.ndarray, v: np.ndarray, h: float, mass: np.ndarray,
                      edges: np.ndarray, k: np.ndarray, rest: np.ndarray, fixed: np.ndarray,
                      gravity: np.ndarray,
                      clamp: bool = True) -> tuple[sp.csc_matrix, np.ndarray]:
    """A = M + h^2 H(x) [kg] and b = h (f - h H v) [kg m/s] over free coordinates."""
    dofs = free_dofs(len(x), fixed)
    hess = ref.spring_hessian(x, edges, k, rest, clamp)
    f = ref.spring_forces(x, edges, k, rest) + mass[:, None] * np.asarray(gravity)[None]
    a = sp.diags(np.repeat(mass, 3)) + h**2 * hess
    b = h * f.ravel() - h**2 * (hess @ v.ravel())
    return a.tocsr()[dofs][:, dofs].tocsc(), b[dofs]


def linearized_implicit(x: np.ndarray, v: np.ndarray, h: float, mass: np.ndarray,
                        edges: np.ndarray, k: np.ndarray, rest: np.ndarray, fixed: np.ndarray,
                        gravity: np.ndarray,
                        clamp: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Solve A dv = b directly; returns (x + h (v + dv), v + dv). Fixed vertices are at rest
    (their v is taken as zero, as msim holds them)."""
    v = np.where(ref.fixed_mask(len(x), fixed)[:, None], 0.0, v)
    a, b = linearized_system(x, v, h, mass, edges, k, rest, fixed, gravity, clamp)
    v_new = v.ravel().copy()
    v_new[free_dofs(len(x), fixed)] += spd_lu(a).solve(b)
    v_new = v_new.reshape(x.shape)
    return x + h * v_new, v_new
