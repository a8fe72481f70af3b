#!/usr/bin/env bash
# `make bench`: boots faultline once under -icount shift=0,sleep=off (one
# virtual nanosecond per instruction, so every run gives the same numbers)
# and runs /bin/bench/bench, which runs each benchmark with each fault-path
# switch off and on. Prints the results as a table and writes them to
# build/bench.csv (one row per run: the benchmark, then key=value columns).
#   scripts/bench.sh [quick]
set -euo pipefail
cd "$(dirname "$0")/.."

log=build/bench.log
csv=build/bench.csv
./qemu-run.sh --smp 4 --mem 1G --icount --timeout 1200 \
    --append "-- run /bin/bench/bench ${1:-}" | tee "$log" | grep '^result ' || true
grep -q '^result ' "$log" || { echo "bench: no results (see $log)"; exit 1; }

# "result NAME k=v k=v ..." -> CSV with a header per benchmark.
awk '/^result / {
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
