//! The load: a save read and checked whole into a new crowd, then
//! installed in the world with its schedule.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use bevy_ecs::entity::Entity;
use bevy_ecs::world::World;
use bt_core::persist::{Body, Fields, read_struct};
use bt_core::{RestoreError, SnapshotError, TickReport, TreeShared};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};

use super::error::{Fault, LoadError, widen};
use super::{Loaded, SaveSenses};
use crate::adapter::TreeMemory;
use crate::brain::{Brain, agent_id};
use crate::plugin::{ActionMessage, BrainShared};
use crate::rate::{Rate, TickRate, Turn, TurnParts};

// A field added to a struct goes at its end, read as optional: a save
// written before it was added has none, and loads as it did then.
const FIELDS: &[&str] = &["shared", "brains", "schedule"];
const BRAIN_FIELDS: &[&str] = &["key", "agent", "memory", "senses", "turn"];
const TURN_FIELDS: &[&str] = &["rate", "slot", "due_since", "last_tick", "seen_rate"];
const SCHEDULE_FIELDS: &[&str] = &["saved_at", "runs"];

/// [`SaveBrains::load_brains`](super::SaveBrains::load_brains) into crowd
/// `k` of a world.
pub(super) fn load_brains<'de, M: TreeMemory, Se: SaveSenses, K, D: Deserializer<'de>>(
    world: &mut World,
    k: usize,
    d: D,
    entity: impl FnMut(&K) -> Option<Entity>,
) -> Result<Loaded, LoadError<D::Error>>
where
    K: Deserialize<'de> + fmt::Debug,
{
    let crowd = &world.resource::<BrainShared<M>>().crowds[k];
    let tree = crowd.tree();
    let now = crowd.now(world);
    let state = M::new_shared(tree, crowd.state.action_capacity());
    let fault = RefCell::new(None);
    let mut cx = Cx::<M, Se, K, _> {
        world,
        tree,
        state: &state,
        now,
        fault: &fault,
        entity,
        seen: HashSet::new(),
        _m: PhantomData,
    };
    let read = read_struct(d, "Brains", FIELDS, SaveVisitor(&mut cx));
    let (staged, runs) = match read {
        Ok(read) => read,
        Err(e) => {
            return Err(match fault.into_inner() {
                Some(fault) => widen(fault),
                None => LoadError::Format(e),
            });
        }
    };
    Ok(install::<M, Se>(world, k, state, staged, runs))
}

/// A brain read from a save, not yet installed.
struct Staged<M, Se> {
    /// Its key, as `Debug` writes it.
    key: String,
    entity: Entity,
    /// The agent id it ran under when saved.
    agent: u32,
    memory: M,
    senses: Option<Se>,
    /// Its place in the schedule and its rate, when the save holds them.
    turn: Option<SavedTurn>,
}

/// A brain's place in the schedule as read, and its entity's rate
/// (`None`: no `TickRate`).
struct SavedTurn {
    rate: Option<TickRate>,
    parts: TurnParts,
}

