"""msim: mass-spring simulation (cloth, ropes, soft volumes) with a C core.

    import msim
    mesh = msim.mesh.cloth_grid(20, 20, size=1.0)
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, fixed=[0, 19])
    info = sim.step(1e-3, method="symplectic_euler")
    sim.energy()
"""

import importlib

from . import accuracy, adjoint, experiments, mesh, scenes, strain
from .compare import compare, energy_scale, stability, sweep
from ._core import (CholmodError, DivergenceError, Error, NotPositiveDefiniteError,
                    SelfIntersectionError)
from ._core import cholmod_version
from ._files import MeshFileError, TrajectoryFileError
from .methods import METHODS, SUMMARY
from .system import ContactWarning, HistoryWarning, StepInfo, System
from .trajectory import Trajectory

__version__ = "0.1.0"

__all__ = [
    "System", "StepInfo", "Trajectory", "METHODS", "SUMMARY", "mesh", "accuracy", "experiments",
    "scenes", "strain",
    "cholmod_version", "compare", "energy_scale", "stability", "sweep",
    "Error", "DivergenceError", "NotPositiveDefiniteError", "CholmodError", "SelfIntersectionError",
    "ContactWarning", "HistoryWarning", "MeshFileError", "TrajectoryFileError",
]

# submodules with optional dependencies (matplotlib, meshio, k3d) load when first used:
# `import msim; msim.plot.energy(traj)` works without `import msim.plot`
_LAZY = ("io", "plot", "table", "view")


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
