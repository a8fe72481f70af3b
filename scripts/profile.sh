#!/usr/bin/env bash
# Instruction-level profile of faultline under QEMU: where do the guest
# instructions go between two occurrences of a syscall?
#
#   scripts/profile.sh [--iter-syscall NR] [--every K] [--span NR] [--user BIN] [--top N] [--out DIR]
#                      [qemu-run.sh options ...]
#
# Boots through ./qemu-run.sh (all its options pass through: --smp, --mem,
# --append, --run, ...) with QEMU logging every executed instruction
# (`-singlestep -d exec,nochain`, one instruction per TB, into a FIFO, never
# to disk) and analyses the stream on the fly:
#   * the measured window runs from the first user `svc` of syscall NR
#     (--iter-syscall, default 233 = madvise) to the last one; each stretch
#     between two of them is one "iteration" (with --every K, only every
#     K-th occurrence, from the first, is a boundary), and every count is printed
#     per iteration (what precedes the first and follows the last is boot
#     and setup, and is dropped);
#   * --span NR (default 113 = clock_gettime): instructions from one entry
#     of syscall NR to the next, pairwise (1st-2nd, 3rd-4th, ...): exactly
#     the benchmarks' timed window, t0 = now_ns() to t1 = now_ns();
#   * every kernel entry from EL0 is classed: `sys NAME` (the syscall number
#     is read from the `mov x8, #N` before the `svc` in --user BIN, default
#     the program named by `-- run PROG` in --append/--run), `fault` (any
#     other EL0 sync exception: the page faults) or `irq`; user instructions
#     are class `user`;
#   * a shadow call stack (bl/blr push, ret pops, vector entry/eret for
#     nested exceptions) plus addr2line's inline frames gives each kernel
#     instruction a full stack, so functions get exclusive (self) and
#     inclusive counts, per class and overall, and each instruction also
#     lands in one "bucket" (the innermost frame matching a bucket regex,
#     see BUCKETS below: locks, TLB, heap, folio refcounts, contpte, ...).
# One instruction is one virtual ns under --icount, so the per-iteration
# totals are comparable with the benchmarks' ns figures.
#
# Examples (smp 1 keeps the stream to one CPU; use few iterations: QEMU
# logs ~600K instructions/s this way, boot is ~15M):
#   scripts/profile.sh --smp 1 --mem 1G --icount \
#       --append "thp_shmem=2M:always -- run /bin/bench/finish_fault size=65536 iters=20"
#   scripts/profile.sh --iter-syscall 113 --every 2 --smp 1 --mem 1G --icount \
#       --append "-- run /bin/bench/lat_pagefault pages=512 iters=3"
# (finish_fault: the bench driver sets hugepages-2048kB/shmem_enabled to
# `always`, which `thp_shmem=2M:always` does at boot; fault-around is
# `fault_around_bytes=65536` by default, 4096 turns it off via /sys.)
# Output: a report on stdout, and with --out DIR also DIR/report.txt and
# DIR/stacks.txt (folded stacks "class;f1;f2;... count", summed over all
# the iterations, flamegraph.pl-compatible). Run with --smp 1: the stack
# tracking follows one CPU. Needs python3 and aarch64 binutils
# (aarch64-linux-gnu-objdump/addr2line/nm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

iter_nr=233 every=1 span_nr=113 user_bin="" top=30 out="" pass=() run_prog=""
while [ $# -gt 0 ]; do
    case "$1" in
        --iter-syscall) iter_nr=$2; shift 2 ;;
        --every) every=$2; shift 2 ;;
        --span) span_nr=$2; shift 2 ;;
        --user) user_bin=$2; shift 2 ;;
        --top) top=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
        --append|--run)
            [ "$1" = --run ] && run_prog=${2%% *}
            [ "$1" = --append ] && case "$2" in *"-- run "*) p=${2#*-- run }; run_prog=${p%% *} ;; esac
            pass+=("$1" "$2"); shift 2 ;;
        *) pass+=("$1"); shift ;;
    esac
done
if [ -z "$user_bin" ] && [ -n "$run_prog" ]; then
    user_bin="build/rootfs-user${run_prog}"
