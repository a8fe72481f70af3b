//! A virtual memory area: one run of a process's address space with the
//! same permissions and backing (Linux: `struct vm_area_struct`). The VMA's
//! range is its key in the address space's `VmaTree`.

use alloc::sync::Arc;

use crate::fs::vfs::Inode;
use crate::mm::addr::PAGE_SHIFT;
use crate::mm::vma_lock::VmaLock;
use crate::mm::vma_tree::{Mergeable, Splittable};

/// `vm_flags` bits (Linux: `VM_READ`...).
pub const VM_READ: u32 = 1 << 0;
/// VM_WRITE: the pages may be written (PROT_WRITE).
pub const VM_WRITE: u32 = 1 << 1;
/// VM_EXEC: the pages may be executed (PROT_EXEC).
pub const VM_EXEC: u32 = 1 << 2;
/// MAP_SHARED: writes reach the file (or are shared with forked children).
pub const VM_SHARED: u32 = 1 << 3;
/// May be made writable by mprotect (a read-only file opened O_RDONLY may not).
pub const VM_MAYWRITE: u32 = 1 << 4;
/// MADV_HUGEPAGE was asked for.
pub const VM_HUGEPAGE: u32 = 1 << 5;
/// The stack, or a MAP_GROWSDOWN mapping: a fault just below it grows it
/// down (`mmap::expand_stack`).
pub const VM_GROWSDOWN: u32 = 1 << 6;
/// mlock'ed: populated, kept in memory (Linux: `VM_LOCKED`).
pub const VM_LOCKED: u32 = 1 << 7;
/// mlock2(MLOCK_ONFAULT): locked as faults bring pages in, not populated.
pub const VM_LOCKONFAULT: u32 = 1 << 8;
/// MADV_DONTFORK: a forked child does not get this mapping (`VM_DONTCOPY`).
pub const VM_DONTCOPY: u32 = 1 << 9;
/// MADV_DONTDUMP: left out of core dumps (we write none; kept for the flag).
pub const VM_DONTDUMP: u32 = 1 << 10;
/// MADV_NOHUGEPAGE: no large folios here, whatever the knobs say.
pub const VM_NOHUGEPAGE: u32 = 1 << 11;

/// The flags with the two-letter names Linux's `/proc/PID/smaps` prints
/// in `VmFlags` (`show_smap_vma_flags`), for gdb's `fl-vmas`.
pub const VM_FLAG_NAMES: [(&str, u32); 12] = [
    ("rd", VM_READ),
    ("wr", VM_WRITE),
    ("ex", VM_EXEC),
    ("sh", VM_SHARED),
    ("mw", VM_MAYWRITE),
    ("hg", VM_HUGEPAGE),
    ("gd", VM_GROWSDOWN),
    ("lo", VM_LOCKED),
    ("lf", VM_LOCKONFAULT),
    ("dc", VM_DONTCOPY),
    ("dd", VM_DONTDUMP),
    ("nh", VM_NOHUGEPAGE),
];

/// One mapping of a process (Linux's `struct vm_area_struct`); its range is
/// its key in the mm's `VmaTree`. A VMA in the tree is never edited in
/// place (only its lock changes): a writer holding `mmap_lock` and the
/// VMA's write lock replaces the `Arc` with a changed copy.
#[derive(Clone)]
pub struct Vma {
    /// `VM_*` bits above (Linux's `vm_flags`).
    pub flags: u32,
    /// The file mapped (tmpfs inode), or None for anonymous memory. Shared
    /// anonymous memory is backed by an internal tmpfs file, as in Linux.
    pub file: Option<Arc<Inode>>,
    /// File page mapped at the VMA's start (Linux: `vm_pgoff`).
    pub pgoff: u64,
    /// Held by faults that run without `mmap_lock`.
    pub lock: VmaLock,
}

impl Vma {
    /// A VMA mapping `file` from page `pgoff` (or anonymous memory, with `None`),
    /// never locked yet.
    pub fn new(flags: u32, file: Option<Arc<Inode>>, pgoff: u64) -> Vma {
        Vma {
            flags,
            file,
            pgoff,
            lock: VmaLock::new(),
        }
    }

    /// A private anonymous VMA with `flags`.
    pub fn anon(flags: u32) -> Vma {
        Vma::new(flags, None, 0)
    }

    /// Does this VMA map the file whose page cache is `mapping`?
    pub fn maps(&self, mapping: &crate::mm::filemap::AddressSpace) -> bool {
        match self.file.as_deref().map(|i| &i.kind) {
            Some(crate::fs::vfs::InodeKind::File(f)) => core::ptr::eq(&f.mapping, mapping),
            _ => false,
        }
    }

    /// Registers `mm` with the file this VMA maps, if any.
    pub fn register_with_file(&self, mm: &Arc<crate::mm::mm_struct::Mm>) {
        if let Some(crate::fs::vfs::InodeKind::File(f)) = self.file.as_deref().map(|i| &i.kind) {
            f.mapping.add_mm(mm);
        }
    }

    /// Forgets `mm`, which is going away, at the file this VMA maps.
    pub fn unregister_from_file(&self, mm: *const crate::mm::mm_struct::Mm) {
        if let Some(crate::fs::vfs::InodeKind::File(f)) = self.file.as_deref().map(|i| &i.kind) {
            f.mapping.remove_mm(mm);
        }
    }

    /// The child's copy at fork (Linux: `dup_mmap`): none for a
    /// MADV_DONTFORK mapping, and memory locks are not inherited.
    pub fn dup_for_fork(&self) -> Option<Vma> {
        if self.flags & VM_DONTCOPY != 0 {
            return None;
        }
        Some(Vma {
            flags: self.flags & !(VM_LOCKED | VM_LOCKONFAULT),
            ..self.clone()
        })
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
    /// Alike flags and backing, and for a file the next page of it. Where we
    /// simplify: anonymous memory has no `anon_vma` here (its pages are found
    /// through the page tables alone) and its `pgoff` means nothing, so two
    /// anonymous neighbours with one set of flags always merge.
    fn merge(&self, start: usize, mid: usize, next: &Self) -> Option<Self> {
        let same_backing = match (&self.file, &next.file) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) && next.pgoff == self.pgoff_of(start, mid),
            _ => false,
        };
        (self.flags == next.flags && same_backing).then(|| Arc::new((**self).clone()))
    }
}
