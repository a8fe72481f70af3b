//! Host tests of the shmem folio-order policy against Linux's rules.

use super::*;
use crate::mm::huge_memory::order::NR_PER_SIZE;
use std::vec::Vec;

const KB: u64 = 1024;
const MB: u64 = 1024 * KB;
const PAGE: u64 = PAGE_SIZE as u64;

fn mask(orders: &[u8]) -> OrderMask {
    orders.iter().fold(OrderMask::EMPTY, |mask, &order| {
        mask | OrderMask::only(order)
    })
}

fn fault(vma_hugepage: bool) -> ShmemAccess {
    ShmemAccess::Fault { vma_hugepage }
}

fn top(value: ShmemEnabled) -> HugeSettings {
    HugeSettings {
        shmem_enabled: value,
        ..HugeSettings::default()
    }
}

/// Settings with every per-size knob `value` and the top level `never`.
fn all_sizes(value: PerSizeEnabled) -> HugeSettings {
    HugeSettings {
        shmem_enabled: ShmemEnabled::Never,
        per_size: [value; NR_PER_SIZE],
        ..HugeSettings::default()
    }
}

fn collect(orders: FallbackOrders) -> Vec<u8> {
    orders.collect()
}

#[test]
fn within_size_boundary_rounds_the_size_up_to_a_page() {
    let within = ShmemMount::Mounted(MountHuge::WithinSize);
    let settings = HugeSettings::default();
    let at = |i_size, index| allowable_orders(&settings, within, fault(false), i_size, index);
    // The 2M folio holding page 0 ends at byte 2M.
    assert_eq!(at(2 * MB, 0), OrderMask::PMD);
    assert_eq!(at(2 * MB + 1, 0), OrderMask::PMD);
    // Its last page partly written still counts as inside...
    assert_eq!(at(2 * MB - 1, 0), OrderMask::PMD);
    assert_eq!(at(2 * MB - PAGE + 1, 0), OrderMask::PMD);
    // ...a last page wholly past the end does not.
    assert_eq!(at(2 * MB - PAGE, 0), OrderMask::EMPTY);
    // Any page of the folio looks at the folio's end, not its own.
    assert_eq!(at(2 * MB, 511), OrderMask::PMD);
    assert_eq!(at(2 * MB, 512), OrderMask::EMPTY);
    assert_eq!(at(4 * MB, 512), OrderMask::PMD);
    assert_eq!(at(4 * MB - PAGE, 1000), OrderMask::EMPTY);
}

#[test]
fn deny_overrides_every_knob() {
    let mut settings = all_sizes(PerSizeEnabled::Always);
    settings.shmem_enabled = ShmemEnabled::Deny;
    let kinds = [
        ShmemMount::Mounted(MountHuge::Always),
        ShmemMount::Mounted(MountHuge::WithinSize),
        ShmemMount::Mounted(MountHuge::Advise),
        ShmemMount::Internal,
    ];
    let accesses = [
        fault(true),
        fault(false),
        ShmemAccess::Write { end: 4 * MB },
    ];
    for kind in kinds {
        for access in accesses {
            let orders = allowable_orders(&settings, kind, access, 4 * MB, 0);
            assert_eq!(orders, OrderMask::EMPTY, "{kind:?} {access:?}");
        }
    }
}

#[test]
fn force_gives_the_pmd_order_to_every_file() {
    let settings = top(ShmemEnabled::Force);
    let kinds = [
        ShmemMount::Mounted(MountHuge::Never),
        ShmemMount::Mounted(MountHuge::Advise),
        ShmemMount::Internal,
    ];
    // Even a small write into a small file: force ignores size and madvise.
    let accesses = [fault(false), ShmemAccess::Write { end: PAGE }];
    for kind in kinds {
        for access in accesses {
            let orders = allowable_orders(&settings, kind, access, PAGE, 0);
            assert_eq!(orders, OrderMask::PMD, "{kind:?} {access:?}");
        }
    }
}

