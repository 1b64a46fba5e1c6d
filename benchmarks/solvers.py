"""Solvers of one implicit Euler step compared by accuracy against wall time.

    python -m benchmarks.solvers [--n 100] [--warmup 10] [--target 1e-4] [--repeats 3]
                                 [--solvers newton fms lbfgs] [--threads 1]

The scene is benchmarks/run.py's cloth (n x n, 1 kg, k = 1000 N/m, two corners pinned) after
`warmup` implicit Euler steps of h = 1/30 s solved to |grad g| < 1e-8 N, so the cloth is
falling and folding. From that state each solver minimises the next step's
g(x) = |x - y|_M^2 / (2 h^2) + E(x); the relative error (g(x_k) - g*) / |g*| of its iterate
x_k is measured against g*, the lowest g of a long L-BFGS run (window 20, 4000 iterations). The step is timed with the iteration cap set to k (fastest of
`repeats` runs after one that builds the solver's factors), so times include everything a
step does. Newton runs with its line search (spd='clamp', refactorised every iteration); FMS
and L-BFGS reuse the factor of M + h^2 L. Nothing is asserted: the numbers belong to the
machine they ran on.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import msim

from .run import cloth

H = 1 / 30
CAPS = {"newton": [1, 2, 3, 4, 6, 8, 12], "fms": [1, 10, 100, 1000, 3000, 10000],
        "lbfgs": [1, 10, 30, 100, 200, 300, 500]}


def options(solver: str, cap: int) -> dict:
    """The implicit_euler options of `solver` capped at `cap` iterations, no tolerance."""
    extra = {"line_search": True} if solver == "newton" else {}
    return {"solver": solver, "iterations": cap, **extra}


def timed_step(sim: msim.System, state: dict, opts: dict, repeats: int) -> tuple[float, object]:
    """The fastest of `repeats` steps from `state` with `opts` [s], after one untimed step,
    and that step's info (the untimed one's when repeats is 0)."""
    sim.set_state(state)
    best, info = np.inf, sim.step(H, "implicit_euler", **opts)
    for _ in range(repeats):
        sim.set_state(state)
        t0 = time.perf_counter()
        step = sim.step(H, "implicit_euler", **opts)
        if time.perf_counter() - t0 < best:
            best, info = time.perf_counter() - t0, step
    return best, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--target", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--solvers", nargs="+", default=list(CAPS))
    args = parser.parse_args(argv)

    sim = cloth(args.n, args.threads)
    for _ in range(args.warmup):
        sim.step(H, "implicit_euler", iterations=50, tol=1e-8, line_search=True)
    state = sim.get_state()
    sim.set_state(state)
    g_star = sim.step(H, "implicit_euler", solver="lbfgs", window=20, iterations=4000).objectives
    g_star = float(g_star.min())
    print(f"{args.n}x{args.n} cloth, step {args.warmup + 1} at h = 1/30 s: g* = {g_star:.12g} J")

    reached = {}
    for solver in args.solvers:
        # the first iterate within the target, from one long run, then that step timed
        _, info = timed_step(sim, state, options(solver, CAPS[solver][-1]), 0)
        rel = (info.objectives - g_star) / abs(g_star)
        hit = np.flatnonzero(rel <= args.target)
        caps = sorted(set(CAPS[solver]) | ({int(hit[0])} if hit.size else set()))
        print(f"\n{solver}: iterations, ms, relative error in g, solve / factor ms")
        for cap in caps:
            if cap > info.iterations:
                break
            seconds, step = timed_step(sim, state, options(solver, cap), args.repeats)
            t = step.timings
            mark = "  <- target" if hit.size and cap == hit[0] else ""
            print(f"  {cap:5d} {seconds * 1e3:9.1f} {rel[cap]:11.3e} "
                  f"{t['solve'] * 1e3:9.1f} {t['factor'] * 1e3:9.1f}{mark}")
            if mark:
                reached[solver] = (cap, seconds)
    print(f"\nrelative error {args.target:g} in g reached:")
    for solver in args.solvers:
        cap, seconds = reached.get(solver, (None, None))
        print(f"  {solver:7s}" + (f" after {cap} iterations, {seconds * 1e3:.1f} ms" if cap
                                   else " not within the caps"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
