//! Save and restore (the `serde` feature): an agent's [`AgentMemory`], its
//! [`Stimuli`] and a crowd's [`TreeShared`] leave the process through any
//! serde format and come back into the same tree with nothing lost.
//!
//! ```
//! use bt_core::{behavior, decider, group, tree, tick, TickInput};
//!
//! #[derive(Default, serde::Serialize, serde::Deserialize)]
//! struct Steps { taken: u32 }
//!
//! #[derive(Default)]
//! struct Walker { log: Vec<u32> }
//!
//! behavior! { WALK: Walker, memory: Steps, persist,
//!     tick: |w, m, _cx| { m.taken += 1; w.log.push(m.taken); true },
//! }
//! decider! { JUST_WALK: Walker => WALK }
//! tree! { WALKER: Walker = JUST_WALK }
//!
//! let mut walker = Walker::default();
//! let mut memory = WALKER.new_memory(1);
//! for t in 0..3 {
//!     tick(&WALKER, &mut walker, &mut memory, &TickInput::new(f64::from(t), 1.0))?;
//! }
//! // Save at t = 2 ...
//! let json = serde_json::to_string(&memory.snapshot(2.0)).unwrap();
//! // ... and load into a fresh memory, under a clock that starts at 100.
//! let mut restored = WALKER.new_memory(0);
//! restored.restore(100.0, &mut serde_json::Deserializer::from_str(&json)).unwrap();
//! tick(&WALKER, &mut walker, &mut restored, &TickInput::new(101.0, 1.0))?;
//! assert_eq!(walker.log, [1, 2, 3, 4]); // the fourth step, not a new first
//! # Ok::<(), bt_core::TickError>(())
//! ```
//!
//! # What a snapshot holds
//!
//! - An agent's memory ([`AgentMemory::snapshot`]): the active path, each
//!   level by its item index *and* its decider's name, with its
//!   activation time, last redecide mask and count and sequential cursor;
//!   every timer, shuffle round, group-role slot and deferred action (its
//!   agent id, ticket serial and state); the random generator's state; and
//!   the memory block of every active level whose behavior is declared with
//!   `persist` (see [`behavior!`](crate::behavior)).
//! - Stimuli (`Serialize`/`Deserialize`, or [`Stimuli::restore`]): the live
//!   stimuli with payloads, remaining time-outs and whether they were set
//!   since the last update.
//! - A crowd's shared state ([`TreeShared::snapshot`]): cooldown stamps,
//!   the generation of each group role's lobby, the queued deferred-action
//!   requests (each with its whole ticket: crowd, agent id, slot and
//!   serial), the count of lost ones, the crowd's id and its launch count.
//!   Gate counts and role places are not in it: they are what the
//!   memories hold, and are counted again from the memories as they are
//!   restored.
//! - A crowd's schedule ([`Schedule::snapshot`](crate::Schedule::snapshot)):
//!   each agent's rate and last tick time, the frame count, the budget,
//!   and the agents due, each with the frame it has been due since (which
//!   gives their order). Save it beside the crowd's memories; restored
//!   with them, the crowd ticks the agents, frames and `dt` it would have.
//!
//! # Rules
//!
//! - **Identity.** Memory and shared snapshots carry a format version, the
//!   tree's name, item count and structural fingerprint
//!   ([`Shape::fingerprint`](crate::Shape::fingerprint)). They restore only
//!   into a tree with the same three; anything else is a
//!   [`SnapshotError`] naming what differs; for a memory snapshot, also
//!   the first decider of its saved active path that moved or is gone
//!   ([`PathChange`]). There is no migration: a tree whose structure
//!   changed starts its agents afresh.
//! - **Time.** A snapshot is taken at a clock reading `now` and stores it
//!   with the times. Restoring at another `now` moves every time (activation
//!   times, timer stamps, cooldown stamps) by the difference, so a restored
//!   agent continues under the new clock as if no time had passed; restored
//!   at the same `now`, every time is bit for bit what it was. Stimuli hold
//!   only remaining durations and need no clock; a schedule's last tick
//!   times move with the clock like the other times.
//! - **A crowd.** [`TreeShared::snapshot_crowd`](crate::TreeShared::snapshot_crowd)
//!   saves the shared state and every memory bound to it as one value, and
//!   [`TreeShared::restore_crowd`](crate::TreeShared::restore_crowd) loads
//!   it back, the order handled inside. Piece by piece, into fresh values:
//!   the shared state first, while no memory is bound to it, then each
//!   memory made for it.
//! - **Loading in place.** A save is loaded into a crowd that is running
//!   with [`TreeShared::restore_crowd`](crate::TreeShared::restore_crowd),
//!   given every memory bound to the crowd's shared state. The result is
//!   the state a restore into fresh values leaves:
//!   - a restore *replaces* what it finds, it does not deactivate it: no
//!     `deactivate` runs, and no deferred action the replaced state had
//!     pending is cancelled (the game loads its own state from the same
//!     save), so an action the save keeps pending goes on;
//!   - gate counts and role places equal the agents inside, counted
//!     before any agent ticks again, however often the crowd is loaded;
//!   - the crowd takes a new [`id`](crate::TreeShared::id), as a crowd made
//!     for the load would: tickets handed out before the load name the old
//!     id and complete nothing unless [adopted](crate::TreeShared::adopt_ticket),
//!     and no ticket is ever issued twice.
//!
//!   The per-part calls cannot leave a crowd counted wrongly: restoring the
//!   shared state alone while memories are bound to it is refused
//!   ([`SnapshotError::MemoriesBound`]: the memories would hold what the
//!   counts no longer say); so is a crowd load not given every memory
//!   bound (an agent made after the save: drop its memory or give it), or
//!   given another number of memories than the save holds
//!   ([`SnapshotError::Count`]). Restoring one memory alone replaces that
//!   agent's state within the running crowd and keeps the counts exact.
//!   A memory snapshot with a pending deferred action restores only into
//!   a crowd whose shared state was restored from a snapshot of the crowd
//!   that launched it ([`SnapshotError::OtherCrowd`] otherwise): its
//!   ticket would name a launch this crowd never made.
//! - **Memory blocks that are not persisted.** A level whose behavior has a
//!   memory type but no `persist` cannot be rebuilt as it was. That level
//!   and every level below it are restored *inactive*: the level above
//!   decides again on the next tick and activates a child with fresh
//!   blocks, through `activate` as usual. Those levels hold no gate slot
//!   or role place after the restore, and a deferred action they had
//!   launched is cancelled (the request is queued in the memory's crowd).
//!   No `deactivate` runs for them: they never ran in this process. A
//!   behavior whose memory type has no size needs no `persist`.
//! - **Tickets.** A restored crowd's queued requests and the pending
//!   launches of the memories restored into it name the crowd's new id,
//!   and complete there. Serials go on from the saved launch count. A
//!   ticket the game kept from before the save names the saved crowd:
//!   [`TreeShared::adopt_ticket`](crate::TreeShared::adopt_ticket) turns it
//!   into one of the restored crowd. A ticket of any other crowd, or one
//!   the saved crowd issued after the save was taken, is refused with an
//!   [`AdoptError`](crate::AdoptError) and completes nothing. Crowd ids are
//!   drawn afresh in every run, so a save or ticket of another process
//!   names no crowd of this one.
//! - **All or nothing.** A restore reads and checks the whole snapshot
//!   before it changes anything; on an error the memory, stimuli or shared
//!   state is left as it was, and every block value built so far is dropped
//!   exactly once.
//! - **Any key order.** A self-describing format (JSON) may give a
//!   snapshot's fields in any order: a `serde_json::Value` or `jq -S`
//!   sorts them. An unknown or repeated field is refused on its key,
//!   before its value is read: refusing it holds none of it, whatever its
//!   size. (A known field that comes before the one read next is kept,
//!   decoded, until it is read: an array of small numbers takes some 20
//!   times its size in the input then.)
//!
//! Errors come in two kinds ([`RestoreError`]): the format's own (truncated
//! input, a wrong type) and [`SnapshotError`] for a snapshot that decodes
//! but does not fit the tree.
//!
//! [`AgentMemory`]: crate::AgentMemory
//! [`AgentMemory::snapshot`]: crate::AgentMemory::snapshot
//! [`AgentMemory::reset`]: crate::AgentMemory::reset
//! [`Stimuli`]: crate::Stimuli
//! [`Stimuli::restore`]: crate::Stimuli::restore
//! [`TreeShared`]: crate::TreeShared
//! [`TreeShared::snapshot`]: crate::TreeShared::snapshot

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

