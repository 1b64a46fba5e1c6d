"""RK4, velocity Verlet, implicit midpoint and BDF2 against closed forms.

On the oscillator (tests/builders.py: one free vertex on one spring along its axis, no
gravity) p = omega u - i v obeys p' = i omega p, and every linear integrator applies to p as
to a scalar: RK4 multiplies it by R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 per step (z = i omega
h), implicit midpoint by (1 + z/2)/(1 - z/2), implicit Euler by 1/(1 - z), and BDF2 runs
(1 - 2z/3) p_{n+1} = 4/3 p_n - 1/3 p_{n-1} after an implicit Euler first step. |p| is the
amplitude sqrt(omega^2 u^2 + v^2).
"""

import pickle

import numpy as np
import pytest

import msim
from builders import cloth, fall, oscillator, rounding

K, MASS = 100.0, 1.0
OMEGA = np.sqrt(K / MASS)
NEWTON = {"max_iterations": 20, "tol": 1e-10}  # Newton to tolerance
IMPLICIT = ["implicit_midpoint", "bdf2"]


def _p(sim: msim.System) -> complex:
    """omega u - i v of the oscillator's free vertex; y and z must stay exactly zero."""
    x, v = sim.positions[1], sim.velocities[1]
    assert x[1] == x[2] == v[1] == v[2] == 0.0
    return OMEGA * (x[0] - 1.0) - 1j * v[0]


def _run(method: str, h: float, steps: int, stretch: float = 0.3, **options) -> np.ndarray:
    """p after 0, 1, ..., steps steps of method on the oscillator."""
    sim = oscillator(K, MASS, stretch)
    p = [_p(sim)]
    for _ in range(steps):
        sim.step(h, method, **options)
        p.append(_p(sim))
    return np.array(p)


@pytest.mark.parametrize("wh, steps, stretch", [(0.5, 100, 0.3), (3.0, 10, 1e-3)])
def test_rk4_amplitude_follows_its_stability_polynomial(wh, steps, stretch):
    # |R(i w h)| < 1 below w h = 2 sqrt(2), > 1 above it (at 3.0 it grows by 1.5 per step)
    z = 1j * wh
    r = abs(1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24)
    p = _run("rk4", wh / OMEGA, steps, stretch)
    np.testing.assert_allclose(abs(p) / abs(p[0]), r ** np.arange(steps + 1), rtol=1e-9)


def test_implicit_midpoint_keeps_the_amplitude_over_1000_steps():
    p = _run("implicit_midpoint", 0.5 / OMEGA, 1000, **NEWTON)
    np.testing.assert_allclose(abs(p) / abs(p[0]), 1.0, rtol=1e-8)
    # and turns it by the phase of (1 + z/2) / (1 - z/2), z = 0.5 i
    z = 0.5j
    np.testing.assert_allclose(p, p[0] * ((1 + z / 2) / (1 - z / 2)) ** np.arange(1001),
                               rtol=0, atol=1e-8 * abs(p[0]))


def test_bdf2_follows_its_recurrence_and_damps_less_than_implicit_euler():
    z, n = 0.5j, 60
    p = _run("bdf2", 0.5 / OMEGA, n, **NEWTON)
    expected = [p[0], p[0] / (1 - z)]  # the first step has no history: implicit Euler
    for _ in range(n - 1):
        expected.append((4 / 3 * expected[-1] - 1 / 3 * expected[-2]) / (1 - 2 * z / 3))
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-10 * abs(p[0]))
    euler = _run("implicit_euler", 0.5 / OMEGA, n, **NEWTON)
    np.testing.assert_allclose(abs(euler[-1]) / abs(p[0]), abs(1 / (1 - z)) ** n, rtol=1e-9)
    # BDF2 damps (its principal root has |r| < 1) but far less than implicit Euler
    assert abs(euler[-1]) < 0.01 * abs(p[-1]) and abs(p[-1]) < abs(p[0])


def test_velocity_verlet_conserves_its_modified_energy():
    # kick-drift-kick on the oscillator conserves v^2 + w^2 u^2 (1 - (w h / 2)^2) exactly
    wh = 1.5
    p = _run("velocity_verlet", wh / OMEGA, 1000)
    invariant = p.imag**2 + p.real**2 * (1 - wh**2 / 4)
    np.testing.assert_allclose(invariant, invariant[0], rtol=1e-12)


@pytest.mark.parametrize("method, order", [("rk4", 4), ("velocity_verlet", 2),
                                           ("implicit_midpoint", 2), ("bdf2", 2)])
def test_global_error_falls_by_two_to_the_order_when_h_halves(method, order):
    # |p - exact| at t = 1 s against omega u0 e^{i omega t}, from rest at u0 = 0.01
    errors = []
    for h in (0.005, 0.0025, 0.00125):
        steps = round(1.0 / h)
        p = _run(method, h, steps, 0.01, **({} if method in ("rk4", "velocity_verlet")
                                             else NEWTON))
        errors.append(abs(p[-1] - OMEGA * 0.01 * np.exp(1j * OMEGA * steps * h)))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    # BDF2's implicit Euler first step adds an O(h^2) term that fades as h shrinks (3.7, 3.9)
    assert ratios[-1] == pytest.approx(2**order, rel=0.05), ratios


