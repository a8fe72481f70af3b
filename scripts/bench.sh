#!/usr/bin/env bash
# `make bench`: boots faultline once under -icount shift=0,sleep=off (one
# virtual nanosecond per instruction, so every run gives the same numbers)
# and runs /bin/bench/bench, which runs each benchmark with each fault-path
# switch off and on. Prints the results as a table and writes them to
# build/bench.csv (one row per run: the benchmark, then key=value columns).
# The boot line (virtual time from power-on to /init) is a row too.
#   scripts/bench.sh [quick] [--console] [qemu-run.sh options...]
# `quick` runs each benchmark briefly (`make run`, `make test`); --console
# shows the whole console, not only the result lines.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="" filter='^result '
[ "${1:-}" = quick ] && { mode=quick; shift; }
[ "${1:-}" = --console ] && { filter=''; shift; }
log=build/bench.log
csv=build/bench.csv
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
if [ "$mode" != quick ]; then
    median() { grep "^result mttcg_run $1 $2 tasks=$3 " "$log" | sed 's/.*ops_per_sec=\([0-9]*\).*/\1/' |
        sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'; }
    ratio() { echo $(($(median "$1" "$2" 2) * 100 / ($(median "$1" "$2" 1) > 0 ? $(median "$1" "$2" 1) : 1))); }
    for pmu in off on; do
        cpu=cortex-a72 && [ $pmu = off ] && cpu=cortex-a72,pmu=off
        echo "bench: page_fault4, spin, getppid1: 1 vs 2 threads on --smp 2 -cpu $cpu without icount, 5 runs each"
        ./qemu-run.sh --smp 2 --mem 1G --cpu "$cpu" --timeout 600 --append "-- run /bin/bench/bench scaling" |
            grep -E '^result (page_fault4|spin|getppid1) ' | sed "s/^result /result mttcg_run pmu=$pmu /" | tee -a "$log"
        echo "result mttcg_scaling pmu=$([ $pmu = on ] && echo 1 || echo 0)" \
            "threads1_ops=$(median pmu=$pmu page_fault4 1) threads2_ops=$(median pmu=$pmu page_fault4 2)" \
            "ratio_x100=$(ratio pmu=$pmu page_fault4) spin_ratio_x100=$(ratio pmu=$pmu spin)" \
            "getppid1_ratio_x100=$(ratio pmu=$pmu getppid1)" | tee -a "$log"
    done
fi

# "result NAME k=v k=v ..." -> CSV with a header per benchmark.
awk '/^result / && !/^result mttcg_run / {
    sub(/\r$/, "")
    head = "bench"; row = $2
    for (i = 3; i <= NF; i++) { split($i, kv, "="); head = head "," kv[1]; row = row "," kv[2] }
    if (head != last) { print head; last = head }
    print row
}' "$log" > "$csv"
echo
column -s, -t < "$csv"
echo
echo "bench: results in $csv (console log in $log)"
