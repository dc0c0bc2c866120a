//! Two trees of one memory type in one app: a memory type made distinct by
//! a tag type.

use std::marker::PhantomData;
use std::sync::Arc;

use bt_core::{DumpView, Outcome, TickError, TickReport, Ticket, TraceRecorder, TreeShared};

use crate::adapter::{Input, Kept, Resume, Timed, TreeMemory, UntilShared};

/// The memory `M` of a tree told apart from other trees of the same memory
/// type by the tag type `T`: [`Brain<Tagged<M, T>>`](crate::Brain),
/// [`BrainShared<Tagged<M, T>>`](crate::BrainShared) and the other types of
/// the plugin are then Bevy types of their own, so each tree has its own
/// shared state, tick system, messages and stats.
///
/// Bevy tells resources, messages and components apart by type. Two trees
/// over the same agent type with the same shape (`L`, `S`, `N`) have the
/// same memory type: without a tag they run side by side as one brain type,
/// each with its own crowd in one [`BrainShared`](crate::BrainShared) (see
/// [Two trees in one app](crate#two-trees-in-one-app)). To give a tree
/// types of its own,
/// make its plugin and its brains with
/// [`BrainPlugin::tagged`](crate::BrainPlugin::tagged) and
/// [`Brain::tagged`](crate::Brain::tagged) with the same tag; a brain made
/// without it is refused ([`BrainRefused`](crate::BrainRefused)):
///
/// ```
/// # use bevy_ecs::prelude::*;
/// # use bt_core::{behavior, decider, tree};
/// # #[derive(Component, Default)] struct Animal;
/// # bt_bevy::component_agent!(Animal);
/// # behavior! { GRAZE: Animal }
/// # behavior! { HUNT: Animal }
/// # decider! { GRAZING: Animal => GRAZE }
/// # decider! { HUNTING: Animal => HUNT }
/// # tree! { SHEEP: Animal = GRAZING, memory: SheepMemory }
/// # tree! { WOLF: Animal = HUNTING, memory: WolfMemory }
/// use bt_bevy::{Brain, BrainPlugin, Tagged};
///
/// /// The tag of the wolves' tree.
/// struct Wolves;
/// type WolfBrain = Brain<Tagged<WolfMemory, Wolves>>;
///
/// let sheep = BrainPlugin::new(&SHEEP); // untagged: `Brain<SheepMemory>`
/// let wolves = BrainPlugin::new(&WOLF).tagged::<Wolves>();
/// let wolf: WolfBrain = Brain::new(&WOLF).tagged::<Wolves>();
/// # let _ = (sheep, wolves, wolf);
/// ```
///
/// It dereferences to the memory `M`.
pub struct Tagged<M, T> {
    memory: M,
    _tag: PhantomData<fn() -> T>,
}

impl<M, T> Tagged<M, T> {
    /// `memory` under the tag `T`.
    pub(crate) fn new(memory: M) -> Self {
        Tagged {
            memory,
            _tag: PhantomData,
        }
    }

    /// The memory.
    pub fn into_inner(self) -> M {
        self.memory
    }
}

impl<M, T> std::ops::Deref for Tagged<M, T> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.memory
    }
}

impl<M: std::fmt::Debug, T> std::fmt::Debug for Tagged<M, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.memory.fmt(f)
    }
}

