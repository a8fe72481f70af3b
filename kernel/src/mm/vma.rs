//! A virtual memory area: one run of a process's address space with the
//! same permissions and backing (Linux: `struct vm_area_struct`). The VMA's
//! range is its key in the address space's `VmaTree`.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::arch::desc::PgProt;
use crate::fs::vfs::Inode;
use crate::mm::addr::PAGE_SHIFT;
use crate::mm::filemap::AddressSpace;
use crate::mm::mm_struct::Mm;
use crate::mm::vm_ops::VmOperations;
use crate::mm::vma_lock::VmaLock;
use crate::mm::vma_tree::{Mergeable, Splittable};

/// `vm_flags` bits, at Linux's positions (`include/linux/mm.h`), so that
/// `/proc/PID/smaps` prints them in Linux's order.
pub const VM_READ: u64 = 1 << 0;
/// VM_WRITE: the pages may be written (PROT_WRITE).
pub const VM_WRITE: u64 = 1 << 1;
/// VM_EXEC: the pages may be executed (PROT_EXEC).
pub const VM_EXEC: u64 = 1 << 2;
/// VM_SHARED: writes reach the file (or are shared with forked children);
/// cleared for a MAP_SHARED mapping of a file not open for writing.
pub const VM_SHARED: u64 = 1 << 3;
/// VM_MAYREAD: mprotect may add PROT_READ.
pub const VM_MAYREAD: u64 = 1 << 4;
/// VM_MAYWRITE: mprotect may add PROT_WRITE (not for a shared mapping of a
/// file opened O_RDONLY, or of a write-sealed memfd).
pub const VM_MAYWRITE: u64 = 1 << 5;
/// VM_MAYEXEC: mprotect may add PROT_EXEC.
pub const VM_MAYEXEC: u64 = 1 << 6;
/// VM_MAYSHARE: mapped MAP_SHARED (the `s` of `/proc/PID/maps`).
pub const VM_MAYSHARE: u64 = 1 << 7;
/// The stack, or a MAP_GROWSDOWN mapping: a fault just below it grows it
/// down (`mmap::expand_stack`).
pub const VM_GROWSDOWN: u64 = 1 << 8;
/// mlock'ed: populated, kept in memory (Linux: `VM_LOCKED`).
pub const VM_LOCKED: u64 = 1 << 13;
/// MADV_SEQUENTIAL: sequential access expected (no read-ahead to tune here).
pub const VM_SEQ_READ: u64 = 1 << 15;
/// MADV_RANDOM: random access expected.
pub const VM_RAND_READ: u64 = 1 << 16;
/// MADV_DONTFORK: a forked child does not get this mapping (`VM_DONTCOPY`).
pub const VM_DONTCOPY: u64 = 1 << 17;
/// The vDSO and `[vvar]`: mremap may not grow or duplicate them.
pub const VM_DONTEXPAND: u64 = 1 << 18;
/// mlock2(MLOCK_ONFAULT): locked as faults bring pages in, not populated.
pub const VM_LOCKONFAULT: u64 = 1 << 19;
/// Private writable memory counted against the overcommit limit
/// (`mmap::enough_memory`).
pub const VM_ACCOUNT: u64 = 1 << 20;
/// MAP_NORESERVE: no overcommit check for this mapping.
pub const VM_NORESERVE: u64 = 1 << 21;
/// MADV_WIPEONFORK: a forked child gets the mapping empty (zeros).
pub const VM_WIPEONFORK: u64 = 1 << 25;
/// MADV_DONTDUMP: left out of core dumps (we write none; kept for the flag).
pub const VM_DONTDUMP: u64 = 1 << 26;
/// MADV_HUGEPAGE was asked for.
pub const VM_HUGEPAGE: u64 = 1 << 29;
/// MADV_NOHUGEPAGE was asked for: no large anonymous folios here.
pub const VM_NOHUGEPAGE: u64 = 1 << 30;
/// MAP_DROPPABLE: the pages may be dropped (read back as zeros) instead of
/// kept, e.g. by MADV_PAGEOUT.
pub const VM_DROPPABLE: u64 = 1 << 40;
/// mseal(2): no more changes to the mapping (Linux: `VM_SEALED`).
pub const VM_SEALED: u64 = 1 << 63;

/// VM_LOCKED and VM_LOCKONFAULT (Linux: `VM_LOCKED_MASK`).
pub const VM_LOCKED_MASK: u64 = VM_LOCKED | VM_LOCKONFAULT;
/// What the heap, the stack and `.bss` may do (Linux:
/// `VM_DATA_DEFAULT_FLAGS`, as arm64 defines it without READ_IMPLIES_EXEC).
pub const VM_DATA_DEFAULT_FLAGS: u64 = VM_READ | VM_WRITE | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC;