mod blocks;
mod content;
mod crowd;
mod error;
mod memory;
mod schedule;
mod shared;
mod stimuli;

use content::{Content, ContentDeserializer};

pub use crowd::CrowdSnapshot;
pub(crate) use error::first_change;
pub use error::{PathChange, RestoreError, SnapshotError};
pub use memory::MemorySnapshot;
pub use schedule::ScheduleSnapshot;
pub use shared::SharedSnapshot;

/// The snapshot format version this build writes and reads.
pub const SNAPSHOT_VERSION: u16 = 4;

/// Where a restore keeps the [`SnapshotError`] it raised, so that the
/// caller gets it typed even though serde passes it on as a message.
#[derive(Default)]
pub(crate) struct Fault(RefCell<Option<SnapshotError>>);

impl Fault {
    /// Records `e` and returns it as the format's error.
    pub(crate) fn raise<E: de::Error>(&self, e: SnapshotError) -> E {
        let error = E::custom(&e);
        *self.0.borrow_mut() = Some(e);
        error
    }

    /// The typed error of a failed restore.
    pub(crate) fn finish<T, E>(self, r: Result<T, E>) -> Result<T, RestoreError<E>> {
        r.map_err(|e| match self.0.into_inner() {
            Some(fault) => RestoreError::Snapshot(fault),
            None => RestoreError::Format(e),
        })
    }
}

