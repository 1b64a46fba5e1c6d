"""A per-vertex external force [N] enters every method the way gravity does (F/m acts as an
acceleration of a free vertex), fixed vertices ignore it, and it travels with the state."""

import copy
import pickle

import numpy as np
import pytest

import msim
from builders import fall, rounding

H = 0.01
ACCEL = np.array([0.3, -2.0, 0.7])  # F/m [m/s^2]
MASS = 0.25  # [kg]
STEPS = 7

METHODS = sorted(msim.METHODS)


def _free_vertex(gravity=(0.0, 0.0, 0.0)) -> msim.System:
    """One free vertex of MASS at (1, 2, 3), no springs."""
    return msim.System([[1.0, 2.0, 3.0]], np.zeros((0, 2), int), mass=MASS, gravity=gravity)


@pytest.mark.parametrize("method", METHODS)
def test_a_constant_force_moves_a_free_vertex_by_the_integrators_closed_form(method):
    sim = _free_vertex()
    sim.external_forces = [MASS * ACCEL]
    for _ in range(STEPS):
        sim.step(H, method)
    steps = fall(method, STEPS)
    position, velocity = rounding(method, STEPS, 3.0, H)  # x is ~3 m
    np.testing.assert_allclose(sim.positions[0], [1.0, 2.0, 3.0] + H * H * ACCEL * steps,
                               rtol=1e-13, atol=position)
    np.testing.assert_allclose(sim.velocities[0], STEPS * H * ACCEL, rtol=1e-12, atol=velocity)


def test_xpbd_substeps_feel_the_force_in_every_substep():
    # s substeps of h/s: the closed form of N = n s symplectic steps of h/s
    sim = _free_vertex()
    sim.external_forces = [MASS * ACCEL]
    for _ in range(STEPS):
        sim.step(H, "xpbd", substeps=4)
    n = 4 * STEPS
    np.testing.assert_allclose(sim.positions[0], [1.0, 2.0, 3.0] + (H / 4) ** 2 * ACCEL
                               * n * (n + 1) / 2, rtol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_force_and_gravity_add_as_accelerations(method):
    # F/m + g is one acceleration: the same fall as gravity alone of that size
    g = np.array([0.0, -9.81, 0.0])
    both, alone = _free_vertex(gravity=g), _free_vertex(gravity=g + ACCEL)
    both.external_forces = [MASS * ACCEL]
    for _ in range(STEPS):
        both.step(H, method)
        alone.step(H, method)
    np.testing.assert_allclose(both.positions, alone.positions, rtol=1e-14)
    np.testing.assert_allclose(both.velocities, alone.velocities, rtol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_fixed_vertices_ignore_the_force(method):
    # a rope pinned at vertex 0: a force on the pinned vertex changes nothing, bit for bit
    mesh = msim.mesh.rope(4, 0.3)
    loaded, plain = (msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0,
                                 fixed=[0])
                     for _ in range(2))
    forces = np.zeros((4, 3))
    forces[0] = [5.0, -3.0, 2.0]
    loaded.external_forces = forces
    dt = 1e-3 if method in msim.scenes.EXPLICIT else 1 / 30
    for _ in range(5):
        loaded.step(dt, method)
        plain.step(dt, method)
    np.testing.assert_array_equal(loaded.positions, plain.positions)
    np.testing.assert_array_equal(loaded.velocities, plain.velocities)
    np.testing.assert_array_equal(loaded.external_forces, forces)  # kept as the user set it


@pytest.mark.parametrize("method", ["implicit_euler", "linearized_implicit", "fms"])
def test_a_hanging_chain_with_a_side_load_settles_at_the_statics_angle(method):
    # vertex 0 pinned, four vertices of mass m below it, a horizontal load F at the end: the
    # segment with j vertices below it carries (F, j m g), so it leans atan(F / (j m g)) from
    # the vertical and stretches by |(F, j m g)| / k
    m, k, g, load, n = 0.01, 200.0, 9.81, 0.05, 5
    mesh = msim.mesh.rope(n, 0.4, direction=(0.0, -1.0, 0.0))
    sim = msim.System(mesh.vertices, mesh.edges, mass=m, stiffness=k, fixed=[0], damping=2.0)
    forces = np.zeros((n, 3))
    forces[-1, 0] = load
    sim.external_forces = forces
    # implicit Euler and FMS solved to tolerance: their rest point is then where g's gradient
    # vanishes at v = 0, the statics (one Newton iteration per step rests elsewhere)
    options = {"implicit_euler": dict(max_iterations=50, tol=1e-12),
               "fms": dict(iterations=2000, tol=1e-12)}.get(method, {})
    for _ in range(600):
        sim.step(1 / 30, method, **options)
    assert np.abs(sim.velocities).max() < 1e-9
    segment = sim.positions[1:] - sim.positions[:-1]
    below = np.arange(n - 1, 0, -1)  # vertices below each segment, top first
    angle = np.arctan2(segment[:, 0], -segment[:, 1])
    np.testing.assert_allclose(angle, np.arctan(load / (below * m * g)), rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(segment, axis=1) - 0.1,
                               np.hypot(load, below * m * g) / k, rtol=1e-8)


def _loaded_rope() -> msim.System:
    mesh = msim.mesh.rope(6, 0.5)
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.02, stiffness=300.0, fixed=[0])
    sim.external_forces = np.linspace(0.0, 1.0, 18).reshape(6, 3)
    sim.step(1 / 60, "implicit_euler")
    return sim


