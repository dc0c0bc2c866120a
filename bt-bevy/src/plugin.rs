//! The plugin: its builder and what it adds to the app. The crowds and
//! the per-frame stats are in `crowd`, deferred actions as messages in
//! `actions`, the tick systems in `tick` (in parallel), `dense` (in
//! parallel, by table chunks) and `ordered` (in entity order).

mod actions;
mod crowd;
mod dense;
mod ordered;
mod par_ordered;
mod sets;
mod source;
mod tick;

use std::any::TypeId;
use std::marker::PhantomData;
#[cfg(feature = "tune-file")]
use std::path::PathBuf;
use std::sync::Arc;

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_time::Time;
use bt_core::{AgentMemory, StaticTree, Tree};

use crate::adapter::TreeMemory;
use crate::agent::{BrainAgent, DenseAgent};
use crate::brain::{NoSenses, SenseSource};
#[cfg(feature = "viewer")]
use crate::record::{BrainRecorder, EntityData, RecordBrains};
use crate::tagged::Tagged;
use crate::tuning::TuningSettings;
pub use actions::{ActionMessage, ActionOutcome};
pub(crate) use actions::{forget_moved, route};
pub(crate) use crowd::RunFigures;
#[cfg(feature = "serde")]
pub(crate) use crowd::tree_names;
pub use crowd::{BrainShared, BrainStats, Crowd};
use dense::tick_brains_dense;
use ordered::tick_in_order;
pub use sets::BrainSystems;
pub(crate) use sets::TickOf;
pub use source::{MarkedTree, MemoryTree, TreeSource};
use tick::{apply_outcomes, tick_brains};

/// Adds a system for crowd `k` to a schedule.
type AddSystem = fn(&mut App, Interned<dyn ScheduleLabel>, usize);

