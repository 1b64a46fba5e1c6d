"""Reliability: threads, determinism, reference counts, memory, hostile random input."""

import os
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import msim
from builders import cloth

METHODS = sorted(msim.METHODS)


def _steps(sim, method, n, dt=1e-3):
    for _ in range(n):
        sim.step(dt, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_the_same_run_twice_is_bit_identical(method):
    a, b = cloth(), cloth()
    _steps(a, method, 100)
    _steps(b, method, 100)
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.velocities, b.velocities)


@pytest.mark.parametrize("method", METHODS)
def test_threads_inside_a_step_change_no_bit_of_the_result(method):
    # fixed blocks summed in a fixed order: 1, 2 and 3 threads do the same arithmetic
    runs = []
    for threads in (1, 2, 3):
        sim = cloth(40)  # 4 vertex blocks and 3 spring blocks: every thread gets work
        sim.threads = threads
        sim.spheres = [[0.5, -0.3, 0.5, 0.3]]
        _steps(sim, method, 30, dt=1e-3)
        runs.append((sim.positions, sim.velocities))
    for positions, velocities in runs[1:]:
        np.testing.assert_array_equal(positions, runs[0][0])
        np.testing.assert_array_equal(velocities, runs[0][1])


def _fms_run_with_two_threads(_=None):
    sim = cloth(40)
    sim.threads = 2
    _steps(sim, "fms", 3, dt=1 / 60)
    return sim.positions


@pytest.mark.skipif(sys.platform != "linux", reason="fork is Linux's multiprocessing default")
def test_a_forked_child_of_a_threaded_parent_steps_instead_of_hanging():
    # libgomp's thread pool does not survive fork(): msim runs such a child on one thread
    import multiprocessing

    parent = _fms_run_with_two_threads()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        child = pool.map_async(_fms_run_with_two_threads, [0]).get(timeout=60)[0]
    np.testing.assert_array_equal(child, parent)


@pytest.mark.parametrize("value,error,message", [
    (0, ValueError, r"threads: expected an integer in \[1, 1024\], got 0"),
    (2.0, TypeError, r"threads: expected an integer, got float"),
    (True, TypeError, r"threads: expected an integer, got bool"),
    (2**80, ValueError, r"threads: expected an integer in \[1, 1024\], got 1208925819614629174706176"),
])
def test_bad_thread_counts_are_rejected_and_change_nothing(value, error, message):
    with pytest.raises(error, match=message):
        msim.System(np.zeros((2, 3)), [[0, 1]], threads=value)
    sim = cloth()
    with pytest.raises(error, match=message):
        sim.threads = value
    assert sim.threads == 1
    assert sim.copy().threads == 1 and msim.System(**sim.parameters()).threads == 1


def test_runs_in_threads_equal_serial_runs():
    serial = [cloth() for _ in range(2)]
    for s in serial:
        _steps(s, "symplectic_euler", 300)
    threaded = [cloth() for _ in range(2)]
    workers = [threading.Thread(target=_steps, args=(s, "symplectic_euler", 300))
               for s in threaded]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for s, t in zip(serial, threaded):
        np.testing.assert_array_equal(s.positions, t.positions)


