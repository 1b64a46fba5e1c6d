"""Implicit Euler (Newton) and linearised implicit Euler against closed forms and SciPy."""

from __future__ import annotations

import numpy as np
import pytest

import msim
from msim.reference import implicit as ref_implicit
from msim.reference import core as ref
from msim.methods import SPD

from builders import cloth, oscillator


def _model(sim: msim.System) -> dict:
    """The reference functions' model arguments, read back from a System."""
    return {"mass": sim.mass, "edges": sim.edges, "k": sim.stiffness, "rest": sim.rest_lengths,
            "fixed": sim.fixed}


def _cloth(k: float = 100.0, damping: float = 0.0) -> msim.System:
    """An 8x8 cloth pinned at two corners, perturbed off its rest shape and moving."""
    return cloth(8, stiffness=k, damping=damping, jitter=0.01, speed=0.1, seed=1)


def _state(sim: msim.System) -> tuple:
    return sim.positions, sim.velocities, sim.time, sim.steps


def test_newton_to_tol_solves_the_implicit_euler_equation():
    sim = _cloth(damping=0.5)
    h = 1 / 30
    x0, v0 = sim.positions, sim.velocities
    info = sim.step(h, "implicit_euler", max_iterations=30, tol=1e-9, line_search=True)
    # M (x - y) / h^2 + grad E(x) = 0 with y from x_t, the damped v and gravity
    y = ref.inertial_target(x0, np.exp(-0.5 * h) * v0, h, sim.gravity,
                            ref.fixed_mask(sim.n_vertices, sim.fixed))
    grad = ref.objective_grad(sim.positions, y, h, **_model(sim))
    assert info.converged and 1 < info.iterations < 30
    assert np.linalg.norm(grad) < 1e-9
    assert info.residuals[-1] == pytest.approx(np.linalg.norm(grad), abs=1e-12)
    np.testing.assert_allclose(sim.velocities, (sim.positions - x0) / h, atol=1e-12)


@pytest.mark.parametrize("spd, clamp", [("clamp", True), ("project", True), ("none", False)])
def test_one_newton_iteration_matches_a_scipy_solve_of_the_reference_hessian(spd, clamp):
    sim = _cloth()
    h = 0.01  # small enough for the exact Hessian to be positive definite (spd="none")
    x0, v0 = sim.positions, sim.velocities
    # the course's Newton iteration: from y, the full step
    info = sim.step(h, "implicit_euler", spd=spd, start="inertial", line_search=False)
    x1, v1 = ref_implicit.implicit_euler(x0, v0, h, gravity=sim.gravity, clamp=clamp,
                                         **_model(sim))
    np.testing.assert_allclose(sim.positions, x1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, v1, rtol=0, atol=1e-10)
    # history: the start point y, then one Newton iteration; no tol was asked for
    y = ref.inertial_target(x0, v0, h, sim.gravity, ref.fixed_mask(sim.n_vertices, sim.fixed))
    g = [ref.objective(x, y, h, **_model(sim)) for x in (y, x1)]
    np.testing.assert_allclose(info.objectives, g, rtol=1e-12)
    assert info.iterations == 1 and not info.converged
    assert info.timings["factor"] > 0


def test_shift_adds_eps_times_identity_to_the_newton_matrix():
    sim = _cloth()
    h, eps = 0.01, 50.0
    x0, v0 = sim.positions, sim.velocities
    sim.step(h, "implicit_euler", spd="shift", shift=eps, start="inertial", line_search=False)
    y = ref.inertial_target(x0, v0, h, sim.gravity, ref.fixed_mask(sim.n_vertices, sim.fixed))
    hess, grad = ref_implicit.newton_system(y, y, h, clamp=False, **_model(sim))
    step = np.linalg.solve(hess.toarray() + eps * np.eye(len(grad)), -grad)
    expect = y.ravel().copy()
    expect[ref_implicit.free_dofs(sim.n_vertices, sim.fixed)] += step
    np.testing.assert_allclose(sim.positions.ravel(), expect, rtol=0, atol=1e-12)


def test_line_search_never_increases_g():
    sim = _cloth(k=1e4)
    info = sim.step(0.1, "implicit_euler", max_iterations=20, line_search=True)
    assert np.all(np.diff(info.objectives) <= 1e-12 * abs(info.objectives[0]))
    assert info.residuals[-1] < 1e-5 * info.residuals[0]


def test_oscillator_energy_norm_shrinks_by_one_over_sqrt_one_plus_omega_h_squared():
    k, m, h = 100.0, 1.0, 0.1
    omega = np.sqrt(k / m)
    sim = oscillator(k, m, 0.3)
    for _ in range(12):  # u = x - 1 keeps ~14 digits while the amplitude is above 1e-2
        before = np.hypot(omega * (sim.positions[1, 0] - 1.0), sim.velocities[1, 0])
        sim.step(h, "implicit_euler")
        x, vel = sim.positions[1], sim.velocities[1]
        assert x[1] == x[2] == vel[1] == vel[2] == 0.0
        after = np.hypot(omega * (x[0] - 1.0), vel[0])
        assert after / before == pytest.approx(1 / np.sqrt(1 + (omega * h) ** 2), rel=1e-10)