/// The flags with the two-letter names Linux's `/proc/PID/smaps` prints
/// in `VmFlags` (`show_smap_vma_flags`), in bit order; gdb's `fl-vmas`
/// reads them too.
pub const VM_FLAG_NAMES: [(&str, u64); 23] = [
    ("rd", VM_READ),
    ("wr", VM_WRITE),
    ("ex", VM_EXEC),
    ("sh", VM_SHARED),
    ("mr", VM_MAYREAD),
    ("mw", VM_MAYWRITE),
    ("me", VM_MAYEXEC),
    ("ms", VM_MAYSHARE),
    ("gd", VM_GROWSDOWN),
    ("lo", VM_LOCKED),
    ("sr", VM_SEQ_READ),
    ("rr", VM_RAND_READ),
    ("dc", VM_DONTCOPY),
    ("de", VM_DONTEXPAND),
    ("lf", VM_LOCKONFAULT),
    ("ac", VM_ACCOUNT),
    ("nr", VM_NORESERVE),
    ("wf", VM_WIPEONFORK),
    ("dd", VM_DONTDUMP),
    ("hg", VM_HUGEPAGE),
    ("nh", VM_NOHUGEPAGE),
    ("dp", VM_DROPPABLE),
    ("sl", VM_SEALED),
];

/// Has the VMA had anonymous pages: a private copy or zeroed memory
/// (Linux: a non-NULL `anon_vma`, which `anon_vma_prepare` attaches at
/// the first such fault)? Set by the fault path, copied by a split, a
/// merge and fork, never cleared; mprotect asks it before dropping
/// VM_ACCOUNT. We keep no reverse map, so it is only this one bit.
#[derive(Default)]
pub struct AnonVma(AtomicBool);

