"""FMS and one-iteration Newton written with NumPy + scikit-sparse's CHOLMOD.

What a user without msim writes for these methods: the NumPy/SciPy assembly of
msim.reference, with the linear algebra handed to scikit-sparse (`pip install
scikit-sparse==0.4.16`, linked against the same libcholmod and OpenBLAS as msim):

* FMS (Liu 2013): M + h^2 L over the free vertices factorised once (`cholmod.cholesky`,
  CHOLMOD's defaults), local-global iterations from y with NumPy spring directions, no
  objective history;
* Newton (implicit Euler, one iteration from y, compressed springs clamped): the Hessian's
  pattern analysed once (`cholmod.analyze`), each step's 3x3 blocks summed into its CSC data
  with `np.bincount` and refactored with `cholesky_inplace`.

CHOLMOD 3's supernodal factorisation opens OpenMP regions with a fixed thread count of its
own; run with OMP_THREAD_LIMIT=1 for one thread (benchmarks/peers.py does).

Both keep their own state (x, v) (n,3) [m, m/s] and step it like msim.System.step.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sksparse import cholmod

from msim.reference import core, fms, implicit


class _Stepper:
    """State and model of a cloth copied from an msim.System; fixed vertices hold still."""

    def __init__(self, sim, h: float):
        self.h, self.gravity = h, np.asarray(sim.gravity)
        self.x, self.v = sim.positions, sim.velocities
        self.fixed = core.fixed_mask(sim.n_vertices, sim.fixed)
        self.model = dict(mass=sim.mass, edges=sim.edges, k=sim.stiffness,
                          rest=sim.rest_lengths, fixed=self.fixed)

    def target(self) -> np.ndarray:
        """The inertial target y of the next step (n,3) [m]."""
        return core.inertial_target(self.x, self.v, self.h, self.gravity, self.fixed)

    def advance(self, x: np.ndarray) -> None:
        """Take x (n,3) [m] as the step's end: v = (x - x_old) / h."""
        self.x, self.v = x, (x - self.x) / self.h

    def positions(self) -> np.ndarray:
        """Current positions (n,3) [m]."""
        return self.x

    def release(self) -> None:
        """Nothing beyond the arrays and the factor, which go with the object."""


class FMS(_Stepper):
    """Prefactored FMS, `iterations` local-global iterations per step."""

    def __init__(self, sim, h: float, iterations: int):
        super().__init__(sim, h)
        self.iterations = iterations
        problem = fms.step_problem(sim, h)
        self.fms = fms.FMSReference(problem, factorize=lambda a: cholmod.cholesky(a))

    def step(self) -> None:
        y = self.target()
        self.fms.retarget(self.x, y)
        x = y
        for _ in range(self.iterations):
            x = self.fms.iterate(x)
        self.advance(x)


class Newton(_Stepper):
    """One Newton iteration per step. The Hessian's pattern (3x3 blocks on the diagonal and
    at each spring's ends, free coordinates only) is built and analysed once, with where each
    block entry lands in its CSC data; a step computes the blocks with NumPy, sums them into
    the data (`np.bincount`) and refactors in place."""

    def __init__(self, sim, h: float):
        super().__init__(sim, h)
        n, edges = sim.n_vertices, sim.edges
        self.dofs = implicit.free_dofs(n, self.fixed)
        i, j = edges[:, 0], edges[:, 1]
        # coordinates of the 4 x 9 block entries per spring (as core.spring_hessian), then the
        # mass diagonal
        row = 3 * np.repeat(np.stack([i, j, i, j], 1), 9, 1) + np.tile(np.repeat(range(3), 3), 4)
        col = 3 * np.repeat(np.stack([i, j, j, i], 1), 9, 1) + np.tile(np.tile(range(3), 3), 4)
        diagonal = np.arange(3 * n)
        row = np.concatenate([row.ravel(), diagonal])
        col = np.concatenate([col.ravel(), diagonal])
        free = np.full(3 * n, -1)
        free[self.dofs] = np.arange(len(self.dofs))
        self.keep = (free[row] >= 0) & (free[col] >= 0)
        row, col = free[row[self.keep]], free[col[self.keep]]
        size = len(self.dofs)
        self.hess = sp.csc_matrix((np.ones(len(row)), (row, col)), shape=(size, size))
        self.hess.sort_indices()
        # each entry's slot in the CSC data, whose keys column * size + row ascend
        columns = np.repeat(np.arange(size), np.diff(self.hess.indptr))
        self.where = np.searchsorted(columns * size + self.hess.indices, col * size + row)
        self.mass = np.repeat(sim.mass, 3) / h**2
        self.factor = cholmod.analyze(self.hess)

    def step(self) -> None:
        y = self.target()
        m = self.model
        flat = core.spring_hessian_blocks(y, m["edges"], m["k"], m["rest"]).reshape(-1, 9)
        entries = np.concatenate([np.concatenate([flat, flat, -flat, -flat], 1).ravel(),
                                  self.mass])[self.keep]
        self.hess.data = np.bincount(self.where, entries, self.hess.nnz)
        self.factor.cholesky_inplace(self.hess)
        grad = core.objective_grad(y, y, self.h, **m).ravel()[self.dofs]
        x = y.ravel().copy()
        x[self.dofs] -= self.factor(grad)
        self.advance(x.reshape(y.shape))
