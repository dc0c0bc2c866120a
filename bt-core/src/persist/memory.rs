//! Snapshots of one agent's memory.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::Deserializer;
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::blocks::{BlockOut, BlocksSeed};
use super::{
    Body, Fault, Fields, Header, RestoreError, SnapshotError, first_change, read_struct, time_in,
    time_out,
};
use crate::decl::{ActionState, Policy};
use crate::memory::shared as sync;
use crate::memory::{AgentMemory, Level};
use crate::raw::Blocks;
use crate::tree::{Has, NO_PARENT, NO_SLOT, Tree};

/// An agent's memory as serde writes it: made by
/// [`AgentMemory::snapshot`], restored by [`AgentMemory::restore`]. See
/// [the module](crate::persist) for what it holds.
pub struct MemorySnapshot<'m, A: 'static, const L: usize, const S: usize, const N: usize> {
    memory: &'m AgentMemory<A, L, S, N>,
    now: f64,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for MemorySnapshot<'_, A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySnapshot")
            .field("memory", self.memory)
            .field("now", &self.now)
            .finish()
    }
}

/// The field names of a memory snapshot.
pub(super) const FIELDS: &[&str] = &[
    "version",
    "tree",
    "items",
    "fingerprint",
    "saved_at",
    "crowd",
    "rng",
    "timers",
    "rounds",
    "actions",
    "path",
    "blocks",
];

/// One level of the active path.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelSnap<Name = String> {
    /// The decider's name: checks the item index.
    decider: Name,
    item: u16,
    since: f64,
    mask: u64,
    redecides: u16,
    cursor: u8,
}

/// One deferred-action slot.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionSnap {
    agent: u32,
    serial: u32,
    /// 0 none, 1 pending, 2 succeeded, 3 failed.
    state: u8,
}

/// A deferred-action slot as saved.
fn action_out(slot: u64) -> ActionSnap {
    let state = match sync::action_state(slot) {
        ActionState::None => 0,
        ActionState::Pending => 1,
        ActionState::Succeeded => 2,
        ActionState::Failed => 3,
    };
    ActionSnap {
        agent: sync::action_agent(slot),
        serial: sync::action_serial(slot),
        state,
    }
}

/// A saved deferred-action slot, checked.
fn action_in(a: &ActionSnap) -> Result<u64, SnapshotError> {
    let state = match a.state {
        0 => ActionState::None,
        1 => ActionState::Pending,
        2 => ActionState::Succeeded,
        3 => ActionState::Failed,
        _ => {
            return Err(SnapshotError::BadValue {
                what: "deferred-action state",
            });
        }
    };
    if a.serial > sync::SERIAL_MAX {
        return Err(SnapshotError::BadValue {
            what: "deferred-action serial",
        });
    }
    Ok(sync::action_slot(a.agent, a.serial, state))
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Serialize
    for MemorySnapshot<'_, A, L, S, N>
{
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let m = self.memory;
        let tree = m.tree;
        let shape = tree.shape;
        let depth = m.depth();
        let actions = shape.action_slots();
        let mut st = s.serialize_struct("AgentMemory", FIELDS.len())?;
        st.serialize_field("version", &super::SNAPSHOT_VERSION)?;
        st.serialize_field("tree", tree.name)?;
        st.serialize_field("items", &(tree.items.len() as u64))?;
        st.serialize_field("fingerprint", &shape.fingerprint)?;
        st.serialize_field("saved_at", &self.now)?;
        st.serialize_field(
            "crowd",
            &m.shared.as_deref().map_or(0, sync::TreeShared::id),
        )?;
        st.serialize_field("rng", &m.rng)?;
        st.serialize_field(
            "timers",
            &Seq(|| {
                m.slots[..shape.timers]
                    .iter()
                    .map(|&t| time_out(f64::from_bits(t)))
            }),
        )?;
        st.serialize_field("rounds", &&m.slots[shape.timers..actions.start])?;
        st.serialize_field(
            "actions",
            &Seq(|| m.slots[actions.clone()].iter().map(|&a| action_out(a))),
        )?;
        st.serialize_field(
            "path",
            &Seq(|| {
                m.levels[..depth].iter().map(|l| LevelSnap {
                    decider: tree.items[l.item as usize].decider.name,
                    item: l.item,
                    since: l.since,
                    mask: l.mask,
                    redecides: l.redecides,
                    cursor: l.cursor,
                })
            }),
        )?;
        st.serialize_field(
            "blocks",
            &Seq(|| {
                (0..depth).map(|k| match tree.items[m.levels[k].item as usize].behavior {
                    None => BlockOut::None,
                    Some(b) => match m.blocks.saved(k) {
                        Some(v) => BlockOut::Kept(v),
                        None if b.memory.size == 0 => BlockOut::None,
                        None => BlockOut::Dropped,
                    },
                })
            }),
        )?;
        st.end()
    }
}

