"""Stopping at one user fault: a breakpoint on the exception vector user
faults enter by, which stops only for a data or instruction abort from
EL0 at the given address (and, if asked, in the given process).

    fl-break-fault VA [pid]

From there, `step` runs the vector's register save (vectors.S, no source
lines) into `handle_el0_sync`, and on down the fault path: `do_user_fault`,
`do_page_fault`, `lock_vma_under_rcu`, `handle_mm_fault`, ...
"""
import gdb

from . import esr, kernel, tasks

# VBAR_EL1 + 0x400: synchronous exception from a lower EL in AArch64
# (Arm ARM D1.3.1, "Exception vectors"); vectors.S's `handle_el0_sync` slot.
EL0_SYNC_OFFSET = 0x400
PAGE_MASK = ~0xFFF


class FaultBreakpoint(gdb.Breakpoint):
    """Stops at the EL0 synchronous vector when the exception is an abort at
    the page of `va` (in process `pid`, if given); once, like `tbreak`: the
    vector takes every system call, and a breakpoint there left in place
    would stop and resume every CPU at each one while you step."""

    def __init__(self, va, pid):
        self.vector = kernel.symbol_address("exception_vectors") + EL0_SYNC_OFFSET
        super().__init__(f"*{self.vector:#x}", internal=False, temporary=True)
        self.va, self.pid = va, pid

    def stop(self):
        # Two CPUs can stand at the vector at once, one for a system call
        # and one for the fault; gdb asks for the one it reports, which
        # may be either (and, while another CPU steps, may even ask with
        # that one selected). So ask every CPU there, the reported one
        # first, and have the stop select the one that faulted.
        global _fault_thread
        selected = gdb.selected_thread()
        others = [t for t in gdb.selected_inferior().threads() if t.num != selected.num]
        try:
            for thread in [selected] + others:
                thread.switch()
                if gdb.selected_frame().pc() == self.vector and self.wanted():
                    _fault_thread = thread
                    return True
            return False
        finally:
            selected.switch()

    def wanted(self):
        """Is the selected CPU's exception the fault we wait for?"""
        syndrome = kernel.register("ESR_EL1")
        # Only aborts from EL0 count; a system call leaves FAR stale.
        if not esr.is_abort(syndrome):
            return False
        far = kernel.register("FAR_EL1")
        if far & PAGE_MASK != self.va & PAGE_MASK:
            return False
        proc = tasks.current_process()
        if proc is None or self.pid is not None and tasks.pid_of(proc) != self.pid:
            return False
        print(f"fl-break-fault: pid {tasks.pid_of(proc)} ({tasks.name_of(proc)}) on CPU "
              f"{kernel.selected_cpu()}: {far:#x}: {esr.describe(syndrome)} "
              f"(ESR_EL1 {syndrome:#x}, user pc {kernel.register('ELR_EL1'):#x})")
        return True


# The CPU (gdb thread) a fault breakpoint stopped for, until the stop
# selects it.
_fault_thread = None


def _select_fault_thread(event):
    global _fault_thread
    thread, _fault_thread = _fault_thread, None
    if thread is not None and thread.is_valid() and thread.num != gdb.selected_thread().num:
        thread.switch()
        print(f"[fl-break-fault: the fault is on thread {thread.num}: switched to it]")


gdb.events.stop.connect(_select_fault_thread)


class FlBreakFault(gdb.Command):
    """Stop at the next user fault on the page of VA, in process pid (any
process, if none is given): a temporary breakpoint on the EL0 synchronous
exception vector (VBAR_EL1 + 0x400) that stops only for a data or
instruction abort whose FAR_EL1 lies in that page, then goes away. From
the stop, `fl-step` walks the fault path a function at a time, `step` a
line at a time.

Usage: fl-break-fault VA [pid]"""

    def __init__(self):
        super().__init__("fl-break-fault", gdb.COMMAND_BREAKPOINTS)

    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-break-fault")
        args = gdb.string_to_argv(arg)
        if not 1 <= len(args) <= 2:
            raise gdb.GdbError("usage: fl-break-fault VA [pid]")
        va = kernel.parse_int(args[0])
        pid = kernel.parse_int(args[1]) if len(args) == 2 else None
        bp = FaultBreakpoint(va, pid)
        who = "any process" if pid is None else f"pid {pid}"
        print(f"fl-break-fault: breakpoint {bp.number} stops at the next fault on page "
              f"{va & PAGE_MASK:#x} in {who}, once")


FlBreakFault()
