//! The generic page-fault handler (Linux: `mm/memory.c`'s
//! `handle_mm_fault`, `do_anonymous_page`, `do_fault`, `do_read_fault`,
//! `do_cow_fault`, `do_shared_fault`, `finish_fault`, `do_wp_page`).
//! Below `handle_mm_fault`, every step takes the one `VmFault`.
//!
//! The architecture's handler (`arch/aarch64/fault.rs`) has locked the VMA
//! and checked the access; here a fault maps one anonymous or copied page,
//! as much of a page-cache folio as the VMA, page table and file allow
//! (`finish_fault`), or a whole 2M folio of a shared file mapping with one
//! PMD block; a read fault first maps the cached pages around it
//! (fault-around). Read it top to bottom: find or allocate the page table,
//! then decide by what the entry holds.

use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::arch::cont_block;
use crate::arch::contpte::CONT_PTES;
use crate::arch::desc::Pte;
use crate::arch::pgtable::{pmdp_set_access_flags, ptep_get, ptep_set_access_flags};
use crate::mm::addr::{PhysAddr, PAGE_SIZE, PMD_SIZE};
use crate::mm::fault_range::{fault_around_window, finish_fault_range, none_run};
use crate::mm::folio::{self, Folio};
use crate::mm::huge_memory;
use crate::mm::huge_memory::order::PMD_ORDER;
use crate::mm::memory::{replace_pte, set_pmd, set_pte_range};
use crate::mm::mm_struct::Mm;
use crate::mm::pgtable::{self, Alloc, Level, PageTable, PgtableMem};
use crate::mm::vm_fault::VmFault;
use crate::mm::vma::{Vma, VM_EXEC, VM_READ, VM_SHARED, VM_WRITE};
use crate::mm::vmstat;
use uapi::signal::BUS_ADRERR;

/// What the faulting access asked for, decoded from the abort's ESR; it
/// must be allowed by the VMA's `VM_READ`, `VM_WRITE` or `VM_EXEC`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load (a data abort with ESR's WnR clear).
    Read,
    /// A store (a data abort with WnR set; Linux's `FAULT_FLAG_WRITE`).
    Write,
    /// An instruction fetch (an instruction abort; Linux's
    /// `FAULT_FLAG_INSTRUCTION`).
    Exec,
}

impl Access {
    /// Does a VMA with `vm_flags` allow this access (Linux: the
    /// `vm_flags & vma->vm_flags` test of arm64 `do_page_fault`)?
    pub fn allowed_by(self, vm_flags: u64) -> bool {
        let needed = match self {
            Access::Read => VM_READ,
            Access::Write => VM_WRITE,
            Access::Exec => VM_EXEC,
        };
        vm_flags & needed != 0
    }
}

/// Why a fault could not be resolved: the signal and `si_code` it becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FaultError {
    /// SIGSEGV with this `si_code`: `SEGV_MAPERR` (no VMA) or `SEGV_ACCERR`
    /// (the VMA forbids the access); Linux's `VM_FAULT_SIGSEGV`.
    Segv(i32),
    /// SIGBUS with this `si_code`, e.g. `BUS_ADRERR` for a file page past EOF
    /// (Linux's `VM_FAULT_SIGBUS`).
    Bus(i32),
    /// No memory for a page or a page table (Linux: `VM_FAULT_OOM`).
    Oom,
    /// The handler must drop its lock and wait before trying again (Linux:
    /// `VM_FAULT_RETRY`); only `do_page_fault` sees it.
    Retry,
}

impl FaultError {
    /// SIGBUS for a file page past the end of the file (Linux:
    /// `VM_FAULT_SIGBUS` from `->fault`).
    pub const PAST_EOF: FaultError = FaultError::Bus(BUS_ADRERR);
}

