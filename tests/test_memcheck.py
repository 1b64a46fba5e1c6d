"""The C core reads only memory it wrote: a folded cloth landing on itself, stepped by each
family of solver under valgrind's memcheck. A value read before anything was written to it
makes results depend on what the stack or the heap held before (VBD's friction-free slip did:
its step was refused wherever the stack held a NaN, so results changed with the build)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None,
                       reason="needs Debian's valgrind (apt-get install valgrind)"),
    pytest.mark.skipif("MSIM_SANITIZERS" in os.environ,
                       reason="AddressSanitizer's runtime does not run under valgrind"),
]

# the C core's source files, as valgrind names them in a stack's frames
CORE = {p.name for p in (Path(__file__).parents[1] / "csrc").glob("*/*.[ch]")}

DRIVER = """
import msim
from msim import scenes
for method, solver in [("implicit_euler", "vbd"), ("implicit_euler", "newton"), ("fms", None),
                       ("xpbd", None)]:
    scene = scenes.folded_cloth(n=12)
    sim, dt = scene.initial.copy(), scene.dt_for(method)
    pairs = 0
    for _ in range(30):
        info = sim.step(dt, method, history=False, **({"solver": solver} if solver else {}))
        pairs = max(pairs, info.self_contact["pairs"])
    print(method, solver, pairs)
"""


def core_errors(log: str) -> list[str]:
    """memcheck's error reports in log whose stacks pass through the C core."""
    blocks = re.split(r"^==\d+== ?$", log, flags=re.M)
    frame = re.compile(r"\((\w+\.[ch]):\d+\)")
    return [b.strip() for b in blocks
            if re.search(r"uninitialised|Invalid (read|write)|Mismatched free|Invalid free", b)
            and (any(name in CORE for name in frame.findall(b))
                 or re.search(r"\(in \S*msim/_core[^)]*\)", b))]  # (frames without debug lines)


def test_every_solver_family_reads_only_memory_the_core_wrote():
    assert len(CORE) > 40
    run = subprocess.run(
        ["valgrind", "--tool=memcheck", "--num-callers=30", sys.executable, "-c", DRIVER],
        capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONMALLOC": "malloc"})
    assert run.returncode == 0, run.stderr[-3000:]
    # every method met the layers (the contact code ran)
    lines = run.stdout.split("\n")[:4]
    assert all(int(line.split()[-1]) > 0 for line in lines), run.stdout
    errors = core_errors(run.stderr)
    assert not errors, f"{len(errors)} reports; the first:\n{errors[0]}"
