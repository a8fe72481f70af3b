"""A process's VMAs (Linux: `/proc/PID/maps` from `show_map_vma`; no
Linux gdb helper lists them): the tree `mmap_lock` guards, printed as the
kernel's `mm::smaps::maps` prints it, each VMA followed by what maps
does not show: its flags, file offset, and its per-VMA lock
(`mm/vma_lock.rs`): whether a lockless fault may take it now, readers
holding it, and whether faults can find it in the published copy.

    fl-vmas [pid]
"""
import gdb

from . import kernel, rust, tasks, vfs


def vma_tree(mm):
    """[(start, end, Vma)] as `mmap_lock` guards them, by address."""
    mmap = rust.mutex(mm["mmap_lock"])
    return [(int(start), int(entry["end"]), rust.arc(entry["value"]))
            for start, entry in rust.btree(mmap["vmas"]["vmas"])]


def published(mm):
    """{vma address: (start, end)} of the copy lockless faults search."""
    ptr = rust.atomic(mm["vmas_published"]["current"])
    snap = gdb.Value(ptr).cast(gdb.lookup_type("faultline::mm::vma_lock::VmaSnapshot").pointer()).dereference()
    return {rust.arc_address(item["__2"]): (int(item["__0"]), int(item["__1"])) for item in rust.vec(snap["vmas"])}


def file_of(vma):
    file = rust.option(vma["file"])
    return None if file is None else rust.arc(file)


def special(mm, start, vma):
    """"[vdso]" or "[vvar]" for the kernel's own mappings, else None (the
    kernel's `smaps::special_mapping`)."""
    mmap = rust.mutex(mm["mmap_lock"])
    if start == int(mmap["vdso"]):
        return "[vdso]"
    file = file_of(vma)
    vvar = rust.once(kernel.static("faultline::task::clock::VVAR"))
    if file is not None and vvar is not None and int(file.address) == rust.arc_address(vvar["__0"]):
        return "[vvar]"
    return None


def name(mm, start, end, vma):
    """The last column of a maps line (the kernel's `smaps::vma_name`)."""
    label = special(mm, start, vma)
    if label is not None:
        return label
    file = file_of(vma)
    if file is not None:
        return vfs.proc_path(file)
    mmap = rust.mutex(mm["mmap_lock"])
    if start < int(mmap["brk"]) and end > int(mmap["start_brk"]):
        return "[heap]"
    if end == kernel.info("stack_top"):
        return "[stack]"
    return ""


def maps_line(mm, start, end, vma):
    """The /proc/PID/maps line of one VMA (the kernel's `smaps::header`)."""
    flags = int(vma["flags"])
    bits = dict(kernel.flag_names("vm_flags"))
    perm = "".join(c if flags & bits[b] else "-" for b, c in (("rd", "r"), ("wr", "w"), ("ex", "x")))
    perm += "s" if flags & bits["ms"] else "p"
    file = file_of(vma)
    offset, dev, ino = 0, 0, 0
    if file is not None and special(mm, start, vma) is None:
        offset = int(vma["pgoff"]) << kernel.info("page_shift")
        dev, ino = vfs.st_dev(file), int(file["ino"])
    major = ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~0xFFF)
    minor = (dev & 0xFF) | ((dev >> 12) & ~0xFF)
    line = f"{start:08x}-{end:08x} {perm} {offset:08x} {major:02x}:{minor:02x} {ino}"
    label = name(mm, start, end, vma)
    return f"{line:<72} {label}" if label else line


def lock_state(mm, vma, visible):
    lock = vma["lock"]
    seq = rust.atomic(lock["seq"])
    mm_seq = rust.atomic(mm["mm_lock_seq"])
    state = rust.atomic(lock["state"])
    writer = kernel.info("vma_lock_writer")
    readers = state & ~writer
    if seq == kernel.info("vma_never_locked"):
        seq_text = "never write-locked"
    elif seq == mm_seq:
        seq_text = f"write-locked (vm_lock_seq {seq} == mm_lock_seq {mm_seq})"
    else:
        seq_text = f"unlocked (vm_lock_seq {seq}, mm_lock_seq {mm_seq})"
    parts = [seq_text, f"readers {readers}"]
    if state & writer:
        parts.append("a writer waits for them")
    if rust.atomic(lock["detached"]):
        parts.append("detached")
    parts.append("published" if visible else "not yet published: faults take mmap_lock")
    return ", ".join(parts)


class FlVmas(gdb.Command):
    """List a process's VMAs as /proc/PID/maps does, each followed by its
flags (the two-letter names of Linux's smaps VmFlags line), its
file page offset, the Vma's address, and its per-VMA lock: vm_lock_seq
against the address space's mm_lock_seq (equal: write-locked by an mmap
writer, so faults fall back to mmap_lock), the readers (faults) holding
it, and whether it is in the copy lockless faults search.

Usage: fl-vmas [pid]     (pid: default, the process the selected CPU runs)"""

    def __init__(self):
        super().__init__("fl-vmas", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-vmas")
        pid, proc, mm = tasks.resolve(arg.strip() or None)
        locked = rust.atomic(mm["mmap_lock"]["locked"])
        print(f"pid {pid} ({tasks.name_of(proc)}), mm {int(mm.address):#x}: "
              f"mmap_lock {'held' if locked else 'free'}, mm_lock_seq {rust.atomic(mm['mm_lock_seq'])}")
        visible = published(mm)
        for start, end, vma in vma_tree(mm):
            print(maps_line(mm, start, end, vma))
            addr = int(vma.address)
            shown = visible.get(addr) == (start, end)
            print(f"    {kernel.flags_text(int(vma['flags']), 'vm_flags')}; pgoff {int(vma['pgoff']):#x}; "
                  f"vma {addr:#x}; {lock_state(mm, vma, shown)}")


FlVmas()