/// Linux: `handle_mm_fault` -> `__handle_mm_fault`: walk down to the PMD,
/// describe the fault (`VmFault`); on an empty PMD entry map an anonymous
/// PMD block if one fits, on a read-only block take a write
/// (`do_huge_pmd_wp_page`), else go on to the PTE level, with the PTE
/// table unless a file's 2M folio may yet be mapped by a block.
pub fn handle_mm_fault(
    mm: &Mm,
    vma: &Vma,
    range: Range<usize>,
    addr: usize,
    access: Access,
) -> Result<(), FaultError> {
    // One walk down to the PMD, shared by the PMD and the PTE cases
    // (Linux: `pgd_offset`, `pud_alloc`, `pmd_alloc`), most often
    // remembered from an earlier fault in the same 1G.
    match mm.pmd_cache.get(addr) {
        Some(pmds) => handle_mm_fault_at(mm, vma, range, addr, access, pmds),
        // By value (`move`): borrowing the arguments would put them in
        // memory on the usual fault's path too.
        None => walk_to_pmd(mm, addr, move |pmds| {
            handle_mm_fault_at(mm, vma, range, addr, access, pmds)
        }),
    }
}

/// `handle_mm_fault`'s walk from the PGD to the PMD table for `addr`,
/// allocating what is missing, which it then remembers, before going on
/// with `go_on`. Out of line, and ending in the rest of the fault rather
/// than returning to it: most faults find the table in `mm.pmd_cache`,
/// and need keep no registers across a walk they do not make.
#[cold]
#[inline(never)]
fn walk_to_pmd(
    mm: &Mm,
    addr: usize,
    go_on: impl FnOnce(PhysAddr) -> Result<(), FaultError>,
) -> Result<(), FaultError> {
    let mut mem = mm;
    let mut walk = |table, level| {
        pgtable::table_below(&mut mem, table, level, addr, Alloc::IfMissing).ok_or(FaultError::Oom)
    };
    let puds = walk(mm.pgd, Level::Pgd)?;
    let pmds = walk(puds, Level::Pud)?;
    mm.pmd_cache.set(addr, pmds);
    go_on(pmds)
}

/// [`handle_mm_fault`] from the PMD table `pmds` on.
#[inline(always)]
fn handle_mm_fault_at(
    mm: &Mm,
    vma: &Vma,
    range: Range<usize>,
    addr: usize,
    access: Access,
    pmds: PhysAddr,
) -> Result<(), FaultError> {
    let mut vmf = VmFault {
        mm,
        vma,
        pgoff: vma.pgoff_of(range.start, addr),
        range,
        address: addr,
        access,
        // SAFETY: `pmds` is this mm's, from its own walk.
        pmd: &unsafe { mm.table_at(pmds) }[Level::Pmd.index(addr)],
        pmds,
        pte: None,
        orig_pte: Pte(0),
    };
    let pmd = Pte(vmf.pmd.load(Ordering::Acquire));
    if pmd.is_table() {
        // The usual fault: the entry just read names the PTE table (Linux:
        // `pte_offset_map` from the `pmdval` it read).
        // SAFETY: a table of this mm's, as its own PMD entry says; the
        // VMA we hold locked keeps it in place.
        vmf.pte = Some(unsafe { mm.table_at(pmd.addr()) });
    } else if let Some(done) = handle_pmd_level(&mut vmf, pmd) {
        return done;
    }
    handle_pte_fault(&mut vmf)
}

/// `handle_mm_fault` where the PMD entry `pmd` names no PTE table: a
/// block's fault, or the first fault in this 2M. Some: the fault ends
/// here; None: go on at the PTE level. Out of line, as are the other
/// paths the usual fault does not take, so that it saves few registers.
#[cold]
#[inline(never)]
fn handle_pmd_level(vmf: &mut VmFault, pmd: Pte) -> Option<Result<(), FaultError>> {
    if let Some(done) = handle_pmd_fault(vmf, pmd) {
        return Some(done);
    }
    // Where a file fault may still map a PMD block, the PTE table
    // waits for `finish_fault` (Linux: `vmf->pte` stays NULL).
    let block_may_fit = pmd.is_none() && pmd_block_fits(vmf);
    if block_may_fit {
        return None;
    }
    match pte_alloc(vmf) {
        Ok(true) => None,
        Ok(false) => Some(Ok(())), // a block another thread installed meanwhile
        Err(e) => Some(Err(e)),
    }
}

