//! Per-agent state: the active path, the memory blocks, timer and shuffle
//! slots, and the agent's random generator. Fixed size, no heap.

use core::fmt;

use alloc::sync::Arc;

mod holdings;

pub(crate) mod shared;
pub(crate) mod stimuli;

use crate::decl::tune::Tunables;
use crate::decl::{ActionState, ItemIdx};
use crate::raw::{Blocks, TunedAt, TunedHead};
use crate::tree::Tree;
use crate::tree::{CrowdTree, NeedsNoShared};
use shared::{self as sync, Outcome, Ticket, TreeShared};

/// One level of the active path.
///
/// Packed: 21 bytes instead of 24, 9 bytes less for an agent of a
/// three-level tree. Fields are only ever read and written by value.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed)]
pub(crate) struct Level {
    /// When the decider at this level was activated.
    pub(crate) since: f64,
    /// Children masked out of this group's redecides in the last tick.
    pub(crate) mask: u64,
    /// The item active at this level.
    pub(crate) item: u16,
    /// Masked redecides this group made in the last tick.
    pub(crate) redecides: u16,
    /// Sequential groups: the child index the next pick starts from.
    pub(crate) cursor: u8,
}

/// The state of one agent running one tree: made by
/// [`Tree::new_memory`], owned by the caller, one per agent.
///
/// It holds the active path (one level per depth: the active item, when it
/// was activated, the last tick's redecide mask and count), one memory block
/// per level for the behavior active there, one slot per timer precondition
/// and shuffle group, and the agent's random generator. Its size is fixed by
/// the tree's depth and slot count, both known at compile time: it lives
/// wherever the caller puts it (a `Vec` beside the agents, a component
/// array), and ticking never allocates.
///
/// Dropping or [resetting](AgentMemory::reset) it drops every block value
/// exactly once; behaviors' `deactivate` callbacks run only through
/// [`tick`](crate::tick) and [`deactivate_all`](crate::deactivate_all),
/// which have the agent to give them.
pub struct AgentMemory<A: 'static, const L: usize, const S: usize, const N: usize = 128> {
    pub(crate) blocks: Blocks<A, L, N>,
    pub(crate) levels: [Level; L],
    pub(crate) slots: [u64; S],
    pub(crate) rng: u64,
    /// Where a tick finds the values of the tunables of the crowd in
    /// `shared` (the tree's defaults without one): found once here, so
    /// that a tick of a tree with tunables loads one word for them.
    pub(crate) tuned: TunedAt,
    pub(crate) tree: &'static Tree<A, L, S, N>,
    /// The crowd's shared state: set when the memory is made and never
    /// assigned again (the tunables a tick reads through `tuned` borrow
    /// it for the tick; see `raw::TunedAt::head`).
    pub(crate) shared: Option<Arc<TreeShared>>,
    /// What the last tick's steady walk found (see [`Steady`]).
    pub(crate) steady: Steady,
    /// The number of active levels.
    depth: u8,
}

/// What the last tick found when it walked the whole active path without
/// a change: with the same decision and stimuli words and the clock from
/// `from` to less than `span` later, every earlier sibling on the path is
/// still turned down by its flag tests or its timer, so the next steady
/// walk need not test them again. Any other tick, and any change to the
/// path, makes it invalid (`from` = +inf, after every clock reading),
/// except a leaf's quick redecide in a group that is not prioritized: it
/// changes nothing above the leaf and keeps the finding, but marks the
/// group, so the next steady walk clears the marks of the leaf's parent
/// level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Steady {
    /// The decision flags it was found with.
    pub(crate) decision: u64,
    /// The stimuli flags it was found with.
    pub(crate) stimuli: u64,
    /// The clock of the tick that found it: a timer stamped ahead of the
    /// clock runs out when the clock goes back more than a period, so an
    /// earlier clock is not covered.
    pub(crate) from: f64,
    /// How long after `from` the first earlier sibling's timer runs out
    /// (+inf: none has a timer; 0: valid for no tick), rounded down: an
    /// `f32`, so that the finding takes no more room than the time it
    /// ends at did.
    pub(crate) span: f32,
    /// Deciders that walk visited: the active ones and the siblings
    /// turned down.
    pub(crate) visited: u32,
}

impl Steady {
    /// Valid for no tick.
    pub(crate) const INVALID: Steady = Steady {
        decision: 0,
        stimuli: 0,
        from: f64::INFINITY,
        span: 0.0,
        visited: 0,
    };
}