/// Installs a checked save into crowd `k`: its new shared state, every
/// brain of the tree with its turn, the senses and rates, the run count
/// (`runs`, when the save holds the schedule), and the saved queue as
/// messages.
fn install<M: TreeMemory, Se: SaveSenses>(
    world: &mut World,
    k: usize,
    state: Arc<TreeShared>,
    staged: Vec<Staged<M, Se>>,
    runs: Option<u64>,
) -> Loaded {
    let tree = world.resource::<BrainShared<M>>().crowds[k].tree();
    let mut loaded = Loaded {
        brains: staged.len(),
        ..Loaded::default()
    };
    let mut moved = Vec::new();
    let mut agents = HashMap::new();
    let mut memories: HashMap<Entity, (M, Turn)> = HashMap::with_capacity(staged.len());
    for s in staged {
        if s.agent != agent_id(s.entity) {
            s.memory.pending_tickets(|t| moved.push((t, s.entity)));
            agents.insert(s.agent, s.entity);
        }
        let mut entity = world.entity_mut(s.entity);
        if let Some(senses) = s.senses {
            entity.insert(senses);
        }
        let turn = match (s.turn, runs) {
            (Some(saved), Some(next)) => {
                match saved.rate {
                    Some(rate) => _ = entity.insert(rate),
                    None => _ = entity.remove::<TickRate>(),
                }
                Turn::from_parts(saved.parts, next, saved.rate.as_ref())
            }
            _ => Turn::landed(agent_id(s.entity)),
        };
        memories.insert(s.entity, (s.memory, turn));
    }
    let mut query = world.query::<(Entity, &mut Brain<M>)>();
    for (entity, mut brain) in query.iter_mut(world) {
        if !std::ptr::eq(brain.memory.tree(), tree) {
            // Another tree's brain, of the same memory type.
            continue;
        }
        let (memory, turn) = memories.remove(&entity).unwrap_or_else(|| {
            loaded.fresh += 1;
            let memory = M::bound(tree, &state, entity.to_bits());
            (memory, Turn::landed(agent_id(entity)))
        });
        // The old memory is dropped with the old crowd: nothing of it is
        // given back or cancelled in the new one.
        brain.memory = memory;
        brain.last = Ok(TickReport::default());
        brain.turn = turn;
    }
    let mut requests = Vec::new();
    crate::adapter::drain(&state, |r| requests.push(r));
    loaded.requests = requests.len();
    for r in requests {
        let entity = crate::plugin::route(&mut moved, world.entities(), &r, |agent| {
            agents.get(&agent).copied()
        });
        world.write_message(ActionMessage::<M>::new(entity, r));
    }
    // A change to the senses counts from here on: neither the load nor
    // what the game changed in them before it wakes a brain (the save
    // holds the wakes the saved app had pending).
    let senses_since = world.increment_change_tick();
    let old = Arc::clone(&world.resource::<BrainShared<M>>().crowds[k].state);
    crate::tuning::crowd_replaced::<M>(world, tree, &old, &state);
    let mut shared = world.resource_mut::<BrainShared<M>>();
    let crowd = &mut shared.crowds[k];
    crowd.lost = crate::adapter::lost(&state);
    crowd.state = state;
    crowd.moved = moved;
    crowd.senses_since = Some(senses_since);
    if let Some(runs) = runs {
        crowd.runs = runs;
    }
    loaded
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

/// The whole save: the shared state, the brains, then the schedule (its
/// run count, when the save holds it, is the value's second part).
struct SaveVisitor<'c, 'a, M: TreeMemory, Se, K, F>(&'c mut Cx<'a, M, Se, K, F>);

impl<'de, M, Se, K, F> Body<'de> for SaveVisitor<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = (Vec<Staged<M, Se>>, Option<u64>);

    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Self::Value, R::Error> {
        f.field_seed("shared", SharedSeed(&mut *self.0))?;
        let mut staged = f.field_seed("brains", ListSeed(&mut *self.0))?;
        let cx = &*self.0;
        let schedule = f.optional_field_seed("schedule", ScheduleSeed { now: cx.now })?;
        let schedule = match schedule {
            None => None,
            Some(Err(e)) => return Err(cx.raise(LoadError::Schedule(e))),
            Some(Ok(schedule)) => Some(schedule),
        };
        for s in &mut staged {
            let Some(turn) = &mut s.turn else {
                continue;
            };
            // Turns are written with the schedule they count in.
            let Some((runs, shift)) = schedule else {
                return Err(de::Error::missing_field("schedule"));
            };
            if let Err(error) = check_turn(&mut turn.parts, runs, shift) {
                return Err(cx.raise(LoadError::Brain {
                    key: s.key.clone(),
                    entity: s.entity,
                    error,
                }));
            }
        }
        Ok((staged, schedule.map(|(runs, _)| runs)))
    }
}

/// Checks a saved turn against its crowd's next run `next`, and moves its
/// last tick time by the clock's `shift`.
fn check_turn(parts: &mut TurnParts, next: u64, shift: f64) -> Result<(), SnapshotError> {
    let bad = |what| Err(SnapshotError::BadValue { what });
    if parts.due_since.is_some_and(|s| s > next) {
        return bad("run a brain is due since (after the next run)");
    }
    if let Some((run, time)) = &mut parts.last {
        if *run >= next {
            return bad("run of a brain's last tick (not before the next run)");
        }
        *time += shift;
        if !time.is_finite() {
            return bad("clock reading of a brain's last tick");
        }
    }
    Ok(())
}