#[test]
fn force_on_internal_faults_means_the_inherit_orders_only() {
    let mut settings = top(ShmemEnabled::Force);
    settings.store_per_size(4, "always\n").unwrap();
    let orders = allowable_orders(&settings, ShmemMount::Internal, fault(true), 4 * MB, 0);
    assert_eq!(orders, OrderMask::PMD);
    // 2M switched away from inherit after force was set: nothing is left.
    settings.store_per_size(9, "always\n").unwrap();
    let orders = allowable_orders(&settings, ShmemMount::Internal, fault(true), 4 * MB, 0);
    assert_eq!(orders, OrderMask::EMPTY);
    // force gives writes the PMD order, whatever the write's size.
    let orders = allowable_orders(
        &settings,
        ShmemMount::Internal,
        ShmemAccess::Write { end: PAGE },
        0,
        0,
    );
    assert_eq!(orders, OrderMask::PMD);
}

#[test]
fn mounted_faults_are_offered_the_pmd_order_only() {
    let settings = HugeSettings::default();
    let always = ShmemMount::Mounted(MountHuge::Always);
    // A 1-byte file: always ignores the size.
    assert_eq!(
        allowable_orders(&settings, always, fault(false), 1, 0),
        OrderMask::PMD
    );
    assert_eq!(
        allowable_orders(&settings, always, fault(true), 1, 700),
        OrderMask::PMD
    );
    let never = ShmemMount::Mounted(MountHuge::Never);
    assert_eq!(
        allowable_orders(&settings, never, fault(true), 4 * MB, 0),
        OrderMask::EMPTY
    );
}

#[test]
fn mounted_files_ignore_the_per_size_knobs() {
    let settings = all_sizes(PerSizeEnabled::Always);
    for huge in [MountHuge::Never, MountHuge::Advise] {
        let kind = ShmemMount::Mounted(huge);
        assert_eq!(
            allowable_orders(&settings, kind, fault(false), 4 * MB, 0),
            OrderMask::EMPTY
        );
    }
}

#[test]
fn mounted_advise_needs_madv_hugepage() {
    let settings = HugeSettings::default();
    let advise = ShmemMount::Mounted(MountHuge::Advise);
    assert_eq!(
        allowable_orders(&settings, advise, fault(true), 4 * MB, 0),
        OrderMask::PMD
    );
    assert_eq!(
        allowable_orders(&settings, advise, fault(false), 4 * MB, 0),
        OrderMask::EMPTY
    );
    // A write has no mapping to carry the advice.
    let write = ShmemAccess::Write { end: 4 * MB };
    assert_eq!(
        allowable_orders(&settings, advise, write, 4 * MB, 0),
        OrderMask::EMPTY
    );
}

#[test]
fn mounted_within_size_also_honours_madv_hugepage() {
    let settings = HugeSettings::default();
    let within = ShmemMount::Mounted(MountHuge::WithinSize);
    assert_eq!(
        allowable_orders(&settings, within, fault(false), PAGE, 0),
        OrderMask::EMPTY
    );
    assert_eq!(
        allowable_orders(&settings, within, fault(true), PAGE, 0),
        OrderMask::PMD
    );
}

