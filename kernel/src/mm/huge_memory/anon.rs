//! Which large folio orders an anonymous fault may allocate (Linux:
//! `thp_vma_allowable_orders` for an anonymous VMA, from
//! `alloc_anon_folio`). Simplified: only the knobs and `MADV_HUGEPAGE`
//! decide here; `MADV_NOHUGEPAGE` is `super::anon_vma_orders`', whether
//! the VMA is big enough the fault's (`mm::fault`), and
//! `PR_SET_THP_DISABLE`, which Linux also asks, faultline lacks.

use super::knobs::{AnonPerSize, ThpEnabled};
use super::order::OrderMask;
use super::settings::HugeSettings;

/// The folio orders an anonymous fault may allocate in a VMA that did
/// (`madvised`) or did not ask for `MADV_HUGEPAGE`: a size's own knob, or
/// with `inherit` the top-level `enabled`.
pub fn anon_allowable_orders(settings: &HugeSettings, madvised: bool) -> OrderMask {
    let wanted = |enabled: ThpEnabled| match enabled {
        ThpEnabled::Always => true,
        ThpEnabled::Madvise => madvised,
        ThpEnabled::Never => false,
    };
    OrderMask::ALL.filter(|order| match settings.anon_per_size(order) {
        AnonPerSize::Always => true,
        AnonPerSize::Inherit => wanted(settings.anon_enabled),
        AnonPerSize::Madvise => madvised,
        AnonPerSize::Never => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::huge_memory::knobs::{HugeKnob, InvalidSetting};
    use crate::mm::huge_memory::order::PMD_ORDER;
    use std::format;

    #[test]
    fn anon_orders_follow_enabled_and_the_per_size_knobs() {
        let mut s = HugeSettings::default();
        // Boot: nothing, madvised or not.
        assert!(
            anon_allowable_orders(&s, false).is_empty()
                && anon_allowable_orders(&s, true).is_empty()
        );
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
        assert!(anon_allowable_orders(&s, false).is_empty());
        assert_eq!(anon_allowable_orders(&s, true), OrderMask::PMD);
        // 64K on its own.
        s.store_anon_per_size(4, "always").unwrap();
        assert_eq!(anon_allowable_orders(&s, false), OrderMask::only(4));
        assert_eq!(
            anon_allowable_orders(&s, true),
            OrderMask::only(4) | OrderMask::PMD
        );
        s.store_anon_per_size(4, "madvise").unwrap();
        assert!(anon_allowable_orders(&s, false).is_empty());
        s.store_anon_enabled("never").unwrap();
        assert_eq!(anon_allowable_orders(&s, true), OrderMask::only(4));
        // Bad values change nothing.
        assert_eq!(s.store_anon_enabled("within_size"), Err(InvalidSetting));
        assert_eq!(s.store_anon_per_size(4, "deny"), Err(InvalidSetting));
        assert_eq!(anon_allowable_orders(&s, true), OrderMask::only(4));
    }
}
