"""How accurate the time integrators are, and what solving an implicit step costs.

* Order of accuracy: a method of order p has a global error at a fixed time T that falls as
  C h^p (Hairer, Norsett and Wanner, Solving ODEs I, II.3). `global_error` measures it
  against the closed form of a linear `oscillator` or a reference trajectory
  (`reference_positions`, RK4 at a much smaller step), `order` fits p.
* Solvers of an implicit step: relative error in the step's objective g against wall time
  (`solver_costs`, `time_to_accuracy`), with g* from Newton to a tight tolerance
  (`msim.experiments.exact_objective`).
"""

from __future__ import annotations

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
    error inf."""
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


def order(dts: Sequence[float], errors: Sequence[float]) -> float:
    """The order p of errors ~ C dt^p: the least-squares slope of log(error) on log(dt)."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])


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


def relative_errors(objectives: np.ndarray, g_star: float) -> np.ndarray:
    """|g_k - g*| / |g*| for an objective history g_k [J] and the minimum g* [J]."""
    return np.abs(np.asarray(objectives, dtype=float) - g_star) / abs(g_star)


def solver_costs(sim: System, dt: float, options: Mapping[str, Any], caps: Iterable[int],
                 g_star: float, *, method: str = "implicit_euler", repeats: int = 3
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, errors): one step of `method` from sim's state with step `options` (e.g.
    {"solver": "fms", "acceleration": "anderson"}), run once per cap in caps with tol = 0.

    seconds [s]: the smallest StepInfo.seconds (wall time in C) of `repeats` runs stopped at
    that cap, after one untimed step (see `_Timer`); errors: |g_k - g*| / |g*| at that cap.
    Each point is a whole run stopped there, so the time is what that accuracy costs,
    start-up of the step included. sim is not changed.
    """
    timer = _Timer(sim, dt, method, options)
    points = [timer.step(as_int("caps", cap, 1), repeats) for cap in caps]
    seconds = np.array([s for s, _ in points])
    return seconds, np.array([relative_errors(g, g_star)[-1] for _, g in points])


def time_to_accuracy(sim: System, dt: float, options: Mapping[str, Any],
                     targets: Iterable[float], cap: int, g_star: float, *,
                     method: str = "implicit_euler", repeats: int = 3
                     ) -> list[tuple[float, int] | None]:
    """(seconds [s], iterations) one step of `method` with `options` takes to bring
    |g_k - g*| / |g*| to each target, None where `cap` iterations do not reach it.

    One run at the cap gives the error after every iteration; for each target the first
    iteration k at or below it is then timed as a run capped at k (smallest of `repeats`,
    after one untimed step: see `_Timer`). sim is not changed.
    """
    timer = _Timer(sim, dt, method, options)
    errors = relative_errors(timer.step(as_int("cap", cap, 1))[1], g_star)
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
