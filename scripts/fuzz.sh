#!/usr/bin/env bash
# `make fuzz`: the system-call fuzzer (user/c/fuzz.c) on faultline, one boot
# per seed, 4 CPUs: seeds SEEDS (default 1..10), COUNT calls each (default
# 100,000). Each boot's `fuzz: ... ok|FAILED` lines, then one summary line
# per seed; exits non-zero if any seed failed: a kernel panic, a hang (the
# watchdog), a child that outlived SIGKILL, a process left behind, or free
# memory not back. Console logs: build/fuzz-SEED.log.
#
#   scripts/fuzz.sh [--seeds "1 2 3"] [--count N] [qemu-run.sh options]
set -uo pipefail
cd "$(dirname "$0")/.."
seeds=$(seq 1 10)
count=100000
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds) seeds=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        *) break ;;
    esac
done
# About 2,000 calls a second under TCG, and time to boot and clean up.
limit=$((count / 1000 + 120))
failed=0
for seed in $seeds; do
    log=build/fuzz-$seed.log
    ./qemu-run.sh --smp 4 --mem 1G "$@" --add build/fuzz --run "/bin/fuzz seed=$seed count=$count" \
        --timeout "$limit" >"$log" 2>&1
    rc=$?
    grep -a '^fuzz: ' "$log" | grep -av '^fuzz: child '
    if [ "$rc" = 0 ] && grep -aq '^[0-9]* passed, 0 failed' "$log"; then
        echo "fuzz seed $seed ... ok"
    else
        echo "fuzz seed $seed ... FAILED (exit $rc; $log)"
        grep -a -A12 'Kernel panic' "$log" | head -30
        failed=1
    fi
done
exit "$failed"
