"""Orders of accuracy are the textbook ones; the solver measurements report what one run did."""

import numpy as np
import pytest

import msim
from msim.accuracy import (OrderWarning, global_error, order, oscillator, oscillator_positions,
                           reference_positions, relative_error, solver_costs, steps_for,
                           time_to_accuracy)
from msim.experiments import exact_objective

NEWTON = {"iterations": 20, "tol": 1e-10}
# Hairer, Norsett and Wanner, Solving ODEs I: the global error at a fixed time falls as h^p
ORDERS = {("explicit_euler", 1): {}, ("symplectic_euler", 1): {}, ("velocity_verlet", 2): {},
          ("rk4", 4): {}, ("implicit_euler", 1): NEWTON, ("implicit_midpoint", 2): NEWTON,
          ("bdf2", 2): NEWTON}


def test_the_oscillator_follows_its_closed_form():
    # RK4 at omega h = 0.001 is exact to round-off: the closed form is the oscillator's motion
    sim = oscillator()
    sim.simulate(10000, 1e-4, "rk4", record_every=10000)
    np.testing.assert_allclose(sim.positions, oscillator_positions(1.0), atol=1e-12)


@pytest.mark.parametrize("method,p", list(ORDERS), ids=lambda x: str(x))
def test_each_method_has_its_order_on_the_linear_oscillator(method, p):
    dts = 1.0 / np.array([800, 1600, 3200])  # omega h from 0.0125 down
    errors = global_error(oscillator, method, dts, 1.0, oscillator_positions(1.0),
                          **ORDERS[method, p])
    fitted = order(dts, errors)
    assert fitted == pytest.approx(p, abs=0.1) and fitted.asymptotic


@pytest.mark.parametrize("method,p", list(ORDERS), ids=lambda x: str(x))
def test_each_method_has_its_order_on_a_falling_cloth(method, p):
    mesh = msim.mesh.cloth_grid(4, 4)

    def make():
        return msim.System(mesh.vertices, mesh.edges, mass=0.04, stiffness=50.0, fixed=[0, 3])

    dts = 0.25 / np.array([200, 400, 800])
    reference = reference_positions(make, 0.25, 0.25 / 20000)
    errors = global_error(make, method, dts, 0.25, reference, **ORDERS[method, p])
    fitted = order(dts, errors)
    assert fitted == pytest.approx(p, abs=0.1) and fitted.asymptotic


@pytest.mark.parametrize("method,p", [("implicit_euler", 1), ("bdf2", 2), ("rk4", 4)])
def test_steps_in_the_asymptotic_range_give_the_order_and_say_so(method, p):
    dts = 1.0 / np.array([800, 1600, 3200])  # omega h = 0.0125 down to 0.003
    errors = global_error(oscillator, method, dts, 1.0, oscillator_positions(1.0),
                          **ORDERS[method, p])
    fitted = order(dts, errors)
    assert fitted == pytest.approx(p, abs=0.05) and fitted.asymptotic
    assert fitted.out_of_range == ()
    # the local slopes, between successive steps from the smallest up, agree with the fit
    assert len(fitted.local) == 2
    np.testing.assert_allclose(fitted.local, p, atol=0.05)


@pytest.mark.parametrize("method,p,steps", [("bdf2", 2, [20, 40, 80, 160]),
                                            ("rk4", 4, [10, 20, 40, 80])])
def test_steps_too_large_for_the_asymptotic_range_are_flagged(method, p, steps):
    # steps a student took (omega h from 0.5 or 1 down): BDF2's slope came out near 1.5 and
    # RK4's near 3.65, far from 2 and 4, because the largest steps are not yet in the range
    # where the error falls as C h^p
    dts = 1.0 / np.array(steps)
    errors = global_error(oscillator, method, dts, 1.0, oscillator_positions(1.0),
                          **ORDERS[method, p])
    with pytest.warns(OrderWarning, match=r"not in the asymptotic range.*smaller"):
        fitted = order(dts, errors)
    assert not fitted.asymptotic and abs(fitted - p) > 0.3
    # named: here the local slopes disagree already at the smallest steps (BDF2's 0.59,
    # 2.66, 2.52 from the smallest up; RK4's 3.66, 2.79, 4.80): none is known to be in range
    assert fitted.out_of_range == tuple(np.sort(dts)[::-1])
    # pre-asymptotic steps above asymptotic ones: the range ends where the slope bends,
    # C h^2 (1 + (h / 8 ms)^3): local slopes 2.00, 2.02, 2.15, 2.83 from 0.5 ms up
    h = np.array([0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3])
    with pytest.warns(OrderWarning, match=r"steps 0.008, 0.004 s: local slopes"):
        bent = order(h, h**2 * (1 + (h / 8e-3) ** 3))
    assert bent.out_of_range == (8e-3, 4e-3)
    # with steps sixteen times smaller the same method is in range
    small = dts / 16
    errors = global_error(oscillator, method, small, 1.0, oscillator_positions(1.0),
                          **ORDERS[method, p])
    assert order(small, errors).asymptotic


