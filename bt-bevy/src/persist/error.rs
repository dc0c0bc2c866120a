//! Why a load of brains changed nothing.

use std::convert::Infallible;
use std::fmt;

use bevy_ecs::entity::Entity;
use bt_core::SnapshotError;

/// Why [`SaveBrains::load_brains`](super::SaveBrains::load_brains) changed
/// nothing (feature `serde`).
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LoadError<E> {
    /// The input is not a save in this format (`E`: the format's error).
    Format(E),
    /// The crowd's shared state does not fit the tree.
    Shared(SnapshotError),
    /// The crowd's schedule (its clock reading and run count) is not valid.
    Schedule(SnapshotError),
    /// A brain's memory or senses do not fit the tree.
    Brain {
        /// The brain's key, as `Debug` writes it.
        key: String,
        /// Its entity.
        entity: Entity,
        /// What is wrong.
        error: SnapshotError,
    },
    /// The game maps a saved key to no entity.
    UnknownKey {
        /// The key, as `Debug` writes it.
        key: String,
    },
    /// The entity a key maps to has no brain of the tree.
    NoBrain {
        /// The key, as `Debug` writes it.
        key: String,
        /// The entity.
        entity: Entity,
    },
    /// Two saved brains map to the same entity.
    SameEntity {
        /// The second key, as `Debug` writes it.
        key: String,
        /// The entity.
        entity: Entity,
    },
}

impl<E: fmt::Display> fmt::Display for LoadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Format(e) => write!(f, "cannot decode the brains' save: {e}"),
            LoadError::Shared(e) => write!(f, "the crowd's shared state: {e}"),
            LoadError::Schedule(e) => write!(f, "the crowd's schedule: {e}"),
            LoadError::Brain { key, entity, error } => {
                write!(f, "the brain saved as {key} (for {entity}): {error}")
            }
            LoadError::UnknownKey { key } => {
                write!(f, "the brain saved as {key}: no entity was given for it")
            }
            LoadError::NoBrain { key, entity } => {
                write!(
                    f,
                    "the brain saved as {key}: {entity} has no brain of the tree"
                )
            }
            LoadError::SameEntity { key, entity } => {
                write!(
                    f,
                    "the brain saved as {key}: {entity} already gets another one"
                )
            }
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for LoadError<E> {}
/// A load's typed error, kept while serde passes it on as text.
pub(super) type Fault = LoadError<Infallible>;

/// A kept error as the error of a load through a format with errors `E`.
pub(super) fn widen<E>(fault: Fault) -> LoadError<E> {
    match fault {
        LoadError::Format(never) => match never {},
        LoadError::Shared(e) => LoadError::Shared(e),
        LoadError::Schedule(e) => LoadError::Schedule(e),
        LoadError::Brain { key, entity, error } => LoadError::Brain { key, entity, error },
        LoadError::UnknownKey { key } => LoadError::UnknownKey { key },
        LoadError::NoBrain { key, entity } => LoadError::NoBrain { key, entity },
        LoadError::SameEntity { key, entity } => LoadError::SameEntity { key, entity },
    }
}
