#!/usr/bin/env bash
# make test's gdb stage (and `make gdb-test`): gdb-multiarch against
# `qemu-run.sh --gdb`, on the kernel `make gdb` steps. Six parts:
#   1. boot: a breakpoint at kernel_main is hit with a backtrace showing
#      Rust source lines, at EL1, and one on a secondary CPU's entry too;
#   2. the helpers (scripts/gdb/session.py, on user/c/gdb-target.c): each
#      fl-* command against what the kernel reports in /proc at the same
#      moment, fl-break-fault, docs/fault.md's `break handle_mm_fault`
#      and its backtrace, `break finish_fault`, `next` through
#      finish_fault to set_pte_range, the pretty printers
#      (scripts/gdb/check.py);
#   3. stepping: `step` and `fl-step` from fl-break-fault's stop reach
#      do_page_fault, handle_mm_fault, finish_fault, set_pte_range and the
#      contpte store in order, through closures, never stopping in Rust's
#      library (scripts/gdb/steps.py, check_steps.py);
#   4. `make gdb` itself at a terminal (scripts/gdb/interrupt.py): ^C
#      during `continue` stops the kernel, `continue` resumes, QEMU lives,
#      a taken port 1234 is passed over, the session ends with status 0;
#   5. `break NAME` finds every kernel function README.md and docs/ name
#      (scripts/check-docs.py --functions);
#   6. the walk-through in docs/gdb.md: its commands, run again, print
#      what the document shows (addresses aside).
# Prints one `gdb: <check> ... ok|FAILED` line per check; exits non-zero on
# any failure.
#
#   scripts/gdb-test.sh [KERNEL]          the checks
#   scripts/gdb-test.sh --update-doc      runs docs/gdb.md's session and
#                                         puts today's output in its blocks
set -uo pipefail
cd "$(dirname "$0")/.."
kernel=target/aarch64-unknown-none-softfloat/gdb/faultline-gdb
mode=check
case "${1:-}" in
    --update-doc) mode=update ;;
    "") ;;
    *) kernel=$1 ;;
esac
logdir=$(mktemp -d)
qemu_pid=
trap 'rm -rf "$logdir"; [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null' EXIT

# start_qemu LOG QEMU-ARGS...: a halted QEMU with a gdb server on $port.
start_qemu() {
    local log=$1; shift
    port=$(scripts/gdb/port.py free $((20000 + RANDOM % 20000)))
    FAULTLINE_GDB_PORT=$port ./qemu-run.sh --gdb --kernel "$kernel" --timeout 120 "$@" >"$log" 2>&1 &
    qemu_pid=$!
}
stop_qemu() { kill "$qemu_pid" 2>/dev/null; wait "$qemu_pid" 2>/dev/null; qemu_pid=; }

# The walk-through's commands are docs/gdb.md's `(gdb) ` lines; each runs
# as typed at the prompt (gdb reads no terminal, so it answers its own
# questions and wraps lines at 80 columns), echoed before its output.
transcript() {
    local args=()
    while IFS= read -r cmd; do
        args+=(-ex "echo (gdb) ${cmd//\\/\\\\}\\n" -ex "$cmd")
    done < <(sed -n 's/^(gdb) //p' docs/gdb.md)
    start_qemu "$logdir/walk.console" --run "/bin/bench/seed000 --set-knobs iters=1"
    timeout 120 gdb-multiarch -nx -q "$kernel" -ex "source scripts/gdb/faultline-gdb.py" \
        -ex "target remote :$port" -ex "break kernel_main" "${args[@]}" </dev/null 2>&1 |
        sed -n '/^(gdb) /,$p' | sed 's/ *$//; ${/^(gdb)$/d}'
    stop_qemu
}
if [ "$mode" = update ]; then
    transcript >"$logdir/walk"
    # A helper that broke prints a Python traceback: never into the book.
    if grep -E "Python Exception|Error occurred in Python" "$logdir/walk"; then
        echo "gdb-test: a helper failed; docs/gdb.md left as it was" >&2
        exit 1
    fi
    exec python3 scripts/gdb/fill-transcript.py docs/gdb.md "$logdir/walk"
fi

failed=0
check() { # name, extended regex that must match the log
    if grep -Eq "$2" "$3"; then
        echo "gdb: $1 ... ok"
    else
        echo "gdb: $1 ... FAILED"
        failed=1
    fi
}

# --- 1. boot ----------------------------------------------------------------
log=$logdir/boot
start_qemu "$logdir/boot.console" --smp 2
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
stop_qemu
check "breakpoint_at_kernel_main_hit" '^Thread 1 hit Breakpoint 1, .* at kernel/src/[a-z0-9_/]+\.rs:[0-9]+' "$log"
check "backtrace_shows_rust_source_lines" '^#[01] +(faultline::)?kernel_main \(dtb_pa=.*\) at kernel/src/main\.rs:[0-9]+' "$log"
check "kernel_main_runs_at_el1" '^@@cpsr 0x[0-9a-f]*[45]$' "$log"
check "secondary_cpu_entry_hit" '^Thread 2 hit Breakpoint 2, .* at kernel/src/[a-z0-9_/]+\.rs:[0-9]+' "$log"
check "secondary_backtrace_reaches_secondary_main" '^#[01] +(faultline::)?secondary_main \(record=.*\) at kernel/src/main\.rs:[0-9]+' "$log"
if [ "$failed" != 0 ]; then
    echo "--- gdb log ---"; cat "$log"
