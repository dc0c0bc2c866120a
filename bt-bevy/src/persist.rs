//! Saving and loading every brain of a tree with its crowd's shared state
//! (feature `serde`).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use bevy_ecs::change_detection::DetectChangesMut;
use bevy_ecs::entity::Entity;
use bevy_ecs::message::{MessageCursor, Messages};
use bevy_ecs::world::World;
use bt_core::{
    RestoreError, SharedSnapshot, SnapshotError, Stimuli, TickReport, Ticket, TreeShared,
};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::adapter::TreeMemory;
use crate::brain::{Brain, NoSenses, SenseSource, Senses, agent_id};
use crate::plugin::{ActionMessage, ActionOutcome, BrainShared};

/// A sense component that can be saved with its brain: [`Senses`] (when
/// its payloads can be) and [`NoSenses`] (nothing to save).
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

impl<F, const N: usize, P: Copy + Serialize> Serialize for Senses<F, N, P> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.0.serialize(s)
    }
}

impl<'de, F, const N: usize, P: Copy + Deserialize<'de>> Deserialize<'de> for Senses<F, N, P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Stimuli::deserialize(d).map(Senses)
    }
}

/// One brain's memory as serde writes it: made by [`Brain::snapshot`].
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
    /// loads them back.
    pub fn snapshot(&self, now: f64) -> BrainSnapshot<'_, M> {
        BrainSnapshot {
            memory: &self.memory,
            now,
        }
    }
}

impl<M: TreeMemory> BrainShared<M> {
    /// A snapshot of the crowd's shared state taken at clock reading `now`
    /// (see bt-core's `TreeShared::snapshot`). Part of what
    /// [`SaveBrains::save_brains`] writes.
    pub fn snapshot(&self, now: f64) -> SharedSnapshot<'_> {
        self.state.snapshot(now)
    }

    /// A ticket the game kept from before a save, as a ticket of the crowd
    /// loaded from that save: report a deferred action launched before the
    /// save with `ActionOutcome { ticket: shared.adopt_ticket(kept), .. }`
    /// after loading it (in a fresh app or the same one). Other tickets are
    /// returned as they are.
    pub fn adopt_ticket(&self, ticket: Ticket) -> Ticket {
        self.state.adopt_ticket(ticket)
    }
}

/// Saving and loading every brain of a tree, with its crowd's shared
/// state, from and into a [`World`]: implemented for `World`.
///
/// The save holds the crowd's shared state (gate counts, cooldowns, role
/// lobbies, queued deferred-action requests, the launch count) and, for
/// each entity with a [`Brain<M>`] that the game gives a key, the key, the
/// brain's memory and its senses (component `Se`, or [`NoSenses`]). Times
/// are those of the clock the brains tick with ([`BrainShared::now`]).
/// What the game keeps in its own components (the agents' state, the
/// deferred actions it is carrying out) it saves itself, beside.
pub trait SaveBrains {
    /// The save of every brain of tree `M` the game names: each entity
    /// with a `Brain<M>` for which `key` gives `Some`, under that key (an
    /// id of the game's own: entities are not stable across apps). Serialize
    /// it with any serde format. Take it between frames.
    ///
    /// Outcomes reported with [`ActionOutcome`] messages that the brains
    /// have not read yet are handed to them first, as the next run of
    /// [`BrainSystems::Outcomes`](crate::BrainSystems::Outcomes) would: the
    /// save holds them.
    ///
    /// # Panics
    /// When the world has no [`BrainPlugin`](crate::BrainPlugin) for `M`.
    fn save_brains<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K>;

    /// Loads a save of [`save_brains`](Self::save_brains) into the brains
    /// of tree `M`: into a fresh app whose entities were spawned anew (with
    /// their brains), or into the running app the save came from. `entity`
    /// maps each saved key to the entity that gets that brain.
    ///
    /// The crowd's shared state is loaded first, then each brain (and its
    /// senses, inserted if the entity has none), at the clock's reading
    /// now: every saved time moves with it, so the brains go on as if no
    /// time had passed. The result is the same in a fresh app and in a
    /// running one: the brains not in the save start afresh (idle, in the
    /// loaded crowd), what the brains held before the load is dropped
    /// without cancelling anything (the game reloads its own state too),
    /// and the requests queued in the save are written as
    /// [`ActionMessage`]s now. The loaded crowd is a new one: tickets the
    /// game kept from the save go through [`BrainShared::adopt_ticket`].
    ///
    /// # Errors
    /// [`LoadError`] when `d` is not such a save, is of another tree or
    /// structure, names a key `entity` maps to nothing, to an entity
    /// without a `Brain<M>` or to one entity twice. Nothing is changed
    /// then: the whole save is read and checked before any brain is.
    ///
    /// # Panics
    /// When the world has no [`BrainPlugin`](crate::BrainPlugin) for `M`.
    fn load_brains<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug;
}

