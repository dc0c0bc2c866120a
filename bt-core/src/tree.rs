//! The compiled tree: a flat preorder stream of items, shared read-only by
//! every agent that runs it.
//!
//! # Layout
//!
//! Item `i`'s subtree is the index range `i..items[i].end`; its first child
//! (if it is a group) is `i + 1`, and each next sibling starts where the
//! previous one's subtree ends. Walking a group's children is therefore
//! `c = i + 1; while c < end { …; c = items[c].end }`, and skipping a whole
//! subtree is one load. The interpreter relies on this.
//!
//! The hot fields of an item (its `has` bits, `end`, the decision-flag
//! check, the timer, `decide`) come first. A flag test is one masked
//! compare ([`FlagCheck`]); "no test" passes every word, and the stimuli
//! test is skipped by a clear bit in `has`. A failed test means the
//! `decide` function is never called.

mod flags;
mod marker;
mod node;
mod shape;
mod validate;

pub use validate::TreeError;

pub use flags::FlagCheck;
pub use marker::StaticTree;
pub use node::Node;
pub use shape::{DEFAULT_BLOCK, MAX_CHILDREN, MAX_ITEMS, MAX_LEVELS, MAX_SHUFFLE_CHILDREN, Shape};

use core::fmt;

use crate::decl::{DecideFn, Decider, ItemIdx, Policy};
use crate::raw::ErasedBehavior;

/// `Item::parent` of the root.
pub const NO_PARENT: u16 = u16::MAX;
/// `Item::timer` or `Item::shuffle` when the item has no such slot.
pub const NO_SLOT: u16 = u16::MAX;

bitflags::bitflags! {
    /// What an item has, so the interpreter can skip what it does not.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct Has: u32 {
        /// A group decider.
        const GROUP = 1 << 0;
        /// A decision-flag test.
        const DECISION = 1 << 1;
        /// A stimuli-flag test.
        const STIMULI = 1 << 2;
        /// A timer precondition.
        const TIMER = 1 << 3;
        /// A `decide` function.
        const DECIDE = 1 << 4;
        /// Its behavior takes a DBlock from `decide`.
        const DBLOCK = 1 << 5;
        /// `DELEGATE_DECIDE`.
        const DELEGATE = 1 << 6;
        /// `CALL_DECIDE_ON_REDECIDE`.
        const RECHECK = 1 << 7;
        /// A behavior (the leaf's, or the group behavior).
        const BEHAVIOR = 1 << 8;
        /// The behavior defines `activate`.
        const ACTIVATE = 1 << 9;
        /// The behavior defines `tick`.
        const TICK = 1 << 10;
        /// The behavior defines `deactivate`.
        const DEACTIVATE = 1 << 11;
        /// A gate, a global cooldown or a group role ([`SyncChecks`](crate::SyncChecks)).
        const SYNC = 1 << 12;
        /// The behavior launches a deferred action.
        const LAUNCH = 1 << 13;
        /// A slot group (`Policy::Slot`).
        const SLOT = 1 << 14;
        /// A group whose children are all decided by their flag tests
        /// alone (no timer, `decide`, DBlock, delegation or shared check):
        /// a draw among them calls nothing and builds one pick.
        const PLAIN_CHILDREN = 1 << 15;
        /// A leaf whose end its group redecides without the step machine:
        /// the group has plain children and picks among them by their flag
        /// tests alone (random, prioritized or sequential, its `decide` not
        /// called again), and the leaf holds nothing in the shared state.
        const QUICK_END = 1 << 16;
        /// A group whose children are all leaves (one item each) with no
        /// test at all: a pick among them reads only the redecide mask.
        const BARE_LEAVES = 1 << 17;
        /// A group whose pick an untraced tick makes without the step
        /// machine: prioritized or sequential with children decided by
        /// their flag tests and timers alone, or random with plain
        /// children; its `decide` is not called again on a redecide.
        const QUICK_GROUP = 1 << 18;
        /// A reference decider: picked, it jumps to its target item
        /// (its declared path, followed down the stream) and is never
        /// active itself.
        const REFERENCE = 1 << 19;
        /// A `QUICK_GROUP` (prioritized or sequential) some of whose
        /// children have a gate, a global cooldown or a group role: its
        /// pick is made without the step machine only while none of those
        /// children passes its flag tests, so no shared check is reached.
        const SYNC_CHILDREN = 1 << 20;
        /// A timer, gate or global cooldown whose value a tunable gives
        /// ([`TunedFields`](crate::TunedFields)): read from the crowd's
        /// values where the item's own number would be. Its `every` is 0
        /// when the timer is tuned, so a test of the number alone finds
        /// the timer run out and looks further; the quick steps leave a
        /// group with such a child to the step machine.
        const TUNED = 1 << 21;
        /// Used by the compile step alone, while it checks that every
        /// reference leads to a behavior; clear in a compiled tree.
        const REACHES_BEHAVIOR = 1 << 31;
    }
}

