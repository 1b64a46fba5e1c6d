"""Self-contact: a folded or heaped cloth never passes through itself, in every method.

Every claim is checked by counting: `self_intersections()` (exact segment-triangle tests over
the spatial hash's candidates) at every step, cross-checked by ipctk's `has_intersections`
(an independent implementation) on recorded frames, and the same scenes without self-contact
do cross, so the count can fail.
"""

import functools
import pickle

import numpy as np
import pytest

import msim
from msim import scenes

from builders import triangle_hops

ipctk = pytest.importorskip("ipctk")

METHODS = sorted(msim.METHODS)
IMPLICIT_SOLVERS = ("newton", "fms", "lbfgs", "vbd")


def ipctk_crossings(positions, faces):
    """True when ipctk finds an edge of the mesh crossing one of its triangles."""
    edges = ipctk.edges(faces)
    mesh = ipctk.CollisionMesh(positions, edges, faces)
    return ipctk.has_intersections(mesh, positions)


def run_counting(scene, method, seconds, **options):
    """Step the scene's System at the step it picks for `method`, counting crossings after
    every step; returns the System, the largest count and the frames seen."""
    sim = scene.initial.copy()
    dt = scene.dt_for(method)
    worst, frames = 0, [sim.positions]
    steps = round(seconds / dt)
    for k in range(steps):
        sim.step(dt, method, history=False, **options)
        worst = max(worst, sim.self_intersections())
        if (k + 1) % max(1, steps // 8) == 0:
            frames.append(sim.positions)
    return sim, worst, frames


def layers_in_order(sim, n):
    """The folded cloth's top half (u > 1/2) still lies above its bottom half."""
    y = sim.positions[:, 1].reshape(n, n)
    return y[:, n // 2 + 2:].mean() > y[:, : n // 2 - 2].mean()


# ---------------------------------------------------------------- the defect, first


def test_a_folded_cloth_falls_through_itself_without_self_contact():
    scene = scenes.folded_cloth(n=16, self_contact=False)
    sim, worst, frames = run_counting(scene, "fms", 1.0)
    assert worst > 0
    assert ipctk_crossings(frames[-1], scene.faces) or not layers_in_order(sim, 16)


@pytest.mark.parametrize("method", METHODS)
def test_a_folded_cloth_never_crosses_itself_in_any_method(method):
    n = 12
    scene = scenes.folded_cloth(n=n)
    sim, worst, frames = run_counting(scene, method, 1.0)
    assert worst == 0
    assert not any(ipctk_crossings(x, scene.faces) for x in frames)
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
    if method in ("explicit_euler", "symplectic_euler", "velocity_verlet", "rk4"):
        # explicit Euler is unstable at this step with or without self-contact
        # (`Scene.dt_for`); the others gain energy on the barrier, whose stiffness their
        # step does not count (from 11.3 J symplectic Euler peaks at 65 J, velocity Verlet at
        # 51 J, RK4 at 15.7 J), so the cloth sloshes and which layer lies on top when the
        # second ends is chaos: RK4's folded cloth turns over and back (out of order at step
        # 999, in order at 1099)
        return
    assert layers_in_order(sim, n)
    # the layers landed: the bottom one lies on the ground
    assert sim.positions[:, 1].min() < 0.02


@pytest.mark.parametrize("method", ["implicit_euler", "implicit_midpoint", "bdf2"])
@pytest.mark.parametrize("solver", IMPLICIT_SOLVERS)
def test_every_solver_of_the_implicit_schemes_keeps_the_fold(method, solver):
    n = 12
    scene = scenes.folded_cloth(n=n)
    sim, worst, frames = run_counting(scene, method, 0.75, solver=solver)
    assert worst == 0 and not ipctk_crossings(frames[-1], scene.faces)
    assert layers_in_order(sim, n)


@pytest.mark.parametrize("method", ["fms", "xpbd", "implicit_euler", "symplectic_euler"])
def test_a_heap_never_crosses_itself(method):
    scene = scenes.cloth_heap(n=12)
    sim, worst, frames = run_counting(scene, method, 2.0)
    assert worst == 0
    assert not any(ipctk_crossings(x, scene.faces) for x in frames)
    assert np.all(np.isfinite(sim.positions))


def test_the_heap_without_self_contact_does_cross():
    scene = scenes.cloth_heap(n=12, self_contact=False)
    _, worst, _ = run_counting(scene, "xpbd", 2.0)
    assert worst > 0


# ---------------------------------------------------------------- what a step reports


def test_step_info_reports_pairs_gap_and_limited_vertices():
    scene = scenes.folded_cloth(n=12, gap=0.01)
    sim = scene.initial.copy()
    info = sim.step(1 / 60, "fms")
    assert set(info.self_contact) == {"pairs", "gap", "limited", "rounds"}
    assert info.self_contact["pairs"] > 0
    # the closest primitives at the start: the two layers 1 cm apart, or the fold's chords,
    # which cut inside its half-cylinder
    assert 0.005 < info.self_contact["gap"] <= 0.01 + 1e-12
    assert info.self_contact["rounds"] >= 1
    # its phases are parts of the step's time, each spent (pairs were found and bounded)
    phases = [info.timings[p] for p in ("broad_phase", "narrow_phase", "bounds")]
    assert all(t > 0 for t in phases) and sum(phases) <= info.seconds
    plain = scenes.folded_cloth(n=12, self_contact=False).initial.step(1 / 60, "fms")
    assert plain.self_contact == {}
    assert plain.timings["broad_phase"] == plain.timings["bounds"] == 0


def test_energy_has_a_self_contact_term_whose_forces_are_its_gradient():
    # two layers closer than the thickness: the energy is positive and forces() is minus its
    # gradient (central differences of the total potential energy). The layers are roughened
    # by 1 mm: exactly parallel edges are a tie of the edge-edge distance (the least of four
    # point-edge distances), where it has no gradient
    scene = scenes.folded_cloth(n=8, gap=0.02)
    sim = scene.initial.copy()
    sim.gravity = [0.0, 0.0, 0.0]
    sim.planes = np.zeros((0, 4))
    sim.positions += np.random.default_rng(1).normal(0.0, 1e-3, sim.positions.shape)
    assert sim.self_thickness > 0.02 / 2
    energy = sim.energy()
    assert energy["self_contact"] > 0
    assert energy["total"] == pytest.approx(sum(v for k, v in energy.items() if k != "total"))
    x0, f = sim.positions, sim.forces()
    rng = np.random.default_rng(3)
    direction = rng.standard_normal(x0.shape)
    eps = 1e-8  # the log barrier's curvature at the closest pairs needs a short difference

    def potential(x):
        sim.positions = x
        e = sim.energy()
        return e["spring"] + e["self_contact"]

    slope = (potential(x0 + eps * direction) - potential(x0 - eps * direction)) / (2 * eps)
    assert slope == pytest.approx(-np.sum(f * direction), rel=1e-6)


def barrier(d, dhat, kappa):
    """The pair energy of barrier.c's file comment [J] at distance d: a quadratic penalty from
    dhat down to tau = dhat/2, a log barrier below, nothing beyond dhat."""
    tau = dhat / 2
    if d >= dhat:
        return 0.0
    if d >= tau:
        return kappa / 2 * (dhat - d) ** 2
    return kappa * tau**2 * (0.5 - np.log(d / tau))


def test_the_self_contact_energy_is_the_sum_of_every_close_pairs_barrier():
    # two roughened 1 m sheets a thickness apart: their pairs straddle the thickness, where a
    # pair's energy starts (and where comparing the primitives' boxes first decides most of
    # them). energy()["self_contact"] is the barrier of every point-triangle and edge-edge pair
    # across the sheets at its exact distance, summed here pair by pair (no pair within a sheet
    # comes within the thickness)
    mesh = msim.mesh.cloth_grid(6, 6)
    dhat, kappa, nv = 0.02, 500.0, len(mesh.vertices)
    x = np.vstack([mesh.vertices, mesh.vertices + [0.013, dhat, 0.021]])
    x[:, 1] += np.random.default_rng(4).uniform(-0.3 * dhat, 0.3 * dhat, len(x))
    sim = msim.System(x, np.vstack([mesh.edges, mesh.edges + nv]),
                      faces=np.vstack([mesh.faces, mesh.faces + nv]), self_contact=True,
                      self_thickness=dhat, self_stiffness=kappa, gravity=[0.0, 0.0, 0.0])
    edges = msim.mesh.unique_edges(msim.mesh.cell_edges("triangle", mesh.faces))
    expected, distances = 0.0, []
    for a, b in ((0, nv), (nv, 0)):
        for v in range(nv):
            for f in mesh.faces:
                d = np.sqrt(msim._core._pair_distance("pt", x[np.r_[v + a, f + b]])[0])
                distances.append(d)
                expected += barrier(d, dhat, kappa)
    for e in edges:
        for g in edges:
            d = np.sqrt(msim._core._pair_distance("ee", x[np.r_[e, g + nv]])[0])
            distances.append(d)
            expected += barrier(d, dhat, kappa)
    distances = np.array(distances)
    assert np.sum(distances < dhat) > 20
    assert np.sum((distances > dhat) & (distances < 1.2 * dhat)) > 20
    assert sim.energy()["self_contact"] == pytest.approx(expected, rel=1e-12)


def test_pairs_within_the_ring_carry_no_energy_and_those_beyond_it_do():
    # a strip of 8 quads whose far end hovers over its first quad (the middle lifted out of the
    # way): a pair carries its barrier only where every vertex of one primitive is more than
    # self_contact_ring triangle edges from every vertex of the other, counted here by
    # breadth-first search over the triangles' edges (builders.triangle_hops), so the energy
    # falls to zero in steps as the ring grows past the pairs' graph distances
    n, a, dhat, kappa = 8, 0.1, 0.02, 500.0
    x = np.array([[i * a, j * a, 0.0] for i in range(n + 1) for j in (0, 1)])
    x[4:2 * n, 2] = 1.0                        # columns 2 .. n-1 out of the way
    x[2 * n:] = [[0.05, 0.03, 0.4 * dhat], [0.06, 0.07, 0.5 * dhat]]  # column n over the first quad
    faces = np.array([f for i in range(n) for f in ([2 * i, 2 * i + 2, 2 * i + 3],
                                                    [2 * i, 2 * i + 3, 2 * i + 1])])
    edges = msim.mesh.unique_edges(msim.mesh.cell_edges("triangle", faces))
    hops = triangle_hops(faces, len(x))
    pairs = [("pt", np.r_[v, f]) for v in range(len(x)) for f in faces if v not in f]
    pairs += [("ee", np.r_[e, g]) for i, e in enumerate(edges) for g in edges[i + 1:]
              if not set(e) & set(g)]
    close = []  # (the barrier, the fewest edges between the primitives) of each close pair
    for kind, v in pairs:
        d = np.sqrt(msim._core._pair_distance(kind, x[v])[0])
        if d < dhat:
            k = 1 if kind == "pt" else 2
            close.append((barrier(d, dhat, kappa), hops[np.ix_(v[:k], v[k:])].min()))
    energies = []
    for ring in range(n + 2):
        sim = msim.System(x, edges, faces=faces, self_contact=True, self_thickness=dhat,
                          self_stiffness=kappa, self_contact_ring=ring, gravity=[0.0, 0.0, 0.0])
        expected = sum(e for e, h in close if h > ring)
        energies.append(sim.energy()["self_contact"])
        assert energies[-1] == pytest.approx(expected, rel=1e-12, abs=1e-300), ring
    assert energies[0] > energies[n - 1] > 0 and energies[n] == 0


# ---------------------------------------------------------------- a bad start, bad faces


def test_a_state_that_already_crosses_is_a_clear_error_and_no_step():
    scene = scenes.folded_cloth(n=10)
    sim = scene.initial.copy()
    x = sim.positions
    n = 10
    # push the top layer's middle row below the bottom layer
    top = np.arange(n * n).reshape(n, n)[:, -3]
    x[top, 1] -= 0.2
    sim.positions = x
    count = sim.self_intersections()
    assert count > 0 and ipctk_crossings(x, scene.faces)
    with pytest.raises(msim.SelfIntersectionError, match=f"{count} \\(triangle edge, triangle\\) "
                       "pairs already cross") as caught:
        sim.step(1 / 60, "fms")
    assert caught.value.crossings == count
    assert sim.steps == 0 and np.array_equal(sim.positions, x)
    sim.self_contact = False
    sim.step(1 / 60, "fms")


@pytest.mark.parametrize("faces, error, match", [
    ([[0, 1, 99]], ValueError, r"faces: expected vertex indices in \[0, 4\), got 99 in row 0"),
    ([[0, 1, 1]], ValueError, r"faces: expected 3 distinct vertices per triangle, got vertex 1 "
                              r"twice in row 0"),
    ([[0, 1]], ValueError, r"faces: .*\(t, 3\)"),
    ([[0.5, 1, 2]], TypeError, r"faces"),
])
def test_hostile_faces_are_clear_errors(faces, error, match):
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    with pytest.raises(error, match=match):
        msim.System(x, [[0, 1], [1, 2]], faces=faces)


def test_self_contact_needs_faces_and_a_positive_thickness():
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    with pytest.raises(ValueError, match="self_contact: needs faces"):
        msim.System(x, [[0, 1]], self_contact=True)
    sim = msim.System(x, [[0, 1]], faces=[[0, 1, 2]])
    with pytest.raises(ValueError, match="self_contact: needs faces"):
        msim.System(x, [[0, 1]]).self_contact = True
    sim.self_contact = True
    with pytest.raises(ValueError, match="self_thickness: expected finite values > 0"):
        sim.self_thickness = 0.0
    with pytest.raises(TypeError, match="self_contact: expected True or False"):
        sim.self_contact = 1
    assert sim.self_contact and sim.self_thickness > 0


def test_parameters_are_carried_by_copies_and_pickles():
    scene = scenes.folded_cloth(n=8)
    sim = scene.initial.copy()
    sim.self_thickness, sim.self_stiffness, sim.self_contact_ring = 0.011, 2e3, 1
    for twin in (sim.copy(), pickle.loads(pickle.dumps(sim))):
        assert np.array_equal(twin.faces, sim.faces)
        assert (twin.self_contact, twin.self_thickness, twin.self_stiffness,
                twin.self_contact_ring) == (True, 0.011, 2e3, 1)


# ---------------------------------------------------------------- determinism, failure


def test_threads_give_bit_identical_runs_with_self_contact():
    runs = []
    for threads in (1, 2, 3):
        sim = scenes.folded_cloth(n=12).initial.copy()
        sim.threads = threads
        for _ in range(20):
            sim.step(1 / 60, "implicit_euler")
        runs.append(sim.positions)
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_vbd_runs_are_bit_identical_on_any_thread_count_where_layers_touch():
    # VBD's colours come from the springs alone. On the stack on a sphere the layers bring two
    # vertices of one colour into an energy pair, and updated in parallel each read the other
    # mid-write: from step 11 on, 2 and 3 threads differed from 1 (by 5.6 cm after 20 steps)
    runs = []
    for threads in (1, 2, 3):
        scene = scenes.cloth_stack(n=12)
        sim = scene.initial.copy()
        sim.threads = threads
        for _ in range(14):
            sim.step(scene.dt_for("implicit_euler"), "implicit_euler", solver="vbd")
        runs.append(sim.positions)
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_a_failed_step_leaves_the_state_as_it_was():
    sim = scenes.folded_cloth(n=10).initial.copy()
    for _ in range(5):
        sim.step(1 / 60, "fms")
    before = sim.get_state()
    f = np.zeros((sim.n_vertices, 3))
    f[7] = [1e15, 0, 0]
    sim.external_forces = f
    with pytest.raises(msim.DivergenceError):
        sim.step(1 / 60, "symplectic_euler")
    after = sim.get_state()
    assert all(np.array_equal(before[k], after[k]) for k in ("positions", "velocities"))


# ---------------------------------------------------------------- the energy audit

def gains(why):
    return pytest.mark.xfail(strict=True, reason=why)


STIFF = gains("the barrier's stiffness is not in omega_max: at the step the scene picks the "
              "explicit method is unstable on it (symplectic Euler peaks at 65 J, 135 J with "
              "friction between the layers; 13.4 J at half the step, 11.8 J at a quarter, from "
              "11.3 J; without self-contact its energy swings to 13.7 J at the scene's step)")
ONE_BY_ONE = gains("VBD moves one vertex at a time against the others held still, so the "
                   "barrier's push on the point and on the triangle's corners are not equal and "
                   "opposite within a step: after 3 steps the net momentum is 2.9x the impulse "
                   "the small triangle takes")
CONSERVATIVE = gains("the midpoint damps nothing, and its single Newton iteration, unsolved "
                     "on the barrier and the ground's penalty, gains: 11.43 J at midpoint_dt "
                     "from 11.31 J, with friction between the layers or without (11.33 J "
                     "without self-contact; at half that step it never rises); solved to tol "
                     "1e-8, 1,076 of 1,200 steps converge and it peaks at 11.46 J")


@pytest.mark.parametrize("method, solver", [
    ("implicit_euler", "newton"), ("implicit_euler", "fms"), ("implicit_euler", "lbfgs"),
    ("implicit_euler", "vbd"), ("bdf2", "newton"), ("bdf2", "fms"), ("bdf2", "lbfgs"),
    ("bdf2", "vbd"),
    ("fms", None), ("xpbd", None),
    ("linearized_implicit", None),
    pytest.param("implicit_midpoint", "newton", marks=CONSERVATIVE),
    pytest.param("symplectic_euler", None, marks=STIFF)])
@pytest.mark.parametrize("self_friction", [0.0, 0.3])
def test_a_passive_fold_never_gains_energy(method, solver, self_friction):
    # ground, friction, damping and self-contact (with friction between the layers or
    # without) are passive: in a method that damps (or conserves) energy the total never
    # rises above the start. The solvers keep their
    # iterates within the displacement bounds and stop at the barrier instead of stepping
    # over it, so the step's end needs no cut; the marked cases still gain and turn the test
    # red once fixed
    scene = scenes.folded_cloth(n=12)
    sim, dt = scene.initial.copy(), scene.dt_for(method)
    sim.self_friction = self_friction
    options = {"solver": solver} if solver else {}
    start = sim.energy()["total"]
    for _ in range(round(1.0 / dt)):
        sim.step(dt, method, history=False, **options)
        assert sim.energy()["total"] <= start


def test_the_midpoint_starts_its_solve_within_the_bounds_without_straining_the_cloth():
    # every implicit solver starts within the bounds. Cut vertex by vertex, the start
    # stretched the springs between cut and uncut vertices, and the midpoint's single Newton
    # iteration carried that strain into the step: its folded cloth rose from 11.3 J to 189 J
    # (1,582 J at half the step). Shrunk toward x_t as a whole the start keeps the cloth's
    # shape, and what the midpoint still gains is its unsolved iteration's on the barrier and
    # the ground (peak 11.43 J; the strict xfail above), far below 5% of its start
    scene = scenes.folded_cloth(n=12)
    sim, dt = scene.initial.copy(), scene.dt_for("implicit_midpoint")
    start = sim.energy()["total"]
    for _ in range(round(1.0 / dt)):
        sim.step(dt, "implicit_midpoint", history=False, solver="newton")
        assert sim.energy()["total"] <= 1.05 * start


@functools.lru_cache(maxsize=None)
def large_fold_energies(method, steps=12):
    """The start's total energy and each step's energy terms [J] of the benchmark's 40 x 40
    folded cloth over its first steps at the scene's step, where the layers land (step 10);
    run once per method for the two tests that read it."""
    scene = scenes.folded_cloth(n=40)
    sim, dt = scene.initial.copy(), scene.dt_for(method)
    start = sim.energy()["total"]
    energies = []
    for _ in range(steps):
        sim.step(dt, method, history=False)
        energies.append(sim.energy())
    return start, energies


@pytest.mark.parametrize("method", ["implicit_euler", "fms", "xpbd"])
def test_a_landing_layer_stores_no_barrier_energy_the_method_never_saw(method):
    # (the methods whose scene step is 1/60 s, so that the 12 steps reach the landing)
    # the top layer falls 16 mm a step onto the bottom one: at the landing step's start every
    # pair is beyond the detection radius (2 thicknesses), so no method felt the barrier. The
    # bounds must not let such a pair into the contact zone: its barrier energy would come from
    # nowhere (the bounds let it in by 90% of its gap, and FMS's landing stored 146 J where the
    # whole cloth had 1.35 J)
    start, energies = large_fold_energies(method)
    assert max(e["self_contact"] for e in energies) <= start


@pytest.mark.parametrize("method", ["implicit_euler", "fms", "xpbd"])
def test_a_large_passive_fold_never_gains_energy(method):
    # where the layers land (step 10) the bounds stop the top one on the bottom one, which
    # rests on the ground: a stop in the frame of the layers' mean motion carried the bottom
    # one into the ground (FMS rose from 1.35 J to 3.25 J, its penalty holding 2.87 J; XPBD to
    # 40 J), so the stop of a mesh a collider holds is made in the collider's frame
    start, energies = large_fold_energies(method)
    assert max(e["total"] for e in energies) <= start


TWO_FACES = np.array([[0, 1, 2], [3, 4, 5]])


def momentum(sim):
    """The total momentum [kg m/s] (3,) of sim's vertices."""
    return (np.asarray(sim.mass, float).reshape(-1, 1) * sim.velocities).sum(axis=0)


def two_triangles(x, v, **options):
    """A System of two triangles at x (6,3) [m] moving at v (6,3) [m/s], their edges springs
    at rest, without gravity, with self-contact 1 mm thick unless options say otherwise."""
    edges = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3]])
    options = {"self_thickness": 1e-3, **options}
    sim = msim.System(x, edges, gravity=[0, 0, 0], faces=TWO_FACES, self_contact=True, **options)
    sim.velocities = v
    return sim


