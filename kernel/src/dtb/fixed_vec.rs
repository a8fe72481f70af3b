//! A list with its capacity fixed at compile time, for the boot path that
//! runs before the kernel has a heap.

use core::fmt;
use core::ops::Deref;

/// A list of at most `N` items, stored inline because there is no heap yet.
/// Reads go through `Deref` to a slice of the items pushed so far.
#[derive(Clone, Copy)]
pub struct FixedVec<T, const N: usize> {
    /// The backing array; only `items[..len]` holds pushed items, the rest
    /// are `T::default()` fillers.
    items: [T; N],
    /// How many items have been pushed, at most `N`.
    len: usize,
}

impl<T: Copy + Default, const N: usize> FixedVec<T, N> {
    /// An empty list.
    pub(super) fn new() -> Self {
        FixedVec {
            items: [T::default(); N],
            len: 0,
        }
    }

    /// Appends `item`, or returns `false` if the list is full.
    pub(super) fn push(&mut self, item: T) -> bool {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = item;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// The items pushed so far, to reorder in place.
    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items[..self.len]
    }

    /// Keeps only the first `len` items.
    pub(super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

impl<T, const N: usize> Deref for FixedVec<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

/// Prints only the items pushed, not the unused slots.
impl<T: fmt::Debug, const N: usize> fmt::Debug for FixedVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
