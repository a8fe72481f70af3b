"""Processes and threads (Linux: scripts/gdb/linux/tasks.py, `lx-ps`):
read from the kernel's tables `task::process::PROCESSES` and `THREADS`
and from each CPU's run queue, and the address space (`Mm`) the other
helpers take a `[pid]` for.
"""
import gdb

from . import kernel, rust


def processes():
    """[(pid, Process)] of every process not yet reaped, by pid."""
    table = rust.spin(kernel.static("faultline::task::process::PROCESSES"))
    found = []
    for pid, weak in rust.btree(table):
        process = rust.weak(weak)
        if process is not None:
            found.append((int(pid), process))
    return found


def process(pid):
    for p, proc in processes():
        if p == pid:
            return proc
    raise gdb.GdbError(f"no process {pid}")


def threads(proc):
    """The `Thread`s of a process."""
    found = []
    for weak in rust.vec(rust.spin(proc["threads"])):
        thread = rust.weak(weak)
        if thread is not None:
            found.append(thread)
    return found


def comm(user_thread):
    name = rust.spin(user_thread["comm"])
    raw = bytes(int(name[i]) for i in range(name.type.range()[1] + 1))
    return raw.split(b"\0", 1)[0].decode(errors="replace")


_states = {}


def state(thread):
    """The thread's `State` by name (Running, Runnable, Blocked, Dead)."""
    if not _states:
        for f in gdb.lookup_type("faultline::task::thread::State").fields():
            _states[f.enumval] = f.name.rsplit("::", 1)[-1]
    return _states.get(rust.atomic(thread["state"]), "?")


def mm_of(proc):
    """The process's `Mm`, or None (a zombie has none)."""
    ptr = rust.atomic(proc["mm"]["mm"])
    if ptr == 0:
        return None
    return gdb.Value(ptr).cast(gdb.lookup_type("faultline::mm::mm_struct::Mm").pointer()).dereference()


def current_process():
    """The process whose thread the selected CPU runs, or None (a kernel
    thread: idle, the tty's)."""
    thread = kernel.running_thread(kernel.selected_cpu())
    if thread is None:
        return None
    user = rust.option(thread["user"])
    return None if user is None else rust.arc(user["process"])


def pid_of(proc):
    return int(proc["pid"])


def name_of(proc):
    """The process's command name: its first thread's `comm`."""
    for thread in threads(proc):
        user = rust.option(thread["user"])
        if user is not None:
            return comm(user)
    return "?"


def resolve(arg):
    """The (pid, Process, Mm) a helper's optional `[pid]` names: that
    process, or the one the selected CPU runs."""
    if arg:
        proc = process(kernel.parse_int(arg))
    else:
        proc = current_process()
        if proc is None:
            raise gdb.GdbError(
                f"CPU {kernel.selected_cpu()} runs a kernel thread: give a pid (fl-ps lists them)")
    mm = mm_of(proc)
    if mm is None:
        raise gdb.GdbError(f"process {pid_of(proc)} has no address space (a zombie)")
    return pid_of(proc), proc, mm


class FlPs(gdb.Command):
    """List processes and threads: PID, TID, name, the CPU each runs on (its
run queue's) and its state, and the address space (mm, its ASID and the
physical address of its pgd, what TTBR0_EL1 holds while it runs).
Then what each CPU runs now, with the gdb thread that is that CPU.

Usage: fl-ps"""

    def __init__(self):
        super().__init__("fl-ps", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-ps")
        running = {}
        for cpu, _ in kernel.cpus():
            thread = kernel.running_thread(cpu)
            if thread is not None:
                running[int(thread.address)] = cpu
        print(f"{'PID':>5} {'TID':>5} {'COMM':16} {'CPU':>3} {'STATE':9} {'MM':18} {'ASID':>4}  PGD")
        for pid, proc in processes():
            mm = mm_of(proc)
            mm_text = f"{int(mm.address):#x} {int(mm['asid']):>4}  {int(mm['pgd']['__0']):#x}" if mm is not None else "-"
            flags = [name for name, field in (("zombie", "zombie"), ("exiting", "exiting"), ("stopped", "stopped"))
                     if rust.atomic(proc[field])]
            for thread in threads(proc):
                user = rust.option(thread["user"])
                tid = int(user["tid"]) if user is not None else 0
                st = state(thread).lower()
                if int(thread.address) in running:
                    st += "*"
                print(f"{pid:>5} {tid:>5} {comm(user) if user is not None else '?':16} "
                      f"{int(thread['cpu']):>3} {st:9} {mm_text}")
            if not threads(proc):
                print(f"{pid:>5} {'-':>5} {name_of(proc):16} {'-':>3} {' '.join(flags) or '-':9} {mm_text}")
        print("* on its CPU now")
        for cpu, _ in kernel.cpus():
            thread = kernel.running_thread(cpu)
            user = None if thread is None else rust.option(thread["user"])
            if user is not None:
                what = f"pid {pid_of(rust.arc(user['process']))} tid {int(user['tid'])} ({comm(user)})"
            else:
                what = "its idle thread" if thread is not None and kernel.is_idle(cpu, thread) else "a kernel thread"
            print(f"CPU {cpu} (gdb thread {kernel.gdb_thread_of_cpu(cpu)}): {what}")


FlPs()
