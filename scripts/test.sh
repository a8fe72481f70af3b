#!/usr/bin/env bash
# `make test`: every test faultline has, ending with one line
# `N passed, N failed` (exit status non-zero on any failure).
#   1. lint: rustfmt and clippy (host crates, the kernel and user/) are clean
#   2. host unit tests: cargo test (the pure logic), the TLB model's logic
#      (tools/tlb/test_model.c) and the gdb helpers' pure parts
#      (scripts/gdb/test_desc.py)
#   3. in-kernel tests (ktest) in QEMU, on several machine shapes
#   4. user space: faultline's own test programs, the glibc programs
#      (user/c/tests/), a static glibc program (user/c/memfd-demo.c) that
#      must print what it prints on Linux (qemu-aarch64), Debian's busybox
#      (user/busybox/applets.sh), a scripted session at make shell's
#      prompt (scripts/shell-session.py) and Debian's dynamically linked
#      programs against Linux 6.12 (scripts/test-debian.sh)
#   5. robustness: the system-call fuzzer (user/c/fuzz.c), the
#      shadow-model memory stress (user/c/stress.c), memory run out
#      (user/c/tests/exhaustion.c) and stress-ng's memory stressors
#      (user/debian/stress-ng.sh), short runs of make fuzz and make stress
#   6. boot, shutdown and crash reports (panic backtrace, fault decoding),
#      a short benchmark run (every benchmark completes; the fault counts
#      seed 000 sets) and the benchmark table's scaling row
#   6b. tlb: the TLB model plugin through the kernel, under QEMU 10, on
#      known page-table layouts (scripts/test-tlb.sh)
#   7. the book (scripts/check-docs.py, scripts/docs-numbers.py): every
#      path, file:line, name, command and /proc or /sys file that README.md
#      and docs/ name exists; the numbers they quote and docs/bench.svg
#      are those of docs/bench.csv and docs/bench-linux.csv
#   8. the labs (scripts/lab.py selfcheck): every lab's starting point
#      builds and scores below full on its grader; this tree scores full
#   9. gdb (scripts/gdb-test.sh): breakpoints, backtraces, the helpers
#      (scripts/gdb/) against /proc, stepping, ^C at a terminal, `break`
#      on the functions the docs name, and docs/gdb.md's session
# Every QEMU run has a watchdog, so a hang is a failure, not a stuck CI.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

# STAGE=NAME[,NAME...] (`make test STAGE=gdb`) runs only those stages:
# lint, host, ktest, user, robustness, boot, docs, labs, gdb.
all_stages=lint,host,ktest,user,robustness,boot,tlb,docs,labs,gdb
stages=${STAGE:-$all_stages}
for s in ${stages//,/ }; do
    case ",$all_stages," in
        *",$s,"*) ;;
        *) echo "test.sh: no stage $s (the stages: $all_stages)"; exit 2 ;;
    esac
done
stage() { case ",$stages," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

pass() { passed=$((passed + 1)); echo "$1 ... ok"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "$1 ... FAILED${2:+: $2}"; }
# Counts a script's `NAME ... ok` / `NAME ... FAILED: WHY` lines; passes
# its other lines through.
checks_from() {
    local line
    while read -r line; do
        case "$line" in
            *" ... ok") pass "${line% ... ok}" ;;
            *" ... FAILED"*) fail "${line%% ... FAILED*}" "${line#* ... FAILED}" ;;
            *) echo "$line" ;;
        esac
    done < <("$@")
}

# run_suite NAME PREFIX CMDLINE TIMEOUT QEMU-ARGS...: boots with CMDLINE;
# each `PREFIX X ... ok|FAILED` line is a test; the run is clean when QEMU
# exits 0 and its last count line is `N passed, 0 failed`.
run_suite() {
    local name=$1 prefix=$2 cmdline=$3 limit=$4; shift 4
    ./qemu-run.sh "$@" --append "$cmdline" --timeout "$limit" >"$logdir/$name" 2>&1
    local rc=$?
    local ok bad
    ok=$(grep -c "^$prefix .* \.\.\. ok" "$logdir/$name")
    bad=$(grep -c "^$prefix .* \.\.\. FAILED" "$logdir/$name")
    passed=$((passed + ok))
    failed=$((failed + bad))
    grep "^$prefix .* FAILED" "$logdir/$name" | sed "s/^/$name: /"
    echo "$name: $ok passed, $bad failed (exit $rc)"
    if [ "$rc" != 0 ] || [ "$ok" = 0 ] || ! grep -Eq "^[0-9]+ passed, 0 failed" "$logdir/$name"; then
        fail "$name: clean run" "exit $rc"; tail -40 "$logdir/$name"
    fi
}