/// One decider at one place in the compiled stream. Fields are for the
/// compile step and the interpreter; read them through [`Node`].
///
/// Laid out in declaration order (`repr(C)`) so that what a candidate
/// test reads (`has`, `end`, the decision-flag check, the timer, `decide`)
/// sits in the first 64 bytes, and what only activation and debugging read
/// comes after.
#[repr(C)]
pub struct Item<A: 'static> {
    #[doc(hidden)]
    pub has: Has,
    #[doc(hidden)]
    pub end: u16,
    #[doc(hidden)]
    pub child_index: u8,
    #[doc(hidden)]
    pub child_count: u8,
    #[doc(hidden)]
    pub depth: u8,
    #[doc(hidden)]
    pub policy: Policy,
    #[doc(hidden)]
    pub parent: u16,
    #[doc(hidden)]
    pub timer: u16,
    #[doc(hidden)]
    pub shuffle: u16,
    #[doc(hidden)]
    pub decision: FlagCheck,
    #[doc(hidden)]
    pub every: f64,
    #[doc(hidden)]
    pub decide: Option<DecideFn<A>>,
    #[doc(hidden)]
    pub stimuli: FlagCheck,
    #[doc(hidden)]
    pub behavior: Option<&'static ErasedBehavior<A>>,
    #[doc(hidden)]
    pub behavior_flags: u64,
    #[doc(hidden)]
    pub decider: &'static Decider<A>,
    #[doc(hidden)]
    pub gate: u16,
    #[doc(hidden)]
    pub cooldown: u16,
    #[doc(hidden)]
    pub role: u16,
    #[doc(hidden)]
    pub action: u16,
}

impl<A: 'static> Clone for Item<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: 'static> Copy for Item<A> {}

impl<A: 'static> Item<A> {
    /// A filler for the array the compile step writes into.
    pub(crate) const fn placeholder(decider: &'static Decider<A>) -> Self {
        Item {
            has: Has::empty(),
            end: 0,
            child_index: 0,
            child_count: 0,
            depth: 0,
            policy: Policy::Prioritized,
            parent: NO_PARENT,
            timer: NO_SLOT,
            shuffle: NO_SLOT,
            decision: FlagCheck::NONE,
            stimuli: FlagCheck::NONE,
            every: 0.0,
            decide: None,
            behavior: None,
            behavior_flags: 0,
            decider,
            gate: NO_SLOT,
            cooldown: NO_SLOT,
            role: NO_SLOT,
            action: NO_SLOT,
        }
    }

    #[inline(always)]
    pub(crate) fn is(&self, has: Has) -> bool {
        self.has.contains(has)
    }

    /// Whether the decision and stimuli words pass the item's flag tests.
    #[inline(always)]
    pub(crate) fn flags_pass(&self, decision: u64, stimuli: u64) -> bool {
        self.decision.passes(decision) && (!self.is(Has::STIMULI) || self.stimuli.passes(stimuli))
    }
}

/// The item that the reference at `i` jumps to: its declared target path
/// followed down the stream by decider ids, from the root. `None` when `i`
/// is not a reference, or for a path the compile step would refuse.
///
/// Not stored in the item: a field more would grow every item past its 128
/// bytes, which costs the hot walk more than a jump costs to find it.
pub(crate) const fn target_of<A>(items: &[Item<A>], i: usize) -> Option<usize> {
    match follow_target(items, items[i].decider.target()) {
        Ok(t) => Some(t),
        Err(_) => None,
    }
}

/// Why a reference's target path names no item of a stream.
pub(crate) enum TargetFault {
    /// The path is empty.
    Empty,
    /// The path does not start at the stream's root.
    Outside,
    /// The path's decider `k` is not a child of the item at `at`.
    Missing { at: usize, k: usize },
}