/// The crowd's schedule, read under a clock that reads `now`: its next
/// run and the clock's shift since the save, or what is wrong with it.
struct ScheduleSeed {
    now: f64,
}

impl<'de> DeserializeSeed<'de> for ScheduleSeed {
    type Value = Result<(u64, f64), SnapshotError>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        read_struct(d, "Schedule", SCHEDULE_FIELDS, self)
    }
}

impl<'de> Body<'de> for ScheduleSeed {
    type Value = Result<(u64, f64), SnapshotError>;

    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Self::Value, R::Error> {
        let saved_at: f64 = f.field("saved_at")?;
        let runs: u64 = f.field("runs")?;
        let shift = self.now - saved_at;
        Ok(if !saved_at.is_finite() || !shift.is_finite() {
            Err(SnapshotError::BadValue {
                what: "clock reading",
            })
        } else if runs >= u64::MAX - 1 {
            Err(SnapshotError::BadValue { what: "run count" })
        } else {
            Ok((runs, shift))
        })
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
        read_struct(d, "Brain", BRAIN_FIELDS, self)
    }
}

impl<'de, M, Se, K, F> Body<'de> for EntrySeed<'_, '_, M, Se, K, F>
where
    M: TreeMemory,
    Se: SaveSenses,
    K: Deserialize<'de> + fmt::Debug,
    F: FnMut(&K) -> Option<Entity>,
{
    type Value = Staged<M, Se>;

    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Staged<M, Se>, R::Error> {
        let cx = self.0;
        let key: K = f.field_seed("key", PhantomData)?;
        let agent: u32 = f.field_seed("agent", PhantomData)?;
        let name = || format!("{key:?}");
        let Some(entity) = (cx.entity)(&key) else {
            return Err(cx.raise(LoadError::UnknownKey { key: name() }));
        };
        if !cx
            .world
            .get::<Brain<M>>(entity)
            .is_some_and(|b| std::ptr::eq(b.memory.tree(), cx.tree))
        {
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
        f.field_seed(
            "memory",
            MemorySeed {
                memory: &mut memory,
                now: cx.now,
                cx: &*cx,
                fault: &brain_fault,
            },
        )?;
        let senses = f.field_seed(
            "senses",
            SensesSeed {
                cx: &*cx,
                fault: &brain_fault,
                _se: PhantomData,
            },
        )?;
        let turn = f.optional_field_seed("turn", TurnSeed)?;
        let turn = match turn {
            Some(Err(error)) => return Err(cx.raise(brain_fault(error))),
            Some(Ok(turn)) => Some(turn),
            None => None,
        };
        Ok(Staged {
            key: name(),
            entity,
            agent,
            memory,
            senses,
            turn,
        })
    }
}

/// A brain's place in the schedule and its entity's rate, or what is
/// wrong with them.
struct TurnSeed;

impl<'de> DeserializeSeed<'de> for TurnSeed {
    type Value = Result<SavedTurn, SnapshotError>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        read_struct(d, "Turn", TURN_FIELDS, self)
    }
}

impl<'de> Body<'de> for TurnSeed {
    type Value = Result<SavedTurn, SnapshotError>;

    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Self::Value, R::Error> {
        let period: Option<u32> = f.field("rate")?;
        let slot = f.field("slot")?;
        let due_since = f.field("due_since")?;
        let last = f.field("last_tick")?;
        let seen: Option<Option<u32>> =
            f.optional_field_seed("seen_rate", core::marker::PhantomData)?;
        if let Some(Some(k)) = seen
            && k > bt_core::Schedule::MAX_PERIOD
        {
            return Ok(Err(SnapshotError::BadValue {
                what: "rate the last run found (a period above bt_core::Schedule::MAX_PERIOD)",
            }));
        }
        let parts = TurnParts {
            slot,
            due_since,
            last,
            seen,
        };
        let rate = match period {
            None => None,
            Some(0) => Some(TickRate::ON_WAKE),
            Some(k) => match TickRate::new(Rate::Every(k)) {
                Ok(rate) => Some(rate),
                Err(_) => {
                    return Ok(Err(SnapshotError::BadValue {
                        what: "tick rate (a period above bt_core::Schedule::MAX_PERIOD)",
                    }));
                }
            },
        };
        Ok(Ok(SavedTurn { rate, parts }))
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
