//! The agent ids of one crowd tick: under which ids the agents ticked so
//! far hold deferred actions, so that an agent given one of those ids is
//! not ticked and no two agents' launches name the same agent.

use crate::decl::TickInput;
use crate::interp::{TickError, pending_agents};
use crate::memory::AgentMemory;
use crate::tree::Tree;

use super::check_agent_id;

/// The table's slots: a power of two, 2 KiB in all.
const SLOTS: usize = 256;

/// The ids under which the agents ticked so far in one crowd tick hold a
/// deferred action pending: the check of agent ids that
/// [`tick_all`](super::tick_all) and [`tick_range`](super::tick_range)
/// make for a tree with deferred actions, for code that ticks a crowd in
/// its own way.
///
/// Make one per crowd tick (a fixed table of 2 KiB, on the stack; nothing
/// is allocated), [`check`](Self::check) each agent's input before its
/// tick, and [`note`](Self::note) each agent after its tick, or after its
/// refusal. An agent is refused when another agent holds an action
/// pending under its id, and that agent is
///
/// - the agent whose index in the crowd is the id ([`check_agent_id`]),
///   whether ticked in this crowd tick or not, or
/// - an agent noted before it, which holds the action from an earlier
///   tick or launched it in this one.
///
/// So of the agents of one crowd tick given one id, only the first that
/// holds or launches an action under it goes on. The table keeps the
/// first [`CrowdIds::KEPT`] ids held; an id first held after those is
/// checked by its index alone. A holder ticked *after* an agent given its
/// id (an id that is not the holder's index) is not seen by that agent:
/// the agent may launch under the id, and the holder is refused at its
/// own turn, naming it.
///
/// ```
/// # use bt_core::{Action, CrowdIds, CrowdReport, TickError, TickInput, leaf, group, tick, tree};
/// # #[derive(Default)] struct Courier;
/// leaf! { FETCH: Courier, launch: |_, _| Some(Action::new(7, 0)) }
/// group! { ROOT: Courier, prioritized [FETCH] }
/// tree! { COURIERS: Courier = ROOT }
///
/// let shared = COURIERS.new_shared(8);
/// let mut agents = [Courier, Courier];
/// let mut memories = [0, 1].map(|i| COURIERS.new_memory_in(&shared, i));
/// // Both agents are given the entity id 1000.
/// let input = TickInput::new(0.0, 0.1).with_agent(1000);
/// let mut ids = CrowdIds::new();
/// let mut report = CrowdReport::default();
/// for i in 0..2 {
///     match ids.check(&COURIERS, &memories, i, &input) {
///         Ok(()) => report.add(i, tick(&COURIERS, &mut agents[i], &mut memories[i], &input)),
///         Err(e) => report.add(i, Err(e)),
///     }
///     ids.note(&COURIERS, &memories[i], i);
/// }
/// let taken = TickError::AgentIdTaken { id: 1000, agent: 1, holder: 0 };
/// assert_eq!(report.first_error, Some((1, taken)));
/// ```
pub struct CrowdIds {
    /// `id << 32 | (index + 1)` of each id held, at the slot its hash
    /// names or the next free one after it; 0: a free slot.
    slots: [u64; SLOTS],
    kept: usize,
}

impl Default for CrowdIds {
    fn default() -> Self {
        Self::new()
    }
}

impl CrowdIds {
    /// The most ids a crowd tick keeps: three quarters of the table, so
    /// that every search stays short and ends at a free slot.
    pub const KEPT: usize = SLOTS / 4 * 3;

    /// An empty table, for one crowd tick.
    #[inline]
    pub const fn new() -> Self {
        CrowdIds {
            slots: [0; SLOTS],
            kept: 0,
        }
    }

    /// Whether agent `index` of the crowd `memories` may tick with
    /// `input`.
    ///
    /// # Errors
    /// [`TickError::AgentIdTaken`] naming the id and both agents, when
    /// another agent holds a deferred action pending under the id: the
    /// agent whose index the id is, or one noted before.
    #[inline]
    pub fn check<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &Tree<A, L, S, N>,
        memories: &[AgentMemory<A, L, S, N>],
        index: usize,
        input: &TickInput,
    ) -> Result<(), TickError> {
        check_agent_id(tree, memories, index, input)?;
        match self.holder(input.agent) {
            Some(holder) if holder != index => Err(TickError::AgentIdTaken {
                id: input.agent,
                agent: index,
                holder,
            }),
            _ => Ok(()),
        }
    }

    /// Notes the ids under which `memory`, agent `index`'s, holds deferred
    /// actions pending: after the agent's tick, or after it was refused.
    /// An id already held keeps its first holder.
    #[inline]
    pub fn note<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        memory: &AgentMemory<A, L, S, N>,
        index: usize,
    ) {
        for id in pending_agents(tree, memory) {
            self.keep(id, index);
        }
    }

    /// Keeps agent `index` as the holder of `id`, unless the id has one or
    /// the table is full.
    fn keep(&mut self, id: u32, index: usize) {
        let Some(word) = index
            .checked_add(1)
            .and_then(|n| u32::try_from(n).ok())
            .map(|n| u64::from(id) << 32 | u64::from(n))
        else {
            return;
        };
        let mut at = slot_of(id);
        loop {
            let there = self.slots[at];
            if there == 0 {
                if self.kept < Self::KEPT {
                    self.slots[at] = word;
                    self.kept += 1;
                }
                return;
            }
            if (there >> 32) as u32 == id {
                return;
            }
            at = (at + 1) % SLOTS;
        }
    }

    /// The index of the agent kept as holding an action under `id`.
    #[inline]
    fn holder(&self, id: u32) -> Option<usize> {
        if self.kept == 0 {
            return None;
        }
        let mut at = slot_of(id);
        loop {
            let there = self.slots[at];
            if there == 0 {
                return None;
            }
            if (there >> 32) as u32 == id {
                return Some((there as u32 - 1) as usize);
            }
            at = (at + 1) % SLOTS;
        }
    }
}

/// The slot where the search for `id` starts: the top bits of a
/// multiplicative hash, so that ids in a row spread over the table.
#[inline]
fn slot_of(id: u32) -> usize {
    (id.wrapping_mul(0x9E37_79B9) >> (32 - SLOTS.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{CrowdIds, slot_of};

    /// Ids in a row and ids whose searches start at one slot all find
    /// their first holder; once `KEPT` ids are kept no more are, and a
    /// search for an id not kept still ends.
    #[test]
    fn every_id_kept_finds_its_first_holder() {
        let mut ids = CrowdIds::new();
        let clashing = (0..u32::MAX)
            .filter(|&id| slot_of(id) == slot_of(7))
            .take(5);
        let all: Vec<u32> = (1000..1000 + CrowdIds::KEPT as u32 - 5)
            .chain(clashing)
            .collect();
        for (i, &id) in all.iter().enumerate() {
            ids.keep(id, i);
            ids.keep(id, i + 1);
        }
        assert_eq!(ids.kept, CrowdIds::KEPT);
        for (i, &id) in all.iter().enumerate() {
            assert_eq!(ids.holder(id), Some(i), "id {id}");
        }
        ids.keep(5, 9999);
        assert_eq!(ids.holder(5), None, "full: not kept");
        assert_eq!(ids.holder(999), None);
    }
}
