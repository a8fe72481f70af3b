//! Which large-folio orders a new tmpfs/shmem folio may have (Linux:
//! `mm/shmem.c`, `shmem_huge_global_enabled`, `shmem_allowable_huge_orders`
//! and `shmem_suitable_orders`; the policy is described in
//! `Documentation/admin-guide/mm/transhuge.rst`, "Hugepages in tmpfs/shmem").
//!
//! Three kinds of knob decide it:
//! - the `huge=` option of a tmpfs mount (`MountHuge`), for files on it;
//! - `/sys/kernel/mm/transparent_hugepage/shmem_enabled` (`ShmemEnabled`):
//!   the `huge=` of the kernel's internal mount, plus `deny` and `force`,
//!   which override every mount;
//! - `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/shmem_enabled`
//!   (`PerSizeEnabled`), one per folio size, for faults on memfd and
//!   `MAP_SHARED|MAP_ANONYMOUS` mappings.
//!
//! Anonymous memory has its own knobs (Linux's mTHP): the top-level
//! `enabled` (`ThpEnabled`) and `hugepages-<N>kB/enabled` (`AnonPerSize`);
//! `HugeSettings::anon_orders` says what an anonymous fault may allocate.
//!
//! Seed 004 adds two hex-flag knobs: `thp_exec_enabled`, whose mTHP bit
//! gives file text faulted through an executable mapping 64K folios
//! (`exec_folio_order`), and
//! `thp_mapping_align`, which mmap() reads to place mappings at 64K.
//!
//! `allowable_orders` turns the knobs into the orders a folio may have;
//! `suitable_orders` keeps those whose aligned range of the page cache is
//! still empty and lists what to try, highest first, down to order 0. The
//! page cache is a closure, so all of it runs in host tests.
//!
//! Where we simplify:
//! - Large orders are 2 to 9 (16K to 2M), the sizes with a per-size knob.
//!   Linux may also give a tmpfs write() an order-1 (8K) folio.
//! - The per-size knobs apply to the internal mount's files. Linux decides
//!   by the mapping instead: any file unlinked before mmap() gets them
//!   (`vma_is_anon_shmem`), even one on a tmpfs mount.
//! - No `MADV_NOHUGEPAGE` or `PR_SET_THP_DISABLE`, which in Linux turn large
//!   folios off for a mapping whatever the knobs say.

use core::fmt;
use core::ops::{BitOr, BitOrAssign};

use crate::arch::contpte::arch_wants_exec_folio_order;
use crate::mm::addr::{PAGE_SHIFT, PAGE_SIZE, PMD_SHIFT};

/// Order of a folio that one PMD entry maps: 2M with 4K pages.
pub const PMD_ORDER: u8 = (PMD_SHIFT - PAGE_SHIFT) as u8;
/// Smallest large order (16K): the smallest size with a per-size knob.
pub const MIN_LARGE_ORDER: u8 = 2;
/// Number of per-size knobs, one per order from `MIN_LARGE_ORDER` to
/// `PMD_ORDER`.
pub const NR_PER_SIZE: usize = (PMD_ORDER - MIN_LARGE_ORDER + 1) as usize;

/// A set of large folio orders, bit N for order N. Order 0 is never in it:
/// a single page is not a choice but where every allocation ends up when the
/// large ones fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderMask(u16);

impl OrderMask {
    pub const EMPTY: OrderMask = OrderMask(0);
    /// Every large order, `MIN_LARGE_ORDER` to `PMD_ORDER`.
    pub const ALL: OrderMask = OrderMask::up_to(PMD_ORDER);
    pub const PMD: OrderMask = OrderMask::only(PMD_ORDER);

    /// The set holding just `order`. Panics unless it is a large order.
    pub const fn only(order: u8) -> Self {
        assert!(
            order >= MIN_LARGE_ORDER && order <= PMD_ORDER,
            "not a large folio order"
        );
        OrderMask(1 << order)
    }

    /// Every large order up to `max`: empty when `max` is below
    /// `MIN_LARGE_ORDER`.
    const fn up_to(max: u8) -> Self {
        if max < MIN_LARGE_ORDER {
            return OrderMask::EMPTY;
        }
        OrderMask((1 << (max + 1)) - (1 << MIN_LARGE_ORDER))
    }

    /// The set as bits (bit `n` for order `n`), and back; bits outside the
    /// large orders are dropped.
    pub const fn bits(self) -> u16 {
        self.0
    }
    pub const fn from_bits(bits: u16) -> Self {
        OrderMask(bits & OrderMask::ALL.0)
    }

    pub const fn contains(self, order: u8) -> bool {
        order < 16 && self.0 & (1 << order) != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The orders in both sets.
    const fn and(self, other: OrderMask) -> Self {
        OrderMask(self.0 & other.0)
    }

    pub fn highest(self) -> Option<u8> {
        self.orders().next_back()
    }

    /// The orders in the set, lowest first.
    pub fn orders(self) -> impl DoubleEndedIterator<Item = u8> {
        (MIN_LARGE_ORDER..=PMD_ORDER).filter(move |&order| self.contains(order))
    }

    /// The orders in the set that `keep` keeps.
    pub fn filter(self, keep: impl Fn(u8) -> bool) -> Self {
        self.orders()
            .filter(|&order| keep(order))
            .fold(OrderMask::EMPTY, |kept, order| {
                kept | OrderMask::only(order)
            })
    }
}

impl BitOr for OrderMask {
    type Output = OrderMask;
    fn bitor(self, other: OrderMask) -> OrderMask {
        OrderMask(self.0 | other.0)
    }
}

impl BitOrAssign for OrderMask {
    fn bitor_assign(&mut self, other: OrderMask) {
        self.0 |= other.0;
    }
}

/// A write of a value the knob does not have. The kernel answers `EINVAL`
/// and leaves the setting as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidSetting;

/// A huge-page knob: a few words, one of them in force.
pub trait HugeKnob: Copy + Eq + 'static {
    /// Every value, in the order the sysfs file lists them.
    const ALL: &'static [Self];

    fn name(self) -> &'static str;

    /// The value named exactly `word`, as a mount option gives it.
    fn from_name(word: &str) -> Result<Self, InvalidSetting> {
        Self::ALL
            .iter()
            .copied()
            .find(|value| value.name() == word)
            .ok_or(InvalidSetting)
    }

    /// The value written to the knob's sysfs file: one word, with at most one
    /// trailing newline, the one `echo` adds (Linux: `sysfs_streq`).
    fn from_sysfs(buf: &str) -> Result<Self, InvalidSetting> {
        Self::from_name(buf.strip_suffix('\n').unwrap_or(buf))
    }

    /// What reading the knob's sysfs file shows: every word, the current one
    /// in brackets, then a newline.
    fn sysfs_show(self) -> SysfsShow<Self> {
        SysfsShow(self)
    }
}

/// The text of a knob's sysfs file, e.g. "always [inherit] within_size
/// advise never\n"; written with `Display` so that no buffer is needed.
pub struct SysfsShow<K>(K);

impl<K: HugeKnob> fmt::Display for SysfsShow<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &value) in K::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            if value == self.0 {
                write!(f, "{sep}[{}]", value.name())?;
            } else {
                write!(f, "{sep}{}", value.name())?;
            }
        }
        writeln!(f)
    }
}

/// `/sys/kernel/mm/transparent_hugepage/shmem_enabled`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShmemEnabled {
    Always,
    /// Only folios that end inside the file, or that `MADV_HUGEPAGE` asked for.
    WithinSize,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Advise,
    #[default]
    Never,
    /// Emergency off switch: no large folios for any file on any mount.
    Deny,
    /// Testing aid: PMD-sized folios for every file on every mount.
    Force,
}

