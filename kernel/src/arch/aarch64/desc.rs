//! Translation-table descriptors for the 4K granule, stage 1 (Arm ARM,
//! DDI 0487, D8.3 "Translation table descriptor formats"; D5.3 in revisions
//! before J). Linux: `arch/arm64/include/asm/pgtable-hwdef.h` and
//! `pgtable-prot.h`. Pure encoding, host-tested; nothing here touches a
//! register.
//!
//! One `Pte` type stands for a descriptor at any level, as Linux's pgd/pud/
//! pmd/pte values share one format on arm64.

use tock_registers::fields::FieldValue;
use tock_registers::register_bitfields;
use tock_registers::LocalRegisterCopy;

use crate::mm::addr::PhysAddr;

register_bitfields! [u64,
    /// Table descriptor, levels 0-2 (Arm ARM D8.3.1, "Table descriptor").
    pub TABLE_DESC [
        /// Bit 0: the entry is valid; clear, a walk through it faults.
        VALID OFFSET(0) NUMBITS(1) [],
        /// Bit 1: set in a table descriptor; clear at levels 1-2, a block.
        TYPE OFFSET(1) NUMBITS(1) [Block = 0, Table = 1],
        /// Bits 47:12: the physical address of the next-level table, 4K-aligned.
        NEXT_LEVEL_TABLE_ADDR OFFSET(12) NUMBITS(36) [],
        /// PXNTable: nothing mapped below this entry is executable at EL1.
        PXN_TABLE OFFSET(59) NUMBITS(1) [],
        /// UXNTable: nothing mapped below this entry is executable at EL0.
        UXN_TABLE OFFSET(60) NUMBITS(1) []
    ],
    /// Block (levels 1-2) and page (level 3) descriptors (Arm ARM D8.3.1,
    /// "Block descriptor", "Page descriptor"; attribute fields D8.4).
    pub LEAF_DESC [
        /// Bit 0: the entry is valid; clear, an access through it takes a
        /// translation fault.
        VALID OFFSET(0) NUMBITS(1) [],
        /// 0 = block at levels 1-2; 1 = page at level 3.
        TYPE OFFSET(1) NUMBITS(1) [Block = 0, Page = 1],
        /// Index into MAIR_EL1 (set in boot.S).
        ATTR_INDX OFFSET(2) NUMBITS(3) [Device = 0, Normal = 1, NormalNC = 2],
        /// AP[2:1]: EL0 access and read-only.
        AP OFFSET(6) NUMBITS(2) [RwEl1 = 0, RwEl0 = 1, RoEl1 = 2, RoEl0 = 3],
        /// Shareability of Normal memory: RAM is inner shareable, kept coherent
        /// between all CPUs (Linux: `PTE_SHARED`).
        SH OFFSET(8) NUMBITS(2) [NonShareable = 0, Outer = 2, Inner = 3],
        /// Access flag: clear = the first access faults, or with TCR_EL1.HA
        /// (FEAT_HAFDBS; not on A72) the hardware sets it.
        AF OFFSET(10) NUMBITS(1) [],
        /// Not global: the entry is tagged with the current ASID.
        NG OFFSET(11) NUMBITS(1) [],
        /// Bits 47:12: the physical address of the page, or of the block (whose
        /// low bits are then zero).
        OUTPUT_ADDR OFFSET(12) NUMBITS(36) [],
        /// Dirty Bit Modifier, the software "may be written" bit (Linux:
        /// `PTE_WRITE`, which is `PTE_DBM`): a writable user entry starts
        /// read-only (clean), and its first write makes it read-write
        /// (dirty): the MMU does it with TCR_EL1.HD (FEAT_HAFDBS), or the
        /// write faults and the kernel does (`Pte::mkdirty`).
        DBM OFFSET(51) NUMBITS(1) [],
        /// One of 16 adjacent entries mapping a contiguous, aligned range.
        CONTIGUOUS OFFSET(52) NUMBITS(1) [],
        /// Privileged execute-never: EL1 may not execute from the page (Linux:
        /// `PTE_PXN`).
        PXN OFFSET(53) NUMBITS(1) [],
        /// Unprivileged execute-never: EL0 may not execute from the page (Linux:
        /// `PTE_UXN`).
        UXN OFFSET(54) NUMBITS(1) [],
        /// Software bit: written since it became writable (Linux PTE_DIRTY).
        SW_DIRTY OFFSET(55) NUMBITS(1) []
    ]
];

