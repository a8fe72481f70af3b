#!/usr/bin/env bash
# The one place that knows QEMU's flags. Boots the faultline kernel on QEMU
# `virt` and exits with the kernel's exit code (semihosting), or 124 on the
# --timeout watchdog. Console output goes through tools/symbolize so panic
# backtraces show function names and source lines.
#
#   ./qemu-run.sh [options] [--kernel ELF] [ELF]
#     --smp N           CPUs (default 2)
#     --mem M           RAM, QEMU syntax: 128M, 1G, 4G (default 128M)
#     --cpu MODEL       cortex-a72 (default), or max (= max,pauth-impdef=on)
#     --gic 2|3         interrupt controller version (default 2)
#     --el2             start at EL2 (-machine virtualization=on)
#     --append "ARGS"   kernel command line
#     --initrd FILE     initrd (cpio newc; default build/initrd.cpio, made by make)
#     --add FILE        also put host FILE in the initrd, as /bin/<its name>
#     --debian "PKG..." boot Debian's arm64 packages PKG (with what they
#                       depend on; scripts/debian.sh) as the root file
#                       system, with faultline's /init; default --mem 2G
#     --run "PROG ARGS" have /init run PROG with ARGS (instead of the tests)
#     --icount          deterministic time: 1 virtual ns per instruction
#     --gdb             start halted with a gdb server on $FAULTLINE_GDB_PORT (1234)
#     --timeout S       watchdog: kill QEMU after S seconds (exit code 124)
#     --tlb             load the TLB model (build/tlb.so, tools/tlb/plugin.c;
#                       QEMU 10 only): misses per CPU and address space at
#                       exit, and where programs mark windows, on stderr
#     --tlb-opt K=V     a TLB model option (repeatable): itlb=, dtlb=, l2=,
#                       l2_ways= (entries; l2=0: no L2), linear=
#     --qemu-arg ARG    pass ARG to QEMU as it is, after the flags above
#                       (repeatable, one argument each: --qemu-arg -d
#                       --qemu-arg exec,nochain)
#
#   QEMU=PROGRAM        the qemu-system-aarch64 to run (default: the one on
#                       PATH); QEMU=10 is the QEMU 10 `make setup QEMU=10`
#                       unpacks into build/qemu-10. A QEMU given this way
#                       is named on stderr before it starts.
set -euo pipefail

root=$(cd "$(dirname "$0")" && pwd)
kernel="$root/target/aarch64-unknown-none-softfloat/release/faultline"
initrd="$root/build/initrd.cpio"
smp=2 mem="" cpu=cortex-a72 gic=2 el2=off append="" icount=() gdb=() timeout_s=0
adds=() run="" debian="" extra_qemu=() tlb=() tlb_opts=

while [ $# -gt 0 ]; do
    case "$1" in
        --smp) smp=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --cpu) cpu=$2; shift 2 ;;
        --gic) gic=$2; shift 2 ;;
        --el2) el2=on; shift ;;
        --append) append=$2; shift 2 ;;
        --initrd) initrd=$2; shift 2 ;;
        --add) adds+=("$2"); shift 2 ;;
        --debian) debian=$2; shift 2 ;;
        --run) run=$2; shift 2 ;;
        --icount) icount=(-icount shift=0,sleep=off); shift ;;
        --gdb) gdb=(-S -gdb "tcp::${FAULTLINE_GDB_PORT:-1234}"); shift ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --qemu-arg) extra_qemu+=("$2"); shift 2 ;;
        --tlb) tlb=(-plugin "$root/build/tlb.so" -d plugin); shift ;;
        --tlb-opt) tlb_opts+=",$2"; shift 2 ;;
        --kernel) kernel=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
        -*) echo "qemu-run.sh: unknown option $1" >&2; exit 2 ;;
        *) kernel=$1; shift ;;
    esac
done

# Plain `max` emulates pointer authentication very slowly; faultline does
# not use it.
[ "$cpu" = max ] && cpu=max,pauth-impdef=on

