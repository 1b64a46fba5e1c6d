"""msim against the same algorithms in NumPy/SciPy, on cloths of growing size.

    python -m benchmarks.run [--sizes 32 64 100 200] [--methods fms ...] [--quick]
                             [--json results.json] [--plot time.png] [--scale]
                             [--threads 2]

Every row times one method on cloth_grid(n, n) (structural, shear and bending springs, 1 kg
in all, k = 1000 N/m, pinned at two corners), h = 1/30 s for the implicit methods and, for the
explicit ones, h = 1/omega_max (half the symplectic limit, omega_max from Gershgorin's bound
on M^-1 K). msim and the reference run in the same process on the same state:

* explicit_euler, symplectic_euler: msim.reference.explicit (vectorised NumPy);
* implicit_euler (one Newton iteration) and linearized_implicit (solver="direct"): the same
  Newton / Baraff-Witkin system assembled with SciPy sparse and solved by SuperLU set up as a
  Cholesky (symmetric ordering, diagonal pivots: msim.reference.implicit.spd_lu); msim assembles 3x3
  blocks and factorises with CHOLMOD (supernodal LL^T, AMD);
* fms (10 iterations): msim.reference.fms.FMSReference, spd_lu factor of M + h^2 L computed
  once and reused, three-column solves, g every iteration; msim also records g and |grad g|;
* xpbd: Gauss-Seidel is sequential, so it has no vectorised NumPy twin: msim only.

Peer libraries (pyPBD, Warp, scikit-sparse, Taichi) are compared in benchmarks/peers.py.

Columns: setup = the first step's extra time (CHOLMOD analysis and factorisation); ms/step =
fastest of the timed steps; ms/iter = per iteration where the method iterates; ref ms/step and
ref / msim = the reference and the ratio; max dx = the largest difference between msim's and
the reference's positions after one step from the same state (the correctness oracle).
"""

from __future__ import annotations

import argparse
import json
import resource
import threading
import time
from pathlib import Path
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

import msim
from msim.scenes import EXPLICIT

from msim.reference import fms as ref_fms
from msim.reference import implicit as ref_implicit
from msim.reference.explicit import ExplicitReference


H = 1 / 30
# the NumPy/SciPy twins start from y and take Newton's full step; XPBD's ten sweeps in one
# substep are what pyPBD and the earlier tables time
OPTIONS = {"implicit_euler": {"start": "inertial", "line_search": False},
           "linearized_implicit": {"solver": "direct"},
           "fms": {"iterations": 10, "start": "inertial"}, "xpbd": {"iterations": 10, "substeps": 1}}
ITERATIVE = {"fms", "xpbd", "implicit_euler"}  # rows with a time per iteration


@dataclass
class Row:
    """One method on one cloth; seconds, None where not measured."""

    method: str
    n: int
    vertices: int
    springs: int
    dt: float
    setup: float
    step: float
    iteration: float | None
    reference: float | None
    split: dict[str, float] | None = None  # CHOLMOD methods: assemble / factor / solve [s]
    agreement: float | None = None  # max |x_msim - x_ref| after one step from one state [m]

    @property
    def ratio(self) -> float | None:
        return self.reference / self.step if self.reference else None


def cloth(n: int, threads: int = 1) -> msim.System:
    """The benchmark cloth: n x n vertices, 1 kg, k = 1000 N/m, two corners pinned."""
    mesh = msim.mesh.cloth_grid(n, n)
    return msim.System(mesh.vertices, mesh.edges, mass=1.0 / n**2, stiffness=1000.0,
                       fixed=[0, n - 1], threads=threads)


def explicit_dt(sim: msim.System) -> float:
    """1 / omega_max with omega_max^2 <= max_i 2 sum_(springs at i) k / m_i (Gershgorin)."""
    load = np.bincount(sim.edges.ravel(), np.repeat(sim.stiffness, 2), sim.n_vertices)
    return 1.0 / np.sqrt(np.max(2 * load / sim.mass))