/// The item that the target path `target` names: followed down the
/// stream `items` by decider ids, from the root.
pub(crate) const fn follow_target<A>(
    items: &[Item<A>],
    target: &[&'static Decider<A>],
) -> Result<usize, TargetFault> {
    if target.is_empty() {
        return Err(TargetFault::Empty);
    }
    if items[0].decider.id != target[0].id {
        return Err(TargetFault::Outside);
    }
    let mut at = 0;
    let mut k = 1;
    while k < target.len() {
        let end = items[at].end as usize;
        let mut c = at + 1;
        while c < end && items[c].decider.id != target[k].id {
            c = items[c].end as usize;
        }
        if c >= end {
            return Err(TargetFault::Missing { at, k });
        }
        at = c;
        k += 1;
    }
    Ok(at)
}

/// A compiled decider tree, as declared with [`tree!`](crate::tree).
///
/// `L` is the number of depth levels and `S` the number of per-agent slots
/// (timers, shuffle groups, group roles and deferred actions); both are computed from the declaration at
/// compile time and size each agent's [`AgentMemory`](crate::AgentMemory). `N` is the byte size
/// of each level's memory block.
///
/// A tree is immutable and `Sync`: one static tree drives every agent.
pub struct Tree<A: 'static, const L: usize, const S: usize, const N: usize = 128> {
    #[doc(hidden)]
    pub items: &'static [Item<A>],
    #[doc(hidden)]
    pub name: &'static str,
    #[doc(hidden)]
    pub redecide_limit: u32,
    #[doc(hidden)]
    pub shape: Shape,
    /// [`needs_shared`](Self::needs_shared), computed once.
    #[doc(hidden)]
    pub shared: bool,
    /// Whether a behavior of the tree takes a DBlock
    /// ([`dblocks_in`](Self::dblocks_in) of the items): a tick reserves
    /// DBlock scratch space on its stack only then.
    #[doc(hidden)]
    pub dblocks: bool,
    /// The tree's tunables (`tree!`'s `tunables:` key).
    #[doc(hidden)]
    pub tunables: Option<&'static crate::Tunables>,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Tree<A, L, S, N> {
    /// Used by `tree!`: wraps the compiled stream.
    #[doc(hidden)]
    pub const fn __new(
        name: &'static str,
        items: &'static [Item<A>],
        shape: Shape,
        redecide_limit: u32,
    ) -> Self {
        assert!(shape.levels == L && shape.slots() == S && shape.items == items.len());
        let limit = if redecide_limit == 0 {
            items.len() as u32
        } else {
            redecide_limit
        };
        Tree {
            items,
            name,
            redecide_limit: limit,
            shape,
            shared: shape.needs_shared(),
            dblocks: Self::dblocks_in(items),
            tunables: None,
        }
    }

    /// Used by `tree!`: the tree with the tunables `tunables`.
    #[doc(hidden)]
    pub const fn __tuned(mut self, tunables: Option<&'static crate::Tunables>) -> Self {
        self.tunables = tunables;
        self
    }

    /// Whether an item of `items` has a DBlock: the value of
    /// [`Tree::dblocks`] for a table assembled by hand.
    #[doc(hidden)]
    pub const fn dblocks_in(items: &[Item<A>]) -> bool {
        let mut i = 0;
        while i < items.len() {
            if items[i].has.contains(Has::DBLOCK) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether agents need a [`TreeShared`](crate::TreeShared): the tree has a gate, a global
    /// cooldown, a group role or a deferred action.
    pub const fn needs_shared(&self) -> bool {
        self.shared
    }

    /// What the compile step counted: items, levels and every kind of slot.
    pub const fn shape(&self) -> Shape {
        self.shape
    }

    /// The tree's name (the static's identifier).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Number of items (deciders, counted once per place they are used).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Always false: a tree has at least its root.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Depth levels of the tree (and of each agent's memory).
    pub const fn levels(&self) -> usize {
        L
    }

    /// Per-agent slots: one per timer precondition, then one per shuffle group.
    pub const fn slots(&self) -> usize {
        S
    }

    /// Bytes of each level's memory block.
    pub const fn block_size(&self) -> usize {
        N
    }

    /// Number of timer preconditions (slots `0..timers()`).
    pub fn timers(&self) -> usize {
        self.shape.timers
    }

    /// Most masked redecides one tick may make before it stops with
    /// [`TickError::RedecideLimit`](crate::TickError::RedecideLimit).
    pub fn redecide_limit(&self) -> u32 {
        self.redecide_limit
    }

    /// The root decider.
    pub fn root(&self) -> Node<'_, A> {
        self.node(ItemIdx::ROOT)
    }

    /// The item at `idx`.
    ///
    /// # Panics
    /// If `idx` is out of range.
    pub fn node(&self, idx: ItemIdx) -> Node<'_, A> {
        assert!(
            idx.get() < self.items.len(),
            "item index {idx} out of range"
        );
        Node {
            items: self.items,
            idx,
        }
    }

    /// Every item in preorder.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = Node<'_, A>> + '_ {
        (0..self.items.len()).map(move |i| Node {
            items: self.items,
            idx: ItemIdx(i as u16),
        })
    }

    /// The first item (in preorder) whose decider is named `name`. A
    /// decider used in more than one group is one item per place: to tell
    /// them apart, look it up by its path with [`find_path`](Self::find_path).
    pub fn find(&self, name: &str) -> Option<ItemIdx> {
        self.items
            .iter()
            .position(|it| it.decider.name == name)
            .map(|i| ItemIdx(i as u16))
    }

    /// The item at `path`: decider names from the root down, separated by
    /// `/`, the root's name first (`"ROOT/GUARD/FIGHT"`). `None` when a name
    /// is not a child of the group before it.
    ///
    /// ```
    /// # use bt_core::{behavior, decider, group, tree};
    /// # struct Creature;
    /// # behavior! { SWING: Creature } behavior! { WALK: Creature }
    /// decider! { FIGHT: Creature => SWING }
    /// decider! { PATROL: Creature => WALK }
    /// group! { GUARD: Creature, prioritized [FIGHT, PATROL] }
    /// group! { ROOT: Creature, prioritized [FIGHT, GUARD] }
    /// tree! { CREATURE: Creature = ROOT }
    ///
    /// // FIGHT has two places; `find` gives the first.
    /// assert_eq!(CREATURE.find("FIGHT"), CREATURE.find_path("ROOT/FIGHT"));
    /// let deep = CREATURE.find_path("ROOT/GUARD/FIGHT").unwrap();
    /// assert_eq!(CREATURE.node(deep).parent().unwrap().name(), "GUARD");
    /// assert_eq!(CREATURE.find_path("ROOT/PATROL"), None);
    /// ```
    pub fn find_path(&self, path: &str) -> Option<ItemIdx> {
        let mut names = path.split('/');
        if self.items.first()?.decider.name != names.next()? {
            return None;
        }
        let mut i = 0;
        for name in names {
            let end = self.items[i].end as usize;
            let mut c = i + 1;
            while c < end && self.items[c].decider.name != name {
                c = self.items[c].end as usize;
            }
            if c >= end {
                return None;
            }
            i = c;
        }
        Some(ItemIdx(i as u16))
    }
}