@pytest.mark.parametrize("method", ["symplectic_euler", "implicit_euler", "xpbd"])
def test_touching_layers_separate_freely(method):
    # two triangles 1 um apart, the upper one leaving at 1 m/s, the barrier too weak to push:
    # the bounds hold only approach, so it leaves as fast as the method moves it and the
    # lower one stays put (a bound on the whole displacement held both, and the common
    # drift lifted the lower one)
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    vertices = np.vstack([tri, tri + [0.1, 0.1, 1e-6]])
    v = np.zeros((6, 3))
    v[3:, 2] = 1.0
    sim = two_triangles(vertices, v, self_stiffness=1e-12)
    info = sim.step(0.01, method)
    z = sim.positions[:, 2]
    assert np.allclose(z[:3], 0.0, atol=1e-9)
    assert np.all(z[3:] > 0.99e-2)
    assert info.self_contact["limited"] == 0


def ipctk_distance(mesh, x):
    """The smallest distance between two primitives of ipctk's mesh at x [m]."""
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, x, 1.0)
    return np.sqrt(collisions.compute_minimum_distance(mesh, x))


@pytest.mark.parametrize("seed, down, aside", [(1, (0.85, 0.99), 0.0), (2, (0.5, 3.0), 0.02)])
def test_steps_the_bounds_let_through_never_meet_by_ipctk_ccd(seed, down, aside):
    # 100 pairs of 1-2 cm triangles 2-30 mm apart, the upper one carried `down` times the gap
    # toward the lower one (and up to `aside` [m] sideways) in one 10 ms step with a 5% jitter
    # per vertex (symplectic Euler moves them straight, the springs at rest): closing 85-99%,
    # where the paths end within the thickness and one plane at the start bounds them; or
    # 0.5-3 gaps down and 2 cm aside, through the lower one, past its edge or short of it,
    # paths that end outside the thickness, where planes along them do (a bounds that checked
    # only the first part let one through). ipctk's continuous collision detection (Tight
    # Inclusion, conservative) finds every step free of contact: a pair the bounds stop ends at
    # the contact zone's edge, not at their floor (1e-9 m), where that CCD reports contact; and
    # no step ends with more kinetic energy than it started with
    rng = np.random.default_rng(seed)
    h, trials, limited = 0.01, 0, 0
    while trials < 100:
        turn, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        a = np.column_stack([rng.uniform(-0.01, 0.01, (3, 2)), np.zeros(3)])
        b = a[[1, 2, 0]] * rng.uniform(0.5, 1.0)
        b[:, :2] += rng.normal(size=2) * 0.004
        b[:, 2] = rng.uniform(0.003, 0.03) * (1 + 0.1 * rng.normal(size=3))
        x = np.vstack([a, b]) @ turn.T
        mesh = ipctk.CollisionMesh(x, ipctk.edges(TWO_FACES), TWO_FACES)
        gap = ipctk_distance(mesh, x)
        if ipctk.has_intersections(mesh, x) or gap < 0.002:
            continue
        v = np.zeros((6, 3))
        v[3:, 2] = -rng.uniform(*down) * gap / h
        if aside:
            v[3:, :2] += rng.uniform(-aside, aside, 2) / h
        v[3:] += rng.normal(size=(3, 3)) * 0.05 * gap / h
        sim = two_triangles(x, v @ turn.T)
        moving = sim.energy()["kinetic"]
        info = sim.step(h, "symplectic_euler")
        x1, trials = sim.positions, trials + 1
        limited += info.self_contact["limited"] > 0
        # a passive collision does no work: a cut only takes speed away (the springs start at
        # rest, so symplectic Euler's first kick is zero)
        assert sim.energy()["kinetic"] <= moving
        assert ipctk.is_step_collision_free(mesh, x, x1)
    # the bounds had work to do
    assert limited > 0


