#!/usr/bin/env bash
# `make gdb`: QEMU halted at the first instruction with a gdb server, and
# gdb-multiarch attached with the kernel's symbols and a breakpoint at
# kernel_main. Extra arguments go to qemu-run.sh (e.g. --smp 4).
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=target/aarch64-unknown-none-softfloat/release/faultline
port=${FAULTLINE_GDB_PORT:-1234}
FAULTLINE_GDB_PORT=$port ./qemu-run.sh --gdb "$@" </dev/null &
qemu=$!
trap 'kill $qemu 2>/dev/null' EXIT
gdb-multiarch -q "$kernel" \
    -ex "target remote :$port" \
    -ex "break kernel_main" \
    -ex "echo faultline: halted at reset; 'continue' runs to kernel_main\n"
