//! Host tests of `contpte`.

use super::*;
use crate::arch::desc::PgProt;
use std::boxed::Box;
use std::vec::Vec;

#[derive(Default)]
struct Log {
    off: bool,
    flushes: Vec<Range<usize>>,
    folds: usize,
    unfolds: usize,
}
impl ContpteOps for Log {
    fn enabled(&self) -> bool {
        !self.off
    }
    fn flush(&mut self, idx: Range<usize>) {
        self.flushes.push(idx);
    }
    fn converted(&mut self, fold: bool) {
        if fold {
            self.folds += 1;
        } else {
            self.unfolds += 1;
        }
    }
}

fn table() -> Box<PageTable> {
    Box::new(core::array::from_fn(|_| AtomicU64::new(0)))
}
fn prot() -> PgProt {
    PgProt::user(true, false)
}
fn page(pa: u64) -> Pte {
    Pte::page(PhysAddr(pa), prot())
}
const BASE: u64 = 0x4000_0000;
fn whole(start: u64, len: usize) -> Range<PhysAddr> {
    PhysAddr(start)..PhysAddr(start).add(len)
}
fn conts(t: &PageTable) -> Vec<bool> {
    (0..512).map(|i| load(t, i).is_contiguous()).collect()
}
/// Checks the architectural rule on a whole table: any entry with the
/// bit lies in a block of 16 valid entries, consecutive from an aligned
/// PA, with equal attributes.
fn assert_blocks_legal(t: &PageTable) {
    for b in (0..512).step_by(CONT_PTES) {
        let any = (b..b + CONT_PTES).any(|i| load(t, i).is_contiguous());
        if !any {
            continue;
        }
        let first = load(t, b);
        assert!(
            first.addr().is_aligned(CONT_PTE_SIZE),
            "block {b} PA misaligned"
        );
        for (k, i) in (b..b + CONT_PTES).enumerate() {
            let p = load(t, i);
            assert!(
                p.is_valid() && p.is_contiguous(),
                "block {b} entry {k} breaks it"
            );
            assert_eq!(p.addr(), first.addr().add(k * PAGE_SIZE));
            assert_eq!(p.old_clean().prot(), first.old_clean().prot());
        }
    }
}

#[test]
fn set_ptes_sets_the_bit_exactly_on_aligned_whole_chunks() {
    // Every start entry in the first two blocks, every PA offset in a
    // block, every run length up to 5 blocks.
    for start in 0..2 * CONT_PTES {
        for pa_off in 0..CONT_PTES {
            for nr in 1..=5 * CONT_PTES {
                let t = table();
                let mut log = Log::default();
                let pa = BASE + (pa_off * PAGE_SIZE) as u64;
                let folio = whole(BASE, 8 * CONT_PTE_SIZE);
                set_ptes(&t, start, page(pa), nr, || folio, &mut log);
                assert_blocks_legal(&t);
                for i in 0..512 {
                    let p = load(&t, i);
                    let inside = (start..start + nr).contains(&i);
                    assert_eq!(p.is_valid(), inside);
                    if !inside {
                        continue;
                    }
                    assert_eq!(p.addr().0, pa + ((i - start) * PAGE_SIZE) as u64);
                    let b = block_of(i);
                    let want = b.start >= start
                        && b.end <= start + nr
                        && (pa_off + b.start - start).is_multiple_of(CONT_PTES);
                    assert_eq!(
                        p.is_contiguous(),
                        want,
                        "start {start} pa_off {pa_off} nr {nr} i {i}"
                    );
                }
                assert!(log.flushes.is_empty(), "none -> valid needs no flush");
            }
        }
    }
}

#[test]
fn knob_off_never_sets_the_bit() {
    let t = table();
    let mut log = Log {
        off: true,
        ..Log::default()
    };
    set_ptes(
        &t,
        0,
        page(BASE),
        64,
        || whole(BASE, 64 * PAGE_SIZE),
        &mut log,
    );
    for i in 0..64 {
        set_ptes(
            &t,
            64 + i,
            page(BASE + ((64 + i) * PAGE_SIZE) as u64),
            1,
            || whole(BASE, 1 << 21),
            &mut log,
        );
    }
    assert!(conts(&t).iter().all(|c| !c));
    assert_eq!(log.folds, 0);
}

#[test]
fn ascending_single_writes_fold_at_entry_15() {
    let t = table();
    let mut log = Log::default();
    let folio = whole(BASE, CONT_PTE_SIZE * 2);
    for i in 0..2 * CONT_PTES {
        set_ptes(
            &t,
            i,
            page(BASE + (i * PAGE_SIZE) as u64),
            1,
            || folio.clone(),
            &mut log,
        );
        let folded = (i + 1) / CONT_PTES;
        assert_eq!(log.folds, folded, "after entry {i}");
        assert_blocks_legal(&t);
    }
    assert!(conts(&t)[..32].iter().all(|c| *c));
    assert_eq!(
        log.flushes,
        [0..16, 16..32],
        "each fold is break-before-make"
    );
}

