"""The counters of `/proc/vmstat` (Linux: `mm/vmstat.c`'s `vmstat_show`),
summed over the per-CPU slots as `vmstat::Counter::get` sums them, in the
kernel's order (`vmstat::VMSTAT`, then the per-order folio counters).

    fl-vmstat
"""
import gdb

from . import kernel, rust


def counter(c):
    """A `Counter`'s name and value: its per-CPU slots summed, wrapping."""
    slots = c["slots"]
    total = sum(rust.atomic(slots[i]["__0"]) for i in range(slots.type.range()[1] + 1))
    return rust.str_(c["name"]), total % (1 << 64)


def free_pages():
    """Free frames: the buddy allocator's free blocks, plus the frames
    waiting in the per-CPU lists (`frame::free_stats` drains those first)."""
    buddy = rust.option(rust.spin(kernel.static("faultline::mm::frame::BUDDY")))
    areas = buddy["free_area"]
    free = sum(int(areas[o]["nr_free"]) << o for o in range(areas.type.range()[1] + 1))
    return free + rust.atomic(kernel.static("faultline::mm::pcp::LISTED"))


def lines():
    out = [f"nr_free_pages {free_pages()}"]
    table = kernel.static("faultline::mm::vmstat::VMSTAT")
    for i in range(table.type.range()[1] + 1):
        out.append("%s %d" % counter(table[i].dereference()))
    for name in ("FOLIO_ALLOC", "FOLIO_FALLBACK"):
        per_order = kernel.static("faultline::mm::vmstat::" + name)
        for i in range(per_order.type.range()[1] + 1):
            out.append("%s %d" % counter(per_order[i]))
    return out


class FlVmstat(gdb.Command):
    """Print the counters of /proc/vmstat, read from the kernel's memory:
faults (pgfault), per-VMA lock outcomes (vma_lock_success, _abort,
_retry, _miss), contiguous-bit folds, folio allocations by order...

Usage: fl-vmstat"""

    def __init__(self):
        super().__init__("fl-vmstat", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-vmstat")
        for line in lines():
            print(line)


FlVmstat()
