"""Symplectic Euler in NVIDIA Warp (`pip install warp-lang`) on the CPU device, float64: the
two kernels a Warp user writes, one thread per spring scattering its force with atomics, then
one thread per vertex integrating (v += h (f / m + g); x += h v) and clearing the force.
Warp runs CPU kernels on one thread.
"""

from __future__ import annotations

import numpy as np
import warp as wp

wp.config.quiet = True
vec3 = wp.types.vector(3, wp.float64)


@wp.kernel
def _springs(x: wp.array(dtype=vec3), edges: wp.array(dtype=wp.int32, ndim=2),
             k: wp.array(dtype=wp.float64), rest: wp.array(dtype=wp.float64),
             f: wp.array(dtype=vec3)):
    s = wp.tid()
    i, j = edges[s, 0], edges[s, 1]
    d = x[i] - x[j]
    length = wp.length(d)
    if length > wp.float64(0.0):
        push = (-k[s] * (length - rest[s]) / length) * d
        wp.atomic_add(f, i, push)
        wp.atomic_sub(f, j, push)


@wp.kernel
def _integrate(x: wp.array(dtype=vec3), v: wp.array(dtype=vec3), f: wp.array(dtype=vec3),
               inv_mass: wp.array(dtype=wp.float64), gravity: vec3, h: wp.float64):
    i = wp.tid()
    w = inv_mass[i]
    if w > wp.float64(0.0):
        v[i] = v[i] + h * (w * f[i] + gravity)
        x[i] = x[i] + h * v[i]
    f[i] = vec3()


class Symplectic:
    """sim's cloth in Warp arrays on the CPU; `step` launches the two kernels."""

    def __init__(self, sim, h: float):
        wp.init()
        device = "cpu"
        array = lambda a, dtype: wp.array(np.ascontiguousarray(a), dtype=dtype, device=device)
        self.x = array(sim.positions, vec3)
        self.v = array(sim.velocities, vec3)
        self.f = wp.zeros(sim.n_vertices, dtype=vec3, device=device)
        self.edges = array(sim.edges.astype(np.int32), wp.int32)
        self.k, self.rest = array(sim.stiffness, wp.float64), array(sim.rest_lengths, wp.float64)
        inv_mass = 1.0 / sim.mass
        inv_mass[sim.fixed] = 0.0
        self.inv_mass = array(inv_mass, wp.float64)
        self.gravity, self.h = vec3(*map(float, sim.gravity)), wp.float64(h)
        self.n, self.m = sim.n_vertices, sim.n_springs

    def step(self) -> None:
        wp.launch(_springs, self.m, (self.x, self.edges, self.k, self.rest, self.f))
        wp.launch(_integrate, self.n, (self.x, self.v, self.f, self.inv_mass, self.gravity,
                                       self.h))

    def positions(self) -> np.ndarray:
        """Current positions (n,3) [m] (a copy)."""
        return self.x.numpy().copy()

    def release(self) -> None:
        """Nothing to free beyond the arrays themselves."""