#[test]
fn descending_single_writes_never_fold() {
    let t = table();
    let mut log = Log::default();
    for i in (0..CONT_PTES).rev() {
        set_ptes(
            &t,
            i,
            page(BASE + (i * PAGE_SIZE) as u64),
            1,
            || whole(BASE, CONT_PTE_SIZE),
            &mut log,
        );
    }
    assert_eq!(log.folds, 0);
    assert!(conts(&t).iter().all(|c| !c));
}

#[test]
fn no_fold_across_folios_misaligned_pa_or_unlike_entries() {
    // Entry 15 is the folio's last page, but the block starts before it.
    let t = table();
    let mut log = Log::default();
    for i in 0..CONT_PTES {
        let folio = if i < 8 {
            whole(BASE, 8 * PAGE_SIZE)
        } else {
            whole(BASE + 0x8000, 8 * PAGE_SIZE)
        };
        set_ptes(
            &t,
            i,
            page(BASE + (i * PAGE_SIZE) as u64),
            1,
            || folio,
            &mut log,
        );
    }
    assert_eq!(log.folds, 0, "two folios");
    // Misaligned PA: frames consecutive but base not 64K-aligned.
    let t = table();
    for i in 0..CONT_PTES {
        set_ptes(
            &t,
            i,
            page(BASE + ((i + 1) * PAGE_SIZE) as u64),
            1,
            || whole(BASE, 1 << 21),
            &mut log,
        );
    }
    assert_eq!(log.folds, 0, "misaligned PA");
    // One read-only entry.
    let t = table();
    for i in 0..CONT_PTES {
        let p = page(BASE + (i * PAGE_SIZE) as u64);
        let p = if i == 3 { p.wrprotect() } else { p };
        set_ptes(&t, i, p, 1, || whole(BASE, 1 << 21), &mut log);
    }
    assert_eq!(log.folds, 0, "unlike attributes");
    // A gap: entry 7 maps the wrong frame.
    let t = table();
    for i in 0..CONT_PTES {
        let f = if i == 7 { 100 } else { i };
        set_ptes(
            &t,
            i,
            page(BASE + (f * PAGE_SIZE) as u64),
            1,
            || whole(BASE, 1 << 21),
            &mut log,
        );
    }
    assert_eq!(log.folds, 0, "frames out of order");
}

fn mapped_blocks(n: usize) -> (Box<PageTable>, Log) {
    let t = table();
    let mut log = Log::default();
    set_ptes(
        &t,
        0,
        page(BASE),
        n * CONT_PTES,
        || whole(BASE, n * CONT_PTE_SIZE),
        &mut log,
    );
    (t, log)
}

#[test]
fn ptep_get_ors_young_and_dirty_over_the_block() {
    let (t, _) = mapped_blocks(1);
    for i in 0..CONT_PTES {
        let p = load(&t, i).old_clean();
        set_pte(&t[i], p);
    }
    assert!(!ptep_get(&t, 0).is_young());
    // The hardware marked entry 9 dirty and entry 4 young.
    set_pte(&t[9], Pte(load(&t, 9).0 | 1 << 55));
    set_pte(&t[4], Pte(load(&t, 4).0 | 1 << 10));
    for i in 0..CONT_PTES {
        let p = ptep_get(&t, i);
        assert!(p.is_dirty() && p.is_young(), "entry {i}");
        assert_eq!(p.addr(), load(&t, i).addr());
    }
    // A plain entry reports only itself.
    let (t, mut log) = mapped_blocks(1);
    set_pte(&t[9], Pte(load(&t, 9).0 | 1 << 55));
    unfold(&t, 0, &mut log);
    assert!(
        ptep_get(&t, 2).is_dirty(),
        "unfold spreads the block's dirty bit"
    );
    set_pte(&t[2], load(&t, 2).old_clean());
    assert!(!ptep_get(&t, 2).is_dirty());
}

#[test]
fn unfold_then_refold() {
    let (t, mut log) = mapped_blocks(1);
    unfold(&t, 5, &mut log);
    assert_eq!(log.unfolds, 1);
    assert_eq!(log.flushes, std::vec![0..16_usize]);
    assert!(conts(&t).iter().all(|c| !c));
    unfold(&t, 5, &mut log);
    assert_eq!(log.unfolds, 1, "unfolding a plain entry does nothing");
    try_fold(&t, 15, whole(BASE, CONT_PTE_SIZE), &mut log);
    assert_eq!(log.folds, 1);
    assert!(conts(&t)[..16].iter().all(|c| *c));
    assert_blocks_legal(&t);
}

