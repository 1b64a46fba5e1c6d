"""Shared builders for the physics tests."""

from __future__ import annotations

import numpy as np
import pytest

import msim


def oscillator(k: float = 100.0, m: float = 1.0, stretch: float = 0.01) -> msim.System:
    """Vertex 0 fixed at the origin, vertex 1 on the x axis at 1 + stretch; no gravity.

    Along the axis the spring force is exactly -k u (u = stretch), a linear oscillator with
    omega = sqrt(k/m).
    """
    vertices = np.array([[0.0, 0.0, 0.0], [1.0 + stretch, 0.0, 0.0]])
    return msim.System(vertices, [[0, 1]], mass=m, stiffness=k, rest_lengths=[1.0],
                       fixed=[0], gravity=(0, 0, 0))


@pytest.fixture
def cloth() -> msim.System:
    """A 10x10 cloth pinned at two corners, perturbed and moving."""
    mesh = msim.mesh.cloth_grid(10, 10, size=1.0)
    rng = np.random.default_rng(1)
    sim = msim.System(mesh.vertices + 0.01 * rng.standard_normal(mesh.vertices.shape),
                      mesh.edges, rest_lengths=_lengths(mesh), mass=0.01, stiffness=100.0,
                      fixed=[0, 9])
    sim.velocities = 0.1 * rng.standard_normal(mesh.vertices.shape)
    return sim


def _lengths(mesh: msim.mesh.Mesh) -> np.ndarray:
    d = mesh.vertices[mesh.edges[:, 0]] - mesh.vertices[mesh.edges[:, 1]]
    return np.linalg.norm(d, axis=1)