impl HugeKnob for ShmemEnabled {
    const ALL: &'static [Self] = &[
        ShmemEnabled::Always,
        ShmemEnabled::WithinSize,
        ShmemEnabled::Advise,
        ShmemEnabled::Never,
        ShmemEnabled::Deny,
        ShmemEnabled::Force,
    ];

    fn name(self) -> &'static str {
        match self {
            ShmemEnabled::Always => "always",
            ShmemEnabled::WithinSize => "within_size",
            ShmemEnabled::Advise => "advise",
            ShmemEnabled::Never => "never",
            ShmemEnabled::Deny => "deny",
            ShmemEnabled::Force => "force",
        }
    }
}

impl ShmemEnabled {
    /// The `huge=` of the kernel's internal mount, which follows this knob.
    /// `deny` and `force` override every mount before its `huge=` is read,
    /// so what they map to here never matters.
    fn internal_mount_huge(self) -> MountHuge {
        match self {
            ShmemEnabled::Always => MountHuge::Always,
            ShmemEnabled::WithinSize => MountHuge::WithinSize,
            ShmemEnabled::Advise => MountHuge::Advise,
            ShmemEnabled::Never | ShmemEnabled::Deny | ShmemEnabled::Force => MountHuge::Never,
        }
    }
}

/// `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/shmem_enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerSizeEnabled {
    Always,
    /// Used when the top-level `shmem_enabled` would allow a PMD-sized folio.
    Inherit,
    /// Only when the folio would end inside the file.
    WithinSize,
    /// Only where `MADV_HUGEPAGE` asked for it.
    Advise,
    Never,
}

impl HugeKnob for PerSizeEnabled {
    const ALL: &'static [Self] = &[
        PerSizeEnabled::Always,
        PerSizeEnabled::Inherit,
        PerSizeEnabled::WithinSize,
        PerSizeEnabled::Advise,
        PerSizeEnabled::Never,
    ];

    fn name(self) -> &'static str {
        match self {
            PerSizeEnabled::Always => "always",
            PerSizeEnabled::Inherit => "inherit",
            PerSizeEnabled::WithinSize => "within_size",
            PerSizeEnabled::Advise => "advise",
            PerSizeEnabled::Never => "never",
        }
    }
}

/// `/sys/kernel/mm/transparent_hugepage/enabled`: large folios for
/// anonymous memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpEnabled {
    Always,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Madvise,
    Never,
}

impl HugeKnob for ThpEnabled {
    const ALL: &'static [Self] = &[ThpEnabled::Always, ThpEnabled::Madvise, ThpEnabled::Never];

    fn name(self) -> &'static str {
        match self {
            ThpEnabled::Always => "always",
            ThpEnabled::Madvise => "madvise",
            ThpEnabled::Never => "never",
        }
    }
}

/// `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/enabled`: folios of
/// that size for anonymous memory (Linux: `thpsize_enabled_store`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnonPerSize {
    Always,
    /// Whatever the top-level `enabled` says.
    Inherit,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Madvise,
    Never,
}

impl HugeKnob for AnonPerSize {
    const ALL: &'static [Self] = &[
        AnonPerSize::Always,
        AnonPerSize::Inherit,
        AnonPerSize::Madvise,
        AnonPerSize::Never,
    ];

    fn name(self) -> &'static str {
        match self {
            AnonPerSize::Always => "always",
            AnonPerSize::Inherit => "inherit",
            AnonPerSize::Madvise => "madvise",
            AnonPerSize::Never => "never",
        }
    }
}

/// The `huge=` option of a tmpfs mount.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MountHuge {
    #[default]
    Never,
    Always,
    /// Only folios that end inside the file, or that `MADV_HUGEPAGE` asked for.
    WithinSize,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Advise,
}

impl HugeKnob for MountHuge {
    const ALL: &'static [Self] = &[
        MountHuge::Never,
        MountHuge::Always,
        MountHuge::WithinSize,
        MountHuge::Advise,
    ];

    fn name(self) -> &'static str {
        match self {
            MountHuge::Never => "never",
            MountHuge::Always => "always",
            MountHuge::WithinSize => "within_size",
            MountHuge::Advise => "advise",
        }
    }
}

const PER_SIZE_NAMES: [&str; NR_PER_SIZE] = [
    "hugepages-16kB",
    "hugepages-32kB",
    "hugepages-64kB",
    "hugepages-128kB",
    "hugepages-256kB",
    "hugepages-512kB",
    "hugepages-1024kB",
    "hugepages-2048kB",
];

/// Where order `order`'s knob sits in `HugeSettings::per_size`. Panics for
/// an order without a knob.
fn per_size_slot(order: u8) -> usize {
    assert!(
        (MIN_LARGE_ORDER..=PMD_ORDER).contains(&order),
        "no per-size shmem knob for order {order}"
    );
    (order - MIN_LARGE_ORDER) as usize
}

/// The sysfs directory of order `order`'s knob: order 4 is "hugepages-64kB".
/// Panics for an order without a knob.
pub fn per_size_name(order: u8) -> &'static str {
    PER_SIZE_NAMES[per_size_slot(order)]
}

/// `thp_exec_enabled` bit 0: PMD-sized folios for exec mappings, through
/// khugepaged (Linux: `FILE_EXEC_THP_ENABLE`).
pub const FILE_EXEC_THP_ENABLE: u32 = 1 << 0;
/// `thp_exec_enabled` bit 1: `arch_wants_exec_folio_order` folios for exec
/// mappings (Linux: `FILE_EXEC_MTHP_ENABLE`).
pub const FILE_EXEC_MTHP_ENABLE: u32 = 1 << 1;
/// `thp_mapping_align` bit 0: file mappings (Linux: `FILE_MAPPING_ALIGN`).
pub const FILE_MAPPING_ALIGN: u32 = 1 << 0;
/// `thp_mapping_align` bit 1: private anonymous mappings (Linux:
/// `ANON_MAPPING_ALIGN`).
pub const ANON_MAPPING_ALIGN: u32 = 1 << 1;

/// The value written to a hex-flags knob, bits outside `allowed` refused
/// (Linux: `kstrtoul(buf, 16, &val)`, then `val & ~ALL` is EINVAL): hex
/// digits, optionally after `+` and `0x`, then at most one newline. A value
/// too big for the type is EINVAL here, ERANGE in Linux.
fn parse_hex_flags(buf: &str, allowed: u32) -> Result<u32, InvalidSetting> {
    let buf = buf.strip_suffix('\n').unwrap_or(buf);
    let buf = buf.strip_prefix('+').unwrap_or(buf);
    // kstrtoul skips "0x" only when a hex digit follows, so "0x" is a 0
    // with junk after it.
    let digits = match buf.strip_prefix("0x").or_else(|| buf.strip_prefix("0X")) {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_hexdigit()) => rest,
        _ => buf,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(InvalidSetting);
    }
    match u32::from_str_radix(digits, 16) {
        Ok(val) if val & !allowed == 0 => Ok(val),
        _ => Err(InvalidSetting),
    }
}

/// What reading a hex-flags knob shows, e.g. "0x2\n" (Linux:
/// `sysfs_emit(buf, "0x%lx\n", val)`).
pub struct HexFlagsShow(pub u32);

impl fmt::Display for HexFlagsShow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:#x}", self.0)
    }
}

/// The system-wide knobs (the mount option lives with each mount).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HugeSettings {
    pub shmem_enabled: ShmemEnabled,
    /// The per-size knobs, indexed by order - `MIN_LARGE_ORDER`.
    pub per_size: [PerSizeEnabled; NR_PER_SIZE],
    /// `thp_exec_enabled`: `FILE_EXEC_*` bits.
    pub thp_exec_enabled: u32,
    /// `thp_mapping_align`: `*_MAPPING_ALIGN` bits.
    pub thp_mapping_align: u32,
    /// `enabled`, and the per-size `enabled` knobs (indexed as `per_size`):
    /// anonymous memory.
    pub anon_enabled: ThpEnabled,
    pub anon_per_size: [AnonPerSize; NR_PER_SIZE],
}

