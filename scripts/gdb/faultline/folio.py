"""Folios (Linux: `struct folio`; `mm/folio.rs`): the per-frame state
(`FolioMeta`, 16 bytes beside each frame's buddy `Page`), which file's
page cache holds a folio and at which index, and which page-table entries
map it.

    fl-folio EXPR        EXPR: a `Folio`, a physical address, or a
                         kernel linear-map address inside the folio
    fl-folio pfn N
"""
import gdb

from . import desc, kernel, pgtable, rust, tasks, vfs, vmas

META_SIZE = 16


def _meta_base():
    return (rust.atomic(kernel.static("faultline::mm::folio::META")),
            rust.atomic(kernel.static("faultline::mm::folio::BASE_PFN")),
            rust.atomic(kernel.static("faultline::mm::folio::META_LEN")))


def meta(pfn):
    """The `FolioMeta` of frame `pfn`."""
    base, base_pfn, count = _meta_base()
    if not 0 <= pfn - base_pfn < count:
        raise gdb.GdbError(f"pfn {pfn:#x} is not RAM the kernel manages")
    ptr = gdb.Value(base + (pfn - base_pfn) * META_SIZE)
    return ptr.cast(gdb.lookup_type("faultline::mm::folio::FolioMeta").pointer()).dereference()


def counts(m):
    """(refcount, mapcount) of a `FolioMeta`: one word holds both, the
    references in its low half and the mappings, signed, in its high half."""
    word = rust.atomic(m["counts"])
    mapcount = word >> 32
    return word & 0xFFFFFFFF, mapcount - (1 << 32) if mapcount >> 31 else mapcount


def pfn_of_meta(address):
    base, base_pfn, _ = _meta_base()
    return base_pfn + (address - base) // META_SIZE


def head_pfn(pfn):
    """The folio's first frame: every frame records how far its head is."""
    return pfn - rust.atomic(meta(pfn)["head_offset"])


def pfn_of(value):
    """The frame an argument names: a `Folio` value, or an address."""
    t = value.type.strip_typedefs()
    if t.name and t.name.endswith("::Folio"):
        return pfn_of_meta(int(value["head"]))
    addr = int(value) & (1 << 64) - 1
    if addr >= kernel.info("page_offset"):
        addr = kernel.virt_to_phys(addr)
    return addr >> kernel.info("page_shift")


def buddy_page(pfn):
    """(flags, order) of the frame's buddy `Page` in `mem_map`."""
    buddy = rust.option(rust.spin(kernel.static("faultline::mm::frame::BUDDY")))
    mem_map = buddy["mem_map"]
    page = mem_map["data_ptr"] + (pfn - int(buddy["base_pfn"]))
    return int(page["flags"]), int(page["order"])


def _boxed(value):
    """The `T` of a `Box<T>`, which gdb shows as a pointer."""
    return value.dereference() if value.type.strip_typedefs().code == gdb.TYPE_CODE_PTR else value


def _node_leaves(node, base):
    """(leaf number, leaf) under an `xa_node::Node` whose first leaf number
    is `base`, in order."""
    shift, used = int(node["shift"]), int(node["used"])
    kind, slots = rust.variant(node["slots"])
    for slot in range(64):
        child = rust.option(slots["__0"][slot]) if used >> slot & 1 else None
        if child is None:
            continue
        first = base + (slot << shift)
        if kind == "Leaves":
            yield first, _boxed(child)
        else:
            yield from _node_leaves(_boxed(child), first)


def index_leaves(index):
    """(leaf number, leaf) of each leaf of a `FolioIndex`, in order: leaf 0
    at its head, the others in its tree of nodes."""
    head = rust.option(index["head"])
    if head is not None:
        yield 0, _boxed(head)
    root = rust.option(index["leaves"]["root"])
    if root is not None:
        yield from _node_leaves(_boxed(root), 0)


def cache_index(folio_pfn):
    """(path or "", inode number, first index) of the file whose page
    cache holds the folio, searched among the files linked in the tree and
    those every process maps; None if none of them holds it."""
    candidates = {}
    for path, inode in vfs.linked_inodes():
        candidates.setdefault(int(inode.address), inode)
    for _, proc in tasks.processes():
        mm = tasks.mm_of(proc)
        if mm is None:
            continue
        for _, _, vma in vmas.vma_tree(mm):
            file = vmas.file_of(vma)
            if file is not None:
                candidates.setdefault(int(file.address), file)
    for inode in candidates.values():
        shmem = vfs.shmem_file(inode)
        if shmem is None:
            continue
        index = rust.spin(shmem["mapping"]["i_pages"])
        for key, leaf in index_leaves(index):
            used = int(leaf["used"])
            for slot in range(64):
                if not used >> slot & 1:
                    continue
                entry = rust.option(leaf["slots"][slot])
                if entry is not None and pfn_of_meta(int(entry["item"]["head"])) == folio_pfn:
                    return vfs.find_path(inode), int(inode["ino"]), int(key) * 64 + slot
    return None