# a 4 mm triangle 5 mm above a 10 cm one (in z = 0, its edge along x = 0), 1-5 mm in from
# the edge [m]
OVER_AN_EDGE = np.array([[-0.1, -0.1, 0.0], [0.0, -0.1, 0.0], [0.0, 0.1, 0.0],
                         [-0.005, -0.002, 0.005], [-0.001, -0.002, 0.005],
                         [-0.003, 0.002, 0.005]])


@pytest.mark.parametrize("aside, down, stopped", [(0.01, 0.005, False), (0.0, 0.01, True)])
def test_a_triangle_shot_past_another_edge_flies_free_and_one_shot_through_it_is_stopped(
        aside, down, stopped):
    # a 4 mm triangle 5 mm above a 10 cm one, 1-5 mm in from its edge, shot `aside` outward and
    # `down` in one 10 ms step. 1 cm aside and 5 mm down, it ends level with the large one, 5
    # mm past its edge; its straight path clears the edge by 2.2 mm (over the 1 mm thickness,
    # as ipctk finds) though it closes its whole gap along the normal at the start: it flies
    # free in the first round of the bounds, x + h v to the last bit (one plane at the start
    # cut it, and a second round let it go). Straight down through the large one, the two end
    # together (an inelastic collision), the small one above
    x = OVER_AN_EDGE
    v = np.zeros((6, 3))
    v[3:] = [aside / 0.01, 0.0, -down / 0.01]
    sim = two_triangles(x, v)
    start, moving = sim.energy()["total"], momentum(sim)
    info = sim.step(0.01, "symplectic_euler")
    mesh = ipctk.CollisionMesh(x, ipctk.edges(TWO_FACES), TWO_FACES)
    free = x + 0.01 * v
    path = [x + t * (free - x) for t in np.linspace(0, 1, 201)]
    assert ipctk.is_step_collision_free(mesh, x, free) != stopped
    assert (min(ipctk_distance(mesh, y) for y in path) > 1e-3) != stopped
    if stopped:
        # an inelastic collision: momentum kept (its energy: the test below)
        assert info.self_contact["limited"] == 6 and sim.self_intersections() == 0
        assert ipctk_distance(mesh, sim.positions) >= 0.999e-3
        assert sim.positions[3:, 2].mean() > sim.positions[:3, 2].mean()
        np.testing.assert_allclose(momentum(sim), moving, rtol=0, atol=1e-14)
    else:
        # free flight: the step moves it as shot and its energy stays as it was
        assert info.self_contact["limited"] == 0 and info.self_contact["rounds"] == 1
        np.testing.assert_array_equal(sim.positions, free)
        assert sim.energy()["total"] == pytest.approx(start, rel=1e-12)


