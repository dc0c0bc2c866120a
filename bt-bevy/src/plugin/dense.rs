//! The chunked tick system ([`BrainPlugin::dense`](crate::BrainPlugin::dense)):
//! the brains of a tree without shared state ticked table chunk by table
//! chunk, over plain slices.
//!
//! A chunk in which every brain ticks (no [`TickRate`], no senses, no
//! budget's cut, one tree) and has its [`Decisions`] takes the short loop,
//! [`tick_every`], which asks no brain whether it is due; any other takes
//! [`tick_planned`], which asks the run's plan about each brain. Both fetch the memories of
//! the next few brains while one ticks.

use bevy_ecs::change_detection::{ContiguousComponentTicksMut, ContiguousMut, Tick as ChangeTick};
use bevy_ecs::entity::{Entities, Entity};
use bevy_ecs::message::MessageWriter;
use bevy_ecs::prelude::*;
use bevy_ecs::query::ContiguousQueryData;
use bevy_ecs::system::{InMut, SystemChangeTick};
use bevy_time::Time;

use super::source::TreeSource;
use super::tick::{
    RecorderParam, Tally, Totals, Untraced, Watched, end_run, key, plain, plan_run, recorder_of,
    tick_after, tick_one,
};
use super::{ActionMessage, BrainShared, BrainStats};
use crate::adapter::{Input, Timed, TreeMemory};
use crate::agent::{BrainAgent, DenseAgent};
use crate::brain::{Brain, Decisions, SenseSource, agent_id};
use crate::rate::{Cut, Plan, TickRate};

/// The query of the chunked tick: as [`TickData`](super::tick::TickData),
/// but `Decisions` and [`TickRate`] with write access (never used: the tick
/// only reads them). bevy_ecs 0.20.1's parallel chunk fetch of a read-only
/// component checks the chunk's length against the whole table's in debug
/// builds, and fails for every chunk but a table's only one; the mutable
/// fetch has no such check.
type DenseData<M, Se> = (
    Entity,
    &'static mut Brain<M>,
    Option<&'static mut Decisions>,
    Option<&'static mut Se>,
    <<M as TreeMemory>::Agent as BrainAgent>::Data,
    Option<&'static mut TickRate>,
);

/// One table chunk of [`DenseData`].
type Chunk<'w, 's, M, Se> = <DenseData<M, Se> as ContiguousQueryData>::Contiguous<'w, 's>;

/// The agents' components of one table chunk.
type AgentChunk<'w, 's, M> =
    <<<M as TreeMemory>::Agent as BrainAgent>::Data as ContiguousQueryData>::Contiguous<'w, 's>;

/// How many brains ahead the chunked tick fetches memories.
const AHEAD: usize = 4;

