//! The one place that calls bt-core: ticking, binding a memory to its
//! crowd's shared state, outcomes, dumps, traces, stimuli and the action
//! queue.
//!
//! Everything else in this crate goes through [`TreeMemory`], so a change in
//! bt-core's API is a change in this file only.

use std::sync::Arc;

use bt_core::{
    ActionRequest, AgentMemory, DumpView, Outcome, Stimuli, TickError, TickInput, TickReport,
    Ticket, TraceRecorder, Tree, TreeShared, Tunables,
};
pub(crate) use bt_core::{Kept, Resume, Timed, UntilShared};

/// What this crate needs from an agent memory: implemented for every
/// [`bt_core::AgentMemory`], so [`Brain<M>`](crate::Brain) and
/// [`BrainPlugin<M>`](crate::BrainPlugin) can be written with one type
/// parameter (`Brain<CreatureMemory>`, with the alias `tree!` declares)
/// instead of the tree's agent type and three sizes.
///
/// There is nothing to implement: the trait exists to name the memory type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the memory type of a tree",
    label = "expected a tree's memory type, found `{Self}`",
    note = "name the memory type that `tree!` declares: `tree! {{ CRITTER: Critter = ROOT, memory: CritterMemory }}` gives `Brain<CritterMemory>`, `BrainShared<CritterMemory>`, ...",
    note = "a tagged tree's is `Tagged<CritterMemory, Tag>`"
)]
pub trait TreeMemory: Send + Sync + Sized + 'static {
    /// The tree's agent type.
    type Agent: 'static;
    /// The compiled tree type.
    type Tree: Sync + 'static;

    /// The tree's name.
    fn tree_name(tree: &'static Self::Tree) -> &'static str;

    /// A memory not bound to any shared state (for a brain not yet on an
    /// entity).
    #[doc(hidden)]
    fn unbound(tree: &'static Self::Tree) -> Self;

    /// A memory of the crowd sharing `shared`, its generator seeded with
    /// `seed`.
    #[doc(hidden)]
    fn bound(tree: &'static Self::Tree, shared: &Arc<TreeShared>, seed: u64) -> Self;

    /// The crowd's shared state for `tree`.
    #[doc(hidden)]
    fn new_shared(tree: &'static Self::Tree, action_capacity: usize) -> Arc<TreeShared>;

    /// Whether the tree launches deferred actions.
    #[doc(hidden)]
    fn has_actions(tree: &'static Self::Tree) -> bool;

    /// Whether the tree's brains share state (a gate, a global cooldown, a
    /// group role or a deferred action): then who gets through depends on
    /// the order they tick in.
    #[doc(hidden)]
    fn needs_shared(tree: &'static Self::Tree) -> bool;

    /// The tree's tunables (`tree!`'s `tunables:` key), if it has any.
    #[doc(hidden)]
    fn tunables(tree: &'static Self::Tree) -> Option<&'static Tunables>;

    /// The tag type's name, for a memory under a tag
    /// ([`Tagged`](crate::Tagged)).
    #[doc(hidden)]
    fn tag() -> Option<&'static str> {
        None
    }

    /// The tree that made this memory.
    #[doc(hidden)]
    fn tree(&self) -> &'static Self::Tree;

    /// One tick with `tree`, the tree that made the memory, its result
    /// kept in `last`, which holds the last tick's, and how it went handed
    /// to `went` where it ends (see [`bt_core::tick_kept`]). A `static`
    /// given here is a constant in the caller's loop.
    #[doc(hidden)]
    fn tick_kept(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut Self::Agent,
        input: &Input,
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    );

    /// [`tick_kept`](Self::tick_kept) at the checked times `at`, with the
    /// agent id, decision flags and stimuli flags `flags` (see
    /// [`bt_core::tick_kept_timed`]).
    #[doc(hidden)]
    fn tick_kept_timed(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut Self::Agent,
        at: Timed,
        flags: (u32, u64, u64),
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    );

    /// One tick up to its first step that could read or write the crowd's
    /// shared state (see [`bt_core::tick_until_shared`]): finished, or
    /// stopped there, having changed nothing shared.
    #[doc(hidden)]
    fn tick_until_shared(&mut self, agent: &mut Self::Agent, input: &Input) -> UntilShared;

    /// Goes on with a tick [`tick_until_shared`](Self::tick_until_shared)
    /// stopped, and returns what [`tick`](Self::tick) would have.
    #[doc(hidden)]
    fn resume(&mut self, agent: &mut Self::Agent, at: Resume) -> Result<TickReport, TickError>;

    /// One tick, its decision trace appended to `trace`.
    #[doc(hidden)]
    fn tick_traced(
        &mut self,
        agent: &mut Self::Agent,
        input: &Input,
        trace: &mut TraceRecorder,
    ) -> Result<TickReport, TickError>;

    /// Starts fetching what the next tick reads (see
    /// [`AgentMemory::prefetch`]).
    #[doc(hidden)]
    fn prefetch(&self);

    /// [`prefetch`](Self::prefetch) of the memory `bytes` after this one,
    /// past the slice or not (see [`AgentMemory::prefetch_after`]).
    #[doc(hidden)]
    fn prefetch_after(&self, bytes: usize);

    /// Starts fetching the running behavior's block.
    #[doc(hidden)]
    fn prefetch_leaf_block(&self);

    /// Gives back everything the memory holds in its shared state (gates,
    /// roles, pending actions, which are cancelled) and makes it idle.
    #[doc(hidden)]
    fn release(&mut self);

    /// The shared state it is bound to.
    #[doc(hidden)]
    fn shared(&self) -> Option<&Arc<TreeShared>>;

    /// Reports a deferred action back.
    #[doc(hidden)]
    fn complete(&mut self, ticket: Ticket, outcome: Outcome) -> bool;

    /// Writes the state dump.
    #[doc(hidden)]
    fn dump(&self, out: &mut String, now: f64, view: DumpView);

    /// The name of the deepest active decider.
    #[doc(hidden)]
    fn leaf_name(&self) -> Option<&'static str>;

    /// The name of the behavior the deepest active decider runs.
    #[doc(hidden)]
    fn leaf_behavior_name(&self) -> Option<&'static str>;

    /// Writes the memory's snapshot taken at `now`.
    #[cfg(feature = "serde")]
    #[doc(hidden)]
    fn save<Z: serde::Serializer>(&self, now: f64, s: Z) -> Result<Z::Ok, Z::Error>;

    /// Replaces the memory's state with the snapshot read from `d`.
    #[cfg(feature = "serde")]
    #[doc(hidden)]
    fn load<'de, D: serde::Deserializer<'de>>(
        &mut self,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>>;

    /// Replaces `shared`, made for `tree`, with the snapshot read from `d`.
    #[cfg(feature = "serde")]
    #[doc(hidden)]
    fn load_shared<'de, D: serde::Deserializer<'de>>(
        tree: &'static Self::Tree,
        shared: &TreeShared,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>>;

    /// Hands the ticket of every pending deferred action to `f`.
    #[cfg(feature = "serde")]
    #[doc(hidden)]
    fn pending_tickets(&self, f: impl FnMut(Ticket));

    /// A flight recorder for `tree` with room for `lanes` agents.
    #[cfg(feature = "viewer")]
    #[doc(hidden)]
    fn new_recorder(
        tree: &'static Self::Tree,
        lanes: usize,
        capacity: bt_viewer::Capacity,
    ) -> bt_viewer::FlightRecorder;

    /// One tick recorded in `lane` of `recorder`, its events also appended
    /// to `trace` when there is one.
    #[cfg(feature = "viewer")]
    #[doc(hidden)]
    fn tick_recorded(
        &mut self,
        agent: &mut Self::Agent,
        input: &Input,
        recorder: &mut bt_viewer::FlightRecorder,
        lane: usize,
        trace: Option<&mut TraceRecorder>,
    ) -> Result<TickReport, TickError>;
}

/// A tick's input, as this crate builds it from an entity.
#[derive(Clone, Copy, Debug)]
pub struct Input {
    /// Absolute time, seconds.
    pub now: f64,
    /// Step, seconds.
    pub dt: f32,
    /// The agent id: the entity's index.
    pub agent: u32,
    /// Decision flags.
    pub decision: u64,
    /// Stimuli flags.
    pub stimuli: u64,
}

impl Input {
    #[inline(always)]
    fn bt(&self) -> TickInput {
        TickInput::new(self.now, self.dt)
            .with_agent(self.agent)
            .with_decision_bits(self.decision)
            .with_stimuli_bits(self.stimuli)
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> TreeMemory
    for AgentMemory<A, L, S, N>
where
    AgentMemory<A, L, S, N>: Send + Sync,
    Tree<A, L, S, N>: Sync,
{
    type Agent = A;
    type Tree = Tree<A, L, S, N>;

    fn tree_name(tree: &'static Self::Tree) -> &'static str {
        tree.name()
    }

    fn unbound(tree: &'static Self::Tree) -> Self {
        tree.new_memory(0)
    }

    fn bound(tree: &'static Self::Tree, shared: &Arc<TreeShared>, seed: u64) -> Self {
        tree.new_memory_in(shared, seed)
    }

    fn new_shared(tree: &'static Self::Tree, action_capacity: usize) -> Arc<TreeShared> {
        tree.new_shared(action_capacity)
    }

    fn has_actions(tree: &'static Self::Tree) -> bool {
        tree.shape().actions > 0
    }

    fn needs_shared(tree: &'static Self::Tree) -> bool {
        tree.needs_shared()
    }

    fn tunables(tree: &'static Self::Tree) -> Option<&'static Tunables> {
        tree.tunables.filter(|t| !t.is_empty())
    }

    fn tree(&self) -> &'static Self::Tree {
        AgentMemory::tree(self)
    }

    #[inline(always)]
    fn tick_kept(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut A,
        input: &Input,
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    ) {
        bt_core::tick_kept(tree, agent, self, &input.bt(), last, went);
    }

    #[inline(always)]
    fn tick_kept_timed(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut A,
        at: Timed,
        flags: (u32, u64, u64),
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    ) {
        bt_core::tick_kept_timed(tree, agent, self, at, flags, last, went);
    }

    #[inline(always)]
    fn tick_until_shared(&mut self, agent: &mut A, input: &Input) -> UntilShared {
        let tree = AgentMemory::tree(self);
        bt_core::tick_until_shared(tree, agent, self, &input.bt())
    }

    fn resume(&mut self, agent: &mut A, at: Resume) -> Result<TickReport, TickError> {
        let tree = AgentMemory::tree(self);
        bt_core::resume_tick(tree, agent, self, at)
    }

    fn tick_traced(
        &mut self,
        agent: &mut A,
        input: &Input,
        trace: &mut TraceRecorder,
    ) -> Result<TickReport, TickError> {
        let tree = AgentMemory::tree(self);
        bt_core::tick_traced(tree, agent, self, &input.bt(), trace)
    }

    #[inline(always)]
    fn prefetch(&self) {
        AgentMemory::prefetch(self);
    }

    #[inline(always)]
    fn prefetch_after(&self, bytes: usize) {
        AgentMemory::prefetch_after(self, bytes);
    }

    #[inline(always)]
    fn prefetch_leaf_block(&self) {
        AgentMemory::prefetch_leaf_block(self);
    }

    fn release(&mut self) {
        self.reset();
    }

    fn shared(&self) -> Option<&Arc<TreeShared>> {
        AgentMemory::shared(self)
    }

    fn complete(&mut self, ticket: Ticket, outcome: Outcome) -> bool {
        AgentMemory::complete(self, ticket, outcome)
    }

    fn dump(&self, out: &mut String, now: f64, view: DumpView) {
        // Writing to a String cannot fail.
        let _ = bt_core::debug_print_state(out, AgentMemory::tree(self), self, now, view);
    }

    fn leaf_name(&self) -> Option<&'static str> {
        self.leaf().map(|i| AgentMemory::tree(self).node(i).name())
    }

    fn leaf_behavior_name(&self) -> Option<&'static str> {
        let leaf = AgentMemory::tree(self).node(self.leaf()?);
        leaf.behavior().map(|b| b.name())
    }

    #[cfg(feature = "serde")]
    fn save<Z: serde::Serializer>(&self, now: f64, s: Z) -> Result<Z::Ok, Z::Error> {
        serde::Serialize::serialize(&self.snapshot(now), s)
    }

    #[cfg(feature = "serde")]
    fn load<'de, D: serde::Deserializer<'de>>(
        &mut self,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>> {
        self.restore(now, d)
    }

    #[cfg(feature = "serde")]
    fn load_shared<'de, D: serde::Deserializer<'de>>(
        tree: &'static Self::Tree,
        shared: &TreeShared,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>> {
        shared.restore(tree, now, d)
    }

    #[cfg(feature = "serde")]
    fn pending_tickets(&self, mut f: impl FnMut(Ticket)) {
        let shape = AgentMemory::tree(self).shape();
        let first = shape.first_action_slot();
        for slot in first..first + shape.actions {
            if let Some(ticket) = self.pending_ticket(slot) {
                f(ticket);
            }
        }
    }

    #[cfg(feature = "viewer")]
    fn new_recorder(
        tree: &'static Self::Tree,
        lanes: usize,
        capacity: bt_viewer::Capacity,
    ) -> bt_viewer::FlightRecorder {
        bt_viewer::FlightRecorder::with_lanes(tree, lanes, capacity)
    }

    #[cfg(feature = "viewer")]
    fn tick_recorded(
        &mut self,
        agent: &mut A,
        input: &Input,
        recorder: &mut bt_viewer::FlightRecorder,
        lane: usize,
        trace: Option<&mut TraceRecorder>,
    ) -> Result<TickReport, TickError> {
        let tree = AgentMemory::tree(self);
        match trace {
            None => recorder.tick_lane(lane, tree, agent, self, &input.bt()),
            Some(trace) => recorder.tick_lane_traced(lane, tree, agent, self, &input.bt(), trace),
        }
    }
}

/// No stimuli.
pub(crate) const fn no_stimuli<F, const N: usize, P: Copy>() -> Stimuli<F, N, P> {
    Stimuli::new()
}

/// Ages `stimuli` by `dt` and returns the word of those still live.
#[inline(always)]
pub(crate) fn age_stimuli<F, const N: usize, P: Copy>(
    stimuli: &mut Stimuli<F, N, P>,
    dt: f32,
) -> u64 {
    stimuli.update_bits(dt)
}

/// An empty decision-trace recorder.
pub(crate) fn new_trace() -> TraceRecorder {
    TraceRecorder::new()
}

/// The text of a traced tick, with its error (if any) as a last note.
pub(crate) fn trace_text(mut trace: TraceRecorder, error: Option<&TickError>) -> String {
    if let Some(e) = error {
        trace.note(&format!("error: {e}"));
    }
    trace.take()
}

/// Hands every queued request of `shared` to `f`, oldest first.
pub(crate) fn drain(shared: &TreeShared, f: impl FnMut(ActionRequest)) {
    shared.drain_actions(f);
}

/// Requests lost to a full queue since `shared` was made.
pub(crate) fn lost(shared: &TreeShared) -> usize {
    shared.lost_requests()
}
