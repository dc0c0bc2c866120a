//! What a crowd shares: gates, global cooldowns, group roles
//! and the deferred-action queue, all in one [`TreeShared`] value.
//!
//! Every counter is an atomic updated with compare-and-swap, so the limits
//! hold when agents are ticked in parallel; nothing here uses `unsafe`.
//!
//! Layout of the words, so that each change is one CAS:
//!
//! - gate `g`: the number of agents active in the decider.
//! - cooldown `c`: the `f64` bits of the last time an agent entered.
//! - role `r`: `generation << 32 | inside << 16 | pending << 8 | waiting`.
//!   Agents that want in register in the lobby of the current generation
//!   (`waiting`). The one that makes `waiting` reach the role's size forms
//!   the group: the generation moves on and every registered agent is
//!   admitted (`pending`). An admitted agent enters on its next evaluation
//!   (`pending` → `inside`). A role is busy while any agent is pending or
//!   inside, so groups never mix.
//! - an agent's role slot (in its [`AgentMemory`](crate::AgentMemory)):
//!   `REGISTERED | TOUCHED | generation`. An agent stays in the lobby only
//!   while it keeps wanting in: a tick that did not evaluate the decider
//!   takes it out again.
//! - an agent's action slot: `agent << 32 | state << 30 | serial`; the
//!   serial (30 bits, from 1, wrapping) numbers the launches of the whole
//!   crowd, so a ticket names one launch among every agent's, a late
//!   completion of a cancelled launch is told apart from the current one,
//!   and the agent id (the one the launch was made under) lets a memory
//!   that is dropped name the agent in its cancellation.
//! - the deferred-action queue: at most `capacity` entries between `head`
//!   (the next entry to hand out) and `tail` (the next free one), both
//!   counting up for ever (wrapping), in a ring of a power of two entries,
//!   so that entry `i` is `i & (ring - 1)` across the wrap too. A writer reserves an entry by
//!   moving `tail` on with a CAS, fills it and publishes it by writing its
//!   sequence number into `ready`; a drain takes an entry by moving `head`
//!   on with a CAS *before* it calls back, so a callback that panics, ticks
//!   an agent or drains again always finds the ring consistent.

use alloc::boxed::Box;
use core::fmt;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// 64-bit atomics: the core type where the target has them, otherwise
/// portable-atomic's, which emulates them with a lock (32-bit embedded
/// targets such as `thumbv7em-none-eabihf`).
#[cfg(target_has_atomic = "64")]
pub(crate) use core::sync::atomic::AtomicU64;
#[cfg(not(target_has_atomic = "64"))]
pub(crate) use portable_atomic::AtomicU64;

use crate::decl::{ActionState, ItemIdx, period_runs};
use crate::tree::{Has, Item, NO_SLOT, Tree};

mod count;
mod ids;
mod queue;
mod tuned;

pub(crate) use ids::next_crowd;

use crate::decl::tune::{Tunables, TunedValues};
#[cfg(feature = "serde")]
pub use queue::AdoptError;
use queue::Entry;
pub(crate) use queue::action_agent;
pub(crate) use queue::action_serial;
pub use queue::{ActionOp, ActionRequest, Outcome, Ticket};
#[cfg(feature = "serde")]
pub(crate) use queue::{LAUNCHES_WRAPPED, issued};
pub(crate) use queue::{action_slot, action_state, ticket_of};

/// Serials are 30 bits: `1..=SERIAL_MAX`.
pub(crate) const SERIAL_MAX: u32 = (1 << 30) - 1;

