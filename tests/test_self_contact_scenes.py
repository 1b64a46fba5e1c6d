"""Self-contact in the twisted cloth, the cloth stack and a soft cube: no triangle edge ever
crosses a triangle, in every method at the step the scene picks.

Checked by counting, as in test_self_contact.py: `self_intersections()` after every step,
cross-checked by ipctk's `has_intersections` (an independent implementation) on recorded
frames; the same scenes without self-contact do cross, so the count can fail. Physical
quality (the stack's layers keep their order on the sphere) is checked only in the methods
that neither gain energy on the barrier nor are unstable at the scene's step: implicit and
linearised implicit Euler, BDF2, FMS and XPBD. Symplectic Euler, velocity Verlet, RK4 and
implicit midpoint gain energy on the barrier (test_self_contact.py's energy audit), and
explicit Euler is unstable at every step (`Scene.dt_for`): for them only the count and
finiteness.
"""

import numpy as np
import pytest

import msim
from msim import scenes

ipctk = pytest.importorskip("ipctk")

METHODS = sorted(msim.METHODS)
QUALITY = ("implicit_euler", "linearized_implicit", "bdf2", "fms", "xpbd")
IMPLICIT_SOLVERS = ("newton", "fms", "lbfgs", "vbd")
TWIST = dict(n=10)  # 10 x 8 vertices: the twist's folds first cross near 0.7 s without contact
STACK = dict(n=8)  # three 8 x 8 layers: they land on the sphere near 0.19 s
def ipctk_crossings(positions, faces):
    """True when ipctk finds an edge of the mesh crossing one of its triangles."""
    edges = ipctk.edges(faces)
    mesh = ipctk.CollisionMesh(positions, edges, faces)
    return ipctk.has_intersections(mesh, positions)


def seconds_for(method, seconds):
    """Explicit Euler grows every mode at the scenes' step (`Scene.dt_for`): in the twist its
    fastest vertex moves at 60 m/s by 0.08 s, and the script then turns the held edges into
    the flailing cloth. It runs 0.05 s, before that."""
    return 0.05 if method == "explicit_euler" else seconds


def run_counting(scene, method, seconds, **options):
    """Step a copy of the scene's System (with its script) at the step it picks for `method`,
    counting crossings after every step; returns the System, the largest count and about nine
    frames (n,3) [m] spread over the run."""
    sim = scene.initial.copy()
    dt = scene.dt_for(method)
    worst, frames = 0, [sim.positions]
    steps = round(seconds / dt)
    for k in range(steps):
        if scene.before_step is not None:
            scene.before_step(sim)
        sim.step(dt, method, history=False, **options)
        worst = max(worst, sim.self_intersections())
        if (k + 1) % max(1, steps // 8) == 0:
            frames.append(sim.positions)
    return sim, worst, frames


def cap_heights(positions, layers, radius=0.2):
    """Mean height [m] of each stack layer's vertices within `radius` [m] of the vertical
    through the sphere's centre, where every layer lies over the sphere: (layers,)."""
    x = positions.reshape(layers, -1, 3)
    near = np.hypot(x[..., 0], x[..., 2]) < radius
    return np.array([x[k, near[k], 1].mean() for k in range(layers)])


def assert_no_crossing(scene, sim, worst, frames):
    assert worst == 0
    assert not any(ipctk_crossings(x, scene.faces) for x in frames)
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))


def assert_stacked(sim, layers=3):
    """The layers rest on the sphere (radius 0.25 m, touched at 1.1 of it) in their order,
    bottom first, at least half the self thickness apart."""
    heights = cap_heights(sim.positions, layers)
    assert 0.2 < heights[0] < 0.3
    assert np.all(np.diff(heights) > sim.self_thickness / 2)


# ---------------------------------------------------------------- the defect, first


def test_the_twist_crosses_itself_without_self_contact():
    scene = scenes.twisted_cloth(**TWIST, self_contact=False)
    counts = {m: run_counting(scene, m, 1.0)[1] for m in QUALITY}
    # measured: implicit_euler 12, linearized_implicit 28, bdf2 12, fms 12, xpbd 26 (n=10, 1 s)
    assert all(count > 0 for count in counts.values()), counts


def test_the_stack_falls_through_itself_without_self_contact():
    scene = scenes.cloth_stack(**STACK, self_contact=False)
    sim, worst, frames = run_counting(scene, "implicit_euler", 0.5)
    assert worst > 100 and ipctk_crossings(frames[-1], scene.faces)
    # all three layers end on the sphere's cap at one height: they passed through each other
    assert np.ptp(cap_heights(sim.positions, 3)) < 0.01


# ---------------------------------------------------------------- every method


@pytest.mark.parametrize("method", METHODS)
def test_the_twist_never_crosses_itself(method):
    scene = scenes.twisted_cloth(**TWIST)
    sim, worst, frames = run_counting(scene, method, seconds_for(method, 1.0))
    assert_no_crossing(scene, sim, worst, frames)


