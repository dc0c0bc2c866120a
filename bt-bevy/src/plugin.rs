//! The plugin: its builder, the shared state resource, the per-frame
//! stats. Deferred actions as messages are in `actions`, the systems it
//! adds in `tick`.

mod actions;
mod tick;

use std::marker::PhantomData;
use std::sync::Arc;

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_ecs::entity::Entity;
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_time::Time;
use bt_core::{AgentMemory, Ticket, Tree, TreeShared};

use crate::adapter::TreeMemory;
use crate::agent::{BrainAgent, DenseAgent};
#[cfg(feature = "viewer")]
use crate::brain::Brain;
use crate::brain::{NoSenses, SenseSource};
#[cfg(feature = "viewer")]
use crate::record::{BrainRecorder, EntityData, RecordBrains, Recorded};
use crate::tagged::Tagged;
pub use actions::{ActionMessage, ActionOutcome};
pub(crate) use actions::{forget_moved, route};
use tick::{apply_outcomes, tick_brains, tick_brains_dense};

/// Adds a tick system to a schedule.
type AddSystem = fn(&mut App, Interned<dyn ScheduleLabel>);

/// Runs the brains of one tree: add one per tree.
///
/// It adds the [`BrainShared`] resource, the [`ActionMessage`] and
/// [`ActionOutcome`] messages, the [`BrainStats`] resource, and two systems
/// in [`BrainSystems`] in the chosen schedule ([`FixedUpdate`] unless told
/// otherwise): first the outcomes the game reported are handed to their
/// brains, then every entity with a [`Brain<M>`](crate::Brain) is ticked, in parallel
/// over the query, with `now` and `dt` from [`Time`] (in `FixedUpdate` that
/// is the fixed clock), its [`Decisions`](crate::Decisions) and its senses; the deferred
/// actions the ticks launched or cancelled are then written as
/// [`ActionMessage`]s. Order the game's systems that fill `Decisions` or
/// senses `.before(BrainSystems::Tick)` and the ones that read actions
/// `.after(BrainSystems::Tick)`.
///
/// It needs `bevy_time`'s `TimePlugin` (in `MinimalPlugins` and
/// `DefaultPlugins`) and, for the parallel tick, `bevy_app`'s
/// `TaskPoolPlugin`. Add one per tree; adding the same tree twice panics,
/// naming the tree. Two trees whose memory types are the same need a tag
/// each ([`tagged`](Self::tagged)); without one, adding the second panics
/// and says so.
///
/// # Panics
/// When the app is finished without a `Time` resource.
pub struct BrainPlugin<M: TreeMemory, Se = NoSenses> {
    tree: &'static M::Tree,
    /// The plugin's name for Bevy: its memory type and its tree.
    name: String,
    schedule: Interned<dyn ScheduleLabel>,
    action_capacity: usize,
    /// Adds the chunked tick system ([`BrainPlugin::dense`]) for `Se`.
    dense: Option<AddSystem>,
    /// `dense` was asked for, then the senses changed.
    lost_dense: bool,
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
            dense: None,
            lost_dense: false,
            #[cfg(feature = "viewer")]
            record: None,
            #[cfg(feature = "viewer")]
            record_values: None,
            #[cfg(feature = "viewer")]
            lost_values: false,
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