@pytest.mark.parametrize("lying_mass", [0.01, 0.03])
@pytest.mark.parametrize("method", msim.METHODS)
def test_a_collision_the_bounds_stop_does_no_work(method, lying_mass):
    # the 4 mm triangle of the test above (0.01 kg a vertex), dropped at 1 m/s from 5 mm onto
    # the large one in 10 ms steps (beyond the 2 mm detection radius at its start, so only the
    # bounds see the pair): a passive collision takes kinetic energy out and puts none in, so
    # no step ends above the 0.015 J it began with. The bounds stop the pair at the contact
    # zone's edge, out of the barrier (stopped at their floor, 1e-9 m, the first step ends with
    # 0.111 J, and velocity Verlet reaches 1e15 J in three)
    v = np.zeros((6, 3))
    v[3:, 2] = -1.0
    sim = two_triangles(OVER_AN_EDGE, v, mass=[lying_mass] * 3 + [0.01] * 3)
    start, moving = sim.energy()["total"], momentum(sim)
    info = sim.step(0.01, method)
    assert info.self_contact["limited"] > 0 and sim.self_intersections() == 0
    assert sim.energy()["self_contact"] == 0.0
    # no external force: the stop keeps the momentum, also where the triangles' masses differ
    # (toward the two's mean motion unweighted, the lying one three times as heavy took up
    # 0.018 kg m/s of downward momentum from nowhere)
    np.testing.assert_allclose(momentum(sim), moving, rtol=0, atol=1e-14)
    energies = [sim.energy()["total"]]
    for _ in range(3):
        sim.step(0.01, method)
        energies.append(sim.energy()["total"])
    assert max(energies) <= start


