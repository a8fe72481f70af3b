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
use core::sync::atomic::{fence, AtomicU64, Ordering};

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
fn set_pte(slot: &AtomicU64, pte: Pte) {
    slot.store(pte.0, Ordering::Release);
}

/// Clears one entry and returns what it held. An empty entry is only
/// read: nothing but the table's lock holder (the caller) makes an empty
/// entry valid, while the hardware may set the access flag of a valid one
/// at any time, which only an atomic swap keeps (Linux: `zap_pte_range`
/// skips `pte_none` entries before `ptep_get_and_clear_full`).
fn take(slot: &AtomicU64) -> Pte {
    match slot.load(Ordering::Relaxed) {
        0 => Pte::NONE,
        _ => Pte(slot.swap(0, Ordering::AcqRel)),
    }
}

/// Makes the entry in `slot` young, and dirty if `dirty`, if it is still
/// valid (Linux: `__ptep_set_access_flags`): a compare-and-swap, as the
/// MMU may set the same bits meanwhile. Making a clean entry read-write
/// relaxes a permission, which needs no break-before-make. Returns whether
/// the entry changed.
pub fn set_access_flags_one(slot: &AtomicU64, dirty: bool) -> bool {
    slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
        let old = Pte(v);
        let young = old.mkyoung();
        let new = if dirty { young.mkdirty() } else { young };
        (old.is_valid() && new != old).then_some(new.0)
    })
    .is_ok()
}

/// [`set_access_flags_one`] for entry `idx`, and for every entry of its
/// block if it is in one: a dirty-bit fault on one page of a block marks
/// the whole 64K, the unit the TLB holds it in (Linux:
/// `contpte_ptep_set_access_flags`).
pub fn set_access_flags(table: &PageTable, idx: usize, dirty: bool) {
    let entries = if load(table, idx).is_contiguous() {
        block_of(idx)
    } else {
        idx..idx + 1
    };
    for i in entries {
        set_access_flags_one(&table[i], dirty);
    }
}

/// Entry `idx` as software should see it: for a block, young and dirty
/// ORed over all 16 entries, since the hardware updates only the one it
/// used (Linux: `contpte_ptep_get`).
#[inline(always)]
pub fn ptep_get(table: &PageTable, idx: usize) -> Pte {
    let pte = load(table, idx);
    if !pte.is_contiguous() {
        return pte;
    }
    gather(table, idx, pte)
}

/// `pte`, entry `idx` of a block, with the young and dirty bits of the
/// block's other entries (Linux: `contpte_ptep_get`'s loop). Out of line,
/// so a fault on an empty entry pays one load and one test.
#[inline(never)]
fn gather(table: &PageTable, idx: usize, pte: Pte) -> Pte {
    block_of(idx).fold(pte, |acc, i| acc.with_access_of(load(table, i)))
}

/// Writes `nr` entries from `idx` mapping consecutive frames from
/// `pte.addr()` onto entries that were none (Linux: `set_ptes`). Every
/// block the run covers whole, at a 64K-aligned PA, gets the contiguous
/// bit. A single write that completes a block (entry 15, mapping frame
/// 15 of a 64K-aligned run) folds it if all 16 now map `folio` (its PA
/// range, asked for only then) in order, as Linux's `contpte_try_fold`
/// does. No TLB flush: the entries were none. Inlined, as Linux's is: one
/// entry is a store and a test.
#[inline]
pub fn set_ptes(
    table: &PageTable,
    idx: usize,
    pte: Pte,
    nr: usize,
    folio: impl FnOnce() -> Range<PhysAddr>,
    ops: &mut impl ContpteOps,
) {
    if nr == 1 {
        // One page is never a whole block: no bit, but it may complete one,
        // if it is the last of a block both in the table and in memory
        // (Linux: `contpte_try_fold`'s `valign` and `palign`).
        set_pte(&table[idx], pte.with_cont(false));
        let last_of_block = |i: usize| (i + 1).is_multiple_of(CONT_PTES);
        if last_of_block(idx) && last_of_block(pte.addr().pfn()) {
            try_fold(table, idx, folio(), ops);
        }
        return;
    }
    contpte_set_ptes(table, idx, pte, nr, ops.enabled());
}

