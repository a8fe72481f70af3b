#!/usr/bin/env bash
# `make gdb`: QEMU halted at the first instruction with a gdb server, and
# gdb-multiarch attached with the kernel's symbols, faultline's helpers
# (scripts/gdb/faultline-gdb.py: fl-ps, fl-vmas, fl-pt, ... and pretty
# printers) and a breakpoint at kernel_main.
#
#   scripts/gdb.sh KERNEL [qemu-run.sh options]
#
# KERNEL is the ELF with short names (scripts/gdb/short-names.py) that
# `make gdb` builds: the `gdb` profile's by default, the release one with
# RELEASE=1. See docs/gdb.md for a session.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=$1
shift
port=${FAULTLINE_GDB_PORT:-1234}
FAULTLINE_GDB_PORT=$port ./qemu-run.sh --gdb --kernel "$kernel" "$@" </dev/null &
qemu=$!
trap 'kill $qemu 2>/dev/null' EXIT
gdb-multiarch -q "$kernel" \
    -ex "source scripts/gdb/faultline-gdb.py" \
    -ex "target remote :$port" \
    -ex "break kernel_main" \
    -ex "echo faultline: halted at reset; 'continue' runs to kernel_main\n"
