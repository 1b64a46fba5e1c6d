"""Experiments a student runs: several methods from one state, and parameter sweeps."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import numbers
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _core
from .methods import as_int
from .strain import edge_strain, max_strain, spring_strain  # noqa: F401 (msim.compare.* too)
from .system import System
from .table import make_table
from .trajectory import Trajectory


def _per_method(name: str, value: Any, method: str) -> Any:
    """value[method] when value is a mapping (one entry per method), else value itself."""
    if not isinstance(value, Mapping):
        return value
    if method not in value:
        raise ValueError(f"{name}: expected an entry for {method!r}, got keys {sorted(value)}")
    return value[method]


def energy_scale(sim: System) -> float:
    """The common scale [J] of relative energy drift: E_kinetic + E_spring of `sim`'s state
    plus m_free |g| L, the gravity energy its free vertices (mass m_free) release when lowered
    by L, the largest side of their bounding box.

    It depends on the start state only, not on where the origin of heights is nor on any run:
    every run from one state is measured against the same number, so equal losses read equal.
    A body hanging or falling onto something releases energy of this order (a cloth pinned
    along one edge lowers its centre of mass by about L/2).
    """
    x, fixed = sim.positions, np.zeros(sim.n_vertices, dtype=bool)
    fixed[sim.fixed] = True
    free = x[~fixed]
    size = float(np.ptp(free, axis=0).max()) if len(free) else 0.0
    energy = sim.energy()
    falling = float(sim.mass[~fixed].sum()) * float(np.linalg.norm(sim.gravity)) * size
    return energy["kinetic"] + energy["spring"] + falling


def run_one(sim: System, method: str, dt: float, steps: int,
            **options: Any) -> tuple[dict[str, Any], Trajectory]:
    """Step `sim` `steps` times; return a summary row and the trajectory (~100 frames).

    The row holds seconds per step, energy drift, strain and the diverged step (or None).

    energy_drift is E(end) - E(start) [J]; relative_drift divides it by `energy_scale` of the
    start state (at least 1e-12 J), a scale shared by every run from that state.
    """
    scale = max(energy_scale(sim), 1e-12)
    traj = sim.simulate(steps, dt, method, record_every=max(1, steps // 100),
                        on_divergence="stop", **options)
    diverged = traj.diverged is not None
    total = traj.energies["total"]
    drift = float(total[-1] - total[0])
    return {
        "method": method,
        "options": ", ".join(f"{k}={v}" for k, v in options.items()),
        "dt": float(dt),
        "steps": len(traj.seconds),
        "s_per_step": float(traj.seconds.mean()) if len(traj.seconds) else float("nan"),
        "iterations": float(traj.iterations.mean()) if len(traj.iterations) else float("nan"),
        "energy_drift": float("nan") if diverged else drift,
        "relative_drift": float("nan") if diverged else drift / scale,
        "max_strain": float("nan") if diverged else max_strain(sim),
        "diverged": traj.diverged,
    }, traj


def compare(sim: System, runs: Iterable[str | tuple[str, Mapping[str, Any]]], *,
            steps: int | Mapping[str, int], dt: float | Mapping[str, float],
            progress: bool = False, return_trajectories: bool = False):
    """Run each of `runs` from a copy of `sim`'s current state and tabulate the results.

    runs: method names or (method, options) pairs. dt: one step [s] for all, or per method;
    steps: one count for all, or per method (e.g. round(1 / dt) to run each for 1 s).
    Returns a DataFrame (pandas installed) or a list of dicts; either prints as Markdown.
    Columns: method, options, dt, steps, s_per_step, iterations, energy_drift [J],
    relative_drift (energy_drift / energy_scale(sim), one scale for every run), max_strain,
    diverged (step index or None). With return_trajectories,
    returns (table, list of Trajectory) for plotting.
    """
    plan = _runs(runs, steps, dt)  # every run checked before any starts
    rows, trajectories = [], []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(plan), desc="compare", unit="run")
    for method, options, step, count in plan:
        row, traj = run_one(sim.copy(), method, step, count, **options)
        rows.append(row)
        trajectories.append(traj)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return (make_table(rows), trajectories) if return_trajectories else make_table(rows)


def _runs(runs, steps, dt) -> list[tuple[str, dict[str, Any], float, int]]:
    """compare's (method, options, dt, steps) for each of `runs`, every one checked: a
    TypeError or ValueError names the run and what is wrong before any run starts."""
    if isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, Iterable):
        raise TypeError(f"runs: expected a list of method names or (method, options) pairs, "
                        f"got {type(runs).__name__}")
    plan = []
    for i, run in enumerate(runs):
        if isinstance(run, str):
            method, options = run, {}
        elif isinstance(run, (tuple, list)) and len(run) == 2 and isinstance(run[1], Mapping):
            method, options = run[0], dict(run[1])
        else:
            raise TypeError(f"runs[{i}]: expected a method name or a (method, options) pair, "
                            f"got {run!r}")
        _check_method(f"runs[{i}]", method, options)
        count = as_int("steps", _per_method("steps", steps, method), 1)
        plan.append((method, options, _duration("dt", _per_method("dt", dt, method)), count))
    return plan


def _check_method(where: str, method: Any, options: dict[str, Any]) -> None:
    """The core's check of `method` and its options, its error prefixed with `where`."""
    try:
        _core.check_options(method, **options)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{where}: {error}") from None


