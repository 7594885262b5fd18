#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds nnvm and runs every test, printing how long each
# test group took.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
start=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
echo "build: $(( $(date +%s) - start )) s"
export NNVM_CACHE_DIR="$PWD/build/kernel_cache"
ctest --test-dir build --output-on-failure --timeout 1200
