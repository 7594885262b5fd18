#!/usr/bin/env bash
# Lesson 6 in one command: generate the C, build it for a Cortex-M4F, run it under QEMU.
#   bash examples/06_microcontroller/run.sh [BUILD_DIR]    (default: build)
# Needs arm-none-eabi-gcc, newlib and qemu-system-arm (scripts/install_deps.sh installs them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
out="$build/examples/06_microcontroller_out"
board="$here/../../tests/standalone/cortex_m"   # startup code and linker script for mps2-an386
"$build/examples/06_microcontroller" "$out"
cd "$out"
flags="-std=c99 -Wall -Wextra -Werror -pedantic -Os"
# This machine first (the same C, under the sanitizers), then the microcontroller.
cc $flags -DHOST -fsanitize=address,undefined -I. "$here/board_main.c" model.c weights.c -lm -o kws_host
./kws_host
arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 $flags -ffunction-sections \
  -fdata-sections -I. -I"$board" "$here/board_main.c" model.c weights.c "$board/startup.c" -nostartfiles --specs=nosys.specs \
  -Wl,--gc-sections -T "$board/mps2_an386.ld" -lm -o kws.elf
arm-none-eabi-size kws.elf
timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel kws.elf
