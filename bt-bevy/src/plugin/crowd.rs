//! The crowds of one memory type, one per tree its plugins run (the
//! [`BrainShared`] resource), and the per-run tally ([`BrainStats`]).

use std::marker::PhantomData;
use std::sync::Arc;

use bevy_ecs::change_detection::Tick;
use bevy_ecs::entity::Entity;
use bevy_ecs::prelude::*;
use bt_core::{Ticket, TreeShared};

use crate::adapter::TreeMemory;

/// The crowds of the brains of memory type `M`, as a resource: one
/// [`Crowd`] per tree whose [`BrainPlugin`](crate::BrainPlugin) runs its
/// brains as `Brain<M>`, in the order the plugins were added. Each holds
/// its tree's shared state (gates, global cooldowns, group roles, the
/// deferred-action queue).
///
/// Most apps run one tree per memory type: [`state`](Self::state),
/// [`tree`](Self::tree), [`now`](Self::now) (and `snapshot`, feature
/// `serde`) are that tree's. Two trees over the same agent type with the
/// same shape have the same memory type; then name the tree,
/// [`crowd(&TREE)`](Self::crowd).
#[derive(Resource)]
pub struct BrainShared<M: TreeMemory> {
    pub(crate) crowds: Vec<Crowd<M>>,
}

/// The brains of one tree and what they share (a part of
/// [`BrainShared`]).
pub struct Crowd<M: TreeMemory> {
    tree: &'static M::Tree,
    pub(crate) state: Arc<TreeShared>,
    /// Whether its tree has tunables, whose staged changes each run puts
    /// in effect when it starts.
    tuned: bool,
    /// Requests lost to a full queue, as last reported.
    pub(crate) lost: usize,
    /// Reads the clock the brains tick with.
    clock: fn(&World) -> f64,
    /// The deferred actions still pending from a load whose agent id (the
    /// index of the entity they were launched from, before the save) is
    /// not their entity's index now: the entity each belongs to.
    pub(crate) moved: Vec<(Ticket, Entity)>,
    /// Its brains, for a tree ticked in entity order.
    pub(crate) members: Members,
    /// The last run's counts: ticked, changed, idle, errors.
    pub(crate) last: [u64; 4],
    /// Runs of its tick system.
    pub(crate) runs: u64,
    /// Brains that landed on an entity so far: the next one's seed.
    pub(crate) landed: u64,
    /// The most brains a run ticks (`None`: every due brain).
    pub(crate) budget: Option<u32>,
    /// From how many brains a run of a tree with shared state ticks them
    /// in two phases.
    pub(crate) parallel_from: u32,
    /// Room for a run's due brains, `(due since, order)`, under a budget.
    pub(crate) due: Vec<(u64, u64)>,
    /// The change tick a change to its brains' senses counts from in the
    /// next run (it wakes the brain): its tick system's last run, or a
    /// load after it (`None`: neither; the system's own last run).
    pub(crate) senses_since: Option<Tick>,
    /// The last run's schedule figures.
    pub(crate) frame: RunFigures,
    _m: PhantomData<fn() -> M>,
}

/// What a run of a crowd's tick system scheduled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunFigures {
    /// Brains due in the run.
    pub(crate) due: u64,
    /// Due brains the budget left waiting.
    pub(crate) waiting: u64,
    /// The most runs a brain ticked in the run had waited past its due run.
    pub(crate) longest_wait: u64,
}

impl<M: TreeMemory> BrainShared<M> {
    /// The crowd of `tree`, if a plugin runs it as `Brain<M>`.
    pub fn crowd(&self, tree: &'static M::Tree) -> Option<&Crowd<M>> {
        self.crowds.iter().find(|c| std::ptr::eq(c.tree, tree))
    }

    /// The crowd of `tree`, to change: its budget
    /// ([`Crowd::set_budget`]).
    pub fn crowd_mut(&mut self, tree: &'static M::Tree) -> Option<&mut Crowd<M>> {
        self.crowds.iter_mut().find(|c| std::ptr::eq(c.tree, tree))
    }

    /// Every crowd of memory type `M`, one per tree, in the order their
    /// plugins were added.
    pub fn crowds(&self) -> &[Crowd<M>] {
        &self.crowds
    }

