//! The generic page-table walker: four levels (pgd, pud, pmd, pte) of 512
//! entries over the 4K granule, with blocks allowed at the pud (1G) and pmd
//! (2M) levels. Linux: `mm/pgtable-generic.c`, `include/linux/pgtable.h`
//! and the kernel-map builders in `arch/arm64/mm/mmu.c`.
//!
//! The walker reaches table memory through [`PgtableMem`], so the same code
//! builds the kernel's map at boot, user page tables later, and an arena of
//! fake "physical" pages in host tests. Entries are atomics read and written
//! one at a time (Linux's READ_ONCE/WRITE_ONCE): another CPU's hardware
//! walker may be reading them.

use core::ops::Range;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::desc::{PgProt, Pte};
use crate::mm::addr::{PhysAddr, PGDIR_SHIFT, PMD_SHIFT, PTRS_PER_TABLE, PUD_SHIFT};

/// One translation table: 512 entries, 4K, 4K-aligned.
pub type PageTable = [AtomicU64; PTRS_PER_TABLE];

/// A translation level, named as Linux names them (Arm levels 0-3).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Pgd = 0,
    Pud = 1,
    Pmd = 2,
    Pte = 3,
}

impl Level {
    /// log2 of the bytes one entry at this level maps (Linux's `PGDIR_SHIFT`,
    /// `PUD_SHIFT`, `PMD_SHIFT`, `PAGE_SHIFT`).
    pub const fn shift(self) -> u32 {
        match self {
            Level::Pgd => PGDIR_SHIFT,
            Level::Pud => PUD_SHIFT,
            Level::Pmd => PMD_SHIFT,
            Level::Pte => crate::mm::addr::PAGE_SHIFT,
        }
    }
    /// Bytes mapped by one entry at this level.
    pub const fn size(self) -> usize {
        1 << self.shift()
    }
    /// The entry in a table at this level that translates `va` (Linux's
    /// `pgd_index`, `pud_index`, `pmd_index`, `pte_index`).
    pub const fn index(self, va: usize) -> usize {
        (va >> self.shift()) & (PTRS_PER_TABLE - 1)
    }
    /// The level of the tables this level's table entries point to; none
    /// below the PTE level.
    pub const fn next(self) -> Option<Level> {
        match self {
            Level::Pgd => Some(Level::Pud),
            Level::Pud => Some(Level::Pmd),
            Level::Pmd => Some(Level::Pte),
            Level::Pte => None,
        }
    }
    /// Can a leaf (block or page) sit at this level? Not at the pgd.
    pub const fn allows_leaf(self) -> bool {
        !matches!(self, Level::Pgd)
    }
}

/// Where the walker gets table pages and how it reaches them.
pub trait PgtableMem {
    /// A zeroed, 4K-aligned page for a new table, or None when out of memory.
    fn alloc_table(&mut self) -> Option<PhysAddr>;
    /// Gives back a table from `alloc_table` that was never installed (it
    /// lost a race to install one in the same place).
    fn free_table(&mut self, pa: PhysAddr);
    /// The table at `pa`, which came from `alloc_table` (or is the root).
    fn table(&self, pa: PhysAddr) -> &PageTable;
}

/// Why `map_range` or an unmap could not finish.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MapError {
    /// Something is already mapped where the new mapping would go.
    AlreadyMapped {
        /// The first address found already mapped.
        va: usize,
    },
    /// Nothing is mapped at `va`.
    NotMapped {
        /// The first address found unmapped.
        va: usize,
    },
    /// No page for a new table (Linux's `-ENOMEM` from `pte_alloc`).
    NoMemory,
    /// VA, PA or size not page-aligned.
    Misaligned,
}

/// What a walk found for one virtual address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The physical address `va` translates to: the leaf's output address plus
    /// `va`'s offset inside the page or block.
    pub pa: PhysAddr,
    /// The level of the leaf: `Pte` for a page, `Pmd` or `Pud` for a block.
    pub level: Level,
    /// The leaf entry itself, with its attributes.
    pub pte: Pte,
}

/// One entry, read once (Linux's `READ_ONCE`): another CPU may change it.
fn read(entry: &AtomicU64) -> Pte {
    Pte(entry.load(Ordering::Relaxed))
}