/// What [`SaveBrains::load_brains`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Brains loaded from the save.
    pub brains: usize,
    /// Brains of the tree not in the save, started afresh.
    pub fresh: usize,
    /// Queued deferred-action requests of the save, written as messages.
    pub requests: usize,
}

/// Why [`SaveBrains::load_brains`] changed nothing.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LoadError<E> {
    /// The input is not a save in this format (`E`: the format's error).
    Format(E),
    /// The crowd's shared state does not fit the tree.
    Shared(SnapshotError),
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

/// Every brain of a tree with the crowd's shared state, as serde writes
/// it: made by [`SaveBrains::save_brains`].
pub struct BrainsSnapshot<'w, M: TreeMemory, Se, K> {
    world: &'w World,
    shared: &'w BrainShared<M>,
    brains: Vec<(K, Entity)>,
    now: f64,
    _senses: PhantomData<fn() -> Se>,
}

impl<M: TreeMemory, Se, K> fmt::Debug for BrainsSnapshot<'_, M, Se, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrainsSnapshot")
            .field("tree", &M::tree_name(self.shared.tree()))
            .field("brains", &self.brains.len())
            .field("now", &self.now)
            .finish()
    }
}

impl<M: TreeMemory, Se: SaveSenses, K> BrainsSnapshot<'_, M, Se, K> {
    /// How many brains it holds.
    pub fn len(&self) -> usize {
        self.brains.len()
    }

    /// Whether it holds no brain.
    pub fn is_empty(&self) -> bool {
        self.brains.is_empty()
    }

    /// The clock reading it was taken at.
    pub fn now(&self) -> f64 {
        self.now
    }
}

const FIELDS: &[&str] = &["shared", "brains"];
const BRAIN_FIELDS: &[&str] = &["key", "agent", "memory", "senses"];

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainsSnapshot<'_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Brains", 2)?;
        st.serialize_field("shared", &self.shared.snapshot(self.now))?;
        st.serialize_field("brains", &BrainList(self))?;
        st.end()
    }
}

struct BrainList<'a, 'w, M: TreeMemory, Se, K>(&'a BrainsSnapshot<'w, M, Se, K>);

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainList<'_, '_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let save = self.0;
        let mut seq = s.serialize_seq(Some(save.brains.len()))?;
        for (key, entity) in &save.brains {
            let brain = save.world.get::<Brain<M>>(*entity).ok_or_else(|| {
                serde::ser::Error::custom(format_args!("{entity} lost its brain"))
            })?;
            seq.serialize_element(&BrainEntry::<M, Se, K> {
                key,
                agent: agent_id(*entity),
                memory: brain.snapshot(save.now),
                senses: save.world.get::<Se>(*entity),
            })?;
        }
        seq.end()
    }
}

struct BrainEntry<'a, M, Se, K> {
    key: &'a K,
    agent: u32,
    memory: BrainSnapshot<'a, M>,
    senses: Option<&'a Se>,
}

struct SensesOut<'a, Se>(&'a Se);

impl<Se: SaveSenses> Serialize for SensesOut<'_, Se> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.0.save(s)
    }
}

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainEntry<'_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Brain", 4)?;
        st.serialize_field("key", self.key)?;
        st.serialize_field("agent", &self.agent)?;
        st.serialize_field("memory", &self.memory)?;
        st.serialize_field("senses", &self.senses.map(SensesOut))?;
        st.end()
    }
}

