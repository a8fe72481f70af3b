#!/usr/bin/env bash
# The glibc test programs (user/c/tests/, built into build/ctests/) and
# the busybox script (user/busybox/applets.sh) on Debian's Linux 6.12 arm64
# kernel, booted in QEMU with them as init's work (scripts/linux-lib.sh):
# the values they expect are Linux's, and this shows Linux gives them.
# make test runs the same binaries and script on faultline. Each
# `glibc ... ok|FAILED` and `busybox ... ok|FAILED` line is a test; the last
# line is `test-linux-boot: N passed, M failed`. Console log:
# build/test-linux-boot.log.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/linux-lib.sh

log=build/test-linux-boot.log
linux_setup
work='for t in /bin/ctests/*; do echo "linux: running $t"; $t; echo "linux: $t exited $?"; done
/bin/busybox sh /bin/applets.sh; echo "linux: applets.sh exited $?"'
linux_initrd ctests "$work" --dir rootfs --dir build/ctests:bin/ctests \
    --file user/busybox/applets.sh:bin/applets.sh:755
echo "test-linux-boot: $linux, 2 CPUs, 1G"
linux_boot ctests "" -cpu cortex-a72 -smp 2 -m 1G | sed -u 's/\r$//' | tee "$log" |
    grep -E '^(glibc|busybox|linux) |^[0-9]+ passed' || true
passed=$(grep -cE '^(glibc|busybox) .* \.\.\. ok' "$log" || true)
failed=$(grep -cE '^(glibc|busybox) .* \.\.\. FAILED' "$log" || true)
exits=$(grep -c '^linux: /bin/ctests/.* exited 0$' "$log" || true)
programs=$(ls build/ctests | wc -l)
if [ "$exits" != "$programs" ]; then
    echo "test-linux-boot: $exits of $programs programs exited 0"
    failed=$((failed + 1))
fi
if ! grep -q '^linux: applets.sh exited 0$' "$log"; then
    echo "test-linux-boot: applets.sh did not exit 0"
    failed=$((failed + 1))
fi
echo "test-linux-boot: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
