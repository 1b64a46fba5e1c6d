"""solver="vbd": vertex block descent (Chen et al. 2024) on the implicit methods' g."""

from __future__ import annotations

import numpy as np
import pytest

import msim
from msim.reference import core as ref
from msim.reference import vbd as ref_vbd

from builders import cloth, fall

IMPLICIT = ["implicit_euler", "implicit_midpoint", "bdf2"]
H = 1 / 30


def _moving_cloth(n: int = 8, k: float = 100.0) -> msim.System:
    """An n x n cloth pinned at two corners, perturbed off its rest shape and moving."""
    return cloth(n, stiffness=k, jitter=0.01, speed=0.1, seed=1)


def _model(sim: msim.System) -> dict:
    return {"mass": sim.mass, "edges": sim.edges, "k": sim.stiffness, "rest": sim.rest_lengths}


@pytest.mark.parametrize("method", IMPLICIT)
def test_vbd_to_tol_reaches_newtons_minimiser(method):
    # both minimise the same strictly convex-near-the-solution g each step: |grad g| < 1e-9 N
    # with the inertia term's curvature m/hs^2 >= 9 N/m puts each within ~1e-10 m of it
    newton, vbd = _moving_cloth(), _moving_cloth()
    for _ in range(3):
        exact = newton.step(H, method, line_search=True, tol=1e-10, iterations=100)
        info = vbd.step(H, method, solver="vbd", tol=1e-9, iterations=10000)
        assert exact.converged and info.converged and info.iterations > 1
        assert info.residuals[-1] < 1e-9
        np.testing.assert_allclose(vbd.positions, newton.positions, rtol=0, atol=1e-6)
        np.testing.assert_allclose(vbd.velocities, newton.velocities, rtol=0, atol=1e-4)


@pytest.mark.parametrize("method", IMPLICIT)
def test_chebyshev_vbd_to_tol_reaches_newtons_minimiser_in_fewer_sweeps(method):
    newton, plain, fast = _moving_cloth(), _moving_cloth(), _moving_cloth()
    newton.step(H, method, line_search=True, tol=1e-10, iterations=100)
    slow = plain.step(H, method, solver="vbd", tol=1e-9, iterations=10000)
    info = fast.step(H, method, solver="vbd", tol=1e-9, iterations=10000,
                     acceleration="chebyshev", rho=0.9)
    assert info.converged and info.iterations < slow.iterations
    np.testing.assert_allclose(fast.positions, newton.positions, rtol=0, atol=1e-6)


def test_plain_vbd_never_increases_g_on_a_stiff_cloth():
    # every accepted vertex move lowers G_i, and g changes by exactly that change
    sim = _moving_cloth(k=1e4)
    info = sim.step(0.1, "implicit_euler", solver="vbd", iterations=200)
    assert np.all(np.diff(info.objectives) <= 1e-12 * abs(info.objectives[0]))
    assert info.objectives[-1] < 0.5 * info.objectives[0]


@pytest.mark.parametrize("method", IMPLICIT)
def test_plain_vbd_never_increases_g_with_contact(method):
    # a cloth falls onto a sphere and the ground: the penalty kc/2 phi^2 is part of G_i
    mesh = msim.mesh.cloth_grid(8, 8, size=1.0, origin=(-0.5, 0.3, -0.5))
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0,
                      planes=[[0, 1, 0, 0]], spheres=[[0, 0, 0, 0.25]])
    touched = False
    for _ in range(40):
        info = sim.step(1 / 60, method, solver="vbd", iterations=30)
        assert np.all(np.diff(info.objectives) <= 1e-12 * np.abs(info.objectives).max())
        touched = touched or sim.energy()["collision"] > 0
    assert touched
    assert np.linalg.norm(sim.positions, axis=1).min() > 0.25  # never inside the sphere


def test_one_sweep_is_a_colour_by_colour_sweep_of_a_valid_greedy_colouring():
    # in a parallel sweep each vertex reads the positions left by the previous colours; if two
    # vertices of one colour shared a spring, one would see the other's move and the sweep
    # would differ from this reference
    sim = _moving_cloth()
    color = ref_vbd.greedy_colors(sim.n_vertices, sim.edges)
    assert np.all(color[sim.edges[:, 0]] != color[sim.edges[:, 1]])
    fixed = ref.fixed_mask(sim.n_vertices, sim.fixed)
    y = ref.inertial_target(sim.positions, sim.velocities, H, sim.gravity, fixed)
    expect = ref_vbd.sweep(y, y, H, fixed=fixed, color=color, **_model(sim))
    sim.step(H, "implicit_euler", solver="vbd", iterations=1, start="inertial")
    np.testing.assert_allclose(sim.positions, expect, rtol=0, atol=1e-13)


