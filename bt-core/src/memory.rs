//! Per-agent state: the active path, the memory blocks, timer and shuffle
//! slots, and the agent's random generator. Fixed size, no heap.

use core::fmt;

use crate::raw::Blocks;
use crate::tree::{ItemIdx, Tree};

/// One level of the active path.
///
/// Packed: 21 bytes instead of 24, which keeps an agent of a three-level
/// tree (the Spore creature) within 512 bytes. Fields are only ever read
/// and written by value.
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
    pub(crate) tree: &'static Tree<A, L, S, N>,
    pub(crate) depth: u8,
    /// Whether a level of the active path may hold a redecide mask or
    /// count from an earlier tick: a tick clears them only then.
    pub(crate) marked: bool,
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
    pub(crate) fn new(tree: &'static Tree<A, L, S, N>, seed: u64) -> Self {
        let mut memory = AgentMemory {
            blocks: Blocks::new(),
            levels: [Level::default(); L],
            slots: [0; S],
            rng: seed_state(seed),
            tree,
            depth: 0,
            marked: false,
        };
        memory.clear_slots();
        memory
    }

    fn clear_slots(&mut self) {
        let timers = self.tree.timers as usize;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            // A timer that never ran has its last call infinitely long ago.
            *slot = if i < timers {
                f64::NEG_INFINITY.to_bits()
            } else {
                0
            };
        }
    }

    /// The tree this memory belongs to.
    pub fn tree(&self) -> &'static Tree<A, L, S, N> {
        self.tree
    }

    /// Number of active levels (0 when idle).
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// Whether nothing is active.
    pub fn is_idle(&self) -> bool {
        self.depth == 0
    }

    /// The active path, root first.
    pub fn active_path(&self) -> impl ExactSizeIterator<Item = ActiveLevel> + '_ {
        self.levels[..self.depth as usize]
            .iter()
            .map(|l| ActiveLevel {
                item: ItemIdx(l.item),
                since: l.since,
                mask: l.mask,
                redecides: l.redecides,
            })
    }

    /// The active item at `depth`, if the path is that deep.
    pub fn active(&self, depth: usize) -> Option<ItemIdx> {
        (depth < self.depth as usize).then(|| ItemIdx(self.levels[depth].item))
    }

    /// The deepest active item: the behavior decider that runs.
    pub fn leaf(&self) -> Option<ItemIdx> {
        self.depth
            .checked_sub(1)
            .map(|d| ItemIdx(self.levels[d as usize].item))
    }

    /// The behavior whose memory value the block of level `depth` holds
    /// (`None`: the block is empty).
    pub fn block_behavior(&self, depth: usize) -> Option<&'static crate::ErasedBehavior<A>> {
        self.blocks.owner(depth)
    }

    /// Whether the item is on the active path.
    pub fn is_active(&self, item: ItemIdx) -> bool {
        self.levels[..self.depth as usize]
            .iter()
            .any(|l| l.item == item.0)
    }

    /// Time of the last `decide` call of the timer in `slot` (negative
    /// infinity if it never ran).
    pub fn timer(&self, slot: usize) -> f64 {
        f64::from_bits(self.slots[slot])
    }

    /// The state of the agent's random generator.
    pub fn rng_state(&self) -> u64 {
        self.rng
    }

    /// Returns to the idle state of a new memory: every block value is
    /// dropped (no `deactivate` runs; use
    /// [`deactivate_all`](crate::deactivate_all) first for that), the path,
    /// timers and shuffle rounds are cleared. The generator state is kept.
    pub fn reset(&mut self) {
        self.abandon();
        self.clear_slots();
    }

    /// Drops every block value and clears the active path, keeping slots:
    /// what a tick does when a callback panics.
    pub(crate) fn abandon(&mut self) {
        self.depth = 0;
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
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
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

    /// An agent of a three-level tree with one slot and 128-byte blocks
    /// (the Spore creature) fits 512 bytes.
    #[test]
    fn a_three_level_agent_fits_512_bytes() {
        assert!(AgentMemory::<u32, 3, 1, 128>::byte_size() <= 512);
    }
}
