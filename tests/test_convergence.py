"""Liu 2013, Fig. 2 at small size: relative error in g against iterations on a 21x21 curtain
(the notebook notebooks/03_fms_convergence.ipynb runs the 81x81 one with the same code)."""

import numpy as np
import pytest

from msim.reference import fms as ref_fms
from msim.experiments import fms_convergence, gust_curtain

H = 1 / 30
ITERATIONS = 200


@pytest.fixture(scope="module")
def errors() -> dict[str, np.ndarray]:
    sim = gust_curtain(21)
    problem = ref_fms.step_problem(sim, H)
    tol = 1e-10 * np.linalg.norm(problem.gradient(problem.y))
    # g* from msim's own Newton (exact Hessian, line search), independent of the SciPy Newton
    # whose history is checked below
    g_star = sim.copy().step(H, "implicit_euler", spd="none", line_search=True, tol=1e-10,
                             max_iterations=50).objectives[-1]
    runs = {
        "fms": {"method": "fms"},
        "chebyshev": {"method": "fms", "acceleration": "chebyshev"},
        "anderson": {"method": "fms", "acceleration": "anderson"},
        "newton": lambda s, dt, k: ref_fms.newton(ref_fms.step_problem(s, dt), tol=tol)[1],
    }
    return fms_convergence(sim, H, ITERATIONS, runs, g_star=g_star)


def test_plain_fms_decreases_g_monotonically_towards_newtons_minimum(errors):
    e = errors["fms"]
    assert e[0] == 1.0 and len(e) == ITERATIONS + 1
    assert np.all(np.diff(e) <= 1e-12)
    # g(x*) is the minimum: no iterate goes below it (beyond round-off)
    assert e.min() > -1e-9
    # a block coordinate descent converges linearly: well below 1e-5 after 200 iterations
    assert e[ITERATIONS] < 1e-5


def test_anderson_keeps_monotone_decrease_thanks_to_its_safeguard(errors):
    assert np.all(np.diff(errors["anderson"]) <= 1e-12)


@pytest.mark.parametrize("accelerated", ["chebyshev", "anderson"])
def test_acceleration_beats_plain_fms_in_iterations_to_an_accuracy_and_at_equal_count(
        errors, accelerated):
    def first_below(e: np.ndarray, level: float) -> int:
        return int(np.argmax(e < level)) if np.any(e < level) else len(e)

    for level in (1e-5, 1e-6):
        assert first_below(errors[accelerated], level) < first_below(errors["fms"], level)
    assert errors[accelerated][ITERATIONS] < 0.1 * errors["fms"][ITERATIONS]


def test_newton_converges_quadratically_in_a_few_iterations(errors):
    e = errors["newton"]
    # the SciPy Newton ends on msim's minimum (an independent solver) to round-off in g
    assert len(e) <= 8 and abs(e[-1]) < 1e-14
    # quadratic: once close, each error is below the previous one to the power 1.5 (linear
    # convergence, as plain FMS shows, would not be)
    for k in (1, 2):
        assert 0 <= e[k + 1] <= e[k] ** 1.5, (k, e[: k + 2])
    # one Newton iteration beats one FMS iteration, ten FMS iterations beat it (as in the paper)
    assert errors["fms"][10] < e[1] < errors["fms"][1]
