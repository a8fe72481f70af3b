//! Bringing up secondary CPUs with PSCI `CPU_ON`, and inter-processor
//! interrupts (Linux: `arch/arm64/kernel/smp.c`, `psci.c` cpu_ops).

use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

use aarch64_cpu::asm::barrier;

use super::{gic, psci};
use crate::config::NR_CPUS;
use crate::mm::addr::{virt_to_phys, PhysAddr};

/// SGI used to make another CPU reschedule (Linux: `IPI_RESCHEDULE`).
pub const IPI_RESCHEDULE: u32 = 0;

/// What `secondary_entry` in boot.S reads, by physical address, before the
/// MMU is on. Field order is fixed by boot.S.
#[repr(C)]
pub struct SecondaryBoot {
    /// Offset 0: the top of the CPU's kernel stack, a kernel virtual address
    /// that `secondary_high` loads into SP (Linux: `secondary_data.stack`).
    pub stack_top: AtomicU64,
    /// Offset 8: the physical address of the kernel's page tables, which
    /// `enable_mmu` installs in TTBR1_EL1.
    pub ttbr1: AtomicU64,
    /// Offset 16: the CPU's logical number, which `secondary_main` records
    /// with `set_this_cpu`.
    pub cpu: AtomicU64,
}

impl SecondaryBoot {
    /// An all-zero record, for a static; `start_secondary` fills it before
    /// `boot_secondary`.
    pub const fn new() -> Self {
        SecondaryBoot {
            stack_top: AtomicU64::new(0),
            ttbr1: AtomicU64::new(0),
            cpu: AtomicU64::new(0),
        }
    }
}

/// A `CPU_MPIDR` slot with no CPU: u64::MAX, which no MPIDR affinity value
/// is.
#[allow(clippy::declare_interior_mutable_const)]
const NO_MPIDR: AtomicU64 = AtomicU64::new(u64::MAX);
/// Each logical CPU's MPIDR affinity, indexed by CPU number; the CPUs the
/// DTB describes fill the first slots (Linux: `__cpu_logical_map`).
static CPU_MPIDR: [AtomicU64; NR_CPUS] = [NO_MPIDR; NR_CPUS];

/// Records each logical CPU's MPIDR (from the DTB).
pub fn set_logical_map(map: &[u64]) {
    for (cpu, &mpidr) in map.iter().enumerate() {
        CPU_MPIDR[cpu].store(mpidr, Ordering::Relaxed);
    }
}

/// How many CPUs the DTB describes (Linux: `num_possible_cpus()`).
pub fn nr_possible() -> usize {
    CPU_MPIDR
        .iter()
        .take_while(|m| m.load(Ordering::Relaxed) != u64::MAX)
        .count()
}

/// Starts logical CPU `cpu`; it enters `secondary_main(record)`.
/// `record` must stay alive until the CPU reports itself online.
pub fn boot_secondary(cpu: usize, record: &SecondaryBoot) -> Result<(), psci::Error> {
    extern "C" {
        fn secondary_entry();
    }
    let entry: PhysAddr = virt_to_phys(secondary_entry as *const () as usize);
    let va = record as *const SecondaryBoot as usize;
    // The new CPU reads the record with its MMU (and so its caches) off:
    // clean it to memory first (DC CVAC; a no-op on QEMU, needed on silicon;
    // asm! because aarch64-cpu has no cache maintenance).
    // SAFETY: cache maintenance by VA on a mapped kernel object.
    unsafe { asm!("dc cvac, {}", in(reg) va, options(nostack)) };
    barrier::dsb(barrier::SY);
    let context = virt_to_phys(va);
    psci::cpu_on(CPU_MPIDR[cpu].load(Ordering::Relaxed), entry, context.0)
}

/// Asks `cpu` to run its scheduler soon.
pub fn send_reschedule(cpu: usize) {
    gic::send_ipi(cpu, CPU_MPIDR[cpu].load(Ordering::Relaxed), IPI_RESCHEDULE);
}
