//! Which folios go when a byte range of a file is removed, and which only
//! get zeroed (Linux: `mm/truncate.c`, `truncate_inode_pages_range`, and
//! `shmem_undo_range` in `mm/shmem.c`). `mm::filemap` carries the plan out.

use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE};
use crate::mm::folio_index::{folio_nr_pages, FolioIndex};

/// Pages needed to hold `bytes` bytes: ceil(bytes / PAGE_SIZE), without the
/// overflow of `bytes + PAGE_SIZE - 1` near `u64::MAX`.
pub const fn pages_for_bytes(bytes: u64) -> u64 {
    (bytes >> PAGE_SHIFT) + (bytes & (PAGE_SIZE as u64 - 1) != 0) as u64
}

/// What to do to one folio when the byte range [start, end) of a file is
/// removed (truncate: end = `u64::MAX`; hole punch: a finite range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoAction {
    /// The folio lies wholly inside the range: take it out of the index and
    /// free it.
    Remove {
        /// The folio's first page index.
        start: u64,
    },
    /// The folio lies partly inside the range: keep it, but zero the bytes
    /// [from, to) of it, counted from the folio's first byte, so that reads
    /// of the removed range see zeroes.
    Zero {
        /// The folio's first page index.
        start: u64,
        /// First byte to zero, from the folio's first byte.
        from: usize,
        /// End of the bytes to zero (exclusive), from the folio's first byte.
        to: usize,
    },
}

