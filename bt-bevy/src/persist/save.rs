//! The save: every brain of a tree with its crowd's shared state and
//! schedule, written through serde as it is read from the world.

use std::fmt;
use std::marker::PhantomData;

use bevy_ecs::change_detection::{DetectChangesMut, Tick};
use bevy_ecs::entity::Entity;
use bevy_ecs::message::{MessageCursor, Messages};
use bevy_ecs::world::World;
use serde::Serialize;
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};

use super::{BrainSnapshot, SaveSenses};
use crate::adapter::TreeMemory;
use crate::brain::{Brain, agent_id};
use crate::plugin::{ActionOutcome, BrainShared, Crowd, forget_moved};
use crate::rate::{TickRate, TurnParts};

/// Every brain of a tree with the crowd's shared state, as serde writes
/// it (feature `serde`): made by
/// [`SaveBrains::save_brains`](super::SaveBrains::save_brains).
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub struct BrainsSnapshot<'w, M: TreeMemory, Se, K> {
    world: &'w World,
    crowd: &'w Crowd<M>,
    brains: Vec<(K, Entity)>,
    now: f64,
    _senses: PhantomData<fn() -> Se>,
}

impl<M: TreeMemory, Se, K> fmt::Debug for BrainsSnapshot<'_, M, Se, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrainsSnapshot")
            .field("tree", &M::tree_name(self.crowd.tree()))
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

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainsSnapshot<'_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Brains", 3)?;
        st.serialize_field("shared", &self.crowd.snapshot(self.now))?;
        st.serialize_field("brains", &BrainList(self))?;
        st.serialize_field("schedule", &ScheduleOut(self.now, self.crowd.runs))?;
        st.end()
    }
}

/// The crowd's schedule: the clock reading the save was taken at (the
/// brains' last tick times move by the clock's shift from it) and the
/// number of its next run.
struct ScheduleOut(f64, u64);

impl Serialize for ScheduleOut {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Schedule", 2)?;
        st.serialize_field("saved_at", &self.0)?;
        st.serialize_field("runs", &self.1)?;
        st.end()
    }
}

struct BrainList<'a, 'w, M: TreeMemory, Se, K>(&'a BrainsSnapshot<'w, M, Se, K>);

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainList<'_, '_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let save = self.0;
        let world = save.world;
        let mut seq = s.serialize_seq(Some(save.brains.len()))?;
        for (key, entity) in &save.brains {
            let brain = world.get::<Brain<M>>(*entity).ok_or_else(|| {
                serde::ser::Error::custom(format_args!("{entity} lost its brain"))
            })?;
            let mut turn = brain.turn;
            // Senses the game changed since the tick system's last run
            // wake the brain in its next: the save holds that wake.
            if sensed::<Se>(world, *entity, save.crowd.senses_since) {
                turn.wake();
            }
            // The rate, and the one the last run found: a rate the game
            // changed since makes the loaded brain's next run apply the
            // rate-change rule as the saved one's would.
            let rate = world.get::<TickRate>(*entity);
            seq.serialize_element(&BrainEntry::<M, Se, K> {
                key,
                agent: agent_id(*entity),
                memory: brain.snapshot(save.now),
                senses: world.get::<Se>(*entity),
                turn: TurnOut {
                    rate: rate.map(|r| r.period()),
                    parts: turn.parts(save.crowd.runs),
                },
            })?;
        }
        seq.end()
    }
}

/// Whether the tick system's next run sees `entity`'s senses changed (not
/// added) after change tick `since` (its last run, or a load since), as
/// it does now.
fn sensed<Se: SaveSenses>(world: &World, entity: Entity, since: Option<Tick>) -> bool {
    let Some(last) = since else {
        // A system that never ran sees every component as added.
        return false;
    };
    let now = world.read_change_tick();
    (world.get_entity(entity).ok())
        .and_then(|e| e.get_change_ticks::<Se>())
        .is_some_and(|t| t.is_changed(last, now) && !t.is_added(last, now))
}

struct BrainEntry<'a, M, Se, K> {
    key: &'a K,
    agent: u32,
    memory: BrainSnapshot<'a, M>,
    senses: Option<&'a Se>,
    turn: TurnOut,
}

/// A brain's place in the schedule and its entity's rate.
struct TurnOut {
    /// The period of its `TickRate` (0: only when woken; `None`: it has
    /// none, every run).
    rate: Option<u32>,
    parts: TurnParts,
}

impl Serialize for TurnOut {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Turn", 5)?;
        st.serialize_field("rate", &self.rate)?;
        st.serialize_field("slot", &self.parts.slot)?;
        st.serialize_field("due_since", &self.parts.due_since)?;
        st.serialize_field("last_tick", &self.parts.last)?;
        st.serialize_field("seen_rate", &self.parts.seen.flatten())?;
        st.end()
    }
}

struct SensesOut<'a, Se>(&'a Se);

impl<Se: SaveSenses> Serialize for SensesOut<'_, Se> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.0.save(s)
    }
}

impl<M: TreeMemory, Se: SaveSenses, K: Serialize> Serialize for BrainEntry<'_, M, Se, K> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut st = s.serialize_struct("Brain", 5)?;
        st.serialize_field("key", self.key)?;
        st.serialize_field("agent", &self.agent)?;
        st.serialize_field("memory", &self.memory)?;
        st.serialize_field("senses", &self.senses.map(SensesOut))?;
        st.serialize_field("turn", &self.turn)?;
        st.end()
    }
}

/// [`SaveBrains::save_brains`](super::SaveBrains::save_brains) of crowd
/// `k` for a world.
pub(super) fn save_brains<M: TreeMemory, Se: SaveSenses, K: Serialize>(
    world: &mut World,
    k: usize,
    mut key: impl FnMut(Entity) -> Option<K>,
) -> BrainsSnapshot<'_, M, Se, K> {
    flush_outcomes::<M>(world);
    let mut query = world.query::<(Entity, &Brain<M>)>();
    let world: &World = world;
    let crowd = &world.resource::<BrainShared<M>>().crowds[k];
    let brains = query
        .iter(world)
        .filter(|(_, brain)| crowd.owns(&brain.memory))
        .filter_map(|(e, _)| key(e).map(|k| (k, e)))
        .collect();
    BrainsSnapshot {
        world,
        crowd,
        brains,
        now: crowd.now(world),
        _senses: PhantomData,
    }
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
        let done = world.get_mut::<Brain<M>>(o.entity).and_then(|mut brain| {
            let brain = brain.bypass_change_detection();
            brain
                .complete(o.ticket, o.outcome)
                .then(|| brain.memory.tree())
        });
        // As the outcome system does: an action carried over from a load
        // no longer needs its route.
        if let Some(tree) = done
            && let Some(mut shared) = world.get_resource_mut::<BrainShared<M>>()
        {
            let shared = shared.bypass_change_detection();
            if let Some(k) = shared.index_of(tree) {
                forget_moved(&mut shared.crowds[k].moved, o.ticket);
            }
        }
    }
}