@pytest.mark.parametrize("method", METHODS)
def test_the_stack_never_crosses_itself(method):
    scene = scenes.cloth_stack(**STACK)
    sim, worst, frames = run_counting(scene, method, seconds_for(method, 0.3))
    assert_no_crossing(scene, sim, worst, frames)
    if method in QUALITY and method != "fms":  # FMS: test_the_stack_keeps_its_order_in_fms
        assert_stacked(sim)


def test_the_stack_keeps_its_order_in_fms():
    sim, _, _ = run_counting(scenes.cloth_stack(**STACK), "fms", 0.3)
    assert_stacked(sim)


@pytest.mark.parametrize("method", QUALITY)
def test_the_stack_drapes_over_the_sphere(method):
    # by 0.6 s the bottom layer's rim hangs below the sphere's contact radius (0.275 m): the
    # layers slide and bend over it rather than freezing where they landed (FMS stopped its
    # iterations at the first that raised g, and the stack stayed flat at 0.24 m)
    sim, worst, _ = run_counting(scenes.cloth_stack(**STACK), method, 0.6)
    assert worst == 0
    assert sim.positions[: STACK["n"] ** 2, 1].min() < 0.2


@pytest.mark.parametrize("solver", IMPLICIT_SOLVERS)
def test_every_implicit_euler_solver_keeps_the_stack(solver):
    scene = scenes.cloth_stack(**STACK)
    sim, worst, frames = run_counting(scene, "implicit_euler", 0.3, solver=solver)
    assert worst == 0 and not ipctk_crossings(frames[-1], scene.faces)
    assert_stacked(sim)


# ---------------------------------------------------------------- a soft volume


@pytest.mark.parametrize("method", [m for m in METHODS if m != "explicit_euler"])
def test_a_dropped_soft_cube_never_crosses_its_surface(method):
    # the jelly cube (a tetrahedral lattice, every tet edge a spring) with its boundary
    # triangles (msim.mesh.boundary_faces, the scene's faces) as collision faces; explicit
    # Euler is left out: it diverges on the cube within 0.2 s, contact or not
    cube = scenes.jelly_cube(n=4)
    model = cube.initial.parameters()
    del model["self_thickness"]  # the default: a quarter of the mean boundary edge
    model.update(faces=cube.faces, self_contact=True)
    scene = scenes.Scene("soft cube", msim.System(**model), cube.faces, dt=cube.dt)
    sim, worst, frames = run_counting(scene, method, 0.6)
    assert_no_crossing(scene, sim, worst, frames)
    # it landed (resolved steps land it by 0.26 s and bounce it 3 cm up by 0.6 s)
    assert min(frame[:, 1].min() for frame in frames) < 0.02


# ---------------------------------------------------------------- what the scenes are


def test_the_twist_turns_its_edges_half_a_turn_apart_about_the_long_axis():
    scene = scenes.twisted_cloth(n=10, turns=0.5, duration=1.0)
    traj = scene.run(72, "xpbd", record_every=6)  # 1.2 s at 1/60 s
    start, end = traj.positions[0], traj.positions[-1]
    fixed = scene.initial.fixed
    left, right = fixed[: len(fixed) // 2], fixed[len(fixed) // 2:]

    def direction(x, edge):  # the edge's direction across the cloth, in the (y, z) plane
        d = x[edge[-1], 1:] - x[edge[0], 1:]
        return np.arctan2(d[1], d[0])

    # each edge turned a quarter turn, the two in opposite directions, and nothing stretched
    assert direction(end, left) - direction(start, left) == pytest.approx(-np.pi / 2)
    assert direction(end, right) - direction(start, right) == pytest.approx(np.pi / 2)
    np.testing.assert_allclose(end[fixed, 0], start[fixed, 0])
    np.testing.assert_allclose(scene.initial.rest_lengths, np.linalg.norm(
        start[scene.initial.edges[:, 0]] - start[scene.initial.edges[:, 1]], axis=1))


def test_the_stack_is_one_system_of_layers_a_gap_apart():
    scene = scenes.cloth_stack(n=6, layers=4, gap=0.05)
    sim = scene.initial
    assert sim.n_vertices == 4 * 36 and len(scene.faces) == 4 * 2 * 25
    heights = sim.positions[:, 1].reshape(4, 36)
    np.testing.assert_allclose(heights - 0.05 * np.arange(4)[:, None], 0.4)
    # no spring or triangle joins two layers
    layer = np.arange(sim.n_vertices) // 36
    assert np.all(layer[sim.edges[:, 0]] == layer[sim.edges[:, 1]])
    assert np.all(layer[scene.faces] == layer[scene.faces[:, :1]])
    assert sim.self_intersections() == 0 and sim.self_contact
    assert not scenes.cloth_stack(n=6, self_contact=False).initial.self_contact
