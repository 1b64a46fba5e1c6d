"""Ready-made scenes: each function returns a `Scene` holding the System a run starts from,
faces to draw and a time step that suits it.

    scene = msim.scenes.cloth_on_sphere()
    runs = {m: scene.run(60, m) for m in ("fms", "xpbd")}   # each from the same start
    msim.plot.frame(runs["xpbd"].positions[-1], scene.faces, system=scene.system)

How small a step must be: `stability_limit(system, method)` (the largest stable step of the
explicit methods, from the Gershgorin bound `omega_max`), `stable_dt`, `midpoint_dt` and
`linearized_dt`, which `Scene.dt_for` picks from.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .experiments import calm_after, gust_curtain
from .mesh import box_tets, cloth_grid, rope, tet_mesh
from . import _core
from .system import System, Trajectory


class SceneEditWarning(UserWarning):
    """`Scene.run` found `scene.system` (the System the last run stepped, or before any run a
    copy of the start) edited since: the new run starts from `scene.initial` and does not see
    the edit."""


@dataclass
class Scene:
    """A System to start runs from, with what it takes to run and draw them.

    initial: the System every `run` starts from; it is never stepped. Edit it (its stiffness,
    damping, colliders, state) to change every later run. faces (f,3) triangles for drawing;
    dt [s] a step for the implicit methods (h = 1/30 unless said); before_step(sim) scripted
    motion run before every step (None for static scenes).

    system: the System the last `run` (or `resume`) stepped, so that a frame or a view of the
    last run can draw its colliders where the run left them
    (`msim.plot.frame(traj.positions[-1], scene.faces, system=scene.system)`). Before any run it
    is a copy of initial. Each run steps a new copy of initial, so a System kept from an
    earlier run stays as that run left it.

    Why each run starts afresh: a loop `for m in methods: scene.run(60, m)` then compares the
    methods from one start, as a comparison needs; a run that continued the last one would
    start each method where the previous one ended. To continue, say so: `scene.resume`.
    """

    name: str
    initial: System
    faces: np.ndarray
    dt: float = 1 / 30
    before_step: Callable[[System], None] | None = None
    system: System = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.initial, System):
            raise TypeError(f"initial: expected an msim.System, got "
                            f"{type(self.initial).__name__}")
        self._take(self.initial.copy())

    def dt_for(self, method: str) -> float:
        """The step [s] `run` takes with `method`, the scene's dt unless a smaller one is needed.

        * implicit and linearised implicit Euler, BDF2, FMS and XPBD: self.dt (their linear
          stability limit is infinite, `stability_limit`).
        * symplectic Euler and velocity Verlet (stable below 2 / omega_max) and RK4 (below
          2 sqrt(2) / omega_max): half that limit, `stable_dt(self.initial) * c / 2` with c = 2
          or 2 sqrt(2) (`EXPLICIT`), when it is below self.dt; omega_max is the Gershgorin bound
          on the stiffest mode (`omega_max`), so the half leaves room for a vertex touching two
          colliders and for the bound's own error.
        * explicit Euler: symplectic Euler's step. It has no stable step without damping (a
          mode of frequency omega grows by sqrt(1 + (omega h)^2) per step at every h;
          `stability_limit` gives 0), and with damping c its stable steps end near
          c / omega_max^2, thousands of times smaller than a step that shows motion. At
          symplectic Euler's step its stiffest mode grows by sqrt(2) per step once excited:
          the two Eulers compare at one step, and explicit Euler's divergence is what it
          teaches.
        * implicit midpoint: `midpoint_dt(self.initial)`, when below self.dt: it is stable on a
          linear mode at every h but damps nothing, and stiff rotating springs and penalty
          contact pump energy into it at omega h >> 1.
        * linearised implicit Euler: `linearized_dt(self.initial)`, when below self.dt: with
          self-contact on, its one linear solve sees no force from pairs that enter the contact
          zone during the step.
        """
        _core.check_options(method)
        if method in EXPLICIT:
            return min(self.dt, stable_dt(self.initial) * EXPLICIT[method] / 2.0)
        if method == "implicit_midpoint":
            return min(self.dt, midpoint_dt(self.initial))
        if method == "linearized_implicit":
            return min(self.dt, linearized_dt(self.initial))
        return self.dt

    def run(self, steps: int, method: str, *, dt: float | None = None,
            **options: Any) -> Trajectory:
        """Simulate `steps` steps of `method` from the scene's start, `initial`, on a new copy
        of it (at dt_for(method) unless dt [s] is given), with the script; options go to every
        step. The copy becomes `scene.system`. Warns SceneEditWarning when `scene.system` was
        edited since the last run: that edit is not in this run (edit `scene.initial`)."""
        self._warn_if_edited()
        self._take(self.initial.copy())
        return self.resume(steps, method, dt=dt, **options)

    def resume(self, steps: int, method: str, *, dt: float | None = None,
               **options: Any) -> Trajectory:
        """Continue `scene.system` (where the last run or resume ended) by `steps` steps of
        `method`, as `run` would step; the Trajectory's frame 0 is where it continues from, and
        it carries the scene's faces, so that it draws and views without the scene."""
        traj = self.system.simulate(steps, self.dt_for(method) if dt is None else dt, method,
                                    before_step=self.before_step, **options)
        traj.faces = self.faces
        self._left = _model(self.system)
        return traj

    def _take(self, system: System) -> None:
        """Make `system` scene.system and remember its model, to tell later edits."""
        self.system = system
        self._left = _model(system)

    def _warn_if_edited(self) -> None:
        edited = [name for name, value in _model(self.system).items()
                  if not np.array_equal(value, self._left[name])]
        if edited:
            warnings.warn(f"scene.system ({', '.join(edited)}) was edited since the scene was "
                          "built or last run; run starts from scene.initial, so this run does not see the edit: "
                          "edit scene.initial to change every run, or continue the edited "
                          "System with scene.resume", SceneEditWarning, stacklevel=3)