#[test]
fn mounted_write_orders_follow_size_and_alignment() {
    let settings = HugeSettings::default();
    let always = ShmemMount::Mounted(MountHuge::Always);
    let write = |start: u64, len: u64, index: u64| {
        allowable_orders(
            &settings,
            always,
            ShmemAccess::Write { end: start + len },
            0,
            index,
        )
    };
    // 4 MiB at 0: capped at the PMD order.
    assert_eq!(write(0, 4 * MB, 0), OrderMask::ALL);
    assert_eq!(write(0, 4 * MB, 512), OrderMask::ALL);
    // 64K at 0: up to 64K.
    assert_eq!(write(0, 64 * KB, 0), mask(&[2, 3, 4]));
    // 64K + 1 byte still rounds down to 64K; one byte less drops to 32K.
    assert_eq!(write(0, 64 * KB + 1, 0), mask(&[2, 3, 4]));
    assert_eq!(write(0, 64 * KB - 1, 0), mask(&[2, 3]));
    // Less than 16K left: no large order.
    assert_eq!(write(0, 16 * KB - 1, 0), OrderMask::EMPTY);
    // 64K at 4K: index 1 is aligned to nothing large, index 2 only to
    // order 1, index 4 to order 2, index 8 to order 3 (32K left).
    assert_eq!(write(4 * KB, 64 * KB, 1), OrderMask::EMPTY);
    assert_eq!(write(4 * KB, 64 * KB, 2), OrderMask::EMPTY);
    assert_eq!(write(4 * KB, 64 * KB, 4), mask(&[2]));
    assert_eq!(write(4 * KB, 64 * KB, 8), mask(&[2, 3]));
    assert_eq!(write(4 * KB, 64 * KB, 16), OrderMask::EMPTY);
    // A 2M write at 1M: alignment caps index 256 at order 8.
    assert_eq!(write(MB, 2 * MB, 256), OrderMask::up_to(8));
}

/// Walks a write of [start, start + len) the way the write path does:
/// each step takes the first order `suitable_orders` offers into an
/// empty page cache. Returns the folios as (first page, order).
fn folios_for_write(
    settings: &HugeSettings,
    kind: ShmemMount,
    i_size: u64,
    start: u64,
    len: u64,
) -> Vec<(u64, u8)> {
    let end = start + len;
    let mut folios = Vec::new();
    let mut index = start / PAGE;
    while index < end.div_ceil(PAGE) {
        let allowed = allowable_orders(settings, kind, ShmemAccess::Write { end }, i_size, index);
        let order = suitable_orders(allowed, index, |_, _| true).next().unwrap();
        let first = folio_start(index, order);
        folios.push((first, order));
        index = first + (1 << order);
    }
    folios
}

#[test]
fn write_allocates_the_largest_order_that_fits_write_and_alignment() {
    let settings = HugeSettings::default();
    let always = ShmemMount::Mounted(MountHuge::Always);
    assert_eq!(
        folios_for_write(&settings, always, 0, 0, 4 * MB),
        [(0, 9), (512, 9)]
    );
    assert_eq!(folios_for_write(&settings, always, 0, 0, 64 * KB), [(0, 4)]);
    assert_eq!(
        folios_for_write(&settings, always, 0, 4 * KB, 64 * KB),
        [(1, 0), (2, 0), (3, 0), (4, 2), (8, 3), (16, 0)]
    );
    let never = ShmemMount::Mounted(MountHuge::Never);
    assert_eq!(
        folios_for_write(&settings, never, 0, 0, 16 * KB),
        [(0, 0), (1, 0), (2, 0), (3, 0)]
    );
}

#[test]
fn within_size_write_counts_the_bytes_being_written() {
    let settings = HugeSettings::default();
    let within = ShmemMount::Mounted(MountHuge::WithinSize);
    // An empty file: the write itself makes room. (A write's orders never
    // reach past its own end, so within_size limits a write no more than
    // always does.)
    assert_eq!(folios_for_write(&settings, within, 0, 0, 2 * MB), [(0, 9)]);
    assert_eq!(
        folios_for_write(&settings, within, 0, 64 * KB, 32 * KB),
        [(16, 3)]
    );
    // A file already 4M long: still only what the write covers.
    assert_eq!(
        folios_for_write(&settings, within, 4 * MB, 0, 64 * KB),
        [(0, 4)]
    );
}

