//! Physical and virtual address types and the fixed layout of the kernel's
//! address space (Linux: `arch/arm64/include/asm/memory.h`, simplified).
//!
//! The kernel lives in the upper half (TTBR1). Every physical address, RAM
//! and MMIO alike, is reachable at `PAGE_OFFSET + pa` through the linear map,
//! and the kernel image is linked inside that map, so one constant turns any
//! physical address into a kernel pointer.

/// log2 of `PAGE_SIZE`: a byte address shifted right by it is a page frame
/// number (Linux's `PAGE_SHIFT`).
pub const PAGE_SHIFT: u32 = 12;
/// The base page size in bytes (4K granule; Linux's `PAGE_SIZE`).
pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
/// Entries in one 4K translation table, at every level.
pub const PTRS_PER_TABLE: usize = 512;
/// log2 of the region one PMD entry maps: a level-2 block is 2 MiB.
pub const PMD_SHIFT: u32 = 21;
/// Bytes one PMD entry maps, a level-2 block or a table of 512 PTEs: 2 MiB.
pub const PMD_SIZE: usize = 1 << PMD_SHIFT;
/// log2 of the region one PUD entry maps: a level-1 block is 1 GiB.
pub const PUD_SHIFT: u32 = 30;
/// log2 of the region one PGD (level-0) entry maps: 512 GiB.
pub const PGDIR_SHIFT: u32 = 39;

/// End of the user half (TTBR0): user addresses are below 2^48.
pub const USER_TOP: usize = 1 << 48;

/// Start of the linear map: VA = PAGE_OFFSET + PA (48-bit VA, TTBR1).
pub const PAGE_OFFSET: usize = 0xffff_0000_0000_0000;

/// A physical address. Kept distinct from pointers so the two never mix.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct PhysAddr(pub u64);

impl PhysAddr {
    /// The page frame number: which 4K frame this address lies in
    /// (Linux's `PHYS_PFN`).
    pub const fn pfn(self) -> usize {
        (self.0 >> PAGE_SHIFT) as usize
    }
    /// The address of the first byte of frame `pfn` (Linux's `PFN_PHYS`).
    pub const fn from_pfn(pfn: usize) -> Self {
        PhysAddr((pfn as u64) << PAGE_SHIFT)
    }
    /// Whether the address is a multiple of `align` (a power of two).
    pub const fn is_aligned(self, align: usize) -> bool {
        self.0 & (align as u64 - 1) == 0
    }
    /// Rounds down to a multiple of `align` (a power of two).
    pub const fn align_down(self, align: usize) -> Self {
        PhysAddr(self.0 & !(align as u64 - 1))
    }
    /// Rounds up to a multiple of `align` (a power of two).
    pub const fn align_up(self, align: usize) -> Self {
        PhysAddr((self.0 + align as u64 - 1) & !(align as u64 - 1))
    }
    /// The address `off` bytes further on.
    pub const fn add(self, off: usize) -> Self {
        PhysAddr(self.0 + off as u64)
    }
}

/// Kernel virtual address of `pa` in the linear map (Linux: `__va`).
pub const fn phys_to_virt(pa: PhysAddr) -> usize {
    pa.0 as usize + PAGE_OFFSET
}

/// Physical address behind a linear-map or kernel-image address (Linux: `__pa`).
pub const fn virt_to_phys(va: usize) -> PhysAddr {
    PhysAddr((va - PAGE_OFFSET) as u64)
}

/// Whether `x` is a multiple of `align` (a power of two; Linux's
/// `IS_ALIGNED`).
pub const fn is_aligned(x: usize, align: usize) -> bool {
    x & (align - 1) == 0
}

/// `x` rounded up to a multiple of `align` (a power of two; Linux's `ALIGN`).
pub const fn align_up(x: usize, align: usize) -> usize {
    (x + align - 1) & !(align - 1)
}
