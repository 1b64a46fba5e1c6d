"""Fast mass-spring (Liu 2013) against an independent SciPy FMS, a SciPy Newton solve of the
same implicit Euler step, and the closed-form hanging chain."""

import numpy as np
import pytest

import msim
from msim.reference import fms as ref_fms

from builders import cloth

H = 1 / 30


def moving_cloth(n: int = 12) -> msim.System:
    """An n x n horizontal cloth of 500 N/m springs pinned at two corners, perturbed off its
    rest shape and moving."""
    return cloth(n, stiffness=500.0, jitter=0.02, speed=0.3, seed=3)


def falling_cloth() -> msim.System:
    """A 10x10 horizontal cloth pinned at two corners, three steps into its fall."""
    sim = cloth(10, stiffness=200.0, damping=0.5)
    for _ in range(3):
        sim.step(H, "fms", iterations=20)
    return sim


def test_iterates_match_an_independent_scipy_fms():
    sim = moving_cloth()
    sim.step(H, "fms", iterations=5)
    scipy_fms = ref_fms.FMSReference(ref_fms.step_problem(sim, H))
    x_ref, g_ref = scipy_fms.solve(20)
    info = sim.step(H, "fms", iterations=20, start="inertial")
    np.testing.assert_allclose(info.objectives, g_ref, rtol=1e-12)
    np.testing.assert_allclose(sim.positions, x_ref, atol=1e-12)


def test_fms_to_tolerance_reaches_the_newton_minimiser_of_the_same_step():
    sim = falling_cloth()
    p = ref_fms.step_problem(sim, H)
    x_newton, _ = ref_fms.newton(p, tol=1e-11)
    x_t = sim.positions
    info = sim.step(H, "fms", iterations=20000, tol=1e-9)
    assert info.converged and info.residuals[-1] < 1e-9
    np.testing.assert_allclose(sim.positions, x_newton, atol=1e-10)
    # the implicit Euler equations M (x - y)/h^2 + grad E(x) = 0, computed in NumPy
    grad = p.gradient(sim.positions)
    assert np.linalg.norm(grad) < 1e-9
    np.testing.assert_allclose(sim.velocities, (sim.positions - x_t) / H, atol=1e-12)


def test_fms_and_msim_newton_to_the_same_tolerance_reach_the_same_positions():
    sim = falling_cloth()
    newton = sim.copy()
    sim.step(H, "fms", iterations=20000, tol=1e-9)
    info = newton.step(H, "implicit_euler", max_iterations=50, tol=1e-9, spd="none",
                       line_search=True)
    assert info.converged and info.iterations < 50
    # both solve M (x - y)/h^2 + grad E(x) = 0 to |residual| < 1e-9 N on a Hessian whose
    # smallest eigenvalue is about m / h^2 = 9 N/m, so they agree to ~1e-10 m
    np.testing.assert_allclose(sim.positions, newton.positions, atol=1e-9)
    np.testing.assert_allclose(sim.velocities, newton.velocities, atol=1e-9 / H)


@pytest.mark.parametrize("pin", ["eliminate", "penalty"])
def test_objective_never_increases_over_plain_iterations(pin):
    sim = moving_cloth()
    for _ in range(4):
        info = sim.step(H, "fms", iterations=40, pin=pin)
        g = info.objectives
        assert len(g) == 41 and info.iterations == 40
        assert np.all(np.diff(g) <= 1e-12 * abs(g[0]))
        assert g[-1] < g[0]


def test_history_starts_at_y_and_records_g_and_its_gradient():
    sim = moving_cloth()
    p = ref_fms.step_problem(sim, H)
    info = sim.step(H, "fms", iterations=3, start="inertial")
    assert info.objectives[0] == pytest.approx(p.objective(p.y), rel=1e-12)
    assert info.residuals[0] == pytest.approx(np.linalg.norm(p.gradient(p.y)), rel=1e-12)
    assert info.objectives[-1] == pytest.approx(p.objective(sim.positions), rel=1e-12)


def test_the_default_start_is_the_lowest_g_of_y_x_plus_h_v_and_x():
    # without colliders the settled y is y; the step starts where g is lowest of the three
    # (potential.c), so its history begins at that g, and the other starts begin at theirs
    sim = moving_cloth()
    p = ref_fms.step_problem(sim, H)
    v = np.exp(-sim.damping * H) * sim.velocities
    v[sim.fixed] = 0.0  # fixed vertices stay at rest
    g = {"inertial": p.objective(p.y), "extrapolated": p.objective(sim.positions + H * v),
         "previous": p.objective(sim.positions)}
    for start, value in g.items():
        assert sim.copy().step(H, "fms", iterations=1, start=start).objectives[0] == (
            pytest.approx(value, rel=1e-12))
    assert sim.step(H, "fms", iterations=1).objectives[0] == pytest.approx(min(g.values()),
                                                                          rel=1e-12)
    assert min(g, key=g.get) != "inertial"  # this cloth, stretched, starts elsewhere


def test_factor_is_reused_and_rebuilt_exactly_when_dt_mass_stiffness_or_fixed_change():
    sim = moving_cloth()
    count = sim._fms_factorizations
    sim.step(H, "fms")
    sim.step(H, "fms", acceleration="anderson")
    assert count() == 1
    # rest lengths, gravity, damping and positions do not enter the matrix
    sim.rest_lengths = 1.01 * sim.rest_lengths
    sim.gravity = (0.0, -5.0, 1.0)
    sim.damping = 0.3
    sim.positions = sim.positions + 0.01
    sim.step(H, "fms")
    assert count() == 1
    changes = [lambda s: s.step(H / 2, "fms"),
               lambda s: setattr(s, "stiffness", 2 * s.stiffness),
               lambda s: setattr(s, "mass", 1.5 * s.mass),
               lambda s: setattr(s, "fixed", [0])]
    for n, change in enumerate(changes, start=2):
        change(sim)
        fresh = msim.System(**sim.parameters())
        fresh.set_state(sim.get_state())
        a, b = sim.step(H / 2, "fms"), fresh.step(H / 2, "fms")
        assert count() == n
        np.testing.assert_array_equal(a.objectives, b.objectives)
        np.testing.assert_array_equal(sim.positions, fresh.positions)


