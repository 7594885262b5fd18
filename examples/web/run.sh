#!/usr/bin/env bash
# The web demo in one command: compile an image network to WebAssembly and serve the page.
#   bash examples/web/run.sh MODEL_DIR [BUILD_DIR] [--check]
# MODEL_DIR holds model.onnx (1x3x224x224 input) and, from make_sample.py, sample.png,
# labels.json and sample_top5.txt. Without --check it serves the page until Ctrl-C; with it,
# headless Chromium loads the page on sample.png and the printed top-5 must match PyTorch's.
# Needs clang, lld, wasi-libc, libclang-rt-14-dev-wasm32, nodejs (and chromium for --check).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
model="$(cd "$1" && pwd)"
build="$(cd "${2:-$here/../../build}" && pwd)"
site="$build/examples/web_site"
rm -rf "$site"
"$build/tools/nnvmc/nnvmc" compile "$model/model.onnx" --target "wasm -msimd128" --name classifier -o "$site"
cp "$here/index.html" "$here/demo.mjs" "$model/sample.png" "$model/labels.json" "$site/"
if [ "${3:-}" = --check ]; then
  node "$here/check.mjs" "$site" "$model/sample_top5.txt"
else
  node "$here/serve.mjs" "$site"
fi
