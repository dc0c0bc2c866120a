//! The tunables of a tree's crowd as a resource ([`BrainTuning`]), one
//! [`CrowdTuning`] per tree with tunables, holding the crowd's own shared
//! state; and (feature `tune-file`) the tuning file a plugin watches, in
//! `file`.

use std::sync::Arc;

use bevy_app::App;
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bt_core::{TreeShared, Tunable, TunableKind, TunableValue, Tunables, TuneError, TuneValue};

use crate::adapter::TreeMemory;

#[cfg(feature = "tune-file")]
mod file;

#[cfg(feature = "tune-file")]
pub use file::TuningFileRead;

/// The tunables of the trees of memory type `M` that declare some
/// (`tree!`'s `tunables:` key), as a resource: one [`CrowdTuning`] per
/// such tree whose [`BrainPlugin`](crate::BrainPlugin) runs its brains as
/// `Brain<M>`, in the order the plugins were added. The plugin of a tree
/// with tunables inserts it; there is none for a tree without.
///
/// It holds no values of its own: it reads and changes those of the
/// crowd's shared state, the very ones the brains read (and those a save
/// holds, a load restores, a tuning file or the viewer's page changes).
/// A change is staged, and takes effect when the crowd's tick system next
/// runs, before any brain of that run ticks: every brain of a run reads
/// the same values, and no brain's state is reset. Read it and change it
/// from any system, with `Res<BrainTuning<M>>`.
///
/// Most apps run one tree with tunables per memory type:
/// [`tune`](Self::tune), [`tune_named`](Self::tune_named),
/// [`tuned`](Self::tuned), [`changes`](Self::changes),
/// [`tunables`](Self::tunables) and [`tree`](Self::tree) are that tree's.
/// When plugins run several trees with tunables as `Brain<M>`, name the
/// tree, [`crowd(&TREE)`](Self::crowd).
#[derive(Resource)]
pub struct BrainTuning<M: TreeMemory> {
    pub(crate) crowds: Vec<CrowdTuning<M>>,
}

/// The tunables of one tree's crowd (a part of [`BrainTuning`]).
pub struct CrowdTuning<M: TreeMemory> {
    tree: &'static M::Tree,
    table: &'static Tunables,
    /// The crowd's shared state: the one its brains are bound to.
    state: Arc<TreeShared>,
    /// Changes counted by the crowds this one's loads replaced.
    before: u64,
    /// The tuning file the plugin watches for the crowd.
    #[cfg(feature = "tune-file")]
    pub(crate) file: Option<file::Watched>,
}

impl<M: TreeMemory> BrainTuning<M> {
    /// The tunables of `tree`, if a plugin runs it as `Brain<M>` and it
    /// has some.
    pub fn crowd(&self, tree: &'static M::Tree) -> Option<&CrowdTuning<M>> {
        self.crowds.iter().find(|c| std::ptr::eq(c.tree, tree))
    }

    /// Every tree of memory type `M` with tunables, in the order their
    /// plugins were added.
    pub fn crowds(&self) -> &[CrowdTuning<M>] {
        &self.crowds
    }

    /// Changes `tunable` to `value` from the crowd's next run on (see
    /// [`CrowdTuning::tune`]).
    ///
    /// # Errors
    /// As [`CrowdTuning::tune`].
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn tune<T: TunableValue>(&self, tunable: Tunable<T>, value: T) -> Result<(), TuneError> {
        self.only("tune").tune(tunable, value)
    }

    /// Changes the tunable named `name` from the crowd's next run on (see
    /// [`CrowdTuning::tune_named`]).
    ///
    /// # Errors
    /// As [`CrowdTuning::tune_named`].
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn tune_named(&self, name: &str, value: TuneValue) -> Result<(), TuneError> {
        self.only("tune_named").tune_named(name, value)
    }

