//! Snapshots of a whole crowd: its shared state and every memory bound to
//! it, saved and loaded in one call.

use alloc::vec::Vec;
use core::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::ser::{self as ser, SerializeStruct, Serializer};

use super::memory::{MemoryBody, Parsed as MemoryParsed};
use super::shared::{Parsed as SharedParsed, SharedBody};
use super::{Body, Fault, Fields, RestoreError, SnapshotError, read_struct};
use crate::memory::AgentMemory;
use crate::memory::shared::TreeShared;
use crate::tree::{NO_SLOT, Tree};

const FIELDS: &[&str] = &["shared", "memories"];

/// A crowd as serde writes it: its shared state's snapshot and, in order,
/// the snapshot of every memory bound to it. Made by
/// [`TreeShared::snapshot_crowd`], restored by [`TreeShared::restore_crowd`].
pub struct CrowdSnapshot<'c, A: 'static, const L: usize, const S: usize, const N: usize> {
    shared: &'c TreeShared,
    memories: &'c [AgentMemory<A, L, S, N>],
    now: f64,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for CrowdSnapshot<'_, A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrowdSnapshot")
            .field("shared", self.shared)
            .field("memories", &self.memories.len())
            .field("now", &self.now)
            .finish()
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> ser::Serialize
    for CrowdSnapshot<'_, A, L, S, N>
{
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let given = self.memories.len();
        if let Some(index) = self.memories.iter().position(|m| !bound_to(m, self.shared)) {
            return Err(ser::Error::custom(SnapshotError::NotBound { index }));
        }
        let bound = self.shared.memories();
        if bound != given {
            return Err(ser::Error::custom(SnapshotError::MemoriesBound {
                bound,
                given,
            }));
        }
        let mut st = s.serialize_struct("Crowd", FIELDS.len())?;
        st.serialize_field("shared", &self.shared.snapshot(self.now))?;
        st.serialize_field("memories", &Memories(self.memories, self.now))?;
        st.end()
    }
}

/// The memories of a crowd snapshot, as a sequence.
struct Memories<'c, A: 'static, const L: usize, const S: usize, const N: usize>(
    &'c [AgentMemory<A, L, S, N>],
    f64,
);

impl<A: 'static, const L: usize, const S: usize, const N: usize> ser::Serialize
    for Memories<'_, A, L, S, N>
{
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        s.collect_seq(self.0.iter().map(|m| m.snapshot(self.1)))
    }
}

/// Whether `memory` is bound to `shared`.
fn bound_to<A: 'static, const L: usize, const S: usize, const N: usize>(
    memory: &AgentMemory<A, L, S, N>,
    shared: &TreeShared,
) -> bool {
    memory
        .shared
        .as_deref()
        .is_some_and(|m| core::ptr::eq(m, shared))
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl TreeShared {
    /// A snapshot of the whole crowd taken at clock reading `now`: this
    /// shared state and, in their order, the `memories` bound to it (all
    /// of them). Restore it with [`restore_crowd`](Self::restore_crowd).
    /// Take it between crowd ticks.
    ///
    /// Serializing it fails, with the message of a
    /// [`SnapshotError::NotBound`], when one of `memories` is not bound to
    /// this shared state, and of a [`SnapshotError::MemoriesBound`] when
    /// other memories are bound to it too: the save would not load.
    pub fn snapshot_crowd<'c, A: 'static, const L: usize, const S: usize, const N: usize>(
        &'c self,
        memories: &'c [AgentMemory<A, L, S, N>],
        now: f64,
    ) -> CrowdSnapshot<'c, A, L, S, N> {
        CrowdSnapshot {
            shared: self,
            memories,
            now,
        }
    }

    /// Loads a crowd snapshot ([`snapshot_crowd`](Self::snapshot_crowd))
    /// read from `d` into this shared state and `memories`, every memory
    /// bound to it, the saved memory `i` into `memories[i]`, moving every
    /// time to the clock reading `now`. This is how a save is loaded into
    /// a crowd that is running, and it works as well for a crowd made
    /// afresh for the load (with [`Tree::new_memory_in`]).
    ///
    /// The result is the state a restore into fresh values leaves, whatever
    /// the crowd held before, however often it is loaded: gate counts and
    /// role places equal the agents inside, counted before any agent ticks
    /// again. What the memories held is replaced, not deactivated: no
    /// `deactivate` runs and no deferred action is cancelled (the game
    /// loads its own state from the same save). The crowd takes a new
    /// [`id`](Self::id); tickets the game kept from before the save are
    /// [adopted](Self::adopt_ticket) into it.
    ///
    /// Load between crowd ticks: no memory of the crowd may be made,
    /// ticked or dropped on another thread while the load runs (it counts
    /// the crowd's places afresh). The memories' former block values are
    /// dropped after every memory is installed and counted, so a `Drop`
    /// that panics leaves the crowd loaded.
    ///
    /// # Errors
    /// Everything is read and checked before anything changes; on an error
    /// the shared state and every memory are left as they were.
    /// [`SnapshotError::NotBound`] when a memory given is not bound to this
    /// shared state; [`SnapshotError::MemoriesBound`] when other memories
    /// are bound to it too (an agent made after the save: drop its memory
    /// first, or give it); [`SnapshotError::Count`] when the save holds
    /// another number of memories than `memories`;
    /// [`SnapshotError::Full`] when the saved memories together are more
    /// inside a gated or group-role decider than it holds (an edited
    /// save); [`SnapshotError::BadValue`] for a saved deferred action or
    /// queued request whose serial the saved crowd never issued; then
    /// every error of
    /// [`restore`](Self::restore) and
    /// [`AgentMemory::restore`] (a memory's error names no index: the
    /// format's position, where it has one, does).
    ///
    /// # Panics
    /// If this shared state was made for another tree: of another
    /// structure, or of another table of tunables.
    pub fn restore_crowd<
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
        memories: &mut [AgentMemory<A, L, S, N>],
        d: D,
    ) -> Result<(), RestoreError<D::Error>> {
        self.check_tree(tree);
        let given = memories.len();
        if let Some(index) = memories.iter().position(|m| !bound_to(m, self)) {
            return Err(RestoreError::Snapshot(SnapshotError::NotBound { index }));
        }
        let bound = self.memories();
        if bound != given {
            return Err(RestoreError::Snapshot(SnapshotError::MemoriesBound {
                bound,
                given,
            }));
        }
        let fault = Fault::default();
        let read = read_struct(
            d,
            "Crowd",
            FIELDS,
            CrowdBody {
                shared: self.body(tree, now, &fault),
                memories: &*memories,
                now,
                fault: &fault,
            },
        );
        let (shared, parsed) = fault.finish(read)?;
        for (memory, p) in memories.iter().zip(&parsed) {
            p.check_crowd(memory.tree, shared.crowd)
                .and_then(|()| shared.check_serials(p.serials(memory.tree)))
                .map_err(RestoreError::Snapshot)?;
        }
        check_limits(tree, &parsed).map_err(RestoreError::Snapshot)?;
        // Installed: the shared state first (a new id, counts emptied),
        // then each memory, which counts what it holds under that id. The
        // values the memories held are dropped only then: a `Drop` that
        // panics finds every memory installed and counted.
        self.install(shared);
        let replaced: Vec<_> = memories
            .iter_mut()
            .zip(parsed)
            .map(|(memory, p)| memory.install(p))
            .collect();
        for (memory, r) in memories.iter_mut().zip(replaced) {
            memory.finish(r);
        }
        Ok(())
    }
}