/// [`set_ptes`] of more than one entry (Linux: `contpte_set_ptes`), with
/// whole blocks folded if `enabled`.
#[inline(never)]
fn contpte_set_ptes(table: &PageTable, idx: usize, pte: Pte, nr: usize, enabled: bool) {
    // One barrier orders the folio's contents before every entry of the
    // run (Linux: the `smp_wmb` of `__folio_mark_uptodate`), so each entry
    // is a plain store (Linux: `__set_ptes`' `WRITE_ONCE`), which takes an
    // offset from the table's base where a release store needs its own
    // address computed.
    fence(Ordering::Release);
    let end = idx + nr;
    // Blocks need the run's PA and VA equally placed in 64K; else (as for
    // a small file mapping the kernel placed anywhere) no entry can have
    // the bit, and the run is one plain loop.
    let in_step = pte.addr().pfn().wrapping_sub(idx).is_multiple_of(CONT_PTES);
    if !(enabled && in_step) {
        write_run(&table[idx..end], pte.with_cont(false).0);
        return;
    }
    // The usual run, a 64K folio's: exactly one block.
    if let Ok(block) = <&[AtomicU64; CONT_PTES]>::try_from(&table[idx..end]) {
        if idx.is_multiple_of(CONT_PTES) {
            write_run(block, pte.with_cont(true).0);
            return;
        }
    }
    // A block (or the part of one the run covers) at a time.
    let mut i = idx;
    while i < end {
        let block = block_of(i);
        let chunk = i..block.end.min(end);
        let pa = pte.addr().add((i - idx) * PAGE_SIZE);
        let first = pte.with_addr(pa).with_cont(chunk == block).0;
        let slots = &table[chunk.clone()];
        if let Ok(block) = <&[AtomicU64; CONT_PTES]>::try_from(slots) {
            // A whole block, the usual case: a fixed count, unrolled.
            write_run(block, first);
        } else {
            write_run(slots, first);
        }
        i = chunk.end;
    }
}

/// Writes `slots` with `first` and the entries after it, each mapping the
/// next frame: the output address (bits 47:12) is the only field that
/// moves, so adding whole pages to the descriptor moves it alone. Inlined,
/// so a fixed-size `slots` unrolls.
#[inline(always)]
fn write_run(slots: &[AtomicU64], first: u64) {
    let entry = |k: usize| first + (k * PAGE_SIZE) as u64;
    // The usual run, one whole block: sixteen stores, no loop. The kernel
    // stores them in pairs (`cont_block::write`); the host build, whose
    // tests check the logic around it, one at a time.
    if let Ok(block) = <&[AtomicU64; CONT_PTES]>::try_from(slots) {
        #[cfg(target_os = "none")]
        crate::arch::cont_block::write(block, first);
        #[cfg(not(target_os = "none"))]
        for (k, slot) in block.iter().enumerate() {
            slot.store(entry(k), Ordering::Relaxed);
        }
        return;
    }
    // Four at a time: a loop step costs as much as a store.
    let mut quads = slots.chunks_exact(4);
    for (q, quad) in quads.by_ref().enumerate() {
        for (k, slot) in quad.iter().enumerate() {
            slot.store(entry(4 * q + k), Ordering::Relaxed);
        }
    }
    let done = slots.len() & !3;
    for (k, slot) in quads.remainder().iter().enumerate() {
        slot.store(entry(done + k), Ordering::Relaxed);
    }
}

/// Folds the block holding `idx` if it may be (Linux: `__contpte_try_fold`):
/// all 16 entries valid, not yet contiguous, mapping consecutive frames of
/// `folio` from a 64K-aligned base, with equal attributes. Out of line:
/// once per 16 entries set one at a time.
#[inline(never)]
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
        set_pte(&table[i], old[k].with_access_of(access).with_cont(cont));
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
        // Unmapped stretches are common (a library's pages never touched):
        // those are only looked at.
        if table[chunk.clone()]
            .iter()
            .all(|e| e.load(Ordering::Relaxed) == 0)
        {
            continue;
        }
        let mut old = [Pte::NONE; CONT_PTES];
        let mut access = Pte::NONE;
        for (k, i) in chunk.clone().enumerate() {
            old[k] = take(&table[i]);
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

/// Replaces each valid entry of `range` with `f(old)`, `old` carrying its
/// block's young and dirty bits (Linux: `change_pte_range` for mprotect).
/// Each block's worth is cleared and flushed before the new entries are
/// written. A block covered whole stays folded under its new attributes;
/// one covered in part is unfolded first.
pub fn change_range(
    table: &PageTable,
    range: Range<usize>,
    ops: &mut impl ContpteOps,
    mut f: impl FnMut(Pte) -> Pte,
) {
    unfold_partial_ends(table, &range, ops);
    for chunk in chunks(range) {
        let mut old = [Pte::NONE; CONT_PTES];
        let mut access = Pte::NONE;
        for (k, i) in chunk.clone().enumerate() {
            old[k] = take(&table[i]);
            if old[k].is_contiguous() {
                access = access.with_access_of(old[k]);
            }
        }
        let n = chunk.len();
        if old[..n].iter().all(|p| !p.is_valid()) {
            continue;
        }
        ops.flush(chunk.clone());
        let new: [Pte; CONT_PTES] = core::array::from_fn(|k| {
            if k < n && old[k].is_valid() {
                f(old[k].with_access_of(access))
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
            set_pte(&table[i], pte);
        }
        if was_cont && !stays {
            ops.converted(false);
        }
    }
}

#[cfg(test)]
mod tests;
