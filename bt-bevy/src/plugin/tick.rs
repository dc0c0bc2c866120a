//! The tick systems: the brains ticked in parallel (entity by entity or
//! table chunk by table chunk), the watched ones one by one, the per-frame
//! tally, the deferred actions forwarded, and the reported outcomes handed
//! back.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::entity::{Entities, Entity};
use bevy_ecs::message::{MessageReader, MessageWriter};
use bevy_ecs::prelude::*;
use bevy_time::Time;
use bt_core::{TickError, TickReport};

use super::{ActionMessage, ActionOutcome, BrainShared, BrainStats, forget_moved, route};
use crate::adapter::{self, Input, TreeMemory};
use crate::agent::{BrainAgent, DenseAgent};
use crate::brain::{Brain, Decisions, SenseSource, agent_id};
use crate::debug::{self, DebugBrain};
#[cfg(feature = "viewer")]
use crate::record::{BrainRecorder, Recorded};

/// Counters shared by the tasks of one parallel tick.
#[derive(Default)]
struct Totals([AtomicU64; 4]);

/// One task's counts, added to the totals once, when the task ends. Small
/// (three words), because Bevy's parallel iteration moves it through every
/// item: `ticked | changed << 32` and `idle | errors << 32` (a task ticks
/// fewer than 2^32 brains).
struct Tally<'t> {
    totals: &'t Totals,
    ticked_changed: u64,
    idle_errors: u64,
}