/// Finds or installs the PTE table under the fault's PMD entry (Linux:
/// `pte_alloc`). Ok(false): the entry became a PMD block meanwhile
/// (another thread's fault, or a block being changed), and the access
/// should simply run again.
#[inline(always)] // every fault comes this way: no call of its own
pub fn pte_alloc(vmf: &mut VmFault) -> Result<bool, FaultError> {
    let mut mem: &Mm = vmf.mm;
    let below = pgtable::table_below(
        &mut mem,
        vmf.pmds,
        Level::Pmd,
        vmf.address,
        Alloc::IfMissing,
    );
    let Some(table) = below else {
        let filled = !Pte(vmf.pmd.load(Ordering::Acquire)).is_none();
        return if filled {
            Ok(false)
        } else {
            Err(FaultError::Oom)
        };
    };
    // SAFETY: `table` is this mm's, from its own walk.
    vmf.pte = Some(unsafe { vmf.mm.table_at(table) });
    Ok(true)
}

/// The fault's level-2 entry `pmd` is no table (Linux: the PMD half of
/// `__handle_mm_fault`): if empty, map an anonymous PMD block where one
/// fits (a file's waits for its folio: `finish_fault`); a write to a
/// read-only block copies or reuses it (`do_huge_pmd_wp_page`); a write to
/// a clean one dirties it; any other fault on a block is spurious, or the
/// block is being changed (an invalid entry), and the access retries.
/// None: go on to the PTE level. Kept out of `handle_mm_fault`, whose
/// PTE-level paths it must not slow.
#[inline(never)]
fn handle_pmd_fault(vmf: &VmFault, pmd: Pte) -> Option<Result<(), FaultError>> {
    if pmd.is_none() {
        // A file's block is `finish_fault`'s to map, once `->fault` has
        // found the folio (Linux: shmem has no `huge_fault`).
        return match vmf.vma.file {
            None => do_huge_pmd_anonymous_page(vmf),
            Some(_) => None,
        };
    }
    if !pmd.is_valid() {
        return Some(Ok(())); // being changed: retry
    }
    if vmf.access == Access::Write && !pmd.prot().is_writable() {
        return do_huge_pmd_wp_page(vmf, pmd);
    }
    huge_pmd_set_accessed(vmf);
    Some(Ok(()))
}

/// A fault on a valid block that needs no copy (Linux:
/// `huge_pmd_set_accessed`): a write to a clean block where the MMU does
/// not set the dirty state itself, or a spurious fault. The block is made
/// young, and dirty for a write.
fn huge_pmd_set_accessed(vmf: &VmFault) {
    let _ptl = vmf.mm.page_table_lock.lock();
    let haddr = vmf.address & !(PMD_SIZE - 1);
    pmdp_set_access_flags(vmf.mm, vmf.pmd, haddr, vmf.access == Access::Write);
}

/// Decides by what the entry holds (Linux: `handle_pte_fault`): an empty
/// entry is a first touch (`do_pte_missing`: anonymous memory, or a file's
/// `do_fault`), a read-only one under a write is copy-on-write.
fn handle_pte_fault(vmf: &mut VmFault) -> Result<(), FaultError> {
    let Some(table) = vmf.pte else {
        return do_fault(vmf); // no table yet: a file's first touch
    };
    vmf.orig_pte = ptep_get(table, Level::Pte.index(vmf.address));
    if vmf.orig_pte.is_none() {
        return match vmf.vma.file {
            None => do_anonymous_page(vmf),
            Some(_) => do_fault(vmf),
        };
    }
    if vmf.access == Access::Write && !vmf.orig_pte.prot().is_writable() {
        return do_wp_page(vmf);
    }
    pte_set_accessed(vmf);
    Ok(())
}