@pytest.mark.parametrize("method", sorted(msim.METHODS))
def test_free_fall_follows_the_closed_form(method):
    rng = np.random.default_rng(0)
    x0, v0 = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    g, h, n = np.array([0.3, -9.81, 0.1]), 0.01, 200
    sim = msim.System(x0, np.zeros((0, 2), int), gravity=g)
    sim.velocities = v0
    for _ in range(n):
        sim.step(h, method=method)
    # rounding only: every step rounds x (~20 m, spacing 3.6e-15) a few times (target, solver
    # updates, 2 z - x_t), and some methods take v from position differences (rounding)
    position, velocity = rounding(method, n, 20.0, h)
    np.testing.assert_allclose(sim.positions, x0 + n * h * v0 + h * h * g * fall(method, n),
                               rtol=1e-12, atol=position)
    np.testing.assert_allclose(sim.velocities, v0 + n * h * g, rtol=1e-12, atol=velocity)
    assert sim.time == pytest.approx(n * h, rel=1e-12)
    assert sim.steps == n


def _drifting(method: str, h: float, n: int, c: float, v0: np.ndarray) -> np.ndarray:
    """x_n of a force-free vertex from the origin at v0 under damping c: every method but BDF2
    moves with the damped velocity, x_n = h v0 sum_{j=1..n} q^j (q = exp(-c h)); BDF2 runs
    x_{k+1} = (4 x_k - x_{k-1}) / 3 + (2h/3) v_{k+1} from an implicit Euler first step."""
    q = np.exp(-c * h)
    if method != "bdf2":
        return h * v0 * np.sum(q ** np.arange(1, n + 1))
    x = [0.0 * v0, h * q * v0]
    for k in range(2, n + 1):
        x.append((4 * x[-1] - x[-2]) / 3 + 2 * h / 3 * q**k * v0)
    return x[n]


@pytest.mark.parametrize("method", sorted(msim.METHODS))
def test_damping_decays_velocity_by_exp_minus_c_t_whatever_dt(method):
    c, v0 = 2.0, np.array([[1.0, -2.0, 0.5]])
    for h in (1e-3, 1e-2, 0.1):
        sim = msim.System(np.zeros((1, 3)), np.zeros((0, 2), int), gravity=(0, 0, 0),
                          damping=c)
        sim.velocities = v0
        n = int(round(1.0 / h))
        energies = [sim.energy()["kinetic"]]
        for _ in range(n):
            sim.step(h, method=method)
            energies.append(sim.energy()["kinetic"])
        # the minimisations' solves (FMS: a Cholesky solve of M x = M y) round x, and their
        # velocities are position differences over h: ~10 digits after 1000 steps
        np.testing.assert_allclose(sim.velocities, v0 * np.exp(-c * 1.0), rtol=1e-9)
        np.testing.assert_allclose(sim.positions, _drifting(method, h, n, c, v0), rtol=1e-10)
        assert np.all(np.diff(energies) < 0)


@pytest.mark.parametrize("method", IMPLICIT)
def test_fixed_vertices_stay_exactly_where_the_user_puts_them(method):
    sim = cloth()
    start = sim.positions[sim.fixed]
    for step in range(40):
        if step == 20:  # scripted motion between steps
            moved = sim.positions
            moved[sim.fixed] += [0.1, 0.2, -0.3]
            sim.positions = moved
            start = moved[sim.fixed]
        sim.step(1 / 30, method=method)
        np.testing.assert_array_equal(sim.positions[sim.fixed], start)
        np.testing.assert_array_equal(sim.velocities[sim.fixed], 0.0)


def _bdf2_cloth() -> msim.System:
    """A pinned cloth two bdf2 steps in: its next step uses the history."""
    sim = cloth()
    for _ in range(2):
        sim.step(1 / 30, "bdf2")
    return sim


def _same(a: msim.System, b: msim.System) -> None:
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.velocities, b.velocities)


def test_bdf2_history_travels_with_copies_pickles_and_get_state():
    sim = _bdf2_cloth()
    state = sim.get_state()
    assert state["previous_dt"] == 1 / 30 and state["previous_positions"].shape == (64, 3)
    twins = [sim.copy(), pickle.loads(pickle.dumps(sim)), msim.System(**sim.parameters())]
    twins[2].set_state(state)
    for _ in range(5):
        for s in [sim] + twins:
            s.step(1 / 30, "bdf2")
    for twin in twins:
        _same(twin, sim)


@pytest.mark.parametrize("reset", ["positions", "velocities", "set_state", "dt"])
def test_bdf2_takes_an_implicit_euler_step_when_the_history_is_gone(reset):
    sim = _bdf2_cloth()
    h = 1 / 30
    if reset == "dt":
        h = 1 / 40
    elif reset == "set_state":
        state = sim.get_state()
        sim.set_state({k: state[k] for k in ("positions", "velocities", "time", "steps")})
    else:
        setattr(sim, reset, getattr(sim, reset))
    euler, with_history = sim.copy(), _bdf2_cloth()
    assert (sim.get_state()["previous_dt"] == 0.0) == (reset != "dt")
    sim.step(h, "bdf2")
    euler.step(h, "implicit_euler")
    with_history.step(h, "bdf2")
    _same(sim, euler)
    assert np.abs(sim.positions - with_history.positions).max() > 1e-6 or reset == "dt"


def test_a_failed_bdf2_step_keeps_state_and_history():
    sim, twin = _bdf2_cloth(), _bdf2_cloth()
    before = sim.get_state()
    sim.external_forces = np.full((64, 3), 1e30)  # an absurd load: the step diverges
    with pytest.raises(msim.DivergenceError):
        sim.step(1 / 30, "bdf2")
    after = sim.get_state()
    for key in ("positions", "velocities", "previous_positions", "previous_velocities"):
        np.testing.assert_array_equal(after[key], before[key])
    assert after["previous_dt"] == before["previous_dt"] and after["steps"] == before["steps"]
    sim.external_forces = np.zeros((64, 3))
    sim.step(1 / 30, "bdf2")
    twin.step(1 / 30, "bdf2")
    _same(sim, twin)