@pytest.mark.parametrize("method", msim.METHODS)
def test_a_collision_the_bounds_stop_never_drives_a_resting_layer_into_the_ground(method):
    # the same drop onto the large triangle lying on the ground (z = 0): the ground holds it,
    # so the stop happens in the ground's frame, where the falling triangle stops and the
    # lying one stays put. Shared in the frame of the two's mean motion, the stop carried the
    # lying triangle 0.5 mm (implicit methods) to 3 mm (explicit ones) into the ground, whose
    # penalty then held up to 0.195 J where the drop brought 0.015 J
    v = np.zeros((6, 3))
    v[3:, 2] = -1.0
    sim = two_triangles(OVER_AN_EDGE, v, planes=[[0.0, 0.0, 1.0, 0.0]])
    start, lying = sim.energy()["total"], sim.positions[:3].copy()
    info = sim.step(0.01, method)
    assert info.self_contact["limited"] > 0 and sim.self_intersections() == 0
    # (to rounding: FMS's solve moves it by 1e-16 m)
    np.testing.assert_allclose(sim.positions[:3], lying, rtol=0, atol=1e-12)
    assert sim.energy()["total"] <= start


def falling_triangle(**options):
    """two_triangles: a 1 cm triangle 1.5 mm above a 20 cm one (in z = 0), falling toward it
    at 0.5 m/s."""
    big = np.array([[-0.1, -0.1, 0.0], [0.1, -0.1, 0.0], [0.0, 0.1, 0.0]])
    small = np.array([[0.0, 0.0, 1.5e-3], [0.01, 0.0, 1.5e-3], [0.0, 0.01, 1.5e-3]])
    v = np.zeros((6, 3))
    v[3:, 2] = -0.5
    return two_triangles(np.vstack([big, small]), v, **options)


@pytest.mark.parametrize("method, solver", [
    ("implicit_euler", "newton"), ("implicit_euler", "fms"), ("implicit_euler", "lbfgs"),
    ("implicit_euler", "vbd"), ("fms", None), ("bdf2", "newton"), ("implicit_midpoint", "newton")])
def test_a_solver_stops_a_falling_triangle_on_the_barrier_not_past_it(method, solver):
    # the 1 cm triangle 1.5 mm above a held 20 cm one (a pair the step sees: within the 2 mm
    # radius) falls at 0.5 m/s, 5 mm in one 10 ms step: a free solver step would carry it
    # through, where the barrier (a function of the distance alone) pushes it on, and only
    # the step's end would stop it, at the bound. Kept within the bounds, every iterate stays
    # on this side, so the solver meets the barrier rising and stops the triangle on it: the
    # step's end cuts nothing, the pair ends inside the 1 mm contact zone holding barrier
    # energy. Solved to tolerance by Newton or L-BFGS, implicit Euler (and BDF2, whose first
    # step is one) also ends with no more energy than the 3.75 mJ it started with, as g's
    # minimiser does where E is convex: the distances are linear in the falling vertices, and
    # the triangle falls flat, its springs at rest
    options = {"solver": solver} if solver else {}
    to_tol = {"tol": 1e-9, "max_iterations": 500}
    for solved in ({}, to_tol) if solver in ("newton", "lbfgs") else ({},):
        sim = falling_triangle(fixed=[0, 1, 2])
        start = sim.energy()["total"]
        info = sim.step(0.01, method, **options, **solved)
        gap = sim.positions[3:, 2].min()
        assert info.self_contact["limited"] == 0
        assert 0 < gap < 1e-3 and sim.energy()["self_contact"] > 0
        assert sim.self_intersections() == 0
        if solved and method in ("implicit_euler", "bdf2"):
            assert info.converged and sim.energy()["total"] <= start


@pytest.mark.parametrize("method, solver, share", [
    ("fms", None, 1e-10), ("implicit_euler", "fms", 1e-10), ("implicit_euler", "lbfgs", 1e-10),
    ("xpbd", None, 1e-12), ("implicit_euler", "newton", 1e-12), ("bdf2", "newton", 1e-12),
    ("implicit_midpoint", "newton", 1e-12), ("linearized_implicit", None, 1e-5),
    ("linearized_implicit", "direct", 1e-9),
    pytest.param("linearized_implicit", "jacobi", 1e-5, marks=pytest.mark.xfail(
        strict=True, raises=msim.DivergenceError,
        reason="block Jacobi converges where A's diagonal blocks dominate; a pair's whole "
               "Hessian couples the light point to the corners as strongly as to itself, and "
               "the iteration diverges (conjugate gradients and the direct solve do not)")),
    pytest.param("implicit_euler", "vbd", 0.05, marks=ONE_BY_ONE)])
def test_a_pair_pushing_apart_exchanges_equal_and_opposite_momentum(method, solver, share):
    # the small triangle resting 0.8 mm above the large one, inside the 1 mm contact zone,
    # both free and still: the barrier pushes them apart, an internal force, so the total
    # momentum stays 0 while the small one gains some. XPBD's projection keeps it to rounding,
    # and so do FMS and L-BFGS (6e-13 and 4e-15 of the push): the matrix they share bounds each
    # pair's curvature by a block over its four vertices with translations in its null space
    # (bounds on the diagonal alone left 0.47% and 2.9% unbalanced). Newton's matrix holds
    # every pair's whole Hessian, and its single iteration keeps momentum to rounding (3e-15 of
    # the push); the linearised step's default solve, conjugate gradients to their tolerance,
    # leaves 6.5e-7 of its far smaller push, its direct one 5e-13
    x = np.array([[-0.1, -0.1, 0.0], [0.1, -0.1, 0.0], [0.0, 0.1, 0.0],
                  [0.0, 0.0, 8e-4], [0.01, 0.0, 8e-4], [0.0, 0.01, 8e-4]])
    sim = two_triangles(x, np.zeros((6, 3)))
    options = {"solver": solver} if solver else {}
    for _ in range(3):
        sim.step(0.01, method, **options)
    pushed = sim.mass[3] * sim.velocities[3:, 2].sum()
    assert pushed > 0 and abs(momentum(sim)[2]) <= share * pushed


