//! The contiguous bit on user PTEs, "contpte" (Linux:
//! `arch/arm64/mm/contpte.c`, `arch/arm64/include/asm/pgtable.h`): 16
//! adjacent level-3 entries mapping a 64K-aligned VA range onto a
//! 64K-aligned, physically contiguous 64K of one folio may all set the
//! contiguous bit, and the TLB then caches them as one entry.
//!
//! The invariant kept here (Arm ARM D8.6.1, "The Contiguous bit"): while any
//! entry of a block has the bit, all 16 are valid, map consecutive frames
//! from an aligned base and share attributes. Changing a block is
//! break-before-make: clear all 16, invalidate the TLB for them, write the
//! new entries. Pure logic over one PTE table, host-tested; the caller
//! supplies the TLB invalidation through [`ContpteOps`].

use core::ops::Range;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::desc::Pte;
use crate::mm::addr::{PhysAddr, PAGE_SIZE};
use crate::mm::pgtable::PageTable;

/// Entries in one contiguous block (Linux: `CONT_PTES`).
pub const CONT_PTES: usize = 16;
/// Bytes one block maps (Linux: `CONT_PTE_SIZE`).
pub const CONT_PTE_SIZE: usize = CONT_PTES * PAGE_SIZE;

/// Smallest folio order executable file memory should have (Linux: arm64's
/// `arch_wants_exec_folio_order`, seed 004): 64K, one block here, so text
/// can map with the contiguous bit and take one iTLB entry per 64K.
pub const fn arch_wants_exec_folio_order() -> u8 {
    (CONT_PTE_SIZE / PAGE_SIZE).ilog2() as u8
}

/// What the block logic needs from the address space it works on.
pub trait ContpteOps {
    /// May new blocks be folded? (The `contpte=` knob.)
    fn enabled(&self) -> bool;
    /// Invalidate the TLB for entries `idx` of this table, just cleared.
    fn flush(&mut self, idx: Range<usize>);
    /// A block was folded (`true`) or unfolded (`false`): for `/proc/vmstat`.
    fn converted(&mut self, fold: bool);
}

/// The block holding entry `idx`.
fn block_of(idx: usize) -> Range<usize> {
    let start = idx & !(CONT_PTES - 1);
    start..start + CONT_PTES
}

/// Entry `idx` exactly as the table holds it, one entry only, with no
/// gathering over a block (Linux: `__ptep_get`).
fn load(table: &PageTable, idx: usize) -> Pte {
    Pte(table[idx].load(Ordering::Acquire))
}

/// Writes one entry with Release ordering (Linux: `__set_pte` without its
/// barrier); making it visible to the walker, and any TLB invalidation, is
/// the caller's.
fn store(slot: &AtomicU64, pte: Pte) {
    slot.store(pte.0, Ordering::Release);
}

/// Entry `idx` as software should see it: for a block, young and dirty
/// ORed over all 16 entries, since the hardware updates only the one it
/// used (Linux: `contpte_ptep_get`).
pub fn ptep_get(table: &PageTable, idx: usize) -> Pte {
    let pte = load(table, idx);
    if !pte.is_contiguous() {
        return pte;
    }
    block_of(idx).fold(pte, |acc, i| acc.with_access_of(load(table, i)))
}

/// Writes `nr` entries from `idx` mapping consecutive frames from
/// `pte.addr()` onto entries that were none (Linux: `set_ptes`,
/// `contpte_set_ptes`). Every block the run covers whole, at a 64K-aligned
/// PA, gets the contiguous bit. A single write that completes a block
/// (entry 15) folds it if all 16 now map `folio` (its PA range) in order,
/// as Linux's `contpte_try_fold` does. No TLB flush: the entries were none.
pub fn set_ptes(
    table: &PageTable,
    idx: usize,
    pte: Pte,
    nr: usize,
    folio: Range<PhysAddr>,
    ops: &mut impl ContpteOps,
) {
    if nr == 1 {
        // One page is never a whole block: no bit, but it may complete one.
        store(&table[idx], pte.with_cont(false));
        if (idx + 1).is_multiple_of(CONT_PTES) {
            try_fold(table, idx, folio, ops);
        }
        return;
    }
    let (enabled, end) = (ops.enabled(), idx + nr);
    // A block (or the part of one the run covers) at a time.
    let mut i = idx;
    while i < end {
        let block = block_of(i);
        let chunk = i..block.end.min(end);
        let pa = pte.addr().add((i - idx) * PAGE_SIZE);
        let cont = enabled && chunk == block && pa.is_aligned(CONT_PTE_SIZE);
        let first = pte.with_addr(pa).with_cont(cont).0;
        // The output address (bits 47:12) is the only field that moves:
        // adding whole pages to the descriptor moves it alone.
        let entry = |k: usize| Pte(first + (k * PAGE_SIZE) as u64);
        let slots = &table[chunk.clone()];
        if let Ok(block) = <&[AtomicU64; CONT_PTES]>::try_from(slots) {
            // A whole block, the usual case: a fixed count, unrolled.
            block
                .iter()
                .enumerate()
                .for_each(|(k, slot)| store(slot, entry(k)));
        } else {
            slots
                .iter()
                .enumerate()
                .for_each(|(k, slot)| store(slot, entry(k)));
        }
        i = chunk.end;
    }
}