# --- 1. lint -------------------------------------------------------------
if stage lint; then
if cargo fmt --all --check >"$logdir/fmt" 2>&1; then pass "lint: rustfmt"; else
    fail "lint: rustfmt" "run 'cargo fmt'"; head -20 "$logdir/fmt"; fi
if cargo clippy -q --all-targets -- -D warnings >"$logdir/clippy" 2>&1 &&
    cargo kclippy -q -- -D warnings >>"$logdir/clippy" 2>&1 &&
    cargo uclippy -q -- -D warnings >>"$logdir/clippy" 2>&1; then
    pass "lint: clippy"
else
    fail "lint: clippy"; head -40 "$logdir/clippy"
fi
fi

# --- 2. host unit tests --------------------------------------------------
if stage host; then
cargo test 2>&1 | tee "$logdir/host" | grep -E "^test .* (FAILED|ok)$" | grep FAILED
host_rc=${PIPESTATUS[0]}
read -r hp hf < <(awk '/^test result:/ { p += $4; f += $6 } END { print p+0, f+0 }' "$logdir/host")
echo "host: cargo test: $hp passed, $hf failed"
passed=$((passed + hp))
failed=$((failed + hf))
if [ "$host_rc" != 0 ] && [ "$hf" = 0 ]; then
    fail "host: cargo test (build)"; tail -30 "$logdir/host"
fi

# The TLB model's logic (tools/tlb/test_model.c), in C like the plugin.
if gcc -O2 -Wall -Wextra -Werror -o build/tlb-test tools/tlb/test_model.c tools/tlb/tlb_model.c \
    >"$logdir/tlbhost" 2>&1 && build/tlb-test >>"$logdir/tlbhost" 2>&1; then
    n=$(sed -n 's/^tlb model: \([0-9]*\) passed.*/\1/p' "$logdir/tlbhost")
    passed=$((passed + n))
    echo "host: TLB model (C): $n passed, 0 failed"
else
    fail "host: TLB model (C)"; tail -30 "$logdir/tlbhost"
fi

# The gdb helpers' pure parts: descriptor and ESR decoding, ptdump's runs.
if python3 scripts/gdb/test_desc.py >"$logdir/pyhost" 2>&1; then
    n=$(awk '/^Ran [0-9]+ test/ { print $2 }' "$logdir/pyhost")
    passed=$((passed + n))
    echo "host: gdb helpers (python): $n passed, 0 failed"
else
    fail "host: gdb helpers (python)"; tail -30 "$logdir/pyhost"
fi
fi

# --- 3. in-kernel tests --------------------------------------------------
if stage ktest; then
run_suite "ktest[smp4,1G,gicv2,el1]" ktest ktest 120 --smp 4 --mem 1G
run_suite "ktest[smp1,128M]" ktest ktest 120 --smp 1 --mem 128M
run_suite "ktest[smp8,4G,gicv3,el2]" ktest ktest 120 --smp 8 --mem 4G --gic 3 --el2
run_suite "ktest[smp2,256M,max,el2]" ktest ktest 120 --smp 2 --mem 256M --cpu max --el2
# One test, or a few, by name: `ktest=NAME` runs those whose name
# contains NAME, and names no test at all is a failure, not a quiet 0.
./qemu-run.sh --smp 2 --mem 256M --append ktest=vma_lock --timeout 60 >"$logdir/ktest-one" 2>&1
rc=$?
named=$(grep -c "^ktest vma_lock.* \.\.\. ok" "$logdir/ktest-one")
if [ "$rc" = 0 ] && [ "$named" -gt 0 ] && ! grep "^ktest " "$logdir/ktest-one" | grep -vq "^ktest vma_lock" &&
    grep -q "^$named passed, 0 failed" "$logdir/ktest-one"; then
    pass "ktest: ktest=NAME runs only the tests it names"
