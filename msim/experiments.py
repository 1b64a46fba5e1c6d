"""Experiments that reproduce published results; the notebooks and the tests call these.

fms_convergence reproduces Liu et al. 2013, Fig. 2: the relative error of the incremental
potential, (g(x_i) - g(x*)) / (g(x_0) - g(x*)), against the iteration count i of one implicit
Euler step, for FMS with and without acceleration and for Newton's method.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .mesh import cloth_grid
from .methods import METHODS, as_int
from .system import System

# Liu et al. 2013, Fig. 2 (curtain, 6561 vertices, h = 1/30 s): FMS relative error in g after
# 1, 10, 100 and 1000 iterations, and Newton's after one iteration
PAPER_FMS = {1: 0.361, 10: 0.196, 100: 0.0402, 1000: 2.98e-4}
PAPER_NEWTON_ONE = 0.2496

Run = Mapping[str, Any] | Callable[[System, float, int], np.ndarray]


def gust_curtain(n: int = 81, *, stiffness: float = 1000.0, total_mass: float = 1.0,
                 gust: float = 1.0, pin: str = "top") -> System:
    """A 1 m x 1 m curtain of n x n vertices hanging in the xy plane, just hit by a gust.

    cloth_grid(n, n, plane="xy") with structural, shear and bending springs of `stiffness`
    [N/m], `total_mass` [kg] spread evenly, gravity -9.81 m/s^2 along y, pinned along the top
    row (pin="top") or at its two top corners (pin="corners"). The state is the rest shape with
    an out-of-plane velocity v_z = gust sin(pi u) w [m/s] (u across, w down the curtain, both
    in [0, 1]), so the next step has to bend the cloth, which is what makes FMS work.
    """
    n = as_int("n", n, 2)
    if pin not in ("top", "corners"):
        raise ValueError(f"pin: expected 'top' or 'corners', got {pin!r}")
    mesh = cloth_grid(n, n, plane="xy")
    fixed = np.arange(n) if pin == "top" else [0, n - 1]
    sim = System(mesh.vertices, mesh.edges, mass=total_mass / n**2, stiffness=stiffness,
                 fixed=fixed)
    u, w = mesh.vertices[:, 0], -mesh.vertices[:, 1]
    velocities = np.zeros_like(mesh.vertices)
    velocities[:, 2] = gust * np.sin(np.pi * u) * w
    sim.velocities = velocities
    return sim


def relative_error(objectives: np.ndarray, g_star: float) -> np.ndarray:
    """(g_i - g*) / (g_0 - g*) for a history of objective values g_i [J]."""
    objectives = np.asarray(objectives, dtype=float)
    return (objectives - g_star) / (objectives[0] - g_star)


def fms_convergence(sim: System, dt: float, iterations: int, runs: Mapping[str, Run],
                    g_star: float) -> dict[str, np.ndarray]:
    """Relative error in g after i = 0, 1, ... iterations of each run, from sim's state.

    runs: label -> either step options for `System.step` on a copy of sim (the method's
    iteration cap, `iterations` or `max_iterations`, defaults to `iterations`; e.g.
    {"method": "fms", "acceleration": "anderson"}), or a callable
    (sim, dt, iterations) -> objective history (k+1,) [J] for a solver outside msim, such as
    the SciPy Newton of msim.reference.fms. g_star: g at the exact minimiser [J], e.g. from
    a Newton solve to a tight tolerance. Returns label -> (k+1,) relative errors; sim is not
    changed.
    """
    iterations = as_int("iterations", iterations, 1)
    errors = {}
    for label, run in runs.items():
        if callable(run):
            history = run(sim.copy(), dt, iterations)
        else:
            cap = "iterations" if "iterations" in METHODS[run["method"]] else "max_iterations"
            history = sim.copy().step(dt, **{cap: iterations, **run}).objectives
        errors[label] = relative_error(history, g_star)
    return errors
