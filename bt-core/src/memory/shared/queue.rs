//! The deferred-action queue of a [`TreeShared`]: the requests, their
//! tickets, the ring the agents' ticks write and the drain that reads it,
//! and the action slot an agent's memory keeps per launching decider.

use core::fmt;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::{AtomicU64, SERIAL_MAX, TreeShared};
use crate::decl::{Action, ActionState, ItemIdx};

/// How a game system reports a deferred action back
/// ([`AgentMemory::complete`](crate::AgentMemory::complete)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The action was carried out.
    Succeeded,
    /// The action could not be carried out.
    Failed,
}

/// One launch of a deferred action by one agent: hand it back with the
/// outcome to [`AgentMemory::complete`](crate::AgentMemory::complete).
///
/// It names the launch uniquely within its crowd: the crowd's
/// [`TreeShared::id`], the agent id the launch was made under, the
/// agent-memory slot of the launching decider and a serial that counts the
/// launches of the whole crowd. A ticket of another memory, tree or crowd
/// completes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    crowd: u32,
    agent: u32,
    slot: u16,
    serial: u32,
}

impl Ticket {
    /// The ticket with these parts (for code that stores tickets and makes
    /// them again; a ticket that names no pending launch completes nothing).
    pub const fn new(crowd: u32, agent: u32, slot: u16, serial: u32) -> Self {
        Ticket {
            crowd,
            agent,
            slot,
            serial,
        }
    }

    /// The [`TreeShared::id`] of the crowd the launch was made in.
    pub const fn crowd(self) -> u32 {
        self.crowd
    }

    /// The agent id the launch was made under (`TickInput::agent`).
    pub const fn agent(self) -> u32 {
        self.agent
    }

    /// The agent-memory slot of the launching decider.
    pub const fn slot(self) -> usize {
        self.slot as usize
    }

    /// Which launch of the crowd it is (counts up from 1, wrapping after
    /// 2<sup>30</sup> − 1 launches).
    pub const fn serial(self) -> u32 {
        self.serial
    }
}

/// `slot.serial`, as traces and requests print it.
impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.slot, self.serial)
    }
}

/// What a game system is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionOp {
    /// Start the action.
    Launch(Action),
    /// Stop the action launched with this request's ticket: the behavior was
    /// deactivated (preempted, ended, its memory reset or dropped) before
    /// the action was reported back.
    Cancel,
}

/// One entry of the deferred-action queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionRequest {
    /// The agent id (`TickInput::agent`) the launch was made under; a
    /// cancellation names the same id as its launch.
    pub agent: u32,
    /// The decider whose behavior issued it.
    pub item: ItemIdx,
    /// The launch it belongs to.
    pub ticket: Ticket,
    /// Launch or cancel.
    pub op: ActionOp,
}

impl fmt::Display for ActionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (agent, item, ticket) = (self.agent, self.item, self.ticket);
        match self.op {
            ActionOp::Launch(a) => write!(
                f,
                "launch agent={agent} item={item} ticket={ticket} code={} arg={}",
                a.code, a.arg
            ),
            ActionOp::Cancel => write!(f, "cancel agent={agent} item={item} ticket={ticket}"),
        }
    }
}

/// One queue entry: written by one agent's tick, read by `drain`.
#[derive(Default)]
pub(super) struct Entry {
    /// `agent << 32 | item << 16 | op`, op 1 = launch, 2 = cancel.
    head: AtomicU64,
    /// `slot << 32 | serial`.
    ticket: AtomicU64,
    code: AtomicU32,
    arg: AtomicU64,
    /// The entry's sequence number plus one, written (release) once the
    /// fields above are.
    ready: AtomicUsize,
}

impl Entry {
    /// Writes `r` and publishes it as entry number `ready - 1`.
    fn write(&self, r: &ActionRequest, ready: usize) {
        let (op, code, arg) = match r.op {
            ActionOp::Launch(a) => (1, a.code, a.arg),
            ActionOp::Cancel => (2, 0, 0),
        };
        self.head.store(
            u64::from(r.agent) << 32 | u64::from(r.item.0) << 16 | op,
            Ordering::Relaxed,
        );
        self.ticket.store(
            u64::from(r.ticket.slot) << 32 | u64::from(r.ticket.serial),
            Ordering::Relaxed,
        );
        self.code.store(code, Ordering::Relaxed);
        self.arg.store(arg, Ordering::Relaxed);
        self.ready.store(ready, Ordering::Release);
    }