/// A descriptor value in a local copy, so its `LEAF_DESC` fields can be read
/// and modified by name.
type Leaf = LocalRegisterCopy<u64, LEAF_DESC::Register>;

/// Bits of a descriptor that hold the output / next-table address.
const ADDR_MASK: u64 = 0x0000_ffff_ffff_f000;

/// The raw descriptor bits of a `LEAF_DESC` field value, callable in the
/// `const` items below.
const fn bits(v: FieldValue<u64, LEAF_DESC::Register>) -> u64 {
    v.value
}

/// Memory attributes and permissions of a leaf entry: every field except
/// VALID, TYPE and the output address (Linux: `pgprot_t`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PgProt(u64);

/// Attributes every normal-memory leaf has: MAIR index 1 (Normal,
/// write-back), inner shareable, access flag set (Linux: `_PROT_DEFAULT`
/// with `PTE_ATTRINDX(MT_NORMAL)`).
const PROT_NORMAL: u64 =
    bits(LEAF_DESC::ATTR_INDX::Normal) | bits(LEAF_DESC::SH::Inner) | bits(LEAF_DESC::AF::SET);
/// Attributes of an MMIO leaf: MAIR index 0 (Device-nGnRE), access flag
/// set; SH stays 0, which Device memory ignores (the base of Linux's
/// `PROT_DEVICE_nGnRE`).
const PROT_DEVICE: u64 = bits(LEAF_DESC::ATTR_INDX::Device) | bits(LEAF_DESC::AF::SET);
/// AP[2], read-only (Linux: `PTE_RDONLY`): in an entry with DBM set, its
/// being clear is the hardware's dirty state.
const RDONLY: u64 = 1 << 7;
/// The entry's dirty state in software (Linux: `PTE_DIRTY`).
const SW_DIRTY: u64 = bits(LEAF_DESC::SW_DIRTY::SET);
/// The software "may be written" bit (Linux: `PTE_WRITE`).
const DBM: u64 = bits(LEAF_DESC::DBM::SET);
/// Execute-never at every level: PXN (no EL1 instruction fetch) and UXN (no
/// EL0 instruction fetch).
const XN: u64 = bits(LEAF_DESC::PXN::SET) | bits(LEAF_DESC::UXN::SET);

impl PgProt {
    /// Kernel data: read-write, never executable.
    pub const KERNEL: PgProt = PgProt(PROT_NORMAL | XN);
    /// Kernel read-only data.
    pub const KERNEL_RO: PgProt = PgProt(PROT_NORMAL | bits(LEAF_DESC::AP::RoEl1) | XN);
    /// Kernel text: read-only, executable at EL1 only.
    pub const KERNEL_ROX: PgProt =
        PgProt(PROT_NORMAL | bits(LEAF_DESC::AP::RoEl1) | bits(LEAF_DESC::UXN::SET));
    /// MMIO: Device-nGnRE, never executable.
    pub const DEVICE: PgProt = PgProt(PROT_DEVICE | XN);

