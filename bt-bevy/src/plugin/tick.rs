//! The tick system of a tree without shared state: the brains ticked in
//! parallel entity by entity (table chunk by table chunk in `dense`), the
//! watched ones one by one after them; and what every tick system shares: one
//! brain's tick, traced or recorded, the per-frame tally, the deferred
//! actions forwarded, and the reported outcomes handed back.

#[cfg(not(feature = "viewer"))]
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::change_detection::Tick;
use bevy_ecs::entity::{Entities, Entity};
use bevy_ecs::message::{MessageReader, MessageWriter};
use bevy_ecs::prelude::*;
use bevy_ecs::query::IterQueryData;
use bevy_ecs::system::{InMut, SystemChangeTick};
use bevy_time::Time;
use bt_core::{TickError, TickReport};

use super::source::{MemoryTree, TreeSource};
use super::{
    ActionMessage, ActionOutcome, BrainShared, BrainStats, Crowd, RunFigures, forget_moved, route,
};
use crate::adapter::{self, Input, Kept, Timed, TreeMemory};
use crate::agent::BrainAgent;
use crate::brain::{Brain, Decisions, SenseSource, agent_id};
use crate::debug::{self, DebugBrain};
use crate::rate::{Cut, Plan, TickRate, Turn, cut_of};
#[cfg(feature = "viewer")]
use crate::record::{BrainRecorder, Recorded};

/// Counters shared by the tasks of one parallel tick.
#[derive(Default)]
pub(super) struct Totals([AtomicU64; 4]);

/// One task's counts, added to the totals once, when the task ends. Small
/// (three words), because Bevy's parallel iteration moves it through every
/// item: `ticked | changed << 32` and `idle | errors << 32` (a task ticks
/// fewer than 2^32 brains).
pub(super) struct Tally<'t> {
    totals: &'t Totals,
    ticked_changed: u64,
    idle_errors: u64,
}

impl<'t> Tally<'t> {
    pub(super) fn new(totals: &'t Totals) -> Self {
        Tally {
            totals,
            ticked_changed: 0,
            idle_errors: 0,
        }
    }

    #[inline(always)]
    pub(super) fn add(&mut self, kept: Kept) {
        self.ticked_changed += 1 | u64::from(kept.changed) << 32;
        self.idle_errors += u64::from(kept.idle) | u64::from(kept.failed) << 32;
    }
}

/// Where one brain's tick goes: the task's tally, and whether the brain
/// is to be marked changed.
pub(super) struct Went<'a, 't> {
    tally: &'a mut Tally<'t>,
    changed: bool,
}

impl Went<'_, '_> {
    /// Counts a tick that went as `kept` says.
    #[inline(always)]
    pub(super) fn add(&mut self, kept: Kept) {
        self.tally.add(kept);
        self.changed |= kept.changed;
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
/// senses, the agent's components and its rate.
pub(super) type TickData<M, Se> = ParData<M, Option<&'static mut Se>>;

/// [`TickData`] with the senses through `T` ([`SenseTerm`]).
pub(super) type ParData<M, T> = (
    Entity,
    &'static mut Brain<M>,
    Option<&'static Decisions>,
    T,
    <<M as TreeMemory>::Agent as BrainAgent>::Data,
    Option<&'static TickRate>,
);

/// How the parallel tick's query reaches a brain's senses of type `Se`:
/// `Option<&mut Se>`, or `()` for a plugin without senses, which spares
/// every brain's fetch of a component no entity has.
pub(super) trait SenseTerm<Se: SenseSource>: IterQueryData + 'static {
    /// The senses in a query item, if the entity has them.
    fn senses<'a, 'w, 's>(item: &'a mut Self::Item<'w, 's>) -> Option<&'a mut Mut<'w, Se>>;
}

impl<Se: SenseSource> SenseTerm<Se> for Option<&'static mut Se> {
    #[inline(always)]
    fn senses<'a, 'w, 's>(item: &'a mut Self::Item<'w, 's>) -> Option<&'a mut Mut<'w, Se>> {
        item.as_mut()
    }
}

