"""Experiments a student runs: several methods from one state, and parameter sweeps."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .methods import as_int
from .system import System, Trajectory
from .table import make_table


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
    rows, trajectories = [], []
    plan = [(r, {}) if isinstance(r, str) else (r[0], dict(r[1])) for r in runs]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(plan), desc="compare", unit="run")
    for method, options in plan:
        count = as_int("steps", _per_method("steps", steps, method), 1)
        row, traj = run_one(sim.copy(), method, _per_method("dt", dt, method), count, **options)
        rows.append(row)
        trajectories.append(traj)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return (make_table(rows), trajectories) if return_trajectories else make_table(rows)


def stability(make: Callable[[], System], methods: Sequence[str], dts: Sequence[float], *,
              duration: float | Mapping[str, float], drift_tol: float = 0.1,
              options: Mapping[str, dict] | None = None):
    """Stability map rows: each method at each dt for `duration` seconds from `make()`.

    duration [s]: one for all, or per method (cheap methods can run long enough for a slow
    blow-up to show). status is "diverged", "drift" (|relative energy drift| > drift_tol) or
    "stable".
    """
    rows = []
    for method, dt in itertools.product(methods, dts):
        steps = max(1, int(round(_per_method("duration", duration, method) / dt)))
        row, _ = run_one(make(), method, dt, steps, **(options or {}).get(method, {}))
        row["status"] = ("diverged" if row["diverged"] is not None
                         else "drift" if abs(row["relative_drift"]) > drift_tol else "stable")
        rows.append(row)
    return make_table(rows)


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
