#!/usr/bin/env bash
# Debian's own dynamically linked programs (bash, coreutils, python3, gcc)
# running user/debian/smoke.sh, on faultline and on Debian's Linux 6.12
# (scripts/linux-lib.sh), from the same root file system
# (scripts/debian.sh): each workload's output on faultline must be
# Linux's. One `debian: NAME ... ok|FAILED` line per workload. When the
# packages cannot be downloaded (no network), says so and skips. Logs:
# build/debian-faultline.log, build/debian-linux.log.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/linux-lib.sh

packages=$(grep -v '^#' user/debian/packages | tr '\n' ' ')
# shellcheck disable=SC2086 # a list of packages
if ! root=$(scripts/debian.sh $packages 2>build/debian.err); then
    echo "debian: SKIPPED: Debian's packages could not be had ($(tail -1 build/debian.err))"
    exit 0
fi
# One word per workload, its output after it: `=== NAME` lines split them.
sections() { # LOG OUTDIR
    mkdir -p "$2"
    sed 's/\r$//' "$1" | awk -v dir="$2" '
        /^=== end$/ { exit }
        /^=== / { name = $2; next }
        name != "" { print > (dir "/" name) }'
}
./qemu-run.sh --debian "$packages" --smp 2 --add user/debian/smoke.sh \
    --run "/bin/bash /bin/smoke.sh" --timeout 600 >build/debian-faultline.log 2>&1
faultline_rc=$?
linux_setup
linux_initrd debian "/bin/bash /bin/smoke.sh" --dir "$root" \
    --file user/debian/smoke.sh:bin/smoke.sh:755
linux_boot debian "" -cpu cortex-a72 -smp 2 -m 2G >build/debian-linux.log 2>&1
rm -rf build/debian-out && mkdir -p build/debian-out
sections build/debian-faultline.log build/debian-out/faultline
sections build/debian-linux.log build/debian-out/linux
failed=0
for want in build/debian-out/linux/*; do
    name=$(basename "$want")
    got=build/debian-out/faultline/$name
    if [ -f "$got" ] && cmp -s "$want" "$got"; then
        echo "debian: $name ... ok"
    else
        echo "debian: $name ... FAILED: output differs from Linux's (< Linux, > faultline):"
        diff "$want" "$got" 2>&1 | head -20
        failed=$((failed + 1))
    fi
done
if [ ! -d build/debian-out/linux ] || [ -z "$(ls build/debian-out/linux)" ]; then
    echo "debian: linux_ran_the_workloads ... FAILED: no output from Linux (build/debian-linux.log)"
    failed=$((failed + 1))
fi
if [ "$faultline_rc" != 0 ]; then
    echo "debian: faultline_exit ... FAILED: exit $faultline_rc (build/debian-faultline.log)"
    failed=$((failed + 1))
fi
[ "$failed" = 0 ]