else
    fail "ktest: ktest=NAME runs only the tests it names" "exit $rc"; tail -20 "$logdir/ktest-one"
fi
./qemu-run.sh --smp 1 --mem 128M --append ktest=no_such_test --timeout 60 >"$logdir/ktest-none" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "no test's name contains \"no_such_test\"" "$logdir/ktest-none"; then
    pass "ktest: ktest=NAME naming no test fails"
else
    fail "ktest: ktest=NAME naming no test fails" "exit $rc"; tail -20 "$logdir/ktest-none"
fi
fi

# --- 4. user space: the Linux-ABI test programs under /init ----------------
if stage user; then
run_suite "user[smp4,1G]" test "-- test" 240 --smp 4 --mem 1G
run_suite "user[smp2,256M,gicv3,el2]" test "-- test" 240 --smp 2 --mem 256M --gic 3 --el2
# QEMU's `max` has what cortex-a72 lacks and faultline then uses: the
# hardware access flag and dirty state (FEAT_HAFDBS) and range TLB
# invalidation (FEAT_TLBIRANGE); the tests pass with all on and all off.
run_suite "user[smp2,512M,max]" test "-- test" 240 --smp 2 --mem 512M --cpu max
run_suite "user[smp2,512M,max,hw_af=off,hw_dirty=off,tlbi_range=off]" test \
    "hw_af=off hw_dirty=off tlbi_range=off -- test" 240 --smp 2 --mem 512M --cpu max

