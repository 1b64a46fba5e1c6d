"""Ctrl-C (SIGINT, what Jupyter's stop button sends) stops a long step within a fraction of a
second and leaves the System exactly as it was before that step; simulate and sweep give back
what they finished."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import msim
import builders

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery by os.kill")

# options that make one step run for about 10 s on a 2-core machine: far longer than the
# interrupt's 0.5 s, yet a step that misses it ends, and the test fails, rather than hanging
LONG_STEPS = {
    "fms": {"iterations": 300_000},
    "xpbd": {"iterations": 50_000},
    "implicit_euler": {"max_iterations": 8_000},
    "linearized_implicit": {"solver": "jacobi", "max_iterations": 600_000, "tol": 0.0},
}


@pytest.fixture(autouse=True)
def python_handles_ctrl_c():
    """Ctrl-C as an interactive session or a Jupyter kernel has it: Python's own SIGINT handler.
    A shell starts a background job with SIGINT ignored, and Python then leaves it ignored, so
    a suite run as `pytest &` would otherwise test nothing here (and hang on the simulate)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def cloth(n: int = 16) -> msim.System:
    """An n x n cloth of 1 kg and 1000 N/m springs pinned at two corners, three steps into its
    fall."""
    sim = builders.cloth(n, mass=1 / n**2, stiffness=1000.0)
    sim.simulate(3, 1 / 60, "implicit_euler")  # moving, so every method has work to do
    return sim


def interrupt_after(seconds: float) -> list[float]:
    """Send this process SIGINT after `seconds`; the list receives the time it was sent."""
    sent: list[float] = []

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(seconds, fire).start()
    return sent


def signal_state() -> str:
    """What decides whether SIGINT reaches Python: its handler, and the threads alive."""
    return (f"SIGINT handler {signal.getsignal(signal.SIGINT)!r}, threads "
            f"{[t.name for t in threading.enumerate()]}")


@pytest.mark.parametrize("method", sorted(LONG_STEPS))
def test_ctrl_c_stops_a_long_step_soon_and_keeps_the_state(method):
    sim = cloth()
    before = sim.get_state()
    started = time.perf_counter()
    sent = interrupt_after(0.5)
    try:
        sim.step(1 / 60, method, **LONG_STEPS[method])
    except KeyboardInterrupt:
        latency = time.perf_counter() - sent[0]
    else:
        pytest.fail(f"{method} ran its step to the end ({time.perf_counter() - started:.1f} s) "
                    f"through Ctrl-C sent at {sent[0] - started if sent else None} s: "
                    f"{signal_state()}")
    assert latency < 0.5, f"{method} noticed Ctrl-C after {latency:.2f} s: {signal_state()}"
    after = sim.get_state()
    np.testing.assert_array_equal(after["positions"], before["positions"])
    np.testing.assert_array_equal(after["velocities"], before["velocities"])
    assert (after["time"], after["steps"]) == (before["time"], before["steps"])
    # the System steps on as if nothing happened: the same as an untouched copy
    twin = sim.copy()
    sim.step(1 / 60, method)
    twin.step(1 / 60, method)
    np.testing.assert_array_equal(sim.positions, twin.positions)


def test_interrupted_simulate_gives_back_the_frames_it_recorded():
    sim = cloth()
    start = sim.steps
    sent = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt) as caught:
        sim.simulate(10**9, 1 / 60, "fms", iterations=200)
    assert sent
    traj = caught.value.trajectory
    frames = len(traj.times)
    assert frames >= 2 and len(traj.seconds) == frames - 1
    # a step that finished as the interrupt came stays taken, unrecorded
    unrecorded = sim.steps - start - len(traj.seconds)
    assert unrecorded in (0, 1)
    assert traj.times[-1] == pytest.approx(sim.time - unrecorded / 60, abs=1e-12)
    if unrecorded == 0:
        np.testing.assert_array_equal(traj.positions[-1], sim.positions)


def slow_square(x: float) -> float:
    time.sleep(0.3)
    return x * x


def test_interrupted_sweep_cancels_the_runs_not_started():
    started = time.perf_counter()
    sent = interrupt_after(0.8)
    with cf.ThreadPoolExecutor(1) as pool, pytest.raises(KeyboardInterrupt) as caught:
        msim.sweep(slow_square, {"x": list(range(40))}, executor=pool)
    assert sent and time.perf_counter() - started < 3.0  # 40 runs would take 12 s
    rows = caught.value.results
    assert 1 <= len(rows) < 40
    assert all(r["result"] == r["x"] ** 2 for r in rows)


def test_a_signal_handler_that_uses_the_interrupted_system_gets_an_error_not_a_deadlock():
    # the handler runs inside the step's interrupt check, on the thread that holds the
    # System's lock: touching that System must raise, not wait for itself
    sim = cloth()
    before = sim.get_state()

    def handler(signum, frame):
        sim.energy()

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        with pytest.raises(RuntimeError, match="in use by a step on this thread"):
            sim.step(1 / 60, "fms", **LONG_STEPS["fms"])
    finally:
        signal.signal(signal.SIGUSR1, previous)
    np.testing.assert_array_equal(sim.positions, before["positions"])
    assert sim.steps == before["steps"] and np.isfinite(sim.energy()["total"])