/// One level of an agent's active path, as [`AgentMemory::active_path`]
/// shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveLevel {
    /// The active item at this depth.
    pub item: ItemIdx,
    /// When it was activated.
    pub since: f64,
    /// Children of this group masked out by failures in the last tick.
    pub mask: u64,
    /// Masked redecides this group made in the last tick.
    pub redecides: u16,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> AgentMemory<A, L, S, N> {
    pub(crate) fn new(
        tree: &'static Tree<A, L, S, N>,
        seed: u64,
        shared: Option<Arc<TreeShared>>,
    ) -> Self {
        let joined = shared.as_deref().map_or(0, |shared| {
            shared.bind();
            shared.id()
        });
        let tuned = TunedAt::of(
            shared.as_deref().map(|s| &s.tuned.current),
            tree.tunables
                .map_or(TunedHead::NONE, Tunables::default_head),
        );
        let mut memory = AgentMemory {
            blocks: Blocks::new(),
            levels: [Level::default(); L],
            slots: [0; S],
            rng: seed_state(seed),
            tree,
            shared,
            tuned,
            steady: Steady::INVALID,
            depth: 0,
        };
        memory.clear_slots();
        memory.set_joined(joined);
        memory
    }

    fn clear_slots(&mut self) {
        let shape = self.tree.shape;
        let keep = if shape.needs_shared() {
            shape.crowd_slot()
        } else {
            S
        };
        for (i, slot) in self.slots[..keep].iter_mut().enumerate() {
            // A timer that never ran has its last call infinitely long ago.
            *slot = if i < shape.timers {
                f64::NEG_INFINITY.to_bits()
            } else {
                0
            };
        }
    }

    /// The id of the crowd (`TreeShared::id`) whose gate counts and role
    /// places include what this memory holds: kept in the tree's crowd
    /// slot ([`Shape::crowd_slot`](crate::Shape::crowd_slot)). A tree
    /// without shared state holds nothing there, and its memory counts as
    /// joined to whatever it is bound to.
    #[inline(always)]
    pub(crate) fn joined(&self) -> u32 {
        let shape = self.tree.shape;
        if shape.needs_shared() {
            self.slots[shape.crowd_slot()] as u32
        } else {
            self.shared.as_deref().map_or(0, TreeShared::id)
        }
    }

    /// Records that the crowd `id`'s counts include what this memory holds.
    pub(crate) fn set_joined(&mut self, id: u32) {
        let shape = self.tree.shape;
        if shape.needs_shared() {
            self.slots[shape.crowd_slot()] = u64::from(id);
        }
    }

    /// The tree this memory belongs to.
    pub fn tree(&self) -> &'static Tree<A, L, S, N> {
        self.tree
    }

    /// The crowd's shared state this memory is bound to, if any.
    pub fn shared(&self) -> Option<&Arc<TreeShared>> {
        self.shared.as_ref()
    }

    /// Reports a deferred action back: the behavior that launched it sees
    /// `outcome` in [`Ctx::action`](crate::Ctx::action) from its next tick
    /// on. Returns false, changing nothing, when the ticket is not this
    /// memory's pending launch: it was cancelled or already reported, or
    /// it is a ticket of another memory, tree or crowd.
    pub fn complete(&mut self, ticket: Ticket, outcome: Outcome) -> bool {
        let Some(shared) = &self.shared else {
            return false;
        };
        let Some(slot) = self.slots.get_mut(ticket.slot()) else {
            return false;
        };
        let shape = self.tree.shape;
        if !shape.action_slots().contains(&ticket.slot())
            || sync::action_state(*slot) != ActionState::Pending
            || sync::ticket_of(shared.id(), ticket.slot() as u16, *slot) != ticket
        {
            return false;
        }
        let state = match outcome {
            Outcome::Succeeded => ActionState::Succeeded,
            Outcome::Failed => ActionState::Failed,
        };
        *slot = sync::action_slot(sync::action_agent(*slot), ticket.serial(), state);
        true
    }

    /// The state of the deferred action in agent-memory slot `slot` (see
    /// [`Node::action_slot`](crate::Node::action_slot)).
    ///
    /// # Panics
    /// If `slot` is not a deferred-action slot of the tree.
    #[track_caller]
    pub fn action_state(&self, slot: usize) -> ActionState {
        sync::action_state(self.slots[self.action_slot(slot)])
    }

    /// The ticket of the pending launch in deferred-action slot `slot`
    /// (`None`: nothing pending there). It names the agent id the launch
    /// was made under, which its cancellation names too.
    ///
    /// # Panics
    /// If `slot` is not a deferred-action slot of the tree.
    #[track_caller]
    pub fn pending_ticket(&self, slot: usize) -> Option<Ticket> {
        let word = self.slots[self.action_slot(slot)];
        let shared = self.shared.as_ref()?;
        (sync::action_state(word) == ActionState::Pending)
            .then(|| sync::ticket_of(shared.id(), slot as u16, word))
    }

    /// `slot`, checked to be a deferred-action slot.
    #[track_caller]
    fn action_slot(&self, slot: usize) -> usize {
        let actions = self.tree.shape.action_slots();
        if !actions.contains(&slot) {
            not_a_slot(
                "deferred-action",
                slot,
                self.tree.name,
                actions.start,
                actions.end,
            );
        }
        slot
    }

    /// Starts fetching the parts of this memory every tick reads: the
    /// active path, the slots and the block owners, or all of it when it
    /// is at most 256 bytes (blocks fitted to small memory types). A hint
    /// for callers that tick memories scattered in storage of their own
    /// (entity by entity in an ECS, say), where the CPU cannot guess the
    /// next address: call it a few agents ahead of the one being ticked.
    /// Memories in one slice, ticked in order as
    /// [`tick_all`](crate::tick_all) ticks them, need no hint. Reads
    /// nothing.
    #[inline(always)]
    pub fn prefetch(&self) {
        self.prefetch_after(0);
    }

    /// [`prefetch`](Self::prefetch) of the memory `bytes` after this one,
    /// which it reads neither: in a slice of structs that each hold a
    /// memory at the same place, the one `k` places on is `k` times the
    /// struct's size after. An address past the slice is harmless (a hint
    /// is all it is), so a loop needs no test of the slice's end: `bytes`
    /// is a constant offset from the memory at hand.
    #[doc(hidden)]
    #[inline(always)]
    pub fn prefetch_after(&self, bytes: usize) {
        if Self::SMALL {
            // A few lines: all of them, blocks included.
            crate::raw::prefetch_lines_after(self, bytes);
            return;
        }
        crate::raw::prefetch_after(&self.levels, bytes);
        crate::raw::prefetch_after(&self.depth, bytes);
        self.blocks.prefetch_owners_after(bytes);
    }

    /// Whether the memory is small enough (four cache lines) that
    /// [`prefetch`](Self::prefetch) fetches all of it.
    const SMALL: bool = core::mem::size_of::<Self>() <= 256;

    /// Starts fetching the block of the deepest active level, which the
    /// tick of a running behavior reads; call it after
    /// [`prefetch`](Self::prefetch) had time to bring in the path (half as
    /// far ahead). Reads only the path's depth.
    #[inline(always)]
    pub fn prefetch_leaf_block(&self) {
        if Self::SMALL {
            // `prefetch` fetched it with the rest.
            return;
        }
        if let Some(leaf) = self.depth().checked_sub(1) {
            self.blocks.prefetch_block(leaf);
        }
    }

    /// Number of active levels (0 when idle).
    #[inline(always)]
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// Sets the number of active levels.
    #[inline(always)]
    pub(crate) fn set_depth(&mut self, depth: usize) {
        self.depth = depth as u8;
        self.steady.from = f64::INFINITY;
    }

    /// Whether nothing is active.
    pub fn is_idle(&self) -> bool {
        self.depth() == 0
    }

    /// The active path, root first.
    pub fn active_path(&self) -> impl ExactSizeIterator<Item = ActiveLevel> + '_ {
        self.levels[..self.depth()].iter().map(|l| ActiveLevel {
            item: ItemIdx(l.item),
            since: l.since,
            mask: l.mask,
            redecides: l.redecides,
        })
    }

    /// The active item at `depth`, if the path is that deep.
    pub fn active(&self, depth: usize) -> Option<ItemIdx> {
        (depth < self.depth()).then(|| ItemIdx(self.levels[depth].item))
    }

    /// The deepest active item: the behavior decider that runs.
    pub fn leaf(&self) -> Option<ItemIdx> {
        self.depth()
            .checked_sub(1)
            .map(|d| ItemIdx(self.levels[d].item))
    }

    /// The behavior whose memory value the block of level `depth` holds
    /// (`None`: the block is empty).
    ///
    /// # Panics
    /// If `depth` is not below the tree's level count.
    #[track_caller]
    pub fn block_behavior(&self, depth: usize) -> Option<&'static crate::ErasedBehavior<A>> {
        if depth >= L {
            not_a_slot("level", depth, self.tree.name, 0, L);
        }
        self.blocks.owner(depth)
    }

    /// Whether the item is on the active path.
    pub fn is_active(&self, item: ItemIdx) -> bool {
        self.levels[..self.depth()].iter().any(|l| l.item == item.0)
    }

    /// Time of the last `decide` call of the timer in `slot` (negative
    /// infinity if it never ran).
    ///
    /// # Panics
    /// If `slot` is not a timer slot of the tree (`0..tree.timers()`).
    #[track_caller]
    pub fn timer(&self, slot: usize) -> f64 {
        let timers = self.tree.shape.timers;
        if slot >= timers {
            not_a_slot("timer", slot, self.tree.name, 0, timers);
        }
        f64::from_bits(self.slots[slot])
    }

    /// The state of the agent's random generator.
    pub fn rng_state(&self) -> u64 {
        self.rng
    }

    /// Returns to the idle state of a new memory: every block value is
    /// dropped (no `deactivate` runs; use
    /// [`deactivate_all`](crate::deactivate_all) first for that), the path,
    /// timers and shuffle rounds are cleared, and what the agent held in its
    /// [`TreeShared`] (gate slots, places in group roles, pending deferred
    /// actions, which are cancelled) is given back. The generator state is
    /// kept.
    pub fn reset(&mut self) {
        self.abandon();
        self.clear_slots();
    }

    /// Drops every block value, gives back what the agent holds in its
    /// `TreeShared` and clears the active path, keeping slots: what a tick
    /// does when a callback panics.
    pub(crate) fn abandon(&mut self) {
        self.release_shared();
        self.set_depth(0);
        self.blocks.release_all();
    }

    /// Bytes of this memory (all of it: the tree is shared).
    pub const fn byte_size() -> usize {
        core::mem::size_of::<Self>()
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        xorshift64star(&mut self.rng)
    }

    /// A uniform draw in `[0, 1)`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        unit(self.next_u64())
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Drop for AgentMemory<A, L, S, N> {
    fn drop(&mut self) {
        // The blocks drop their values after this, deepest first.
        self.release_shared();
        if let Some(shared) = &self.shared {
            shared.unbind();
        }
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for AgentMemory<A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentMemory")
            .field("tree", &self.tree.name)
            .field("path", &PathNames(self))
            .finish_non_exhaustive()
    }
}

