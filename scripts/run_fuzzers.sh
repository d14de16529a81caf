#!/bin/bash
# Runs every libFuzzer target of a `make fuzz` build for SECONDS each (default 60), FUZZ_JOBS
# (default: the core count) at a time: `scripts/run_fuzzers.sh BUILD_DIR [SECONDS] [TARGET...]`.
# Each target starts from its regression corpus (fuzz/corpus/<target>, in the repository) plus
# seeds gathered from the test data when they exist (conformance models and data, the zoo's
# small models, lit inputs); new inputs go to BUILD_DIR/fuzz-work/<target>. A failing input is
# written to BUILD_DIR/fuzz-crashes/<target>-* and the run exits non-zero: fix the bug, then copy
# the input into fuzz/corpus/<target>/ so every build replays it (ctest fuzz-replay-<target>).
set -u
BUILD=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [TARGET...]}
SECONDS_EACH=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGETS=${*:-onnx_import tensor_proto npy_reader graph_parser loop_parser aot_plan differential}
TESTS=$ROOT/build/onnx-node-tests
mkdir -p "$BUILD/fuzz-crashes"

seed() { # seed TARGET DIR: extra seeds from the test data, a bounded sample
  local t=$1 dir=$2
  mkdir -p "$dir"
  case $t in
    onnx_import)
      [ -d "$TESTS" ] && find "$TESTS" -name model.onnx -size -64k | sort | head -400 |
        while read -r f; do cp "$f" "$dir/$(basename "$(dirname "$f")").onnx"; done ;;
    tensor_proto)
      [ -d "$TESTS" ] && find "$TESTS" -name 'input_*.pb' -size -16k | sort | head -300 |
        while read -r f; do cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-12).pb"; done ;;
    graph_parser)
      find "$ROOT/test/graph" -name '*.sg' -size -32k | while read -r f; do
        cp "$f" "$dir/$(basename "$f")"; done ;;
    loop_parser)
      find "$ROOT/test/loop" -name '*.sl' -size -32k | while read -r f; do
        cp "$f" "$dir/$(basename "$f")"; done ;;
  esac
}

run_target() { # run_target TARGET: one fuzzing run, its summary, its exit status
  local t=$1 bin=$BUILD/bin/fuzz-$1 work=$BUILD/fuzz-work/$1 seeds=$BUILD/fuzz-seeds/$1 rc
  mkdir -p "$work"
  seed "$t" "$seeds"
  # Absurd sizes are refused by the code under test; the allocator must say no rather than abort.
  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:use_sigaltstack=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=6144 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-crashes/$t-" \
      "$work" "$ROOT/fuzz/corpus/$t" "$seeds" > "$BUILD/fuzz-$t.log" 2>&1
  rc=$?
  { echo "== $t: $SECONDS_EACH s"
    grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)|cov: " "$BUILD/fuzz-$t.log" | tail -4
    if [ $rc -ne 0 ]; then
      echo "FAILED $t (exit $rc): see $BUILD/fuzz-$t.log"
      grep -m5 -E "ERROR|property violated|Test unit written" "$BUILD/fuzz-$t.log"
    fi; } > "$BUILD/fuzz-$t.summary"
  return $rc
}

for t in $TARGETS; do
  [ -x "$BUILD/bin/fuzz-$t" ] || { echo "error: $BUILD/bin/fuzz-$t not built (make fuzz builds it)"; exit 1; }
done
JOBS=${FUZZ_JOBS:-$(nproc)}
status=0 running=0
for t in $TARGETS; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
for t in $TARGETS; do cat "$BUILD/fuzz-$t.summary"; done
exit $status
