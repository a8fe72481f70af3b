//! Large folio orders as sets (Linux: the `unsigned long orders` bitmaps of
//! `mm/huge_memory.c`, `highest_order` and `next_order`), shared by the
//! anonymous (`super::anon`) and shmem (`fs::tmpfs::huge`) policies.

use core::ops::{BitOr, BitOrAssign};

use crate::mm::addr::{PAGE_SHIFT, PMD_SHIFT};

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
    /// No orders: only single pages.
    pub const EMPTY: OrderMask = OrderMask(0);
    /// Every large order, `MIN_LARGE_ORDER` to `PMD_ORDER`.
    pub const ALL: OrderMask = OrderMask::up_to(PMD_ORDER);
    /// Just `PMD_ORDER`: a 2M folio under one PMD entry.
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
    pub const fn up_to(max: u8) -> Self {
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
    /// The set from bits as `bits` gives them; bits outside the large orders
    /// are dropped.
    pub const fn from_bits(bits: u16) -> Self {
        OrderMask(bits & OrderMask::ALL.0)
    }

    /// Whether `order` is in the set (false for any order above 15).
    pub const fn contains(self, order: u8) -> bool {
        order < 16 && self.0 & (1 << order) != 0
    }

    /// Whether the set has no order: the allocation takes single pages.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The orders in both sets.
    pub const fn and(self, other: OrderMask) -> Self {
        OrderMask(self.0 & other.0)
    }

    /// The set less `order`.
    pub const fn without(self, order: u8) -> Self {
        OrderMask(self.0 & !(1 << order))
    }

    /// The largest order in the set, the first to try (Linux's `highest_order`).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(orders: &[u8]) -> OrderMask {
        orders.iter().fold(OrderMask::EMPTY, |mask, &order| {
            mask | OrderMask::only(order)
        })
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
}