/// The active path as a list of decider names.
struct PathNames<'m, A: 'static, const L: usize, const S: usize, const N: usize>(
    &'m AgentMemory<A, L, S, N>,
);

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for PathNames<'_, A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = self.0.tree.items;
        f.debug_list()
            .entries(self.0.active_path().map(|l| items[l.item.get()].decider))
            .finish()
    }
}

/// The panic of a lookup with an index out of its range.
#[cold]
#[inline(never)]
#[track_caller]
fn not_a_slot(what: &str, index: usize, tree: &str, start: usize, end: usize) -> ! {
    if start == end {
        panic!("{what} {index} out of range: tree `{tree}` has none");
    }
    panic!("{what} {index} out of range: tree `{tree}` has them at {start}..{end}",)
}

/// A generator state from a seed: never zero (xorshift would stay at zero).
fn seed_state(seed: u64) -> u64 {
    let mut s = seed ^ 0x9E37_79B9_7F4A_7C15;
    if s == 0 {
        s = 0x9E37_79B9_7F4A_7C15;
    }
    // Mix once so nearby seeds start far apart.
    xorshift64star(&mut s);
    s
}

/// xorshift64*: the generator every agent carries.
pub(crate) fn xorshift64star(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// The draw in `[0, 1)` that a generator output `x` stands for: its top
/// 53 bits, scaled.
#[inline(always)]
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One draw of the generator `s`, true with chance `1 / n`: exactly when
/// [`AgentMemory::next_f64`]'s draw `u` would give `u * n < 1.0`, for any
/// whole `n` up to 2^10, in integers. (`u * n` is the integer
/// `(x >> 11) * n` scaled by 2^-53: below 2^53 it is exact, and from 2^53
/// on it rounds to 1.0 or more.)
#[inline(always)]
pub(crate) fn one_in(s: &mut u64, n: u64) -> bool {
    (xorshift64star(s) >> 11) * n < 1u64 << 53
}

/// Making memories and shared state for a tree (here, in the layer that
/// owns them, so that the compiled stream does not depend on them).
impl<A: 'static, const L: usize, const S: usize, const N: usize> Tree<A, L, S, N> {
    /// A fresh, idle memory for one agent.
    ///
    /// `seed` is the seed of the agent's own random generator, the one
    /// random and shuffle groups draw from. Give each agent its own (its
    /// index, say) so that a crowd does not draw alike; the same seed
    /// replays the same draws.
    ///
    /// A tree with gates, global cooldowns, group roles or deferred actions
    /// ([`needs_shared`](Self::needs_shared)) needs memories made by
    /// [`new_memory_in`](Self::new_memory_in) instead. [`tree!`](crate::tree)
    /// declares such a tree as a [`CrowdTree`], on which this method does
    /// not compile; a memory made for a hand-assembled one fails every
    /// tick with [`TickError::NotShared`](crate::TickError::NotShared).
    pub fn new_memory(&'static self, seed: u64) -> AgentMemory<A, L, S, N> {
        AgentMemory::new(self, seed, None)
    }

    /// A fresh, idle memory for one agent of the crowd that shares
    /// `shared`: the agent's gate slots, cooldowns, group roles and
    /// deferred actions go through it, and the memory gives back what it
    /// holds there whenever it deactivates, resets or drops.
    ///
    /// # Panics
    /// If `shared` was made for a tree of another structure (see
    /// [`TreeShared::fingerprint`]), whatever its name, or of another
    /// table of tunables.
    pub fn new_memory_in(
        &'static self,
        shared: &alloc::sync::Arc<TreeShared>,
        seed: u64,
    ) -> AgentMemory<A, L, S, N> {
        assert!(
            shared.fits(self),
            "tree `{}`: the shared state was made for tree `{}`, of another structure \
             (fingerprint {:#018x}, this tree {:#018x})",
            self.name,
            shared.tree_name(),
            shared.fingerprint(),
            self.shape.fingerprint
        );
        shared.check_tunables(self);
        AgentMemory::new(self, seed, Some(alloc::sync::Arc::clone(shared)))
    }

    /// Shared state for a crowd running this tree, with room for
    /// `action_capacity` deferred-action requests (see [`TreeShared::new`]).
    pub fn new_shared(&'static self, action_capacity: usize) -> alloc::sync::Arc<TreeShared> {
        alloc::sync::Arc::new(TreeShared::new(self, action_capacity))
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> CrowdTree<A, L, S, N> {
    /// Not available: a `CrowdTree`'s agents need the crowd's shared state.
    /// Use [`Tree::new_memory_in`].
    #[doc(hidden)]
    pub fn new_memory(&'static self, seed: u64) -> AgentMemory<A, L, S, N>
    where
        Self: NeedsNoShared,
    {
        self.0.new_memory(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic_and_never_stuck() {
        let mut a = seed_state(7);
        let mut b = seed_state(7);
        let xs: [u64; 4] = core::array::from_fn(|_| xorshift64star(&mut a));
        let ys: [u64; 4] = core::array::from_fn(|_| xorshift64star(&mut b));
        assert_eq!(xs, ys);
        assert_ne!(seed_state(0), 0);
        assert_ne!(seed_state(0x9E37_79B9_7F4A_7C15), 0);
        assert_ne!(seed_state(1), seed_state(2));
    }

    /// `one_in` decides as the float draw does, also where `u * n` lies
    /// within a rounding step of 1.0.
    #[test]
    fn one_in_agrees_with_the_float_draw() {
        let mut s = seed_state(11);
        for n in 1..=64u64 {
            let edge = (1u64 << 53).div_ceil(n);
            let near = (edge.saturating_sub(3)..edge + 3).map(|m| m << 11);
            let random = (0..200).map(|_| xorshift64star(&mut s));
            for x in near.chain(random) {
                // The integer test `one_in` makes on output `x`.
                let float = unit(x) * (n as f64) < 1.0;
                assert_eq!((x >> 11) * n < 1u64 << 53, float, "n = {n}, x = {x:#x}");
            }
            // And `one_in` itself, on a copy of a generator state.
            let mut a = xorshift64star(&mut s) | 1;
            let mut b = a;
            assert_eq!(
                one_in(&mut a, n),
                unit(xorshift64star(&mut b)) * (n as f64) < 1.0
            );
            assert_eq!(a, b, "one draw each");
        }
    }

    /// An agent of a three-level tree with one slot keeps at most 176
    /// bytes besides its blocks: 560 with Spore's 128-byte blocks, 256
    /// with blocks fitted to one-word memory types.
    #[test]
    fn a_three_level_agent_keeps_at_most_176_bytes_besides_its_blocks() {
        assert!(AgentMemory::<u32, 3, 1, 128>::byte_size() <= 3 * 128 + 176);
        assert!(AgentMemory::<u32, 3, 1, 16>::byte_size() <= 256);
    }
}
