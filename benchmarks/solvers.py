"""Time to accuracy of the solvers of one implicit Euler step on the benchmark cloth.

    python -m benchmarks.solvers [--n 100] [--frames 1] [--cap 1000] [--newton-cap 100]
                                 [--repeats 5] [--json solvers.json]

The cloth of benchmarks/run.py (cloth_grid(n, n), 1 kg, k = 1000 N/m, pinned at two corners),
`frames` steps of h = 1/30 s into its fall (implicit Euler solved by Newton to |grad g| < 1e-6
N): one moving state that every solver starts from. For the next step and each solver
of g (`solver=` of implicit_euler, with its accelerations and System.threads), the seconds the
step takes to bring the relative error in g, (g_k - g*) / (g_0 - g*) (msim.accuracy.relative_error,
Liu et al. 2013), to 1e-2, 1e-4 and 1e-6. g*
(`minimum`) is the lower of the g reached by Newton with line search in 200 iterations and by
FMS with Anderson acceleration in 3000, both printed with their |grad g|: on the 100 x 100 cloth
Newton's clamped Hessian (no transverse stiffness for compressed springs) converges only
linearly near the minimum, and 200 iterations leave |grad g| near 1e-5 N. "not reached" when the
iteration cap comes first; a solver this build of msim does not have is reported as such.

How a time is taken (msim.accuracy.time_to_accuracy): one run at the cap gives the error after
every iteration; the first iteration k at or below a target is then run as a whole step capped
at k and timed in C (StepInfo.seconds, the smallest of `repeats`), after one untimed step from
the same state, so that what a System sets up once and reuses while h and the model stay the
same (CHOLMOD's symbolic analysis, FMS's factorisation) is not counted, as in a simulation.
The table reports figures only: the times belong to the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import msim
from msim.accuracy import time_to_accuracy
from msim.experiments import exact_step

from .run import H, cloth, markdown

TARGETS = (1e-2, 1e-4, 1e-6)

# label, step options, System.threads
SOLVERS = [
    ("newton", {"solver": "newton", "line_search": True}, 1),
    ("fms", {"solver": "fms"}, 1),
    ("fms + chebyshev", {"solver": "fms", "acceleration": "chebyshev"}, 1),
    ("fms + anderson", {"solver": "fms", "acceleration": "anderson"}, 1),
    ("lbfgs", {"solver": "lbfgs"}, 1),
    ("vbd", {"solver": "vbd"}, 1),
    # rho in the range the option's doc gives VBD on msim's cloths (0.99, the default, is FMS's)
    ("vbd + chebyshev", {"solver": "vbd", "acceleration": "chebyshev", "rho": 0.95}, 1),
    ("vbd", {"solver": "vbd"}, 2),
]


@dataclass
class Row:
    """One solver: (seconds, iterations) per target, None where not reached."""

    solver: str
    threads: int
    cap: int
    reached: list[tuple[float, int] | None]


ORACLES = {"Newton, 200 iterations": {"solver": "newton", "line_search": True, "iterations": 200},
           "FMS + Anderson, 3000 iterations": {"solver": "fms", "acceleration": "anderson",
                                               "iterations": 3000}}


def minimum(sim: msim.System) -> tuple[float, dict[str, tuple[float, float]]]:
    """(g* [J], {oracle: (g [J], |grad g| [N]) where it stopped}): the lowest g of the next
    step that ORACLES reach from sim's state (tol 1e-9 N; sim is not changed)."""
    found = {}
    for label, options in ORACLES.items():
        info = sim.copy().step(H, "implicit_euler", tol=1e-9, **options)
        found[label] = (float(info.objectives[-1]), float(info.residuals[-1]))
    return min(g for g, _ in found.values()), found


def measure(sim: msim.System, g_star: float, label: str, options: dict, threads: int,
            cap: int, repeats: int) -> Row:
    """Time to each of TARGETS for one solver from sim's state (sim is not changed)."""
    twin = sim.copy()
    twin.threads = threads
    reached = time_to_accuracy(twin, H, options, TARGETS, cap, g_star, repeats=repeats)
    return Row(label, threads, cap, reached)


def table(rows: list[Row]) -> str:
    """Markdown: per solver, the seconds (and iterations) to each target."""
    def cell(point: tuple[float, int] | None) -> str:
        return "not reached" if point is None else f"{point[0]:.3g} s ({point[1]})"

    columns = ["solver", "threads", "cap"] + [f"to {t:g}" for t in TARGETS]
    return markdown(columns, [
        [r.solver, str(r.threads), str(r.cap)] + [cell(p) for p in r.reached] for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solvers",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="the n x n cloth")
    parser.add_argument("--frames", type=int, default=1,
                        help="steps of the cloth's fall before the measured one")
    parser.add_argument("--cap", type=int, default=1000, help="iteration cap of every solver "
                        "but Newton")
    parser.add_argument("--newton-cap", type=int, default=100, help="Newton's iteration cap")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per point")
    parser.add_argument("--json", default=str(Path(__file__).with_name("solvers.json")),
                        help="write the results here ('' : nowhere)")
    args = parser.parse_args(argv)

    sim = cloth(args.n)
    for _ in range(args.frames):
        exact_step(sim, H, 1e-6)
    g_star, oracles = minimum(sim)
    print(f"msim {msim.__version__}, {args.n} x {args.n} cloth, frame {args.frames}, h = 1/30 s")
    for label, (g, gradient) in oracles.items():
        print(f"  {label}: g = {g:.12g} J, |grad g| = {gradient:.2g} N")
    print(f"g* = {g_star:.12g} J; time (iterations) to (g - g*) / (g_0 - g*) <= target "
          "(msim.accuracy.relative_error)\n")
    rows = []
    for label, options, threads in SOLVERS:
        cap = args.newton_cap if options["solver"] == "newton" else args.cap
        rows.append(measure(sim, g_star, label, options, threads, cap, args.repeats))
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "frames": args.frames, "g_star": g_star, "oracles": oracles,
                       "targets": TARGETS, "rows": [asdict(r) for r in rows]}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
