//! `/proc/PID/maps`, `smaps` and the memory lines of `status`: the VMAs
//! and their memory use read off the page tables (Linux:
//! `fs/proc/task_mmu.c`, `show_map_vma`, `show_smap`, `smaps_pte_range`,
//! `task_mem`).
//!
//! Where we simplify: a page counts as shared when its folio is also mapped
//! outside this address space (Linux asks per page); the zero page counts
//! nowhere, as in Linux; `Pss`, the swap and hugetlb lines, `Locked` and
//! `THPeligible` are left out; `ContPTE` (bytes mapped by contiguous-bit
//! blocks) is faultline's own line, before `VmFlags`.

use alloc::collections::BTreeMap;
use alloc::string::String;
use core::fmt::Write;

use crate::arch::desc::Pte;
use crate::arch::pgtable::ptep_get;
use crate::mm::addr::{PAGE_SIZE, USER_TOP};
use crate::mm::folio::{is_zero_pfn, Folio};
use crate::mm::mm_struct::{Mm, MmMap};
use crate::mm::pgtable::{self, Found};
use crate::mm::ptlock::pte_lock;
use crate::mm::vma::{
    Vma, VM_EXEC, VM_FLAG_NAMES, VM_GROWSDOWN, VM_MAYSHARE, VM_READ, VM_SHARED, VM_WRITE,
};
use crate::task::exec::STACK_TOP;
use uapi::stat::{dev_major, dev_minor};

/// Byte counts for one VMA, in `show_smap`'s order.
#[derive(Default)]
struct Usage {
    /// `Rss`: bytes mapped by present entries.
    rss: usize,
    /// `Shared_Clean`: mapped here and elsewhere, never written.
    shared_clean: usize,
    /// `Shared_Dirty`: mapped here and elsewhere, written.
    shared_dirty: usize,
    /// `Private_Clean`: mapped only in this address space, never written.
    private_clean: usize,
    /// `Private_Dirty`: mapped only here and written (anonymous memory always
    /// counts as dirty, as it has no file to fall back on).
    private_dirty: usize,
    /// `Referenced`: entries with the access flag set.
    referenced: usize,
    /// `Anonymous`: bytes of anonymous folios.
    anonymous: usize,
    /// `AnonHugePages`: bytes of anonymous folios mapped by PMD blocks.
    anon_huge_pages: usize,
    /// `ShmemPmdMapped`: bytes of shmem folios mapped by PMD blocks.
    shmem_pmd_mapped: usize,
    /// `ContPTE`: bytes mapped by contiguous-bit (contpte) blocks.
    contpte: usize,
}

/// Calls `f(va, entry, bytes)` for every mapped leaf of `[start, end)`:
/// PTEs with their block's access bits gathered, and PMD blocks. The
/// caller holds `page_table_lock` (which zaps and PMD blocks take); each
/// PTE table's own lock is held while its entries are handed out, as
/// faults change entries under it alone, so every entry `f` sees still
/// holds its folio reference.
pub fn for_each_mapping(mm: &Mm, start: usize, end: usize, f: &mut impl FnMut(usize, Pte, usize)) {
    pgtable::for_each_pte_table(&mm, mm.pgd, start, end, &mut |va, found| match found {
        Found::Table(table, idx) => {
            let _pte = pte_lock(table);
            for i in idx {
                let pte = ptep_get(table, i);
                if pte.is_valid() {
                    f(va + i * PAGE_SIZE, pte, PAGE_SIZE);
                }
            }
        }
        Found::Block(level, slot) => {
            let pte = Pte(slot.load(core::sync::atomic::Ordering::Acquire));
            f(va, pte, level.size());
        }
    });
}

/// Sums the smaps counts of `[start, end)`; `in_mm` says how many of each
/// folio's mappings (by head PFN) are this mm's own, so that a folio
/// mapped elsewhere too counts as shared.
fn usage(mm: &Mm, start: usize, end: usize, in_mm: &BTreeMap<usize, u32>) -> Usage {
    let mut u = Usage::default();
    for_each_mapping(mm, start, end, &mut |_, pte, bytes| {
        if is_zero_pfn(pte.addr().pfn()) {
            return; // no one's memory (Linux: `vm_normal_page` finds none)
        }
        // SAFETY: for_each_mapping's entries are read under their locks.
        let folio = unsafe { Folio::from_pfn(pte.addr().pfn()) };
        let shared = folio.mapcount() > in_mm.get(&folio.pfn()).copied().unwrap_or(0);
        let dirty = pte.is_dirty() || folio.is_dirty() || folio.is_anon();
        u.rss += bytes;
        *match (shared, dirty) {
            (true, false) => &mut u.shared_clean,
            (true, true) => &mut u.shared_dirty,
            (false, false) => &mut u.private_clean,
            (false, true) => &mut u.private_dirty,
        } += bytes;
        if pte.is_young() {
            u.referenced += bytes;
        }
        if folio.is_anon() {
            u.anonymous += bytes;
        }
        if bytes > PAGE_SIZE && folio.is_anon() {
            u.anon_huge_pages += bytes;
        } else if bytes > PAGE_SIZE {
            u.shmem_pmd_mapped += bytes;
        }
        if pte.is_contiguous() {
            u.contpte += bytes;
        }
    });
    u
}

