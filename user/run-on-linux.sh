#!/usr/bin/env bash
# Runs the user tests on real Linux, under qemu-aarch64 user-mode emulation:
# the same static binaries faultline runs, against the kernel they imitate.
# It builds them (user/build.sh), runs `init test` over the tests directory,
# which runs every test program, checks `init run`, and runs the benchmark
# harness with 2 threads and 2 processes. Exits non-zero if
# anything failed; the last line is `run-on-linux: N passed, M failed`.
#
# The tests execve aarch64 programs (init its tests, some tests themselves),
# which the host kernel hands to qemu only through binfmt_misc: as root this
# script registers qemu-aarch64 there if it is not yet (as Debian's
# qemu-user-binfmt does at boot).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v qemu-aarch64 >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && apt-get install -y -q qemu-user
    else
        echo "run-on-linux: qemu-aarch64 missing: sudo apt-get install qemu-user" >&2
        exit 1
    fi
fi

binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
    conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    if [ "$(id -u)" != 0 ] || [ ! -f "$conf" ]; then
        echo "run-on-linux: aarch64 binaries are not registered with binfmt_misc;" \
            "run as root with qemu-user-binfmt installed" >&2
        exit 1
    fi
    [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"
    cat "$conf" >"$binfmt/register"
fi

user/build.sh
root=build/rootfs-user
passed=0
failed=0
check() { # check NAME COMMAND...: one result line per check
    if "${@:2}"; then
        passed=$((passed + 1)); echo "run-on-linux: $1 ... ok"
    else
        failed=$((failed + 1)); echo "run-on-linux: $1 ... FAILED"
    fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s%N)
set +e
FAULTLINE_TESTS_DIR=$root/bin/tests qemu-aarch64 "$root/init" test | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo "run-on-linux: init test took $((($(date +%s%N) - start) / 1000000)) ms"
summary=$(tail -n 1 "$log")
check "init test exits 0" test "$status" = 0
check "init test ends with 'N passed, 0 failed'" \
    grep -qE '^[0-9]+ passed, 0 failed$' <<<"$summary"
check "init run returns the program's status" \
    qemu-aarch64 "$root/init" run "$root/bin/tests/time" --run nanosleep_zero_returns
run_missing() { qemu-aarch64 "$root/init" run /nonexistent 2>/dev/null; [ $? = 127 ]; }
check "init run of a missing program exits 127" run_missing
# The scaling harness on Linux: 2 tasks start, run and stop (its futex
# wake once woke only one of them there, and the other slept forever).
bench_ends() { timeout 60 qemu-aarch64 "$root/bin/bench/$1" "${@:2}" | grep -q "^result $1 "; }
for mode in threads processes; do
    check "page_fault4 with 2 $mode reports a result" bench_ends page_fault4 tasks=2 \
        mode=$mode warmup_ms=10 ms=50 size=4194304
done

tests_passed=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p' <<<"$summary")
tests_failed=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p' <<<"$summary")
echo "run-on-linux: $((passed + ${tests_passed:-0})) passed, $((failed + ${tests_failed:-1})) failed"
[ "$failed" = 0 ] && [ "${tests_failed:-1}" = 0 ]
