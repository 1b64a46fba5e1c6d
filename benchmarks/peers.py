"""msim against the libraries a user would otherwise pick, interleaved in one process.

    python -m benchmarks.peers [--sizes 32 100 200] [--threads 1] [--tries 7] [--json out.json]

The cloth: cloth_grid(n, n, bending=False) (structural and both shear diagonals), 1 m, 1 kg,
k = 1000 N/m, pinned at two corners; h = 1/omega_max for symplectic Euler, 1/30 s otherwise.
Each row builds msim's System and the peer from the same state, then alternates: a batch of
msim steps, a batch of peer steps (batches last >= 20 ms), `tries` times; ms/step is the best
batch, noise the slower side's median batch over its best. ratio = peer / msim (above 1: msim
ahead). msim steps with history=False (no peer records per-iteration residuals). max dx: the largest difference between the peer's positions and msim's after the
same steps from the cloth at rest (10 steps; symplectic Euler 300, about 10 ms at 100^2);
against pyPBD, msim is given the springs in pyPBD's Gauss-Seidel order, while the timed
System keeps the grid order.

Peers (each optional: `pip install -e ".[peers]"`; a missing one is skipped with a note):
pyPBD (XPBD), NVIDIA Warp (symplectic Euler), scikit-sparse 0.4.16 (FMS and Newton), Taichi
(symplectic Euler). With --threads T (default 1): msim's System.threads = T; OpenMP (pyPBD's,
CHOLMOD's: OMP_THREAD_LIMIT, since CHOLMOD 3 names its own thread count), OpenBLAS (NumPy's,
SciPy's, CHOLMOD's: msim and scikit-sparse share the last) and Taichi get T threads; Warp's
CPU kernels always run on one thread.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

import msim

from .run import cell, explicit_dt, markdown

H = 1 / 30
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS")
CHECK_STEPS = {"symplectic_euler": 300}  # steps before the agreement check (others: 10)


@dataclass(frozen=True)
class Peer:
    """One peer row: msim's method and options, the peer's module and how it is built."""

    method: str
    options: dict
    name: str
    module: str  # under benchmarks., imports the peer library
    build: Callable[[Any, Any, float, int], Any]  # (module, sim, h, threads) -> peer


# each peer runs msim's algorithm as the peer does: XPBD's ten sweeps in one substep, FMS
# and Newton from y, Newton's full step
PEERS = [
    Peer("xpbd", {"iterations": 10, "substeps": 1},
         "pyPBD, XPBD distance constraints, Gauss-Seidel",
         "peer_pypbd", lambda mod, sim, h, t: mod.XPBD(sim, h, 10)),
    Peer("xpbd", {"iterations": 10, "substeps": 1, "sweep": "coloured"},
         "pyPBD, as above; msim's sweep='coloured', which threads share", "peer_pypbd",
         lambda mod, sim, h, t: mod.XPBD(sim, h, 10)),
    Peer("symplectic_euler", {}, "NVIDIA Warp, float64 kernels, CPU device", "peer_warp",
         lambda mod, sim, h, t: mod.Symplectic(sim, h)),
    Peer("fms", {"iterations": 10, "start": "inertial"},
         "NumPy + scikit-sparse CHOLMOD, prefactored",
         "peer_cholmod", lambda mod, sim, h, t: mod.FMS(sim, h, 10)),
    Peer("implicit_euler", {"start": "inertial", "line_search": False},
         "NumPy + scikit-sparse, analyse once, cholesky_inplace",
         "peer_cholmod", lambda mod, sim, h, t: mod.Newton(sim, h)),
    Peer("symplectic_euler", {}, "Taichi, f64, CPU", "peer_taichi",
         lambda mod, sim, h, t: mod.Symplectic(sim, h, t)),
]


@dataclass
class Result:
    """One peer on one cloth; seconds per step, None where the peer is not installed."""

    method: str
    peer: str
    n: int
    springs: int
    msim: float | None = None
    other: float | None = None
    noise: float | None = None  # slower side's median batch / best batch - 1
    agreement: float | None = None  # max |x_peer - x_msim| after the same steps [m]
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.other / self.msim if self.msim and self.other else None


def cloth(n: int, threads: int = 1, edges: np.ndarray | None = None) -> msim.System:
    """The peer cloth: n x n, 1 m, 1 kg, k = 1000 N/m, no bending, two corners pinned;
    `edges` reorders its springs."""
    mesh = msim.mesh.cloth_grid(n, n, bending=False)
    return msim.System(mesh.vertices, mesh.edges if edges is None else edges,
                       mass=1.0 / n**2, stiffness=1000.0, fixed=[0, n - 1], threads=threads)


def step_size(sim: msim.System, method: str) -> float:
    """1 / omega_max (Gershgorin bound on M^-1 K) for symplectic Euler, 1/30 s otherwise."""
    return explicit_dt(sim) if method == "symplectic_euler" else H


def load(peer: Peer) -> ModuleType | None:
    """The peer's module, or None when its library is not installed."""
    try:
        return import_module(f"benchmarks.{peer.module}")
    except ImportError:
        return None