@pytest.mark.parametrize("options", [{}, {"acceleration": "chebyshev", "rho": 0.9}])
def test_results_do_not_depend_on_the_thread_count(options):
    base = cloth(40, stiffness=1000.0, jitter=0.01, speed=0.1, seed=2)
    color = ref_vbd.greedy_colors(base.n_vertices, base.edges)
    assert np.bincount(color).min() > 2 * 64  # several parallel blocks in every colour
    runs = {}
    for threads in (1, 2, 3):
        sim = base.copy()
        sim.threads = threads
        infos = [sim.step(H, method, solver="vbd", iterations=15, **options) for method in IMPLICIT]
        runs[threads] = [sim.positions, sim.velocities] + [
            a for info in infos for a in (info.residuals, info.objectives)]
    for threads in (2, 3):
        for a, b in zip(runs[1], runs[threads]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", IMPLICIT)
def test_without_springs_one_sweep_is_exact(method):
    # G_i is then the quadratic m_i/(2 hs^2) |x_i - y_i|^2: one Newton step reaches y_i, the
    # closed-form fall of every scheme; started from x_t the sweep has work to do
    x0 = np.array([[0.0, 1.0, 0.0], [1.0, 2.0, 0.5]])
    v0 = np.array([[0.3, 0.0, -0.2], [0.0, 1.0, 0.0]])
    sim = msim.System(x0, np.zeros((0, 2), int), mass=0.5)
    sim.velocities = v0
    for _ in range(4):
        info = sim.step(H, method, solver="vbd", start="previous", tol=1e-9, iterations=50)
        assert info.iterations == 1 and info.converged
    c = fall(method, 4)
    np.testing.assert_allclose(sim.positions, x0 + 4 * H * v0 + c * H**2 * sim.gravity,
                               rtol=0, atol=1e-12)


def test_chebyshev_extrapolates_the_second_sweep_from_the_start_point():
    # Alg. 1: omega_1 = 1 leaves sweep 1 alone, so after two sweeps
    # x = omega_2 (x_plain2 - x_0) + x_0 with omega_2 = 2/(2 - rho^2), x_0 = y; rho = 0 is plain
    rho = 0.8
    sim = _moving_cloth()
    plain = sim.copy()
    plain.step(H, "implicit_euler", solver="vbd", iterations=2, start="inertial")
    fixed = ref.fixed_mask(sim.n_vertices, sim.fixed)
    y = ref.inertial_target(sim.positions, sim.velocities, H, sim.gravity, fixed)
    still = sim.copy()
    still.step(H, "implicit_euler", solver="vbd", iterations=2, acceleration="chebyshev", rho=0.0,
               start="inertial")
    np.testing.assert_array_equal(still.positions, plain.positions)
    sim.step(H, "implicit_euler", solver="vbd", iterations=2, acceleration="chebyshev", rho=rho,
             start="inertial")
    omega = 2 / (2 - rho**2)
    np.testing.assert_allclose(sim.positions, omega * (plain.positions - y) + y, rtol=0,
                               atol=1e-13)


@pytest.mark.parametrize("options, match", [
    ({"acceleration": "anderson"}, "acceleration: solver 'vbd' does not take acceleration='anderson'"),
    ({"rho": 1.0}, "rho: expected a real number in"),
    ({"iterations": 0}, "iterations: expected an integer in"),
    ({"solver": "vdb"}, "solver: expected one of"),
])
def test_bad_options_name_the_option(options, match):
    sim = _moving_cloth()
    with pytest.raises(ValueError, match=match):
        sim.step(H, "implicit_euler", **{"solver": "vbd", **options})
    assert sim.steps == 0


def test_default_cap_is_ten_sweeps():
    info = _moving_cloth().step(H, "bdf2", solver="vbd")
    assert info.iterations == 10 and len(info.objectives) == 11 and not info.converged