impl<Se: SenseSource> SenseTerm<Se> for () {
    #[inline(always)]
    fn senses<'a, 'w, 's>(_: &'a mut Self::Item<'w, 's>) -> Option<&'a mut Mut<'w, Se>> {
        None
    }
}

/// Ticks one entity's brain if the run's plan says it is due: builds the
/// input (with the brain's own `dt`), runs the tick on the agent view
/// (with `run`: a plain tick, a traced or a recorded one), which keeps
/// the result in the brain's last and adds it to the tally. Marks the
/// brain changed only when the active path changed (or the tick failed).
/// `None`: not ticked in this run.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn tick_one<M: TreeMemory, Se: SenseSource>(
    plan: Plan,
    rate: Option<&TickRate>,
    entity: Entity,
    brain: &mut Mut<Brain<M>>,
    decision: u64,
    senses: Option<&mut Mut<Se>>,
    data: &mut bevy_ecs::query::QueryItem<'_, '_, <M::Agent as BrainAgent>::Data>,
    tally: &mut Tally<'_>,
    run: impl FnOnce(&mut M, &mut M::Agent, &Input, &mut Result<TickReport, TickError>, &mut Went),
) -> Option<()>
where
    M::Agent: BrainAgent,
{
    let agent = agent_id(entity);
    let b = brain.bypass_change_detection();
    let dt = match rate {
        // Due in every run, and the run cuts none: it ticks.
        None if plan.cut == Cut::All => every(plan, &mut b.turn),
        _ => {
            let sensed = senses
                .as_ref()
                .is_some_and(|s| sensed(s, plan.senses_since));
            plan.go(&mut b.turn, rate, agent, sensed)?
        }
    };
    let input = Input {
        now: plan.now,
        dt,
        agent,
        decision,
        stimuli: senses.map_or(0, |s| s.update_bits(dt)),
    };
    let last = &mut b.last;
    let mut went = Went {
        tally,
        changed: false,
    };
    <M::Agent as BrainAgent>::with_agent(data, |agent| {
        run(&mut b.memory, agent, &input, last, &mut went);
    });
    if went.changed {
        brain.set_changed();
    }
    Some(())
}

/// Ticks a brain with no [`TickRate`] that ticked in the run before (or
/// never) in a run that cuts no due brain, at the frame's times `at`,
/// checked once for the run: what [`tick_one`] does for it, with the
/// frame's step as its `dt`, through the tick that does not check the
/// times again.
#[inline(always)]
fn tick_on_time<M: TreeMemory, Se: SenseSource, S: TreeSource<M>>(
    (plan, at): (Plan, Timed),
    entity: Entity,
    brain: &mut Mut<Brain<M>>,
    decision: u64,
    senses: Option<&mut Mut<Se>>,
    data: &mut bevy_ecs::query::QueryItem<'_, '_, <M::Agent as BrainAgent>::Data>,
    tally: &mut Tally<'_>,
) where
    M::Agent: BrainAgent,
{
    let b = brain.bypass_change_detection();
    b.turn.ticked(plan.r, plan.now);
    let flags = (
        agent_id(entity),
        decision,
        senses.map_or(0, |s| s.update_bits(plan.dt)),
    );
    let mut went = Went {
        tally,
        changed: false,
    };
    let tree = S::tree(&b.memory);
    <M::Agent as BrainAgent>::with_agent(data, |agent| {
        b.memory
            .tick_kept_timed(tree, agent, at, flags, &mut b.last, |kept| went.add(kept));
    });
    if went.changed {
        brain.set_changed();
    }
}