    /// A user page (Linux: `PAGE_READONLY`, `PAGE_SHARED`,
    /// `PAGE_READONLY_EXEC`...): EL0-accessible, not global (tagged with the
    /// ASID), never executable by the kernel. A writable one is clean:
    /// read-only with DBM set, made read-write by its first write
    /// (`Pte::mkdirty`), as Linux's `PAGE_SHARED` is.
    pub fn user(write: bool, exec: bool) -> PgProt {
        let write = if write { DBM } else { 0 };
        let uxn = if exec { 0 } else { bits(LEAF_DESC::UXN::SET) };
        PgProt(
            PROT_NORMAL
                | bits(LEAF_DESC::AP::RoEl0)
                | write
                | bits(LEAF_DESC::NG::SET)
                | bits(LEAF_DESC::PXN::SET)
                | uxn,
        )
    }

    /// A user page made PROT_NONE: it keeps its frame, but EL0 may not
    /// touch it (Linux uses an invalid entry with a software bit; ours stays
    /// valid and kernel-readable, not global).
    pub fn user_none() -> PgProt {
        PgProt(PROT_NORMAL | bits(LEAF_DESC::AP::RoEl1) | bits(LEAF_DESC::NG::SET) | XN)
    }

    /// EL0 may read (`AP[1]` set).
    pub fn is_user_readable(self) -> bool {
        Leaf::new(self.0).read(LEAF_DESC::AP) & 1 != 0
    }
    /// EL0 may write: readable at EL0 and writable (read-write now, or
    /// clean with DBM set, read-write once dirty).
    pub fn is_user_writable(self) -> bool {
        self.is_user_readable() && self.is_writable()
    }
    /// EL0 may execute (UXN clear).
    pub fn is_user_exec(self) -> bool {
        !Leaf::new(self.0).is_set(LEAF_DESC::UXN)
    }

    /// Writable at all, whether or not EL0 may also write (Linux:
    /// `pte_write`): DBM set, or `AP[2]` clear (a kernel entry, which has
    /// no DBM).
    pub fn is_writable(self) -> bool {
        self.0 & DBM != 0 || self.0 & RDONLY == 0
    }
    /// The same protection, dirty: see [`Pte::mkdirty`].
    #[inline(always)]
    pub const fn mkdirty(self) -> PgProt {
        // DBM (bit 51) moved down onto AP[2] (bit 7): no branch.
        let rdonly = (self.0 >> (51 - 7)) & RDONLY;
        PgProt((self.0 | SW_DIRTY) & !rdonly)
    }
    /// EL1 may execute (PXN clear): only kernel text is mapped so.
    pub fn is_kernel_exec(self) -> bool {
        !Leaf::new(self.0).is_set(LEAF_DESC::PXN)
    }
    /// Device memory (MAIR index 0), mapped by `PgProt::DEVICE` for MMIO.
    pub fn is_device(self) -> bool {
        Leaf::new(self.0).read(LEAF_DESC::ATTR_INDX) == 0
    }
}

/// One translation-table entry at any level (Linux: `pte_t` and friends).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Pte(pub u64);

impl Pte {
    /// The empty entry: invalid, no address, nothing mapped (Linux: what
    /// `pte_none` tests for).
    pub const NONE: Pte = Pte(0);

    /// A table descriptor pointing at the next-level table at `pa`.
    pub fn table(pa: PhysAddr) -> Pte {
        debug_assert!(pa.is_aligned(4096));
        Pte((TABLE_DESC::VALID::SET + TABLE_DESC::TYPE::Table).value | (pa.0 & ADDR_MASK))
    }

    /// A level-3 entry mapping the page at `pa` (Linux: `pfn_pte`).
    pub fn page(pa: PhysAddr, prot: PgProt) -> Pte {
        Pte::leaf(pa, prot, LEAF_DESC::TYPE::Page)
    }

    /// A level-1 or level-2 block mapping the 1G or 2M at `pa` (Linux:
    /// `pfn_pmd`, `pfn_pud`).
    pub fn block(pa: PhysAddr, prot: PgProt) -> Pte {
        Pte::leaf(pa, prot, LEAF_DESC::TYPE::Block)
    }