/// A fault on a present entry that needs no copy (Linux: the end of
/// `handle_pte_fault`): a write to a clean entry, where the MMU does not
/// set the dirty state itself, or an entry another thread mapped first.
/// The entry is made young, and dirty for a write. Out of line: the
/// first-touch paths above must not pay for it.
#[cold]
#[inline(never)]
fn pte_set_accessed(vmf: &VmFault) {
    let _ptl = vmf.ptl();
    let write = vmf.access == Access::Write;
    ptep_set_access_flags(vmf.mm, vmf.table(), vmf.address, write);
}

/// May a shared file's 2M folio be mapped by one PMD block at this fault
/// (Linux: `thp_vma_suitable_order` for `PMD_ORDER`)? The 2M-aligned range
/// around the address lies in the VMA, at a file offset where such a
/// folio starts. We do it for shared mappings only, where no write ever
/// needs a private copy.
fn pmd_block_fits(vmf: &VmFault) -> bool {
    let (vma, range) = (vmf.vma, &vmf.range);
    let haddr = vmf.address & !(PMD_SIZE - 1);
    let nr = (PMD_SIZE / PAGE_SIZE) as u64;
    vma.file.is_some()
        && vma.is_shared()
        && haddr >= range.start
        && haddr + PMD_SIZE <= range.end
        && vma.pgoff_of(range.start, haddr).is_multiple_of(nr)
}

/// Maps all of `folio`, the fault's 2M page-cache folio, with one block
/// in the empty PMD entry (Linux: `do_set_pmd`, from `finish_fault`).
/// None: the folio is not the 2M-aligned one the block needs, so map
/// pages. A shmem folio may reach past i_size and still map whole
/// (Linux's shmem exception): its tail reads as zeros rather than SIGBUS.
pub fn do_set_pmd(vmf: &VmFault, folio: &Folio, page: usize) -> Option<Result<(), FaultError>> {
    let haddr = vmf.address & !(PMD_SIZE - 1);
    if folio.order() != PMD_ORDER || page != (vmf.address - haddr) / PAGE_SIZE {
        return None;
    }
    let _ptl = vmf.mm.page_table_lock.lock();
    if folio.is_cached() && vmf.pmd.load(Ordering::Acquire) == 0 {
        set_pmd(
            vmf.pmd,
            folio.clone(),
            vmf.vma.page_prot(false),
            vmf.access == Access::Write,
        );
    }
    Some(Ok(()))
}

/// May `finish_fault` map more of a folio than the faulting page? Seed
/// 000's change; off (`finish_fault=single` on the command line, or 0 in
/// `/sys/kernel/mm/finish_fault/multi_page`) maps one page per fault, as
/// before it, for comparison.
pub static FINISH_FAULT_MULTI: AtomicBool = AtomicBool::new(true);

