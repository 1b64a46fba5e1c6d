"""Gradients of a run (msim.adjoint): Taylor tests against central finite differences of the
same run, agreement of the implicit function theorem's gradient across solvers of g, and
clear refusals where no gradient exists."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import msim
from msim.adjoint import AdjointWarning, Gradient

STEPS, RECORD = 12, 2
PARAMETERS = ("stiffness", "rest_lengths", "mass", "damping", "positions", "velocities",
              "external_forces")
# method -> (dt [s], options): explicit Euler at a step it survives for 12 steps
METHODS = {
    "symplectic_euler": (0.005, {}),
    "explicit_euler": (0.002, {}),
    "velocity_verlet": (0.005, {}),
    "rk4": (0.01, {}),
    "implicit_euler": (0.01, {"tol": 1e-11, "iterations": 100}),
    "implicit_midpoint": (0.01, {"tol": 1e-11, "iterations": 100}),
    "bdf2": (0.01, {"tol": 1e-11, "iterations": 100}),
    "fms": (0.01, {"tol": 1e-11, "iterations": 10000}),
}
# fms with a fixed iteration count and no tol: its iterations unrolled
UNROLLED = (0.01, {"iterations": 10})


@dataclass
class Scene:
    """A model and a starting state, rebuilt with one parameter replaced."""

    vertices: np.ndarray
    edges: np.ndarray
    fixed: list[int]
    values: dict[str, object]
    colliders: dict[str, object]

    def system(self, **changed: object) -> msim.System:
        p = {**self.values, **changed}
        sim = msim.System(self.vertices, self.edges, fixed=self.fixed, mass=p["mass"],
                          stiffness=p["stiffness"], rest_lengths=p["rest_lengths"],
                          damping=p["damping"], **self.colliders)
        sim.set_state({"positions": p["positions"], "velocities": p["velocities"],
                       "external_forces": p["external_forces"]})
        return sim


# contact scenes: the cloth lies across a plane (half its vertices a few mm deep) or on a
# sphere (its four inner vertices 2.5 mm deep), a penalty soft enough for the explicit steps
COLLIDERS = {
    "cloth": {}, "rope": {},
    "plane": {"planes": [[0.0, 1.0, 0.0, 0.0]], "contact_stiffness": 200.0},
    "sphere": {"spheres": [[0.15, -0.1, 0.15, 0.125 / 1.1]], "contact_stiffness": 200.0},
}


def scene(kind: str, seed: int = 0) -> Scene:
    """A 4x4 cloth pinned at two corners (alone, across a plane or on a sphere), or an
    8-vertex rope pinned at its top, each with random masses and stiffnesses, off its rest
    shape, moving, under gravity, damping and a random external force."""
    rng = np.random.default_rng(seed)
    mesh = msim.mesh.rope(8, 0.4) if kind == "rope" else msim.mesh.cloth_grid(4, 4, size=0.3)
    fixed = [0] if kind == "rope" else [0, 3]
    n, m = len(mesh.vertices), len(mesh.edges)
    ends = mesh.vertices[mesh.edges]
    values = {"mass": 0.01 * (1 + rng.random(n)), "stiffness": 40.0 * (1 + rng.random(m)),
              "rest_lengths": np.linalg.norm(ends[:, 0] - ends[:, 1], axis=1),
              "damping": 2.0,
              "positions": mesh.vertices + 0.005 * rng.standard_normal((n, 3)),
              "velocities": 0.1 * rng.standard_normal((n, 3)),
              "external_forces": 0.02 * rng.standard_normal((n, 3))}
    return Scene(mesh.vertices, mesh.edges, fixed, values, COLLIDERS[kind])


def direction(sc: Scene, name: str, rng: np.random.Generator) -> np.ndarray | float:
    """A random direction for parameter `name`, scaled like the parameter."""
    value = sc.values[name]
    if name == "damping":
        return 100.0  # [1/s]: a damping rate's effect over 0.06 s is small, so go far
    d = rng.standard_normal(np.shape(value))
    if name in ("mass", "stiffness", "rest_lengths"):
        return d * value
    return d * {"positions": 0.01, "velocities": 0.1, "external_forces": 0.02}[name]


def loss_weights(sc: Scene, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """dL/dX and dL/dV of the linear loss L = cX.X + cV.V over the recorded frames."""
    shape = (STEPS // RECORD + 1, len(sc.vertices), 3)
    return rng.standard_normal(shape), rng.standard_normal(shape)


def run(sim: msim.System, method: str, setup: tuple[float, dict] | None = None,
        **adjoint: bool) -> msim.Trajectory:
    """A run of `method` with its (dt, options) from METHODS, or `setup` where given."""
    dt, options = setup or METHODS[method]
    return sim.simulate(STEPS, dt, method, record_every=RECORD, **adjoint, **options)


def taylor(sc: Scene, method: str, name: str, seed: int,
           setup: tuple[float, dict] | None = None) -> tuple[float, list[float]]:
    """(the directional derivative of L along a random direction, the errors of central
    differences at eps = 1e-2 / 2^k, k = 0..11)."""
    rng = np.random.default_rng(seed)
    cx, cv = loss_weights(sc, rng)
    grad = run(sc.system(), method, setup, adjoint=True).backward(positions=cx, velocities=cv)
    d = direction(sc, name, rng)
    exact = float(np.sum(getattr(grad, name) * d))

    def loss(eps: float) -> float:
        traj = run(sc.system(**{name: sc.values[name] + eps * d}), method, setup)
        return float(np.sum(cx * traj.positions) + np.sum(cv * traj.velocities))

    errors = []
    for k in range(12):
        eps = 1e-2 / 2**k
        errors.append(abs((loss(eps) - loss(-eps)) / (2 * eps) - exact))
    return exact, errors


def assert_second_order(exact: float, errors: list[float]) -> None:
    assert exact != 0
    # the best central difference agrees to 1e-6 relative
    assert min(errors) <= 1e-6 * abs(exact), (exact, errors)
    # and the error falls as eps^2 (ratio 4 when eps halves) while it is well above rounding
    ratios = [a / b for a, b in zip(errors, errors[1:]) if a > 1e-9 * abs(exact) and b > 0]
    assert any(3.6 < r < 4.4 for r in ratios), (exact, errors)


@pytest.mark.parametrize("kind", list(COLLIDERS))
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("name", PARAMETERS)
def test_gradient_matches_central_differences_to_second_order(kind, method, name):
    assert_second_order(*taylor(scene(kind), method, name, seed=PARAMETERS.index(name)))


@pytest.mark.parametrize("start", ["lowest", "inertial", "extrapolated", "previous"])
@pytest.mark.parametrize("kind", ["cloth", "rope"])
@pytest.mark.parametrize("name", PARAMETERS)
def test_fms_unrolled_gradient_matches_central_differences(kind, name, start):
    # 10 local-global iterations per step, not converged: the gradient of those iterations
    dt, options = UNROLLED
    setup = (dt, {**options, "start": start})
    assert_second_order(*taylor(scene(kind), "fms", name, PARAMETERS.index(name), setup))


def test_fms_unrolled_gradient_is_that_of_the_iterations_run():
    # ten iterations are far from g's minimiser, so their gradient is not the implicit
    # function theorem's; unrolling enough of them to converge reaches it
    sc = scene("cloth", seed=7)
    cx, cv = loss_weights(sc, np.random.default_rng(7))

    def gradient(**options: object) -> np.ndarray:
        traj = sc.system().simulate(STEPS, 0.01, "fms", record_every=RECORD, adjoint=True,
                                    **options)
        return gradient_vector(traj.backward(positions=cx, velocities=cv))

    exact = gradient(tol=1e-12, iterations=10000)
    scale = np.linalg.norm(exact)
    assert np.linalg.norm(gradient(iterations=10) - exact) > 1e-3 * scale
    assert np.linalg.norm(gradient(iterations=3000) - exact) < 1e-8 * scale


@pytest.mark.parametrize("name", ["stiffness", "mass", "velocities"])
def test_implicit_euler_with_solver_fms_unrolls_the_same_iterations(name):
    # implicit_euler with solver='fms' and no tol runs the fms method's iterations from the
    # same start: the same gradient, which central differences confirm
    dt, options = UNROLLED
    setup = (dt, {**options, "solver": "fms"})
    sc = scene("cloth", seed=8)
    exact, errors = taylor(sc, "implicit_euler", name, PARAMETERS.index(name), setup)
    assert_second_order(exact, errors)
    cx, cv = loss_weights(sc, np.random.default_rng(8))
    grads = [gradient_vector(run(sc.system(), method, setup, adjoint=True)
                             .backward(positions=cx, velocities=cv))
             for method, setup in (("implicit_euler", setup), ("fms", UNROLLED))]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12 * abs(grads[1]).max())


def test_fms_unrolled_refuses_acceleration_and_contact_by_name():
    sim = scene("cloth").system()
    for acceleration in ("chebyshev", "anderson"):
        with pytest.raises(ValueError, match="acceleration='none', or give a tol"):
            sim.simulate(2, 0.01, "fms", adjoint=True, acceleration=acceleration)
    sim.simulate(2, 0.01, "fms", adjoint=True, acceleration="chebyshev", tol=1e-10,
                 iterations=1000)
    with pytest.raises(ValueError, match="contact targets are not: give a tol"):
        scene("plane").system().simulate(2, 0.01, "fms", adjoint=True)
    assert sim.steps == 2


def gradient_vector(g: Gradient) -> np.ndarray:
    return np.concatenate([np.ravel(getattr(g, name)) for name in PARAMETERS])


@pytest.mark.parametrize("method", ["implicit_euler", "implicit_midpoint", "bdf2"])
def test_implicit_gradient_does_not_depend_on_the_solver(method):
    # the implicit function theorem differentiates grad g(x) = 0, not the iterations
    sc = scene("cloth", seed=3)
    cx, cv = loss_weights(sc, np.random.default_rng(3))
    grads = {}
    for solver in ("newton", "lbfgs", "fms", "vbd"):
        traj = sc.system().simulate(STEPS, 0.01, method, record_every=RECORD,
                                    adjoint=True, solver=solver, tol=1e-10, iterations=5000)
        grads[solver] = gradient_vector(traj.backward(positions=cx, velocities=cv))
    scale = np.linalg.norm(grads["newton"])
    for solver in ("lbfgs", "fms", "vbd"):
        assert np.linalg.norm(grads[solver] - grads["newton"]) <= 1e-8 * scale, solver


def test_backward_sums_the_per_step_products():
    # Trajectory.backward is step_vjp applied from the last step to the first
    sc = scene("rope", seed=4)
    dt, _ = METHODS["symplectic_euler"]
    sim = sc.system()
    traj = sim.simulate(3, dt, "symplectic_euler", adjoint=True)
    cx = np.zeros_like(traj.positions)
    cx[3] = 1.0
    ax, av, stiffness = cx[3], np.zeros_like(cx[3]), 0.0
    for k in (2, 1, 0):
        g = msim.adjoint.step_vjp(sim, "symplectic_euler", dt, traj.positions[k],
                                  traj.velocities[k], traj.positions[k + 1],
                                  traj.velocities[k + 1], ax, av,
                                  external_forces=sc.values["external_forces"])
        ax, av, stiffness = g.positions, g.velocities, stiffness + g.stiffness
    whole = traj.backward(positions=cx)
    np.testing.assert_allclose(whole.positions, ax, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(whole.stiffness, stiffness, rtol=1e-12, atol=1e-300)
    assert np.all(whole.mass[[0]] == 0) and np.all(whole.velocities[0] == 0)


@pytest.mark.parametrize("method", ["xpbd", "linearized_implicit"])
def test_methods_without_a_gradient_are_refused_by_name(method):
    sim = scene("rope").system()
    with pytest.raises(ValueError, match=f"{method} has no gradient here"):
        sim.simulate(2, 0.01, method, adjoint=True)
    assert sim.steps == 0


def test_friction_and_self_contact_are_refused_naming_the_cause():
    sim = scene("plane").system()
    sim.friction = 0.5
    with pytest.raises(ValueError, match="friction"):
        sim.simulate(2, 0.005, "symplectic_euler", adjoint=True)
    sim = msim.System(*msim.mesh.cloth_grid(3, 3)[:2], faces=msim.mesh.cloth_grid(3, 3).faces,
                      self_contact=True)
    with pytest.raises(ValueError, match="self-contact"):
        sim.simulate(2, 0.005, "symplectic_euler", adjoint=True)


def test_implicit_euler_needs_a_tol_and_warns_when_a_step_misses_it():
    sim = scene("cloth").system()
    with pytest.raises(ValueError, match="tol > 0"):
        sim.simulate(2, 0.01, "implicit_euler", adjoint=True)
    with pytest.raises(ValueError, match="pin='eliminate'"):
        sim.simulate(2, 0.01, "fms", adjoint=True, tol=1e-8, pin="penalty")
    traj = sim.simulate(2, 0.01, "implicit_euler", adjoint=True, tol=1e-14, iterations=1,
                        line_search=False)
    with pytest.warns(AdjointWarning, match="did not reach tol"):
        traj.backward(positions=np.ones_like(traj.positions))


def test_backward_checks_its_arguments_and_needs_a_tape():
    sim = scene("rope").system()
    traj = sim.simulate(2, 0.005, "symplectic_euler", adjoint=True)
    with pytest.raises(ValueError, match=r"positions: expected dL/dpositions shaped"):
        traj.backward(positions=np.ones((2, 8, 3)))
    with pytest.raises(ValueError, match="adjoint=True"):
        sim.simulate(2, 0.005, "symplectic_euler").backward()
    with pytest.raises(ValueError, match="before_step"):
        sim.simulate(2, 0.005, "symplectic_euler", adjoint=True, before_step=lambda s: None)


def test_a_saddle_of_g_is_differentiated_through_its_indefinite_hessian():
    # one spring of rest length 1 from a fixed vertex at the origin to a free one resting at
    # y = (0.5, 0, 0) (m/h^2 = 100 N/m, k = 1000 N/m): g is stationary at x = (s, 0, 0) with
    # s = (50 - 1000)/1100 on the far side, where the exact Hessian across the spring,
    # 100 + 1000 (1 - 1/|s|) N/m, is negative. The implicit function theorem needs A only
    # nonsingular: MINRES preconditioned by the clamped factor solves A lam = xb1
    sim = msim.System([[0.0, 0, 0], [0.5, 0, 0]], [[0, 1]], mass=1.0, stiffness=1000.0,
                      rest_lengths=[1.0], fixed=[0], gravity=(0, 0, 0))
    x, v = sim.positions, sim.velocities
    s = (50 - 1000) / 1100
    x_next = np.array([[0.0, 0, 0], [s, 0, 0]])
    v_next = (x_next - x) / 0.1
    v_next[0] = 0
    g = msim.adjoint.step_vjp(sim, "implicit_euler", 0.1, x, v, x_next, v_next,
                              np.ones_like(x), np.zeros_like(x), tol=1e-8)
    across = 1000 * (1 - 1 / abs(s))
    hessian = np.diag([1000.0, across, across])
    lam = np.linalg.solve(100 * np.eye(3) + hessian, np.ones(3))
    assert across < -100  # indefinite
    np.testing.assert_allclose(g.positions[1], 100 * lam, rtol=1e-10)
    np.testing.assert_allclose(g.positions[0], 1 + hessian @ lam, rtol=1e-10)
    np.testing.assert_allclose(g.stiffness, [-(1 - abs(s)) * lam[0]], rtol=1e-10)


def test_bdf2_gradient_reaches_the_history_it_starts_from():
    # a bdf2 run that starts with a history (a step of the same dt before it) builds its first
    # step from two states: the gradient covers the one back as well
    sc = scene("cloth", seed=5)
    dt, options = METHODS["bdf2"]
    first = sc.system()
    first.step(dt, "bdf2", **options)
    state = first.get_state()
    rng = np.random.default_rng(5)
    cx, cv = loss_weights(sc, rng)

    def loss(key: str, eps: float, d: np.ndarray) -> tuple[float, msim.Trajectory]:
        sim = sc.system()
        sim.set_state({**state, key: state[key] + eps * d})
        traj = sim.simulate(STEPS, dt, "bdf2", record_every=RECORD, adjoint=eps == 0, **options)
        return float(np.sum(cx * traj.positions) + np.sum(cv * traj.velocities)), traj

    g = loss("positions", 0.0, 0 * cx[0])[1].backward(positions=cx, velocities=cv)
    for key in ("previous_positions", "previous_velocities", "positions"):
        d = rng.standard_normal(cx[0].shape) * 0.01
        exact = float(np.sum(getattr(g, key) * d))
        eps = 1e-5
        fd = (loss(key, eps, d)[0] - loss(key, -eps, d)[0]) / (2 * eps)
        assert abs(fd - exact) <= 1e-6 * abs(exact), key


def test_record_every_only_thins_the_frames_the_loss_sees():
    # a loss on every third frame of 7 steps is the loss on frames 0, 3 and 6 of the full run
    sc = scene("cloth", seed=6)
    rng = np.random.default_rng(6)
    cx, cv = rng.standard_normal((2, 3, len(sc.vertices), 3))
    thin = sc.system().simulate(7, 0.005, "velocity_verlet", record_every=3, adjoint=True)
    full = sc.system().simulate(7, 0.005, "velocity_verlet", adjoint=True)
    fx, fv = np.zeros_like(full.positions), np.zeros_like(full.velocities)
    fx[[0, 3, 6]], fv[[0, 3, 6]] = cx, cv
    a = gradient_vector(thin.backward(positions=cx, velocities=cv))
    b = gradient_vector(full.backward(positions=fx, velocities=fv))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())


@pytest.mark.parametrize("method, options", [("symplectic_euler", {}),
                                             ("bdf2", {"tol": 1e-9, "iterations": 50}),
                                             ("fms", {})])
def test_checkpointing_recomputes_the_same_steps_and_gradient(method, options):
    # keeping every 4th state of 11 steps (and the last), backward replays each segment from
    # its checkpoint: bit for bit the gradient of the tape that kept every state, with 4 states
    # kept instead of 12 (bdf2's history travels in the checkpoint's state)
    sc = scene("cloth", seed=7)
    rng = np.random.default_rng(7)
    dt = 0.002 if method == "symplectic_euler" else 0.02
    runs = [sc.system().simulate(11, dt, method, record_every=2, adjoint=True,
                                 checkpoint_every=every, **options) for every in (1, 4)]
    cx, cv = rng.standard_normal((2, *runs[0].positions.shape))
    full, kept = (gradient_vector(t.backward(positions=cx, velocities=cv)) for t in runs)
    np.testing.assert_array_equal(full, kept)
    assert len(runs[1].tape.positions) == 1 and sorted(runs[1].tape.checkpoints) == [0, 4, 8]
    with pytest.raises(ValueError, match="checkpoint_every"):
        sc.system().simulate(3, dt, method, adjoint=True, checkpoint_every=0, **options)
