"""XPBD (Macklin 2016) against closed forms: hanging-chain support force, rigid limit, free
fall, and stiffness independent of the iteration count."""

import math

import numpy as np
import pytest

import msim

N, MASS, K, G = 10, 0.1, 2000.0, 9.81


def hanging_chain(iterations: int, substeps: int = 1) -> msim.System:
    """A vertical chain pinned at its top, settled by damping under XPBD."""
    mesh = msim.mesh.rope(N, length=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=MASS, stiffness=K, fixed=[0],
                      gravity=(0, -G, 0), damping=5.0)
    for _ in range(600):
        sim.step(1 / 60, "xpbd", iterations=iterations, substeps=substeps)
    return sim


@pytest.mark.parametrize("iterations", [50, 500])
def test_support_force_of_a_hanging_chain_equals_its_weight(iterations):
    sim = hanging_chain(iterations)
    # spring force on the pinned vertex is the support, minus its own weight from forces()
    support = sim.forces()[0] - np.array([0, -G * MASS, 0])
    weight = (N - 1) * MASS * G
    assert support[1] == pytest.approx(-weight, rel=0.03)
    assert np.allclose(sim.velocities, 0, atol=1e-3)
    # settled, the XPBD fixed point is static equilibrium (lambda / h^2 = k C): spring i carries
    # the weight of the N - 1 - i vertices below it; a finite sweep count leaves a small error
    tol = 1e-4 if iterations < 100 else 1e-10
    x = sim.positions
    stretch = np.linalg.norm(np.diff(x, axis=0), axis=1) - 1 / (N - 1)
    np.testing.assert_allclose(stretch, (N - 1 - np.arange(N - 1)) * MASS * G / K, rtol=tol)
    assert support[1] == pytest.approx(-weight, rel=tol)
    np.testing.assert_allclose(sim.velocities, 0, atol=1e-10)


def test_stiffness_does_not_depend_on_the_iteration_count():
    few, many = hanging_chain(50), hanging_chain(500)
    length = lambda s: np.linalg.norm(s.positions[-1] - s.positions[0])
    assert length(few) == pytest.approx(length(many), rel=0.02)
    # and both stretch the top spring by the weight below it over k
    stretch = np.linalg.norm(many.positions[1] - many.positions[0]) - 1 / (N - 1)
    assert stretch == pytest.approx((N - 1) * MASS * G / K, rel=0.03)


def test_near_zero_compliance_preserves_spring_lengths():
    # a horizontal chain swinging down from its pinned end
    mesh = msim.mesh.rope(8, length=1.0, direction=(1, 0, 0))
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.05, stiffness=1e12, fixed=[0])
    rest = sim.rest_lengths
    for _ in range(30):
        info = sim.step(1 / 60, "xpbd", iterations=200, substeps=2)
    x = sim.positions
    lengths = np.linalg.norm(x[mesh.edges[:, 0]] - x[mesh.edges[:, 1]], axis=1)
    assert np.max(np.abs(lengths / rest - 1)) < 1e-6
    assert np.min(x[:, 1]) < -0.5  # it did swing down
    assert info.residuals[-1] < info.residuals[0]


def test_zero_stiffness_springs_do_nothing_and_substeps_follow_free_fall():
    mesh = msim.mesh.rope(3)
    sim = msim.System(mesh.vertices, mesh.edges, stiffness=0.0)
    v0 = np.array([0.3, 1.0, -0.2])
    sim.velocities = np.tile(v0, (3, 1))
    h, n = 0.1, 4
    sim.step(h, "xpbd", substeps=n)
    # n symplectic-Euler substeps of h/n under gravity
    g = np.array([0, -9.81, 0])
    hs = h / n
    expected_x = mesh.vertices + h * v0 + hs * hs * g * n * (n + 1) / 2
    np.testing.assert_allclose(sim.positions, expected_x, atol=1e-14)
    np.testing.assert_allclose(sim.velocities, np.tile(v0 + h * g, (3, 1)), atol=1e-13)


