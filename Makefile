# Entry points. `make demo` and `make test` do all set-up on a fresh Debian machine.
BUILD ?= build
JOBS ?= 2
STRATA = $(BUILD)/bin/strata
PY = /usr/bin/python3

.PHONY: all deps configure build demo test test-data asan tsan fuzz fuzz-smoke bench clean

all: build

deps:
	@bash scripts/install_deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j$(JOBS)

# The bundled default model: an MLP trained on sklearn's digits, run on its held-out samples.
demo: build
	$(STRATA) run models/digits/digits.onnx \
	  --input input=models/digits/digits_test_x.npy \
	  --labels models/digits/digits_test_y.npy --output-dir $(BUILD)/demo

# Generated test data (not committed): ONNX node tests and the torchvision/transformer zoo.
test-data: deps
	bash scripts/gen_node_tests.sh $(BUILD)/onnx-node-tests
	$(PY) scripts/export_zoo.py $(BUILD)/zoo

# AddressSanitizer + UBSan build of everything: the tools, every unit test, the fuzz targets'
# replay drivers.
asan: deps
	cmake -S . -B $(BUILD)-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_ASAN=ON
	ninja -C $(BUILD)-asan -j$(JOBS)

# The runtime (executor, run contexts, thread pool) under ThreadSanitizer: its unit tests,
# including 8 threads x 200 runs on one executor through contexts of their own.
tsan: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_TSAN=ON
	ninja -C $(BUILD)-tsan -j$(JOBS) strata-runtime-tests
	TSAN_OPTIONS=halt_on_error=1 $(BUILD)-tsan/bin/strata-runtime-tests

# libFuzzer over every input path (docs/fuzzing.md): builds the fuzz targets with clang-19
# (coverage, ASan, UBSan) in $(BUILD)-fuzz and runs each for FUZZ_SECONDS (default 60);
# FUZZ_TARGETS picks some. Failing inputs land in $(BUILD)-fuzz/fuzz-crashes.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_CONFIGURE = cmake -S . -B $(BUILD)-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTRATA_FUZZ=ON -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
fuzz:
	@bash scripts/install_deps.sh fuzz
	$(FUZZ_CONFIGURE)
	ninja -C $(BUILD)-fuzz -j$(JOBS) strata-fuzzers
	bash scripts/run_fuzzers.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# What CI fuzzes (`make test`): every target for a few seconds, from its corpus and seeds.
FUZZ_SMOKE_SECONDS ?= 10
fuzz-smoke:
	@bash scripts/install_deps.sh fuzz
	$(FUZZ_CONFIGURE)
	ninja -C $(BUILD)-fuzz -j$(JOBS) strata-fuzzers
	bash scripts/run_fuzzers.sh $(BUILD)-fuzz $(FUZZ_SMOKE_SECONDS)

# Every test: unit tests, lit, ONNX conformance against the expected-pass lists, the model zoo;
# under AddressSanitizer + UBSan every unit test, the whole lit suite (hostile inputs, AOT
# libraries, the C examples), the fuzz targets' regression corpora and the conformance suite on
# the interpreter and the JIT (the zoo alone is left out: hours in a Debug build); under
# ThreadSanitizer the runtime's tests; and a short libFuzzer run of the quick-to-build targets.
# use_sigaltstack=0: should anything make LLVM install its own alternate signal stack on a
# thread, ASan's thread teardown would try to unmap it as its own ("unable to unmap").
# allocator_may_return_null=1: tests of absurd sizes expect a refusal, not an abort.
ASAN_ENV = ASAN_OPTIONS=use_sigaltstack=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1
test: build test-data asan tsan fuzz-smoke
	cd $(BUILD)-asan && $(ASAN_ENV) ctest -E "zoo|conformance" --output-on-failure
	$(ASAN_ENV) $(BUILD)-asan/bin/strata conformance $(BUILD)/onnx-node-tests \
	  --expected conformance/interp-expected.txt > $(BUILD)-asan/conformance.log \
	  || (grep -E "^(FAIL|REGRESSION)|Sanitizer|runtime error" $(BUILD)-asan/conformance.log; exit 1)
	$(ASAN_ENV) $(BUILD)-asan/bin/strata conformance $(BUILD)/onnx-node-tests --engine jit \
	  --expected conformance/jit-expected.txt > $(BUILD)-asan/conformance-jit.log \
	  || (grep -E "^(FAIL|REGRESSION)|Sanitizer|runtime error" $(BUILD)-asan/conformance-jit.log; exit 1)
	@echo "conformance (interp, jit) under AddressSanitizer + UBSan: no regressions"
	cd $(BUILD) && ctest --output-on-failure

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
	STRATA_NODE_DIR=$(ORT_NODE_DIR) $(PY) scripts/bench_compare.py --zoo $(BUILD)/zoo \
	  --strata $(STRATA) --threads $(BENCH_THREADS) --iters $(BENCH_ITERS)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
