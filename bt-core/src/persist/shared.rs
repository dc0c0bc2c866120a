//! Snapshots of a crowd's shared state.

use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::Ordering;

use serde::de::Deserializer;
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::{
    Body, Fault, Fields, Header, RestoreError, SnapshotError, read_struct, time_in, time_out,
};
use crate::decl::tune::TuneValue;
use crate::decl::{Action, ItemIdx};
use crate::memory::shared::{self as sync, ActionOp, ActionRequest, AtomicU64, Ticket, TreeShared};
use crate::tree::{NO_SLOT, Tree};
use core::marker::PhantomData;

/// A crowd's shared state as serde writes it: made by
/// [`TreeShared::snapshot`], restored by [`TreeShared::restore`].
pub struct SharedSnapshot<'s> {
    shared: &'s TreeShared,
    header: Header,
    now: f64,
}

impl fmt::Debug for SharedSnapshot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSnapshot")
            .field("shared", self.shared)
            .field("now", &self.now)
            .finish()
    }
}

/// The field names of a shared-state snapshot.
pub(super) const FIELDS: &[&str] = &[
    "version",
    "tree",
    "items",
    "fingerprint",
    "saved_at",
    "cooldowns",
    "role_generations",
    "crowd",
    "launches",
    "queue",
    "lost",
    "tuned",
];

/// A tunable's value in effect, as saved: by name, so that a save names
/// what it changed.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TunedSnap {
    name: alloc::string::String,
    value: TuneValue,
}

/// A ticket as saved: the crowd it was issued in (the saving crowd's id),
/// the agent id of its launch, the memory slot and the crowd-wide serial.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TicketSnap {
    crowd: u32,
    agent: u32,
    slot: u16,
    serial: u32,
}

fn ticket_out(t: Ticket) -> TicketSnap {
    TicketSnap {
        crowd: t.crowd(),
        agent: t.agent(),
        slot: t.slot() as u16,
        serial: t.serial(),
    }
}

/// A saved ticket of the crowd `from`, as a ticket of the crowd `into`
/// (see [`TreeShared::adopt_ticket`]).
fn ticket_in(t: TicketSnap, from: u32, into: u32) -> Result<Ticket, SnapshotError> {
    if t.crowd != from {
        return Err(SnapshotError::BadValue {
            what: "queued request's crowd",
        });
    }
    if t.serial == 0 || t.serial > sync::SERIAL_MAX {
        return Err(SnapshotError::BadValue {
            what: "queued request's ticket serial",
        });
    }
    Ok(Ticket::new(into, t.agent, t.slot, t.serial))
}

/// A queued deferred-action request as saved (its agent is its ticket's).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestSnap {
    item: u16,
    ticket: TicketSnap,
    /// The action of a launch; `None` for a cancellation.
    launch: Option<(u32, u64)>,
}

fn request_out(r: &ActionRequest) -> RequestSnap {
    RequestSnap {
        item: r.item.0,
        ticket: ticket_out(r.ticket),
        launch: match r.op {
            ActionOp::Launch(a) => Some((a.code, a.arg)),
            ActionOp::Cancel => None,
        },
    }
}

/// A saved request of the crowd `from`, checked against the tree's items,
/// as a request of the crowd `into`.
fn request_in<A: 'static>(
    r: &RequestSnap,
    items: &[crate::tree::Item<A>],
    (from, into): (u32, u32),
) -> Result<ActionRequest, SnapshotError> {
    let Some(item) = items.get(r.item as usize) else {
        return Err(SnapshotError::OutOfRange {
            what: "queued request's item",
            index: u64::from(r.item),
            len: items.len(),
        });
    };
    if item.action == NO_SLOT || item.action != r.ticket.slot {
        return Err(SnapshotError::BadValue {
            what: "queued request's ticket slot",
        });
    }
    let ticket = ticket_in(r.ticket, from, into)?;
    Ok(ActionRequest {
        agent: ticket.agent(),
        item: ItemIdx(r.item),
        ticket,
        op: match r.launch {
            Some((code, arg)) => ActionOp::Launch(Action::new(code, arg)),
            None => ActionOp::Cancel,
        },
    })
}