/// One entry, written once (Linux's `WRITE_ONCE`): the hardware walker may
/// read it at any moment.
fn write(entry: &AtomicU64, pte: Pte) {
    entry.store(pte.0, Ordering::Relaxed);
}

/// Maps `[va, va + size)` to `[pa, pa + size)` with `prot`, using the
/// largest leaf each piece allows: a block at a level no higher than
/// `largest` when VA, PA and the remaining size line up, pages otherwise.
/// Tables are allocated as needed. Existing mappings are never replaced.
///
/// The caller publishes the new entries to the hardware walker (DSB) and
/// owns any TLB maintenance; none is needed for entries that were invalid.
pub fn map_range(
    mem: &mut impl PgtableMem,
    pgd: PhysAddr,
    va: usize,
    pa: PhysAddr,
    size: usize,
    prot: PgProt,
    largest: Level,
) -> Result<(), MapError> {
    let page = Level::Pte.size();
    if !va.is_multiple_of(page) || !pa.is_aligned(page) || !size.is_multiple_of(page) {
        return Err(MapError::Misaligned);
    }
    map_level(mem, pgd, Level::Pgd, va, pa, size, prot, largest)
}

/// One level of `map_range`'s walk: fills `table`, a `level` table, with
/// leaves where the range allows one here, else recurses into (and
/// allocates) the next level's tables (Linux's `alloc_init_p*d`).
#[allow(clippy::too_many_arguments)]
fn map_level(
    mem: &mut impl PgtableMem,
    table: PhysAddr,
    level: Level,
    mut va: usize,
    mut pa: PhysAddr,
    mut size: usize,
    prot: PgProt,
    largest: Level,
) -> Result<(), MapError> {
    while size > 0 {
        let entry_size = level.size();
        let chunk = (entry_size - (va & (entry_size - 1))).min(size);
        let slot = &mem.table(table)[level.index(va)];
        let cur = read(slot);
        let whole_entry = chunk == entry_size && pa.is_aligned(entry_size);
        if level == Level::Pte || (level.allows_leaf() && level >= largest && whole_entry) {
            if !cur.is_none() {
                return Err(MapError::AlreadyMapped { va });
            }
            let leaf = if level == Level::Pte {
                Pte::page(pa, prot)
            } else {
                Pte::block(pa, prot)
            };
            write(slot, leaf);
        } else {
            let next = if cur.is_none() {
                let new = mem.alloc_table().ok_or(MapError::NoMemory)?;
                write(&mem.table(table)[level.index(va)], Pte::table(new));
                new
            } else if cur.is_table() {
                cur.addr()
            } else {
                return Err(MapError::AlreadyMapped { va });
            };
            let next_level = level.next().expect("pte level handled above");
            map_level(mem, next, next_level, va, pa, chunk, prot, largest)?;
        }
        va += chunk;
        pa = pa.add(chunk);
        size -= chunk;
    }
    Ok(())
}

/// Whether a walk allocates the tables it finds missing (Linux: the
/// `*_alloc` walkers) or stops there (`*_offset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alloc {
    /// Allocate a missing table and go on.
    IfMissing,
    /// Stop at a missing table.
    Never,
}

/// The table at `target` level on the walk to `va`, allocating the tables
/// above it if `alloc` says so (Linux: `pmd_alloc`, `pte_alloc_map`...). None if a
/// table is missing and `alloc` is `Never`, if memory runs out, or if a block
/// above `target` maps `va`.
pub fn table_for<M: PgtableMem>(
    mem: &mut M,
    pgd: PhysAddr,
    va: usize,
    target: Level,
    alloc: Alloc,
) -> Option<&PageTable> {
    let pa = table_pa_for(mem, pgd, va, target, alloc)?;
    Some(mem.table(pa))
}

/// [`table_for`]'s table, as its physical address. Inlined: with a
/// constant `target` the loop unrolls into one load and test per level,
/// which is every page fault's walk.
#[inline(always)]
pub fn table_pa_for<M: PgtableMem>(
    mem: &mut M,
    pgd: PhysAddr,
    va: usize,
    target: Level,
    alloc: Alloc,
) -> Option<PhysAddr> {
    let mut table = pgd;
    let mut level = Level::Pgd;
    while level != target {
        table = table_below(mem, table, level, va, alloc)?;
        level = level.next()?;
    }
    Some(table)
}

