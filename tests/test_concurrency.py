"""Concurrency as users meet it: Systems stepping in Python threads, fork-based process pools
(msim.sweep, ProcessPoolExecutor) after the parent stepped, Dask, and locks held at a fork.

Every comparison is bit for bit against a serial run in one thread: each step's arithmetic is
fixed, so any difference is a race.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import msim
import builders

# one option set per method, with the direct solvers where the method has them
RUNS = {
    "explicit_euler": (1e-3, {}),
    "symplectic_euler": (1e-3, {}),
    "implicit_euler": (1 / 60, {"max_iterations": 2}),
    "linearized_implicit": (1 / 60, {"solver": "direct"}),
    "fms": (1 / 60, {"iterations": 5}),
    "xpbd": (1 / 60, {"iterations": 5}),
}
needs_fork = pytest.mark.skipif(sys.platform != "linux", reason="fork is Linux's default start")


def cloth(n: int, seed: int = 0) -> msim.System:
    """An n x n, 1 m cloth of 1 kg pinned at two corners, at rest in a shape jittered by
    1 mm (`seed`)."""
    return builders.cloth(n, mass=1.0 / n**2, stiffness=1000.0, jitter=1e-3, seed=seed,
                          jitter_rest=True)


def advance(sims: list[msim.System], method: str, steps: int) -> None:
    """Step each System of `sims` in turn, `steps` times."""
    dt, options = RUNS[method]
    for _ in range(steps):
        for sim in sims:
            sim.step(dt, method, **options)


def in_threads(groups: list[list[msim.System]], method: str, steps: int) -> None:
    """advance() every group of Systems in its own Python thread; re-raise the first error."""
    errors = []

    def work(sims):
        try:
            advance(sims, method, steps)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(g,)) for g in groups]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("method", sorted(RUNS))
def test_systems_in_threads_step_exactly_as_in_one_thread(method):
    # 3 threads x 2 Systems each, 24x24 cloths: CHOLMOD's supernodal factorisations run in
    # three threads at once, where a BLAS that is unsafe for concurrent calls gives wrong
    # positions or a false NotPositiveDefiniteError
    groups = [[cloth(24, seed=2 * t), cloth(24, seed=2 * t + 1)] for t in range(3)]
    serial = [[s.copy() for s in g] for g in groups]
    for g in serial:
        advance(g, method, 8)
    in_threads(groups, method, 8)
    for g, s in zip(groups, serial):
        for a, b in zip(g, s):
            np.testing.assert_array_equal(a.positions, b.positions)
            np.testing.assert_array_equal(a.velocities, b.velocities)


def _run_script(code: str, timeout: float = 120, env: dict | None = None) -> str:
    """Run `code` in a fresh interpreter and return its output; a hang fails the test instead
    of blocking the suite (its whole process group, forked children included, is killed)."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"still running after {timeout} s (a hang): {out} {err}")
    assert proc.returncode == 0, err
    return out


SERIAL_OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/openblas-serial")