    /// The plugin under the tag `T`: its brains are
    /// [`Brain<Tagged<M, T>>`](Tagged) (made with [`Brain::tagged`](crate::Brain::tagged)), its
    /// resources and messages `BrainShared<Tagged<M, T>>` and so on. Two
    /// trees whose memory types are the same need different tags (one may
    /// go untagged) to run in one app.
    pub fn tagged<T: 'static>(self) -> BrainPlugin<Tagged<M, T>, Se> {
        BrainPlugin {
            tree: self.tree,
            name: plugin_name::<Tagged<M, T>>(self.tree),
            schedule: self.schedule,
            action_capacity: self.action_capacity,
            dense: None,
            lost_dense: self.lost_dense || self.dense.is_some(),
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

    /// Takes the brains' stimuli from the component `S2` (usually a
    /// [`Senses`](crate::Senses)), aged by each tick's `dt`.
    ///
    /// Call it before [`dense`](Self::dense).
    pub fn with_senses<S2: SenseSource>(self) -> BrainPlugin<M, S2> {
        BrainPlugin {
            tree: self.tree,
            name: self.name,
            schedule: self.schedule,
            action_capacity: self.action_capacity,
            dense: None,
            lost_dense: self.lost_dense || self.dense.is_some(),
            #[cfg(feature = "viewer")]
            record: self.record,
            #[cfg(feature = "viewer")]
            record_values: self.record_values,
            #[cfg(feature = "viewer")]
            lost_values: self.lost_values,
            _senses: PhantomData,
        }
    }

    /// Records brains into a flight recorder for the decision viewer
    /// (feature `viewer`): those with a [`Recorded`] component, or all of
    /// them, and with [`RecordBrains::data`] their own values, read from
    /// their components (see [`RecordBrains`]). The recorder is the
    /// [`BrainRecorder`] resource, allocated when the plugin is added;
    /// recording allocates nothing after that. Recorded brains tick one by
    /// one after the parallel tick.
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
    /// it falls back to the entity-by-entity path.
    ///
    /// The chunked tick declares write access to [`Decisions`](crate::Decisions) (it only
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
                tick_brains_dense::<M, Se>
                    .in_set(BrainSystems::Tick)
                    .in_set(TickOf::<M>::default()),
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
        if let Some(other) = app.world().get_resource::<BrainShared<M>>() {
            panic!(
                "BrainPlugin for tree `{}`: tree `{}` already runs with the same memory type \
                 `{}`; give one of them a tag of its own: `BrainPlugin::new(&TREE).tagged::<Tag>()` \
                 and `Brain::new(&TREE).tagged::<Tag>()`",
                M::tree_name(self.tree),
                M::tree_name(other.tree),
                std::any::type_name::<M>()
            );
        }
        app.world_mut()
            .get_resource_or_init::<PluginTrees>()
            .add::<M>(self.tree);
        let capacity = if M::has_actions(self.tree) {
            self.action_capacity
        } else {
            0
        };
        app.insert_resource(BrainShared::<M> {
            tree: self.tree,
            state: M::new_shared(self.tree, capacity),
            lost: 0,
            clock: clock_of(self.schedule),
            moved: Vec::new(),
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
            assert!(
                !self.lost_values,
                "BrainPlugin for tree `{}`: call `record()` after `tagged()`: the recorded \
                 values are read for the tagged brains",
                M::tree_name(self.tree)
            );
            app.insert_resource(BrainRecorder::<M>::new(self.tree, settings));
            if let Some(add) = self.record_values {
                add(app, self.schedule);
            }
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
                    tick_brains::<M, Se>
                        .in_set(BrainSystems::Tick)
                        .in_set(TickOf::<M>::default()),
                );
            }
        }
    }

    fn name(&self) -> &str {
        &self.name
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

/// The system set of the tick system of the brains of memory type `M`:
/// the recorded values are read before it.
pub(crate) struct TickOf<M>(PhantomData<fn() -> M>);

impl<M> Default for TickOf<M> {
    fn default() -> Self {
        TickOf(PhantomData)
    }
}

impl<M> Clone for TickOf<M> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl<M> PartialEq for TickOf<M> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<M> Eq for TickOf<M> {}

impl<M> std::hash::Hash for TickOf<M> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<M> std::fmt::Debug for TickOf<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TickOf<{}>", std::any::type_name::<M>())
    }
}

impl<M: 'static> SystemSet for TickOf<M> {
    fn dyn_clone(&self) -> Box<dyn SystemSet> {
        Box::new(self.clone())
    }
}

/// The trees whose plugins were added, each with the memory type its
/// brains have: tells a brain whose plugin is missing that it was made
/// with another tag than its tree's plugin.
#[derive(Resource, Default)]
pub(crate) struct PluginTrees(Vec<(usize, &'static str)>);

impl PluginTrees {
    /// Notes that the plugin of `tree` runs brains of memory type `M`.
    fn add<M: TreeMemory>(&mut self, tree: &'static M::Tree) {
        self.0
            .push((std::ptr::from_ref(tree).addr(), std::any::type_name::<M>()));
    }

    /// The memory type of `tree`'s brains, if a plugin runs it: the first
    /// plugin's, when it runs under several tags.
    pub(crate) fn runs_as<T>(&self, tree: &'static T) -> Option<&'static str> {
        let addr = std::ptr::from_ref(tree).addr();
        self.0.iter().find(|(a, _)| *a == addr).map(|&(_, m)| m)
    }
}

/// The state the brains of one tree share (gates, global cooldowns, group
/// roles, the deferred-action queue), as a resource.
#[derive(Resource)]
pub struct BrainShared<M: TreeMemory> {
    tree: &'static M::Tree,
    pub(crate) state: Arc<TreeShared>,
    pub(crate) lost: usize,
    /// Reads the clock the brains tick with.
    clock: fn(&World) -> f64,
    /// The deferred actions still pending from a load whose agent id (the
    /// index of the entity they were launched from, before the save) is
    /// not their entity's index now: the entity each belongs to.
    pub(crate) moved: Vec<(Ticket, Entity)>,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> BrainShared<M> {
    /// The shared state: gate counts, roles held, queue figures.
    pub fn state(&self) -> &Arc<TreeShared> {
        &self.state
    }

    /// The tree whose crowd this is.
    pub fn tree(&self) -> &'static M::Tree {
        self.tree
    }

    /// The reading of the clock the brains tick with, now: the elapsed
    /// seconds of `Time<Fixed>` for a plugin in one of the fixed schedules
    /// (`FixedUpdate` and its neighbours), of `Time<Virtual>` otherwise.
    /// Between frames it is the `now` of the brains' last tick. Saving and
    /// loading take their times from it.
    ///
    /// # Panics
    /// When `world` has no such clock (no `TimePlugin`).
    pub fn now(&self, world: &World) -> f64 {
        (self.clock)(world)
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
    /// Brains whose tick failed (see [`Brain::last_tick`](crate::Brain::last_tick)).
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