/// Runs the brains of one tree: add one per tree.
///
/// It adds the [`BrainShared`] resource, the [`ActionMessage`] and
/// [`ActionOutcome`] messages, the [`BrainStats`] resource, and two systems
/// in [`BrainSystems`] in the chosen schedule ([`FixedUpdate`] unless told
/// otherwise): first the outcomes the game reported are handed to their
/// brains, then every entity with a [`Brain<M>`](crate::Brain) of the tree
/// is ticked with `now` and `dt` from [`Time`] (in `FixedUpdate` that is
/// the fixed clock), its [`Decisions`](crate::Decisions) and its senses;
/// the deferred actions the ticks launched or cancelled are then written as
/// [`ActionMessage`]s. Order the game's systems that fill `Decisions` or
/// senses `.before(BrainSystems::Tick)` and the ones that read actions
/// `.after(BrainSystems::Tick)`.
///
/// For a tree with tunables it adds the [`BrainTuning`](crate::BrainTuning)
/// resource, and each run of the tick system puts the changes staged on
/// them in effect before any brain ticks (a system that tunes, ordered
/// `.before(BrainSystems::Tick)`, changes what the same run reads); with
/// a tuning file (`tuning_file`, feature `tune-file`), a system
/// that takes the file's readings before the brains tick.
///
/// The brains of a tree with shared state (a gate, a global cooldown, a
/// group role or a deferred action) make the decisions of ticking one after
/// the other in the order of their entities' indexes, their agent ids, as
/// bt-core's `tick_all` ticks a crowd: who gets through a gate depends on
/// who ticked before, so the same app makes the same decisions in every
/// run. From [`parallel_from`](Self::parallel_from) brains on they tick on
/// every thread of Bevy's compute task pool with those decisions (see
/// "Order" in the [crate's documentation](crate#what-the-plugin-adds)).
/// The brains of any other tree tick in parallel over Bevy's query: each
/// decides on its own entity alone, so the order changes nothing. Either
/// way, debugging ([`DebugBrain`](crate::DebugBrain)) and recording change
/// no decision.
///
/// It needs `bevy_time`'s `TimePlugin` and, for the thread pool of the
/// parallel tick, `bevy_app`'s `TaskPoolPlugin`: with bt-bevy's own
/// dependencies, `app.add_plugins((TaskPoolPlugin::default(), TimePlugin))`.
/// The `bevy` crate's plugin groups `MinimalPlugins` and `DefaultPlugins`
/// hold both, for a game that depends on `bevy` itself (`bevy` 0.20.1
/// needs Rust 1.97.1, a newer Rust than bt-bevy; see
/// [The plugins an app needs](crate#the-plugins-an-app-needs)).
///
/// Add one per tree; adding the same tree twice panics, naming the tree.
/// Two trees whose memory types are the same run side by side as
/// `Brain<M>`, each with its own [`Crowd`] in [`BrainShared<M>`]; a tag
/// ([`tagged`](Self::tagged)) gives a tree types of its own instead.
///
/// The plugin made with [`of`](Self::of) from the tree's marker type
/// rather than its `static` ticks the same brains the same way, with the
/// tree a constant in its tick systems' code (`T`, its [`TreeSource`],
/// says which).
///
/// # Panics
/// When the app is finished without a `Time` resource.
pub struct BrainPlugin<M: TreeMemory, Se = NoSenses, T = MemoryTree> {
    tree: &'static M::Tree,
    /// The plugin's name for Bevy: its memory type and its tree.
    name: String,
    schedule: Interned<dyn ScheduleLabel>,
    action_capacity: usize,
    /// The crowd's budget of brains ticked per run.
    budget: Option<u32>,
    /// From how many brains a run of a tree with shared state ticks them
    /// on every thread ([`parallel_from`](Self::parallel_from)).
    parallel_from: u32,
    /// Adds the chunked tick system ([`BrainPlugin::dense`]) for `Se`.
    dense: Option<AddSystem>,
    /// `dense` was asked for, then the senses changed.
    lost_dense: bool,
    /// What is asked of the tree's tunables (its tuning file).
    tuning: TuningSettings,
    /// What [`record`](Self::record) asked for.
    #[cfg(feature = "viewer")]
    record: Option<RecordBrains>,
    /// Adds the system that reads the recorded entities' values, when
    /// [`record`](Self::record) asked for them.
    #[cfg(feature = "viewer")]
    record_values: Option<AddSystem>,
    /// `record` asked for values, then the memory type changed (a tag).
    #[cfg(feature = "viewer")]
    lost_values: bool,
    _senses: PhantomData<fn() -> (Se, T)>,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize>
    BrainPlugin<AgentMemory<A, L, S, N>, NoSenses>
where
    AgentMemory<A, L, S, N>: TreeMemory<Tree = Tree<A, L, S, N>>,
{
    /// The plugin for `tree`, ticking in [`FixedUpdate`], with room for 8192
    /// deferred-action requests per frame (when the tree has deferred
    /// actions).
    ///
    /// The tree's agent type must be a [`BrainAgent`]: a component declared
    /// with [`component_agent!`](crate::component_agent), or a view.
    pub fn new(tree: &'static Tree<A, L, S, N>) -> Self
    where
        A: BrainAgent,
    {
        BrainPlugin {
            tree,
            name: plugin_name::<AgentMemory<A, L, S, N>>(tree),
            schedule: FixedUpdate.intern(),
            action_capacity: 8192,
            budget: None,
            parallel_from: par_ordered::PARALLEL_FROM,
            dense: None,
            lost_dense: false,
            tuning: TuningSettings::default(),
            #[cfg(feature = "viewer")]
            record: None,
            #[cfg(feature = "viewer")]
            record_values: None,
            #[cfg(feature = "viewer")]
            lost_values: false,
            _senses: PhantomData,
        }
    }

    /// The plugin for the tree of the marker type `K` (declared by
    /// `tree!` with `marker: K`): as [`new`](Self::new) with that tree,
    /// and its brains are the same `Brain::new(&TREE)`. Its tick systems
    /// are made for `K`, with the tree a constant in their code: the
    /// interpreter's reads of the tree's tables fold into it, as in
    /// bt-core's `tick_all` given the tree's `static`, where the plugin
    /// made with `new` reads the tree from each brain's memory (fewer
    /// instructions per brain: see the crate's section [Cost](crate#cost)).
    ///
    /// ```
    /// # use bevy_ecs::prelude::*;
    /// # use bt_core::{behavior, decider, tree};
    /// # #[derive(Component, Default)] struct Critter;
    /// # bt_bevy::component_agent!(Critter);
    /// # behavior! { WANDER: Critter }
    /// # decider! { JUST_WANDER: Critter => WANDER }
    /// use bt_bevy::{Brain, BrainPlugin};
    ///
    /// tree! { CRITTER: Critter = JUST_WANDER, memory: CritterMemory, marker: CritterTree }
    ///
    /// let plugin = BrainPlugin::of::<CritterTree>().dense();
    /// let brain: Brain<CritterMemory> = Brain::new(&CRITTER);
    /// # let _ = (plugin, brain);
    /// ```
    pub fn of<K: StaticTree<Tree = Tree<A, L, S, N>>>()
    -> BrainPlugin<AgentMemory<A, L, S, N>, NoSenses, MarkedTree<K>>
    where
        A: BrainAgent,
    {
        Self::new(K::tree()).retyped()
    }
}

impl<M: TreeMemory, Se, Src> BrainPlugin<M, Se, Src> {
    /// The plugin with the senses `Se2` and the tree source `Src2`: the
    /// tick systems that [`dense`](Self::dense) asked for are lost (made
    /// for the old types).
    fn retyped<Se2, Src2>(self) -> BrainPlugin<M, Se2, Src2> {
        BrainPlugin {
            tree: self.tree,
            name: self.name,
            schedule: self.schedule,
            action_capacity: self.action_capacity,
            budget: self.budget,
            parallel_from: self.parallel_from,
            dense: None,
            lost_dense: self.lost_dense || self.dense.is_some(),
            tuning: self.tuning,
            #[cfg(feature = "viewer")]
            record: self.record,
            #[cfg(feature = "viewer")]
            record_values: self.record_values,
            #[cfg(feature = "viewer")]
            lost_values: self.lost_values,
            _senses: PhantomData,
        }
    }

    /// Ticks in `schedule` instead (`Update`, a schedule of the game's own).
    pub fn in_schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = schedule.intern();
        self
    }

    /// The plugin under the tag `T`: its brains are
    /// [`Brain<Tagged<M, T>>`](Tagged) (made with [`Brain::tagged`](crate::Brain::tagged)), its
    /// resources and messages `BrainShared<Tagged<M, T>>` and so on: types
    /// of its own, for a game that wants to tell a tree's brains, messages
    /// and stats from those of another tree of the same memory type by
    /// type. A brain inserted without the plugin's tag is refused
    /// ([`BrainRefused`](crate::BrainRefused)).
    pub fn tagged<T: 'static>(self) -> BrainPlugin<Tagged<M, T>, Se, Src> {
        BrainPlugin {
            tree: self.tree,
            name: plugin_name::<Tagged<M, T>>(self.tree),
            schedule: self.schedule,
            action_capacity: self.action_capacity,
            budget: self.budget,
            parallel_from: self.parallel_from,
            dense: None,
            lost_dense: self.lost_dense || self.dense.is_some(),
            tuning: self.tuning,
            #[cfg(feature = "viewer")]
            record: self.record,
            #[cfg(feature = "viewer")]
            record_values: None,
            #[cfg(feature = "viewer")]
            lost_values: self.lost_values || self.record_values.is_some(),
            _senses: PhantomData,
        }
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

    /// Ticks at most `budget` brains per run: the due brains beyond it
    /// (those whose [`TickRate`](crate::TickRate) turn came, woken ones,
    /// and those left waiting) wait for a later run, the longest waiting
    /// first, then by agent id. With `N` brains, none ticks later than
    /// `(N - 1) / budget` runs after the run it was due in. Change it
    /// while the app runs with
    /// [`Crowd::set_budget`](crate::Crowd::set_budget), through
    /// [`BrainShared::crowd_mut`](crate::BrainShared::crowd_mut).
    pub fn budget(mut self, budget: u32) -> Self {
        self.budget = Some(budget);
        self
    }

    /// For a tree with shared state (a gate, a global cooldown, a group
    /// role or a deferred action): the fewest brains a run must tick for
    /// them to tick on every thread of Bevy's compute task pool, 512 by
    /// default; with fewer, or a pool of one thread, they tick one after
    /// the other on the system's thread. `0`: whenever the pool has more
    /// than one thread; `u32::MAX`: never. The brains a run ticks are the
    /// crowd's brains, or under a [`budget`](Self::budget) those the budget
    /// lets tick. Either way the decisions are the same (see "Order" in the
    /// [crate's documentation](crate#what-the-plugin-adds)); below a few
    /// hundred brains, handing them to the pool's threads costs more than
    /// it saves. A tree without shared state always ticks on every thread,
    /// and ignores this.
    pub fn parallel_from(mut self, brains: u32) -> Self {
        self.parallel_from = brains;
        self
    }

    /// Watches the TOML file `path` of the tree's tunables (feature
    /// `tune-file`, bt-core's tuning file): read when the plugin is added,
    /// then again after each save, its values staged all together (a key
    /// left out keeps its value) and in effect from the crowd's next run,
    /// for every brain of the run alike. A system of the plugin's schedule
    /// takes each reading before the brains tick, and reports it as a
    /// [`TuningFileRead`](crate::TuningFileRead) message and a log line. A
    /// bad file (not TOML, a key that is not a tunable, a value of another
    /// type or out of range), a file that cannot be read and a folder that
    /// cannot be watched change nothing and are reported the same way,
    /// naming the file, the key and its line; nothing about the file
    /// panics. See bt-core's `TuningFile` for the whole contract.
    ///
    /// # Panics
    /// When the plugin is added, for a tree without tunables.
    #[cfg(feature = "tune-file")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tune-file")))]
    pub fn tuning_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.tuning.file = Some(path.into());
        self
    }

