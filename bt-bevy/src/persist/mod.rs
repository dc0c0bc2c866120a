//! Saving and loading every brain of a tree with its crowd's shared state
//! (feature `serde`): the traits and building blocks here, the save in
//! `save`, the load in `load`, its errors in `error`.

mod error;
mod load;
mod save;

use std::fmt;

use bevy_ecs::entity::Entity;
use bevy_ecs::world::World;
use bt_core::{AdoptError, RestoreError, SharedSnapshot, Stimuli, Ticket};
use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::adapter::TreeMemory;
use crate::brain::{Brain, NoSenses, SenseSource, Senses};
use crate::plugin::{BrainShared, Crowd, tree_names};

pub use error::LoadError;
pub use save::BrainsSnapshot;

/// A sense component that can be saved with its brain: [`Senses`] (when
/// its payloads can be) and [`NoSenses`] (nothing to save). Feature
/// `serde`.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be saved with its brain",
    label = "`{Self}` does not implement `SaveSenses`",
    note = "`Senses<Flags, N, P>` can be, when its payload type `P` implements serde's `Serialize` and `Deserialize`",
    note = "for a plugin without senses, save and load with `NoSenses`"
)]
pub trait SaveSenses: SenseSource + Sized {
    /// Writes the stimuli.
    #[doc(hidden)]
    fn save<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error>;

    /// Reads stimuli written by [`save`](Self::save).
    #[doc(hidden)]
    fn load<'de, D: Deserializer<'de>>(d: D) -> Result<Self, RestoreError<D::Error>>;
}

impl<F: 'static, const N: usize, P> SaveSenses for Senses<F, N, P>
where
    P: Copy + Send + Sync + Serialize + for<'de> Deserialize<'de> + 'static,
{
    fn save<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.0.serialize(s)
    }

    fn load<'de, D: Deserializer<'de>>(d: D) -> Result<Self, RestoreError<D::Error>> {
        Stimuli::restore(d).map(Senses)
    }
}

impl SaveSenses for NoSenses {
    fn save<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        s.serialize_unit()
    }

    fn load<'de, D: Deserializer<'de>>(_d: D) -> Result<Self, RestoreError<D::Error>> {
        Err(RestoreError::Format(de::Error::custom(
            "a brain without senses has no stimuli to load",
        )))
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<F, const N: usize, P: Copy + Serialize> Serialize for Senses<F, N, P> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.0.serialize(s)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de, F, const N: usize, P: Copy + Deserialize<'de>> Deserialize<'de> for Senses<F, N, P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Stimuli::deserialize(d).map(Senses)
    }
}

/// One brain's memory as serde writes it (feature `serde`): made by
/// [`Brain::snapshot`].
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub struct BrainSnapshot<'b, M> {
    memory: &'b M,
    now: f64,
}

impl<M: TreeMemory> Serialize for BrainSnapshot<'_, M> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.memory.save(self.now, s)
    }
}

impl<M> fmt::Debug for BrainSnapshot<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrainSnapshot")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<M: TreeMemory> Brain<M> {
    /// A snapshot of this brain's memory taken at clock reading `now`
    /// (usually [`BrainShared::now`]), for any serde serializer. It is a
    /// building block: [`SaveBrains::save_brains`] saves every brain of a
    /// tree with the crowd's shared state, and [`SaveBrains::load_brains`]
    /// loads them back. Feature `serde`.
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn snapshot(&self, now: f64) -> BrainSnapshot<'_, M> {
        BrainSnapshot {
            memory: &self.memory,
            now,
        }
    }
}

impl<M: TreeMemory> BrainShared<M> {
    /// A snapshot of the tree's crowd's shared state taken at clock reading
    /// `now` (see [`Crowd::snapshot`]). Feature `serde`.
    ///
    /// # Panics
    /// When plugins run several trees as `Brain<M>`: name one with
    /// [`crowd`](Self::crowd).
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn snapshot(&self, now: f64) -> SharedSnapshot<'_> {
        self.only("snapshot").snapshot(now)
    }

    /// A ticket the game kept from before a save, as a ticket of the crowd
    /// loaded from that save (see [`Crowd::adopt_ticket`]), whichever tree
    /// of memory type `M` it belongs to. Feature `serde`.
    ///
    /// # Errors
    /// When no crowd adopts it: the error of a crowd loaded from the
    /// ticket's crowd ([`AdoptError::AfterSave`]) if there is one, else
    /// [`AdoptError::OtherCrowd`] (a crowd was loaded, from another) or
    /// [`AdoptError::NotLoaded`].
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn adopt_ticket(&self, ticket: Ticket) -> Result<Ticket, AdoptError> {
        let rank = |e: &AdoptError| match e {
            AdoptError::AfterSave { .. } => 0,
            AdoptError::OtherCrowd { .. } => 1,
            _ => 2,
        };
        let mut best = Err(AdoptError::NotLoaded);
        for crowd in &self.crowds {
            match crowd.adopt_ticket(ticket) {
                Ok(t) => return Ok(t),
                Err(e) => {
                    if best.as_ref().is_err_and(|b| rank(&e) < rank(b)) {
                        best = Err(e);
                    }
                }
            }
        }
        best
    }
}

