//! The tick system of a tree with shared state (gates, global cooldowns,
//! group roles, deferred actions): every brain in one pass, in the order of
//! its entity's index, the traced and recorded ones in their place.
//!
//! Who gets through a gate, a cooldown or a role depends on every brain
//! ticked before it, and the tickets and the queue of deferred actions on
//! the order of the launches: no parallel order gives the same decisions
//! twice. bt-core's `tick_all` (and `par_tick_all`) tick such a crowd in
//! index order; the agent id of a brain is its entity's index, so this is
//! the same order. An entity's components (a [`DebugBrain`](crate::DebugBrain),
//! a [`Recorded`](crate::Recorded) marker, the game's own) do not move it:
//! observing a brain changes no decision.

use bevy_ecs::entity::Entities;
use bevy_ecs::message::MessageWriter;
use bevy_ecs::prelude::*;
use bevy_ecs::system::InMut;
use bevy_time::Time;

use super::tick::{RecorderParam, Tally, Totals, WatchData, end_run, recorder_of, tick_watched};
use super::{ActionMessage, BrainShared, BrainStats};
use crate::adapter::TreeMemory;
use crate::agent::BrainAgent;
use crate::brain::SenseSource;

/// Ticks every brain of crowd `k` of memory type `M` one after the other,
/// in the order of their entities' indexes (traced or recorded where asked,
/// in their place), then forwards the deferred actions.
///
/// The crowd keeps its brains' entities in that order, sorted again only
/// in a run after brains came or went; each run looks each entity up in
/// the query.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_in_order<M: TreeMemory, Se: SenseSource>(
    InMut(k): InMut<usize>,
    time: Res<Time>,
    mut shared: ResMut<BrainShared<M>>,
    mut stats: ResMut<BrainStats<M>>,
    mut brains: Query<WatchData<M, Se>>,
    mut recorder: RecorderParam<M>,
    entities: &Entities,
    mut actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: BrainAgent,
{
    let k = *k;
    let (now, dt) = (time.elapsed_secs_f64(), time.delta_secs());
    let shared = shared.bypass_change_detection();
    let crowd = &mut shared.crowds[k];
    let tree = crowd.tree();
    let mut recorder = recorder_of(&mut recorder, tree);
    let totals = Totals::default();
    let mut tally = Tally::new(&totals);
    let members = crowd.members.in_order(|&e| {
        brains
            .get(e)
            .is_ok_and(|((_, brain, ..), ..)| std::ptr::eq(brain.memory.tree(), tree))
    });
    for &entity in members {
        if let Ok(item) = brains.get_mut(entity) {
            tick_watched::<M, Se>(now, dt, item, &mut recorder, &mut tally);
        }
    }
    drop(tally);
    end_run(
        k,
        &totals,
        recorder,
        shared,
        &mut stats,
        entities,
        &mut actions,
    );
}
