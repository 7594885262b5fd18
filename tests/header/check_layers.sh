#!/usr/bin/env bash
# The include rules of docs/architecture.md, checked: every #include "nnvm/..." in include/nnvm,
# runtime/src and importers/ must point to a layer the including file's layer may use. Prints each
# violation as file: layer -> layer (the include), and exits 1 if there is one.
#   usage: check_layers.sh SOURCE_DIR
set -uo pipefail
SRC=${1:?usage: check_layers.sh SOURCE_DIR}

# The layer of a header, by its path under include/ (or "runtime" for the runtime's sources).
layer_of() {
  case $1 in
    nnvm/config.hpp | nnvm/error.hpp | nnvm/limits.hpp | nnvm/ir/dtype.hpp) echo base ;;
    nnvm/ndarray.hpp) echo ndarray ;;
    nnvm/runtime/* | runtime/src/*) echo runtime ;;
    nnvm/ir/*) echo ir ;;
    nnvm/te/*) echo te ;;
    nnvm/schedule/*) echo schedule ;;
    nnvm/target/family.hpp | nnvm/target/target.hpp | nnvm/target/parse.hpp) echo target_description ;;
    nnvm/lower/*) echo lower ;;
    nnvm/target/*) echo target ;;
    nnvm/ops/*) echo ops ;;
    nnvm/graph/*) echo graph ;;
    nnvm/importers/* | importers/common/*) echo importers ;;
    nnvm/onnx/* | importers/onnx/*) echo onnx ;;
    nnvm/mxnet/* | importers/mxnet/*) echo mxnet ;;
    nnvm/keras/* | importers/keras/*) echo keras ;;
    nnvm/coreml/* | importers/coreml/*) echo coreml ;;
    nnvm/tensor.hpp) echo kernel_umbrella ;;
    nnvm/nnvm.hpp) echo umbrella ;;
    *) echo unknown ;;
  esac
}

# The layers each layer may include (itself always).
allowed() {
  case $1 in
    base) echo "" ;;
    runtime) echo "base" ;;
    ndarray | ir | target_description) echo "base" ;;
    te) echo "base ir" ;;
    schedule) echo "base ir te" ;;
    lower) echo "base ir te schedule target_description" ;;
    target) echo "base ndarray ir runtime target_description" ;;
    ops) echo "base ndarray ir te schedule target_description lower target runtime" ;;
    graph) echo "base ndarray ir te schedule target_description lower target runtime ops" ;;
    importers) echo "base ndarray ir te schedule target_description lower target runtime ops graph" ;;
    onnx | mxnet | keras | coreml) echo "base ndarray ir te schedule target_description lower target runtime ops graph importers" ;;
    kernel_umbrella) echo "base ndarray ir te schedule target_description lower target runtime" ;;
    umbrella) echo "base ndarray ir te schedule target_description lower target runtime ops graph kernel_umbrella" ;;
  esac
}

status=0
count=0
check() {  # check FILE_FOR_MESSAGES LAYER_KEY
  local file=$1 from
  from=$(layer_of "$2")
  if [ "$from" = unknown ]; then
    echo "$file: not in any layer; add it to tests/header/check_layers.sh and docs/architecture.md"
    status=1
    return
  fi
  while IFS= read -r inc; do
    count=$((count + 1))
    local to
    to=$(layer_of "$inc")
    if [ "$to" != "$from" ] && [[ " $(allowed "$from") " != *" $to "* ]]; then
      echo "$file: $from -> $to (#include \"$inc\")"
      status=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(nnvm\/[^"]*\)".*/\1/p' "$SRC/$file")
}

while IFS= read -r h; do check "include/$h" "$h"; done < <(cd "$SRC/include" && find nnvm -name '*.hpp' -o -name '*.h' | sort)
while IFS= read -r f; do check "$f" "$f"; done < <(cd "$SRC" && find runtime/src -name '*.hpp' -o -name '*.cpp' | sort)
# The importers' sources: the shared part (importers/common) and each format's importer.
while IFS= read -r f; do check "$f" "$f"; done < <(cd "$SRC" && find importers -name '*.hpp' -o -name '*.cpp' | sort)
echo "$count includes checked against the layer rules"
exit $status