impl Default for HugeSettings {
    /// Linux's boot defaults: nothing is huge, and the 2M knob follows the
    /// top-level one so that turning that on is enough for PMD-sized folios.
    /// Seed 004's knobs start at 0x0, as `transparent_hugepage_flags` has
    /// none of their bits at boot. Anonymous memory: the per-size knobs as
    /// Linux has them, and `enabled` at `never` (a Linux build picks its
    /// own), so anonymous faults map single pages until asked otherwise.
    fn default() -> Self {
        let mut per_size = [PerSizeEnabled::Never; NR_PER_SIZE];
        per_size[per_size_slot(PMD_ORDER)] = PerSizeEnabled::Inherit;
        let mut anon_per_size = [AnonPerSize::Never; NR_PER_SIZE];
        anon_per_size[per_size_slot(PMD_ORDER)] = AnonPerSize::Inherit;
        HugeSettings {
            shmem_enabled: ShmemEnabled::Never,
            per_size,
            thp_exec_enabled: 0,
            thp_mapping_align: 0,
            anon_enabled: ThpEnabled::Never,
            anon_per_size,
        }
    }
}

impl HugeSettings {
    /// Order `order`'s knob. Panics for an order without one.
    pub fn per_size(&self, order: u8) -> PerSizeEnabled {
        self.per_size[per_size_slot(order)]
    }

    /// A write of `buf` to `shmem_enabled` (Linux: `shmem_enabled_store`).
    pub fn store_shmem_enabled(&mut self, buf: &str) -> Result<(), InvalidSetting> {
        let value = ShmemEnabled::from_sysfs(buf)?;
        // `force` hands internal faults the inherit orders. Linux refuses it
        // unless those are exactly the PMD order, so that forcing never means
        // some mix of smaller sizes.
        if value == ShmemEnabled::Force
            && self.orders_set_to(PerSizeEnabled::Inherit) != OrderMask::PMD
        {
            return Err(InvalidSetting);
        }
        self.shmem_enabled = value;
        Ok(())
    }

    /// A write of `buf` to order `order`'s per-size knob (Linux:
    /// `thpsize_shmem_enabled_store`). Panics for an order without one.
    pub fn store_per_size(&mut self, order: u8, buf: &str) -> Result<(), InvalidSetting> {
        let slot = per_size_slot(order);
        let value = PerSizeEnabled::from_sysfs(buf)?;
        // The other half of the rule in `store_shmem_enabled`.
        if value == PerSizeEnabled::Inherit
            && order != PMD_ORDER
            && self.shmem_enabled == ShmemEnabled::Force
        {
            return Err(InvalidSetting);
        }
        self.per_size[slot] = value;
        Ok(())
    }

    /// A write of `buf` to `thp_exec_enabled` (Linux:
    /// `thp_exec_enabled_store`). Bit 0 is accepted and dropped, as by a
    /// Linux built without `CONFIG_READ_ONLY_THP_FOR_FS`: there is no
    /// khugepaged to collapse text into PMD-sized folios.
    pub fn store_thp_exec_enabled(&mut self, buf: &str) -> Result<(), InvalidSetting> {
        let val = parse_hex_flags(buf, FILE_EXEC_THP_ENABLE | FILE_EXEC_MTHP_ENABLE)?;
        self.thp_exec_enabled = val & FILE_EXEC_MTHP_ENABLE;
        Ok(())
    }

    /// A write of `buf` to `thp_mapping_align` (Linux:
    /// `thp_mapping_align_store`).
    pub fn store_thp_mapping_align(&mut self, buf: &str) -> Result<(), InvalidSetting> {
        self.thp_mapping_align = parse_hex_flags(buf, FILE_MAPPING_ALIGN | ANON_MAPPING_ALIGN)?;
        Ok(())
    }

    /// Order `order`'s anonymous knob. Panics for an order without one.
    pub fn anon_per_size(&self, order: u8) -> AnonPerSize {
        self.anon_per_size[per_size_slot(order)]
    }

    /// A write of `buf` to `enabled` (Linux: `enabled_store`).
    pub fn store_anon_enabled(&mut self, buf: &str) -> Result<(), InvalidSetting> {
        self.anon_enabled = ThpEnabled::from_sysfs(buf)?;
        Ok(())
    }

    /// A write of `buf` to order `order`'s `enabled` (Linux:
    /// `thpsize_enabled_store`). Panics for an order without one.
    pub fn store_anon_per_size(&mut self, order: u8, buf: &str) -> Result<(), InvalidSetting> {
        self.anon_per_size[per_size_slot(order)] = AnonPerSize::from_sysfs(buf)?;
        Ok(())
    }

    /// The folio orders an anonymous fault may allocate in a VMA that did
    /// (`madvised`) or did not ask for `MADV_HUGEPAGE` (Linux:
    /// `thp_vma_allowable_orders` for anonymous VMAs).
    pub fn anon_orders(&self, madvised: bool) -> OrderMask {
        let wanted = |enabled: ThpEnabled| match enabled {
            ThpEnabled::Always => true,
            ThpEnabled::Madvise => madvised,
            ThpEnabled::Never => false,
        };
        OrderMask::ALL.filter(|order| match self.anon_per_size(order) {
            AnonPerSize::Always => true,
            AnonPerSize::Inherit => wanted(self.anon_enabled),
            AnonPerSize::Madvise => madvised,
            AnonPerSize::Never => false,
        })
    }

    /// The orders whose per-size knob is `value`.
    fn orders_set_to(&self, value: PerSizeEnabled) -> OrderMask {
        OrderMask::ALL.filter(|order| self.per_size(order) == value)
    }
}

/// Which file the folio is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InodeKind {
    /// A file on a tmpfs mount with this `huge=` option.
    Mounted(MountHuge),
    /// A file on the kernel's internal mount: memfd_create(), or the object
    /// behind a `MAP_SHARED|MAP_ANONYMOUS` mapping.
    Internal,
}

/// What needs the folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A page fault through a shared mapping of the file. `vma_hugepage`:
    /// the mapping has `VM_HUGEPAGE`, from madvise(MADV_HUGEPAGE).
    Fault { vma_hugepage: bool },
    /// write() or fallocate() of the bytes up to `end` (exclusive), which may
    /// lie past i_size. How far it reaches is the hint of how big a folio is
    /// worth allocating.
    Write { end: u64 },
}

/// The orders a new folio holding page `index` of a file of `i_size` bytes
/// may have (Linux: `shmem_allowable_huge_orders`).
///
/// - `deny` allows nothing, anywhere; `force` allows the PMD order anywhere.
/// - A file on a tmpfs mount follows its `huge=`. A fault is offered only
///   the PMD order, having no size hint; a write is offered the largest
///   order that fits both what is left of the write and the alignment of
///   `index`, and every smaller one.
/// - An internal file follows the per-size knobs, `inherit` asking the
///   top-level knob about the PMD order; a write is further limited as for
///   a mount. Linux applies the per-size knobs only to faults on anonymous
///   shmem and lets memfd writes follow the top-level knob; faultline lets
///   every access to an internal file follow them, so that sysfs alone
///   picks the folio size of a memfd, as the seed benchmarks expect.
pub fn allowable_orders(
    settings: &HugeSettings,
    kind: InodeKind,
    access: Access,
    i_size: u64,
    index: u64,
) -> OrderMask {
    let mount_huge = match kind {
        InodeKind::Mounted(huge) => huge,
        InodeKind::Internal => settings.shmem_enabled.internal_mount_huge(),
    };
    let global = global_orders(settings.shmem_enabled, mount_huge, access, i_size, index);
    match (kind, access) {
        (InodeKind::Internal, Access::Fault { vma_hugepage }) => {
            per_size_orders(settings, global, vma_hugepage, i_size, index)
        }
        (InodeKind::Internal, Access::Write { end })
            if !matches!(
                settings.shmem_enabled,
                ShmemEnabled::Deny | ShmemEnabled::Force
            ) =>
        {
            // The per-size knobs as for a fault without MADV_HUGEPAGE, over
            // the file as this write leaves it, then cut to what the write
            // covers and its alignment.
            let size = i_size.max(end);
            let as_fault = Access::Fault {
                vma_hugepage: false,
            };
            let top = global_orders(settings.shmem_enabled, mount_huge, as_fault, size, index);
            per_size_orders(settings, top, false, size, index).and(write_size_orders(index, end))
        }
        _ => global,
    }
}

