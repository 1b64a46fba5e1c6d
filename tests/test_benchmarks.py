"""The benchmark harness runs and reports what it promises (no timing is asserted)."""

import json
import os
import pathlib
import re

import numpy as np
import pytest

from benchmarks import ab, adjoint, peers, run, self_contact, solvers, vbd


# the methods with a NumPy/SciPy twin (and XPBD, which has none); rk4, velocity_verlet,
# implicit_midpoint and bdf2 have no twin yet
BENCHMARKED = sorted(set(run.msim.METHODS)
                     - {"rk4", "velocity_verlet", "implicit_midpoint", "bdf2"})


@pytest.mark.parametrize("n,threads", [(8, 1), (24, 2)])  # 24^2: three vertex blocks
def test_harness_writes_rows_for_every_method(tmp_path, capsys, n, threads):
    path = tmp_path / "bench.json"
    args = ["--sizes", str(n), "--steps", "1", "--summary", "0", "--json",
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


def skip_unless_loadable(peer):
    """Skip a peer whose library is missing, or that cannot load in this process."""
    if "MSIM_SANITIZERS" in os.environ and peer.module in ("peer_taichi", "peer_warp"):
        pytest.skip("Taichi's and Warp's LLVM do not load under AddressSanitizer")
    module = peers.load(peer)
    if module is None:
        pytest.skip(f"{peer.name}: not installed (pip install -e '.[peers]')")
    return module


@pytest.mark.parametrize("peer", peers.PEERS, ids=lambda p: f"{p.method}-{p.module}")
def test_each_installed_peer_lands_where_msim_does(peer):
    # the same steps from the same cloth in double precision on both sides: only round-off
    # separates them (a 1 m cloth: ~1e-15 m measured; FMS's and Newton's solves ~1e-12 m)
    module = skip_unless_loadable(peer)
    assert peers.agreement(peer, module, 8) < 1e-9


def test_xpbd_against_pypbd_needs_pypbds_spring_order():
    # Gauss-Seidel's result depends on the order it visits the springs: after 10 steps of 10
    # sweeps, pyPBD (colour groups) and msim (grid order) are centimetres apart, which is why
    # the agreement check gives msim pyPBD's order
    peer = next(p for p in peers.PEERS if p.module == "peer_pypbd")
    module = skip_unless_loadable(peer)
    sim = peers.cloth(8)
    other = peer.build(module, sim, peers.H, 1)
    for _ in range(10):
        other.step()
        sim.step(peers.H, "xpbd", iterations=10)
    dx = np.abs(other.positions() - sim.positions).max()
    other.release()
    assert dx > 1e-3


def test_peer_harness_reports_every_peer(tmp_path, capsys, monkeypatch):
    if "MSIM_SANITIZERS" in os.environ:
        pytest.skip("Taichi's and Warp's LLVM do not load under AddressSanitizer")
    monkeypatch.setattr(os, "environ", os.environ.copy())  # main sets thread variables
    path = tmp_path / "peers.json"
    assert peers.main(["--sizes", "8", "--tries", "1", "--json", str(path)]) == 0
    out = json.loads(path.read_text())["results"]
    assert [(r["method"], r["peer"]) for r in out] == [(p.method, p.name) for p in peers.PEERS]
    for r, peer in zip(out, peers.PEERS):
        if peers.load(peer) is None:
            assert r["other"] is None and "not installed" in r["note"]
        else:
            assert r["msim"] > 0 and r["other"] > 0 and r["agreement"] < 1e-9
    assert "| method | peer |" in capsys.readouterr().out


def test_solver_harness_reports_every_solver(tmp_path, capsys):
    path = tmp_path / "solvers.json"
    args = ["--n", "8", "--frames", "2", "--cap", "1000", "--repeats", "1", "--json", str(path)]
    assert solvers.main(args) == 0
    out = json.loads(path.read_text())
    rows = out["rows"]
    assert [(r["solver"], r["threads"]) for r in rows] == [(s, t) for s, _, t in solvers.SOLVERS]
    for r in rows:
        # a time and an iteration count for each target, or None where the cap came first
        assert len(r["reached"]) == len(solvers.TARGETS)
        points = [p for p in r["reached"] if p is not None]
        assert all(seconds > 0 and 1 <= k <= r["cap"] for seconds, k in points)
        # a tighter target never takes fewer iterations
        assert [k for _, k in points] == sorted(k for _, k in points)
    # on the small cloth Newton (line search), Anderson-accelerated FMS and L-BFGS reach every
    # target within their caps; plain FMS at least 1e-2
    by_name = {(r["solver"], r["threads"]): r for r in rows}
    for name in ("newton", "fms + anderson", "lbfgs"):
        assert None not in by_name[name, 1]["reached"], name
    assert by_name["fms", 1]["reached"][0] is not None
    assert "| solver | threads |" in capsys.readouterr().out


def test_the_vbd_benchmark_reports_every_solver_and_the_thread_ratios(capsys):
    assert vbd.main(["--n", "8", "--frames", "1", "--sweeps", "30", "--newton", "5",
                     "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    for label in ("newton", "vbd", "vbd chebyshev 0.9", "vbd chebyshev 0.95"):
        assert f"\n{label} " in out
    assert "threads=2 over threads=1" in out and "median" in out


def test_the_adjoint_benchmark_reports_every_method(tmp_path, capsys):
    path = tmp_path / "adjoint.json"
    assert adjoint.main(["--n", "6", "--steps", "3", "--repeats", "1", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())["rows"]
    assert [r["method"] for r in rows] == list(adjoint.METHODS)
    for r in rows:
        assert r["forward"] > 0 and r["backward"] > 0 and r["ratio"] > 0
        assert r["tape_bytes_per_state"] == 48 * 36  # positions and velocities, float64
    assert "| backward / forward |" in capsys.readouterr().out


def test_the_hanging_cloth_benchmark_times_both_steps_in_turn_over_each_window(capsys):
    self_contact.hanging(12, 2, seconds=1.0)
    lines = capsys.readouterr().out.splitlines()
    windows = ["swinging, steps 4-18", "crumpling, from step 21", "mean over 1 s"]
    assert len(lines) == len(windows) * len(self_contact.THREADS)
    for line, window in zip(lines, windows * len(self_contact.THREADS)):
        found = re.search(r"([0-9.]+) ms without self-contact, ([0-9.]+) ms with, "
                          r"ratio ([0-9.]+)", line)
        assert window in line and found, line
        without, with_, ratio = map(float, found.groups())
        # the printed times are rounded to 0.0005 ms and the ratio to 0.005: the ratio of the
        # unrounded times lies between the printed times' extreme ratios
        assert without > 0.0005 and with_ > 0
        low, high = (with_ - 0.0005) / (without + 0.0005), (with_ + 0.0005) / (without - 0.0005)
        assert low - 0.005 <= ratio <= high + 0.005, line


def test_the_build_comparison_steps_another_build_beside_this_one(tmp_path, capsys):
    # this checkout against itself: the copy is a package of its own, loaded from its own
    # extension file, and moves the cloth to the bit as this build does (else compare stops)
    other = ab.other_build(str(pathlib.Path(__file__).resolve().parents[1]), str(tmp_path))
    assert other.__name__ == "msim_other" and other.System is not run.msim.System
    assert pathlib.Path(other._core.__file__).parent == tmp_path / "msim_other"
    ab.compare(other, 12, 1, 2, seconds=1.0)
    lines = capsys.readouterr().out.splitlines()
    windows = ["swinging, steps 4-18", "crumpling, from step 21", "mean over 1 s"]
    assert len(lines) == len(windows)
    for line, window in zip(lines, windows):
        found = re.search(r"other build ([0-9.]+) ms without self-contact, ([0-9.]+) ms with it "
                          r"\(ratio ([0-9.]+)\); this build ([0-9.]+) ms, ([0-9.]+) ms \(ratio "
                          r"([0-9.]+)\); self-contact's cost under this build ([-+][0-9.]+) ms",
                          line)
        assert window in line and found, line
        plain0, touched0, ratio0, plain1, touched1, ratio1, difference = map(float, found.groups())
        assert plain0 > 0.0005 and plain1 > 0.0005, line
        # each figure is printed to 0.0005 (ms or ratio): the ratios and the difference must lie
        # within the range of what the printed times allow
        for plain, touched, ratio in ((plain0, touched0, ratio0), (plain1, touched1, ratio1)):
            assert ((touched - 5e-4) / (plain + 5e-4) - 5e-4 <= ratio
                    <= (touched + 5e-4) / (plain - 5e-4) + 5e-4), line
        assert abs((touched1 - plain1) - (touched0 - plain0) - difference) <= 0.003, line


def test_the_build_comparison_prints_each_builds_ratio_and_the_difference_of_their_costs(
        monkeypatch, capsys):
    # fixed step times [s] for the other build's plain and touched cloths and this build's:
    # each build's ratio to its own plain step (3 and 2.75), and what self-contact adds under
    # this build less what it adds under the other: (5.5 - 2) - (3 - 1) = +1.5 ms
    monkeypatch.setattr(self_contact, "in_turn", lambda sims, steps: np.outer(
        [1e-3, 3e-3, 2e-3, 5.5e-3], np.ones(steps)))
    ab.compare(run.msim, 6, 1, 1, seconds=1.0)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line in lines:
        assert line.endswith(": other build 1.000 ms without self-contact, 3.000 ms with it (ratio "
                             "3.000); this build 2.000 ms, 5.500 ms (ratio 2.750); self-contact's "
                             "cost under this build +1.500 ms"), line


def test_the_build_comparison_refuses_a_checkout_without_a_built_extension(tmp_path):
    (tmp_path / "msim").mkdir()
    with pytest.raises(SystemExit, match="build_ext --inplace"):
        ab.other_build(str(tmp_path), str(tmp_path / "copy"))