/// A sequence written from an iterator made afresh by the closure.
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: ExactSizeIterator,
    I::Item: Serialize,
{
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        s.collect_seq((self.0)())
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<A: 'static, const L: usize, const S: usize, const N: usize> AgentMemory<A, L, S, N> {
    /// A snapshot of this memory taken at clock reading `now`, for any
    /// serde serializer: compact (postcard, bincode) or for humans (JSON).
    /// See [the module](crate::persist) for what it holds.
    pub fn snapshot(&self, now: f64) -> MemorySnapshot<'_, A, L, S, N> {
        MemorySnapshot { memory: self, now }
    }

    /// Replaces this memory's state with a snapshot read from `d`, moving
    /// its times to the clock reading `now` (see [the module](crate::persist)).
    /// The memory keeps its tree and its [`TreeShared`](crate::TreeShared)
    /// binding.
    ///
    /// What the memory held before is replaced, not deactivated: no
    /// `deactivate` runs and no deferred action is cancelled. Its gate
    /// slots and role places are given back to the crowd's counts, and
    /// what the snapshot holds (the gate slots and role places of its
    /// active path, its lobby places) is counted in, so the counts stay
    /// equal to the agents inside: a snapshot whose path enters a gated or
    /// group-role decider that the crowd's other agents fill now is
    /// refused. To load a save into a whole crowd that is running, use
    /// [`TreeShared::restore_crowd`](crate::TreeShared::restore_crowd).
    ///
    /// A launch the snapshot holds pending keeps its serial; a snapshot
    /// taken after the crowd's save holds a launch that save does not
    /// know, whose ticket [`adopt_ticket`](crate::TreeShared::adopt_ticket)
    /// refuses (`pending_ticket` gives the restored crowd's ticket).
    ///
    /// # Errors
    /// [`RestoreError::Format`] when `d` cannot decode a snapshot;
    /// [`RestoreError::Snapshot`] when it is of another format version,
    /// tree or structure, or holds a value no memory of this tree can have
    /// (an index out of range, a broken path, a memory block its behavior
    /// does not persist); [`SnapshotError::OtherCrowd`] when it has a
    /// pending deferred action and the crowd's shared state was not
    /// restored from a snapshot of the crowd that launched it (or the
    /// snapshot names no crowd); [`SnapshotError::Full`] when a gated or
    /// group-role decider of its path has no room for the agent. The
    /// memory and the crowd are left unchanged then.
    pub fn restore<'de, D: Deserializer<'de>>(
        &mut self,
        now: f64,
        d: D,
    ) -> Result<(), RestoreError<D::Error>> {
        let fault = Fault::default();
        let parsed = read_struct(d, "AgentMemory", FIELDS, self.body(now, &fault));
        let parsed = fault.finish(parsed)?;
        if let Some(shared) = self.shared.as_deref() {
            parsed
                .check_crowd(self.tree, shared.restored_from())
                .map_err(RestoreError::Snapshot)?;
            self.check_room(shared, &parsed)
                .map_err(RestoreError::Snapshot)?;
        }
        let replaced = self.install(parsed);
        self.finish(replaced);
        Ok(())
    }

    /// What reads a snapshot of this memory.
    pub(super) fn body<'f>(&self, now: f64, fault: &'f Fault) -> MemoryBody<'f, A, L, S, N> {
        MemoryBody {
            tree: self.tree,
            now,
            fault,
        }
    }

    /// Checks that the gated and group-role deciders of `p`'s path have
    /// room for this agent in the crowd as it is now, less what the agent
    /// holds there itself.
    fn check_room(
        &self,
        shared: &sync::TreeShared,
        p: &Parsed<A, L, S, N>,
    ) -> Result<(), SnapshotError> {
        let counted = shared.id() == self.joined();
        let holds =
            |item: u16| counted && self.levels[..self.depth()].iter().any(|l| l.item == item);
        for level in &p.levels[..p.keep] {
            let item = &self.tree.items[level.item as usize];
            if !item.is(Has::SYNC) {
                continue;
            }
            let sync = item.decider.pre.sync;
            let gate = item.decider.tuned.gate_most(sync.gate);
            let held = holds(level.item);
            let full = (item.gate != NO_SLOT && !shared.gate_room(item.gate, gate, held))
                || (item.role != NO_SLOT && !shared.role_room(item.role, sync.together, held));
            if full {
                return Err(SnapshotError::Full {
                    decider: item.decider.name,
                    limit: if item.gate != NO_SLOT {
                        u32::from(gate)
                    } else {
                        u32::from(sync.together)
                    },
                });
            }
        }
        Ok(())
    }

    /// Installs a checked snapshot, counting what it holds in the crowd,
    /// without running any code of the game's: the values it replaces, and
    /// those of levels restored inactive, are dropped by
    /// [`finish`](Self::finish), so that a `Drop` that panics finds the
    /// memory, and every memory installed with it, counted.
    pub(super) fn install(&mut self, mut p: Parsed<A, L, S, N>) -> Replaced<A, L, N> {
        // What the memory held is replaced: its gate slots and role places
        // are given back if the crowd still counts them, its pending
        // actions are not cancelled (the load replaces them too).
        if let Some(shared) = self.shared.as_deref()
            && shared.id() == self.joined()
        {
            let items = self.tree.items;
            for level in self.levels[..self.depth()].iter().rev() {
                sync::give_back(shared, &items[level.item as usize]);
            }
            self.leave_lobbies();
        }
        self.set_depth(0);
        core::mem::swap(&mut self.blocks, &mut p.blocks);
        self.levels = p.levels;
        self.slots = p.slots;
        self.rng = p.rng;
        self.set_depth(p.depth);
        // Levels whose blocks were not saved are restored inactive,
        // deepest first; a deferred action they had launched is cancelled.
        let items = self.tree.items;
        while self.depth() > p.keep {
            let k = self.depth() - 1;
            let i = self.levels[k].item;
            if let Some(shared) = self.shared.as_deref() {
                sync::cancel(shared, &items[i as usize], i, &mut self.slots);
            }
            self.set_depth(k);
        }
        // What the snapshot holds is counted in the crowd, and no launch to
        // come gets the serial of one it holds.
        if let Some(shared) = self.shared.as_deref() {
            for &w in &self.slots[self.tree.shape.action_slots()] {
                if sync::action_state(w) != ActionState::None {
                    shared.note_serial(sync::action_serial(w));
                }
            }
            self.count_in();
        }
        Replaced {
            old: p.blocks,
            inactive: p.keep,
        }
    }

    /// Drops what [`install`](Self::install) replaced: the values of the
    /// levels restored inactive, then the memory's former values.
    pub(super) fn finish(&mut self, replaced: Replaced<A, L, N>) {
        let Replaced { old, inactive } = replaced;
        // If a drop here panics, `old` still drops its values as it unwinds.
        self.blocks.release_from(inactive);
        drop(old);
    }
}