    /// The request it holds, of the crowd `crowd`.
    fn read(&self, crowd: u32) -> ActionRequest {
        let head = self.head.load(Ordering::Relaxed);
        let ticket = self.ticket.load(Ordering::Relaxed);
        let op = if head & 0xFF == 1 {
            ActionOp::Launch(Action {
                code: self.code.load(Ordering::Relaxed),
                arg: self.arg.load(Ordering::Relaxed),
            })
        } else {
            ActionOp::Cancel
        };
        let agent = (head >> 32) as u32;
        ActionRequest {
            agent,
            item: ItemIdx((head >> 16) as u16),
            ticket: Ticket {
                crowd,
                agent,
                slot: (ticket >> 32) as u16,
                serial: ticket as u32,
            },
            op,
        }
    }
}

impl TreeShared {
    /// Deferred-action requests waiting in the queue.
    pub fn queued(&self) -> usize {
        let (head, tail) = (
            self.head.load(Ordering::Acquire),
            self.tail.load(Ordering::Acquire),
        );
        tail.wrapping_sub(head).min(self.capacity)
    }

    /// The queue's capacity.
    pub fn action_capacity(&self) -> usize {
        self.capacity
    }

    /// Requests that did not fit the queue since it was made. A launch that
    /// does not fit fails its behavior's activation; a cancellation that
    /// does not fit is lost, so size the queue for a whole crowd tick.
    pub fn lost_requests(&self) -> usize {
        self.lost.load(Ordering::Acquire)
    }

    /// Hands the requests queued when it is called to `f`, oldest first,
    /// taking each off the queue before `f` sees it.
    ///
    /// `f` may do anything, also tick or drop agents, complete tickets or
    /// drain again: requests queued while a drain runs wait for the next
    /// drain (a drain called from `f` hands them out), and none is lost. If
    /// `f` panics, the request it was given counts as handed out and the
    /// queue stays consistent: the next drain goes on with the request
    /// after it. Ticked in parallel, agents queue in no fixed order; each
    /// request names its agent. Two threads may drain at once; each request
    /// goes to one of them.
    pub fn drain_actions(&self, mut f: impl FnMut(ActionRequest)) {
        let (cap, mask) = (self.capacity, self.queue.len() - 1);
        let end = self.tail.load(Ordering::Acquire);
        loop {
            let head = self.head.load(Ordering::Acquire);
            let left = end.wrapping_sub(head);
            // Nothing left, or a drain called back from `f` went past `end`.
            if left == 0 || left > cap {
                return;
            }
            let e = &self.queue[head & mask];
            if e.ready.load(Ordering::Acquire) != head.wrapping_add(1) {
                // Reserved by an agent ticking on another thread and not
                // yet written: the next drain hands it out.
                return;
            }
            let request = e.read(self.id());
            // Taken only if no other drain took it first; a writer reuses
            // the entry only once `head` has passed it.
            if self
                .head
                .compare_exchange(
                    head,
                    head.wrapping_add(1),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                f(request);
            }
        }
    }

    /// Queues a request; false (and counted as lost) when the queue is
    /// full.
    pub(crate) fn push(&self, r: ActionRequest) -> bool {
        let cap = self.capacity;
        let mut tail = self.tail.load(Ordering::Acquire);
        loop {
            let head = self.head.load(Ordering::Acquire);
            if tail.wrapping_sub(head) >= cap {
                self.lost.fetch_add(1, Ordering::AcqRel);
                return false;
            }
            match self.tail.compare_exchange_weak(
                tail,
                tail.wrapping_add(1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => tail = now,
            }
        }
        self.queue[tail & (self.queue.len() - 1)].write(&r, tail.wrapping_add(1));
        true
    }

    /// The serial of the next launch in this crowd: 1, 2, … up to
    /// [`SERIAL_MAX`], then 1 again (the launch count then says it
    /// wrapped).
    pub(crate) fn next_serial(&self) -> u32 {
        let mut serial = 0;
        let _ = self
            .launches
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                serial = (w & !LAUNCHES_WRAPPED) + 1;
                Some(if serial >= SERIAL_MAX {
                    LAUNCHES_WRAPPED
                } else {
                    (w & LAUNCHES_WRAPPED) | serial
                })
            });
        serial
    }
}