fi
kernel=target/aarch64-unknown-none-softfloat/release/faultline
[ -f "$kernel" ] || { echo "profile.sh: no kernel, run 'make build'" >&2; exit 2; }
for t in aarch64-linux-gnu-objdump aarch64-linux-gnu-addr2line aarch64-linux-gnu-nm python3; do
    command -v "$t" >/dev/null || { echo "profile.sh: needs $t" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/trace"
# qemu-run.sh has no pass-through for QEMU flags: put a wrapper first in
# PATH that adds the tracing ones.
real_qemu=$(command -v qemu-system-aarch64)
cat > "$tmp/qemu-system-aarch64" <<EOF
#!/bin/sh
exec "$real_qemu" "\$@" -singlestep -d exec,nochain -D "$tmp/trace"
EOF
chmod +x "$tmp/qemu-system-aarch64"

python3 - "$tmp/trace" "$kernel" "$user_bin" "$iter_nr" "$every" "$span_nr" "$top" "$out" > "$tmp/report" <<'PY' &
import collections, re, subprocess, sys

fifo, kernel, user_bin, iter_nr, every, span_nr, top, out = sys.argv[1:]
iter_nr, every, span_nr, top = int(iter_nr), int(every), int(span_nr), int(top)
KBASE = 0xffff000000000000

# Syscall names for the classes (arm64 generic table, the ones that matter).
SYSNAMES = {56: 'openat', 57: 'close', 63: 'read', 64: 'write', 67: 'pread64',
            68: 'pwrite64', 94: 'exit_group', 93: 'exit', 113: 'clock_gettime',
            165: 'getrusage', 214: 'brk', 215: 'munmap', 222: 'mmap',
            226: 'mprotect', 233: 'madvise', 220: 'clone', 221: 'execve',
            260: 'wait4', 98: 'futex', 124: 'sched_yield', 101: 'nanosleep',
            47: 'fallocate', 46: 'ftruncate', 279: 'memfd_create'}

def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

# --- kernel: instruction kinds and symbols -------------------------------
KIND = {}   # pc -> 'c' (bl/blr), 'r' (ret), 'e' (eret)
insn_re = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)')
for line in sh('aarch64-linux-gnu-objdump', '-d', '--no-show-raw-insn', kernel).splitlines():
    m = insn_re.match(line)
    if not m:
        continue
    op = m.group(2)
    if op in ('bl', 'blr'):
        KIND[int(m.group(1), 16)] = 'c'
    elif op in ('ret', 'retaa', 'retab'):
        KIND[int(m.group(1), 16)] = 'r'
    elif op == 'eret':
        KIND[int(m.group(1), 16)] = 'e'

def nm_table(path):
    syms = []
    for line in sh('aarch64-linux-gnu-nm', '-n', '-C', path).splitlines():
        parts = line.split(' ', 2)
        if len(parts) == 3 and parts[1] in 'tTwW':
            syms.append((int(parts[0], 16), re.sub(r'::h[0-9a-f]{16}$', '', parts[2])))
    return syms

