"""`System`: the C core's mass-spring system plus the conveniences of the Python layer."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _core
from .methods import as_int, number_text, resolve


@dataclass(frozen=True)
class StepInfo:
    """What one call of `System.step` did.

    residuals: per-iteration residual (gradient norm of the incremental potential, or the
    constraint residual for XPBD); empty for single-pass methods. objectives: per-iteration
    value of the objective where the method minimises one. seconds: wall time in C.
    timings: seconds spent in "assemble", "factor" and "solve" (zero for methods without
    those phases).

    implicit_euler, implicit_midpoint, bdf2 (their g has the effective step h/2 and 2h/3, and
    implicit_midpoint's unknown is the midpoint (x_t + x_{t+h})/2): entry 0 is the start point
    x = y, then one entry per solver iteration (solver="vbd": per sweep over all vertices);
    residuals are |grad g| [N], objectives g [J]; converged is True only when a positive tol
    was met (with tol=0 nothing was tested, so it is False). linearized_implicit: entry 0 is
    dv = 0, then one per solver iteration (one for 'direct'); residuals are |b - A dv| / |b|,
    objectives the quadratic model dv.A dv / 2 - b.dv [J] that CG minimises. fms: entry 0 at
    y, then one per iteration, |grad g| [N] and g [J] (g never increases without colliders).
    xpbd: the last substep's |C + alpha~ lambda| [m] and its g [J], entry 0 at the prediction.
    """

    method: str
    dt: float
    iterations: int
    converged: bool
    residuals: np.ndarray
    objectives: np.ndarray
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class Trajectory:
    """Recorded frames of `System.simulate`.

    positions (frames, n, 3) [m]; times (frames,) [s]; energies: name -> (frames,) [J];
    seconds and iterations (steps,) per step taken; diverged: index of the step that diverged
    when simulate stopped early (on_divergence="stop"), else None; velocities (frames, n, 3)
    [m/s] (None when built without them). save(path) / Trajectory.load(path): an .npz file.
    """

    method: str
    dt: float
    positions: np.ndarray
    times: np.ndarray
    energies: dict[str, np.ndarray]
    seconds: np.ndarray
    iterations: np.ndarray
    diverged: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    velocities: np.ndarray | None = None

    def save(self, path) -> None:
        """Write every field to `path` (.npz, no pickle); Trajectory.load reads it back
        bit-exactly."""
        from .io import save_trajectory

        save_trajectory(self, path)

    @classmethod
    def load(cls, path) -> Trajectory:
        """Read a Trajectory written by `save`."""
        from .io import load_trajectory

        return load_trajectory(path)


class System(_core.System):
    """A mass-spring system stepped in C.

    System(vertices, edges, *, mass={mass}, stiffness={stiffness}, rest_lengths=None,
           fixed=None, gravity={gravity}, damping={damping}, planes=None, spheres=None,
           contact_stiffness={contact_stiffness}, contact_scale={contact_scale},
           friction={friction}, threads={threads})

    vertices (n,3) [m]; edges (m,2) vertex indices; mass [kg] scalar or (n,); stiffness [N/m]
    scalar or (m,); rest_lengths [m] (m,), default the lengths in `vertices`; fixed: vertex
    indices or a boolean (n,) mask of kinematic vertices; gravity (3,) [m/s^2]; damping: ether
    drag rate [1/s], velocities are multiplied by exp(-damping*dt) each step in every method.

    external_forces (n,3) [N], zero until assigned: a force on each vertex (wind, a load) that
    every method applies the way it applies gravity, F_i / m_i being an acceleration like g
    (explicit, symplectic and linearised implicit Euler, RK4 and velocity Verlet add it to the
    force; implicit Euler, implicit midpoint, BDF2, FMS and XPBD put it in the inertial target
    y = x + h v + h^2 (g + F/m), with their base point and effective step). Assign it between
    steps (before_step) for forces that change in time; fixed vertices ignore it. It is part of
    the state: get_state/set_state, copies and pickles carry it. energy() holds no potential
    for it (an external force need not be conservative), so its work shows up as a change of
    "total".

    Colliders: planes (k,4) rows of normal and offset (outside where n.x >= offset; normals are
    normalised), spheres (k,4) rows of centre and radius [m]; assign `sim.planes` or
    `sim.spheres` between steps to move them. Every method handles contact in its natural way:
    explicit, symplectic, implicit and linearised implicit Euler, RK4, velocity Verlet,
    implicit midpoint and BDF2 through a penalty energy
    contact_stiffness/2 * depth^2 (force, gradient and Hessian); FMS minimises the same energy in
    its local-global iterations and then projects; XPBD projects inside its iterations. The
    projection follows each vertex's path from the step's start, so no vertex ends a step of FMS
    or XPBD inside a collider or through a sphere. Spheres are touched at contact_scale *
    radius (s ~ 1.1). friction: Coulomb coefficient; in XPBD the position-based rule of
    Macklin et al. 2014 (tangential travel cancelled below friction times the normal correction,
    shortened by it above), in the other methods a vertex in contact loses tangential speed up
    to friction times the normal speed the step took from it.

    bdf2 builds a step from the current state and the one a step of the same dt before it;
    that history is part of the state (get_state/set_state, copies and pickles carry it) and
    ends when positions or velocities are assigned, on set_state without it, or when dt changes
    (then bdf2 takes an implicit Euler step).

    threads: threads of the passes over springs and vertices inside one step (OpenMP). Results
    are bit-identical for any value: the work is cut into fixed blocks whose sums are combined
    in a fixed order. Leave it at 1 when several Systems step in parallel Python threads.
    """

    __slots__ = ()

    def step(self, dt: float, method: str, *, history: bool = True,
             **options: Any) -> StepInfo:
        """Advance by `dt` seconds with `method` (see `msim.METHODS` for names and options).

        history=False: the step computes no per-iteration residuals and objectives that only
        the record would use, and StepInfo.residuals and objectives come back empty
        (iterations and converged are still reported; a positive tol still tests its
        residual). The positions and velocities are the same bit for bit either way. The
        record (a residual and g after every iteration) is about 45 % of an XPBD step and
        5-15 % of an FMS step on a 100 x 100 to 200 x 200 cloth; simulate() never records.

        Raises DivergenceError (state left as it was) when the step produces a non-finite or
        absurd state, NotPositiveDefiniteError when a linear system is indefinite.
        """
        if not isinstance(history, (bool, np.bool_)):
            raise TypeError(f"history: expected True or False, got {history!r}")
        iters, converged, residuals, objectives, seconds, timings = self._step(
            dt, method, bool(history), **resolve(method, options))
        return StepInfo(method, float(dt), iters, converged, residuals, objectives, seconds,
                        timings)

    def simulate(self, steps: int, dt: float, method: str, *, record_every: int = 1,
                 progress: bool = False, on_divergence: str = "raise",
                 before_step: Callable[[System], None] | None = None,
                 **options: Any) -> Trajectory:
        """Take `steps` steps, recording positions and energies every `record_every` steps.

        Frame 0 is the state before the first step. on_divergence="stop" ends the run at a
        diverged step (recorded in Trajectory.diverged) instead of raising. before_step(sim),
        when given, runs before every step: scripted motion of fixed vertices or colliders.

        Interrupted (Ctrl-C, Jupyter's stop button), a long step in progress is abandoned with
        the state as it was before it, and the KeyboardInterrupt carries the frames recorded so
        far as its `trajectory` attribute. A step that had just finished when the interrupt
        arrived stays taken: the System may then be one step past the last recorded step.
        """
        steps = as_int("steps", steps, 0, 2**63 - 1)  # the step counter is an int64
        record_every = as_int("record_every", record_every, 1)
        if on_divergence not in ("raise", "stop"):
            raise ValueError(f"on_divergence: expected 'raise' or 'stop', got {on_divergence!r}")
        core_options = resolve(method, options)
        # one append per frame and per step, so an interrupt never leaves them half-recorded
        frames = [(self.positions, self.velocities, self.time, self.energy())]
        taken: list[tuple[float, int]] = []  # (seconds, iterations) of each step
        diverged = None
        bar = _progress(steps, method) if progress else None

        def recorded() -> Trajectory:
            positions, velocities, times, energies = zip(*frames)
            seconds, iterations = zip(*taken) if taken else ((), ())
            return Trajectory(
                method=method, dt=float(dt), positions=np.stack(positions),
                times=np.array(times),
                energies={key: np.array([e[key] for e in energies]) for key in energies[0]},
                seconds=np.array(seconds, dtype=float),
                iterations=np.array(iterations, dtype=int), diverged=diverged,
                options=dict(options), velocities=np.stack(velocities))

        try:
            for k in range(steps):
                if before_step is not None:
                    before_step(self)
                try:
                    iters, _, _, _, sec, _ = self._step(dt, method, False, **core_options)
                except _core.DivergenceError:
                    if on_divergence == "raise":
                        raise
                    diverged = k
                    break
                taken.append((sec, iters))
                if (k + 1) % record_every == 0:
                    frames.append((self.positions, self.velocities, self.time, self.energy()))
                if bar is not None:
                    bar.update(1)
        except KeyboardInterrupt as stop:
            stop.trajectory = recorded()
            stop.add_note(f"simulate: interrupted after {len(taken)} of {steps} steps; the "
                          "frames recorded so far are in this exception's .trajectory")
            raise
        finally:
            if bar is not None:
                bar.close()
        return recorded()

    def get_state(self) -> dict[str, Any]:
        """The changing state: positions, velocities and external forces (copies), time and
        step count, and the state one step back that bdf2 builds its step from:
        previous_positions and previous_velocities ((n,3) copies) reached by a step of
        previous_dt seconds, or None (and previous_dt 0.0) when there is none. All of it is read at
        once: a step another thread takes lands before or after it, never between its parts."""
        return self._state()

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state from `get_state`; all of it is checked before any is written. A state
        without external_forces (saved before they existed) restores none (zeros); one without
        previous_dt (or with 0) restores no history, so bdf2's next step is implicit Euler."""
        if not isinstance(state, dict):
            raise TypeError(f"state: expected a dict from get_state(), got {type(state).__name__}")
        missing = {"positions", "velocities"} - set(state)
        if missing:
            raise ValueError(f"state: expected keys positions and velocities, missing {sorted(missing)}")
        self._set_state(state["positions"], state["velocities"], state.get("time", 0.0),
                        state.get("steps", 0), state.get("external_forces"),
                        state.get("previous_positions"), state.get("previous_velocities"),
                        state.get("previous_dt", 0.0))

    def parameters(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this System's model (positions as vertices)."""
        return {"vertices": self.positions, "edges": self.edges, "mass": self.mass,
                "stiffness": self.stiffness, "rest_lengths": self.rest_lengths,
                "fixed": self.fixed, "gravity": self.gravity, "damping": self.damping,
                "planes": self.planes, "spheres": self.spheres,
                "contact_stiffness": self.contact_stiffness,
                "contact_scale": self.contact_scale, "friction": self.friction,
                "threads": self.threads}

    def copy(self) -> System:
        """An independent System with the same model and state (and deep copies of the
        attributes a subclass added)."""
        return self.__deepcopy__({})

    def __copy__(self) -> System:
        twin = _restore(type(self), self.parameters(), self.get_state())
        if hasattr(self, "__dict__"):
            twin.__dict__.update(self.__dict__)
        return twin

    def __deepcopy__(self, memo: dict) -> System:
        twin = _restore(type(self), self.parameters(), self.get_state())
        memo[id(self)] = twin
        if hasattr(self, "__dict__"):
            twin.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return twin

    def __reduce__(self):
        # the third item, a subclass's own attributes, goes back into the new object's __dict__
        return (_restore, (type(self), self.parameters(), self.get_state()),
                getattr(self, "__dict__", None) or None)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_vertices={self.n_vertices}, n_springs={self.n_springs}, "
                f"fixed={len(self.fixed)}, time={self.time:g}, steps={self.steps})")


# the signature's defaults, from the core's one table of them
System.__doc__ = System.__doc__.format_map(
    {name: number_text(value) for name, value in _core.defaults().items()})


def _restore(cls: type, params: dict[str, Any], state: dict[str, Any]) -> System:
    """Rebuild a System from `parameters()` and `get_state()` (used by pickle and copy)."""
    params = dict(params)
    sim = cls(params.pop("vertices"), params.pop("edges"), **params)
    sim.set_state(state)
    return sim


def _progress(total: int, method: str):
    """A tqdm progress bar that works in terminals and notebooks."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=method, unit="step")
