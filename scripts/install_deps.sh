#!/usr/bin/env bash
# Installs the Debian packages strata needs, only when some are missing (idempotent).
# `install_deps.sh fuzz` adds Debian's clang and its libFuzzer/sanitizer runtimes (make fuzz),
# `install_deps.sh browser` Chromium and Node.js for the explain report's browser test.
set -euo pipefail
PACKAGES=(
  cmake ninja-build g++ ccache
  llvm-19-dev llvm-19-tools liblld-19-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  python3-numpy python3-onnx python3-torch python3-torchvision python3-sklearn
  pybind11-dev python3-pytest dpkg-dev
)
if [ "${1:-}" = fuzz ]; then
  PACKAGES+=(clang-19 libclang-rt-19-dev)
fi
# `install_deps.sh gemm`: OpenBLAS, the reference of make bench-gemm (benchmark only).
if [ "${1:-}" = gemm ]; then
  PACKAGES+=(libopenblas-dev)
fi
# `install_deps.sh browser`: what strata explain's browser test needs (make browser-deps).
if [ "${1:-}" = browser ]; then
  PACKAGES+=(chromium)
  command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
