//! The components: an entity's brain, its decision flags, its senses.

use std::marker::PhantomData;

use bevy_ecs::change_detection::DetectChangesMut;
use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::entity::Entity;
use bevy_ecs::lifecycle::{ComponentHook, HookContext};
use bevy_ecs::world::DeferredWorld;
use bt_core::{AgentMemory, Outcome, Stimuli, TickError, TickReport, Ticket, Tree};

use crate::adapter::TreeMemory;
use crate::plugin::{ActionMessage, BrainShared, PluginTrees};
use crate::refused::{BrainRefused, RefuseBrain};
use crate::tagged::Tagged;

/// An entity's brain: its [`AgentMemory`] for one tree, and what its last
/// tick did.
///
/// Insert `Brain::new(&TREE)` (alone or in a bundle); when it lands on an
/// entity it is bound to its tree's crowd (in [`BrainShared`]) and its
/// random generator is seeded by how many brains of the crowd landed
/// before it, so the same game makes the same random choices in every run,
/// whatever else the app holds. The agent id every
/// tick and every deferred action carries is the entity's index
/// ([`Entity::index_u32`]).
///
/// A brain that no [`BrainPlugin`](crate::BrainPlugin) runs as `Brain<M>`
/// (made without the tag of its tree's plugin, with another one, or for a
/// tree no plugin runs) is refused: removed from its entity as soon as it
/// lands, with a [`BrainRefused`] error for Bevy's error handler, which
/// panics unless the game chose another one.
///
/// Removing it, replacing it or despawning its entity gives back whatever
/// the entity held in the shared state: its gate slots, its places in group
/// roles, and its pending deferred actions, each of which is cancelled with
/// an [`ActionMessage`] that names the entity. Behaviors' `deactivate`
/// callbacks do not run then (they need the agent, which may be gone):
/// block values are dropped, as when a plain `AgentMemory` is dropped.
///
/// Its change tick moves only when a tick changed the active path or
/// failed (see [`last_tick`](Self::last_tick)), so `Changed<Brain<M>>`
/// finds the entities that switched behavior: a tick that kept the
/// behavior running leaves it alone.
pub struct Brain<M: TreeMemory> {
    pub(crate) memory: M,
    pub(crate) last: Result<TickReport, TickError>,
    /// Its place in the crowd's schedule (see [`TickRate`](crate::TickRate)).
    pub(crate) turn: crate::rate::Turn,
    /// Its lane in the plugin's flight recorder.
    #[cfg(feature = "viewer")]
    pub(crate) lane: u32,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Brain<AgentMemory<A, L, S, N>>
where
    AgentMemory<A, L, S, N>: TreeMemory<Tree = Tree<A, L, S, N>>,
{
    /// A brain running `tree`, idle until its first tick. The tree's agent
    /// type must be a [`BrainAgent`](crate::BrainAgent).
    pub fn new(tree: &'static Tree<A, L, S, N>) -> Self
    where
        A: crate::BrainAgent,
    {
        Brain {
            memory: TreeMemory::unbound(tree),
            last: Ok(TickReport::default()),
            turn: crate::rate::Turn::default(),
            #[cfg(feature = "viewer")]
            lane: crate::record::NO_LANE,
        }
    }
}

impl<M: TreeMemory> Brain<M> {
    /// This brain under the tag `T`, for the plugin made with
    /// [`BrainPlugin::tagged::<T>`](crate::BrainPlugin::tagged), for a game
    /// that wants a tree's brains to be a type of their own. Two trees whose
    /// memory types are the same also run side by side without a tag, each
    /// with its own crowd (see [`Tagged`]).
    pub fn tagged<T: 'static>(self) -> Brain<Tagged<M, T>> {
        Brain {
            memory: Tagged::new(self.memory),
            last: self.last,
            turn: self.turn,
            #[cfg(feature = "viewer")]
            lane: self.lane,
        }
    }

    /// The agent memory: the active path, timers, the generator (read
    /// only: the plugin ticks it).
    pub fn memory(&self) -> &M {
        &self.memory
    }

    /// What the last tick did, or why it failed.
    pub fn last_tick(&self) -> Result<&TickReport, &TickError> {
        self.last.as_ref()
    }

    /// The name of the behavior decider that runs, the leaf of the active
    /// path (`JUST_WANDER`; `None`: idle).
    pub fn running_decider(&self) -> Option<&'static str> {
        self.memory.leaf_name()
    }