/// The table that the `level` entry for `va` in `table` points to,
/// allocated if the entry is none and `alloc` says so (one step of the walk).
#[inline(always)]
pub fn table_below<M: PgtableMem>(
    mem: &mut M,
    table: PhysAddr,
    level: Level,
    va: usize,
    alloc: Alloc,
) -> Option<PhysAddr> {
    let index = level.index(va);
    // Acquire: a table another CPU just installed is seen zeroed.
    let pte = Pte(mem.table(table)[index].load(Ordering::Acquire));
    if pte.is_table() {
        return Some(pte.addr());
    }
    if pte.is_none() && alloc == Alloc::IfMissing {
        return install_table(mem, table, index);
    }
    None
}

/// Puts a new table in entry `index` of `table`, found empty (Linux: `__pte_alloc` and its
/// kin). Faults of one address space may allocate in the same place at once
/// (Linux re-checks under the lock); the loser frees its table and uses the
/// winner's. Out of line: a walk allocates once per new table.
#[cold]
#[inline(never)]
fn install_table<M: PgtableMem>(mem: &mut M, table: PhysAddr, index: usize) -> Option<PhysAddr> {
    let new = mem.alloc_table()?;
    let slot = &mem.table(table)[index];
    let pte = match slot.compare_exchange(0, Pte::table(new).0, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => Pte::table(new),
        Err(current) => {
            mem.free_table(new);
            Pte(current)
        }
    };
    pte.is_table().then(|| pte.addr())
}