/// Maps page `page` of `folio` at the fault's address and, if allowed, the
/// largest range of the folio around it inside `allowed` (the VMA, or the
/// folio itself), the PMD and the run of empty entries (Linux:
/// `finish_fault` after seed 000). With no PTE table yet, a 2M folio is
/// mapped by one PMD block (`do_set_pmd`) and anything else gets its
/// table first. The run is found under the table's lock; if another
/// thread filled the faulting entry first there is nothing to do.
fn finish_fault(
    vmf: &mut VmFault,
    allowed: Range<usize>,
    folio: Folio,
    page: usize,
) -> Result<(), FaultError> {
    if vmf.pte.is_none() {
        if let Some(done) = finish_fault_pmd_none(vmf, &folio, page) {
            return done;
        }
    }
    let (table, addr) = (vmf.table(), vmf.address);
    let folio_start = addr - page * PAGE_SIZE;
    // The switch is seed 000's, about a folio the fault found; a new
    // anonymous folio is mapped whole whatever it says, as Linux's
    // do_anonymous_page maps all it allocates (`allowed` is the folio, or
    // the one page of a private copy).
    let one_page =
        folio.order() == 0 || !(FINISH_FAULT_MULTI.load(Ordering::Relaxed) || folio.is_anon());
    let range = if one_page {
        addr..addr + PAGE_SIZE
    } else {
        // No EOF bound: a shmem folio maps whole even where it reaches past
        // i_size (Linux's shmem exception); its tail reads as zeros.
        let folio_va = folio_start..folio_start + folio.size();
        finish_fault_range(addr, allowed, folio_va, usize::MAX)
    };
    let none = |va| table[Level::Pte.index(va)].load(Ordering::Relaxed) == 0;
    let _ptl = vmf.ptl();
    if !folio.has_mapping() {
        return Ok(()); // truncated since we found it: the access faults again
    }
    // One page needs one look at its entry (Linux: `vmf_pte_changed`).
    // Most often a range's entries are all empty too: one look, under the
    // lock, says so (Linux: `pte_range_none`); else the run of empty ones
    // around `addr`.
    let run = if one_page {
        if none(addr) {
            range
        } else {
            addr..addr
        }
    } else if all_none(table, range.clone()) {
        range
    } else {
        none_run(range, addr, none)
    };
    if !run.is_empty() {
        let first = page - (addr - run.start) / PAGE_SIZE;
        let nr = run.len() / PAGE_SIZE;
        set_pte_range(vmf, &folio, first, nr, run.start);
        folio.into_mappings(nr); // the fault's reference is the first entry's
    }
    // No barrier to make the entries visible to the walker: Linux's
    // `__set_pte` has one for kernel entries only. The access that faulted
    // runs again after the eret; should the walker not see its entry yet,
    // it faults once more and finds the entry there (`pte_set_accessed`).
    Ok(())
}

/// `finish_fault` with no PTE table yet (Linux: its `pmd_none` branch):
/// a 2M folio is mapped by one block (`do_set_pmd`), and for anything
/// else the table is made. None: go on and map PTEs. Out of line: the
/// first fault in a 2M range of a file comes here, no other.
#[cold]
#[inline(never)]
fn finish_fault_pmd_none(
    vmf: &mut VmFault,
    folio: &Folio,
    page: usize,
) -> Option<Result<(), FaultError>> {
    if let Some(done) = do_set_pmd(vmf, folio, page) {
        return Some(done);
    }
    match pte_alloc(vmf) {
        Ok(true) => None,
        Ok(false) => Some(Ok(())), // a block another thread installed meanwhile
        Err(e) => Some(Err(e)),
    }
}

/// Are the entries for `[va range)` of `table` all empty?
fn all_none(table: &PageTable, range: Range<usize>) -> bool {
    let first = Level::Pte.index(range.start);
    let entries = &table[first..first + range.len() / PAGE_SIZE];
    let load = |e: &AtomicU64| e.load(Ordering::Relaxed);
    // The usual case, a 64K folio's 16 entries: read in pairs, all ORed,
    // no early exit.
    if let Ok(block) = <&[AtomicU64; CONT_PTES]>::try_from(entries) {
        return cont_block::none(block);
    }
    entries.iter().all(|e| load(e) == 0)
}

/// `finish_fault` for a fault that maps exactly one page: anonymous memory
/// and private copies.
fn finish_fault_one(vmf: &mut VmFault, folio: Folio) -> Result<(), FaultError> {
    let one = vmf.address..vmf.address + PAGE_SIZE;
    finish_fault(vmf, one, folio, 0)
}

