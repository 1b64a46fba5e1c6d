"""How accurate the time integrators are, and what solving an implicit step costs.

* Order of accuracy: a method of order p has a global error at a fixed time T that falls as
  C h^p (Hairer, Norsett and Wanner, Solving ODEs I, II.3). `global_error` measures it
  against the closed form of a linear `oscillator` or a reference trajectory
  (`reference_positions`, RK4 at a much smaller step), `order` fits p.
* Solvers of an implicit step: relative error in the step's objective g,
  (g_k - g*) / (g_0 - g*) (`relative_error`, Liu et al. 2013), against wall time
  (`solver_costs`, `time_to_accuracy`), with g* from Newton to a tight tolerance
  (`msim.experiments.exact_objective`).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .methods import as_int, cap_name
from .system import System


def oscillator(stiffness: float = 100.0, mass: float = 1.0, amplitude: float = 0.1,
               length: float = 1.0) -> System:
    """A linear oscillator: vertex 1 on a spring of rest length `length` [m] and `stiffness`
    [N/m] to vertex 0 (fixed at the origin), no gravity, released at rest stretched by
    `amplitude` [m] along x. Along its spring the force is -k (x - L): x(t) = L + amplitude
    cos(omega t), omega = sqrt(k/m) (`oscillator_positions`)."""
    return System(np.array([[0.0, 0.0, 0.0], [length + amplitude, 0.0, 0.0]]),
                  np.array([[0, 1]]), mass=mass, stiffness=stiffness, rest_lengths=[length],
                  fixed=[0], gravity=(0.0, 0.0, 0.0))


def oscillator_positions(t: float, stiffness: float = 100.0, mass: float = 1.0,
                         amplitude: float = 0.1, length: float = 1.0) -> np.ndarray:
    """(2,3) exact positions [m] of `oscillator` (same parameters) at time t [s]."""
    x = length + amplitude * np.cos(np.sqrt(stiffness / mass) * t)
    return np.array([[0.0, 0.0, 0.0], [x, 0.0, 0.0]])


def steps_for(duration: float, dt: float) -> int:
    """The number of steps of dt [s] that make `duration` [s]; ValueError unless that is a
    whole number (to 1e-9), since a global error compares states at one time."""
    steps = round(duration / dt)
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
        raise ValueError(f"dt: expected a step that divides duration {duration:g} s, got {dt:g}")
    return steps


def reference_positions(make: Callable[[], System], duration: float, dt: float) -> np.ndarray:
    """(n,3) positions [m] of make() after `duration` [s] of RK4 at step dt [s]: a reference
    for global errors of larger steps (RK4's error falls as dt^4)."""
    sim = make()
    steps = steps_for(duration, dt)
    sim.simulate(steps, dt, "rk4", record_every=steps)
    return sim.positions


def global_error(make: Callable[[], System], method: str, dts: Iterable[float],
                 duration: float, reference: np.ndarray, **options: Any) -> np.ndarray:
    """Global error [m] of `method` at time `duration` [s] for each step in dts [s]: the
    largest distance of a vertex from `reference` (n,3) [m], the exact positions at that
    time. make() builds the start state; options go to every step. A run that diverges has
    error inf. Fit the order with `order`, which also checks that the steps are in the
    asymptotic range."""
    errors = []
    for dt in dts:
        sim = make()
        steps = steps_for(duration, dt)
        traj = sim.simulate(steps, dt, method, record_every=steps, on_divergence="stop",
                            **options)
        diverged = traj.diverged is not None
        errors.append(np.inf if diverged else np.linalg.norm(sim.positions - reference,
                                                             axis=1).max())
    return np.array(errors)


class OrderWarning(UserWarning):
    """`order` was given steps outside the asymptotic range, where the error does not yet fall
    (or no longer falls) as C h^p: its fitted slope is not the method's order."""


class Order(float):
    """The least-squares slope p of log(error) on log(dt), a float, with the evidence that the
    steps are in the asymptotic range where errors ~ C dt^p holds (see `order`).

    local: (k-1,) slopes between successive steps, from the smallest step up; asymptotic: True
    when they agree with each other and with p and every error is in range; out_of_range: the
    steps [s] whose errors break that (a tuple, largest first); note: why, in words ('' when
    asymptotic).
    """

    local: np.ndarray
    asymptotic: bool
    out_of_range: tuple[float, ...]
    note: str

    def __new__(cls, slope: float, local: np.ndarray, out_of_range: tuple[float, ...],
                note: str) -> Order:
        self = super().__new__(cls, slope)
        self.local, self.out_of_range, self.note = local, out_of_range, note
        self.asymptotic = not note
        return self

    def __repr__(self) -> str:
        return (f"Order({float(self):.4g}, local={np.round(self.local, 3).tolist()}, "
                f"asymptotic={self.asymptotic})")


ROUND_OFF = 100 * np.finfo(float).eps
"""Errors below ROUND_OFF * scale are at round-off: they no longer fall with the step."""


def order(dts: Sequence[float], errors: Sequence[float], *, tol: float = 0.1,
          scale: float = 1.0) -> Order:
    """The order p of errors ~ C dt^p, checked: an `Order`, the least-squares slope of
    log(error) on log(dt) over the finite errors, with its local slopes and whether the steps
    are in the asymptotic range; warns OrderWarning, naming the steps out of range, when not.

    A method of order p has errors C h^p + O(h^(p+1)) (Hairer, Norsett and Wanner, Solving
    ODEs I, II.3): only where the second term is small do successive halvings of h give the
    slope p. So before it trusts the fit, `order` asks (steps sorted from the smallest up):

    * every error finite (a diverged run has none), below 0.1 * scale (an error a tenth of the
      size of what is measured is not small) and above ROUND_OFF * scale (100 eps: round-off
      stops the error from falling);
    * the local slopes log(e_i+1 / e_i) / log(h_i+1 / h_i) agree within `tol` with each other
      and with the fitted slope. Read from the smallest steps up: a step whose local slope (to
      the next smaller step) is more than tol from the one between the two smallest steps is
      out of range, and so is every larger step; when the two smallest steps' slopes already
      disagree (the steps are all too large, or an error at the fixed time passes near zero,
      as a phase and an amplitude error can cancel), every step is out of range;
    * at least three steps (two give one slope and nothing to check it with).

    dts [s] (k,) distinct steps > 0, errors (k,) in any unit, scale: the size of the measured
    quantity in that unit (1: errors in metres on a body about 1 m big, or relative errors).
    """
    h = np.asarray(dts, dtype=float).ravel()
    e = np.asarray(errors, dtype=float).ravel()
    if len(e) != len(h):
        raise ValueError(f"errors: expected {len(h)} values, one per step, got {len(e)}")
    if not (np.all(h > 0) and np.all(np.isfinite(h)) and len(np.unique(h)) == len(h)):
        raise ValueError(f"dts: expected distinct steps > 0 [s], got {h.tolist()}")
    if not scale > 0:
        raise ValueError(f"scale: expected a size > 0, got {scale!r}")
    rank = np.argsort(h)
    h, e = h[rank], e[rank]
    reasons = [
        (~np.isfinite(e) | (e <= 0), "diverged or gave no error (inf, nan or <= 0)"),
        (np.isfinite(e) & (e >= 0.1 * scale), f"errors at or above 0.1 * scale = {0.1 * scale:g}"),
        ((e > 0) & (e <= ROUND_OFF * scale),
         f"errors at round-off (below {ROUND_OFF * scale:.2g}): use larger steps there"),
    ]
    good = ~np.any([mask for mask, _ in reasons], axis=0)
    usable = np.isfinite(e) & (e > 0)
    slope = (float(np.polyfit(np.log(h[usable]), np.log(e[usable]), 1)[0])
             if usable.sum() >= 2 else np.nan)
    local = np.diff(np.log(e[good])) / np.diff(np.log(h[good])) if good.sum() >= 2 else np.zeros(0)
    notes = [f"steps {_steps(h[mask])} s: {why}" for mask, why in reasons if np.any(mask)]
    out = ~good
    if len(local):
        slopes = np.round(local, 2).tolist()
        off = np.flatnonzero(np.abs(local - local[0]) > tol)
        if len(off) and off[0] == 1:  # the two smallest steps' slopes already disagree
            far = h[good]
            out |= np.isin(h, far)
            notes.append(f"local slopes {slopes} (from the smallest step up) disagree by more "
                         f"than tol = {tol:g} already at the smallest steps, so no step is "
                         "known to be in range; try steps several times smaller")
        elif len(off):
            far = h[good][off[0] + 1:]  # the larger step of the first pair off, and beyond
            out |= np.isin(h, far)
            notes.append(f"steps {_steps(far)} s: local slopes {slopes} (from the smallest "
                         f"step up) differ from the smallest steps' by more than tol = "
                         f"{tol:g}; try smaller steps")
        elif np.any(np.abs(local - slope) > tol):
            notes.append(f"local slopes {slopes} differ from the fitted {slope:.2f} by more "
                         f"than tol = {tol:g}; try smaller steps")
    if good.sum() < 3:
        notes.append(f"{good.sum()} steps in range: give three or more, so that two local "
                     "slopes can agree")
    note = "; ".join(notes)
    if note:
        warnings.warn(f"order: the steps are not in the asymptotic range, so the slope "
                      f"{slope:.2f} is not the method's order: {note}", OrderWarning,
                      stacklevel=2)
    return Order(slope, local, tuple(float(x) for x in h[out][::-1]), note)


def _steps(h: np.ndarray) -> str:
    return ", ".join(f"{x:.3g}" for x in h[::-1])


class _Timer:
    """One step of `method` with `options` from sim's state, repeated: a copy of sim that
    took one step first, so that what a System sets up once and reuses between steps
    (CHOLMOD's analysis, FMS's factorisation) is not in the time, as in a simulation."""

    def __init__(self, sim: System, dt: float, method: str, options: Mapping[str, Any]):
        self.sim, self.state = sim.copy(), sim.get_state()
        self.dt, self.method, self.options = dt, method, {"tol": 0.0, **options}
        self.step(1)

    def step(self, cap: int, repeats: int = 1) -> tuple[float, np.ndarray]:
        """(smallest StepInfo.seconds of `repeats` steps capped at `cap` iterations [s], the
        objective history g_0..g_k [J] of the last)."""
        seconds = []
        for _ in range(repeats):
            self.sim.set_state(self.state)
            info = self.sim.step(self.dt, self.method, **{cap_name(self.method): cap},
                                 **self.options)
            seconds.append(info.seconds)
        return min(seconds), info.objectives


def relative_error(objectives: Sequence[float], g_star: float) -> np.ndarray:
    """The relative error in g of each iterate of one implicit step, (g_k - g*) / (g_0 - g*):
    the share of the start's error in the objective that iteration k leaves (Liu, Bargteil,
    O'Brien and Kavan 2013, Fast simulation of mass-spring systems, Fig. 2 and 3).

    objectives (k+1,): g_0 (the start point) .. g_k [J], e.g. StepInfo.objectives; g_star: g
    at the step's minimiser [J] (`msim.experiments.exact_objective`). Returns (k+1,), 1 at
    the start, 0 at the minimum; negative only where g* is not the true minimum. It depends
    on where the iterations start: compare solvers from one start. The one definition of
    relative error in g in msim (experiments, solver_costs, time_to_accuracy, the notebooks,
    the benchmarks). ValueError when g_0 = g* (nothing to relate to).
    """
    g = np.asarray(objectives, dtype=float)
    if g.ndim != 1 or not len(g):
        raise ValueError(f"objectives: expected a history (k+1,) of g [J], got shape {g.shape}")
    if g[0] == g_star:
        raise ValueError(f"objectives: the start g_0 = {g[0]:g} J is g* already: no error to "
                         "relate to")
    return (g - g_star) / (g[0] - g_star)


def solver_costs(sim: System, dt: float, options: Mapping[str, Any], caps: Iterable[int],
                 g_star: float, *, method: str = "implicit_euler", repeats: int = 3
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, errors): one step of `method` from sim's state with step `options` (e.g.
    {"solver": "fms", "acceleration": "anderson"}), run once per cap in caps with tol = 0.

    seconds [s]: the smallest StepInfo.seconds (wall time in C) of `repeats` runs stopped at
    that cap, after one untimed step (see `_Timer`); errors: the relative error in g
    (`relative_error`, Liu et al. 2013) at that cap.
    Each point is a whole run stopped there, so the time is what that accuracy costs,
    start-up of the step included. sim is not changed.
    """
    timer = _Timer(sim, dt, method, options)
    points = [timer.step(as_int("caps", cap, 1), repeats) for cap in caps]
    seconds = np.array([s for s, _ in points])
    return seconds, np.array([relative_error(g, g_star)[-1] for _, g in points])


def time_to_accuracy(sim: System, dt: float, options: Mapping[str, Any],
                     targets: Iterable[float], cap: int, g_star: float, *,
                     method: str = "implicit_euler", repeats: int = 3
                     ) -> list[tuple[float, int] | None]:
    """(seconds [s], iterations) one step of `method` with `options` takes to bring the
    relative error in g (`relative_error`) to each target, None where `cap` iterations do not
    reach it.

    One run at the cap gives the error after every iteration; for each target the first
    iteration k at or below it is then timed as a run capped at k (smallest of `repeats`,
    after one untimed step: see `_Timer`). sim is not changed.
    """
    timer = _Timer(sim, dt, method, options)
    errors = relative_error(timer.step(as_int("cap", cap, 1))[1], g_star)
    seconds: dict[int, float] = {}  # targets reached at one iteration share its time
    out: list[tuple[float, int] | None] = []
    for target in targets:
        below = np.flatnonzero(errors <= target)
        if not len(below):
            out.append(None)
            continue
        k = max(int(below[0]), 1)
        if k not in seconds:
            seconds[k] = timer.step(k, repeats)[0]
        out.append((seconds[k], k))
    return out