impl<M: TreeMemory> Crowd<M> {
    /// A snapshot of the crowd's shared state taken at clock reading `now`
    /// (see bt-core's `TreeShared::snapshot`). Part of what
    /// [`SaveBrains::save_brains`] writes. Feature `serde`.
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn snapshot(&self, now: f64) -> SharedSnapshot<'_> {
        self.state.snapshot(now)
    }

    /// A ticket the game kept from before a save, as a ticket of the crowd
    /// loaded from that save: report a deferred action launched before the
    /// save with `ActionOutcome { ticket: shared.adopt_ticket(kept)?, .. }`
    /// after loading it (in a fresh app or the same one). Feature `serde`.
    ///
    /// # Errors
    /// As bt-core's `TreeShared::adopt_ticket`: an [`AdoptError`] for a
    /// ticket of another crowd than the saved one, one the saved crowd
    /// issued after the save, or when no save was loaded.
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn adopt_ticket(&self, ticket: Ticket) -> Result<Ticket, AdoptError> {
        self.state.adopt_ticket(ticket)
    }
}

/// Saving and loading every brain of a tree, with its crowd's shared
/// state, from and into a [`World`]: implemented for `World` (feature
/// `serde`).
///
/// The save holds the crowd's shared state (gate counts, cooldowns, role
/// lobbies, queued deferred-action requests, the launch count) and its
/// run count, and, for each entity with a [`Brain<M>`] of the tree that
/// the game gives a key, the key, the brain's memory, its senses
/// (component `Se`, or [`NoSenses`]), its place in the schedule of tick
/// rates and the budget (due since a run or woken, its last tick) and its
/// entity's [`TickRate`](crate::TickRate). Times are those of the clock
/// the brains tick with ([`Crowd::now`]). What the game keeps in its own components (the
/// agents' state, the deferred actions it is carrying out) it saves itself,
/// beside.
///
/// [`save_brains`](Self::save_brains) and [`load_brains`](Self::load_brains)
/// take the tree from the memory type `M`. When plugins run several trees
/// as `Brain<M>` (two trees of one memory type, without tags), save and
/// load each tree with [`save_brains_of`](Self::save_brains_of) and
/// [`load_brains_of`](Self::load_brains_of), which name it.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub trait SaveBrains {
    /// The save of every brain of tree `M` the game names: each entity
    /// with a `Brain<M>` for which `key` gives `Some`, under that key (an
    /// id of the game's own: entities are not stable across apps). Serialize
    /// it with any serde format. Take it between frames.
    ///
    /// Outcomes reported with [`ActionOutcome`](crate::ActionOutcome) messages that the brains
    /// have not read yet are handed to them first, as the next run of
    /// [`BrainSystems::Outcomes`](crate::BrainSystems::Outcomes) would: the
    /// save holds them.
    ///
    /// # Panics
    /// When the world has no [`BrainPlugin`](crate::BrainPlugin) for `M`,
    /// or plugins run several trees as `Brain<M>` (then use
    /// [`save_brains_of`](Self::save_brains_of)).
    fn save_brains<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K>;

    /// As [`save_brains`](Self::save_brains), for the brains of `tree`
    /// among those of memory type `M`: each entity with a `Brain<M>` made
    /// for `tree` for which `key` gives `Some`.
    ///
    /// # Panics
    /// When no [`BrainPlugin`](crate::BrainPlugin) runs `tree` as `Brain<M>`.
    fn save_brains_of<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        tree: &'static M::Tree,
        key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K>;

    /// Loads a save of [`save_brains`](Self::save_brains) into the brains
    /// of tree `M`: into a fresh app whose entities were spawned anew (with
    /// their brains), or into the running app the save came from. `entity`
    /// maps each saved key to the entity that gets that brain.
    ///
    /// The crowd's shared state is loaded first, then each brain (its
    /// senses, inserted if the entity has none, its place in the schedule
    /// and its entity's [`TickRate`](crate::TickRate), inserted, or
    /// removed when the saved entity had none), and the crowd's run count,
    /// at the clock's reading now: every saved time moves with it, so the
    /// brains go on as if no time had passed, waiting, woken and ticking
    /// in the runs they would have. A save written before saves carried
    /// the schedule loads its brains not due and never ticked, the rates
    /// and the run count left as they are (see the crate docs' *Saving and
    /// loading*). The result is the same in a fresh app and in a
    /// running one: the brains of the tree not in the save start afresh
    /// (idle, in the loaded crowd), what the brains held before the load is
    /// dropped without cancelling anything (the game reloads its own state
    /// too), and the requests queued in the save are written as
    /// [`ActionMessage`](crate::ActionMessage)s now. The loaded crowd is a new one: tickets the
    /// game kept from the save go through [`BrainShared::adopt_ticket`].
    ///
    /// # Errors
    /// [`LoadError`] when `d` is not such a save, is of another tree or
    /// structure, names a key `entity` maps to nothing, to an entity
    /// without a `Brain<M>` of the tree or to one entity twice. Nothing is
    /// changed then: the whole save is read and checked before any brain
    /// is.
    ///
    /// # Panics
    /// When the world has no [`BrainPlugin`](crate::BrainPlugin) for `M`,
    /// or plugins run several trees as `Brain<M>` (then use
    /// [`load_brains_of`](Self::load_brains_of)).
    fn load_brains<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug;

    /// As [`load_brains`](Self::load_brains), into the brains of `tree`
    /// among those of memory type `M`: a save of `tree`'s brains
    /// ([`save_brains_of`](Self::save_brains_of), or
    /// [`save_brains`](Self::save_brains) in an app where `tree` was the
    /// only tree of `M`). The other trees' brains and crowds do not change.
    ///
    /// # Errors
    /// As [`load_brains`](Self::load_brains); a save of another tree is a
    /// [`LoadError::Shared`].
    ///
    /// # Panics
    /// When no [`BrainPlugin`](crate::BrainPlugin) runs `tree` as `Brain<M>`.
    fn load_brains_of<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        tree: &'static M::Tree,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug;
}

