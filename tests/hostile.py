"""The tally of hostile inputs the tests try (malformed, truncated, oversized or malicious files
and arguments): each `attempt` is a valid load, a clear error (the documented exception) or a
crash (anything else, which fails the test). conftest.py prints the tally after the run."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

TALLY: Counter = Counter()


def attempt(call: Callable[[], Any], clear: type[BaseException] | tuple) -> Any:
    """Run `call` on one hostile input; return what it returned, or the clear error it raised.
    Anything other than `clear` counts as a crash and is raised again."""
    try:
        result = call()
    except clear as error:
        TALLY["error"] += 1
        return error
    except BaseException:
        TALLY["crash"] += 1
        raise
    TALLY["valid"] += 1
    return result


def summary() -> str | None:
    """"hostile inputs: N tried: A clear errors, B valid loads, C crashes", or None."""
    tried = sum(TALLY.values())
    if not tried:
        return None
    return (f"hostile inputs: {tried} tried: {TALLY['error']} clear errors, "
            f"{TALLY['valid']} valid loads, {TALLY['crash']} crashes")