/// First touch of anonymous memory: a new zeroed folio, as large as the
/// knobs allow (Linux: `do_anonymous_page` -> `alloc_anon_folio`): the
/// highest allowed order whose aligned range around the address lies in
/// the VMA with no entry yet, falling back to smaller orders when memory is
/// short, down to one page. It is mapped whole, so 64K comes as one
/// contiguous block. Where we simplify: a copy-on-write of a large
/// anonymous folio copies one page at a time and never reuses the folio in
/// place. Out of line, as `do_wp_page`: see `handle_pmd_level`.
#[inline(never)]
fn do_anonymous_page(vmf: &mut VmFault) -> Result<(), FaultError> {
    let (vma, addr) = (vmf.vma, vmf.address);
    vma.anon_vma.prepare();
    // PMD-sized folios are `do_huge_pmd_anonymous_page`'s, mapped by a block.
    let orders = huge_memory::anon_vma_orders(vma.flags).without(PMD_ORDER);
    for order in orders.orders().rev() {
        let size = PAGE_SIZE << order;
        let start = addr & !(size - 1);
        if start < vmf.range.start
            || start + size > vmf.range.end
            || !all_none(vmf.table(), start..start + size)
        {
            continue;
        }
        let Some(folio) = Folio::alloc(order) else {
            vmstat::FOLIO_FALLBACK[order as usize].inc();
            vmstat::MTHP_ANON_FAULT_FALLBACK[order as usize].inc();
            continue;
        };
        vmstat::MTHP_ANON_FAULT_ALLOC[order as usize].inc();
        folio.mark_anon();
        let page = (addr - start) / PAGE_SIZE;
        return finish_fault(vmf, start..start + size, folio, page);
    }
    let folio = Folio::alloc(0).ok_or(FaultError::Oom)?;
    folio.mark_anon();
    finish_fault_one(vmf, folio)
}

/// First touch of anonymous memory in a 2M the VMA covers and whose PMD
/// entry is empty, where the knobs allow PMD-sized folios: a new zeroed 2M
/// folio mapped by one PMD block, read faults included, as Linux does with
/// `use_zero_page` 0 (Linux: `do_huge_pmd_anonymous_page`). When no 2M is
/// free, after splitting the partly unmapped large folios queued for it,
/// None: `thp_fault_fallback`, and the PTE level takes smaller folios.
fn do_huge_pmd_anonymous_page(vmf: &VmFault) -> Option<Result<(), FaultError>> {
    let (vma, range) = (vmf.vma, &vmf.range);
    let haddr = vmf.address & !(PMD_SIZE - 1);
    if haddr < range.start
        || haddr + PMD_SIZE > range.end
        || !huge_memory::anon_vma_orders(vma.flags).contains(PMD_ORDER)
    {
        return None;
    }
    let folio = Folio::alloc(PMD_ORDER).or_else(|| {
        (huge_memory::split::deferred_split_scan() > 0)
            .then(|| Folio::alloc(PMD_ORDER))
            .flatten()
    });
    let Some(folio) = folio else {
        vmstat::THP_FAULT_FALLBACK.inc();
        vmstat::MTHP_ANON_FAULT_FALLBACK[PMD_ORDER as usize].inc();
        return None;
    };
    let mut mem: &Mm = vmf.mm;
    let Some(table) = mem.alloc_table() else {
        return Some(Err(FaultError::Oom));
    };
    vmstat::THP_FAULT_ALLOC.inc();
    vmstat::MTHP_ANON_FAULT_ALLOC[PMD_ORDER as usize].inc();
    folio.mark_anon();
    huge_memory::pmd::set_huge_pmd(vmf.mm, vmf.pmd, folio, vma.page_prot(true), table);
    Some(Ok(()))
}

