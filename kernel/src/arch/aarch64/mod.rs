//! Everything that names an AArch64 system register or instruction.
//!
//! Generic kernel code (mm, fs, task) calls the functions exported here and
//! never writes `asm!` itself.

pub mod asid;
pub mod cont_block;
pub mod context;
pub mod contpte;
pub mod cpu;
pub mod cpufeature;
pub mod desc;
pub mod esr;
pub mod fault;
pub mod gic;
mod gicv2;
mod gicv3;
pub mod irq;
pub mod mmu;
pub mod pgtable;
pub mod pl011;
pub mod pl031;
pub mod psci;
pub mod semihosting;
pub mod smp;
pub mod string;
pub mod timer;
pub mod tlbi_range;
pub mod trap;
pub mod uaccess;
pub mod vdso;

core::arch::global_asm!(include_str!("boot.S"), options(raw));
