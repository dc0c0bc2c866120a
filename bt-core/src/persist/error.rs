//! What a failed restore says: the format's error, or what in the
//! snapshot does not fit the tree.

use alloc::string::String;
use core::fmt;

use crate::memory::shared::Ticket;

/// Why a snapshot that decoded could not be restored.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Written by another version of the format.
    Version {
        /// The snapshot's version.
        found: u16,
        /// The version this build reads ([`SNAPSHOT_VERSION`](super::SNAPSHOT_VERSION)).
        supported: u16,
    },
    /// Taken from another tree.
    OtherTree {
        /// The tree restored into.
        tree: &'static str,
        /// The tree the snapshot names.
        found: String,
    },
    /// Taken from a tree of the same name whose structure has changed since.
    StructureChanged {
        /// The tree.
        tree: &'static str,
        /// What differs first: `"item count"` or `"structure"` (the
        /// fingerprint: a decider's name, kind, policy, children,
        /// preconditions or behavior).
        what: &'static str,
        /// The saved value (item count, or fingerprint).
        saved: u64,
        /// The tree's value.
        current: u64,
        /// The first level of the snapshot's active path whose decider is
        /// no longer where it was saved; `None` when the snapshot has no
        /// such level (no active path, or the path still fits and the
        /// change is elsewhere) or cannot tell (a shared-state snapshot).
        first_difference: Option<alloc::boxed::Box<PathChange>>,
    },
    /// A list of the wrong length.
    Count {
        /// Which list (`"memories"` for the memories of a crowd snapshot,
        /// against the crowd loaded).
        what: &'static str,
        /// Its length in the snapshot.
        found: usize,
        /// The length the tree needs (the most, for a path or a queue).
        expected: usize,
    },
    /// An index past the end of what it indexes.
    OutOfRange {
        /// Which index.
        what: &'static str,
        /// Its value.
        index: u64,
        /// How many there are.
        len: usize,
    },
    /// The active path is not a path down the tree.
    BadPath {
        /// The depth at fault.
        depth: usize,
        /// The item index the snapshot has there.
        item: u16,
        /// What is wrong.
        problem: &'static str,
    },
    /// A memory block that does not fit its level's behavior.
    Block {
        /// The behavior.
        behavior: &'static str,
        /// The depth of its level.
        depth: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A value no saved state can have.
    BadValue {
        /// Which value.
        what: &'static str,
    },
    /// The same deferred-action request twice in the queue.
    DuplicateTicket {
        /// Its ticket.
        ticket: Ticket,
    },
    /// A memory snapshot with a pending deferred action, restored into a
    /// crowd whose shared state was not restored from a snapshot of the
    /// crowd that launched it: its ticket would name a launch this crowd
    /// never made. Restore the crowd's shared state from the same save
    /// first.
    OtherCrowd {
        /// The id of the crowd the memory was saved in.
        saved: u32,
        /// The id of the crowd whose snapshot was last restored into the
        /// memory's crowd (0: none).
        restored_from: u32,
    },
    /// A restore that would put more agents inside a gated or group-role
    /// decider than it holds: a crowd snapshot whose memories are inside
    /// it together, or one memory restored alone into a crowd where the
    /// others fill it now.
    Full {
        /// The decider.
        decider: &'static str,
        /// How many agents it holds at once (its gate, or its role's size).
        limit: u32,
    },
    /// A crowd's shared state restored while memories are bound to it
    /// that the restore was not given: loaded alone, the shared state
    /// would leave them counted nowhere. Load a running crowd with
    /// [`TreeShared::restore_crowd`](crate::TreeShared::restore_crowd),
    /// given every memory bound to it.
    MemoriesBound {
        /// The memories bound to the shared state
        /// ([`TreeShared::memories`](crate::TreeShared::memories)).
        bound: usize,
        /// The memories the restore was given.
        given: usize,
    },
    /// A memory given to
    /// [`TreeShared::restore_crowd`](crate::TreeShared::restore_crowd)
    /// that is not bound to the shared state restored, or is of a tree of
    /// another structure.
    NotBound {
        /// Its index in the slice given.
        index: usize,
    },
    /// A saved tunable value the tree cannot take now: a tunable it no
    /// longer has, of another type, or outside its range.
    Tuning(crate::TuneError),
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Version { found, supported } => write!(
                f,
                "snapshot format version {found}; this build reads version {supported}"
            ),
            SnapshotError::OtherTree { tree, found } => {
                write!(
                    f,
                    "tree `{tree}`: the snapshot was taken from tree `{found}`"
                )
            }
            SnapshotError::StructureChanged {
                tree,
                what,
                saved,
                current,
                first_difference,
            } => {
                // A count reads best in decimal, a fingerprint in hex.
                if *what == "item count" {
                    write!(
                        f,
                        "tree `{tree}`: its {what} changed since the snapshot was taken \
                         (saved {saved}, now {current})"
                    )?;
                } else {
                    write!(
                        f,
                        "tree `{tree}`: its {what} changed since the snapshot was taken \
                         (saved {saved:#x}, now {current:#x})"
                    )?;
                }
                match first_difference {
                    Some(change) => write!(f, ": {change}"),
                    None => Ok(()),
                }
            }
            SnapshotError::Count {
                what: "memories",
                found,
                expected,
            } => write!(
                f,
                "memories: the snapshot has {found}, the crowd loaded {expected}"
            ),
            SnapshotError::Count {
                what,
                found,
                expected,
            } => write!(f, "{what}: the snapshot has {found}, the tree {expected}"),
            SnapshotError::OutOfRange { what, index, len } => {
                write!(f, "{what} {index} out of range (there are {len})")
            }
            SnapshotError::BadPath {
                depth,
                item,
                problem,
            } => write!(f, "active path at depth {depth} (item {item}): {problem}"),
            SnapshotError::Block {
                behavior,
                depth,
                problem,
            } => write!(
                f,
                "memory block of behavior `{behavior}` at depth {depth}: {problem}"
            ),
            SnapshotError::BadValue { what } => write!(f, "invalid {what}"),
            SnapshotError::DuplicateTicket { ticket } => {
                write!(f, "deferred-action ticket {ticket} queued twice")
            }
            SnapshotError::OtherCrowd {
                saved,
                restored_from: 0,
            } => write!(
                f,
                "the memory has a pending deferred action of crowd {saved}, but no crowd's \
                 shared state was restored into its crowd: restore the shared state from \
                 the same save first"
            ),
            SnapshotError::OtherCrowd {
                saved,
                restored_from,
            } => write!(
                f,
                "the memory has a pending deferred action of crowd {saved}, but its crowd's \
                 shared state was restored from crowd {restored_from}: restore the shared \
                 state from the same save first"
            ),
            SnapshotError::MemoriesBound { bound, given } => write!(
                f,
                "{bound} memories are bound to the crowd's shared state and the restore was                  given {given}: load a running crowd with `TreeShared::restore_crowd`, given                  every memory bound to it"
            ),
            SnapshotError::Full { decider, limit } => write!(
                f,
                "decider `{decider}` holds at most {limit} agents at once: the restore would \
                 put one more inside"
            ),
            SnapshotError::NotBound { index } => write!(
                f,
                "memory {index} is not bound to the shared state restored"
            ),
            SnapshotError::Tuning(e) => write!(f, "a saved tunable: {e}"),
        }
    }
}

