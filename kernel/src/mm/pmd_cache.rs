//! The PMD tables an address space's faults found lately, by the 1G region
//! each maps, so that a fault's walk starts at the PMD instead of the PGD
//! (`handle_mm_fault`). Linux walks all four levels every time; the upper
//! two are loads its CPU caches make cheap, but here they were about 9
//! instructions of every fault.
//!
//! Nothing ever has to be forgotten: an address space's PUD and PMD tables
//! stay from the fault that installs them until the whole address space is
//! freed (`memory::free_pgtables`). Unmapping frees PTE tables only
//! (`memory::unmap_range`), so a remembered PMD table is the one the walk
//! would find for as long as the `Mm` lives.
//!
//! Each slot is one word, so a reader never sees half of a writer's entry:
//! bit 63 says the slot is in use, bits 36-53 hold the region (`va >> 30`;
//! user addresses are below 2^48) and bits 0-35 the table's frame number.
//! Slots are picked by the region's low bits, so the usual process, with
//! its program low in memory and its libraries and stack near the top,
//! keeps both regions.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::mm::addr::{PhysAddr, PAGE_SHIFT, PUD_SHIFT};

/// Slots in a cache: regions whose numbers differ in their low two bits
/// never evict each other.
const SLOTS: usize = 4;
/// Where the region's number starts in a slot.
const TAG_SHIFT: u32 = 36;
/// The "in use" bit, counted from `TAG_SHIFT`.
const VALID: u64 = 1 << (63 - TAG_SHIFT);
/// The frame-number bits.
const PFN_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// One address space's remembered PMD tables.
pub struct PmdCache([AtomicU64; SLOTS]);

impl Default for PmdCache {
    fn default() -> Self {
        Self::new()
    }
}

impl PmdCache {
    /// A cache that remembers nothing yet.
    pub const fn new() -> Self {
        PmdCache([const { AtomicU64::new(0) }; SLOTS])
    }

    /// The 1G region holding user address `va`, with the "in use" bit: what
    /// a slot holds above `TAG_SHIFT`.
    fn tag(va: usize) -> u64 {
        VALID | (va >> PUD_SHIFT) as u64
    }

    /// The one slot that may hold `va`'s region.
    fn slot(&self, va: usize) -> &AtomicU64 {
        &self.0[(va >> PUD_SHIFT) % SLOTS]
    }

    /// The PMD table mapping `va`, if a walk has recorded it.
    #[inline(always)]
    pub fn get(&self, va: usize) -> Option<PhysAddr> {
        // Acquire: pairs with `set`, so the table's entries as the walk
        // that found it saw them are seen here too.
        let entry = self.slot(va).load(Ordering::Acquire);
        (entry >> TAG_SHIFT == Self::tag(va)).then_some(PhysAddr((entry & PFN_MASK) << PAGE_SHIFT))
    }

    /// Records `pmds` as the PMD table mapping user address `va`.
    pub fn set(&self, va: usize, pmds: PhysAddr) {
        debug_assert!(va < 1 << 48 && pmds.0 >> PAGE_SHIFT <= PFN_MASK);
        let entry = Self::tag(va) << TAG_SHIFT | pmds.0 >> PAGE_SHIFT;
        self.slot(va).store(entry, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: usize = 1 << 30;

    #[test]
    fn empty_cache_remembers_nothing() {
        let cache = PmdCache::new();
        // Region 0 at PFN 0 would be an all-zero slot: the valid bit tells.
        assert_eq!(cache.get(0), None);
        assert_eq!(cache.get(0xffff_ffff_f000), None);
    }

    #[test]
    fn a_table_is_found_anywhere_in_its_region() {
        let cache = PmdCache::new();
        let table = PhysAddr(0x4123_4000);
        cache.set(0x40_1000, table);
        assert_eq!(cache.get(0), Some(table));
        assert_eq!(cache.get(G - 1), Some(table));
        assert_eq!(cache.get(G), None);
    }

    #[test]
    fn top_and_bottom_of_user_space_keep_separate_slots() {
        let cache = PmdCache::new();
        let (low, high) = (PhysAddr(0x4000_1000), PhysAddr(0xff_ffff_f000));
        cache.set(0x40_0000, low);
        cache.set(0xffff_fffe_0000, high);
        assert_eq!(cache.get(0x40_0000), Some(low));
        assert_eq!(cache.get(0xffff_fffe_0000), Some(high));
    }

    #[test]
    fn a_region_sharing_a_slot_replaces_the_other() {
        let cache = PmdCache::new();
        let (a, b) = (PhysAddr(0x4000_1000), PhysAddr(0x4000_2000));
        cache.set(G, a);
        cache.set((1 + SLOTS) * G, b);
        assert_eq!(cache.get(G), None);
        assert_eq!(cache.get((1 + SLOTS) * G + 5), Some(b));
    }
}
