"""What `step` enters, and `fl-step`, which walks a path one function at
a time.

gdb's `skip` rules decide which functions `step` goes into. faultline's
skip by source file: all of Rust's library (core, alloc) and the crates
(spin, tock-registers, aarch64-cpu) except `core/src/ops/function.rs`,
the `FnOnce::call_once` that calls a closure, so that `step` still goes
into a closure passed to a faultline function. Then faultline's own leaf
helpers, which a student reads once and need not step through on every
fault: descriptor and ESR bits, address arithmetic, counters, the CPU
number, spinlocks, folio fields, a level's index. `info skip` lists the
rules; `skip disable N` makes `step` go into one again.
"""
import contextlib

import gdb

from . import kernel

# gdb matches a glob against the whole source path, and `*` never
# matches a `/`, so each depth of directory is a pattern of its own.
_DEPTHS = ("", "/*", "/*/*", "/*/*/*", "/*/*/*/*")
# Everything under core/src/ but ops/function.rs: the first letters
# that are not "ops/", then ops/ without function.rs.
_CORE = ("[!o]*", "o[!p]*", "op[!s]*", "ops?*")
_CORE_OPS = ("ops/[!f]*", "ops/f[!u]*")
LEAF_FILES = (
    "kernel/src/arch/aarch64/desc.rs",
    "kernel/src/arch/aarch64/esr.rs",
    "kernel/src/arch/aarch64/cpu.rs",
    "kernel/src/mm/addr.rs",
    "kernel/src/mm/vmstat.rs",
    "kernel/src/sync/spinlock.rs",
)
LEAF_FUNCTIONS = (
    r"^faultline::arch::aarch64::contpte::(load|block_of)$",
    r"^faultline::arch::aarch64::pgtable::TableOps::new$",
    r"^faultline::fs::tmpfs::file::ShmemFile::size$",
    r"^faultline::mm::folio::Folio::(head|order|size|phys|pfn|nr_pages|is_[a-z_]+)$",
    r"^faultline::mm::folio::(pfn_of|meta|table_lock)$",
    r"^faultline::mm::folio_index::(leaf_of|covers|folio_nr_pages)$",
    r"^faultline::mm::mm_struct::(Mm::table_at|[{]impl#[0-9]+[}]::table)$",
    r"^faultline::mm::pgtable::Level::",
    r"^faultline::mm::vm_fault::VmFault::(table|ptl)$",
    r"^faultline::mm::vma::Vma::(pgoff_of|page_prot|thp_disabled|is_[a-z_]+)$",
    r"^faultline::mm::vma::vm_get_page_prot$",
    r"^faultline::mm::fault::Access::allowed_by$",
    r"^faultline::mm::vma_lock::VmaLock::is_detached$",
    r"^faultline::task::sched::this_cpu$",
)


def library_globs():
    globs = []
    for depth in _DEPTHS:
        globs += [f"/rustc/*/library/{lib}/src/*{depth}" for lib in ("alloc", "std")]
        globs += [f"/rustc/*/library/core/src/{first}{depth}" for first in _CORE]
        globs += [f"*/.cargo/registry/src/*/*/*{depth}", f"*/.cargo/git/checkouts/*/*/*{depth}"]
    return globs + [f"/rustc/*/library/core/src/{name}" for name in _CORE_OPS]


def add_skips():
    for glob in library_globs():
        gdb.execute(f"skip -gfile {glob}", to_string=True)
    for path in LEAF_FILES:
        gdb.execute(f"skip -file {path}", to_string=True)
    for regex in LEAF_FUNCTIONS:
        gdb.execute(f"skip -rfunction {regex}", to_string=True)


def _faultline_source(frame):
    sal = frame.find_sal()
    return sal.symtab is not None and sal.symtab.filename.startswith("kernel/src/")


def _stack(frame):
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.older()
    return frames


@contextlib.contextmanager
def _quiet():
    gdb.execute("set suppress-cli-notifications on", to_string=True)
    try:
        yield
    finally:
        gdb.execute("set suppress-cli-notifications off", to_string=True)


class FlStep(gdb.Command):
    """Step to the next faultline function called, closures included:
`step` until the selected CPU is in a call of a kernel/src/ function that
was not on the stack before (the skip rules still apply: Rust's library
and faultline's leaf helpers are run, not stopped in). Returns are passed
through, so from the fault's entry each `fl-step` shows the next function
of the path with its arguments. Stops with a note when the CPU leaves
Rust code (the exception return to user space).

Usage: fl-step [N]"""

    LIMIT = 5000

    def __init__(self):
        super().__init__("fl-step", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-step")
        count = int(arg) if arg.strip() else 1
        for _ in range(count):
            # gdb prints the source line at every stop of a `step`, even
            # one run to_string: silence the steps between the stops that
            # are fl-step's, so only the function reached is shown.
            with _quiet():
                reached = self.one()
            if not reached:
                print(f"fl-step: left faultline's Rust code, in {self.left}")
                return
        gdb.execute("frame")

    def one(self):
        """Steps to the next call; False (with the reason printed once the
        output is back) if the CPU left Rust code first."""
        for _ in range(self.LIMIT):
            # gdb compares frames by their id (function and stack
            # address), which outlives the step: a frame not on the stack
            # before it is a call, whichever function made it.
            before = _stack(gdb.selected_frame())
            gdb.execute("step", to_string=True)
            frame = gdb.selected_frame()
            if frame.find_sal().symtab is None:
                self.left = frame.name() or "assembly"
                return False
            if _faultline_source(frame) and frame not in before:
                return True
        raise gdb.GdbError(f"fl-step: no new faultline function in {self.LIMIT} steps")


FlStep()
