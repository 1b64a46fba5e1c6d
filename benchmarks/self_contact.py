"""Self-contact's cost, measured (figures, not pass/fail).

    python -m benchmarks.self_contact [--n 100] [--repeats 5]

* detection: msim's broad and narrow phase (timed as energy(), which detects the pairs of a
  state and sums their energy: on a cloth that projects one to one onto a plane, only near its
  tight vertices; and, like for like, hashing every box as on any other mesh) against ipctk's
  collision build (`NormalCollisions.build` with its default broad phase) on the same flat n x n
  cloth and the same activation distance: twice the self-contact thickness, both on 1 and on 2
  threads;
* a hanging n x n cloth with nothing touching: an FMS step (10 iterations) with and without
  self_contact, stepped in turn in one process, their ratio, on 1 and on 2 threads; the mean
  step while it swings (steps 4-18), once its corners crumple at the pins (from step 21) and
  over its first 5 s, each step the median of `repeats` runs;
* the folded cloth and the heap: the time per step and its self-contact phases (broad phase,
  narrow phase, bounds: `StepInfo.timings`), the pairs and the bounds' rounds per step, for FMS
  and implicit Euler.
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


THREADS = (1, 2)


def detection(n: int, repeats: int) -> None:
    mesh = msim.mesh.cloth_grid(n, n)
    try:
        import ipctk
    except ImportError:
        ipctk = None
    for threads in THREADS:
        sim = msim.System(mesh.vertices, mesh.edges, faces=mesh.faces, self_contact=True,
                          threads=threads)
        ours = best(sim.energy, repeats)
        # a test hook: detection hashing every box, the work on a mesh the certificate refuses
        hashed = best(lambda: sim._detected_pairs(False), repeats)
        print(f"detection, flat {n}x{n} cloth, {threads} thread(s): msim {1e3 * ours:.2f} ms "
              f"(hashing every box {1e3 * hashed:.2f} ms)", end="")
        if ipctk is None:
            print(" (ipctk not installed)")
            continue
        ipctk.set_num_threads(threads)
        edges = ipctk.edges(mesh.faces)
        collision_mesh = ipctk.CollisionMesh(mesh.vertices, edges, mesh.faces)
        collisions = ipctk.NormalCollisions()
        theirs = best(lambda: collisions.build(collision_mesh, mesh.vertices,
                                               2 * sim.self_thickness), repeats)
        print(f", ipctk NormalCollisions.build {1e3 * theirs:.2f} ms, ipctk / msim = "
              f"{theirs / ours:.2f} ({theirs / hashed:.2f} hashing every box)")


def hanging_cloth(mod, n: int, threads: int, self_contact: bool = True):
    """`mod.scenes.hanging_cloth(n)`'s cloth (n x n, hanging from two corners, 1 kg, k = 1000
    N/m) rebuilt from its parameters as a System of `mod`, msim or another build of it
    (benchmarks.ab), with the scene's triangles as collision faces at their default thickness,
    with or without self-contact: one builder for every baseline and touched cloth the
    benchmarks compare."""
    scene = mod.scenes.hanging_cloth(n)
    # (the scene's cloth has no faces, so its thickness is 0: the default applies instead)
    model = {k: v for k, v in scene.initial.parameters().items() if k != "self_thickness"}
    return mod.System(**{**model, "faces": scene.faces, "self_contact": self_contact,
                         "threads": threads})


# the hanging cloth's run [s]: its corners crumple from step 21 and stay crumpled as it swings
# on, folding tightest at 3-5 s (a run of 2 s missed the costliest steps)
SECONDS = 5.0


def windows(seconds: float) -> tuple:
    """The hanging cloth's windows of steps at 1/30 s, named: while it swings (steps 4-18), once
    its corners crumple at the pins (from step 21), and all but the first (which factorises)."""
    steps = round(30 * seconds)
    return (("swinging, steps 4-18", slice(3, 18)), ("crumpling, from step 21",
            slice(20, steps)), (f"mean over {seconds:g} s", slice(1, steps)))


def in_turn(sims, steps: int) -> np.ndarray:
    """Each of sims stepped `steps` times by FMS at 1/30 s, in turn, the order rotating each step
    (so that none always runs first): each step's time [s], (len(sims), steps)."""
    times = np.zeros((len(sims), steps))
    for k in range(steps):
        for j in range(len(sims)):
            which = (k + j) % len(sims)
            start = time.perf_counter()
            sims[which].step(1 / 30, "fms", history=False)
            times[which, k] = time.perf_counter() - start
    return times


def median_steps(make_sims, steps: int, repeats: int, check=None) -> np.ndarray:
    """The systems make_sims() builds, stepped in turn (`in_turn`) `steps` times, `repeats` times
    over new ones: each step's median time [s], (len(sims), steps). check(sims), when given,
    after each run."""
    runs = []
    for _ in range(repeats):
        sims = make_sims()
        runs.append(in_turn(sims, steps))
        if check is not None:
            check(sims)
    return np.median(runs, axis=0)


def hanging(n: int, repeats: int, seconds: float = SECONDS) -> None:
    """The hanging cloth's first `seconds` of FMS steps without and with self-contact, the two
    stepped in turn in one process (each pair of steps sees the machine at the same speed,
    which on a shared machine drifts by half within minutes), `repeats` times: the median of
    each step, averaged over the steps while it swings (4-18), once its corners crumple at the
    pins (from step 21) and over all but the first (which factorises), and their ratios."""
    steps = round(30 * seconds)
    for threads in THREADS:
        median = median_steps(lambda: (hanging_cloth(msim, n, threads, self_contact=False),
                                       hanging_cloth(msim, n, threads)), steps, repeats)
        for what, window in windows(seconds):
            without, with_ = median[0, window].mean(), median[1, window].mean()
            print(f"hanging {n}x{n} cloth, fms step, {threads} thread(s), {what}: "
                  f"{1e3 * without:.3f} ms without self-contact, {1e3 * with_:.3f} ms with, "
                  f"ratio {with_ / without:.2f}")


PHASES = ("broad_phase", "narrow_phase", "bounds")


def scene_costs(scene: scenes.Scene, seconds: float = 1.0) -> None:
    """A scene's steps in FMS and implicit Euler: the time per step and its self-contact phases
    (spatial hash, exact distances, displacement bounds), pairs and the bounds' rounds per step."""
    for method in ("fms", "implicit_euler"):
        sim, dt = scene.initial.copy(), scene.dt_for(method)
        rows = []
        for _ in range(round(seconds / dt)):
            if scene.before_step is not None:
                scene.before_step(sim)
            info = sim.step(dt, method, history=False)
            rows.append([info.seconds, *(info.timings[p] for p in PHASES),
                         info.self_contact["pairs"], info.self_contact["rounds"]])
        step, broad, narrow, bounds, pairs, rounds = np.array(rows).mean(axis=0)
        print(f"{scene.name} ({sim.n_vertices} vertices), {method}, {seconds:g} s at "
              f"{dt:.4g} s: {1e3 * step:.1f} ms/step of which broad phase {1e3 * broad:.1f}, "
              f"narrow phase {1e3 * narrow:.1f}, bounds {1e3 * bounds:.1f} ms; pairs "
              f"{pairs:.0f}, rounds of bounds {rounds:.2f} per step; crossings "
              f"{sim.self_intersections()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    detection(args.n, args.repeats)
    hanging(args.n, args.repeats)
    scene_costs(scenes.folded_cloth(min(args.n, 40)))
    scene_costs(scenes.cloth_heap(min(args.n, 30)))


if __name__ == "__main__":
    main()