/// The state a crowd of agents ticking one tree shares: the counters of its
/// gates, the stamps of its global cooldowns, the lobbies of its group
/// roles, and the queue of deferred-action requests.
///
/// Made once per crowd (it allocates then, never afterwards) and shared
/// through an `Arc` with every agent's memory
/// ([`Tree::new_memory_in`](crate::Tree::new_memory_in)): the memory gives
/// back what it holds even when it is reset or dropped (not when it is
/// never dropped, as with `mem::forget`). A game can keep one per level or
/// world; agents bound to different `TreeShared` values do not see each
/// other.
///
/// It belongs to a tree by the tree's structure ([`fingerprint`](Self::fingerprint)),
/// not by its name, and every crowd has an [`id`](Self::id) that its
/// tickets carry.
///
/// # Time
///
/// Global cooldowns keep the `now` of the last entry. A stamp more than
/// one period later than an agent's `now` counts as run out, so a tick
/// given a time far ahead (milliseconds passed as seconds) does not hold
/// the crowd until the clock catches up; [`clear_cooldowns`](Self::clear_cooldowns)
/// lets every cooldown run out at once (after a jump of the game clock,
/// or between two rounds). Gate counts and role places need no reset:
/// they are what the crowd's memories hold, and go back to zero as the
/// memories are reset or dropped.
pub struct TreeShared {
    tree: &'static str,
    /// The tree's structural fingerprint ([`TreeShared::fingerprint`]).
    fingerprint: u64,
    /// This crowd's id: a new one at each restore (see [`TreeShared::id`]).
    id: AtomicU32,
    gates: Box<[AtomicU32]>,
    cooldowns: Box<[AtomicU64]>,
    roles: Box<[AtomicU64]>,
    /// Per item: its gate, or `NO_SLOT`.
    gate_of: Box<[u16]>,
    /// The ring: `capacity` rounded up to a power of two.
    queue: Box<[Entry]>,
    capacity: usize,
    head: AtomicUsize,
    tail: AtomicUsize,
    lost: AtomicUsize,
    /// Launches made so far, for the serials of tickets.
    launches: AtomicU32,
    /// Memories bound to it now ([`TreeShared::memories`]).
    bound: AtomicUsize,
    /// The values of the tree's tunables.
    pub(crate) tuned: TunedValues,
    /// The id of the crowd whose snapshot was restored into it last (0:
    /// none), for [`TreeShared::adopt_ticket`].
    #[cfg(feature = "serde")]
    restored_from: AtomicU32,
    /// The launch count of that snapshot: the serials its crowd had issued
    /// when it was taken, for [`TreeShared::adopt_ticket`].
    #[cfg(feature = "serde")]
    saved_launches: AtomicU32,
}

impl fmt::Debug for TreeShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TreeShared")
            .field("tree", &self.tree)
            .field("id", &self.id())
            .field("gates", &self.gates)
            .field("cooldowns", &self.cooldowns.len())
            .field("roles", &self.roles.len())
            .field("queued", &self.queued())
            .finish_non_exhaustive()
    }
}

const ROLE_WAITING: u64 = 0xFF;
const ROLE_PENDING_SHIFT: u32 = 8;
const ROLE_INSIDE_SHIFT: u32 = 16;
const ROLE_GEN_SHIFT: u32 = 32;

/// An agent's role slot: registered in a lobby.
const REGISTERED: u64 = 1 << 40;
/// An agent's role slot: the decider was evaluated in this tick.
const TOUCHED: u64 = 1 << 41;

/// Whether an agent's role slot has it in a lobby (waiting, or admitted
/// and not entered yet).
#[inline(always)]
pub(crate) const fn registered(slot: u64) -> bool {
    slot & REGISTERED != 0
}

const fn role_part(word: u64, shift: u32) -> u64 {
    (word >> shift) & 0xFF
}

/// What a role decider says to an agent that wants in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoleAnswer {
    /// The agent was admitted (now or earlier): it may enter.
    Enter,
    /// The agent waits in the lobby for the others.
    Wait,
    /// A group is forming or inside: no new agent may register.
    Busy,
}

