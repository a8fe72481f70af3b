"""The gdb side of make test's gdb stage (scripts/gdb-test.sh): sourced
into a gdb attached to faultline running user/c/gdb-target.c, it stops
where the program waits for it and prints what the helpers and gdb show
there, each between `@@begin NAME` and `@@end NAME`. scripts/gdb/check.py
then compares them with what the program printed from /proc at the same
moments.
"""
import gdb

from faultline import pgtable, tasks

MARK_SHMEM = 0x7E0000000000
MARK_SHMEM_LEAF1 = MARK_SHMEM + (256 << 10)
MARK_ANON = 0x7E0000100000


def block(name, command):
    print(f"@@begin {name}")
    print(gdb.execute(command, to_string=True), end="")
    print(f"@@end {name}")


def stop_at_fault(va):
    gdb.execute("delete")
    gdb.execute(f"fl-break-fault {va:#x}")
    print(gdb.execute("continue", to_string=True), end="")
    print(f"@@far {int(gdb.parse_and_eval('$FAR_EL1')) & (1 << 64) - 1:#x}")
    print(f"@@frame {gdb.selected_frame().name()} {gdb.selected_frame().pc():#x}")


def run():
    gdb.execute("set pagination off")
    block("help", "help faultline")

    # Stop 1: the program's first store at MARK_SHMEM, just after it read
    # /proc ("before"). Nothing has changed since.
    stop_at_fault(MARK_SHMEM)
    pid = tasks.pid_of(tasks.current_process())
    print(f"@@pid {pid}")
    block("fl-ps", "fl-ps")
    block("fl-ptdump before", "fl-ptdump")
    block("fl-vmas before", "fl-vmas")
    block("fl-vmas-init before", "fl-vmas 1")
    block("fl-vmstat before", "fl-vmstat")
    block("fl-pt-none before", f"fl-pt {MARK_SHMEM:#x}")
    # The same from the other CPU, whose process is another (or none).
    here = gdb.selected_thread()
    other = next(t for t in gdb.selected_inferior().threads() if t.num != here.num)
    other.switch()
    block("fl-ptdump other-cpu", f"fl-ptdump {pid}")
    block("fl-vmas other-cpu", f"fl-vmas {pid}")
    here.switch()

    try:
        at_handle_mm_fault()
    except gdb.error as e:
        print(f"@@handle_mm_fault error: {e}")
    try:
        into_finish_fault()
    except gdb.error as e:  # report it, and go on to stop 2
        print(f"@@finish_fault error: {e}")

    # Stop 2: the store at MARK_ANON, after the program read /proc again
    # ("after"): MARK_SHMEM's 64K folio is mapped now.
    stop_at_fault(MARK_ANON)
    block("fl-ptdump after", "fl-ptdump")
    block("fl-vmas after", "fl-vmas")
    block("fl-vmstat after", "fl-vmstat")
    block("fl-pt after", f"fl-pt {MARK_SHMEM:#x}")
    leaf = pgtable.walk(pgtable.user_pgd(tasks.mm_of(tasks.current_process())), MARK_SHMEM)[-1][3]
    block("fl-folio after", f"fl-folio {leaf & 0xFFFFFFFFF000:#x}")
    block("fl-folio pfn", f"fl-folio pfn {(leaf & 0xFFFFFFFFF000) >> 12:#x}")
    # Page 64 of the file: its folio hangs in the index's tree, not at the head.
    leaf1 = pgtable.walk(pgtable.user_pgd(tasks.mm_of(tasks.current_process())), MARK_SHMEM_LEAF1)[-1][3]
    block("fl-folio leaf1", f"fl-folio {leaf1 & 0xFFFFFFFFF000:#x}")
    gdb.execute("delete")
    print("@@session done")


def at_handle_mm_fault():
    """docs/fault.md's session: `break handle_mm_fault`, then the backtrace
    of this fault, which must be that document's steps 1 to 3."""
    gdb.execute("delete")
    block("break handle_mm_fault", "break handle_mm_fault")
    print(gdb.execute("continue", to_string=True), end="")
    block("bt handle_mm_fault", "backtrace")


def into_finish_fault():
    """From stop 1 into the fault path: the short name, then `next` to
    set_pte_range and `step` into it."""
    gdb.execute("delete")
    block("break finish_fault", "break finish_fault")
    print(gdb.execute("continue", to_string=True), end="")
    block("info args", "info args")
    block("fl-folio folio", "fl-folio folio")
    block("p page_prot", "p vmf.vma.page_prot[1]")
    block("p pmd as Pte", "p *(vmf.pmd as *const faultline::arch::aarch64::desc::Pte)")
    block("p page table", "p *vmf.pte.0")
    block("p one entry", "p (*vmf.pte.0)[0]")
    print("@@begin next")
    for _ in range(40):
        gdb.execute("next", to_string=True)
        frame = gdb.selected_frame()
        sal = frame.find_sal()
        text = open(sal.symtab.fullname()).read().splitlines()[sal.line - 1].strip()
        print(f"{frame.name()} {sal.line} {text}")
        if "set_pte_range(" in text or frame.name() != "faultline::mm::fault::finish_fault":
            break
    print("@@end next")
    gdb.execute("step", to_string=True)
    print(f"@@step {gdb.selected_frame().name()}")


try:
    run()
except Exception as e:  # the checks report what is missing
    print(f"@@session error: {e}")
gdb.execute("kill")
try:
    gdb.execute("fl-ps", to_string=True)
except gdb.error as e:
    print(f"@@after kill: {e}")
