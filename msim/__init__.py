"""msim: mass-spring simulation (cloth, ropes, soft volumes) with a C core.

    import msim
    mesh = msim.mesh.cloth_grid(20, 20, size=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, fixed=[0, 19])
    info = sim.step(1e-3, method="symplectic_euler")
    sim.energy()
"""

from . import experiments, mesh, scenes
from .compare import compare, stability, sweep
from ._core import CholmodError, DivergenceError, Error, NotPositiveDefiniteError
from ._core import cholmod_version
from .methods import METHODS, SUMMARY
from .system import StepInfo, System, Trajectory

__version__ = "0.1.0"

__all__ = [
    "System", "StepInfo", "Trajectory", "METHODS", "SUMMARY", "mesh", "experiments", "scenes",
    "cholmod_version", "compare", "stability", "sweep",
    "Error", "DivergenceError", "NotPositiveDefiniteError", "CholmodError",
]
