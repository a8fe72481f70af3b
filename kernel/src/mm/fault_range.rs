//! Which pages one fault may map: the range arithmetic of `finish_fault`
//! after seed 000 and of fault-around (Linux: `mm/memory.c` `finish_fault`,
//! the `nr_pages` computation, and `do_fault_around`). Pure, host-tested.

use core::ops::Range;

use crate::mm::addr::{PAGE_SIZE, PMD_SIZE};

/// The largest VA range around the page at `addr` that `finish_fault` may
/// map from one folio: inside the VMA, the PMD (one page table), the folio
/// (mapped at `folio`, as VAs) and the file (`eof`: the VA just past the
/// file's last page). Always holds `addr`'s page when that page is inside
/// all four.
pub fn finish_fault_range(
    addr: usize,
    vma: Range<usize>,
    folio: Range<usize>,
    eof: usize,
) -> Range<usize> {
    let pmd = addr & !(PMD_SIZE - 1);
    let start = vma.start.max(pmd).max(folio.start);
    let end = vma.end.min(pmd + PMD_SIZE).min(folio.end).min(eof);
    start..end.max(start)
}

/// The window a read fault at `addr` maps cached pages in (Linux:
/// `do_fault_around`): `bytes` (a power of two, at least a page) aligned
/// down around `addr`, cut to the VMA and to the page table holding
/// `addr`.
pub fn fault_around_window(addr: usize, vma: Range<usize>, bytes: usize) -> Range<usize> {
    let nr = (bytes / PAGE_SIZE).max(1);
    let pmd = addr & !(PMD_SIZE - 1);
    let pte_off = (addr - pmd) / PAGE_SIZE;
    let vma_off = (addr - vma.start) / PAGE_SIZE;
    let from = (pte_off & !(nr - 1)).max(pte_off - pte_off.min(vma_off));
    let to = (from + nr)
        .min(PMD_SIZE / PAGE_SIZE)
        .min(pte_off + (vma.end - addr).div_ceil(PAGE_SIZE));
    pmd + from * PAGE_SIZE..pmd + to * PAGE_SIZE
}

/// Can a folio of `order` hold the page at `addr` of a VMA spanning `vma`
/// whose first page is file page `pgoff`, mapped in one piece? Its
/// naturally aligned VA block must lie inside the VMA, and the VMA's start
/// must be congruent with its file offset modulo the folio size, so that
/// the aligned block of file pages is also the aligned block of VAs (Linux:
/// `thp_vma_suitable_order`).
pub fn thp_vma_suitable(addr: usize, vma: Range<usize>, pgoff: u64, order: u8) -> bool {
    let size = PAGE_SIZE << order;
    let haddr = addr & !(size - 1);
    let nr = 1u64 << order;
    let congruent = (vma.start as u64 / PAGE_SIZE as u64)
        .wrapping_sub(pgoff)
        .is_multiple_of(nr);
    congruent && haddr >= vma.start && haddr + size <= vma.end
}