impl core::error::Error for SnapshotError {}

/// How a level of a saved active path no longer fits the tree: the detail
/// of [`SnapshotError::StructureChanged`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathChange {
    /// The saved decider is at another item now.
    Moved {
        /// The decider.
        decider: &'static str,
        /// The depth of the level in the saved path.
        depth: usize,
        /// The item index the snapshot has.
        saved: u16,
        /// The decider's item index in the tree.
        now: u16,
    },
    /// No decider of the tree has the saved name.
    Gone {
        /// The saved decider's name.
        name: String,
        /// The depth of the level in the saved path.
        depth: usize,
        /// The item index the snapshot has.
        item: u16,
        /// The decider at that item now, if the tree has that many items.
        now_there: Option<&'static str>,
    },
}

impl fmt::Display for PathChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathChange::Moved {
                decider,
                depth,
                saved,
                now,
            } => write!(
                f,
                "decider `{decider}` saved at item {saved} (depth {depth}) is now at item {now}"
            ),
            PathChange::Gone {
                name,
                depth,
                item,
                now_there,
            } => {
                write!(
                    f,
                    "decider `{name}` saved at item {item} (depth {depth}) no longer exists"
                )?;
                match now_there {
                    Some(name) => write!(f, "; item {item} is now `{name}`"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The first level of a saved active path, as `(item, decider id)` pairs
/// from the root down, whose decider is not at its saved item in `items`.
pub(crate) fn first_change<'p, A: 'static>(
    items: &[crate::tree::Item<A>],
    path: impl IntoIterator<Item = (u16, &'p str)>,
) -> Option<PathChange> {
    path.into_iter()
        .enumerate()
        .find_map(|(depth, (item, name))| {
            let there = items.get(usize::from(item)).map(|i| i.decider);
            if there.is_some_and(|d| d.name == name) {
                return None;
            }
            Some(match items.iter().position(|i| i.decider.name == name) {
                Some(now) => PathChange::Moved {
                    decider: items[now].decider.name,
                    depth,
                    saved: item,
                    now: u16::try_from(now).unwrap_or(u16::MAX),
                },
                None => PathChange::Gone {
                    name: name.into(),
                    depth,
                    item,
                    now_there: there.map(|d| d.name),
                },
            })
        })
}

/// Why a restore failed: the format could not decode the input (`E` is the
/// deserializer's error), or the snapshot does not fit.
#[derive(Clone, Debug, PartialEq)]
pub enum RestoreError<E> {
    /// The input is not a snapshot in this format (truncated, corrupt, of
    /// another type).
    Format(E),
    /// The snapshot decoded but cannot be restored here.
    Snapshot(SnapshotError),
}

impl<E: fmt::Display> fmt::Display for RestoreError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreError::Format(e) => write!(f, "cannot decode the snapshot: {e}"),
            RestoreError::Snapshot(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for RestoreError<E> {}
