//! Physical and virtual address types and the fixed layout of the kernel's
//! address space (Linux: `arch/arm64/include/asm/memory.h`, simplified).
//!
//! The kernel lives in the upper half (TTBR1). Every physical address, RAM
//! and MMIO alike, is reachable at `PAGE_OFFSET + pa` through the linear map,
//! and the kernel image is linked inside that map, so one constant turns any
//! physical address into a kernel pointer.

pub const PAGE_SHIFT: u32 = 12;
pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
/// Entries in one 4K translation table, at every level.
pub const PTRS_PER_TABLE: usize = 512;
pub const PMD_SHIFT: u32 = 21;
pub const PMD_SIZE: usize = 1 << PMD_SHIFT;
pub const PUD_SHIFT: u32 = 30;
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
    pub const fn pfn(self) -> usize {
        (self.0 >> PAGE_SHIFT) as usize
    }
    pub const fn from_pfn(pfn: usize) -> Self {
        PhysAddr((pfn as u64) << PAGE_SHIFT)
    }
    pub const fn is_aligned(self, align: usize) -> bool {
        self.0 & (align as u64 - 1) == 0
    }
    pub const fn align_down(self, align: usize) -> Self {
        PhysAddr(self.0 & !(align as u64 - 1))
    }
    pub const fn align_up(self, align: usize) -> Self {
        PhysAddr((self.0 + align as u64 - 1) & !(align as u64 - 1))
    }
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

pub const fn is_aligned(x: usize, align: usize) -> bool {
    x & (align - 1) == 0
}

pub const fn align_up(x: usize, align: usize) -> usize {
    (x + align - 1) & !(align - 1)
}
