#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds nnvm and runs every test, printing how long the
# build, the network export and each test group took.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
# Debian's PyTorch exports the real networks models.isa_levels checks (and is their reference).
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  python3-torch python3-torchvision python3-numpy python3-pil python3-venv >/dev/null

start=$(date +%s)
OMP_NUM_THREADS=1 /usr/bin/python3 scripts/models/export_models.py build/models \
  resnet18 mobilenet_v2 resnet50 vgg19 densenet121 zfnet512 \
  ds_cnn mobilenet_v1_025_vww resnet8 fc_autoencoder squeezenet1_1
# The web demo's picture and PyTorch's top-5 on it (example.web checks the page against them).
OMP_NUM_THREADS=1 /usr/bin/python3 examples/web/make_sample.py build/models/squeezenet1_1
# ONNX Runtime's static quantization makes int8 ResNet-18 and MobileNetV2 from two of them, with
# its own int8 result as the reference (models.int8). PyPI's onnxruntime, pinned, in a venv: it
# only makes test models; nnvm and its tests do not need it.
python3 -m venv build/venv-ort
build/venv-ort/bin/pip install -q --disable-pip-version-check onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6 sympy==1.14.0
build/venv-ort/bin/python scripts/models/quantize_models.py build/models
echo "network export: $(( $(date +%s) - start )) s"

start=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNNVM_MODELS_DIR="$PWD/build/models" >/dev/null
cmake --build build
echo "build: $(( $(date +%s) - start )) s"

bash bench/include_cost/include_cost.sh . --runs 3

start=$(date +%s)
export NNVM_CACHE_DIR="$PWD/build/kernel_cache"
ctest --test-dir build --output-on-failure --timeout 2400 --parallel "$(nproc)"
echo "tests: $(( $(date +%s) - start )) s"
