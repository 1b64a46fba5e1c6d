"""FMS on a 100x100 cloth: msim (C, CHOLMOD) against NumPy/SciPy (SuperLU), as a Markdown table.

    python -m benchmarks.bench_fms [--n 100] [--iterations 50] [--repeats 5]

The cloth is cloth_grid(n, n) with structural, shear and bending springs, pinned at two corners,
h = 1/30 s, a few steps into its fall. Rows:

* setup: building the scalar matrix M + h^2 L over the free vertices, its analysis and numeric
  factorisation (msim: `_fms_kernel("setup")`; SciPy: assembly and splu).
* per iteration: one full FMS iteration as `step` runs it, i.e. local step, three-column solve
  and the history (g and |grad g|, two more passes over the springs); measured as the
  difference between steps of `iterations` and 1 iterations, divided by `iterations - 1`, so
  y, the velocity update and the first history entry cancel. SciPy: `FMSReference.iterate`
  (local step and solve, no history).
* bare local + solve: the floor of one iteration, one pass over the springs writing the
  right-hand sides plus one n x 3 CHOLMOD solve (`_fms_kernel("local")` + `("solve")`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import msim
from benchmarks import ref_fms
from msim.methods import resolve

H = 1 / 30


def cloth(n: int) -> msim.System:
    """The benchmark cloth, five steps into its fall."""
    mesh = msim.mesh.cloth_grid(n, n, size=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=1.0 / n**2, stiffness=1000.0,
                      fixed=[0, n - 1])
    for _ in range(5):
        sim.step(H, "fms", iterations=10)
    return sim


def best(fn, repeats: int) -> float:
    """Smallest wall time of `repeats` calls of fn() [s]."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(n: int, iterations: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Row name -> (msim seconds, SciPy seconds)."""
    sim = cloth(n)
    core = resolve("fms", {})
    setup = min(sim._fms_kernel(H, "setup", 1, **core) for _ in range(repeats))
    local = min(sim._fms_kernel(H, "local", 20, **core) for _ in range(repeats)) / 20
    solve = min(sim._fms_kernel(H, "solve", 20, **core) for _ in range(repeats)) / 20
    # step on copies that have already factorised, so no setup is in the difference
    warm = sim.copy()
    warm.step(H, "fms", iterations=1)
    state = warm.get_state()

    def run(k: int) -> float:
        warm.set_state(state)
        return warm.step(H, "fms", iterations=k).seconds

    per_iteration = (min(run(iterations) for _ in range(repeats))
                     - min(run(1) for _ in range(repeats))) / (iterations - 1)

    problem = ref_fms.step_problem(sim, H)
    scipy_setup = best(lambda: ref_fms.FMSReference(problem), repeats)
    reference = ref_fms.FMSReference(problem)
    x = problem.y.copy()
    scipy_iteration = best(lambda: reference.iterate(x), repeats)
    rhs = np.ascontiguousarray(reference.My)
    scipy_solve = best(lambda: reference.lu.solve(rhs), repeats)
    return {
        "setup (analysis + factorisation)": (setup, scipy_setup),
        "one FMS iteration": (per_iteration, scipy_iteration),
        "bare local step + n x 3 solve": (local + solve, None),
        "  of which the n x 3 solve": (solve, scipy_solve),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sim = cloth(args.n)
    print(f"cloth {args.n}x{args.n}: {sim.n_vertices} vertices, {sim.n_springs} springs, "
          f"h = 1/30 s, CHOLMOD {msim.cholmod_version()}\n")
    print("| | msim [ms] | NumPy/SciPy [ms] | SciPy / msim |")
    print("|---|---:|---:|---:|")
    for name, (ours, theirs) in measure(args.n, args.iterations, args.repeats).items():
        other = f"{1e3 * theirs:.2f}" if theirs is not None else "-"
        ratio = f"{theirs / ours:.1f}" if theirs is not None else "-"
        print(f"| {name} | {1e3 * ours:.2f} | {other} | {ratio} |")


if __name__ == "__main__":
    main()
