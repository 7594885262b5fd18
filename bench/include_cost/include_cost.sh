#!/usr/bin/env bash
# What including nnvm costs a user's build: compiles an empty program that includes one header
# (g++ -std=c++20 -O0 -c, as a debug build would) several times and prints the smallest CPU
# time (user + system: less disturbed by a busy machine than the wall clock) for each header.
# With --check SECONDS it exits 1 when <nnvm/tensor.hpp> costs more (CI uses twice the budget).
#   usage: include_cost.sh SOURCE_DIR [--check SECONDS] [--runs N]
set -euo pipefail
SRC=${1:?usage: include_cost.sh SOURCE_DIR [--check SECONDS] [--runs N]}
shift
check="" runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "include_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
CXX=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Smallest user+system CPU seconds of compiling a program that includes $1.
cost() {
  printf '#include <%s>\nint main() { return 0; }\n' "$1" > "$work/empty.cpp"
  local best=""
  for _ in $(seq "$runs"); do
    local t
    t=$( { TIMEFORMAT='%U %S'; time "$CXX" -std=c++20 -O0 -c -I"$SRC/include" "$work/empty.cpp" -o "$work/empty.o"; } 2>&1 | tail -1 | awk '{printf "%.2f", $1 + $2}')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  echo "$best"
}

echo "include cost: empty program, $("$CXX" --version | head -1), -O0, best of $runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
kernel=$(cost nnvm/tensor.hpp)
echo "  <nnvm/tensor.hpp>  (DSL, schedules, lowering, interpreter, C emitter, C JIT)  ${kernel} s CPU (budget 5 s)"
echo "  <nnvm/nnvm.hpp>    (+ the op library and the graph layer)                      $(cost nnvm/nnvm.hpp) s CPU"
if [ -n "$check" ] && awk -v a="$kernel" -v b="$check" 'BEGIN { exit !(a > b) }'; then
  echo "include_cost: <nnvm/tensor.hpp> costs ${kernel} s, more than the allowed ${check} s" >&2
  exit 1
fi
