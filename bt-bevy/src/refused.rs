//! A brain that no plugin runs is refused when it lands on an entity: its
//! error, and the command that removes it and reports it.

use std::fmt;

use bevy_ecs::entity::Entity;
use bevy_ecs::error::Result;
use bevy_ecs::system::Command;
use bevy_ecs::world::World;

use crate::adapter::TreeMemory;
use crate::brain::Brain;

/// A [`Brain`] refused when it was inserted: no
/// [`BrainPlugin`](crate::BrainPlugin) runs its tree with the brain's memory
/// type, because the brain was made with another tag than the tree's plugin
/// ([`Brain::tagged`], [`BrainPlugin::tagged`](crate::BrainPlugin::tagged)),
/// or no plugin runs the tree.
///
/// Such a brain would never be bound to its tree's crowd: it would tick
/// without its gates and roles, or not at all, and be saved where no load
/// could take it back. So it is removed from its entity as soon as it
/// lands, and this error goes to Bevy's error handler, which panics unless
/// the game chose another one (the `FallbackErrorHandler` resource): then
/// the app goes on without the brain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrainRefused {
    /// The entity it was inserted on.
    pub entity: Entity,
    /// The name of the brain's tree.
    pub tree: &'static str,
    /// The tag type the brain was made with (`None`: no tag).
    pub tag: Option<&'static str>,
    /// How a plugin runs the tree: under this tag (`Some(None)`: with no
    /// tag); `None` when no plugin runs it.
    pub plugin_tag: Option<Option<&'static str>>,
}

impl fmt::Display for BrainRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tree = self.tree;
        write!(f, "{}: brain of tree `{tree}` refused: ", self.entity)?;
        let made = match self.tag {
            Some(tag) => format!("made with the tag `{tag}`"),
            None => "made without a tag".to_string(),
        };
        match self.plugin_tag {
            Some(Some(tag)) => write!(
                f,
                "{made}, but the tree's BrainPlugin runs it under the tag `{tag}`: make it \
                 with `Brain::new(&{tree}).tagged::<{tag}>()`, the tag of \
                 `BrainPlugin::new(&{tree}).tagged::<{tag}>()`"
            ),
            Some(None) => write!(
                f,
                "{made}, but the tree's BrainPlugin runs it without a tag: make it with \
                 `Brain::new(&{tree})`"
            ),
            None => {
                let tagged = self
                    .tag
                    .map(|tag| format!(".tagged::<{tag}>()"))
                    .unwrap_or_default();
                write!(
                    f,
                    "no BrainPlugin runs tree `{tree}`: add `BrainPlugin::new(&{tree}){tagged}`"
                )
            }
        }
    }
}

impl std::error::Error for BrainRefused {}

/// Removes a refused brain from its entity and reports it.
pub(crate) struct RefuseBrain<M: TreeMemory> {
    pub(crate) tree: &'static M::Tree,
    pub(crate) refused: BrainRefused,
}

impl<M: TreeMemory> Command for RefuseBrain<M> {
    type Out = Result;

    fn apply(self, world: &mut World) -> Result {
        if let Ok(mut entity) = world.get_entity_mut(self.refused.entity)
            && entity
                .get::<Brain<M>>()
                .is_some_and(|b| std::ptr::eq(b.memory.tree(), self.tree))
        {
            entity.remove::<Brain<M>>();
        }
        Err(self.refused.into())
    }
}
