"""A process's page tables, read through the linear map as the MMU walks
them from TTBR0_EL1 (Linux: scripts/gdb/linux/pgtable.py's `translate-pt`,
and `/sys/kernel/debug/page_tables`, here faultline's `/proc/PID/ptdump`).

    fl-pt VA [pid]            the walk of one address, every level decoded
    fl-ptdump [pid] [START-END]  runs of like entries, as /proc/PID/ptdump
"""
import gdb

from . import desc, kernel, tasks


def table(pa):
    """The 512 entries of the table at physical address `pa`."""
    return kernel.read_u64s(pa, desc.ENTRIES)


def walk(pgd, va):
    """[(level, index, entry's PA, descriptor)] from the pgd down to the
    leaf, or to the first entry that is not a table."""
    steps = []
    pa = pgd
    for level in range(4):
        i = desc.index(level, va)
        d = kernel.read_u64s(pa + 8 * i, 1)[0]
        steps.append((level, i, pa + 8 * i, d))
        if not desc.is_table(d, level):
            break
        pa = desc.out_addr(d)
    return steps


def leaves(pgd, start, end):
    """(va, level, descriptor) of every valid leaf meeting [start, end), in
    address order (the kernel's `pgtable::for_each_leaf`)."""
    def visit(pa, level, base):
        entries = table(pa)
        size = desc.level_size(level)
        first = max(start, base)
        last = min(end, base + size * desc.ENTRIES)
        if first >= last:
            return
        for i in range((first - base) // size, (last - 1 - base) // size + 1):
            d = entries[i]
            if not desc.is_valid(d):
                continue
            va = base + i * size
            if desc.is_table(d, level):
                yield from visit(desc.out_addr(d), level + 1, va)
            else:
                yield va, level, d
    yield from visit(pgd, 0, 0)


def user_pgd(mm):
    return int(mm["pgd"]["__0"])


class FlPt(gdb.Command):
    """Walk the page tables for one user address, level by level.

Each level's entry is shown with its table index and physical address
and decoded as the Arm ARM names the fields (valid; table, block or page;
output or next-table address; AP; UXN/PXN; AF; nG; SH; AttrIndx; the
contiguous bit; DBM and faultline's software dirty bit). An entry with the
contiguous bit is followed by the other 15 entries of its 64K block and a
check of the rules QEMU does not enforce.

Usage: fl-pt VA [pid]     (pid: default, the process the selected CPU runs)"""

    def __init__(self):
        super().__init__("fl-pt", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-pt")
        args = gdb.string_to_argv(arg)
        if not 1 <= len(args) <= 2:
            raise gdb.GdbError("usage: fl-pt VA [pid]")
        va = kernel.parse_int(args[0])
        pid, proc, mm = tasks.resolve(args[1] if len(args) > 1 else None)
        pgd = user_pgd(mm)
        print(f"VA {va:#018x} in pid {pid} ({tasks.name_of(proc)}): pgd at PA {pgd:#x}, ASID {int(mm['asid'])}")
        steps = walk(pgd, va)
        for level, i, entry_pa, d in steps:
            print(f"  L{level} {desc.LEVEL_NAMES[level]} [{i:3}] @{entry_pa:#x}: {desc.describe(d, level)}")
        level, i, entry_pa, d = steps[-1]
        if not desc.is_valid(d):
            print(f"  not mapped: a fault here goes to the fault handler (translation fault, level {level})")
            return
        size = desc.level_size(level)
        pa = desc.out_addr(d) + (va & (size - 1))
        print(f"  => PA {pa:#x} ({desc.kind(d, level)} of {size >> 10}K)")
        if level == 3 and d & desc.CONT:
            first = i & ~(desc.CONT_PTES - 1)
            base_va = va & ~((desc.CONT_PTES << 12) - 1)
            entries = kernel.read_u64s(entry_pa - 8 * (i - first), desc.CONT_PTES)
            print(f"  contiguous block {base_va:#x}-{base_va + (desc.CONT_PTES << 12):#x}, "
                  f"L3 [{first}..{first + desc.CONT_PTES - 1}]:")
            for n, e in enumerate(entries):
                # What may differ between a block's entries; the rest is above.
                print(f"    [{first + n:3}] {e:#018x} {desc.kind(e, 3)} OA={desc.out_addr(e):#x} "
                      f"Contiguous={int(bool(e & desc.CONT))} AF={int(bool(e & desc.AF))} "
                      f"dirty={int(desc.is_dirty(e))}")
            problems = desc.cont_block_problems(entries, base_va)
            print("  contiguous-bit rules: " + ("; ".join(problems) if problems else
                                                 "ok (aligned, consecutive, same attributes)"))


class FlPtdump(gdb.Command):
    """Dump a process's page tables as /proc/PID/ptdump shows them.

One line per run of leaf entries at one level with the same attributes,
mapping consecutive physical addresses: `start-end level pa=... perms
user [cont] [young] [dirty]`. The same walk and the same grouping as the
kernel's `mm::ptdump::ptdump`, read through gdb: it works on a stopped
kernel, from any CPU, for any process.

Usage: fl-ptdump [pid] [START-END]"""

    def __init__(self):
        super().__init__("fl-ptdump", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-ptdump")
        pid_arg, start, end = None, 0, kernel.info("user_top")
        for a in gdb.string_to_argv(arg):
            if "-" in a:
                lo, hi = a.split("-", 1)
                start, end = kernel.parse_int(lo), kernel.parse_int(hi)
            else:
                pid_arg = a
        _, _, mm = tasks.resolve(pid_arg)
        for line in desc.ptdump_lines(leaves(user_pgd(mm), start, end)):
            print(line)


FlPt()
FlPtdump()