    /// A valid leaf of descriptor type `ty`: the two differ in bit 1 only.
    fn leaf(pa: PhysAddr, prot: PgProt, ty: FieldValue<u64, LEAF_DESC::Register>) -> Pte {
        Pte(bits(LEAF_DESC::VALID::SET) | bits(ty) | prot.0 | (pa.0 & ADDR_MASK))
    }

    /// The same mapping, read-only (for copy-on-write after fork), its
    /// dirty state kept in the software bit (Linux: `pte_wrprotect`).
    pub fn wrprotect(self) -> Pte {
        let dirty = if self.is_dirty() { SW_DIRTY } else { 0 };
        Pte((self.0 | dirty | RDONLY) & !DBM)
    }

    /// The entry is empty, all 64 bits zero (Linux: `pte_none`): nothing is
    /// mapped. An invalid entry with other bits set is not none.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
    /// The valid bit (bit 0) is set: the walker uses this entry (Linux:
    /// `pte_valid`).
    pub fn is_valid(self) -> bool {
        Leaf::new(self.0).is_set(LEAF_DESC::VALID)
    }
    /// At levels 0-2: does this entry point at a next-level table? (At level
    /// 3 the same bit pattern is a page.)
    pub fn is_table(self) -> bool {
        self.is_valid() && Leaf::new(self.0).is_set(LEAF_DESC::TYPE)
    }
    /// Output address (leaf) or next-table address (table).
    pub fn addr(self) -> PhysAddr {
        PhysAddr(self.0 & ADDR_MASK)
    }
    /// The contiguous bit (bit 52) is set: one of 16 entries of a contpte block
    /// (Linux: `pte_cont`).
    pub fn is_contiguous(self) -> bool {
        Leaf::new(self.0).is_set(LEAF_DESC::CONTIGUOUS)
    }
    /// The access flag (bit 10) is set: the entry was mapped young or has
    /// been accessed (Linux: `pte_young`); smaps counts it as Referenced.
    pub fn is_young(self) -> bool {
        Leaf::new(self.0).is_set(LEAF_DESC::AF)
    }
    /// Written through since it was mapped clean (Linux: `pte_dirty`): the
    /// software bit, or the hardware's (DBM set and `AP[2]` clear).
    pub fn is_dirty(self) -> bool {
        self.0 & SW_DIRTY != 0 || self.0 & (DBM | RDONLY) == DBM
    }
    /// The same entry, dirty (Linux: `pte_mkdirty`): the software bit, and
    /// read-write if it may be written at all.
    #[inline(always)]
    pub fn mkdirty(self) -> Pte {
        // The bits it changes lie outside the address.
        Pte(PgProt(self.0).mkdirty().0)
    }
    /// The same entry, clean (Linux: `pte_mkclean`): read-only again if it
    /// may be written, so the next write shows.
    pub fn mkclean(self) -> Pte {
        let rdonly = if self.0 & DBM != 0 { RDONLY } else { 0 };
        Pte((self.0 & !SW_DIRTY) | rdonly)
    }
    /// The same entry with the access flag set (Linux: `pte_mkyoung`).
    pub fn mkyoung(self) -> Pte {
        Pte(self.0 | bits(LEAF_DESC::AF::SET))
    }
    /// The same entry with the contiguous bit set or cleared (Linux:
    /// `pte_mkcont` / `pte_mknoncont`).
    pub fn with_cont(self, cont: bool) -> Pte {
        let mut leaf = Leaf::new(self.0);
        leaf.modify(if cont {
            LEAF_DESC::CONTIGUOUS::SET
        } else {
            LEAF_DESC::CONTIGUOUS::CLEAR
        });
        Pte(leaf.get())
    }
    /// The same entry, also young and dirty where `other` is: how a block's
    /// access state is gathered into one entry (Linux: `contpte_ptep_get`).
    pub fn with_access_of(self, other: Pte) -> Pte {
        let pte = Pte(self.0 | (other.0 & bits(LEAF_DESC::AF::SET)));
        if other.is_dirty() {
            pte.mkdirty()
        } else {
            pte
        }
    }
    /// The same entry with the access flag clear (Linux: `pte_mkold`): the
    /// first access faults, or, with TCR_EL1.HA, the hardware sets it.
    pub fn mkold(self) -> Pte {
        Pte(self.0 & !bits(LEAF_DESC::AF::SET))
    }
    /// The same entry, old and clean: what two entries of one block must
    /// agree on besides the address (Linux: `pte_mkold(pte_mkclean(pte))`).
    pub fn old_clean(self) -> Pte {
        self.mkold().mkclean()
    }
    /// The same entry with the valid bit clear (Linux: `pmd_mkinvalid`):
    /// the walker faults through it, yet it is not none, so no fault
    /// installs a table or block in its place while it is being changed.
    pub fn invalid(self) -> Pte {
        let mut leaf = Leaf::new(self.0);
        leaf.modify(LEAF_DESC::VALID::CLEAR);
        Pte(leaf.get())
    }
    /// The same attributes over another frame (Linux: `pfn_pte`).
    pub fn with_addr(self, pa: PhysAddr) -> Pte {
        Pte((self.0 & !ADDR_MASK) | (pa.0 & ADDR_MASK))
    }

