"""Every solver of g on every implicit integrator.

implicit_euler, implicit_midpoint and bdf2 each reduce a step to minimising
g(x) = |x - y|_M^2 / (2 h'^2) + E(x) for a target y and an effective step h'; Newton, FMS (Liu et
al. 2013), L-BFGS (Liu, Bouaziz and Kavan 2017) and Vertex Block Descent (Chen et al. 2024)
differ only in how they get to its minimiser. So driven to a tolerance on |grad g| they reach
the same positions, their histories start from the same g at the same start point, and the
descent methods never raise g.
"""

import numpy as np
import pytest

import msim
from builders import cloth

IMPLICIT = ["implicit_euler", "implicit_midpoint", "bdf2"]
SOLVERS = msim.METHODS["implicit_euler"]["solver"].kind
H = 1 / 30


def _swinging(n: int = 8, threads: int = 1) -> msim.System:
    """A pinned n x n cloth three implicit Euler steps into its fall (moving, springs strained,
    and a previous state of the same dt for BDF2)."""
    sim = cloth(n, stiffness=200.0)
    sim.threads = threads
    for _ in range(3):
        sim.step(H, "implicit_euler", iterations=20, tol=1e-10)
    return sim


def test_every_implicit_method_offers_the_same_four_solvers():
    for method in IMPLICIT:
        assert msim.METHODS[method]["solver"].kind == ("newton", "fms", "lbfgs", "vbd")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("method", IMPLICIT)
def test_each_solver_driven_to_tol_reaches_newtons_positions(method, solver):
    sim = _swinging()
    for _ in range(4):
        newton = sim.copy()  # the same state, and for bdf2 the same previous state
        info = sim.step(H, method, solver=solver, iterations=20000, tol=1e-8)
        reference = newton.step(H, method, iterations=50, tol=1e-11, line_search=True)
        assert info.converged and reference.converged
        # both start from the same point, where g and |grad g| do not depend on the solver
        assert info.objectives[0] == pytest.approx(reference.objectives[0], rel=1e-14)
        assert info.residuals[0] == pytest.approx(reference.residuals[0], rel=1e-12)
        assert info.residuals[-1] < 1e-8
        # the smallest curvature of g is about m / h'^2 >= 9 N/m: |grad g| < 1e-8 N puts
        # the iterate within ~1e-9 m of the minimiser; the bar is 1e-6 m
        np.testing.assert_allclose(sim.positions, newton.positions, rtol=0, atol=1e-6)
        np.testing.assert_allclose(sim.positions, newton.positions, rtol=0, atol=1e-8)
        np.testing.assert_allclose(sim.velocities, newton.velocities, rtol=0, atol=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("method", IMPLICIT)
def test_descent_solvers_never_raise_g(method, solver):
    sim = _swinging()
    options = {"line_search": True} if solver == "newton" else {}
    for _ in range(3):
        info = sim.step(H, method, solver=solver, iterations=30, **options)
        g = info.objectives
        assert len(g) == info.iterations + 1 == 31 or info.converged
        # each iteration lowers g, up to rounding of g itself
        assert np.all(np.diff(g) <= 1e-12 * np.abs(g[:-1])), np.diff(g).max()


@pytest.mark.parametrize("solver", SOLVERS)
def test_results_do_not_depend_on_the_thread_count(solver):
    # 40 x 40: several blocks of vertices and springs, so two threads really split the passes
    runs = []
    for threads in (1, 2, 3):
        sim = _swinging(40, threads)
        infos = [sim.step(H, "bdf2", solver=solver, iterations=8) for _ in range(2)]
        runs.append((sim.positions, [i.objectives for i in infos], [i.residuals for i in infos]))
    for positions, objectives, residuals in runs[1:]:
        np.testing.assert_array_equal(positions, runs[0][0])
        np.testing.assert_array_equal(objectives, runs[0][1])
        np.testing.assert_array_equal(residuals, runs[0][2])
