//! MMU registers and TLB maintenance: installing translation tables, asking
//! the hardware to translate (AT), invalidating TLB entries. Linux:
//! `arch/arm64/include/asm/tlbflush.h`, `arch/arm64/mm/proc.S`
//! (`idmap_cpu_replace_ttbr1`).
//!
//! Registers and barriers go through aarch64-cpu; TLBI and AT stay `asm!`
//! (the crate has no form of them), as does the TTBR1 switch, which has to
//! run from the identity map.

use core::arch::{asm, global_asm};

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Readable, Writeable, ID_AA64MMFR0_EL1, PAR_EL1, TTBR0_EL1};

use core::sync::atomic::Ordering::Relaxed;

use super::cpufeature;
use super::tlbi_range::{self, Tlbi};
use crate::mm::addr::{virt_to_phys, PhysAddr};

/// Makes page-table writes visible to the hardware walker (DSB ISHST), as
/// Linux's `__set_pte` does after writing a valid entry.
#[inline(always)]
pub fn publish_table_writes() {
    barrier::dsb(barrier::ISHST);
    barrier::isb(barrier::SY);
}

/// The TLBI operand for page `va`: `VA[55:12]` in bits 43:0.
fn tlbi_page(va: usize) -> u64 {
    (va as u64 >> 12) & ((1 << 44) - 1)
}

/// Invalidates the TLB entries for one kernel page on all CPUs
/// (Linux: `flush_tlb_kernel_range` for one page; global entries, any ASID).
pub fn flush_tlb_kernel_page(va: usize) {
    barrier::dsb(barrier::ISHST);
    // SAFETY: TLB maintenance only.
    unsafe { asm!("tlbi vaae1is, {}", in(reg) tlbi_page(va), options(nostack)) };
    barrier::dsb(barrier::ISH);
    barrier::isb(barrier::SY);
}

extern "C" {
    fn __replace_ttbr1(ttbr1: u64);
}

// Switching TTBR1 while running through it could meet TLB entries of the
// old and the new tables for the same VA (a TLB conflict), so, as Linux does,
// switch from the identity map: this code runs at its physical address
// through TTBR0 (the boot identity map), and returns via the high LR.
global_asm!(
    ".section .text",
    ".balign 4096",
    ".global __replace_ttbr1",
    "__replace_ttbr1:",
    "    dsb ishst",
    "    msr ttbr1_el1, x0",
    "    isb",
    "    tlbi vmalle1",
    "    dsb nsh",
    "    isb",
    "    ret",
);

/// Switches this CPU's kernel half to the tables at `pgd`. TTBR0 must still
/// hold the boot identity map.
pub fn replace_ttbr1(pgd: PhysAddr) {
    let pa = virt_to_phys(__replace_ttbr1 as *const () as usize);
    // SAFETY: reinterprets the physical address of __replace_ttbr1 as a
    // callable pointer through the identity map; the function uses no stack
    // and `pgd` maps the kernel exactly as before.
    unsafe {
        let f: unsafe extern "C" fn(u64) = core::mem::transmute(pa.0 as usize);
        f(pgd.0);
    }
}

/// Stops using the boot identity map in TTBR0: no user space yet, so EL0
/// addresses fault until a process installs its own tables.
pub fn clear_ttbr0() {
    // SAFETY: a safe write that memory safety still rests on: nothing runs
    // through TTBR0 once the kernel is at its high address; EPD0 is not
    // needed because a zero table faults every walk.
    TTBR0_EL1.set(virt_to_phys(EMPTY_PGD.0.as_ptr() as usize).0);
    barrier::isb(barrier::SY);
    // SAFETY: TLB maintenance only: drops this CPU's boot identity map.
    unsafe { asm!("tlbi vmalle1", options(nostack)) };
    barrier::dsb(barrier::NSH);
    barrier::isb(barrier::SY);
}

/// A 4K-aligned level-0 table whose 512 entries are all invalid, so every
/// walk through it faults.
#[repr(C, align(4096))]
struct EmptyTable([u64; 512]);
/// What TTBR0 holds, with ASID 0, while no user space runs: after boot and
/// for kernel threads (Linux: `reserved_pg_dir`).
static EMPTY_PGD: EmptyTable = EmptyTable([0; 512]);

/// Which permission an `AT` translation asks about.
#[derive(Copy, Clone, Debug)]
pub enum AtAccess {
    /// AT S1E1R: EL1 read.
    KernelRead,
    /// AT S1E1W: EL1 write.
    KernelWrite,
    /// AT S1E0R: an EL0 read, through the current TTBR0 and ASID.
    UserRead,
    /// AT S1E0W: an EL0 write.
    UserWrite,
}

