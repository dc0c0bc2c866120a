//! Runs [`bt_core`] decider trees on Bevy ECS entities.
//!
//! Each entity with a [`Brain`] is an agent: the plugin ticks every brain
//! once per run of its schedule, in parallel over Bevy's query, with the
//! time from Bevy's clock, decision flags from a [`Decisions`] component
//! and stimuli from a [`Senses`] component. Behaviors read and write the
//! entity's own components; deferred actions leave as messages and their
//! outcomes come back as messages.
//!
//! ```
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_time::TimePlugin;
//! use bt_bevy::{Brain, BrainPlugin, BrainSystems, Decisions};
//! use bt_core::{behavior, decider, group, tree};
//!
//! bitflags::bitflags! {
//!     #[derive(Clone, Copy)]
//!     struct Facts: u32 { const HUNGRY = 1; }
//! }
//!
//! #[derive(Component, Default)]
//! struct Critter { food: u32, steps: u32 }
//! bt_bevy::component_agent!(Critter); // behaviors get `&mut Critter`
//!
//! behavior! { EAT: Critter, tick: |c, _cx| { c.food += 1; c.food < 3 } }
//! behavior! { WANDER: Critter, tick: |c, _cx| { c.steps += 1; true } }
//! decider! { EAT_WHEN_HUNGRY: Critter => EAT, needs_all: Facts::HUNGRY }
//! decider! { JUST_WANDER: Critter => WANDER }
//! group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
//! tree! { CRITTER: Critter = ROOT, memory: CritterMemory }
//!
//! // The game fills the decision flags before the brains tick.
//! fn senses(mut q: Query<(&Critter, &mut Decisions)>) {
//!     for (c, mut d) in &mut q {
//!         d.set(if c.steps >= 2 && c.food < 3 { Facts::HUNGRY } else { Facts::empty() });
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .add_plugins(BrainPlugin::new(&CRITTER).in_schedule(Update))
//!     .add_systems(Update, senses.before(BrainSystems::Tick));
//! let critter = app
//!     .world_mut()
//!     .spawn((Critter::default(), Decisions::default(), Brain::new(&CRITTER)))
//!     .id();
//! let mut running = Vec::new();
//! for _ in 0..6 {
//!     app.update();
//!     running.push(app.world().get::<Brain<CritterMemory>>(critter).unwrap().running());
//! }
//! let (wander, eat) = (Some("JUST_WANDER"), Some("EAT_WHEN_HUNGRY"));
//! assert_eq!(running, [wander, wander, eat, eat, wander, wander]);
//! ```
//!
//! # What the plugin adds
//!
//! [`BrainPlugin::new(&TREE)`](BrainPlugin::new) — one per tree — adds, in
//! the schedule of its choice ([`FixedUpdate`](bevy_app::FixedUpdate) by
//! default), the system set [`BrainSystems`]: reported outcomes are handed
//! to their brains ([`BrainSystems::Outcomes`]), then every brain is ticked
//! and the deferred actions the ticks issued are written as
//! [`ActionMessage`]s ([`BrainSystems::Tick`]). It adds the crowd's shared
//! state as the [`BrainShared`] resource and a per-run tally,
//! [`BrainStats`].
//!
//! - **Brains.** [`Brain::new(&TREE)`](Brain::new) is a component holding the
//!   entity's `AgentMemory`. When it lands on an entity it is bound to the
//!   crowd's shared state, and its random generator is seeded with
//!   [`Entity::to_bits`](bevy_ecs::entity::Entity::to_bits): the same
//!   entities make the same random choices in every run. The agent id of
//!   its ticks, traces and actions is the entity's index
//!   ([`agent_id`]).
//! - **Time.** `now` is [`Time::elapsed_secs_f64`](bevy_time::Time) and `dt`
//!   [`Time::delta_secs`](bevy_time::Time) of the schedule's clock: the
//!   fixed clock in `FixedUpdate`, the virtual one in `Update`.
//! - **Flags.** [`Decisions`] holds the decision flags the game fills
//!   before [`BrainSystems::Tick`]; [`Senses`] (enabled with
//!   [`BrainPlugin::with_senses`]) holds stimuli, aged by each tick's `dt`.
//!   Either may be missing: no flags.
//! - **Deferred actions.** A behavior's `launch` becomes an
//!   [`ActionMessage`] naming the entity; a game system carries it out and
//!   reports back with one message, `outcomes.write(action.outcome(Outcome::Succeeded))`
//!   (or [`Brain::complete`] where it holds the brain). Preemption, an
//!   ended behavior or a despawn sends a `Cancel` with the same ticket.
//! - **Leaving.** Removing, replacing or despawning a brain gives back its
//!   gate slots, its places in group roles and its pending actions (each
//!   cancelled with a message naming the entity) at once: a despawned
//!   entity never holds a gate. Behaviors' `deactivate` callbacks do not
//!   run then; their memory blocks are dropped.
//!
//! # Two trees in one app
//!
//! Add one plugin per tree. Each plugin's resources, messages and systems
//! are Bevy types over the tree's memory type `M` ([`BrainShared<M>`],
//! [`ActionMessage<M>`], [`BrainStats<M>`], [`Brain<M>`]), so trees with
//! different memory types never meet. Two trees over the same agent type
//! with the same shape have the *same* memory type, though: give one of
//! them (or each) a tag type, [`BrainPlugin::tagged`] and
//! [`Brain::tagged`], and it runs as [`Tagged<M, Tag>`](Tagged), with its
//! own shared state, tick system, messages and stats. Adding a second
//! tree of the same (untagged) memory type panics and says so, and adding
//! the same tree twice under the same tag panics naming the tree; the same
//! tree under two tags makes two crowds of it.
//!
//! # Saving and loading
//!
//! With the `serde` feature, [`SaveBrains`] (implemented for `World`)
//! saves every brain of a tree with its crowd's shared state (gate counts,
//! cooldowns, group roles, queued deferred actions) through any serde
//! format, each brain under a key of the game's (entities are not stable
//! across apps), its [`Senses`] with it; and loads such a save into a
//! fresh app whose entities were spawned anew, or into the running app it
//! came from. Either way the brains go on as if they had never stopped:
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use std::collections::HashMap;
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_time::TimePlugin;
//! use bt_bevy::{Brain, BrainPlugin, NoSenses, SaveBrains};
//! use bt_core::{behavior, decider, tree};
//!
//! #[derive(Component, Default)]
//! struct Walker { name: u32, steps: u32 }
//! bt_bevy::component_agent!(Walker);
//!
//! /// The walk's memory block: saved with the brain.
//! #[derive(Default, serde::Serialize, serde::Deserialize)]
//! struct Steps(u32);
//! behavior! { WALK: Walker, memory: Steps, persist,
//!     tick: |w, m, _cx| { m.0 += 1; w.steps = m.0; true },
//! }
//! decider! { JUST_WALK: Walker => WALK }
//! tree! { WALKER: Walker = JUST_WALK, memory: WalkerMemory }
//!
//! fn new_app() -> App {
//!     let mut app = App::new();
//!     app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!         .add_plugins(BrainPlugin::new(&WALKER).in_schedule(Update));
//!     app
//! }
//! fn steps(app: &App, e: Entity) -> u32 {
//!     app.world().get::<Walker>(e).unwrap().steps
//! }
//!
//! let mut app = new_app();
//! let ann = app.world_mut().spawn((Walker { name: 7, steps: 0 }, Brain::new(&WALKER))).id();
//! for _ in 0..3 {
//!     app.update();
//! }
//! // Save: each brain under the game's own id for its entity.
//! let world = app.world_mut();
//! let names: HashMap<Entity, u32> =
//!     world.query::<(Entity, &Walker)>().iter(world).map(|(e, w)| (e, w.name)).collect();
//! let save = world.save_brains::<WalkerMemory, NoSenses, u32>(|e| names.get(&e).copied());
//! let json = serde_json::to_string(&save).unwrap();
//!
//! // Load into a fresh app: the game spawns its entities, then maps its ids
//! // to them.
//! let mut fresh = new_app();
//! let ann2 = fresh.world_mut().spawn((Walker { name: 7, steps: 0 }, Brain::new(&WALKER))).id();
//! let loaded = fresh
//!     .world_mut()
//!     .load_brains::<WalkerMemory, NoSenses, u32, _>(
//!         &mut serde_json::Deserializer::from_str(&json),
//!         |&name| (name == 7).then_some(ann2),
//!     )
//!     .unwrap();
//! assert_eq!(loaded.brains, 1);
//! fresh.update();
//! assert_eq!(steps(&fresh, ann2), 4); // the fourth step, not a new first
//!
//! // Or back into the running app, a few frames on.
//! app.update();
//! app.update();
//! assert_eq!(steps(&app, ann), 5);
//! app.world_mut()
//!     .load_brains::<WalkerMemory, NoSenses, u32, _>(
//!         &mut serde_json::Deserializer::from_str(&json),
//!         |&name| (name == 7).then_some(ann),
//!     )
//!     .unwrap();
//! app.update();
//! assert_eq!(steps(&app, ann), 4);
//! # }
//! ```
//!
//! - **Order.** The shared state is loaded first, then each brain; the
//!   whole save is read and checked before anything changes, and a bad one
//!   gives a [`LoadError`] naming the key, the entity and what is wrong.
//! - **Time.** Times are those of the clock the brains tick with
//!   ([`BrainShared::now`]): the fixed clock for a plugin in `FixedUpdate`,
//!   the virtual one otherwise. A load moves every saved time by the
//!   difference between the two readings.
//! - **What the game saves itself.** The agents' components, and the
//!   deferred actions it carries out: the tickets it kept go through
//!   [`BrainShared::adopt_ticket`] after the load (the loaded crowd is a
//!   new one). Outcomes already reported but not yet read by the brains
//!   are in the save.
//! - **Into the running app.** The result is the one a fresh app gets:
//!   brains not in the save start afresh, what the brains held before is
//!   dropped without any cancellation message (the game reloads its own
//!   state), and requests queued in the save are sent as messages.
//! - **Building blocks.** [`Brain::snapshot`] and [`BrainShared::snapshot`]
//!   give one brain's or the shared state's snapshot.
//!
//! # How behaviors reach the entity's components
//!
//! A tree's behaviors take `&mut A` for one `'static` agent type `A`: the
//! tree is static data holding function pointers over `A`. A Bevy query
//! item borrows the world for one system run, so it cannot be that type;
//! and one struct holding the whole game state is what an ECS avoids.
//! [`BrainAgent`] joins the two: a tree's agent type names the components
//! its behaviors use (`type Data`, any query data) and says how the agent
//! is made from them for one tick.
//!
//! - The agent may be a component of its own ([`component_agent!`]): it is
//!   handed over in place, at no cost beyond the query.
//! - Or a small view: a struct of the values the behaviors read and write,
//!   copied in from the entity's components before its tick and written
//!   back after. Each tree names only the components it touches, the game
//!   keeps its state in as many components as it likes, and Bevy's
//!   scheduler sees exactly those accesses, so systems on other components
//!   run beside the brains. The price is the copy in and out, a few bytes
//!   per entity and tick, and change detection on what is written back
//!   (see Cost below).
//!
//! The alternatives cost more: a query inside each behavior (a lookup per
//! call, and no parallel tick, since each behavior would need the whole
//! world), or an agent type with a lifetime (every tree, behavior and
//! memory in bt-core generic over it, for every user, Bevy or not).
//!
//! # Cost
//!
//! Measured on the W1 creature crowd (10 000 entities; the crate's `w1`
//! benchmark, figures in the README), against bt-core's own `tick_all`
//! over slices on the same tree, world step included: the plugin with the
//! agent as one component executes 22 % more instructions per agent-tick,
//! a view over two components 31 % more. Most of that is Bevy's
//! per-entity fetch; [`BrainPlugin::dense`] skips it by ticking whole table
//! chunks (for agents that implement [`DenseAgent`], as every
//! [`component_agent!`] does) and fetches memories ahead as `tick_all`
//! does: 11 % more. In CPU time a Bevy app also pays for its frame (the
//! schedule, its executor and the hand-offs between threads), brains or
//! not: on the development machine about 250 µs a frame, 25 ns per
//! agent-tick at that size, more than the world step itself.
//!
//! # Debugging
//!
//! Put [`DebugBrain`] on an entity to trace it: each of its ticks is
//! recorded as a decision trace and followed by a state dump, kept in the
//! component and written to the `log` crate (`info`, target `bt_bevy`),
//! which Bevy's `LogPlugin` shows. The other entities are ticked without
//! any trace. bt-core's leveled debug output works as well, for one entity:
//! `bt_core::watch_agent(Some(bt_bevy::agent_id(entity)))`. To look at
//! decisions rather than read them, record the entity for the decision
//! viewer (next section).
//!
//! # Recording for the decision viewer
//!
//! With the `viewer` feature, [`BrainPlugin::record`] keeps a flight
//! recorder of the tree's brains (bt-viewer's, re-exported as
//! [`bt_viewer`]): the entities with a [`Recorded`] component
//! ([`RecordBrains::marked`]) or every brain ([`RecordBrains::all`]). It is
//! the [`BrainRecorder`] resource:
//!
//! ```
//! # #[cfg(feature = "viewer")] {
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_time::TimePlugin;
//! use bt_bevy::{Brain, BrainPlugin, BrainRecorder, RecordBrains, Recorded, agent_id};
//! use bt_core::{behavior, decider, group, tree};
//!
//! #[derive(bevy_ecs::component::Component, Default)]
//! struct Critter;
//! bt_bevy::component_agent!(Critter);
//! behavior! { WANDER: Critter }
//! decider! { JUST_WANDER: Critter => WANDER }
//! group! { ROOT: Critter, prioritized [JUST_WANDER] }
//! tree! { CRITTER: Critter = ROOT, memory: CritterMemory }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .add_plugins(BrainPlugin::new(&CRITTER).in_schedule(Update).record(RecordBrains::marked(16)));
//! let watched = app.world_mut().spawn((Critter, Brain::new(&CRITTER), Recorded)).id();
//! app.world_mut().spawn((Critter, Brain::new(&CRITTER))); // not recorded
//! for _ in 0..3 {
//!     app.update();
//! }
//! let recorder = app.world().resource::<BrainRecorder<CritterMemory>>();
//! let recording = recorder.export();
//! assert_eq!(recording.agents.len(), 1);
//! assert_eq!(recording.agents[0].agent, agent_id(watched));
//! assert_eq!(recording.agents[0].ticks.len(), 3);
//! // recorder.write_page(Path::new("target/brains")) writes the viewer page;
//! // app.world_mut().resource_mut::<BrainRecorder<CritterMemory>>().serve(0)
//! // follows the app live from 127.0.0.1.
//! # }
//! ```
//!
//! - **Lanes.** Each recorded entity gets a lane under its agent id, the
//!   entity's index ([`agent_id`]), so the viewer's search by agent finds
//!   it. A despawned entity's lane (or a replaced brain's) ends there; its
//!   ticks stay until they are overwritten, after which the lane may go to
//!   a newcomer. An entity whose index is reused gets a lane of its own
//!   under the same id; the page's search shows the newest. An entity that
//!   finds no free lane is not recorded (a warning says so once).
//! - **Frames.** Each run of the tick system is one frame: the recording's
//!   tick serial counts the runs since the plugin was added.
//! - **Cost.** The recorder holds the last ticks of every lane in memory
//!   allocated when the plugin is added, `lanes × ticks × (8 ×
//!   words_per_tick + 4)` bytes ([`RecordBrains::capacity`]); recording
//!   allocates nothing after that. Recorded brains tick one by one after
//!   the parallel tick, as [`DebugBrain`]'s do (with both, the text trace
//!   and the recording come from the same tick), so recording every brain
//!   of a large crowd gives up the parallel tick.
//! - **Export.** [`BrainRecorder::export`] gives the
//!   [`Recording`](bt_viewer::Recording), [`BrainRecorder::write_page`]
//!   writes it beside the self-contained viewer page.
//! - **Live.** [`BrainRecorder::serve`] starts bt-viewer's
//!   [`LiveServer`](bt_viewer::LiveServer) on 127.0.0.1: the page follows
//!   the app as it runs, sent the new ticks at most every 100 ms
//!   ([`RecordBrains::publish_every`]). Publishing formats JSON, on the
//!   app's thread, only while serving.
//!
//! # Features of the build
//!
//! Only `bevy_ecs` (with `multi_threaded`, for the parallel query),
//! `bevy_app` and `bevy_time` are used, with default features off: no
//! renderer, no reflection, no assets. A cold debug build of this crate
//! and its dependencies takes about 35 s on two cores.
//!
//! - `viewer` (off by default): recording for the decision viewer (see
//!   above). It adds bt-viewer, with serde, serde_json and tiny_http.
//! - `serde` (off by default): saving and loading brains (see above), with
//!   bt-core's `serde` feature.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// The recording and saving sections link to items of the `viewer` and
// `serde` features.
#![cfg_attr(
    not(all(feature = "viewer", feature = "serde")),
    allow(rustdoc::broken_intra_doc_links)
)]

mod adapter;
mod agent;
mod brain;
mod debug;
#[cfg(feature = "serde")]
mod persist;
mod plugin;
#[cfg(feature = "viewer")]
mod record;
mod tagged;

pub use adapter::TreeMemory;
pub use agent::{BrainAgent, DenseAgent};
pub use brain::{Brain, Decisions, NoSenses, SenseSource, Senses, agent_id};
/// The decision viewer's crate (feature `viewer`): its [`Recording`](bt_viewer::Recording),
/// [`Capacity`](bt_viewer::Capacity) and page writer.
#[cfg(feature = "viewer")]
pub use bt_viewer;
pub use debug::DebugBrain;
#[cfg(feature = "serde")]
pub use persist::{BrainSnapshot, BrainsSnapshot, LoadError, Loaded, SaveBrains, SaveSenses};
pub use plugin::{
    ActionMessage, ActionOutcome, BrainPlugin, BrainShared, BrainStats, BrainSystems,
};
#[cfg(feature = "viewer")]
pub use record::{BrainRecorder, RecordBrains, Recorded};
pub use tagged::Tagged;

#[doc(hidden)]
pub mod __private {
    pub use bevy_ecs::query::{ContiguousQueryData, QueryData};
}