def test_penalty_pinning_is_close_to_elimination():
    sim = moving_cloth()
    other = sim.copy()
    for _ in range(10):
        sim.step(H, "fms", iterations=20)
        other.step(H, "fms", iterations=20, pin="penalty", pin_weight=1e9)
    np.testing.assert_allclose(other.positions, sim.positions, atol=1e-6)
    np.testing.assert_array_equal(other.positions[sim.fixed], sim.positions[sim.fixed])


def test_hanging_chain_stretches_by_the_weight_below_each_spring():
    n, mass, k, g = 8, 0.05, 200.0, 9.81
    mesh = msim.mesh.rope(n, length=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=mass, stiffness=k, fixed=[0],
                      gravity=(0, -g, 0), damping=2.0)
    for _ in range(60):
        sim.step(0.5, "fms", iterations=50, tol=1e-10)
    lengths = np.linalg.norm(np.diff(sim.positions, axis=0), axis=1)
    below = mass * np.arange(n - 1, 0, -1)
    np.testing.assert_allclose(lengths - 1.0 / (n - 1), below * g / k, rtol=1e-6)


def test_zero_length_springs_and_zero_stiffness_stay_finite():
    vertices = np.array([[0.0, 0, 0], [0.0, 0, 0], [1.0, 0, 0]])
    sim = msim.System(vertices, [[0, 1], [1, 2]], stiffness=[100.0, 0.0],
                      rest_lengths=[0.1, 0.5], fixed=[0])
    sim.step(H, "fms", iterations=5)
    assert np.all(np.isfinite(sim.positions))
    # the free vertex with only a zero-stiffness spring falls freely: x + h^2 g
    assert sim.positions[2] == pytest.approx(vertices[2] + H * H * np.array([0, -9.81, 0]))


def test_accelerated_variants_agree_with_plain_at_convergence():
    sim = falling_cloth()
    x_newton, _ = ref_fms.newton(ref_fms.step_problem(sim, H), tol=1e-11)
    plain = sim.copy().step(H, "fms", iterations=20000, tol=1e-9).iterations
    for acceleration in ("chebyshev", "anderson"):
        other = sim.copy()
        info = other.step(H, "fms", iterations=20000, tol=1e-9, acceleration=acceleration)
        assert info.converged and info.iterations < plain
        np.testing.assert_allclose(other.positions, x_newton, atol=1e-10)


def test_options_are_checked():
    sim = moving_cloth(4)
    with pytest.raises(ValueError, match="rho"):
        sim.step(H, "fms", acceleration="chebyshev", rho=1.0)
    with pytest.raises(ValueError, match="acceleration"):
        sim.step(H, "fms", acceleration="nesterov")
    with pytest.raises(ValueError, match="window"):
        sim.step(H, "fms", acceleration="anderson", window=0)
    with pytest.raises(ValueError, match="substeps"):
        sim.step(H, "fms", substeps=2)


@pytest.mark.parametrize("start", ["previous", "extrapolated"])
def test_the_start_option_sets_the_first_iterate_and_not_the_answer(start):
    # the SciPy FMS run from the same x_0 gives the same iterates; both end on the SciPy
    # Newton minimiser, which no start changes
    sim = moving_cloth()
    p = ref_fms.step_problem(sim, H)
    x0 = sim.positions if start == "previous" else sim.positions + H * sim.velocities
    x0[sim.fixed] = sim.positions[sim.fixed]
    info = sim.copy().step(H, "fms", iterations=5, start=start)
    _, g = ref_fms.FMSReference(p).solve(5, start=x0)
    assert info.objectives[0] == pytest.approx(p.objective(x0), rel=1e-12)
    np.testing.assert_allclose(info.objectives, g, rtol=1e-10)
    falling = falling_cloth()
    x_newton, _ = ref_fms.newton(ref_fms.step_problem(falling, H), tol=1e-11)
    assert falling.step(H, "fms", iterations=20000, tol=1e-9, start=start).converged
    np.testing.assert_allclose(falling.positions, x_newton, atol=1e-10)


def test_newton_takes_the_same_start_option():
    sim = moving_cloth()
    p = ref_fms.step_problem(sim, H)
    info = sim.copy().step(H, "implicit_euler", start="previous")
    assert info.objectives[0] == pytest.approx(p.objective(sim.positions), rel=1e-12)
    with pytest.raises(ValueError, match="start: expected one of"):
        sim.step(H, "fms", start="zero")


@pytest.mark.parametrize("options", [{}, {"acceleration": "anderson", "start": "previous"}])
def test_the_fms_method_is_implicit_euler_with_the_fms_solver(options):
    # one code path: the same iterates and histories, bit for bit, over several steps
    a = cloth(10)
    b = a.copy()
    for _ in range(4):
        ia = a.step(1 / 30, "fms", iterations=7, **options)
        ib = b.step(1 / 30, "implicit_euler", solver="fms", iterations=7, **options)
        np.testing.assert_array_equal(ia.objectives, ib.objectives)
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.velocities, b.velocities)