    /// Takes the brains' stimuli from the component `S2` (usually a
    /// [`Senses`](crate::Senses)), aged by each tick's `dt`.
    ///
    /// Call it before [`dense`](Self::dense).
    pub fn with_senses<S2: SenseSource>(self) -> BrainPlugin<M, S2, Src> {
        self.retyped()
    }

    /// Records brains into a flight recorder for the decision viewer
    /// (feature `viewer`): those with a [`Recorded`](crate::Recorded) component, or all of
    /// them, and with [`RecordBrains::data`] their own values, read from
    /// their components (see [`RecordBrains`]). The recorder is the
    /// [`BrainRecorder`] resource, allocated when the plugin is added;
    /// recording allocates nothing after that. Recording changes no
    /// decision: recorded brains tick in their place in a tree with shared
    /// state, and one by one after the parallel tick in any other. Nor does
    /// it move an agent id: Bevy keeps each resource in an entity, and a
    /// plugin that does not record holds the recorder's place with one of
    /// its own, so the entities spawned after it are the same.
    ///
    /// One tree per memory type can be recorded: adding a second plugin
    /// that records, for another tree of the same memory type, panics and
    /// says to tag one of them. Of two trees of one memory type, add the
    /// recorded one's plugin first: the other's then takes no place, and
    /// the ids are those of the app that records neither.
    ///
    /// With values, call it after [`tagged`](Self::tagged): the system
    /// that reads them is made for the plugin's memory type (adding a
    /// plugin tagged after it panics and says so).
    #[cfg(feature = "viewer")]
    #[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
    pub fn record<V: EntityData>(mut self, settings: RecordBrains<V>) -> Self {
        self.record_values = settings
            .data
            .map(|_| crate::record::add_record_values::<M, V> as AddSystem);
        self.lost_values = false;
        self.record = Some(settings.erased());
        self
    }

