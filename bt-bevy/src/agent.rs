//! How behaviors reach an entity's components: the agent type of a tree as a
//! view over a query item.

use bevy_ecs::change_detection::ContiguousMut;
use bevy_ecs::query::{ContiguousQueryData, IterQueryData, QueryData};

/// The agent type of a tree run by [`BrainPlugin`](crate::BrainPlugin): which
/// of an entity's components its behaviors read and write, and how the
/// agent value they see is made from them.
///
/// A tree's behaviors take `&mut A` for one `'static` type `A` (the tree is
/// static data holding function pointers over `A`), and a query item borrows
/// the world, so `A` cannot be the query item itself. Two ways fit:
///
/// - **The agent is a component.** `Data = &'static mut Self` and
///   [`with_agent`](Self::with_agent) hands the component over in place:
///   no copy, no cost beyond the query. Best when the AI state is its own
///   component. [`component_agent!`](crate::component_agent) writes this
///   impl.
/// - **The agent is a view.** A small `'static` struct of the values the
///   behaviors need, `Data` the components they come from (any
///   [`QueryData`]: tuples, `Option`, `&T` for read-only ones, a
///   `#[derive(QueryData)]` struct). `with_agent` copies the values in,
///   runs the tick on the view and writes back the ones that may have
///   changed. The game's state stays in as many components as it likes;
///   each tree names only what it touches, and Bevy's scheduler sees
///   exactly those accesses. The cost is one load and one store of the
///   view per entity and tick (a few bytes; measured in the crate's
///   benchmark) and change detection on what is written back (use
///   `set_if_neq` to write only real changes).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use bevy_ecs::query::QueryData;
/// use bt_bevy::BrainAgent;
///
/// #[derive(Component)] struct Health(f32);
/// #[derive(Component)] struct Position(f32, f32);
/// #[derive(Component)] struct Hunger(f32);
///
/// /// What the creature tree sees of an entity.
/// struct CreatureView { health: f32, x: f32, hunger: f32 }
///
/// impl BrainAgent for CreatureView {
///     // Health is only read; position and hunger are written back.
///     type Data = (&'static Health, &'static mut Position, &'static mut Hunger);
///
///     fn with_agent<R>(
///         (health, pos, hunger): &mut <Self::Data as QueryData>::Item<'_, '_>,
///         tick: impl FnOnce(&mut Self) -> R,
///     ) -> R {
///         let mut view = CreatureView { health: health.0, x: pos.0, hunger: hunger.0 };
///         let r = tick(&mut view);
///         pos.0 = view.x;
///         hunger.0 = view.hunger;
///         r
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent type of bt-bevy: its trees cannot run on entities",
    label = "`{Self}` does not implement `BrainAgent`",
    note = "for a component, declare it beside its `#[derive(Component)]`: `bt_bevy::component_agent!({Self});`",
    note = "for a view over several components, implement `bt_bevy::BrainAgent` for `{Self}`"
)]
pub trait BrainAgent: Sized + 'static {
    /// The components the tree's behaviors read and write.
    type Data: IterQueryData;

    /// Runs `tick` on the agent made from one entity's `data`, and writes
    /// back what it changed.
    ///
    /// In a tree with shared state ticked on several threads (see
    /// [`BrainPlugin::parallel_from`](crate::BrainPlugin::parallel_from)),
    /// a tick that stops at its first step on the shared state goes on in a
    /// second call, later in the same run: the agent the second call makes
    /// must be the one the first wrote back, as it is when `with_agent`
    /// copies in and writes back the same values.
    fn with_agent<R>(
        data: &mut <Self::Data as QueryData>::Item<'_, '_>,
        tick: impl FnOnce(&mut Self) -> R,
    ) -> R;
}