/// The folio order for the file text around a fault in a `VM_EXEC`
/// mapping, if any (seed 004: Linux's `do_sync_mmap_readahead` reads the
/// naturally aligned `arch_wants_exec_folio_order()` pages around such a
/// fault into one folio when `thp_exec_enabled` has
/// `FILE_EXEC_MTHP_ENABLE`). Files of mounted tmpfs only, which stand in
/// for a disk file system here (the initramfs, a Debian root): internal
/// files (memfd, shared anonymous memory) are shmem in Linux too, which
/// has no readahead. `deny` turns it off, as all large folios.
pub fn exec_folio_order(settings: &HugeSettings, kind: InodeKind) -> Option<u8> {
    let wanted = settings.thp_exec_enabled & FILE_EXEC_MTHP_ENABLE != 0
        && matches!(kind, InodeKind::Mounted(_))
        && settings.shmem_enabled != ShmemEnabled::Deny;
    wanted.then(arch_wants_exec_folio_order)
}

/// What the top-level knob and the mount's `huge=` allow (Linux:
/// `shmem_huge_global_enabled`).
fn global_orders(
    top: ShmemEnabled,
    mount_huge: MountHuge,
    access: Access,
    i_size: u64,
    index: u64,
) -> OrderMask {
    match top {
        ShmemEnabled::Deny => return OrderMask::EMPTY,
        ShmemEnabled::Force => return OrderMask::PMD,
        _ => {}
    }
    let (offered, size, vma_hugepage) = match access {
        Access::Fault { vma_hugepage } => (OrderMask::PMD, i_size, vma_hugepage),
        Access::Write { end } => (write_size_orders(index, end), i_size.max(end), false),
    };
    let advised = if vma_hugepage {
        OrderMask::PMD
    } else {
        OrderMask::EMPTY
    };
    match mount_huge {
        MountHuge::Never => OrderMask::EMPTY,
        MountHuge::Always => offered,
        MountHuge::WithinSize => {
            // within_size is a superset of advise: what does not fit the file
            // is still allowed where MADV_HUGEPAGE asked.
            let fitting = within_size(offered, index, size);
            if fitting.is_empty() {
                advised
            } else {
                fitting
            }
        }
        MountHuge::Advise => advised,
    }
}

/// What the per-size knobs allow a fault on an internal file, `global`
/// being what the top-level knob allows it (Linux: the anonymous-shmem half
/// of `shmem_allowable_huge_orders`).
fn per_size_orders(
    settings: &HugeSettings,
    global: OrderMask,
    vma_hugepage: bool,
    i_size: u64,
    index: u64,
) -> OrderMask {
    match settings.shmem_enabled {
        ShmemEnabled::Deny => OrderMask::EMPTY,
        ShmemEnabled::Force => settings.orders_set_to(PerSizeEnabled::Inherit),
        _ => {
            let mut mask = settings.orders_set_to(PerSizeEnabled::Always)
                | within_size(
                    settings.orders_set_to(PerSizeEnabled::WithinSize),
                    index,
                    i_size,
                );
            if vma_hugepage {
                mask |= settings.orders_set_to(PerSizeEnabled::Advise);
            }
            // All inherit orders together, on the top-level knob's answer for
            // the PMD order: a 64K inherit folio in a 64K file under
            // within_size is refused, as the file has no room for 2M.
            if !global.is_empty() {
                mask |= settings.orders_set_to(PerSizeEnabled::Inherit);
            }
            mask
        }
    }
}

/// First page of the order-`order` folio that would hold page `index`.
fn folio_start(index: u64, order: u8) -> u64 {
    index & !((1 << order) - 1)
}

/// The orders of `orders` whose folio holding page `index` would end inside
/// a file of `size` bytes (Linux: `shmem_get_orders_within_size`). The size
/// is rounded up to whole pages first: a folio may cover the partly written
/// last page, never a page wholly past the end.
fn within_size(orders: OrderMask, index: u64, size: u64) -> OrderMask {
    let size_pages = size.div_ceil(PAGE_SIZE as u64);
    orders.filter(|order| folio_start(index, order) + (1 << order) <= size_pages)
}

/// The orders a write ending at byte `end` suits at page `index`: none
/// larger than the bytes left from this page on, rounded down to a power of
/// two, nor than the alignment of `index` (Linux:
/// `shmem_mapping_size_orders` and `filemap_get_order`).
fn write_size_orders(index: u64, end: u64) -> OrderMask {
    let left = end.saturating_sub(index << PAGE_SHIFT);
    let fits_write = left
        .checked_ilog2()
        .map_or(0, |shift| shift.saturating_sub(PAGE_SHIFT));
    let order = fits_write.min(index.trailing_zeros()).min(PMD_ORDER as u32);
    OrderMask::up_to(order as u8)
}

/// The orders to try for a new folio holding page `index`, highest first,
/// always ending with order 0 (Linux: `shmem_suitable_orders` and the loop
/// in `shmem_alloc_and_add_folio`).
///
/// The first is the highest order of `mask` whose naturally aligned range of
/// pages is empty in the page cache, `range_is_empty(first_page, nr_pages)`
/// saying so: another folio there, even one page, would overlap the new one.
/// The lower orders of `mask` follow; their ranges lie inside that one, so
/// they need no second look. The caller moves to the next order each time an
/// allocation fails, counting a fallback.
pub fn suitable_orders(
    mask: OrderMask,
    index: u64,
    range_is_empty: impl Fn(u64, u64) -> bool,
) -> FallbackOrders {
    let first = mask
        .orders()
        .rev()
        .find(|&order| range_is_empty(folio_start(index, order), 1 << order));
    let large = match first {
        Some(first) => mask.filter(|order| order <= first),
        None => OrderMask::EMPTY,
    };
    FallbackOrders {
        large,
        order0_left: true,
    }
}

/// The orders `suitable_orders` chose, highest first, then order 0.
#[derive(Clone, Debug)]
pub struct FallbackOrders {
    large: OrderMask,
    order0_left: bool,
}