def test_two_threads_stepping_one_system_are_serialised():
    # every step does the same arithmetic, so 2 x 300 interleaved steps equal 600 serial ones,
    # and whatever a reader sees meanwhile is the serial run's state at some step, bit for bit:
    # a torn state (positions of one step with velocities of another, or half-swapped arrays)
    # matches none of them
    serial, shared = cloth(), cloth()
    states = [(serial.positions, serial.velocities, serial.energy()["total"])]
    for _ in range(600):
        serial.step(1e-3, method="symplectic_euler")
        states.append((serial.positions, serial.velocities, serial.energy()["total"]))
    energies = {e for _, _, e in states}
    assert len(energies) == 601  # each step's energy tells its state apart
    seen_energy, seen_state = [], []

    def read():
        for _ in range(300):
            seen_energy.append(shared.energy()["total"])  # one snapshot under the lock
            # positions and velocities are two reads: a pair taken while no step finished
            # (the step count did not move) is one state
            k, x, v = shared.steps, shared.positions, shared.velocities
            if shared.steps == k:
                seen_state.append((k, x, v))

    workers = [threading.Thread(target=_steps, args=(shared, "symplectic_euler", 300))
               for _ in range(2)] + [threading.Thread(target=read)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert shared.steps == 600
    np.testing.assert_array_equal(shared.positions, serial.positions)
    assert len(seen_energy) == 300 and all(e in energies for e in seen_energy)
    assert seen_state  # some pairs were read between steps
    for k, x, v in seen_state:
        np.testing.assert_array_equal(x, states[k][0])
        np.testing.assert_array_equal(v, states[k][1])


def test_reference_counts_of_arguments_are_unchanged():
    mesh = msim.mesh.cloth_grid(4, 4)
    v, e, m = mesh.vertices, mesh.edges, np.full(16, 0.02)
    counts = [sys.getrefcount(a) for a in (v, e, m)]
    for _ in range(100):
        sim = msim.System(v, e, mass=m)
        sim.positions = v
        with pytest.raises(ValueError):
            msim.System(v, e, mass=-m)
        with pytest.raises(ValueError):
            sim.velocities = m
        del sim
    assert [sys.getrefcount(a) for a in (v, e, m)] == counts


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif("MSIM_SANITIZERS" in os.environ, reason="sanitizers hold freed memory")
def test_memory_stays_flat_over_many_steps_and_systems():
    sim = cloth(4)
    _steps(sim, "symplectic_euler", 2000)
    mesh = msim.mesh.cloth_grid(10, 10)
    for _ in range(50):
        msim.System(mesh.vertices, mesh.edges).step(1e-3, method="symplectic_euler")
    before = _rss_kib()
    _steps(sim, "symplectic_euler", 100_000)
    for _ in range(1000):
        msim.System(mesh.vertices, mesh.edges).step(1e-3, method="symplectic_euler")
    assert _rss_kib() - before < 2048  # KiB: a leak of one 100-vertex system each would be ~10 MiB


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 6), data=st.data())
def test_random_input_returns_or_raises_a_documented_exception(n, data):
    floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
    vertices = np.array(data.draw(st.lists(st.lists(floats, min_size=3, max_size=3),
                                           min_size=n, max_size=n)), dtype=float).reshape(n, 3)
    edges = np.array(data.draw(st.lists(st.lists(st.integers(-1, n), min_size=2, max_size=2),
                                        max_size=8)), dtype=np.int64).reshape(-1, 2)
    kwargs = {
        "mass": data.draw(st.one_of(floats, st.just(1.0))),
        "stiffness": data.draw(st.one_of(floats, st.just(10.0))),
        "damping": data.draw(st.one_of(st.floats(-1, 10), st.just(0.0))),
    }
    try:
        sim = msim.System(vertices, edges, **kwargs)
    except (ValueError, TypeError):
        return
    method = data.draw(st.sampled_from(METHODS))
    dt = data.draw(st.one_of(st.floats(-1, 1), st.just(1e-3)))
    before = sim.get_state()
    try:
        for _ in range(5):
            sim.step(dt, method=method)
    except (ValueError, TypeError):
        np.testing.assert_array_equal(sim.positions, before["positions"])
    except msim.Error:
        pass
    assert np.all(np.isfinite(sim.positions))


def _kick(sim):
    """External forces (n, 3) [N]: 1e15 N on vertex 5, enough to carry it past the
    divergence bound (1e10 m) within one step of 1/30 s in every method."""
    forces = np.zeros((sim.n_vertices, 3))
    forces[5] = [1e15, 0, 0]
    return forces


@pytest.mark.parametrize("method", METHODS)
def test_divergence_is_detected_in_every_method_and_the_state_kept(method):
    sim = cloth(4)
    sim.external_forces = _kick(sim)
    before = sim.get_state()
    with pytest.raises(msim.DivergenceError) as err:
        sim.step(1 / 30, method=method)
    assert err.value.step == 0 and 0 <= err.value.vertex < sim.n_vertices
    after = sim.get_state()
    np.testing.assert_array_equal(after["positions"], before["positions"])
    np.testing.assert_array_equal(after["velocities"], before["velocities"])


