"""Build the msim C extension against SuiteSparse CHOLMOD.

CHOLMOD is located, in order, through pkg-config (SuiteSparse 7 ships CHOLMOD.pc), the
SUITESPARSE_INCLUDE_DIR / SUITESPARSE_LIBRARY_DIR environment variables, and the Debian
location /usr/include/suitesparse. A missing CHOLMOD stops the build with an install hint.
"""

import os
import sys
import shutil
import subprocess
from pathlib import Path

import numpy
from setuptools import Extension, setup

INSTALL_HINT = (
    "msim needs SuiteSparse CHOLMOD headers and library. Install them with\n"
    "  Debian/Ubuntu: apt-get install libsuitesparse-dev\n"
    "  Fedora:        dnf install suitesparse-devel\n"
    "  macOS:         brew install suite-sparse\n"
    "  conda:         conda install -c conda-forge suitesparse\n"
    "or point SUITESPARSE_INCLUDE_DIR (the folder holding cholmod.h) and\n"
    "SUITESPARSE_LIBRARY_DIR (the folder holding libcholmod) at an existing install."
)


def _pkg_config() -> tuple[list[str], list[str]] | None:
    """Include and library dirs from pkg-config's CHOLMOD module, or None."""
    if shutil.which("pkg-config") is None:
        return None
    try:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", "CHOLMOD"], check=True,
                                capture_output=True, text=True).stdout.split()
        libs = subprocess.run(["pkg-config", "--libs-only-L", "CHOLMOD"], check=True,
                              capture_output=True, text=True).stdout.split()
    except subprocess.CalledProcessError:
        return None
    return [f[2:] for f in cflags], [f[2:] for f in libs]


def find_cholmod() -> tuple[list[str], list[str]]:
    """Return (include_dirs, library_dirs) for CHOLMOD or exit with an install hint."""
    found = _pkg_config()
    if found is None and os.environ.get("SUITESPARSE_INCLUDE_DIR"):
        found = ([os.environ["SUITESPARSE_INCLUDE_DIR"]],
                 [d for d in [os.environ.get("SUITESPARSE_LIBRARY_DIR")] if d])
    if found is None:
        for inc in ["/usr/include/suitesparse", "/usr/local/include/suitesparse",
                    "/opt/homebrew/include/suitesparse"]:
            if Path(inc, "cholmod.h").exists():
                found = ([inc], [])
                break
    if found is None or not any(Path(d, "cholmod.h").exists() for d in found[0]):
        raise SystemExit("error: CHOLMOD not found.\n" + INSTALL_HINT)
    return found


include_dirs, library_dirs = find_cholmod()
# threads inside a step (System.threads); without OpenMP the pragmas are ignored and
# threads > 1 runs on one core
OPENMP = [] if sys.platform == "darwin" or os.environ.get("MSIM_NO_OPENMP") else ["-fopenmp"]
# the engine (csrc/engine) knows nothing of Python; the binding (csrc/binding) converts
sources = sorted(str(p) for p in Path("csrc").glob("*/*.c"))

setup(
    ext_modules=[
        Extension(
            "msim._core",
            sources=sources,
            include_dirs=["csrc/engine", "csrc/binding", numpy.get_include(), *include_dirs],
            library_dirs=library_dirs,
            libraries=["cholmod"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_25_API_VERSION")],
            extra_compile_args=["-O3", "-fvisibility=hidden", "-fno-math-errno", "-std=c11", "-Wall", "-Wextra",
                                "-Wno-unused-parameter", *OPENMP],
            extra_link_args=OPENMP,
        )
    ]
)