impl SaveBrains for World {
    fn save_brains<M: TreeMemory, Se: SaveSenses, K: Serialize>(
        &mut self,
        mut key: impl FnMut(Entity) -> Option<K>,
    ) -> BrainsSnapshot<'_, M, Se, K> {
        flush_outcomes::<M>(self);
        let mut query = self.query::<(Entity, &Brain<M>)>();
        let brains = query
            .iter(self)
            .filter_map(|(e, _)| key(e).map(|k| (k, e)))
            .collect();
        let shared = plugin_shared::<M>(self);
        BrainsSnapshot {
            world: self,
            shared,
            brains,
            now: shared.now(self),
            _senses: PhantomData,
        }
    }

    fn load_brains<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
        &mut self,
        d: D,
        entity: impl FnMut(&K) -> Option<Entity>,
    ) -> Result<Loaded, LoadError<D::Error>>
    where
        K: Deserialize<'de> + fmt::Debug,
    {
        let shared = plugin_shared::<M>(self);
        let tree = shared.tree();
        let now = shared.now(self);
        let state = M::new_shared(tree, shared.state.action_capacity());
        let fault = RefCell::new(None);
        let mut cx = Cx::<M, Se, K, _> {
            world: self,
            tree,
            state: &state,
            now,
            fault: &fault,
            entity,
            seen: HashSet::new(),
            _m: PhantomData,
        };
        let read = d.deserialize_struct("Brains", FIELDS, SaveVisitor(&mut cx));
        let staged = match read {
            Ok(staged) => staged,
            Err(e) => {
                return Err(match fault.into_inner() {
                    Some(fault) => widen(fault),
                    None => LoadError::Format(e),
                });
            }
        };
        Ok(install::<M, Se>(self, state, staged))
    }
}

/// The plugin's shared state of `M`.
fn plugin_shared<M: TreeMemory>(world: &World) -> &BrainShared<M> {
    world.get_resource::<BrainShared<M>>().unwrap_or_else(|| {
        panic!(
            "saving or loading brains of memory type `{}`: its BrainPlugin was not added",
            std::any::type_name::<M>()
        )
    })
}

/// Hands every [`ActionOutcome`] still stored to its brain. A report
/// already handed over is refused by the brain (its ticket is no longer
/// pending), so this changes only what the next run of the outcome system
/// would.
fn flush_outcomes<M: TreeMemory>(world: &mut World) {
    let Some(messages) = world.get_resource::<Messages<ActionOutcome<M>>>() else {
        return;
    };
    if messages.is_empty() {
        return;
    }
    let outcomes: Vec<ActionOutcome<M>> =
        MessageCursor::default().read(messages).copied().collect();
    for o in outcomes {
        if let Some(mut brain) = world.get_mut::<Brain<M>>(o.entity) {
            brain
                .bypass_change_detection()
                .complete(o.ticket, o.outcome);
        }
    }
}

/// A brain read from a save, not yet installed.
struct Staged<M, Se> {
    entity: Entity,
    /// The agent id it ran under when saved.
    agent: u32,
    memory: M,
    senses: Option<Se>,
}

/// Installs a checked save: the new crowd, every brain of the tree, the
/// senses, and the saved queue as messages.
fn install<M: TreeMemory, Se: SaveSenses>(
    world: &mut World,
    state: Arc<TreeShared>,
    staged: Vec<Staged<M, Se>>,
) -> Loaded {
    let tree = plugin_shared::<M>(world).tree();
    let mut loaded = Loaded {
        brains: staged.len(),
        ..Loaded::default()
    };
    let mut moved = Vec::new();
    let mut agents = HashMap::new();
    let mut memories: HashMap<Entity, M> = HashMap::with_capacity(staged.len());
    for s in staged {
        if s.agent != agent_id(s.entity) {
            s.memory.pending_tickets(|t| moved.push((t, s.entity)));
            agents.insert(s.agent, s.entity);
        }
        if let Some(senses) = s.senses {
            world.entity_mut(s.entity).insert(senses);
        }
        memories.insert(s.entity, s.memory);
    }
    let mut query = world.query::<(Entity, &mut Brain<M>)>();
    for (entity, mut brain) in query.iter_mut(world) {
        let memory = memories.remove(&entity).unwrap_or_else(|| {
            loaded.fresh += 1;
            M::bound(tree, &state, entity.to_bits())
        });
        // The old memory is dropped with the old crowd: nothing of it is
        // given back or cancelled in the new one.
        brain.memory = memory;
        brain.last = Ok(TickReport::default());
    }
    let mut requests = Vec::new();
    crate::adapter::drain(&state, |r| requests.push(r));
    let mut shared = world.resource_mut::<BrainShared<M>>();
    shared.lost = crate::adapter::lost(&state);
    shared.state = state;
    shared.moved = moved;
    loaded.requests = requests.len();
    for r in requests {
        let entity =
            match crate::plugin::moved_entity(&world.resource::<BrainShared<M>>().moved, &r) {
                Some(e) => e,
                None => match agents.get(&r.agent) {
                    Some(&e) => e,
                    None => crate::plugin::resolve(world.entities(), r.agent),
                },
            };
        world.write_message(ActionMessage::<M>::new(entity, r));
    }
    loaded
}