#[test]
fn internal_faults_follow_each_per_size_knob() {
    let mut settings = HugeSettings::default();
    settings.store_per_size(2, "always").unwrap();
    settings.store_per_size(3, "advise").unwrap();
    settings.store_per_size(4, "within_size").unwrap();
    settings.store_per_size(5, "within_size").unwrap();
    settings.store_per_size(9, "never").unwrap();
    let internal = |vma_hugepage, i_size| {
        allowable_orders(
            &settings,
            ShmemMount::Internal,
            fault(vma_hugepage),
            i_size,
            0,
        )
    };
    // A 64K file: the 64K folio fits, the 128K one does not.
    assert_eq!(internal(false, 64 * KB), mask(&[2, 4]));
    assert_eq!(internal(true, 64 * KB), mask(&[2, 3, 4]));
    assert_eq!(internal(false, 128 * KB), mask(&[2, 4, 5]));
    // A per-size within_size does not fall back on advice.
    assert_eq!(internal(true, PAGE), mask(&[2, 3]));
}

#[test]
fn seed_000_memfd_gets_a_pmd_folio() {
    let mut settings = HugeSettings::default();
    settings.store_per_size(9, "always\n").unwrap();
    let orders = allowable_orders(&settings, ShmemMount::Internal, fault(false), 2 * MB, 0);
    assert_eq!(orders, OrderMask::PMD);
    assert_eq!(suitable_orders(orders, 0, |_, _| true).next(), Some(9));
}

#[test]
fn inherit_follows_the_top_level_knob() {
    let internal = |settings: &HugeSettings, vma_hugepage, i_size| {
        allowable_orders(
            settings,
            ShmemMount::Internal,
            fault(vma_hugepage),
            i_size,
            0,
        )
    };
    // Default per-size knobs: only 2M inherits.
    assert_eq!(
        internal(&top(ShmemEnabled::Never), true, 4 * MB),
        OrderMask::EMPTY
    );
    assert_eq!(
        internal(&top(ShmemEnabled::Always), false, PAGE),
        OrderMask::PMD
    );
    assert_eq!(
        internal(&top(ShmemEnabled::Advise), false, 4 * MB),
        OrderMask::EMPTY
    );
    assert_eq!(
        internal(&top(ShmemEnabled::Advise), true, PAGE),
        OrderMask::PMD
    );
    let within = top(ShmemEnabled::WithinSize);
    assert_eq!(internal(&within, false, 2 * MB), OrderMask::PMD);
    assert_eq!(internal(&within, false, 2 * MB - PAGE), OrderMask::EMPTY);
    assert_eq!(internal(&within, true, 2 * MB - PAGE), OrderMask::PMD);
}

#[test]
fn inherit_orders_are_judged_on_the_pmd_order() {
    let mut settings = top(ShmemEnabled::WithinSize);
    settings.store_per_size(4, "inherit\n").unwrap();
    let internal =
        |i_size| allowable_orders(&settings, ShmemMount::Internal, fault(false), i_size, 0);
    // 64K would fit a 64K file, but the top level is asked about 2M.
    assert_eq!(internal(64 * KB), OrderMask::EMPTY);
    assert_eq!(internal(2 * MB), mask(&[4, 9]));
}

#[test]
fn internal_writes_follow_the_per_size_knobs() {
    let internal = |settings: &HugeSettings, end, index| {
        allowable_orders(
            settings,
            ShmemMount::Internal,
            ShmemAccess::Write { end },
            0,
            index,
        )
    };
    // Defaults: 2M inherits from a top level of never: nothing.
    let mut settings = HugeSettings::default();
    assert_eq!(internal(&settings, 4 * MB, 0), OrderMask::EMPTY);
    // The 2M knob on its own gives 2M folios to a 4M write.
    settings.store_per_size(9, "always").unwrap();
    assert_eq!(internal(&settings, 4 * MB, 0), mask(&[9]));
    // So does the top level, through inherit.
    let mut settings = HugeSettings::default();
    settings.store_shmem_enabled("always").unwrap();
    assert_eq!(internal(&settings, 4 * MB, 0), mask(&[9]));
    // A 64K knob alone: 64K folios, whatever the top level says.
    let mut settings = HugeSettings::default();
    settings.store_per_size(4, "always").unwrap();
    assert_eq!(internal(&settings, 4 * MB, 0), mask(&[4]));
    // Cut to the write and its alignment.
    let settings = all_sizes(PerSizeEnabled::Always);
    assert_eq!(internal(&settings, 64 * KB, 0), mask(&[2, 3, 4]));
    assert_eq!(internal(&settings, 4 * MB, 4), mask(&[2]));
    // within_size counts the bytes the write brings.
    let settings = all_sizes(PerSizeEnabled::WithinSize);
    assert_eq!(internal(&settings, 32 * KB, 0), mask(&[2, 3]));
    // deny still wins.
    let mut settings = all_sizes(PerSizeEnabled::Always);
    settings.shmem_enabled = ShmemEnabled::Deny;
    assert_eq!(internal(&settings, 4 * MB, 0), OrderMask::EMPTY);
}