/// What [`for_each_pte_table`] finds in a range.
pub enum Found<'m> {
    /// A level-3 table, and the indices of its entries inside the range.
    Table(&'m PageTable, core::ops::Range<usize>),
    /// A block entry at a level above 3, which may reach outside the range.
    Block(Level, &'m AtomicU64),
}

/// Calls `f(va, found)` for every existing level-3 table and every block
/// that maps part of `[start, end)`, in address order; `va` is what the
/// table's entry 0, or the block, maps (Linux: the `zap_pmd_range` /
/// `change_pmd_range` walk, handing huge PMDs to `zap_huge_pmd` and tables
/// to `*_pte_range`).
pub fn for_each_pte_table<'m>(
    mem: &'m impl PgtableMem,
    pgd: PhysAddr,
    start: usize,
    end: usize,
    f: &mut impl FnMut(usize, Found<'m>),
) {
    if start >= end {
        return;
    }
    let base = start & !((1 << 48) - 1);
    walk_pte_tables(mem, pgd, Level::Pgd, base, start, end, f);
}

/// One level of `for_each_pte_table`'s walk, over the `level` table at
/// `table` whose entry 0 maps `table_va`.
fn walk_pte_tables<'m>(
    mem: &'m impl PgtableMem,
    table: PhysAddr,
    level: Level,
    table_va: usize,
    start: usize,
    end: usize,
    f: &mut impl FnMut(usize, Found<'m>),
) {
    let entries = mem.table(table);
    for i in indices_meeting(level, table_va, start, end) {
        let (slot, va) = (&entries[i], table_va + (i << level.shift()));
        let last = va + (level.size() - 1);
        let pte = read(slot);
        if !pte.is_valid() {
            continue;
        }
        let Some(next) = level.next() else { continue };
        if !pte.is_table() {
            f(va, Found::Block(level, slot));
        } else if next == Level::Pte {
            let first = start.max(va);
            let final_va = (end - 1).min(last);
            let entries = Level::Pte.index(first)..Level::Pte.index(final_va) + 1;
            f(va, Found::Table(mem.table(pte.addr()), entries));
        } else {
            walk_pte_tables(mem, pte.addr(), next, va, start, end, f);
        }
    }
}

/// The entries of a `level` table whose entry 0 maps `table_va` that map
/// part of `[start, end)`, which meets the table: walks visit only these,
/// not all 512 (Linux: the `p*d_addr_end` bounds of each walk loop).
fn indices_meeting(level: Level, table_va: usize, start: usize, end: usize) -> Range<usize> {
    if start >= end {
        return 0..0;
    }
    let table_last = table_va + ((PTRS_PER_TABLE << level.shift()) - 1);
    let first = if start <= table_va {
        0
    } else {
        level.index(start)
    };
    let last = if end > table_last {
        PTRS_PER_TABLE - 1
    } else {
        level.index(end - 1)
    };
    first..last + 1
}

/// Frees every table page below `pgd` (not `pgd` itself) by calling
/// `free(pa)` for each, leaves first (Linux: `free_pgtables`). The caller
/// has already removed every leaf.
pub fn free_tables(mem: &impl PgtableMem, pgd: PhysAddr, free: &mut impl FnMut(PhysAddr)) {
    free_below(mem, pgd, Level::Pgd, free);
}

/// Frees the tables below the `level` table at `table`, deepest first.
fn free_below(
    mem: &impl PgtableMem,
    table: PhysAddr,
    level: Level,
    free: &mut impl FnMut(PhysAddr),
) {
    let Some(next) = level.next() else { return };
    for slot in mem.table(table).iter() {
        let pte = read(slot);
        if pte.is_table() {
            free_below(mem, pte.addr(), next, free);
            free(pte.addr());
        }
    }
}

/// Clears the leaf entries mapping `[va, va + size)`, calling `flush(va)`
/// for each cleared leaf once it is invalid (the caller's TLB invalidation).
/// Leaves must lie wholly inside the range: splitting a block is the user
/// zap path's job, not this one's. Tables are kept (Linux frees empty ones
/// only in `free_pgtables`).
pub fn unmap_kernel_range(
    mem: &impl PgtableMem,
    pgd: PhysAddr,
    mut va: usize,
    size: usize,
    mut flush: impl FnMut(usize),
) -> Result<(), MapError> {
    let end = va.checked_add(size).ok_or(MapError::Misaligned)?;
    while va < end {
        let (slot, level) = find_leaf_slot(mem, pgd, va).ok_or(MapError::NotMapped { va })?;
        let leaf_size = level.size();
        if !va.is_multiple_of(leaf_size) || end - va < leaf_size {
            return Err(MapError::Misaligned);
        }
        write(slot, Pte::NONE);
        flush(va);
        va += leaf_size;
    }
    Ok(())
}

/// The entry holding the leaf (block or page) that maps `va`, and its level.
fn find_leaf_slot(mem: &impl PgtableMem, pgd: PhysAddr, va: usize) -> Option<(&AtomicU64, Level)> {
    let mut table = pgd;
    let mut level = Level::Pgd;
    loop {
        let slot = &mem.table(table)[level.index(va)];
        let pte = read(slot);
        if !pte.is_valid() {
            return None;
        }
        if level == Level::Pte || !pte.is_table() {
            return Some((slot, level));
        }
        table = pte.addr();
        level = level.next()?;
    }
}

/// Calls `f(va, level, pte)` for every valid leaf (block or page) whose
/// range starts in `[start, end)`, in address order (the basis of page-table
/// dumps and of counting blocks).
pub fn for_each_leaf(
    mem: &impl PgtableMem,
    pgd: PhysAddr,
    start: usize,
    end: usize,
    f: &mut impl FnMut(usize, Level, Pte),
) {
    for_each_leaf_slot(mem, pgd, start, end, &mut |va, level, slot| {
        f(va, level, read(slot))
    });
}

/// Like `for_each_leaf`, handing out the entry itself so the caller can
/// change it; only tables that exist are visited (Linux: the
/// `zap_p*_range` / `copy_p*_range` walkers). The one walk,
/// `for_each_pte_table`, with each table's valid entries handed out one by one.
pub fn for_each_leaf_slot<'m>(
    mem: &'m impl PgtableMem,
    pgd: PhysAddr,
    start: usize,
    end: usize,
    f: &mut impl FnMut(usize, Level, &'m AtomicU64),
) {
    for_each_pte_table(mem, pgd, start, end, &mut |va, found| match found {
        Found::Block(level, slot) => f(va, level, slot),
        Found::Table(table, idx) => {
            for i in idx {
                if read(&table[i]).is_valid() {
                    f(va + (i << Level::Pte.shift()), Level::Pte, &table[i]);
                }
            }
        }
    });
}

/// Walks the tables for `va` (Linux: a software `follow_page` walk, or what
/// `AT S1E1R` does in hardware).
pub fn translate(mem: &impl PgtableMem, pgd: PhysAddr, va: usize) -> Option<Translation> {
    let (slot, level) = find_leaf_slot(mem, pgd, va)?;
    let pte = read(slot);
    Some(Translation {
        pa: pte.addr().add(va & (level.size() - 1)),
        level,
        pte,
    })
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    /// Host stand-in for physical memory: table i lives at "PA" BASE + i*4K.
    pub struct Arena {
        tables: Vec<Box<PageTable>>,
    }

    const BASE: u64 = 0x8000_0000;

    /// The level-3 entry for `va`, its tables allocated as `alloc` says.
    fn pte_slot(m: &mut Arena, pgd: PhysAddr, va: usize, alloc: Alloc) -> Option<&AtomicU64> {
        table_for(m, pgd, va, Level::Pte, alloc).map(|t| &t[Level::Pte.index(va)])
    }

    impl Arena {
        pub fn new() -> (Self, PhysAddr) {
            let mut a = Arena { tables: Vec::new() };
            let root = a.alloc_table().unwrap();
            (a, root)
        }
        pub fn tables_allocated(&self) -> usize {
            self.tables.len()
        }
    }

    impl PgtableMem for Arena {
        fn alloc_table(&mut self) -> Option<PhysAddr> {
            self.tables
                .push(Box::new(core::array::from_fn(|_| AtomicU64::new(0))));
            Some(PhysAddr(BASE + (self.tables.len() as u64 - 1) * 4096))
        }
        fn free_table(&mut self, _pa: PhysAddr) {
            unreachable!("the tests never race to install a table");
        }
        fn table(&self, pa: PhysAddr) -> &PageTable {
            &self.tables[((pa.0 - BASE) / 4096) as usize]
        }
    }

    const KVA: usize = 0xffff_0000_0000_0000;

    #[test]
    fn picks_blocks_where_aligned_and_pages_elsewhere() {
        let (mut m, pgd) = Arena::new();
        // 0x4000_0000..0x8040_1000: 2M block? no: first 1G is a 1G block,
        // then one 2M block, then one 4K page.
        let pa = PhysAddr(0x4000_0000);
        let size = (1 << 30) + (2 << 20) + 4096;
        map_range(
            &mut m,
            pgd,
            KVA + 0x4000_0000,
            pa,
            size,
            PgProt::KERNEL,
            Level::Pud,
        )
        .unwrap();
        let t = translate(&m, pgd, KVA + 0x4000_1234).unwrap();
        assert_eq!((t.level, t.pa), (Level::Pud, PhysAddr(0x4000_1234)));
        let t = translate(&m, pgd, KVA + 0x8010_0000).unwrap();
        assert_eq!((t.level, t.pa), (Level::Pmd, PhysAddr(0x8010_0000)));
        let t = translate(&m, pgd, KVA + 0x8020_0fff).unwrap();
        assert_eq!((t.level, t.pa), (Level::Pte, PhysAddr(0x8020_0fff)));
        assert_eq!(translate(&m, pgd, KVA + 0x8020_1000), None);
        // pgd + pud + pmd + pte tables.
        assert_eq!(m.tables_allocated(), 4);
    }

    #[test]
    fn largest_limits_block_size() {
        let (mut m, pgd) = Arena::new();
        map_range(
            &mut m,
            pgd,
            KVA,
            PhysAddr(0),
            1 << 30,
            PgProt::KERNEL,
            Level::Pmd,
        )
        .unwrap();
        assert_eq!(translate(&m, pgd, KVA + 12345).unwrap().level, Level::Pmd);
        let (mut m, pgd) = Arena::new();
        map_range(
            &mut m,
            pgd,
            KVA,
            PhysAddr(0),
            4 << 20,
            PgProt::KERNEL,
            Level::Pte,
        )
        .unwrap();
        assert_eq!(
            translate(&m, pgd, KVA + (3 << 20)).unwrap().level,
            Level::Pte
        );
    }

    #[test]
    fn misaligned_pa_falls_back_to_pages() {
        let (mut m, pgd) = Arena::new();
        // VA 2M-aligned but PA only 4K-aligned: no block is possible.
        map_range(
            &mut m,
            pgd,
            KVA + (2 << 20),
            PhysAddr(0x4000_1000),
            2 << 20,
            PgProt::KERNEL,
            Level::Pud,
        )
        .unwrap();
        let t = translate(&m, pgd, KVA + (3 << 20)).unwrap();
        assert_eq!((t.level, t.pa), (Level::Pte, PhysAddr(0x4010_1000)));
    }

    #[test]
    fn permissions_per_range_and_no_overlap() {
        let (mut m, pgd) = Arena::new();
        map_range(
            &mut m,
            pgd,
            KVA + 0x20_0000,
            PhysAddr(0x4020_0000),
            0x3000,
            PgProt::KERNEL_ROX,
            Level::Pud,
        )
        .unwrap();
        map_range(
            &mut m,
            pgd,
            KVA + 0x20_3000,
            PhysAddr(0x4020_3000),
            0x1000,
            PgProt::KERNEL_RO,
            Level::Pud,
        )
        .unwrap();
        assert_eq!(
            translate(&m, pgd, KVA + 0x20_2000).unwrap().pte.prot(),
            PgProt::KERNEL_ROX
        );
        assert_eq!(
            translate(&m, pgd, KVA + 0x20_3000).unwrap().pte.prot(),
            PgProt::KERNEL_RO
        );
        // Overlapping a page or sitting a block over a table both fail.
        assert_eq!(
            map_range(
                &mut m,
                pgd,
                KVA + 0x20_2000,
                PhysAddr(0),
                0x1000,
                PgProt::KERNEL,
                Level::Pud
            ),
            Err(MapError::AlreadyMapped {
                va: KVA + 0x20_2000
            })
        );
        assert_eq!(
            map_range(
                &mut m,
                pgd,
                KVA + 0x20_0000,
                PhysAddr(0),
                2 << 20,
                PgProt::KERNEL,
                Level::Pmd
            ),
            Err(MapError::AlreadyMapped {
                va: KVA + 0x20_0000
            })
        );
        assert_eq!(
            map_range(
                &mut m,
                pgd,
                KVA + 1,
                PhysAddr(0),
                4096,
                PgProt::KERNEL,
                Level::Pmd
            ),
            Err(MapError::Misaligned)
        );
    }

    #[test]
    fn unmap_clears_whole_leaves_only() {
        let (mut m, pgd) = Arena::new();
        map_range(
            &mut m,
            pgd,
            KVA,
            PhysAddr(0x4000_0000),
            (2 << 20) + 0x2000,
            PgProt::KERNEL,
            Level::Pmd,
        )
        .unwrap();
        // Half a 2M block cannot be unmapped here.
        assert_eq!(
            unmap_kernel_range(&m, pgd, KVA, 1 << 20, |_| ()),
            Err(MapError::Misaligned)
        );
        let mut flushed = std::vec::Vec::new();
        unmap_kernel_range(&m, pgd, KVA, (2 << 20) + 0x1000, |va| flushed.push(va)).unwrap();
        assert_eq!(flushed, [KVA, KVA + (2 << 20)]);
        assert_eq!(translate(&m, pgd, KVA + 5), None);
        assert_eq!(translate(&m, pgd, KVA + (2 << 20)), None);
        assert!(translate(&m, pgd, KVA + (2 << 20) + 0x1000).is_some());
        assert_eq!(
            unmap_kernel_range(&m, pgd, KVA, 0x1000, |_| ()),
            Err(MapError::NotMapped { va: KVA })
        );
        // The freed range maps again.
        map_range(
            &mut m,
            pgd,
            KVA,
            PhysAddr(0x4000_0000),
            2 << 20,
            PgProt::KERNEL,
            Level::Pmd,
        )
        .unwrap();
    }

    #[test]
    fn for_each_leaf_visits_in_order() {
        let (mut m, pgd) = Arena::new();
        let size = (1 << 30) + (2 << 20) + 0x2000;
        map_range(
            &mut m,
            pgd,
            KVA + (1 << 30),
            PhysAddr(1 << 30),
            size,
            PgProt::KERNEL,
            Level::Pud,
        )
        .unwrap();
        let mut seen = std::vec::Vec::new();
        for_each_leaf(&m, pgd, KVA, KVA + (4 << 30), &mut |va, level, pte| {
            seen.push((va, level, pte.addr()))
        });
        let base = KVA + (1 << 30);
        assert_eq!(
            seen,
            [
                (base, Level::Pud, PhysAddr(1 << 30)),
                (base + (1 << 30), Level::Pmd, PhysAddr(2 << 30)),
                (
                    base + (1 << 30) + (2 << 20),
                    Level::Pte,
                    PhysAddr((2 << 30) + (2 << 20))
                ),
                (
                    base + (1 << 30) + (2 << 20) + 0x1000,
                    Level::Pte,
                    PhysAddr((2 << 30) + (2 << 20) + 0x1000)
                ),
            ]
        );
        // A window that starts inside the 1G block still reports it.
        let mut n = 0;
        for_each_leaf(&m, pgd, base + 0x1000, base + 0x2000, &mut |_, _, _| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn pte_slot_allocates_on_demand_and_tables_free() {
        let (mut m, pgd) = Arena::new();
        assert!(pte_slot(&mut m, pgd, 0x40_0000, Alloc::Never).is_none());
        let slot = pte_slot(&mut m, pgd, 0x40_1000, Alloc::IfMissing).unwrap();
        slot.store(
            Pte::page(PhysAddr(0x8000_0000), PgProt::KERNEL).0,
            Ordering::Relaxed,
        );
        assert_eq!(
            translate(&m, pgd, 0x40_1234).unwrap().pa,
            PhysAddr(0x8000_0234)
        );
        assert_eq!(m.tables_allocated(), 4);
        // The same table serves a neighbour; a far address needs new ones.
        pte_slot(&mut m, pgd, 0x40_2000, Alloc::IfMissing).unwrap();
        assert_eq!(m.tables_allocated(), 4);
        pte_slot(&mut m, pgd, 0x80_0000_0000, Alloc::IfMissing).unwrap();
        assert_eq!(m.tables_allocated(), 7);
        let mut freed = std::vec::Vec::new();
        free_tables(&m, pgd, &mut |pa| freed.push(pa));
        assert_eq!(freed.len(), 6, "every table but the pgd");
        // A block in the way: no slot.
        let (mut m, pgd) = Arena::new();
        map_range(
            &mut m,
            pgd,
            0,
            PhysAddr(0),
            2 << 20,
            PgProt::KERNEL,
            Level::Pmd,
        )
        .unwrap();
        assert!(pte_slot(&mut m, pgd, 0x1000, Alloc::IfMissing).is_none());
    }

    #[test]
    fn for_each_pte_table_hands_out_the_entries_in_range() {
        let (mut m, pgd) = Arena::new();
        // Tables for the 2M regions at 2M, 4M and 1G; a block at 6M.
        for va in [0x20_0000, 0x40_0000, 0x4000_0000] {
            pte_slot(&mut m, pgd, va, Alloc::IfMissing).unwrap();
        }
        map_range(
            &mut m,
            pgd,
            0x60_0000,
            PhysAddr(0),
            2 << 20,
            PgProt::KERNEL,
            Level::Pmd,
        )
        .unwrap();
        let walk = |start, end| {
            let mut seen = std::vec::Vec::new();
            for_each_pte_table(&m, pgd, start, end, &mut |va, found| match found {
                Found::Table(_, idx) => seen.push((va, idx)),
                Found::Block(level, _) => {
                    assert_eq!(level, Level::Pmd);
                    seen.push((va, 0..0));
                }
            });
            seen
        };
        assert_eq!(
            walk(0x20_3000, 0x4000_2000),
            [
                (0x20_0000, 3..512),
                (0x40_0000, 0..512),
                (0x60_0000, 0..0),
                (0x4000_0000, 0..2)
            ]
        );
        assert_eq!(walk(0x40_5000, 0x40_6000), [(0x40_0000, 5..6)]);
        // A block reaching into the range is handed out whole.
        assert_eq!(walk(0x60_5000, 0x60_6000), [(0x60_0000, 0..0)]);
        assert!(walk(0x40_5000, 0x40_5000).is_empty());
    }

    #[test]
    fn levels() {
        assert_eq!(Level::Pgd.index(0xffff_8080_4020_3000), 257);
        assert_eq!(Level::Pud.index(0xffff_0000_4020_3000), 1);
        assert_eq!(Level::Pmd.index(0xffff_0000_4020_3000), 1);
        assert_eq!(Level::Pte.index(0xffff_0000_4020_3000), 3);
        assert_eq!(Level::Pmd.size(), 2 << 20);
    }
}
