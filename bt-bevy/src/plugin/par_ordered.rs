//! The tick of a tree with shared state on every thread of Bevy's compute
//! task pool, with the decisions of the ordered pass (`ordered.rs`).
//!
//! Two phases. First, in parallel over Bevy's query, each due brain ticks
//! up to its first step that could read or write the crowd's shared state
//! (bt-core's `tick_until_shared`): a tick that never gets there (a
//! behavior running on, a leaf ending in a group without shared checks)
//! is over, and one that does stops at that step boundary, having changed
//! nothing shared. Then, on the system's thread, in the order of the
//! entities' indexes, the stopped ticks go on (`resume`) and the traced or
//! recorded brains, left out of the first phase, tick whole in their place.
//! A brain's first phase reads and writes its own entity alone, so it
//! changes nothing any other brain sees; every gate, cooldown, role and
//! deferred action then sees the brains in the ordered pass's order, and
//! the decisions, reports, shared state, tickets and action messages are
//! the ordered pass's.
//!
//! A callback that panics in the first phase stops the second phase at
//! its brain: the brains before it in entity order finish their ticks, as
//! in the ordered pass, and the panic goes on to the caller. Brains after
//! it may have ticked, wholly or up to their first shared step (a stopped
//! tick holds nothing new in the shared state, and the brain's next tick
//! starts afresh); no brain ticks twice.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, MutexGuard};

use bevy_ecs::change_detection::DetectChangesMut;
use bevy_ecs::entity::Entity;
use bevy_ecs::prelude::*;
use bevy_tasks::ComputeTaskPool;
use bt_core::{TickError, TickReport};

use super::RunFigures;
use super::tick::{RecorderOf, Tally, Totals, WatchData, keep, sensed, tick_watched};
use crate::adapter::{Input, Resume, TreeMemory, UntilShared};
use crate::agent::BrainAgent;
use crate::brain::{Brain, SenseSource, agent_id};
use crate::rate::Plan;

/// The fewest brains a run ticks for the two phases to pay, by default
/// (see [`BrainPlugin::parallel_from`](crate::BrainPlugin::parallel_from)).
pub(crate) const PARALLEL_FROM: u32 = 512;

/// Whether a run of a crowd of `brains` brains (with `figures` under a
/// budget) ticks in two phases: Bevy's compute task pool has more than
/// one thread and the run ticks at least `from` brains.
pub(super) fn wanted(from: u32, brains: usize, figures: Option<RunFigures>) -> bool {
    let ticks = figures.map_or(brains as u64, |f| f.due - f.waiting);
    ticks >= u64::from(from) && ComputeTaskPool::try_get().is_some_and(|p| p.thread_num() > 1)
}

/// A brain's tick left for the second phase.
#[derive(Clone, Copy)]
struct Stop {
    entity: Entity,
    /// Where its tick goes on; `None`: a traced or recorded brain, which
    /// ticks whole there.
    at: Option<Resume>,
}

/// The room of the two phases, a tick system's own (one per crowd), kept
/// from run to run: nothing is allocated once the crowd's size settled.
#[derive(Default)]
pub(super) struct Room {
    /// Lists the tasks of the first phase fill, lent out and given back.
    lists: Mutex<Vec<Vec<Stop>>>,
    /// Every stop of the run: gathered from the tasks' lists, then sorted
    /// by entity index.
    stops: Mutex<Vec<Stop>>,
}

/// A panic's payload, and the agent id (entity index) of the brain whose
/// callback raised it.
type Panic = (u32, Box<dyn Any + Send>);

/// One task of the first phase: its tally and its list of stops, handed
/// to the room when the task ends.
struct Gather<'a> {
    tally: Tally<'a>,
    list: Vec<Stop>,
    room: &'a Room,
}

impl<'a> Gather<'a> {
    fn new(totals: &'a Totals, room: &'a Room) -> Self {
        Gather {
            tally: Tally::new(totals),
            list: lock(&room.lists).pop().unwrap_or_default(),
            room,
        }
    }
}

impl Drop for Gather<'_> {
    fn drop(&mut self) {
        let mut list = std::mem::take(&mut self.list);
        lock(&self.room.stops).extend_from_slice(&list);
        list.clear();
        lock(&self.room.lists).push(list);
    }
}