/// The plan for removing byte range [start, end) of a file: one action per
/// folio overlapping it, in index order (Linux: `shmem_undo_range` and
/// `truncate_inode_pages_range`), made as it is walked: the caller carries
/// it out a batch at a time (Linux: a `folio_batch`), so a file of any
/// size is truncated with no memory of its own.
///
/// A folio wholly inside the range is removed. A folio only partly inside
/// keeps all its pages and has the part inside zeroed. Linux first tries to
/// split such a folio so the pages wholly inside can be freed, and zeroes
/// only when the split fails (`truncate_inode_partial_folio`); we never
/// split, so a punched hole inside a large folio still holds memory and
/// still reads as data to `SEEK_HOLE`, just zeroed.
pub fn undo_range_plan<T>(
    index: &FolioIndex<T>,
    start: u64,
    end: u64,
) -> impl Iterator<Item = UndoAction> + '_ {
    // An empty range walks nothing.
    let (first, last) = if start < end {
        (start >> PAGE_SHIFT, pages_for_bytes(end))
    } else {
        (1, 0)
    };
    index.range(first, last).map(move |(head, order, _)| {
        // Offsets relative to the folio's first byte: its absolute end
        // can be 2^64 for the last folio a file can have.
        let first_byte = head << PAGE_SHIFT;
        let size = folio_nr_pages(order) << PAGE_SHIFT;
        let from = start.saturating_sub(first_byte);
        let to = (end - first_byte).min(size);
        if from == 0 && to == size {
            UndoAction::Remove { start: head }
        } else {
            UndoAction::Zero {
                start: head,
                from: from as usize,
                to: to as usize,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::folio_index::tests::index_of;
    use crate::mm::folio_index::MAX_INDEX;
    use std::vec;
    use std::vec::Vec;

    const PAGE: u64 = PAGE_SIZE as u64;
    const SZ_2M: usize = 2 << 20;

    fn plan<T>(index: &FolioIndex<T>, start: u64, end: u64) -> Vec<UndoAction> {
        undo_range_plan(index, start, end).collect()
    }

    #[test]
    fn pages_for_bytes_rounds_up() {
        assert_eq!(pages_for_bytes(0), 0);
        assert_eq!(pages_for_bytes(1), 1);
        assert_eq!(pages_for_bytes(PAGE - 1), 1);
        assert_eq!(pages_for_bytes(PAGE), 1);
        assert_eq!(pages_for_bytes(PAGE + 1), 2);
        assert_eq!(pages_for_bytes(u64::MAX), MAX_INDEX + 1);
    }

    #[test]
    fn truncate_to_zero_removes_every_folio() {
        let index = index_of(&[(0, 9), (512, 0), (1024, 3)]);
        assert_eq!(
            plan(&index, 0, u64::MAX),
            vec![
                UndoAction::Remove { start: 0 },
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 1024 },
            ]
        );
    }

    #[test]
    fn truncate_inside_a_2m_folio_zeroes_its_tail() {
        let index = index_of(&[(0, 9), (512, 9)]);
        assert_eq!(
            plan(&index, 5000, u64::MAX),
            vec![
                UndoAction::Zero {
                    start: 0,
                    from: 5000,
                    to: SZ_2M
                },
                UndoAction::Remove { start: 512 },
            ]
        );
        // Within the second folio: its offsets count from its own start.
        assert_eq!(
            plan(&index, (512 * PAGE) + 100, u64::MAX),
            vec![UndoAction::Zero {
                start: 512,
                from: 100,
                to: SZ_2M
            }]
        );
    }

    #[test]
    fn truncate_at_a_folio_boundary_zeroes_nothing() {
        let index = index_of(&[(0, 9), (512, 2), (516, 0)]);
        assert_eq!(
            plan(&index, 512 * PAGE, u64::MAX),
            vec![
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 516 }
            ]
        );
        assert_eq!(
            plan(&index, 516 * PAGE, u64::MAX),
            vec![UndoAction::Remove { start: 516 }]
        );
        assert_eq!(plan(&index, 517 * PAGE, u64::MAX), vec![]);
        // One byte less and the folio before has its last byte zeroed.
        assert_eq!(
            plan(&index, 516 * PAGE - 1, u64::MAX),
            vec![
                UndoAction::Zero {
                    start: 512,
                    from: 4 * PAGE_SIZE - 1,
                    to: 4 * PAGE_SIZE
                },
                UndoAction::Remove { start: 516 },
            ]
        );
    }

    #[test]
    fn punch_inside_one_large_folio_zeroes_it_once() {
        let index = index_of(&[(0, 0), (512, 9), (1024, 0)]);
        let base = 512 * PAGE;
        // Whole pages inside the folio, but not the whole folio: still zero.
        assert_eq!(
            plan(&index, base + PAGE, base + 3 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: PAGE_SIZE,
                to: 3 * PAGE_SIZE
            }]
        );
        // Touching the folio's first byte, and its last.
        assert_eq!(
            plan(&index, base, base + 10),
            vec![UndoAction::Zero {
                start: 512,
                from: 0,
                to: 10
            }]
        );
        assert_eq!(
            plan(&index, base + 10, base + 512 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: 10,
                to: SZ_2M
            }]
        );
    }

    #[test]
    fn punch_across_folios_removes_the_middle_and_zeroes_the_ends() {
        // [0, 512) order 9, 512, [514, 516), a hole, [520, 528), [1024, 1536).
        let index = index_of(&[(0, 9), (512, 0), (514, 1), (520, 3), (1024, 9)]);
        let start = 100 * PAGE + 7;
        let end = 1024 * PAGE + 9000;
        assert_eq!(
            plan(&index, start, end),
            vec![
                UndoAction::Zero {
                    start: 0,
                    from: 100 * PAGE_SIZE + 7,
                    to: SZ_2M
                },
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 514 },
                UndoAction::Remove { start: 520 },
                UndoAction::Zero {
                    start: 1024,
                    from: 0,
                    to: 9000
                },
            ]
        );
        // Ends exactly on folio edges: nothing is zeroed.
        assert_eq!(
            plan(&index, 512 * PAGE, 528 * PAGE),
            vec![
                UndoAction::Remove { start: 512 },
                UndoAction::Remove { start: 514 },
                UndoAction::Remove { start: 520 },
            ]
        );
    }

    #[test]
    fn punch_over_holes_does_nothing() {
        let index = index_of(&[(0, 0), (512, 9)]);
        assert_eq!(plan(&index, PAGE, 512 * PAGE), vec![]);
        assert_eq!(plan(&index, PAGE + 5, 2 * PAGE - 5), vec![]);
        assert_eq!(plan(&index, 1024 * PAGE, u64::MAX), vec![]);
        assert_eq!(plan(&FolioIndex::<()>::new(), 0, u64::MAX), vec![]);
        // An empty or backwards byte range touches nothing, even in data.
        assert_eq!(plan(&index, 100, 100), vec![]);
        assert_eq!(plan(&index, 200, 100), vec![]);
    }

    #[test]
    fn one_byte_punch_zeroes_one_byte() {
        let index = index_of(&[(0, 9), (512, 0)]);
        assert_eq!(
            plan(&index, 5000, 5001),
            vec![UndoAction::Zero {
                start: 0,
                from: 5000,
                to: 5001
            }]
        );
        assert_eq!(
            plan(&index, 512 * PAGE + 904, 512 * PAGE + 905),
            vec![UndoAction::Zero {
                start: 512,
                from: 904,
                to: 905
            }]
        );
        assert_eq!(
            plan(&index, 513 * PAGE - 1, 513 * PAGE),
            vec![UndoAction::Zero {
                start: 512,
                from: PAGE_SIZE - 1,
                to: PAGE_SIZE
            }]
        );
    }

    #[test]
    fn undo_plan_of_the_last_folio_a_file_can_have() {
        // Its end, in bytes, is 2^64: the plan must not overflow.
        let last = MAX_INDEX + 1 - 512;
        let index = index_of(&[(last, 9)]);
        let base = last * PAGE;
        assert_eq!(
            plan(&index, base, u64::MAX),
            vec![UndoAction::Zero {
                start: last,
                from: 0,
                to: SZ_2M - 1
            }]
        );
        assert_eq!(
            plan(&index, base + 1, base + 2),
            vec![UndoAction::Zero {
                start: last,
                from: 1,
                to: 2
            }]
        );
    }
}