/// An agent's action slot.
pub(crate) const fn action_state(slot: u64) -> ActionState {
    ActionState::from_bits((slot >> 30) & 0b11)
}

pub(crate) const fn action_serial(slot: u64) -> u32 {
    (slot & SERIAL_MAX as u64) as u32
}

pub(crate) const fn action_agent(slot: u64) -> u32 {
    (slot >> 32) as u32
}

pub(crate) const fn action_slot(agent: u32, serial: u32, state: ActionState) -> u64 {
    (agent as u64) << 32 | state.bits() << 30 | (serial & SERIAL_MAX) as u64
}

/// The ticket of the launch an action slot holds.
pub(crate) const fn ticket_of(crowd: u32, slot: u16, word: u64) -> Ticket {
    Ticket {
        crowd,
        agent: action_agent(word),
        slot,
        serial: action_serial(word),
    }
}

// --- snapshots (the `serde` feature): what `persist::shared` reads and writes.

#[cfg(feature = "serde")]
impl TreeShared {
    /// The gate counters, cooldown stamps and role words.
    pub(crate) fn words(&self) -> (&[AtomicU32], &[AtomicU64], &[AtomicU64]) {
        (&self.gates, &self.cooldowns, &self.roles)
    }

    /// The number of items of the tree it was made for.
    pub(crate) fn items(&self) -> usize {
        self.gate_of.len()
    }

    /// Launches made so far in this crowd: the next ticket's serial follows
    /// from it.
    pub(crate) fn launches(&self) -> u32 {
        self.launches.load(Ordering::Acquire)
    }

    /// Hands every queued request to `f`, oldest first, leaving the queue
    /// as it is. A request reserved by an agent ticking on another thread
    /// and not yet written ends the walk, as it ends a drain.
    pub(crate) fn peek_actions(&self, mut f: impl FnMut(ActionRequest)) {
        let mask = self.queue.len() - 1;
        let head = self.head.load(Ordering::Acquire);
        for i in 0..self.queued() {
            let at = head.wrapping_add(i);
            let e = &self.queue[at & mask];
            if e.ready.load(Ordering::Acquire) != at.wrapping_add(1) {
                return;
            }
            f(e.read(self.id()));
        }
    }

    /// Starts a load: the crowd takes a new id (remembering `from`, the
    /// crowd the state was saved from, and `launches`, the serials that
    /// crowd had issued, for [`adopt_ticket`](Self::adopt_ticket)), its
    /// gates are emptied and its roles set to the generations `roles` with
    /// nobody in them: the memories restored with it count what they hold
    /// again.
    pub(crate) fn renew(&self, from: u32, launches: u32, roles: &[u32]) {
        self.id.store(super::next_crowd(), Ordering::Release);
        self.restored_from.store(from, Ordering::Release);
        self.saved_launches.store(launches, Ordering::Release);
        for g in &self.gates {
            g.store(0, Ordering::Release);
        }
        for (w, &generation) in self.roles.iter().zip(roles) {
            w.store(
                u64::from(generation) << super::ROLE_GEN_SHIFT,
                Ordering::Release,
            );
        }
    }

    /// The crowd a restore read its state from (0: none yet).
    pub(crate) fn restored_from(&self) -> u32 {
        self.restored_from.load(Ordering::Acquire)
    }