impl TreeShared {
    /// Shared state for a crowd running `tree`, with room for
    /// `action_capacity` deferred-action requests between two
    /// [`drain_actions`](Self::drain_actions) calls (a launch and a cancel
    /// per agent and tick is always enough). Its [`id`](Self::id) is the
    /// next of a count kept for the whole process.
    ///
    /// # Panics
    /// If `tree` has deferred actions and `action_capacity` is 0: no
    /// launch could ever be queued, so none of them would ever run.
    pub fn new<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: &'static Tree<A, L, S, N>,
        action_capacity: usize,
    ) -> Self {
        let shape = tree.shape;
        assert!(
            action_capacity > 0 || shape.actions == 0,
            "tree `{}` has deferred actions: its shared state needs room for at least one request",
            tree.name
        );
        let mut shared = Self::with(
            tree.name,
            tree.items.iter().map(|it| it.gate).collect(),
            (shape.gates, shape.cooldowns, shape.roles),
            action_capacity,
        );
        shared.fingerprint = shape.fingerprint;
        shared.tuned = TunedValues::new(tree.tunables);
        shared
    }

    /// Fresh state for tree `tree` whose items have the gates `gate_of`:
    /// every gate empty, every cooldown run out, every lobby empty.
    fn with(
        tree: &'static str,
        gate_of: Box<[u16]>,
        (gates, cooldowns, roles): (usize, usize, usize),
        action_capacity: usize,
    ) -> Self {
        let never = f64::NEG_INFINITY.to_bits();
        TreeShared {
            tree,
            fingerprint: 0,
            id: AtomicU32::new(next_crowd()),
            gates: (0..gates).map(|_| AtomicU32::new(0)).collect(),
            cooldowns: (0..cooldowns).map(|_| AtomicU64::new(never)).collect(),
            roles: (0..roles).map(|_| AtomicU64::new(0)).collect(),
            gate_of,
            queue: (0..action_capacity.next_power_of_two())
                .map(|_| Entry::default())
                .collect(),
            capacity: action_capacity,
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            lost: AtomicUsize::new(0),
            launches: AtomicU32::new(0),
            bound: AtomicUsize::new(0),
            tuned: TunedValues::new(None),
            #[cfg(feature = "serde")]
            restored_from: AtomicU32::new(0),
            #[cfg(feature = "serde")]
            saved_launches: AtomicU32::new(0),
        }
    }

    /// The name of the tree it was made for.
    pub fn tree_name(&self) -> &'static str {
        self.tree
    }

    /// The structural fingerprint of the tree it was made for
    /// ([`Shape::fingerprint`](crate::Shape::fingerprint), computed with the
    /// rest of the tree's shape): a hash of every decider's name, kind,
    /// policy, children, preconditions, shared checks and behavior, in
    /// preorder (not of the tree's name, nor of the modules the deciders
    /// are declared in). Memories of any tree with the same
    /// fingerprint may be bound to it, and its snapshots name it.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// This crowd's id, part of every [`Ticket`] of its launches: never 0,
    /// different for every `TreeShared` made in the process, and drawn
    /// afresh in each run (from the addresses the system gives the program),
    /// so that a ticket or save of another run or process names no crowd
    /// of this one, except by a chance of about one in four billion. A
    /// restore (`TreeShared::restore_crowd`, feature `serde`) gives the
    /// crowd a new one, as a crowd made afresh for the load would have:
    /// tickets handed out before the load are foreign to it until adopted
    /// (`TreeShared::adopt_ticket`).
    #[inline]
    pub fn id(&self) -> u32 {
        self.id.load(Ordering::Acquire)
    }

    /// How many agent memories are bound to this shared state now: made
    /// by [`Tree::new_memory_in`](crate::Tree::new_memory_in) and not yet
    /// dropped. A running crowd is loaded with all of them at once
    /// (`TreeShared::restore_crowd`, feature `serde`).
    pub fn memories(&self) -> usize {
        self.bound.load(Ordering::Acquire)
    }

    /// A memory is made bound to this shared state.
    pub(crate) fn bind(&self) {
        self.bound.fetch_add(1, Ordering::AcqRel);
    }

    /// A memory bound to this shared state is dropped.
    pub(crate) fn unbind(&self) {
        self.bound.fetch_sub(1, Ordering::AcqRel);
    }

    /// Panics, naming both, if this shared state was made for another
    /// table of tunables than `tree`'s (a tree of the same structure whose
    /// behaviors read other values).
    pub(crate) fn check_tunables<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &Tree<A, L, S, N>,
    ) {
        let same = match (self.tunables(), tree.tunables) {
            (Some(a), Some(b)) => core::ptr::eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        // A table is named with where it is declared: two tables may
        // have one name.
        let named = |t: Option<&Tunables>| match t {
            None => alloc::string::String::from("none"),
            Some(t) if t.place().is_empty() => alloc::format!("`{}`", t.name()),
            Some(t) => alloc::format!("`{}` (declared at {})", t.name(), t.place()),
        };
        assert!(
            same,
            "tree `{}`: the shared state was made for tree `{}`, whose tunables are {}; \
             this tree's are {}",
            tree.name,
            self.tree_name(),
            named(self.tunables()),
            named(tree.tunables),
        );
    }

    /// Whether this shared state was made for a tree of `tree`'s
    /// structure (its fingerprint).
    pub(crate) fn fits<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &Tree<A, L, S, N>,
    ) -> bool {
        self.fingerprint == tree.shape.fingerprint
    }

    /// How many agents are active in the gated decider `item` now (`None`:
    /// it has no gate).
    pub fn gate_count(&self, item: ItemIdx) -> Option<u32> {
        let g = *self.gate_of.get(item.get())?;
        (g != NO_SLOT).then(|| self.gates[g as usize].load(Ordering::Acquire))
    }

    /// Agents active in any gated decider, over all gates (0 when every
    /// slot was given back).
    pub fn gates_held(&self) -> u64 {
        self.gates
            .iter()
            .map(|g| u64::from(g.load(Ordering::Acquire)))
            .sum()
    }

    /// Agents waiting in, admitted to, or inside any group role (0 when
    /// every agent has left).
    pub fn roles_held(&self) -> u64 {
        self.roles
            .iter()
            .map(|r| {
                let w = r.load(Ordering::Acquire);
                (w & ROLE_WAITING)
                    + role_part(w, ROLE_PENDING_SHIFT)
                    + role_part(w, ROLE_INSIDE_SHIFT)
            })
            .sum()
    }

    /// Lets every global cooldown run out at once, as if no agent had ever
    /// entered its decider: the way back after a clock that jumped, or
    /// between two rounds of a game. Gate counts and role places are not
    /// touched: they are held by memories, which give them back when they
    /// deactivate, are [reset](crate::AgentMemory::reset) or are dropped.
    pub fn clear_cooldowns(&self) {
        let never = f64::NEG_INFINITY.to_bits();
        for c in &self.cooldowns {
            c.store(never, Ordering::Release);
        }
    }

    // --- gates -----------------------------------------------------------

    pub(crate) fn gate_open(&self, g: u16, limit: u16) -> bool {
        self.gates[g as usize].load(Ordering::Relaxed) < u32::from(limit)
    }

    pub(crate) fn gate_take(&self, g: u16, limit: u16) -> bool {
        self.gates[g as usize]
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| {
                (n < u32::from(limit)).then_some(n + 1)
            })
            .is_ok()
    }

    pub(crate) fn gate_give(&self, g: u16) {
        let _ = self.gates[g as usize]
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    // --- cooldowns -------------------------------------------------------

    pub(crate) fn cooldown_ready(&self, c: u16, now: f64, period: f64) -> bool {
        let last = f64::from_bits(self.cooldowns[c as usize].load(Ordering::Relaxed));
        !cooldown_runs(last, now, period)
    }

    /// Stamps the cooldown with `now` if it has run out.
    pub(crate) fn cooldown_take(&self, c: u16, now: f64, period: f64) -> bool {
        self.cooldowns[c as usize]
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |bits| {
                (!cooldown_runs(f64::from_bits(bits), now, period)).then_some(now.to_bits())
            })
            .is_ok()
    }

    /// The last time an agent entered the decider with cooldown `c`.
    #[cfg(test)]
    pub(crate) fn cooldown_stamp(&self, c: u16) -> f64 {
        f64::from_bits(self.cooldowns[c as usize].load(Ordering::Relaxed))
    }

    // --- roles -----------------------------------------------------------

    /// An agent whose role slot is `slot` wants into role `r` of `size`.
    pub(crate) fn role_want(&self, r: u16, size: u8, slot: &mut u64) -> RoleAnswer {
        let word = &self.roles[r as usize];
        *slot |= TOUCHED;
        if *slot & REGISTERED != 0 {
            let registered = *slot & 0xFFFF_FFFF;
            let now = word.load(Ordering::Acquire) >> ROLE_GEN_SHIFT;
            return if now == registered {
                RoleAnswer::Wait
            } else {
                RoleAnswer::Enter
            };
        }
        let size = u64::from(size);
        let mut answer = RoleAnswer::Busy;
        let mut generation = 0;
        let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            generation = w >> ROLE_GEN_SHIFT;
            if role_part(w, ROLE_PENDING_SHIFT) != 0 || role_part(w, ROLE_INSIDE_SHIFT) != 0 {
                answer = RoleAnswer::Busy;
                return None;
            }
            let waiting = (w & ROLE_WAITING) + 1;
            if waiting == size {
                // The group forms: everyone registered is admitted.
                answer = RoleAnswer::Enter;
                let next = (generation + 1) & 0xFFFF_FFFF;
                Some(next << ROLE_GEN_SHIFT | size << ROLE_PENDING_SHIFT)
            } else {
                answer = RoleAnswer::Wait;
                Some(w & !ROLE_WAITING | waiting)
            }
        });
        if answer != RoleAnswer::Busy {
            *slot = REGISTERED | TOUCHED | generation;
        }
        answer
    }

    /// An admitted agent enters: pending → inside. False if it was not
    /// admitted (its slot is then left as it was).
    pub(crate) fn role_enter(&self, r: u16, slot: &mut u64) -> bool {
        let word = &self.roles[r as usize];
        if *slot & REGISTERED == 0 {
            return false;
        }
        let registered = *slot & 0xFFFF_FFFF;
        let ok = word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let admitted = (w >> ROLE_GEN_SHIFT) != registered;
                (admitted && role_part(w, ROLE_PENDING_SHIFT) > 0)
                    .then(|| w - (1 << ROLE_PENDING_SHIFT) + (1 << ROLE_INSIDE_SHIFT))
            })
            .is_ok();
        if ok {
            *slot = 0;
        }
        ok
    }

    /// An agent inside role `r` leaves.
    pub(crate) fn role_leave(&self, r: u16) {
        let _ = self.roles[r as usize].fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            (role_part(w, ROLE_INSIDE_SHIFT) > 0).then(|| w - (1 << ROLE_INSIDE_SHIFT))
        });
    }

    /// An agent leaves the lobby (or gives up its admission) without
    /// entering.
    pub(crate) fn role_withdraw(&self, r: u16, slot: &mut u64) {
        if *slot & REGISTERED == 0 {
            *slot = 0;
            return;
        }
        let registered = *slot & 0xFFFF_FFFF;
        let _ = self.roles[r as usize].fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            let generation = w >> ROLE_GEN_SHIFT;
            if generation == registered {
                (w & ROLE_WAITING > 0).then(|| w - 1)
            } else if generation == (registered + 1) & 0xFFFF_FFFF {
                (role_part(w, ROLE_PENDING_SHIFT) > 0).then(|| w - (1 << ROLE_PENDING_SHIFT))
            } else {
                None
            }
        });
        *slot = 0;
    }

    /// The end of an agent's tick: lobbies it did not ask again are left.
    pub(crate) fn role_sweep(&self, r: u16, slot: &mut u64) {
        if *slot & TOUCHED == 0 {
            if *slot & REGISTERED != 0 {
                self.role_withdraw(r, slot);
            }
        } else {
            *slot &= !TOUCHED;
        }
    }
}