    /// The name of the behavior that runs (`WANDER`, run by the decider
    /// [`running_decider`](Self::running_decider) names; `None`: idle).
    pub fn running_behavior(&self) -> Option<&'static str> {
        self.memory.leaf_behavior_name()
    }

    /// Reports a deferred action back, as an [`ActionOutcome`](crate::ActionOutcome)
    /// message does: the behavior sees `outcome` from its next tick on,
    /// and the brain is woken for the next run whatever its
    /// [`TickRate`](crate::TickRate). False, changing nothing, when the
    /// ticket is not this brain's pending launch (it was cancelled or
    /// already reported).
    pub fn complete(&mut self, ticket: Ticket, outcome: Outcome) -> bool {
        let done = self.memory.complete(ticket, outcome);
        if done {
            self.turn.wake();
        }
        done
    }

    /// Makes the brain tick in the next run of its plugin, whatever its
    /// [`TickRate`](crate::TickRate); under a budget it goes with the
    /// brains due in that run. A brain already due keeps its place.
    pub fn wake(&mut self) {
        self.turn.wake();
    }

    /// Whether the brain ticks in the next run whatever its rate: woken,
    /// or left waiting by the plugin's budget.
    pub fn is_due(&self) -> bool {
        self.turn.is_due()
    }

    /// The clock's reading at the brain's last tick (`None`: it has not
    /// ticked yet). Its next tick's `dt` is the time since then.
    pub fn last_ticked_at(&self) -> Option<f64> {
        self.turn.last_run().map(|_| self.turn.last_now)
    }

    /// When a brain lands on an entity: bind it to its tree's crowd and
    /// seed it by how many brains of the crowd landed before it, or refuse
    /// it when no plugin runs its tree as `Brain<M>`.
    fn on_insert_hook(mut world: DeferredWorld, cx: HookContext) {
        let Some(tree) = world.get::<Self>(cx.entity).map(|b| b.memory.tree()) else {
            return;
        };
        let bound = world
            .get_resource_mut::<BrainShared<M>>()
            .and_then(|mut shared| {
                let shared = shared.bypass_change_detection();
                let k = shared.index_of(tree)?;
                let crowd = &mut shared.crowds[k];
                crowd.members.joined(cx.entity);
                // Seeded by its place among the crowd's brains, not by its
                // entity: the ids of entities move with whatever else the
                // app holds (a recorder's resource, another plugin's), and
                // the brain's draws must not.
                crowd.landed += 1;
                Some(M::bound(tree, crowd.state(), crowd.landed))
            });
        if bound.is_none() {
            let plugin_tag = world
                .get_resource::<PluginTrees>()
                .and_then(|trees| trees.runs_with(tree));
            world.commands().queue(RefuseBrain::<M> {
                tree,
                refused: BrainRefused {
                    entity: cx.entity,
                    tree: M::tree_name(tree),
                    tag: M::tag(),
                    plugin_tag,
                },
            });
        }
        let Some(mut brain) = world.get_mut::<Self>(cx.entity) else {
            return;
        };
        let recorded = bound.is_some();
        brain.memory = bound.unwrap_or_else(|| M::unbound(tree));
        brain.last = Ok(TickReport::default());
        brain.turn = crate::rate::Turn::landed(agent_id(cx.entity));
        #[cfg(feature = "viewer")]
        {
            brain.lane = crate::record::NO_LANE;
            // Every brain of a tree recorded whole is marked as it lands.
            let all = world
                .get_resource::<crate::record::BrainRecorder<M>>()
                .is_some_and(|r| r.all && r.records(tree));
            if recorded && all {
                world.commands().entity(cx.entity).insert(crate::Recorded);
            }
        }
        #[cfg(not(feature = "viewer"))]
        let _ = recorded;
    }

    /// When a brain leaves an entity (removed, replaced or despawned): give
    /// back what it holds, and forward the cancellations now, while the
    /// entity they name is still known.
    fn on_discard_hook(mut world: DeferredWorld, cx: HookContext) {
        let Some(mut brain) = world.get_mut::<Self>(cx.entity) else {
            return;
        };
        let brain = brain.bypass_change_detection();
        brain.memory.release();
        let tree = brain.memory.tree();
        let shared = brain.memory.shared().cloned();
        #[cfg(feature = "viewer")]
        {
            let lane = std::mem::replace(&mut brain.lane, crate::record::NO_LANE);
            if let Some(mut recorder) = world.get_resource_mut::<crate::record::BrainRecorder<M>>()
                && recorder.records(tree)
            {
                // Its lane in the recording ends here.
                recorder.release(lane);
            }
        }
        let Some(shared) = shared else {
            return;
        };
        let Some(mut crowds) = world.get_resource_mut::<BrainShared<M>>() else {
            return;
        };
        let crowds = crowds.bypass_change_detection();
        let Some(k) = crowds.index_of(tree) else {
            return;
        };
        let crowd = &mut crowds.crowds[k];
        crowd.members.left();
        let mut moved = std::mem::take(&mut crowd.moved);
        crate::adapter::drain(&shared, |request| {
            // Every request still queued is this entity's or a live one's:
            // queues are drained at the end of each tick and whenever a
            // brain leaves, so an index cannot have been reused meanwhile.
            let entity = crate::plugin::route(&mut moved, world.entities(), &request, |agent| {
                (agent == agent_id(cx.entity)).then_some(cx.entity)
            });
            world.write_message(ActionMessage::<M>::new(entity, request));
        });
        if let Some(mut s) = world.get_resource_mut::<BrainShared<M>>() {
            s.bypass_change_detection().crowds[k].moved = moved;
        }
    }
}

