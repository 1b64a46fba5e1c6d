"""L-BFGS on the incremental potential g (Liu, Bouaziz and Kavan 2017) with FMS's matrix
(M + h'^2 L) / h'^2 as initial Hessian: solver="lbfgs" of implicit_euler, implicit_midpoint
and bdf2, against Newton's minimiser, SciPy's FMS step and an exact quadratic case."""

import numpy as np
import pytest

import msim
from msim.reference import fms as ref_fms

from builders import cloth

H = 1 / 30
METHODS = ["implicit_euler", "implicit_midpoint", "bdf2"]


def falling_cloth() -> msim.System:
    """A 10x10 cloth of 200 N/m springs, 0.01 kg vertices, pinned at two corners, starting
    its fall from rest."""
    return cloth(10, stiffness=200.0, damping=0.5)


def moving_cloth(n: int = 12) -> msim.System:
    """An n x n cloth of 500 N/m springs pinned at two corners, off its rest shape and moving."""
    return cloth(n, stiffness=500.0, jitter=0.02, speed=0.3, seed=3)


@pytest.mark.parametrize("method", METHODS)
def test_lbfgs_to_tol_reaches_newtons_minimiser_step_after_step(method):
    # near the minimiser the springs of a hanging cloth are stretched, so grad^2 g >= M / h'^2
    # (h' <= h) and |x - x*| <= |grad g| h^2 / m = 1e-8 N * 0.11 s^2/kg ~ 1e-9 m. A plain
    # Armijo test on g stalls at 3e-8 to 2e-7 N here (g's rounding), so tol = 1e-8 N also
    # needs the line search's rule below the rounding
    sim = falling_cloth()
    for _ in range(5):
        newton = sim.copy()
        expected = newton.step(H, method, max_iterations=50, tol=1e-10, line_search=True)
        assert expected.converged
        info = sim.step(H, method, solver="lbfgs", iterations=1000, tol=1e-8)
        assert info.converged and info.residuals[-1] < 1e-8
        np.testing.assert_allclose(sim.positions, newton.positions, rtol=0, atol=2e-9)


def test_lbfgs_reaches_newtons_minimiser_on_a_sphere():
    # the contact penalty kc/2 depth^2 is part of g, and H0 carries h^2 kc on the vertices
    # whose path touches the sphere; the minimiser is Newton's, no projection after it. Both
    # stop at |grad g| < 1e-9 N, each within ~1e-9 N * h^2 / m = 1.1e-10 m of it
    sim = cloth(10, stiffness=200.0, damping=0.5, fixed=[])
    sim.spheres = [[0.5, -0.15, 0.5, 0.2]]
    for _ in range(4):
        newton = sim.copy()
        assert newton.step(H, "implicit_euler", max_iterations=500, tol=1e-9).converged
        assert sim.step(H, "implicit_euler", solver="lbfgs", iterations=5000,
                        tol=1e-9).converged
        np.testing.assert_allclose(sim.positions, newton.positions, rtol=0, atol=2.5e-10)
    assert sim.energy()["collision"] > 0  # resting on it


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("window", [1, 5, 20])
def test_g_never_increases(method, window):
    # crumpled by 0.1 m, many springs start compressed: E is not convex there and the full
    # L-BFGS step raises g (by up to 1e-3 g relative here), so the line search has to act
    sim = cloth(12, stiffness=500.0, jitter=0.1, speed=0.3, seed=3)
    for _ in range(4):
        info = sim.step(H, method, solver="lbfgs", iterations=40, window=window)
        g = info.objectives
        assert len(g) == info.iterations + 1 and info.iterations >= 20
        assert np.all(np.diff(g) <= 0)
        assert g[-1] < g[0]


def test_first_iteration_is_one_fms_step():
    # with no curvature pairs the direction is -h^2 (M + h^2 L)^-1 grad g(x), and
    # x - h^2 A^-1 grad g(x) = A^-1 (M y + h^2 J d(x)): FMS's local-global step. It lowers g
    # by at least |slope| / 2 (FMS minimises a quadratic upper bound of g whose Hessian is
    # H0), so the Armijo test takes the full step
    sim = moving_cloth()
    p = ref_fms.step_problem(sim, H)
    x_fms, g_fms = ref_fms.FMSReference(p).solve(1)
    info = sim.step(H, "implicit_euler", solver="lbfgs", iterations=1, start="inertial")
    assert info.iterations == 1
    np.testing.assert_allclose(info.objectives, g_fms, rtol=1e-12)
    np.testing.assert_allclose(sim.positions, x_fms, rtol=0, atol=1e-12)


@pytest.mark.parametrize("start", ["inertial", "previous"])
def test_zero_rest_length_springs_converge_in_one_iteration(start):
    # springs of rest length 0 have energy k/2 |x_i - x_j|^2, so g is quadratic with Hessian
    # (M + h^2 L) / h^2 = H0: the first direction is Newton's step and lands on the minimiser,
    # which NumPy finds by one dense solve
    mesh = msim.mesh.cloth_grid(6, 6, size=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=50.0,
                      rest_lengths=np.zeros(len(mesh.edges)), fixed=[0, 5])
    sim.velocities = np.random.default_rng(1).standard_normal(sim.positions.shape)
    p = ref_fms.step_problem(sim, H)
    n, free = sim.n_vertices, p.free
    lap = np.zeros((n, n))
    for (i, j), k in zip(sim.edges, sim.stiffness):
        lap[[i, j], [i, j]] += k
        lap[i, j] -= k
        lap[j, i] -= k
    a = np.diag(sim.mass) / H**2 + lap
    b = sim.mass[:, None] * p.y / H**2 - lap[:, ~free] @ sim.positions[~free]
    x = sim.positions.copy()
    x[free] = np.linalg.solve(a[np.ix_(free, free)], b[free])
    info = sim.step(H, "implicit_euler", solver="lbfgs", iterations=50, tol=1e-9, window=20,
                    start=start)
    assert info.iterations == 1 and info.converged
    np.testing.assert_allclose(sim.positions, x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_threads_do_not_change_a_bit(method):
    # 40 x 40: seven vertex blocks and five spring blocks to share between threads
    results = []
    for threads in (1, 2):
        sim = cloth(40, stiffness=500.0, jitter=0.01, speed=0.2, seed=5)
        sim.threads = threads
        infos = [sim.step(H, method, solver="lbfgs", iterations=15) for _ in range(3)]
        results.append((sim.positions, sim.velocities,
                        np.concatenate([i.objectives for i in infos]),
                        np.concatenate([i.residuals for i in infos])))
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)


def test_bad_options_name_the_option():
    sim = moving_cloth(4)
    with pytest.raises(ValueError, match="window"):
        sim.step(H, "implicit_euler", solver="lbfgs", window=0)
    with pytest.raises(ValueError, match="window"):
        sim.step(H, "bdf2", solver="lbfgs", window=1000)
    with pytest.raises(ValueError, match="solver"):
        sim.step(H, "implicit_midpoint", solver="l-bfgs")
    with pytest.raises(ValueError, match="iterations"):
        sim.step(H, "implicit_euler", solver="lbfgs", iterations=0)