SWEPT_ALONE = gains("VBD moves one vertex at a time against the others held still, so each "
                    "layer's friction pulls against the other held in place: after 3 steps of "
                    "the small triangle sliding on the large one, 88% of the momentum friction "
                    "takes from it is lost instead of passed on (8e-9 after 1000 sweeps a step)")


def sliding_layers():
    """two_triangles with the small one 0.8 mm above the large one, inside the 1 mm contact
    zone, sliding across it at 0.1 m/s, both free, friction coefficient 0.5 between them."""
    x = np.array([[-0.1, -0.1, 0.0], [0.1, -0.1, 0.0], [0.0, 0.1, 0.0],
                  [0.0, 0.0, 8e-4], [0.01, 0.0, 8e-4], [0.0, 0.01, 8e-4]])
    v = np.zeros((6, 3))
    v[3:, 0] = 0.1
    return two_triangles(x, v, self_friction=0.5)


@pytest.mark.parametrize("method, solver, share", [
    ("implicit_euler", "newton", 1e-12), ("bdf2", "newton", 1e-12),
    ("implicit_midpoint", "newton", 1e-12), ("linearized_implicit", "direct", 1e-12),
    ("linearized_implicit", None, 1e-5), ("xpbd", None, 1e-12),
    ("implicit_euler", "lbfgs", 0.005), ("fms", None, 1e-10), ("implicit_euler", "fms", 1e-10),
    pytest.param("implicit_euler", "vbd", 0.05, marks=SWEPT_ALONE)])
def test_friction_between_sliding_layers_exchanges_equal_and_opposite_momentum(method, solver,
                                                                                share):
    # the small triangle sliding across the large one: friction between the layers is an
    # internal force, so what it takes from the small triangle the large one gains, in every
    # component. Newton's matrix holds the friction's secant blocks between the pair's
    # vertices, c_a c_b per (I - n n^T), and keeps it to rounding (4e-14 of the slowing);
    # the linearised step's conjugate gradients 1.9e-6. FMS's matrix bounds each pair's
    # curvature by a block over its four vertices with translations in its null space, so its
    # global steps keep it to rounding too (4e-12); L-BFGS, which starts from that matrix,
    # 4.8e-4 after its 10 iterations. Friction is passive: no step ends with more energy than
    # it began with, except where the method does not dissipate (the midpoint conserves,
    # rounding either way) or remembers the first step's push (BDF2's recurrence adds half the
    # velocity change of its implicit Euler start again over the next steps); their runs still
    # end below the start
    sim = sliding_layers()
    before, energies = momentum(sim), [sim.energy()["total"]]
    options = {"solver": solver} if solver else {}
    for _ in range(3):
        sim.step(0.01, method, **options)
        energies.append(sim.energy()["total"])
    slowed = sim.mass[3] * (0.3 - sim.velocities[3:, 0].sum())
    assert slowed > 0 and np.abs(momentum(sim) - before).max() <= share * slowed
    assert energies[-1] < energies[0]
    if method not in ("bdf2", "implicit_midpoint"):
        assert np.all(np.diff(energies) <= 0)


@pytest.mark.parametrize("solver, iterations", [("fms", 1000), ("lbfgs", 200), ("vbd", 1000)])
def test_every_solver_iterated_long_enough_reaches_newtons_step_across_sliding_layers(solver,
                                                                                       iterations):
    # the small triangle sliding across the large one: one implicit Euler step minimises one
    # g, barrier and lagged friction included, so every solver iterated long enough ends where
    # Newton's does. FMS's bound on the pairs' curvature per vertex alone made its global steps
    # pull each layer against its own anchor, with the large triangle left behind: 1000
    # iterations ended 0.013 m/s from Newton's velocities (L-BFGS, starting from its matrix,
    # 6e-5 m/s after 200). Bounded pair by pair, FMS reaches Newton's step to 5e-13 m/s in 708
    # iterations, L-BFGS to 1e-13 in 82; VBD, short of the tolerance, is 3e-10 m/s away after
    # 1000 sweeps
    newton = sliding_layers()
    assert newton.step(0.01, "implicit_euler", iterations=50, tol=1e-12).converged
    sim = sliding_layers()
    sim.step(0.01, "implicit_euler", solver=solver, iterations=iterations, tol=1e-12)
    assert np.abs(sim.velocities - newton.velocities).max() <= 1e-9
    assert np.abs(newton.velocities[:3, 0]).max() > 1e-3  # the large triangle is carried along


@pytest.mark.parametrize("dt", [0.001, 0.0015, 0.002])
@pytest.mark.parametrize("method, solver", [
    ("fms", None), ("implicit_euler", "fms"), ("implicit_euler", "lbfgs"),
    ("implicit_euler", "vbd"), ("xpbd", None)])
def test_a_drop_into_the_contact_zone_at_short_steps_gains_no_energy(method, solver, dt):
    # the falling triangle at steps of 1, 1.5 and 2 ms: the pair is within the detection
    # radius but outside the 1 mm contact zone at the step's start, where the barrier has no
    # curvature. At 1.5 ms the inertia carries the solver's start into the zone (to 0.75 mm:
    # a pair from outside may start halfway in); at 2 ms it would reach 0.5 mm and is halved
    # back to the zone's edge. When starts went that deep, FMS's matrix held the barrier's
    # curvature at x_t alone, none, so each iteration from the start raised g and was undone:
    # the step ended at its start, keeping the 3.75 mJ of kinetic energy and adding 3.75 mJ
    # of barrier energy. A passive drop does no work
    options = {"solver": solver} if solver else {}
    sim = falling_triangle(fixed=[0, 1, 2])
    energies = [sim.energy()["total"]]
    for _ in range(round(0.02 / dt)):
        sim.step(dt, method, **options)
        energies.append(sim.energy()["total"])
    assert max(energies) <= energies[0] and sim.self_intersections() == 0


@pytest.mark.parametrize("dt", [0.001, 0.002, 1 / 60])
@pytest.mark.parametrize("fixed", [[], [0, 1, 2]])
def test_linearized_implicit_lets_no_pair_into_the_barrier_it_did_not_feel(fixed, dt):
    # the falling triangle, free or held, in Baraff and Witkin's single linear solve: it
    # samples the barrier at x_t, where a pair outside the 1 mm contact zone has neither force
    # nor stiffness, so its step carried the pair into the zone unresisted, and the barrier's
    # energy came from nowhere: 2x the 3.75 mJ start at 1-2 ms, 1.5x at 1/60 s. Its step's end
    # stops such a pair at the zone's edge, as a collision no solver saw (a held triangle's
    # fixed vertices too: the translation toward the falling one's motion carried the pair
    # 0.4 mm into the zone)
    sim = falling_triangle(fixed=fixed)
    energies = [sim.energy()["total"]]
    for _ in range(round(0.05 / dt)):
        sim.step(dt, "linearized_implicit")
        energies.append(sim.energy()["total"])
    assert max(energies) <= energies[0] and sim.self_intersections() == 0


