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
//!
//! A run that ticks many brains, with more than one thread in Bevy's
//! compute task pool, ticks them in two phases instead, with the same
//! decisions (`par_ordered.rs`).

use bevy_ecs::entity::Entities;
use bevy_ecs::message::MessageWriter;
use bevy_ecs::prelude::*;
use bevy_ecs::system::{InMut, SystemChangeTick};
use bevy_time::Time;

use super::par_ordered::{self, Room};
use super::tick::{
    RecorderParam, Tally, Totals, WatchData, end_run, key, plan_run, recorder_of, tick_watched,
};
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
/// the query. A run that ticks at least the crowd's `parallel_from` brains
/// on a pool of several threads ticks them in two phases instead
/// ([`par_ordered`]), with the same results.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_in_order<M: TreeMemory, Se: SenseSource>(
    InMut(k): InMut<usize>,
    time: Res<Time>,
    ticks: SystemChangeTick,
    mut shared: ResMut<BrainShared<M>>,
    mut stats: ResMut<BrainStats<M>>,
    mut brains: Query<WatchData<M, Se>>,
    mut recorder: RecorderParam<M>,
    entities: &Entities,
    mut actions: MessageWriter<ActionMessage<M>>,
    mut room: Local<Room>,
) where
    M::Agent: BrainAgent,
{
    let k = *k;
    let shared = shared.bypass_change_detection();
    let crowd = &mut shared.crowds[k];
    crowd.apply_tuning();
    let tree = crowd.tree();
    let mut members = std::mem::take(&mut crowd.members);
    let order = members.in_order(|&e| {
        brains
            .get(e)
            .is_ok_and(|((_, brain, ..), ..)| std::ptr::eq(brain.memory.tree(), tree))
    });
    let query = &mut brains;
    let (plan, figures) = plan_run(&time, &ticks, crowd, |r, since| {
        (order.iter()).filter_map(move |&e| {
            let ((entity, brain, _, senses, _, rate), ..) = query.get_mut(e).ok()?;
            Some(key((r, since), entity, &brain, senses.as_ref(), rate))
        })
    });
    let parallel = par_ordered::wanted(crowd.parallel_from, order.len(), figures);
    let mut recorder = recorder_of(&mut recorder, tree);
    let totals = Totals::default();
    if parallel {
        shared.crowds[k].members = members;
        let mixed = shared.crowds.len() > 1;
        par_ordered::tick_two_phases::<M, Se>(
            plan,
            &mut brains,
            tree,
            mixed,
            &mut recorder,
            &totals,
            &mut room,
        );
    } else {
        let mut tally = Tally::new(&totals);
        for &entity in order {
            if let Ok(item) = brains.get_mut(entity) {
                tick_watched::<M, Se>(plan, item, &mut recorder, &mut tally);
            }
        }
        drop(tally);
        shared.crowds[k].members = members;
    }
    end_run(
        k,
        &totals,
        figures,
        recorder,
        shared,
        &mut stats,
        entities,
        &mut actions,
    );
}
