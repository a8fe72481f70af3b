//! Which large-folio orders a new tmpfs/shmem folio may have (Linux:
//! `mm/shmem.c`, `shmem_huge_global_enabled`, `shmem_allowable_huge_orders`
//! and `shmem_suitable_orders`; the policy is described in
//! `Documentation/admin-guide/mm/transhuge.rst`, "Hugepages in tmpfs/shmem").
//! The knobs themselves are `mm::huge_memory`'s.
//!
//! `allowable_orders` turns the knobs into the orders a folio may have;
//! `suitable_orders` keeps those whose aligned range of the page cache is
//! still empty and lists what to try, highest first, down to order 0. The
//! page cache is a closure, so all of it runs in host tests.
//!
//! Where we simplify:
//! - Large orders are 2 to 9 (16K to 2M), the sizes with a per-size knob.
//!   Linux may also give a tmpfs write() an order-1 (8K) folio.
//! - The per-size knobs apply to the internal mount's files. Linux decides
//!   by the mapping instead: any file unlinked before mmap() gets them
//!   (`vma_is_anon_shmem`), even one on a tmpfs mount.
//! - No `MADV_NOHUGEPAGE` or `PR_SET_THP_DISABLE`, which in Linux turn large
//!   folios off for a mapping whatever the knobs say.

use crate::arch::contpte::arch_wants_exec_folio_order;
use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE};
use crate::mm::huge_memory::knobs::{
    MountHuge, PerSizeEnabled, ShmemEnabled, FILE_EXEC_MTHP_ENABLE,
};
use crate::mm::huge_memory::order::{OrderMask, PMD_ORDER};
use crate::mm::huge_memory::settings::HugeSettings;

/// Which mount the folio's file is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShmemMount {
    /// A file on a tmpfs mount with this `huge=` option.
    Mounted(MountHuge),
    /// A file on the kernel's internal mount: memfd_create(), or the object
    /// behind a `MAP_SHARED|MAP_ANONYMOUS` mapping.
    Internal,
}

/// What needs the folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShmemAccess {
    /// A page fault through a shared mapping of the file. `vma_hugepage`:
    /// the mapping has `VM_HUGEPAGE`, from madvise(MADV_HUGEPAGE).
    Fault {
        /// Whether the mapping has `VM_HUGEPAGE` (madvise asked for large
        /// folios there).
        vma_hugepage: bool,
    },
    /// write() or fallocate() of the bytes up to `end` (exclusive), which may
    /// lie past i_size. How far it reaches is the hint of how big a folio is
    /// worth allocating.
    Write {
        /// One past the last byte written, as a file offset in bytes.
        end: u64,
    },
}

/// The orders a new folio holding page `index` of a file of `i_size` bytes
/// may have (Linux: `shmem_allowable_huge_orders`).
///
/// - `deny` allows nothing, anywhere; `force` allows the PMD order anywhere.
/// - A file on a tmpfs mount follows its `huge=`. A fault is offered only
///   the PMD order, having no size hint; a write is offered the largest
///   order that fits both what is left of the write and the alignment of
///   `index`, and every smaller one.
/// - An internal file follows the per-size knobs, `inherit` asking the
///   top-level knob about the PMD order; a write is further limited as for
///   a mount. Linux applies the per-size knobs only to faults on anonymous
///   shmem and lets memfd writes follow the top-level knob; faultline lets
///   every access to an internal file follow them, so that sysfs alone
///   picks the folio size of a memfd, as the seed benchmarks expect.
pub fn allowable_orders(
    settings: &HugeSettings,
    kind: ShmemMount,
    access: ShmemAccess,
    i_size: u64,
    index: u64,
) -> OrderMask {
    let mount_huge = match kind {
        ShmemMount::Mounted(huge) => huge,
        ShmemMount::Internal => settings.shmem_enabled.internal_mount_huge(),
    };
    let global = global_orders(settings.shmem_enabled, mount_huge, access, i_size, index);
    match (kind, access) {
        (ShmemMount::Internal, ShmemAccess::Fault { vma_hugepage }) => {
            per_size_orders(settings, global, vma_hugepage, i_size, index)
        }
        (ShmemMount::Internal, ShmemAccess::Write { end })
            if !matches!(
                settings.shmem_enabled,
                ShmemEnabled::Deny | ShmemEnabled::Force
            ) =>
        {
            // The per-size knobs as for a fault without MADV_HUGEPAGE, over
            // the file as this write leaves it, then cut to what the write
            // covers and its alignment.
            let size = i_size.max(end);
            let as_fault = ShmemAccess::Fault {
                vma_hugepage: false,
            };
            let top = global_orders(settings.shmem_enabled, mount_huge, as_fault, size, index);
            per_size_orders(settings, top, false, size, index).and(write_size_orders(index, end))
        }
        _ => global,
    }
}

/// The folio order for the file text around a fault in a `VM_EXEC`
/// mapping, if any (seed 004: Linux's `do_sync_mmap_readahead` reads the
/// naturally aligned `arch_wants_exec_folio_order()` pages around such a
/// fault into one folio when `thp_exec_enabled` has
/// `FILE_EXEC_MTHP_ENABLE`). Files of mounted tmpfs only, which stand in
/// for a disk file system here (the initramfs, a Debian root): internal
/// files (memfd, shared anonymous memory) are shmem in Linux too, which
/// has no readahead. `deny` turns it off, as all large folios.
pub fn exec_folio_order(settings: &HugeSettings, kind: ShmemMount) -> Option<u8> {
    let wanted = settings.thp_exec_enabled & FILE_EXEC_MTHP_ENABLE != 0
        && matches!(kind, ShmemMount::Mounted(_))
        && settings.shmem_enabled != ShmemEnabled::Deny;
    wanted.then(arch_wants_exec_folio_order)
}

