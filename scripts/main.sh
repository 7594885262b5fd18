#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds nnvm and runs the main job: a scheduled matmul
# whose loop nest, generated C, result check and timing are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target quickstart
./build/examples/quickstart
