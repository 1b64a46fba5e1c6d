"""Vertex block descent (solver="vbd") against Newton on the benchmark cloth.

    python -m benchmarks.vbd [--n 100] [--frames 2] [--sweeps 3000] [--plot vbd.png]
                             [--repeats 5]

From the state `frames` implicit Euler steps (h = 1/30 s) into the fall of benchmarks.run's
n x n cloth (1 kg, k = 1000 N/m, two corners pinned), one step's g is minimised by Newton
(clamped Hessian, line search) and by VBD with and without Chebyshev acceleration. Printed:
the relative error in g, (g_k - g*) / (g_0 - g*) (Liu et al. 2013's measure), each solver
reaches within a wall-time budget, g* being the lowest g any run reached; where VBD's time goes
(the sweeps against the |grad g| and g history every sweep); and the speed of VBD's sweeps on
two threads over one, `repeats` times alternately (the machine is shared: the spread matters).
Times are per iteration (a step's wall time over its iterations) times the iteration count.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from msim.experiments import relative_error

from .run import H, cloth

BUDGETS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # [s]


def state(n: int, frames: int):
    """The cloth `frames` Newton steps into its fall."""
    sim = cloth(n)
    for _ in range(frames):
        sim.step(H, "implicit_euler", line_search=True, tol=1e-7, iterations=40)
    return sim


def runs(sim, sweeps: int, newton: int) -> dict:
    """label -> (objectives (k+1,), seconds per iteration, StepInfo) of one step from sim."""
    options = {
        "newton": {"line_search": True, "iterations": newton},
        "vbd": {"solver": "vbd", "iterations": sweeps},
        "vbd chebyshev 0.9": {"solver": "vbd", "iterations": sweeps,
                              "acceleration": "chebyshev", "rho": 0.9},
        "vbd chebyshev 0.95": {"solver": "vbd", "iterations": sweeps,
                               "acceleration": "chebyshev", "rho": 0.95},
    }
    out = {}
    for label, opts in options.items():
        info = sim.copy().step(H, "implicit_euler", **opts)
        out[label] = (info.objectives, info.seconds / info.iterations, info)
    return out


def threads_speed(n: int, frames: int, sweeps: int, repeats: int) -> list[float]:
    """Seconds of `sweeps` VBD sweeps on one thread over two, `repeats` times alternately."""
    base = state(n, frames)
    ratios = []
    for _ in range(repeats):
        seconds = {}
        for threads in (1, 2):
            sim = base.copy()
            sim.threads = threads
            seconds[threads] = sim.step(H, "implicit_euler", solver="vbd",
                                        iterations=sweeps).timings["solve"]
        ratios.append(seconds[1] / seconds[2])
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--sweeps", type=int, default=3000)
    parser.add_argument("--newton", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plot", default=None, help="PNG of relative error against time")
    args = parser.parse_args(argv)

    sim = state(args.n, args.frames)
    results = runs(sim, args.sweeps, args.newton)
    g_star = min(float(np.min(g)) for g, _, _ in results.values())
    print(f"{args.n} x {args.n} cloth, frame {args.frames}, h = 1/30 s; g* = {g_star:.10g} J")
    print("relative error in g reached within a wall-time budget [s]:")
    print("solver".ljust(20) + "".join(f"{b:>10g}" for b in BUDGETS) + "   ms/iter  final |grad g|")
    curves = {}
    for label, (g, per, info) in results.items():
        error = relative_error(g, g_star)
        times = per * np.arange(len(g))
        curves[label] = (times, error)
        cells = []
        for b in BUDGETS:
            k = np.searchsorted(times, b, side="right") - 1
            cells.append(f"{error[k]:10.3g}" if k >= 1 else f"{'-':>10}")
        print(label.ljust(20) + "".join(cells) + f"{1e3 * per:10.3g}  {info.residuals[-1]:.3g}")

    plain = results["vbd"][2]
    print(f"\nVBD's time: {plain.seconds:.3g} s for {plain.iterations} sweeps; sweeps "
          f"{plain.timings['solve']:.3g} s ({100 * plain.timings['solve'] / plain.seconds:.0f} %),"
          f" the rest is the |grad g| and g of every sweep")

    ratios = threads_speed(args.n, args.frames, 200, args.repeats)
    print(f"VBD sweeps, threads=2 over threads=1 (200 sweeps, {args.repeats} alternating runs): "
          + " ".join(f"{r:.2f}" for r in ratios)
          + f"; median {statistics.median(ratios):.2f}, min {min(ratios):.2f}, "
            f"max {max(ratios):.2f}")

    if args.plot:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, (times, error) in curves.items():
            keep = (error > 0) & (times > 0)
            ax.loglog(times[keep], error[keep], label=label)
        ax.set_xlabel("wall time [s]")
        ax.set_ylabel("relative error in g")
        ax.set_title(f"one implicit Euler step, {args.n} x {args.n} cloth, h = 1/30 s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
