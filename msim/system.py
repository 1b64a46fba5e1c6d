"""`System`: the C core's mass-spring system plus the conveniences of the Python layer."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _core
from .adjoint import Tape
from .methods import as_int, number_text
from .trajectory import Trajectory


@dataclass(frozen=True)
class StepInfo:
    """What one call of `System.step` did.

    residuals: per-iteration residual (gradient norm of the incremental potential, or the
    constraint residual for XPBD); empty for single-pass methods. objectives: per-iteration
    value of the objective where the method minimises one. seconds: wall time in C.
    timings: seconds spent in "assemble", "factor" and "solve" (zero for methods without
    those phases), and with self_contact on in its "broad_phase" (the spatial hash),
    "narrow_phase" (exact distances and the pair lists) and "bounds" (the solvers' and the
    step's displacement bounds). self_contact (with self_contact on): "pairs", the
    point-triangle and edge-edge pairs closer than twice the thickness at the step's start
    that carry the contact energy (pairs within self_contact_ring are left out); "gap", the
    smallest distance there between primitives outside each other's ring, those that may touch
    (a crease brings its neighbours closer, and the bounds keep those apart too, with no
    energy) [m], capped at twice the thickness; "limited", the vertices
    the bounds stopped short of where the method put them; "rounds", the passes the bounds
    made over the step's end (the first by the pairs of the step's start, or by the pairs
    the vertices' paths sweep past when some vertex moved farther than the radius allows;
    each later one sweeps again from where the last left the limited vertices).

    implicit_euler, implicit_midpoint, bdf2 (their g has the effective step h/2 and 2h/3, and
    implicit_midpoint's unknown is the midpoint (x_t + x_{t+h})/2): entry 0 is the start point
    (the `start` option; by default whichever of the settled y, x_t + h v and x_t has the
    lowest g), then one entry per solver iteration (solver="vbd": per sweep over all vertices);
    residuals are |grad g| [N], objectives g [J]; converged is True only when a positive tol
    was met (with tol=0 nothing was tested, so it is False). linearized_implicit: entry 0 is
    dv = 0, then one per solver iteration (one for 'direct'); residuals are |b - A dv| / |b|,
    objectives the quadratic model dv.A dv / 2 - b.dv [J] that CG minimises. fms: entry 0 at
    the start point, then one per iteration, |grad g| [N] and g [J] (g never increases).
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
    self_contact: dict[str, float] = field(default_factory=dict)


class System(_core.System):
    """A mass-spring system stepped in C.

    System(vertices, edges, *, mass={mass}, stiffness={stiffness}, rest_lengths=None,
           fixed=None, gravity={gravity}, damping={damping}, planes=None, spheres=None,
           contact_stiffness={contact_stiffness}, contact_scale={contact_scale},
           friction={friction}, faces=None, self_contact={self_contact}, self_thickness=None,
           self_stiffness={self_stiffness}, self_contact_ring={self_contact_ring},
           self_friction={self_friction}, threads={threads})

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
    `sim.spheres` between steps to move them. Every method but XPBD sees a penalty energy
    contact_stiffness/2 * depth^2 (force, gradient and Hessian; the implicit methods, FMS
    included, minimise it within g); XPBD projects inside its iterations, following each
    vertex's path from the step's start, so no vertex ends an XPBD step inside a collider or
    through a sphere. Spheres are touched at contact_scale * radius (s ~ 1.1). friction:
    Coulomb coefficient, its budget the normal force the contact carries, inside every step: a
    lagged friction potential in g for the implicit methods and linearised implicit Euler (as
    in IPC, Li et al. 2020), a velocity impulse after the explicit methods' steps, and the
    static and dynamic rules of Mueller et al. 2020 in XPBD (the contact guide derives them).
    Fixed colliders and friction never add energy.

    Self-contact: faces (t,3) vertex indices of the collision triangles (a cloth's triangles,
    a volume's boundary: `msim.mesh.boundary_faces`); their edges are the collision edges.
    self_contact=True keeps the triangles self_thickness [m] apart (default a quarter of the
    mean triangle edge) and guarantees, in every method, that no triangle edge ever crosses a
    triangle: each step's point-triangle and edge-edge pairs closer than twice the thickness
    (found by a spatial hash, Teschner et al. 2003) carry the energy
    self_stiffness/2 (thickness - d)^2, a log barrier below half the thickness (as in IPC, Li
    et al. 2020), seen by every method the way it sees its forces (XPBD projects the pairs
    instead), and after the method's step every vertex's displacement is limited by its
    distance to the nearest primitive (Offset Geometric Contact, Chen et al. 2025) so that no
    pair meets on the way. Pairs within self_contact_ring triangle edges never repel. A state
    that already crosses itself raises SelfIntersectionError at the next step;
    `self_intersections()` counts the crossing pairs of any state.

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

        The record keeps at most `msim._core.HISTORY_MAX` (2^20) entries per step: a step run
        longer records its first ones and warns (HistoryWarning); iterations counts them all.

        Raises DivergenceError (state left as it was) when the step produces a non-finite or
        absurd state, NotPositiveDefiniteError when a linear system is indefinite.
        """
        if not isinstance(history, (bool, np.bool_)):
            raise TypeError(f"history: expected True or False, got {history!r}")
        iters, converged, residuals, objectives, seconds, timings, contact = self._step(
            dt, method, bool(history), **options)
        if history and len(residuals) == _core.HISTORY_MAX <= iters:
            warnings.warn(f"{method}: the history keeps the first {_core.HISTORY_MAX} of the "
                          f"step's {iters + 1} entries (msim._core.HISTORY_MAX)", HistoryWarning,
                          stacklevel=2)
        return StepInfo(method, float(dt), iters, converged, residuals, objectives, seconds,
                        timings, contact if self.self_contact else {})

    def simulate(self, steps: int, dt: float, method: str, *, record_every: int = 1,
                 progress: bool = False, on_divergence: str = "raise",
                 before_step: Callable[[System], None] | None = None,
                 adjoint: bool = False, checkpoint_every: int = 1,
                 **options: Any) -> Trajectory:
        """Take `steps` steps, recording positions and energies every `record_every` steps.

        Frame 0 is the state before the first step. on_divergence="stop" ends the run at a
        diverged step (recorded in Trajectory.diverged) instead of raising. before_step(sim),
        when given, runs before every step: scripted motion of fixed vertices or colliders.

        The Trajectory keeps the springs (edges) and the colliders: planes and spheres (k,4)
        as they were at the start, or (frames, k, 4) per frame when before_step moved them.
        With before_step, energies["work"] (frames,) [J] is the work the script did on the
        system up to each frame: the change of energy().total across each before_step call,
        summed (the state does not move while the script runs, so any change is the
        script's: a collider or fixed vertex moved into the body, a stiffness changed). A
        passive system (no damping, friction or external force; a conservative method)
        keeps total - work at its start value; dissipation only lowers it.

        A run that starts with a free vertex inside a collider warns with a ContactWarning
        naming the deepest vertex, its depth [m] and the collider: the contact force throws it
        out in the first steps. Inside means deeper than both ten times the depth at which the
        contact carries the vertex's weight and external force (where penalty contact rests
        it) and a tenth of the mean rest length of its springs.

        Any exception raised during the run (a before_step that raises, DivergenceError with
        on_divergence="raise", Ctrl-C) carries the frames recorded so far as its `trajectory`
        attribute and a note saying how far the run got. Interrupted (Ctrl-C, Jupyter's stop
        button), a long step in progress is abandoned with the state as it was before it; a
        step that had just finished when the interrupt arrived stays taken: the System may
        then be one step past the last recorded step.

        Gradients (msim.adjoint): adjoint=True keeps the state before every step and after the
        last, 2 * n * 3 * 8 bytes (48 n bytes) per step whatever record_every, and the
        returned Trajectory gets backward(positions=dL_dX, velocities=dL_dV) -> Gradient, the
        gradient of a loss L of the recorded frames (dL_dX, dL_dV shaped like its positions
        and velocities, zeros where L does not look) with respect to stiffness, rest_lengths,
        mass, the initial positions and velocities, external_forces (held constant over the
        run) and damping. explicit_euler, symplectic_euler, velocity_verlet and rk4 get the
        exact reverse of their steps (the discrete adjoint); implicit_euler,
        implicit_midpoint, bdf2 and fms given a tol > 0 the implicit function theorem on
        grad g(x) = 0, whichever solver ran (backward warns with AdjointWarning about steps
        that did not reach tol); fms with no tol (or implicit_euler with solver='fms' and no
        tol) the reverse of its `iterations` plain local-global iterations (unrolled, without
        colliders). Contact with planes and spheres is differentiated through its penalty
        energy. For long runs, checkpoint_every=k keeps only every k-th state (the System's
        whole state, 48 n bytes, twice that in bdf2) and the last, and backward recomputes the
        k - 1 states between two of them from the earlier one (one more forward run in all,
        bit for bit the same steps; k states held at a time). A method or scene without a
        gradient (other methods, friction, self-contact) and a before_step script (it may
        change the model mid-run) raise ValueError naming the cause before the run starts.
        """
        steps = as_int("steps", steps, 0, 2**63 - 1)  # the step counter is an int64
        record_every = as_int("record_every", record_every, 1)
        if on_divergence not in ("raise", "stop"):
            raise ValueError(f"on_divergence: expected 'raise' or 'stop', got {on_divergence!r}")
        if before_step is not None and not callable(before_step):
            raise TypeError(f"before_step: expected a function of the System or None, got "
                            f"{type(before_step).__name__}")
        _core.check_options(method, **options)
        if not isinstance(adjoint, (bool, np.bool_)):
            raise TypeError(f"adjoint: expected True or False, got {adjoint!r}")
        if adjoint and before_step is not None:
            raise ValueError("adjoint=True: before_step may change the model between steps, "
                             "which the backward pass does not record; run without it")
        checkpoint_every = as_int("checkpoint_every", checkpoint_every, 1)
        tape = (Tape.start(self, method, dt, options, record_every, checkpoint_every)
                if adjoint else None)
        _warn_if_inside(self)
        record = _Recorder(self, method, dt, options, scripted=before_step is not None)
        bar = _progress(steps, method) if progress else None
        try:
            for k in range(steps):
                if before_step is not None:
                    record.script(before_step)
                try:
                    iters, converged, _, _, sec, _, _ = self._step(dt, method, False,
                                                                   **options)
                except _core.DivergenceError:
                    if on_divergence == "raise":
                        raise
                    record.diverged = k
                    break
                record.step(sec, iters)
                if tape is not None:
                    tape.step(self, converged)
                if (k + 1) % record_every == 0:
                    record.frame()
                if bar is not None:
                    bar.update(1)
        except BaseException as error:
            error.trajectory = record.trajectory(tape)
            what = ("interrupted" if isinstance(error, KeyboardInterrupt)
                    else f"stopped by {type(error).__name__}")
            error.add_note(f"simulate: {what} after {len(record.taken)} of {steps} steps; the "
                           f"{len(record.frames)} frames recorded so far are in this "
                           "exception's .trajectory")
            raise
        finally:
            if bar is not None:
                bar.close()
        return record.trajectory(tape)

    def get_state(self) -> dict[str, Any]:
        """The changing state: positions, velocities and external forces (copies), time and
        step count, and the state one step back that bdf2 builds its step from:
        previous_positions and previous_velocities ((n,3) copies) reached by a step of
        previous_dt seconds, or None (and previous_dt 0.0) when there is none. All of it is read at
        once: a step another thread takes lands before or after it, never between its parts."""
        return self._state()

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state from `get_state`; all of it is checked before any is written, and a
        key that is not one of get_state's is a ValueError (a misspelt key would otherwise
        restore nothing). A state without external_forces (saved before they existed) restores none (zeros); one without
        previous_dt (or with 0) restores no history, so bdf2's next step is implicit Euler."""
        if not isinstance(state, dict):
            raise TypeError(f"state: expected a dict from get_state(), got {type(state).__name__}")
        unknown = sorted(map(str, set(state) - set(STATE_KEYS)))
        if unknown:
            raise ValueError(f"state: unknown keys {unknown} (a state holds {list(STATE_KEYS)})")
        missing = {"positions", "velocities"} - set(state)
        if missing:
            raise ValueError(f"state: expected keys positions and velocities, missing {sorted(missing)}")
        self._set_state(state["positions"], state["velocities"], state.get("time", 0.0),
                        state.get("steps", 0), state.get("external_forces"),
                        state.get("previous_positions"), state.get("previous_velocities"),
                        state.get("previous_dt", 0.0))

    def parameters(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this System's model (positions as vertices)."""
        return {"vertices": self.positions, "edges": self.edges,
                **{name: getattr(self, name) for name in MODEL_PARAMETERS}}

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


# the model's parameters in constructor order, from the core's one table of them
MODEL_PARAMETERS = tuple(_core.model_parameters())

# the keys of get_state's dict, the only ones set_state takes
STATE_KEYS = ("positions", "velocities", "external_forces", "time", "steps",
              "previous_positions", "previous_velocities", "previous_dt")


class HistoryWarning(UserWarning):
    """A step ran more iterations than its history keeps (msim._core.HISTORY_MAX entries)."""


class ContactWarning(UserWarning):
    """simulate starts with a free vertex deep inside a collider: the contact will throw it
    out. The message names the vertex, its depth [m] and the collider."""


class _Recorder:
    """The frames and steps of one simulate run so far, each appended whole (an interrupt
    never leaves them half-recorded), and the Trajectory they make."""

    def __init__(self, sim: System, method: str, dt: float, options: dict[str, Any],
                 scripted: bool) -> None:
        self.sim, self.method, self.dt, self.options = sim, method, dt, dict(options)
        self.work = 0.0 if scripted else None  # [J] done by before_step so far
        self.frames: list[tuple] = []
        self.taken: list[tuple[float, int]] = []  # (seconds, iterations) of each step
        self.diverged: int | None = None
        self.frame()

    def frame(self) -> None:
        sim = self.sim
        self.frames.append((sim.positions, sim.velocities, sim.time, sim.energy(),
                            sim.planes, sim.spheres, self.work))

    def step(self, seconds: float, iterations: int) -> None:
        self.taken.append((seconds, iterations))

    def script(self, before_step: Callable[[System], None]) -> None:
        """Run before_step and add the energy it put into the system to the work."""
        before = self.sim.energy()["total"]
        before_step(self.sim)
        self.work += self.sim.energy()["total"] - before

    def trajectory(self, tape: Tape | None = None) -> Trajectory:
        """The Trajectory of the frames so far; with a tape, one whose backward() works."""
        positions, velocities, times, energies, planes, spheres, work = zip(*self.frames)
        seconds, iterations = zip(*self.taken) if self.taken else ((), ())
        terms = {key: np.array([e[key] for e in energies]) for key in energies[0]}
        if self.work is not None:
            terms["work"] = np.array(work)
        return Trajectory(
            method=self.method, dt=float(self.dt), positions=np.stack(positions),
            times=np.array(times), energies=terms, seconds=np.array(seconds, dtype=float),
            iterations=np.array(iterations, dtype=int), diverged=self.diverged,
            options=self.options, velocities=np.stack(velocities), edges=self.sim.edges,
            planes=_colliders("planes", planes), spheres=_colliders("spheres", spheres),
            tape=tape)


def _colliders(name: str, frames: tuple[np.ndarray, ...]) -> np.ndarray:
    """Collider rows of every frame: (k,4) when they never changed, else (frames, k, 4). When
    their number changed during the run, the rows present in every frame are kept, and a
    warning names the ones left out."""
    if all(np.array_equal(f, frames[0]) for f in frames):
        return frames[0]
    counts = [len(f) for f in frames]
    kept = min(counts)
    if kept != max(counts):
        warnings.warn(f"simulate: the number of {name} changed during the run ({min(counts)} to "
                      f"{max(counts)}); Trajectory.{name} records the first {kept} in every "
                      f"frame and leaves out rows {kept} to {max(counts) - 1}", stacklevel=4)
    return np.stack([f[:kept] for f in frames])


def _warn_if_inside(sim: System) -> None:
    """A ContactWarning when a free vertex of `sim` starts inside a collider deeper than both
    ten times its resting depth (m_i |g| + |F_i|) / contact_stiffness and a tenth of the mean
    rest length of its springs."""
    x = sim.positions
    free = np.ones(len(x), dtype=bool)
    free[sim.fixed] = False
    planes, spheres = sim.planes, sim.spheres
    # depth > 0 inside: behind a plane (outside where n.x >= offset), or within a sphere's
    # contact radius contact_scale * r; one column per collider
    depth = np.concatenate([planes[:, 3] - x @ planes[:, :3].T,
                            sim.contact_scale * spheres[:, 3]
                            - np.linalg.norm(x[:, None] - spheres[None, :, :3], axis=2)],
                           axis=1)[free]
    if not depth.size:
        return
    # a vertex resting on a collider by penalty contact sits (m |g| + |F|) / contact_stiffness
    # deep, more where springs press it in: only a depth past ten times that and a tenth of
    # its springs' mean rest length is a start inside
    load = np.asarray(sim.mass, float) * np.linalg.norm(sim.gravity) + np.linalg.norm(
        sim.external_forces, axis=1)
    ends, rest = sim.edges.ravel(), np.repeat(sim.rest_lengths, 2)
    springs = np.bincount(ends, minlength=len(x))
    length = np.bincount(ends, weights=rest, minlength=len(x)) / np.maximum(springs, 1)
    tolerance = np.maximum(10.0 * load / max(sim.contact_stiffness, 1e-300), 0.1 * length)
    excess = depth - tolerance[free, None]
    row, column = np.unravel_index(np.argmax(excess), excess.shape)
    if excess[row, column] <= 0:
        return
    vertex, deepest = int(np.flatnonzero(free)[row]), float(depth[row, column])
    if column < len(planes):
        n, offset = planes[column, :3], planes[column, 3]
        collider = f"plane {column} (normal {np.round(n, 6).tolist()}, offset {offset:g} m)"
    else:
        c, r = spheres[column - len(planes), :3], spheres[column - len(planes), 3]
        collider = (f"sphere {column - len(planes)} (centre {np.round(c, 6).tolist()} m, "
                    f"radius {r:g} m, touched at {sim.contact_scale:g} x radius)")
    warnings.warn(f"simulate: vertex {vertex} starts {deepest:.6g} m inside {collider}; the "
                  f"contact pushes it out with {sim.contact_stiffness * deepest:.6g} N "
                  "(contact_stiffness x depth) and throws it. Start the body outside the "
                  "colliders.", ContactWarning, stacklevel=3)


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
