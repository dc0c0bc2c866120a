//! What one tick did.

use crate::decl::ItemIdx;
use crate::tree::Tree;

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickReport {
    /// The behavior decider (the leaf of the active path) after the tick
    /// (`None`: idle). Its behavior's name: [`behavior`](Self::behavior).
    pub leaf: Option<ItemIdx>,
    /// Deciders activated in this tick.
    ///
    /// An idle agent that stays idle counts none: when its root group has
    /// no group behavior and finds no child to run, the root is entered and
    /// left within the tick (the trace shows both), which is not a change.
    pub activated: u16,
    /// Deciders deactivated in this tick (see [`activated`](Self::activated)).
    pub deactivated: u16,
    /// Masked redecides made in this tick: with the jumps made, what the
    /// tick spent of its redecide budget ([semantics](crate::semantics)).
    pub redecides: u16,
    /// Deciders visited: active ones walked through plus candidates tried.
    pub visited: u32,
    /// A group that broke the Subset Rule in this tick: it accepted, but
    /// none of its children could run. The root of an idle agent breaks it
    /// only through a `decide` of its own that accepted: without one, a
    /// root with no child to run just leaves the agent idle.
    pub subset_violation: Option<ItemIdx>,
}

impl TickReport {
    /// Whether the active path changed.
    pub fn changed(&self) -> bool {
        self.activated != 0 || self.deactivated != 0
    }

    /// The name of the behavior that runs after the tick (`WANDER`), where
    /// [`leaf`](Self::leaf) is the decider that runs it (`JUST_WANDER`):
    /// `None` when the agent is idle.
    pub fn behavior<A: 'static, const L: usize, const S: usize, const N: usize>(
        &self,
        tree: &Tree<A, L, S, N>,
    ) -> Option<&'static str> {
        let leaf = tree.node(self.leaf?);
        leaf.behavior().map(|b| b.name())
    }
}