def _model(system: System) -> dict[str, Any]:
    """A System's model (its parameters without the positions, which are state)."""
    model = system.parameters()
    del model["vertices"]
    return model


EXPLICIT = {name: entry["omega_h"] for name, entry in _core.methods().items()
            if np.isfinite(entry["omega_h"])}
"""Methods whose stability depends on the step, with omega h at their stability limit on the
imaginary axis, from the core's registry (explicit Euler's undamped limit is 0; this gives it
symplectic Euler's 2, the step `Scene.dt_for` picks for it)."""


def stability_limit(system: System, method: str) -> float:
    """The largest step h [s] at which `method` keeps every linear mode of `system` bounded,
    from the Gershgorin bound omega_max [rad/s] on its stiffest mode (`omega_max`).

    * symplectic Euler, velocity Verlet: 2 / omega_max; RK4: 2 sqrt(2) / omega_max, where its
      amplification |R(i omega h)| = |1 + z + z^2/2 + z^3/6 + z^4/24|, z = i omega h, is 1.
      Damping only widens these; they are given without it.
    * explicit Euler: a step maps (x, v) of a mode to (x + h d v, d v - h omega^2 x),
      d = exp(-c h) the ether damping of rate c = system.damping [1/s] (msim damps the
      velocity at the start of the step), a map of determinant d (1 + (omega h)^2): the
      amplitude grows by sqrt(1 + (omega h)^2) per step and the damping takes sqrt(d). It is
      stable while exp(-c h) (1 + (omega_max h)^2) <= 1, up to the root of that equation,
      about c / omega_max^2 (for c << omega_max); 0 without damping (unstable at every h) and
      inf when the damping beats the growth at every h (c >= omega_max, or nothing stiff).
      (At steps with c h >> 1 the damping wins again, wiping out the motion each step: not
      counted here.)
    * implicit Euler, linearised implicit Euler, BDF2, implicit midpoint, FMS and XPBD: inf,
      stable at every h on a linear mode. Implicit midpoint damps nothing, so on stiff
      rotating springs and penalty contact it needs `midpoint_dt` all the same.

    Returns inf when nothing is stiff (no springs, no colliders) for every method. The bound
    omega_max is exact on one free vertex on a spring to a fixed one (omega = sqrt(k/m)) and an
    upper bound elsewhere, so the limits are on the safe side. The core computes it, from the
    same registry row a DivergenceError's advice quotes.
    """
    return system._stable_step(method)[0]


