"""Planes and spheres in every method: penalty energy, settling, pushing, friction."""

import numpy as np
import pytest

import msim

# each method at a step it is stable at with stiff contact (k_c = 1e4 N/m on 10 g vertices)
METHOD_DT = {
    "symplectic_euler": 1e-3,
    "implicit_euler": 1 / 60,
    "linearized_implicit": 1 / 60,
    "fms": 1 / 60,
    "xpbd": 1 / 60,
    "rk4": 1e-3,
    "velocity_verlet": 1e-3,
    # no numerical dissipation, and the midpoint rule keeps the energy of a quadratic
    # potential only: a penalty switching on inside a step adds an error that grows with
    # omega_c h (omega_c = sqrt(k_c / m) = 1000 rad/s here), so a step that resolves the contact
    # mode, omega_c h = 2. At omega_c h = 4.2 (1/240) a curtain pushed by a sphere chatters up
    # to 7 m/s and 0.9 J, five times the 0.18 J that every resolved method gives, until a
    # vertex enters the sphere
    "implicit_midpoint": 1 / 500,
    "bdf2": 1 / 60,
}
PROJECTION = {"xpbd"}
# methods without numerical dissipation: only the ether drag slows the cloth down
CONSERVATIVE = {"symplectic_euler", "rk4", "velocity_verlet", "implicit_midpoint"}


def _drop_cloth(n=8, height=0.3, **colliders):
    mesh = msim.mesh.cloth_grid(n, n, size=1.0, origin=(-0.5, height, -0.5))
    return msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0, damping=1.0,
                       **colliders)


def test_penalty_energy_and_force_follow_the_depth():
    k, s, r = 500.0, 1.1, 0.5
    x = np.array([[0.0, -0.02, 0.0], [0.3, 1.0, 0.0], [5.0, 5.0, 5.0]])
    sim = msim.System(x, np.zeros((0, 2), int), planes=[0, 2, 0, 0], spheres=[[0, 1, 0, r]],
                      contact_stiffness=k, contact_scale=s, gravity=(0, 0, 0))
    np.testing.assert_allclose(sim.planes, [[0, 1, 0, 0]])  # the normal is normalised
    plane_depth, sphere_depth = 0.02, s * r - 0.3
    assert sim.energy()["collision"] == pytest.approx(0.5 * k * (plane_depth**2 + sphere_depth**2))
    f = sim.forces()
    np.testing.assert_allclose(f[0], [0, k * plane_depth, 0], atol=1e-12)
    np.testing.assert_allclose(f[1], [k * sphere_depth, 0, 0], atol=1e-12)
    np.testing.assert_array_equal(f[2], 0.0)  # out of contact: nothing
    sim.positions = x + [0, 10, 0]
    assert sim.energy()["collision"] == 0.0


def test_contact_force_is_minus_the_energy_gradient():
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.3, 0.3, (6, 3))
    sim = msim.System(x, np.zeros((0, 2), int), planes=[[0.2, 1, 0.1, 0.05]],
                      spheres=[[0.1, 0.0, 0.0, 0.25]], gravity=(0, 0, 0))
    eps, grad = 1e-7, np.zeros_like(x)
    for i in range(6):
        for t in range(3):
            for sign in (1, -1):
                p = x.copy()
                p[i, t] += sign * eps
                sim.positions = p
                grad[i, t] += sign * sim.energy()["collision"] / (2 * eps)
    sim.positions = x
    np.testing.assert_allclose(sim.forces(), -grad, atol=1e-5)