impl Serialize for SharedSnapshot<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let (_, cooldowns, roles) = self.shared.words();
        let mut queue = Vec::with_capacity(self.shared.queued());
        self.shared.peek_actions(|r| queue.push(request_out(&r)));
        let fields = FIELDS.len() - usize::from(self.shared.tunables().is_none());
        let mut st = s.serialize_struct("TreeShared", fields)?;
        st.serialize_field("version", &super::SNAPSHOT_VERSION)?;
        st.serialize_field("tree", self.header.tree)?;
        st.serialize_field("items", &(self.header.items as u64))?;
        st.serialize_field("fingerprint", &self.header.fingerprint)?;
        st.serialize_field("saved_at", &self.now)?;
        let load64 = |w: &AtomicU64| w.load(Ordering::Acquire);
        st.serialize_field(
            "cooldowns",
            &cooldowns
                .iter()
                .map(|c| time_out(f64::from_bits(load64(c))))
                .collect::<Vec<_>>(),
        )?;
        // Gate counts and role places are not saved: they are what the
        // memories hold, and are counted again as they are restored.
        st.serialize_field(
            "role_generations",
            &roles
                .iter()
                .map(|r| (load64(r) >> 32) as u32)
                .collect::<Vec<_>>(),
        )?;
        st.serialize_field("crowd", &self.shared.id())?;
        st.serialize_field("launches", &self.shared.launches())?;
        st.serialize_field("queue", &queue)?;
        st.serialize_field("lost", &(self.shared.lost_requests() as u64))?;
        // Only a tree with tunables writes them: the saves of the others
        // are as they were.
        if let Some(table) = self.shared.tunables() {
            let tuned: Vec<TunedSnap> = (table.decls().iter().enumerate())
                .map(|(i, d)| TunedSnap {
                    name: d.name.into(),
                    value: self.shared.tuned_value(i),
                })
                .collect();
            st.serialize_field("tuned", &tuned)?;
        }
        st.end()
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl TreeShared {
    /// A snapshot of this shared state taken at clock reading `now`, named
    /// by the tree it was made for (its name, item count and structural
    /// [`fingerprint`](Self::fingerprint)). It holds the crowd's [`id`](Self::id)
    /// and launch count, so that a restored crowd goes on issuing unique
    /// tickets. Take it between crowd ticks: requests queued while it is
    /// taken may be missed. See [the `persist` module](crate::persist).
    pub fn snapshot(&self, now: f64) -> SharedSnapshot<'_> {
        SharedSnapshot {
            shared: self,
            header: Header {
                tree: self.tree_name(),
                items: self.items(),
                fingerprint: self.fingerprint(),
            },
            now,
        }
    }

    /// Replaces this shared state (cooldowns, role generations, the queue,
    /// its lost count and the crowd's launch count) with a snapshot read
    /// from `d`, moving its cooldown stamps to the clock reading `now`.
    /// `tree` is the tree it was made for: the snapshot's counts and
    /// requests are checked against it.
    ///
    /// This is the first half of a load into fresh values: restore the
    /// shared state of a crowd that has no memory yet, then make each
    /// memory with [`Tree::new_memory_in`](crate::Tree::new_memory_in) and
    /// [restore](crate::AgentMemory::restore) it. A crowd that has memories
    /// (a running game) is loaded with [`restore_crowd`](Self::restore_crowd),
    /// which restores the shared state and every memory bound to it in one
    /// call: restored alone, the shared state would count the agents
    /// inside its gates and roles wrongly until every memory was restored.
    ///
    /// The crowd takes a new [`id`](Self::id), as a crowd made afresh for
    /// the load would: the restored queue's requests and the pending
    /// launches of the memories restored into it carry it in their tickets,
    /// and complete as tickets of this crowd. Serials go on from the saved
    /// launch count, so no ticket is issued twice. A ticket the game kept
    /// from before the save names the saved crowd:
    /// [`adopt_ticket`](Self::adopt_ticket) makes it one of this crowd;
    /// without that it completes nothing.
    ///
    /// # Errors
    /// [`SnapshotError::MemoriesBound`] when memories are bound to this
    /// shared state ([`memories`](Self::memories) is not 0);
    /// [`RestoreError::Format`] when `d` cannot decode a snapshot;
    /// [`RestoreError::Snapshot`] when it is of another format version,
    /// tree or structure, has more queued requests than this queue holds,
    /// a request for an item out of range, or the same ticket queued twice.
    /// The shared state is left unchanged then.
    ///
    /// # Panics
    /// If this shared state was made for another tree: of another
    /// structure, or of another table of tunables.
    pub fn restore<
        'de,
        D: Deserializer<'de>,
        A: 'static,
        const L: usize,
        const S: usize,
        const N: usize,
    >(
        &self,
        tree: &'static Tree<A, L, S, N>,
        now: f64,
        d: D,
    ) -> Result<(), RestoreError<D::Error>> {
        self.check_tree(tree);
        let bound = self.memories();
        if bound != 0 {
            return Err(RestoreError::Snapshot(SnapshotError::MemoriesBound {
                bound,
                given: 0,
            }));
        }
        let fault = Fault::default();
        let parsed = read_struct(d, "TreeShared", FIELDS, self.body(tree, now, &fault));
        let p = fault.finish(parsed)?;
        self.install(p);
        Ok(())
    }

    /// Panics if this shared state was not made for a tree of `tree`'s
    /// structure and table of tunables.
    pub(super) fn check_tree<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &'static Tree<A, L, S, N>,
    ) {
        assert!(
            self.fits(tree),
            "tree `{}`: the shared state was made for tree `{}`",
            tree.name,
            self.tree_name()
        );
        self.check_tunables(tree);
    }

    /// What reads a snapshot of this shared state.
    pub(super) fn body<'f, A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &'static Tree<A, L, S, N>,
        now: f64,
        fault: &'f Fault,
    ) -> SharedBody<'f, A, L, S, N> {
        SharedBody {
            tree,
            into: self.id(),
            capacity: self.action_capacity(),
            now,
            fault,
        }
    }

    /// Installs a checked snapshot: a new id, empty gates and role places
    /// (the memories restored with it count theirs), the cooldowns and
    /// the queue.
    pub(super) fn install(&self, p: Parsed) {
        self.renew(p.crowd, p.launches, &p.generations);
        let (_, cooldowns, _) = self.words();
        for (w, &v) in cooldowns.iter().zip(&p.cooldowns) {
            w.store(v, Ordering::Release);
        }
        // The queue keeps no crowd: it names this crowd's id when read.
        self.replace_queue(&p.queue, p.lost, p.launches);
        self.restore_tuned(&p.tuned);
    }
}

