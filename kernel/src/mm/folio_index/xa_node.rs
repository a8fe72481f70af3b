//! The page-cache index's upper levels: where each leaf of 64 slots lives,
//! by leaf number (Linux: the xarray's `struct xa_node`s above its bottom
//! level). A node has 64 slots, each for a leaf or for a node one level
//! down, and the tree is as tall as its largest leaf number needs: one
//! node for leaves 0-63 (a file of 4,096 pages), one level more for each
//! six bits more. Finding a leaf is one step per level, each a shift and a
//! mask, where a search tree would compare keys; finding the one before or
//! after a leaf number reads each level's bitmap of used slots.
//!
//! Where we simplify: no RCU (the index's lock covers every call), no
//! marks, and a node's slots are typed (nodes or leaves) rather than
//! tagged pointers.

use alloc::boxed::Box;

/// log2 of a node's slots (Linux: `XA_CHUNK_SHIFT`).
const NODE_SHIFT: u32 = 6;
/// Slots in a node (Linux: `XA_CHUNK_SIZE`).
const NODE_SLOTS: usize = 1 << NODE_SHIFT;

/// What a node's slots hold: leaves at the bottom level, nodes above it.
enum Slots<L> {
    /// Slot i: leaf `base + i`, where `base` is the node's first.
    Leaves([Option<Box<L>>; NODE_SLOTS]),
    /// Slot i: the node for the i-th run of 2^`shift` leaf numbers.
    Nodes([Option<Box<Node<L>>>; NODE_SLOTS]),
}

/// One node: 64 slots for consecutive runs of leaf numbers, each run
/// 2^`shift` long. Never empty while in the tree.
struct Node<L> {
    /// Low bits of a leaf number below this node's slot index (Linux:
    /// `xa_node.shift`): 0 where the slots hold leaves.
    shift: u32,
    /// Bit i set: slot i is in use.
    used: u64,
    /// The children, of one kind per level.
    slots: Slots<L>,
}

impl<L> Node<L> {
    /// An empty node whose slots each cover 2^`shift` leaf numbers.
    fn new(shift: u32) -> Box<Self> {
        let slots = if shift == 0 {
            Slots::Leaves([const { None }; NODE_SLOTS])
        } else {
            Slots::Nodes([const { None }; NODE_SLOTS])
        };
        Box::new(Node {
            shift,
            used: 0,
            slots,
        })
    }

    /// Leaf numbers this node covers, from its first: 2^(shift + 6).
    fn span(&self) -> u64 {
        1 << (self.shift + NODE_SHIFT)
    }

    /// The slot for leaf number `at` (this node's first is `base`).
    fn slot(&self, base: u64, at: u64) -> usize {
        ((at - base) >> self.shift) as usize
    }
}

/// A sparse array of boxed leaves by `u64` leaf number (Linux: the
/// xarray's tree of `xa_node`s under `xa_head`).
pub struct LeafTree<L> {
    /// The top node, covering leaf numbers from 0 up to its span.
    root: Option<Box<Node<L>>>,
}

impl<L> LeafTree<L> {
    /// A tree with no leaves.
    pub const fn new() -> Self {
        LeafTree { root: None }
    }

    /// Leaf `at`, if present (Linux: `xa_load`).
    pub fn get(&self, at: u64) -> Option<&L> {
        let mut node = self.root.as_deref().filter(|root| at < root.span())?;
        loop {
            let slot = (at >> node.shift) as usize % NODE_SLOTS;
            match &node.slots {
                Slots::Leaves(leaves) => return leaves[slot].as_deref(),
                Slots::Nodes(nodes) => node = nodes[slot].as_deref()?,
            }
        }
    }

    /// Leaf `at` to change, if present.
    pub fn get_mut(&mut self, at: u64) -> Option<&mut L> {
        let mut node = self.root.as_deref_mut().filter(|root| at < root.span())?;
        loop {
            let slot = (at >> node.shift) as usize % NODE_SLOTS;
            match &mut node.slots {
                Slots::Leaves(leaves) => return leaves[slot].as_deref_mut(),
                Slots::Nodes(nodes) => node = nodes[slot].as_deref_mut()?,
            }
        }
    }

