"""Explicit methods (explicit and symplectic Euler, RK4, velocity Verlet) against closed forms."""

import numpy as np
import pytest

import msim
from builders import oscillator

EULER = ["explicit_euler", "symplectic_euler"]
EXPLICIT = EULER + ["rk4", "velocity_verlet"]


def _axis_state(sim: msim.System) -> tuple[float, float]:
    """(u, v) of the oscillator's free vertex along x; y and z must stay exactly zero."""
    x, v = sim.positions[1], sim.velocities[1]
    assert x[1] == x[2] == v[1] == v[2] == 0.0
    return x[0] - 1.0, v[0]


def test_explicit_euler_amplitude_grows_by_sqrt_one_plus_omega_h_squared():
    k, m, h = 100.0, 1.0, 0.01
    omega = np.sqrt(k / m)
    sim = oscillator(k, m)
    u, v = _axis_state(sim)
    for _ in range(50):
        before = np.hypot(omega * u, v)
        sim.step(h, method="explicit_euler")
        u, v = _axis_state(sim)
        assert np.hypot(omega * u, v) / before == pytest.approx(np.sqrt(1 + (omega * h) ** 2),
                                                                rel=1e-10)


def test_symplectic_euler_conserves_its_modified_energy_over_1e4_steps():
    # v' = v - h w^2 u, u' = u + h v' conserves w^2 u^2 + v^2 - h w^2 u v exactly
    k, m, h = 100.0, 1.0, 0.05
    omega2 = k / m
    sim = oscillator(k, m)
    invariant = []
    energy = []
    for _ in range(10_000):
        sim.step(h, method="symplectic_euler")
        u, v = _axis_state(sim)
        invariant.append(omega2 * u * u + v * v - h * omega2 * u * v)
        energy.append(sim.energy()["total"])
    invariant = np.array(invariant)
    assert np.ptp(invariant) / invariant[0] < 1e-9
    # the true energy stays within the band the invariant implies: |E/E0 - 1| <= w h / 2 ...
    e0 = 0.5 * k * 0.01**2
    assert np.max(np.abs(np.array(energy) / e0 - 1)) < np.sqrt(omega2) * h
    # ... and exactly: with a = w u, b = v the invariant is a^2 + b^2 - w h a b, whose form has
    # eigenvalues 1 -/+ w h / 2, so E / E0 sweeps [1 / (1 + w h/2), 1 / (1 - w h/2)]
    wh = np.sqrt(omega2) * h
    assert max(energy) / e0 == pytest.approx(1 / (1 - wh / 2), rel=1e-6)
    assert min(energy) / e0 == pytest.approx(1 / (1 + wh / 2), rel=1e-6)


@pytest.mark.parametrize("method", EXPLICIT)
def test_fixed_vertices_stay_exactly_where_the_user_puts_them(cloth, method):
    start = cloth.positions
    for step in range(60):
        if step == 30:  # scripted motion between steps
            moved = cloth.positions
            moved[[0, 9]] += [0.1, 0.2, -0.3]
            cloth.positions = moved
            start = moved
        cloth.step(1e-3, method=method)
        np.testing.assert_array_equal(cloth.positions[[0, 9]], start[[0, 9]])
        np.testing.assert_array_equal(cloth.velocities[[0, 9]], 0.0)


@pytest.mark.parametrize("method", EXPLICIT)
def test_momentum_is_conserved_without_gravity_or_fixed_vertices(cloth, method):
    cloth.fixed = []
    cloth.gravity = (0, 0, 0)
    momentum0 = (cloth.mass[:, None] * cloth.velocities).sum(0)
    for _ in range(200):
        cloth.step(1e-3, method=method)
    momentum = (cloth.mass[:, None] * cloth.velocities).sum(0)
    np.testing.assert_allclose(momentum, momentum0, atol=1e-14)
    forces = cloth.forces()  # pairwise spring forces cancel up to rounding
    assert np.abs(forces.sum(0)).max() < 1e-13 * np.abs(forces).sum()


def test_damping_dissipates_a_swinging_cloth(cloth):
    damped = cloth.copy()
    damped.damping = 1.0
    for _ in range(2000):
        cloth.step(1e-3, method="symplectic_euler")
        damped.step(1e-3, method="symplectic_euler")
    # 2 s at rate 1/s: the damped cloth has lost most of its motion
    assert damped.energy()["kinetic"] < 0.5 * cloth.energy()["kinetic"]
    assert damped.energy()["total"] < cloth.energy()["total"]
    # unpinned, springs cancel in pairs: momentum follows P' = q P + h M g with q = e^{-c h}
    free = cloth.copy()
    free.fixed, free.damping = [], 1.0
    h, n, mass = 1e-3, 500, free.mass[:, None]
    q = np.exp(-free.damping * h)
    p0 = (mass * free.velocities).sum(axis=0)
    for _ in range(n):
        free.step(h, method="symplectic_euler")
    expected = q**n * p0 + h * mass.sum() * free.gravity * (1 - q**n) / (1 - q)
    np.testing.assert_allclose((mass * free.velocities).sum(axis=0), expected, rtol=1e-12,
                               atol=1e-13)


def test_explicit_euler_diverges_and_leaves_the_state_as_before(cloth):
    cloth.stiffness = 1e5
    for _ in range(10_000):
        before = cloth.get_state()
        try:
            cloth.step(0.01, method="explicit_euler")
        except msim.DivergenceError as err:
            assert isinstance(err, FloatingPointError) and isinstance(err, msim.Error)
            assert err.step == before["steps"] and 0 <= err.vertex < cloth.n_vertices
            assert "explicit_euler diverged" in str(err)
            break
    else:
        pytest.fail("explicit Euler with k=1e5, h=0.01 did not diverge")
    after = cloth.get_state()
    np.testing.assert_array_equal(after["positions"], before["positions"])
    np.testing.assert_array_equal(after["velocities"], before["velocities"])
    assert after["steps"] == before["steps"] and after["time"] == before["time"]


@pytest.mark.parametrize("method", EULER)  # the reference implements the two Euler methods
def test_matches_the_numpy_reference_on_a_damped_cloth(cloth, method):
    from msim.reference.explicit import ExplicitReference

    cloth.damping = 0.3
    ref = ExplicitReference(cloth.positions, cloth.velocities, cloth.edges, cloth.stiffness,
                            cloth.rest_lengths, cloth.mass, cloth.fixed, cloth.gravity, 0.3)
    for _ in range(100):
        cloth.step(1e-3, method=method)
        ref.step(1e-3, method)
    np.testing.assert_allclose(cloth.positions, ref.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cloth.velocities, ref.v, rtol=0, atol=1e-9)