@pytest.mark.parametrize("method", sorted(METHOD_DT))
def test_cloth_dropped_on_the_ground_never_sinks_further_than_physics_allows(method):
    height, m, g = 0.3, 0.01, 9.81
    sim = _drop_cloth(height=height, planes=[[0, 1, 0, 0]])
    h = METHOD_DT[method]
    depths = []
    for _ in range(int(1.5 / h)):
        sim.step(h, method=method)
        depths.append(-sim.positions[:, 1].min())
    if method in PROJECTION:
        assert max(depths) < 1e-9
    else:
        # a penalty contact stores the fall's energy m g H in k_c depth^2 / 2 at most, felt
        # from the step after a vertex enters, so one step's travel at impact speed adds to it
        energy_depth = np.sqrt(2 * m * g * height / sim.contact_stiffness)
        assert max(depths) < energy_depth + np.sqrt(2 * g * height) * h
        if method in CONSERVATIVE:  # it does reach that depth
            assert max(depths) > 0.5 * energy_depth
    if method not in CONSERVATIVE:  # the others dissipate: the cloth comes to rest on it
        assert np.abs(sim.velocities).max() < 0.05
        np.testing.assert_allclose(sim.positions[:, 1], 0.0, atol=2 * m * g / sim.contact_stiffness)
        # at rest every vertex (flat cloth: springs push sideways only) balances its own
        # weight: the penalty by k_c depth = m g, projection exactly on the plane
        depth = 0.0 if method in PROJECTION else m * g / sim.contact_stiffness
        np.testing.assert_allclose(sim.positions[:, 1], -depth, rtol=1e-9, atol=1e-12)
        # and no longer moves across it (the frictionless ground leaves a slow in-plane drift,
        # which only the ether drag removes)
        assert np.abs(sim.velocities[:, 1]).max() < 1e-9


@pytest.mark.parametrize("method", sorted(METHOD_DT))
def test_cloth_draped_on_a_sphere_stays_outside_it(method):
    r = 0.25
    sim = _drop_cloth(spheres=[[0, 0, 0, r]], friction=0.5)  # frictionless, it slides off
    h = METHOD_DT[method]
    inside = []
    for _ in range(int(1.0 / h)):
        sim.step(h, method=method)
        inside.append(r - np.linalg.norm(sim.positions, axis=1).min())
    # contact at s r = 1.1 r: the cloth never reaches the sphere itself
    assert max(inside) < 0
    assert np.linalg.norm(sim.positions, axis=1).min() > (1.1 - 0.02) * r
    assert sim.positions[:, 1].max() > 0.2  # draped over it, not fallen through


@pytest.mark.parametrize("method", sorted(METHOD_DT))
def test_a_moving_sphere_pushes_a_curtain_without_tunnelling(method):
    # a curtain hangs in the xy plane; a sphere of radius 0.15 m sweeps through it along +z at
    # 0.6 m/s, i.e. 1 cm per step at h = 1/60: far less than its radius per step
    mesh = msim.mesh.cloth_grid(10, 10, size=1.0, plane="xy", origin=(-0.5, 1.0, 0.0))
    r, speed = 0.15, 0.6
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0, damping=1.0,
                      fixed=np.arange(10), spheres=[[0, 0.5, -0.3, r]])
    h = METHOD_DT[method]
    for k in range(int(1.0 / h)):
        sim.spheres = [[0, 0.5, -0.3 + speed * k * h, r]]
        sim.step(h, method=method)
        distance = np.linalg.norm(sim.positions - sim.spheres[0, :3], axis=1)
        assert distance.min() > r, f"a vertex entered the sphere at step {k}"
    # the sphere ended 0.3 m past the curtain's plane and carried the cloth with it
    assert sim.positions[:, 2].max() > 0.25


@pytest.mark.parametrize("method", ["symplectic_euler", "implicit_euler", "fms", "xpbd", "rk4",
                                    "velocity_verlet", "implicit_midpoint", "bdf2",
                                    "linearized_implicit"])
