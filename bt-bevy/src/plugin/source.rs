//! Where a plugin's tick systems find the tree they tick a brain with: in
//! the brain's memory at run time, or as a constant of the tick systems'
//! code, for a plugin made from the tree's marker type.

use std::marker::PhantomData;

use bt_core::StaticTree;

use crate::adapter::TreeMemory;

/// Where the tick systems of a [`BrainPlugin`](crate::BrainPlugin) find
/// the tree they tick a brain with: [`MemoryTree`] for a plugin made with
/// [`BrainPlugin::new`](crate::BrainPlugin::new), [`MarkedTree`] for one
/// made with [`BrainPlugin::of`](crate::BrainPlugin::of). Either way it is
/// the tree that made the brain's memory. Sealed: these two are all.
pub trait TreeSource<M: TreeMemory>: sealed::Sealed + Send + Sync + 'static {
    /// The tree of the brain whose memory is `memory`, one of the
    /// plugin's crowd.
    #[doc(hidden)]
    fn tree(memory: &M) -> &'static M::Tree;
}

/// The tree read from each brain's memory as it ticks: the tree source of
/// a plugin made with [`BrainPlugin::new`](crate::BrainPlugin::new).
pub struct MemoryTree;

impl sealed::Sealed for MemoryTree {}

impl<M: TreeMemory> TreeSource<M> for MemoryTree {
    #[inline(always)]
    fn tree(memory: &M) -> &'static M::Tree {
        memory.tree()
    }
}

/// The tree of the marker type `K` (declared by `tree!` with `marker: K`),
/// a constant in the code of the tick systems, which are made for `K`:
/// the tree source of a plugin made with
/// [`BrainPlugin::of`](crate::BrainPlugin::of).
pub struct MarkedTree<K>(PhantomData<fn() -> K>);

impl<K: 'static> sealed::Sealed for MarkedTree<K> {}

impl<M: TreeMemory, K: StaticTree<Tree = M::Tree>> TreeSource<M> for MarkedTree<K> {
    #[inline(always)]
    fn tree(_: &M) -> &'static M::Tree {
        K::tree()
    }
}

mod sealed {
    /// Keeps [`TreeSource`](super::TreeSource) to this crate's types.
    pub trait Sealed {}
}
