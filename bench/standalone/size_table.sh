#!/usr/bin/env bash
# The README's microcontroller size table: each MLPerf Tiny-shaped network
# (scripts/models/export_models.py MODELS ds_cnn mobilenet_v1_025_vww resnet8 fc_autoencoder)
# compiled with `nnvmc compile --target "c-standalone -mcpu=cortex-m4"` for --opt-for size and
# speed; nnvmc builds each for the Cortex-M4F with arm-none-eabi-gcc and reports flash and RAM.
#   bash bench/standalone/size_table.sh MODELS [BUILD_DIR]     (NNVMC=path overrides the nnvmc used)
set -euo pipefail
models="$1"
nnvmc="${NNVMC:-${2:-build}/tools/nnvmc/nnvmc}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "| network | --opt-for | code (flash) | weights (flash) | arena | every intermediate added up | data+bss | stack |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for net in ds_cnn mobilenet_v1_025_vww resnet8 fc_autoencoder; do
  for opt in size speed; do
    report="$("$nnvmc" compile "$models/$net/model.onnx" --target "c-standalone -mcpu=cortex-m4" --opt-for "$opt" \
      --name "$net" -o "$out/$net-$opt" 2>/dev/null)"
    field() { sed -n "$1" <<<"$report" | head -1; }
    arena=$(field 's/.*arena *\([0-9]*\) B.*/\1/p')
    all=$(field 's/.*added up: \([0-9]*\) B.*/\1/p')
    code=$(field 's/.*code \([0-9]*\) B.*/\1/p')
    weights=$(field 's/.*+ weights \([0-9]*\) B.*/\1/p')
    static=$(field 's/.*data+bss \([0-9]*\) B.*/\1/p')
    stack=$(field 's/.*stack ~\([0-9]*\) B.*/\1/p')
    echo "| $net | $opt | $code | $weights | $arena | $all | $static | $stack |"
  done
done