import bisect
def make_lookup(syms):
    addrs = [a for a, _ in syms]
    def lookup(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        return syms[i][1] if i >= 0 else '??'
    return lookup
ksyms = nm_table(kernel)
ksym = make_lookup(ksyms)
VEC = next(a for a, n in ksyms if n == 'exception_vectors')

# --- user binary: svc -> syscall number ---------------------------------
SVC = {}
usym = lambda pc: 'user'
if user_bin:
    try:
        lines = sh('aarch64-linux-gnu-objdump', '-d', '--no-show-raw-insn', user_bin).splitlines()
        usym = make_lookup(nm_table(user_bin))
    except Exception as e:
        print(f'profile: cannot read {user_bin}: {e}', file=sys.stderr)
        lines = []
    recent = []
    for line in lines:
        m = re.match(r'^\s*([0-9a-f]+):\s+(.*)$', line)
        if not m:
            recent = []
            continue
        text = m.group(2)
        if text.startswith('svc'):
            nr = None
            for t in reversed(recent[-8:]):
                mm = re.match(r'mov\s+[wx]8, #(0x[0-9a-f]+|\d+)', t)
                if mm:
                    nr = int(mm.group(1), 0)
                    break
            SVC[int(m.group(1), 16)] = nr
        recent.append(text)

# --- the stream ----------------------------------------------------------
buf = collections.Counter()      # (class, stack tuple, pc) -> instructions
ebuf = collections.Counter()     # class -> entries
lbuf = collections.Counter()     # (class, user pc, instructions) -> entries
ltotal = collections.Counter()
ecount, entry_upc = 0, 0
total = collections.Counter()
etotal = collections.Counter()
iters = -1                       # boundaries seen - 1 = whole iterations
occ = 0                          # occurrences of syscall iter_nr
sp_occ, sp_start = 0, 0          # --span: pairs of syscall span_nr
spans = collections.Counter()    # span length -> how often
stack = ()                       # call-site pcs; negative: exception entry
cls = 'boot'
prev_pc, prev_kernel = 0, True
lines_seen = 0
mismatch = 0
other_cpu = 0

with open(fifo, 'rb', buffering=1 << 20) as f:
    for line in f:
        i = line.find(b'/')
        if i < 0:
            continue
        pc = int(line[i + 1:i + 17], 16)
        lines_seen += 1
        if line[6] != 48:   # 'Trace N:' with N != 0: another vCPU
            other_cpu += 1
        if pc >= KBASE:
            if not prev_kernel:
                # EL0 -> EL1: a new kernel entry.
                off = pc - VEC
                if off == 0x400:
                    if prev_pc in SVC:
                        nr = SVC[prev_pc]
                        cls = 'sys ' + SYSNAMES.get(nr, str(nr))
                        if nr == span_nr:
                            sp_occ += 1
                            if sp_occ % 2:
                                sp_start = lines_seen
                            else:
                                spans[lines_seen - sp_start] += 1
                        if nr == iter_nr:
                            occ += 1
                        if nr == iter_nr and (occ - 1) % every == 0:
                            if iters >= 0:
                                total.update(buf)
                                etotal.update(ebuf)
                                ltotal.update(lbuf)
                            buf.clear(); ebuf.clear(); lbuf.clear()
                            iters += 1
                    elif user_bin:
                        cls = 'fault in ' + usym(prev_pc)
                    else:
                        cls = 'el0 sync'
                elif off == 0x480:
                    cls = 'irq'
                else:
                    cls = 'el0 other'
                ebuf[cls] += 1
                stack = ()
                ecount, entry_upc = 0, prev_pc
            else:
                k = KIND.get(prev_pc)
                if k == 'c':
                    stack = stack + (prev_pc,)
                elif k == 'r':
                    if stack and stack[-1] + 4 == pc:
                        stack = stack[:-1]
                    else:
                        # A switch to another task's stack, or an unbalanced
                        # return: find the frame if we can, else start over.
                        for j in range(len(stack) - 1, -1, -1):
                            if abs(stack[j]) + 4 == pc or -stack[j] == pc:
                                stack = stack[:j]
                                break
                        else:
                            stack = ()
                            mismatch += 1
                elif k == 'e':
                    for j in range(len(stack) - 1, -1, -1):
                        if stack[j] < 0:
                            stack = stack[:j]
                            break
                    else:
                        stack = ()
                off = pc - VEC
                if 0 <= off < 0x800 and off % 0x80 == 0 and k != 'c':
                    # A nested exception (e.g. an IRQ in the kernel).
                    stack = stack + (-prev_pc,)
            buf[(cls, stack, pc)] += 1
            ecount += 1
            prev_kernel = True
        else:
            if prev_kernel and ecount:
                lbuf[(cls, entry_upc, ecount)] += 1
                ecount = 0
            buf[('user', (), pc)] += 1
            prev_kernel = False
        prev_pc = pc

n = max(iters, 0)
if n == 0:
    print(f'profile: syscall {iter_nr} seen {iters + 1} times: no whole iteration '
          f'({lines_seen} instructions traced)')
    sys.exit(0)

# --- symbolise: inline frames per distinct pc ----------------------------
pcs = set()
for (c, st, pc) in total:
    if pc >= KBASE:
        pcs.add(pc)
        pcs.update(abs(s) for s in st)
pcs = sorted(pcs)
INL = {}
if pcs:
    res = subprocess.run(['aarch64-linux-gnu-addr2line', '-a', '-f', '-i', '-C', '-e', kernel],
                         input=''.join(f'{p:#x}\n' for p in pcs), capture_output=True, text=True).stdout
    cur, frames = None, []
    ls = res.splitlines()
    j = 0
    while j < len(ls):
        l = ls[j]
        if l.startswith('0x') and j + 1 < len(ls) and not ls[j + 1].startswith('0x'):
            if cur is not None:
                INL[cur] = frames
            cur, frames = int(l, 16), []
            j += 1
            continue
        if j + 1 < len(ls):
            frames.append((re.sub(r'::h[0-9a-f]{16}$', '', l), ls[j + 1]))
        j += 2
    if cur is not None:
        INL[cur] = frames

def short(name):
    name = re.sub(r'<impl [^>]*>', 'impl', name)
    name = name.replace('faultline::', '').replace('alloc::', 'alloc::')
    return name if len(name) < 90 else name[:87] + '...'

def chain(pc):
    """Function names, innermost first, for a pc (inline frames + symbol)."""
    fr = [short(f) for f, _ in INL.get(pc, []) if f != '??']
    if not fr:
        fr = [short(ksym(pc))]
    return fr

def full_stack(st, pc):
    """Outermost first."""
    names = []
    for s in st:
        if s < 0:
            names.append('<exception>')
            continue
        names.extend(reversed(chain(s)))
    names.extend(reversed(chain(pc)))
    return names

# Buckets: the innermost frame matching a regex wins.
BUCKETS = [
    ('spinlock/irqsave', r'sync::spinlock|spin::mutex|local_irq|spin::relax'),
    ('mutex (mmap_lock)', r'sync::mutex|WaitQueue|wait_until|wake_all'),
    ('TLB flush/barriers', r'flush_tlb|publish_table_writes|mmu::'),
    ('heap alloc/free', r'__rust_alloc|__rust_dealloc|__rust_realloc|heap::|RawVec|raw_vec|alloc::alloc|GlobalAlloc|linked_list|talc|buddy_system_allocator|Heap'),
    ('folio ref/mapcount', r'folio::'),
    ('contpte/set_ptes', r'contpte::|set_pte_range'),
    ('page-table walk', r'pgtable::'),
    ('page-cache lookup', r'filemap::|folio_index|fault_folio|file_folio'),
    ('vma lookup', r'vma_tree::|VmaTree'),
    ('vmstat/rusage counters', r'vmstat|count_minor_fault|rusage'),
    ('zap_range', r'zap_range|flush_user_range'),
    ('fault logic', r'mm::fault::|fault_range::'),
    ('madvise/mmap logic', r'mm::mmap::'),
    ('clock', r'clock|timer|time::'),
    ('signals/exit_to_user', r'exit_to_user|signal::'),
    ('current task/mm', r'current_mm|current|percpu|cpu_id'),
    ('syscall dispatch', r'syscall::'),
    ('trap entry/exit (asm+rust)', r'exception_vectors|ret_from_exception|handle_el0|handle_el1|trap::'),
]
BRE = [(b, re.compile(r)) for b, r in BUCKETS]
def bucket(names):
    for nm_ in reversed(names):
        for b, r in BRE:
            if r.search(nm_):
                return b
    return 'other'

cls_tot = collections.Counter()
excl = collections.defaultdict(collections.Counter)   # class -> fn -> n
incl = collections.defaultdict(collections.Counter)
bk = collections.defaultdict(collections.Counter)
sym_excl = collections.Counter()
all_excl = collections.Counter()
folded = collections.Counter()
for (c, st, pc), v in total.items():
    cls_tot[c] += v
    if pc < KBASE:
        name = 'user:' + usym(pc)
        excl[c][name] += v; incl[c][name] += v; all_excl[name] += v
        sym_excl[name] += v; bk[c]['user code'] += v
        folded[f'user;{name}'] += v
        continue
    names = full_stack(st, pc)
    excl[c][names[-1]] += v
    all_excl[names[-1]] += v
    sym_excl[short(ksym(pc))] += v
    for nm_ in set(names):
        incl[c][nm_] += v
    bk[c][bucket(names)] += v
    folded[c + ';' + ';'.join(n_.replace(';', ',').replace(' ', '_') for n_ in names)] += v

def per(v):
    return f'{v / n:9.1f}'

o = []
p = o.append
allt = sum(cls_tot.values())
p(f'iterations: {n} (between {n + 1} boundaries: every {every}. syscall {iter_nr}); traced {lines_seen} instructions in all;'
  f' unmatched returns {mismatch}')
if other_cpu:
    p(f'WARNING: {other_cpu} instructions ran on CPUs other than 0; the stack tracking assumes'
      ' one CPU: use --smp 1')
p(f'per iteration: {allt / n:.1f} instructions')
if spans:
    sp = sum(k * v for k, v in spans.items()) / sum(spans.values())
    p(f'span from entry of syscall {span_nr} to the next (pairs 1-2, 3-4, ...; the benchmarks\' timed'
      f' window when NR is clock_gettime): mean {sp:.1f}; lengths: '
      + ', '.join(f'{k}x{v}' for k, v in spans.most_common(8)))
p('')
p('== per class: entries and instructions per iteration, per entry ==')
for c, v in cls_tot.most_common():
    e = etotal.get(c, 0)
    p(f'  {c:24s} entries/iter {e / n:6.2f}  instr/iter {per(v)}' +
      (f'  instr/entry {v / e:8.1f}' if e else ''))
for c, v in cls_tot.most_common():
    if c == 'user':
        continue
    e = etotal.get(c, 0) or n
    p('')
    p(f'== class "{c}": {v / e:.1f} instructions per entry ({e / n:.2f} entries/iteration) ==')
    lens = [(k, v_) for k, v_ in ltotal.items() if k[0] == c]
    lens.sort(key=lambda kv: -kv[1])
    p('  entry sizes (instructions from vector to eret; user pc; entries/iteration):')
    for (c_, upc, ln), cnt in lens[:6]:
        p(f'    {ln:8d}  from {upc:#x} {usym(upc) if upc < KBASE else ""}  {cnt / n:.2f}/iter')
    p('  buckets (innermost matching frame), per entry:')
    for b, bv in bk[c].most_common():
        p(f'    {b:30s} {bv / e:8.1f}  {100 * bv / v:5.1f}%')
    p('  inclusive, per entry (top):')
    for f_, fv in incl[c].most_common(top):
        p(f'    {fv / e:8.1f}  {f_}')
    p('  self, per entry (top):')
    for f_, fv in excl[c].most_common(top):
        p(f'    {fv / e:8.1f}  {f_}')
p('')
p(f'== top {top} functions overall (self, inline-aware), per iteration ==')
for f_, fv in all_excl.most_common(top):
    p(f'  {per(fv)}  {100 * fv / allt:5.1f}%  {f_}')
p('')
p(f'== top {top} symbols overall (self, by ELF symbol: inlined code counts in its caller) ==')
for f_, fv in sym_excl.most_common(top):
    p(f'  {per(fv)}  {100 * fv / allt:5.1f}%  {f_}')
text = '\n'.join(o)
print(text)
if out:
    import os
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, 'report.txt'), 'w').write(text + '\n')
    with open(os.path.join(out, 'stacks.txt'), 'w') as fo:
        for k, v in folded.most_common():
            fo.write(f'{k} {v}\n')
PY
analyser=$!

status=0
PATH="$tmp:$PATH" ./qemu-run.sh "${pass[@]}" > "$tmp/console" 2>&1 || status=$?
wait "$analyser" || { echo "profile.sh: analyser failed" >&2; status=1; }
grep -E '^result |panic|error' "$tmp/console" || true
cat "$tmp/report"
exit "$status"
