//! Recording brains into the decision viewer's flight recorder (feature
//! `viewer`): the marker component, the settings, the resource.

use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Recording};

use crate::adapter::TreeMemory;
use crate::brain::agent_id;

/// Put it on an entity (feature `viewer`) to record its brain into the
/// flight recorder of
/// [`BrainPlugin::record`](crate::BrainPlugin::record) (with
/// [`RecordBrains::marked`]; [`RecordBrains::all`] puts it on every
/// brain). The entity's ticks then run one by one after the parallel
/// tick, as [`DebugBrain`](crate::DebugBrain)'s do; an entity may have
/// both. Removing it pauses the entity's lane; inserting it again resumes
/// it. On a plugin that does not record, it only moves the entity out of
/// the parallel tick.
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Recorded;

/// Which brains a plugin records, and how much it keeps: the settings of
/// [`BrainPlugin::record`](crate::BrainPlugin::record) (feature `viewer`).
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
#[derive(Clone, Copy, Debug)]
pub struct RecordBrains {
    pub(crate) all: bool,
    pub(crate) lanes: usize,
    pub(crate) capacity: Capacity,
    pub(crate) publish_every: Duration,
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
            publish_every: Duration::from_millis(100),
        }
    }

    /// Records every brain of the tree, up to `lanes` of them at once (the
    /// plugin puts [`Recorded`] on each entity that gets a brain). Their
    /// ticks then run one by one, not in parallel.
    pub fn all(lanes: usize) -> Self {
        RecordBrains {
            all: true,
            ..Self::marked(lanes)
        }
    }

    /// Keeps `capacity` per lane instead: the last `capacity.ticks` ticks,
    /// `capacity.words_per_tick` words (8 bytes) each. The recorder's memory
    /// is `lanes × ticks × (8 × words_per_tick + 4)` bytes, allocated when
    /// the plugin is added.
    pub fn capacity(mut self, capacity: Capacity) -> Self {
        self.capacity = capacity;
        self
    }

    /// While [`BrainRecorder::serve`] runs, sends the new ticks to the
    /// pages at most once per `every` (default 100 ms; zero: after every
    /// run of the tick system).
    pub fn publish_every(mut self, every: Duration) -> Self {
        self.publish_every = every;
        self
    }
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
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
#[derive(Resource)]
pub struct BrainRecorder<M> {
    pub(crate) recorder: FlightRecorder,
    live: Option<LiveServer>,
    publish_every: Duration,
    last_publish: Option<Instant>,
    warned_full: bool,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> BrainRecorder<M> {
    pub(crate) fn new(tree: &'static M::Tree, settings: &RecordBrains) -> Self {
        BrainRecorder {
            recorder: M::new_recorder(tree, settings.lanes, settings.capacity),
            live: None,
            publish_every: settings.publish_every,
            last_publish: None,
            warned_full: false,
            _m: PhantomData,
        }
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

    /// Sends the new ticks to the live pages now.
    pub fn publish(&mut self) {
        if let Some(live) = &mut self.live {
            live.publish(&self.recorder);
            self.last_publish = Some(Instant::now());
        }
    }

    /// After a run of the tick system: publishes when it is time.
    pub(crate) fn after_run(&mut self) {
        if self.live.is_some()
            && self
                .last_publish
                .is_none_or(|at| at.elapsed() >= self.publish_every)
        {
            self.publish();
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