    /// Ticks the brains table chunk by table chunk instead of entity by
    /// entity, for an agent type that supports it ([`DenseAgent`]; every
    /// [`component_agent!`](crate::component_agent) does): the same ticks
    /// in the same order within a chunk, without Bevy's per-entity fetch.
    /// Where the query is not dense (a component stored in a sparse set),
    /// it falls back to the entity-by-entity path. A tree with shared state
    /// ticks in entity order whatever this says.
    ///
    /// The chunked tick declares write access to [`Decisions`](crate::Decisions) (it only
    /// reads them): with bevy_ecs 0.20.1, fetching a read-only component
    /// chunk in parallel trips a debug assertion. Systems that read
    /// `Decisions` then cannot run at the same time as the tick.
    pub fn dense(mut self) -> Self
    where
        M::Agent: DenseAgent,
        Se: SenseSource,
        Src: TreeSource<M>,
    {
        fn add<M: TreeMemory, Se: SenseSource, Src: TreeSource<M>>(
            app: &mut App,
            schedule: Interned<dyn ScheduleLabel>,
            k: usize,
        ) where
            M::Agent: DenseAgent,
        {
            add_tick::<M>(
                app,
                schedule,
                k,
                tick_brains_dense::<M, Se, Src>.with_input(k),
            );
        }
        self.dense = Some(add::<M, Se, Src>);
        self.lost_dense = false;
        self
    }
}