/// What [`AgentMemory::install`] replaced, to be dropped.
pub(super) struct Replaced<A: 'static, const L: usize, const N: usize> {
    /// The memory's former block values.
    old: Blocks<A, L, N>,
    /// The first level restored inactive (its value, and those below, are
    /// the snapshot's, not kept).
    inactive: usize,
}

/// A checked snapshot, not yet installed.
pub(super) struct Parsed<A: 'static, const L: usize, const S: usize, const N: usize> {
    /// The id of the crowd the memory was bound to when saved (0: none).
    crowd: u32,
    rng: u64,
    slots: [u64; S],
    levels: [Level; L],
    depth: usize,
    /// The levels restored active: below the first whose block was dropped.
    keep: usize,
    blocks: Blocks<A, L, N>,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Parsed<A, L, S, N> {
    /// The items of the levels restored active.
    pub(super) fn active_items(&self) -> impl Iterator<Item = u16> + '_ {
        self.levels[..self.keep].iter().map(|l| l.item)
    }

    /// The serials of its deferred actions (pending or reported).
    pub(super) fn serials(&self, tree: &Tree<A, L, S, N>) -> impl Iterator<Item = u32> + '_ {
        self.slots[tree.shape.action_slots()]
            .iter()
            .filter(|&&w| sync::action_state(w) != ActionState::None)
            .map(|&w| sync::action_serial(w))
    }

    /// Checks that a pending deferred action it holds was launched in the
    /// crowd `restored_from`, whose state the memory's crowd was restored
    /// from: its ticket names a launch of that crowd.
    pub(super) fn check_crowd(
        &self,
        tree: &Tree<A, L, S, N>,
        restored_from: u32,
    ) -> Result<(), SnapshotError> {
        let pending = self.slots[tree.shape.action_slots()]
            .iter()
            .any(|&w| sync::action_state(w) == ActionState::Pending);
        if pending && (self.crowd == 0 || self.crowd != restored_from) {
            return Err(SnapshotError::OtherCrowd {
                saved: self.crowd,
                restored_from,
            });
        }
        Ok(())
    }
}