impl<'t> Tally<'t> {
    fn new(totals: &'t Totals) -> Self {
        Tally {
            totals,
            ticked_changed: 0,
            idle_errors: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, result: &Result<TickReport, TickError>) {
        match result {
            Ok(r) => {
                self.ticked_changed += 1 | u64::from(r.changed()) << 32;
                self.idle_errors += u64::from(r.behavior.is_none());
            }
            Err(_) => {
                self.ticked_changed += 1 | 1 << 32;
                self.idle_errors += 1 << 32;
            }
        }
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        let (a, b) = (self.ticked_changed, self.idle_errors);
        for (t, n) in self
            .totals
            .0
            .iter()
            .zip([a & 0xFFFF_FFFF, a >> 32, b & 0xFFFF_FFFF, b >> 32])
        {
            if n != 0 {
                t.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// The query item of the tick: the entity, its brain, its flags, its
/// senses and the agent's components.
type TickData<M, Se> = (
    Entity,
    &'static mut Brain<M>,
    Option<&'static Decisions>,
    Option<&'static mut Se>,
    <<M as TreeMemory>::Agent as BrainAgent>::Data,
);

/// The query of the chunked tick: as [`TickData`], but `Decisions` with
/// write access (never used: the tick only reads them). bevy_ecs 0.20.1's
/// parallel chunk fetch of a read-only component checks the chunk's length
/// against the whole table's in debug builds, and fails for every chunk but
/// a table's only one; the mutable fetch has no such check.
type DenseData<M, Se> = (
    Entity,
    &'static mut Brain<M>,
    Option<&'static mut Decisions>,
    Option<&'static mut Se>,
    <<M as TreeMemory>::Agent as BrainAgent>::Data,
);

/// Ticks one entity's brain: builds the input, runs the tick on the agent
/// view (with `run`: a plain tick, a traced or a recorded one), keeps the
/// result. Marks the brain changed only when the active path changed.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tick_one<M: TreeMemory, Se: SenseSource>(
    now: f64,
    dt: f32,
    entity: Entity,
    brain: &mut Mut<Brain<M>>,
    decision: u64,
    senses: Option<&mut Mut<Se>>,
    data: &mut bevy_ecs::query::QueryItem<'_, '_, <M::Agent as BrainAgent>::Data>,
    run: impl FnOnce(&mut M, &mut M::Agent, &Input) -> Result<TickReport, TickError>,
) -> Result<TickReport, TickError>
where
    M::Agent: BrainAgent,
{
    let input = Input {
        now,
        dt,
        agent: agent_id(entity),
        decision,
        stimuli: senses.map_or(0, |s| s.update_bits(dt)),
    };
    let b = brain.bypass_change_detection();
    let result =
        <M::Agent as BrainAgent>::with_agent(data, |agent| run(&mut b.memory, agent, &input));
    b.last = result;
    if result.as_ref().map_or(true, TickReport::changed) {
        brain.set_changed();
    }
    result
}

/// A plain tick, for [`tick_one`].
#[inline(always)]
fn plain<M: TreeMemory>(
    memory: &mut M,
    agent: &mut M::Agent,
    input: &Input,
) -> Result<TickReport, TickError> {
    memory.tick(agent, input)
}

/// The brains ticked in parallel: all but the traced ones.
#[cfg(not(feature = "viewer"))]
type Untraced = Without<DebugBrain>;
/// The brains ticked in parallel: all but the traced and recorded ones.
#[cfg(feature = "viewer")]
type Untraced = (Without<DebugBrain>, Without<Recorded>);

/// The watched entities: those with a [`DebugBrain`], ticked one by one.
#[cfg(not(feature = "viewer"))]
type Watched<'w, 's, M, Se> =
    Query<'w, 's, (TickData<M, Se>, Option<&'static mut DebugBrain>), With<DebugBrain>>;
/// The watched entities: those with a [`DebugBrain`] or [`Recorded`],
/// ticked one by one.
#[cfg(feature = "viewer")]
type Watched<'w, 's, M, Se> = Query<
    'w,
    's,
    (
        TickData<M, Se>,
        Option<&'static mut DebugBrain>,
        Has<Recorded>,
    ),
    Or<(With<DebugBrain>, With<Recorded>)>,
>;

/// The plugin's flight recorder, when it records.
#[cfg(feature = "viewer")]
type RecorderParam<'w, M> = Option<ResMut<'w, BrainRecorder<M>>>;
/// Nothing: recording needs the `viewer` feature.
#[cfg(not(feature = "viewer"))]
type RecorderParam<'w, M> = PhantomData<fn() -> &'w M>;

/// Ticks every brain of tree `M` in parallel, entity by entity, then
/// forwards the deferred actions.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_brains<M: TreeMemory, Se: SenseSource>(
    time: Res<Time>,
    shared: ResMut<BrainShared<M>>,
    stats: ResMut<BrainStats<M>>,
    mut brains: Query<TickData<M, Se>, Untraced>,
    watched: Watched<M, Se>,
    recorder: RecorderParam<M>,
    entities: &Entities,
    actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: BrainAgent,
{
    let (now, dt) = (time.elapsed_secs_f64(), time.delta_secs());
    let totals = Totals::default();
    per_entity::<M, Se>(&mut brains, now, dt, &totals);
    finish::<M, Se>(
        now, dt, &totals, watched, recorder, shared, stats, entities, actions,
    );
}

/// [`tick_brains`] over whole table chunks where the query is dense (every
/// component in tables), entity by entity where it is not.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_brains_dense<M: TreeMemory, Se: SenseSource>(
    time: Res<Time>,
    shared: ResMut<BrainShared<M>>,
    stats: ResMut<BrainStats<M>>,
    mut brains: Query<DenseData<M, Se>, Untraced>,
    watched: Watched<M, Se>,
    recorder: RecorderParam<M>,
    entities: &Entities,
    actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: DenseAgent,
{
    let (now, dt) = (time.elapsed_secs_f64(), time.delta_secs());
    let totals = Totals::default();
    match brains.contiguous_par_iter_mut() {
        Ok(chunks) => chunks.for_each_init(
            || Tally::new(&totals),
            |tally, (ids, mut brains, mut decisions, mut senses, mut data)| {
                for (i, id) in ids.iter().enumerate() {
                    // The memories of the next few brains are on their
                    // way while this one ticks.
                    if let Some(next) = brains.get(i + AHEAD) {
                        next.memory.prefetch();
                    }
                    if let Some(soon) = brains.get(i + AHEAD / 2) {
                        soon.memory.prefetch_leaf_block();
                    }
                    let input = Input {
                        now,
                        dt,
                        agent: agent_id(*id),
                        decision: decisions
                            .as_mut()
                            .map_or(0, |d| d.bypass_change_detection()[i].0),
                        stimuli: senses.as_mut().map_or(0, |s| {
                            let this_run = s.this_run_tick();
                            s.changed_ticks_slice_mut()[i] = this_run;
                            s.bypass_change_detection()[i].update_bits(dt)
                        }),
                    };
                    let b = &mut brains.bypass_change_detection()[i];
                    let result = <M::Agent as DenseAgent>::with_agent_at(&mut data, i, |agent| {
                        b.memory.tick(agent, &input)
                    });
                    tally.add(&result);
                    let changed = result.as_ref().map_or(true, TickReport::changed);
                    b.last = result;
                    if changed {
                        let this_run = brains.this_run_tick();
                        brains.changed_ticks_slice_mut()[i] = this_run;
                    }
                }
            },
        ),
        Err(_) => brains.par_iter_mut().for_each_init(
            || Tally::new(&totals),
            |tally, (entity, mut brain, decisions, mut senses, mut data)| {
                let decision = decisions.map_or(0, |d| d.0);
                let senses = senses.as_mut();
                let r = tick_one::<M, Se>(
                    now, dt, entity, &mut brain, decision, senses, &mut data, plain::<M>,
                );
                tally.add(&r);
            },
        ),
    }
    finish::<M, Se>(
        now, dt, &totals, watched, recorder, shared, stats, entities, actions,
    );
}

/// How many brains ahead the chunked tick fetches memories.
const AHEAD: usize = 4;

/// Ticks the brains of `brains` in parallel, one entity at a time.
fn per_entity<M: TreeMemory, Se: SenseSource>(
    brains: &mut Query<TickData<M, Se>, Untraced>,
    now: f64,
    dt: f32,
    totals: &Totals,
) where
    M::Agent: BrainAgent,
{
    brains.par_iter_mut().for_each_init(
        || Tally::new(totals),
        |tally, (entity, mut brain, decisions, mut senses, mut data)| {
            let decision = decisions.map_or(0, |d| d.0);
            let senses = senses.as_mut();
            let r = tick_one::<M, Se>(
                now, dt, entity, &mut brain, decision, senses, &mut data, plain::<M>,
            );
            tally.add(&r);
        },
    );
}

/// After the parallel tick: ticks the watched entities one by one (with a
/// trace for [`DebugBrain`], into the flight recorder for [`Recorded`]),
/// sums the tally, and forwards the deferred actions as messages.
#[allow(clippy::too_many_arguments)]
fn finish<M: TreeMemory, Se: SenseSource>(
    now: f64,
    dt: f32,
    totals: &Totals,
    mut watched: Watched<M, Se>,
    #[cfg_attr(not(feature = "viewer"), allow(unused_mut, unused_variables))]
    mut recorder: RecorderParam<M>,
    mut shared: ResMut<BrainShared<M>>,
    mut stats: ResMut<BrainStats<M>>,
    entities: &Entities,
    mut actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: BrainAgent,
{
    #[cfg(feature = "viewer")]
    if let Some(r) = recorder.as_mut() {
        r.begin_run();
    }
    let mut tally = Tally::new(totals);
    for item in &mut watched {
        #[cfg(feature = "viewer")]
        let ((entity, mut brain, decisions, mut senses, mut data), mut debug, recorded) = item;
        #[cfg(not(feature = "viewer"))]
        let ((entity, mut brain, decisions, mut senses, mut data), mut debug) = item;
        let mut trace = debug.as_ref().map(|_| adapter::new_trace());
        let decision = decisions.map_or(0, |d| d.0);
        let senses = senses.as_mut();
        #[cfg(feature = "viewer")]
        let lane = match recorder.as_mut() {
            Some(r) if recorded => {
                let b = brain.bypass_change_detection();
                r.lane(&mut b.lane, entity).map(|lane| (r, lane))
            }
            _ => None,
        };
        #[cfg(not(feature = "viewer"))]
        let lane: Option<((), usize)> = None;
        let r = tick_one::<M, Se>(
            now,
            dt,
            entity,
            &mut brain,
            decision,
            senses,
            &mut data,
            |memory, agent, input| match lane {
                #[cfg(feature = "viewer")]
                Some((r, lane)) => {
                    memory.tick_recorded(agent, input, &mut r.recorder, lane, trace.as_mut())
                }
                #[cfg(not(feature = "viewer"))]
                Some(((), _)) => unreachable!("recording needs the viewer feature"),
                None => match trace.as_mut() {
                    Some(trace) => memory.tick_traced(agent, input, trace),
                    None => memory.tick(agent, input),
                },
            },
        );
        tally.add(&r);
        if let (Some(debug), Some(trace)) = (debug.as_mut(), trace) {
            debug::record(debug, entity, &brain.memory, &r, trace, now);
        }
    }
    drop(tally);
    let [ticked, changed, idle, errors] = totals.0.each_ref().map(|t| t.load(Ordering::Relaxed));
    *stats = BrainStats {
        ticked,
        idle,
        changed,
        errors,
        runs: stats.runs + 1,
        _m: PhantomData,
    };
    if errors > 0 {
        log::warn!(
            target: "bt_bevy",
            "{errors} brain(s) of tree `{}` failed their tick (see Brain::last_tick)",
            M::tree_name(shared.tree())
        );
    }
    let state = Arc::clone(&shared.state);
    adapter::drain(&state, |request| {
        let entity = route(&mut shared.moved, entities, &request, |_| None);
        actions.write(ActionMessage::new(entity, request));
    });
    let lost = adapter::lost(&state);
    if lost != shared.lost {
        log::warn!(
            target: "bt_bevy",
            "{} deferred-action request(s) did not fit the queue; raise BrainPlugin::action_capacity",
            lost - shared.lost
        );
        shared.lost = lost;
    }
    // Last: a page may hold the app here, at the end of this frame.
    #[cfg(feature = "viewer")]
    if let Some(r) = recorder.as_mut() {
        r.after_run();
    }
}

/// Hands the outcomes the game reported to their brains.
pub(super) fn apply_outcomes<M: TreeMemory>(
    mut outcomes: MessageReader<ActionOutcome<M>>,
    mut brains: Query<&mut Brain<M>>,
    mut shared: ResMut<BrainShared<M>>,
) {
    for o in outcomes.read() {
        if let Ok(mut brain) = brains.get_mut(o.entity)
            && brain
                .bypass_change_detection()
                .complete(o.ticket, o.outcome)
        {
            forget_moved(&mut shared.bypass_change_detection().moved, o.ticket);
        }
    }
}
