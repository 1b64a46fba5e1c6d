"""Fixtures shared by the physics tests (the builders behind them are in builders.py)."""

from __future__ import annotations

import sys

import pytest

import msim
import builders


@pytest.fixture
def cloth() -> msim.System:
    """A 10x10 cloth pinned at two corners, perturbed off its rest shape and moving."""
    return builders.cloth(10, jitter=0.01, speed=0.1, seed=1)


@pytest.fixture(autouse=True)
def close_figures():
    """Close the figures a test leaves open (pyplot keeps every figure until it is closed)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def pytest_terminal_summary(terminalreporter):
    """The tally of hostile inputs (files, arrays, arguments) the run tried (tests/hostile.py)."""
    import hostile

    line = hostile.summary()
    if line:
        terminalreporter.write_sep("-", "hostile inputs")
        terminalreporter.write_line(line)
