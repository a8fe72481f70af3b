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
# host thread per vCPU. page_fault4 in threads mode, 1 and then 2 threads on
# 2 CPUs, 5 times each (interleaved); the median ops/s of each and their ratio.
if [ "$mode" != quick ]; then
    echo "bench: page_fault4, 1 vs 2 threads on --smp 2 without icount, 5 runs each"
    for run in 1 2 3 4 5; do
        for tasks in 1 2; do
            ./qemu-run.sh --smp 2 --mem 1G --timeout 300 \
                --append "-- run /bin/bench/page_fault4 mode=threads tasks=$tasks loops=20" |
                grep '^result page_fault4' | sed "s/^result page_fault4/result mttcg_run/"
        done
    done | tee -a "$log"
    median() { grep "^result mttcg_run tasks=$1 " "$log" | sed 's/.*ops_per_sec=\([0-9]*\).*/\1/' |
        sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'; }
    one=$(median 1) two=$(median 2)
    echo "result mttcg_scaling threads1_ops=$one threads2_ops=$two ratio_x100=$((two * 100 / (one > 0 ? one : 1)))" |
        tee -a "$log"
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