/// A snapshot's header: what it was taken from.
pub(crate) struct Header {
    pub(crate) tree: &'static str,
    pub(crate) items: usize,
    pub(crate) fingerprint: u64,
}

impl Header {
    /// Reads and checks the header fields, first to last.
    pub(crate) fn check<'de, F: Fields<'de>>(
        &self,
        f: &mut F,
        fault: &Fault,
    ) -> Result<(), F::Error> {
        match self.read(f, fault)? {
            Some(changed) => Err(fault.raise(changed)),
            None => Ok(()),
        }
    }

    /// Reads and checks the header fields, first to last, and returns
    /// rather than raises a [`SnapshotError::StructureChanged`] (without its
    /// detail), so that the caller can read on to find what differs.
    pub(crate) fn read<'de, F: Fields<'de>>(
        &self,
        f: &mut F,
        fault: &Fault,
    ) -> Result<Option<SnapshotError>, F::Error> {
        let version: u16 = f.field("version")?;
        if version != SNAPSHOT_VERSION {
            return Err(fault.raise(SnapshotError::Version {
                found: version,
                supported: SNAPSHOT_VERSION,
            }));
        }
        let tree: String = f.field("tree")?;
        if tree != self.tree {
            return Err(fault.raise(SnapshotError::OtherTree {
                tree: self.tree,
                found: tree,
            }));
        }
        let items: u64 = f.field("items")?;
        let fingerprint: u64 = f.field("fingerprint")?;
        let (what, saved, current) = if items != self.items as u64 {
            ("item count", items, self.items as u64)
        } else if fingerprint != self.fingerprint {
            ("structure", fingerprint, self.fingerprint)
        } else {
            return Ok(None);
        };
        Ok(Some(SnapshotError::StructureChanged {
            tree: self.tree,
            what,
            saved,
            current,
            first_difference: None,
        }))
    }
}

