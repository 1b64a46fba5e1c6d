"""Experiments that reproduce published results; the notebooks and the tests call these.

Liu, Bargteil, O'Brien and Kavan 2013 (Fast simulation of mass-spring systems), Fig. 2 and 3:
the relative error of the incremental potential, (g(x_i) - g(x*)) / (g(x_0) - g(x*))
(`relative_error`, defined in msim.accuracy), against the iteration count i of one implicit
Euler step (h = 1/30 s) of a swinging curtain.

* `swinging_curtain` builds the paper's curtain (1 m x 1 m, 1 kg, pinned along its top edge,
  structural + bending + one shear diagonal: 32,158 springs on 81 x 81 vertices) and swings
  it down from horizontal with exactly solved implicit Euler steps.
* `fms_convergence` measures the relative error of several solvers from one state.
* `frame_errors` measures plain FMS over many frames, for Fig. 3's stiffness and resolution
  sweeps.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .accuracy import relative_error
from .mesh import cloth_grid
from .methods import as_int, cap_name
from .system import System

# Liu et al. 2013, Fig. 2 (curtain, 6561 vertices, h = 1/30 s): FMS relative error in g after
# 1, 10, 100 and 1000 iterations, and Newton's after one iteration
PAPER_FMS = {1: 0.361, 10: 0.196, 100: 0.0402, 1000: 2.98e-4}
PAPER_NEWTON_ONE = 0.2496

# the Fig. 2 reproduction: stiffness of the 21 x 21 curtain, scaled with resolution (Fig. 3
# uses 300-2400 N/m on 21 x 21; double the resolution, double the stiffness), the frame
# (0.4 s into the swing, when the curtain passes the vertical at its fastest) and the start of
# the iterations (the positions of the previous frame, x_t)
PAPER_STIFFNESS_21 = 300.0
PAPER_FRAME = 12
PAPER_START = "previous"

Run = Mapping[str, Any] | Callable[[System, float, int], np.ndarray]


def paper_stiffness(n: int, stiffness_21: float = PAPER_STIFFNESS_21) -> float:
    """Spring stiffness [N/m] of an n x n curtain: stiffness_21 scaled by resolution,
    stiffness_21 (n - 1) / 20 (the 81 x 81 curtain gets 4 x stiffness_21)."""
    n = as_int("n", n, 2)
    return stiffness_21 * (n - 1) / 20


def curtain_springs(n: int) -> np.ndarray:
    """(m,2) springs of the paper's n x n curtain: structural, bending (second neighbours) and
    one shear diagonal per cell, 2 n (n-1) + 2 n (n-2) + (n-1)^2 springs (32,158 for n = 81)."""
    n = as_int("n", n, 3)
    edges = cloth_grid(n, n, shear=False).edges
    grid = np.arange(n * n).reshape(n, n)
    diagonal = np.stack([grid[:-1, :-1].ravel(), grid[1:, 1:].ravel()], axis=1)
    return np.concatenate([edges, diagonal])


def swinging_curtain(n: int = 81, *, stiffness: float | None = None, frame: int = PAPER_FRAME,
                     dt: float = 1 / 30, tol: float = 1e-7) -> System:
    """The paper's curtain `frame` steps into its swing.

    A 1 m x 1 m cloth of n x n vertices (`curtain_springs`, stiffness [N/m] defaulting to
    `paper_stiffness(n)`, 1 kg in all, gravity -9.81 m/s^2 along y) lies horizontal at rest
    and is pinned along its first row (the curtain's top edge); it swings down about that edge.
    Each of the `frame` steps of dt [s] is implicit Euler solved by Newton with line search to
    |grad g| < tol [N], so the state does not depend on the solver under study.
    """
    n = as_int("n", n, 3)
    frame = as_int("frame", frame, 0)
    k = paper_stiffness(n) if stiffness is None else stiffness
    mesh = cloth_grid(n, n)
    sim = System(mesh.vertices, curtain_springs(n), mass=1.0 / n**2, stiffness=k,
                 fixed=np.arange(n))
    for _ in range(frame):
        exact_step(sim, dt, tol)
    return sim


def exact_step(sim: System, dt: float, tol: float) -> Any:
    """One implicit Euler step of sim solved to |grad g| < tol [N] (Newton, clamped Hessian,
    line search): the StepInfo, whose last objective is g* of that step [J]."""
    info = sim.step(dt, "implicit_euler", line_search=True, tol=tol, max_iterations=200)
    if not info.converged:
        raise RuntimeError(f"implicit_euler did not reach |grad g| < {tol:g} N in "
                           f"{info.iterations} iterations")
    return info


def exact_objective(sim: System, dt: float, tol: float = 1e-9) -> float:
    """g* [J]: g at the minimiser of sim's next implicit Euler step (sim is not changed)."""
    return float(exact_step(sim.copy(), dt, tol).objectives[-1])


def fms_convergence(sim: System, dt: float, iterations: int, runs: Mapping[str, Run],
                    g_star: float) -> dict[str, np.ndarray]:
    """Relative error in g after i = 0, 1, ... iterations of each run, from sim's state.

    runs: label -> either step options for `System.step` on a copy of sim (the method's
    iteration cap, `iterations` or `max_iterations`, defaults to `iterations` unless the run
    names one; e.g.
    {"method": "fms", "start": "previous"}), or a callable (sim, dt, iterations) -> objective
    history (k+1,) [J] for a solver outside msim, such as the SciPy Newton of
    msim.reference.fms. g_star: g at the exact minimiser [J] (`exact_objective`). Returns
    label -> (k+1,) relative errors; sim is not changed.
    """
    iterations = as_int("iterations", iterations, 1)
    errors = {}
    for label, run in runs.items():
        if callable(run):
            history = run(sim.copy(), dt, iterations)
        else:
            named = {"iterations", "max_iterations"} & set(run)
            given = {} if named else {cap_name(run["method"]): iterations}
            history = sim.copy().step(dt, **given, **run).objectives
        errors[label] = relative_error(history, g_star)
    return errors


def frame_errors(sim: System, frames: Iterable[int], iterations: int, *, dt: float = 1 / 30,
                 starts: Iterable[str] = (PAPER_START,), tol: float = 1e-7
                 ) -> dict[str, np.ndarray]:
    """Plain FMS's relative error after 0..iterations iterations at each of `frames`.

    sim is stepped exactly (`exact_step`) through the frames in increasing order, its current
    state being frame 0; at each listed frame one FMS step from each of `starts` (the `start`
    option of fms) is measured against that step's g*. Returns start -> (len(frames),
    iterations+1). sim ends at the last frame.
    """
    iterations = as_int("iterations", iterations, 1)
    frames = sorted(as_int("frames", f, 0) for f in frames)
    starts = tuple(starts)
    out: dict[str, list[np.ndarray]] = {start: [] for start in starts}
    now = 0
    for f in frames:
        while now < f:
            exact_step(sim, dt, tol)
            now += 1
        g_star = exact_objective(sim, dt)
        for start in starts:
            g = sim.copy().step(dt, "fms", iterations=iterations, start=start).objectives
            out[start].append(relative_error(g, g_star))
    return {start: np.array(e) for start, e in out.items()}


def geometric_mean(errors: np.ndarray) -> np.ndarray:
    """Geometric mean over the first axis of positive relative errors (they span decades)."""
    return np.exp(np.mean(np.log(np.maximum(errors, 1e-300)), axis=0))


def gust_curtain(n: int = 81, *, stiffness: float = 1000.0, total_mass: float = 1.0,
                 gust: float = 1.0, duration: float = 0.1, pin: str = "top") -> System:
    """A 1 m x 1 m curtain of n x n vertices hanging at rest in the xy plane as a gust starts.

    cloth_grid(n, n, plane="xy") with structural, shear and bending springs of `stiffness`
    [N/m], `total_mass` [kg] spread evenly, gravity -9.81 m/s^2 along y, pinned along the top
    row (pin="top") or at its two top corners (pin="corners"). The gust is the System's
    external force, out of plane: F_i = m_i (gust / duration) sin(pi u) w [N] along z (u across,
    w down the curtain, both in [0, 1]). Blowing for `duration` [s] it gives each vertex the
    momentum of an out-of-plane velocity gust sin(pi u) w [m/s]; it blows until the forces are
    cleared, which `calm_after(duration)` run before every step does (scenes.curtain).
    """
    n = as_int("n", n, 2)
    if pin not in ("top", "corners"):
        raise ValueError(f"pin: expected 'top' or 'corners', got {pin!r}")
    if not duration > 0:
        raise ValueError(f"duration: expected a time > 0 [s], got {duration!r}")
    mesh = cloth_grid(n, n, plane="xy")
    fixed = np.arange(n) if pin == "top" else [0, n - 1]
    sim = System(mesh.vertices, mesh.edges, mass=total_mass / n**2, stiffness=stiffness,
                 fixed=fixed)
    u, w = mesh.vertices[:, 0], -mesh.vertices[:, 1]
    forces = np.zeros_like(mesh.vertices)
    forces[:, 2] = sim.mass * gust / duration * np.sin(np.pi * u) * w
    sim.external_forces = forces
    return sim


def calm_after(duration: float) -> Callable[[System], None]:
    """A before_step script that clears a System's external forces once its time reaches
    `duration` [s]: the end of a gust. Until then the forces stay as the System holds them (a
    state restored with set_state brings its own)."""
    def calm(sim: System) -> None:
        if sim.time >= duration:
            sim.external_forces = np.zeros((sim.n_vertices, 3))

    return calm