def batch_time(fn: Callable[[], None], steps: int) -> float:
    """Wall seconds per call over `steps` calls of fn()."""
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def compare(peer: Peer, n: int, threads: int = 1, tries: int = 7) -> Result:
    """Time msim and `peer` interleaved on the n x n cloth, then check that they agree."""
    sim = cloth(n, threads)
    result = Result(peer.method, peer.name, n, sim.n_springs)
    module = load(peer)
    if module is None:
        result.note = f"not installed (benchmarks/{peer.module}.py could not import it)"
        return result
    h = step_size(sim, peer.method)
    other = peer.build(module, sim, h, threads)
    # no peer records per-iteration residuals or objectives, so msim records none either
    msim_step = lambda: sim.step(h, peer.method, history=False, **peer.options)
    msim_step(), other.step()  # warm-up: workspaces, factorisations, compilation
    steps = max(1, round(0.02 / batch_time(msim_step, 1)))
    mine, theirs = [], []
    for _ in range(tries):
        mine.append(batch_time(msim_step, steps))
        theirs.append(batch_time(other.step, steps))
    other.release()
    result.msim, result.other = min(mine), min(theirs)
    result.noise = max(statistics.median(t) / min(t) - 1 for t in (mine, theirs))
    result.agreement = agreement(peer, module, n, threads)
    return result


def agreement(peer: Peer, module: ModuleType, n: int, threads: int = 1) -> float:
    """max |x_peer - x_msim| [m] after CHECK_STEPS steps of both from the cloth at rest (an
    msim System with the peer's spring order where the peer has one: Gauss-Seidel's result
    depends on it)."""
    sim = cloth(n, threads)
    h = step_size(sim, peer.method)
    other = peer.build(module, sim, h, threads)
    if hasattr(other, "order"):
        sim = cloth(n, threads, sim.edges[other.order()])
    for _ in range(CHECK_STEPS.get(peer.method, 10)):
        other.step()
        sim.step(h, peer.method, **peer.options)
    dx = float(np.abs(other.positions() - sim.positions).max())
    other.release()
    return dx


def use_threads(threads: int) -> None:
    """Give every threaded library in the process `threads` threads: the environment for
    those that start later (pyPBD's own OpenMP), and the already loaded OpenMP (CHOLMOD's
    supernodal loops; msim's passes name their thread count) and OpenBLAS (CHOLMOD's BLAS,
    msim's and scikit-sparse's alike) through their calls. NumPy's and SciPy's bundled
    OpenBLAS read the environment only at start: run this module as a script, which starts
    itself again with the environment set."""
    os.environ.update(thread_environment(threads))
    for lib, call in [("libgomp.so.1", "omp_set_num_threads"),
                      ("libopenblas.so.0", "openblas_set_num_threads")]:
        try:
            getattr(ctypes.CDLL(lib), call)(threads)
        except (OSError, AttributeError):
            pass


def table(results: list[Result]) -> str:
    """Markdown table of the results, one row per peer and size."""
    columns = ["method", "peer", "n", "springs", "msim ms/step", "peer ms/step", "peer / msim",
               "noise", "max dx [m]"]
    return markdown(columns, [
        [r.method, r.peer + (f" ({r.note})" if r.note else ""), f"{r.n}^2", str(r.springs),
         cell(r.msim, scale=1e3), cell(r.other, scale=1e3), cell(r.ratio, ".2f"),
         cell(r.noise, ".0%"), cell(r.agreement, ".1g")] for r in results], left=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 100, 200])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tries", type=int, default=7, help="interleaved batches per side")
    parser.add_argument("--only", nargs="+", default=None, metavar="MODULE",
                        help="peer modules to run (peer_pypbd peer_warp peer_cholmod peer_taichi)")
    parser.add_argument("--json", default="", help="write the results here")
    args = parser.parse_args(argv)
    use_threads(args.threads)
    print(f"msim {msim.__version__}, CHOLMOD {msim.cholmod_version()}, threads = {args.threads}"
          f", best of {args.tries} interleaved batches\n")
    chosen = [p for p in PEERS if args.only is None or p.module in args.only]
    results = [compare(p, n, args.threads, args.tries) for n in args.sizes for p in chosen]
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"threads": args.threads,
             "results": [asdict(r) | {"ratio": r.ratio} for r in results]}, indent=1))
    return 0


def thread_environment(threads: int) -> dict[str, str]:
    """The environment for `threads` threads. Above one, idle OpenMP threads sleep instead of
    spinning (OMP_WAIT_POLICY=passive): two OpenMP runtimes (msim's and CHOLMOD's libgomp,
    pyPBD's own copy) and Taichi's pool share two cores here, and a spinning runtime takes the
    core the other side's next pass needs (msim's 100^2 symplectic step on two threads: 1.05
    ms spinning, 0.34 ms passive, with the machine busy)."""
    env = dict.fromkeys(THREAD_VARIABLES, str(threads))
    return env | ({"OMP_WAIT_POLICY": "passive"} if threads > 1 else {})


def restart_with_threads(argv: list[str]) -> None:
    """Start this script again in `thread_environment` of --threads (default 1) unless it
    already runs in it."""
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 1
    env = thread_environment(threads)
    if any(os.environ.get(name) != value for name, value in env.items()):
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.peers", *argv],
                  os.environ | env)


if __name__ == "__main__":
    restart_with_threads(sys.argv[1:])
    raise SystemExit(main())