def test_spring_hessian_matches_central_differences_of_the_gradient():
    # each spring as its own pair (d_s, 0) so one perturbation probes every spring at once
    rng = np.random.default_rng(3)
    m = 50
    d = rng.standard_normal((m, 3))
    rest = np.linalg.norm(d, axis=1) * rng.uniform(0.5, 1.5, m)  # compressed and stretched
    k = rng.uniform(10, 100, m)
    x = np.zeros((2 * m, 3))
    x[0::2] = d
    edges = np.stack([np.arange(0, 2 * m, 2), np.arange(1, 2 * m, 2)], axis=1)
    sim = msim.System(x, edges, stiffness=k, rest_lengths=rest)
    eps = 1e-6
    fd = np.empty((m, 3, 3))
    for t in range(3):
        dx = np.zeros_like(x)
        dx[0::2, t] = eps
        grad = [-ref.spring_forces(x + s * dx, edges, k, rest)[0::2] for s in (1, -1)]
        fd[:, :, t] = (grad[0] - grad[1]) / (2 * eps)
    exact = sim._hessian_blocks(SPD.index("none"))
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-6 * k.max())
    np.testing.assert_array_equal(sim._hessian_blocks(SPD.index("shift")), exact)
    # clamp drops the negative lateral part; projection clips the eigenvalues at 0
    clamped = ref.spring_hessian_blocks(x, edges, k, rest, clamp=True)
    np.testing.assert_allclose(sim._hessian_blocks(SPD.index("clamp")), clamped, atol=1e-12)
    w, q = np.linalg.eigh(exact)
    projected = np.einsum("sij,sj,skj->sik", q, np.maximum(w, 0), q)
    assert (w < -1e-9).any()
    np.testing.assert_allclose(sim._hessian_blocks(SPD.index("project")), projected, atol=1e-9)


def test_hanging_chain_settles_where_each_spring_carries_the_mass_below():
    n, spacing, mass, k, g = 6, 0.1, 0.05, 50.0, 9.81
    vertices = np.zeros((n, 3))
    vertices[:, 1] = -spacing * np.arange(n)
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    sim = msim.System(vertices, edges, mass=mass, stiffness=k, fixed=[0],
                      gravity=(0, -g, 0), damping=1.0)
    for _ in range(3):
        info = sim.step(10.0, "implicit_euler", max_iterations=50, tol=1e-10, line_search=True)
        assert info.converged
    stretch = -np.diff(sim.positions[:, 1]) - spacing
    below = np.arange(n - 1, 0, -1)
    np.testing.assert_allclose(stretch, below * mass * g / k, rtol=0, atol=1e-9)


def test_stiff_cloth_energy_never_rises_above_the_start():
    # structural and shear springs only: bending springs triple the factor's cost
    mesh = msim.mesh.cloth_grid(30, 30, size=1.0, bending=False)
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1e4, fixed=[0, 29])
    traj = sim.simulate(300, 1 / 30, "implicit_euler")
    total = traj.energies["total"]
    assert np.all(np.isfinite(traj.positions))
    assert total.max() <= total[0] + 1e-9 * abs(total[0])
    assert total[-1] < total[0] - 0.1 * abs(total[0])  # it fell and lost energy


@pytest.mark.parametrize("method, options", [
    ("implicit_euler", {}),
    ("linearized_implicit", {"solver": "direct"}),
    ("linearized_implicit", {"solver": "cg"}),
    ("linearized_implicit", {"solver": "jacobi"}),
])
def test_indefinite_system_raises_with_a_column_and_keeps_the_state(method, options):
    # one free vertex at a tenth of its rest length: lateral stiffness k (1 - 10) = -9 k
    sim = msim.System([[0, 0, 0], [0.1, 0, 0]], [[0, 1]], mass=0.01, stiffness=100.0,
                      rest_lengths=[1.0], fixed=[0], gravity=(0, 0, 0))
    sim.velocities = [[0, 0, 0], [1e-3, 2e-3, 3e-3]]
    before = _state(sim)
    with pytest.raises(msim.NotPositiveDefiniteError) as err:
        sim.step(1.0, method, spd="none", **options)
    assert err.value.column // 3 == 1  # the free vertex
    # along the spring (axis 0) the stiffness is k > 0; across it k (1 - 10) < 0
    assert err.value.vertex == 1 and err.value.axis in (1, 2)
    assert f"at vertex 1, axis {err.value.axis}" in str(err.value)
    for a, b in zip(before, _state(sim)):
        np.testing.assert_array_equal(a, b)
    sim.step(1.0, method, **options)  # the default clamp makes it definite
    # and the clamped step is the reference's (SciPy, the same clamp)
    step = (ref_implicit.implicit_euler if method == "implicit_euler"
            else ref_implicit.linearized_implicit)
    x1, _ = step(*before[:2], 1.0, gravity=sim.gravity, **_model(sim))
    np.testing.assert_allclose(sim.positions, x1, atol=1e-12)


