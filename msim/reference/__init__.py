"""Independent NumPy/SciPy implementations of what the C core computes: the oracles that
tests and notebooks compare msim with, and the baselines the benchmarks time.

    from msim.reference import fms, implicit
    problem = fms.step_problem(sim, 1 / 30)         # the step sim.step(1/30, ...) solves
    x, g = fms.newton(problem, tol=1e-10)            # SciPy Newton on the same g

Submodules: `core` (spring energy, forces, Hessian, incremental potential), `explicit`
(explicit and symplectic Euler), `implicit` (Newton and linearised implicit Euler with
SuperLU), `fms` (Liu et al. 2013 local-global with a SuperLU factor, and a Newton solve of the
same step), `vbd` (one vertex block descent sweep over a greedy colouring, Chen et al. 2024). SciPy is an optional dependency: install it with `pip install msim[reference]`.
"""

try:
    import scipy.sparse  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised where SciPy is absent
    raise ImportError("msim.reference needs SciPy: install it with `pip install msim[reference]` "
                      "(or `pip install scipy`)") from exc

from . import core, explicit, fms, implicit, vbd

__all__ = ["core", "explicit", "fms", "implicit", "vbd"]
