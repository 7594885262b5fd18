#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds nnvmc and runs the main job: ResNet-18, exported
# from PyTorch to ONNX, compiled and run by nnvm on the host CPU. Prints nnvm's result checked
# against PyTorch's, nnvm's time on 1 and 2 threads (with a per-op profile) and PyTorch's time
# on the same model and input. Exits 1 when nnvm fails or disagrees with PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=20
WARMUP=3

bash scripts/install_deps.sh
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
# Debian's own PyTorch (1.13) exports the model and is the reference; no pip, no download.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  python3-torch python3-torchvision python3-numpy >/dev/null
PY=/usr/bin/python3

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target nnvmc
NNVMC=build/tools/nnvmc/nnvmc

MODEL_DIR=build/models/resnet18
MODEL=$MODEL_DIR/resnet18.onnx
# The exporter writes the .onnx last, so its presence means the input and output are there too.
[ -f "$MODEL" ] || $PY scripts/models/export_resnet18.py "$MODEL_DIR"

section() { printf '\n== %s\n' "$1"; }
median_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$1"; }

section "nnvm: ResNet-18 (random weights, seed 0), 1x3x224x224 float32, once, checked against PyTorch"
rm -rf "$MODEL_DIR/nnvm"
if ! $NNVMC run "$MODEL" -i "$MODEL_DIR/input_0.npy" --save-outputs "$MODEL_DIR/nnvm" --print-pass-times; then
  echo "FAIL: nnvm could not compile or run $MODEL (error above)"
  exit 1
fi
status=0
$PY scripts/models/compare_outputs.py "$MODEL_DIR/output_0.npy" "$MODEL_DIR/nnvm/output_0.npy" || status=1

# Other work on the machine skews every number below, PyTorch's OpenMP threads most of all.
section "timing on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (meaningful only when near 0)"
declare -A nnvm_ms torch_ms
for threads in 1 2; do
  section "nnvm vs PyTorch, $threads thread(s), $REPEAT timed runs after $WARMUP warm-up runs"
  profile=()
  [ "$threads" = 2 ] && profile=(--profile)
  out=$($NNVMC bench "$MODEL" -i "$MODEL_DIR/input_0.npy" --threads "$threads" \
    --repeat "$REPEAT" --warmup "$WARMUP" "${profile[@]}")
  echo "nnvm: $out"
  nnvm_ms[$threads]=$(median_of "$out")
  out=$($PY scripts/models/time_pytorch.py "$MODEL_DIR" "$threads" "$REPEAT" "$WARMUP")
  echo "$out"
  torch_ms[$threads]=$(median_of "$out")
done

section "summary (median ms per inference; ratio = nnvm time / PyTorch time, below 1 means nnvm is faster)"
printf '%-8s %12s %12s %8s\n' threads nnvm PyTorch ratio
for threads in 1 2; do
  awk -v t="$threads" -v n="${nnvm_ms[$threads]}" -v p="${torch_ms[$threads]}" \
    'BEGIN { printf "%-8s %12.2f %12.2f %8.2f\n", t, n, p, n / p }'
done
[ "$status" = 0 ] && echo "result: PASS" || echo "result: FAIL (nnvm's output differs from PyTorch's, see above)"
exit "$status"