def best(fn: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of `repeats` calls of fn() [s]."""
    return timed(fn, repeats)[0]


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """(smallest wall time of `repeats` calls of fn() [s], what the first call returned)."""
    times, results = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        results.append(fn())
        times.append(time.perf_counter() - start)
    return min(times), results[0]


def reference_step(sim: msim.System, method: str, dt: float) -> Callable[[], tuple] | None:
    """A callable doing one step of `method` in NumPy/SciPy from sim's state and returning a
    tuple whose first item is the new positions (n,3) [m], or None. The explicit methods' twin
    keeps its own state: its first call starts from sim's, later calls step on."""
    x, v = sim.positions, sim.velocities
    model = dict(mass=sim.mass, edges=sim.edges, k=sim.stiffness, rest=sim.rest_lengths,
                 fixed=sim.fixed)
    if method in ("explicit_euler", "symplectic_euler"):
        ref = ExplicitReference(x, v, sim.edges, sim.stiffness, sim.rest_lengths, sim.mass,
                                sim.fixed, sim.gravity, sim.damping)

        def explicit() -> tuple[np.ndarray, np.ndarray]:
            ref.step(dt, method)
            return ref.x, ref.v

        return explicit
    if method == "implicit_euler":
        return lambda: ref_implicit.implicit_euler(x, v, dt, gravity=sim.gravity, **model)
    if method == "linearized_implicit":
        return lambda: ref_implicit.linearized_implicit(x, v, dt, gravity=sim.gravity, **model)
    if method == "fms":
        reference = ref_fms.FMSReference(ref_fms.step_problem(sim, dt))
        return lambda: reference.solve(OPTIONS["fms"]["iterations"])
    return None


def measure(method: str, n: int, steps: int, with_reference: bool, threads: int = 1) -> Row:
    """Time `steps` steps of `method` on the n x n cloth, after one warm-up step."""
    sim = cloth(n, threads)
    # explicit methods at half their stability limit (2/omega for the Euler methods and
    # Verlet, 2 sqrt 2/omega for RK4), the others at the implicit methods' step
    dt = explicit_dt(sim) * EXPLICIT[method] / 2 if method in EXPLICIT else H
    options = OPTIONS.get(method, {})
    first = sim.step(dt, method, **options).seconds
    infos = [sim.step(dt, method, **options) for _ in range(steps)]
    if min(info.seconds for info in infos) < 0.005:  # cheap steps: more tries against noise
        infos += [sim.step(dt, method, **options) for _ in range(20 * steps)]
    fastest = min(infos, key=lambda info: info.seconds)
    step = fastest.seconds
    iterations = fastest.iterations if method in ITERATIVE else None
    reference = agreement = None
    if with_reference and (fn := reference_step(sim, method, dt)) is not None:
        twin = sim.copy()
        twin.step(dt, method, **options)
        # the cheap explicit references get as many tries as msim; the SciPy solves three
        repeats = steps if method in ("explicit_euler", "symplectic_euler") else min(steps, 3)
        reference, result = timed(fn, max(1, repeats))
        agreement = float(np.abs(result[0] - twin.positions).max())
    return Row(method, n, sim.n_vertices, sim.n_springs, dt, max(first - step, 0.0), step,
               step / iterations if iterations else None, reference,
               dict(fastest.timings) if any(fastest.timings.values()) else None, agreement)


def fms_floor(n: int, threads: int = 1, repeats: int = 20) -> tuple[float, float]:
    """(one FMS iteration as step runs it, bare local step + one n x 3 solve) [s]."""
    sim = cloth(n, threads)
    sim.step(H, "fms", iterations=10)
    local = min(sim._fms_kernel(H, "local", repeats) for _ in range(3)) / repeats
    solve = min(sim._fms_kernel(H, "solve", repeats) for _ in range(3)) / repeats
    state = sim.get_state()

    def run(k: int) -> float:
        sim.set_state(state)
        return sim.step(H, "fms", iterations=k).seconds

    per_iteration = (min(run(51) for _ in range(3)) - min(run(1) for _ in range(3))) / 50
    return per_iteration, local + solve


def threads_speedup(n: int, steps: int) -> float:
    """Throughput of two threads stepping two Systems over one thread stepping one."""
    systems = [cloth(n) for _ in range(2)]

    def work(sim: msim.System) -> None:
        for _ in range(steps):
            sim.step(H, "fms", iterations=10)

    one = best(lambda: work(systems[0]), 2)

    def both() -> None:
        workers = [threading.Thread(target=work, args=(s,)) for s in systems]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    return 2 * one / best(both, 2)


def summary(rows: list[Row], n: int, threads: int = 1) -> list[tuple[str, str]]:
    """Headline measurements on the n x n cloth as (what, measured): one FMS iteration against
    its floor (a bare spring pass plus one n x 3 solve), msim's speed-up over NumPy/SciPy for
    FMS, Newton and symplectic Euler, and the throughput of two Systems stepped in two threads
    (one thread per System) over one."""
    at = {r.method: r for r in rows if r.n == n}
    iteration, floor = fms_floor(n, threads)
    out = [("one FMS iteration / (n x 3 solve + spring pass)",
             f"{1e3 * iteration:.2f} ms / {1e3 * floor:.2f} ms = {iteration / floor:.2f}")]
    for method, label in [("fms", "FMS, 10 iterations"), ("implicit_euler", "one Newton iteration"),
                          ("symplectic_euler", "a symplectic step")]:
        row = at.get(method)
        if row is not None and row.ratio is not None:
            out.append((f"{label}: NumPy/SciPy time / msim time", f"{row.ratio:.1f}"))
    speedup = threads_speedup(n, 20)
    out.append(("two Systems in two threads: throughput / one", f"{speedup:.2f}"))
    return out


def scale(n: int = 1000, steps: int = 2, threads: int = 1) -> dict:
    """FMS on an n x n cloth: time per iteration and peak resident memory."""
    start = time.perf_counter()
    sim = cloth(n, threads)
    build = time.perf_counter() - start
    first = sim.step(H, "fms", iterations=10).seconds
    later = [sim.step(H, "fms", iterations=10).seconds for _ in range(steps - 1)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    return {"n": n, "vertices": sim.n_vertices, "springs": sim.n_springs, "build_s": build,
            "first_step_s": first, "step_s": min(later) if later else first,
            "iteration_s": (min(later) if later else first) / 10, "peak_rss_gib": peak}


def growth(rows: list[Row], method: str) -> float | None:
    """Exponent p of seconds per step ~ vertices^p, fitted over the sizes run."""
    pts = [(r.vertices, r.step) for r in rows if r.method == method]
    if len(pts) < 2:
        return None
    v, s = np.log(np.array(pts)).T
    return float(np.polyfit(v, s, 1)[0])


def cell(value: float | None, spec: str = ".3g", scale: float = 1.0) -> str:
    """value * scale formatted with spec, or '-' for None."""
    return "-" if value is None else f"{scale * value:{spec}}"


def markdown(columns: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table; the first `left` columns aligned left, the others right."""
    rule = ["---"] * left + ["---:"] * (len(columns) - left)
    return "\n".join("| " + " | ".join(line) + " |" for line in [columns, rule, *rows])


def table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    columns = ["method", "n", "springs", "dt [s]", "setup [ms]", "ms/step", "ms/iter",
               "ref ms/step", "ref / msim", "max dx [m]"]
    return markdown(columns, [
        [r.method, f"{r.n}^2", str(r.springs), f"{r.dt:.3g}", cell(r.setup, scale=1e3),
         cell(r.step, scale=1e3), cell(r.iteration, scale=1e3), cell(r.reference, scale=1e3),
         cell(r.ratio, ".1f"), cell(r.agreement, ".1g")] for r in rows])


def split_table(rows: list[Row]) -> str:
    """Markdown table of the assembly / factorisation / solve split of the CHOLMOD steps."""
    lines = ["| method | n | assemble [ms] | factor [ms] | solve [ms] | other [ms] |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.split:
            parts = [r.split[k] for k in ("assemble", "factor", "solve")]
            cells = " | ".join(f"{1e3 * p:.3g}" for p in parts + [r.step - sum(parts)])
            lines.append(f"| {r.method} | {r.n}^2 | {cells} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def plot(rows: list[Row], path: str) -> None:
    """Log-log seconds per step against vertex count, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.8), layout="constrained")
    for method in dict.fromkeys(r.method for r in rows):
        pts = sorted((r.vertices, r.step, r.reference) for r in rows if r.method == method)
        line, = ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"msim {method}")
        ref = [(p[0], p[2]) for p in pts if p[2]]
        if ref:
            ax.loglog(*zip(*ref), "x--", color=line.get_color(), label=f"NumPy/SciPy {method}")
    ax.set_xlabel("vertices")
    ax.set_ylabel("seconds per step")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left")
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 100, 200])
    parser.add_argument("--methods", nargs="+", choices=sorted(msim.METHODS),
                        default=sorted(msim.METHODS))
    parser.add_argument("--quick", action="store_true", help="sizes 32 and 64, 2 steps")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per row")
    parser.add_argument("--reference-max", type=int, default=100,
                        help="largest n on which the slow SciPy Newton references run")
    parser.add_argument("--summary", type=int, default=100, metavar="N",
                        help="headline speeds and ratios on the N x N cloth (0: skip)")
    parser.add_argument("--json", default=str(Path(__file__).with_name("results.json")),
                        help="write the results here ('' : nowhere)")
    parser.add_argument("--plot", default=None, help="save a log-log plot here")
    parser.add_argument("--scale", action="store_true", help="also run FMS on 1000 x 1000")
    parser.add_argument("--threads", type=int, default=1,
                        help="System.threads of the msim rows (results do not depend on it)")
    args = parser.parse_args(argv)
    sizes, steps = ([32, 64], 2) if args.quick else (args.sizes, args.steps)

    print(f"msim {msim.__version__}, CHOLMOD {msim.cholmod_version()}, h = 1/30 s "
          f"(explicit: 1/omega_max), threads = {args.threads}\n")
    rows = []
    for n in sizes:
        for method in args.methods:
            slow_ref = method in ("implicit_euler", "linearized_implicit") and n > args.reference_max
            rows.append(measure(method, n, steps, with_reference=not slow_ref,
                                threads=args.threads))
    print(table(rows))
    if split := split_table(rows):
        print("\nwhere the time of a step goes (the symbolic analysis happens once, in setup):\n")
        print(split)
    exponents = {m: growth(rows, m) for m in args.methods}
    print("\ntime per step ~ vertices^p: " +
          ", ".join(f"{m} p = {p:.2f}" for m, p in exponents.items() if p is not None))

    headline = (summary(rows, args.summary, args.threads)
                if args.summary and args.summary in sizes else [])
    if headline:
        print(f"\non the {args.summary} x {args.summary} cloth:")
    for name, measured in headline:
        print(f"  {name}: {measured}")
    big = scale(threads=args.threads) if args.scale else None
    if big:
        print(f"\n1000 x 1000 FMS: {big['iteration_s'] * 1e3:.0f} ms per iteration, "
              f"first step {big['first_step_s']:.1f} s, peak RSS {big['peak_rss_gib']:.2f} GiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "rows": [asdict(r) | {"ratio": r.ratio} for r in rows],
                       "growth": exponents, "scale": big,
                       "summary": [{"name": n, "measured": m} for n, m in headline]},
                      f, indent=1)
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
