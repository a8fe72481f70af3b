//! The system-wide huge-page settings, one value per knob, and the rules a
//! write to one must pass (Linux: the globals `shmem_huge`,
//! `huge_shmem_orders_*`, `huge_anon_orders_*` and
//! `transparent_hugepage_flags`, and the checks in their `_store`
//! functions). The mount option lives with each mount (`fs::tmpfs::TmpfsSb`).

use super::knobs::{
    parse_hex_flags, per_size_slot, AnonPerSize, HugeKnob, InvalidSetting, PerSizeEnabled,
    ShmemEnabled, ThpEnabled, ANON_MAPPING_ALIGN, FILE_EXEC_MTHP_ENABLE, FILE_EXEC_THP_ENABLE,
    FILE_MAPPING_ALIGN,
};
use super::order::{OrderMask, NR_PER_SIZE, PMD_ORDER};

/// The system-wide knobs (the mount option lives with each mount).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HugeSettings {
    /// `transparent_hugepage/shmem_enabled`: the internal mount's `huge=`,
    /// plus `deny` and `force` for every mount (Linux's `shmem_huge`).
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
    /// The `hugepages-<N>kB/enabled` knobs (Linux's `huge_anon_orders_*`).
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

    /// The orders whose per-size knob is `value`.
    pub fn orders_set_to(&self, value: PerSizeEnabled) -> OrderMask {
        OrderMask::ALL.filter(|order| self.per_size(order) == value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::huge_memory::knobs::{HexFlagsShow, MountHuge};
    use crate::mm::huge_memory::order::MIN_LARGE_ORDER;
    use std::string::ToString;

    fn top(value: ShmemEnabled) -> HugeSettings {
        HugeSettings {
            shmem_enabled: value,
            ..HugeSettings::default()
        }
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
}