/// A time as a snapshot stores it: `None` for "never" (negative infinity),
/// which not every format can write.
pub(crate) fn time_out(t: f64) -> Option<f64> {
    (t != f64::NEG_INFINITY).then_some(t)
}

/// A stored time moved by `shift`, checked.
pub(crate) fn time_in(
    t: Option<f64>,
    shift: f64,
    what: &'static str,
) -> Result<f64, SnapshotError> {
    match t {
        None => Ok(f64::NEG_INFINITY),
        Some(t) if t.is_finite() && (t + shift).is_finite() => Ok(t + shift),
        Some(_) => Err(SnapshotError::BadValue { what }),
    }
}

/// The fields of a struct being read, from a sequence (compact formats) or
/// a map (self-describing ones, in any key order) alike, in their declared
/// order. Not public API: what bt-core's and its engine crates' snapshot
/// readers share.
#[doc(hidden)]
pub trait Fields<'de> {
    /// The format's error.
    type Error: de::Error;

    /// Reads the next field, which must be `name`.
    fn field<T: de::Deserialize<'de>>(&mut self, name: &'static str) -> Result<T, Self::Error> {
        self.field_seed(name, PhantomData)
    }

    /// Reads the next field, which must be `name`, through `seed`.
    fn field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, Self::Error>;

    /// Reads the next field, `name`, through `seed`, if the struct has it:
    /// `None` when the struct ends before it (a field added at the end of
    /// a struct, missing from what an older build wrote). A sequence ends
    /// where its length says; a format that writes a struct's fields
    /// without one (postcard, bincode) reads on past the struct's end.
    fn optional_field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error>;
}

struct SeqFields<A>(A, usize);

impl<'de, A: SeqAccess<'de>> Fields<'de> for SeqFields<A> {
    type Error = A::Error;

    fn field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, A::Error> {
        let at = self.1;
        self.1 += 1;
        self.0
            .next_element_seed(seed)?
            .ok_or_else(|| de::Error::custom(format_args!("missing field `{name}` (field {at})")))
    }

    fn optional_field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        _name: &'static str,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.1 += 1;
        self.0.next_element_seed(seed)
    }
}

/// The fields of a map, in any key order: a field that comes before it is
/// asked for is kept (as [`Content`]) until it is. A key that is not one of
/// the struct's fields, or that came before, is refused on the key itself,
/// before its value is read: such a value is never held, whatever its size.
struct MapFields<A> {
    map: A,
    names: &'static [&'static str],
    /// The fields whose key came: bit `i` for `names[i]`.
    seen: u64,
    early: Vec<(usize, Content)>,
}

impl<'de, A: MapAccess<'de>> MapFields<A> {
    /// The next key, as an index into `names`: an unknown key or one that
    /// came before is the error.
    fn next_key(&mut self) -> Result<Option<usize>, A::Error> {
        let Some(i) = self.map.next_key_seed(Key(self.names))? else {
            return Ok(None);
        };
        if self.seen & (1 << i) != 0 {
            return Err(de::Error::custom(format_args!(
                "duplicate field `{}`",
                self.names[i]
            )));
        }
        self.seen |= 1 << i;
        Ok(Some(i))
    }
}

impl<'de, A: MapAccess<'de>> Fields<'de> for MapFields<A> {
    type Error = A::Error;

    fn field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, A::Error> {
        self.optional_field_seed(name, seed)?
            .ok_or_else(|| de::Error::missing_field(name))
    }

    fn optional_field_seed<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let want = self.names.iter().position(|n| *n == name);
        debug_assert!(want.is_some(), "field `{name}` is not in the list");
        if let Some(at) = self.early.iter().position(|(i, _)| Some(*i) == want) {
            let (_, kept) = self.early.swap_remove(at);
            return seed
                .deserialize(ContentDeserializer::<A::Error>::new(kept))
                .map(Some);
        }
        loop {
            match self.next_key()? {
                Some(i) if Some(i) == want => return self.map.next_value_seed(seed).map(Some),
                Some(i) => {
                    let kept: Content = self.map.next_value()?;
                    self.early.push((i, kept));
                }
                None => return Ok(None),
            }
        }
    }
}

