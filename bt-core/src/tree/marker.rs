//! A tree known by its type, for code that is generic over the tree.

/// A tree known by its type: the marker type that [`tree!`](crate::tree)
/// declares with the key `marker: Name`. Code generic over `T: StaticTree`
/// reaches the tree as `T::tree()`, the `static` itself, so in every
/// function instantiated for `T` the tree's tables are constants the
/// compiler folds into the interpreter's code, as it does for a tick
/// given `&TREE` directly. bt-bevy's `BrainPlugin::of::<Name>()` ticks its
/// brains this way.
///
/// ```
/// # use bt_core::{StaticTree, Tree, behavior, decider, tree};
/// # #[derive(Default)] pub struct Creature;
/// # behavior! { IDLE: Creature }
/// # decider! { ROOT: Creature => IDLE }
/// tree! { pub CREATURE: Creature = ROOT, marker: CreatureTree }
///
/// /// Generic over the tree: one copy of this function per tree.
/// fn name_of<T, A: 'static, const L: usize, const S: usize, const N: usize>() -> &'static str
/// where
///     T: StaticTree<Tree = Tree<A, L, S, N>>,
/// {
///     T::tree().name()
/// }
/// assert_eq!(name_of::<CreatureTree, _, 1, _, _>(), "CREATURE");
/// assert!(std::ptr::eq(CreatureTree::tree(), &CREATURE));
/// ```
pub trait StaticTree: 'static {
    /// The tree's type: a [`Tree`](crate::Tree) (also for a tree declared
    /// as a [`CrowdTree`](crate::CrowdTree), which is one).
    type Tree: 'static;

    /// The tree: the `static` that `tree!` declared.
    fn tree() -> &'static Self::Tree;
}
