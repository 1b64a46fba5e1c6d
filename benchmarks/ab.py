"""This build of msim against another, stepped in turn in one process (figures, not pass/fail).

    python -m benchmarks.ab OTHER [--n 100] [--threads 1] [--repeats 8] [--seconds 5]

On a shared machine the speed drifts by up to half within minutes, so two builds timed one
after the other differ by the drift as much as by their code. Here the `msim` package of OTHER
(another checkout of msim, built in place: `python setup.py build_ext --inplace`) is copied
under the name `msim_other` into a temporary folder and imported beside this one, and four
systems step the hanging n x n cloth of `self_contact.hanging` in turn, the order rotating each
step: FMS without and with self-contact under each build. Each build is timed against its own
plain step because a build's code layout alone can move its plain FMS step (by 0.5 ms in one
measurement): what self-contact adds to the step, and the ratio the target is set on, are each
build's own. The difference so measured subtracts two more noisy means than a plain one, and
holds where a layout moves the plain and the touched step alike.
Printed for each of its windows (swinging, crumpling, the whole run): the mean over the window
of each step's median over the repeats, each build's ratio to its plain step, and the
difference between what self-contact adds to a step under this build and under the other. The
two builds must move the cloth alike, with and without self-contact, to the bit (checked): else
they would be timed on different work. Four systems in turn leave each one's arrays colder than
the two of `self_contact.hanging`, so the ratios here run lower than there.
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import shutil
import sys
import tempfile
from types import ModuleType

import numpy as np

import msim

from .self_contact import SECONDS, hanging_cloth, median_steps, windows


def other_build(checkout: str, folder: str) -> ModuleType:
    """The msim package of `checkout` (built in place), copied into `folder` and imported from
    there as msim_other."""
    source = pathlib.Path(checkout, "msim")
    if not any(source.glob("_core*")):
        raise SystemExit(f"{source} holds no built extension: run "
                         f"`python setup.py build_ext --inplace` in {checkout}")
    shutil.copytree(source, pathlib.Path(folder, "msim_other"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # a copy imported before (from another folder) would be found in sys.modules instead
    for name in [name for name in sys.modules if name.split(".")[0] == "msim_other"]:
        del sys.modules[name]
    sys.path.insert(0, folder)
    try:
        return importlib.import_module("msim_other")
    finally:
        sys.path.remove(folder)


def compare(other: ModuleType, n: int, threads: int, repeats: int, seconds: float) -> None:
    """The hanging cloth's FMS steps without and with self-contact under `other` and under this
    build, in turn, `repeats` times: per window, each step's median, averaged."""
    def alike(sims):
        if not all(np.array_equal(sims[k].positions, sims[k + 2].positions) for k in (0, 1)):
            raise SystemExit("the two builds move the cloth apart: they would be timed on "
                             "different work")

    median = median_steps(lambda: [hanging_cloth(mod, n, threads, self_contact=touched)
                                   for mod in (other, msim) for touched in (False, True)],
                          round(30 * seconds), repeats, alike)
    for what, window in windows(seconds):
        plain0, touched0, plain1, touched1 = (median[i, window].mean() for i in range(4))
        print(f"hanging {n}x{n} cloth, fms step, {threads} thread(s), {what}: other build "
              f"{1e3 * plain0:.3f} ms without self-contact, {1e3 * touched0:.3f} ms with it "
              f"(ratio {touched0 / plain0:.3f}); this build {1e3 * plain1:.3f} ms, "
              f"{1e3 * touched1:.3f} ms (ratio {touched1 / plain1:.3f}); self-contact's cost "
              f"under this build {1e3 * ((touched1 - plain1) - (touched0 - plain0)):+.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="another checkout of msim, built in place")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    args = parser.parse_args()
    if args.seconds < 1 or args.repeats < 1:
        parser.error("--seconds must be at least 1 (the cloth crumples from step 21) and "
                     "--repeats at least 1")
    with tempfile.TemporaryDirectory() as folder:
        compare(other_build(args.other, folder), args.n, args.threads, args.repeats, args.seconds)


if __name__ == "__main__":
    main()