    /// Makes sure no launch to come gets `serial` (or an earlier one)
    /// again: a memory restored into this crowd holds a launch with it.
    pub(crate) fn note_serial(&self, serial: u32) {
        let _ = self
            .launches
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                if w & LAUNCHES_WRAPPED != 0 || serial <= w {
                    None
                } else if serial >= SERIAL_MAX {
                    Some(LAUNCHES_WRAPPED)
                } else {
                    Some(serial)
                }
            });
    }

    /// Replaces the queue with `requests` (which fit it), the count of
    /// lost requests with `lost` and the launch count with `launches`.
    pub(crate) fn replace_queue(&self, requests: &[ActionRequest], lost: usize, launches: u32) {
        for e in &self.queue {
            e.ready.store(0, Ordering::Relaxed);
        }
        self.head.store(0, Ordering::Release);
        self.tail.store(0, Ordering::Release);
        for &r in requests {
            self.push(r);
        }
        self.lost.store(lost, Ordering::Release);
        self.launches.store(launches, Ordering::Release);
    }

    /// A ticket the game kept from before a load, as a ticket of this
    /// crowd: the same agent, slot and serial under this crowd's
    /// [`id`](Self::id).
    ///
    /// What a restored crowd hands out (its queued requests, its memories'
    /// [`pending_ticket`](crate::AgentMemory::pending_ticket)) already
    /// carries this crowd's id. A ticket the game kept from before the
    /// load goes through this first; then
    /// [`complete`](crate::AgentMemory::complete) takes it if the launch
    /// it names is pending. Only a ticket of the saved crowd issued before
    /// the save was taken is adopted: a launch made after the save is not
    /// in it, and its serial may be issued again by the restored crowd.
    ///
    /// # Errors
    /// [`AdoptError::NotLoaded`] when no save was restored into this
    /// shared state; [`AdoptError::OtherCrowd`] for a ticket of another
    /// crowd than the saved one (this crowd's own tickets included, and
    /// tickets of an earlier run or another process);
    /// [`AdoptError::AfterSave`] for a ticket the saved crowd issued after
    /// the save was taken. When the saved crowd had made 2<sup>30</sup> − 1
    /// launches or more, serials have wrapped and every serial counts as
    /// issued before the save.
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn adopt_ticket(&self, ticket: Ticket) -> Result<Ticket, AdoptError> {
        let saved = self.restored_from.load(Ordering::Acquire);
        if saved == 0 {
            return Err(AdoptError::NotLoaded);
        }
        if ticket.crowd != saved {
            return Err(AdoptError::OtherCrowd {
                ticket: ticket.crowd,
                saved,
            });
        }
        let launches = self.saved_launches.load(Ordering::Acquire);
        if !issued(launches, ticket.serial) {
            return Err(AdoptError::AfterSave {
                serial: ticket.serial,
                launches,
            });
        }
        Ok(Ticket {
            crowd: self.id(),
            ..ticket
        })
    }
}

/// The launch count's flag: serials wrapped, so every one was issued.
pub(crate) const LAUNCHES_WRAPPED: u32 = 1 << 31;

/// Whether a crowd whose launch count is `launches` issued `serial`.
#[cfg(feature = "serde")]
pub(crate) const fn issued(launches: u32, serial: u32) -> bool {
    serial != 0 && serial <= SERIAL_MAX && (launches & LAUNCHES_WRAPPED != 0 || serial <= launches)
}

/// Why [`TreeShared::adopt_ticket`] turned a ticket down.
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdoptError {
    /// No save was restored into this crowd: there is nothing to adopt a
    /// ticket from.
    NotLoaded,
    /// The ticket is of another crowd than the one the save was taken
    /// from.
    OtherCrowd {
        /// The crowd the ticket names.
        ticket: u32,
        /// The crowd the save was taken from.
        saved: u32,
    },
    /// The saved crowd issued the ticket after the save was taken: the
    /// save knows nothing of its launch.
    AfterSave {
        /// The ticket's serial.
        serial: u32,
        /// The launches the saved crowd had made when it was saved.
        launches: u32,
    },
}