/// A load's typed error, kept while serde passes it on as text.
type Fault = LoadError<Infallible>;

/// A kept error as the error of a load through a format with errors `E`.
fn widen<E>(fault: Fault) -> LoadError<E> {
    match fault {
        LoadError::Format(never) => match never {},
        LoadError::Shared(e) => LoadError::Shared(e),
        LoadError::Brain { key, entity, error } => LoadError::Brain { key, entity, error },
        LoadError::UnknownKey { key } => LoadError::UnknownKey { key },
        LoadError::NoBrain { key, entity } => LoadError::NoBrain { key, entity },
        LoadError::SameEntity { key, entity } => LoadError::SameEntity { key, entity },
    }
}

/// What a load reads with: the world, the new crowd, the game's key map.
struct Cx<'a, M: TreeMemory, Se, K, F> {
    world: &'a World,
    tree: &'static M::Tree,
    state: &'a Arc<TreeShared>,
    now: f64,
    fault: &'a RefCell<Option<Fault>>,
    entity: F,
    seen: HashSet<Entity>,
    _m: PhantomData<fn() -> (Se, K)>,
}

impl<M: TreeMemory, Se, K, F> Cx<'_, M, Se, K, F> {
    /// Keeps `fault` and returns it as the format's error.
    fn raise<E: de::Error>(&self, fault: Fault) -> E {
        let error = E::custom(&fault);
        *self.fault.borrow_mut() = Some(fault);
        error
    }

    /// A restore's error as the format's: a snapshot error is kept as
    /// `fault(error)`.
    fn restore_error<E: de::Error>(
        &self,
        e: RestoreError<E>,
        fault: impl FnOnce(SnapshotError) -> Fault,
    ) -> E {
        match e {
            RestoreError::Format(e) => e,
            RestoreError::Snapshot(e) => self.raise(fault(e)),
        }
    }
}

/// The fields of a struct, from a sequence or a map, in their saved order.
trait Fields<'de> {
    type Error: de::Error;
    fn field<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, Self::Error>;
}

struct SeqFields<A>(A);

impl<'de, A: SeqAccess<'de>> Fields<'de> for SeqFields<A> {
    type Error = A::Error;
    fn field<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, A::Error> {
        self.0
            .next_element_seed(seed)?
            .ok_or_else(|| de::Error::missing_field(name))
    }
}

struct MapFields<A>(A);

impl<'de, A: MapAccess<'de>> Fields<'de> for MapFields<A> {
    type Error = A::Error;
    fn field<T: DeserializeSeed<'de>>(
        &mut self,
        name: &'static str,
        seed: T,
    ) -> Result<T::Value, A::Error> {
        match self.0.next_key::<String>()? {
            Some(k) if k == name => self.0.next_value_seed(seed),
            Some(k) => Err(de::Error::custom(format_args!(
                "expected the field `{name}`, found `{k}` (fields come in their saved order)"
            ))),
            None => Err(de::Error::missing_field(name)),
        }
    }
}

/// The whole save: the shared state, then the brains.
struct SaveVisitor<'c, 'a, M: TreeMemory, Se, K, F>(&'c mut Cx<'a, M, Se, K, F>);

impl<'de, M, Se, K, F> SaveVisitor<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Vec<Staged<M, Se>>, R::Error> {
        f.field("shared", SharedSeed(&mut *self.0))?;
        f.field("brains", ListSeed(self.0))
    }
}

impl<'de, M, Se, K, F> Visitor<'de> for SaveVisitor<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Vec<Staged<M, Se>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a save of brains")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.read(&mut SeqFields(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.read(&mut MapFields(map))
    }
}

/// The crowd's shared state, restored into the new crowd.
struct SharedSeed<'c, 'a, M: TreeMemory, Se, K, F>(&'c mut Cx<'a, M, Se, K, F>);

