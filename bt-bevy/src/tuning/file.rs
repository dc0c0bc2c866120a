//! The tuning file a plugin watches (feature `tune-file`): bt-core's
//! [`TuningFile`] for the crowd, polled by a system of the plugin's
//! schedule before the brains tick, each reading reported as a
//! [`TuningFileRead`] message and a log line.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bevy_app::App;
use bevy_ecs::intern::Interned;
use bevy_ecs::message::{Message, MessageWriter};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_ecs::system::InMut;
use bt_core::tune_file::Applied;
use bt_core::{TreeShared, TuneFileError, TuningFile};

use super::{BrainTuning, CrowdTuning};
use crate::adapter::TreeMemory;
use crate::plugin::BrainSystems;

/// One reading of a tree's tuning file
/// ([`BrainPlugin::tuning_file`](crate::BrainPlugin::tuning_file), feature
/// `tune-file`), as a message: written in the run of the plugin's
/// schedule that took it, before the brains tick.
///
/// A good file's values are staged (all of them) and in effect from that
/// run on; a bad one (not TOML, a key that is not a tunable, a value of
/// another type or out of range), a file that cannot be read (missing,
/// deleted) and a folder that cannot be watched change nothing, and come
/// as the [`TuneFileError`] that names the file, the key and its line. Each
/// reading is also logged (target `bt_bevy`): a good one at `info`, a bad
/// one at `warn`. Nothing about a file panics.
#[cfg_attr(docsrs, doc(cfg(feature = "tune-file")))]
#[derive(Debug)]
#[non_exhaustive]
pub struct TuningFileRead<M> {
    /// The tree whose tunables the file sets.
    pub tree: &'static str,
    /// The file.
    pub path: PathBuf,
    /// What the reading did: the values it staged (bt-core's `Applied`:
    /// how many tunables the file sets and which it changes), or why it
    /// changed nothing.
    pub outcome: Result<Applied, TuneFileError>,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> Message for TuningFileRead<M> {}

/// A crowd's tuning file: watched, or why it could not be.
pub(crate) struct Watched {
    path: PathBuf,
    /// `Err`: the folder could not be watched; the error, until a poll
    /// reported it.
    file: Result<TuningFile, Option<TuneFileError>>,
}

impl Watched {
    /// Watches `path` for the crowd that shares `state`: read at once, its
    /// values staged.
    pub(crate) fn new(path: &Path, state: &Arc<TreeShared>) -> Self {
        Watched {
            path: path.to_path_buf(),
            file: TuningFile::watch(path, [state]).map_err(Some),
        }
    }

    /// The crowd's shared state is now `state` (a load): the file's later
    /// readings are staged there.
    #[cfg(feature = "serde")]
    pub(crate) fn moved(&mut self, state: &Arc<TreeShared>) {
        if let Ok(file) = &mut self.file {
            // The table is the tree's, the same as before.
            let moved = file.set_crowds([state]);
            debug_assert!(moved.is_ok(), "{moved:?}");
        }
    }

    /// The next outcome to report, if any.
    fn poll(&mut self) -> Option<Result<Applied, TuneFileError>> {
        match &mut self.file {
            Ok(file) => file.poll(),
            Err(e) => e.take().map(Err),
        }
    }
}

impl<M: TreeMemory> CrowdTuning<M> {
    /// The tuning file the plugin watches for the tree, if it was given
    /// one ([`BrainPlugin::tuning_file`](crate::BrainPlugin::tuning_file),
    /// feature `tune-file`).
    #[cfg_attr(docsrs, doc(cfg(feature = "tune-file")))]
    pub fn file(&self) -> Option<&Path> {
        self.file.as_ref().map(|w| w.path.as_path())
    }
}

/// Takes the readings of the tuning file of crowd `index` of
/// [`BrainTuning<M>`]: their values staged (by the file), each one
/// reported as a message and a log line.
fn poll_file<M: TreeMemory>(
    InMut(index): InMut<usize>,
    mut tuning: ResMut<BrainTuning<M>>,
    mut read: MessageWriter<TuningFileRead<M>>,
) {
    let crowd = &mut tuning.bypass_change_detection().crowds[*index];
    let tree = M::tree_name(crowd.tree);
    let Some(watched) = &mut crowd.file else {
        return;
    };
    while let Some(outcome) = watched.poll() {
        match &outcome {
            Ok(applied) => log::info!(
                target: "bt_bevy",
                "tree `{tree}`: tuning file {} read: {} set, changed {:?}",
                watched.path.display(),
                applied.set,
                applied.changed
            ),
            Err(e) => log::warn!(
                target: "bt_bevy",
                "tree `{tree}`: tuning file not taken, nothing changed: {e}"
            ),
        }
        read.write(TuningFileRead {
            tree,
            path: watched.path.clone(),
            outcome,
            _m: PhantomData,
        });
    }
}

/// Adds the system that polls the tuning file of crowd `index` of
/// [`BrainTuning<M>`] to `schedule`, before the brains tick.
pub(super) fn add_poll<M: TreeMemory>(
    app: &mut App,
    schedule: Interned<dyn ScheduleLabel>,
    index: usize,
) {
    app.add_message::<TuningFileRead<M>>().add_systems(
        schedule,
        poll_file::<M>.with_input(index).before(BrainSystems::Tick),
    );
}