fn zap(t: &PageTable, range: Range<usize>, log: &mut Log) -> Vec<(usize, Pte)> {
    let mut out = Vec::new();
    clear_range(t, range, log, |i, p| out.push((i, p)));
    out
}

#[test]
fn zap_of_whole_blocks_does_not_unfold() {
    let (t, mut log) = mapped_blocks(3);
    set_pte(&t[20], Pte(load(&t, 20).0 | 1 << 55));
    let out = zap(&t, 16..48, &mut log);
    assert_eq!(log.unfolds, 0);
    assert!(log.flushes.is_empty(), "the caller flushes once");
    assert_eq!(out.len(), 32);
    assert!(
        out.iter().all(|(i, p)| p.is_dirty() == (*i < 32)),
        "dirty gathered per block"
    );
    assert!((16..48).all(|i| load(&t, i).is_none()));
    assert!(conts(&t)[..16].iter().all(|c| *c), "block 0 untouched");
    assert_blocks_legal(&t);
}

#[test]
fn zap_of_part_of_a_block_unfolds_it_first() {
    for (range, unfolds) in [
        (3..9, 1),
        (0..9, 1),
        (9..16, 1),
        (5..40, 2),
        (20..44, 2),
        (16..17, 1),
    ] {
        let (t, mut log) = mapped_blocks(3);
        let out = zap(&t, range.clone(), &mut log);
        assert_eq!(log.unfolds, unfolds, "{range:?}");
        assert_eq!(
            out.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            range.clone().collect::<Vec<_>>()
        );
        for i in 0..48 {
            let p = load(&t, i);
            assert_eq!(p.is_valid(), !range.contains(&i), "{range:?} entry {i}");
            if p.is_valid() {
                assert_eq!(
                    p.addr().0,
                    BASE + (i * PAGE_SIZE) as u64,
                    "data stays mapped"
                );
            }
        }
        assert_blocks_legal(&t);
    }
}

#[test]
fn mprotect_keeps_whole_blocks_folded_and_unfolds_partial_ones() {
    let ro = |p: Pte| p.wrprotect();
    let (t, mut log) = mapped_blocks(2);
    change_range(&t, 0..16, &mut log, ro);
    assert_eq!(log.unfolds, 0);
    assert_eq!(log.flushes, std::vec![0..16_usize]);
    assert!((0..16).all(|i| load(&t, i).is_contiguous() && !load(&t, i).prot().is_writable()));
    assert!((16..32).all(|i| load(&t, i).prot().is_writable()));
    assert_blocks_legal(&t);

    let (t, mut log) = mapped_blocks(2);
    change_range(&t, 8..24, &mut log, ro);
    assert_eq!(log.unfolds, 2);
    for i in 0..32 {
        let p = load(&t, i);
        assert!(p.is_valid() && !p.is_contiguous());
        assert_eq!(p.prot().is_writable(), !(8..24).contains(&i), "entry {i}");
    }
    assert_blocks_legal(&t);

    // `f` making a whole block's entries unlike unfolds it.
    let (t, mut log) = mapped_blocks(1);
    change_range(&t, 0..16, &mut log, |p| {
        if p.addr().0 == BASE {
            p.wrprotect()
        } else {
            p
        }
    });
    assert_eq!(log.unfolds, 1);
    assert!(conts(&t).iter().all(|c| !c));
    assert_blocks_legal(&t);
}

#[test]
fn a_write_to_a_clean_block_dirties_all_of_it() {
    let (t, mut log) = mapped_blocks(2);
    assert!((0..32).all(|i| !load(&t, i).is_dirty()), "mapped clean");
    set_access_flags(&t, 5, true);
    assert!(
        (0..16).all(|i| load(&t, i).is_dirty() && load(&t, i).prot().is_writable()),
        "every entry of the block, read-write"
    );
    assert!(
        (16..32).all(|i| !load(&t, i).is_dirty()),
        "the next block stays clean"
    );
    assert_blocks_legal(&t);
    // A plain entry alone; an empty one stays empty.
    unfold(&t, 16, &mut log);
    set_access_flags(&t, 20, true);
    assert!((16..32).all(|i| load(&t, i).is_dirty() == (i == 20)));
    set_access_flags(&t, 40, true);
    assert!(load(&t, 40).is_none());
}

#[test]
fn mprotect_keeps_a_block_the_mmu_dirtied_in_part() {
    let (t, mut log) = mapped_blocks(1);
    // The MMU made entry 3 dirty: AP[2] cleared, as TCR_EL1.HD does.
    set_pte(&t[3], Pte(load(&t, 3).0 & !(1 << 7)));
    change_range(&t, 0..16, &mut log, |p| p);
    assert_eq!(log.unfolds, 0, "the entries still agree once gathered");
    assert!((0..16).all(|i| load(&t, i).is_contiguous() && load(&t, i).is_dirty()));
    assert_blocks_legal(&t);
}