/// The `dt` of a brain that ticks in every run (it has no [`TickRate`])
/// in a run that cuts no due brain, its turn updated: what [`Plan::go`]
/// gives it, without asking whether it is due.
///
/// The period its turn keeps for the rate-change rule is left as it was
/// (one store less per brain, on the path where every instruction
/// counts): the rule only makes due a brain that went a period of 2 or
/// more without a tick, and this one ticks here, so until a run that
/// asks whether it is due keeps the period that run finds, the period
/// kept changes no decision (nor a save's wake).
#[inline(always)]
pub(super) fn every(plan: Plan, turn: &mut Turn) -> f32 {
    let dt = turn.dt(plan.r, plan.now, plan.dt);
    turn.ticked(plan.r, plan.now);
    dt
}

/// Keeps the `result` of a tick made another way than
/// [`TreeMemory::tick_kept`] (traced, recorded, resumed) as the brain's
/// last, and says how it went.
#[inline(always)]
pub(super) fn keep(
    last: &mut Result<TickReport, TickError>,
    result: Result<TickReport, TickError>,
) -> Kept {
    *last = result;
    Kept::of(&result)
}

/// A plain tick, for [`tick_one`], with the tree from `S`.
#[inline(always)]
pub(super) fn plain<M: TreeMemory, S: TreeSource<M>>(
    memory: &mut M,
    agent: &mut M::Agent,
    input: &Input,
    last: &mut Result<TickReport, TickError>,
    went: &mut Went,
) {
    memory.tick_kept(S::tree(memory), agent, input, last, |kept| went.add(kept));
}

/// The brains ticked in parallel: all but the traced ones.
#[cfg(not(feature = "viewer"))]
pub(super) type Untraced = Without<DebugBrain>;
/// The brains ticked in parallel: all but the traced and recorded ones.
#[cfg(feature = "viewer")]
pub(super) type Untraced = (Without<DebugBrain>, Without<Recorded>);

/// Whether the entity is marked [`Recorded`].
#[cfg(feature = "viewer")]
type RecordedFlag = Has<Recorded>;
/// Nothing: recording needs the `viewer` feature.
#[cfg(not(feature = "viewer"))]
type RecordedFlag = ();

/// The query item of a tick that may be traced or recorded: the tick's
/// data, the entity's [`DebugBrain`] and whether it is [`Recorded`].
pub(super) type WatchData<M, Se> = (
    TickData<M, Se>,
    Option<&'static mut DebugBrain>,
    RecordedFlag,
);

/// The watched entities: those with a [`DebugBrain`].
#[cfg(not(feature = "viewer"))]
type WatchedFilter = With<DebugBrain>;
/// The watched entities: those with a [`DebugBrain`] or [`Recorded`].
#[cfg(feature = "viewer")]
type WatchedFilter = Or<(With<DebugBrain>, With<Recorded>)>;

/// The watched entities, ticked one by one after the parallel tick.
pub(super) type Watched<'w, 's, M, Se> = Query<'w, 's, WatchData<M, Se>, WatchedFilter>;

/// The plugin's flight recorder, when it records.
#[cfg(feature = "viewer")]
pub(super) type RecorderParam<'w, M> = Option<ResMut<'w, BrainRecorder<M>>>;
/// Nothing: recording needs the `viewer` feature.
#[cfg(not(feature = "viewer"))]
pub(super) type RecorderParam<'w, M> = PhantomData<fn() -> &'w M>;

/// The flight recorder of one crowd's run: the plugin's, when it records
/// the crowd's tree.
#[cfg(feature = "viewer")]
pub(super) type RecorderOf<'a, M> = Option<&'a mut BrainRecorder<M>>;
/// Nothing: recording needs the `viewer` feature.
#[cfg(not(feature = "viewer"))]
pub(super) type RecorderOf<'a, M> = PhantomData<&'a M>;

/// The recorder of the crowd of `tree` for this run, its frame begun.
#[cfg_attr(not(feature = "viewer"), allow(unused_variables))]
pub(super) fn recorder_of<'a, M: TreeMemory>(
    param: &'a mut RecorderParam<'_, M>,
    tree: &'static M::Tree,
) -> RecorderOf<'a, M> {
    #[cfg(feature = "viewer")]
    {
        let mut recorder = param.as_deref_mut().filter(|r| r.records(tree));
        if let Some(r) = recorder.as_deref_mut() {
            r.begin_run();
        }
        recorder
    }
    #[cfg(not(feature = "viewer"))]
    PhantomData
}

