//! What each lane's last full walk found about the earlier siblings on its
//! active path: their rejection words, kept so that a tick which finds
//! them turned down as before ([`Event::Unchanged`]) is written as if it
//! had tested them again, at the cost of a copy.
//!
//! A lane's words are kept from a tick whose walk sent nothing but
//! visits, running behaviors and rejections by flags or timer, and ended
//! (the walk of an agent whose path did not change). They hold for the
//! flags and the active path of that tick: before each tick the recorder
//! tells bt-core ([`Tracer::knows_unchanged`]) whether the lane's agent
//! still has them, so an agent whose memory was swapped, restored or
//! ticked elsewhere gets its siblings tested again.

use alloc_crate::vec;
use alloc_crate::vec::Vec;

use bt_core::{AgentMemory, TickInput};

use super::NO_LEAF;
use crate::export::TreeInfo;

/// A lane whose words are not known.
const UNKNOWN: u16 = u16::MAX;

/// What one lane's words hold for.
#[derive(Clone, Copy, Debug)]
struct Key {
    /// Words kept, or [`UNKNOWN`].
    len: u16,
    /// The leaf of the active path they were found on (a leaf names its
    /// path: every item has one parent).
    leaf: u16,
    /// That path's depth.
    depth: u8,
    /// The decision and stimuli flags they were found with.
    flags: [u64; 2],
}

/// The earlier-sibling words of every lane.
#[derive(Clone, Debug)]
pub(super) struct Siblings {
    /// Words per lane: the most earlier siblings any active path has.
    per_lane: usize,
    /// `per_lane` words per lane.
    words: Vec<u64>,
    keys: Vec<Key>,
    /// Per item: its depth.
    depth_of: Vec<u8>,
    /// Per item: its group when that group is not prioritized (a leaf
    /// there has no earlier sibling to test, and may change under a kept
    /// finding); `u16::MAX` else.
    loose_in: Vec<u16>,
}

impl Siblings {
    pub(super) fn new(tree: &TreeInfo, lanes: usize) -> Self {
        let items = &tree.items;
        let prioritized = |i: usize| items[i].policy == Some("prioritized");
        // Earlier siblings on the path down to each item, and the most.
        let mut above = vec![0usize; items.len()];
        for (i, item) in items.iter().enumerate() {
            if let Some(p) = item.parent {
                let own = if prioritized(p) { item.child_index } else { 0 };
                above[i] = above[p] + own;
            }
        }
        let per_lane = above.iter().copied().max().unwrap_or(0);
        let unknown = Key {
            len: UNKNOWN,
            leaf: 0,
            depth: 0,
            flags: [0; 2],
        };
        Siblings {
            per_lane,
            words: vec![0; lanes * per_lane],
            keys: vec![unknown; lanes],
            depth_of: items.iter().map(|i| i.depth as u8).collect(),
            loose_in: items
                .iter()
                .map(|i| match i.parent {
                    Some(p) if !prioritized(p) => p as u16,
                    _ => u16::MAX,
                })
                .collect(),
        }
    }

    /// Forgets what `lane` found (its agent changes).
    pub(super) fn forget(&mut self, lane: usize) {
        self.keys[lane].len = UNKNOWN;
    }

    /// Whether `lane`'s words hold for `memory` ticked with `input`: the
    /// same flags, and the same active path (but for a leaf whose group is
    /// not prioritized).
    #[inline(always)]
    pub(super) fn known<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        lane: usize,
        memory: &AgentMemory<A, L, S, N>,
        input: &TickInput,
    ) -> bool {
        let key = &self.keys[lane];
        let Some(leaf) = memory.leaf() else {
            return false;
        };
        // Without a branch per test: which of them holds differs from one
        // agent to the next.
        let group = self.loose_in[usize::from(leaf.0)];
        let same_group = (group != u16::MAX) & (group == self.loose_in[usize::from(key.leaf)]);
        (key.len != UNKNOWN)
            & (key.flags == [input.decision, input.stimuli])
            & ((leaf.0 == key.leaf) | same_group)
    }

    /// `lane`'s words, and the depth of each word's item.
    #[inline(always)]
    pub(super) fn lane(&mut self, lane: usize) -> LaneWords<'_> {
        let at = lane * self.per_lane;
        let key = self.keys[lane];
        LaneWords {
            words: &mut self.words[at..at + self.per_lane],
            len: if key.len == UNKNOWN {
                0
            } else {
                usize::from(key.len)
            },
            depth: key.depth,
            depth_of: &self.depth_of,
        }
    }

    /// Keeps the first `len` words just written for `lane` as found with
    /// `input` on the active path of depth `depth` that ends in `leaf`
    /// ([`NO_LEAF`]: the agent is idle, and nothing is kept).
    #[inline(always)]
    pub(super) fn keep(
        &mut self,
        lane: usize,
        len: usize,
        leaf: u16,
        depth: usize,
        input: &TickInput,
    ) {
        if leaf == NO_LEAF {
            return self.forget(lane);
        }
        self.keys[lane] = Key {
            len: len as u16,
            leaf,
            depth: depth as u8,
            flags: [input.decision, input.stimuli],
        };
    }
}