/// What [`SaveBrains::load_brains`] did (feature `serde`).
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Brains loaded from the save.
    pub brains: usize,
    /// Brains of the tree not in the save, started afresh.
    pub fresh: usize,
    /// Queued deferred-action requests of the save, written as messages.
    pub requests: usize,
}

impl SaveBrains for World {
    fn save_brains<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K> {
        let k = crowd_index::<M>(self, None, "save_brains");
        save::save_brains(self, k, key)
    }

    fn save_brains_of<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        tree: &'static M::Tree,
        key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K> {
        let k = crowd_index::<M>(self, Some(tree), "save_brains_of");
        save::save_brains(self, k, key)
    }

    fn load_brains<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug,
    {
        let k = crowd_index::<M>(self, None, "load_brains");
        load::load_brains::<M, Se, K, D>(self, k, d, entity)
    }

    fn load_brains_of<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        tree: &'static M::Tree,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug,
    {
        let k = crowd_index::<M>(self, Some(tree), "load_brains_of");
        load::load_brains::<M, Se, K, D>(self, k, d, entity)
    }
}

/// The index of the crowd `call` saves or loads: `tree`'s, or the only one
/// of memory type `M`.
fn crowd_index<M: TreeMemory>(world: &World, tree: Option<&'static M::Tree>, call: &str) -> usize {
    let m = std::any::type_name::<M>();
    let Some(shared) = world.get_resource::<BrainShared<M>>() else {
        panic!("{call}: no BrainPlugin runs brains of memory type `{m}`");
    };
    match (tree, shared.crowds.len()) {
        (Some(tree), _) => shared.index_of(tree).unwrap_or_else(|| {
            panic!(
                "{call}: no BrainPlugin runs tree `{}` as brains of memory type `{m}` \
                 (it runs {})",
                M::tree_name(tree),
                tree_names(&shared.crowds)
            )
        }),
        (None, 1) => 0,
        (None, _) => panic!(
            "{call}: memory type `{m}` runs the trees {}; save and load each with \
             `save_brains_of(&TREE, ..)` and `load_brains_of(&TREE, ..)`",
            tree_names(&shared.crowds)
        ),
    }
}
