//! The checks that read the crowd's shared state (gates, global
//! cooldowns, group roles) and deferred actions.

use crate::decl::{ActionState, ItemIdx};
use crate::memory::shared::{
    self as sync, ActionOp, ActionRequest, RoleAnswer, Ticket, TreeShared,
};
use crate::tree::{Has, Item, NO_SLOT};

use crate::memory::AgentMemory;
use crate::tree::Tree;

use super::run::Run;
use super::{Event, Rejection, Tracer};

/// Whether `memory` (`tree`'s) has a deferred action pending that was
/// launched under agent id `agent`.
#[inline]
pub(crate) fn pending_under<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    agent: u32,
) -> bool {
    pending_agents(tree, memory).any(|launched| launched == agent)
}

/// The agent ids the pending deferred actions of `memory` were launched
/// under.
#[inline]
pub(crate) fn pending_agents<'m, A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &'m AgentMemory<A, L, S, N>,
) -> impl Iterator<Item = u32> + 'm {
    let slots = memory.slots.get(tree.shape.action_slots()).unwrap_or(&[]);
    slots
        .iter()
        .filter(|&&word| sync::action_state(word) == ActionState::Pending)
        .map(|&word| sync::action_agent(word))
}

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The crowd's shared state; only items with shared checks or deferred
    /// actions reach it, and `check` made sure it is there for them.
    #[inline]
    pub(super) fn shared(&self) -> &TreeShared {
        match &self.mem.shared {
            Some(shared) => shared,
            None => unreachable!("`check` requires a TreeShared for this tree"),
        }
    }

    /// The checks of a candidate with shared checks or a slot: its gate
    /// and global cooldown, or, for a slot group, whether the agent
    /// selects a child tree at all.
    #[inline(never)]
    pub(super) fn shared_rejection(&self, c: usize) -> Option<Rejection> {
        let item = &self.items[c];
        if item.is(Has::SYNC)
            && let Some(by) = self.sync_rejection(c)
        {
            return Some(by);
        }
        if item.is(Has::SLOT) && self.selected(c).is_none() {
            return Some(Rejection::NoSelection);
        }
        None
    }

    /// The gate and global cooldown of candidate `c`. The agent's own gate
    /// slot does not count against it: asked about a decider it is in (a
    /// reference's restart, which leaves it before it enters again), it
    /// is refused only when the gate is full without it.
    #[inline]
    pub(super) fn sync_rejection(&self, c: usize) -> Option<Rejection> {
        let item = &self.items[c];
        let shared = self.shared();
        let (gate, cooldown) = self.sync_values(item);
        if item.gate != NO_SLOT
            && !shared.gate_open(item.gate, gate)
            && !(self.is_in(c) && shared.gate_open(item.gate, gate.saturating_add(1)))
        {
            return Some(Rejection::Gate);
        }
        if item.cooldown != NO_SLOT
            && !shared.cooldown_ready(item.cooldown, self.input.now, cooldown)
        {
            return Some(Rejection::Cooldown);
        }
        None
    }

    /// The gate's size and the global cooldown of `item` in this tick:
    /// its numbers, or the values in effect of the tunables they name.
    #[inline]
    fn sync_values(&self, item: &Item<A>) -> (u16, f64) {
        let sync = &item.decider.pre.sync;
        if !item.is(Has::TUNED) {
            return (sync.gate, sync.cooldown);
        }
        let (fields, tuned) = (&item.decider.tuned, self.cx.tuned_values());
        (
            fields.gate_in(tuned, sync.gate),
            fields.cooldown_in(tuned, sync.cooldown),
        )
    }

    /// Whether the agent is in item `c`: it is on the active path.
    #[inline]
    fn is_in(&self, c: usize) -> bool {
        let depth = self.items[c].depth as usize;
        depth < self.mem.depth() && self.mem.levels[depth].item as usize == c
    }

    /// The group role of a candidate that accepts: it registers in the
    /// lobby, and goes on only once its group has formed.
    #[inline]
    pub(super) fn role_rejection(&mut self, item: &Item<A>) -> Option<Rejection> {
        let mem = &mut *self.mem;
        let shared = mem.shared.as_deref()?;
        let size = item.decider.pre.sync.together;
        match shared.role_want(
            item.role,
            size,
            &mut mem.slots[mem.tree.shape.role_slot(item.role)],
        ) {
            RoleAnswer::Enter => None,
            RoleAnswer::Wait => Some(Rejection::Waiting),
            RoleAnswer::Busy => Some(Rejection::RoleBusy),
        }
    }

    /// Takes item `i`'s gate slot, cooldown and role place, all or none
    /// (a cooldown already stamped stays stamped). Fails only when another
    /// agent, ticked in parallel, got there first.
    #[inline]
    pub(super) fn claim(&mut self, i: usize) -> bool {
        let item = &self.items[i];
        let (gate, cooldown) = self.sync_values(item);
        let now = self.input.now;
        let mem = &mut *self.mem;
        let Some(shared) = mem.shared.as_deref() else {
            return false;
        };
        let gated = item.gate != NO_SLOT;
        let refused = if gated && !shared.gate_take(item.gate, gate) {
            Rejection::Gate
        } else if item.cooldown != NO_SLOT && !shared.cooldown_take(item.cooldown, now, cooldown) {
            Rejection::Cooldown
        } else if item.role != NO_SLOT
            && !shared.role_enter(
                item.role,
                &mut mem.slots[mem.tree.shape.role_slot(item.role)],
            )
        {
            Rejection::Waiting
        } else {
            return true;
        };
        if gated && refused != Rejection::Gate {
            shared.gate_give(item.gate);
        }
        self.trace(|r| Event::Rejected {
            node: r.node(i),
            by: refused,
        });
        false
    }

    /// Gives back what item `i`, leaving the path, holds in the shared
    /// state; a pending deferred action is cancelled.
    #[inline]
    pub(super) fn release(&mut self, i: usize) {
        let item = &self.items[i];
        if T::ENABLED && item.action != NO_SLOT {
            let slot = self.mem.slots[item.action as usize];
            if sync::action_state(slot) == ActionState::Pending {
                let ticket = sync::ticket_of(self.shared().id(), item.action, slot);
                self.trace(|r| Event::Cancelled {
                    node: r.node(i),
                    ticket,
                });
            }
        }
        let mem = &mut *self.mem;
        if let Some(shared) = mem.shared.as_deref() {
            let joined = mem.joined();
            sync::release(shared, item, i as u16, &mut mem.slots, joined);
        }
    }

    /// Launches the deferred action of the behavior active at level `k`.
    /// False when `launch` declines or the queue is full.
    #[inline]
    pub(super) fn launch(&mut self, k: usize, i: usize) -> bool {
        let item = &self.items[i];
        self.fill_cx(k, item);
        let Some(action) = self.mem.blocks.launch(k, self.agent, &self.cx) else {
            return false;
        };
        let agent = self.input.agent;
        let mem = &mut *self.mem;
        let Some(shared) = mem.shared.as_deref() else {
            return false;
        };
        let slot = &mut mem.slots[item.action as usize];
        let serial = shared.next_serial();
        let ticket = Ticket::new(shared.id(), agent, item.action, serial);
        let queued = shared.push(ActionRequest {
            agent,
            item: ItemIdx(i as u16),
            ticket,
            op: ActionOp::Launch(action),
        });
        if !queued {
            return false;
        }
        *slot = sync::action_slot(agent, serial, ActionState::Pending);
        self.trace(|r| Event::Launched {
            node: r.node(i),
            action,
            ticket,
        });
        true
    }

    /// A deferred action's tick: its own `tick` if it has one, else it runs
    /// until the game system reports back.
    #[inline(never)]
    pub(super) fn tick_deferred(&mut self, k: usize, i: usize) -> bool {
        let items = self.items;
        self.fill_cx(k, &items[i]);
        if self.cx.action.is_done() {
            let state = self.cx.action;
            self.trace(|r| Event::ActionReported {
                node: r.node(i),
                state,
            });
        }
        match self.items[i].behavior {
            Some(b) if b.has_tick => self.mem.blocks.tick(k, self.agent, &self.cx),
            _ => self.cx.action == ActionState::Pending,
        }
    }
}