    /// The shared state of the tree's crowd: gate counts, roles held, queue
    /// figures.
    ///
    /// # Panics
    /// When plugins run several trees as `Brain<M>`: name one with
    /// [`crowd`](Self::crowd).
    pub fn state(&self) -> &Arc<TreeShared> {
        self.only("state").state()
    }

    /// The tree whose crowd this is.
    ///
    /// # Panics
    /// When plugins run several trees as `Brain<M>`: name one with
    /// [`crowd`](Self::crowd).
    pub fn tree(&self) -> &'static M::Tree {
        self.only("tree").tree()
    }

    /// The reading of the clock the brains tick with, now (see
    /// [`Crowd::now`]).
    ///
    /// # Panics
    /// When `world` has no such clock (no `TimePlugin`), or plugins run
    /// several trees as `Brain<M>`: name one with [`crowd`](Self::crowd).
    pub fn now(&self, world: &World) -> f64 {
        self.only("now").now(world)
    }

    /// The one crowd, for a call that names no tree.
    pub(crate) fn only(&self, call: &str) -> &Crowd<M> {
        match self.crowds.as_slice() {
            [crowd] => crowd,
            crowds => panic!(
                "BrainShared<{}>::{call}: this memory type runs the trees {}; name one with \
                 `crowd(&TREE)`",
                std::any::type_name::<M>(),
                tree_names(crowds)
            ),
        }
    }

    /// The index of `tree`'s crowd.
    pub(crate) fn index_of(&self, tree: &'static M::Tree) -> Option<usize> {
        self.crowds.iter().position(|c| std::ptr::eq(c.tree, tree))
    }
}

/// The names of the crowds' trees, for a message: "`A` and `B`".
pub(crate) fn tree_names<M: TreeMemory>(crowds: &[Crowd<M>]) -> String {
    let names: Vec<String> = crowds
        .iter()
        .map(|c| format!("`{}`", M::tree_name(c.tree)))
        .collect();
    names.join(" and ")
}

impl<M: TreeMemory> Crowd<M> {
    pub(crate) fn new(
        tree: &'static M::Tree,
        state: Arc<TreeShared>,
        clock: fn(&World) -> f64,
    ) -> Self {
        Crowd {
            tree,
            state,
            tuned: M::tunables(tree).is_some(),
            lost: 0,
            clock,
            moved: Vec::new(),
            members: Members::new(M::needs_shared(tree)),
            last: [0; 4],
            runs: 0,
            landed: 0,
            budget: None,
            parallel_from: super::par_ordered::PARALLEL_FROM,
            due: Vec::new(),
            senses_since: None,
            frame: RunFigures::default(),
            _m: PhantomData,
        }
    }

    /// The most brains a run of the tick system ticks (`None`: no limit).
    pub fn budget(&self) -> Option<u32> {
        self.budget
    }

    /// Sets the most brains a run ticks, from the next run on (`None`:
    /// every due brain ticks). The due brains beyond it wait for a later
    /// run, the longest waiting first, then by agent id: with a budget of
    /// `B` in every run and `N` brains, no brain ticks later than
    /// `(N - 1) / B` runs (rounded down) after the run it was due in. A
    /// budget of 0 ticks nothing (the crowd pauses; its due brains wait).
    pub fn set_budget(&mut self, budget: Option<u32>) {
        self.budget = budget;
    }

    /// The most runs a brain can wait past the run it is due in, with the
    /// budget in every run and `brains` brains in the crowd: `(brains - 1)
    /// / budget`, 0 without a budget, `None` with a budget of 0.
    pub fn wait_bound(&self, brains: usize) -> Option<u64> {
        match self.budget {
            None => Some(0),
            Some(0) => None,
            Some(b) => Some(brains.saturating_sub(1) as u64 / u64::from(b)),
        }
    }

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

    /// Puts the changes staged on the tree's tunables in effect, at the
    /// start of a run, before any brain of the run ticks: every brain of
    /// the run reads the same values. A constant test for a tree without
    /// tunables.
    #[inline(always)]
    pub(crate) fn apply_tuning(&self) {
        if self.tuned {
            self.state.apply_tuning();
        }
    }

