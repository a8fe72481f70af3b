#!/usr/bin/env bash
# make bench TLB=1: the benchmarks' TLB misses, from the TLB model (QEMU 10
# with tools/tlb's plugin, ./qemu-run.sh --tlb; N1-sized TLBs) on the
# windows the benchmarks mark (user/c/tlb-mark.h): seed000 with the
# contiguous bit on and off, lat_pagefault with 4K and 64K shmem folios,
# and seed004's workloads with exec folios 0x0 and 0x2 and mapping
# alignment 0x0 and 0x1. One boot per setting, under -icount; appends
# `result tlb_NAME ...` lines (scripts/benchtable.py --tlb) to LOG. Sets
# QEMU 10 up first if it is not (make setup QEMU=10).
#
#   scripts/bench-tlb.sh LOG
set -uo pipefail
cd "$(dirname "$0")/.."

log=$1
if [ ! -x build/qemu-10/usr/bin/qemu-system-aarch64 ]; then
    QEMU=10 scripts/setup.sh || { echo "bench: TLB: QEMU 10 could not be set up"; exit 1; }
fi
out=build/bench-tlb
mkdir -p "$out"

# tlb_run NAME TAG SETTINGS QEMU-RUN-ARGS...: one boot, joined into LOG.
tlb_run() {
    local name=$1 tag=$2 settings=$3; shift 3
    echo "bench: TLB model: $name, $tag (log: $out/$tag.log)"
    QEMU=10 ./qemu-run.sh --icount --tlb --timeout 1800 "$@" >"$out/$tag.log" 2>&1
    # shellcheck disable=SC2086 # settings are words
    python3 scripts/benchtable.py --tlb "$name" "$out/$tag.log" $settings | tee -a "$log"
}

for contpte in on off; do
    tlb_run seed000 "seed000-$contpte" "" --smp 1 --mem 1G \
        --append "contpte=$contpte" --run "/bin/bench/seed000 --set-knobs"
done
for folio in never always; do
    tlb_run lat_pagefault "lat_pagefault-$folio" "shmem_64k=$folio" --smp 1 --mem 1G \
        --append "thp_shmem=64K:$folio" --run "/bin/bench/lat_pagefault"
done
packages=$(grep -v '^#' user/debian/packages | tr '\n' ' ')
for s in "exec=0x0 align=0x0" "exec=0x2 align=0x0" "exec=0x0 align=0x1" "exec=0x2 align=0x1"; do
    tlb_run seed004 "seed004-${s// /-}" "" --debian "$packages" --smp 2 \
        --add build/seed004 --run "/bin/seed004 $s"
done
