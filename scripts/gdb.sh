#!/usr/bin/env bash
# `make gdb`: QEMU halted at the first instruction with a gdb server, and
# gdb-multiarch attached with the kernel's symbols, faultline's helpers
# (scripts/gdb/faultline-gdb.py: fl-ps, fl-vmas, fl-pt, fl-step, ... and
# pretty printers) and a breakpoint at kernel_main.
#
#   scripts/gdb.sh KERNEL [qemu-run.sh options]
#
# KERNEL is the ELF with short names (scripts/gdb/short-names.py) that
# `make gdb` builds: the `gdb` profile's by default, the release one with
# RELEASE=1. See docs/gdb.md for a session.
#
# The gdb server listens on FAULTLINE_GDB_PORT if set (which must be
# free), else on 1234 or the next free port; the script says which, and
# attaches only once its own QEMU holds it. QEMU runs in a session of its
# own and gdb in a process group of its own, so ^C reaches gdb alone: gdb
# stops the kernel, and `continue` resumes it.
set -euo pipefail
cd "$(dirname "$0")/.."
kernel=$1
shift
command -v gdb-multiarch >/dev/null || { echo "gdb.sh: no gdb-multiarch: make setup" >&2; exit 1; }
if [ -n "${FAULTLINE_GDB_PORT:-}" ]; then
    port=$FAULTLINE_GDB_PORT
    if [ "$(scripts/gdb/port.py free "$port")" != "$port" ]; then
        echo "gdb.sh: port $port (FAULTLINE_GDB_PORT) is in use; choose another" >&2
        exit 1
    fi
else
    port=$(scripts/gdb/port.py free 1234)
fi
echo "gdb.sh: QEMU's gdb server on port $port"
FAULTLINE_GDB_PORT=$port setsid ./qemu-run.sh --gdb --kernel "$kernel" "$@" </dev/null &
qemu=$!
trap 'kill -- -$qemu 2>/dev/null || true' EXIT
scripts/gdb/port.py wait "$port" "$qemu"
# At a terminal, gdb runs as a job of its own (job control: its own
# process group, the terminal's foreground one), so ^C reaches gdb alone,
# not `make` or this script, which would end with it once gdb quits.
[ -t 0 ] && set -m
# How a session ends (quit, ^D, a kernel that powered off) is the
# student's choice, not a failure of `make gdb`: gdb's status is not kept.
gdb-multiarch -q "$kernel" \
    -ex "source scripts/gdb/faultline-gdb.py" \
    -ex "target remote :$port" \
    -ex "break kernel_main" \
    -ex "echo faultline: halted at reset; 'continue' runs to kernel_main\n" || true