impl<M: TreeMemory, Se: SenseSource, Src: TreeSource<M>> Plugin for BrainPlugin<M, Se, Src>
where
    M::Agent: BrainAgent,
{
    fn build(&self, app: &mut App) {
        let tree = self.tree;
        let capacity = if M::has_actions(tree) {
            self.action_capacity
        } else {
            0
        };
        let state = M::new_shared(tree, capacity);
        let mut crowd = Crowd::new(tree, Arc::clone(&state), clock_of(self.schedule));
        crowd.set_budget(self.budget);
        crowd.parallel_from = self.parallel_from;
        let world = app.world_mut();
        let k = match world.get_resource_mut::<BrainShared<M>>() {
            Some(mut shared) => {
                assert!(
                    shared.index_of(tree).is_none(),
                    "BrainPlugin for tree `{}` ({}) already added",
                    M::tree_name(tree),
                    std::any::type_name::<M>()
                );
                shared.crowds.push(crowd);
                shared.crowds.len() - 1
            }
            None => {
                world.insert_resource(BrainShared::<M> {
                    crowds: vec![crowd],
                });
                0
            }
        };
        world.get_resource_or_init::<PluginTrees>().add::<M>(tree);
        // Bevy keeps each resource in an entity, and a brain's agent id is
        // its entity's index: the plugin takes the recorder's place at this
        // point whether it records or not, so that recording moves no id
        // (nor any brain's turn at a rate).
        #[cfg(feature = "viewer")]
        let recorded = match &self.record {
            Some(settings) => {
                assert!(
                    !self.lost_values,
                    "BrainPlugin for tree `{}`: call `record()` after `tagged()`: the recorded \
                     values are read for the tagged brains",
                    M::tree_name(tree)
                );
                if let Some(other) = app.world().get_resource::<BrainRecorder<M>>() {
                    panic!(
                        "BrainPlugin for tree `{}`: tree `{}` of the same memory type `{}` is \
                         recorded already, and one tree per memory type can be: give this one \
                         a tag of its own to record it, \
                         `BrainPlugin::new(&TREE).tagged::<Tag>()` and \
                         `Brain::new(&TREE).tagged::<Tag>()`",
                        M::tree_name(tree),
                        M::tree_name(other.tree()),
                        std::any::type_name::<M>()
                    );
                }
                app.insert_resource(BrainRecorder::<M>::new(tree, settings));
                true
            }
            None => app.world().contains_resource::<BrainRecorder<M>>(),
        };
        #[cfg(not(feature = "viewer"))]
        let recorded = false;
        if !recorded {
            app.world_mut().get_resource_or_init::<RecorderPlace<M>>();
        }
        crate::tuning::add::<M>(app, tree, &state, self.schedule, &self.tuning);
        app.init_resource::<BrainStats<M>>()
            .add_message::<ActionMessage<M>>()
            .add_message::<ActionOutcome<M>>()
            .configure_sets(
                self.schedule,
                (BrainSystems::Outcomes, BrainSystems::Tick).chain(),
            )
            .add_systems(
                self.schedule,
                apply_outcomes::<M>
                    .with_input(k)
                    .in_set(BrainSystems::Outcomes),
            );
        #[cfg(feature = "viewer")]
        if self.record.is_some()
            && let Some(add) = self.record_values
        {
            add(app, self.schedule, k);
        }
        // With `RecordBrains::all`, the brain's own insert hook marks
        // each brain of the tree `Recorded`: an observer would be an
        // entity of its own, and would move the ids (and so the seeds)
        // of every entity the game spawns after it.
        assert!(
            !self.lost_dense,
            "BrainPlugin for tree `{}`: call `dense()` after `with_senses()`",
            M::tree_name(tree)
        );
        match self.dense {
            _ if M::needs_shared(tree) => {
                add_tick::<M>(app, self.schedule, k, tick_in_order::<M, Se>.with_input(k));
            }
            Some(add) => add(app, self.schedule, k),
            // Without senses, the parallel query leaves them out.
            None if TypeId::of::<Se>() == TypeId::of::<NoSenses>() => {
                add_tick::<M>(
                    app,
                    self.schedule,
                    k,
                    tick_brains::<M, Se, (), Src>.with_input(k),
                );
            }
            None => {
                let system = tick_brains::<M, Se, Option<&'static mut Se>, Src>;
                add_tick::<M>(app, self.schedule, k, system.with_input(k));
            }
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn finish(&self, app: &mut App) {
        assert!(
            app.world().contains_resource::<Time>(),
            "BrainPlugin for tree `{}` needs bevy_time's `TimePlugin`: the brains tick on \
             its clock. Add `(bevy_app::TaskPoolPlugin::default(), bevy_time::TimePlugin)`, \
             or the `bevy` crate's `MinimalPlugins` or `DefaultPlugins`",
            M::tree_name(self.tree)
        );
    }
}

/// Adds `system`, the tick system of crowd `k` of memory type `M`, to
/// `schedule`: after the tick of the crowd before it (in the same
/// schedule), so that the messages of each run come in the same order.
fn add_tick<M: TreeMemory>(
    app: &mut App,
    schedule: Interned<dyn ScheduleLabel>,
    k: usize,
    system: impl IntoScheduleConfigs<bevy_ecs::system::ScheduleSystem, ()>,
) {
    let system = system
        .in_set(BrainSystems::Tick)
        .in_set(TickOf::<M>::all())
        .in_set(TickOf::<M>::crowd(k));
    match k.checked_sub(1) {
        Some(before) => app.add_systems(schedule, system.after(TickOf::<M>::crowd(before))),
        None => app.add_systems(schedule, system),
    };
}

/// Holds the place of the flight recorder of the brains of memory type `M`
/// in the world until one records them (see `BrainPlugin::build`).
#[derive(Resource)]
struct RecorderPlace<M: 'static>(PhantomData<fn() -> M>);

impl<M: 'static> Default for RecorderPlace<M> {
    fn default() -> Self {
        RecorderPlace(PhantomData)
    }
}

/// The trees whose plugins were added, each with the tag its brains have:
/// tells a refused brain the tag its tree's plugin runs it under.
#[derive(Resource, Default)]
pub(crate) struct PluginTrees(Vec<(usize, Option<&'static str>)>);

impl PluginTrees {
    /// Notes that the plugin of `tree` runs brains of memory type `M`.
    fn add<M: TreeMemory>(&mut self, tree: &'static M::Tree) {
        self.0.push((std::ptr::from_ref(tree).addr(), M::tag()));
    }

    /// The tag of `tree`'s brains (`Some(None)`: no tag), if a plugin runs
    /// it: the first plugin's, when it runs under several tags.
    pub(crate) fn runs_with<T>(&self, tree: &'static T) -> Option<Option<&'static str>> {
        let addr = std::ptr::from_ref(tree).addr();
        self.0.iter().find(|(a, _)| *a == addr).map(|&(_, tag)| tag)
    }
}

/// How a plugin in `schedule` reads its clock.
fn clock_of(schedule: Interned<dyn ScheduleLabel>) -> fn(&World) -> f64 {
    use bevy_app::{FixedFirst, FixedLast, FixedPostUpdate, FixedPreUpdate};
    use bevy_time::{Fixed, Virtual};
    let fixed = [
        FixedFirst.intern(),
        FixedPreUpdate.intern(),
        FixedUpdate.intern(),
        FixedPostUpdate.intern(),
        FixedLast.intern(),
    ];
    if fixed.contains(&schedule) {
        |world| world.resource::<Time<Fixed>>().elapsed_secs_f64()
    } else {
        |world| world.resource::<Time<Virtual>>().elapsed_secs_f64()
    }
}

/// The name Bevy knows a plugin by: adding the same tree twice (under the
/// same tag) panics with it.
fn plugin_name<M: TreeMemory>(tree: &'static M::Tree) -> String {
    format!(
        "bt_bevy::BrainPlugin for tree `{}` ({})",
        M::tree_name(tree),
        std::any::type_name::<M>()
    )
}