/// A [`BrainAgent`] that can also be made from a whole table chunk of its
/// components at once, for [`BrainPlugin::dense`](crate::BrainPlugin::dense):
/// the plugin then walks plain slices instead of fetching each entity.
/// [`component_agent!`](crate::component_agent) implements it.
///
/// Writing through a chunk's `ContiguousMut` with `DerefMut` marks the
/// whole chunk changed, once per call: in `with_agent_at`, write through
/// the chunk of row `i` alone (`chunk.reborrow().slice(i..i + 1)`), whose
/// `DerefMut` marks that row changed and, for a component declared with
/// `#[component(summary_tick)]`, the column's summary tick, as
/// `component_agent!` does (setting the row's changed tick by hand leaves
/// the summary behind). With bevy_ecs 0.20.1, a read-only `&T` in
/// `Data` trips a debug assertion of Bevy's parallel chunk fetch (release
/// builds are not affected): take such components as `&mut T` and only
/// read them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be ticked table chunk by table chunk (`BrainPlugin::dense`)",
    label = "`{Self}` does not implement `DenseAgent`",
    note = "`component_agent!` implements it for a component; for a view, implement `bt_bevy::DenseAgent` for `{Self}`, or leave out `.dense()`"
)]
pub trait DenseAgent: BrainAgent<Data: ContiguousQueryData> {
    /// Runs `tick` on the agent made from row `i` of `chunk`, and writes
    /// back what it changed.
    fn with_agent_at<R>(
        chunk: &mut <Self::Data as ContiguousQueryData>::Contiguous<'_, '_>,
        i: usize,
        tick: impl FnOnce(&mut Self) -> R,
    ) -> R;

    /// Every row's agent of `chunk` in place, for a chunk whose every
    /// brain ticks: `Some` where the agent is the row's component itself,
    /// as [`component_agent!`](crate::component_agent) makes it, the
    /// chunk's column with its change ticks (a reborrow, no row marked
    /// changed yet). The plugin ticks the agents in place and then marks
    /// the rows it ticked changed once for the chunk, and the column's
    /// summary tick where the component keeps one (if a tick panics, the
    /// rows up to that one, as ticking row by row would). `None`, the
    /// default, has the plugin call [`with_agent_at`](Self::with_agent_at)
    /// for each row.
    ///
    /// # Panics
    /// The plugin panics if the column does not hold one agent per row of
    /// the chunk.
    #[inline(always)]
    fn chunk_agents<'c>(
        chunk: &'c mut <Self::Data as ContiguousQueryData>::Contiguous<'_, '_>,
    ) -> Option<ContiguousMut<'c, Self>>
    where
        Self: Sized,
    {
        let _ = chunk;
        None
    }
}

/// Makes a component the agent type of its trees: implements
/// [`BrainAgent`] and [`DenseAgent`] with `Data = &'static mut Self`, so
/// behaviors get the component in place.
///
/// ```
/// use bevy_ecs::prelude::*;
///
/// #[derive(Component, Default)]
/// struct Critter { hunger: f32 }
/// bt_bevy::component_agent!(Critter);
/// ```
#[macro_export]
macro_rules! component_agent {
    ($t:ty) => {
        impl $crate::BrainAgent for $t {
            type Data = &'static mut $t;

            #[inline(always)]
            fn with_agent<R>(
                data: &mut <Self::Data as $crate::__private::QueryData>::Item<'_, '_>,
                tick: impl FnOnce(&mut Self) -> R,
            ) -> R {
                tick(&mut **data)
            }
        }

        impl $crate::DenseAgent for $t {
            #[inline(always)]
            fn with_agent_at<R>(
                chunk: &mut <Self::Data as $crate::__private::ContiguousQueryData>::Contiguous<
                    '_,
                    '_,
                >,
                i: usize,
                tick: impl FnOnce(&mut Self) -> R,
            ) -> R {
                // A chunk of the one row: `DerefMut` marks it changed, and
                // the column's summary tick where the component keeps one.
                let row = i as u32;
                tick(&mut chunk.reborrow().slice(row..row + 1)[0])
            }

            #[inline(always)]
            fn chunk_agents<'c>(
                chunk: &'c mut <Self::Data as $crate::__private::ContiguousQueryData>::Contiguous<
                    '_,
                    '_,
                >,
            ) -> ::core::option::Option<$crate::__private::ContiguousMut<'c, Self>> {
                // The column itself: the plugin marks the rows it ticked.
                ::core::option::Option::Some(chunk.reborrow())
            }
        }
    };
}