/// A write to a read-only PMD block (Linux: `wp_huge_pmd` ->
/// `do_huge_pmd_wp_page`): an anonymous folio that is this block's alone
/// (its pages exclusive, or no one else holds it once fork's child has
/// gone) is reused in place, made writable as the VMA allows; anything else
/// is taken apart (`pmd::split_huge_pmd`) and None lets the PTE level copy
/// the one page written, as Linux 6.12 does.
fn do_huge_pmd_wp_page(vmf: &VmFault, orig: Pte) -> Option<Result<(), FaultError>> {
    let haddr = vmf.address & !(PMD_SIZE - 1);
    let _ptl = vmf.mm.page_table_lock.lock();
    if vmf.pmd.load(Ordering::Acquire) != orig.0 {
        return Some(Ok(())); // changed under us: let the access retry
    }
    // SAFETY: the block holds a reference, kept under the lock.
    let folio = unsafe { Folio::from_pfn(orig.addr().pfn()) };
    let reuse = folio.is_anon()
        && (folio::page_anon_exclusive(folio.pfn())
            || folio.refcount() == 2 && folio.mapcount() == 1);
    if reuse {
        folio.set_anon_exclusive(true);
        let new = Pte::block(orig.addr(), vmf.vma.page_prot(true));
        huge_memory::pmd::set_pmd_at(vmf.mm, vmf.pmd, haddr, new);
        return Some(Ok(()));
    }
    huge_memory::pmd::split_huge_pmd(vmf.mm, vmf.pmd, haddr);
    None
}

/// A first touch of a file's page (Linux: `do_fault`): a read maps the
/// page cache around it (`do_read_fault`), a write to a private mapping
/// gets its own copy (`do_cow_fault`), a write to a shared one maps the
/// page-cache page writable (`do_shared_fault`).
fn do_fault(vmf: &mut VmFault) -> Result<(), FaultError> {
    match vmf.access {
        Access::Write if !vmf.vma.is_shared() => do_cow_fault(vmf),
        Access::Write => do_shared_fault(vmf),
        Access::Read | Access::Exec => do_read_fault(vmf),
    }
}

/// The folio holding the fault's page of the VMA's file, and the page's
/// index in it, from the file's `->fault` (Linux: `__do_fault`; tmpfs's
/// is `shmem_fault`); SIGBUS for a file that cannot be mapped by pages.
fn __do_fault(vmf: &VmFault) -> Result<(Folio, usize), FaultError> {
    vmf.vma.vm_ops().ok_or(FaultError::PAST_EOF)?.fault(vmf)
}

/// A write to a page of a shared file mapping: map the page-cache page
/// itself, writable (Linux: `do_shared_fault`).
fn do_shared_fault(vmf: &mut VmFault) -> Result<(), FaultError> {
    map_file_page(vmf)
}

/// The file's page, from its `->fault`, mapped by `finish_fault` with as
/// much of its folio as may be (dirty, for a write: a shared mapping's).
/// `do_shared_fault`'s work, and `do_read_fault`'s when fault-around did
/// not map the page.
fn map_file_page(vmf: &mut VmFault) -> Result<(), FaultError> {
    let (folio, page) = __do_fault(vmf)?;
    if vmf.access == Access::Write {
        folio.mark_dirty(); // Linux: `fault_dirty_shared_page`
    }
    let vma_range = vmf.range.clone();
    finish_fault(vmf, vma_range, folio, page)
}

/// Bytes around a read fault to map from the page cache (Linux:
/// `fault_around_bytes`, in debugfs; here `/sys/kernel/debug/
/// fault_around_bytes`). A power of two from 4096 (off) to 2M.
pub static FAULT_AROUND_BYTES: AtomicUsize = AtomicUsize::new(64 * 1024);

/// A read fault on a file: first map what the page cache already holds
/// around it (fault-around), then, if that did not cover the faulting
/// page, fault it in and map it (Linux: `do_read_fault`).
fn do_read_fault(vmf: &mut VmFault) -> Result<(), FaultError> {
    if FAULT_AROUND_BYTES.load(Ordering::Relaxed) > PAGE_SIZE {
        do_fault_around(vmf);
        // Mapped by a block, or its entry filled: done.
        let mapped = match vmf.pte {
            Some(table) => table[Level::Pte.index(vmf.address)].load(Ordering::Acquire) != 0,
            None => Pte(vmf.pmd.load(Ordering::Acquire)).is_valid(),
        };
        if mapped {
            return Ok(());
        }
    }
    map_file_page(vmf)
}

