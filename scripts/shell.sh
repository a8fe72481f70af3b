#!/usr/bin/env bash
# make shell: boots faultline into Debian's busybox sh on the console
# (user/busybox/shell-init.sh), with the applets linked into /bin; or, with
# DEBIAN="PKG ...", into bash on a root file system of those Debian
# packages (qemu-run.sh --debian; bash and util-linux, for setsid -c, are
# added to the list), job control on. Options go to
# qemu-run.sh (make shell QEMU_ARGS="--smp 4 --mem 1G"); the default
# machine has 2 CPUs and 512M (2G with DEBIAN). Ctrl-A x quits QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${DEBIAN:-}" ]; then
    exec ./qemu-run.sh --smp 2 "$@" --debian "bash util-linux $DEBIAN" \
        --run "/usr/bin/setsid -c /bin/bash -l"
fi
scripts/busybox.sh
exec ./qemu-run.sh --smp 2 --mem 512M "$@" --add build/busybox \
    --add user/busybox/shell-init.sh --run "/bin/busybox sh /bin/shell-init.sh"