impl AnonVma {
    /// The fault path is about to map an anonymous page here (Linux:
    /// `anon_vma_prepare`).
    pub fn prepare(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Has an anonymous page been mapped here?
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A split or copy of a VMA keeps its `anon_vma`.
impl Clone for AnonVma {
    fn clone(&self) -> Self {
        AnonVma(AtomicBool::new(self.is_set()))
    }
}

/// The protection a VMA with `flags` gives a page it maps (Linux:
/// `vm_get_page_prot`, `maybe_mkwrite`). The process's own copy (an
/// anonymous page) is dirty from the start, as only a write or a copy
/// makes one (Linux: the `pte_mkdirty` of `do_anonymous_page` and
/// `wp_page_copy`); any other page starts clean.
fn vm_get_page_prot(flags: u64, own_copy: bool) -> PgProt {
    let write = flags & VM_WRITE != 0 && (flags & VM_SHARED != 0 || own_copy);
    let prot = PgProt::user(write, flags & VM_EXEC != 0);
    if own_copy {
        prot.mkdirty()
    } else {
        prot
    }
}

/// One mapping of a process (Linux's `struct vm_area_struct`); its range is
/// its key in the mm's `VmaTree`. A VMA in the tree is never edited in
/// place (only its lock changes): a writer holding `mmap_lock` and the
/// VMA's write lock replaces the `Arc` with a changed copy.
#[derive(Clone)]
pub struct Vma {
    /// `VM_*` bits above (Linux's `vm_flags`).
    pub flags: u64,
    /// The file mapped (tmpfs inode), or None for anonymous memory. Shared
    /// anonymous memory is backed by an internal tmpfs file, as in Linux.
    pub file: Option<Arc<Inode>>,
    /// The device a private mapping of anonymous memory was made from
    /// (`/dev/zero`), which Linux keeps as `vm_file` (`vma_set_anonymous`
    /// clears only `vm_ops`): named in maps and map_files, nothing more.
    pub dev_file: Option<Arc<Inode>>,
    /// File page mapped at the VMA's start (Linux: `vm_pgoff`).
    pub pgoff: u64,
    /// Whether anonymous pages have been mapped here.
    pub anon_vma: AnonVma,
    /// Held by faults that run without `mmap_lock`.
    pub lock: VmaLock,
    /// What `page_prot` answers, kept in step with `flags` by `new` and
    /// `set_flags`, through which every change of `flags` goes (Linux:
    /// `vm_page_prot`, made by `vm_get_page_prot`).
    page_prot: [PgProt; 2],
}

impl Vma {
    /// A VMA mapping `file` from page `pgoff` (or anonymous memory, with `None`),
    /// never locked yet.
    pub fn new(flags: u64, file: Option<Arc<Inode>>, pgoff: u64) -> Vma {
        Vma {
            flags,
            file,
            dev_file: None,
            pgoff,
            anon_vma: AnonVma::default(),
            lock: VmaLock::new(),
            page_prot: [false, true].map(|own_copy| vm_get_page_prot(flags, own_copy)),
        }
    }

    /// Changes the VMA's `VM_*` bits, and the protection its pages get.
    pub fn set_flags(&mut self, flags: u64) {
        self.flags = flags;
        self.page_prot = [false, true].map(|own_copy| vm_get_page_prot(flags, own_copy));
    }

    /// The protection this VMA gives a page it maps (Linux: `vm_page_prot`,
    /// and `maybe_mkwrite(pte_mkdirty())` for a page that is the process's
    /// own): private pages start read-only unless they are the process's
    /// own copy, which is dirty.
    #[inline]
    pub fn page_prot(&self, own_copy: bool) -> PgProt {
        debug_assert!(self.page_prot == [false, true].map(|own| vm_get_page_prot(self.flags, own)));
        self.page_prot[usize::from(own_copy)]
    }

    /// A private anonymous VMA with `flags`.
    pub fn anon(flags: u64) -> Vma {
        Vma::new(flags, None, 0)
    }

    /// The file mmap(2) was given, as maps and map_files name it (Linux:
    /// `vm_file`): the one mapped, or the device of anonymous memory.
    pub fn vm_file(&self) -> Option<&Arc<Inode>> {
        self.file.as_ref().or(self.dev_file.as_ref())
    }

    /// Does this VMA map the file whose page cache is `mapping`?
    pub fn maps(&self, mapping: &AddressSpace) -> bool {
        self.file_mapping()
            .is_some_and(|m| core::ptr::eq(m, mapping))
    }

    /// The page cache of the file this VMA maps, if it maps one.
    fn file_mapping(&self) -> Option<&AddressSpace> {
        self.file.as_deref()?.mapping()
    }

    /// Registers `mm` with the file this VMA maps, if any.
    pub fn register_with_file(&self, mm: &Arc<Mm>) {
        if let Some(mapping) = self.file_mapping() {
            mapping.add_mm(mm);
        }
    }

    /// Forgets `mm`, which is going away, at the file this VMA maps.
    pub fn unregister_from_file(&self, mm: *const Mm) {
        if let Some(mapping) = self.file_mapping() {
            mapping.remove_mm(mm);
        }
    }

    /// The child's copy at fork (Linux: `dup_mmap`): none for a
    /// MADV_DONTFORK mapping, and memory locks are not inherited. A
    /// VM_WIPEONFORK mapping is copied without its pages, so starts anew.
    pub fn dup_for_fork(&self) -> Option<Vma> {
        if self.flags & VM_DONTCOPY != 0 {
            return None;
        }
        let anon_vma = match self.flags & VM_WIPEONFORK {
            0 => self.anon_vma.clone(),
            _ => AnonVma::default(),
        };
        let mut child = Vma {
            anon_vma,
            ..self.clone()
        };
        child.set_flags(self.flags & !VM_LOCKED_MASK);
        Some(child)
    }

    /// The operations of the VMA's file (Linux: `vma->vm_ops`): None for
    /// anonymous memory, and for a file that cannot be mapped by pages.
    pub fn vm_ops(&self) -> Option<&dyn VmOperations> {
        self.file.as_deref()?.vm_ops()
    }

    /// No large folios here: MADV_NOHUGEPAGE or MAP_STACK set VM_NOHUGEPAGE
    /// (Linux: `vma_thp_disabled`).
    pub fn thp_disabled(&self) -> bool {
        self.flags & VM_NOHUGEPAGE != 0
    }

    /// Whether the VMA is `VM_SHARED`: writes reach the file and other mappers
    /// instead of a private copy.
    pub fn is_shared(&self) -> bool {
        self.flags & VM_SHARED != 0
    }

    /// The file page at `addr`, for a VMA starting at `start`.
    pub fn pgoff_of(&self, start: usize, addr: usize) -> u64 {
        self.pgoff + ((addr - start) >> PAGE_SHIFT) as u64
    }
}

impl Splittable for Arc<Vma> {
    fn split(&self, start: usize, at: usize) -> (Self, Self) {
        let upper = Vma {
            pgoff: self.pgoff_of(start, at),
            ..(**self).clone()
        };
        (Arc::new((**self).clone()), Arc::new(upper))
    }
}

impl Mergeable for Arc<Vma> {
    /// Alike flags and file, and for a file the next page of it; a
    /// changed VMA that has had anonymous pages joins only a neighbour that
    /// has too (Linux: `is_mergeable_anon_vma`, whose neighbour with no
    /// `anon_vma` has no single chain). Where we simplify: anonymous
    /// memory's `pgoff` means nothing here, and we cannot tell two
    /// `anon_vma`s apart, so any two match.
    fn merge(&self, start: usize, mid: usize, next: &Self, next_changed: bool) -> Option<Self> {
        let same_backing = match (self.vm_file(), next.vm_file()) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) && next.pgoff == self.pgoff_of(start, mid),
            _ => false,
        };
        let (changed, neighbour) = if next_changed {
            (next, self)
        } else {
            (self, next)
        };
        let anon_ok = !changed.anon_vma.is_set() || neighbour.anon_vma.is_set();
        (self.flags == next.flags && same_backing && anon_ok).then(|| {
            let merged = (**self).clone();
            if next.anon_vma.is_set() {
                merged.anon_vma.prepare();
            }
            Arc::new(merged)
        })
    }
}
