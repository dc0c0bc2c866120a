//! Recording brains into the decision viewer's flight recorder (feature
//! `viewer`): the marker component, the settings, the resource.

use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::query::{QueryItem, ReadOnlyQueryData};
use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::ScheduleLabel;
use bt_viewer::{
    AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, LiveServer, Recording,
};

use crate::adapter::TreeMemory;
use crate::brain::{Brain, agent_id};
use crate::plugin::{BrainShared, BrainSystems, TickOf};

/// Put it on an entity (feature `viewer`) to record its brain into the
/// flight recorder of
/// [`BrainPlugin::record`](crate::BrainPlugin::record) (with
/// [`RecordBrains::marked`]; [`RecordBrains::all`] puts it on every
/// brain). It changes no decision: in a tree with shared state the
/// entity's ticks are recorded in their place in entity order, in any
/// other they run one by one after the parallel tick, as
/// [`DebugBrain`](crate::DebugBrain)'s do; an entity may have both.
/// Removing it pauses the entity's lane; inserting it again resumes it. On
/// a plugin that does not record, it does nothing but move the entity out
/// of the parallel tick of a tree without shared state.
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Recorded;

/// Which brains a plugin records, and how much it keeps: the settings of
/// [`BrainPlugin::record`](crate::BrainPlugin::record) (feature `viewer`).
///
/// `V` is what each recorded entity's own values are read from
/// ([`EntityData`], chosen with [`data`](Self::data)); `()` records none.
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
pub struct RecordBrains<V = ()> {
    pub(crate) all: bool,
    pub(crate) lanes: usize,
    pub(crate) capacity: Capacity,
    /// `None`: the live page may pause the app ([`LiveServer::frame`]
    /// every run); `Some`: publishes on that timer, never pausing.
    pub(crate) publish_every: Option<Duration>,
    /// Room for the entities' own values, when [`data`](Self::data) asked
    /// for them.
    pub(crate) data: Option<DataCapacity>,
    /// Names the bits of the decision flags, of the stimuli flags.
    pub(crate) flag_names: [Option<NameFlags>; 2],
    _v: PhantomData<fn() -> V>,
}

/// Names some flags' bits in a recorder.
pub(crate) type NameFlags = fn(FlightRecorder) -> FlightRecorder;

impl<V> Clone for RecordBrains<V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for RecordBrains<V> {}

impl<V> std::fmt::Debug for RecordBrains<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordBrains")
            .field("all", &self.all)
            .field("lanes", &self.lanes)
            .field("capacity", &self.capacity)
            .field("publish_every", &self.publish_every)
            .field("data", &self.data.map(|d| (std::any::type_name::<V>(), d)))
            .field("decision_flags_named", &self.flag_names[0].is_some())
            .field("stimuli_flags_named", &self.flag_names[1].is_some())
            .finish()
    }
}

impl RecordBrains {
    /// Records the entities with a [`Recorded`] component, up to `lanes`
    /// of them at once (a lane is given back when its entity goes, and
    /// reused once its ticks are overwritten; an entity that finds none is
    /// not recorded), each with the last 300 ticks of 16 words.
    pub fn marked(lanes: usize) -> Self {
        RecordBrains {
            all: false,
            lanes,
            capacity: Capacity::default(),
            publish_every: None,
            data: None,
            flag_names: [None; 2],
            _v: PhantomData,
        }
    }

    /// Records every brain of the tree, up to `lanes` of them at once (the
    /// plugin puts [`Recorded`] on each entity that gets a brain of the
    /// tree). In a tree without shared state their ticks then run one by
    /// one, not in parallel.
    pub fn all(lanes: usize) -> Self {
        RecordBrains {
            all: true,
            ..Self::marked(lanes)
        }
    }
}

impl<V: EntityData> RecordBrains<V> {
    /// Keeps `capacity` per lane instead: the last `capacity.ticks` ticks,
    /// `capacity.words_per_tick` words (8 bytes) each. The recorder's memory
    /// is `lanes × ticks × (8 × words_per_tick + 4)` bytes, allocated when
    /// the plugin is added.
    pub fn capacity(mut self, capacity: Capacity) -> Self {
        self.capacity = capacity;
        self
    }