/// A map key read as the index of a struct's field, without keeping it: an
/// unknown key is the error, named (up to its first 64 characters).
struct Key(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        self.0.iter().position(|n| *n == key).ok_or_else(|| {
            let end = key.char_indices().nth(64).map_or(key.len(), |(at, _)| at);
            let more = if end < key.len() { "…" } else { "" };
            E::custom(format_args!("unknown field `{}{more}`", &key[..end]))
        })
    }

    fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<usize, E> {
        match core::str::from_utf8(key) {
            Ok(key) => self.visit_str(key),
            Err(_) => Err(E::custom("unknown field (not UTF-8)")),
        }
    }
}

/// What a struct's fields make, read by [`read_struct`]. Not public API.
#[doc(hidden)]
pub trait Body<'de> {
    /// The value made.
    type Value;

    /// Reads every field, in order.
    fn read<F: Fields<'de>>(self, f: &mut F) -> Result<Self::Value, F::Error>;
}

/// The body, the struct's name and its field names.
struct StructVisitor<B>(B, &'static str, &'static [&'static str]);

impl<'de, B: Body<'de>> Visitor<'de> for StructVisitor<B> {
    type Value = B::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} snapshot", self.1)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<B::Value, A::Error> {
        self.0.read(&mut SeqFields(seq, 0))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<B::Value, A::Error> {
        let mut fields = MapFields {
            map,
            names: self.2,
            seen: 0,
            early: Vec::new(),
        };
        let value = self.0.read(&mut fields)?;
        // Every field was read: a key still to come is unknown or repeated
        // (the error of `next_key`), and so is a field kept but not read.
        if let Some((i, _)) = fields.early.pop() {
            return Err(de::Error::custom(format_args!(
                "unknown field `{}`",
                fields.names[i]
            )));
        }
        match fields.next_key()? {
            Some(i) => Err(de::Error::custom(format_args!(
                "unknown field `{}`",
                fields.names[i]
            ))),
            None => Ok(value),
        }
    }
}

/// Reads the struct `name` with `fields` (at most 64) from `d` into
/// `body`, which reads them in that order. From a map, a key not in
/// `fields`, or given twice, is refused before its value is read.
///
/// # Panics
/// If `fields` has more than 64 names.
#[doc(hidden)]
pub fn read_struct<'de, D: Deserializer<'de>, B: Body<'de>>(
    d: D,
    name: &'static str,
    fields: &'static [&'static str],
    body: B,
) -> Result<B::Value, D::Error> {
    assert!(fields.len() <= 64, "struct `{name}`: more than 64 fields");
    d.deserialize_struct(name, fields, StructVisitor(body, name, fields))
}

/// What the `persist` key of `behavior!` expands to. Not public API.
#[doc(hidden)]
pub mod private {
    use crate::raw::PersistFns;

    /// A memory type a `persist` behavior `B` can save and restore.
    #[diagnostic::on_unimplemented(
        message = "behavior `{B}` is declared with `persist`, but its memory type `{Self}` cannot be saved",
        label = "`{Self}` must implement `serde::Serialize` and `serde::Deserialize`",
        note = "derive both for `{Self}`, or remove `persist`: a restored agent then activates `{B}` afresh"
    )]
    pub trait PersistMemory<B>: serde::Serialize + serde::de::DeserializeOwned + 'static {}

    impl<B, M: serde::Serialize + serde::de::DeserializeOwned + 'static> PersistMemory<B> for M {}

    /// The save and restore functions of behavior `B`'s memory type `M`.
    pub const fn persist<B, M: PersistMemory<B>>() -> PersistFns {
        PersistFns::of::<M>()
    }
}