@pytest.mark.parametrize("method", ["implicit_euler", "linearized_implicit"])
def test_fixed_vertices_stay_bitwise_and_a_new_fixed_set_rebuilds_the_factor(method):
    sim = _cloth()
    h = 1 / 30
    for fixed in ([0, 7], [0, 7, 63], [3]):
        sim.fixed = fixed
        pinned = sim.positions[fixed] + 0.01  # scripted motion between steps
        x = sim.positions
        x[fixed] = pinned
        sim.positions = x
        x0, v0 = sim.positions, sim.velocities
        sim.step(h, method, **({"start": "inertial", "line_search": False}
                                if method == "implicit_euler" else {"solver": "direct"}))
        np.testing.assert_array_equal(sim.positions[fixed], pinned)
        np.testing.assert_array_equal(sim.velocities[fixed], 0.0)
        step = (ref_implicit.implicit_euler if method == "implicit_euler"
                else ref_implicit.linearized_implicit)
        x1, _ = step(x0, v0, h, gravity=sim.gravity, **_model(sim))
        np.testing.assert_allclose(sim.positions, x1, rtol=0, atol=1e-12)


def test_linearized_solvers_agree_with_each_other_and_scipy():
    # soft enough (h^2 k / m = 0.1) for Jacobi to converge
    sim = _cloth(k=10.0, damping=0.3)
    h = 0.01
    x0, v0 = sim.positions, sim.velocities
    x1, v1 = ref_implicit.linearized_implicit(x0, np.exp(-0.3 * h) * v0, h, gravity=sim.gravity,
                                              **_model(sim))
    for solver in ("direct", "cg", "jacobi"):
        run = sim.copy()
        info = run.step(h, "linearized_implicit", solver=solver, tol=1e-14, max_iterations=500)
        assert info.converged and info.residuals[-1] <= (1e-14 if solver != "direct" else 1e-12)
        np.testing.assert_allclose(run.positions, x1, rtol=0, atol=1e-14)
        np.testing.assert_allclose(run.velocities, v1, rtol=0, atol=1e-12)


def test_cg_minimises_the_quadratic_model_and_agrees_with_direct_on_a_stiff_cloth():
    sim = _cloth(k=1e4)
    direct, cg = sim.copy(), sim.copy()
    exact = direct.step(1 / 30, "linearized_implicit", solver="direct")
    info = cg.step(1 / 30, "linearized_implicit", solver="cg", tol=1e-12, max_iterations=2000)
    assert info.converged
    # CG lowers dv.A dv / 2 - b.dv every iteration (up to rounding)
    assert np.all(np.diff(info.objectives) <= 1e-14 * abs(info.objectives[-1]))
    assert info.objectives[-1] == pytest.approx(exact.objectives[-1], rel=1e-12)
    np.testing.assert_allclose(cg.positions, direct.positions, rtol=0, atol=1e-12)


def test_jacobi_slows_down_as_h_squared_k_over_m_grows_while_cg_does_not_care():
    # with positive semidefinite spring blocks 2D - A is positive definite, so block Jacobi
    # converges, but its contraction tends to 1 as h^2 k / m grows
    counts = []
    for k in (1.0, 10.0, 1e4):  # h^2 k / m = 0.1, 1, 1000
        info = _cloth(k=k).step(0.01 * np.sqrt(10), "linearized_implicit", solver="jacobi",
                                tol=1e-6, max_iterations=500)
        counts.append(info.iterations)
    assert counts[0] < counts[1] < 100 and counts[2] == 500
    cg = _cloth(k=1e4).step(0.01 * np.sqrt(10), "linearized_implicit", solver="cg", tol=1e-6)
    assert cg.converged and cg.iterations < 100


@pytest.mark.parametrize("solver", ["cg", "jacobi"])
def test_an_iterative_solve_that_reaches_an_exact_solution_stops_there(solver):
    # one free vertex on a spring to a fixed one: the block-Jacobi preconditioner is A's
    # inverse, so the first iteration solves it exactly (residual 0) and, with tol=0, CG's
    # next direction would be 0 with curvature 0: not an indefinite matrix
    sim = msim.System([[0, 0, 0], [1.2, 0, 0]], [[0, 1]], fixed=[0], gravity=(0, 0, 0),
                      rest_lengths=[1.0])
    sim.velocities = [[0, 0, 0], [0.5, 0, 0]]
    info = sim.step(0.01, "linearized_implicit", solver=solver, tol=0, max_iterations=5)
    assert info.iterations == 1 and info.converged and info.residuals[-1] == 0.0
    reference = msim.System([[0, 0, 0], [1.2, 0, 0]], [[0, 1]], fixed=[0], gravity=(0, 0, 0),
                            rest_lengths=[1.0])
    reference.velocities = [[0, 0, 0], [0.5, 0, 0]]
    reference.step(0.01, "linearized_implicit", solver="direct")
    np.testing.assert_allclose(sim.positions, reference.positions, rtol=0, atol=1e-15)