/// A compiled tree whose agents share state: it has gates, global
/// cooldowns, group roles or deferred actions
/// ([`Tree::needs_shared`]). [`tree!`](crate::tree) declares such a tree
/// as a `CrowdTree` instead of a plain [`Tree`].
///
/// A `CrowdTree` is a [`Tree`] (it dereferences to one, so [`tick`](crate::tick),
/// [`tick_all`](crate::tick_all), [`Tree::find`] and the rest take it as it
/// is), except that its agents' memories can only be made bound to the
/// crowd's [`TreeShared`](crate::TreeShared), with [`Tree::new_memory_in`]: calling
/// `new_memory` on it is a compile error, so a memory without the shared
/// state cannot reach a tick.
///
/// ```compile_fail,E0277
/// # use bt_core::{behavior, decider, tree};
/// # struct Soldier;
/// behavior! { THROW: Soldier }
/// decider! { THROW_GRENADE: Soldier => THROW, gate: 1 }
/// tree! { SQUAD: Soldier = THROW_GRENADE }
///
/// let memory = SQUAD.new_memory(0); // error: the gate needs a `TreeShared`
/// ```
///
/// ```
/// # use bt_core::{behavior, decider, tree};
/// # struct Soldier;
/// # behavior! { THROW: Soldier }
/// # decider! { THROW_GRENADE: Soldier => THROW, gate: 1 }
/// # tree! { SQUAD: Soldier = THROW_GRENADE }
/// let shared = SQUAD.new_shared(16);
/// let memory = SQUAD.new_memory_in(&shared, 0);
/// ```
#[repr(transparent)]
pub struct CrowdTree<A: 'static, const L: usize, const S: usize, const N: usize = 128>(
    pub(crate) Tree<A, L, S, N>,
);