def test_order_flags_round_off_divergence_and_too_few_steps():
    dts = np.array([1e-3, 2e-3, 4e-3])
    with pytest.warns(OrderWarning, match=r"round-off"):
        assert not order(dts, [1e-17, 8e-16, 6.4e-14]).asymptotic
    with pytest.warns(OrderWarning, match=r"diverged"):
        fitted = order(dts, [1e-6, 4e-6, np.inf])
    assert fitted.out_of_range == (4e-3,) and fitted == pytest.approx(2.0)
    with pytest.warns(OrderWarning, match=r"three or more"):
        assert not order(dts[:2], [1e-6, 4e-6]).asymptotic
    with pytest.raises(ValueError, match=r"errors: expected 3 values, one per step, got 2"):
        order(dts, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"dts: expected distinct steps > 0"):
        order([1e-3, 1e-3, 2e-3], [1.0, 2.0, 3.0])


def test_a_step_that_does_not_divide_the_duration_is_refused():
    assert steps_for(1.0, 0.25) == 4
    with pytest.raises(ValueError, match="dt: expected a step that divides duration 1 s"):
        steps_for(1.0, 0.3)


@pytest.fixture(scope="module")
def falling():
    """A 12 x 12 cloth five exact steps into its fall, and g* of its next step."""
    mesh = msim.mesh.cloth_grid(12, 12)
    sim = msim.System(mesh.vertices, mesh.edges, mass=1 / 144, stiffness=1000.0, fixed=[0, 11])
    for _ in range(5):
        sim.step(1 / 30, "implicit_euler", iterations=50, tol=1e-8, line_search=True)
    return sim, exact_objective(sim, 1 / 30)


def test_solver_costs_are_the_errors_of_runs_stopped_at_each_cap(falling):
    sim, g_star = falling
    state = sim.get_state()
    fms = {"solver": "fms"}
    seconds, errors = solver_costs(sim, 1 / 30, fms, [1, 4, 16], g_star, repeats=1)
    # the run capped at k is the first k iterations of a longer run: its error is that run's
    history = sim.copy().step(1 / 30, "implicit_euler", iterations=16, **fms).objectives
    np.testing.assert_allclose(errors, relative_error(history, g_star)[[1, 4, 16]], rtol=1e-12)
    # FMS without colliders never raises g: the error falls with the cap
    assert np.all(np.diff(errors) < 0) and np.all(seconds > 0)
    # Newton with line search reaches g* (a minimiser to 1e-9 N) within ten iterations
    _, newton = solver_costs(sim, 1 / 30, {"solver": "newton", "line_search": True}, [10],
                             g_star, repeats=1)
    assert newton[0] < 1e-8
    np.testing.assert_array_equal(sim.positions, state["positions"])  # sim is not changed


def test_time_to_accuracy_is_none_where_the_cap_falls_short(falling):
    sim, g_star = falling
    # (FMS leaves 0.119, 0.090, 0.081 of the start's error after 1, 2, 3 iterations)
    reached = time_to_accuracy(sim, 1 / 30, {"solver": "fms"}, [0.085, 1e-12], 5, g_star,
                               repeats=1)
    seconds, iterations = reached[0]
    assert seconds > 0 and reached[1] is None
    # the iteration timed is the first whose error is at most the target in a plain run
    g = sim.copy().step(1 / 30, "implicit_euler", solver="fms", iterations=5).objectives
    assert iterations == np.flatnonzero(relative_error(g, g_star) <= 0.085)[0] > 1



def test_one_relative_error_in_g_for_every_module():
    # Liu et al. 2013, Fig. 2: (g_k - g*) / (g_0 - g*), the share of the first error left
    np.testing.assert_allclose(relative_error([3.0, 2.0, 1.5, 1.0], 1.0), [1, 0.5, 0.25, 0])
    assert msim.experiments.relative_error is relative_error
    with pytest.raises(ValueError, match=r"objectives: the start g_0 = 1 J is g\* already"):
        relative_error([1.0, 1.0], 1.0)


def test_solver_costs_measure_liu_2013s_relative_error(falling):
    # the start g_0 is the same for every cap: the error is the share of g_0 - g* left
    sim, g_star = falling
    _, errors = solver_costs(sim, 1 / 30, {"solver": "fms"}, [3], g_star, repeats=1)
    g = sim.copy().step(1 / 30, "implicit_euler", solver="fms", iterations=3).objectives
    assert errors[0] == pytest.approx((g[3] - g_star) / (g[0] - g_star), rel=1e-12)