/// Reads a memory snapshot for [`AgentMemory::restore`].
pub(super) struct MemoryBody<'f, A: 'static, const L: usize, const S: usize, const N: usize> {
    tree: &'static Tree<A, L, S, N>,
    now: f64,
    fault: &'f Fault,
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> Body<'de>
    for MemoryBody<'_, A, L, S, N>
{
    type Value = Parsed<A, L, S, N>;

    fn read<F: Fields<'de>>(self, f: &mut F) -> Result<Self::Value, F::Error> {
        let (tree, fault) = (self.tree, self.fault);
        let shape = tree.shape;
        let raise = |e| fault.raise::<F::Error>(e);
        let header = Header {
            tree: tree.name,
            items: tree.items.len(),
            fingerprint: shape.fingerprint,
        };
        if let Some(changed) = header.read(f, fault)? {
            return Err(raise(changed_path(tree, f, changed)?));
        }
        let saved_at: f64 = f.field("saved_at")?;
        if !saved_at.is_finite() || !self.now.is_finite() {
            return Err(raise(SnapshotError::BadValue {
                what: "clock reading",
            }));
        }
        let shift = self.now - saved_at;
        let crowd: u32 = f.field("crowd")?;
        let rng: u64 = f.field("rng")?;
        if rng == 0 {
            return Err(raise(SnapshotError::BadValue {
                what: "generator state",
            }));
        }
        let mut slots = [0u64; S];
        let timers: Vec<Option<f64>> = f.field("timers")?;
        count(&timers, shape.timers, "timers").map_err(raise)?;
        for (slot, t) in slots.iter_mut().zip(&timers) {
            *slot = time_in(*t, shift, "timer stamp").map_err(raise)?.to_bits();
        }
        let first_action = shape.first_action_slot();
        let rounds: Vec<u64> = f.field("rounds")?;
        count(
            &rounds,
            first_action - shape.timers,
            "shuffle and role slots",
        )
        .map_err(raise)?;
        slots[shape.timers..first_action].copy_from_slice(&rounds);
        let actions: Vec<ActionSnap> = f.field("actions")?;
        count(&actions, shape.actions, "deferred-action slots").map_err(raise)?;
        for (slot, a) in slots[first_action..].iter_mut().zip(&actions) {
            *slot = action_in(a).map_err(raise)?;
        }
        let path: Vec<LevelSnap> = f.field("path")?;
        let mut levels = [Level::default(); L];
        check_path(tree, &path, shift, &mut levels).map_err(raise)?;
        check_slots(tree, &slots, &levels[..path.len()]).map_err(raise)?;
        let mut blocks = Blocks::new();
        let keep = f.field_seed(
            "blocks",
            BlocksSeed {
                tree,
                levels: &levels[..path.len()],
                blocks: &mut blocks,
                fault,
            },
        )?;
        Ok(Parsed {
            crowd,
            rng,
            slots,
            levels,
            depth: path.len(),
            keep,
            blocks,
        })
    }
}

pub(super) fn count<T>(v: &[T], expected: usize, what: &'static str) -> Result<(), SnapshotError> {
    if v.len() == expected {
        Ok(())
    } else {
        Err(SnapshotError::Count {
            what,
            found: v.len(),
            expected,
        })
    }
}