/// The plan of a run of `crowd`: its number and clock, and, under a
/// budget (or while brains an earlier budget left wait), the cut taken
/// from the `(due since, order)` of every brain of the crowd, which
/// `keys` lists for run `r`, with the run's figures. `ticks`: the tick
/// system's change ticks; senses changed after the last run, or after a
/// load since, wake their brains.
pub(super) fn plan_run<M: TreeMemory, I: Iterator<Item = (Option<u64>, u64)>>(
    time: &Time,
    ticks: &SystemChangeTick,
    crowd: &mut Crowd<M>,
    keys: impl FnOnce(u64, Tick) -> I,
) -> (Plan, Option<RunFigures>) {
    let since = crowd.senses_since.unwrap_or(ticks.last_run());
    crowd.senses_since = Some(ticks.this_run());
    let r = crowd.runs;
    let mut plan = Plan {
        r,
        cut: Cut::All,
        now: time.elapsed_secs_f64(),
        dt: time.delta_secs(),
        senses_since: since,
    };
    if crowd.budget.is_none() && crowd.frame.waiting == 0 {
        return (plan, None);
    }
    let (cut, figures) = cut_of(crowd.budget, &mut crowd.due, r, keys(r, since));
    plan.cut = cut;
    (plan, Some(figures))
}

/// Whether the game changed a brain's senses after the change tick
/// `since` (the last run, or a load after it), not counting their arrival
/// with the entity: that wakes the brain.
#[inline]
pub(super) fn sensed<Se: SenseSource>(senses: &Mut<Se>, since: Tick) -> bool {
    senses.is_changed_after(since) && !senses.is_added_after(since)
}

/// A brain's `(due since, order)` in run `r`, whose senses count from
/// change tick `since`, for [`plan_run`].
#[inline]
pub(super) fn key<M: TreeMemory, Se: SenseSource>(
    (r, since): (u64, Tick),
    entity: Entity,
    brain: &Brain<M>,
    senses: Option<&Mut<Se>>,
    rate: Option<&TickRate>,
) -> (Option<u64>, u64) {
    let sensed = senses.is_some_and(|s| sensed(s, since));
    let turn = &brain.turn;
    (
        turn.due_since(rate, r, sensed),
        turn.order(agent_id(entity)),
    )
}

