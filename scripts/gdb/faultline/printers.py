"""Pretty printers, so `info locals`, `print` and backtraces on the fault
path read as a kernel engineer reads them: a `Pte` or `PgProt` decoded, a
`Folio` with its frame, order, counts and flags, a `Vma` with its flags
and lock, an `Esr` as the kernel prints it, physical addresses and
`Range<usize>`s in hex, and `usize` / `u64` values in hex once they are
64K or more (addresses, sizes, raw descriptors), in decimal below
(counts, indices, orders).
"""
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
        # The same bits are a table at levels 0-2 and a page at level 3.
        kind = "table or page" if d & desc.TYPE else "block"
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
        return (f"Folio(pfn {pfn:#x}, order {order} ({size if size < 1024 else size >> 10}"
                f"{'K' if size < 1024 else 'M'}), refcount {rust.atomic(m['refcount'])}, "
                f"mapcount {rust.atomic(m['mapcount'])}, {flags})")


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


def lookup(value):
    name = value.type.strip_typedefs().name
    printer = BY_NAME.get(name)
    return printer(value) if printer else None


def register(progspace):
    # First, so these win over Rust's own printers for the same types.
    progspace.pretty_printers.insert(0, lookup)
