//! Event and state counters shown in `/proc/vmstat` and `/proc/meminfo`
//! (Linux: `mm/vmstat.c`, `include/linux/vm_event_item.h`). Per-CPU, as in
//! Linux, but without its batching: each CPU adds to its own slot, on its
//! own cache line, so counting faults on every CPU at once shares nothing;
//! a read sums the slots.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::cpu::cpu_id;
use crate::config::NR_CPUS;
use crate::mm::buddy::MAX_ORDER;

/// One CPU's share of a counter, alone on its cache line.
#[repr(align(64))]
struct Slot(AtomicU64);

/// A named counter. The name is the `/proc/vmstat` key.
pub struct Counter {
    /// The counter's `/proc/vmstat` key, e.g. `pgfault`.
    pub name: &'static str,
    /// Each CPU's share, indexed by CPU id; the counter is their wrapping sum.
    slots: [Slot; NR_CPUS],
}

impl Counter {
    /// A counter at zero with `/proc/vmstat` key `name`.
    pub const fn new(name: &'static str) -> Self {
        Counter {
            name,
            slots: [const { Slot(AtomicU64::new(0)) }; NR_CPUS],
        }
    }
    /// Slots wrap: one CPU may take away what another added.
    pub fn add(&self, n: u64) {
        self.slots[cpu_id()].0.fetch_add(n, Ordering::Relaxed);
    }
    /// Takes `n` off this CPU's slot, which may wrap below zero; only the sum
    /// over all slots means anything.
    pub fn sub(&self, n: u64) {
        self.slots[cpu_id()].0.fetch_sub(n, Ordering::Relaxed);
    }
    /// Adds one on this CPU (Linux's `count_vm_event`, or
    /// `inc_node_page_state` for a state counter).
    pub fn inc(&self) {
        self.add(1);
    }
    /// Takes one off this CPU's slot (Linux's `dec_node_page_state`).
    pub fn dec(&self) {
        self.sub(1);
    }
    /// The counter's value: every CPU's slot summed, wrapping (Linux's
    /// `global_node_page_state`, without the batching error).
    pub fn get(&self) -> u64 {
        let sum = self.slots.iter().map(|s| s.0.load(Ordering::Relaxed));
        sum.fold(0, u64::wrapping_add)
    }
}

/// Page faults resolved (Linux: `PGFAULT`).
pub static PGFAULT: Counter = Counter::new("pgfault");
/// Faults handled under a per-VMA lock; lookups that found no lockable VMA;
/// attempts the handler sent back to `mmap_lock`; lookups that found a VMA
/// already replaced (Linux: `VMA_LOCK_SUCCESS`, `_ABORT`, `_RETRY`, `_MISS`).
pub static VMA_LOCK_SUCCESS: Counter = Counter::new("vma_lock_success");
/// `vma_lock_abort`: lookups that found no VMA, or one being changed, so
/// the fault took `mmap_lock` instead.
pub static VMA_LOCK_ABORT: Counter = Counter::new("vma_lock_abort");
/// `vma_lock_retry`: faults the handler sent back to retry under `mmap_lock`.
pub static VMA_LOCK_RETRY: Counter = Counter::new("vma_lock_retry");
/// `vma_lock_miss`: lookups whose VMA had been replaced (detached) since
/// the snapshot was read; the lookup then searches again.
pub static VMA_LOCK_MISS: Counter = Counter::new("vma_lock_miss");
/// Pages held by shmem/tmpfs page caches (Linux: `NR_SHMEM`).
pub static NR_SHMEM: Counter = Counter::new("nr_shmem");
/// Of those, pages in PMD-sized (2M) folios (Linux: `NR_SHMEM_THPS`).
pub static NR_SHMEM_HUGEPAGES: Counter = Counter::new("nr_shmem_hugepages");
/// Anonymous PMD-sized folios mapped by a PMD block now, counted once
/// however many blocks map each (Linux: `NR_ANON_THPS`, which /proc/meminfo
/// shows as `AnonHugePages`).
pub static NR_ANON_THPS: Counter = Counter::new("nr_anon_transparent_hugepages");
/// Anonymous faults that mapped a new PMD-sized folio, and those that
/// found none free and fell back to smaller folios (Linux:
/// `THP_FAULT_ALLOC`, `THP_FAULT_FALLBACK`).
pub static THP_FAULT_ALLOC: Counter = Counter::new("thp_fault_alloc");
/// `thp_fault_fallback`: anonymous PMD-sized folios not to be had at a
/// fault.
pub static THP_FAULT_FALLBACK: Counter = Counter::new("thp_fault_fallback");
/// 2M folios allocated for `MADV_COLLAPSE` (Linux: `THP_COLLAPSE_ALLOC`).
pub static THP_COLLAPSE_ALLOC: Counter = Counter::new("thp_collapse_alloc");
/// PMD-order file folios allocated / failed (Linux: `THP_FILE_ALLOC`,
/// `THP_FILE_FALLBACK`).
pub static THP_FILE_ALLOC: Counter = Counter::new("thp_file_alloc");
/// `thp_file_fallback`: PMD-order file folios that could not be allocated,
/// so a smaller one was tried.
pub static THP_FILE_FALLBACK: Counter = Counter::new("thp_file_fallback");

