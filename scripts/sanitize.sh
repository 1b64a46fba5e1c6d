#!/usr/bin/env bash
# Build the C extension with AddressSanitizer and UndefinedBehaviorSanitizer in a scratch copy
# of the tracked files and run the test suite under them; any sanitizer report fails the run.
# Leak detection is off (CPython's own allocations drown it); the tests' RSS check covers leaks.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(command -v "${PYTHON:-$PWD/.venv/bin/python}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$scratch"
cd "$scratch"

flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1"
CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" "$python" setup.py -q build_ext --inplace
runtime="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
MSIM_SANITIZERS=1 LD_PRELOAD="$runtime" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$python" -m pytest -q -p no:cacheprovider tests --ignore=tests/test_notebooks.py
