//! The huge-page knobs as sysfs shows and takes them (Linux: the `_show` and
//! `_store` halves in `mm/huge_memory.c` and `mm/shmem.c`): each knob's
//! words, the bracketed current one, the hex-flag knobs of seed 004, and the
//! `hugepages-<N>kB` directory names. What the knobs mean is in `super::anon`
//! and `fs::tmpfs::huge`; where they are kept, `super::settings`.
//!
//! Three kinds of knob decide a shmem folio's size:
//! - the `huge=` option of a tmpfs mount (`MountHuge`), for files on it;
//! - `/sys/kernel/mm/transparent_hugepage/shmem_enabled` (`ShmemEnabled`):
//!   the `huge=` of the kernel's internal mount, plus `deny` and `force`,
//!   which override every mount;
//! - `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/shmem_enabled`
//!   (`PerSizeEnabled`), one per folio size, for faults on memfd and
//!   `MAP_SHARED|MAP_ANONYMOUS` mappings.
//!
//! Anonymous memory has its own (Linux's mTHP): the top-level `enabled`
//! (`ThpEnabled`) and `hugepages-<N>kB/enabled` (`AnonPerSize`).
//!
//! Seed 004 adds two hex-flag knobs: `thp_exec_enabled`, whose mTHP bit
//! gives file text faulted through an executable mapping 64K folios, and
//! `thp_mapping_align`, which mmap() reads to place mappings at 64K.

use core::fmt;

use super::order::{MIN_LARGE_ORDER, NR_PER_SIZE, PMD_ORDER};

/// A write of a value the knob does not have. The kernel answers `EINVAL`
/// and leaves the setting as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidSetting;

/// A huge-page knob: a few words, one of them in force.
pub trait HugeKnob: Copy + Eq + 'static {
    /// Every value, in the order the sysfs file lists them.
    const ALL: &'static [Self];

    /// The value's word, as its sysfs file and the `huge=` mount option spell it.
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

/// The text of a knob's sysfs file, e.g. `always [inherit] within_size
/// advise never\n`; written with `Display` so that no buffer is needed.
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
    /// `huge=always` for the internal mount: large folios wherever they fit.
    Always,
    /// Only folios that end inside the file, or that `MADV_HUGEPAGE` asked for.
    WithinSize,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Advise,
    /// The boot default: no large folios on the internal mount (`huge=never`).
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
    pub fn internal_mount_huge(self) -> MountHuge {
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
    /// Folios of this size wherever they fit.
    Always,
    /// Used when the top-level `shmem_enabled` would allow a PMD-sized folio.
    Inherit,
    /// Only when the folio would end inside the file.
    WithinSize,
    /// Only where `MADV_HUGEPAGE` asked for it.
    Advise,
    /// No folios of this size: the boot default for every size but 2M.
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
    /// Sizes that `inherit` get large folios in every anonymous VMA.
    Always,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Madvise,
    /// Sizes that `inherit` get none (the boot default here).
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
    /// Folios of this size in every anonymous VMA.
    Always,
    /// Whatever the top-level `enabled` says.
    Inherit,
    /// Only where `MADV_HUGEPAGE` asked for them.
    Madvise,
    /// No anonymous folios of this size: the boot default for every size but 2M.
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
    /// No large folios: a mount's default.
    #[default]
    Never,
    /// Large folios wherever they fit in the file's page cache.
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

/// Each per-size knob's directory under `transparent_hugepage/`, from order
/// `MIN_LARGE_ORDER` (16K) to `PMD_ORDER` (2M).
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
pub fn per_size_slot(order: u8) -> usize {
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
pub fn parse_hex_flags(buf: &str, allowed: u32) -> Result<u32, InvalidSetting> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::addr::PAGE_SIZE;
    use std::format;
    use std::string::ToString;

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
}