def mappings(first_pfn, nr):
    """[(pid, name, start va, end va, entries, level, cont)] of the leaf
    entries in every process that map frames of [first_pfn, first_pfn+nr):
    runs of consecutive entries mapping consecutive frames."""
    lo = first_pfn << kernel.info("page_shift")
    hi = (first_pfn + nr) << kernel.info("page_shift")
    found = []
    for pid, proc in tasks.processes():
        mm = tasks.mm_of(proc)
        if mm is None:
            continue
        run = None
        for va, level, d in pgtable.leaves(pgtable.user_pgd(mm), 0, kernel.info("user_top")):
            if not lo <= desc.out_addr(d) < hi:
                continue
            size = desc.level_size(level)
            if run and run[3] == va and run[5] == level:
                run[3] += size
                run[4] += 1
                run[6] = run[6] and bool(d & desc.CONT)
                continue
            if run:
                found.append(tuple(run))
            run = [pid, tasks.name_of(proc), va, va + size, 1, level, bool(d & desc.CONT)]
        if run:
            found.append(tuple(run))
    return found


class FlFolio(gdb.Command):
    """Show the folio holding a frame: its frames and order, refcount,
mapcount, flags, which file's page cache holds it and at which index,
and every page-table entry (in every process) that maps it.

A frame that is not part of a live folio (refcount 0) is shown with its
buddy-allocator state instead: free, or a block the kernel itself uses
(a page table, a kernel stack, the heap).

Usage: fl-folio EXPR     a Folio (e.g. `fl-folio folio` in finish_fault),
                         a physical address, or a linear-map address
       fl-folio pfn N"""

    def __init__(self):
        super().__init__("fl-folio", gdb.COMMAND_DATA)

    @kernel.reads_kernel
    def invoke(self, arg, from_tty):
        kernel.require_kernel("fl-folio")
        args = gdb.string_to_argv(arg)
        if len(args) == 2 and args[0] == "pfn":
            pfn = kernel.parse_int(args[1])
        elif len(args) == 1:
            pfn = pfn_of(gdb.parse_and_eval(args[0]))
        else:
            raise gdb.GdbError("usage: fl-folio EXPR | fl-folio pfn N")
        head = head_pfn(pfn)
        m = meta(head)
        refcount, mapcount = counts(m)
        page_flags, page_order = buddy_page(head)
        buddy = kernel.flags_text(page_flags, "page_flags")
        if refcount == 0:
            print(f"pfn {pfn:#x}: no live folio (refcount 0); buddy page flags: {buddy}, order {page_order}")
            return
        order = rust.atomic(m["order"])
        nr = 1 << order
        shift = kernel.info("page_shift")
        size = nr << shift
        size_text = f"{size >> 20}M" if size >= 1 << 20 else f"{size >> 10}K"
        print(f"folio pfn {head:#x}-{head + nr - 1:#x} (PA {head << shift:#x}-{(head + nr) << shift:#x}), "
              f"order {order} ({size_text}, {nr} page{'s' if nr > 1 else ''})"
              + (f"; frame {pfn:#x} is page {pfn - head}" if pfn != head else ""))
        flags = rust.atomic(m["flags"])
        print(f"  refcount {refcount}, mapcount {mapcount}, "
              f"flags {kernel.flags_text(flags, 'folio_flags')}, buddy page flags {buddy}")
        cached = dict(kernel.flag_names("folio_flags"))["cached"]
        if flags & cached:
            where = cache_index(head)
            if where is None:
                print("  page cache: in a file neither linked nor mapped (an open, unlinked one)")
            else:
                path, ino, index = where
                print(f"  page cache: ino {ino} {path or '(no name: memfd or shared anonymous)'}, "
                      f"index {index:#x}-{index + nr - 1:#x}")
        runs = mappings(head, nr)
        total = sum(r[4] for r in runs)
        print(f"  mapped by {total} entr{'y' if total == 1 else 'ies'}" + (":" if runs else ""))
        for pid, name, start, end, count, level, cont in runs:
            print(f"    pid {pid} ({name}) {start:#x}-{end:#x}: {count} {desc.LEVEL_NAMES[level]}"
                  f"{'s' if count > 1 else ''}{', contiguous bit' if cont else ''}")


FlFolio()
