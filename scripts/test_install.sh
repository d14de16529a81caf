#!/usr/bin/env bash
# Installs a build twice, as a user would get it, and uses each copy with no compiler, linker or
# build tree in reach (PATH=/nonexistent, a clean environment):
#   1. `cmake --install BUILD --prefix TMP/prefix`;
#   2. the .deb from `cpack` (BUILD/strata_*.deb), unpacked into TMP/root (a fresh folder).
# For each: `strata compile` of the digits model into a library, `strata run` of it against the
# JIT's answer, and the Python package from that prefix compiling, saving and loading the model.
#   scripts/test_install.sh BUILD [--no-package]
set -euo pipefail
BUILD=$(cd "${1:?usage: test_install.sh BUILD [--no-package]}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DIGITS=$SRC/models/digits/digits.onnx
X=$SRC/models/digits/digits_test_x.npy

check_prefix() { # PREFIX LABEL
  local prefix=$1 label=$2 work=$TMP/work-$2
  mkdir -p "$work"
  local clean=(env -i HOME="$work" PATH=/nonexistent)
  "${clean[@]}" "$prefix/bin/strata" compile "$DIGITS" -o "$work/digits.so" > "$work/compile.log"
  [ -f "$work/digits.h" ] || { echo "$label: no header next to the library"; exit 1; }
  "${clean[@]}" "$prefix/bin/strata" run "$work/digits.so" --input "input=$X" \
    --output-dir "$work/aot" > /dev/null
  "${clean[@]}" "$prefix/bin/strata" run "$DIGITS" --input "input=$X" \
    --output-dir "$work/jit" > /dev/null
  "${clean[@]}" PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 - "$prefix" \
    "$work" "$DIGITS" "$X" <<'PY'
import os, sys
import numpy as np
prefix, work, digits, x_path = sys.argv[1:]
import strata
assert os.path.realpath(strata.__file__).startswith(os.path.realpath(prefix)), strata.__file__
x = np.load(x_path)
aot = np.load(os.path.join(work, "aot", "logits.npy"))
jit = np.load(os.path.join(work, "jit", "logits.npy"))
assert np.abs(aot - jit).max() <= 1e-5 * np.abs(jit).max(), "the library and the JIT disagree"
model = strata.compile(digits)
y = model(x)
assert np.abs(y - jit).max() <= 1e-5 * np.abs(jit).max()
lib = strata.load(model.save(os.path.join(work, "py.so")))
assert np.abs(lib(x) - y).max() <= 1e-5 * np.abs(y).max()
PY
  echo "$label: strata compile -o (no compiler on PATH), strata run and import strata all work"
}

cmake --install "$BUILD" --prefix "$TMP/prefix" > /dev/null
check_prefix "$TMP/prefix" "cmake --install"

if [ "${2:-}" != --no-package ]; then
  rm -f "$BUILD"/strata_*.deb
  (cd "$BUILD" && cpack -G DEB > "$TMP/cpack.log" 2>&1) || { cat "$TMP/cpack.log"; exit 1; }
  deb=$(ls "$BUILD"/strata_*.deb)
  dpkg-deb --info "$deb" | grep -E "Depends" | sed 's/^ */package /'
  dpkg-deb -x "$deb" "$TMP/root"
  check_prefix "$TMP/root/usr" ".deb"
fi