def test_coulomb_friction_stops_a_slider_after_v0_squared_over_2_mu_g(method):
    # a vertex resting on the ground at the penalty's depth m g / k_c, where the contact
    # carries its weight, pushed along it at v0: kinetic friction takes mu g h off its speed
    # every step until it stops, after v0^2 / (2 mu g) to within a step's travel
    mu, v0, g, m, kc = 0.4, 1.0, 9.81, 0.01, 1e5
    sim = msim.System([[0.0, -m * g / kc, 0.0]], np.zeros((0, 2), int), mass=m,
                      planes=[[0, 1, 0, 0]], friction=mu, contact_stiffness=kc)
    h = 1e-4 if method in msim.scenes.EXPLICIT else 1 / 120
    sim.velocities = [[v0, 0.0, 0.0]]
    for _ in range(int(1.0 / h)):
        sim.step(h, method=method)
    if method == "implicit_midpoint":
        # not L-stable: a stop within a step shows as the speed flipping its sign at the same
        # size every step, v1 = 2 (x1 - x0)/h - v0 with x held, the vertex standing still
        assert abs(sim.velocities[0, 0]) < mu * g * h
    else:
        assert abs(sim.velocities[0, 0]) < 1e-5
    travel = sim.positions[0, 0]
    assert travel == pytest.approx(v0**2 / (2 * mu * g), abs=2 * v0 * h)
    # exactly, K = floor(v0 / (mu g hs)) whole substeps at v_k = v0 - k mu g hs: implicit Euler
    # and linearised implicit Euler move with the new speed, sum over k = 1..K of hs v_k, and
    # the last step sticks (its slip within friction's stick zone, well under 1e-6 m); the
    # explicit methods and XPBD's substeps move with the speed before friction's impulse, sum
    # over k = 0..K (FMS is implicit Euler; implicit midpoint and BDF2 interpolate the speed,
    # the first test bounds them)
    hs = h / msim.METHODS["xpbd"]["substeps"].default if method == "xpbd" else h
    K = np.floor(v0 / (mu * g * hs))
    implicit = hs * K * v0 - mu * g * hs**2 * K * (K + 1) / 2
    exact = {"implicit_euler": implicit, "fms": implicit, "linearized_implicit": implicit}.get(
        method, implicit + hs * v0)
    if method not in ("implicit_midpoint", "bdf2"):  # to within the last substep's friction
        assert travel == pytest.approx(exact, abs=mu * g * hs**2)


def test_no_friction_slides_on_and_colliders_pickle():
    sim = msim.System([[0.0, 0.0, 0.0]], np.zeros((0, 2), int), planes=[[0, 1, 0, 0]],
                      spheres=[[5, 0, 0, 1]])
    sim.velocities = [[1.0, 0.0, 0.0]]
    for _ in range(60):
        sim.step(1 / 60, method="fms")
    # gliding at the penalty's depth m g / k_c
    assert sim.velocities[0, 0] == pytest.approx(1.0)
    assert sim.positions[0, 1] == pytest.approx(-0.01 * 9.81 / sim.contact_stiffness, rel=1e-6)
    import pickle

    clone = pickle.loads(pickle.dumps(sim))
    np.testing.assert_array_equal(clone.spheres, sim.spheres)
    np.testing.assert_array_equal(clone.planes, sim.planes)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(planes=[[0, 0, 0, 1]]), ValueError, r"planes: expected a non-zero normal in row 0"),
    (dict(spheres=[[0, 0, 0, -1]]), ValueError, r"spheres: expected a radius > 0 in row 0"),
    (dict(spheres=[[0, 0, 0]]), ValueError, r"spheres: expected an array of shape \(k, 4\)"),
    (dict(planes=[[0, np.nan, 0, 1]]), ValueError, r"planes: expected finite values, got nan"),
    (dict(contact_stiffness=-1), ValueError, r"contact_stiffness: .* >= 0.0, got -1.0"),
    (dict(contact_scale=0), ValueError, r"contact_scale: .* > 0.0, got 0.0"),
    (dict(friction=-0.1), ValueError, r"friction: .* >= 0.0, got -0.1"),
])
def test_bad_colliders_are_rejected(kwargs, error, message):
    with pytest.raises(error, match=message):
        msim.System(np.zeros((2, 3)), [[0, 1]], **kwargs)


# the draped cloth: 40 x 40 vertices, 1 m, 1 kg, k = 2000 N/m, damping 0.5 /s, dropped from
# 0.3 m above a sphere of radius 0.3 m (contact at s r = 0.33 m) with friction 0.5
DRAPE_N, DRAPE_R = 40, 0.3
DRAPE_RUNS = [("implicit_euler", {}), ("linearized_implicit", {}), ("symplectic_euler", {}),
              ("fms", {}), ("fms", {"iterations": 50}), ("xpbd", {}),
              ("xpbd", {"iterations": 50}), ("xpbd", {"substeps": 10}), ("velocity_verlet", {}),
              ("bdf2", {"max_iterations": 10, "tol": 1e-6, "line_search": True})]