/// Whether a global cooldown of `period` seconds stamped at `last` still
/// runs at `now`: as a timer, except that a stamp more than one period
/// later than `now` (the clock went back, or a tick was given a time far
/// ahead) counts as run out instead of holding the crowd until the clock
/// catches up.
#[inline(always)]
pub(crate) fn cooldown_runs(last: f64, now: f64, period: f64) -> bool {
    period_runs(last, now, period) && last - now < period
}

/// Gives back what the decider `item`, active in an agent's memory, holds
/// in `shared` and in the agent's slots: its gate slot, its place in a
/// group role, and its pending deferred action (cancelled). Runs on every
/// deactivation, also when the memory is abandoned, reset or dropped.
///
/// `joined` is the crowd id the memory's holdings are counted under: when
/// the shared state was restored since (its id is another), what the item
/// held belonged to the state the restore replaced, and nothing is given
/// back or cancelled; the action slot is cleared all the same.
pub(crate) fn release<A: 'static>(
    shared: &TreeShared,
    item: &Item<A>,
    idx: u16,
    slots: &mut [u64],
    joined: u32,
) {
    if shared.id() == joined {
        give_back(shared, item);
        cancel(shared, item, idx, slots);
    } else if item.action != NO_SLOT {
        let slot = &mut slots[item.action as usize];
        *slot = action_slot(action_agent(*slot), action_serial(*slot), ActionState::None);
    }
}

