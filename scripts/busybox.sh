#!/usr/bin/env bash
# Debian's busybox-static (arm64), fetched once as make bench-linux fetches
# its kernel (scripts/linux-lib.sh: the package unpacked under build/linux),
# and copied to build/busybox, where make test, make shell and
# make test-linux take it from.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/linux-lib.sh

[ -x build/busybox ] && exit 0
name=$(linux_fetch '^busybox-static$')
cp "$linux_dir/$name/bin/busybox" build/busybox