def test_a_pair_resting_at_the_contact_zones_edge_ends_the_rounds_once_they_stop_moving_it():
    # the falling triangle in the linearised step at 1 ms, stopped at the 1 mm zone's edge:
    # it rests there, and every later step pushes it back in. Each round of the bounds let
    # the pair close 90% of what was left, a crawl that ran all 8 rounds every step, sweeping
    # the pairs again each time (the 40 x 40 folded cloth took 300 ms a step, not 20). A
    # round that moves no vertex by a thousandth of the thickness ends them: two rounds a
    # step, the pair at the edge to that precision, and no energy gained
    sim = falling_triangle()
    start = sim.energy()["total"]
    for _ in range(50):
        info = sim.step(0.001, "linearized_implicit")
        assert info.self_contact["rounds"] <= 2 and sim.energy()["total"] <= start
    gap = sim.positions[3:, 2].min() - sim.positions[:3, 2].max()
    assert abs(gap - 1e-3) <= 1e-6 and sim.self_intersections() == 0


@pytest.mark.parametrize("solved", [{}, {"tol": 1e-9, "max_iterations": 500}])
@pytest.mark.parametrize("solver", IMPLICIT_SOLVERS)
def test_two_free_triangles_colliding_end_the_step_with_less_energy_in_every_solver(solver,
                                                                                   solved):
    # the falling triangle's drop with the large triangle free as well, at the solver's own
    # iterations and toward a tolerance: a passive collision does no work, so the step ends
    # with at most the 3.75 mJ it started with. The iterates reach the bounds. Where L-BFGS's
    # step was capped as one fraction, that fraction halved toward 0 as they came near, and
    # the iterations crawled and stopped: after its 10 iterations the step ended with 5.06 mJ
    # of kinetic energy (as after 16, solved toward the tolerance). Cut per vertex as FMS's
    # iterates are, where that lowers g more than the capped step, it ends with 1.81 mJ
    # (2.02 mJ). Solved, every step after the collision loses energy too: VBD's sweeps, not
    # cut to the bounds, left the step's end to cut 2 vertices a step, and the third step
    # gained 2.8 uJ
    sim = falling_triangle()
    energies = [sim.energy()["total"]]
    for _ in range(4 if solved else 1):
        sim.step(0.01, "implicit_euler", solver=solver, **solved)
        energies.append(sim.energy()["total"])
    assert np.all(np.diff(energies) <= 0) and sim.self_intersections() == 0


@pytest.mark.parametrize("solver", IMPLICIT_SOLVERS)
@gains("with both triangles free, the solvers do not reach tolerance on this side of the "
       "barrier within the bounds: in the first step each stops where no step the bounds "
       "allow lowers g, Newton after 27 iterations (|grad g| 0.31 N), FMS after 84 (0.10 N), "
       "L-BFGS after 14, where neither its step nor FMS's, capped or cut per vertex, lowers g "
       "(0.10 N), and VBD after 78, where a sweep the bounds cut does not lower g even halved "
       "back (0.27 N)")
def test_two_free_triangles_colliding_are_solved_to_tolerance(solver):
    sim = falling_triangle()
    start = sim.energy()["total"]
    info = sim.step(0.01, "implicit_euler", solver=solver, tol=1e-9, max_iterations=500)
    assert info.converged and sim.energy()["total"] <= start


@pytest.mark.parametrize("method", ["symplectic_euler", "implicit_euler", "fms", "xpbd"])
def test_a_pair_the_method_never_saw_is_not_let_into_the_barrier(method):
    # the 4 mm triangle 2.1 mm above the large one (just beyond the 2 mm detection radius, so
    # no method sees the pair) closes 1.7 mm in one 10 ms step, which no plane would cut (81%
    # of its gap): let through, it ended 0.4 mm apart, in the 1 mm contact zone, with 0.0054 J
    # of barrier energy where it moved with 0.00043 J. The bounds stop it at the zone's edge
    x = OVER_AN_EDGE.copy()
    x[3:, 2] = 0.0021
    v = np.zeros((6, 3))
    v[3:, 2] = -0.17
    sim = two_triangles(x, v)
    start, moving = sim.energy()["total"], momentum(sim)
    sim.step(0.01, method)
    assert sim.energy()["self_contact"] == 0.0 and sim.energy()["total"] <= start
    assert sim.self_intersections() == 0
    np.testing.assert_allclose(momentum(sim), moving, rtol=0, atol=1e-14)


@pytest.mark.parametrize("method", ["symplectic_euler", "implicit_euler", "xpbd"])
@pytest.mark.parametrize("fixed", [[], [0, 1, 2]])
def test_a_triangle_shot_through_another_in_one_step_is_stopped(method, fixed):
    # 10 cm apart, far beyond the detection radius, closing at 20 m/s: one 10 ms step would
    # carry the small triangle 10 cm through the large one. The sweep of the step finds the
    # pair and the plane between them stops the small one above the large one, pinned or free
    # (free, the two end moving together as an inelastic collision of equal masses would:
    # momentum is kept)
    big = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    small = np.array([[0.0, 0.0, 0.1], [0.01, 0.0, 0.1], [0.0, 0.01, 0.1]])
    v = np.zeros((6, 3))
    v[3:, 2] = -20.0
    sim = two_triangles(np.vstack([big, small]), v, fixed=fixed)
    start = sim.energy()["total"]
    info = sim.step(0.01, method)
    z = sim.positions[:, 2]
    assert z[3:].min() > z[:3].max() and sim.self_intersections() == 0
    assert info.self_contact["limited"] == 6 - len(fixed)
    # a passive collision does no work: the energy ends at most where it started (6 J)
    assert sim.energy()["total"] <= start
    if not fixed:
        assert sim.velocities[:, 2].sum() == pytest.approx(-60.0, rel=1e-12)
        # momentum kept, the kinetic energy is at least that of the six vertices moving as one,
        # P^2 / (2 M) = (0.6 N s)^2 / (2 x 0.06 kg) = 3 J
        assert sim.energy()["kinetic"] >= 0.5 * (0.01 * 60.0) ** 2 / (6 * 0.01) * (1 - 1e-12)


@pytest.mark.parametrize("method", sorted(set(METHODS) - {"explicit_euler"}))
def test_a_cloth_that_touches_nothing_moves_as_without_self_contact(method):
    # a hanging cloth swings down without any part of it coming near another: self-contact
    # has no pair in its thickness, so it may not change the motion. A radius that bounds
    # every vertex's move by its distance to the nearest primitive held the sagging cloth
    # back (0.26 m in XPBD, 0.11 m in BDF2 after 1 s). Explicit Euler diverges here anyway.
    scene = scenes.hanging_cloth(20)
    plain = scene.initial.copy()
    touched = msim.System(plain.positions, plain.edges, mass=0.01, stiffness=1000.0,
                          fixed=[0, 19], faces=scene.faces, self_contact=True)
    dt = scene.dt_for(method)
    for _ in range(round(1.0 / dt)):
        plain.step(dt, method, history=False)
        info = touched.step(dt, method, history=False)
        assert info.self_contact["pairs"] == 0 and info.self_contact["limited"] == 0
    np.testing.assert_allclose(touched.positions, plain.positions, rtol=0, atol=1e-9)


