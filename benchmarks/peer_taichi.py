"""Symplectic Euler in Taichi (`pip install taichi`), CPU backend, float64: the same spring
forces and update as msim's, two Taichi kernels, atomics for the scatter, `threads` CPU
threads.
"""

import numpy as np
import taichi as ti


class Symplectic:
    """sim's cloth in Taichi fields; the first `step` compiles the kernels."""

    def __init__(self, sim, h: float, threads: int = 1):
        ti.init(arch=ti.cpu, cpu_max_num_threads=threads, default_fp=ti.f64,
                log_level=ti.ERROR)
        n, m = sim.n_vertices, sim.n_springs
        x, v, f = (ti.Vector.field(3, ti.f64, n) for _ in range(3))
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
        g = ti.Vector(list(map(float, sim.gravity)), ti.f64)

        @ti.kernel
        def forces():
            for i in f:
                f[i] = ti.Vector([0.0, 0.0, 0.0], ti.f64)
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

        self.forces, self.update, self.h, self.x = forces, update, h, x

    def step(self) -> None:
        self.forces()
        self.update(self.h)
        ti.sync()

    def positions(self) -> np.ndarray:
        """Current positions (n,3) [m]."""
        return self.x.to_numpy()

    def release(self) -> None:
        """Stop Taichi's runtime (its worker threads would compete with later timings)."""
        ti.reset()
