#!/usr/bin/env bash
# Build the documentation site into docs/_build/html: the docs extra into .venv (made by
# scripts/setup.sh), then Sphinx with warnings as errors. The notebooks are executed (a cell
# that raises fails the build) and cached in docs/_build/.jupyter_cache, so a rebuild reruns
# only the notebooks that changed. Extra arguments go to sphinx-build (e.g. -E to reread all).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || { echo "docs: run scripts/setup.sh first" >&2; exit 1; }
.venv/bin/python -m pip install -q -e ".[docs]"
# notebooks draw with matplotlib's non-interactive backend, as in the tests
MPLBACKEND=Agg .venv/bin/python -m sphinx -W --keep-going -n -b html "$@" docs docs/_build/html
echo "docs: built docs/_build/html/index.html"