/// `changed`, the header's verdict, with the first level of the saved path
/// that no longer fits `tree`: reads the fields up to the path unchecked.
fn changed_path<'de, A: 'static, const L: usize, const S: usize, const N: usize, F: Fields<'de>>(
    tree: &Tree<A, L, S, N>,
    f: &mut F,
    mut changed: SnapshotError,
) -> Result<SnapshotError, F::Error> {
    f.field::<f64>("saved_at")?;
    f.field::<u32>("crowd")?;
    f.field::<u64>("rng")?;
    f.field::<Vec<Option<f64>>>("timers")?;
    f.field::<Vec<u64>>("rounds")?;
    f.field::<Vec<ActionSnap>>("actions")?;
    let path: Vec<LevelSnap> = f.field("path")?;
    if let SnapshotError::StructureChanged {
        first_difference, ..
    } = &mut changed
    {
        *first_difference = first_change(
            tree.items,
            path.iter().map(|l| (l.item, l.decider.as_str())),
        )
        .map(alloc::boxed::Box::new);
    }
    Ok(changed)
}

/// Checks the saved path against the tree and fills `levels`.
fn check_path<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    path: &[LevelSnap],
    shift: f64,
    levels: &mut [Level; L],
) -> Result<(), SnapshotError> {
    if path.len() > L {
        return Err(SnapshotError::Count {
            what: "active path levels",
            found: path.len(),
            expected: L,
        });
    }
    let items = tree.items;
    for (k, l) in path.iter().enumerate() {
        let bad = |problem| SnapshotError::BadPath {
            depth: k,
            item: l.item,
            problem,
        };
        let Some(item) = items.get(l.item as usize) else {
            return Err(SnapshotError::OutOfRange {
                what: "active path item",
                index: u64::from(l.item),
                len: items.len(),
            });
        };
        if item.decider.name != l.decider {
            return Err(bad("the decider there has another name"));
        }
        let parent = if k == 0 { NO_PARENT } else { path[k - 1].item };
        if item.parent != parent || item.depth as usize != k {
            return Err(bad("not a child of the level above"));
        }
        if item.is(Has::REFERENCE) {
            // A reference jumps when it is picked and is never active.
            return Err(bad("a reference decider, which is never active"));
        }
        if k + 1 < path.len() && !item.is(Has::GROUP) {
            return Err(bad("a behavior decider above the leaf"));
        }
        if item.is(Has::GROUP) {
            let all = if item.child_count as u32 >= 64 {
                u64::MAX
            } else {
                (1u64 << item.child_count) - 1
            };
            if l.mask & !all != 0 || l.cursor > item.child_count {
                return Err(bad("a redecide mask or cursor past the children"));
            }
        } else if l.mask != 0 || l.cursor != 0 {
            return Err(bad("a redecide mask on a behavior decider"));
        }
        let since = time_in(Some(l.since), shift, "activation time")?;
        levels[k] = Level {
            since,
            mask: l.mask,
            item: l.item,
            redecides: l.redecides,
            cursor: l.cursor,
        };
    }
    Ok(())
}

/// Checks the slots against the tree and the path: shuffle rounds within
/// their groups, and pending actions only on the active path.
fn check_slots<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    slots: &[u64; S],
    path: &[Level],
) -> Result<(), SnapshotError> {
    for item in tree.items {
        if item.policy == Policy::Shuffle && item.is(Has::GROUP) {
            let used = slots[item.shuffle as usize] & 0xFFFF_FFFF;
            if used >> item.child_count != 0 {
                return Err(SnapshotError::BadValue {
                    what: "shuffle round",
                });
            }
        }
    }
    let roles = tree.shape.role_slot(0)..tree.shape.first_action_slot();
    // A role slot: `REGISTERED (bit 40) | TOUCHED (bit 41) | generation`.
    if slots[roles]
        .iter()
        .any(|&w| (w >> 32) & !0b11_0000_0000 != 0)
    {
        return Err(SnapshotError::BadValue {
            what: "group role slot",
        });
    }
    let actions = tree.shape.action_slots();
    for (slot, &word) in slots
        .iter()
        .enumerate()
        .take(actions.end)
        .skip(actions.start)
    {
        if sync::action_state(word) != ActionState::None
            && !path
                .iter()
                .any(|l| tree.items[l.item as usize].action as usize == slot)
        {
            return Err(SnapshotError::BadValue {
                what: "deferred action of an inactive behavior",
            });
        }
    }
    Ok(())
}