    /// Records each recorded entity's own values at each of its ticks,
    /// read from its components as `W` says ([`EntityData`]: a tuple of
    /// components that implement [`AgentData`], or a query of the game's
    /// own), with room for `capacity` per lane and kept tick: the viewer
    /// shows them beside the tick and plots the numbers under the lane.
    ///
    /// They are read just before the tick, in
    /// [`BrainSystems::Tick`](crate::BrainSystems::Tick): the values the
    /// tick's decisions saw. Only recorded entities are read, in a system
    /// of their own that runs before the tick system; the tick of the
    /// other brains does not change. The room, `lanes × ticks × ((1 + 2 ×
    /// fields) × 8 + text_bytes)` bytes, is allocated when the plugin is
    /// added; what does not fit a tick's room is dropped and the tick
    /// marked.
    pub fn data<W: EntityData>(self, capacity: DataCapacity) -> RecordBrains<W> {
        RecordBrains {
            data: Some(capacity),
            ..self.retype()
        }
    }

    /// Names the bits of the decision flags (`D`, the flags of
    /// [`Decisions`](crate::Decisions)) and of the stimuli (`S`) by the
    /// names of their `bitflags` constants in the recording: the viewer
    /// then shows `needs HUNGRY` rather than `needs 0x2`. See
    /// [`FlightRecorder::name_flags`].
    pub fn name_flags<D, S>(self) -> Self
    where
        D: bitflags::Flags,
        D::Bits: Into<u64>,
        S: bitflags::Flags,
        S::Bits: Into<u64>,
    {
        self.name_decision_flags::<D>().name_stimuli_flags::<S>()
    }

    /// Names the bits of the decision flags only: see
    /// [`name_flags`](Self::name_flags).
    pub fn name_decision_flags<D>(mut self) -> Self
    where
        D: bitflags::Flags,
        D::Bits: Into<u64>,
    {
        self.flag_names[0] = Some(|r| r.name_decision_flags::<D>());
        self
    }

    /// Names the bits of the stimuli flags only: see
    /// [`name_flags`](Self::name_flags).
    pub fn name_stimuli_flags<S>(mut self) -> Self
    where
        S: bitflags::Flags,
        S::Bits: Into<u64>,
    {
        self.flag_names[1] = Some(|r| r.name_stimuli_flags::<S>());
        self
    }

    /// While [`BrainRecorder::serve`] runs, sends the new ticks to the
    /// pages on a timer instead, at most once per `every` (zero: after
    /// every run of the tick system), and never pauses the app: the pages
    /// follow it but their pause, step and breakpoints are refused. For an
    /// app that must never wait (a server with clients of its own). By
    /// default the page may pause the app (see [`BrainRecorder::serve`]).
    pub fn publish_every(mut self, every: Duration) -> Self {
        self.publish_every = Some(every);
        self
    }

    /// The same settings without the type of the values.
    pub(crate) fn erased(self) -> RecordBrains {
        self.retype()
    }

    /// The same settings, for values of type `W`.
    fn retype<W>(self) -> RecordBrains<W> {
        RecordBrains {
            all: self.all,
            lanes: self.lanes,
            capacity: self.capacity,
            publish_every: self.publish_every,
            data: self.data,
            flag_names: self.flag_names,
            _v: PhantomData,
        }
    }
}

