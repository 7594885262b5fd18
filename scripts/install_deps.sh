#!/usr/bin/env bash
# Installs what building and testing nnvm needs on Debian 12. Safe to run repeatedly.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config doctest-dev libeigen3-dev libopenblas-dev llvm-15-dev \
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata libcli11-dev libdnnl-dev nlohmann-json3-dev libhdf5-dev libzip-dev \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
  clang lld wasi-libc libclang-rt-14-dev-wasm32 nodejs chromium \
  opencl-headers ocl-icd-opencl-dev ocl-icd-libopencl1 pocl-opencl-icd clinfo >/dev/null
