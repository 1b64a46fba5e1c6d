"""The benchmark harness runs and reports what it promises (no timing is asserted)."""

import json

import pytest

from benchmarks import run


# the methods the harness has a step choice and a NumPy/SciPy twin for; rk4, velocity_verlet,
# implicit_midpoint and bdf2 have neither there yet (it steps every method but the two Euler
# ones at 1/30 s, where rk4 diverges on its cloth), so the harness runs without them
BENCHMARKED = sorted(set(run.msim.METHODS)
                     - {"rk4", "velocity_verlet", "implicit_midpoint", "bdf2"})


@pytest.mark.parametrize("n,threads", [(8, 1), (24, 2)])  # 24^2: three vertex blocks
def test_harness_writes_rows_for_every_method(tmp_path, capsys, n, threads):
    path = tmp_path / "bench.json"
    args = ["--sizes", str(n), "--steps", "1", "--summary", "0", "--no-peers", "--json",
            str(path), "--threads", str(threads), "--methods", *BENCHMARKED]
    assert run.main(args) == 0
    out = json.loads(path.read_text())
    assert out["threads"] == threads
    methods = {r["method"] for r in out["rows"]}
    assert methods == set(BENCHMARKED)
    for r in out["rows"]:
        assert r["vertices"] == n * n and r["step"] > 0
        # every method but XPBD has a NumPy/SciPy twin timed beside it, and the twin's step
        # from the timed state lands where msim's does (a 1 m cloth: round-off is ~1e-13 m)
        assert (r["reference"] is None) == (r["method"] == "xpbd")
        assert (r["agreement"] is None) == (r["method"] == "xpbd")
        assert r["agreement"] is None or r["agreement"] < 1e-9, r
    split = {r["method"] for r in out["rows"] if r["split"]}
    assert split == {"implicit_euler", "linearized_implicit"}
    assert "| method |" in capsys.readouterr().out


def test_the_explicit_benchmark_step_keeps_symplectic_euler_stable():
    # h = 1/omega_bound <= 1/omega_max is half the stability limit 2/omega_max: the run stays
    # bounded, while four times that step (past the limit) diverges
    sim = run.cloth(8)
    h = run.explicit_dt(sim)
    traj = sim.copy().simulate(3000, h, "symplectic_euler", record_every=100)
    assert traj.diverged is None and abs(traj.energies["total"]).max() < 1.0
    fast = sim.copy().simulate(3000, 4 * h, "symplectic_euler", on_divergence="stop")
    assert fast.diverged is not None


def test_the_taichi_peer_computes_what_msim_computes():
    import os

    import numpy as np

    if "MSIM_SANITIZERS" in os.environ:
        pytest.skip("Taichi's LLVM does not load under AddressSanitizer")
    pytest.importorskip("taichi")
    from benchmarks import peers

    sim = run.cloth(8)
    h = run.explicit_dt(sim)
    step = peers.taichi_symplectic(sim, h)
    for _ in range(50):
        step()
        sim.step(h, "symplectic_euler")
    positions = step.positions()
    peers.release()
    np.testing.assert_allclose(positions, sim.positions, atol=1e-12)
