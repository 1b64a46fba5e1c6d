"""Liu et al. 2013, Fig. 2 and 3, on the swinging curtain of msim.experiments.

Fig. 2 runs on the 41 x 41 curtain with the stiffness scaled with resolution (600 N/m; the
notebook notebooks/03_fms_convergence.ipynb runs the paper's 81 x 81 one with the same code),
Fig. 3's stiffness sweep on the 21 x 21 curtain of the paper.
"""

import numpy as np
import pytest

from msim.experiments import (PAPER_FMS, PAPER_FRAME, PAPER_NEWTON_ONE, PAPER_START,
                              curtain_springs, exact_objective, fms_convergence, frame_errors,
                              geometric_mean, swinging_curtain)
from msim.reference import fms as ref_fms

H = 1 / 30
ITERATIONS = 200


@pytest.fixture(scope="module")
def curtain():
    return swinging_curtain(41)  # 600 N/m, frame 12


@pytest.fixture(scope="module")
def g_star(curtain) -> float:
    return exact_objective(curtain, H)


@pytest.fixture(scope="module")
def errors(curtain, g_star) -> dict[str, np.ndarray]:
    runs = {
        "fms": {"method": "fms", "start": PAPER_START},
        "chebyshev": {"method": "fms", "start": PAPER_START, "acceleration": "chebyshev"},
        "anderson": {"method": "fms", "start": PAPER_START, "acceleration": "anderson"},
        "newton": {"method": "implicit_euler", "start": PAPER_START},
        # the independent SciPy Newton (exact Hessian, SuperLU, line search) from x_t
        "scipy newton": lambda s, dt, k: ref_fms.newton(ref_fms.step_problem(s, dt), tol=1e-9,
                                                        start=s.positions)[1],
    }
    return fms_convergence(curtain, H, ITERATIONS, runs, g_star)


def test_the_curtain_has_the_papers_springs():
    # 6561 vertices and 32,158 springs: structural, bending and one shear diagonal
    assert len(curtain_springs(81)) == 32158


@pytest.mark.parametrize("k", [1, 10, 100])
def test_fms_from_the_previous_positions_reaches_the_papers_levels(errors, k):
    assert PAPER_FMS[k] / 3 < errors["fms"][k] < 3 * PAPER_FMS[k], errors["fms"][[1, 10, 100]]


def test_ten_fms_iterations_beat_one_newton_iteration_which_beats_one_fms_iteration(errors):
    # the paper: 0.196 < 0.2496 < 0.361
    newton = errors["newton"][1]
    assert errors["fms"][10] < newton < errors["fms"][1], (newton, PAPER_NEWTON_ONE)
    assert errors["scipy newton"][1] == pytest.approx(newton, rel=1e-6)


def test_the_start_moves_the_level_by_orders_of_magnitude(curtain, g_star):
    # from y the first iteration removes nearly all of g(x_0) - g*, from x_t a sixth of it
    e = {s: fms_convergence(curtain, H, 10, {s: {"method": "fms", "start": s}}, g_star)[s]
         for s in ("inertial", "previous")}
    assert e["inertial"][1] < 0.05 < 0.5 < e["previous"][1]
    assert e["inertial"][10] < 0.1 * e["previous"][10]


def test_plain_fms_decreases_g_monotonically_towards_newtons_minimum(errors):
    e = errors["fms"]
    assert e[0] == 1.0 and len(e) == ITERATIONS + 1
    assert np.all(np.diff(e) <= 1e-12)
    # g(x*) is the minimum: no iterate goes below it (beyond round-off)
    assert e.min() > -1e-9
    # it keeps converging (linearly: 100 more iterations divide the error by about 3 here)
    assert e[200] < 0.5 * e[100]


def test_the_scipy_newton_ends_on_msims_minimum_in_a_handful_of_iterations(errors):
    # an independent solver lands on msim's g* to round-off within 10 iterations, where plain
    # FMS is still above 1e-3 after 200
    e = errors["scipy newton"]
    assert len(e) <= 11 and abs(e[-1]) < 1e-12, e
    assert errors["fms"][ITERATIONS] > 1e-3


def test_anderson_keeps_monotone_decrease_thanks_to_its_safeguard(errors):
    assert np.all(np.diff(errors["anderson"]) <= 1e-12)


@pytest.mark.parametrize("accelerated", ["chebyshev", "anderson"])
def test_acceleration_beats_plain_fms(errors, accelerated):
    for k in (100, ITERATIONS):
        assert errors[accelerated][k] < 0.1 * errors["fms"][k]


def test_higher_stiffness_leads_to_slower_convergence():
    # Fig. 3: 21 x 21 curtain, 300-2400 N/m, geometric mean over frames 1-30 (every third here)
    mean = {k: geometric_mean(frame_errors(swinging_curtain(21, stiffness=k, frame=0),
                                           range(1, 31, 3), 100)[PAPER_START])
            for k in (300.0, 600.0, 1200.0, 2400.0)}
    for iterations in (10, 100):
        levels = [mean[k][iterations] for k in sorted(mean)]
        assert np.all(np.diff(levels) > 0), (iterations, levels)
    # doubling k from 300 to 2400 N/m three times costs more than a decade after 100 iterations
    assert mean[2400.0][100] > 10 * mean[300.0][100]


def test_the_frame_is_mid_swing():
    # frame 12 is where the kinetic energy of the swing peaks
    sim = swinging_curtain(21, frame=PAPER_FRAME - 1)
    energies = []
    for _ in range(3):
        energies.append(sim.energy()["kinetic"])
        sim.step(H, "implicit_euler", line_search=True, tol=1e-7, max_iterations=200)
    assert energies[1] > max(energies[0], energies[2])


def test_a_run_that_names_its_own_cap_keeps_it(curtain, g_star, errors):
    # one Newton iteration, capped by Newton's old option name as notebook 03 writes it
    run = {"method": "implicit_euler", "start": PAPER_START, "max_iterations": 1}
    e = fms_convergence(curtain, H, ITERATIONS, {"newton": run}, g_star)["newton"]
    np.testing.assert_allclose(e, errors["newton"][:2], rtol=1e-12)