impl<M: TreeMemory, T: 'static> TreeMemory for Tagged<M, T> {
    type Agent = M::Agent;
    type Tree = M::Tree;

    fn tree_name(tree: &'static Self::Tree) -> &'static str {
        M::tree_name(tree)
    }

    fn unbound(tree: &'static Self::Tree) -> Self {
        Tagged::new(M::unbound(tree))
    }

    fn bound(tree: &'static Self::Tree, shared: &Arc<TreeShared>, seed: u64) -> Self {
        Tagged::new(M::bound(tree, shared, seed))
    }

    fn new_shared(tree: &'static Self::Tree, action_capacity: usize) -> Arc<TreeShared> {
        M::new_shared(tree, action_capacity)
    }

    fn has_actions(tree: &'static Self::Tree) -> bool {
        M::has_actions(tree)
    }

    fn needs_shared(tree: &'static Self::Tree) -> bool {
        M::needs_shared(tree)
    }

    fn tunables(tree: &'static Self::Tree) -> Option<&'static bt_core::Tunables> {
        M::tunables(tree)
    }

    fn tag() -> Option<&'static str> {
        Some(std::any::type_name::<T>())
    }

    fn tree(&self) -> &'static Self::Tree {
        self.memory.tree()
    }

    #[inline(always)]
    fn tick_kept(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut Self::Agent,
        input: &Input,
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    ) {
        self.memory.tick_kept(tree, agent, input, last, went);
    }

    #[inline(always)]
    fn tick_kept_timed(
        &mut self,
        tree: &'static Self::Tree,
        agent: &mut Self::Agent,
        at: Timed,
        flags: (u32, u64, u64),
        last: &mut Result<TickReport, TickError>,
        went: impl FnMut(Kept),
    ) {
        self.memory
            .tick_kept_timed(tree, agent, at, flags, last, went);
    }

    #[inline(always)]
    fn tick_until_shared(&mut self, agent: &mut Self::Agent, input: &Input) -> UntilShared {
        self.memory.tick_until_shared(agent, input)
    }

    fn resume(&mut self, agent: &mut Self::Agent, at: Resume) -> Result<TickReport, TickError> {
        self.memory.resume(agent, at)
    }

    fn tick_traced(
        &mut self,
        agent: &mut Self::Agent,
        input: &Input,
        trace: &mut TraceRecorder,
    ) -> Result<TickReport, TickError> {
        self.memory.tick_traced(agent, input, trace)
    }

    #[inline(always)]
    fn prefetch(&self) {
        self.memory.prefetch();
    }

    #[inline(always)]
    fn prefetch_after(&self, bytes: usize) {
        self.memory.prefetch_after(bytes);
    }

    #[inline(always)]
    fn prefetch_leaf_block(&self) {
        self.memory.prefetch_leaf_block();
    }

    fn release(&mut self) {
        self.memory.release();
    }

    fn shared(&self) -> Option<&Arc<TreeShared>> {
        self.memory.shared()
    }

    fn complete(&mut self, ticket: Ticket, outcome: Outcome) -> bool {
        self.memory.complete(ticket, outcome)
    }

    fn dump(&self, out: &mut String, now: f64, view: DumpView) {
        self.memory.dump(out, now, view);
    }

    fn leaf_name(&self) -> Option<&'static str> {
        self.memory.leaf_name()
    }

    fn leaf_behavior_name(&self) -> Option<&'static str> {
        self.memory.leaf_behavior_name()
    }

    #[cfg(feature = "serde")]
    fn save<Z: serde::Serializer>(&self, now: f64, s: Z) -> Result<Z::Ok, Z::Error> {
        self.memory.save(now, s)
    }

    #[cfg(feature = "serde")]
    fn load<'de, D: serde::Deserializer<'de>>(
        &mut self,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>> {
        self.memory.load(now, d)
    }

    #[cfg(feature = "serde")]
    fn load_shared<'de, D: serde::Deserializer<'de>>(
        tree: &'static Self::Tree,
        shared: &TreeShared,
        now: f64,
        d: D,
    ) -> Result<(), bt_core::RestoreError<D::Error>> {
        M::load_shared(tree, shared, now, d)
    }

    #[cfg(feature = "serde")]
    fn pending_tickets(&self, f: impl FnMut(Ticket)) {
        self.memory.pending_tickets(f);
    }

    #[cfg(feature = "viewer")]
    fn new_recorder(
        tree: &'static Self::Tree,
        lanes: usize,
        capacity: bt_viewer::Capacity,
    ) -> bt_viewer::FlightRecorder {
        M::new_recorder(tree, lanes, capacity)
    }

    #[cfg(feature = "viewer")]
    fn tick_recorded(
        &mut self,
        agent: &mut Self::Agent,
        input: &Input,
        recorder: &mut bt_viewer::FlightRecorder,
        lane: usize,
        trace: Option<&mut TraceRecorder>,
    ) -> Result<TickReport, TickError> {
        self.memory
            .tick_recorded(agent, input, recorder, lane, trace)
    }
}