def stable_dt(system: System, safety: float = 0.5) -> float:
    """A step [s] at which symplectic Euler is stable: safety times its stability limit
    2 / omega_max (`stability_limit`). The safety factor leaves room for a vertex touching two
    colliders and for damping-free runs near the edge. Returns inf when nothing is stiff (no
    springs, no colliders).
    """
    return safety * stability_limit(system, "symplectic_euler")


def omega_max(system: System) -> float:
    """The Gershgorin bound on the largest angular frequency [rad/s] of system's free vertices,
    springs and contact together; 0 when nothing is stiff.

    omega_max^2, the largest eigenvalue of M^-1 K over the free vertices (the fixed ones are
    not unknowns), is at most the largest Gershgorin row sum of M^-1 L: each spring's Hessian
    k uu^T + k (1 - L/l)(I - uu^T) has eigenvalues k and k (1 - L/l) < k, so K is at most the
    spring Laplacian L (times I3), whose row i over the free vertices holds sum_s k_s on the
    diagonal and k_s for each spring s to a free neighbour. A contact adds contact_stiffness
    to the diagonal, counted for every vertex when the system has colliders (any vertex can
    touch one). Exact for one free vertex on one spring to a fixed one: sqrt(k / m).
    """
    return system._stable_step("symplectic_euler")[1]


def midpoint_dt(system: System) -> float:
    """A step [s] at which implicit midpoint keeps the energy of system bounded:
    min(2 / omega_max, 1 / omega_c), omega_c = sqrt(contact_stiffness / m) for the lightest
    free vertex when the system has colliders (inf when nothing is stiff).

    Implicit midpoint is symmetric and damps nothing (|R(i omega h)| = 1 on a linear mode), so
    the energy errors of nonlinear forces are never removed, and at omega h >> 1 they grow:

    * stiff springs that rotate: the midpoint rule loses its unconditional stability in
      nonlinear elastodynamics (Simo, Tarnow and Wong 1992, Comput. Methods Appl. Mech. Eng.
      100); on msim's scenes the total energy starts to grow at omega_max h of 4 to 6
      (`omega_max`, the Gershgorin bound), and at 1/30 s (omega_max h = 50 to 420) every scene
      gained 6 J to 3e5 J in 1.5 s. h = 2 / omega_max leaves a factor 2 to 3.
    * penalty contact, a force that switches on at the surface: a vertex entering a collider
      at normal speed v_n within a step lies a <= v_n h outside it at the step's start; the
      midpoint rule evaluates the force kc depth at (x_t + x_{t+h}) / 2, so the step's work
      misses the penalty energy by kc a^2 / 2 (gained on entering, lost on leaving, the two not
      balancing), up to (omega_c h)^2 times the normal kinetic energy m v_n^2 / 2. Measured
      on a particle bouncing on a plane: up to 0.013, 0.05 and 0.21 of it at omega_c h = 0.25,
      0.5 and 1, several times it from omega_c h = 4. h <= 1 / omega_c bounds each crossing's
      error by that kinetic energy.
    """
    rates = [omega_max(system) / 2.0]
    if _has_colliders(system):
        rates.append(_contact_rate(system, system.contact_stiffness))
    rate = max(rates)
    return 1.0 / rate if rate > 0 else np.inf


def linearized_dt(system: System) -> float:
    """A step [s] at which linearised implicit Euler resolves self-contact: 1 / omega_sc,
    omega_sc = sqrt(self_stiffness / m) for the lightest free vertex, when self-contact is on
    (inf otherwise).

    Linearised implicit Euler (Baraff and Witkin 1998) takes one Newton step on implicit
    Euler's g from x_t, so it sees the barrier's force and curvature at x_t only. A pair
    farther than the thickness at x_t would enter the contact zone as if it felt no force;
    the step's end stops it at the zone's edge. A pair already inside, closing at normal
    speed v_n, meets the curvature it had at x_t while the barrier's grows as the gap closes,
    so the step can miss up to about kappa (v_n h)^2 / 2 of the barrier's work, (omega_sc h)^2
    times the normal kinetic energy m v_n^2 / 2 (the argument of `midpoint_dt` for
    colliders); h <= 1 / omega_sc bounds it by that kinetic energy. Measured on
    `folded_cloth(n=24)` over 0.6 s, the energy, 1.72 J at the start, peaked at 548 J at
    1/60 s, 7.2 J at 1/120 s and 29.5 J at 1/240 s, and never rose above its start at
    1 / omega_sc (1/2400 s).
    """
    rate = _contact_rate(system, system.self_stiffness) if system.self_contact else 0.0
    return 1.0 / rate if rate > 0 else np.inf