    /// Leaf `at`, made by `new` if absent, with the nodes above it (Linux:
    /// `xas_store` after `xas_create`, a taller tree first if `at` lies
    /// beyond the root's span: `xas_expand`).
    pub fn get_or_insert_with(&mut self, at: u64, new: impl FnOnce() -> L) -> &mut L {
        let mut root = match self.root.take() {
            Some(root) => root,
            // The shortest tree whose span holds `at`.
            None => Node::new((63 - at.max(1).leading_zeros()) / NODE_SHIFT * NODE_SHIFT),
        };
        while at >= root.span() {
            // The old root becomes the new one's first slot.
            let mut taller = Node::new(root.shift + NODE_SHIFT);
            taller.used = 1;
            if let Slots::Nodes(nodes) = &mut taller.slots {
                nodes[0] = Some(root);
            }
            root = taller;
        }
        let mut node = &mut **self.root.insert(root);
        loop {
            let slot = (at >> node.shift) as usize % NODE_SLOTS;
            node.used |= 1 << slot;
            let shift = node.shift;
            match &mut node.slots {
                Slots::Leaves(leaves) => {
                    return leaves[slot].get_or_insert_with(|| Box::new(new()))
                }
                Slots::Nodes(nodes) => {
                    node = nodes[slot].get_or_insert_with(|| Node::new(shift - NODE_SHIFT))
                }
            }
        }
    }

    /// Takes leaf `at` out, dropping the nodes it leaves empty and the
    /// root levels no longer needed (Linux: `xas_store(NULL)`,
    /// `xas_delete_node`, `xas_shrink`).
    pub fn remove(&mut self, at: u64) -> Option<Box<L>> {
        let root = self.root.as_deref_mut().filter(|root| at < root.span())?;
        let leaf = remove_below(root, at);
        while let Some(root) = self.root.as_deref_mut() {
            if root.used == 0 {
                self.root = None;
            } else if let (1, Slots::Nodes(nodes)) = (root.used, &mut root.slots) {
                self.root = nodes[0].take();
            } else {
                break;
            }
        }
        leaf
    }

    /// The leaf with the largest number at or below `at`, as (number, leaf).
    pub fn last_at_or_before(&self, at: u64) -> Option<(u64, &L)> {
        let root = self.root.as_deref()?;
        last_below(root, 0, at.min(root.span() - 1))
    }

    /// The leaf with the smallest number at or above `at`, as (number, leaf).
    pub fn first_at_or_after(&self, at: u64) -> Option<(u64, &L)> {
        let root = self.root.as_deref().filter(|root| at < root.span())?;
        first_below(root, 0, at)
    }
}

impl<L> Default for LeafTree<L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L> core::fmt::Debug for LeafTree<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Its shape; the leaves show through `FolioIndex`'s methods.
        let levels = self
            .root
            .as_deref()
            .map_or(0, |root| root.shift / NODE_SHIFT + 1);
        write!(f, "LeafTree {{ levels: {levels} }}")
    }
}

/// [`LeafTree::remove`] under `node`, which covers `at`: clears the used
/// bit of every slot it empties.
fn remove_below<L>(node: &mut Node<L>, at: u64) -> Option<Box<L>> {
    let slot = (at >> node.shift) as usize % NODE_SLOTS;
    let (leaf, emptied) = match &mut node.slots {
        Slots::Leaves(leaves) => (leaves[slot].take(), true),
        Slots::Nodes(nodes) => {
            let child = nodes[slot].as_deref_mut()?;
            let leaf = remove_below(child, at);
            let emptied = child.used == 0;
            if emptied {
                nodes[slot] = None;
            }
            (leaf, emptied)
        }
    };
    if emptied {
        node.used &= !(1 << slot);
    }
    leaf
}

