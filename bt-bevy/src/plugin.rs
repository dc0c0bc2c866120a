//! The plugin: the shared state resource, the tick system, deferred actions
//! as messages, the per-frame tally.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_ecs::entity::{Entities, Entity, EntityIndex};
use bevy_ecs::intern::Interned;
use bevy_ecs::message::{Message, MessageReader, MessageWriter};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_time::Time;
use bt_core::{Action, ActionOp, ActionRequest, AgentMemory, ItemIdx, Outcome, Ticket, Tree};
use bt_core::{TickError, TickReport, TreeShared};

use crate::adapter::{self, Input, TreeMemory};
use crate::agent::{BrainAgent, DenseAgent};
use crate::brain::{Brain, Decisions, NoSenses, SenseSource, agent_id};
use crate::debug::{self, DebugBrain};
#[cfg(feature = "viewer")]
use crate::record::{BrainRecorder, RecordBrains, Recorded};

/// Adds a tick system to a schedule.
type AddSystem = fn(&mut App, Interned<dyn ScheduleLabel>);

/// Runs the brains of one tree: add one per tree.
///
/// It adds the [`BrainShared`] resource, the [`ActionMessage`] and
/// [`ActionOutcome`] messages, the [`BrainStats`] resource, and two systems
/// in [`BrainSystems`] in the chosen schedule ([`FixedUpdate`] unless told
/// otherwise): first the outcomes the game reported are handed to their
/// brains, then every entity with a [`Brain<M>`] is ticked, in parallel
/// over the query, with `now` and `dt` from [`Time`] (in `FixedUpdate` that
/// is the fixed clock), its [`Decisions`] and its senses; the deferred
/// actions the ticks launched or cancelled are then written as
/// [`ActionMessage`]s. Order the game's systems that fill `Decisions` or
/// senses `.before(BrainSystems::Tick)` and the ones that read actions
/// `.after(BrainSystems::Tick)`.
///
/// It needs `bevy_time`'s `TimePlugin` (in `MinimalPlugins` and
/// `DefaultPlugins`) and, for the parallel tick, `bevy_app`'s
/// `TaskPoolPlugin`. Add one per tree; adding the same tree twice panics,
/// as for any plugin.
///
/// # Panics
/// When the app is finished without a `Time` resource.
pub struct BrainPlugin<M: TreeMemory, Se = NoSenses> {
    tree: &'static M::Tree,
    schedule: Interned<dyn ScheduleLabel>,
    action_capacity: usize,
    /// Adds the chunked tick system ([`BrainPlugin::dense`]) for `Se`.
    dense: Option<AddSystem>,
    /// `dense` was asked for, then the senses changed.
    lost_dense: bool,
    /// What [`record`](Self::record) asked for.
    #[cfg(feature = "viewer")]
    record: Option<RecordBrains>,
    _senses: PhantomData<fn() -> Se>,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize>
    BrainPlugin<AgentMemory<A, L, S, N>, NoSenses>
where
    AgentMemory<A, L, S, N>: TreeMemory<Tree = Tree<A, L, S, N>>,
{
    /// The plugin for `tree`, ticking in [`FixedUpdate`], with room for 8192
    /// deferred-action requests per frame (when the tree has deferred
    /// actions).
    pub fn new(tree: &'static Tree<A, L, S, N>) -> Self {
        BrainPlugin {
            tree,
            schedule: FixedUpdate.intern(),
            action_capacity: 8192,
            dense: None,
            lost_dense: false,
            #[cfg(feature = "viewer")]
            record: None,
            _senses: PhantomData,
        }
    }
}

impl<M: TreeMemory, Se> BrainPlugin<M, Se> {
    /// Ticks in `schedule` instead (`Update`, a schedule of the game's own).
    pub fn in_schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = schedule.intern();
        self
    }

    /// Room for `capacity` deferred-action requests between two drains
    /// (one tick of every brain). A launch and a cancel per brain and tick
    /// is always enough; a launch that does not fit fails its behavior's
    /// activation, and a cancellation that does not fit is lost (the plugin
    /// logs a warning when that happens).
    pub fn action_capacity(mut self, capacity: usize) -> Self {
        self.action_capacity = capacity;
        self
    }

    /// Takes the brains' stimuli from the component `S2` (usually a
    /// [`Senses`](crate::Senses)), aged by each tick's `dt`.
    ///
    /// Call it before [`dense`](Self::dense).
    pub fn with_senses<S2: SenseSource>(self) -> BrainPlugin<M, S2> {
        BrainPlugin {
            tree: self.tree,
            schedule: self.schedule,
            action_capacity: self.action_capacity,
            dense: None,
            lost_dense: self.lost_dense || self.dense.is_some(),
            #[cfg(feature = "viewer")]
            record: self.record,
            _senses: PhantomData,
        }
    }

