#!/usr/bin/env bash
# Installs what dlc needs from Debian's packages (only what is missing), then
# configures and builds it in build/. Safe to run again: a second run
# installs nothing and rebuilds only what changed.
#
#   scripts/setup.sh            install, configure, build
#   BUILD_DIR=out scripts/setup.sh
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
LLVM_VERSION=22

packages=(
  cmake ninja-build g++ git
  "libmlir-${LLVM_VERSION}-dev" "mlir-${LLVM_VERSION}-tools"
  "llvm-${LLVM_VERSION}-dev" "llvm-${LLVM_VERSION}-tools"
  libgtest-dev libgmock-dev
  libdnnl-dev
  libopenmpi-dev openmpi-bin
  python3-torch python3-torchvision python3-numpy
  # The sanitizer build and the fuzz targets (scripts/sanitize.sh,
  # scripts/fuzz.sh): clang 22 with its sanitizer runtimes, libFuzzer and
  # OpenMP, apart from the g++ build.
  clang-22 libclang-rt-22-dev libomp-22-dev
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: every Debian package is installed"
fi

if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: CUDA toolkit found: $(/usr/local/cuda/bin/nvcc --version | tail -n 2 | head -n 1)"
else
  echo "setup: no CUDA toolkit under /usr/local/cuda; building without the CUDA backend"
fi

cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DMLIR_DIR="/usr/lib/llvm-${LLVM_VERSION}/lib/cmake/mlir" \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
# Two jobs: an MLIR translation unit takes up to ~1.2 GB and these machines
# have 2 cores.
cmake --build "$BUILD_DIR" -j "${JOBS:-2}"
