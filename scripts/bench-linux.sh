#!/usr/bin/env bash
# `make bench-linux`: the same benchmark binaries on Linux, side by side
# with `make bench`. Boots Debian's Linux 6.12 arm64 kernel (the newest
# linux-image-6.12.*+deb12-arm64-unsigned; bookworm-backports) with an
# initramfs of busybox and /bin/bench, under the QEMU flags `make bench`
# uses: once under -icount shift=0,sleep=off on 4 CPUs (`bench`, or
# `bench quick`), then the two MTTCG scaling boots on 2 CPUs. Prints the
# table and writes build/bench-linux.csv (console log build/bench-linux.log).
#   scripts/bench-linux.sh [quick]
# `quick` runs the short icount pass only. The Debian packages (the kernel
# and busybox-static, for arm64) are downloaded once into build/linux; that
# needs arm64 among dpkg's architectures, which this script adds as root
# (otherwise it prints the commands).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh

mode=full
[ "${1:-}" = quick ] && mode=quick
dir=build/linux
log=build/bench-linux.log
csv=build/bench-linux.csv
mkdir -p "$dir"

# fetch PATTERN: unpacks the newest arm64 package whose name matches
# PATTERN under $dir/NAME (once), and prints NAME.
fetch() {
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        if [ "$(id -u)" != 0 ]; then
            echo "bench-linux: arm64 packages needed:" \
                "sudo dpkg --add-architecture arm64 && sudo apt-get update" >&2
            exit 1
        fi
        dpkg --add-architecture arm64
        apt-get update -q >/dev/null
    fi
    local name
    name=$(apt-cache search --names-only "$1" | awk '{ print $1 }' | sort -V | tail -1)
    [ -n "$name" ] || { echo "bench-linux: no Debian package matches $1" >&2; exit 1; }
    if [ ! -d "$dir/$name" ]; then
        (cd "$dir" && apt-get download -q "$name:arm64" >/dev/null 2>&1) ||
            { echo "bench-linux: could not download $name:arm64" >&2; exit 1; }
        dpkg-deb -x "$dir/${name}_"*_arm64.deb "$dir/$name"
    fi
    echo "$name"
}

linux=$(fetch '^linux-image-6\.12\..*+deb12-arm64-unsigned$')
busybox=$(fetch '^busybox-static$')
kernel=$(echo "$dir/$linux"/boot/vmlinuz-*)

# Linux passes `bench=...` from its command line to init's environment.
cat > "$dir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t debugfs debugfs /sys/kernel/debug
echo "bench-linux: Linux $(/bin/busybox uname -r), $(/bin/busybox nproc) CPUs"
/bin/bench/bench $bench
/bin/busybox poweroff -f
EOF
target/release/mkinitrd -o "$dir/initrd.cpio" --dir build/rootfs-user/bin/bench:bin/bench \
    --file "$dir/$busybox/bin/busybox:bin/busybox:755" --file "$dir/init:init:755"

# linux_boot BENCH_ARG QEMU_OPTIONS...: one boot running `bench BENCH_ARG`.
linux_boot() {
    local arg=$1
    shift
    timeout --foreground -k 2 1800 qemu-system-aarch64 -machine virt,gic-version=2 \
        -nographic -no-reboot -kernel "$kernel" -initrd "$dir/initrd.cpio" \
        -append "console=ttyAMA0 nokaslr norandmaps quiet rdinit=/init bench=$arg" "$@"
}

echo "bench-linux: $linux under -icount shift=0,sleep=off, 4 CPUs, 2G"
linux_boot "$mode" -cpu cortex-a72 -smp 4 -m 2G -icount shift=0,sleep=off |
    sed -u 's/\r$//' | tee "$log" | grep -E '^(result|bench-linux) ' || true
grep -q '^result ' "$log" || { echo "bench-linux: no results (see $log)"; exit 1; }

scaling_boot() {
    linux_boot scaling -cpu "$1" -smp 2 -m 1G
}
[ "$mode" = quick ] || scaling_stages "$log" scaling_boot

results_table "$log" "$csv"