impl<A: 'static, const L: usize, const S: usize, const N: usize> CrowdTree<A, L, S, N> {
    /// The tree, as a plain [`Tree`].
    pub const fn tree(&self) -> &Tree<A, L, S, N> {
        &self.0
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> core::ops::Deref
    for CrowdTree<A, L, S, N>
{
    type Target = Tree<A, L, S, N>;

    fn deref(&self) -> &Tree<A, L, S, N> {
        &self.0
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for CrowdTree<A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CrowdTree").field(&self.0).finish()
    }
}

/// Implemented by no tree that needs shared state: the bound that makes
/// [`CrowdTree`]'s `new_memory` a compile error.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` has gates, global cooldowns, group roles or deferred actions: \
               its agents' memories need the crowd's `TreeShared`",
    label = "`new_memory` would make a memory without it",
    note = "make the shared state once per crowd with `TREE.new_shared(capacity)`, \
            and each agent's memory with `TREE.new_memory_in(&shared, seed)`"
)]
pub trait NeedsNoShared {}

/// What [`tree!`](crate::tree) declares, chosen by whether the tree needs
/// shared state: `Kind<false>` a [`Tree`], `Kind<true>` a [`CrowdTree`].
#[doc(hidden)]
pub struct Kind<const SHARED: bool>;

/// The type [`tree!`](crate::tree) declares for a [`Kind`].
#[doc(hidden)]
pub trait TreeKind {
    /// The declared type.
    type Of<A: 'static, const L: usize, const S: usize, const N: usize>;
}

impl TreeKind for Kind<false> {
    type Of<A: 'static, const L: usize, const S: usize, const N: usize> = Tree<A, L, S, N>;
}

impl TreeKind for Kind<true> {
    type Of<A: 'static, const L: usize, const S: usize, const N: usize> = CrowdTree<A, L, S, N>;
}

impl Kind<false> {
    /// The tree as it is.
    pub const fn wrap<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: Tree<A, L, S, N>,
    ) -> Tree<A, L, S, N> {
        tree
    }
}

impl Kind<true> {
    /// The tree as a [`CrowdTree`].
    pub const fn wrap<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: Tree<A, L, S, N>,
    ) -> CrowdTree<A, L, S, N> {
        CrowdTree(tree)
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug for Tree<A, L, S, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tree")
            .field("name", &self.name)
            .field("items", &self.items.len())
            .field("levels", &L)
            .field("slots", &S)
            .field("block", &N)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::FlagTest;
    use crate::memory::xorshift64star;

    /// The compiled check answers as the declared test, also for tests that
    /// can never pass and for every combination of the four masks.
    #[test]
    fn flag_check_agrees_with_the_declared_test() {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        // Few bits, so that overlaps and exact matches are common.
        let draw = |s: &mut u64| xorshift64star(s) & xorshift64star(s) & 0xF;
        for _ in 0..20_000 {
            let t = FlagTest {
                all: draw(&mut s),
                any: draw(&mut s),
                none: draw(&mut s),
                not_all: draw(&mut s),
            };
            let check = FlagCheck::of(t);
            for word in 0..16u64 {
                assert_eq!(check.passes(word), t.passes(word), "{t:?} on {word:#x}");
            }
        }
        assert!(FlagCheck::NONE.passes(0) && FlagCheck::NONE.passes(u64::MAX));
    }

    /// What a candidate test reads is in the first 64 bytes of an item.
    #[test]
    fn hot_fields_come_first() {
        // A power of two: indexing the stream is a shift.
        assert_eq!(core::mem::size_of::<Item<u32>>(), 128);
        assert!(core::mem::offset_of!(Item<u32>, decide) + 8 <= 64);
        assert!(core::mem::offset_of!(Item<u32>, every) + 8 <= 64);
    }
}