def _duration(name: str, value: Any) -> float:
    """`value` as a finite time > 0 [s], else TypeError/ValueError naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number of seconds, got {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: expected a finite time > 0 [s], got {value!r}")
    return float(value)


def stability(make: Callable[[], System], methods: Sequence[str], dts: Sequence[float], *,
              duration: float | Mapping[str, float], drift_tol: float = 0.1,
              options: Mapping[str, dict] | None = None):
    """Stability map rows: each method at each dt for `duration` seconds from `make()`.

    duration [s]: one for all, or per method (cheap methods can run long enough for a slow
    blow-up to show). status is "diverged", "drift" (|relative energy drift| > drift_tol) or
    "stable".
    """
    plan = _stability_runs(methods, dts, duration, drift_tol, options)
    rows = []
    for method, options_, dt, steps in plan:
        row, _ = run_one(make(), method, dt, steps, **options_)
        row["status"] = ("diverged" if row["diverged"] is not None
                         else "drift" if abs(row["relative_drift"]) > drift_tol else "stable")
        rows.append(row)
    return make_table(rows)


def _stability_runs(methods, dts, duration, drift_tol, options):
    """stability's (method, options, dt, steps) for every cell of the map, every one checked
    before any runs: a TypeError or ValueError names the argument and what is wrong."""
    if isinstance(methods, str) or not isinstance(methods, Iterable):
        raise TypeError(f"methods: expected a list of method names, got {methods!r}")
    if isinstance(dts, str) or not isinstance(dts, Iterable):
        raise TypeError(f"dts: expected a list of steps [s], got {dts!r}")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options: expected a mapping of method name to options, got "
                        f"{type(options).__name__}")
    if isinstance(drift_tol, (bool, np.bool_)) or not isinstance(drift_tol, numbers.Real) \
            or not drift_tol >= 0:
        raise ValueError(f"drift_tol: expected a relative drift >= 0, got {drift_tol!r}")
    methods = list(methods)
    checked_dts = [_duration(f"dts[{j}]", dt) for j, dt in enumerate(dts)]
    plan = []
    for i, method in enumerate(methods):
        opts = dict((options or {}).get(method, {})) if isinstance(method, str) else {}
        _check_method(f"methods[{i}]", method, opts)
        seconds = _duration("duration", _per_method("duration", duration, method))
        for dt in checked_dts:
            if not seconds / dt < 2**63:
                raise ValueError(f"duration: {seconds!r} s at dt = {dt!r} s is {seconds / dt:g} "
                                 "steps, more than a run can take")
            plan.append((method, opts, dt, max(1, round(seconds / dt))))
    return plan


def sweep(fn: Callable[..., Any], grid: Mapping[str, Sequence[Any]], *,
          executor: cf.Executor | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """Call fn(**point) for every point of the Cartesian `grid`, in parallel.

    executor: any concurrent.futures.Executor (a ProcessPoolExecutor by default; a Dask
    distributed Client's get_executor() works too). fn must be picklable (a module-level
    function) for process pools. Returns one dict per point: the point plus "result".

    Forked workers are safe after the parent stepped Systems with any method and thread
    count: a child of a process that ran OpenMP regions (msim's threads, CHOLMOD's own) runs
    its regions on one thread, with the same results. Interrupted (Ctrl-C), the runs not yet
    started are cancelled and the KeyboardInterrupt carries the finished rows as `results`.
    """
    names = list(grid)
    points = [dict(zip(names, values)) for values in itertools.product(*grid.values())]
    own = executor is None
    pool = cf.ProcessPoolExecutor() if own else executor
    futures: list[cf.Future] = []
    interrupted = False
    try:
        futures = [pool.submit(fn, **p) for p in points]
        if progress:
            from tqdm.auto import tqdm

            for _ in tqdm(cf.as_completed(futures), total=len(futures), desc="sweep"):
                pass
        return [dict(p, result=f.result()) for p, f in zip(points, futures)]
    except KeyboardInterrupt as stop:
        interrupted = True
        for f in futures:
            f.cancel()
        stop.results = [dict(p, result=f.result()) for p, f in zip(points, futures)
                        if f.done() and not f.cancelled() and f.exception() is None]
        stop.add_note(f"sweep: interrupted with {len(stop.results)} of {len(points)} runs "
                      "finished (in this exception's .results); the others were cancelled")
        raise
    finally:
        if own:
            pool.shutdown(wait=not interrupted, cancel_futures=True)