def _contact_rate(system: System, stiffness: float) -> float:
    """sqrt(stiffness / m) [rad/s] for the lightest free vertex of system (0 when none is
    free): the angular frequency of that vertex on a contact spring of stiffness [N/m]."""
    mass = np.asarray(system.mass, float)[_free(system)]
    return float(np.sqrt(stiffness / mass.min())) if len(mass) else 0.0


def _has_colliders(system: System) -> bool:
    return bool(len(system.planes) or len(system.spheres))


def _free(system: System) -> np.ndarray:
    """(n,) True for the vertices that are not fixed."""
    free = np.ones(system.n_vertices, bool)
    free[system.fixed] = False
    return free


def hanging_cloth(n: int = 20, *, stiffness: float = 1000.0, mass: float = 0.01) -> Scene:
    """An n x n, 1 m cloth lying flat, pinned at the two corners of its first row."""
    mesh = cloth_grid(n, n)
    sim = System(mesh.vertices, mesh.edges, mass=mass, stiffness=stiffness, fixed=[0, n - 1])
    return Scene("hanging cloth", sim, mesh.faces)


def cloth_on_sphere(n: int = 20, *, radius: float = 0.25, friction: float = 0.5) -> Scene:
    """An n x n, 1 m cloth dropped from 0.4 m onto a sphere of `radius` at the origin."""
    mesh = cloth_grid(n, n, origin=(-0.5, 0.4, -0.5))
    sim = System(mesh.vertices, mesh.edges, mass=1.0 / n**2, stiffness=1000.0, damping=0.5,
                 spheres=[[0.0, 0.0, 0.0, radius]], friction=friction)
    return Scene("cloth on a sphere", sim, mesh.faces)


def curtain(n: int = 81, *, gust: float = 1.0, duration: float = 0.1) -> Scene:
    """A hanging curtain: n x n vertices, 1 m, pinned along its top row, pushed out of plane by
    a gust of wind (an external force) for `duration` [s] whose impulse gives it an
    out-of-plane velocity of up to `gust` [m/s] (see msim.experiments.gust_curtain)."""
    sim = gust_curtain(n, gust=gust, duration=duration)
    return Scene("curtain", sim, cloth_grid(n, n, plane="xy").faces,
                 before_step=calm_after(duration))


def jelly_cube(n: int = 5, *, size: float = 0.3, height: float = 0.5,
               stiffness: float = 2000.0) -> Scene:
    """A soft cube of n^3 vertices (every tetrahedron edge a spring) dropped on the ground,
    tilted so that it lands on an edge."""
    vertices, tets = box_tets(n, n, n, size, origin=(-size / 2, -size / 2, -size / 2))
    angle = np.radians(30.0)
    rotation = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                         [0, 0, 1]])
    mesh = tet_mesh(vertices @ rotation.T + [0.0, height, 0.0], tets)
    sim = System(mesh.vertices, mesh.edges, mass=0.5 / len(vertices), stiffness=stiffness,
                 planes=[[0.0, 1.0, 0.0, 0.0]], friction=0.3, damping=0.2)
    return Scene("jelly cube", sim, mesh.faces)


def rope_pendulum(n: int = 30, *, length: float = 1.0, stiffness: float = 5000.0) -> Scene:
    """A rope of n vertices pinned at one end, released horizontally."""
    mesh = rope(n, length, direction=(1.0, 0.0, 0.0))
    sim = System(mesh.vertices, mesh.edges, mass=0.1 / n, stiffness=stiffness, fixed=[0])
    return Scene("rope pendulum", sim, mesh.faces)


