"""msim's modules import one another in one direction: no module imports (at the top or
inside a function) one that imports it back, and every module imports on its own first, in
a fresh interpreter, in any order."""

from __future__ import annotations

import ast
import itertools
import os
import subprocess
import sys
from pathlib import Path

import msim

PACKAGE = Path(msim.__file__).parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))


def imports_of(module: str) -> set[str]:
    """The msim modules `module` imports anywhere in its source, but for the names imported
    only for type hints (under `if TYPE_CHECKING:`)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    hints = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
             and getattr(block.test, "id", None) == "TYPE_CHECKING"
             for node in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in hints:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("msim."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("msim.")}
    return found & set(MODULES)


def test_the_import_graph_has_no_cycle():
    graph = {m: imports_of(m) for m in MODULES}
    # io and system were a cycle (Trajectory.save imported io, io imported system)
    assert "system" not in graph["io"] and "io" not in graph["system"]
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module):]
                                                                + (module,)))
        if module not in done:
            for target in sorted(graph[module]):
                visit(target, path + (module,))
            done.add(module)

    for module in MODULES:
        visit(module, ())


def test_every_module_imports_first_in_a_fresh_interpreter_in_any_order():
    orders = [MODULES, MODULES[::-1]] + [list(p) for p in itertools.islice(
        itertools.permutations(["io", "view", "plot", "trajectory", "system", "compare"]), 0,
        720, 97)]
    for order in orders:
        code = "import importlib\n" + "".join(
            f"importlib.import_module('msim.{m}')\n" for m in order)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "MPLBACKEND": "Agg"})
        assert done.returncode == 0, (order, done.stderr[-2000:])
