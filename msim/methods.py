"""The integrators msim offers and the options each one takes.

Every method name maps to its options: the public option name, its default, its type (or the
allowed strings) and the keyword the C core receives. `resolve` checks a user's options against
this table so that a misspelt or out-of-place option is an error, never silently ignored.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core

# the values the C core accepts for each of its options: name -> (type, low, high)
_CORE_RANGES: dict[str, tuple[str, float, float]] = _core.step_options()


@dataclass(frozen=True)
class Option:
    """One step option: default value, accepted type or choices, C keyword, description.

    below: exclusive upper bound of a number (lower bounds are checked by the core).
    """

    default: Any
    kind: type | tuple[str, ...]
    core: str
    doc: str
    below: float | None = None


SPD = ("clamp", "shift", "project", "none")
_SPD_DOC = ("how the spring Hessian is kept positive definite: 'clamp' drops the negative "
            "lateral part (1 - L/l < 0) of compressed springs; 'shift' adds `shift` * I; "
            "'project' clips each spring block's eigenvalues (k and k(1 - L/l) twice) at 0, "
            "which for a two-vertex spring gives exactly the clamp; 'none' keeps the exact "
            "Hessian and raises NotPositiveDefiniteError when the matrix is indefinite")
START = ("inertial", "previous", "extrapolated")
_START_DOC = ("the iterations' initial guess: 'inertial' y = x_t + h v + h^2 (g + F/m), F the "
              "external force (the answer when springs vanish), 'previous' x_t, 'extrapolated' "
              "x_t + h v (where the published code of Liu et al. 2013 starts); g and its "
              "minimiser do not depend on it")
_SHIFT_DOC = ("spd='shift': eps [N/m] added to the diagonal of the stiffness matrix (a spring of "
              "stiffness eps from every free vertex to where it is); the default, 10% of "
              "System's default stiffness 1000 N/m, cancels the lateral curvature "
              "-0.1 k of a default spring compressed by 9%: scale it with your stiffness")

METHODS: dict[str, dict[str, Option]] = {
    "explicit_euler": {},
    "symplectic_euler": {},
    "implicit_euler": {
        "max_iterations": Option(1, int, "iterations",
                                 "Newton iterations at most (1: the course convention)"),
        "tol": Option(0.0, float, "tol", "stop when |grad g| over free vertices is below tol "
                      "[N]; 0: run max_iterations"),
        "spd": Option("clamp", SPD, "spd", _SPD_DOC),
        "shift": Option(100.0, float, "shift", _SHIFT_DOC),
        "line_search": Option(False, bool, "line_search",
                              "backtracking Armijo line search on g along the Newton step"),
        "start": Option("inertial", START, "start", _START_DOC),
    },
    "linearized_implicit": {
        "solver": Option("cg", ("cg", "jacobi", "direct"), "solver",
                         "'cg': conjugate gradients with a block-Jacobi preconditioner; "
                         "'jacobi': block-Jacobi iteration, which converges when the spring "
                         "blocks are positive semidefinite (any spd but 'none') but slows to a "
                         "crawl once h^2 k / m >> 1 (hundreds of iterations past h omega ~ 1; "
                         "with spd='none' it may diverge); 'direct': CHOLMOD"),
        "max_iterations": Option(500, int, "iterations", "iterations of 'cg' or 'jacobi' at most"),
        "tol": Option(1e-8, float, "tol", "stop 'cg' or 'jacobi' at this relative residual "
                      "|b - A dv| / |b|; 0: run max_iterations"),
        "spd": Option("clamp", SPD, "spd", _SPD_DOC),
        "shift": Option(100.0, float, "shift", _SHIFT_DOC),
    },
    "fms": {
        "iterations": Option(10, int, "iterations", "local-global iterations per step (cap)"),
        "tol": Option(0.0, float, "tol", "stop when |grad g| < tol [N]; 0: run all iterations"),
        "pin": Option("eliminate", ("eliminate", "penalty"), "pin",
                      "fixed vertices: eliminated from the system, or unknowns held by a "
                      "penalty pin_weight/2 |x - x0|^2 (the course report's variant; they are "
                      "still put back exactly after the step)"),
        "pin_weight": Option(1e8, float, "pin_weight",
                             "penalty stiffness of pin='penalty' [N/m]; a pinned vertex drifts "
                             "by about its support force / pin_weight during the iterations"),
        "acceleration": Option("none", ("none", "chebyshev", "anderson"), "acceleration",
                               "Chebyshev semi-iteration (Wang 2015) or Anderson mixing with "
                               "an energy safeguard (Peng 2018)"),
        "rho": Option(0.99, float, "rho", "chebyshev: spectral radius estimate of plain FMS",
                      below=1.0),
        "chebyshev_delay": Option(10, int, "chebyshev_delay",
                                  "chebyshev: plain iterations before acceleration starts"),
        "relax": Option(1.0, float, "relax", "chebyshev: under-relaxation gamma", below=2.0),
        "window": Option(5, int, "window", "anderson: number of past iterates mixed (m)"),
        "start": Option("inertial", START, "start", _START_DOC),
    },
    "xpbd": {
        "iterations": Option(10, int, "iterations", "Gauss-Seidel sweeps per substep"),
        "substeps": Option(1, int, "substeps", "substeps per step (lambda reset each)"),
        "xpbd_damping": Option(0.0, float, "xpbd_damping",
                               "Macklin's constraint damping beta [N s/m] per spring"),
    },
}

SUMMARY: dict[str, str] = {
    "explicit_euler": "x += h v(t); v += h a(x(t)). Unstable for stiff springs, on purpose.",
    "symplectic_euler": "v += h a(x(t)); x += h v(t+h). Stable below h ~ 2/omega_max.",
    "implicit_euler": "Newton on g(x) = |x - y|_M^2/(2h^2) + E(x) from x = y; v = (x - x_t)/h.",
    "linearized_implicit": "One solve (M - h^2 K) dv = h (f + h K v); v += dv; x += h v.",
    "fms": "Liu 2013 local-global minimisation of the implicit Euler potential with one "
           "prefactored Cholesky; optional Chebyshev or Anderson acceleration.",
    "xpbd": "Macklin 2016: predict, then Gauss-Seidel spring projection with compliance 1/k "
            "and per-spring multipliers; stiffness independent of the iteration count.",
}


def resolve(method: str, options: dict[str, Any]) -> dict[str, Any]:
    """Return the C keyword arguments for `method` with `options` checked and defaults filled.

    Raises ValueError for an unknown method, option or choice and TypeError for a wrong type.
    """
    if not isinstance(method, str):
        raise TypeError(f"method: expected a string, got {type(method).__name__}")
    if method not in METHODS:
        raise ValueError(f"method: expected one of {sorted(METHODS)}, got {method!r}")
    table = METHODS[method]
    unknown = sorted(set(options) - set(table))
    if unknown:
        allowed = sorted(table) or "none"
        raise ValueError(f"{unknown[0]}: not an option of method {method!r} (options: {allowed})")
    core: dict[str, Any] = {}
    for name, opt in table.items():
        value = options.get(name, opt.default)
        core[opt.core] = _convert(name, value, opt)
    return core


def _convert(name: str, value: Any, opt: Option) -> Any:
    """Check one option value against its Option and convert it for the core."""
    if isinstance(opt.kind, tuple):
        if value not in opt.kind:
            raise ValueError(f"{name}: expected one of {list(opt.kind)}, got {value!r}")
        return opt.kind.index(value)
    if opt.kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}: expected True or False, got {value!r}")
        return int(value)  # the core reads flags as integers
    if opt.kind is int:
        _, low, high = _CORE_RANGES[opt.core]
        return as_int(name, value, int(low), int(high))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    if opt.below is not None and not value < opt.below:
        raise ValueError(f"{name}: expected a value below {opt.below:g}, got {value!r}")
    return float(value)


def as_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """`value` as an int in [low, high] (each bound when given), else TypeError/ValueError
    naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    if high is not None and not low <= value <= high:
        raise ValueError(f"{name}: expected an integer in [{low}, {high}], got {value}")
    if low is not None and value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value}")
    return int(value)