    /// Records brains into a flight recorder for the decision viewer
    /// (feature `viewer`): those with a [`Recorded`] component, or all of
    /// them (see [`RecordBrains`]). The recorder is the
    /// [`BrainRecorder`] resource, allocated here; recording allocates
    /// nothing after that. Recorded brains tick one by one after the
    /// parallel tick.
    #[cfg(feature = "viewer")]
    pub fn record(mut self, settings: RecordBrains) -> Self {
        self.record = Some(settings);
        self
    }

    /// Ticks the brains table chunk by table chunk instead of entity by
    /// entity, for an agent type that supports it ([`DenseAgent`]; every
    /// [`component_agent!`](crate::component_agent) does): the same ticks
    /// in the same order within a chunk, without Bevy's per-entity fetch.
    /// Where the query is not dense (a component stored in a sparse set),
    /// it falls back to the entity-by-entity path.
    ///
    /// The chunked tick declares write access to [`Decisions`] (it only
    /// reads them): with bevy_ecs 0.20.1, fetching a read-only component
    /// chunk in parallel trips a debug assertion. Systems that read
    /// `Decisions` then cannot run at the same time as the tick.
    pub fn dense(mut self) -> Self
    where
        M::Agent: DenseAgent,
        Se: SenseSource,
    {
        fn add<M: TreeMemory, Se: SenseSource>(app: &mut App, schedule: Interned<dyn ScheduleLabel>)
        where
            M::Agent: DenseAgent,
        {
            app.add_systems(
                schedule,
                tick_brains_dense::<M, Se>.in_set(BrainSystems::Tick),
            );
        }
        self.dense = Some(add::<M, Se>);
        self.lost_dense = false;
        self
    }
}

/// The plugin's systems, in order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrainSystems {
    /// Hands reported outcomes to their brains.
    Outcomes,
    /// Ticks every brain and writes the deferred actions as messages.
    Tick,
}

impl<M: TreeMemory, Se: SenseSource> Plugin for BrainPlugin<M, Se>
where
    M::Agent: BrainAgent,
{
    fn build(&self, app: &mut App) {
        let capacity = if M::has_actions(self.tree) {
            self.action_capacity
        } else {
            0
        };
        app.insert_resource(BrainShared::<M> {
            tree: self.tree,
            state: M::new_shared(self.tree, capacity),
            lost: 0,
            _m: PhantomData,
        })
        .insert_resource(BrainStats::<M>::default())
        .add_message::<ActionMessage<M>>()
        .add_message::<ActionOutcome<M>>()
        .configure_sets(
            self.schedule,
            (BrainSystems::Outcomes, BrainSystems::Tick).chain(),
        )
        .add_systems(
            self.schedule,
            apply_outcomes::<M>.in_set(BrainSystems::Outcomes),
        );
        #[cfg(feature = "viewer")]
        if let Some(settings) = &self.record {
            app.insert_resource(BrainRecorder::<M>::new(self.tree, settings));
            if settings.all {
                app.add_observer(|add: On<Add<Brain<M>>>, mut commands: Commands| {
                    commands.entity(add.entity).insert(Recorded);
                });
            }
        }
        assert!(
            !self.lost_dense,
            "BrainPlugin for tree `{}`: call `dense()` after `with_senses()`",
            M::tree_name(self.tree)
        );
        match self.dense {
            Some(add) => add(app, self.schedule),
            None => {
                app.add_systems(
                    self.schedule,
                    tick_brains::<M, Se>.in_set(BrainSystems::Tick),
                );
            }
        }
    }

    fn finish(&self, app: &mut App) {
        assert!(
            app.world().contains_resource::<Time>(),
            "BrainPlugin for tree `{}` needs bevy_time's `TimePlugin` (part of \
             `MinimalPlugins` and `DefaultPlugins`): the brains tick on its clock",
            M::tree_name(self.tree)
        );
    }
}

