#!/usr/bin/env bash
# `make selftests`: Linux's own selftests (tools/testing/selftests in the
# tree LINUX_SRC names) judge faultline. The programs in
# user/selftests/list are cross-built static once into build/selftests/,
# run on Debian's Linux 6.12 in QEMU (scripts/linux-lib.sh; its log,
# build/selftests/linux.log, is kept and reused) and then on
# faultline, the same binaries under the same QEMU flags, each from its own
# directory under user/selftests/run.sh. Prints one line per test, its
# exit status and KTAP subtests passed on each kernel,
#   selftest mm/cow   linux=pass  160/160  faultline=pass  160/160
# then `selftests: N pass on both, ...` and every program and subtest that
# passes on Linux but not on faultline (scripts/selftests-report.py).
# Console logs: build/selftests/{linux,faultline}.log.
#
#   scripts/selftests.sh [--linux] [--only REGEX] [--timeout S]
#     --linux      run on Linux 6.12 again even when its results are kept
#     --only RE    only the tests whose DIR/PROGRAM matches RE (grep -E);
#                  their results are added to the kept logs
#     --timeout S  per test (default 300)
#
# Linux 6.12's source: Debian packages it as linux-source-6.12 (trixie).
set -euo pipefail
cd "$(dirname "$0")/.."

relinux=0 only="" limit=300
while [ $# -gt 0 ]; do
    case "$1" in
        --linux) relinux=1; shift ;;
        --only) only=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        *) echo "selftests.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

if [ -z "${LINUX_SRC:-}" ] || [ ! -d "${LINUX_SRC}/tools/testing/selftests" ]; then
    echo "selftests: skipped: LINUX_SRC${LINUX_SRC:+=$LINUX_SRC} is not a Linux source tree."
    echo "  Linux 6.12's, from Debian's package (about 150 MB):"
    echo "    apt-get download linux-source-6.12   # trixie's; add trixie to apt's sources first"
    echo "    dpkg-deb --fsys-tarfile linux-source-6.12_*_all.deb | tar -x ./usr/src/linux-source-6.12.tar.xz"
    echo "    tar -xf usr/src/linux-source-6.12.tar.xz"
    echo "  then: make selftests LINUX_SRC=\$PWD/linux-source-6.12"
    exit 0
fi
src=$(cd "$LINUX_SRC" && pwd)
out=$PWD/build/selftests
bin=$out/bin
mkdir -p "$bin"

# --- build -------------------------------------------------------------
# The uapi headers of the same tree (the selftests use newer ones than
# the cross compiler's), then each directory with its own Makefile.
if [ ! -f "$out/usr/include/linux/mman.h" ]; then
    echo "selftests: headers_install from $src"
    make -s -C "$src" ARCH=arm64 O="$out/kbuild" headers_install INSTALL_HDR_PATH="$out/usr" >/dev/null
fi
cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- LDFLAGS=-static
    KHDR_INCLUDES="-isystem $out/usr/include" USERCFLAGS="-isystem $out/usr/include")
for dir in $(grep -v '^#' user/selftests/list | awk '{ print $1 }' | cut -d/ -f1 | sort -u); do
    [ -e "$out/built-$dir" ] && continue
    echo "selftests: building $dir"
    mkdir -p "$bin/$dir"
    if [ "$dir" = arm64 ]; then
        make -s -C "$src/tools/testing/selftests/arm64" "${cross[@]}" ARM64_SUBTARGETS=signal \
            OUTPUT="$bin/arm64" -k -j"$(nproc)" >"$out/build-$dir.log" 2>&1 || true
    elif [ "$dir" = exec ]; then
        # load_address.N is a dynamic PIE by design; the rest may be too.
        make -s -C "$src/tools/testing/selftests/exec" "${cross[@]}" LDFLAGS= \
            OUTPUT="$bin/exec" -k -j"$(nproc)" >"$out/build-$dir.log" 2>&1 || true
    else
        make -s -C "$src/tools/testing/selftests/$dir" "${cross[@]}" \
            OUTPUT="$bin/$dir" -k -j"$(nproc)" >"$out/build-$dir.log" 2>&1 || true
    fi
    touch "$out/built-$dir"
done
# The exec tests read their own Makefile.
cp "$src/tools/testing/selftests/exec/Makefile" "$bin/exec/" 2>/dev/null || true
grep -v '^#' user/selftests/list | while read -r t _; do
    [ -x "$bin/$t" ] || echo "selftests: $t did not build (see $out/build-${t%%/*}.log)"
done
cp user/selftests/list "$bin/list"

# --- run ---------------------------------------------------------------
# What the guest's shell runs: user/selftests/run.sh with the limit and
# the filter, and the scratch file systems the tests write to.
env_line="SELFTEST_TIMEOUT=$limit SELFTEST_ONLY='$only'"
# The cross compiler's glibc, for the programs built dynamic (exec's
# load_address, arm64/signal, whose Makefiles link so).
libs=()
for l in ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libpthread.so.0 librt.so.1 libdl.so.2; do
    libs+=(--file "/usr/aarch64-linux-gnu/lib/$l:lib/$l:755"
        --file "/usr/aarch64-linux-gnu/lib/$l:lib/aarch64-linux-gnu/$l:755")
done

# keep BASE: BASE.new becomes BASE.log; a run of some tests (--only) is
# added to the end instead, where the report takes a test's last run.
keep() {
    if [ -n "$only" ]; then cat "$1.new" >>"$1.log"; else mv "$1.new" "$1.log"; fi
    rm -f "$1.new"
}

. scripts/linux-lib.sh
if [ "$relinux" = 1 ] || ! grep -q '^selftest ' "$out/linux.log" 2>/dev/null; then
    linux_setup
    linux_initrd selftests "$env_line /bin/busybox sh /selftests/run.sh" \
        --dir "$bin:selftests" --file user/selftests/run.sh:selftests/run.sh:755 "${libs[@]}"
    echo "selftests: on $linux (2 CPUs, 2G)"
    linux_boot selftests "" -cpu cortex-a72 -smp 2 -m 2G | sed -u 's/\r$//' >"$out/linux.new" || true
    keep "$out/linux"
fi

echo "selftests: on faultline (2 CPUs, 2G)"
cat >"$out/faultline-run.sh" <<RUN
$env_line /bin/busybox sh /selftests/run.sh
RUN
target/release/mkinitrd -o "$out/faultline.cpio" --dir rootfs --dir build/rootfs-user \
    --file build/busybox:bin/busybox:755 --dir "$bin:selftests" \
    --file user/selftests/run.sh:selftests/run.sh:755 "${libs[@]}" \
    --file "$out/faultline-run.sh:bin/selftests-run.sh:755"
# Debian's Linux 6.12 boots with THP `enabled` at `always`
# (CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS); faultline's default is `never`.
./qemu-run.sh --smp 2 --mem 2G --initrd "$out/faultline.cpio" --append transparent_hugepage=always \
    --run "/bin/busybox sh /bin/selftests-run.sh" --timeout 7200 >"$out/faultline.new" 2>&1 || true
keep "$out/faultline"

# --- report ------------------------------------------------------------
python3 scripts/selftests-report.py user/selftests/list "$out/linux.log" "$out/faultline.log" "$only"