/// `[vdso]` or `[vvar]` for the kernel's own mappings, which Linux makes
/// with no file (`_install_special_mapping`): maps shows no offset, device
/// or inode for them, though ours are files of the internal tmpfs.
fn special_mapping(map: &MmMap, start: usize, vma: &Vma) -> Option<&'static str> {
    if start == map.vdso {
        return Some("[vdso]");
    }
    let vvar = crate::task::clock::vvar_inode()?;
    vma.file
        .as_ref()
        .is_some_and(|file| alloc::sync::Arc::ptr_eq(file, &vvar))
        .then_some("[vvar]")
}

/// What the last column of a maps line names (Linux: `show_map_vma`'s
/// `get_vma_name`): the file's path, or `[heap]`, `[stack]`, `[vdso]`,
/// `[vvar]`.
fn vma_name(map: &MmMap, start: usize, end: usize, vma: &Vma) -> String {
    if let Some(name) = special_mapping(map, start, vma) {
        return String::from(name);
    }
    match vma.vm_file() {
        Some(inode) => inode.proc_path().unwrap_or_default(),
        None if start < map.brk && end > map.start_brk => String::from("[heap]"),
        None if end == STACK_TOP => String::from("[stack]"),
        None => String::new(),
    }
}

/// The `/proc/PID/maps` line of a VMA, which heads its smaps block.
fn header(out: &mut String, map: &MmMap, start: usize, end: usize, vma: &Vma) {
    let flag = |bit, c| if vma.flags & bit != 0 { c } else { '-' };
    // A file's offset, device and inode; anonymous memory and the special
    // mappings have none, whatever their `pgoff` (Linux: `show_map_vma`).
    let file = vma
        .vm_file()
        .filter(|_| special_mapping(map, start, vma).is_none());
    let (offset, dev, ino) = file.map_or((0, 0, 0), |i| {
        (vma.pgoff as usize * PAGE_SIZE, i.stat().st_dev, i.ino)
    });
    let name = vma_name(map, start, end, vma);
    let line_start = out.len();
    let _ = write!(
        out,
        "{:08x}-{:08x} {}{}{}{} {:08x} {:02x}:{:02x} {}",
        start,
        end,
        flag(VM_READ, 'r'),
        flag(VM_WRITE, 'w'),
        flag(VM_EXEC, 'x'),
        if vma.flags & VM_MAYSHARE != 0 {
            's'
        } else {
            'p'
        },
        offset,
        dev_major(dev),
        dev_minor(dev),
        ino,
    );
    if !name.is_empty() {
        // Linux pads the name to column 74 (`seq_pad`).
        let pad = 73usize.saturating_sub(out.len() - line_start).max(1);
        let _ = write!(out, "{:pad$}{name}", "");
    }
    out.push('\n');
}

/// `/proc/PID/maps` for `mm`.
pub fn maps(mm: &Mm) -> String {
    let map = mm.mmap_lock_readonly();
    let mut out = String::new();
    for (start, end, vma) in map.vmas.iter() {
        header(&mut out, &map, start, end, vma);
    }
    out
}

/// Where the program's parts lie, for `/proc/PID/stat` (Linux: the
/// `mm->start_code`... fields): its first executable mapping, the top of
/// the stack, the start of the heap.
pub struct Layout {
    /// Start of the first executable mapping other than the vDSO.
    pub start_code: usize,
    /// End of that mapping (exclusive).
    pub end_code: usize,
    /// The top of the stack, `STACK_TOP` (Linux's `mm->start_stack`).
    pub start_stack: usize,
    /// Where the heap starts (`mm->start_brk`).
    pub start_brk: usize,
}

/// The code, stack and heap addresses of `mm`, under `mmap_lock`.
pub fn layout(mm: &Mm) -> Layout {
    let map = mm.mmap_lock_readonly();
    let code = map
        .vmas
        .iter()
        .find(|(start, _, vma)| vma.flags & VM_EXEC != 0 && *start != map.vdso);
    Layout {
        start_code: code.map_or(0, |(s, _, _)| s),
        end_code: code.map_or(0, |(_, e, _)| e),
        start_stack: STACK_TOP,
        start_brk: map.start_brk,
    }
}