fi

# --- 2. the helpers, against /proc --------------------------------------------
start_qemu "$logdir/helpers.console" --smp 2 --mem 512M --add build/gdb-target --run /bin/gdb-target
timeout 120 gdb-multiarch -nx -batch -ex "file $kernel" -ex "source scripts/gdb/faultline-gdb.py" \
    -ex "target remote :$port" -ex "source scripts/gdb/session.py" >"$logdir/helpers.gdb" 2>&1
stop_qemu
if ! python3 scripts/gdb/check.py "$logdir/helpers.console" "$logdir/helpers.gdb" >"$logdir/helpers"; then
    failed=1
    cat "$logdir/helpers"
    echo "--- console ---"; tail -40 "$logdir/helpers.console"
    echo "--- gdb ---"; tail -60 "$logdir/helpers.gdb"
else
    grep '^gdb: ' "$logdir/helpers"
fi

# --- 3. stepping: `step` and `fl-step` from the fault to the PTE store ------
steps() { # COMMAND: one boot, the steps into $logdir/COMMAND.gdb, checked
    start_qemu "$logdir/$1.console" --run "/bin/bench/seed000 --set-knobs iters=1"
    timeout 120 gdb-multiarch -nx -batch -ex "file $kernel" -ex "source scripts/gdb/faultline-gdb.py" \
        -ex "target remote :$port" -ex "python STEP_COMMAND = '$1'" \
        -ex "source scripts/gdb/steps.py" >"$logdir/$1.gdb" 2>&1
    stop_qemu
    python3 scripts/gdb/check_steps.py "$1" "$logdir/$1.gdb" >"$logdir/$1.check"
}
for command in step fl-step; do
    # A timer interrupt that falls due while gdb runs over a helper (real
    # time: now and then) is followed into the tick, and that run says
    # nothing about the fault's path: it runs once more.
    if ! steps "$command" && grep -q "^@@step .*timer_interrupt" "$logdir/$command.gdb"; then
        echo "    ($command: the tick came in while stepping; once more)"
        steps "$command"
    fi
    grep -q FAILED "$logdir/$command.check" && failed=1
    cat "$logdir/$command.check"
done

# --- 4. make gdb at a terminal: ^C, continue, the port, the exit status ----
python3 scripts/gdb/interrupt.py "$kernel" || failed=1

# --- 5. `break NAME` for every kernel function the book names -------------
args=()
while read -r name; do args+=(-ex "break $name"); done < <(python3 scripts/check-docs.py --functions "$kernel")
gdb-multiarch -nx -batch -ex "file $kernel" -ex "set breakpoint pending off" "${args[@]}" \
    >"$logdir/break-names" 2>&1
if [ "${#args[@]}" -gt 40 ] && ! grep -q "not defined" "$logdir/break-names"; then
    echo "gdb: break_finds_every_function_the_docs_name ... ok"
else
    echo "gdb: break_finds_every_function_the_docs_name ... FAILED"
    grep "not defined" "$logdir/break-names" | head -20
    failed=1
fi

# --- 6. docs/gdb.md's walk-through ------------------------------------------
# Addresses of kernel memory and physical frames differ from boot to boot,
# and inode numbers (`ino N`, and the column after a maps line's device)
# move whenever the kernel makes one more file at boot; everything else
# must read as the document shows it.
normalize() {
    sed -E 's/0x[0-9a-f]{5,}/0x_/g; s/ino [0-9]+/ino _/g; s/ (00:[0-9a-f]{2}) [0-9]+ */ \1 _ /; s/ *$//'
}
transcript | normalize >"$logdir/walk.now"
# The document's transcript: its fenced blocks that begin at a prompt.
awk '/^```/ { if (inside) { if (block ~ /^\(gdb\) /) printf "%s", block } inside = !inside; block = ""; next }
     inside { block = block $0 "\n" }' docs/gdb.md | normalize >"$logdir/walk.doc"
if [ -s "$logdir/walk.doc" ] && diff -u "$logdir/walk.doc" "$logdir/walk.now" >"$logdir/walk.diff"; then
    echo "gdb: docs_gdb_md_transcript_matches_a_session_today ... ok"
else
    echo "gdb: docs_gdb_md_transcript_matches_a_session_today ... FAILED"
    echo "    (scripts/gdb-test.sh --update-doc puts today's session in docs/gdb.md)"
    head -60 "$logdir/walk.diff"
    failed=1
fi
exit "$failed"