/// Page-table pages of user address spaces, pgds included (Linux:
/// `NR_PAGETABLE`).
pub static NR_PAGETABLE: Counter = Counter::new("nr_page_table_pages");
/// Shared file folios mapped by one PMD block, and PMD blocks a partial
/// unmap or mprotect took apart (Linux: `THP_FILE_MAPPED`, `THP_SPLIT_PMD`).
pub static THP_FILE_MAPPED: Counter = Counter::new("thp_file_mapped");
/// `thp_split_pmd`: PMD blocks a partial unmap or mprotect took apart.
pub static THP_SPLIT_PMD: Counter = Counter::new("thp_split_pmd");
/// PMD-sized folios split into smaller ones, splits refused (a reference
/// from outside the page tables, or a mapping in another address space),
/// and partly unmapped folios queued to be split when memory runs short
/// (Linux: `THP_SPLIT_PAGE`, `THP_SPLIT_PAGE_FAILED`,
/// `THP_DEFERRED_SPLIT_PAGE`).
pub static THP_SPLIT_PAGE: Counter = Counter::new("thp_split_page");
/// `thp_split_page_failed`: PMD-sized folio splits refused.
pub static THP_SPLIT_PAGE_FAILED: Counter = Counter::new("thp_split_page_failed");
/// `thp_deferred_split_page`: page tables queued because a large anonymous
/// folio they map was partly unmapped.
pub static THP_DEFERRED_SPLIT_PAGE: Counter = Counter::new("thp_deferred_split_page");
/// Batched user TLB invalidations after a zap (faultline's own line).
pub static TLB_RANGE_FLUSH: Counter = Counter::new("tlb_range_flush");
/// User contiguous-bit blocks folded / unfolded (faultline's own lines;
/// Linux counts neither).
pub static CONTPTE_FOLD: Counter = Counter::new("contpte_fold");
/// `contpte_unfold`: contiguous-bit blocks split back into single entries.
pub static CONTPTE_UNFOLD: Counter = Counter::new("contpte_unfold");
/// Processes the OOM killer killed (Linux: `OOM_KILL`).
pub static OOM_KILL: Counter = Counter::new("oom_kill");

/// One counter per folio order, named `<prefix>_<order>`.
macro_rules! per_order {
    ($p:literal) => {
        [
            Counter::new(concat!($p, "_0")),
            Counter::new(concat!($p, "_1")),
            Counter::new(concat!($p, "_2")),
            Counter::new(concat!($p, "_3")),
            Counter::new(concat!($p, "_4")),
            Counter::new(concat!($p, "_5")),
            Counter::new(concat!($p, "_6")),
            Counter::new(concat!($p, "_7")),
            Counter::new(concat!($p, "_8")),
            Counter::new(concat!($p, "_9")),
            Counter::new(concat!($p, "_10")),
        ]
    };
}

/// Folio allocations that succeeded / fell back to a lower order, per order
/// (faultline's own lines; Linux keeps the large orders in
/// `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/stats/`).
pub static FOLIO_ALLOC: [Counter; MAX_ORDER + 1] = per_order!("folio_alloc_order");
/// `folio_fallback_order_<N>`: order-N folio allocations that failed, so a
/// smaller order was tried.
pub static FOLIO_FALLBACK: [Counter; MAX_ORDER + 1] = per_order!("folio_fallback_order");

/// Large folios per order, as Linux's
/// `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/stats/` shows them
/// (Linux: `count_mthp_stat`): shmem folios allocated, and shmem orders
/// given up for a smaller one (memory or the mount's size limit ran
/// short); anonymous fault folios likewise. Not in `/proc/vmstat`.
pub static MTHP_SHMEM_ALLOC: [Counter; MAX_ORDER + 1] = per_order!("shmem_alloc");
/// `hugepages-<N>kB/stats/shmem_fallback`: shmem folios of that order given
/// up for a smaller one.
pub static MTHP_SHMEM_FALLBACK: [Counter; MAX_ORDER + 1] = per_order!("shmem_fallback");
/// `hugepages-<N>kB/stats/anon_fault_alloc`: anonymous fault folios of that
/// order allocated.
pub static MTHP_ANON_FAULT_ALLOC: [Counter; MAX_ORDER + 1] = per_order!("anon_fault_alloc");
/// `hugepages-<N>kB/stats/anon_fault_fallback`: anonymous fault folios of
/// that order given up for a smaller one.
pub static MTHP_ANON_FAULT_FALLBACK: [Counter; MAX_ORDER + 1] = per_order!("anon_fault_fallback");

/// The `/proc/vmstat` counters before the per-order ones, in its order;
/// a static, so that gdb's `fl-vmstat` reads the same list.
pub static VMSTAT: [&Counter; 23] = [
    &NR_PAGETABLE,
    &NR_SHMEM,
    &NR_SHMEM_HUGEPAGES,
    &NR_ANON_THPS,
    &THP_FAULT_ALLOC,
    &THP_FAULT_FALLBACK,
    &THP_COLLAPSE_ALLOC,
    &THP_FILE_ALLOC,
    &THP_FILE_FALLBACK,
    &THP_FILE_MAPPED,
    &THP_SPLIT_PAGE,
    &THP_SPLIT_PAGE_FAILED,
    &THP_DEFERRED_SPLIT_PAGE,
    &THP_SPLIT_PMD,
    &CONTPTE_FOLD,
    &CONTPTE_UNFOLD,
    &TLB_RANGE_FLUSH,
    &PGFAULT,
    &VMA_LOCK_SUCCESS,
    &VMA_LOCK_ABORT,
    &VMA_LOCK_RETRY,
    &VMA_LOCK_MISS,
    &OOM_KILL,
];

/// Every counter, in `/proc/vmstat` order.
pub fn for_each(mut f: impl FnMut(&'static str, u64)) {
    let per_order = FOLIO_ALLOC.iter().chain(FOLIO_FALLBACK.iter());
    for c in VMSTAT.iter().copied().chain(per_order) {
        f(c.name, c.get());
    }
}