/// Ticks the brains of `tree` in `brains` in two phases (see the module's
/// documentation), adding them to `totals`. `mixed`: the query holds other
/// trees' brains too.
///
/// # Panics
/// When a callback panics: see the module's documentation.
pub(super) fn tick_two_phases<M: TreeMemory, Se: SenseSource>(
    plan: Plan,
    brains: &mut Query<WatchData<M, Se>>,
    tree: &'static M::Tree,
    mixed: bool,
    recorder: &mut RecorderOf<'_, M>,
    totals: &Totals,
    room: &mut Room,
) where
    M::Agent: BrainAgent,
{
    // A run that panicked in its second phase left its stops.
    room.stops
        .get_mut()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    let panic: Mutex<Option<Panic>> = Mutex::new(None);
    let shared_room: &Room = room;
    brains.par_iter_mut().for_each_init(
        || Gather::new(totals, shared_room),
        |gather, ((entity, mut brain, decisions, mut senses, mut data, rate), debug, flag)| {
            if mixed && !std::ptr::eq(brain.memory.tree(), tree) {
                return;
            }
            if debug.is_some() || recorded(flag) {
                gather.list.push(Stop { entity, at: None });
                return;
            }
            let agent = agent_id(entity);
            let sensed = senses
                .as_ref()
                .is_some_and(|s| sensed(s, plan.senses_since));
            let b = brain.bypass_change_detection();
            let Some(dt) = plan.go(&mut b.turn, rate, agent, sensed) else {
                return;
            };
            let input = Input {
                now: plan.now,
                dt,
                agent,
                decision: decisions.map_or(0, |d| d.0),
                stimuli: senses.as_mut().map_or(0, |s| s.update_bits(dt)),
            };
            let ran = catch_unwind(AssertUnwindSafe(|| {
                <M::Agent as BrainAgent>::with_agent(&mut data, |a| {
                    b.memory.tick_until_shared(a, &input)
                })
            }));
            match ran {
                Ok(UntilShared::Finished(result)) => ticked(&mut brain, result, &mut gather.tally),
                Ok(UntilShared::Stopped(at)) => gather.list.push(Stop {
                    entity,
                    at: Some(at),
                }),
                Err(payload) => keep_panic(&panic, agent, payload),
            }
        },
    );
    let panic = panic.into_inner().unwrap_or_else(|e| e.into_inner());
    // No brain from the first panicking one on goes on.
    let end = panic.as_ref().map_or(u32::MAX, |(agent, _)| *agent);
    let stops = room.stops.get_mut().unwrap_or_else(|e| e.into_inner());
    stops.sort_unstable_by_key(|s| s.entity.index_u32());
    let mut tally = Tally::new(totals);
    for stop in stops.iter().take_while(|s| s.entity.index_u32() < end) {
        let Ok(item) = brains.get_mut(stop.entity) else {
            continue;
        };
        match stop.at {
            None => tick_watched::<M, Se>(plan, item, recorder, &mut tally),
            Some(at) => {
                let ((_, mut brain, _, _, mut data, _), ..) = item;
                let b = brain.bypass_change_detection();
                let result =
                    <M::Agent as BrainAgent>::with_agent(&mut data, |a| b.memory.resume(a, at));
                ticked(&mut brain, result, &mut tally);
            }
        }
    }
    stops.clear();
    drop(tally);
    if let Some((_, payload)) = panic {
        resume_unwind(payload);
    }
}

/// A brain's tick is over: keeps its result, tallies it, and marks the
/// brain changed only when the active path changed (as the ordered pass).
#[inline(always)]
fn ticked<M: TreeMemory>(
    brain: &mut Mut<Brain<M>>,
    result: Result<TickReport, TickError>,
    tally: &mut Tally<'_>,
) {
    let kept = keep(&mut brain.bypass_change_detection().last, result);
    tally.add(kept);
    if kept.changed {
        brain.set_changed();
    }
}

/// Keeps the panic of the brain of agent id `agent` if no brain before it
/// in entity order panicked.
#[cold]
fn keep_panic(kept: &Mutex<Option<Panic>>, agent: u32, payload: Box<dyn Any + Send>) {
    let mut kept = lock(kept);
    if kept.as_ref().is_none_or(|(a, _)| agent < *a) {
        *kept = Some((agent, payload));
    }
}

/// Whether the entity is marked [`Recorded`](crate::Recorded).
#[cfg(feature = "viewer")]
#[inline(always)]
fn recorded(flag: bool) -> bool {
    flag
}

/// Never: recording needs the `viewer` feature.
#[cfg(not(feature = "viewer"))]
#[inline(always)]
fn recorded(_: ()) -> bool {
    false
}

/// A lock, whether or not a panic poisoned it: every panic is caught
/// where what it guards is consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
