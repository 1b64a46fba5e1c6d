"""Explicit and symplectic Euler in vectorised NumPy: the same algorithms as csrc/engine/explicit.c."""

from __future__ import annotations

import numpy as np

from .core import fixed_mask, spring_forces


class ExplicitReference:
    """State and parameters of a mass-spring system stepped with NumPy.

    x, v (n,3); edges (m,2); k, rest (m,); mass (n,); fixed: indices or mask; gravity (3,);
    damping [1/s] applied as v *= exp(-damping h) before each step, as msim does.
    """

    def __init__(self, x, v, edges, k, rest, mass, fixed, gravity, damping=0.0):
        self.x, self.v = np.array(x, float), np.array(v, float)
        self.edges, self.k, self.rest = np.asarray(edges), np.asarray(k, float), np.asarray(rest, float)
        self.mass = np.broadcast_to(np.asarray(mass, float), (len(self.x),)).copy()
        self.fixed = fixed_mask(len(self.x), fixed)
        self.gravity, self.damping = np.asarray(gravity, float), damping
        self.imass = np.where(self.fixed, 0.0, 1.0 / self.mass)[:, None]

    def _acceleration(self, x: np.ndarray) -> np.ndarray:
        f = spring_forces(x, self.edges, self.k, self.rest) + self.mass[:, None] * self.gravity
        return self.imass * f

    def step(self, h: float, method: str) -> None:
        """One explicit_euler or symplectic_euler step of h seconds."""
        v = np.exp(-self.damping * h) * self.v
        v[self.fixed] = 0.0
        a = self._acceleration(self.x)
        if method == "explicit_euler":
            self.x, self.v = self.x + h * v, v + h * a
        else:
            self.v = v + h * a
            self.x = self.x + h * self.v