#[test]
fn suitable_orders_into_an_empty_cache_try_everything() {
    assert_eq!(
        collect(suitable_orders(OrderMask::ALL, 0, |_, _| true)),
        [9, 8, 7, 6, 5, 4, 3, 2, 0]
    );
    assert_eq!(
        collect(suitable_orders(mask(&[4, 9]), 3, |_, _| true)),
        [9, 4, 0]
    );
}

#[test]
fn suitable_orders_always_end_with_order_0() {
    assert_eq!(
        collect(suitable_orders(OrderMask::EMPTY, 0, |_, _| true)),
        [0]
    );
    // Page 7 itself is cached: no range holding it is empty.
    let cached = |start: u64, nr: u64| !(start..start + nr).contains(&7);
    assert_eq!(collect(suitable_orders(OrderMask::ALL, 7, cached)), [0]);
}

#[test]
fn suitable_orders_skip_ranges_with_cached_pages() {
    // Page 5 cached; page 0 wants a folio. Every range from order 3 up
    // holds page 5; [0, 4) is the largest empty one.
    let cached = |start: u64, nr: u64| !(start..start + nr).contains(&5);
    assert_eq!(collect(suitable_orders(OrderMask::ALL, 0, cached)), [2, 0]);
    // Page 0 cached; page 100 wants a folio: [64, 128) is the largest.
    let cached = |start: u64, nr: u64| !(start..start + nr).contains(&0);
    assert_eq!(
        collect(suitable_orders(OrderMask::ALL, 100, cached)),
        [6, 5, 4, 3, 2, 0]
    );
    // Gaps in the mask are kept as gaps.
    let cached = |start: u64, nr: u64| !(start..start + nr).contains(&20);
    assert_eq!(
        collect(suitable_orders(mask(&[2, 4, 9]), 0, cached)),
        [4, 2, 0]
    );
}

#[test]
fn exec_text_gets_64k_folios_when_the_mthp_bit_is_set() {
    assert_eq!(arch_wants_exec_folio_order(), 4);
    let mut settings = HugeSettings::default();
    let never = ShmemMount::Mounted(MountHuge::Never);
    assert_eq!(exec_folio_order(&settings, never), None);
    settings.store_thp_exec_enabled("0x2").unwrap();
    assert_eq!(exec_folio_order(&settings, never), Some(4));
    let always = ShmemMount::Mounted(MountHuge::Always);
    assert_eq!(exec_folio_order(&settings, always), Some(4));
    assert_eq!(exec_folio_order(&settings, ShmemMount::Internal), None);
    settings.shmem_enabled = ShmemEnabled::Deny;
    assert_eq!(exec_folio_order(&settings, never), None);
}

#[test]
fn suitable_orders_ask_about_naturally_aligned_ranges() {
    let asked = std::cell::RefCell::new(Vec::new());
    let full = |start: u64, nr: u64| {
        asked.borrow_mut().push((start, nr));
        false
    };
    assert_eq!(collect(suitable_orders(mask(&[2, 4, 9]), 1000, full)), [0]);
    assert_eq!(*asked.borrow(), [(512, 512), (992, 16), (1000, 4)]);
}
