"""The benchmark's symplectic Euler step in peers, where they are installed.

Taichi (CPU backend, all cores): the same spring forces and update as csrc/explicit.c, written
as two Taichi kernels. `pip install taichi` to enable; everything here is skipped without it.
"""


from typing import Callable

import numpy as np


def taichi_symplectic(sim, dt: float) -> Callable[[], None] | None:
    """A callable doing one symplectic Euler step of sim's cloth in Taichi, or None; its
    `positions()` returns the Taichi state (n,3). The first call compiles the kernels."""
    try:
        import taichi as ti
    except ImportError:
        return None
    ti.init(arch=ti.cpu, log_level=ti.ERROR)
    n, m = sim.n_vertices, sim.n_springs
    x = ti.Vector.field(3, ti.f64, n)
    v = ti.Vector.field(3, ti.f64, n)
    f = ti.Vector.field(3, ti.f64, n)
    edge = ti.Vector.field(2, ti.i32, m)
    k, rest, inv_mass = ti.field(ti.f64, m), ti.field(ti.f64, m), ti.field(ti.f64, n)
    x.from_numpy(sim.positions)
    v.from_numpy(sim.velocities)
    edge.from_numpy(sim.edges.astype(np.int32))
    k.from_numpy(sim.stiffness)
    rest.from_numpy(sim.rest_lengths)
    imass = 1.0 / sim.mass
    imass[sim.fixed] = 0.0
    inv_mass.from_numpy(imass)
    g = ti.Vector(list(sim.gravity))

    @ti.kernel
    def forces():
        for i in f:
            f[i] = ti.Vector([0.0, 0.0, 0.0])
        for s in edge:
            a, b = edge[s][0], edge[s][1]
            d = x[a] - x[b]
            length = d.norm()
            if length > 0:
                push = -k[s] * (length - rest[s]) / length * d
                f[a] += push  # atomic on the CPU backend
                f[b] -= push

    @ti.kernel
    def update(h: ti.f64):
        for i in x:
            if inv_mass[i] > 0:
                v[i] += h * (inv_mass[i] * f[i] + g)
                x[i] += h * v[i]

    def step() -> None:
        forces()
        update(dt)
        ti.sync()

    step.positions = x.to_numpy  # for checking it against msim
    return step


def release() -> None:
    """Stop Taichi's runtime (its worker threads would otherwise compete with later timings)."""
    import sys

    if "taichi" in sys.modules:
        sys.modules["taichi"].reset()
