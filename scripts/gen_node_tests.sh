#!/usr/bin/env bash
# Generate the ONNX backend *node* tests from Debian's python3-onnx (1.12).
#
# Usage: scripts/gen_node_tests.sh [OUTDIR]      (default: build/onnx-node-tests)
#
# Result: OUTDIR/<test_name>/{model.onnx,test_data_set_0/{input_*,output_*}.pb}
# The generator writes DIR/node/<test>, DIR/simple/<test>, ...; we generate into
# a temp dir and move only node/* so OUTDIR holds the node test folders directly.
# Idempotent: does nothing if OUTDIR/.stamp exists (delete it to regenerate).
set -euo pipefail

# Debian's onnx/numpy live only in the system interpreter, not the python3 on PATH.
PY=${PYTHON:-/usr/bin/python3}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-build/onnx-node-tests}
STAMP="$OUTDIR/.stamp"

if [[ -f "$STAMP" ]]; then
  echo "gen_node_tests: $OUTDIR up to date ($(cat "$STAMP"))"
  exit 0
fi

start=$(date +%s)
mkdir -p "$(dirname "$OUTDIR")"
# Temp dir next to OUTDIR so the final mv is a cheap same-filesystem rename.
TMP=$(mktemp -d "$(dirname "$OUTDIR")/.onnx-gen.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

"$PY" "$SCRIPT_DIR/gen_node_tests.py" "$TMP"

if [[ ! -d "$TMP/node" ]]; then
  echo "gen_node_tests: generator produced no node/ directory" >&2
  exit 1
fi

# Replace any partial previous output (no stamp => not trusted).
rm -rf "$OUTDIR"
mv "$TMP/node" "$OUTDIR"

count=$(find "$OUTDIR" -mindepth 1 -maxdepth 1 -type d | wc -l)
onnx_ver=$("$PY" -c 'import onnx; print(onnx.__version__)')
echo "onnx $onnx_ver: $count node tests" > "$STAMP"
echo "gen_node_tests: wrote $count node tests to $OUTDIR in $(( $(date +%s) - start ))s"