/// A checked shared-state snapshot, not yet installed.
pub(super) struct Parsed {
    /// The tunables saved: each one's place and bits.
    tuned: Vec<(usize, u64)>,
    cooldowns: Vec<u64>,
    generations: Vec<u32>,
    queue: Vec<ActionRequest>,
    lost: usize,
    launches: u32,
    /// The id of the crowd it was saved from.
    pub(super) crowd: u32,
}

impl Parsed {
    /// Checks that the crowd saved issued every serial of `serials` (those
    /// of a memory saved with it): a later one would be issued again.
    pub(super) fn check_serials(
        &self,
        mut serials: impl Iterator<Item = u32>,
    ) -> Result<(), SnapshotError> {
        if serials.any(|serial| !sync::issued(self.launches, serial)) {
            return Err(SnapshotError::BadValue {
                what: "deferred-action serial",
            });
        }
        Ok(())
    }
}

/// Reads a shared-state snapshot for [`TreeShared::restore`].
pub(super) struct SharedBody<'f, A: 'static, const L: usize, const S: usize, const N: usize> {
    tree: &'static Tree<A, L, S, N>,
    /// The id of the crowd restored into.
    into: u32,
    capacity: usize,
    now: f64,
    fault: &'f Fault,
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> Body<'de>
    for SharedBody<'_, A, L, S, N>
{
    type Value = Parsed;

    fn read<F: Fields<'de>>(self, f: &mut F) -> Result<Parsed, F::Error> {
        let (tree, fault) = (self.tree, self.fault);
        let shape = tree.shape;
        let raise = |e| fault.raise::<F::Error>(e);
        Header {
            tree: tree.name,
            items: tree.items.len(),
            fingerprint: shape.fingerprint,
        }
        .check(f, fault)?;
        let saved_at: f64 = f.field("saved_at")?;
        if !saved_at.is_finite() || !self.now.is_finite() {
            return Err(raise(SnapshotError::BadValue {
                what: "clock reading",
            }));
        }
        let shift = self.now - saved_at;
        let cooldowns: Vec<Option<f64>> = f.field("cooldowns")?;
        super::memory::count(&cooldowns, shape.cooldowns, "cooldowns").map_err(raise)?;
        let cooldowns = cooldowns
            .iter()
            .map(|&c| time_in(c, shift, "cooldown stamp").map(f64::to_bits))
            .collect::<Result<Vec<_>, _>>()
            .map_err(raise)?;
        let generations: Vec<u32> = f.field("role_generations")?;
        super::memory::count(&generations, shape.roles, "group roles").map_err(raise)?;
        let crowd: u32 = f.field("crowd")?;
        let launches: u32 = f.field("launches")?;
        if crowd == 0 {
            return Err(raise(SnapshotError::BadValue { what: "crowd id" }));
        }
        if launches & !sync::LAUNCHES_WRAPPED >= sync::SERIAL_MAX {
            return Err(raise(SnapshotError::BadValue {
                what: "launch count",
            }));
        }
        let saved: Vec<RequestSnap> = f.field("queue")?;
        if saved.len() > self.capacity {
            return Err(raise(SnapshotError::Count {
                what: "queued deferred-action requests",
                found: saved.len(),
                expected: self.capacity,
            }));
        }
        let queue = saved
            .iter()
            .map(|r| request_in(r, tree.items, (crowd, self.into)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(raise)?;
        // A queued request names a launch the crowd made: a later serial
        // would be issued again.
        if queue
            .iter()
            .any(|r| !sync::issued(launches, r.ticket.serial()))
        {
            return Err(raise(SnapshotError::BadValue {
                what: "queued request's ticket serial",
            }));
        }
        // A request is one agent's launch or cancel of one ticket: sorted,
        // a repeated one sits beside its twin.
        let mut keys: Vec<_> = queue
            .iter()
            .map(|r| {
                let launch = matches!(r.op, ActionOp::Launch(_));
                (r.agent, r.ticket.slot(), r.ticket.serial(), launch)
            })
            .collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            let (agent, slot, serial, _) = w[0];
            return Err(raise(SnapshotError::DuplicateTicket {
                ticket: Ticket::new(crowd, agent, slot as u16, serial),
            }));
        }
        let lost: u64 = f.field("lost")?;
        // A save of the tree before it had tunables has none: the
        // defaults then.
        let mut tuned = Vec::new();
        if let Some(table) = tree.tunables
            && let Some(saved) = f.optional_field_seed("tuned", PhantomData::<Vec<TunedSnap>>)?
        {
            for s in saved {
                let bits = crate::decl::tune::checked_bits(tree.name, table, &s.name, s.value)
                    .map_err(|e| raise(SnapshotError::Tuning(e)))?;
                tuned.push(bits);
            }
        }
        Ok(Parsed {
            tuned,
            cooldowns,
            generations,
            queue,
            lost: usize::try_from(lost).unwrap_or(usize::MAX),
            launches,
            crowd,
        })
    }
}