/// Folds the block holding `idx` if it may be (Linux: `__contpte_try_fold`):
/// all 16 entries valid, not yet contiguous, mapping consecutive frames of
/// `folio` from a 64K-aligned base, with equal attributes.
pub fn try_fold(table: &PageTable, idx: usize, folio: Range<PhysAddr>, ops: &mut impl ContpteOps) {
    let block = block_of(idx);
    let first = load(table, block.start);
    let base = first.addr();
    if !ops.enabled()
        || !first.is_valid()
        || first.is_contiguous()
        || !base.is_aligned(CONT_PTE_SIZE)
        || base < folio.start
        || base.add(CONT_PTE_SIZE) > folio.end
    {
        return;
    }
    let expected = first.old_clean();
    let foldable = block.clone().enumerate().all(|(k, i)| {
        let pte = load(table, i);
        pte.is_valid() && pte.old_clean() == expected.with_addr(base.add(k * PAGE_SIZE))
    });
    if foldable {
        convert(table, block, true, ops);
    }
}

/// Clears the contiguous bit from the block holding `idx`, if it has it,
/// so one entry can change alone (Linux: `contpte_try_unfold`).
pub fn unfold(table: &PageTable, idx: usize, ops: &mut impl ContpteOps) {
    if load(table, idx).is_contiguous() {
        convert(table, block_of(idx), false, ops);
    }
}

/// Rewrites a block with the contiguous bit set or clear, break-before-make;
/// every new entry carries the block's gathered young and dirty bits (Linux:
/// `contpte_convert`).
fn convert(table: &PageTable, block: Range<usize>, cont: bool, ops: &mut impl ContpteOps) {
    let mut old = [Pte::NONE; CONT_PTES];
    let mut access = Pte::NONE;
    for (k, i) in block.clone().enumerate() {
        old[k] = Pte(table[i].swap(0, Ordering::AcqRel));
        access = access.with_access_of(old[k]);
    }
    ops.flush(block.clone());
    for (k, i) in block.enumerate() {
        store(&table[i], old[k].with_access_of(access).with_cont(cont));
    }
    ops.converted(cont);
}

/// Unfolds the blocks `range` covers only in part, so what follows can
/// treat every block it meets as either whole or plain.
fn unfold_partial_ends(table: &PageTable, range: &Range<usize>, ops: &mut impl ContpteOps) {
    if range.is_empty() {
        return;
    }
    if !range.start.is_multiple_of(CONT_PTES) {
        unfold(table, range.start, ops);
    }
    if !range.end.is_multiple_of(CONT_PTES) {
        unfold(table, range.end - 1, ops);
    }
}

/// The pieces of `range` that lie in one block each.
fn chunks(range: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    let mut at = range.start;
    core::iter::from_fn(move || {
        (at < range.end).then(|| {
            let piece = at..block_of(at).end.min(range.end);
            at = piece.end;
            piece
        })
    })
}

/// Clears entries `range`, handing each valid one to `f(idx, old)` with its
/// block's young and dirty gathered in (Linux: `get_and_clear_full_ptes`
/// as `zap_pte_range` uses it). Blocks the range covers whole are cleared
/// without unfolding; one it covers in part is unfolded first. The TLB
/// flush of the cleared entries is the caller's, once, before it frees
/// anything.
pub fn clear_range(
    table: &PageTable,
    range: Range<usize>,
    ops: &mut impl ContpteOps,
    mut f: impl FnMut(usize, Pte),
) {
    unfold_partial_ends(table, &range, ops);
    for chunk in chunks(range) {
        let mut old = [Pte::NONE; CONT_PTES];
        let mut access = Pte::NONE;
        for (k, i) in chunk.clone().enumerate() {
            old[k] = Pte(table[i].swap(0, Ordering::AcqRel));
            if old[k].is_contiguous() {
                access = access.with_access_of(old[k]);
            }
        }
        for (k, i) in chunk.enumerate() {
            if old[k].is_valid() {
                f(i, old[k].with_access_of(access));
            }
        }
    }
}