/// Ticks every brain of crowd `k` of memory type `M` in parallel, entity
/// by entity, then the watched ones, then forwards the deferred actions.
/// `T`: how the parallel query reaches the senses ([`SenseTerm`]); `S`:
/// where the parallel tick finds the tree.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_brains<M: TreeMemory, Se: SenseSource, T: SenseTerm<Se>, S: TreeSource<M>>(
    InMut(k): InMut<usize>,
    time: Res<Time>,
    ticks: SystemChangeTick,
    mut shared: ResMut<BrainShared<M>>,
    mut stats: ResMut<BrainStats<M>>,
    mut brains: Query<ParData<M, T>, Untraced>,
    mut watched: Watched<M, Se>,
    mut recorder: RecorderParam<M>,
    entities: &Entities,
    mut actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: BrainAgent,
{
    let k = *k;
    let shared = shared.bypass_change_detection();
    shared.crowds[k].apply_tuning();
    let tree = shared.crowds[k].tree();
    // Other trees' brains of the same memory type are in the queries too.
    let mixed = shared.crowds.len() > 1;
    let (plan, figures) = plan_run(&time, &ticks, &mut shared.crowds[k], |r, since| {
        let own = move |brain: &Brain<M>| !mixed || std::ptr::eq(brain.memory.tree(), tree);
        let a = (brains.iter_mut().filter(move |i| own(&i.1))).map(move |mut i| {
            let senses = T::senses(&mut i.3).map(|s| &*s);
            key((r, since), i.0, &i.1, senses, i.5)
        });
        let b = (watched.iter_mut().filter(move |i| own(&i.0.1)))
            .map(move |(i, ..)| key((r, since), i.0, &i.1, i.3.as_ref(), i.5));
        a.chain(b)
    });
    let totals = Totals::default();
    per_entity::<M, Se, T, S>(&mut brains, plan, &totals, tree, mixed);
    let mut recorder = recorder_of(&mut recorder, tree);
    tick_after::<M, Se>(plan, &mut watched, &mut recorder, &totals, tree, mixed);
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

/// Ticks the brains of `tree` in `brains` in parallel, one entity at a
/// time (`mixed`: the query holds other trees' brains too).
fn per_entity<M: TreeMemory, Se: SenseSource, T: SenseTerm<Se>, S: TreeSource<M>>(
    brains: &mut Query<ParData<M, T>, Untraced>,
    plan: Plan,
    totals: &Totals,
    tree: &'static M::Tree,
    mixed: bool,
) where
    M::Agent: BrainAgent,
{
    // A run that cuts no due brain checks the frame's times once: a brain
    // with no rate that ticked in the run before (nearly all) ticks with
    // them, unchecked; any other goes the planned way, checked.
    let at = if plan.cut == Cut::All {
        Timed::new(plan.now, plan.dt)
    } else {
        None
    };
    brains.par_iter_mut().for_each_init(
        || Tally::new(totals),
        |tally, (entity, mut brain, decisions, mut senses, mut data, rate)| {
            if mixed && !std::ptr::eq(brain.memory.tree(), tree) {
                return;
            }
            let decision = decisions.map_or(0, |d| d.0);
            let senses = T::senses(&mut senses);
            if let Some(at) = at
                && rate.is_none()
                && brain.turn.on_time(plan.r)
            {
                return tick_on_time::<M, Se, S>(
                    (plan, at),
                    entity,
                    &mut brain,
                    decision,
                    senses,
                    &mut data,
                    tally,
                );
            }
            tick_one::<M, Se>(
                plan,
                rate,
                entity,
                &mut brain,
                decision,
                senses,
                &mut data,
                tally,
                plain::<M, S>,
            );
        },
    );
}

/// After the parallel tick: ticks the watched brains of `tree` one by one.
/// Their ticks depend on no other brain's (the tree has no shared state),
/// so ticking them last changes no decision.
pub(super) fn tick_after<M: TreeMemory, Se: SenseSource>(
    plan: Plan,
    watched: &mut Watched<M, Se>,
    recorder: &mut RecorderOf<'_, M>,
    totals: &Totals,
    tree: &'static M::Tree,
    mixed: bool,
) where
    M::Agent: BrainAgent,
{
    let mut tally = Tally::new(totals);
    for item in watched {
        if mixed && !std::ptr::eq(item.0.1.memory.tree(), tree) {
            continue;
        }
        tick_watched::<M, Se>(plan, item, recorder, &mut tally);
    }
}

/// Ticks one brain: traced when the entity has a [`DebugBrain`], into the
/// flight recorder when it is [`Recorded`] and `recorder` records, plainly
/// otherwise.
#[inline]
pub(super) fn tick_watched<M: TreeMemory, Se: SenseSource>(
    plan: Plan,
    item: bevy_ecs::query::QueryItem<'_, '_, WatchData<M, Se>>,
    #[cfg_attr(not(feature = "viewer"), allow(unused_variables))] recorder: &mut RecorderOf<'_, M>,
    tally: &mut Tally<'_>,
) where
    M::Agent: BrainAgent,
{
    #[cfg_attr(not(feature = "viewer"), allow(unused_variables))]
    let ((entity, mut brain, decisions, mut senses, mut data, rate), mut debug, recorded) = item;
    let mut trace = debug.as_ref().map(|_| adapter::new_trace());
    let decision = decisions.map_or(0, |d| d.0);
    let senses = senses.as_mut();
    #[cfg(feature = "viewer")]
    let lane = match recorder.as_deref_mut() {
        Some(r) if recorded => {
            let b = brain.bypass_change_detection();
            r.lane(&mut b.lane, entity).map(|lane| (r, lane))
        }
        _ => None,
    };
    #[cfg(not(feature = "viewer"))]
    let lane: Option<((), usize)> = None;
    let r = tick_one::<M, Se>(
        plan,
        rate,
        entity,
        &mut brain,
        decision,
        senses,
        &mut data,
        tally,
        |memory, agent, input, last, went| match lane {
            #[cfg(feature = "viewer")]
            Some((r, lane)) => went.add(keep(
                last,
                memory.tick_recorded(agent, input, &mut r.recorder, lane, trace.as_mut()),
            )),
            #[cfg(not(feature = "viewer"))]
            Some(((), _)) => unreachable!("recording needs the viewer feature"),
            None => match trace.as_mut() {
                Some(trace) => went.add(keep(last, memory.tick_traced(agent, input, trace))),
                None => plain::<M, MemoryTree>(memory, agent, input, last, went),
            },
        },
    );
    if r.is_none() {
        return;
    }
    if let (Some(debug), Some(trace)) = (debug.as_mut(), trace) {
        debug::record(debug, entity, &brain.memory, &brain.last, trace, plan.now);
    }
}

/// The end of crowd `k`'s run: sums the tally into the stats, forwards the
/// deferred actions as messages, and ends the recorder's frame.
#[allow(clippy::too_many_arguments)]
pub(super) fn end_run<M: TreeMemory>(
    k: usize,
    totals: &Totals,
    figures: Option<RunFigures>,
    #[cfg_attr(not(feature = "viewer"), allow(unused_mut, unused_variables))]
    mut recorder: RecorderOf<'_, M>,
    shared: &mut BrainShared<M>,
    stats: &mut BrainStats<M>,
    entities: &Entities,
    actions: &mut MessageWriter<ActionMessage<M>>,
) {
    let [ticked, changed, idle, errors] = totals.0.each_ref().map(|t| t.load(Ordering::Relaxed));
    // Without a budget, every due brain ticked on time.
    shared.crowds[k].frame = figures.unwrap_or(RunFigures {
        due: ticked,
        ..RunFigures::default()
    });
    stats.count(shared, k, [ticked, changed, idle, errors]);
    let crowd = &mut shared.crowds[k];
    if errors > 0 {
        log::warn!(
            target: "bt_bevy",
            "{errors} brain(s) of tree `{}` failed their tick (see Brain::last_tick)",
            M::tree_name(crowd.tree())
        );
    }
    let state = Arc::clone(&crowd.state);
    adapter::drain(&state, |request| {
        let entity = route(&mut crowd.moved, entities, &request, |_| None);
        actions.write(ActionMessage::new(entity, request));
    });
    let lost = adapter::lost(&state);
    if lost != crowd.lost {
        log::warn!(
            target: "bt_bevy",
            "{} deferred-action request(s) did not fit the queue; raise BrainPlugin::action_capacity",
            lost - crowd.lost
        );
        crowd.lost = lost;
    }
    // Last: a page may hold the app here, at the end of this frame.
    #[cfg(feature = "viewer")]
    if let Some(r) = recorder.as_mut() {
        r.after_run();
    }
}

/// Hands the outcomes the game reported to the brains of crowd `k`.
pub(super) fn apply_outcomes<M: TreeMemory>(
    InMut(k): InMut<usize>,
    mut outcomes: MessageReader<ActionOutcome<M>>,
    mut brains: Query<&mut Brain<M>>,
    mut shared: ResMut<BrainShared<M>>,
) {
    let crowd = &mut shared.bypass_change_detection().crowds[*k];
    for o in outcomes.read() {
        if let Ok(mut brain) = brains.get_mut(o.entity)
            && crowd.owns(&brain.memory)
            && brain
                .bypass_change_detection()
                .complete(o.ticket, o.outcome)
        {
            forget_moved(&mut crowd.moved, o.ticket);
        }
    }
}