def test_a_large_hanging_cloth_whose_corners_crumple_moves_as_without_self_contact():
    # the benchmark's hanging 100x100 cloth, 6 edge lengths a step at 1/30 s: from 0.8 s its
    # corners crumple at the pins, layers a millimetre or two apart, never within the
    # thickness. One plane per pair over the whole step held up to 17 vertices a step there
    # (0.13 m off the free motion after 1 s, with pairs brought within the thickness) and
    # swept the paths in 8 rounds a step; planes at each part of the paths let it move freely
    n = 100
    scene = scenes.hanging_cloth(n)
    plain = scene.initial.copy()
    touched = msim.System(plain.positions, plain.edges, mass=0.01, stiffness=1000.0,
                          fixed=[0, n - 1], faces=scene.faces, self_contact=True)
    for _ in range(30):
        plain.step(1 / 30, "fms", history=False)
        info = touched.step(1 / 30, "fms", history=False)
        assert info.self_contact["pairs"] == 0 and info.self_contact["limited"] == 0
    np.testing.assert_array_equal(touched.positions, plain.positions)
    assert touched.self_intersections() == 0


def sinking_flap(n=5, edge=0.01, gap=5e-4, thickness=2e-3, sinking=0.3, anchor=27.5,
                 mass=1e-3):
    """A strip of n columns, its rows 0 (the crease), 1 and 2 flat on y = 0 and a flap one
    edge long folded back over row 1, `gap` above it: the flap's pairs with the strip all lie
    within the topological ring, so they carry no energy. Each face vertex hangs from a fixed
    anchor 1 cm below by a spring of `anchor` [N/m], and the flap sinks at `sinking` [m/s]: an
    implicit step of h keeps 1 / (1 + h^2 k / m) of the h v its velocity predicts. Returns the
    System, the flap's vertices and those under it."""
    rows = np.arange(4 * n).reshape(4, n)  # the flap, then the strip's rows 0, 1, 2
    quads = [(rows[a, j], rows[a, j + 1], rows[a + 1, j], rows[a + 1, j + 1])
             for a in range(3) for j in range(n - 1)]
    faces = np.array([t for p, q, r, s in quads for t in ([p, q, s], [p, s, r])])
    x = np.zeros((4 * n, 3))
    x[:, 0] = np.tile(np.arange(n) * edge, 4)
    x[:, 2] = np.repeat([edge, 0.0, edge, 2 * edge], n)
    x[rows[0], 1] = gap
    edges = msim.mesh.unique_edges(msim.mesh.cell_edges("triangle", faces))
    nv = len(x)
    springs = np.vstack([edges, np.c_[np.arange(nv), nv + np.arange(nv)]])
    sim = msim.System(np.vstack([x, x - [0, 0.01, 0]]), springs, mass=mass,
                      stiffness=np.r_[np.ones(len(edges)), np.full(nv, anchor)],
                      fixed=np.arange(nv, 2 * nv), gravity=(0, 0, 0), faces=faces,
                      self_contact=True, self_thickness=thickness)
    v = np.zeros((2 * nv, 3))
    v[rows[0], 1] = -sinking
    sim.velocities = v
    return sim, rows[0], rows[2]


@pytest.mark.parametrize("method", ["implicit_euler", "implicit_midpoint", "bdf2", "fms", "xpbd"])
@pytest.mark.parametrize("anchor", [27.5, 10.0])
def test_a_flap_sinking_onto_its_own_strip_stays_above_it(method, anchor):
    # only the bounds stop the flap (ring pairs carry no energy). Its velocities say the step
    # moves 3 mm, beyond reach of the 4 mm radius (0.9 mm from the mean move), so the step's
    # start measures no ring pair; the anchors slow an implicit step to 0.8 mm (within reach:
    # the step's end must measure the ring pairs before the pairs of the start may bound it)
    # or to 1.5 mm (beyond: swept, and a swept ring pair's distance is no longer bounded by
    # the nearest distances, which skip the ring). Either shortcut let the flap through to
    # 0.3-1.3 mm under the strip (no edge left crossing a triangle: it passed right through)
    sim, flap, under = sinking_flap(anchor=anchor)
    start = sim.energy()["total"]
    # the flap's five vertices of 1 g at 0.3 m/s, the springs at rest: 5 m v^2 / 2 = 225 uJ
    assert start == pytest.approx(5 * 0.5 * 1e-3 * 0.3**2, rel=1e-12)
    info = sim.step(0.01, method)
    y = sim.positions[:, 1]
    # (at the strip's ends a flap vertex may pass beside it, 1e-8 m lower)
    assert (y[flap[1:-1]] > y[under[1:-1]]).all() and sim.self_intersections() == 0
    assert info.self_contact["limited"] > 0
    # the bounds' stop is an inelastic collision: no work done, no barrier energy stored (the
    # ring carries none)
    energy = sim.energy()
    assert energy["total"] <= start and energy["self_contact"] == 0.0


# ---------------------------------------------------------------- friction between layers


def sliding_square(mu):
    """A 10 cm square (4 vertices, 40 g) resting on a fixed 2 m square at its equilibrium gap,
    self_friction mu: the System and the upper square's vertex indices."""
    bottom = np.array([[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], float)
    top = np.array([[-0.5, 0, 0.2], [-0.4, 0, 0.2], [-0.4, 0, 0.3], [-0.5, 0, 0.3]], float)
    top[:, 1] = 0.00999019  # the barrier carries the weight: kappa (dhat - d) = m g
    faces = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2],
                      [4, 5], [5, 6], [6, 7], [7, 4], [4, 6], [5, 7]])
    sim = msim.System(np.vstack([bottom, top]), edges, mass=0.01, stiffness=1e4,
                      fixed=[0, 1, 2, 3], faces=faces, self_contact=True, self_thickness=0.01,
                      self_friction=mu)
    return sim, slice(4, 8)


TO_TOL = {"iterations": 300, "tol": 1e-7}
SLIDES = [("implicit_euler", {}, 1 / 240), ("bdf2", {}, 1 / 240), ("xpbd", {}, 1 / 240),
          ("symplectic_euler", {}, 2e-4),
          ("implicit_euler", {"solver": "lbfgs", **TO_TOL}, 1 / 240),
          ("implicit_euler", {"solver": "vbd", **TO_TOL}, 1 / 240),
          ("fms", TO_TOL, 1 / 240)]


@pytest.mark.parametrize("method, options, dt", SLIDES)
def test_a_square_sliding_on_cloth_stops_where_coulomb_says(method, options, dt):
    # launched at v0 = 1 m/s, Coulomb friction mu m g decelerates it by mu g: it stops after
    # v0^2 / (2 mu g) = 0.102 m (lagged potential in the implicit methods, a velocity impulse
    # on the closest points' relative sliding in the others); without friction it slides on.
    # The iterative solvers run to tol: FMS carries the barrier and its friction by a diagonal
    # bound on their curvature (about 130 iterations a step here), VBD's Gauss-Seidel sweeps
    # meet springs stiffer than m/h^2
    mu, v0, g = 0.5, 1.0, 9.81
    for friction, expected in ((0.0, v0 * 0.5), (mu, v0**2 / (2 * mu * g))):
        sim, top = sliding_square(friction)
        v = sim.velocities
        v[top] = [v0, 0, 0]
        sim.velocities = v
        start, energy = sim.positions[top, 0].mean(), sim.energy()["total"]
        for _ in range(round(0.5 / dt)):
            sim.step(dt, method, **options)
            assert sim.energy()["total"] <= energy * (1 + 1e-9)
        assert sim.positions[top, 0].mean() - start == pytest.approx(expected, rel=0.03)
        assert sim.self_intersections() == 0
