#!/usr/bin/env bash
# Drives gdb-multiarch in batch mode against `qemu-run.sh --gdb`: a
# breakpoint at kernel_main is hit with a backtrace showing Rust source
# lines, at EL1, and a breakpoint on a secondary CPU's entry is hit too.
# Prints one `gdb: <check> ... ok|FAILED` line per check; exits non-zero on
# any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
kernel=target/aarch64-unknown-none-softfloat/release/faultline
port=$((20000 + RANDOM % 20000))
log=$(mktemp)
trap 'rm -f "$log"; [ -n "${qemu_pid:-}" ] && kill "$qemu_pid" 2>/dev/null' EXIT

FAULTLINE_GDB_PORT=$port ./qemu-run.sh --gdb --smp 2 --timeout 60 "$kernel" >/dev/null 2>&1 &
qemu_pid=$!

timeout 60 gdb-multiarch -nx -batch \
    -ex "set pagination off" \
    -ex "set confirm off" \
    -ex "file $kernel" \
    -ex "target remote :$port" \
    -ex "break kernel_main" \
    -ex "break secondary_main" \
    -ex "continue" \
    -ex "echo @@kernel_main\n" \
    -ex "backtrace" \
    -ex 'printf "@@cpsr %#x\n", $cpsr' \
    -ex "continue" \
    -ex "echo @@secondary\n" \
    -ex "backtrace" \
    -ex "info threads" \
    -ex "kill" >"$log" 2>&1

failed=0
check() { # name, extended regex that must match the log
    if grep -Eq "$2" "$log"; then
        echo "gdb: $1 ... ok"
    else
        echo "gdb: $1 ... FAILED"
        failed=1
    fi
}
# A breakpoint lands after the prologue, which may be inlined code: the
# backtrace then names kernel_main / secondary_main one frame up.
check "breakpoint_at_kernel_main_hit" '^Thread 1 hit Breakpoint 1, .* at kernel/src/[a-z0-9_/]+\.rs:[0-9]+'
check "backtrace_shows_rust_source_lines" '^#[01] +(faultline::)?kernel_main \(dtb_pa=.*\) at kernel/src/main\.rs:[0-9]+'
check "kernel_main_runs_at_el1" '^@@cpsr 0x[0-9a-f]*[45]$'
check "secondary_cpu_entry_hit" '^Thread 2 hit Breakpoint 2, .* at kernel/src/[a-z0-9_/]+\.rs:[0-9]+'
check "secondary_backtrace_reaches_secondary_main" '^#[01] +(faultline::)?secondary_main \(record=.*\) at kernel/src/main\.rs:[0-9]+'
if [ "$failed" != 0 ]; then
    echo "--- gdb log ---"; cat "$log"
fi
exit "$failed"