#[cfg(feature = "serde")]
impl fmt::Display for AdoptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdoptError::NotLoaded => f.write_str("no save was loaded into this crowd"),
            AdoptError::OtherCrowd { ticket, saved } => write!(
                f,
                "the ticket is of crowd {ticket}, the save of crowd {saved}"
            ),
            AdoptError::AfterSave { serial, launches } => write!(
                f,
                "ticket serial {serial} was issued after the save, which holds {launches} launches"
            ),
        }
    }
}

#[cfg(feature = "serde")]
impl core::error::Error for AdoptError {}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec::Vec;

    use super::super::tests::shared;
    use super::*;

    #[test]
    fn the_queue_keeps_order_and_counts_what_does_not_fit() {
        let s = shared(0, 0, 2);
        let r = |agent, op| ActionRequest {
            agent,
            item: ItemIdx(3),
            ticket: Ticket::new(s.id(), agent, 1, agent),
            op,
        };
        assert_eq!(
            r(7, ActionOp::Launch(Action::new(4, 99))).to_string(),
            "launch agent=7 item=3 ticket=1.7 code=4 arg=99"
        );
        assert_eq!(
            r(8, ActionOp::Cancel).to_string(),
            "cancel agent=8 item=3 ticket=1.8"
        );
        assert!(s.push(r(7, ActionOp::Launch(Action::new(4, 99)))));
        assert!(s.push(r(8, ActionOp::Cancel)));
        assert!(!s.push(r(9, ActionOp::Cancel)));
        assert_eq!((s.queued(), s.lost_requests()), (2, 1));
        let mut got = Vec::new();
        s.drain_actions(|q| got.push(q));
        assert_eq!(
            got,
            [
                r(7, ActionOp::Launch(Action::new(4, 99))),
                r(8, ActionOp::Cancel)
            ]
        );
        assert_eq!(s.queued(), 0);
        assert!(s.push(r(1, ActionOp::Cancel)), "room again after a drain");
    }

    /// The counts of handed-out and queued requests wrap past the largest
    /// `usize` with nothing lost or repeated, also for a capacity that is
    /// not a power of two.
    #[test]
    fn the_queue_counts_wrap_past_the_largest_index() {
        let s = shared(0, 0, 3);
        s.head.store(usize::MAX - 4, Ordering::Relaxed);
        s.tail.store(usize::MAX - 4, Ordering::Relaxed);
        let r = |n: u32| ActionRequest {
            agent: n,
            item: ItemIdx(0),
            ticket: Ticket::new(s.id(), n, 0, n),
            op: ActionOp::Cancel,
        };
        let mut got = Vec::new();
        for n in 0..6 {
            assert!(s.push(r(2 * n)) && s.push(r(2 * n + 1)));
            assert_eq!(s.queued(), 2);
            s.drain_actions(|q| got.push(q.agent));
        }
        assert_eq!(got, (0..12).collect::<Vec<_>>());
        assert!(s.tail.load(Ordering::Relaxed) < 10, "wrapped");
    }

    /// The ring wraps around many times without losing or repeating a
    /// request, also when requests are pushed by the drain's callback.
    #[test]
    fn the_queue_wraps_around_and_keeps_what_a_drain_pushes() {
        let s = shared(0, 0, 3);
        let r = |n: u32| ActionRequest {
            agent: n,
            item: ItemIdx(0),
            ticket: Ticket::new(s.id(), n, 0, n),
            op: ActionOp::Cancel,
        };
        let (mut next, mut lost) = (0, 0);
        let push = |next: &mut u32, lost: &mut usize| {
            if s.push(r(*next)) {
                *next += 1;
            } else {
                *lost += 1;
            }
        };
        let mut got = Vec::new();
        for _ in 0..10 {
            push(&mut next, &mut lost);
            // Each request handed out frees its place and pushes one more;
            // those wait for the next drain.
            s.drain_actions(|q| {
                got.push(q.agent);
                push(&mut next, &mut lost);
            });
            assert!(s.queued() > 0);
        }
        s.drain_actions(|q| got.push(q.agent));
        assert_eq!(got, (0..next).collect::<Vec<_>>());
        assert!(next > 20 && lost > 0, "{next} {lost}");
        assert_eq!((s.queued(), s.lost_requests()), (0, lost));
    }
}
