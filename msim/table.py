"""Result tables that print as Markdown: a pandas DataFrame when pandas is installed, else a
list of dicts."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence


def to_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of `rows` (dicts sharing their keys); floats in 4 significant digits,
    None as a blank cell."""
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else ("" if v is None else str(v))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(r.get(k)) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


class Table(list):
    """A list of row dicts that prints as Markdown (used when pandas is not installed)."""

    def __str__(self) -> str:
        return to_markdown(self)

    def _repr_markdown_(self) -> str:
        return to_markdown(self)


@lru_cache(maxsize=1)
def _frame_class():
    """A DataFrame subclass that prints as Markdown, or None without pandas."""
    try:
        import pandas as pd
    except ImportError:
        return None

    class Frame(pd.DataFrame):
        """A pandas DataFrame that prints as Markdown."""

        @property
        def _constructor(self):
            return Frame

        def __str__(self) -> str:  # missing values (None, NaN, NA) print as blank cells
            return to_markdown(self.astype(object).where(self.notna(), None).to_dict("records"))

    return Frame


def make_table(rows: Sequence[dict[str, Any]]):
    """`rows` as a Markdown-printing DataFrame when pandas is installed, else a Table."""
    frame = _frame_class()
    if frame is None:
        return Table(rows)
    table = frame(list(rows))
    for key in table.columns:  # integers with gaps (a diverged step or None) stay integers
        values = [r.get(key) for r in rows]
        if None in values and all(isinstance(v, int) and not isinstance(v, bool)
                                  for v in values if v is not None):
            table[key] = table[key].astype("Int64")
    return table
