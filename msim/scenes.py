"""Ready-made scenes: each function returns a `Scene` holding a System, faces to draw and a
time step that suits it.

    scene = msim.scenes.cloth_on_sphere()
    traj = scene.run(60, "fms")
    msim.plot.frame(traj.positions[-1], scene.faces)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .experiments import calm_after, gust_curtain
from .mesh import box_tets, cloth_grid, rope, tet_mesh
from .methods import resolve
from .system import System, Trajectory


@dataclass
class Scene:
    """A System with what it takes to run and draw it.

    faces (f,3) triangles for drawing; dt [s] a step for the implicit methods (h = 1/30 unless
    said); before_step(sim) scripted motion run before every step (None for static scenes).
    """

    name: str
    system: System
    faces: np.ndarray
    dt: float = 1 / 30
    before_step: Callable[[System], None] | None = None

    def dt_for(self, method: str) -> float:
        """The step [s] `run` takes with `method`: self.dt for implicit and linearised implicit
        Euler, BDF2, FMS and XPBD; for the explicit methods (explicit and symplectic Euler,
        RK4, velocity Verlet), whose stability depends on the step, `stable_dt(self.system)`
        (times sqrt(2) for RK4, whose stability limit is 2 sqrt(2) / omega_max) when that is
        smaller; for implicit midpoint `midpoint_dt(self.system)` when that is smaller."""
        resolve(method, {})
        if method in EXPLICIT:
            return min(self.dt, stable_dt(self.system) * EXPLICIT[method] / 2.0)
        if method == "implicit_midpoint":
            return min(self.dt, midpoint_dt(self.system))
        return self.dt

    def run(self, steps: int, method: str, *, dt: float | None = None,
            **options: Any) -> Trajectory:
        """Simulate `steps` steps of `method` (at dt_for(method) unless dt is given) with the
        script."""
        return self.system.simulate(steps, self.dt_for(method) if dt is None else dt, method,
                                    before_step=self.before_step, **options)


EXPLICIT = {"explicit_euler": 2.0, "symplectic_euler": 2.0, "rk4": 2.0 * np.sqrt(2.0),
            "velocity_verlet": 2.0}
"""Methods whose stability depends on the step, with omega h at their stability limit on the
imaginary axis (explicit Euler has none and takes symplectic Euler's, which keeps its growth
slow)."""


def stable_dt(system: System, safety: float = 0.5) -> float:
    """A step [s] at which symplectic Euler is stable: safety * 2 / omega_max.

    omega_max^2, the largest eigenvalue of M^-1 K over free vertices, is bounded by a
    Gershgorin row sum: each spring's Hessian k uu^T + k (1 - L/l)(I - uu^T) has eigenvalues k
    and k (1 - L/l) < k, so K is at most the spring Laplacian (times I3), whose row i in M^-1 L
    sums to 2 sum_s k_s / m_i over vertex i's springs; a contact adds contact_stiffness / m_i,
    counted for every vertex when the system has colliders (any vertex can touch one).
    Symplectic Euler and velocity Verlet are stable below h = 2 / omega_max, RK4 below
    2 sqrt(2) / omega_max (where |R(i omega h)| = 1); explicit Euler is unstable at every
    step without damping, so this step only keeps its growth slow. The safety factor leaves
    room for a vertex touching two colliders and for damping-free runs near the edge.
    Returns inf when nothing is stiff (no springs, no colliders).
    """
    omega = omega_max(system)
    return safety * 2.0 / omega if omega > 0 else np.inf


def omega_max(system: System) -> float:
    """The Gershgorin bound on the largest angular frequency [rad/s] of system's free vertices,
    springs and contact together (see `stable_dt`); 0 when nothing is stiff."""
    mass = np.asarray(system.mass, float)
    row = np.zeros(system.n_vertices)
    for end in system.edges.T:
        np.add.at(row, end, 2.0 * np.asarray(system.stiffness, float))
    if _has_colliders(system):
        row += system.contact_stiffness
    free = _free(system)
    return float(np.sqrt((row[free] / mass[free]).max(initial=0.0)))


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
      gained 1e4 to 6e4 J in 1.5 s. h = 2 / omega_max leaves a factor 2 to 3.
    * penalty contact, a force that switches on at the surface: a vertex entering a collider
      at normal speed v_n within a step lies a <= v_n h outside it at the step's start; the
      midpoint rule evaluates the force kc depth at (x_t + x_{t+h}) / 2, so the step's work
      misses the penalty energy by kc a^2 / 2 (gained on entering, lost on leaving, the two not
      balancing), up to (omega_c h)^2 times the normal kinetic energy m v_n^2 / 2. Measured
      on a particle bouncing on a plane: up to 0.013, 0.05 and 0.21 of it at omega_c h = 0.25,
      0.5 and 1, several times it from omega_c h = 4. h <= 1 / omega_c bounds each crossing's
      error by that kinetic energy.
    """
    mass = np.asarray(system.mass, float)[_free(system)]
    rates = [omega_max(system) / 2.0]
    if _has_colliders(system) and len(mass):
        rates.append(np.sqrt(system.contact_stiffness / mass.min()))
    rate = max(rates)
    return 1.0 / rate if rate > 0 else np.inf


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


SCENES: dict[str, Callable[..., Scene]] = {
    "hanging_cloth": hanging_cloth,
    "cloth_on_sphere": cloth_on_sphere,
    "curtain": curtain,
    "jelly_cube": jelly_cube,
    "rope_pendulum": rope_pendulum,
    "pushed_cloth": pushed_cloth,
}