impl Iterator for FallbackOrders {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if let Some(order) = self.large.highest() {
            self.large.0 &= !(1 << order);
            return Some(order);
        }
        if self.order0_left {
            self.order0_left = false;
            return Some(0);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::ToString;
    use std::vec::Vec;

    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    const PAGE: u64 = PAGE_SIZE as u64;

    fn mask(orders: &[u8]) -> OrderMask {
        orders.iter().fold(OrderMask::EMPTY, |mask, &order| {
            mask | OrderMask::only(order)
        })
    }

    fn fault(vma_hugepage: bool) -> Access {
        Access::Fault { vma_hugepage }
    }

    fn top(value: ShmemEnabled) -> HugeSettings {
        HugeSettings {
            shmem_enabled: value,
            ..HugeSettings::default()
        }
    }

    /// Settings with every per-size knob `value` and the top level `never`.
    fn all_sizes(value: PerSizeEnabled) -> HugeSettings {
        HugeSettings {
            shmem_enabled: ShmemEnabled::Never,
            per_size: [value; NR_PER_SIZE],
            ..HugeSettings::default()
        }
    }

    fn collect(orders: FallbackOrders) -> Vec<u8> {
        orders.collect()
    }

    #[test]
    fn anon_orders_follow_enabled_and_the_per_size_knobs() {
        let mut s = HugeSettings::default();
        // Boot: nothing, madvised or not.
        assert!(s.anon_orders(false).is_empty() && s.anon_orders(true).is_empty());
        assert_eq!(
            format!("{}", s.anon_per_size(PMD_ORDER).sysfs_show()),
            "always [inherit] madvise never\n"
        );
        // 2M inherits `enabled`.
        s.store_anon_enabled("madvise\n").unwrap();
        assert_eq!(
            format!("{}", s.anon_enabled.sysfs_show()),
            "always [madvise] never\n"
        );
        assert!(s.anon_orders(false).is_empty());
        assert_eq!(s.anon_orders(true), OrderMask::PMD);
        // 64K on its own.
        s.store_anon_per_size(4, "always").unwrap();
        assert_eq!(s.anon_orders(false), OrderMask::only(4));
        assert_eq!(s.anon_orders(true), OrderMask::only(4) | OrderMask::PMD);
        s.store_anon_per_size(4, "madvise").unwrap();
        assert!(s.anon_orders(false).is_empty());
        s.store_anon_enabled("never").unwrap();
        assert_eq!(s.anon_orders(true), OrderMask::only(4));
        // Bad values change nothing.
        assert_eq!(s.store_anon_enabled("within_size"), Err(InvalidSetting));
        assert_eq!(s.store_anon_per_size(4, "deny"), Err(InvalidSetting));
        assert_eq!(s.anon_orders(true), OrderMask::only(4));
    }

    #[test]
    fn shmem_enabled_sysfs_show() {
        let shown = [
            (
                ShmemEnabled::Always,
                "[always] within_size advise never deny force\n",
            ),
            (
                ShmemEnabled::WithinSize,
                "always [within_size] advise never deny force\n",
            ),
            (
                ShmemEnabled::Advise,
                "always within_size [advise] never deny force\n",
            ),
            (
                ShmemEnabled::Never,
                "always within_size advise [never] deny force\n",
            ),
            (
                ShmemEnabled::Deny,
                "always within_size advise never [deny] force\n",
            ),
            (
                ShmemEnabled::Force,
                "always within_size advise never deny [force]\n",
            ),
        ];
        for (value, text) in shown {
            assert_eq!(value.sysfs_show().to_string(), text);
        }
    }

    #[test]
    fn per_size_sysfs_show() {
        let shown = [
            (
                PerSizeEnabled::Always,
                "[always] inherit within_size advise never\n",
            ),
            (
                PerSizeEnabled::Inherit,
                "always [inherit] within_size advise never\n",
            ),
            (
                PerSizeEnabled::WithinSize,
                "always inherit [within_size] advise never\n",
            ),
            (
                PerSizeEnabled::Advise,
                "always inherit within_size [advise] never\n",
            ),
            (
                PerSizeEnabled::Never,
                "always inherit within_size advise [never]\n",
            ),
        ];
        for (value, text) in shown {
            assert_eq!(value.sysfs_show().to_string(), text);
        }
    }

    #[test]
    fn every_value_parses_back_from_its_name() {
        let words = ["always", "within_size", "advise", "never", "deny", "force"];
        for (&value, word) in ShmemEnabled::ALL.iter().zip(words) {
            assert_eq!(value.name(), word);
            assert_eq!(ShmemEnabled::from_sysfs(word), Ok(value));
            assert_eq!(ShmemEnabled::from_sysfs(&format!("{word}\n")), Ok(value));
        }
        let words = ["always", "inherit", "within_size", "advise", "never"];
        for (&value, word) in PerSizeEnabled::ALL.iter().zip(words) {
            assert_eq!(value.name(), word);
            assert_eq!(PerSizeEnabled::from_sysfs(word), Ok(value));
            assert_eq!(PerSizeEnabled::from_sysfs(&format!("{word}\n")), Ok(value));
        }
        let words = ["never", "always", "within_size", "advise"];
        for (&value, word) in MountHuge::ALL.iter().zip(words) {
            assert_eq!(value.name(), word);
            assert_eq!(MountHuge::from_name(word), Ok(value));
        }
    }

    #[test]
    fn bad_values_are_rejected() {
        let bad = [
            "sometimes",
            "",
            "\n",
            "always always",
            "[never]",
            "Always",
            " always",
            "always ",
            "always\n\n",
            "alway",
            "alwaysx",
        ];
        for buf in bad {
            assert_eq!(
                ShmemEnabled::from_sysfs(buf),
                Err(InvalidSetting),
                "{buf:?}"
            );
            assert_eq!(
                PerSizeEnabled::from_sysfs(buf),
                Err(InvalidSetting),
                "{buf:?}"
            );
            assert_eq!(MountHuge::from_name(buf), Err(InvalidSetting), "{buf:?}");
        }
        // Each knob has words the others lack.
        assert_eq!(PerSizeEnabled::from_sysfs("deny"), Err(InvalidSetting));
        assert_eq!(PerSizeEnabled::from_sysfs("force"), Err(InvalidSetting));
        assert_eq!(ShmemEnabled::from_sysfs("inherit"), Err(InvalidSetting));
        assert_eq!(MountHuge::from_name("deny"), Err(InvalidSetting));
        assert_eq!(MountHuge::from_name("force"), Err(InvalidSetting));
        assert_eq!(MountHuge::from_name("inherit"), Err(InvalidSetting));
        // A mount option is a bare word: no newline to strip.
        assert_eq!(MountHuge::from_name("always\n"), Err(InvalidSetting));
    }

    #[test]
    fn defaults_match_linux() {
        let settings = HugeSettings::default();
        assert_eq!(settings.shmem_enabled, ShmemEnabled::Never);
        for order in MIN_LARGE_ORDER..PMD_ORDER {
            assert_eq!(
                settings.per_size(order),
                PerSizeEnabled::Never,
                "order {order}"
            );
        }
        assert_eq!(settings.per_size(PMD_ORDER), PerSizeEnabled::Inherit);
        assert_eq!(MountHuge::default(), MountHuge::Never);
        assert_eq!(
            settings.shmem_enabled.sysfs_show().to_string(),
            "always within_size advise [never] deny force\n"
        );
    }

    #[test]
    fn per_size_names_map_to_orders() {
        assert_eq!(PMD_ORDER, 9);
        for order in MIN_LARGE_ORDER..=PMD_ORDER {
            let kb = (PAGE_SIZE << order) / 1024;
            let name = per_size_name(order);
            assert_eq!(name, format!("hugepages-{kb}kB"));
        }
        assert_eq!(per_size_name(4), "hugepages-64kB");
        assert_eq!(per_size_name(9), "hugepages-2048kB");
    }

    #[test]
    #[should_panic(expected = "no per-size shmem knob for order 1")]
    fn order_without_a_knob_panics() {
        per_size_name(1);
    }

    #[test]
    fn order_mask_holds_large_orders_only() {
        for order in 0..16 {
            assert_eq!(
                OrderMask::ALL.contains(order),
                (2..=9).contains(&order),
                "order {order}"
            );
        }
        assert_eq!(OrderMask::PMD, mask(&[9]));
        assert_eq!(OrderMask::ALL.highest(), Some(9));
        assert_eq!(mask(&[2, 5]).highest(), Some(5));
        assert_eq!(OrderMask::EMPTY.highest(), None);
        assert!(OrderMask::EMPTY.is_empty());
        assert_eq!(OrderMask::up_to(1), OrderMask::EMPTY);
        assert_eq!(OrderMask::up_to(4), mask(&[2, 3, 4]));
    }

    #[test]
    fn store_shmem_enabled_changes_only_on_valid_values() {
        let mut settings = HugeSettings::default();
        assert_eq!(settings.store_shmem_enabled("within_size\n"), Ok(()));
        assert_eq!(settings.shmem_enabled, ShmemEnabled::WithinSize);
        assert_eq!(
            settings.store_shmem_enabled("sometimes\n"),
            Err(InvalidSetting)
        );
        assert_eq!(settings.shmem_enabled, ShmemEnabled::WithinSize);
        assert_eq!(settings.store_shmem_enabled("deny"), Ok(()));
        assert_eq!(settings.shmem_enabled, ShmemEnabled::Deny);
    }

    #[test]
    fn force_needs_exactly_the_pmd_order_to_inherit() {
        let mut settings = HugeSettings::default();
        assert_eq!(settings.store_shmem_enabled("force\n"), Ok(()));
        assert_eq!(settings.shmem_enabled, ShmemEnabled::Force);

        // Seed 000's setting: 2M no longer inherits, so force is refused.
        let mut settings = HugeSettings::default();
        settings.store_per_size(9, "always\n").unwrap();
        assert_eq!(settings.store_shmem_enabled("force\n"), Err(InvalidSetting));
        assert_eq!(settings.shmem_enabled, ShmemEnabled::Never);

        // A smaller size inheriting too: refused.
        let mut settings = HugeSettings::default();
        settings.store_per_size(4, "inherit\n").unwrap();
        assert_eq!(settings.store_shmem_enabled("force\n"), Err(InvalidSetting));
        assert_eq!(settings.shmem_enabled, ShmemEnabled::Never);
    }

    #[test]
    fn under_force_only_the_pmd_size_may_inherit() {
        let mut settings = top(ShmemEnabled::Force);
        assert_eq!(settings.store_per_size(4, "inherit\n"), Err(InvalidSetting));
        assert_eq!(settings.per_size(4), PerSizeEnabled::Never);
        assert_eq!(settings.store_per_size(4, "always\n"), Ok(()));
        assert_eq!(settings.per_size(4), PerSizeEnabled::Always);
        assert_eq!(settings.store_per_size(9, "never\n"), Ok(()));
        assert_eq!(settings.store_per_size(9, "inherit\n"), Ok(()));
        assert_eq!(settings.per_size(9), PerSizeEnabled::Inherit);

        let mut settings = HugeSettings::default();
        assert_eq!(settings.store_per_size(4, "inherit\n"), Ok(()));
        assert_eq!(settings.per_size(4), PerSizeEnabled::Inherit);
        assert_eq!(settings.store_per_size(4, "[never]"), Err(InvalidSetting));
        assert_eq!(settings.per_size(4), PerSizeEnabled::Inherit);
    }

    #[test]
    fn within_size_boundary_rounds_the_size_up_to_a_page() {
        let within = InodeKind::Mounted(MountHuge::WithinSize);
        let settings = HugeSettings::default();
        let at = |i_size, index| allowable_orders(&settings, within, fault(false), i_size, index);
        // The 2M folio holding page 0 ends at byte 2M.
        assert_eq!(at(2 * MB, 0), OrderMask::PMD);
        assert_eq!(at(2 * MB + 1, 0), OrderMask::PMD);
        // Its last page partly written still counts as inside...
        assert_eq!(at(2 * MB - 1, 0), OrderMask::PMD);
        assert_eq!(at(2 * MB - PAGE + 1, 0), OrderMask::PMD);
        // ...a last page wholly past the end does not.
        assert_eq!(at(2 * MB - PAGE, 0), OrderMask::EMPTY);
        // Any page of the folio looks at the folio's end, not its own.
        assert_eq!(at(2 * MB, 511), OrderMask::PMD);
        assert_eq!(at(2 * MB, 512), OrderMask::EMPTY);
        assert_eq!(at(4 * MB, 512), OrderMask::PMD);
        assert_eq!(at(4 * MB - PAGE, 1000), OrderMask::EMPTY);
    }

    #[test]
    fn deny_overrides_every_knob() {
        let mut settings = all_sizes(PerSizeEnabled::Always);
        settings.shmem_enabled = ShmemEnabled::Deny;
        let kinds = [
            InodeKind::Mounted(MountHuge::Always),
            InodeKind::Mounted(MountHuge::WithinSize),
            InodeKind::Mounted(MountHuge::Advise),
            InodeKind::Internal,
        ];
        let accesses = [fault(true), fault(false), Access::Write { end: 4 * MB }];
        for kind in kinds {
            for access in accesses {
                let orders = allowable_orders(&settings, kind, access, 4 * MB, 0);
                assert_eq!(orders, OrderMask::EMPTY, "{kind:?} {access:?}");
            }
        }
    }

    #[test]
    fn force_gives_the_pmd_order_to_every_file() {
        let settings = top(ShmemEnabled::Force);
        let kinds = [
            InodeKind::Mounted(MountHuge::Never),
            InodeKind::Mounted(MountHuge::Advise),
            InodeKind::Internal,
        ];
        // Even a small write into a small file: force ignores size and madvise.
        let accesses = [fault(false), Access::Write { end: PAGE }];
        for kind in kinds {
            for access in accesses {
                let orders = allowable_orders(&settings, kind, access, PAGE, 0);
                assert_eq!(orders, OrderMask::PMD, "{kind:?} {access:?}");
            }
        }
    }

    #[test]
    fn force_on_internal_faults_means_the_inherit_orders_only() {
        let mut settings = top(ShmemEnabled::Force);
        settings.store_per_size(4, "always\n").unwrap();
        let orders = allowable_orders(&settings, InodeKind::Internal, fault(true), 4 * MB, 0);
        assert_eq!(orders, OrderMask::PMD);
        // 2M switched away from inherit after force was set: nothing is left.
        settings.store_per_size(9, "always\n").unwrap();
        let orders = allowable_orders(&settings, InodeKind::Internal, fault(true), 4 * MB, 0);
        assert_eq!(orders, OrderMask::EMPTY);
        // force gives writes the PMD order, whatever the write's size.
        let orders = allowable_orders(
            &settings,
            InodeKind::Internal,
            Access::Write { end: PAGE },
            0,
            0,
        );
        assert_eq!(orders, OrderMask::PMD);
    }

    #[test]
    fn mounted_faults_are_offered_the_pmd_order_only() {
        let settings = HugeSettings::default();
        let always = InodeKind::Mounted(MountHuge::Always);
        // A 1-byte file: always ignores the size.
        assert_eq!(
            allowable_orders(&settings, always, fault(false), 1, 0),
            OrderMask::PMD
        );
        assert_eq!(
            allowable_orders(&settings, always, fault(true), 1, 700),
            OrderMask::PMD
        );
        let never = InodeKind::Mounted(MountHuge::Never);
        assert_eq!(
            allowable_orders(&settings, never, fault(true), 4 * MB, 0),
            OrderMask::EMPTY
        );
    }

    #[test]
    fn mounted_files_ignore_the_per_size_knobs() {
        let settings = all_sizes(PerSizeEnabled::Always);
        for huge in [MountHuge::Never, MountHuge::Advise] {
            let kind = InodeKind::Mounted(huge);
            assert_eq!(
                allowable_orders(&settings, kind, fault(false), 4 * MB, 0),
                OrderMask::EMPTY
            );
        }
    }

    #[test]
    fn mounted_advise_needs_madv_hugepage() {
        let settings = HugeSettings::default();
        let advise = InodeKind::Mounted(MountHuge::Advise);
        assert_eq!(
            allowable_orders(&settings, advise, fault(true), 4 * MB, 0),
            OrderMask::PMD
        );
        assert_eq!(
            allowable_orders(&settings, advise, fault(false), 4 * MB, 0),
            OrderMask::EMPTY
        );
        // A write has no mapping to carry the advice.
        let write = Access::Write { end: 4 * MB };
        assert_eq!(
            allowable_orders(&settings, advise, write, 4 * MB, 0),
            OrderMask::EMPTY
        );
    }

    #[test]
    fn mounted_within_size_also_honours_madv_hugepage() {
        let settings = HugeSettings::default();
        let within = InodeKind::Mounted(MountHuge::WithinSize);
        assert_eq!(
            allowable_orders(&settings, within, fault(false), PAGE, 0),
            OrderMask::EMPTY
        );
        assert_eq!(
            allowable_orders(&settings, within, fault(true), PAGE, 0),
            OrderMask::PMD
        );
    }

    #[test]
    fn mounted_write_orders_follow_size_and_alignment() {
        let settings = HugeSettings::default();
        let always = InodeKind::Mounted(MountHuge::Always);
        let write = |start: u64, len: u64, index: u64| {
            allowable_orders(
                &settings,
                always,
                Access::Write { end: start + len },
                0,
                index,
            )
        };
        // 4 MiB at 0: capped at the PMD order.
        assert_eq!(write(0, 4 * MB, 0), OrderMask::ALL);
        assert_eq!(write(0, 4 * MB, 512), OrderMask::ALL);
        // 64K at 0: up to 64K.
        assert_eq!(write(0, 64 * KB, 0), mask(&[2, 3, 4]));
        // 64K + 1 byte still rounds down to 64K; one byte less drops to 32K.
        assert_eq!(write(0, 64 * KB + 1, 0), mask(&[2, 3, 4]));
        assert_eq!(write(0, 64 * KB - 1, 0), mask(&[2, 3]));
        // Less than 16K left: no large order.
        assert_eq!(write(0, 16 * KB - 1, 0), OrderMask::EMPTY);
        // 64K at 4K: index 1 is aligned to nothing large, index 2 only to
        // order 1, index 4 to order 2, index 8 to order 3 (32K left).
        assert_eq!(write(4 * KB, 64 * KB, 1), OrderMask::EMPTY);
        assert_eq!(write(4 * KB, 64 * KB, 2), OrderMask::EMPTY);
        assert_eq!(write(4 * KB, 64 * KB, 4), mask(&[2]));
        assert_eq!(write(4 * KB, 64 * KB, 8), mask(&[2, 3]));
        assert_eq!(write(4 * KB, 64 * KB, 16), OrderMask::EMPTY);
        // A 2M write at 1M: alignment caps index 256 at order 8.
        assert_eq!(write(MB, 2 * MB, 256), OrderMask::up_to(8));
    }

    /// Walks a write of [start, start + len) the way the write path does:
    /// each step takes the first order `suitable_orders` offers into an
    /// empty page cache. Returns the folios as (first page, order).
    fn folios_for_write(
        settings: &HugeSettings,
        kind: InodeKind,
        i_size: u64,
        start: u64,
        len: u64,
    ) -> Vec<(u64, u8)> {
        let end = start + len;
        let mut folios = Vec::new();
        let mut index = start / PAGE;
        while index < end.div_ceil(PAGE) {
            let allowed = allowable_orders(settings, kind, Access::Write { end }, i_size, index);
            let order = suitable_orders(allowed, index, |_, _| true).next().unwrap();
            let first = folio_start(index, order);
            folios.push((first, order));
            index = first + (1 << order);
        }
        folios
    }

    #[test]
    fn write_allocates_the_largest_order_that_fits_write_and_alignment() {
        let settings = HugeSettings::default();
        let always = InodeKind::Mounted(MountHuge::Always);
        assert_eq!(
            folios_for_write(&settings, always, 0, 0, 4 * MB),
            [(0, 9), (512, 9)]
        );
        assert_eq!(folios_for_write(&settings, always, 0, 0, 64 * KB), [(0, 4)]);
        assert_eq!(
            folios_for_write(&settings, always, 0, 4 * KB, 64 * KB),
            [(1, 0), (2, 0), (3, 0), (4, 2), (8, 3), (16, 0)]
        );
        let never = InodeKind::Mounted(MountHuge::Never);
        assert_eq!(
            folios_for_write(&settings, never, 0, 0, 16 * KB),
            [(0, 0), (1, 0), (2, 0), (3, 0)]
        );
    }

    #[test]
    fn within_size_write_counts_the_bytes_being_written() {
        let settings = HugeSettings::default();
        let within = InodeKind::Mounted(MountHuge::WithinSize);
        // An empty file: the write itself makes room. (A write's orders never
        // reach past its own end, so within_size limits a write no more than
        // always does.)
        assert_eq!(folios_for_write(&settings, within, 0, 0, 2 * MB), [(0, 9)]);
        assert_eq!(
            folios_for_write(&settings, within, 0, 64 * KB, 32 * KB),
            [(16, 3)]
        );
        // A file already 4M long: still only what the write covers.
        assert_eq!(
            folios_for_write(&settings, within, 4 * MB, 0, 64 * KB),
            [(0, 4)]
        );
    }

    #[test]
    fn internal_faults_follow_each_per_size_knob() {
        let mut settings = HugeSettings::default();
        settings.store_per_size(2, "always").unwrap();
        settings.store_per_size(3, "advise").unwrap();
        settings.store_per_size(4, "within_size").unwrap();
        settings.store_per_size(5, "within_size").unwrap();
        settings.store_per_size(9, "never").unwrap();
        let internal = |vma_hugepage, i_size| {
            allowable_orders(
                &settings,
                InodeKind::Internal,
                fault(vma_hugepage),
                i_size,
                0,
            )
        };
        // A 64K file: the 64K folio fits, the 128K one does not.
        assert_eq!(internal(false, 64 * KB), mask(&[2, 4]));
        assert_eq!(internal(true, 64 * KB), mask(&[2, 3, 4]));
        assert_eq!(internal(false, 128 * KB), mask(&[2, 4, 5]));
        // A per-size within_size does not fall back on advice.
        assert_eq!(internal(true, PAGE), mask(&[2, 3]));
    }

    #[test]
    fn seed_000_memfd_gets_a_pmd_folio() {
        let mut settings = HugeSettings::default();
        settings.store_per_size(9, "always\n").unwrap();
        let orders = allowable_orders(&settings, InodeKind::Internal, fault(false), 2 * MB, 0);
        assert_eq!(orders, OrderMask::PMD);
        assert_eq!(suitable_orders(orders, 0, |_, _| true).next(), Some(9));
    }

    #[test]
    fn inherit_follows_the_top_level_knob() {
        let internal = |settings: &HugeSettings, vma_hugepage, i_size| {
            allowable_orders(
                settings,
                InodeKind::Internal,
                fault(vma_hugepage),
                i_size,
                0,
            )
        };
        // Default per-size knobs: only 2M inherits.
        assert_eq!(
            internal(&top(ShmemEnabled::Never), true, 4 * MB),
            OrderMask::EMPTY
        );
        assert_eq!(
            internal(&top(ShmemEnabled::Always), false, PAGE),
            OrderMask::PMD
        );
        assert_eq!(
            internal(&top(ShmemEnabled::Advise), false, 4 * MB),
            OrderMask::EMPTY
        );
        assert_eq!(
            internal(&top(ShmemEnabled::Advise), true, PAGE),
            OrderMask::PMD
        );
        let within = top(ShmemEnabled::WithinSize);
        assert_eq!(internal(&within, false, 2 * MB), OrderMask::PMD);
        assert_eq!(internal(&within, false, 2 * MB - PAGE), OrderMask::EMPTY);
        assert_eq!(internal(&within, true, 2 * MB - PAGE), OrderMask::PMD);
    }

    #[test]
    fn inherit_orders_are_judged_on_the_pmd_order() {
        let mut settings = top(ShmemEnabled::WithinSize);
        settings.store_per_size(4, "inherit\n").unwrap();
        let internal =
            |i_size| allowable_orders(&settings, InodeKind::Internal, fault(false), i_size, 0);
        // 64K would fit a 64K file, but the top level is asked about 2M.
        assert_eq!(internal(64 * KB), OrderMask::EMPTY);
        assert_eq!(internal(2 * MB), mask(&[4, 9]));
    }

    #[test]
    fn internal_writes_follow_the_per_size_knobs() {
        let internal = |settings: &HugeSettings, end, index| {
            allowable_orders(
                settings,
                InodeKind::Internal,
                Access::Write { end },
                0,
                index,
            )
        };
        // Defaults: 2M inherits from a top level of never: nothing.
        let mut settings = HugeSettings::default();
        assert_eq!(internal(&settings, 4 * MB, 0), OrderMask::EMPTY);
        // The 2M knob on its own gives 2M folios to a 4M write.
        settings.store_per_size(9, "always").unwrap();
        assert_eq!(internal(&settings, 4 * MB, 0), mask(&[9]));
        // So does the top level, through inherit.
        let mut settings = HugeSettings::default();
        settings.store_shmem_enabled("always").unwrap();
        assert_eq!(internal(&settings, 4 * MB, 0), mask(&[9]));
        // A 64K knob alone: 64K folios, whatever the top level says.
        let mut settings = HugeSettings::default();
        settings.store_per_size(4, "always").unwrap();
        assert_eq!(internal(&settings, 4 * MB, 0), mask(&[4]));
        // Cut to the write and its alignment.
        let settings = all_sizes(PerSizeEnabled::Always);
        assert_eq!(internal(&settings, 64 * KB, 0), mask(&[2, 3, 4]));
        assert_eq!(internal(&settings, 4 * MB, 4), mask(&[2]));
        // within_size counts the bytes the write brings.
        let settings = all_sizes(PerSizeEnabled::WithinSize);
        assert_eq!(internal(&settings, 32 * KB, 0), mask(&[2, 3]));
        // deny still wins.
        let mut settings = all_sizes(PerSizeEnabled::Always);
        settings.shmem_enabled = ShmemEnabled::Deny;
        assert_eq!(internal(&settings, 4 * MB, 0), OrderMask::EMPTY);
    }

    #[test]
    fn suitable_orders_into_an_empty_cache_try_everything() {
        assert_eq!(
            collect(suitable_orders(OrderMask::ALL, 0, |_, _| true)),
            [9, 8, 7, 6, 5, 4, 3, 2, 0]
        );
        assert_eq!(
            collect(suitable_orders(mask(&[4, 9]), 3, |_, _| true)),
            [9, 4, 0]
        );
    }

    #[test]
    fn suitable_orders_always_end_with_order_0() {
        assert_eq!(
            collect(suitable_orders(OrderMask::EMPTY, 0, |_, _| true)),
            [0]
        );
        // Page 7 itself is cached: no range holding it is empty.
        let cached = |start: u64, nr: u64| !(start..start + nr).contains(&7);
        assert_eq!(collect(suitable_orders(OrderMask::ALL, 7, cached)), [0]);
    }

    #[test]
    fn suitable_orders_skip_ranges_with_cached_pages() {
        // Page 5 cached; page 0 wants a folio. Every range from order 3 up
        // holds page 5; [0, 4) is the largest empty one.
        let cached = |start: u64, nr: u64| !(start..start + nr).contains(&5);
        assert_eq!(collect(suitable_orders(OrderMask::ALL, 0, cached)), [2, 0]);
        // Page 0 cached; page 100 wants a folio: [64, 128) is the largest.
        let cached = |start: u64, nr: u64| !(start..start + nr).contains(&0);
        assert_eq!(
            collect(suitable_orders(OrderMask::ALL, 100, cached)),
            [6, 5, 4, 3, 2, 0]
        );
        // Gaps in the mask are kept as gaps.
        let cached = |start: u64, nr: u64| !(start..start + nr).contains(&20);
        assert_eq!(
            collect(suitable_orders(mask(&[2, 4, 9]), 0, cached)),
            [4, 2, 0]
        );
    }

    #[test]
    fn hex_flag_knobs_read_and_write_as_seed_004() {
        let mut settings = HugeSettings::default();
        assert_eq!(HexFlagsShow(settings.thp_exec_enabled).to_string(), "0x0\n");
        assert_eq!(
            HexFlagsShow(settings.thp_mapping_align).to_string(),
            "0x0\n"
        );
        for (buf, val) in [("0x3\n", 3), ("2", 2), ("+0X1", 1), ("0", 0), ("01\n", 1)] {
            settings.store_thp_mapping_align(buf).unwrap();
            assert_eq!(settings.thp_mapping_align, val, "{buf:?}");
        }
        assert_eq!(HexFlagsShow(3).to_string(), "0x3\n");
        let bad = [
            "0x4",
            "0x",
            "",
            "\n",
            " 1",
            "1 ",
            "1\n\n",
            "-1",
            "g",
            "0x100000000",
        ];
        for buf in bad {
            assert_eq!(
                settings.store_thp_mapping_align(buf),
                Err(InvalidSetting),
                "{buf:?}"
            );
            assert_eq!(
                settings.store_thp_exec_enabled(buf),
                Err(InvalidSetting),
                "{buf:?}"
            );
        }
        // Refused values changed nothing.
        assert_eq!(settings.thp_mapping_align, 1);
        assert_eq!(settings.thp_exec_enabled, 0);
        settings.store_thp_exec_enabled("0x2\n").unwrap();
        assert_eq!(settings.thp_exec_enabled, FILE_EXEC_MTHP_ENABLE);
        // Bit 0 is accepted but not kept: no khugepaged for exec text.
        settings.store_thp_exec_enabled("0x1").unwrap();
        assert_eq!(settings.thp_exec_enabled, 0);
        settings.store_thp_exec_enabled("0x3").unwrap();
        assert_eq!(settings.thp_exec_enabled, FILE_EXEC_MTHP_ENABLE);
    }

    #[test]
    fn exec_text_gets_64k_folios_when_the_mthp_bit_is_set() {
        assert_eq!(arch_wants_exec_folio_order(), 4);
        let mut settings = HugeSettings::default();
        let never = InodeKind::Mounted(MountHuge::Never);
        assert_eq!(exec_folio_order(&settings, never), None);
        settings.store_thp_exec_enabled("0x2").unwrap();
        assert_eq!(exec_folio_order(&settings, never), Some(4));
        let always = InodeKind::Mounted(MountHuge::Always);
        assert_eq!(exec_folio_order(&settings, always), Some(4));
        assert_eq!(exec_folio_order(&settings, InodeKind::Internal), None);
        settings.shmem_enabled = ShmemEnabled::Deny;
        assert_eq!(exec_folio_order(&settings, never), None);
    }

    #[test]
    fn suitable_orders_ask_about_naturally_aligned_ranges() {
        let asked = std::cell::RefCell::new(Vec::new());
        let full = |start: u64, nr: u64| {
            asked.borrow_mut().push((start, nr));
            false
        };
        assert_eq!(collect(suitable_orders(mask(&[2, 4, 9]), 1000, full)), [0]);
        assert_eq!(*asked.borrow(), [(512, 512), (992, 16), (1000, 4)]);
    }
}
