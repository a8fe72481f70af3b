#!/usr/bin/env bash
# `make bench`: boots faultline once under -icount shift=0,sleep=off (one
# virtual nanosecond per instruction, so every run gives the same numbers)
# and runs /bin/bench/bench, which runs each benchmark with each fault-path
# switch off and on. Prints the results as a table per benchmark, with its
# targets, and writes them to build/bench.csv (tidy: one row per
# benchmark, setting, metric and value; scripts/benchtable.py),
# and draws them with Linux's (make bench-linux), if any, as build/bench.svg.
# The boot line (virtual time from power-on to /init) is a row too. With
# TLB=1, the TLB model's misses too (scripts/bench-tlb.sh).
#   [TLB=1] scripts/bench.sh [quick] [--console] [qemu-run.sh options...]
# `quick` runs each benchmark briefly (`make run`, `make test`), into
# build/bench-quick.log and .csv, and draws nothing; --console
# shows the whole console, not only the result lines.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh

mode="" filter='^result '
[ "${1:-}" = quick ] && { mode=quick; shift; }
[ "${1:-}" = --console ] && { filter=''; shift; }
# A quick run keeps its own files: `make run` never overwrites the
# results of the last `make bench`.
log=build/bench${mode:+-$mode}.log
csv=build/bench${mode:+-$mode}.csv
[ "$mode" = quick ] || plot_build
./qemu-run.sh --smp 4 --mem 2G --icount --timeout 1200 "$@" \
    --append "-- run /bin/bench/bench $mode" | tee "$log" | grep -E "$filter" || true
grep -q '^result ' "$log" || { echo "bench: no results (see $log)"; exit 1; }

# Seed 002's scaling claim needs real parallelism, so no icount: MTTCG, one
# host thread per vCPU, on 2 CPUs. One boot runs page_fault4 in threads
# mode with 1 and then 2 threads, 5 times (`bench scaling`), each sampled
# over a second as will-it-scale does, with two controls beside it: `spin`
# never enters the kernel (what the host gives two busy vCPUs at that
# moment) and `getppid1` does little but enter it (how far QEMU lets
# exceptions run in parallel). The medians, and each one's 2:1 ratio.
# QEMU 7.2 handles every exception entry and return under its global lock,
# and with a PMU (cortex-a72 has one; faultline never uses it) updates the
# PMU's counters there too, so exceptions scale poorly; page_fault4 takes
# one per 16 pages. The first boot leaves the PMU out (`pmu=off`, as
# `pauth-impdef=on` spares QEMU's slow pointer authentication), the second
# is the plain cortex-a72.
scaling_boot() {
    ./qemu-run.sh --smp 2 --mem 1G --cpu "$1" --timeout 600 --append "-- run /bin/bench/bench scaling"
}
[ "$mode" = quick ] || scaling_stages "$log" scaling_boot
# Seed 004's table, on Debian's own programs (one boot per setting).
[ "$mode" = quick ] || scripts/bench-seed004.sh "$log"
# TLB=1 (make bench TLB=1): the TLB model's misses for seed000,
# lat_pagefault and seed004 (QEMU 10, whatever QEMU the rest ran on).
if [ "$mode" != quick ] && [ "${TLB:-0}" = 1 ]; then
    scripts/bench-tlb.sh "$log" || exit 1
fi

results_table "$log" "$csv" faultline
# `make run` and `make test` (quick) leave the picture of the full run.
[ "$mode" = quick ] || plot_results