/// Checks that the memories of a crowd snapshot, together, are not more
/// inside any gated or group-role decider than it holds.
fn check_limits<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    parsed: &[MemoryParsed<A, L, S, N>],
) -> Result<(), SnapshotError> {
    let mut inside = alloc::vec![0u32; tree.items.len()];
    for item in parsed.iter().flat_map(|p| p.active_items()) {
        inside[item as usize] += 1;
    }
    for (it, &n) in tree.items.iter().zip(&inside) {
        let sync = it.decider.pre.sync;
        let limit = if it.gate != NO_SLOT {
            u32::from(it.decider.tuned.gate_most(sync.gate))
        } else if it.role != NO_SLOT {
            u32::from(sync.together)
        } else {
            continue;
        };
        if n > limit {
            return Err(SnapshotError::Full {
                decider: it.decider.name,
                limit,
            });
        }
    }
    Ok(())
}

/// Reads a crowd snapshot.
struct CrowdBody<'f, 'm, A: 'static, const L: usize, const S: usize, const N: usize> {
    shared: SharedBody<'f, A, L, S, N>,
    memories: &'m [AgentMemory<A, L, S, N>],
    now: f64,
    fault: &'f Fault,
}

type Read<A, const L: usize, const S: usize, const N: usize> =
    (SharedParsed, Vec<MemoryParsed<A, L, S, N>>);

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> Body<'de>
    for CrowdBody<'_, '_, A, L, S, N>
{
    type Value = Read<A, L, S, N>;

    fn read<F: Fields<'de>>(self, f: &mut F) -> Result<Self::Value, F::Error> {
        let shared = f.field_seed(
            "shared",
            Struct("TreeShared", super::shared::FIELDS, self.shared),
        )?;
        let memories = f.field_seed(
            "memories",
            MemoriesSeed {
                memories: self.memories,
                now: self.now,
                fault: self.fault,
            },
        )?;
        Ok((shared, memories))
    }
}

/// A struct read through [`read_struct`] as a field's value.
struct Struct<B>(&'static str, &'static [&'static str], B);

impl<'de, B: Body<'de>> DeserializeSeed<'de> for Struct<B> {
    type Value = B::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<B::Value, D::Error> {
        read_struct(d, self.0, self.1, self.2)
    }
}

/// The saved memories, each read for the memory it is restored into.
struct MemoriesSeed<'f, 'm, A: 'static, const L: usize, const S: usize, const N: usize> {
    memories: &'m [AgentMemory<A, L, S, N>],
    now: f64,
    fault: &'f Fault,
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> DeserializeSeed<'de>
    for MemoriesSeed<'_, '_, A, L, S, N>
{
    type Value = Vec<MemoryParsed<A, L, S, N>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> Visitor<'de>
    for MemoriesSeed<'_, '_, A, L, S, N>
{
    type Value = Vec<MemoryParsed<A, L, S, N>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of {} memory snapshots", self.memories.len())
    }

    fn visit_seq<Q: SeqAccess<'de>>(self, mut seq: Q) -> Result<Self::Value, Q::Error> {
        let expected = self.memories.len();
        let mut parsed = Vec::with_capacity(expected);
        for memory in self.memories {
            let body: MemoryBody<'_, A, L, S, N> = memory.body(self.now, self.fault);
            match seq.next_element_seed(Struct("AgentMemory", super::memory::FIELDS, body))? {
                Some(p) => parsed.push(p),
                None => break,
            }
        }
        let mut found = parsed.len();
        if found == expected {
            while seq.next_element::<IgnoredAny>()?.is_some() {
                found += 1;
            }
        }
        if found != expected {
            return Err(self.fault.raise(SnapshotError::Count {
                what: "memories",
                found,
                expected,
            }));
        }
        Ok(parsed)
    }
}