/// [`LeafTree::last_at_or_before`] under `node`, whose first leaf number
/// is `base`, for an `at` it covers.
fn last_below<L>(node: &Node<L>, base: u64, at: u64) -> Option<(u64, &L)> {
    let slot = node.slot(base, at);
    let mut used = node.used & (u64::MAX >> (63 - slot));
    while used != 0 {
        let bit = 63 - used.leading_zeros() as usize;
        used &= !(1 << bit);
        let first = base + ((bit as u64) << node.shift);
        let found = match &node.slots {
            Slots::Leaves(leaves) => leaves[bit].as_deref().map(|leaf| (first, leaf)),
            Slots::Nodes(nodes) => {
                // Below `at`'s own slot, anything in the child will do.
                let last = if bit == slot {
                    at
                } else {
                    first + (1 << node.shift) - 1
                };
                nodes[bit]
                    .as_deref()
                    .and_then(|child| last_below(child, first, last))
            }
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// [`LeafTree::first_at_or_after`] under `node`, whose first leaf number
/// is `base`, for an `at` it covers.
fn first_below<L>(node: &Node<L>, base: u64, at: u64) -> Option<(u64, &L)> {
    let slot = node.slot(base, at);
    let mut used = node.used & (u64::MAX << slot);
    while used != 0 {
        let bit = used.trailing_zeros() as usize;
        used &= used - 1;
        let first = base + ((bit as u64) << node.shift);
        let found = match &node.slots {
            Slots::Leaves(leaves) => leaves[bit].as_deref().map(|leaf| (first, leaf)),
            Slots::Nodes(nodes) => {
                let from = if bit == slot { at } else { first };
                nodes[bit]
                    .as_deref()
                    .and_then(|child| first_below(child, first, from))
            }
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Every leaf number in `tree`, in order, found by stepping forward.
    fn forward(tree: &LeafTree<u64>) -> Vec<u64> {
        let mut found = Vec::new();
        let mut next = tree.first_at_or_after(0);
        while let Some((at, &leaf)) = next {
            assert_eq!(at, leaf, "a leaf is found under its own number");
            found.push(at);
            next = at.checked_add(1).and_then(|a| tree.first_at_or_after(a));
        }
        found
    }

    /// The same, stepping back from the end.
    fn backward(tree: &LeafTree<u64>) -> Vec<u64> {
        let mut found = Vec::new();
        let mut next = tree.last_at_or_before(u64::MAX);
        while let Some((at, &leaf)) = next {
            assert_eq!(at, leaf);
            found.push(at);
            next = at.checked_sub(1).and_then(|a| tree.last_at_or_before(a));
        }
        found.reverse();
        found
    }

    const SPARSE: [u64; 9] = [0, 1, 63, 64, 4095, 4096, 1 << 30, (1 << 46) - 1, 5];

    #[test]
    fn sparse_leaves_are_found_by_number_and_in_order() {
        let mut tree = LeafTree::new();
        for at in SPARSE {
            assert_eq!(*tree.get_or_insert_with(at, || at), at);
            // A second insert finds the first leaf, and leaves it be.
            assert_eq!(*tree.get_or_insert_with(at, || u64::MAX), at);
        }
        let mut sorted = SPARSE.to_vec();
        sorted.sort();
        assert_eq!(forward(&tree), sorted);
        assert_eq!(backward(&tree), sorted);
        for at in SPARSE {
            assert_eq!(tree.get(at), Some(&at));
        }
        for absent in [2, 62, 65, 4094, 4097, (1 << 30) + 1, 1 << 46, u64::MAX] {
            assert_eq!(tree.get(absent), None, "{absent}");
        }
        assert_eq!(tree.last_at_or_before(4094).map(|(at, _)| at), Some(64));
        assert_eq!(tree.first_at_or_after(65).map(|(at, _)| at), Some(4095));
        assert_eq!(
            tree.first_at_or_after((1 << 30) + 1).map(|(at, _)| at),
            Some((1 << 46) - 1)
        );
        assert_eq!(tree.first_at_or_after(1 << 46), None);
    }

    #[test]
    fn removing_every_leaf_empties_and_shortens_the_tree() {
        let mut tree = LeafTree::new();
        for at in SPARSE {
            tree.get_or_insert_with(at, || at);
        }
        for (i, at) in SPARSE.iter().rev().enumerate() {
            assert_eq!(tree.remove(*at).as_deref(), Some(at));
            assert_eq!(tree.remove(*at), None, "removed once only");
            let left = &SPARSE[..SPARSE.len() - 1 - i];
            let mut sorted = left.to_vec();
            sorted.sort();
            assert_eq!(forward(&tree), sorted);
            assert_eq!(backward(&tree), sorted);
        }
        assert!(tree.root.is_none());
        // Only leaf 0..63 left: the root shrinks back to one node.
        tree.get_or_insert_with(1 << 40, || 1 << 40);
        tree.get_or_insert_with(7, || 7);
        tree.remove(1 << 40);
        assert_eq!(tree.root.as_ref().map(|root| root.shift), Some(0));
        assert_eq!(tree.get(7), Some(&7));
    }

    #[test]
    fn get_mut_changes_the_leaf_in_place() {
        let mut tree = LeafTree::new();
        tree.get_or_insert_with(300, || 1);
        *tree.get_mut(300).unwrap() += 1;
        assert_eq!(tree.get(300), Some(&2));
        assert!(tree.get_mut(301).is_none());
    }
}