@pytest.mark.skipif(not SERIAL_OPENBLAS.exists(), reason="Debian's serial OpenBLAS not installed")
def test_the_single_threaded_openblas_is_serialised_and_still_right():
    # the serial OpenBLAS keeps one unlocked buffer pool: msim detects it and serialises its
    # supernodal CHOLMOD calls; threaded runs still equal serial ones
    out = _run_script(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import msim, numpy as np
        from test_concurrency import cloth, advance, in_threads
        groups = [[cloth(24, seed=t)] for t in range(3)]
        serial = [[g[0].copy()] for g in groups]
        for g in serial:
            advance(g, "implicit_euler", 6)
        in_threads(groups, "implicit_euler", 6)
        same = all(np.array_equal(g[0].positions, s[0].positions) for g, s in zip(groups, serial))
        print(msim._core.blas_serialised(), same)
    """, env={"LD_PRELOAD": " ".join([os.environ.get("LD_PRELOAD", "")] + [  # sanitizers first
        str(SERIAL_OPENBLAS / lib) for lib in ("libopenblas.so.0", "libblas.so.3", "liblapack.so.3")])})
    assert out.split() == ["True", "True"]


def one_implicit_step(k: float = 1000.0) -> float:
    """A 20x20 cloth after one implicit Euler step: its lowest height [m] (module level, so
    process pools can pickle it)."""
    sim = cloth(20)
    sim.stiffness = k
    sim.step(1 / 30, "implicit_euler")
    return float(sim.positions[:, 1].min())


def threaded_fms_step(k: float = 1000.0) -> float:
    """One FMS step of a 40x40 cloth on two threads: its lowest height [m]."""
    sim = cloth(40)
    sim.threads = 2
    sim.stiffness = k
    sim.step(1 / 30, "fms")
    return float(sim.positions[:, 1].min())


@needs_fork
@pytest.mark.parametrize("parent_run", [one_implicit_step, threaded_fms_step])
def test_sweep_and_process_pools_finish_after_the_parent_stepped(parent_run):
    # CHOLMOD's and msim's OpenMP regions in the parent leave libgomp's pool behind, which a
    # forked child does not have; the child's CHOLMOD factorisations must not wait for it
    out = _run_script(f"""
        import sys, concurrent.futures as cf, multiprocessing
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import msim
        from test_concurrency import {parent_run.__name__} as parent_run, one_implicit_step
        parent_run(500.0)
        rows = msim.sweep(one_implicit_step, {{"k": [500.0, 1000.0]}})
        pool = cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
        with pool:
            again = pool.submit(one_implicit_step, 500.0).result()
        expected = one_implicit_step(500.0)
        print(rows[0]["result"] == expected == again, rows[1]["result"] != expected)
    """, timeout=60)
    assert out.split() == ["True", "True"]


@needs_fork
@pytest.mark.skipif("MSIM_SANITIZERS" in os.environ,
                    reason="GCC 12's AddressSanitizer allocator is not fork-safe: a child forked "
                           "while another thread is in malloc (CHOLMOD's solve) waits on its lock")
def test_a_child_forked_while_another_thread_held_a_systems_lock_can_use_it():
    # a thread steps a System while the main thread forks: in the child the lock's owner does
    # not exist; the child renews the lock and steps from the state before that step
    out = _run_script(f"""
        import sys, os, threading, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import numpy as np, msim
        from test_concurrency import cloth
        sim = cloth(8)
        before = sim.positions
        started = threading.Event()
        # a step of about 1.5 s without the GIL, whatever this build's speed (sanitizers)
        rate = 2000 / sim.copy().step(1 / 60, "fms", iterations=2000).seconds

        def long_step():
            started.set()
            sim.step(1 / 60, "fms", iterations=int(1.5 * rate))

        worker = threading.Thread(target=long_step)
        worker.start()
        started.wait()
        time.sleep(0.3)
        pid = os.fork()
        if pid == 0:
            ok = np.array_equal(sim.positions, before) and sim.steps == 0
            sim.step(1 / 60, "fms")
            os._exit(0 if ok and sim.steps == 1 else 1)
        _, status = os.waitpid(pid, 0)
        worker.join()
        print(os.waitstatus_to_exitcode(status), sim.steps)
    """, timeout=60)
    assert out.split() == ["0", "1"]


@needs_fork
def test_process_pool_results_equal_serial_ones():
    expected = [one_implicit_step(k) for k in (300.0, 900.0)]
    ctx = multiprocessing.get_context("fork")
    with cf.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        got = list(pool.map(one_implicit_step, (300.0, 900.0)))
    assert got == expected


def test_sweep_on_a_dask_local_cluster_equals_serial_runs():
    distributed = pytest.importorskip("distributed")
    grid = {"k": [300.0, 900.0]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        rows = msim.sweep(one_implicit_step, grid, executor=client.get_executor())
    assert [r["k"] for r in rows] == grid["k"]
    assert [r["result"] for r in rows] == [one_implicit_step(k) for k in grid["k"]]


def test_snapshots_taken_while_another_thread_steps_are_states_that_existed():
    # one thread takes bdf2 steps; another takes get_state(), copy() and pickle snapshots of
    # the same System. Each snapshot must be the state after exactly `steps` steps: positions,
    # velocities and the history one step back from the same step (bdf2 builds its step from
    # both), as a serial run records them bit for bit
    import pickle

    dt, steps = 1 / 60, 120
    serial = cloth(12, seed=5)
    states = [serial.get_state()]
    for _ in range(steps):
        serial.step(dt, "bdf2")
        states.append(serial.get_state())
    sim = cloth(12, seed=5)
    done = threading.Event()

    def stepper():
        for _ in range(steps):
            sim.step(dt, "bdf2")
        done.set()

    takes = [lambda: sim.get_state(), lambda: sim.copy().get_state(),
             lambda: pickle.loads(pickle.dumps(sim)).get_state()]
    thread = threading.Thread(target=stepper)
    thread.start()
    seen = 0
    while not done.is_set() or seen < 30:
        snapshot = takes[seen % 3]()
        expected = states[snapshot["steps"]]
        for key, value in expected.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(snapshot[key], value, err_msg=f"{key} at step "
                                              f"{snapshot['steps']} (snapshot {seen})")
            else:
                assert snapshot[key] == value, key
        seen += 1
    thread.join()
