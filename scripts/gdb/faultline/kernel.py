"""The kernel as the helpers reach it: statics by their Rust path, the
constants in `VMCOREINFO` (kernel/src/vmcoreinfo.rs), physical memory
through the linear map, and which CPU a gdb thread is.

QEMU's gdb stub shows each vCPU as a thread: `thread 2` is the second
CPU. Its registers include the system registers, so `$TTBR0_EL1`,
`$FAR_EL1` and `$TPIDR_EL1` (whose low 6 bits hold the kernel's CPU
number, see `arch::cpu::cpu_id`) are per CPU. Memory, too, is read through the
selected CPU's MMU, at its exception level: a CPU stopped in user space
cannot read kernel memory, so the helpers read through one stopped in
the kernel (`kernel_reads`).
"""
import contextlib
import re
import struct

import gdb

from . import rust


def require_kernel(command):
    """Stops `command` with a plain message when there is no kernel to read:
    before `target remote`, or once QEMU has exited (the kernel powered
    off, or was killed)."""
    inferior = gdb.selected_inferior()
    if inferior.pid == 0 or not inferior.threads():
        raise gdb.GdbError(f"{command}: no kernel to read: QEMU is not connected or has exited "
                           "(the kernel powered off?); `make gdb` starts another")


def static(path):
    """The value of the static at Rust path `path`."""
    sym = gdb.lookup_static_symbol(path) or gdb.lookup_global_symbol(path)
    if sym is None:
        raise gdb.GdbError(f"no symbol {path}: is this faultline's kernel ELF?")
    return sym.value()


def symbol_address(name):
    """The address of an ELF symbol with no debug information (an
    assembly label such as `exception_vectors`)."""
    text = gdb.execute(f"info address {name}", to_string=True)
    found = re.search(r" is at (0x[0-9a-f]+)", text)
    if found is None:
        raise gdb.GdbError(f"no symbol {name}")
    return int(found.group(1), 16)


_info = {}


def info(name):
    """A field of VMCOREINFO, as a Python int."""
    if name not in _info:
        _info[name] = int(static("faultline::vmcoreinfo::VMCOREINFO")[name])
    return _info[name]


def flag_names(name):
    """A [(name, bit)] table of VMCOREINFO, e.g. `vm_flags`."""
    key = "names:" + name
    if key not in _info:
        table = static("faultline::vmcoreinfo::VMCOREINFO")[name]
        count = table.type.range()[1] + 1
        _info[key] = [(rust.str_(table[i]["__0"]), int(table[i]["__1"])) for i in range(count)]
    return _info[key]


def flags_text(value, table):
    names = [n for n, bit in flag_names(table) if value & bit]
    return " ".join(names) if names else "-"


def phys_to_virt(pa):
    return pa + info("page_offset")


def virt_to_phys(va):
    return va - info("page_offset")


def read_u64s(pa, count):
    """`count` 64-bit words of physical memory from `pa`."""
    data = rust.read_bytes(phys_to_virt(pa), 8 * count)
    return list(struct.unpack(f"<{count}Q", data))


def register(name):
    """A register of the selected CPU, e.g. `TTBR0_EL1`."""
    return int(gdb.parse_and_eval("$" + name)) & (1 << 64) - 1


# The CPU the user selected, while a helper reads through another.
_user_cpu = None


def selected_cpu():
    """The kernel's number for the CPU gdb has selected (the user's choice,
    also while a helper reads memory through another)."""
    return _user_cpu if _user_cpu is not None else _tpidr_cpu()


def _tpidr_cpu():
    # The low 6 bits: the rest is the address of the CPU's scheduler state
    # (arch::cpu::CPU_ID_MASK).
    return register("TPIDR_EL1") & 63


def exception_level():
    """The selected CPU's exception level, from CPSR (QEMU shows no
    CurrentEL)."""
    return (int(gdb.parse_and_eval("$cpsr")) >> 2) & 3


@contextlib.contextmanager
def kernel_reads():
    """Runs a helper's reads through a CPU stopped in the kernel, if the
    selected one is in user space, and selects the user's CPU again after."""
    global _user_cpu
    selected = gdb.selected_thread()
    if selected is None or exception_level() >= 1:
        yield
        return
    cpu = selected_cpu()
    for thread in gdb.selected_inferior().threads():
        thread.switch()
        if exception_level() >= 1:
            break
    else:
        selected.switch()
        raise gdb.GdbError("every CPU is stopped in user space, where kernel memory cannot be "
                           "read: stop in the kernel first (a breakpoint, fl-break-fault)")
    _user_cpu = cpu
    try:
        yield
    finally:
        _user_cpu = None
        selected.switch()


def cpus():
    """[(cpu number, its `Cpu`)] of the CPUs online."""
    table = static("faultline::task::sched::CPUS")
    count = table.type.range()[1] + 1
    return [(i, table[i]) for i in range(count) if rust.atomic(table[i]["online"])]


def gdb_thread_of_cpu(cpu):
    """The gdb thread number of a kernel CPU number (gdb threads count
    from 1 in CPU order; TPIDR_EL1 says which is which)."""
    for thread in gdb.selected_inferior().threads():
        if _cpu_of_gdb_thread(thread) == cpu:
            return thread.num
    return None


def _cpu_of_gdb_thread(thread):
    # The thread's own TPIDR_EL1, not selected_cpu(): inside kernel_reads
    # that is the user's CPU, whichever thread is switched to.
    selected = gdb.selected_thread()
    try:
        thread.switch()
        return _tpidr_cpu()
    finally:
        selected.switch()


def running_thread(cpu):
    """The `Thread` CPU `cpu` runs now (its `curr`), or None."""
    table = static("faultline::task::sched::CPUS")
    curr = rust.atomic(table[cpu]["curr"])
    if curr == 0:
        return None
    return gdb.Value(curr).cast(gdb.lookup_type("faultline::task::thread::Thread").pointer()).dereference()


def is_idle(cpu, thread):
    """Is `thread` CPU `cpu`'s idle thread?"""
    rq = rust.spin(static("faultline::task::sched::CPUS")[cpu]["rq"])
    idle = rust.option(rq["idle"])
    return idle is not None and rust.arc_address(idle) == int(thread.address)


def reads_kernel(invoke):
    """A command's `invoke`, run under `kernel_reads`."""
    def wrapped(self, arg, from_tty):
        with kernel_reads():
            return invoke(self, arg, from_tty)
    wrapped.__doc__ = invoke.__doc__
    return wrapped


def parse_int(text):
    """A number as the user typed it (0x.. or decimal), or a gdb expression."""
    try:
        return int(text, 0)
    except ValueError:
        return int(gdb.parse_and_eval(text)) & (1 << 64) - 1