qemu_bin=${QEMU:-qemu-system-aarch64}
case "$qemu_bin" in
    [0-9]*)
        dir="$root/build/qemu-$qemu_bin"
        qemu_bin="$dir/usr/bin/qemu-system-aarch64"
        # Its own modules, never the system QEMU's (which it refuses).
        export QEMU_MODULE_DIR="$dir/usr/lib/x86_64-linux-gnu/qemu"
        ;;
esac
if ! command -v "$qemu_bin" >/dev/null; then
    if [ -n "${QEMU:-}" ]; then
        echo "qemu-run.sh: QEMU=$QEMU: no $qemu_bin (for QEMU 10: make setup QEMU=10)" >&2
    else
        echo "qemu-run.sh: qemu-system-aarch64 not found: run 'make setup' (or: apt-get install qemu-system-arm)" >&2
    fi
    exit 127
fi
[ -z "${QEMU:-}" ] || echo "qemu-run.sh: $("$qemu_bin" --version | head -1) ($qemu_bin)" >&2
if [ ${#tlb[@]} -gt 0 ]; then
    [ -f "$root/build/tlb.so" ] || { echo "qemu-run.sh: --tlb needs build/tlb.so: run 'make build'" >&2; exit 2; }
    tlb[1]+=$tlb_opts
elif [ -n "$tlb_opts" ]; then
    echo "qemu-run.sh: --tlb-opt without --tlb" >&2; exit 2
fi
[ -f "$kernel" ] || { echo "qemu-run.sh: no kernel at $kernel: run 'make build'" >&2; exit 2; }

# --add, --debian: an initrd made for this boot, the Debian root (or
# faultline's) with the extra files in /bin.
if [ ${#adds[@]} -gt 0 ] || [ -n "$debian" ]; then
    mkinitrd="$root/target/release/mkinitrd"
    [ -x "$mkinitrd" ] || { echo "qemu-run.sh: --add and --debian need $mkinitrd: run 'make build'" >&2; exit 2; }
    extra=$(mktemp --suffix=.cpio)
    trap 'rm -f "$extra"' EXIT
    if [ -n "$debian" ]; then
        # shellcheck disable=SC2086 # a list of packages
        debian_root=$("$root/scripts/debian.sh" $debian)
        args=(--dir "$root/$debian_root")
        # The initrd and its unpacked copy, and room to run.
        mem=${mem:-2G}
    else
        args=(--dir "$root/rootfs")
    fi
    [ -d "$root/build/rootfs-user" ] && args+=(--dir "$root/build/rootfs-user")
    for f in "${adds[@]}"; do
        args+=(--file "$f:/bin/$(basename "$f"):755")
    done
    "$mkinitrd" -o "$extra" "${args[@]}"
    initrd=$extra
fi
mem=${mem:-128M}
if [ -n "$run" ]; then
    append="${append:+$append }-- run $run"
fi

# QEMU passes -initrd only to Linux-format images, not to an ELF kernel:
# load it at a fixed address and say where on the command line, with
# Linux's own initrd=<start>,<size> syntax.
initrd_addr=0x41000000
loader=()
if [ -f "$initrd" ]; then
    loader=(-device "loader,file=$initrd,addr=$initrd_addr,force-raw=on")
    append="initrd=$initrd_addr,$(stat -c %s "$initrd")${append:+ $append}"
fi

qemu=("$qemu_bin"
    -machine "virt,gic-version=$gic,virtualization=$el2"
    -cpu "$cpu" -smp "$smp" -m "$mem"
    -nographic -no-reboot
    -semihosting-config enable=on,target=native
    -kernel "$kernel" -append "$append" "${loader[@]}"
    "${icount[@]}" "${gdb[@]}" "${tlb[@]}" "${extra_qemu[@]}")

if [ "$timeout_s" != 0 ]; then
    qemu=(timeout --foreground -k 2 "$timeout_s" "${qemu[@]}")
fi

symbolize="$root/target/release/symbolize"
if [ -x "$symbolize" ]; then
    set +e
    "${qemu[@]}" | "$symbolize" "$kernel"
    status=("${PIPESTATUS[@]}")
    set -e
    exit "${status[0]}"
else
    "${qemu[@]}"
fi
