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
# over a second as will-it-scale does; `spin`, a loop that never enters
# the kernel, runs beside it as the control: its ratio is what the host
# itself gives two busy vCPUs. The medians of each, and their ratios.
if [ "$mode" != quick ]; then
    echo "bench: page_fault4 and spin, 1 vs 2 threads on --smp 2 without icount, 5 runs each"
    ./qemu-run.sh --smp 2 --mem 1G --timeout 600 --append "-- run /bin/bench/bench scaling" |
        grep -E '^result (page_fault4|spin) ' | sed "s/^result /result mttcg_run /" | tee -a "$log"
    median() { grep "^result mttcg_run $1 tasks=$2 " "$log" | sed 's/.*ops_per_sec=\([0-9]*\).*/\1/' |
        sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'; }
    ratio() { echo $(($2 * 100 / ($1 > 0 ? $1 : 1))); }
    one=$(median page_fault4 1) two=$(median page_fault4 2)
    spin1=$(median spin 1) spin2=$(median spin 2)
    echo "result mttcg_scaling threads1_ops=$one threads2_ops=$two ratio_x100=$(ratio "$one" "$two")" \
        "spin_ratio_x100=$(ratio "$spin1" "$spin2")" | tee -a "$log"
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