def test_external_forces_travel_with_copies_pickles_and_state():
    sim = _loaded_rope()
    forces = sim.external_forces
    for twin in (sim.copy(), copy.copy(sim), copy.deepcopy(sim), pickle.loads(pickle.dumps(sim))):
        np.testing.assert_array_equal(twin.external_forces, forces)
        twin.step(1 / 60, "fms")
    state = sim.get_state()
    np.testing.assert_array_equal(state["external_forces"], forces)
    sim.external_forces = np.zeros((6, 3))
    sim.set_state(state)
    np.testing.assert_array_equal(sim.external_forces, forces)
    sim.step(1 / 60, "fms")
    np.testing.assert_array_equal(sim.positions, twin.positions)
    # a state without the key (written before external forces existed) has none
    del state["external_forces"]
    sim.set_state(state)
    np.testing.assert_array_equal(sim.external_forces, np.zeros((6, 3)))


def test_external_forces_are_zero_by_default_and_returned_as_a_copy():
    sim = _free_vertex()
    np.testing.assert_array_equal(sim.external_forces, np.zeros((1, 3)))
    sim.external_forces[0, 0] = 1.0
    np.testing.assert_array_equal(sim.external_forces, np.zeros((1, 3)))


@pytest.mark.parametrize("value, error, message", [
    (np.ones((6, 2)), ValueError, r"external_forces: expected an array of shape \(6, 3\), got "
                                  r"shape \(6, 2\)"),
    (np.ones(18), ValueError, r"external_forces: expected an array of shape \(6, 3\)"),
    (np.full((6, 3), np.nan), ValueError, r"external_forces: expected finite values, got nan"),
    (np.full((6, 3), np.inf), ValueError, r"external_forces: expected finite values"),
    ([["a", "b", "c"]] * 6, TypeError, r"external_forces: expected an array of real numbers"),
])
def test_bad_external_forces_raise_naming_the_argument_and_change_nothing(value, error, message):
    sim = _loaded_rope()
    before = sim.get_state()
    with pytest.raises(error, match=message):
        sim.external_forces = value
    with pytest.raises(error, match=message):
        sim.set_state(dict(before, external_forces=value, time=5.0))
    after = sim.get_state()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key])
    with pytest.raises(AttributeError, match="external_forces cannot be deleted"):
        del sim.external_forces


def test_energy_has_no_potential_for_the_external_force():
    # a free vertex pushed from rest without gravity: the total is the kinetic energy alone,
    # which grows by the force's work (the force is not conservative in general)
    sim = _free_vertex()
    sim.external_forces = [MASS * ACCEL]
    for _ in range(STEPS):
        sim.step(H, "symplectic_euler")
    e = sim.energy()
    v = STEPS * H * ACCEL
    assert e["total"] == pytest.approx(0.5 * MASS * v @ v, rel=1e-12)
    assert e["total"] == e["kinetic"] and e["spring"] == e["gravity"] == 0.0
