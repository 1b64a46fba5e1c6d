"""The integrators msim offers and the options each one takes.

Every method name maps to its options: the public option name, its default, its type (or the
allowed strings), its allowed range and the ms_opt field it sets in the C core. The one table
of these facts is the C core's registry (csrc/engine/registry.c, read through
`_core.methods()`); this module only turns it into Python objects for reading (docs, the
README's table, `msim.METHODS`). The options a step receives are parsed in C against the same
table (`System.step`, `_core.check_options`): a misspelt or out-of-place option, a wrong type,
a value out of range, an option the chosen solver of g does not read and a choice it does not
offer are each an error naming the option, never silently ignored.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core


@dataclass(frozen=True)
class Option:
    """One step option: default value, accepted type or choices, C keyword, description, and
    the allowed range of a number: [low, high], or [low, high) when high_open."""

    default: Any
    kind: type | tuple[str, ...]
    core: str
    doc: str
    low: float | None = None
    high: float | None = None
    high_open: bool = False

    def range_text(self) -> str:
        """The allowed range as text, like "[0, 1)"."""
        return f"[{self.low!r}, {self.high!r}{')' if self.high_open else ']'}"


_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool}


def _option(spec: dict[str, Any]) -> Option:
    """An Option from one entry of `_core.methods()`."""
    if spec["type"] == "choice":
        return Option(spec["default"], spec["choices"], spec["core"], spec["doc"])
    if spec["type"] == "bool":
        return Option(spec["default"], bool, spec["core"], spec["doc"])
    return Option(spec["default"], _KINDS[spec["type"]], spec["core"], spec["doc"], spec["low"],
                  spec["high"], spec["high_open"])


_TABLE = _core.methods()

METHODS: dict[str, dict[str, Option]] = {
    name: {option: _option(spec) for option, spec in entry["options"].items()}
    for name, entry in _TABLE.items()}

SUMMARY: dict[str, str] = {name: entry["summary"] for name, entry in _TABLE.items()}

# the choices of the spring Hessian treatment and of the iterations' start, in core order
SPD: tuple[str, ...] = METHODS["implicit_euler"]["spd"].kind
START: tuple[str, ...] = METHODS["fms"]["start"].kind


def cap_name(method: str) -> str:
    """The public name of `method`'s iteration cap: `iterations`, or `max_iterations` where
    that is its only name (linearized_implicit). ValueError for a method without a cap."""
    for name in ("iterations", "max_iterations"):
        if name in METHODS[method]:
            return name
    raise ValueError(f"method: {method!r} takes no iteration cap")


def number_text(value: Any) -> str:
    """A default as a reader writes it: 100 not 100.0, 1e8 not 100000000.0, 1e-8; tuples of
    numbers likewise."""
    if isinstance(value, tuple):
        return "(" + ", ".join(number_text(v) for v in value) + ")"
    if isinstance(value, bool) or not isinstance(value, float):
        return repr(value)
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + m[1].replace("+", "") + m[2], f"{value:g}")


def readme_table() -> str:
    """The README's table of methods, their summaries and options with defaults, in Markdown."""
    rows = ["| method | what it does | options (defaults) |", "|---|---|---|"]
    for name, options in METHODS.items():
        cells = []
        for option, spec in options.items():
            if isinstance(spec.kind, tuple):
                shown = " / ".join(f'`"{c}"`' for c in spec.kind if c != spec.default)
                cells.append(f'`{option}="{spec.default}"`' + (f" / {shown}" if shown else ""))
            else:
                cells.append(f"`{option}={number_text(spec.default)}`")
        summary = SUMMARY[name].replace("|", "\\|")
        rows.append(f"| `{name}` | {summary} | {', '.join(cells)} |".replace("|  |", "| |"))
    return "\n".join(rows) + "\n"


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
