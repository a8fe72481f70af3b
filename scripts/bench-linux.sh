#!/usr/bin/env bash
# `make bench-linux`: the same benchmark binaries on Linux, side by side
# with `make bench`. Boots Debian's Linux 6.12 arm64 kernel (the newest
# linux-image-6.12.*+deb12-arm64-unsigned; bookworm-backports) with an
# initramfs of busybox and /bin/bench, under the QEMU flags `make bench`
# uses: once under -icount shift=0,sleep=off on 4 CPUs (`bench`, or
# `bench quick`), then the two MTTCG scaling boots on 2 CPUs. Prints the
# table and writes build/bench-linux.csv (console log build/bench-linux.log),
# and draws it beside make bench's build/bench.csv as build/bench.svg.
#   scripts/bench-linux.sh [quick]
# `quick` runs the short icount pass only. The Debian packages come
# through scripts/linux-lib.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
. scripts/linux-lib.sh

mode=full
[ "${1:-}" = quick ] && mode=quick
log=build/bench-linux.log
csv=build/bench-linux.csv
[ "$mode" = quick ] || plot_build

linux_setup
linux_initrd bench '/bin/bench/bench $bench' --dir build/rootfs-user/bin/bench:bin/bench

echo "bench-linux: $linux under -icount shift=0,sleep=off, 4 CPUs, 2G"
linux_boot bench "bench=$mode" -cpu cortex-a72 -smp 4 -m 2G -icount shift=0,sleep=off |
    sed -u 's/\r$//' | tee "$log" | grep -E '^(result|linux) ' || true
grep -q '^result ' "$log" || { echo "bench-linux: no results (see $log)"; exit 1; }

scaling_boot() {
    linux_boot bench bench=scaling -cpu "$1" -smp 2 -m 1G
}
[ "$mode" = quick ] || scaling_stages "$log" scaling_boot
[ "$mode" = quick ] || scripts/bench-seed004.sh "$log" --linux

results_table "$log" "$csv" linux
[ "$mode" = quick ] || plot_results
