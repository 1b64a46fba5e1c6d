#!/usr/bin/env bash
# Set up msim on a fresh machine: SuiteSparse CHOLMOD (Debian's libsuitesparse-dev when it is
# missing), a virtual environment in .venv, and msim built and installed there (editable) with
# its plot and test extras. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# CHOLMOD headers and library, and an optimised BLAS for CHOLMOD's supernodal factorisation
# (Debian's default reference BLAS factors ~6x slower). The pthreads build of OpenBLAS is safe
# to call from several threads at once (its serial build is not); msim asks it for one thread
# per call, so results stay deterministic and parallelism is left to the caller
packages=()
if [ -z "${SUITESPARSE_INCLUDE_DIR:-}" ] && ! pkg-config --exists CHOLMOD 2>/dev/null &&
  [ ! -e /usr/include/suitesparse/cholmod.h ]; then
  packages+=(libsuitesparse-dev)
fi
if command -v apt-get >/dev/null && ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
  packages+=(libopenblas0-pthread)
fi
if [ ${#packages[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    echo "setup: installing ${packages[*]}"
    apt_install "${packages[@]}"
  else
    echo "setup: CHOLMOD not found and no apt-get; install SuiteSparse (see README)" >&2
    exit 1
  fi
fi

# a virtual environment with msim in it
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$python" -m venv .venv 2>/dev/null; then
    echo "setup: installing python3-venv"
    apt_install python3-venv
    "$python" -m venv .venv
  fi
fi
.venv/bin/python -m pip install -q --upgrade pip "setuptools>=77"
.venv/bin/python -m pip install -q -e ".[all]"
echo "setup: msim $(.venv/bin/python -c 'import msim; print(msim.__version__, "with CHOLMOD", msim.cholmod_version())')"
