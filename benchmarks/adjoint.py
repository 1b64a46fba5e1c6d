"""The backward pass of a run (msim.adjoint) against its forward pass, on the benchmark cloth.

    python -m benchmarks.adjoint [--n 30] [--steps 50] [--repeats 3] [--json out.json]

An n x n cloth (benchmarks.run's: 1 kg, k = 1000 N/m, two corners pinned) falls for `steps`
steps under implicit Euler (Newton to tol = 1e-6 N, h = 0.01 s: at 1/30 s the falling cloth's
Newton needs 20-100 iterations a step), fms with 10 iterations and no tol (unrolled, h = 0.01 s)
and symplectic Euler (h = 1/omega_bound, half its stability limit). Printed per
method: the run without a tape (forward), the run that keeps one (adjoint=True), the backward
pass of a loss on every frame's positions, their ratio backward / forward, and the memory the
tape keeps per state (positions and velocities, 48 n bytes, steps + 1 states) and, for the
unrolled fms, the iterates held while one step is reversed (24 n (iterations + 1) bytes).
Each time is the fastest of `repeats` (the machine is shared). Figures, never verdicts.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from msim.adjoint import AdjointWarning

from .run import cloth, explicit_dt

FMS_ITERATIONS = 10
# method -> (options, dt or None for the explicit step)
IMPLICIT_DT = 0.01  # [s]
METHODS = {
    "implicit_euler": ({"tol": 1e-6, "iterations": 100}, IMPLICIT_DT),
    "fms": ({"iterations": FMS_ITERATIONS}, IMPLICIT_DT),
    "symplectic_euler": ({}, None),
}


def fastest(fn, repeats: int) -> tuple[float, object]:
    """(smallest wall time of `repeats` calls of fn() [s], the last call's result)."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def measure(n: int, steps: int, method: str, repeats: int) -> dict:
    """One method's forward, taped and backward times [s] and memory [bytes/step]."""
    options, dt = METHODS[method]
    sim = cloth(n)
    dt = dt or explicit_dt(sim)
    forward, _ = fastest(lambda: sim.copy().simulate(steps, dt, method, **options), repeats)
    taped, traj = fastest(
        lambda: sim.copy().simulate(steps, dt, method, adjoint=True, **options), repeats)
    adj = np.random.default_rng(0).standard_normal(traj.positions.shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AdjointWarning)
        backward, _ = fastest(lambda: traj.backward(positions=adj), repeats)
    tape = traj.tape
    kept = sum(a.nbytes for a in tape.positions + tape.velocities) / len(tape.positions)
    held = 24 * sim.n_vertices * (FMS_ITERATIONS + 1) if method == "fms" else 0
    return {"method": method, "n": n, "vertices": sim.n_vertices, "steps": steps, "dt": dt,
            "forward": forward, "taped": taped, "backward": backward,
            "ratio": backward / forward, "tape_bytes_per_state": kept,
            "iterates_bytes": held, "unconverged_warnings": len(caught)}


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = ["| method | dt [s] | forward [ms] | with tape [ms] | backward [ms] | "
             "backward / forward | tape [bytes/state] | iterates held [bytes] |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['dt']:.3g} | {1e3 * r['forward']:.1f} | "
                     f"{1e3 * r['taped']:.1f} | {1e3 * r['backward']:.1f} | {r['ratio']:.2f} | "
                     f"{r['tape_bytes_per_state']:.0f} | {r['iterates_bytes'] or '-'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=30, help="cloth vertices per side")
    parser.add_argument("--steps", type=int, default=50, help="steps of each run")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure (fastest)")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    rows = [measure(args.n, args.steps, method, args.repeats) for method in METHODS]
    print(f"{args.n} x {args.n} cloth ({args.n ** 2} vertices), {args.steps} steps, one thread")
    print(table(rows))
    for r in rows:
        if r["unconverged_warnings"]:
            print(f"{r['method']}: some steps missed tol (AdjointWarning)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