/// Asks the MMU to translate `va` (Arm ARM: AT S1E1R/W, S1E0R/W, result in
/// PAR_EL1).
/// Ok(PA) on success, Err(PAR_EL1) when translation would fault.
pub fn at_translate(va: usize, access: AtAccess) -> Result<PhysAddr, u64> {
    // PAR_EL1 is read back with IRQs masked, so no interrupt handler's AT
    // can overwrite it in between.
    let daif = super::cpu::local_irq_save();
    // SAFETY: AT only updates PAR_EL1.
    unsafe {
        match access {
            AtAccess::KernelRead => asm!("at s1e1r, {}", in(reg) va, options(nostack)),
            AtAccess::KernelWrite => asm!("at s1e1w, {}", in(reg) va, options(nostack)),
            AtAccess::UserRead => asm!("at s1e0r, {}", in(reg) va, options(nostack)),
            AtAccess::UserWrite => asm!("at s1e0w, {}", in(reg) va, options(nostack)),
        }
    }
    barrier::isb(barrier::SY);
    let par = PAR_EL1.extract();
    super::cpu::local_irq_restore(daif);
    if par.matches_all(PAR_EL1::F::TranslationAborted) {
        Err(par.get())
    } else {
        Ok(PhysAddr(
            (par.read(PAR_EL1::PA) << 12) | (va as u64 & 0xfff),
        ))
    }
}

/// ASID width in bits (ID_AA64MMFR0_EL1.ASIDBits; TCR_EL1.AS is set to
/// match in boot.S).
pub fn asid_bits() -> u32 {
    if ID_AA64MMFR0_EL1.matches_all(ID_AA64MMFR0_EL1::ASIDBits::Bits_16) {
        16
    } else {
        8
    }
}

/// Runs user space through `pgd`, tagged with `asid` (Linux: `cpu_switch_mm`).
/// No TLB flush: entries of other address spaces carry other ASIDs.
pub fn switch_mm(pgd: PhysAddr, asid: u16) {
    // SAFETY: a safe write that memory safety still rests on: the kernel
    // runs through TTBR1 and TTBR0 only maps user space, so `pgd` must be
    // a user page table that lives as long as it is installed.
    // The table's address goes in as it is (a page-aligned PhysAddr has
    // nothing outside BADDR): through BADDR.val it would cost a mask.
    TTBR0_EL1.set(pgd.0 | TTBR0_EL1::ASID.val(asid.into()).value);
    barrier::isb(barrier::SY);
}

/// Points TTBR0 at the empty table with ASID 0, for kernel threads. No TLB
/// flush: nothing is ever cached for ASID 0.
pub fn switch_to_empty() {
    switch_mm(virt_to_phys(EMPTY_PGD.0.as_ptr() as usize), 0);
}

/// Invalidates one user page of address space `asid` on all CPUs, after
/// its entry was changed (Linux: `flush_tlb_page`).
pub fn flush_tlb_user_page(asid: u16, va: usize) {
    let arg = ((asid as u64) << 48) | tlbi_page(va);
    barrier::dsb(barrier::ISHST);
    // SAFETY: TLB maintenance only.
    unsafe { asm!("tlbi vale1is, {}", in(reg) arg, options(nostack)) };
    barrier::dsb(barrier::ISH);
    barrier::isb(barrier::SY);
}

/// Invalidates the TLB entries of user pages `[start, end)` of address
/// space `asid` on all CPUs, with one barrier pair for the batch (Linux:
/// `__flush_tlb_range`): by range operations where the CPU has them and
/// `tlbi_range` is on, else page by page.
pub fn flush_tlb_user_range(asid: u16, start: usize, end: usize) {
    let range = cpufeature::TLBI_RANGE.load(Relaxed);
    let pages = ((end - start) / 4096) as u64;
    // The cleared entries are visible to walkers before any invalidation.
    barrier::dsb(barrier::ISHST);
    for op in tlbi_range::ops(asid, start as u64 >> 12, pages, range) {
        match op {
            // SAFETY: TLB maintenance only.
            Tlbi::Page(x) => unsafe { asm!("tlbi vale1is, {}", in(reg) x, options(nostack)) },
            // TLBI RVALE1IS, spelt as the SYS instruction it is, so no
            // assembler extension is needed.
            // SAFETY: TLB maintenance only; reached only on a CPU with
            // FEAT_TLBIRANGE (elsewhere the instruction is undefined).
            Tlbi::Range(x) => unsafe {
                asm!("sys #0, c8, c2, #5, {}", in(reg) x, options(nostack))
            },
        }
    }
    // Every invalidation completes before we go on.
    barrier::dsb(barrier::ISH);
    barrier::isb(barrier::SY);
}

/// The most pages `flush_tlb_user_range` takes before flushing the whole
/// ASID is cheaper: 64 single pages, or as many as one range operation
/// covers (Linux: `MAX_DVM_OPS`, `MAX_TLBI_RANGE_PAGES`).
pub fn flush_range_limit() -> usize {
    if cpufeature::TLBI_RANGE.load(Relaxed) {
        tlbi_range::MAX_TLBI_RANGE_PAGES as usize
    } else {
        64
    }
}

/// Invalidates every TLB entry of address space `asid` on all CPUs (Linux:
/// `flush_tlb_mm`).
pub fn flush_tlb_asid(asid: u16) {
    barrier::dsb(barrier::ISHST);
    // SAFETY: TLB maintenance only.
    unsafe { asm!("tlbi aside1is, {}", in(reg) (asid as u64) << 48, options(nostack)) };
    barrier::dsb(barrier::ISH);
    barrier::isb(barrier::SY);
}