impl<'de, M: TreeMemory, Se, K, F> DeserializeSeed<'de> for SharedSeed<'_, '_, M, Se, K, F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let cx = self.0;
        M::load_shared(cx.tree, cx.state, cx.now, d)
            .map_err(|e| cx.restore_error(e, LoadError::Shared))
    }
}

/// The list of brains.
struct ListSeed<'c, 'a, M: TreeMemory, Se, K, F>(&'c mut Cx<'a, M, Se, K, F>);

impl<'de, M, Se, K, F> DeserializeSeed<'de> for ListSeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Vec<Staged<M, Se>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, M, Se, K, F> Visitor<'de> for ListSeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Vec<Staged<M, Se>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of saved brains")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut staged = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(brain) = seq.next_element_seed(EntrySeed(&mut *self.0))? {
            staged.push(brain);
        }
        Ok(staged)
    }
}

/// One saved brain: its key, agent id, memory and senses.
struct EntrySeed<'c, 'a, M: TreeMemory, Se, K, F>(&'c mut Cx<'a, M, Se, K, F>);

impl<'de, M, Se, K, F> DeserializeSeed<'de> for EntrySeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Staged<M, Se>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_struct("Brain", BRAIN_FIELDS, self)
    }
}

impl<'de, M, Se, K, F> EntrySeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Staged<M, Se>, R::Error> {
        let cx = self.0;
        let key: K = f.field("key", PhantomData)?;
        let agent: u32 = f.field("agent", PhantomData)?;
        let name = || format!("{key:?}");
        let Some(entity) = (cx.entity)(&key) else {
            return Err(cx.raise(LoadError::UnknownKey { key: name() }));
        };
        if cx.world.get::<Brain<M>>(entity).is_none() {
            return Err(cx.raise(LoadError::NoBrain {
                key: name(),
                entity,
            }));
        }
        if !cx.seen.insert(entity) {
            return Err(cx.raise(LoadError::SameEntity {
                key: name(),
                entity,
            }));
        }
        let mut memory = M::bound(cx.tree, cx.state, entity.to_bits());
        let brain_fault = |error| LoadError::Brain {
            key: name(),
            entity,
            error,
        };
        f.field(
            "memory",
            MemorySeed {
                memory: &mut memory,
                now: cx.now,
                cx: &*cx,
                fault: &brain_fault,
            },
        )?;
        let senses = f.field(
            "senses",
            SensesSeed {
                cx: &*cx,
                fault: &brain_fault,
                _se: PhantomData,
            },
        )?;
        Ok(Staged {
            entity,
            agent,
            memory,
            senses,
        })
    }
}

impl<'de, M, Se, K, F> Visitor<'de> for EntrySeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Staged<M, Se>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a saved brain")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.read(&mut SeqFields(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.read(&mut MapFields(map))
    }
}

/// A brain's memory, restored into a memory of the new crowd.
struct MemorySeed<'m, 'c, 'a, M: TreeMemory, Se, K, F, G> {
    memory: &'m mut M,
    now: f64,
    cx: &'c Cx<'a, M, Se, K, F>,
    fault: &'c G,
}

impl<'de, M: TreeMemory, Se, K, F, G> DeserializeSeed<'de>
    for MemorySeed<'_, '_, '_, M, Se, K, F, G>
where
    G: Fn(SnapshotError) -> Fault,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.memory
            .load(self.now, d)
            .map_err(|e| self.cx.restore_error(e, self.fault))
    }
}

/// A brain's senses, if it had them.
struct SensesSeed<'c, 'a, M: TreeMemory, Se, K, F, G> {
    cx: &'c Cx<'a, M, Se, K, F>,
    fault: &'c G,
    _se: PhantomData<fn() -> Se>,
}

impl<'de, M: TreeMemory, Se: SaveSenses, K, F, G> DeserializeSeed<'de>
    for SensesSeed<'_, '_, M, Se, K, F, G>
where
    G: Fn(SnapshotError) -> Fault,
{
    type Value = Option<Se>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Se>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, M: TreeMemory, Se: SaveSenses, K, F, G> Visitor<'de>
    for SensesSeed<'_, '_, M, Se, K, F, G>
where
    G: Fn(SnapshotError) -> Fault,
{
    type Value = Option<Se>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a brain's stimuli, or none")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<Se>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<Se>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Se>, D::Error> {
        Se::load(d)
            .map(Some)
            .map_err(|e| self.cx.restore_error(e, self.fault))
    }
}
