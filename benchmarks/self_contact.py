"""Self-contact's cost, measured (figures, not pass/fail).

    python -m benchmarks.self_contact [--n 100] [--repeats 5]

* detection: msim's broad and narrow phase (spatial hash, exact distances; timed as energy(),
  which detects the pairs of a state and sums their energy) against ipctk's collision build
  (`NormalCollisions.build` with its default broad phase) on the same flat n x n cloth and the same
  activation distance: twice the self-contact thickness;
* a hanging n x n cloth with nothing touching: an FMS step (10 iterations) with and without
  self_contact, their ratio;
* the folded cloth: a step's pairs, the vertices the bounds limited and the detections they
  made, with the step time, for FMS and implicit Euler.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import msim
from msim import scenes


def best(fn, repeats: int) -> float:
    """The fastest of `repeats` calls of fn [s]."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def detection(n: int, repeats: int) -> None:
    mesh = msim.mesh.cloth_grid(n, n)
    sim = msim.System(mesh.vertices, mesh.edges, faces=mesh.faces, self_contact=True)
    ours = best(sim.energy, repeats)
    print(f"detection, flat {n}x{n} cloth: msim {1e3 * ours:.2f} ms", end="")
    try:
        import ipctk
    except ImportError:
        print(" (ipctk not installed)")
        return
    edges = ipctk.edges(mesh.faces)
    collision_mesh = ipctk.CollisionMesh(mesh.vertices, edges, mesh.faces)
    collisions = ipctk.NormalCollisions()
    theirs = best(lambda: collisions.build(collision_mesh, mesh.vertices, 2 * sim.self_thickness),
                  repeats)
    print(f", ipctk NormalCollisions.build {1e3 * theirs:.2f} ms, ipctk / msim = {theirs / ours:.2f}")


def hanging(n: int, repeats: int) -> None:
    plain = scenes.hanging_cloth(n).initial.copy()
    mesh = msim.mesh.cloth_grid(n, n)
    touched = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0,
                          fixed=[0, n - 1], faces=mesh.faces, self_contact=True)
    times = {}
    for name, sim in (("without", plain), ("with", touched)):
        for _ in range(10):
            sim.step(1 / 30, "fms", history=False)
        times[name] = best(lambda: sim.step(1 / 30, "fms", history=False), repeats)
    print(f"hanging {n}x{n} cloth, fms step: {1e3 * times['without']:.2f} ms without "
          f"self-contact, {1e3 * times['with']:.2f} ms with, ratio "
          f"{times['with'] / times['without']:.2f}")


def folded(n: int) -> None:
    for method in ("fms", "implicit_euler"):
        sim = scenes.folded_cloth(n).initial.copy()
        rows = []
        for _ in range(round(1.0 / (1 / 60))):
            info = sim.step(1 / 60, method, history=False)
            rows.append((info.seconds, info.self_contact["pairs"], info.self_contact["limited"],
                         info.self_contact["rounds"]))
        seconds, pairs, limited, rounds = np.array(rows).T
        print(f"folded {n}x{n} cloth, {method}, 1 s at 1/60: {1e3 * seconds.mean():.1f} ms/step, "
              f"pairs {pairs.mean():.0f} (max {pairs.max():.0f}), limited vertices "
              f"{limited.mean():.1f}, detections {rounds.mean():.2f} per step; crossings "
              f"{sim.self_intersections()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    detection(args.n, args.repeats)
    hanging(args.n, args.repeats)
    folded(min(args.n, 40))


if __name__ == "__main__":
    main()
