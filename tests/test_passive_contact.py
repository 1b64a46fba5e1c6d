"""Passive contact: fixed colliders and friction never do positive work.

Energy is the audit. With no external force and colliders that do not move, the total energy
E = kinetic + spring + gravity + contact can only fall: ether drag, friction and the numerical
dissipation of implicit steps remove it, nothing adds it. A run that ends with more energy
than it started with has had work done on it by the code. A collider that moves does work,
and that work is measured by the energy jump of the state when the collider is moved (the
state held fixed), so E - W is audited instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import msim
from msim.compare import edge_strain, energy_scale

# explicit Euler grows every undamped mode by sqrt(1 + (omega h)^2) per step at any step
# (the closed form of DESIGN.md): it gains energy by construction, contact or not
AUDITED = [m for m in msim.METHODS if m != "explicit_euler"]
# no numerical dissipation: with the penalty contact an elastic spring, a vertex that lands
# bounces, and only the ether drag brings these to rest (a bouncing cloth may slide off)
CONSERVATIVE = {"symplectic_euler", "rk4", "velocity_verlet", "implicit_midpoint"}
FIXED_COLLIDER_SCENES = {"cloth_on_sphere": 5.0, "jelly_cube": 5.0}  # scene -> seconds run


def _run_scene(name: str, method: str, seconds: float):
    scene = msim.scenes.SCENES[name]()
    sim = scene.system
    dt = scene.dt_for(method)
    steps = int(round(seconds / dt))
    traj = sim.simulate(steps, dt, method, record_every=max(1, steps // 200))
    return sim, traj


@pytest.mark.parametrize("method", AUDITED)
@pytest.mark.parametrize("scene", sorted(FIXED_COLLIDER_SCENES))
def test_a_scene_with_fixed_colliders_ends_with_no_more_energy_than_it_started(scene, method):
    # at its own step and default options, every method ends the run below its start, and
    # every dissipative one at rest (an implicit step may overshoot at the impact on the way)
    sim, traj = _run_scene(scene, method, FIXED_COLLIDER_SCENES[scene])
    total, scale = traj.energies["total"], energy_scale(sim)
    assert total[-1] <= total[0] + 0.01 * scale, (
        f"{method} on {scene}: {total[0]:.3f} J -> {total[-1]:.3f} J (largest {total.max():.3f} J)")
    if method not in CONSERVATIVE:
        assert traj.energies["kinetic"][-1] < 1e-4 * scale


@pytest.mark.parametrize("options", [
    dict(solver="newton", tol=1e-8, iterations=100),
    dict(solver="fms", tol=1e-6, iterations=5000, acceleration="anderson"),
    dict(solver="lbfgs", tol=1e-8, iterations=500), dict(solver="vbd", tol=1e-6, iterations=5000)],
    ids=lambda o: o["solver"])
@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_implicit_euler_solved_to_tolerance_never_ends_a_step_above_the_start(options, friction):
    # a converged implicit Euler step is the minimiser of g: with a convex energy it loses
    # |v1 - v0|_M^2 / 2 and what friction dissipates, so no step ends above the start
    scene = msim.scenes.cloth_on_sphere(14, friction=friction)
    sim = scene.system
    traj = sim.simulate(60, scene.dt, "implicit_euler", **options)
    total = traj.energies["total"]
    rise = np.diff(total).max()
    assert total.max() <= total[0] + 1e-9 * energy_scale(sim), f"largest {total.max():.4f} J"
    assert rise <= 1e-9 * energy_scale(sim), f"a step gained {rise:.3e} J"


def _incline(angle: float, friction: float) -> tuple[msim.System, np.ndarray]:
    """One 10 g vertex at rest on a plane tilted by `angle` [rad] about z (gravity -y), at the
    penalty's depth m g cos(a) / k_c, where the contact carries its weight's normal part;
    returns the System and the unit vector up the slope."""
    normal = np.array([-np.sin(angle), np.cos(angle), 0.0])
    mass, kc = 0.01, 1e5
    depth = mass * 9.81 * np.cos(angle) / kc
    sim = msim.System([-depth * normal], np.zeros((0, 2), int), mass=mass,
                      planes=[list(normal) + [0.0]], friction=friction, contact_stiffness=kc)
    return sim, np.array([np.cos(angle), np.sin(angle), 0.0])


@pytest.mark.parametrize("method", AUDITED)
def test_a_vertex_on_an_incline_sticks_below_the_friction_angle_and_slides_above(method):
    # Coulomb: the normal force is m g cos(a), the pull along the plane m g sin(a); the
    # vertex holds while tan(a) < mu and otherwise slides with a = g (sin a - mu cos a)
    mu, g, seconds = 0.5, 9.81, 1.0
    h = 2e-4 if method in msim.scenes.EXPLICIT else 1 / 120
    for angle, sliding in [(np.arctan(mu) - 0.1, False), (np.arctan(mu) + 0.2, True)]:
        sim, up = _incline(angle, mu)
        for _ in range(int(seconds / h)):
            sim.step(h, method)
        if sliding:  # every method gains speed at the constant rate, to round-off
            speed = -sim.velocities[0] @ up
            assert speed == pytest.approx(g * (np.sin(angle) - mu * np.cos(angle)) * seconds,
                                          rel=1e-6)
        else:
            # held: the implicit schemes creep within friction's stick zone, 2 mu depth per step
            # (friction.c), over the step h' of their unknown (h/2 for implicit midpoint's
            # midpoint, 2h/3 for BDF2's step from its base point), the explicit ones by the
            # step's fall h^2 g sin(a) before the impulse stops it
            effective = {"implicit_midpoint": h / 2, "bdf2": 2 * h / 3}.get(method, h)
            creep = 2 * mu * 0.01 * g * np.cos(angle) / 1e5 / effective
            if method in msim.scenes.EXPLICIT:
                creep = h * g * np.sin(angle)
            assert abs(sim.velocities[0] @ up) <= creep
            assert abs(sim.positions[0] @ up) <= creep * seconds * 1.01


def _capstan(ratio: float, friction: float, n: int = 41) -> tuple[msim.System, int, int]:
    """A light rope of n vertices hung over the top of a sphere of radius 0.1 m (half a wrap),
    loads of 0.1 kg and ratio * 0.1 kg at its ends; returns (system, light end, heavy end)."""
    r, stiffness = 0.1, 2e4
    angles = np.linspace(0.0, np.pi, n)
    arc = np.stack([r * np.cos(angles), r * np.sin(angles), np.zeros(n)], axis=1)
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    mass = np.full(n, 1e-4)
    mass[0], mass[-1] = 0.1, 0.1 * ratio
    sim = msim.System(arc, edges, mass=mass, stiffness=stiffness, spheres=[[0, 0, 0, r]],
                      contact_scale=1.0, contact_stiffness=1e5, friction=friction, damping=2.0)
    return sim, 0, n - 1


TO_TOL = {"tol": 1e-7, "iterations": 2000}


@pytest.mark.parametrize("method,options", [
    ("implicit_euler", TO_TOL), ("implicit_euler", {**TO_TOL, "solver": "lbfgs"}),
    ("implicit_euler", {**TO_TOL, "solver": "vbd"}), ("bdf2", TO_TOL),
    ("symplectic_euler", {}), ("velocity_verlet", {}), ("xpbd", {})])
def test_a_rope_over_a_sphere_holds_loads_up_to_the_capstan_ratio(method, options):
    # the capstan equation (Euler-Eytelwein): a rope wrapped through an angle theta over a
    # surface of friction mu holds while T_heavy / T_light < exp(mu theta). The contact force
    # here is the rope's tension pressing it on the sphere, not the weight of the contact
    # vertices: friction must take its budget from the force the contact carries. (A solver
    # stopped after a few iterations resolves a slip that tension drives only over many steps:
    # the lagged friction's stick zone holds each vertex with the contact's stiffness, guide)
    mu = 0.3
    limit = np.exp(mu * np.pi)  # 2.57
    h = 1e-5 if method in msim.scenes.EXPLICIT else 1 / 120
    for ratio, holds in [(0.75 * limit, True), (1.35 * limit, False)]:
        sim, light, heavy = _capstan(ratio, mu)
        sim.simulate(int(0.6 / h), h, method, **options)
        moved = np.linalg.norm(sim.positions[light] - [0.1, 0.0, 0.0])
        if holds:  # an explicit step's contact bounces undamped: it creeps by a centimetre
            assert moved < 0.02, f"ratio {ratio:.2f} < {limit:.2f} slid {moved:.3f} m"
        else:
            assert moved > 0.05, f"ratio {ratio:.2f} > {limit:.2f} held ({moved:.3f} m)"


def test_fms_at_ten_iterations_rests_where_its_converged_steps_rest():
    # warm-started from where the last step ended (at rest its default start is x_t), FMS keeps
    # iterating towards one static state across steps: its resting strain after 25 s does not
    # change over 25 s more and equals FMS's at 300 iterations. With friction the resting
    # state depends on the way there (static friction holds any tension up to mu times the
    # normal force), so implicit Euler solved to tolerance, which lands otherwise, rests near
    # it rather than on it; FMS at 10 iterations used to rest at over twice its strain
    def rest(steps, method, **options):
        scene = msim.scenes.cloth_on_sphere(20)
        sim = scene.system
        sim.simulate(steps, scene.dt, method, **options)
        assert sim.energy()["kinetic"] < 1e-4
        return edge_strain(sim.positions, sim.edges, sim.rest_lengths).max()

    ten = rest(750, "fms")
    assert ten == pytest.approx(rest(1500, "fms"), rel=0.02)
    assert ten == pytest.approx(rest(750, "fms", iterations=300), rel=0.02)
    assert ten == pytest.approx(rest(750, "implicit_euler", tol=1e-8, iterations=50), rel=0.3)


@pytest.mark.parametrize("method", ["rk4", "velocity_verlet", "implicit_euler", "fms", "bdf2",
                                    "linearized_implicit"])
def test_a_moving_sphere_does_the_work_the_energy_gains(method):
    # a frictionless, undamped curtain pushed by a sphere: the energy jump when the sphere
    # moves with the state held is the work it does; the run's energy change is that work
    # (a conservative integrator of second order or higher, to its error) or less (the others
    # dissipate), never more. (XPBD's contact is a projection with no energy of its own, so
    # this measure does not apply to it; symplectic Euler's energy error is first order)
    mesh = msim.mesh.cloth_grid(10, 10, size=1.0, plane="xy", origin=(-0.5, 1.0, 0.0))
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0,
                      fixed=np.arange(10), spheres=[[0, 0.5, -0.2, 0.15]],
                      contact_stiffness=2e3)
    h = 2e-4 if method in msim.scenes.EXPLICIT else 1 / 120
    speed, work = 0.4, 0.0
    e0 = sim.energy()["total"]
    for k in range(int(1.0 / h)):
        before = sim.energy()["total"]
        sim.spheres = [[0, 0.5, -0.2 + speed * (k + 1) * h, 0.15]]
        work += sim.energy()["total"] - before
        sim.step(h, method)
    gained = sim.energy()["total"] - e0
    assert work > 0.01  # the sphere pushed the curtain
    if method in ("rk4", "velocity_verlet"):
        assert gained == pytest.approx(work, rel=0.002)
    else:
        assert gained <= work + 1e-9