impl<M: TreeMemory> Component for Brain<M> {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;

    fn on_insert() -> Option<ComponentHook> {
        Some(Self::on_insert_hook)
    }

    fn on_discard() -> Option<ComponentHook> {
        Some(Self::on_discard_hook)
    }
}

impl<M: TreeMemory> std::fmt::Debug for Brain<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brain")
            .field("tree", &M::tree_name(self.memory.tree()))
            .field("running", &self.running_decider())
            .field("last", &self.last)
            .finish()
    }
}

/// The decision flags of an entity's next tick: ad hoc facts the game
/// fills in (has-nest, is-night, …) for the deciders' `needs_*`
/// preconditions. An entity without this component ticks with no flags.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Decisions(pub u64);

impl Decisions {
    /// The flags `flags` of the game's own `bitflags` type.
    pub fn from_flags<F: bitflags::Flags>(flags: F) -> Self
    where
        F::Bits: Into<u64>,
    {
        Decisions(flags.bits().into())
    }

    /// Replaces the flags with `flags`.
    pub fn set<F: bitflags::Flags>(&mut self, flags: F)
    where
        F::Bits: Into<u64>,
    {
        self.0 = flags.bits().into();
    }
}

/// Where a brain's stimuli flags come from: a component that ages its
/// stimuli by each tick's `dt` and returns the word of those still live.
/// [`Senses`] is the usual one; [`NoSenses`] means none.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a source of stimuli for a brain",
    label = "`{Self}` does not implement `SenseSource`",
    note = "the stimuli component is a `bt_bevy::Senses<Flags, N>` (or `Senses<Flags, N, Payload>`): `.with_senses::<Senses<Flags, 4>>()`",
    note = "or implement `bt_bevy::SenseSource` for `{Self}` to age its own stimuli"
)]
pub trait SenseSource: Component<Mutability = Mutable> {
    /// Ages the stimuli by `dt` seconds and returns the live ones' word.
    fn update_bits(&mut self, dt: f32) -> u64;
}

/// An entity's stimuli: up to `N` live stimuli of the flags type `F` with
/// payloads `P` (a [`bt_core::Stimuli`] as a component). Any system may
/// set stimuli on any entity; the brain's tick ages them and tests them.
/// Tell the plugin with [`BrainPlugin::with_senses`](crate::BrainPlugin::with_senses).
pub struct Senses<F, const N: usize, P: Copy = u64>(pub Stimuli<F, N, P>);

impl<F, const N: usize, P: Copy> Default for Senses<F, N, P> {
    fn default() -> Self {
        Senses(crate::adapter::no_stimuli())
    }
}

impl<F, const N: usize, P: Copy> std::ops::Deref for Senses<F, N, P> {
    type Target = Stimuli<F, N, P>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<F, const N: usize, P: Copy> std::ops::DerefMut for Senses<F, N, P> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<F: 'static, const N: usize, P: Copy + Send + Sync + 'static> Component for Senses<F, N, P> {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}

impl<F: 'static, const N: usize, P: Copy + Send + Sync + 'static> SenseSource for Senses<F, N, P> {
    #[inline]
    fn update_bits(&mut self, dt: f32) -> u64 {
        crate::adapter::age_stimuli(&mut self.0, dt)
    }
}

/// No stimuli: the [`SenseSource`] of a plugin that was not given one. No
/// entity ever has it.
#[derive(Component, Debug)]
pub struct NoSenses(PhantomData<()>);

impl SenseSource for NoSenses {
    fn update_bits(&mut self, _dt: f32) -> u64 {
        0
    }
}

/// The agent id of an entity's brain, as its ticks, traces and deferred
/// actions carry it: the entity's index. Give it to `bt_core::watch_agent` to follow one
/// entity in bt-core's debug output.
pub fn agent_id(entity: Entity) -> u32 {
    entity.index_u32()
}
