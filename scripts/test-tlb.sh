#!/usr/bin/env bash
# make test's tlb stage: the TLB model (tools/tlb) through the kernel.
# Boots user/c/tlb-layouts under QEMU 10 with the plugin (./qemu-run.sh
# --tlb), once with a 4-entry dTLB and no L2 and once with Neoverse-N1's
# sizes, and checks each layout's reported misses against what its page
# tables must cost (the layouts: user/c/tlb-layouts.c), once on two CPUs
# under -icount, and on `-cpu max` with range TLBI on and off. One `tlb:
# NAME ...
# ok|FAILED` line per check. Sets QEMU 10 up first (make setup QEMU=10)
# if it is not; says so and skips when it cannot be had (no network).
set -uo pipefail
cd "$(dirname "$0")/.."

if [ ! -x build/qemu-10/usr/bin/qemu-system-aarch64 ] &&
    ! QEMU=10 scripts/setup.sh >build/qemu-10-setup.log 2>&1; then
    echo "tlb: SKIPPED: QEMU 10 could not be set up ($(tail -1 build/qemu-10-setup.log))"
    exit 0
fi

names=("" "16 scattered 4K pages" "a contiguous-bit block" "a PMD block"
    "a 64K folio with contpte off" "a block, MADV_DONTNEED, the block")

# check_code LOG: layout 6, code run at a second address: every fetch found
# mapped where it ran.
check_code() {
    local line name="tlb: code run again at a second address: fetches seen there"
    line=$(grep -a "^tlb: mark=6 " "$1" | head -1)
    if [[ "$line" == *" itlb_access="[1-9]*" faulted=0"* ]]; then
        echo "$name ... ok"
    else
        echo "$name ... FAILED: ${line:-no report} (log: $1)"
    fi
}

# check LOG GEOMETRY LABEL ACCESSES MISSES
check() {
    local line got_access got_miss
    line=$(grep -a "^tlb: mark=$3 " "$1" | head -1)
    got_access=$(sed -n 's/.* dtlb_access=\([0-9]*\).*/\1/p' <<<"$line")
    got_miss=$(sed -n 's/.* dtlb_miss=\([0-9]*\).*/\1/p' <<<"$line")
    local name="tlb: $2: ${names[$3]}: $5 dTLB misses in $4 loads"
    if [ "$got_access/$got_miss" = "$4/$5" ]; then
        echo "$name ... ok"
    else
        echo "$name ... FAILED: got ${got_miss:-none} in ${got_access:-none} (log: $1)"
    fi
}

# A cyclic sweep of 16 pages through 4 entries misses every time unless
# one entry covers them all.
small=build/tlb-small.log
QEMU=10 ./qemu-run.sh --smp 1 --mem 512M --tlb --tlb-opt dtlb=4 --tlb-opt l2=0 \
    --add build/tlb-layouts --run /bin/tlb-layouts --timeout 120 >"$small" 2>&1
check "$small" "4-entry dTLB" 1 64 64
check "$small" "4-entry dTLB" 2 64 1
check "$small" "4-entry dTLB" 3 64 1
check "$small" "4-entry dTLB" 4 64 64
check "$small" "4-entry dTLB" 5 32 2
check_code "$small"

# With N1's 48 entries, 16 pages fit: each misses once.
n1=build/tlb-n1.log
QEMU=10 ./qemu-run.sh --smp 1 --mem 512M --tlb \
    --add build/tlb-layouts --run /bin/tlb-layouts --timeout 120 >"$n1" 2>&1
check "$n1" "N1 sizes" 1 64 16
check "$n1" "N1 sizes" 2 64 1
check "$n1" "N1 sizes" 3 64 1
check "$n1" "N1 sizes" 4 64 16
check "$n1" "N1 sizes" 5 32 2

# Two CPUs under -icount, where QEMU's own CPU numbers in callbacks are
# wrong: the counts must still be a CPU's own.
smp=build/tlb-smp2.log
QEMU=10 ./qemu-run.sh --smp 2 --icount --mem 512M --tlb \
    --add build/tlb-layouts --run /bin/tlb-layouts --timeout 120 >"$smp" 2>&1
check "$smp" "2 CPUs, -icount" 1 64 16
check "$smp" "2 CPUs, -icount" 2 64 1
check "$smp" "2 CPUs, -icount" 5 32 2

# QEMU's `max` has range invalidation (FEAT_TLBIRANGE): the kernel's
# range TLBIs must reach the model as page-by-page ones do, and be used
# only while tlbi_range is on.
for off in "" "tlbi_range=off"; do
    max=build/tlb-max${off:+-off}.log
    QEMU=10 ./qemu-run.sh --cpu max --smp 1 --mem 512M --tlb --append "$off" \
        --add build/tlb-layouts --run /bin/tlb-layouts --timeout 120 >"$max" 2>&1
    check "$max" "max${off:+, $off}" 2 64 1
    check "$max" "max${off:+, $off}" 5 32 2
    ranges=$(sed -n 's/^tlb: tlbi .* range=\([0-9]*\).*/\1/p' "$max")
    if [ -n "$off" ]; then want="none"; else want="some"; fi
    name="tlb: max${off:+, $off}: the kernel's range TLBIs: $want"
    case "$want/${ranges:-x}" in
        none/0 | some/[1-9]*) echo "$name ... ok" ;;
        *) echo "$name ... FAILED: range=${ranges:-none} (log: $max)" ;;
    esac
done
