# Sourced by scripts/bench.sh (faultline) and scripts/bench-linux.sh (the
# same binaries on Linux): the MTTCG scaling row, the results table and
# the plot, so the two kernels' numbers are reduced the same way.

# scaling_stages LOG BOOT: two boots on 2 CPUs without icount (MTTCG),
# `BOOT CPU` for CPU `cortex-a72,pmu=off` and then the plain cortex-a72,
# each into `bench scaling` (page_fault4, spin and getppid1 with 1 and then
# 2 threads, 5 times). Their result lines go to LOG tagged `result
# mttcg_run pmu=off|on`, and after each boot a row `result mttcg_scaling`:
# page_fault4's median rates with 1 and 2 threads, and the 2:1 ratio of
# the medians (to two decimals) for it and for both controls.
scaling_stages() {
    local log=$1 boot=$2 pmu cpu
    median() { grep "^result mttcg_run pmu=$pmu $1 tasks=$2 " "$log" |
        sed 's/.*ops_per_sec=\([0-9]*\).*/\1/' |
        sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'; }
    ratio() {
        local x100=$(($(median "$1" 2) * 100 / ($(median "$1" 1) > 0 ? $(median "$1" 1) : 1)))
        printf '%d.%02d' $((x100 / 100)) $((x100 % 100))
    }
    for pmu in off on; do
        cpu=cortex-a72 && [ $pmu = off ] && cpu=cortex-a72,pmu=off
        echo "bench: page_fault4, spin, getppid1: 1 vs 2 threads on 2 CPUs, -cpu $cpu, without icount, 5 runs each"
        "$boot" "$cpu" | sed -u 's/\r$//' | grep --line-buffered -E '^result (page_fault4|spin|getppid1) ' |
            sed "s/^result /result mttcg_run pmu=$pmu /" | tee -a "$log"
        echo "result mttcg_scaling pmu=$([ $pmu = on ] && echo 1 || echo 0)" \
            "threads1_ops=$(median page_fault4 1) threads2_ops=$(median page_fault4 2)" \
            "ratio=$(ratio page_fault4) spin_ratio=$(ratio spin)" \
            "getppid1_ratio=$(ratio getppid1)" | tee -a "$log"
    done
}

# results_table LOG CSV KERNEL: every `result NAME k=v ...` line of LOG
# but the single scaling runs, as a tidy CSV (kernel, benchmark, setting,
# metric, value) written to CSV, and printed as one table per benchmark
# with its targets (scripts/benchtable.py); faultline's also beside Linux
# 6.12's seed 004 workloads, where make bench-linux has run.
results_table() {
    python3 scripts/benchtable.py "$1" "$2" "$3" build/bench-linux.csv
}

# plot_build: builds tools/benchplot, before the runs rather than after
# them, so the compile neither delays the results nor shares the host's
# CPUs with the MTTCG scaling boots.
plot_build() {
    cargo build --release -q -p benchplot
}

# plot_results: build/bench.svg from build/bench.csv and, where there is
# one, build/bench-linux.csv: each benchmark with its switch off and on,
# faultline beside Linux 6.12 (the latest results of each).
plot_results() {
    target/release/benchplot --faultline build/bench.csv --linux build/bench-linux.csv \
        --out build/bench.svg
}
