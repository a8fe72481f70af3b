//! The operands of range TLB invalidation (FEAT_TLBIRANGE's `TLBI
//! RVALE1IS`), as Linux's `__flush_tlb_range_op` builds them
//! (`arch/arm64/include/asm/tlbflush.h`): one operation covers (NUM + 1)
//! << (5 * SCALE + 1) pages from BaseADDR, so a run of pages goes as a few
//! operations, largest scale first (Linux 6.12's order), and a last odd
//! page alone. Pure: the host tests it.

/// One invalidation: a single page (`TLBI VALE1IS`) or a range (`TLBI
/// RVALE1IS`), with its Xt operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tlbi {
    /// `TLBI VALE1IS`: ASID[63:48], VA[55:12] in bits 43:0.
    Page(u64),
    /// `TLBI RVALE1IS`: ASID[63:48], TG[47:46] (0b01: 4K), SCALE[45:44],
    /// NUM[43:39], TTL[38:37] (0: any level), BaseADDR[36:0] (VA[48:12]).
    Range(u64),
}

/// The most pages one range operation covers: NUM 31 at SCALE 3 (Linux:
/// `MAX_TLBI_RANGE_PAGES`).
pub const MAX_TLBI_RANGE_PAGES: u64 = range_pages(31, 3);

/// Pages a range operation with `num` and `scale` covers (Linux:
/// `__TLBI_RANGE_PAGES`).
pub const fn range_pages(num: u64, scale: u64) -> u64 {
    (num + 1) << (5 * scale + 1)
}

/// The NUM that covers as many of `pages` as one operation at `scale`
/// can, or None if `pages` is under one unit (2 << 5 * scale pages) there
/// (Linux: `__TLBI_RANGE_NUM`).
fn range_num(pages: u64, scale: u64) -> Option<u64> {
    (pages.min(range_pages(31, scale)) >> (5 * scale + 1)).checked_sub(1)
}

/// The invalidations for `pages` pages from page number `first` (VA >> 12)
/// of address space `asid`, in order: with `range`, one range operation at
/// each scale from the largest down while it covers anything, and a last
/// odd page alone; without, one per page. Callers flush the whole ASID
/// instead beyond `MAX_TLBI_RANGE_PAGES`, past which the rest goes by
/// pages.
pub fn ops(asid: u16, first: u64, pages: u64, range: bool) -> impl Iterator<Item = Tlbi> {
    let tag = (asid as u64) << 48;
    let (mut page, mut left, mut scale) = (first, pages, Some(3u64));
    core::iter::from_fn(move || loop {
        if left == 0 {
            return None;
        }
        let Some(s) = scale.filter(|_| range && left > 1) else {
            let op = Tlbi::Page(tag | (page & ((1 << 44) - 1)));
            (page, left) = (page + 1, left - 1);
            return Some(op);
        };
        scale = s.checked_sub(1);
        if let Some(num) = range_num(left, s) {
            let op = tag | (0b01 << 46) | (s << 44) | (num << 39) | (page & ((1 << 37) - 1));
            let covered = range_pages(num, s);
            (page, left) = (page + covered, left - covered);
            return Some(Tlbi::Range(op));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// The pages each operation names, decoded as the hardware reads them.
    fn covered(ops: &[Tlbi]) -> Vec<u64> {
        let mut pages = Vec::new();
        for op in ops {
            match *op {
                Tlbi::Page(x) => pages.push(x & ((1 << 44) - 1)),
                Tlbi::Range(x) => {
                    assert_eq!((x >> 46) & 3, 0b01, "TG is 4K");
                    let (scale, num) = ((x >> 44) & 3, (x >> 39) & 31);
                    let base = x & ((1 << 37) - 1);
                    pages.extend(base..base + range_pages(num, scale));
                }
            }
        }
        pages
    }

    #[test]
    fn ranges_cover_exactly_the_pages() {
        for pages in [1, 2, 3, 16, 17, 64, 512, 513, 1000, 4096, 100_000] {
            let first = 0xf_ffef_ff00;
            let ops: Vec<_> = ops(5, first, pages, true).collect();
            assert_eq!(
                covered(&ops),
                (first..first + pages).collect::<Vec<_>>(),
                "{pages} pages"
            );
            assert!(
                ops.len() <= 8,
                "{pages} pages took {} operations",
                ops.len()
            );
        }
    }

    #[test]
    fn a_64k_block_is_one_operation() {
        let ops: Vec<_> = ops(3, 0x400, 16, true).collect();
        // NUM 7 at SCALE 0: 16 pages; ASID 3, TG 4K, base page 0x400.
        assert_eq!(
            ops,
            [Tlbi::Range((3 << 48) | (1 << 46) | (7 << 39) | 0x400)]
        );
    }

    #[test]
    fn without_ranges_one_page_each() {
        let ops: Vec<_> = ops(1, 10, 3, false).collect();
        let tag = 1 << 48;
        assert_eq!(
            ops,
            [
                Tlbi::Page(tag | 10),
                Tlbi::Page(tag | 11),
                Tlbi::Page(tag | 12)
            ]
        );
    }

    #[test]
    fn the_largest_range() {
        assert_eq!(MAX_TLBI_RANGE_PAGES, 32 << 16);
        let ops: Vec<_> = ops(0, 0, MAX_TLBI_RANGE_PAGES, true).collect();
        assert_eq!(covered(&ops).len() as u64, MAX_TLBI_RANGE_PAGES);
    }
}
