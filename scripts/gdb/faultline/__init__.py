"""gdb helpers for faultline: processes, VMAs, page tables, folios and
counters read out of a stopped kernel, and a breakpoint on one user
fault. `make gdb` loads them (scripts/gdb/faultline-gdb.py); `help
faultline` lists them. Linux's own are in scripts/gdb/linux/.
"""
import gdb

from . import breakfault, folio, pgtable, printers, step, tasks, vmas, vmstat  # noqa: F401 (commands)


class Faultline(gdb.Command):
    """faultline's gdb helpers (each has its own `help`):

fl-ps                    processes and threads, their CPU, state and mm
fl-vmas [pid]            the VMAs as /proc/PID/maps, with flags and VMA locks
fl-pt VA [pid]           the page-table walk of one address, each level decoded
fl-ptdump [pid] [S-E]    the page tables as /proc/PID/ptdump
fl-folio EXPR|pfn N      a folio: order, counts, flags, file and index, its PTEs
fl-vmstat                the counters of /proc/vmstat
fl-break-fault VA [pid]  stop at the next user fault on that page
fl-step [N]              step to the next faultline function called

[pid] defaults to the process the selected CPU (gdb thread) runs.
Pretty printers show Pte, PgProt, Folio, Vma, PhysAddr and Range<usize>
decoded, and usize/u64 values of 64K or more in hex."""

    def __init__(self):
        super().__init__("faultline", gdb.COMMAND_USER, prefix=True)


Faultline()
