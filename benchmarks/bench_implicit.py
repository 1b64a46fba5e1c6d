"""Time one implicit-Euler step of msim against a NumPy/SciPy Newton iteration.

    python -m benchmarks.bench_implicit [--n 100] [--steps 3]

An n x n cloth (structural, shear and bending springs) pinned at two corners, k = 1e4 N/m,
m = 0.01 kg, h = 1/30 s. msim's Newton step is split into assembly (gradient, Hessian blocks,
filling CHOLMOD's matrix), numeric factorisation (the symbolic analysis is done once, on the
first step, and shows up in that step's assembly) and triangular solves. The SciPy baseline
assembles the same system from benchmarks/reference.py and solves it with spsolve. Prints a
Markdown table. CHOLMOD's supernodal factorisation spends its time in BLAS: Debian's default
reference BLAS is several times slower than OpenBLAS, and the table prints which one ran.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse.linalg as spla

import msim
from benchmarks import ref_implicit
from benchmarks import reference as ref

H = 1 / 30


def cloth(n: int) -> msim.System:
    """The benchmark cloth, at rest in its flat shape."""
    mesh = msim.mesh.cloth_grid(n, n, size=1.0)
    return msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1e4, fixed=[0, n - 1])


def time_msim(n: int, steps: int, method: str, **options) -> tuple[dict, dict]:
    """Timings of the first step and the mean of `steps` later ones: phase -> seconds."""
    sim = cloth(n)
    first = sim.step(H, method, **options)
    infos = [sim.step(H, method, **options) for _ in range(steps)]

    def row(items: list[msim.StepInfo]) -> dict:
        out = {key: float(np.mean([i.timings[key] for i in items])) for key in items[0].timings}
        out["total"] = float(np.mean([i.seconds for i in items]))
        return out

    return row([first]), row(infos)


def time_scipy(n: int, steps: int) -> dict:
    """Mean seconds of assembling and solving one Newton iteration with SciPy."""
    sim = cloth(n)
    model = {"mass": sim.mass, "edges": sim.edges, "k": sim.stiffness,
             "rest": sim.rest_lengths, "fixed": sim.fixed}
    x, v = sim.positions, sim.velocities
    y = ref.inertial_target(x, v, H, sim.gravity, ref.fixed_mask(len(x), sim.fixed))
    assemble, solve = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        hess, grad = ref_implicit.newton_system(y, y, H, **model)
        t1 = time.perf_counter()
        spla.spsolve(hess, grad)
        t2 = time.perf_counter()
        assemble.append(t1 - t0)
        solve.append(t2 - t1)
    return {"assemble": float(np.mean(assemble)), "factor": float("nan"),
            "solve": float(np.mean(solve)),
            "total": float(np.mean(assemble) + np.mean(solve))}


def blas_libraries() -> str:
    """The BLAS libraries this process mapped outside site-packages (CHOLMOD's; Linux)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line}
    except OSError:
        return "unknown"
    return ", ".join(sorted(p for p in paths if "site-packages" not in p)) or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="cloth vertices per side")
    parser.add_argument("--steps", type=int, default=3, help="timed steps after the first")
    args = parser.parse_args()
    sim = cloth(args.n)
    print(f"{args.n}x{args.n} cloth: {sim.n_vertices} vertices, {sim.n_springs} springs, "
          f"h = 1/30 s, CHOLMOD {msim.cholmod_version()}\n")

    first, newton = time_msim(args.n, args.steps, "implicit_euler")
    rows = {
        "msim implicit_euler, first step (analysis in assemble)": first,
        "msim implicit_euler, 1 Newton iteration": newton,
        "msim linearized_implicit, direct": time_msim(args.n, args.steps, "linearized_implicit",
                                                      solver="direct")[1],
        "msim linearized_implicit, cg (tol 1e-8)": time_msim(args.n, args.steps,
                                                             "linearized_implicit")[1],
        "SciPy Newton iteration (spsolve, factor in solve)": time_scipy(args.n, args.steps),
    }
    print("| step | assemble [ms] | factor [ms] | solve [ms] | total [ms] |")
    print("|---|---:|---:|---:|---:|")
    for name, t in rows.items():
        cells = " | ".join("-" if np.isnan(t[k]) else f"{1e3 * t[k]:.1f}"
                           for k in ("assemble", "factor", "solve", "total"))
        print(f"| {name} | {cells} |")
    print(f"\nCHOLMOD's BLAS: {blas_libraries()}")
    scipy_total = rows["SciPy Newton iteration (spsolve, factor in solve)"]["total"]
    print(f"\nSciPy / msim per Newton iteration: {scipy_total / newton['total']:.1f}x")


if __name__ == "__main__":
    main()