/// The fault-around window (Linux: `do_fault_around`): `fault_around_bytes`
/// aligned around the address, cut to the VMA and the page table, as file
/// pages for the file's `->map_pages` (tmpfs's: `filemap_map_pages`).
#[inline(never)] // its loop keeps its registers, whatever handle_mm_fault holds
fn do_fault_around(vmf: &mut VmFault) {
    let Some(ops) = vmf.vma.vm_ops() else {
        return;
    };
    let bytes = FAULT_AROUND_BYTES.load(Ordering::Relaxed);
    let window = fault_around_window(vmf.address, vmf.range.clone(), bytes);
    let (vma, start) = (vmf.vma, vmf.range.start);
    ops.map_pages(
        vmf,
        vma.pgoff_of(start, window.start),
        vma.pgoff_of(start, window.end) - 1,
    );
}

/// Allocates a private anonymous copy of `src` (a whole page).
fn copy_page(src: &Folio, page: usize) -> Result<Folio, FaultError> {
    let copy = Folio::alloc(0).ok_or(FaultError::Oom)?;
    copy.mark_anon();
    let mut buf = [0u8; 512];
    for chunk in 0..PAGE_SIZE / buf.len() {
        src.read_at(page * PAGE_SIZE + chunk * buf.len(), &mut buf);
        copy.write_at(chunk * buf.len(), &buf);
    }
    Ok(copy)
}

/// Write to a not-yet-mapped page of a private file mapping: copy the
/// file's page into a new private page (Linux: `do_cow_fault`).
fn do_cow_fault(vmf: &mut VmFault) -> Result<(), FaultError> {
    vmf.vma.anon_vma.prepare();
    let (folio, page) = __do_fault(vmf)?;
    let copy = copy_page(&folio, page)?;
    finish_fault_one(vmf, copy)
}

/// Write to a present read-only page of a writable VMA: copy-on-write
/// (Linux: `do_wp_page`). An anonymous page nobody else maps is reused in
/// place; anything else (a page-cache page, a page shared since fork) is
/// copied.
#[inline(never)]
fn do_wp_page(vmf: &VmFault) -> Result<(), FaultError> {
    vmf.vma.anon_vma.prepare();
    let (mm, table, addr) = (vmf.mm, vmf.table(), vmf.address);
    let _ptl = vmf.ptl();
    let pte = ptep_get(table, Level::Pte.index(addr));
    if pte.is_none() || pte.prot().is_writable() {
        return Ok(()); // changed under us: let the access retry
    }
    let pfn = pte.addr().pfn();
    // SAFETY: a valid entry, read under its table's lock, holds a
    // reference on its folio.
    let folio = unsafe { Folio::from_pfn(pfn) };
    // The page is this entry's alone: marked so, or (Linux:
    // `wp_can_reuse_anon_folio`) a small folio whose only references are
    // ours and the entry's, once fork's other holder has gone.
    let exclusive = folio.is_anon()
        && vmf.vma.flags & VM_SHARED == 0
        && (folio::page_anon_exclusive(pfn) || folio.nr_pages() == 1 && folio.refcount() == 2);
    let prot = vmf.vma.page_prot(true);
    if exclusive {
        folio::set_page_anon_exclusive(pfn, true);
        drop(replace_pte(mm, table, addr, Pte::page(pte.addr(), prot)));
        folio.into_mapping();
        return Ok(());
    }
    let page = pfn - folio.pfn();
    let copy = copy_page(&folio, page)?;
    let new = Pte::page(copy.phys(), prot);
    drop(replace_pte(mm, table, addr, new));
    copy.into_mapping();
    Ok(())
}