def pushed_cloth(n: int = 20, *, radius: float = 0.15, speed: float = 0.5) -> Scene:
    """A curtain pinned along its top row, pushed by a sphere moving at `speed` m/s along z.

    The sphere starts 0.3 m in front of the curtain's middle; before_step moves it.
    """
    mesh = cloth_grid(n, n, plane="xy", origin=(-0.5, 1.0, 0.0))
    sim = System(mesh.vertices, mesh.edges, mass=1.0 / n**2, stiffness=1000.0,
                 fixed=np.arange(n), damping=0.5, spheres=[[0.0, 0.5, -0.3, radius]])

    def move(s: System) -> None:
        s.spheres = [[0.0, 0.5, -0.3 + speed * s.time, radius]]

    return Scene("cloth pushed by a sphere", sim, mesh.faces, before_step=move)


def _fold(u: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Arc-length coordinates u in [0, 1] of a strip folded in half over a half-cylinder of
    diameter `gap`: (x, y), the bottom layer at y = 0 for x <= 0, the top at y = gap."""
    r, s = gap / 2, u - 0.5
    half = np.pi * r / 2
    theta = np.clip((s + half) / r, 0.0, np.pi)
    x = np.where(s < -half, s + half, np.where(s > half, half - s, r * np.sin(theta)))
    y = np.where(s < -half, 0.0, np.where(s > half, 2 * r, r * (1 - np.cos(theta))))
    return x, y


def folded_cloth(n: int = 40, *, gap: float = 0.06, height: float = 0.1,
                 self_contact: bool = True) -> Scene:
    """An n x n, 1 m cloth folded in half (the top layer `gap` above the bottom one, joined by
    a half-cylinder fold), dropped from `height` onto the ground: without self-contact the top
    layer falls through the bottom one. Rest lengths are the flat cloth's; it has no bending
    springs, whose rest lengths would spring the fold open."""
    flat = cloth_grid(n, n, bending=False)
    x, y = _fold(flat.vertices[:, 0], gap)
    folded = np.column_stack([x, y + height, flat.vertices[:, 2] - 0.5])
    sim = System(folded, flat.edges, mass=1.0 / n**2, stiffness=1000.0, damping=0.5,
                 rest_lengths=_lengths(flat.vertices, flat.edges), planes=[[0.0, 1.0, 0.0, 0.0]],
                 friction=0.3, faces=flat.faces, self_contact=self_contact)
    return Scene("folded cloth", sim, flat.faces, dt=1 / 60)


def cloth_heap(n: int = 30, *, height: float = 0.05, self_contact: bool = True) -> Scene:
    """An n x n, 1 m cloth held vertically with its lower edge `height` above the ground and
    let go, so that it crumples into a heap; a gentle ripple (1 cm, two waves across) decides
    which way it folds."""
    mesh = cloth_grid(n, n, plane="xy", origin=(-0.5, 1.0 + height, 0.0))
    vertices = mesh.vertices.copy()
    vertices[:, 2] = 0.01 * np.sin(4 * np.pi * vertices[:, 0]) * np.sin(3 * np.pi * vertices[:, 1])
    sim = System(vertices, mesh.edges, mass=1.0 / n**2, stiffness=1000.0, damping=0.5,
                 rest_lengths=_lengths(mesh.vertices, mesh.edges), planes=[[0.0, 1.0, 0.0, 0.0]],
                 friction=0.3, faces=mesh.faces, self_contact=self_contact)
    return Scene("cloth heap", sim, mesh.faces, dt=1 / 60)


def twisted_cloth(n: int = 20, *, turns: float = 0.5, duration: float = 1.0,
                  width: float = 0.8, self_contact: bool = True) -> Scene:
    """A 1 m x `width` m cloth (1 kg/m^2) of n x max(3, n width) vertices, lying flat 0.5 m
    above the origin (no ground) with its long axis along x, held by its two short edges (fixed
    vertices), which a script turns in opposite directions about the long axis by `turns`
    turns in total (each edge turns / 2) over `duration` [s], easing in and out (smoothstep),
    then holds still.

    The twist wrings the cloth's middle into a rope, where it folds and presses on itself:
    without self-contact the folds pass through each other (from about 0.7 s at n = 10). The
    script assigns the held edges' positions before every step, so BDF2's history ends each
    step and it takes implicit Euler steps here; the work the script does is the run's
    energies["work"]. Structural and shear springs, their rest lengths the flat cloth's.
    Step 1/60 s."""
    m = max(3, round(n * width))
    flat = cloth_grid(n, m, (1.0, width), bending=False, origin=(-0.5, 0.5, -width / 2))
    grid = np.arange(n * m).reshape(m, n)
    left, right = grid[:, 0], grid[:, -1]
    start = flat.vertices.copy()
    sim = System(start, flat.edges, mass=width / (n * m), stiffness=1000.0, damping=0.5,
                 fixed=np.concatenate([left, right]), faces=flat.faces,
                 self_contact=self_contact)

    def twist(s: System) -> None:
        u = np.clip(s.time / duration, 0.0, 1.0)
        angle = np.pi * turns * u * u * (3.0 - 2.0 * u)  # each edge's share, smoothstep
        x = s.positions
        x[left] = _turn_about_x(start[left], -angle, axis=(0.5, 0.0))
        x[right] = _turn_about_x(start[right], angle, axis=(0.5, 0.0))
        s.positions = x

    return Scene("twisted cloth", sim, flat.faces, dt=1 / 60, before_step=twist)


def _turn_about_x(points: np.ndarray, angle: float, axis: tuple[float, float]) -> np.ndarray:
    """points (k,3) [m] turned by `angle` [rad] about the line parallel to x through
    (y, z) = axis [m], right-handed."""
    c, s = np.cos(angle), np.sin(angle)
    y, z = points[:, 1] - axis[0], points[:, 2] - axis[1]
    return np.column_stack([points[:, 0], axis[0] + c * y - s * z, axis[1] + s * y + c * z])


def cloth_stack(n: int = 15, *, layers: int = 3, gap: float = 0.05, angle: float = 20.0,
                radius: float = 0.25, self_contact: bool = True) -> Scene:
    """`layers` n x n, 1 m cloths stacked `gap` [m] apart (the lowest 0.4 m above the origin),
    each turned `angle` [degrees] about the vertical more than the one below it, dropped onto
    a sphere of `radius` [m] at the origin (friction 0.5): they land on the sphere near 0.19 s
    and drape over it and onto each other. With self-contact they stay stacked in their
    order, more than half a self_thickness apart (where its log barrier starts); without it
    the upper ones fall through the lower ones wherever the sphere holds those up.

    One System: the layers' vertices, springs and triangles concatenated, layer k's vertices
    at k n^2 .. (k + 1) n^2 - 1 (so `positions.reshape(layers, n * n, 3)` splits them). Each
    layer weighs 1 kg. Structural, shear and bending springs, their rest lengths the flat
    cloth's. Step 1/60 s."""
    flat = cloth_grid(n, n, origin=(-0.5, 0.0, -0.5))
    parts = []
    for k in range(layers):
        turn = np.radians(angle * k)
        c, s = np.cos(turn), np.sin(turn)
        x, z = flat.vertices[:, 0], flat.vertices[:, 2]
        parts.append(np.column_stack([c * x + s * z, np.full(n * n, 0.4 + k * gap),
                                      -s * x + c * z]))
    offsets = n * n * np.arange(layers)
    vertices = np.concatenate(parts)
    edges = np.concatenate([flat.edges + o for o in offsets])
    faces = np.concatenate([flat.faces + o for o in offsets])
    sim = System(vertices, edges, mass=1.0 / n**2, stiffness=1000.0, damping=0.5,
                 spheres=[[0.0, 0.0, 0.0, radius]], friction=0.5, faces=faces,
                 self_contact=self_contact)
    return Scene("cloth stack", sim, faces, dt=1 / 60)


def _lengths(vertices: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(m,) lengths of the springs `edges` at `vertices` [m]."""
    return np.linalg.norm(vertices[edges[:, 0]] - vertices[edges[:, 1]], axis=1)


SCENES: dict[str, Callable[..., Scene]] = {
    "hanging_cloth": hanging_cloth,
    "cloth_on_sphere": cloth_on_sphere,
    "curtain": curtain,
    "jelly_cube": jelly_cube,
    "rope_pendulum": rope_pendulum,
    "pushed_cloth": pushed_cloth,
    "folded_cloth": folded_cloth,
    "cloth_heap": cloth_heap,
    "twisted_cloth": twisted_cloth,
    "cloth_stack": cloth_stack,
}
