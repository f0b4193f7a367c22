#!/usr/bin/env bash
# Installs what the build needs when it is missing (Debian packages), then
# configures and builds luminal into ./build with at most $LUMINAL_JOBS (2) jobs.
# Sourced by scripts/test.sh and scripts/run.sh.
set -euo pipefail

LUMINAL_JOBS=${LUMINAL_JOBS:-2}
BUILD_DIR=${BUILD_DIR:-build}

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "== installing Debian packages: $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
[ -f /usr/include/gmock/gmock.h ] || missing+=(libgmock-dev)
[ -f /usr/include/nlohmann/json.hpp ] || missing+=(nlohmann-json3-dev)
# clang + its libFuzzer runtime: the GGUF / safetensors fuzzers run (bounded) as tests.
command -v clang++ >/dev/null || missing+=(clang)
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null ||
  missing+=(libclang-rt-14-dev)
# OpenBLAS: the CPU backend's BLAS alternative for matrix products (loaded at run time).
compgen -G "/usr/lib/*/libopenblas.so.0" >/dev/null || missing+=(libopenblas0-pthread)
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLUMINAL_WERROR=ON \
  -DLUMINAL_BUILD_FUZZERS=ON >/dev/null
cmake --build "$BUILD_DIR" -j "$LUMINAL_JOBS"
