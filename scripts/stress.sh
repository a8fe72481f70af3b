#!/usr/bin/env bash
# `make stress`: memory under load, on faultline.
#   1. user/c/stress.c, the shadow-model stress: threads and processes on
#      4 CPUs mapping, unmapping, protecting, advising, remapping,
#      truncating and punching memfds and anonymous memory, every read
#      checked, under each fault-path switch setting and with large
#      shmem and anonymous (PMD-mapped) folios, SECONDS each
#      (default 600); then free memory must be back;
#   2. user/c/tests/exhaustion.c, running memory out, at each of MEMS
#      (default 128M 1G 4G): the OOM killer, ENOSPC, a fork bomb;
#   3. Debian's stress-ng, its memory stressors (user/debian/stress-ng.sh:
#      vm, mmap, mremap, madvise, mmapfork, mmapmany, brk, stack, memfd,
#      tmpfs, fault), 4 instances each on 4 CPUs with --verify, NG_SECONDS
#      each (default 10); skipped, saying so, when the packages cannot be
#      downloaded.
# One `... ok|FAILED` line per check, a last `N passed, M failed`; exits
# non-zero on any failure. Logs: build/stress*.log.
#
#   scripts/stress.sh [--seconds N] [--mems "128M 1G"] [--ng-seconds N]
#                     [--ng-ops N] [--stressors "vm brk"]
# --ng-ops N: each stress-ng stressor stops after N bogo ops in all
# instead of after NG_SECONDS, the same work on a slow machine as on a
# fast one.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=600
mems="128M 1G 4G"
ng_seconds=10
ng_ops=""
stressors=""
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --mems) mems=$2; shift 2 ;;
        --ng-seconds) ng_seconds=$2; shift 2 ;;
        --ng-ops) ng_ops=$2; shift 2 ;;
        --stressors) stressors=$2; shift 2 ;;
        *) echo "stress.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
passed=0
failed=0
tally() { # LOG EXIT-STATUS: counts the log's ok/FAILED lines, and a bad exit
    local ok bad
    ok=$(grep -acE '^(stress:|glibc) .* \.\.\. ok' "$1")
    bad=$(grep -acE '^(stress:|glibc) .* \.\.\. FAILED' "$1")
    grep -aE '^(stress:|glibc) .* \.\.\. (ok|FAILED)' "$1"
    if { [ "$2" != 0 ] || [ "$ok" = 0 ]; } && [ "$bad" = 0 ]; then
        echo "stress: $1 ... FAILED: exit $2"
        grep -a -A12 'Kernel panic' "$1" | head -30
        bad=1
    fi
    passed=$((passed + ok))
    failed=$((failed + bad))
}
# Seven settings, SECONDS each, and time to boot and check (none with
# --seconds 0).
log=build/stress.log
if [ "$seconds" != 0 ]; then
    ./qemu-run.sh --smp 4 --mem 1G --add build/stress --run "/bin/stress seconds=$seconds" \
        --timeout $((7 * seconds + 180)) >"$log" 2>&1
    tally "$log" $?
fi
for mem in $mems; do
    log=build/stress-exhaustion-$mem.log
    ./qemu-run.sh --smp 2 --mem "$mem" --add build/ctests/exhaustion --run /bin/exhaustion \
        --timeout 900 >"$log" 2>&1
    rc=$?
    sed -i "s/^glibc exhaustion: /glibc exhaustion[$mem]: /" "$log"
    tally "$log" $rc
done
# stress-ng's stressors, one boot for them all.
log=build/stress-ng.log
ng_packages="bash coreutils grep mawk stress-ng"
if [ "$ng_seconds" != 0 ]; then
    # shellcheck disable=SC2086 # a list of packages
    if scripts/debian.sh $ng_packages >/dev/null 2>build/debian.err; then
        ./qemu-run.sh --debian "$ng_packages" --smp 4 --mem 2G \
            --add user/debian/stress-ng.sh --run "/bin/bash /bin/stress-ng.sh ${ng_ops:+ops=}${ng_ops:-$ng_seconds} $stressors" \
            --timeout $((11 * ng_seconds + 1200)) >"$log" 2>&1
        tally "$log" $?
    else
        echo "stress: stress-ng SKIPPED: Debian's packages could not be had ($(tail -1 build/debian.err))"
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