/// What a recorded entity says about itself at each recorded tick (feature
/// `viewer`): the components, or the query, that
/// [`RecordBrains::data`] reads its values from, shown by the viewer
/// beside each tick ("as the tick found it") and plotted under the lane.
///
/// Implemented for tuples of up to 8 components that each implement
/// bt-viewer's [`AgentData`] (`(Health,)` for one): each component the
/// entity has writes its values, one it lacks writes none. For values
/// computed from several components, implement it for a type of your own
/// with a query (a `#[derive(QueryData)]` struct, say):
///
/// ```
/// use bevy_ecs::prelude::*;
/// use bevy_ecs::query::{QueryData, QueryItem};
/// use bt_bevy::EntityData;
/// use bt_bevy::bt_viewer::{AgentData, DataOut};
///
/// #[derive(Component)] struct Health(f32);
/// #[derive(Component)] struct Target(Option<Entity>);
///
/// // A component records itself.
/// impl AgentData for Health {
///     fn record(&self, out: &mut DataOut<'_>) {
///         out.num("health", f64::from(self.0));
///     }
/// }
/// // `.data::<(Health,)>(DataCapacity::default())` records it.
///
/// // A value computed from a query of several components.
/// #[derive(QueryData)]
/// struct Vitals {
///     health: &'static Health,
///     target: Option<&'static Target>,
/// }
///
/// impl EntityData for Vitals {
///     type Data = Vitals;
///     fn record(v: &QueryItem<'_, '_, Vitals>, out: &mut DataOut<'_>) {
///         v.health.record(out);
///         let hunting = v.target.and_then(|t| t.0).is_some();
///         out.text("mode", if hunting { "hunting" } else { "idle" });
///     }
/// }
/// // `.data::<Vitals>(DataCapacity::default())` records both.
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
pub trait EntityData: 'static {
    /// What is read of a recorded entity: read-only query data.
    type Data: ReadOnlyQueryData;

    /// Writes the values of one entity's `item` into `out`. Called for
    /// recorded entities only, once per tick; it should not allocate.
    fn record(item: &QueryItem<'_, '_, Self::Data>, out: &mut DataOut<'_>);
}

