#!/usr/bin/env bash
# Every public header compiles on its own: one translation unit per header that includes only
# that header, twice (which also checks its include guard); the C headers also as strict C99,
# since generated C includes them. -fsyntax-only (parsing and template checks, no code), all
# CPUs at once: the check costs a few minutes, not the half hour compiling each to an object took.
# C++ headers are checked with NNVM_BUILTIN_OPS_COMPILED, so that ops/registry.hpp does not pull
# in every op's compute (ops/builtin.hpp, about 4 s for each of the ~200 headers that reach the
# registry): a header must then include what it uses rather than lean on the op list, which is
# stricter. registry.hpp is also checked without it (header-only use, the op list included).
# Usage: check_self_contained.sh CXX CC SOURCE_DIR
set -uo pipefail
CXX=$1 CC=$2 SRC=$3
jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

check_one() {  # header (relative to its root) root lang
  local header=$1 root=$2 lang=$3 tu out
  local ext=$lang
  [ "$lang" = cpp-header-only ] && ext=header_only.cpp
  tu="$work/$(echo "$header" | tr '/.' '__').$ext"
  printf '#include "%s"\n#include "%s"\n' "$header" "$header" >"$tu"
  if [ "$lang" = c ]; then
    out=$("$CC" -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$SRC/include" "$tu" 2>&1)
  elif [ "$lang" = cpp-header-only ]; then
    out=$("$CXX" -std=c++20 -fsyntax-only -I"$SRC/include" "$tu" 2>&1)
  else
    out=$("$CXX" -std=c++20 -fsyntax-only -DNNVM_BUILTIN_OPS_COMPILED -I"$SRC/include" \
      -I"$SRC/importers/common/include" "$tu" 2>&1)
  fi
  if [ $? -ne 0 ]; then
    printf 'FAIL %s (%s)\n%s\n' "$header" "$lang" "$out"
    return 1
  fi
}
export -f check_one
export CXX CC SRC work

list=("nnvm/ops/registry.hpp include cpp-header-only")
for root in include importers/common/include; do
  while IFS= read -r h; do
    list+=("$h $root cpp")
    case $h in *.h) list+=("$h $root c") ;; esac
  done < <(cd "$SRC/$root" && find nnvm -name '*.hpp' -o -name '*.h' | sort)
done
printf '%s\n' "${list[@]}" | xargs -P "$jobs" -L 1 bash -c 'check_one "$0" "$1" "$2"'
status=$?
echo "${#list[@]} translation units checked in $(( $(date +%s) - start )) s on $jobs jobs"
exit $status
