#!/usr/bin/env bash
# Seed 004's table (make bench; make bench-linux with --linux): user/c/
# seed004.c on Debian's bash, coreutils, python3 and gcc (the root file
# system of user/debian/packages, scripts/debian.sh), one boot per setting
# under -icount shift=0,sleep=off, so the page cache starts cold each time
# as the knobs are set: thp_exec_enabled 0x0 and 0x2 with
# thp_mapping_align 0x0 and 0x1, then 0x0 and 0x2 again with fault-around
# off (4096), where the folio size alone decides how much a fault maps. On
# Linux 6.12 (no such knobs), the default and fault-around off. Appends
# the `result seed004 ...` lines to LOG. Skips, saying so, when the
# packages cannot be downloaded.
#
#   scripts/bench-seed004.sh LOG [--linux]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/linux-lib.sh

log=$1
packages=$(grep -v '^#' user/debian/packages | tr '\n' ' ')
# shellcheck disable=SC2086 # a list of packages
if ! root=$(scripts/debian.sh $packages 2>build/debian.err); then
    echo "bench: seed004: SKIPPED: Debian's packages could not be had ($(tail -1 build/debian.err))"
    exit 0
fi
if [ "${2:-}" = --linux ]; then
    settings=("" "fault_around=4096")
    linux_setup
    linux_initrd seed004 '/bin/seed004 $seed004' --dir "$root" --file build/seed004:bin/seed004:755
    boot() {
        linux_boot seed004 "seed004=$1" -cpu cortex-a72 -smp 2 -m 2G -icount shift=0,sleep=off
    }
else
    settings=("exec=0x0 align=0x0" "exec=0x2 align=0x0" "exec=0x0 align=0x1" "exec=0x2 align=0x1"
        "exec=0x0 align=0x0 fault_around=4096" "exec=0x2 align=0x0 fault_around=4096")
    boot() {
        ./qemu-run.sh --debian "$packages" --smp 2 --icount --timeout 1200 --add build/seed004 \
            --run "/bin/seed004 $1"
    }
fi
for s in "${settings[@]}"; do
    echo "bench: seed004 ${s:-default}: python3, bash with coreutils, gcc, under -icount"
    boot "$s" 2>&1 | sed -u 's/\r$//' | grep --line-buffered -E '^result seed004 |^seed004: ' | tee -a "$log"
done
