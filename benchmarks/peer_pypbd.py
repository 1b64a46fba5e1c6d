"""XPBD in pyPBD (`pip install pypbd`: Bender's PositionBasedDynamics, C++ and Eigen, double
precision), one XPBD distance constraint per spring (Macklin 2016, compliance 1/k, lambda reset
each step), Gauss-Seidel over constraint groups (a colouring, so OpenMP may split a group
across threads without changing the result), one substep of `iterations` sweeps, first-order
velocity update v = (x - x_old) / h. Pinned vertices get mass 0 (static).

pyPBD keeps one simulation per process (a singleton): build one peer at a time and `release`
it before the next.
"""

from __future__ import annotations

import numpy as np
import pypbd as pbd


class XPBD:
    """sim's cloth (vertices, springs, masses, pins, gravity) as a pyPBD model."""

    def __init__(self, sim, h: float, iterations: int):
        self.simulation = pbd.Simulation.getCurrent()
        self.simulation.initDefault()
        self.model = self.simulation.getModel()
        particles = self.model.getParticles()
        mass = sim.mass.copy()
        mass[sim.fixed] = 0.0
        for i, (p, v, m) in enumerate(zip(sim.positions, sim.velocities, mass)):
            particles.addVertex(p.tolist())
            particles.setVelocity(i, v.tolist())
            particles.setMass(i, float(m))
        for (a, b), k in zip(sim.edges, sim.stiffness):
            self.model.addDistanceConstraint_XPBD(int(a), int(b), float(k))
        self.model.initConstraintGroups()
        for i in np.flatnonzero(mass > 0):
            particles.setAcceleration(int(i), list(map(float, sim.gravity)))
        self.particles = particles
        controller = self.simulation.getTimeStep()
        controller.setValueUInt(pbd.TimeStepController.NUM_SUB_STEPS, 1)
        controller.setValueUInt(pbd.TimeStepController.MAX_ITERATIONS, iterations)
        self.controller = controller
        pbd.TimeManager.getCurrent().setTimeStepSize(h)

    def order(self) -> np.ndarray:
        """Spring indices in the order pyPBD's Gauss-Seidel visits them (group by group)."""
        return np.concatenate([np.asarray(g, int) for g in self.model.getConstraintGroups()])

    def step(self) -> None:
        self.controller.step(self.model)

    def positions(self) -> np.ndarray:
        """Current positions (n,3) [m] (a copy)."""
        return np.array(self.particles.getVertices())

    def release(self) -> None:
        """Empty the process's pyPBD simulation for the next peer."""
        self.model.cleanup()