@pytest.mark.parametrize("method", METHODS)
def test_coincident_vertices_and_zero_rest_lengths_make_no_nan(method):
    sim = msim.System(np.zeros((3, 3)), [[0, 1], [1, 2]], rest_lengths=[0.0, 0.0], fixed=[0])
    for _ in range(3):
        sim.step(1e-3, method=method)
    assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))


def test_duplicate_springs_act_as_parallel_springs():
    # documented: a spring listed twice is two springs, i.e. twice the stiffness
    mesh = msim.mesh.rope(4)
    twice = msim.System(mesh.vertices, np.concatenate([mesh.edges, mesh.edges]), fixed=[0])
    double = msim.System(mesh.vertices, mesh.edges, stiffness=2000.0, fixed=[0])
    for method in METHODS:
        # XPBD projects each copy in turn: the same as one of twice the stiffness once its
        # sweeps converge (ten of them), not after its default one per substep
        options = {"iterations": 10, "substeps": 1} if method == "xpbd" else {}
        a, b = twice.copy(), double.copy()
        for _ in range(5):
            a.step(1e-3, method=method, **options)
            b.step(1e-3, method=method, **options)
        np.testing.assert_allclose(a.positions, b.positions, rtol=0, atol=1e-12)


def test_the_core_prints_nothing(capfd):
    sim = cloth(4)
    sim.positions = sim.positions * [1, 1, 0.2]  # compressed: indefinite without a fix
    with pytest.raises(msim.NotPositiveDefiniteError):
        sim.step(1.0, method="implicit_euler", spd="none", max_iterations=1)
    sim.external_forces = _kick(sim)
    with pytest.raises(msim.DivergenceError):
        sim.step(1e-3, method="fms")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("method", ["explicit_euler", "symplectic_euler", "velocity_verlet"])
def test_the_first_diverged_vertex_is_reported_by_either_check(method):
    # 1e15 N on vertex 5 alone: Euler's kick sends only vertex 5 past the bound (its
    # neighbours' forces were taken before it moved); velocity Verlet's second half-kick sees
    # vertex 5 already ~1e13 m out, so its free spring neighbours gain |v| ~ h k |x_5| / m and
    # the first diverged vertex is the lowest of 5 and those neighbours. Without colliders the
    # kick's last pass checks the state; with a sphere (far from the cloth) contact friction
    # comes after the kick and the step checks it
    for sphere in (np.zeros((0, 4)), [[0.0, -100.0, 0.0, 1.0]]):
        sim = cloth(4)
        sim.spheres = sphere
        sim.external_forces = _kick(sim)
        ends = sim.edges[np.any(sim.edges == 5, axis=1)].ravel()
        expected = 5
        if method == "velocity_verlet":
            expected = min(set(ends.tolist()) - set(sim.fixed.tolist()))
        with pytest.raises(msim.DivergenceError) as err:
            sim.step(1 / 30, method=method)
        assert err.value.vertex == expected


@pytest.mark.parametrize("method", METHODS)
def test_a_divergence_advises_the_method_that_failed(method):
    sim = cloth(4)
    sim.external_forces = _kick(sim)
    with pytest.raises(msim.DivergenceError) as err:
        sim.step(1 / 30, method=method)
    advice = str(err.value).split("the state is left as it was before the step. ")[1]
    limit = msim.scenes.stability_limit(sim, method)
    if method == "explicit_euler":  # undamped: unstable at every dt (the limit is 0)
        assert limit == 0 and "damping" in advice
    elif np.isfinite(limit):  # the explicit family: the step below which it is stable
        assert f"stable below dt = {limit!r} s" in advice and 1 / 30 > limit
    else:  # stable at every dt: never told to switch to a method like itself
        assert advice.startswith(f"{method} is stable at every dt on a linear mode")
        assert "an implicit method" not in advice