    /// The value of `tunable` in effect (see [`CrowdTuning::tuned`]).
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn tuned<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        self.only("tuned").tuned(tunable)
    }

    /// How many times a tunable's value in effect has changed (see
    /// [`CrowdTuning::changes`]).
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn changes(&self) -> u64 {
        self.only("changes").changes()
    }

    /// The table of the tree's tunables.
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn tunables(&self) -> &'static Tunables {
        self.only("tunables").tunables()
    }

    /// The tree whose tunables these are.
    ///
    /// # Panics
    /// When plugins run several trees with tunables as `Brain<M>`: name
    /// one with [`crowd`](Self::crowd).
    pub fn tree(&self) -> &'static M::Tree {
        self.only("tree").tree()
    }

    /// The one tree's, for a call that names no tree.
    fn only(&self, call: &str) -> &CrowdTuning<M> {
        match self.crowds.as_slice() {
            [crowd] => crowd,
            crowds => {
                let names: Vec<String> = crowds
                    .iter()
                    .map(|c| format!("`{}`", M::tree_name(c.tree)))
                    .collect();
                panic!(
                    "BrainTuning<{}>::{call}: this memory type runs the trees {} with \
                     tunables; name one with `crowd(&TREE)`",
                    std::any::type_name::<M>(),
                    names.join(" and ")
                )
            }
        }
    }
}

impl<M: TreeMemory> CrowdTuning<M> {
    /// The tree whose tunables these are.
    pub fn tree(&self) -> &'static M::Tree {
        self.tree
    }

    /// The table of the tree's tunables.
    pub fn tunables(&self) -> &'static Tunables {
        self.table
    }

    /// Changes `tunable` to `value` from the crowd's next run on: staged
    /// now, put in effect when the crowd's tick system next runs, before
    /// any brain of that run ticks, for every brain alike. A system ordered
    /// `.before(BrainSystems::Tick)` changes what the same frame's run
    /// reads; an unordered one, what that run or the next reads. No
    /// brain's state is reset. Any system (or thread) may call it.
    ///
    /// # Errors
    /// As bt-core's `TreeShared::tune`: [`TuneError::OtherTable`] for a
    /// tunable of another table than the tree's, [`TuneError::OutOfRange`]
    /// for a value outside its range; nothing is changed.
    pub fn tune<T: TunableValue>(&self, tunable: Tunable<T>, value: T) -> Result<(), TuneError> {
        self.state.tune(tunable, value)
    }

    /// Changes the tunable named `name` to `value` from the crowd's next
    /// run on, as [`tune`](Self::tune): for values that come as text (a
    /// console, a menu). An int tunable takes a whole float, a float one
    /// an int, a choice one of its names.
    ///
    /// # Errors
    /// As bt-core's `TreeShared::tune_named`: [`TuneError::Unknown`] for a
    /// name the table does not have, [`TuneError::WrongType`] and
    /// [`TuneError::OutOfRange`] for a value it cannot take; nothing is
    /// changed.
    pub fn tune_named(&self, name: &str, value: TuneValue) -> Result<(), TuneError> {
        self.state.tune_named(name, value)
    }

    /// The value of `tunable` in effect: what the brains' ticks read now
    /// (a change staged since the last run is not in effect yet). A
    /// tunable of another table reads as its default.
    pub fn tuned<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        self.state.tuned(tunable)
    }

    /// How many times a tunable's value in effect has changed since the
    /// plugin was added: by a staged change put in effect at a run, and by
    /// a load (feature `serde`), which counts each value it changed, against
    /// those in effect before it.
    pub fn changes(&self) -> u64 {
        self.before + self.state.tuning_changes()
    }
}

impl<M: TreeMemory> std::fmt::Debug for CrowdTuning<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values: Vec<(&str, Shown)> = (self.table.decls().iter().enumerate())
            .map(|(i, d)| {
                let bits = self.state.tuned_bits(i).unwrap_or(d.default);
                (d.name, Shown(d.kind, bits))
            })
            .collect();
        f.debug_struct("CrowdTuning")
            .field("tree", &M::tree_name(self.tree))
            .field("tunables", &self.table.name())
            .field("values", &values)
            .field("changes", &self.changes())
            .finish_non_exhaustive()
    }
}

