//! The plugin's system sets: [`BrainSystems`], which the game orders its
//! systems against, and the sets of the tick systems of one memory type
//! ([`TickOf`]).

use std::marker::PhantomData;

use bevy_ecs::prelude::*;

/// The plugin's systems, in order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrainSystems {
    /// Hands reported outcomes to their brains.
    Outcomes,
    /// Puts the changes staged on the tree's tunables in effect, ticks
    /// every brain and writes the deferred actions as messages.
    Tick,
}

/// The system set of the tick systems of the brains of memory type `M`
/// (the recorded values are read before it), or of one crowd's.
pub(crate) struct TickOf<M> {
    crowd: Option<usize>,
    _m: PhantomData<fn() -> M>,
}

impl<M> TickOf<M> {
    /// Every tick system of `M`.
    pub(crate) fn all() -> Self {
        TickOf {
            crowd: None,
            _m: PhantomData,
        }
    }

    /// The tick system of crowd `k` of `M`.
    pub(super) fn crowd(k: usize) -> Self {
        TickOf {
            crowd: Some(k),
            _m: PhantomData,
        }
    }
}

impl<M> Clone for TickOf<M> {
    fn clone(&self) -> Self {
        TickOf {
            crowd: self.crowd,
            _m: PhantomData,
        }
    }
}

impl<M> PartialEq for TickOf<M> {
    fn eq(&self, other: &Self) -> bool {
        self.crowd == other.crowd
    }
}

impl<M> Eq for TickOf<M> {}

impl<M> std::hash::Hash for TickOf<M> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.crowd.hash(h);
    }
}

impl<M> std::fmt::Debug for TickOf<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TickOf<{}>({:?})",
            std::any::type_name::<M>(),
            self.crowd
        )
    }
}

impl<M: 'static> SystemSet for TickOf<M> {
    fn dyn_clone(&self) -> Box<dyn SystemSet> {
        Box::new(self.clone())
    }
}