# The glibc test programs (user/c/tests/, built into build/ctests/ and
# added to the initrd for their boot), whose expected values are Linux
# 6.12's (make test-linux runs them there).
for prog in build/ctests/*; do
    name=$(basename "$prog")
    run_suite "glibc:$name[smp2,512M]" glibc "-- run /bin/$name" 120 --smp 2 --mem 512M --add "$prog"
done
# Where the CPU sets the access flag, fault-around's pages start old;
# where it sets the dirty state, a clean page's first write takes no fault.
for off in "" "hw_af=off"; do
    run_suite "glibc:accessed[smp2,512M,max${off:+,$off}]" glibc "$off -- run /bin/accessed" 120 \
        --smp 2 --mem 512M --cpu max --add build/ctests/accessed
done
for off in "" "hw_dirty=off"; do
    run_suite "glibc:dirty[smp2,512M,max${off:+,$off}]" glibc "$off -- run /bin/dirty" 120 \
        --smp 2 --mem 512M --cpu max --add build/ctests/dirty
done

# A static glibc program (user/c/memfd-demo.c), as ET_EXEC and as
# static-pie, prints the same on faultline as on Linux (qemu-aarch64 user
# mode runs it against the host's Linux).
for prog in memfd-demo memfd-demo-pie; do
    ./qemu-run.sh --add "build/$prog" --run "/bin/$prog" --timeout 60 >"$logdir/$prog" 2>&1
    rc=$?
    qemu-aarch64 "build/$prog" >"$logdir/$prog.linux" 2>&1
    sed -n '/^  initramfs:/,/init exited/p' "$logdir/$prog" | sed '1d;$d' | grep -v '^syscall: ' | tr -d '\r' >"$logdir/$prog.out"
    if [ "$rc" = 0 ] && [ -s "$logdir/$prog.linux" ] && cmp -s "$logdir/$prog.out" "$logdir/$prog.linux"; then
        pass "glibc: static $prog prints the same as on Linux"
    else
        fail "glibc: static $prog prints the same as on Linux" "exit $rc"
        diff "$logdir/$prog.out" "$logdir/$prog.linux" | head -20
    fi
done

# Debian's busybox: its applets and shell features (user/busybox/
# applets.sh, whose expected output is Linux 6.12's: make test-linux runs
# it there), then a session typed at make shell's prompt.
run_suite "busybox[smp2,512M]" busybox "-- run /bin/busybox sh /bin/applets.sh" 240 \
    --smp 2 --mem 512M --add build/busybox --add user/busybox/applets.sh
python3 scripts/shell-session.py >"$logdir/shell" 2>&1
shell_rc=$?
ok=$(grep -c "^shell .* \.\.\. ok" "$logdir/shell")
bad=$(grep -c "^shell .* \.\.\. FAILED" "$logdir/shell")
passed=$((passed + ok))
failed=$((failed + bad))
echo "shell session: $ok passed, $bad failed (exit $shell_rc)"
if [ "$shell_rc" != 0 ] || [ "$ok" = 0 ]; then
    fail "shell session: clean run" "exit $shell_rc"; tail -40 "$logdir/shell"
fi

# Debian's dynamically linked bash, coreutils, python3 and gcc running
# user/debian/smoke.sh, whose output must be Linux 6.12's, booted from the
# same packages (scripts/test-debian.sh; skipped, saying so, when the
# packages cannot be downloaded).
checks_from scripts/test-debian.sh
fi

# --- 5. robustness -----------------------------------------------------------
if stage robustness; then
# The fuzzer, fixed seeds, over 100,000 calls in all: no panic, no hang, no
# child outliving SIGKILL or left behind, free memory back (make fuzz runs
# ten seeds of 100,000). Seed 3 on a small machine, where memory runs out.
while read -r line; do
    case "$line" in
        *" ... ok") pass "${line% ... ok}" ;;
        *" ... FAILED"*) fail "${line%% ... FAILED*}" "${line#* ... FAILED}" ;;
        *) echo "$line" ;;
    esac
done < <(scripts/fuzz.sh --seeds "1 2" --count 50000; scripts/fuzz.sh --seeds 3 --count 20000 --smp 2 --mem 128M)
# The stress, 5 s a setting, then memory run out on a small and a larger
# machine (512M is in the glibc runs above; make stress adds 4G), then
# stress-ng's quicker memory stressors, 8 bogo ops each (make
# stress runs all eleven, 10 s each; madvise and tmpfs need 30 s or more).
while read -r line; do
    case "$line" in
        *" ... ok") pass "${line% ... ok}" ;;
        *" ... ok: "*) pass "${line%% ... ok: *}" ;;
        *" ... FAILED"*) fail "${line%% ... FAILED*}" "${line#* ... FAILED}" ;;
        *) echo "$line" ;;
    esac
done < <(scripts/stress.sh --seconds 5 --mems "128M 1G" --ng-ops 8 \
    --stressors "vm mmap mremap mmapfork mmapmany brk stack memfd fault")
fi

# --- 6. boot, shutdown, crash reports --------------------------------------
if stage boot; then
# expect NAME WANT-EXIT LOG REGEX...: exit status and every regex must match.
expect() {
    local name=$1 want=$2 log=$3; shift 3
    local rc
    rc=$(cat "$log.rc")
    if [ "$rc" != "$want" ]; then fail "$name" "exit $rc, want $want"; tail -30 "$log"; return; fi
    for re in "$@"; do
        if ! grep -Eq -- "$re" "$log"; then fail "$name" "no match for /$re/"; tail -30 "$log"; return; fi
    done
    pass "$name"
}
boot() { # LOG QEMU-ARGS...
    local log=$1; shift
    ./qemu-run.sh "$@" --timeout 60 >"$log" 2>&1
    echo $? >"$log.rc"
}
boot "$logdir/run" --smp 2 --mem 128M --append "-- run /bin/tests/time"
expect "boot: init runs a program and powers off cleanly" 0 "$logdir/run" \
    '^faultline ' 'RAM 128 MiB' 'CPUs online: 2' 'page tables: 4K granule, 48-bit VA, 4 levels' \
    '^time: [0-9]+ passed, 0 failed' 'init exited with status 0, powering off'
boot "$logdir/big" --smp 4 --mem 1G --append "-- run /bin/tests/time"
expect "boot: --smp 4 --mem 1G" 0 "$logdir/big" 'RAM 1024 MiB' 'CPUs online: 4'
boot "$logdir/gic3" --smp 8 --mem 4G --gic 3 --el2 --append "-- run /bin/tests/time"
expect "boot: --smp 8 --mem 4G GICv3 from EL2" 0 "$logdir/gic3" \
    'RAM 4096 MiB' 'CPUs online: 8' 'GICv3' 'entered at EL2' '[1-9][0-9]* x 1G \+'
thp=/sys/kernel/mm/transparent_hugepage
boot "$logdir/knobs" --append "transparent_hugepage_shmem=within_size thp_shmem=64K,128K:always;2M:never show=$thp/shmem_enabled,$thp/hugepages-64kB/shmem_enabled,$thp/hugepages-128kB/shmem_enabled,$thp/hugepages-2048kB/shmem_enabled,$thp/hugepages-16kB/shmem_enabled,/etc/motd -- run /bin/tests/time"
expect "boot: huge-page knobs from the command line, files from the initrd" 0 "$logdir/knobs" \
    '^always \[within_size\] advise never deny force' \
    '^==> .*hugepages-64kB/shmem_enabled <==' '^\[always\] inherit within_size advise never' \
    '^==> .*hugepages-2048kB/shmem_enabled <==' '^always inherit within_size advise \[never\]' \
    '^Welcome to faultline' 'initramfs: [0-9]+ entries unpacked, 0 skipped'
boot "$logdir/strace" --append "strace -- run /bin/tests/time"
expect "boot: strace logs each call by name, decoded as strace(1) prints it" 0 "$logdir/strace" \
    '^\[1\] mkdirat\(AT_FDCWD, "/tmp", 01777\) = 0' \
    '^\[[0-9]+\] mmap\(NULL, [0-9]+, PROT_READ\|PROT_WRITE, MAP_PRIVATE\|MAP_ANONYMOUS, -1, 0\) = 0x[0-9a-f]+' \
    '^\[[0-9]+\] execve\("/bin/tests/time", 0x[0-9a-f]+, 0x[0-9a-f]+\) = 0'
mm=/sys/kernel/mm
boot "$logdir/switches" --append "contpte=off vma_lock=off finish_fault=single show=$mm/contpte/enabled,$mm/vma_lock/enabled,$mm/finish_fault/multi_page -- run /bin/tests/time"
# The three files, in order, each followed by its value: all 0.
shown=$(grep -A1 '^==> /sys/kernel/mm/' "$logdir/switches" | grep -vx -- -- | tr -d '\r' | tr '\n' ' ')
if [ "$(cat "$logdir/switches.rc")" = 0 ] && [ "$shown" = "==> $mm/contpte/enabled <== 0 ==> $mm/vma_lock/enabled <== 0 ==> $mm/finish_fault/multi_page <== 0 " ]; then
    pass "boot: each switch's off word on the command line turns it off (switches.rs)"
else
    fail "boot: each switch's off word on the command line turns it off (switches.rs)" "$shown"
fi
boot "$logdir/bench" --smp 4 --mem 1G --icount --append "-- run /bin/bench/bench quick"
expect "bench: every benchmark runs; a 64K view of a 2M folio takes 1 fault, not 8, in Rust and in the seed's C" 0 "$logdir/bench" \
    '^result finish_fault size=65536 ns_per_iter=[0-9]+ faults_per_iter=8.00 ptes_per_fault=1 fault_ns=[0-9]+ multi_page=0' \
    '^result finish_fault size=65536 ns_per_iter=[0-9]+ faults_per_iter=1.00 ptes_per_fault=16 fault_ns=[0-9]+ multi_page=1' \
    '^result finish_fault size=32768 ns_per_iter=[0-9]+ faults_per_iter=1.00 ptes_per_fault=8 fault_ns=[0-9]+ multi_page=1' \
    '^result seed000 size=65536 ns_per_iter=[0-9]+ faults_per_iter=8.00 ptes_per_fault=1 rss_kb=2048 shmem_pmd_kb=2048 realigned=0 multi_page=0' \
    '^result seed000 size=65536 ns_per_iter=[0-9]+ faults_per_iter=1.00 ptes_per_fault=16 rss_kb=2048 shmem_pmd_kb=2048 realigned=0 multi_page=1' \
    '^result seed000 size=32768 ns_per_iter=[0-9]+ faults_per_iter=1.00 ptes_per_fault=8 rss_kb=2048 shmem_pmd_kb=2048 realigned=[01] multi_page=1' \
    '^result lat_pagefault .*faults_per_page=1.00 .*fault_around_bytes=4096' \
    '^result page_fault4 tasks=4 threads=0 ops_per_sec=[1-9]' \
    '^result getppid1 tasks=1 threads=1 ops_per_sec=[1-9]' '^result spin tasks=1 threads=1 ops_per_sec=[1-9]' \
    '^result clock_gettime calls=[0-9]+ vdso=1 vdso_ns_per_call=[0-9]+ syscall_ns_per_call=[0-9]+'
# That run as `make bench` shows it (scripts/benchtable.py): the tidy CSV
# has the seed's number as a plain number under its own metric, and the
# finish_fault table says the seed's target is met.
python3 scripts/benchtable.py "$logdir/bench" "$logdir/bench.csv" faultline >"$logdir/bench.tables" 2>&1
if grep -q '^faultline,finish_fault,size=65536 multi_page=1 [^,]*,faults_per_iter,1.00$' "$logdir/bench.csv" &&
    grep -A6 '^finish_fault$' "$logdir/bench.tables" | grep -q 'faults_per_iter == 1 (seed 000).*  yes'; then
    pass "bench: the tidy CSV and the table per benchmark, with the seed's target met"
else
    fail "bench: the tidy CSV and the table per benchmark, with the seed's target met" "see $logdir/bench.tables"
fi
# The scaling row of `make bench` (scripts/bench-lib.sh), from canned runs
# (with the serial console's \r): per CPU model, the medians of each
# benchmark's 1- and 2-thread runs and their ratio.
canned_scaling_boot() { # CPU: 5 rounds; 2 threads give 1.9x without the PMU, 1.5x with
    local x2=190 && [ "$1" = cortex-a72 ] && x2=150
    for r in 3 1 5 2 4; do
        printf 'result %s tasks=1 threads=1 ops_per_sec=%d\r\n' page_fault4 $((r * 100)) spin 1000 getppid1 $((r * 10))
        printf 'result %s tasks=2 threads=1 ops_per_sec=%d\r\n' page_fault4 $((r * x2)) spin 2000 getppid1 $((r * 5))
    done
}
: >"$logdir/scaling"
(. scripts/bench-lib.sh && scaling_stages "$logdir/scaling" canned_scaling_boot >/dev/null)
if grep -q '^result mttcg_scaling pmu=0 threads1_ops=300 threads2_ops=570 ratio=1.90 spin_ratio=2.00 getppid1_ratio=0.50$' "$logdir/scaling" &&
    grep -q '^result mttcg_scaling pmu=1 threads1_ops=300 threads2_ops=450 ratio=1.50 spin_ratio=2.00 getppid1_ratio=0.50$' "$logdir/scaling"; then
    pass "bench: the scaling row is the medians of the runs and their ratio, per CPU model"
else
    fail "bench: the scaling row is the medians of the runs and their ratio, per CPU model"
    grep mttcg_scaling "$logdir/scaling"
fi
boot "$logdir/panic" --append panic=test
expect "crash: panic prints a symbolized backtrace, exits non-zero" 1 "$logdir/panic" \
    '^Kernel panic on CPU 0: .*kernel/src/main.rs' 'forced by the panic=test' \
    '^  #0 pc 0x[0-9a-f]{16} faultline::forced_panic at kernel/src/main.rs:[0-9]+' \
    'faultline::task::thread::thread_main at kernel/src/task/thread.rs'
boot "$logdir/console" --append panic=console
expect "crash: a panic while the console lock is held still prints" 1 "$logdir/console" \
    '^half a line, then ' '^Kernel panic on CPU 0: ' '^forced by panic=console, inside println!' '^---\[ end Kernel panic \]---'
boot "$logdir/fault" --append panic=fault
expect "crash: kernel data abort is decoded, backtrace crosses the exception" 1 "$logdir/fault" \
    'Unexpected kernel exception on CPU 0: ESR 0x96000004 \(DataAbortSameEl, Translation\(0\), read\)' \
    'FAR 0x0000000000000000' '^  x0  0x' 'sp_el0 0x' \
    'handle_el1_sync at kernel/src/arch/aarch64/trap.rs' \
    '\(inlined\) faultline::forced_fault at kernel/src/main.rs'

# make selftests' report (scripts/selftests-report.py), from canned logs:
# a program's verdict by exit status (4 is a skip), its KTAP subtests
# counted, and every subtest that passes on Linux and not on faultline
# named, also in a program that fails on both.
st=$logdir/selftests
mkdir -p "$st"
printf '# a comment\nmm/a\nmm/b -x 1\nmm/c\nmm/d\n' >"$st/list"
cat >"$st/linux.log" <<'LOG'
selftest-start mm/a
ok 1 first
ok 2 second
ok 3 third # SKIP no THP
selftest mm/a exit 0
selftest-start mm/b -x 1
ok 1 only
not ok 2 broken
selftest mm/b -x 1 exit 1
selftest-start mm/c
selftest mm/c exit 4
selftest-start mm/d
selftest mm/d exit 0
LOG
cat >"$st/faultline.log" <<'LOG'
selftest-start mm/a
ok 1 first
selftest mm/a exit 0
selftest-start mm/a
ok 1 first
not ok 2 second
selftest mm/a exit 1
selftest-start mm/b -x 1
not ok 1 only
ok 2 broken
selftest mm/b -x 1 exit 1
selftest-start mm/c
selftest mm/c exit 0
LOG
python3 scripts/selftests-report.py "$st/list" "$st/linux.log" "$st/faultline.log" >"$st/out" 2>&1
if grep -Eq '^selftest mm/a +linux=pass +2/2 +faultline=fail\(1\) +1/2$' "$st/out" &&
    grep -Eq '^selftest mm/b -x 1 +linux=fail\(1\) +1/2 +faultline=fail\(1\) +1/2$' "$st/out" &&
    grep -Eq '^selftest mm/c +linux=skip +faultline=pass +$' "$st/out" &&
    grep -Eq '^selftest mm/d +linux=pass +faultline=none +$' "$st/out" &&
    grep -q '^selftests: 0 pass on both, 2 on Linux 6.12 only, 1 on faultline only, 1 on neither$' "$st/out" &&
    grep -q '^  mm/a: second (fail)$' "$st/out" && grep -q '^  mm/b -x 1: only (fail)$' "$st/out" &&
    grep -q '^  mm/d: the program (none)$' "$st/out" && ! grep -q 'third' "$st/out"; then
    pass "selftests: the report compares programs and subtests with Linux 6.12's"
else
    fail "selftests: the report compares programs and subtests with Linux 6.12's"; cat "$st/out"
fi
if LINUX_SRC= scripts/selftests.sh >"$st/skip" 2>&1 && grep -q '^selftests: skipped: LINUX_SRC' "$st/skip" &&
    grep -q 'make selftests LINUX_SRC=' "$st/skip"; then
    pass "selftests: without LINUX_SRC, make selftests skips and says how to get it"
else
    fail "selftests: without LINUX_SRC, make selftests skips and says how to get it"; cat "$st/skip"
fi
fi

# --- 6b. the TLB model: known layouts' misses under QEMU 10 ------------------
if stage tlb; then
checks_from scripts/test-tlb.sh
fi

# --- 7. the book: names, paths, commands and numbers it quotes --------------
if stage docs; then
while read -r line; do
    case "$line" in
        *" ... ok") pass "${line% ... ok}" ;;
        *" ... FAILED") fail "${line% ... FAILED}" ;;
        *) echo "$line" ;;
    esac
done < <(python3 scripts/check-docs.py --boot 2>&1)
if python3 scripts/docs-numbers.py --check >"$logdir/numbers" 2>&1; then
    pass "docs: numbers_and_chart_are_docs_bench_csvs"
else
    fail "docs: numbers_and_chart_are_docs_bench_csvs"; cat "$logdir/numbers"
fi
fi

# --- 8. the labs: each lab's starting point builds and fails its grader,
# and this tree passes it (scripts/lab.py selfcheck) -----------------------
if stage labs; then
while read -r line; do
    case "$line" in
        "labs: "*" ... ok") pass "${line% ... ok}" ;;
        "labs: "*" ... FAILED"*) fail "${line%% ... FAILED*}" "${line#* ... FAILED}" ;;
        *) echo "$line" ;;
    esac
done < <(python3 scripts/lab.py selfcheck 2>&1)
fi

# --- 9. gdb ---------------------------------------------------------------
if stage gdb; then
while read -r line; do
    case "$line" in
        *" ... ok") pass "${line% ... ok}" ;;
        *" ... FAILED") fail "${line% ... FAILED}" ;;
        *) echo "$line" ;;
    esac
done < <(bash scripts/gdb-test.sh 2>&1)
fi

if [ ${#failures[@]} -gt 0 ]; then
    echo "failed:"; printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
