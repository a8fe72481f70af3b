#!/bin/bash
# stress-ng's memory stressors (Debian's stress-ng), run by make stress on
# faultline (scripts/stress.sh; Linux 6.12 runs it too): each on 4
# instances with --verify for SECONDS (default 10), one
# `stress: stress-ng NAME ... ok|FAILED` line each, with its bogo ops and
# the seconds it took. A stressor passes when stress-ng exits 0, reports no
# failure and finished some bogo ops (tmpfs: see below).
#
# With ops=N instead of SECONDS, a stressor stops after N bogo ops in all
# (stress-ng shares them out among the instances), or 300 s: a fixed
# amount of work, whatever the machine's speed, for make test's short run.
#
#   /bin/bash /bin/stress-ng.sh [SECONDS | ops=N] [STRESSOR...]
seconds=${1:-10}
shift $(($# > 0 ? 1 : 0))
ops_limit=""
case $seconds in
    ops=*) ops_limit=${seconds#ops=} seconds=300 ;;
esac
stressors=${*:-vm mmap mremap madvise mmapfork mmapmany brk stack memfd tmpfs fault}
cd /tmp || exit 1
for s in $stressors; do
    # Sizes that let one bogo op finish in seconds under QEMU's emulation
    # (the defaults, 256M per mmap instance and a tmpfs file of a quarter
    # of free memory, take minutes per op on Linux there too).
    # madvise runs one instance: its 8 threads already use every CPU, and
    # each of its bogo ops reads /proc/PID/smaps some 500 times.
    instances=4
    case $s in
        mmap) extra=(--mmap-bytes 16M) ;;
        vm) extra=(--vm-bytes 64M) ;;
        tmpfs) extra=(--tmpfs-mmap-file) ;;
        madvise) instances=1 extra=() ;;
        *) extra=() ;;
    esac
    [ -n "$ops_limit" ] && extra+=(--"$s"-ops "$ops_limit")
    start=$(date +%s%N)
    out=$(stress-ng --"$s" "$instances" "${extra[@]}" --verify -t "$seconds" --metrics-brief 2>&1)
    rc=$?
    took=$((($(date +%s%N) - start) / 1000000))
    ops=$(echo "$out" | awk -v s="$s" '$4 == s && $5 ~ /^[0-9]+$/ { print $5 }')
    # tmpfs maps a 512M file per instance (its cap), populated, checked,
    # then unmaps it page by page, choosing each page by an O(pages) scan
    # in user space: no bogo op ends within minutes under QEMU, on Linux
    # 6.12 either. Its work before that must still pass --verify.
    least=1
    [ "$s" = tmpfs ] && least=0
    if [ "$rc" = 0 ] && ! echo "$out" | grep -q '^stress-ng: fail:' && [ "${ops:-0}" -ge "$least" ]; then
        echo "stress: stress-ng $s ... ok: $ops bogo ops, $took ms"
    else
        echo "stress: stress-ng $s ... FAILED: exit $rc, ${ops:-no} bogo ops, $took ms"
        echo "$out" | tail -20
    fi
done
echo "=== end"