/// A tunable's value in effect, as its kind reads its bits.
struct Shown(TunableKind, u64);

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Shown(kind, bits) = *self;
        match kind {
            TunableKind::Float { .. } => write!(f, "{:?}", f64::from_bits(bits)),
            TunableKind::Int { .. } => write!(f, "{}", bits as i64),
            TunableKind::Bool => write!(f, "{}", bits != 0),
            TunableKind::Choice { names } => {
                match usize::try_from(bits).ok().and_then(|i| names.get(i)) {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{bits:#x}"),
                }
            }
            _ => write!(f, "{bits:#x}"),
        }
    }
}

impl<M: TreeMemory> std::fmt::Debug for BrainTuning<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.crowds).finish()
    }
}

/// What a plugin asks of its tree's tunables: the tuning file to watch
/// (feature `tune-file`).
#[derive(Clone, Debug, Default)]
pub(crate) struct TuningSettings {
    #[cfg(feature = "tune-file")]
    pub(crate) file: Option<std::path::PathBuf>,
}

/// Adds the tunables of `tree`, whose crowd shares `state`, to the app's
/// [`BrainTuning<M>`] (inserting it for the first tree of `M` with
/// tunables), with the tuning file `settings` asks for, polled in
/// `schedule` before the brains tick. A tree without tunables adds
/// nothing.
///
/// # Panics
/// When `settings` asks for a tuning file for a tree without tunables.
#[cfg_attr(not(feature = "tune-file"), allow(unused_variables))]
pub(crate) fn add<M: TreeMemory>(
    app: &mut App,
    tree: &'static M::Tree,
    state: &Arc<TreeShared>,
    schedule: Interned<dyn ScheduleLabel>,
    settings: &TuningSettings,
) {
    let Some(table) = M::tunables(tree) else {
        #[cfg(feature = "tune-file")]
        if let Some(path) = &settings.file {
            panic!(
                "BrainPlugin for tree `{}`: `tuning_file({})` for a tree without tunables: \
                 declare them with `tunables!` and name the table with `tree!`'s `tunables:` key",
                M::tree_name(tree),
                path.display()
            );
        }
        return;
    };
    let crowd = CrowdTuning {
        tree,
        table,
        state: Arc::clone(state),
        before: 0,
        #[cfg(feature = "tune-file")]
        file: settings.file.as_ref().map(|p| file::Watched::new(p, state)),
    };
    #[cfg(feature = "tune-file")]
    let watches = crowd.file.is_some();
    let world = app.world_mut();
    let index = match world.get_resource_mut::<BrainTuning<M>>() {
        Some(mut tuning) => {
            tuning.crowds.push(crowd);
            tuning.crowds.len() - 1
        }
        None => {
            world.insert_resource(BrainTuning {
                crowds: vec![crowd],
            });
            0
        }
    };
    #[cfg(feature = "tune-file")]
    if watches {
        file::add_poll::<M>(app, schedule, index);
    }
}

/// A load gave the crowd of `tree` the new shared state `new` in place of
/// `old`: its tunables are read and changed there from now on (the tuning
/// file's next readings included), and the values the load changed count
/// as changes.
#[cfg(feature = "serde")]
pub(crate) fn crowd_replaced<M: TreeMemory>(
    world: &mut World,
    tree: &'static M::Tree,
    old: &TreeShared,
    new: &Arc<TreeShared>,
) {
    let Some(mut tuning) = world.get_resource_mut::<BrainTuning<M>>() else {
        return;
    };
    let tuning = tuning.bypass_change_detection();
    let Some(crowd) = tuning
        .crowds
        .iter_mut()
        .find(|c| std::ptr::eq(c.tree, tree))
    else {
        return;
    };
    let moved = (0..crowd.table.len())
        .filter(|&i| old.tuned_bits(i) != new.tuned_bits(i))
        .count() as u64;
    // The new crowd counted the values the save holds against the
    // defaults; the count goes on from the old crowd's, by those the load
    // changed.
    crowd.before =
        (crowd.before + old.tuning_changes() + moved).saturating_sub(new.tuning_changes());
    crowd.state = Arc::clone(new);
    #[cfg(feature = "tune-file")]
    if let Some(file) = &mut crowd.file {
        file.moved(new);
    }
}