/// What the top-level knob and the mount's `huge=` allow (Linux:
/// `shmem_huge_global_enabled`).
fn global_orders(
    top: ShmemEnabled,
    mount_huge: MountHuge,
    access: ShmemAccess,
    i_size: u64,
    index: u64,
) -> OrderMask {
    match top {
        ShmemEnabled::Deny => return OrderMask::EMPTY,
        ShmemEnabled::Force => return OrderMask::PMD,
        _ => {}
    }
    let (offered, size, vma_hugepage) = match access {
        ShmemAccess::Fault { vma_hugepage } => (OrderMask::PMD, i_size, vma_hugepage),
        ShmemAccess::Write { end } => (write_size_orders(index, end), i_size.max(end), false),
    };
    let advised = if vma_hugepage {
        OrderMask::PMD
    } else {
        OrderMask::EMPTY
    };
    match mount_huge {
        MountHuge::Never => OrderMask::EMPTY,
        MountHuge::Always => offered,
        MountHuge::WithinSize => {
            // within_size is a superset of advise: what does not fit the file
            // is still allowed where MADV_HUGEPAGE asked.
            let fitting = within_size(offered, index, size);
            if fitting.is_empty() {
                advised
            } else {
                fitting
            }
        }
        MountHuge::Advise => advised,
    }
}

/// What the per-size knobs allow a fault on an internal file, `global`
/// being what the top-level knob allows it (Linux: the anonymous-shmem half
/// of `shmem_allowable_huge_orders`).
fn per_size_orders(
    settings: &HugeSettings,
    global: OrderMask,
    vma_hugepage: bool,
    i_size: u64,
    index: u64,
) -> OrderMask {
    match settings.shmem_enabled {
        ShmemEnabled::Deny => OrderMask::EMPTY,
        ShmemEnabled::Force => settings.orders_set_to(PerSizeEnabled::Inherit),
        _ => {
            let mut mask = settings.orders_set_to(PerSizeEnabled::Always)
                | within_size(
                    settings.orders_set_to(PerSizeEnabled::WithinSize),
                    index,
                    i_size,
                );
            if vma_hugepage {
                mask |= settings.orders_set_to(PerSizeEnabled::Advise);
            }
            // All inherit orders together, on the top-level knob's answer for
            // the PMD order: a 64K inherit folio in a 64K file under
            // within_size is refused, as the file has no room for 2M.
            if !global.is_empty() {
                mask |= settings.orders_set_to(PerSizeEnabled::Inherit);
            }
            mask
        }
    }
}

/// First page of the order-`order` folio that would hold page `index`.
fn folio_start(index: u64, order: u8) -> u64 {
    index & !((1 << order) - 1)
}

/// The orders of `orders` whose folio holding page `index` would end inside
/// a file of `size` bytes (Linux: `shmem_get_orders_within_size`). The size
/// is rounded up to whole pages first: a folio may cover the partly written
/// last page, never a page wholly past the end.
fn within_size(orders: OrderMask, index: u64, size: u64) -> OrderMask {
    let size_pages = size.div_ceil(PAGE_SIZE as u64);
    orders.filter(|order| folio_start(index, order) + (1 << order) <= size_pages)
}

/// The orders a write ending at byte `end` suits at page `index`: none
/// larger than the bytes left from this page on, rounded down to a power of
/// two, nor than the alignment of `index` (Linux:
/// `shmem_mapping_size_orders` and `filemap_get_order`).
fn write_size_orders(index: u64, end: u64) -> OrderMask {
    let left = end.saturating_sub(index << PAGE_SHIFT);
    let fits_write = left
        .checked_ilog2()
        .map_or(0, |shift| shift.saturating_sub(PAGE_SHIFT));
    let order = fits_write.min(index.trailing_zeros()).min(PMD_ORDER as u32);
    OrderMask::up_to(order as u8)
}

/// The orders to try for a new folio holding page `index`, highest first,
/// always ending with order 0 (Linux: `shmem_suitable_orders` and the loop
/// in `shmem_alloc_and_add_folio`).
///
/// The first is the highest order of `mask` whose naturally aligned range of
/// pages is empty in the page cache, `range_is_empty(first_page, nr_pages)`
/// saying so: another folio there, even one page, would overlap the new one.
/// The lower orders of `mask` follow; their ranges lie inside that one, so
/// they need no second look. The caller moves to the next order each time an
/// allocation fails, counting a fallback.
pub fn suitable_orders(
    mask: OrderMask,
    index: u64,
    range_is_empty: impl Fn(u64, u64) -> bool,
) -> FallbackOrders {
    let first = mask
        .orders()
        .rev()
        .find(|&order| range_is_empty(folio_start(index, order), 1 << order));
    let large = match first {
        Some(first) => mask.filter(|order| order <= first),
        None => OrderMask::EMPTY,
    };
    FallbackOrders {
        large,
        order0_left: true,
    }
}

/// The orders `suitable_orders` chose, highest first, then order 0.
#[derive(Clone, Debug)]
pub struct FallbackOrders {
    /// The large orders still to hand out; each is removed as it is.
    large: OrderMask,
    /// Order 0, the last resort, is still to come.
    order0_left: bool,
}

impl Iterator for FallbackOrders {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if let Some(order) = self.large.highest() {
            self.large = self.large.without(order);
            return Some(order);
        }
        if self.order0_left {
            self.order0_left = false;
            return Some(0);
        }
        None
    }
}

#[cfg(test)]
mod tests;
