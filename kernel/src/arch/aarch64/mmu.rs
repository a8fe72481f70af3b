//! MMU registers and TLB maintenance: installing translation tables, asking
//! the hardware to translate (AT), invalidating TLB entries. Linux:
//! `arch/arm64/include/asm/tlbflush.h`, `arch/arm64/mm/proc.S`
//! (`idmap_cpu_replace_ttbr1`).

use core::arch::{asm, global_asm};

use crate::mm::addr::{virt_to_phys, PhysAddr};

/// Makes page-table writes visible to the hardware walker (DSB ISHST), as
/// Linux's `__set_pte` does after writing a valid entry.
#[inline(always)]
pub fn publish_table_writes() {
    // SAFETY: a barrier only.
    unsafe { asm!("dsb ishst", "isb", options(nostack)) };
}

/// Invalidates the TLB entries for one kernel page on all CPUs
/// (Linux: `flush_tlb_kernel_range` for one page; global entries, any ASID).
pub fn flush_tlb_kernel_page(va: usize) {
    // SAFETY: TLB maintenance only.
    unsafe {
        asm!("dsb ishst", "tlbi vaae1is, {}", "dsb ish", "isb",
             in(reg) (va >> 12) & ((1 << 44) - 1), options(nostack))
    };
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
    // SAFETY: nothing runs through TTBR0 once the kernel is at its high
    // address; EPD0 is not needed because a zero table faults every walk.
    unsafe {
        asm!("msr ttbr0_el1, {}", "isb", "tlbi vmalle1", "dsb nsh", "isb", in(reg) virt_to_phys(EMPTY_PGD.0.as_ptr() as usize).0, options(nostack))
    };
}

#[repr(C, align(4096))]
struct EmptyTable([u64; 512]);
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
    let par: u64;
    // SAFETY: AT only updates PAR_EL1, read back with IRQs masked so no
    // interrupt handler's AT can clobber it in between.
    unsafe {
        let daif = super::cpu::local_irq_save();
        match access {
            AtAccess::KernelRead => asm!("at s1e1r, {}", in(reg) va, options(nostack)),
            AtAccess::KernelWrite => asm!("at s1e1w, {}", in(reg) va, options(nostack)),
            AtAccess::UserRead => asm!("at s1e0r, {}", in(reg) va, options(nostack)),
            AtAccess::UserWrite => asm!("at s1e0w, {}", in(reg) va, options(nostack)),
        }
        asm!("isb", "mrs {}, par_el1", out(reg) par, options(nostack));
        super::cpu::local_irq_restore(daif);
    }
    if par & 1 != 0 {
        Err(par)
    } else {
        Ok(PhysAddr(
            (par & 0x0000_ffff_ffff_f000) | (va as u64 & 0xfff),
        ))
    }
}

/// ASID width in bits (ID_AA64MMFR0_EL1.ASIDBits; TCR_EL1.AS is set to
/// match in boot.S).
pub fn asid_bits() -> u32 {
    let v: u64;
    // SAFETY: reads an ID register.
    unsafe { asm!("mrs {}, id_aa64mmfr0_el1", out(reg) v, options(nomem, nostack)) };
    if (v >> 4) & 0xf == 2 {
        16
    } else {
        8
    }
}

/// Runs user space through `pgd`, tagged with `asid` (Linux: `cpu_switch_mm`).
/// No TLB flush: entries of other address spaces carry other ASIDs.
pub fn switch_mm(pgd: PhysAddr, asid: u16) {
    let ttbr0 = pgd.0 | ((asid as u64) << 48);
    // SAFETY: the kernel runs through TTBR1; TTBR0 only maps user space.
    unsafe { asm!("msr ttbr0_el1, {}", "isb", in(reg) ttbr0, options(nostack)) };
}

/// Points TTBR0 at the empty table with ASID 0, for kernel threads. No TLB
/// flush: nothing is ever cached for ASID 0.
pub fn switch_to_empty() {
    switch_mm(virt_to_phys(EMPTY_PGD.0.as_ptr() as usize), 0);
}

/// Invalidates one user page of address space `asid` on all CPUs, after
/// its entry was changed (Linux: `flush_tlb_page`).
pub fn flush_tlb_user_page(asid: u16, va: usize) {
    let arg = ((asid as u64) << 48) | ((va as u64 >> 12) & ((1 << 44) - 1));
    // SAFETY: TLB maintenance only.
    unsafe {
        asm!("dsb ishst", "tlbi vale1is, {}", "dsb ish", "isb", in(reg) arg, options(nostack))
    };
}

/// Invalidates the TLB entries of user pages `[start, end)` of address
/// space `asid` on all CPUs, with one barrier pair for the batch (Linux:
/// `__flush_tlb_range` by pages).
pub fn flush_tlb_user_range(asid: u16, start: usize, end: usize) {
    let tag = (asid as u64) << 48;
    // SAFETY: a barrier only: the cleared entries are visible to walkers
    // before any invalidation.
    unsafe { asm!("dsb ishst", options(nostack)) };
    for va in (start..end).step_by(4096) {
        let arg = tag | ((va as u64 >> 12) & ((1 << 44) - 1));
        // SAFETY: TLB maintenance only.
        unsafe { asm!("tlbi vale1is, {}", in(reg) arg, options(nostack)) };
    }
    // SAFETY: barriers only: every invalidation completes before we go on.
    unsafe { asm!("dsb ish", "isb", options(nostack)) };
}

/// Invalidates every TLB entry of address space `asid` on all CPUs (Linux:
/// `flush_tlb_mm`).
pub fn flush_tlb_asid(asid: u16) {
    let arg = (asid as u64) << 48;
    // SAFETY: TLB maintenance only.
    unsafe {
        asm!("dsb ishst", "tlbi aside1is, {}", "dsb ish", "isb", in(reg) arg, options(nostack))
    };
}