/// No values.
impl EntityData for () {
    type Data = ();
    fn record(_: &QueryItem<'_, '_, ()>, _: &mut DataOut<'_>) {}
}

macro_rules! entity_data_tuple {
    ($($c:ident $i:tt),+) => {
        /// The values of each of these components the entity has.
        impl<$($c: Component + AgentData),+> EntityData for ($($c,)+) {
            type Data = ($(Option<&'static $c>,)+);
            fn record(item: &QueryItem<'_, '_, Self::Data>, out: &mut DataOut<'_>) {
                $(if let Some(c) = item.$i {
                    c.record(out);
                })+
            }
        }
    };
}

entity_data_tuple!(C0 0);
entity_data_tuple!(C0 0, C1 1);
entity_data_tuple!(C0 0, C1 1, C2 2);
entity_data_tuple!(C0 0, C1 1, C2 2, C3 3);
entity_data_tuple!(C0 0, C1 1, C2 2, C3 3, C4 4);
entity_data_tuple!(C0 0, C1 1, C2 2, C3 3, C4 4, C5 5);
entity_data_tuple!(C0 0, C1 1, C2 2, C3 3, C4 4, C5 5, C6 6);
entity_data_tuple!(C0 0, C1 1, C2 2, C3 3, C4 4, C5 5, C6 6, C7 7);

/// One entity's query item, as bt-viewer's [`AgentData`].
struct Values<'a, 'w, 's, V: EntityData>(&'a QueryItem<'w, 's, V::Data>);

impl<V: EntityData> AgentData for Values<'_, '_, '_, V> {
    #[inline]
    fn record(&self, out: &mut DataOut<'_>) {
        V::record(self.0, out);
    }
}

/// The recorded entities, with what their values are read from.
type ValuesQuery<'w, 's, M, V> =
    Query<'w, 's, (Entity, &'static mut Brain<M>, <V as EntityData>::Data), With<Recorded>>;

/// Reads the recorded entities' values into the recorder, just before
/// their ticks (added by [`BrainPlugin::record`](crate::BrainPlugin::record)
/// when [`RecordBrains::data`] asked for values).
pub(crate) fn record_values<M: TreeMemory, V: EntityData>(
    recorder: Option<ResMut<BrainRecorder<M>>>,
    shared: Res<BrainShared<M>>,
    mut brains: ValuesQuery<M, V>,
) {
    let Some(mut recorder) = recorder else {
        return;
    };
    let r = recorder.bypass_change_detection();
    // The run begins here for the recorder: the staged changes to the
    // tree's tunables are put in effect first, as the tick system would,
    // so that the frame holds them.
    if let Some(crowd) = shared.crowd(r.tree()) {
        crowd.apply_tuning();
    }
    r.begin_run();
    for (entity, mut brain, item) in &mut brains {
        if !r.records(brain.memory.tree()) {
            // Another tree's brain, of the same memory type.
            continue;
        }
        let b = brain.bypass_change_detection();
        if let Some(lane) = r.lane(&mut b.lane, entity) {
            r.recorder.record_lane_data(lane, &Values::<V>(&item));
        }
    }
}

/// Adds [`record_values`] for `M` and `V` to `schedule`, before the tick
/// system of `M`.
pub(crate) fn add_record_values<M: TreeMemory, V: EntityData>(
    app: &mut App,
    schedule: Interned<dyn ScheduleLabel>,
    _crowd: usize,
) {
    app.add_systems(
        schedule,
        record_values::<M, V>
            .in_set(BrainSystems::Tick)
            .before(TickOf::<M>::all()),
    );
}

/// A lane a brain does not have yet.
pub(crate) const NO_LANE: u32 = u32::MAX;
/// The recorder had no lane left when the brain asked for one.
pub(crate) const NO_ROOM: u32 = u32::MAX - 1;

/// The flight recorder of one tree's brains, as a resource (feature
/// `viewer`; added by [`BrainPlugin::record`](crate::BrainPlugin::record)).
///
/// Each recorded entity has a lane, under the agent id the plugin gives it
/// ([`agent_id`](crate::agent_id): the entity's index), so the viewer's
/// search by agent finds the entity. A despawned entity's lane ends there
/// (and is given to a later entity once its ticks are overwritten); an
/// entity whose index is reused later gets a lane of its own, with the same
/// id. Each run of the tick system is one frame of the recording.
///
/// It records one tree ([`tree`](Self::tree)): with two trees of memory
/// type `M` side by side, the one whose plugin asked to record.
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
#[derive(Resource)]
pub struct BrainRecorder<M: TreeMemory> {
    /// The tree it records.
    tree: &'static M::Tree,
    pub(crate) recorder: FlightRecorder,
    live: Option<LiveServer>,
    /// `None`: [`LiveServer::frame`] after every run.
    publish_every: Option<Duration>,
    last_publish: Option<Instant>,
    /// The frame of this run of the tick system was begun.
    begun: bool,
    warned_full: bool,
    /// Whether every brain of the tree is recorded (`RecordBrains::all`):
    /// the brain's insert hook marks it `Recorded`.
    pub(crate) all: bool,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> BrainRecorder<M> {
    pub(crate) fn new(tree: &'static M::Tree, settings: &RecordBrains) -> Self {
        let mut recorder = M::new_recorder(tree, settings.lanes, settings.capacity);
        if let Some(capacity) = settings.data {
            recorder = recorder.with_data(capacity);
        }
        for name in settings.flag_names.into_iter().flatten() {
            recorder = name(recorder);
        }
        BrainRecorder {
            tree,
            recorder,
            live: None,
            publish_every: settings.publish_every,
            last_publish: None,
            begun: false,
            warned_full: false,
            all: settings.all,
            _m: PhantomData,
        }
    }

    /// The tree it records.
    pub fn tree(&self) -> &'static M::Tree {
        self.tree
    }

    /// Whether it records the brains of `tree`.
    pub(crate) fn records(&self, tree: &'static M::Tree) -> bool {
        std::ptr::eq(self.tree, tree)
    }

    /// The flight recorder itself.
    pub fn recorder(&self) -> &FlightRecorder {
        &self.recorder
    }

    /// What it holds now, for the viewer (call it when the app ends, or at
    /// any time).
    pub fn export(&self) -> Recording {
        self.recorder.export()
    }

    /// Writes the recording and the viewer page with it inside into `dir`
    /// (made if missing), as [`bt_viewer::write_page`] does, and returns
    /// the page's path.
    ///
    /// # Errors
    /// Whatever creating the directory or writing the files returns.
    pub fn write_page(&self, dir: &Path) -> io::Result<PathBuf> {
        bt_viewer::write_page(dir, &self.export().to_json())
    }

    /// Serves the viewer on `127.0.0.1:port` (0 picks a free port) while
    /// the app runs: the page follows the recorded brains tick by tick
    /// (see [`LiveServer`]). Returns the page's address. Serving again
    /// replaces the server.
    ///
    /// After each run of the tick system the recorder calls
    /// [`LiveServer::frame`]: the page can pause the app, let it through
    /// one run at a time and stop it with breakpoints (a decider entered
    /// or rejected, an error, a launch, for one entity or any). A paused
    /// app waits at the end of the tick system's run, inside
    /// `app.update()`, until the page resumes or steps it, or no page
    /// follows it any more (3 seconds after the last page closes: a page
    /// that reloads within them finds it still paused). With no
    /// page following, a run costs one atomic load; with one, its new
    /// ticks are sent after every run. (On `Time`'s automatic clock, the
    /// run after a long pause sees at most `Time<Virtual>`'s maximum
    /// delta, 0.25 s by default, go by.) With
    /// [`RecordBrains::publish_every`] it publishes on a timer instead and
    /// never waits.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub fn serve(&mut self, port: u16) -> io::Result<String> {
        self.live = None;
        let server = LiveServer::start(port)?;
        let url = server.url();
        self.live = Some(server);
        self.last_publish = None;
        Ok(url)
    }

    /// The live server, while it runs.
    pub fn live(&self) -> Option<&LiveServer> {
        self.live.as_ref()
    }

    /// Stops serving: the pages are told the program stopped.
    pub fn stop_serving(&mut self) {
        self.live = None;
    }

    /// Sends the new ticks to the live pages now. (While the page may
    /// pause the app, each run already sends them; the ticks sent here are
    /// not looked at by the breakpoints.)
    pub fn publish(&mut self) {
        if let Some(live) = &mut self.live {
            live.publish(&self.recorder);
            self.last_publish = Some(Instant::now());
        }
    }

    /// Begins this run's frame, once.
    #[inline]
    pub(crate) fn begin_run(&mut self) {
        if !self.begun {
            self.begun = true;
            self.recorder.begin_frame();
        }
    }

    /// After a run of the tick system: hands the frame to the live server,
    /// which may hold the app while a page pauses it, or publishes when it
    /// is time.
    pub(crate) fn after_run(&mut self) {
        self.begun = false;
        let Some(live) = &mut self.live else {
            return;
        };
        match self.publish_every {
            None => live.frame(&self.recorder),
            Some(every) => {
                if self.last_publish.is_none_or(|at| at.elapsed() >= every) {
                    self.publish();
                }
            }
        }
    }

    /// The lane of `entity`, given one when `lane` is [`NO_LANE`]; `None`
    /// when the recorder has no room.
    pub(crate) fn lane(&mut self, lane: &mut u32, entity: Entity) -> Option<usize> {
        match *lane {
            NO_ROOM => None,
            NO_LANE => match self.recorder.assign(agent_id(entity)) {
                Some(l) => {
                    *lane = l as u32;
                    Some(l)
                }
                None => {
                    *lane = NO_ROOM;
                    if !self.warned_full {
                        self.warned_full = true;
                        log::warn!(
                            target: "bt_bevy",
                            "{entity}: no lane left in the brain recorder ({} lanes); \
                             it is not recorded (raise RecordBrains' lanes)",
                            self.recorder.lanes()
                        );
                    }
                    None
                }
            },
            l => Some(l as usize),
        }
    }

    /// The entity with `lane` is gone.
    pub(crate) fn release(&mut self, lane: u32) {
        if lane != NO_LANE && lane != NO_ROOM {
            self.recorder.release(lane as usize);
        }
    }
}
