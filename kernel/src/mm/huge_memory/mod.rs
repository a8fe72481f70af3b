//! Transparent huge pages: the knobs and which folio sizes they allow
//! (Linux: `mm/huge_memory.c`; the shmem half of the policy is
//! `fs::tmpfs::huge`, as Linux's is in `mm/shmem.c`).
//!
//! - `order`: sets of large folio orders;
//! - `knobs`: each knob's values and sysfs text;
//! - `settings`: the system-wide value of every knob, and the rules a write
//!   must pass;
//! - `anon`: the orders an anonymous fault may allocate;
//! - `collapse`: `MADV_COLLAPSE`, copying a PTE-mapped 2M into one 2M
//!   folio under a PMD block;
//! - `pmd`: anonymous folios mapped by one PMD block, and taking a block
//!   apart into a table of PTEs;
//! - `split`: splitting large anonymous folios into smaller ones (debugfs's
//!   `split_huge_pages`, and the deferred split of partly unmapped ones).
//!
//! This file keeps the one copy of the settings the kernel runs with, and a
//! lock-free copy of what they allow anonymous faults.

pub mod anon;
pub mod collapse;
pub mod knobs;
pub mod order;
pub mod pmd;
pub mod settings;
pub mod split;

use core::sync::atomic::{AtomicU32, Ordering};

use crate::mm::vma::{VM_HUGEPAGE, VM_NOHUGEPAGE};
use crate::sync::SpinLock;
use anon::anon_allowable_orders;
use knobs::{AnonPerSize, PerSizeEnabled, ShmemEnabled, ThpEnabled};
use order::{OrderMask, NR_PER_SIZE};
use settings::HugeSettings;

/// `/sys/kernel/mm/transparent_hugepage/{shmem_enabled, hugepages-*/shmem_enabled,
/// enabled, hugepages-*/enabled, thp_exec_enabled, thp_mapping_align}`.
static HUGE_SETTINGS: SpinLock<HugeSettings> = SpinLock::new(HugeSettings {
    shmem_enabled: ShmemEnabled::Never,
    per_size: [PerSizeEnabled::Never; NR_PER_SIZE],
    thp_exec_enabled: 0,
    thp_mapping_align: 0,
    anon_enabled: ThpEnabled::Never,
    anon_per_size: [AnonPerSize::Never; NR_PER_SIZE],
});

/// What `anon_allowable_orders` gives without and with `MADV_HUGEPAGE`
/// (low and high 16 bits), kept apart so anonymous faults read one word
/// rather than take the knobs' lock (Linux keeps `huge_anon_orders_*` as
/// bitmaps for the same reason).
static ANON_ORDERS: AtomicU32 = AtomicU32::new(0);

/// Sets the boot defaults (the 2M knobs inherit), before anything reads them.
pub fn init_huge_settings() {
    update_huge_settings(|s| *s = HugeSettings::default());
}

/// A copy of the knobs as they are now.
pub fn huge_settings() -> HugeSettings {
    *HUGE_SETTINGS.lock()
}

/// Changes the knobs through `f`, all or nothing.
pub fn update_huge_settings<R>(f: impl FnOnce(&mut HugeSettings) -> R) -> R {
    let mut settings = HUGE_SETTINGS.lock();
    let result = f(&mut settings);
    let masks = |madvised| anon_allowable_orders(&settings, madvised).bits() as u32;
    ANON_ORDERS.store(masks(false) | masks(true) << 16, Ordering::Relaxed);
    result
}

/// The folio orders an anonymous fault may allocate in a VMA with
/// (`madvised`) or without `MADV_HUGEPAGE` (see `anon_allowable_orders`).
pub fn anon_orders(madvised: bool) -> OrderMask {
    let both = ANON_ORDERS.load(Ordering::Relaxed);
    OrderMask::from_bits((if madvised { both >> 16 } else { both }) as u16)
}

/// The folio orders an anonymous fault may allocate in a VMA whose flags
/// are `vm_flags` (Linux: `thp_vma_allowable_orders`): none under
/// `MADV_NOHUGEPAGE`, else what the knobs allow with or without
/// `MADV_HUGEPAGE`.
pub fn anon_vma_orders(vm_flags: u64) -> OrderMask {
    if vm_flags & VM_NOHUGEPAGE != 0 {
        return OrderMask::EMPTY;
    }
    anon_orders(vm_flags & VM_HUGEPAGE != 0)
}

/// Boot-time knob (Linux: `setup_transparent_hugepage`):
/// `transparent_hugepage=always|madvise|never` sets `enabled`, as a
/// kernel configured with `CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS` (Debian's)
/// or `_MADVISE` boots with it. A bad value is reported and ignored.
pub fn apply_cmdline(cmdline: crate::cmdline::Cmdline) {
    if let Some(v) = cmdline.get("transparent_hugepage") {
        if update_huge_settings(|s| s.store_anon_enabled(v)).is_err() {
            crate::println!("thp: ignoring transparent_hugepage={}", v);
        }
    }
}
