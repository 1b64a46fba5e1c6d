"""NumPy/SciPy fast mass-spring (Liu 2013) and a Newton solve of the same implicit Euler step.

An independent implementation built from `msim.reference.core`: tests use it as the oracle for
msim's `fms`, and benchmarks/run.py times msim against it. Both minimise the incremental potential
g(x) = |x - y|_M^2 / (2 h^2) + E_spring(x) over the free vertices (fixed vertices eliminated,
kept at their current positions). Shapes: x, v (n,3) [m], [m/s]; edges (m,2); k, rest (m,);
mass (n,) [kg].
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import core as ref
from .implicit import free_dofs, newton_system, spd_lu


@dataclass
class StepProblem:
    """One implicit Euler step: state, parameters and the inertial target y (n,3) [m]."""

    x: np.ndarray
    y: np.ndarray
    h: float
    mass: np.ndarray
    edges: np.ndarray
    k: np.ndarray
    rest: np.ndarray
    fixed: np.ndarray

    @property
    def free(self) -> np.ndarray:
        """Boolean (n,) mask of the free vertices."""
        return ~ref.fixed_mask(len(self.x), self.fixed)

    def objective(self, x: np.ndarray) -> float:
        """g(x) [J]."""
        return ref.objective(x, self.y, self.h, self.mass, self.edges, self.k, self.rest,
                             self.fixed)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """grad g(x) (n,3) [N], zero on fixed vertices."""
        return ref.objective_grad(x, self.y, self.h, self.mass, self.edges, self.k, self.rest,
                                  self.fixed)


def step_problem(sim, h: float) -> StepProblem:
    """The step `sim.step(h, ...)` would solve next: damped velocity, y from the state."""
    fixed = ref.fixed_mask(sim.n_vertices, sim.fixed)
    v = sim.velocities * np.exp(-sim.damping * h)
    v[fixed] = 0.0
    y = ref.inertial_target(sim.positions, v, h, sim.gravity, fixed)
    return StepProblem(sim.positions, y, h, sim.mass, sim.edges, sim.stiffness,
                       sim.rest_lengths, fixed)


class FMSReference:
    """Prefactored FMS over the free vertices with scipy.sparse and SuperLU.

    Setup builds A = M + h^2 L (n_free x n_free), the spring matrix S mapping projected
    directions d (m,3) to right-hand sides and the fixed-end coupling F; `solve` then runs
    local-global iterations from y. `factorize(A)` returns the solve x = A^-1 b for b
    (n_free, 3); the default is SuperLU set up as a Cholesky (`spd_lu`). `retarget` starts a
    new step with the same factor.
    """

    def __init__(self, p: StepProblem,
                 factorize: Callable[[sp.csc_matrix], Callable[[np.ndarray], np.ndarray]]
                 | None = None):
        self.p = p
        free = p.free
        index = np.full(len(free), -1)
        index[free] = np.arange(free.sum())
        self.index = index
        i, j = p.edges[:, 0], p.edges[:, 1]
        I, J = index[i], index[j]
        hk = p.h**2 * p.k
        nf, ns = int(free.sum()), len(p.edges)
        # A = M + h^2 sum_s k_s a_s a_s^T restricted to free vertices
        rows, cols, vals = [np.arange(nf)], [np.arange(nf)], [p.mass[free]]
        both = (I >= 0) & (J >= 0)
        for a, b, keep, sign in [(I, I, I >= 0, 1), (J, J, J >= 0, 1), (I, J, both, -1),
                                 (J, I, both, -1)]:
            rows.append(a[keep]), cols.append(b[keep]), vals.append(sign * hk[keep])
        self.A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                       np.concatenate(cols))), shape=(nf, nf))
        self.solve_A = factorize(self.A) if factorize else spd_lu(self.A).solve
        # rhs = M y + S d + F x: S has +h^2 k at I and -h^2 k at J; F couples fixed ends
        s = np.arange(ns)
        self.S = sp.csr_matrix((np.concatenate([hk[I >= 0], -hk[J >= 0]]),
                                (np.concatenate([I[I >= 0], J[J >= 0]]),
                                 np.concatenate([s[I >= 0], s[J >= 0]]))), shape=(nf, ns))
        fi, fj = (I >= 0) & (J < 0), (J >= 0) & (I < 0)
        self.F = sp.csr_matrix((np.concatenate([hk[fi], hk[fj]]),
                                (np.concatenate([I[fi], J[fj]]), np.concatenate([j[fi], i[fj]]))),
                               shape=(nf, len(free)))
        self.retarget(p.x, p.y)

    def retarget(self, x: np.ndarray, y: np.ndarray) -> None:
        """Make the problem the step from positions x to target y (n,3) [m], same h."""
        self.p = replace(self.p, x=x, y=y)
        self.My = self.p.mass[self.p.free, None] * y[self.p.free]

    def iterate(self, x: np.ndarray) -> np.ndarray:
        """One local-global iteration from x (n,3): the new positions (n,3)."""
        p = self.p
        d = x[p.edges[:, 0]] - x[p.edges[:, 1]]
        length = np.linalg.norm(d, axis=1)
        u = np.where(length[:, None] > 0, d / np.where(length > 0, length, 1.0)[:, None],
                     np.array([1.0, 0.0, 0.0]))
        rhs = self.My + self.S @ (p.rest[:, None] * u) + self.F @ x
        out = x.copy()
        out[p.free] = self.solve_A(rhs)
        return out

    def solve(self, iterations: int,
              start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Run `iterations` iterations from y (or `start`, (n,3) [m]): (positions (n,3),
        g per iterate (iterations+1,))."""
        x = (self.p.y if start is None else start).copy()
        g = [self.p.objective(x)]
        for _ in range(iterations):
            x = self.iterate(x)
            g.append(self.p.objective(x))
        return x, np.array(g)


def newton(p: StepProblem, tol: float = 1e-10, max_iterations: int = 100,
           start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Minimise g by Newton from y (or `start`) until |grad g| < tol [N].

    Each iteration solves with the exact spring Hessian and falls back to the clamped one
    (compressed springs' lateral term dropped) when that is not a descent direction; a
    backtracking Armijo search on g, which tolerates round-off (1e-15 |g|), sets the step.
    Returns (positions (n,3), g per iterate). Raises RuntimeError when it does not converge.
    """
    dofs = free_dofs(len(p.x), p.fixed)
    x = (p.y if start is None else start).copy()
    g = [p.objective(x)]
    for _ in range(max_iterations):
        for clamp in (False, True):
            hess, grad = newton_system(x, p.y, p.h, p.mass, p.edges, p.k, p.rest, p.fixed, clamp)
            if np.linalg.norm(grad) < tol:
                return x, np.array(g)
            step = np.zeros(3 * len(x))
            step[dofs] = -spla.spsolve(hess, grad)
            slope = grad @ step[dofs]
            if slope < 0:
                break
        t, slack = 1.0, 1e-15 * abs(g[-1])
        while (p.objective(x + t * step.reshape(-1, 3)) > g[-1] + 1e-4 * t * slope + slack
               and t > 1e-10):
            t *= 0.5
        x = x + t * step.reshape(-1, 3)
        g.append(p.objective(x))
    raise RuntimeError(f"newton: |grad g| = {np.linalg.norm(p.gradient(x)):.3g} after "
                       f"{max_iterations} iterations")