/// Gives back the gate slot and the group-role place of the decider
/// `item`, active in an agent's memory.
pub(crate) fn give_back<A: 'static>(shared: &TreeShared, item: &Item<A>) {
    if item.is(Has::SYNC) {
        if item.gate != NO_SLOT {
            shared.gate_give(item.gate);
        }
        if item.role != NO_SLOT {
            shared.role_leave(item.role);
        }
    }
}

/// Cancels the pending deferred action of the decider `item` (at `idx`),
/// if it has one, and clears its action slot.
pub(crate) fn cancel<A: 'static>(shared: &TreeShared, item: &Item<A>, idx: u16, slots: &mut [u64]) {
    if item.action != NO_SLOT {
        let slot = &mut slots[item.action as usize];
        let ticket = ticket_of(shared.id(), item.action, *slot);
        if action_state(*slot) == ActionState::Pending {
            shared.push(ActionRequest {
                agent: ticket.agent(),
                item: ItemIdx(idx),
                ticket,
                op: ActionOp::Cancel,
            });
        }
        *slot = action_slot(ticket.agent(), ticket.serial(), ActionState::None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// State for one item with gate 0, and one cooldown.
    pub(super) fn shared(gates: usize, roles: usize, queue: usize) -> TreeShared {
        TreeShared::with("T", Box::new([0]), (gates, 1, roles), queue)
    }

    #[test]
    fn a_gate_admits_up_to_its_limit_and_counts_back_down() {
        let s = shared(1, 0, 0);
        assert!(s.gate_take(0, 2) && s.gate_take(0, 2));
        assert!(!s.gate_open(0, 2) && !s.gate_take(0, 2));
        s.gate_give(0);
        assert_eq!(s.gate_count(ItemIdx(0)), Some(1));
        s.gate_give(0);
        s.gate_give(0); // never below zero
        assert_eq!(s.gates_held(), 0);
    }

    #[test]
    fn a_cooldown_is_taken_once_per_period() {
        let s = shared(0, 0, 0);
        assert!(s.cooldown_take(0, 1.0, 5.0));
        assert!(!s.cooldown_ready(0, 5.9, 5.0) && !s.cooldown_take(0, 5.9, 5.0));
        assert!(s.cooldown_take(0, 6.0, 5.0));
        assert_eq!(s.cooldown_stamp(0), 6.0);
    }

    #[test]
    fn a_role_of_three_forms_when_the_third_agent_wants_in() {
        let s = shared(0, 1, 0);
        let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
        assert_eq!(s.role_want(0, 3, &mut a), RoleAnswer::Wait);
        assert_eq!(s.role_want(0, 3, &mut b), RoleAnswer::Wait);
        assert_eq!(s.role_want(0, 3, &mut a), RoleAnswer::Wait, "asking again");
        assert_eq!(s.role_want(0, 3, &mut c), RoleAnswer::Enter);
        assert_eq!(s.role_want(0, 3, &mut d), RoleAnswer::Busy);
        assert_eq!(s.role_want(0, 3, &mut a), RoleAnswer::Enter, "admitted");
        assert!(s.role_enter(0, &mut c) && s.role_enter(0, &mut a));
        assert!(!s.role_enter(0, &mut d), "never registered");
        // b gives up its admission; the others leave.
        s.role_withdraw(0, &mut b);
        s.role_leave(0);
        assert_eq!(s.role_want(0, 3, &mut d), RoleAnswer::Busy, "one inside");
        s.role_leave(0);
        assert_eq!(s.roles_held(), 0);
        assert_eq!(s.role_want(0, 3, &mut d), RoleAnswer::Wait);
    }

    #[test]
    fn a_lobby_forgets_an_agent_that_stops_asking() {
        let s = shared(0, 1, 0);
        let mut a = 0;
        assert_eq!(s.role_want(0, 2, &mut a), RoleAnswer::Wait);
        s.role_sweep(0, &mut a); // asked this tick: stays
        assert_eq!(s.roles_held(), 1);
        s.role_sweep(0, &mut a); // not asked: leaves
        assert_eq!((s.roles_held(), a), (0, 0));
    }
}