/// One lane's words, for its tick's tracer.
pub(super) struct LaneWords<'r> {
    /// Room for the words; the first `len` are those kept.
    pub(super) words: &'r mut [u64],
    pub(super) len: usize,
    /// The depth of the path they were found on: an `Unchanged` of at
    /// least that many levels but one (its leaf's) takes them all.
    pub(super) depth: u8,
    pub(super) depth_of: &'r [u8],
}

#[cfg(test)]
mod tests {
    use bt_core::{TickInput, behavior, decider, group, tick, tree};

    use super::Siblings;
    use crate::export::TreeInfo;

    bitflags::bitflags! {
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        struct F: u32 {
            const X = 1;
            const Y = 2;
        }
    }

    #[derive(Default)]
    struct Pet {
        /// Whether `STAY` goes on running.
        stays: bool,
    }

    behavior! { STAY: Pet, tick: |p, _cx| p.stays }
    behavior! { IDLE: Pet }
    decider! { A: Pet => IDLE, needs_all: F::X }
    decider! { B1: Pet => STAY }
    decider! { B2: Pet => IDLE }
    group! { B: Pet, prioritized [B1, B2], needs_all: F::Y }
    decider! { C1: Pet => IDLE }
    decider! { C2: Pet => IDLE }
    group! { C: Pet, random [C1, C2] }
    group! { ROOT: Pet, prioritized [A, B, C] }
    tree! { PETS: Pet = ROOT, memory: PetMemory }

    /// A memory ticked once with `flags`, its pet staying in `STAY` or not.
    fn ticked(flags: F, stays: bool, seed: u64) -> (PetMemory, TickInput) {
        let mut memory = PETS.new_memory(seed);
        let input = TickInput::new(0.0, 0.1).with_decision(flags);
        tick(&PETS, &mut Pet { stays }, &mut memory, &input).unwrap();
        (memory, input)
    }

    /// Keeps `len` words for lane 0 as found on `memory`'s path.
    fn keep(siblings: &mut Siblings, len: usize, memory: &PetMemory, input: &TickInput) {
        let leaf = memory.leaf().map_or(super::NO_LEAF, |l| l.0);
        siblings.keep(0, len, leaf, memory.depth(), input);
    }

    /// Words kept on one path hold for another only where nothing differs
    /// that the earlier siblings depend on: the flags, and the path but
    /// for a leaf of a group that is not prioritized.
    #[test]
    fn kept_words_hold_for_the_same_flags_and_path_but_a_loose_leaf() {
        let mut siblings = Siblings::new(&TreeInfo::of(&PETS), 1);
        let leaf = |m: &PetMemory| PETS.node(m.leaf().unwrap()).name();

        // B1 runs; the same flags with B1 ended put the pet in B2.
        let (in_b1, y) = ticked(F::Y, true, 1);
        let (in_b2, _) = ticked(F::Y, false, 1);
        assert_eq!((leaf(&in_b1), leaf(&in_b2)), ("B1", "B2"));
        assert!(!siblings.known(0, &in_b1, &y), "nothing kept yet");
        keep(&mut siblings, 1, &in_b1, &y);
        assert!(siblings.known(0, &in_b1, &y));
        // B2 has B1 as an earlier sibling that B1 has not.
        assert!(!siblings.known(0, &in_b2, &y));
        let other_flags = TickInput::new(0.0, 0.1).with_decision(F::Y | F::X);
        assert!(!siblings.known(0, &in_b1, &other_flags));

        // C1 and C2, in a random group, have the same earlier siblings.
        let (mut c1, mut c2, mut seed) = (None, None, 0);
        while c1.is_none() || c2.is_none() {
            let (m, i) = ticked(F::empty(), false, seed);
            match leaf(&m) {
                "C1" => c1 = Some((m, i)),
                _ => c2 = Some((m, i)),
            }
            seed += 1;
        }
        let ((c1, none), (c2, _)) = (c1.unwrap(), c2.unwrap());
        keep(&mut siblings, 2, &c1, &none);
        assert!(siblings.known(0, &c1, &none) && siblings.known(0, &c2, &none));
        assert!(!siblings.known(0, &in_b1, &none));
        siblings.forget(0);
        assert!(!siblings.known(0, &c1, &none));
    }
}