def test_history_is_the_constraint_residual_starting_at_the_prediction():
    mesh = msim.mesh.rope(5, length=1.0, direction=(1, 0, 0))
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.1, stiffness=500.0, fixed=[0])
    sim.velocities = np.tile([0.0, 0.5, 0.2], (5, 1))
    h = 1 / 30
    info = sim.step(h, "xpbd", iterations=7, substeps=1)
    assert info.iterations == 7 and len(info.residuals) == len(info.objectives) == 8
    # lambda = 0 at the prediction x~ = x + h v + h^2 g (fixed vertex stays), so |C(x~)|
    predicted = mesh.vertices + h * np.array([0.0, 0.5, 0.2]) + h * h * np.array([0, -9.81, 0])
    predicted[0] = mesh.vertices[0]
    c = np.linalg.norm(np.diff(predicted, axis=0), axis=1) - 0.25
    assert info.residuals[0] == pytest.approx(np.linalg.norm(c), rel=1e-12)
    assert info.residuals[-1] < 0.1 * info.residuals[0]
    with pytest.raises(ValueError, match="substeps"):
        sim.step(h, "xpbd", substeps=0)


def test_constraint_damping_removes_energy_faster():
    mesh = msim.mesh.rope(6, length=1.0, direction=(1, 0, 0))
    plain = msim.System(mesh.vertices, mesh.edges, mass=0.05, stiffness=500.0, fixed=[0])
    damped = plain.copy()
    for _ in range(120):
        plain.step(1 / 60, "xpbd", iterations=20)
        damped.step(1 / 60, "xpbd", iterations=20, xpbd_damping=5.0)
    assert damped.energy()["total"] < plain.energy()["total"]


def gauss_seidel_step(sim: msim.System, h: float, iterations: int) -> np.ndarray:
    """Positions after one XPBD step of Macklin 2016 (no damping, one substep), written as
    the plain sequential Gauss-Seidel loop over the springs in their order, in Python floats
    (dlambda = numerator times the inverse denominator, as msim computes it)."""
    x0, w = sim.positions, np.where(np.isin(np.arange(sim.n_vertices), sim.fixed), 0.0,
                                     1.0 / sim.mass)
    g = sim.gravity
    x = [[x0[v, t] + h * sim.velocities[v, t] + h * h * g[t] if w[v] > 0 else x0[v, t]
          for t in range(3)] for v in range(sim.n_vertices)]
    lam = [0.0] * sim.n_springs
    for _ in range(iterations):
        for s, ((i, j), k, rest) in enumerate(zip(sim.edges.tolist(), sim.stiffness,
                                                  sim.rest_lengths)):
            if not (k > 0 and w[i] + w[j] > 0):
                continue
            d = [x[i][t] - x[j][t] for t in range(3)]
            length = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            u = [d[t] * (1.0 / length) for t in range(3)]
            at = 1.0 / (k * h * h)
            dl = (-(length - rest) - at * lam[s]) * (1.0 / ((w[i] + w[j]) + at))
            lam[s] += dl
            for t in range(3):
                x[i][t] += w[i] * dl * u[t]
                x[j][t] -= w[j] * dl * u[t]
    return np.array(x)


def test_sweep_is_gauss_seidel_in_spring_order_bit_for_bit():
    # a cloth whose springs come in a shuffled order, some without stiffness, more springs
    # than one reordering chunk: msim's sweep (independent projections overlapped) must give
    # the sequential loop's positions exactly, on any thread count
    mesh = msim.mesh.cloth_grid(16, 16)
    order = np.random.default_rng(3).permutation(len(mesh.edges))
    k = np.full(len(order), 800.0)
    k[::7] = 0.0
    for threads in (1, 2):
        sim = msim.System(mesh.vertices, mesh.edges[order], mass=0.004, stiffness=k,
                          fixed=[0, 15], threads=threads)
        sim.velocities = np.random.default_rng(4).normal(0, 0.1, (sim.n_vertices, 3))
        expected = gauss_seidel_step(sim, 1 / 30, 4)
        sim.step(1 / 30, "xpbd", iterations=4, substeps=1, history=False)
        assert sim.n_springs > 1024
        np.testing.assert_array_equal(sim.positions, expected)


