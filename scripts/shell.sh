#!/usr/bin/env bash
# make shell: boots faultline into Debian's busybox sh on the console
# (user/busybox/shell-init.sh), with the applets linked into /bin. Options
# go to qemu-run.sh (make shell QEMU_ARGS="--smp 4 --mem 1G"); the default
# machine has 2 CPUs and 512M. Ctrl-A x quits QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/busybox.sh
exec ./qemu-run.sh --smp 2 --mem 512M "$@" --add build/busybox \
    --add user/busybox/shell-init.sh --run "/bin/busybox sh /bin/shell-init.sh"