/// Narrows `range` to the run of consecutive pages around `addr` whose
/// entries `is_none` says are empty, so a multi-page map never overwrites
/// a present entry. Empty if `addr`'s own entry is present.
pub fn none_run(range: Range<usize>, addr: usize, is_none: impl Fn(usize) -> bool) -> Range<usize> {
    if !range.contains(&addr) || !is_none(addr) {
        return addr..addr;
    }
    let mut start = addr;
    while start > range.start && is_none(start - PAGE_SIZE) {
        start -= PAGE_SIZE;
    }
    let mut end = addr + PAGE_SIZE;
    while end < range.end && is_none(end) {
        end += PAGE_SIZE;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: usize = PAGE_SIZE;
    const BASE: usize = 0x4000_0000;

    #[test]
    fn bounded_by_vma_pmd_folio_and_eof() {
        let far = usize::MAX;
        // A 64K folio wholly inside a big VMA: the folio.
        let folio = BASE..BASE + 16 * P;
        assert_eq!(
            finish_fault_range(BASE + 3 * P, 0..far, folio.clone(), far),
            folio
        );
        // The VMA cuts it.
        let vma = BASE + 2 * P..BASE + 10 * P;
        assert_eq!(
            finish_fault_range(BASE + 3 * P, vma.clone(), folio.clone(), far),
            vma
        );
        // The file ends inside it.
        assert_eq!(
            finish_fault_range(BASE + 3 * P, 0..far, folio.clone(), BASE + 5 * P),
            BASE..BASE + 5 * P
        );
        // A 2M folio mapped across a PMD boundary (misaligned VA): only the
        // part in the faulting address's PMD.
        let big = BASE + PMD_SIZE - 4 * P..BASE + 2 * PMD_SIZE - 4 * P;
        assert_eq!(
            finish_fault_range(BASE + PMD_SIZE - P, 0..far, big.clone(), far),
            BASE + PMD_SIZE - 4 * P..BASE + PMD_SIZE
        );
        assert_eq!(
            finish_fault_range(BASE + PMD_SIZE, 0..far, big, far),
            BASE + PMD_SIZE..BASE + 2 * PMD_SIZE - 4 * P
        );
        // Past EOF: not the faulting page.
        let past = finish_fault_range(BASE + 8 * P, 0..far, folio, BASE + 4 * P);
        assert!(!past.contains(&(BASE + 8 * P)));
    }

    #[test]
    fn fault_around_window_follows_linux() {
        let far = 0..usize::MAX & !(PAGE_SIZE - 1);
        // The aligned 64K around the fault.
        assert_eq!(
            fault_around_window(BASE + 21 * P, far.clone(), 16 * P),
            BASE + 16 * P..BASE + 32 * P
        );
        // Cut by the VMA at either end.
        let vma = BASE + 18 * P..BASE + 25 * P;
        assert_eq!(fault_around_window(BASE + 21 * P, vma.clone(), 16 * P), vma);
        // Never into the next page table.
        let top = BASE + PMD_SIZE - P;
        assert_eq!(
            fault_around_window(top, far.clone(), 16 * P),
            BASE + PMD_SIZE - 16 * P..BASE + PMD_SIZE
        );
        // 4096 bytes: just the page; 2M: the whole table.
        assert_eq!(
            fault_around_window(BASE + 5 * P, far.clone(), P),
            BASE + 5 * P..BASE + 6 * P
        );
        assert_eq!(
            fault_around_window(BASE + 5 * P, far, PMD_SIZE),
            BASE..BASE + PMD_SIZE
        );
    }

    #[test]
    fn thp_vma_suitable_needs_the_block_inside_and_congruent() {
        let two_m = BASE..BASE + PMD_SIZE;
        assert!(thp_vma_suitable(BASE + 5 * P, two_m.clone(), 0, 9));
        // One page short of the block: no 2M, but 64K still fits.
        let short = BASE..BASE + PMD_SIZE - P;
        assert!(!thp_vma_suitable(BASE + 5 * P, short.clone(), 0, 9));
        assert!(thp_vma_suitable(BASE + 5 * P, short.clone(), 0, 4));
        // The last 64K block is cut by the VMA's end.
        assert!(!thp_vma_suitable(BASE + PMD_SIZE - 2 * P, short, 0, 4));
        // A file offset of one page: the VA block and the file block differ.
        assert!(!thp_vma_suitable(BASE + 5 * P, two_m.clone(), 1, 4));
        assert!(thp_vma_suitable(BASE + 5 * P, two_m.clone(), 1, 0));
        // An offset that is a multiple of the folio keeps it congruent.
        assert!(thp_vma_suitable(BASE + 5 * P, two_m.clone(), 16, 4));
        assert!(!thp_vma_suitable(BASE + 5 * P, two_m, 16, 9));
        // A 64K view at 64K: a 64K folio; a 2M one never.
        let view = BASE + 16 * P..BASE + 32 * P;
        assert!(thp_vma_suitable(BASE + 20 * P, view.clone(), 0, 4));
        assert!(!thp_vma_suitable(BASE + 20 * P, view, 0, 5));
    }

    #[test]
    fn none_run_stops_at_present_entries() {
        let range = BASE..BASE + 16 * P;
        let present = [BASE + 2 * P, BASE + 9 * P];
        let none = |va: usize| !present.contains(&va);
        assert_eq!(
            none_run(range.clone(), BASE + 5 * P, none),
            BASE + 3 * P..BASE + 9 * P
        );
        assert_eq!(none_run(range.clone(), BASE, none), BASE..BASE + 2 * P);
        assert_eq!(
            none_run(range.clone(), BASE + 15 * P, none),
            BASE + 10 * P..BASE + 16 * P
        );
        assert!(
            none_run(range.clone(), BASE + 2 * P, none).is_empty(),
            "the fault's own entry is present"
        );
        assert_eq!(none_run(range.clone(), BASE + 7 * P, |_| true), range);
        assert!(
            none_run(range, BASE + 16 * P, |_| true).is_empty(),
            "outside the range"
        );
    }
}