    /// Whether `memory` is one of this crowd's brains' (made for its tree).
    #[inline(always)]
    pub(crate) fn owns(&self, memory: &M) -> bool {
        std::ptr::eq(memory.tree(), self.tree)
    }
}

impl<M: TreeMemory> std::fmt::Debug for Crowd<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crowd")
            .field("tree", &M::tree_name(self.tree))
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The entities of a crowd's brains, for a tree ticked in entity order (a
/// tree with shared state): kept in index order, sorted again only after
/// brains came or went.
#[derive(Default)]
pub(crate) struct Members {
    /// Whether the crowd keeps them (its tree is ticked in entity order).
    kept: bool,
    entities: Vec<Entity>,
    /// `entities` is in index order, each once, and holds only brains of
    /// the crowd.
    sorted: bool,
}

impl Members {
    fn new(kept: bool) -> Self {
        Members {
            kept,
            entities: Vec::new(),
            sorted: true,
        }
    }

    /// A brain of the crowd landed on `entity`.
    pub(crate) fn joined(&mut self, entity: Entity) {
        if self.kept {
            self.entities.push(entity);
            self.sorted = false;
        }
    }

    /// A brain of the crowd left its entity (found and dropped at the next
    /// sort).
    pub(crate) fn left(&mut self) {
        self.sorted = false;
    }

    /// The entities in index order, each once, after dropping those for
    /// which `member` is false (their brain left, or is another tree's).
    pub(crate) fn in_order(&mut self, member: impl FnMut(&Entity) -> bool) -> &[Entity] {
        if !self.sorted {
            self.entities.retain(member);
            self.entities.sort_unstable_by_key(|e| e.index_u32());
            self.entities.dedup();
            self.sorted = true;
        }
        &self.entities
    }
}

/// What the last run of the tick system did, summed over the brains of one
/// tree (with several trees of one memory type, over each tree's last
/// run).
#[derive(Resource, Debug)]
pub struct BrainStats<M> {
    /// Brains ticked.
    pub ticked: u64,
    /// Brains due: those whose turn it was by their
    /// [`TickRate`](crate::TickRate), those woken, and those an earlier
    /// run's budget left waiting.
    pub due: u64,
    /// Due brains the budget left waiting for a later run.
    pub waiting: u64,
    /// The most runs a brain ticked in the last run had waited past the
    /// run it was due in (0: every brain ticked on time).
    pub longest_wait: u64,
    /// Brains idle after their tick.
    pub idle: u64,
    /// Brains whose active path changed.
    pub changed: u64,
    /// Brains whose tick failed (see [`Brain::last_tick`](crate::Brain::last_tick)).
    pub errors: u64,
    /// Runs of the tick system so far (with several trees of one memory
    /// type, of the one that ran most).
    pub runs: u64,
    _m: PhantomData<fn() -> M>,
}

impl<M> Default for BrainStats<M> {
    fn default() -> Self {
        BrainStats {
            ticked: 0,
            due: 0,
            waiting: 0,
            longest_wait: 0,
            idle: 0,
            changed: 0,
            errors: 0,
            runs: 0,
            _m: PhantomData,
        }
    }
}

impl<M: TreeMemory> BrainStats<M> {
    /// Counts crowd `k`'s run that ticked `[ticked, changed, idle, errors]`
    /// brains, and sums the crowds' last runs.
    pub(crate) fn count(&mut self, shared: &mut BrainShared<M>, k: usize, last: [u64; 4]) {
        let crowd = &mut shared.crowds[k];
        crowd.last = last;
        crowd.runs += 1;
        let mut sum = [0; 4];
        let mut runs = 0;
        let mut frame = RunFigures::default();
        for c in &shared.crowds {
            for (s, n) in sum.iter_mut().zip(c.last) {
                *s += n;
            }
            runs = runs.max(c.runs);
            frame.due += c.frame.due;
            frame.waiting += c.frame.waiting;
            frame.longest_wait = frame.longest_wait.max(c.frame.longest_wait);
        }
        let [ticked, changed, idle, errors] = sum;
        *self = BrainStats {
            ticked,
            due: frame.due,
            waiting: frame.waiting,
            longest_wait: frame.longest_wait,
            idle,
            changed,
            errors,
            runs,
            _m: PhantomData,
        };
    }
}
