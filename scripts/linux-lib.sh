# Sourced by scripts/bench-linux.sh and scripts/test-linux-boot.sh: Debian's
# Linux 6.12 arm64 kernel (the newest linux-image-6.12.*+deb12-arm64-unsigned;
# bookworm-backports) and busybox-static, downloaded once into build/linux,
# and a boot of that kernel with an initramfs of busybox and our programs.
# The downloads need arm64 among dpkg's architectures, which this adds as
# root (otherwise it prints the commands).

linux_dir=build/linux

# arm64_apt: makes apt know Debian's arm64 packages (as root: adds the
# architecture and updates the lists; otherwise prints the commands).
arm64_apt() {
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        if [ "$(id -u)" != 0 ]; then
            echo "arm64 packages needed:" \
                "sudo dpkg --add-architecture arm64 && sudo apt-get update" >&2
            exit 1
        fi
        dpkg --add-architecture arm64
        apt-get update -q >/dev/null
    fi
}

# linux_fetch PATTERN: unpacks the newest arm64 package whose name matches
# PATTERN under $linux_dir/NAME (once), and prints NAME.
linux_fetch() {
    mkdir -p "$linux_dir"
    arm64_apt
    local name
    name=$(apt-cache search --names-only "$1" | awk '{ print $1 }' | sort -V | tail -1)
    [ -n "$name" ] || { echo "linux: no Debian package matches $1" >&2; exit 1; }
    if [ ! -d "$linux_dir/$name" ]; then
        (cd "$linux_dir" && apt-get download -q "$name:arm64" >/dev/null 2>&1) ||
            { echo "linux: could not download $name:arm64" >&2; exit 1; }
        dpkg-deb -x "$linux_dir/${name}_"*_arm64.deb "$linux_dir/$name"
    fi
    echo "$name"
}

# linux_setup: fetches both packages; sets $linux (the package) and
# $linux_kernel (its vmlinuz).
linux_setup() {
    linux=$(linux_fetch '^linux-image-6\.12\..*+deb12-arm64-unsigned$')
    linux_busybox=$(linux_fetch '^busybox-static$')
    linux_kernel=$(echo "$linux_dir/$linux"/boot/vmlinuz-*)
}

# linux_initrd NAME WORK MKINITRD-ARGS...: $linux_dir/NAME.cpio holding
# busybox, an /init that mounts /proc, /sys, debugfs, devtmpfs on /dev and
# tmpfs on /dev/shm and /tmp, links /dev/fd and /dev/std{in,out,err} (as a
# distribution's init would), sets PATH, runs the shell
# line WORK and powers off, and whatever MKINITRD-ARGS add (`--dir rootfs`
# for the same /etc, passwd and group, as faultline's initrd). Linux passes
# `name=value` words of its command line to init's environment.
linux_initrd() {
    local name=$1 work=$2
    shift 2
    cat > "$linux_dir/$name.init" <<INIT
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t debugfs debugfs /sys/kernel/debug
/bin/busybox mkdir -p /dev
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox mkdir -p /dev/shm
/bin/busybox ln -s /proc/self/fd /dev/fd
/bin/busybox ln -s /proc/self/fd/0 /dev/stdin
/bin/busybox ln -s /proc/self/fd/1 /dev/stdout
/bin/busybox ln -s /proc/self/fd/2 /dev/stderr
/bin/busybox mount -t tmpfs tmpfs /dev/shm
/bin/busybox mount -t tmpfs tmpfs /tmp
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
echo "linux: Linux \$(/bin/busybox uname -r), \$(/bin/busybox nproc) CPUs"
$work
/bin/busybox poweroff -f
INIT
    target/release/mkinitrd -o "$linux_dir/$name.cpio" "$@" \
        --file "$linux_dir/$linux_busybox/bin/busybox:bin/busybox:755" \
        --file "$linux_dir/$name.init:init:755"
}

# linux_boot NAME APPEND QEMU_OPTIONS...: one boot of $linux_dir/NAME.cpio,
# with APPEND added to the kernel's command line.
linux_boot() {
    local name=$1 append=$2
    shift 2
    timeout --foreground -k 2 1800 qemu-system-aarch64 -machine virt,gic-version=2 \
        -nographic -no-reboot -kernel "$linux_kernel" -initrd "$linux_dir/$name.cpio" \
        -append "console=ttyAMA0 nokaslr norandmaps quiet rdinit=/init $append" "$@"
}