/// The memory lines of `/proc/PID/status`, in bytes (Linux: `task_mem`).
pub struct MmCounters {
    /// VmSize: everything mapped.
    pub size: usize,
    /// RssAnon and RssShmem (tmpfs is all the page cache faultline has,
    /// and Linux counts tmpfs pages as shmem, not file, pages).
    pub rss_anon: usize,
    /// RssShmem: bytes of tmpfs and shared anonymous folios mapped.
    pub rss_shmem: usize,
    /// VmData (private writable, not stack), VmStk, VmExe (executable,
    /// not writable).
    pub data: usize,
    /// VmStk: bytes of stack VMAs (`VM_GROWSDOWN`).
    pub stack: usize,
    /// VmExe: bytes of executable, non-writable VMAs.
    pub exe: usize,
    /// VmPTE: page-table pages.
    pub pte: usize,
    /// VmLck: bytes of VM_LOCKED mappings (Linux: `mm->locked_vm`).
    pub locked: usize,
}

/// The counters of `mm`, read off its VMAs and page tables.
pub fn counters(mm: &Mm) -> MmCounters {
    let map = mm.mmap_lock_readonly();
    let mut c = MmCounters {
        size: 0,
        rss_anon: 0,
        rss_shmem: 0,
        data: 0,
        stack: 0,
        exe: 0,
        pte: mm.pt_pages.load(core::sync::atomic::Ordering::Relaxed) * PAGE_SIZE,
        locked: crate::mm::mlock::locked_bytes(&map, 0, USER_TOP),
    };
    for (start, end, vma) in map.vmas.iter() {
        let len = end - start;
        c.size += len;
        let f = vma.flags;
        if f & VM_GROWSDOWN != 0 {
            c.stack += len;
        } else if f & VM_WRITE != 0 && f & VM_SHARED == 0 {
            c.data += len;
        } else if f & VM_EXEC != 0 && f & VM_WRITE == 0 {
            c.exe += len;
        }
    }
    (c.rss_anon, c.rss_shmem) = rss(mm);
    c
}

/// Bytes mapped, anonymous and shmem (Linux: `get_mm_counter`'s
/// MM_ANONPAGES and MM_SHMEMPAGES), read off the page tables under the
/// page-table lock alone, so the OOM killer can weigh a process whose
/// `mmap_lock` is taken.
pub fn rss(mm: &Mm) -> (usize, usize) {
    let _ptl = mm.page_table_lock.lock();
    let (mut anon, mut shmem) = (0, 0);
    for_each_mapping(mm, 0, USER_TOP, &mut |_, pte, bytes| {
        if is_zero_pfn(pte.addr().pfn()) {
            return;
        }
        // SAFETY: for_each_mapping's entries are read under their locks.
        if unsafe { Folio::from_pfn(pte.addr().pfn()) }.is_anon() {
            anon += bytes;
        } else {
            shmem += bytes;
        }
    });
    (anon, shmem)
}

/// `/proc/self/smaps` for `mm`.
pub fn smaps(mm: &Mm) -> String {
    let map = mm.mmap_lock_readonly();
    let _ptl = mm.page_table_lock.lock();
    // How many of each folio's mappings are this address space's own.
    let mut in_mm = BTreeMap::new();
    for_each_mapping(mm, 0, USER_TOP, &mut |_, pte, _| {
        // SAFETY: for_each_mapping's entries are read under their locks.
        let head = unsafe { Folio::from_pfn(pte.addr().pfn()) }.pfn();
        *in_mm.entry(head).or_insert(0) += 1;
    });
    let mut out = String::new();
    for (start, end, vma) in map.vmas.iter() {
        header(&mut out, &map, start, end, vma);
        let u = usage(mm, start, end, &in_mm);
        let rows = [
            ("Size", end - start),
            ("KernelPageSize", PAGE_SIZE),
            ("MMUPageSize", PAGE_SIZE),
            ("Rss", u.rss),
            ("Shared_Clean", u.shared_clean),
            ("Shared_Dirty", u.shared_dirty),
            ("Private_Clean", u.private_clean),
            ("Private_Dirty", u.private_dirty),
            ("Referenced", u.referenced),
            ("Anonymous", u.anonymous),
            ("AnonHugePages", u.anon_huge_pages),
            ("ShmemPmdMapped", u.shmem_pmd_mapped),
            ("FilePmdMapped", 0),
            ("ContPTE", u.contpte),
        ];
        for (name, bytes) in rows {
            // Linux's layout: "Name:" padded to 16 columns, value to 8.
            let pad = 15usize.saturating_sub(name.len());
            let _ = writeln!(out, "{name}:{:pad$}{:>8} kB", "", bytes / 1024);
        }
        vm_flags_line(&mut out, vma.flags);
    }
    out
}

/// The `VmFlags:` line ending a VMA's smaps block: the two-letter name of
/// each flag set, in bit order, each followed by a space (Linux:
/// `show_smap_vma_flags`).
fn vm_flags_line(out: &mut String, flags: u64) {
    out.push_str("VmFlags: ");
    for (name, bit) in VM_FLAG_NAMES {
        if flags & bit != 0 {
            out.push_str(name);
            out.push(' ');
        }
    }
    out.push('\n');
}