/// The state the brains of one tree share (gates, global cooldowns, group
/// roles, the deferred-action queue), as a resource.
#[derive(Resource)]
pub struct BrainShared<M: TreeMemory> {
    tree: &'static M::Tree,
    state: Arc<TreeShared>,
    lost: usize,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> BrainShared<M> {
    /// The shared state: gate counts, roles held, queue figures.
    pub fn state(&self) -> &Arc<TreeShared> {
        &self.state
    }
}

/// One launch or cancellation of a deferred action by an entity's brain.
///
/// Run the action, then report back with one message:
/// `outcomes.write(action.outcome(Outcome::Succeeded))`. A `Cancel` asks to
/// stop the action launched with the same ticket: the behavior was
/// deactivated (preempted, ended, or its entity despawned).
pub struct ActionMessage<M> {
    /// The entity whose brain issued it.
    pub entity: Entity,
    /// The decider whose behavior issued it.
    pub item: ItemIdx,
    /// The launch it belongs to.
    pub ticket: Ticket,
    /// Launch (with the game's action code and argument) or cancel.
    pub op: ActionOp,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> ActionMessage<M> {
    pub(crate) fn new(entity: Entity, r: ActionRequest) -> Self {
        ActionMessage {
            entity,
            item: r.item,
            ticket: r.ticket,
            op: r.op,
            _m: PhantomData,
        }
    }

    /// The action, if this is a launch.
    pub fn launch(&self) -> Option<Action> {
        match self.op {
            ActionOp::Launch(a) => Some(a),
            ActionOp::Cancel => None,
        }
    }

    /// The message that reports this launch's `outcome`.
    pub fn outcome(&self, outcome: Outcome) -> ActionOutcome<M> {
        ActionOutcome {
            entity: self.entity,
            ticket: self.ticket,
            outcome,
            _m: PhantomData,
        }
    }
}

impl<M> Clone for ActionMessage<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for ActionMessage<M> {}

impl<M> std::fmt::Debug for ActionMessage<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionMessage")
            .field("entity", &self.entity)
            .field("item", &self.item)
            .field("ticket", &self.ticket)
            .field("op", &self.op)
            .finish()
    }
}

impl<M: TreeMemory> Message for ActionMessage<M> {}

/// A game system's report of a deferred action: handed to the entity's
/// brain before its next tick. Reports of cancelled launches, or of
/// entities that are gone, are ignored.
pub struct ActionOutcome<M> {
    /// The entity whose brain launched it.
    pub entity: Entity,
    /// The launch.
    pub ticket: Ticket,
    /// How it went.
    pub outcome: Outcome,
    _m: PhantomData<fn() -> M>,
}

impl<M> Clone for ActionOutcome<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for ActionOutcome<M> {}

impl<M> std::fmt::Debug for ActionOutcome<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionOutcome")
            .field("entity", &self.entity)
            .field("ticket", &self.ticket)
            .field("outcome", &self.outcome)
            .finish()
    }
}

impl<M: TreeMemory> Message for ActionOutcome<M> {}

/// What the last run of the tick system did, summed over the brains of one
/// tree.
#[derive(Resource, Debug)]
pub struct BrainStats<M> {
    /// Brains ticked.
    pub ticked: u64,
    /// Brains idle after their tick.
    pub idle: u64,
    /// Brains whose active path changed.
    pub changed: u64,
    /// Brains whose tick failed (see [`Brain::last_tick`]).
    pub errors: u64,
    /// Runs of the tick system so far.
    pub runs: u64,
    _m: PhantomData<fn() -> M>,
}

impl<M> Default for BrainStats<M> {
    fn default() -> Self {
        BrainStats {
            ticked: 0,
            idle: 0,
            changed: 0,
            errors: 0,
            runs: 0,
            _m: PhantomData,
        }
    }
}

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
fn tick_brains<M: TreeMemory, Se: SenseSource>(
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
fn tick_brains_dense<M: TreeMemory, Se: SenseSource>(
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
        r.recorder.begin_frame();
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
    #[cfg(feature = "viewer")]
    if let Some(r) = recorder.as_mut() {
        r.after_run();
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
            M::tree_name(shared.state_tree())
        );
    }
    let state = Arc::clone(&shared.state);
    adapter::drain(&state, |request| {
        actions.write(ActionMessage::new(
            resolve(entities, request.agent),
            request,
        ));
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
}

impl<M: TreeMemory> BrainShared<M> {
    fn state_tree(&self) -> &'static M::Tree {
        self.tree
    }
}

/// Hands the outcomes the game reported to their brains.
fn apply_outcomes<M: TreeMemory>(
    mut outcomes: MessageReader<ActionOutcome<M>>,
    mut brains: Query<&mut Brain<M>>,
) {
    for o in outcomes.read() {
        if let Ok(mut brain) = brains.get_mut(o.entity) {
            brain
                .bypass_change_detection()
                .complete(o.ticket, o.outcome);
        }
    }
}

/// The live entity with index `agent`.
pub(crate) fn resolve(entities: &Entities, agent: u32) -> Entity {
    match EntityIndex::from_raw_u32(agent) {
        Some(index) => entities.resolve_from_index(index),
        None => Entity::PLACEHOLDER,
    }
}