/// [`tick_brains`](super::tick::tick_brains) over whole table chunks where
/// the query is dense (every component in tables), entity by entity where
/// it is not. `S`: where the ticks find the tree.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn tick_brains_dense<M: TreeMemory, Se: SenseSource, S: TreeSource<M>>(
    InMut(k): InMut<usize>,
    time: Res<Time>,
    ticks: SystemChangeTick,
    mut shared: ResMut<BrainShared<M>>,
    mut stats: ResMut<BrainStats<M>>,
    mut brains: Query<DenseData<M, Se>, Untraced>,
    mut watched: Watched<M, Se>,
    mut recorder: RecorderParam<M>,
    entities: &Entities,
    mut actions: MessageWriter<ActionMessage<M>>,
) where
    M::Agent: DenseAgent,
{
    let k = *k;
    let shared = shared.bypass_change_detection();
    shared.crowds[k].apply_tuning();
    let tree = shared.crowds[k].tree();
    let mixed = shared.crowds.len() > 1;
    let (plan, figures) = plan_run(&time, &ticks, &mut shared.crowds[k], |r, since| {
        let own = move |brain: &Brain<M>| !mixed || std::ptr::eq(brain.memory.tree(), tree);
        let a = (brains.iter_mut().filter(move |i| own(&i.1)))
            .map(move |i| key((r, since), i.0, &i.1, i.3.as_ref(), i.5.as_deref()));
        let b = (watched.iter_mut().filter(move |i| own(&i.0.1)))
            .map(move |(i, ..)| key((r, since), i.0, &i.1, i.3.as_ref(), i.5));
        a.chain(b)
    });
    let totals = Totals::default();
    // Every brain of the crowd is due and ticks: no budget cuts the run.
    let all = !mixed && plan.cut == Cut::All;
    match brains.contiguous_par_iter_mut() {
        Ok(chunks) => chunks.for_each_init(
            || Tally::new(&totals),
            |tally, chunk: Chunk<'_, '_, M, Se>| match chunk {
                (ids, brains, Some(decisions), None, mut data, None) if all => {
                    tick_every::<M, S>(plan, tally, ids, brains, decisions, &mut data);
                }
                chunk => tick_planned::<M, Se, S>(plan, tree, mixed, tally, chunk),
            },
        ),
        Err(_) => brains.par_iter_mut().for_each_init(
            || Tally::new(&totals),
            |tally, (entity, mut brain, decisions, mut senses, mut data, rate)| {
                if mixed && !std::ptr::eq(brain.memory.tree(), tree) {
                    return;
                }
                let decision = decisions.map_or(0, |d| d.0);
                let senses = senses.as_mut();
                tick_one::<M, Se>(
                    plan,
                    rate.as_deref(),
                    entity,
                    &mut brain,
                    decision,
                    senses,
                    &mut data,
                    tally,
                    plain::<M, S>,
                );
            },
        ),
    }
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

/// Ticks every brain of a chunk of the crowd's own brains, none with a
/// [`TickRate`] or senses, each with its [`Decisions`], in a run that cuts
/// none: each is due and ticks with the time since its own last tick, as
/// [`Plan::go`] would give it.
#[inline(always)]
fn tick_every<M: TreeMemory, S: TreeSource<M>>(
    plan: Plan,
    tally: &mut Tally<'_>,
    ids: &[Entity],
    brains: ContiguousMut<'_, Brain<M>>,
    decisions: ContiguousMut<'_, Decisions>,
    data: &mut AgentChunk<'_, '_, M>,
) where
    M::Agent: DenseAgent,
{
    let (brains, mut ticks) = ContiguousMut::bypass_change_detection_split(brains);
    let this_run = ticks.this_run();
    let changed = ticks.changed_mut();
    let decisions = ContiguousMut::bypass_change_detection_split(decisions).0;
    let n = (brains.len().min(ids.len()))
        .min(changed.len())
        .min(decisions.len());
    // One length for every slice: the loop indexes them without a check.
    let (brains, ids, changed, decisions) = (
        &mut brains[..n],
        &ids[..n],
        &mut changed[..n],
        &decisions[..n],
    );
    // The frame's times, checked once for the chunk: a brain that ticked
    // in the run before (nearly all) ticks with them, unchecked; any other
    // takes its own step out of line, checked. A `Time` reads a finite
    // clock and a step from 0 to `f32::MAX`.
    let at = Timed::new(plan.now, plan.dt).expect("a `Time` gives a tick usable times");
    match <M::Agent as DenseAgent>::chunk_agents(data) {
        // The agents in place, their rows marked changed once for the
        // chunk, when it is done: each brain ticks.
        Some(column) => {
            let (agents, ticks) = ContiguousMut::bypass_change_detection_split(column);
            assert_eq!(
                agents.len(),
                n,
                "`DenseAgent::chunk_agents` gave a column of another length than its chunk's"
            );
            let agents = &mut agents[..n];
            let marks = MarkTicked {
                ticks,
                brains,
                r: plan.r,
            };
            for i in 0..n {
                ahead(marks.brains, i);
                let (b, id, decision) = (&mut marks.brains[i], ids[i], decisions[i].0);
                let (changed, agent) = (&mut changed[i], &mut agents[i]);
                tick_row::<M, S>(plan, at, tally, this_run, b, id, decision, changed, agent);
            }
        }
        None => {
            for i in 0..n {
                ahead(brains, i);
                let (b, id, decision) = (&mut brains[i], ids[i], decisions[i].0);
                let changed = &mut changed[i];
                <M::Agent as DenseAgent>::with_agent_at(data, i, |agent| {
                    tick_row::<M, S>(plan, at, tally, this_run, b, id, decision, changed, agent);
                });
            }
        }
    }
}

/// Marks changed, when dropped, the rows of a chunk's agents whose brains
/// [`tick_every`] gave a tick in run `r`: every row once the loop is done,
/// or, if a tick panicked, the rows up to that one (a brain's turn says it
/// ticked in run `r` before its tick starts). Once for the chunk, as the
/// agents' `DerefMut` would, summary tick included. It holds the chunk's
/// brains, which the loop reaches through it.
struct MarkTicked<'c, 'b, M: TreeMemory> {
    ticks: ContiguousComponentTicksMut<'c>,
    brains: &'b mut [Brain<M>],
    r: u64,
}

impl<M: TreeMemory> Drop for MarkTicked<'_, '_, M> {
    #[inline(always)]
    fn drop(&mut self) {
        let rows = if std::thread::panicking() {
            let r = self.r;
            (self.brains.iter())
                .take_while(|b| b.turn.ticked_in(r))
                .count()
        } else {
            self.brains.len()
        };
        // At most the chunk's rows, whose numbers are `u32`.
        self.ticks
            .reborrow()
            .slice(0..rows as u32)
            .mark_all_as_changed();
    }
}

/// Ticks one brain of [`tick_every`]'s chunk, given its row (the brain,
/// its entity, its decision flags and its change tick) and its agent: at
/// the frame's checked times `at` if it ticked in the run before,
/// [`tick_late`] if not. (The row in arguments of their own: no tuple
/// for the out-of-line call to build in memory at every brain.)
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tick_row<M: TreeMemory, S: TreeSource<M>>(
    plan: Plan,
    at: Timed,
    tally: &mut Tally<'_>,
    this_run: ChangeTick,
    b: &mut Brain<M>,
    id: Entity,
    decision: u64,
    changed: &mut ChangeTick,
    agent: &mut M::Agent,
) {
    if !b.turn.on_time(plan.r) {
        let (r, now, dt) = (plan.r, plan.now, plan.dt);
        return tick_late::<M, S>(
            (r, now, dt),
            tally,
            this_run,
            b,
            id,
            decision,
            changed,
            agent,
        );
    }
    b.turn.ticked(plan.r, plan.now);
    let tree = S::tree(&b.memory);
    let flags = (agent_id(id), decision, 0);
    b.memory
        .tick_kept_timed(tree, agent, at, flags, &mut b.last, |kept| {
            tally.add(kept);
            if kept.changed {
                *changed = this_run;
            }
        });
}

/// Ticks a brain of [`tick_every`]'s chunk that did not tick in the run
/// before, in run `r` at `now` whose step is `frame_dt`, with the time
/// since its own last tick (as [`Plan::go`] would give it), its times
/// checked by the tick. (The run's values one by one, not its [`Plan`]:
/// a struct passed to a call out of line is copied at every brain.)
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn tick_late<M: TreeMemory, S: TreeSource<M>>(
    (r, now, frame_dt): (u64, f64, f32),
    tally: &mut Tally<'_>,
    this_run: ChangeTick,
    b: &mut Brain<M>,
    id: Entity,
    decision: u64,
    changed: &mut ChangeTick,
    agent: &mut M::Agent,
) {
    let dt = b.turn.dt(r, now, frame_dt);
    b.turn.ticked(r, now);
    let input = Input {
        now,
        dt,
        agent: agent_id(id),
        decision,
        stimuli: 0,
    };
    let tree = S::tree(&b.memory);
    b.memory
        .tick_kept(tree, agent, &input, &mut b.last, |kept| {
            tally.add(kept);
            if kept.changed {
                *changed = this_run;
            }
        });
}

/// Ticks the brains of `tree` in a chunk that the run's plan decides brain
/// by brain: rates, senses, a budget's cut, or other trees' brains.
#[inline(never)]
fn tick_planned<M: TreeMemory, Se: SenseSource, S: TreeSource<M>>(
    plan: Plan,
    tree: &'static M::Tree,
    mixed: bool,
    tally: &mut Tally<'_>,
    (ids, mut brains, mut decisions, mut senses, mut data, rates): Chunk<'_, '_, M, Se>,
) where
    M::Agent: DenseAgent,
{
    for (i, id) in ids.iter().enumerate() {
        ahead(&brains, i);
        if mixed && !std::ptr::eq(brains[i].memory.tree(), tree) {
            continue;
        }
        let agent = agent_id(*id);
        let sensed = senses.as_ref().is_some_and(|s| {
            let (last, this) = (plan.senses_since, s.this_run_tick());
            s.changed_ticks_slice()[i].is_newer_than(last, this)
                && !s.added_ticks_slice()[i].is_newer_than(last, this)
        });
        let turn = &mut brains.bypass_change_detection()[i].turn;
        let rate = rates.as_ref().map(|r| &r[i]);
        let Some(dt) = plan.go(turn, rate, agent, sensed) else {
            continue;
        };
        let input = Input {
            now: plan.now,
            dt,
            agent,
            decision: decisions
                .as_mut()
                .map_or(0, |d| d.bypass_change_detection()[i].0),
            // Aged through the chunk of its one row, whose `DerefMut`
            // marks the row changed, and the column's summary tick where
            // the component keeps one.
            stimuli: senses.as_mut().map_or(0, |s| {
                let row = i as u32;
                s.reborrow().slice(row..row + 1)[0].update_bits(dt)
            }),
        };
        let b = &mut brains.bypass_change_detection()[i];
        let tree = S::tree(&b.memory);
        let mut changed = false;
        <M::Agent as DenseAgent>::with_agent_at(&mut data, i, |agent| {
            b.memory
                .tick_kept(tree, agent, &input, &mut b.last, |kept| {
                    tally.add(kept);
                    changed = kept.changed;
                });
        });
        if changed {
            let this_run = brains.this_run_tick();
            brains.changed_ticks_slice_mut()[i] = this_run;
        }
    }
}

/// Starts fetching the memories of the brains a few ahead of brain `i`.
/// The chunk's slices are read front to back, yet the hint pays here:
/// without it, the chunked W1 tick took about 6 % more wall time (bt-core's
/// `tick_all` gains nothing from it). The memory `AHEAD` brains on is
/// found from brain `i`'s, past the chunk or not (a hint reads nothing),
/// with no test of the chunk's end.
#[inline(always)]
fn ahead<M: TreeMemory>(brains: &[Brain<M>], i: usize) {
    brains[i]
        .memory
        .prefetch_after(AHEAD * std::mem::size_of::<Brain<M>>());
    if let Some(soon) = brains.get(i + AHEAD / 2) {
        soon.memory.prefetch_leaf_block();
    }
}