def greedy_colours(edges: np.ndarray, active: np.ndarray) -> list[int]:
    """Colour of each spring (-1 inactive): in spring order, the lowest colour that no
    already coloured spring at either end has."""
    at = [[] for _ in range(edges.max() + 1)]
    for s, (i, j) in enumerate(edges.tolist()):
        at[i].append(s)
        at[j].append(s)
    colour = [-1] * len(edges)
    for s, (i, j) in enumerate(edges.tolist()):
        if active[s]:
            taken = {colour[t] for t in at[i] + at[j]}
            colour[s] = next(c for c in range(len(edges)) if c not in taken)
    return colour


def test_coloured_sweep_is_gauss_seidel_in_colour_order_on_any_thread_count():
    # the coloured sweep projects colour by colour, its projections shared by threads; as
    # no two springs of a colour share a vertex, it must give exactly the sequential
    # Gauss-Seidel loop over the springs sorted by colour (stable), whatever the threads
    mesh = msim.mesh.cloth_grid(16, 16)
    order = np.random.default_rng(3).permutation(len(mesh.edges))
    edges, k = mesh.edges[order], np.full(len(order), 800.0)
    k[::7] = 0.0
    colour = np.array(greedy_colours(edges, (k > 0) & ~np.all(np.isin(edges, [0, 15]), 1)))
    by_colour = np.argsort(colour, kind="stable")
    velocities = np.random.default_rng(4).normal(0, 0.1, (len(mesh.vertices), 3))
    serial = msim.System(mesh.vertices, edges[by_colour], mass=0.004, stiffness=k[by_colour],
                         fixed=[0, 15])
    serial.velocities = velocities
    expected = gauss_seidel_step(serial, 1 / 30, 4)
    degree = np.bincount(edges[colour >= 0].ravel()).max()
    assert colour.max() + 1 <= 2 * degree - 1  # a greedy edge colouring's bound
    for threads in (1, 2, 3):
        sim = msim.System(mesh.vertices, edges, mass=0.004, stiffness=k, fixed=[0, 15],
                          threads=threads)
        sim.velocities = velocities
        sim.step(1 / 30, "xpbd", iterations=4, substeps=1, sweep="coloured", history=False)
        np.testing.assert_array_equal(sim.positions, expected)


def test_coloured_and_sequential_sweeps_both_solve_the_constraints():
    # Gauss-Seidel on XPBD's multipliers converges in any order: iterated long enough, both
    # orders drive C + alpha~ lambda to zero on every spring. Their positions differ (XPBD
    # drops the primal residual, so where the iteration ends depends on its path)
    mesh = msim.mesh.cloth_grid(8, 8)
    for sweep in ("sequential", "coloured"):
        sim = msim.System(mesh.vertices, mesh.edges, mass=1.0 / 64, stiffness=200.0,
                          fixed=[0, 7])
        sim.velocities = np.random.default_rng(5).normal(0, 0.5, (64, 3))
        info = sim.step(1 / 30, "xpbd", iterations=3000, sweep=sweep)
        assert info.residuals[-1] < 1e-12 * info.residuals[0]


def test_coloured_sweep_with_damping_substeps_and_contact_is_the_same_on_any_thread_count():
    # the damped projection (rate term), substeps and contact after every sweep, threads
    # sharing each colour's projections: every thread count gives the same positions
    mesh = msim.mesh.cloth_grid(24, 24)
    runs = []
    for threads in (1, 2, 3):
        sim = msim.System(mesh.vertices, mesh.edges, mass=1.0 / 576, stiffness=500.0,
                          fixed=[0, 23], threads=threads)
        sim.spheres = [[0.5, -0.35, 0.5, 0.3]]
        for _ in range(15):
            sim.step(1 / 30, "xpbd", iterations=5, substeps=2, xpbd_damping=0.5,
                     sweep="coloured")
        runs.append(sim.positions)
    assert np.ptp(runs[0][:, 1]) > 0.1  # the cloth fell onto the sphere and draped
    for other in runs[1:]:
        np.testing.assert_array_equal(other, runs[0])