/// Replaces each valid entry of `range` with `f(old)` (Linux:
/// `change_pte_range` for mprotect). Each block's worth is cleared and
/// flushed before the new entries are written. A block covered whole stays
/// folded under its new attributes; one covered in part is unfolded first.
pub fn change_range(
    table: &PageTable,
    range: Range<usize>,
    ops: &mut impl ContpteOps,
    mut f: impl FnMut(Pte) -> Pte,
) {
    unfold_partial_ends(table, &range, ops);
    for chunk in chunks(range) {
        let mut old = [Pte::NONE; CONT_PTES];
        for (k, i) in chunk.clone().enumerate() {
            old[k] = Pte(table[i].swap(0, Ordering::AcqRel));
        }
        let n = chunk.len();
        if old[..n].iter().all(|p| !p.is_valid()) {
            continue;
        }
        ops.flush(chunk.clone());
        let new: [Pte; CONT_PTES] = core::array::from_fn(|k| {
            if k < n && old[k].is_valid() {
                f(old[k])
            } else {
                Pte::NONE
            }
        });
        // A whole block stays folded only if `f` kept its entries alike.
        let was_cont = old[0].is_contiguous();
        let stays = was_cont && new[1..n].iter().all(|p| p.prot() == new[0].prot());
        for (k, i) in chunk.enumerate() {
            let pte = if new[k].is_valid() {
                new[k].with_cont(stays)
            } else {
                new[k]
            };
            store(&table[i], pte);
        }
        if was_cont && !stays {
            ops.converted(false);
        }
    }
}

#[cfg(test)]
mod tests {
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
        Pte::leaf(PhysAddr(pa), prot(), true)
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
                    set_ptes(&t, start, page(pa), nr, folio, &mut log);
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
        set_ptes(&t, 0, page(BASE), 64, whole(BASE, 64 * PAGE_SIZE), &mut log);
        for i in 0..64 {
            set_ptes(
                &t,
                64 + i,
                page(BASE + ((64 + i) * PAGE_SIZE) as u64),
                1,
                whole(BASE, 1 << 21),
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
                folio.clone(),
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
                whole(BASE, CONT_PTE_SIZE),
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
                folio,
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
                whole(BASE, 1 << 21),
                &mut log,
            );
        }
        assert_eq!(log.folds, 0, "misaligned PA");
        // One read-only entry.
        let t = table();
        for i in 0..CONT_PTES {
            let p = page(BASE + (i * PAGE_SIZE) as u64);
            let p = if i == 3 { p.wrprotect() } else { p };
            set_ptes(&t, i, p, 1, whole(BASE, 1 << 21), &mut log);
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
                whole(BASE, 1 << 21),
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
            whole(BASE, n * CONT_PTE_SIZE),
            &mut log,
        );
        (t, log)
    }

    #[test]
    fn ptep_get_ors_young_and_dirty_over_the_block() {
        let (t, _) = mapped_blocks(1);
        for i in 0..CONT_PTES {
            let p = load(&t, i).old_clean();
            store(&t[i], p);
        }
        assert!(!ptep_get(&t, 0).is_young());
        // The hardware marked entry 9 dirty and entry 4 young.
        store(&t[9], Pte(load(&t, 9).0 | 1 << 55));
        store(&t[4], Pte(load(&t, 4).0 | 1 << 10));
        for i in 0..CONT_PTES {
            let p = ptep_get(&t, i);
            assert!(p.is_dirty() && p.is_young(), "entry {i}");
            assert_eq!(p.addr(), load(&t, i).addr());
        }
        // A plain entry reports only itself.
        let (t, mut log) = mapped_blocks(1);
        store(&t[9], Pte(load(&t, 9).0 | 1 << 55));
        unfold(&t, 0, &mut log);
        assert!(
            ptep_get(&t, 2).is_dirty(),
            "unfold spreads the block's dirty bit"
        );
        store(&t[2], load(&t, 2).old_clean());
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
        store(&t[20], Pte(load(&t, 20).0 | 1 << 55));
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
}
