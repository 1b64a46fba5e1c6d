"""Gradients of a run by the discrete adjoint: reverse accumulation, one step at a time.

    traj = sim.simulate(40, dt, "symplectic_euler", adjoint=True)
    grad = traj.backward(positions=dL_dX)       # dL_dX shaped like traj.positions
    grad.stiffness, grad.rest_lengths, grad.mass, grad.positions, grad.velocities,
    grad.external_forces, grad.damping

A loop of your own keeps the states and walks them back with `step_vjp`:

    xs, vs = [sim.positions], [sim.velocities]
    for _ in range(steps):
        sim.step(dt, "symplectic_euler")
        xs.append(sim.positions); vs.append(sim.velocities)
    ax, av = dL_dx_last, np.zeros_like(dL_dx_last)   # adjoints of the last state
    for k in reversed(range(steps)):
        g = msim.adjoint.step_vjp(sim, "symplectic_euler", dt, xs[k], vs[k], xs[k + 1],
                                  vs[k + 1], ax, av)
        ax, av = g.positions, g.velocities              # adjoints of state k
    # the parameter adjoints are the sums of g.stiffness, g.mass, ... over the steps

The C core (csrc/engine/adjoint.c, whose opening comment writes out the recurrences) applies
the transpose of one step's Jacobian to the adjoints of its end (`step_vjp`); `Tape.backward`
walks a recorded run from its last step to its first, adding the loss's adjoint at every
recorded frame. Explicit Euler, symplectic Euler, velocity Verlet and RK4 get the exact reverse
of their step, one exact Hessian-vector product per force evaluation (RK4 recomputes its
stage points from the step's start). Implicit Euler solved to a
tolerance, by any solver of g, gets the implicit function theorem on grad g(x1) = 0: one solve
with the exact Hessian of g, M/dt^2 + H(x1), per step (as in DiffPD, Du et al. 2021), so the
gradient does not depend on which solver found x1 (the fms method, implicit Euler by
local-global iterations, included when given a tol); implicit midpoint and BDF2 likewise (on
the midpoint; from the two states BDF2 builds its step from, so the adjoint of a BDF2 step
reaches the state one step back too). The fms method with a fixed number of iterations and no
tol (or implicit_euler with solver='fms' and no tol, the same iterations) gets the gradient of
those iterations as they ran, unrolled in reverse with the same prefactored matrix, one solve
per iteration, as DiffPD (Du et al. 2021) does for projective dynamics (plain iterations
without colliders: csrc/engine/unroll.c). Everything is float64.

Contact with planes and spheres is differentiated through its penalty energy
contact_stiffness/2 * depth^2, with its exact Hessian (a sphere's negative lateral curvature
included, which the forward Newton drops): the gradient of the run as it went, exact except at
the instants a vertex meets a collider, where that Hessian jumps. Not differentiated (asking
raises ValueError naming the cause): friction, self-contact, the methods xpbd and
linearized_implicit, fms with pin='penalty', and fms unrolled (no tol) with chebyshev or
anderson acceleration or with colliders.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import Error

if TYPE_CHECKING:
    from .system import System


# the methods whose gradient comes from the implicit function theorem
IMPLICIT = ("implicit_euler", "implicit_midpoint", "bdf2", "fms")


class AdjointWarning(UserWarning):
    """An implicit step did not reach its tol: the implicit function theorem's gradient is the
    gradient of an exact solve, not of the iterate the solver stopped at."""


@dataclass(frozen=True)
class Gradient:
    """dL/d(parameter) of a loss L of a run (or, from `step_vjp`, through one step).

    stiffness (m,) [L m/N]; rest_lengths (m,) [L/m]; mass (n,) [L/kg] (zero on fixed
    vertices); positions (n,3) [L/m] and velocities (n,3) [L s/m] of the initial state (of the
    step's start for `step_vjp`; velocities zero on fixed vertices, which ignore theirs);
    external_forces (n,3) [L/N], held constant over the run (zero on fixed vertices);
    damping [L s]. residual: the implicit methods only, the largest |grad g| [N] of the
    steps' solutions, how far they are from g's minimisers; 0 for the explicit methods.
    previous_positions (n,3) [L/m], previous_velocities (n,3) [L s/m]: bdf2 only, when its
    first step had a history (the state one step back, get_state's previous_positions and
    previous_velocities), the gradient with respect to that state; None otherwise.
    """

    stiffness: np.ndarray
    rest_lengths: np.ndarray
    mass: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    external_forces: np.ndarray
    damping: float
    residual: float = 0.0
    previous_positions: np.ndarray | None = None
    previous_velocities: np.ndarray | None = None


def refusal(sim: System, method: str, **options: Any) -> str | None:
    """Why `method` with these step options has no gradient on `sim` (a sentence), or None
    when it has one; the core checks the options as a step would."""
    return sim._adjoint_refusal(method, **options)


def unrolled(method: str, options: dict[str, Any]) -> bool:
    """Whether a run of `method` with these step options is differentiated by unrolling its
    iterations: fms, or implicit_euler with solver='fms', with no tol."""
    fms = method == "fms" or (method == "implicit_euler" and options.get("solver") == "fms")
    return fms and not options.get("tol", 0.0) > 0


def _check(sim: System, method: str, options: dict[str, Any]) -> None:
    """ValueError naming the cause when a run of `method` with these step options on `sim`
    has no gradient (and the options' own errors)."""
    why = refusal(sim, method, **options)
    if why is not None:
        raise ValueError(f"{method} has no gradient here: {why}")


def step_vjp(sim: System, method: str, dt: float, x: np.ndarray, v: np.ndarray,
             x_next: np.ndarray, v_next: np.ndarray, adj_x: np.ndarray, adj_v: np.ndarray, *,
             external_forces: np.ndarray | None = None,
             previous: tuple[np.ndarray, np.ndarray] | None = None, **options: Any) -> Gradient:
    """The vector-Jacobian product of one step of `method` on `sim`'s model, for custom loops.

    The step of `dt` seconds went from (x, v) to (x_next, v_next) ((n,3) [m], [m/s]) under
    `external_forces` ((n,3) [N]; default sim.external_forces); adj_x, adj_v ((n,3)) are
    dL/dx_next and dL/dv_next. Returns the Gradient through this step: positions and
    velocities are dL/dx and dL/dv of its start. The parameters (stiffness, rest lengths,
    masses, damping) are sim's as they are now. previous: bdf2's state one step back,
    (positions, velocities), when the step had one (a step of the same dt before it; without
    it the step was implicit Euler); the Gradient's previous_positions and
    previous_velocities are then the adjoints of that state. `options` are the step's
    options: the implicit methods need their tol, and warn (AdjointWarning) when |grad g| at
    the step's solution exceeds it; fms without a tol is differentiated through its
    `iterations` plain local-global iterations, unrolled (recomputed from the step's start:
    one solve with FMS's factor per iteration, 24 n (iterations + 1) bytes while it runs).
    Costs one force pass and one Hessian-vector product per force evaluation of the step;
    the implicit methods one factorisation of g's exact Hessian M/dt'^2 + H at the step's
    solution, or where that is indefinite (a saddle of g, or a step short of its minimum)
    MINRES preconditioned by the clamped factor; NotPositiveDefiniteError where that fails
    too (a singular Hessian: no isolated solution, so no gradient).
    """
    _check(sim, method, options)
    fext = sim.external_forces if external_forces is None else external_forces
    grad = _vjp(sim, method, dt, x, v, x_next, v_next, fext, adj_x, adj_v, previous=previous,
                options=options)
    if method in IMPLICIT and not unrolled(method, options) and grad.residual > options["tol"]:
        warnings.warn(f"{method}: |grad g| = {grad.residual:.3g} N at the step's solution "
                      f"exceeds tol = {options['tol']:.3g} N: the gradient is that of an exact "
                      "solve", AdjointWarning, stacklevel=2)
    return grad


def _vjp(sim: System, method: str, dt: float, *arrays: np.ndarray,
         previous: tuple[np.ndarray, np.ndarray] | None, options: dict[str, Any]) -> Gradient:
    """step_vjp without its checks: arrays are x, v, x_next, v_next, external_forces, adj_x,
    adj_v; previous bdf2's state one step back or None; options the step's options."""
    gx, gv, k, r, m, f, c, res, px, pv = sim._step_vjp(method, dt, *arrays, *(previous or ()),
                                                       **options)
    return Gradient(k, r, m, gx, gv, f, c, res, px, pv)


@dataclass
class Tape:
    """What `System.simulate(..., adjoint=True)` keeps for the backward pass: the state before
    every step and after the last, 2 * n * 3 * 8 bytes (48 n bytes) per step for every
    supported method (velocity Verlet and RK4 recompute their stages, the implicit methods
    refactorise their Hessian), bdf2's history before the run when it had one, and a copy of
    the System's model as the run used it. With checkpoint_every = k > 1 it keeps the
    System's whole state (bdf2's history included) before every k-th step and the last state,
    and recomputes a segment of k steps from its checkpoint when the backward pass reaches it
    (Griewank and Walther 2008, the simplest of their checkpointing schedules)."""

    model: System
    method: str
    dt: float
    options: dict[str, Any]
    external_forces: np.ndarray
    record_every: int = 1
    previous: tuple[np.ndarray, np.ndarray] | None = None
    checkpoint_every: int = 1
    positions: list[np.ndarray] = field(default_factory=list)
    velocities: list[np.ndarray] = field(default_factory=list)
    unconverged: list[int] = field(default_factory=list)
    taken: int = 0
    checkpoints: dict[int, dict[str, Any]] = field(default_factory=dict)
    segment: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def start(cls, sim: System, method: str, dt: float, options: dict[str, Any],
              record_every: int, checkpoint_every: int = 1) -> Tape:
        """A tape for a run of `sim` from its current state; ValueError when the run would
        have no gradient."""
        _check(sim, method, options)
        state = sim.get_state()
        previous = ((state["previous_positions"], state["previous_velocities"])
                    if method == "bdf2" and state["previous_dt"] == dt else None)
        tape = cls(sim.copy(), method, float(dt), dict(options), sim.external_forces,
                   record_every, previous, checkpoint_every)
        tape.keep(sim)
        return tape

    def step(self, sim: System, converged: bool) -> None:
        """Keep the state one step took `sim` to, and whether its solver reached tol (fms
        unrolled has none to reach)."""
        if not converged and not unrolled(self.method, self.options):
            self.unconverged.append(self.taken)
        self.taken += 1
        self.keep(sim)

    def keep(self, sim: System) -> None:
        """Keep sim's state, the tape's state `taken`: all of it, or a checkpoint and the
        latest one."""
        if self.checkpoint_every == 1 or not self.positions:
            self.positions.append(sim.positions)
            self.velocities.append(sim.velocities)
        else:
            self.positions[-1], self.velocities[-1] = sim.positions, sim.velocities
        if self.checkpoint_every > 1 and self.taken % self.checkpoint_every == 0:
            self.checkpoints[self.taken] = sim.get_state()

    def state(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities after the run's first k steps: kept, or recomputed from
        the checkpoint before them with the rest of their segment."""
        if self.checkpoint_every == 1:
            return self.positions[k], self.velocities[k]
        if k == self.taken:
            return self.positions[-1], self.velocities[-1]
        if k in self.checkpoints:
            return self.checkpoints[k]["positions"], self.checkpoints[k]["velocities"]
        if k not in self.segment:
            start = k - k % self.checkpoint_every
            sim = self.model.copy()
            sim.set_state(self.checkpoints[start])
            self.segment = {start: (sim.positions, sim.velocities)}
            for j in range(start + 1, min(start + self.checkpoint_every, self.taken)):
                sim.step(self.dt, self.method, history=False, **self.options)
                self.segment[j] = (sim.positions, sim.velocities)
        return self.segment[k]

    def backward(self, positions: np.ndarray | None = None,
                 velocities: np.ndarray | None = None, frames: int | None = None) -> Gradient:
        """The Gradient of a loss L whose adjoints at the recorded frames are `positions`
        (dL/dX) and `velocities` (dL/dV), both (frames, n, 3) like the Trajectory's, zero (or
        None) where L does not look. frames: how many the Trajectory holds (default: every
        one the tape's steps reached)."""
        n = self.positions[0].shape[0]
        if frames is None:
            frames = self.taken // self.record_every + 1
        adj = [_frame_adjoint(a, name, frames, n) for a, name in
               ((positions, "positions"), (velocities, "velocities"))]
        if self.unconverged:
            warnings.warn(f"{self.method}: {len(self.unconverged)} steps (the first: step "
                          f"{self.unconverged[0]}) did not reach tol: the gradient is that of "
                          "exact solves", AdjointWarning, stacklevel=3)
        # state k's adjoint: the loss's, step k's (from its start) and, in bdf2, step k+1's
        # (from the state one step back, carried)
        ax, av = adj[0][frames - 1].copy(), adj[1][frames - 1].copy()
        total, carry = None, None
        for k in range((frames - 1) * self.record_every - 1, -1, -1):
            try:
                after, before = self.state(k + 1), self.state(k)
                g = _vjp(self.model, self.method, self.dt, *before, *after,
                         self.external_forces, ax, av, previous=self._history(k),
                         options=self.options)
            except Error as error:
                missed = (", which did not reach tol: more iterations may reach a minimum of g"
                          if k in self.unconverged else "")
                error.add_note(f"backward: at step {k} of the run{missed}")
                raise
            total = g if total is None else _add(total, g)
            ax, av = g.positions, g.velocities
            if carry is not None:
                ax, av = ax + carry[0], av + carry[1]
            carry = (None if g.previous_positions is None
                     else (g.previous_positions, g.previous_velocities))
            if k % self.record_every == 0:
                ax, av = ax + adj[0][k // self.record_every], av + adj[1][k // self.record_every]
        if total is None:
            m = self.model.n_springs
            total = Gradient(np.zeros(m), np.zeros(m), np.zeros(n), ax, av, np.zeros((n, 3)), 0.0)
        return Gradient(total.stiffness, total.rest_lengths, total.mass, ax, av,
                        total.external_forces, total.damping, total.residual,
                        *(carry or (None, None)))

    def _history(self, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """bdf2's state one step before step k (None: none, or another method)."""
        if self.method != "bdf2":
            return None
        return self.previous if k == 0 else self.state(k - 1)


def _add(a: Gradient, b: Gradient) -> Gradient:
    """The parameter parts of a and b summed (positions and velocities: b's)."""
    return Gradient(a.stiffness + b.stiffness, a.rest_lengths + b.rest_lengths, a.mass + b.mass,
                    b.positions, b.velocities, a.external_forces + b.external_forces,
                    a.damping + b.damping, max(a.residual, b.residual))


def _frame_adjoint(a: np.ndarray | None, name: str, frames: int, n: int) -> np.ndarray:
    """a as a float (frames, n, 3) array, zeros for None; ValueError naming `name` when its
    shape is another."""
    if a is None:
        return np.zeros((frames, n, 3))
    a = np.asarray(a, dtype=float)
    if a.shape != (frames, n, 3):
        raise ValueError(f"{name}: expected dL/d{name} shaped like the trajectory's "
                         f"({frames}, {n}, 3), got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: expected finite values")
    return a