# BDF2 needs Newton to a tolerance here: one iteration on the stiff one-sided contact at 1/30 s
# gains energy (without friction the middle vertex bounces up to 1.35 m) and the cloth slides off


def _drape_system(friction=0.5):
    mesh = msim.mesh.cloth_grid(DRAPE_N, DRAPE_N, size=1.0, origin=(-0.5, 2 * DRAPE_R, -0.5))
    return msim.System(mesh.vertices, mesh.edges, mass=1.0 / DRAPE_N**2, stiffness=2000.0,
                       damping=0.5, spheres=[[0, 0, 0, DRAPE_R]], friction=friction)


@pytest.mark.parametrize("method,options", DRAPE_RUNS,
                         ids=[f"{m}-{o}" if o else m for m, o in DRAPE_RUNS])
def test_friction_keeps_a_draped_cloth_on_the_sphere(method, options):
    # explicit Euler grows at every step without damping enough: it is left out
    sim = _drape_system()
    h = msim.scenes.stable_dt(sim) if method in msim.scenes.EXPLICIT else 1 / 30
    sim.simulate(round(2.0 / h), h, method, record_every=round(2.0 / h), **options)
    x, contact = sim.positions, sim.contact_scale * DRAPE_R
    radius = np.linalg.norm(x, axis=1)
    # never inside: projection exactly, a penalty by no more than a few mm (m g / k_c is
    # 0.06 mm; the cloth's tension wrapping the sphere presses harder)
    assert radius.min() > contact - (1e-12 if method in PROJECTION else 5e-3)
    # the middle vertex rests on top of the sphere, and the cloth hangs from there: no vertex
    # is further below it than its path along the cloth (at most the half diagonal, 0.71 m,
    # stretched by the largest strain), as it would be if the cloth slid off or fell through
    middle = x[(DRAPE_N // 2) * DRAPE_N + DRAPE_N // 2]
    # (an explicit method's friction impulse follows a step taken with the speed before it,
    # so a held vertex creeps by h^2 times its pull each step)
    assert middle[1] == pytest.approx(contact, abs=1e-2 if method in msim.scenes.EXPLICIT else 5e-3)
    lengths = np.linalg.norm(x[sim.edges[:, 0]] - x[sim.edges[:, 1]], axis=1)
    strain = (lengths / sim.rest_lengths).max()
    assert x[:, 1].min() > middle[1] - 0.5 * np.sqrt(2) * strain
    assert np.all(np.isfinite(x))


@pytest.mark.parametrize("method,options", [("xpbd", {}), ("xpbd", {"substeps": 1}),
                                            ("xpbd", {"substeps": 4})])
@pytest.mark.parametrize("start,velocity", [
    ((0.0, 0.2, 0.0), (0.0, -20.0, 0.0)),     # straight down through the middle and out below
    ((0.0, 0.2, 0.0), (0.0, -7.0, 0.0)),      # ends inside, past the centre
    ((-0.2, 0.21, 0.0), (12.0, -12.0, 0.0)),  # diagonally across, out beside and below
])
def test_a_vertex_fast_enough_to_cross_a_sphere_ends_outside_on_its_own_side(
        method, options, start, velocity):
    # a sphere of radius 5 cm with no contact margin; one step of 1/30 s carries the vertex
    # 0.67 m (or 0.23 m), several times the sphere's diameter
    r = 0.05
    sim = msim.System([start], np.zeros((0, 2), int), spheres=[[0, 0, 0, r]], contact_scale=1.0)
    sim.velocities = [velocity]
    sim.step(1 / 30, method=method, **options)
    p = sim.positions[0]
    assert np.linalg.norm(p) >= r * (1 - 1e-12)
    # it entered the sphere through the half facing its start and ends on that side
    assert np.dot(p, start) > 0
    for _ in range(30):  # and it never gets in later either
        sim.step(1 / 30, method=method, **options)
        assert np.linalg.norm(sim.positions[0]) >= r * (1 - 1e-12)
    if start[0] == 0:  # head on, the inelastic contact stops it on top, where it stays
        np.testing.assert_allclose(sim.positions[0], [0, r, 0], atol=1e-15)
