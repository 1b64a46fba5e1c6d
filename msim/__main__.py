"""Command line: `python -m msim demo` (see `python -m msim --help`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from . import scenes
from .methods import METHODS
from .system import Trajectory


# (method, dt, options) rows of the demo: each method at a step it is known for
DEMO_RUNS: list[tuple[str, float, dict]] = [
    ("explicit_euler", 1e-3, {}),
    ("explicit_euler", 1e-4, {}),
    ("symplectic_euler", 1e-3, {}),
    ("implicit_euler", 1 / 30, {}),
    ("linearized_implicit", 1 / 30, {"solver": "cg"}),
    ("fms", 1 / 30, {"iterations": 10}),
    ("xpbd", 1 / 30, {"iterations": 10, "substeps": 10}),  # 1 substep: 80% strain
]


def demo(out: Path, seconds: float = 2.0) -> list[Trajectory]:
    """Simulate a 20x20 cloth pinned at two corners with each demo method for `seconds`.

    Prints a table (method, dt, steps, wall seconds, final energy) and writes energy.png and
    frame.png into `out`.
    """
    plot = _headless_plot()
    cloth = scenes.hanging_cloth(20)
    runs = []
    print(f"20x20 cloth, {cloth.system.n_springs} springs, pinned at vertices 0 and 19, "
          f"{seconds:g} s simulated\n")
    print("| method | dt [s] | steps | wall [s] | final energy [J] |")
    print("|---|---|---|---|---|")
    for method, dt, options in DEMO_RUNS:
        sim = cloth.system.copy()
        steps = int(round(seconds / dt))
        traj = sim.simulate(steps, dt, method, record_every=max(1, steps // 200),
                            on_divergence="stop", **options)
        runs.append(traj)
        final = (f"diverged at step {traj.diverged}" if traj.diverged is not None
                 else f"{traj.energies['total'][-1]:.4f}")
        print(f"| {method} | {dt:g} | {len(traj.seconds)} | {traj.seconds.sum():.4f} | {final} |")

    out.mkdir(parents=True, exist_ok=True)
    _energy_figure(plot, runs, "20x20 cloth: total energy").savefig(out / "energy.png", dpi=120)
    best = next(r for r in runs if r.method == "fms")  # damped by implicit Euler: it hangs
    fig = plot.frame(best.positions[-1], cloth.faces, fixed=[0, 19],
                     title=f"{best.method}, t = {best.times[-1]:.2f} s")
    fig.savefig(out / "frame.png", dpi=120)
    print(f"\nwrote {out / 'energy.png'}\nwrote {out / 'frame.png'}")
    return runs


def _headless_plot():
    """msim.plot on matplotlib's file-only backend (the commands run without a screen)."""
    import matplotlib

    matplotlib.use("Agg")
    from . import plot

    return plot


def _energy_figure(plot, runs: list[Trajectory], title: str):
    """Total energy of `runs` with a title, on limits that clip a diverging run."""
    fig = plot.energy(runs)
    fig.axes[0].set_title(title)
    fig.axes[0].set_ylim(*_robust_limits(runs))
    return fig


def _robust_limits(runs: list[Trajectory]) -> tuple[float, float]:
    """Energy axis limits that show the stable runs and clip a diverging one."""
    stable = np.concatenate([r.energies["total"] for r in runs if r.diverged is None])
    lo, hi = stable.min(), stable.max()
    pad = 0.2 * (hi - lo + 1e-9)
    return lo - pad, hi + pad


def compare_cli(methods: list[str], dt: float | None, steps: int | None, seconds: float,
                size: int, out: Path):
    """Compare methods on a size x size cloth released from horizontal, pinned at two
    corners: print the table, save the energy plot; return its Figure.

    dt None: each method at its step in DEMO_RUNS (with the demo's options); steps None:
    as many as make `seconds`.
    """
    from .compare import compare

    plot = _headless_plot()
    own = {method: (step, options) for method, step, options in DEMO_RUNS}  # last row wins
    runs = [(m, own[m][1]) for m in methods]
    dts = {m: own[m][0] if dt is None else dt for m in methods}
    counts = {m: steps if steps is not None else max(1, int(round(seconds / dts[m])))
              for m in methods}
    sim = scenes.hanging_cloth(size).system
    table, trajectories = compare(sim, runs, steps=counts, dt=dts, return_trajectories=True)
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    fig = _energy_figure(plot, trajectories,
                         f"{size}x{size} cloth released from horizontal: total energy")
    fig.savefig(out / "compare_energy.png", dpi=120)
    print(f"\nwrote {out / 'compare_energy.png'}")
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m msim", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="simulate a pinned 20x20 cloth, print a table, save PNGs")
    p.add_argument("--out", type=Path, default=Path("msim-demo"), help="output folder")
    p.add_argument("--seconds", type=float, default=2.0, help="simulated time [s]")
    p = sub.add_parser("compare", help="compare methods on a cloth released from horizontal, "
                       "pinned at two corners; print a table, save an energy plot")
    p.add_argument("methods", nargs="+", choices=sorted(METHODS), help="methods to run")
    p.add_argument("--dt", type=float, default=None,
                   help="time step [s] (default: each method's step in the demo)")
    p.add_argument("--seconds", type=float, default=3.0, help="simulated time [s]")
    p.add_argument("--steps", type=int, default=None,
                   help="steps per method (default: as many as make --seconds)")
    p.add_argument("--size", type=int, default=20, help="cloth vertices per side")
    p.add_argument("--out", type=Path, default=Path("msim-compare"), help="output folder")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.out, args.seconds)
    elif args.command == "compare":
        compare_cli(args.methods, args.dt, args.steps, args.seconds, args.size, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
