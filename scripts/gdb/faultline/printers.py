"""Pretty printers, so `info locals`, `print` and backtraces on the fault
path read as a kernel engineer reads them: a `Pte` or `PgProt` decoded
(a table descriptor as a table), a `Folio` with its frame, order, counts
and flags, a `Vma` with its flags and lock, an `Esr` as the kernel prints
it, an atomic as its value, a whole page table as a summary, physical
addresses and `Range<usize>`s in hex, and `usize` / `u64` values in hex once they are
64K or more (addresses, sizes, raw descriptors), in decimal below
(counts, indices, orders).
"""
import struct

import gdb

from . import desc, esr, folio, kernel, rust

HEX_FROM = 0x10000


def number(n):
    return f"{n:#x}" if n >= HEX_FROM else str(n)


def prot_text(bits):
    """The attributes of a descriptor or `PgProt`, only those set."""
    ap = (bits >> 6) & 3
    attr = (bits >> 2) & 7
    parts = [f"AttrIndx {attr} {desc.ATTRS.get(attr, '?')}", f"AP {ap:02b} {desc.AP[ap]}",
             f"SH {desc.SH[(bits >> 8) & 3]}"]
    parts += [name for name, bit in (("AF", desc.AF), ("nG", desc.NG), ("DBM", desc.DBM),
                                     ("Contiguous", desc.CONT), ("PXN", desc.PXN),
                                     ("UXN", desc.UXN), ("dirty", desc.SW_DIRTY)) if bits & bit]
    return ", ".join(parts)


class PtePrinter:
    def __init__(self, value):
        self.bits = int(value["__0"]) & (1 << 64) - 1

    def to_string(self):
        d = self.bits
        if not desc.is_valid(d):
            return f"Pte({d:#x}: {'none' if d == 0 else 'invalid'})"
        # Type bit set: a table at levels 0-2, a page at level 3, and the
        # value alone does not say which. A table has no attributes (bits
        # 11:2 and 58:50 clear), while every page faultline makes has its
        # memory type and shareability there: decode it as what it is.
        if d & desc.TYPE and not d & (0x3FF << 2 | 0x1FF << 50):
            return (f"Pte({d:#x}: table, next level at PA {desc.out_addr(d):#x}"
                    f"{', PXNTable' if d >> 59 & 1 else ''}{', UXNTable' if d >> 60 & 1 else ''})")
        kind = "page" if d & desc.TYPE else "block"
        return f"Pte({d:#x}: {kind}, OA {desc.out_addr(d):#x}, {prot_text(d)})"


class PgProtPrinter:
    def __init__(self, value):
        self.bits = int(value["__0"]) & (1 << 64) - 1

    def to_string(self):
        return f"PgProt({self.bits:#x}: {prot_text(self.bits)})"


class FolioPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        pfn = folio.pfn_of(self.value)
        m = self.value["head"].dereference()
        order = rust.atomic(m["order"])
        size = 4 << order
        flags = kernel.flags_text(rust.atomic(m["flags"]), "folio_flags").replace(" ", "|")
        refcount, mapcount = folio.counts(m)
        return (f"Folio(pfn {pfn:#x}, order {order} ({size if size < 1024 else size >> 10}"
                f"{'K' if size < 1024 else 'M'}), refcount {refcount}, mapcount {mapcount}, {flags})")


class VmaPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        v = self.value
        file = rust.option(v["file"])
        backing = "anonymous" if file is None else f"file ino {int(rust.arc(file)['ino'])}"
        lock = v["lock"]
        seq = rust.atomic(lock["seq"])
        seq_text = "never" if seq == kernel.info("vma_never_locked") else str(seq)
        readers = rust.atomic(lock["state"]) & ~kernel.info("vma_lock_writer")
        return (f"Vma({kernel.flags_text(int(v['flags']), 'vm_flags')}, {backing}, "
                f"pgoff {int(v['pgoff']):#x}, vm_lock_seq {seq_text}, readers {readers}"
                f"{', detached' if rust.atomic(lock['detached']) else ''})")


class EsrPrinter:
    def __init__(self, value):
        self.bits = int(value["__0"]) & (1 << 64) - 1

    def to_string(self):
        return f"Esr({self.bits:#x}: {esr.describe(self.bits)})"


class PhysAddrPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        return f"PA {int(self.value['__0']):#x}"


class RangePrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        return f"{int(self.value['start']):#x}..{int(self.value['end']):#x}"


class AtomicPrinter:
    """An atomic integer as its value, the way it is read (a page-table
    entry, a count, a sequence number)."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        return number(rust.atomic(self.value))


class PageTablePrinter:
    """A whole page table (`[AtomicU64; 512]`) as a summary, not 512
    values. gdb's Rust mode indexes a reference as a C pointer: with
    `table: &PageTable`, `table[480]` is the 480th table after this one;
    the entry is `(*table)[480]`, and `fl-pt VA` walks to it."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        if self.value.address is not None:
            raw = bytes(gdb.selected_inferior().read_memory(int(self.value.address), 4096))
            entries = struct.unpack("<512Q", raw)
        else:
            entries = [rust.atomic(self.value[i]) for i in range(512)]
        used = [i for i, e in enumerate(entries) if e & 1]
        shown = ", ".join(f"[{i}] {entries[i]:#x}" for i in used[:4])
        more = f", ... {len(used) - 4} more" if len(used) > 4 else ""
        where = f" at {int(self.value.address):#x}" if self.value.address is not None else ""
        return (f"page table{where}: {len(used)} valid entries{': ' if used else ''}{shown}{more}"
                f" (one entry: (*table)[i])")


class NumberPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        return number(int(self.value) & (1 << 64) - 1)


BY_NAME = {
    "faultline::arch::aarch64::desc::Pte": PtePrinter,
    "faultline::arch::aarch64::desc::PgProt": PgProtPrinter,
    "faultline::mm::folio::Folio": FolioPrinter,
    "faultline::mm::vma::Vma": VmaPrinter,
    "faultline::mm::addr::PhysAddr": PhysAddrPrinter,
    "faultline::arch::aarch64::esr::Esr": EsrPrinter,
    "core::ops::range::Range<usize>": RangePrinter,
    "usize": NumberPrinter,
    "u64": NumberPrinter,
}


ATOMICS = ("core::sync::atomic::AtomicU64", "core::sync::atomic::AtomicUsize",
           "core::sync::atomic::AtomicU32", "core::sync::atomic::AtomicU8")


def lookup(value):
    kind = value.type.strip_typedefs()
    if kind.code == gdb.TYPE_CODE_ARRAY and kind.range() == (0, 511) \
            and kind.target().strip_typedefs().name == "core::sync::atomic::AtomicU64":
        return PageTablePrinter(value)
    if kind.name in ATOMICS:
        return AtomicPrinter(value)
    printer = BY_NAME.get(kind.name)
    return printer(value) if printer else None


def register(progspace):
    # First, so these win over Rust's own printers for the same types.
    progspace.pretty_printers.insert(0, lookup)