    /// The entry's attributes and permissions: everything but its address,
    /// valid and type bits (Linux: `pte_pgprot`). For a valid leaf `e`,
    /// `Pte::page(e.addr(), e.prot())` (or `Pte::block`, as `e` is) rebuilds
    /// `e`.
    pub fn prot(self) -> PgProt {
        PgProt(self.0 & !(ADDR_MASK | bits(LEAF_DESC::VALID::SET) | bits(LEAF_DESC::TYPE::Page)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_descriptor_encoding() {
        let t = Pte::table(PhysAddr(0x4123_4000));
        assert_eq!(t.0, 0x4123_4003);
        assert!(t.is_valid() && t.is_table());
        assert_eq!(t.addr(), PhysAddr(0x4123_4000));
    }

    #[test]
    fn block_and_page_encoding() {
        // A 2M kernel-data block: valid, block, AttrIndx 1, SH inner, AF,
        // PXN, UXN.
        let b = Pte::block(PhysAddr(0x4020_0000), PgProt::KERNEL);
        assert_eq!(b.0, 0x0060_0000_4020_0705);
        assert!(b.is_valid() && !b.is_table());
        // The same as a level-3 page sets TYPE.
        let p = Pte::page(PhysAddr(0x4020_1000), PgProt::KERNEL);
        assert_eq!(p.0, 0x0060_0000_4020_1707);
        assert_eq!(p.addr(), PhysAddr(0x4020_1000));
        assert_eq!(p.prot(), PgProt::KERNEL);
        assert_eq!(b.prot(), PgProt::KERNEL);
    }

    #[test]
    fn an_invalidated_block_is_neither_valid_nor_none() {
        let b = Pte::block(PhysAddr(0x4020_0000), PgProt::user(true, false));
        let gone = b.invalid();
        assert!(!gone.is_valid() && !gone.is_none() && !gone.is_table());
        assert_eq!(gone.addr(), b.addr());
    }

    #[test]
    fn protections() {
        assert!(PgProt::KERNEL.is_writable() && !PgProt::KERNEL.is_kernel_exec());
        assert!(!PgProt::KERNEL_RO.is_writable() && !PgProt::KERNEL_RO.is_kernel_exec());
        assert!(!PgProt::KERNEL_ROX.is_writable() && PgProt::KERNEL_ROX.is_kernel_exec());
        assert!(PgProt::DEVICE.is_device() && !PgProt::KERNEL.is_device());
        // Text must not be executable from EL0 either.
        assert!(Pte::page(PhysAddr(0), PgProt::KERNEL_ROX).0 & (1 << 54) != 0);
        // Device memory: AttrIndx 0, not shareable.
        assert_eq!(Pte::page(PhysAddr(0), PgProt::DEVICE).0 & 0x31c, 0);
    }

    #[test]
    fn user_protections() {
        let rw = PgProt::user(true, false);
        let p = Pte::page(PhysAddr(0x4123_4000), rw);
        // AP = 11 (EL0 read-only until dirty), DBM, nG, PXN, UXN, AF, SH
        // inner, normal memory.
        assert_eq!(p.0, 0x0068_0000_4123_4fc7);
        assert!(rw.is_user_writable() && !p.is_dirty());
        assert!(rw.is_writable() && !rw.is_kernel_exec());
        let rx = PgProt::user(false, true);
        assert!(!rx.is_writable());
        assert_eq!(
            Pte::page(PhysAddr(0), rx).0 & (1 << 54),
            0,
            "user exec clears UXN"
        );
        // wrprotect keeps EL0 access, drops write.
        let ro = p.wrprotect();
        assert_eq!(ro.prot(), PgProt::user(false, false));
        assert_eq!(ro.addr(), p.addr());
    }

    #[test]
    fn contiguous_and_access_bits() {
        let p = Pte::page(PhysAddr(0x4001_0000), PgProt::user(true, false));
        let c = p.with_cont(true);
        assert!(c.is_contiguous() && !p.is_contiguous());
        assert_eq!(c.0 & !p.0, 1 << 52, "the contiguous bit is bit 52");
        assert_eq!(c.with_cont(false), p);
        let dirty = Pte(p.0 | 1 << 55);
        assert!(dirty.is_dirty() && !p.is_dirty());
        let old = p.old_clean();
        assert!(!old.is_young() && !old.is_dirty());
        let gathered = old.with_access_of(dirty);
        assert!(gathered.is_young() && gathered.is_dirty());
        assert_eq!(old.with_access_of(old), old);
        let moved = c.with_addr(PhysAddr(0x8000_0000));
        assert_eq!(moved.addr(), PhysAddr(0x8000_0000));
        assert_eq!(moved.prot(), c.prot());
    }

    #[test]
    fn dirty_state_in_software_and_hardware() {
        let clean = Pte::page(PhysAddr(0x4001_0000), PgProt::user(true, false));
        // The first write: the kernel's mkdirty, or the MMU clearing AP[2].
        let sw = clean.mkdirty();
        assert_eq!(sw.0 & (1 << 7 | 1 << 55), 1 << 55, "read-write, SW_DIRTY");
        let hw = Pte(clean.0 & !(1 << 7));
        assert!(sw.is_dirty() && hw.is_dirty());
        assert_eq!(sw.mkclean(), clean);
        assert_eq!(hw.mkclean(), clean);
        // Write-protecting keeps the dirty state in software.
        for dirty in [sw, hw] {
            let ro = dirty.wrprotect();
            assert!(ro.is_dirty() && !ro.prot().is_writable() && ro.0 & (1 << 7) != 0);
        }
        assert!(!clean.wrprotect().is_dirty());
        // A read-only entry made dirty stays read-only.
        let ro = Pte::page(PhysAddr(0x4001_0000), PgProt::user(false, false)).mkdirty();
        assert!(ro.is_dirty() && !ro.prot().is_writable());
        // Gathering a block takes the hardware's dirty state too.
        assert!(clean.with_access_of(hw).is_dirty());
        assert_eq!(sw.old_clean(), clean.mkold());
    }

    #[test]
    fn addresses_above_4g_and_none() {
        let p = Pte::page(PhysAddr(0x1_3fff_f000), PgProt::KERNEL);
        assert_eq!(p.addr(), PhysAddr(0x1_3fff_f000));
        assert!(Pte::NONE.is_none() && !Pte::NONE.is_valid());
    }
}
