# Entry points. `make demo` and `make test` do all set-up on a fresh Debian machine.
BUILD ?= build
JOBS ?= 2
STRATA = $(BUILD)/bin/strata
PY = /usr/bin/python3

.PHONY: all deps configure build demo test test-data asan tsan fuzz fuzz-smoke bench install package clean browser-deps bench-gemm

all: build

deps:
	@bash scripts/install_deps.sh

# Optimized, with line tables (-g1): what backtraces, perf and gdb's `bt` need; full debug info
# (-g) makes the build a third slower. Reconfigure with -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g"
# for a debugger's view of locals.
RELEASE_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(RELEASE_FLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j$(JOBS)

# The bundled default model: an MLP trained on sklearn's digits, run on its held-out samples.
demo: build
	$(STRATA) run models/digits/digits.onnx \
	  --input input=models/digits/digits_test_x.npy \
	  --labels models/digits/digits_test_y.npy --output-dir $(BUILD)/demo

# Generated test data (not committed): ONNX node tests and the torchvision/transformer zoo (with
# two of the bench models: padded channel blocks, regrouped convs, channel shuffles).
test-data: deps
	bash scripts/gen_node_tests.sh $(BUILD)/onnx-node-tests
	$(PY) scripts/export_zoo.py $(BUILD)/zoo
	$(PY) scripts/export_bench_models.py $(BUILD)/zoo shufflenet_v2_x1_0 regnet_y_400mf

# The sanitizer build (clang-19, Debug): everything under AddressSanitizer + UBSan, and with the
# coverage instrumentation libFuzzer needs, so the same build gives the tools, every unit test and
# the fuzz targets (which replay their corpora under ctest). Line tables are all the sanitizers'
# reports need, and full debug info doubles the build's time. -O1 (as ASan's docs advise): the
# build takes a third longer and the tests under it (loop interpreter, lowering, conformance)
# run several times faster than at -O0.
asan: deps
	@bash scripts/install_deps.sh fuzz
	cmake -S . -B $(BUILD)-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	  -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only"
	ninja -C $(BUILD)-asan -j$(JOBS)

# The runtime (executor, run contexts, thread pool) under ThreadSanitizer: its unit tests,
# including 8 threads x 200 runs on one executor through contexts of their own.
tsan: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja $(RELEASE_FLAGS) -DSTRATA_TSAN=ON
	ninja -C $(BUILD)-tsan -j$(JOBS) strata-runtime-tests
	TSAN_OPTIONS=halt_on_error=1 $(BUILD)-tsan/bin/strata-runtime-tests

# libFuzzer over every input path (docs/fuzzing.md): builds the fuzz targets optimized with
# clang-19 (coverage, ASan, UBSan) in $(BUILD)-fuzz and runs each for FUZZ_SECONDS (default 60);
# FUZZ_TARGETS picks some. Failing inputs land in $(BUILD)-fuzz/fuzz-crashes.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	@bash scripts/install_deps.sh fuzz
	cmake -S . -B $(BUILD)-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
	ninja -C $(BUILD)-fuzz -j$(JOBS) strata-fuzzers
	bash scripts/run_fuzzers.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# What CI fuzzes (`make test`): every target for a few seconds, from its corpus and seeds, with
# the sanitizer build's fuzz targets. Failing inputs land in $(BUILD)-asan/fuzz-crashes.
FUZZ_SMOKE_SECONDS ?= 10
fuzz-smoke: asan
	bash scripts/run_fuzzers.sh $(BUILD)-asan $(FUZZ_SMOKE_SECONDS)

# Every test: unit tests, lit, ONNX conformance against the expected-pass lists, the model zoo;
# under AddressSanitizer + UBSan every unit test, the whole lit suite (hostile inputs, AOT
# libraries, the C examples), the fuzz targets' regression corpora and the conformance suite on
# the interpreter and the JIT (the zoo alone is left out: hours in a Debug build); under
# ThreadSanitizer the runtime's tests; and a short libFuzzer run of every target.
# use_sigaltstack=0: should anything make LLVM install its own alternate signal stack on a
# thread, ASan's thread teardown would try to unmap it as its own ("unable to unmap").
# allocator_may_return_null=1: tests of absurd sizes expect a refusal, not an abort.
# quarantine_size_mb=64 (default 256): freed memory is still held back from reuse long enough to
# catch a use after free of anything freed in the last 64 MB of frees; a compile (LLVM allocates
# and frees a lot) runs a fifth faster than with the default's page-fault churn.
ASAN_ENV = ASAN_OPTIONS=use_sigaltstack=0:allocator_may_return_null=1:quarantine_size_mb=64 \
  UBSAN_OPTIONS=print_stacktrace=1
ASAN_CONFORMANCE = $(ASAN_ENV) $(BUILD)-asan/bin/strata conformance $(BUILD)/onnx-node-tests
CONFORMANCE_FAILURES = grep -E "^(FAIL|REGRESSION)|Sanitizer|runtime error"
test: build test-data browser-deps asan tsan fuzz-smoke
	cd $(BUILD)-asan && $(ASAN_ENV) ctest -j$(JOBS) -E "zoo|conformance|dynamic-shapes" --output-on-failure
	# The interpreter's conformance run (4 s) and the JIT's in two shards (90 s in all), side by
	# side: each process is one thread.
	$(ASAN_CONFORMANCE) --expected conformance/interp-expected.txt \
	  > $(BUILD)-asan/conformance.log 2>&1 & interp=$$!; \
	$(ASAN_CONFORMANCE) --engine jit --shard 0/2 --expected conformance/jit-expected.txt \
	  > $(BUILD)-asan/conformance-jit-0.log 2>&1 & jit0=$$!; \
	$(ASAN_CONFORMANCE) --engine jit --shard 1/2 --expected conformance/jit-expected.txt \
	  > $(BUILD)-asan/conformance-jit-1.log 2>&1; jit1=$$?; \
	wait $$jit0; jit0=$$?; wait $$interp; interp=$$?; status=0; \
	[ $$interp -eq 0 ] || { $(CONFORMANCE_FAILURES) $(BUILD)-asan/conformance.log; status=1; }; \
	[ $$jit0 -eq 0 ] || { $(CONFORMANCE_FAILURES) $(BUILD)-asan/conformance-jit-0.log; status=1; }; \
	[ $$jit1 -eq 0 ] || { $(CONFORMANCE_FAILURES) $(BUILD)-asan/conformance-jit-1.log; status=1; }; \
	exit $$status
	@echo "conformance (interp, jit) under AddressSanitizer + UBSan: no regressions"
	cd $(BUILD) && ctest -j$(JOBS) --output-on-failure

# What the explain-zoo test opens reports with: Debian's chromium, Node.js and npm's
# playwright-core (no browser download: it drives /usr/bin/chromium). Node 18 or newer.
PLAYWRIGHT_VERSION = 1.49.1
browser-deps: deps
	@bash scripts/install_deps.sh browser
	@[ -d $(BUILD)/node/node_modules/playwright-core ] || \
	  npm install --prefix $(BUILD)/node --ignore-scripts --no-audit --no-fund \
	    playwright-core@$(PLAYWRIGHT_VERSION)

# Latency of strata's JIT engine next to ONNX Runtime (the npm package onnxruntime-node, CPU) on
# the zoo models. Node.js and the package are installed here only when missing; the package's
# install script (a download) is skipped, the CPU library it ships is enough.
ORT_NODE_DIR = $(BUILD)/node
ORT_NODE_VERSION = 1.30.0
BENCH_THREADS ?= 2
BENCH_ITERS ?= 20
bench: build
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends nodejs npm; }
	@[ -d $(ORT_NODE_DIR)/node_modules/onnxruntime-node ] || \
	  npm install --prefix $(ORT_NODE_DIR) --ignore-scripts --no-audit --no-fund \
	    onnxruntime-node@$(ORT_NODE_VERSION)
	@[ -f $(BUILD)/zoo/resnet18.onnx ] || $(PY) scripts/export_zoo.py $(BUILD)/zoo
	@[ -f $(BUILD)/zoo/gpt2_decoder.output.npy ] || $(PY) scripts/export_bench_models.py $(BUILD)/zoo
	STRATA_NODE_DIR=$(ORT_NODE_DIR) $(PY) scripts/bench_compare.py --zoo $(BUILD)/zoo \
	  --strata $(STRATA) --threads $(BENCH_THREADS) --iters $(BENCH_ITERS)

# strata's SGEMM next to OpenBLAS (Debian's libopenblas-dev, installed here only for this) at the
# square and transformer shapes, with this machine's measured FMA peak.
bench-gemm: deps
	@bash scripts/install_deps.sh gemm
	cmake $(BUILD) >/dev/null
	ninja -C $(BUILD) -j$(JOBS) strata-bench-gemm
	$(BUILD)/bin/strata-bench-gemm --threads $(BENCH_THREADS)

# `make install PREFIX=/opt/strata` (default /usr/local); `make package`: build/strata_*.deb
# (docs/install.md). Both are tried on a fresh prefix and folder by the `install` test.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

package: build
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
