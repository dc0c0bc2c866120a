//! Runs [`bt_core`] decider trees on Bevy ECS entities.
//!
//! Each entity with a [`Brain`] is an agent: the plugin ticks every brain
//! once per run of its schedule, with the time from Bevy's clock, decision
//! flags from a [`Decisions`] component and stimuli from a [`Senses`]
//! component, in parallel over Bevy's query. A tree whose brains share
//! state (gates, cooldowns, roles, deferred actions) ticks on every thread
//! too, with the decisions of ticking its brains one after the other in
//! entity order, so that the same app makes the same decisions in every
//! run. Behaviors read and write the entity's own components;
//! deferred actions leave as messages and their outcomes come back as
//! messages.
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
//! // The game fills the decision flags before the brains tick (see
//! // "Filling `Decisions` and `Senses`" below for change detection).
//! fn hunger(mut q: Query<(&Critter, &mut Decisions)>) {
//!     for (c, mut d) in &mut q {
//!         d.set(if c.steps >= 2 && c.food < 3 { Facts::HUNGRY } else { Facts::empty() });
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .add_plugins(BrainPlugin::new(&CRITTER).in_schedule(Update))
//!     .add_systems(Update, hunger.before(BrainSystems::Tick));
//! let critter = app
//!     .world_mut()
//!     .spawn((Critter::default(), Decisions::default(), Brain::new(&CRITTER)))
//!     .id();
//! let mut running = Vec::new();
//! for _ in 0..6 {
//!     app.update();
//!     running.push(app.world().get::<Brain<CritterMemory>>(critter).unwrap().running_decider());
//! }
//! let (wander, eat) = (Some("JUST_WANDER"), Some("EAT_WHEN_HUNGRY"));
//! assert_eq!(running, [wander, wander, eat, eat, wander, wander]);
//! // The decider runs a behavior, named apart:
//! let brain = app.world().get::<Brain<CritterMemory>>(critter).unwrap();
//! assert_eq!(brain.running_behavior(), Some("WANDER"));
//! ```
//!
//! # The plugins an app needs
//!
//! The brains tick on the clock of `bevy_time`'s `TimePlugin`, and a tree
//! without shared state ticks on the thread pool of `bevy_app`'s
//! `TaskPoolPlugin`. With bt-bevy's own dependencies (`bevy_app`,
//! `bevy_ecs` and `bevy_time` 0.20), add the two yourself, as every
//! example here does: `app.add_plugins((TaskPoolPlugin::default(),
//! TimePlugin))`. A game that depends on the `bevy` crate itself (of the
//! same 0.20 release) gets both in `bevy`'s plugin groups `MinimalPlugins`
//! and `DefaultPlugins`; `bevy` 0.20.1 needs Rust 1.97.1, a newer Rust than
//! bt-bevy (1.95). Without `TimePlugin`, finishing the app panics and says
//! which plugins to add.
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
//! [`BrainStats`]; for a tree with tunables, the [`BrainTuning`] resource
//! (see [Tuning a running game](#tuning-a-running-game)).
//!
//! - **Order.** The brains of a tree with shared state (a gate, a global
//!   cooldown, a group role or a deferred action) make the decisions of
//!   ticking one after the other in the order of their entities' indexes,
//!   their agent ids, as bt-core's `tick_all` ticks a crowd in index order:
//!   who gets through a gate depends on who ticked before. They tick on
//!   every thread of Bevy's compute task pool all the same, as bt-core's
//!   `par_tick_all` does, when the pool has more than one thread and a run
//!   ticks at least [`BrainPlugin::parallel_from`] brains (512 unless told
//!   otherwise; fewer tick one after the other on the system's thread):
//!   each brain's tick runs in parallel up to its first step that could
//!   read or write the shared state, and the stopped ticks then go on one
//!   after the other in entity order, where the traced and recorded brains
//!   tick whole, in their place. The decisions, the reports, the shared
//!   state, the tickets and the action messages are those of the serial
//!   order. The threads help as much as the ticks stay away from the shared
//!   state: most ticks of a running crowd never reach it, but a gate that
//!   stays full turns its waiting brains away on every tick, one thread at
//!   a time. A callback that panics stops the run at its brain, as in the
//!   serial order, and the panic goes on to the caller: the brains before
//!   it finish their ticks; brains after it may have ticked, wholly or up
//!   to their first shared step, but none twice, and none of them took
//!   anything in the shared state. The brains of any other tree tick in
//!   parallel: each decides on its own entity alone. Either way the same
//!   app makes the same decisions in every run, and debugging or recording
//!   a brain changes none of them.
//!
//! - **Brains.** [`Brain::new(&TREE)`](Brain::new) is a component holding the
//!   entity's `AgentMemory`. When it lands on an entity it is bound to the
//!   crowd's shared state, and its random generator is seeded by how many
//!   brains of the crowd landed before it: the same game makes the same
//!   random choices in every run, whatever else the app holds (a recorder,
//!   another plugin's entities). The agent id of
//!   its ticks, traces and actions is the entity's index
//!   ([`agent_id`]).
//! - **Time.** `now` is [`Time::elapsed_secs_f64`](bevy_time::Time) and `dt`
//!   [`Time::delta_secs`](bevy_time::Time) of the schedule's clock: the
//!   fixed clock in `FixedUpdate`, the virtual one in `Update`. A brain
//!   that skipped runs (see [Tick rates and a budget](#tick-rates-and-a-budget))
//!   gets the time since its own last tick instead.
//! - **Flags.** [`Decisions`] holds the decision flags the game fills
//!   before [`BrainSystems::Tick`]; [`Senses`] (enabled with
//!   [`BrainPlugin::with_senses`]) holds stimuli, aged by each tick's `dt`.
//!   Either may be missing: no flags. How a game fills them is below,
//!   under [Filling `Decisions` and `Senses`](#filling-decisions-and-senses).
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
//! # The clock in a headless app or a test
//!
//! The brains tick on Bevy's clock, which `TimePlugin` moves once per
//! `app.update()`. By default (`TimeUpdateStrategy::Automatic`) it moves by
//! the real time since the last update: a test or a headless app that
//! calls `app.update()` in a loop sees microseconds pass, and a plugin in
//! `FixedUpdate` ticks only once a whole fixed step (1/64 s by default) of
//! real time has accumulated, which may be never in a short test. Set the
//! clock by hand instead, with the `TimeUpdateStrategy` resource:
//!
//! - `TimeUpdateStrategy::FixedTimesteps(n)`: each update moves the clock
//!   by `n` fixed steps, so a plugin in `FixedUpdate` ticks exactly `n`
//!   times per update.
//! - `TimeUpdateStrategy::ManualDuration(d)`: each update moves the clock
//!   by `d`; a plugin in `Update` ticks once per update with `dt = d`, one
//!   in `FixedUpdate` as many times as whole fixed steps have accumulated
//!   (set the step with `Time::<Fixed>::from_hz`).
//!
//! Either way the first update only starts the clock: it ticks a plugin
//! in `Update` with `dt = 0` and one in `FixedUpdate` not at all.
//!
//! ```
//! use std::time::Duration;
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
//! use bt_bevy::{Brain, BrainPlugin, BrainStats};
//! use bt_core::{behavior, decider, tree};
//!
//! #[derive(Component, Default)]
//! struct Critter { clock: f64 }
//! bt_bevy::component_agent!(Critter);
//! behavior! { WANDER: Critter, tick: |c, cx| { c.clock = cx.now; true } }
//! decider! { JUST_WANDER: Critter => WANDER }
//! tree! { CRITTER: Critter = JUST_WANDER, memory: CritterMemory }
//!
//! // In `FixedUpdate` (the plugin's default): one fixed step per update.
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
//!     .add_plugins(BrainPlugin::new(&CRITTER));
//! let e = app.world_mut().spawn((Critter::default(), Brain::new(&CRITTER))).id();
//! app.update(); // starts the clock
//! for _ in 0..10 {
//!     app.update();
//! }
//! assert_eq!(app.world().resource::<BrainStats<CritterMemory>>().runs, 10);
//! assert_eq!(app.world().get::<Critter>(e).unwrap().clock, 10.0 / 64.0);
//!
//! // In `Update`: a frame of 1/30 s per update.
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs(1) / 30))
//!     .add_plugins(BrainPlugin::new(&CRITTER).in_schedule(Update));
//! let e = app.world_mut().spawn((Critter::default(), Brain::new(&CRITTER))).id();
//! for _ in 0..3 {
//!     app.update();
//! }
//! // Ticks at 0, 1/30 and 2/30 s.
//! assert_eq!(app.world().resource::<BrainStats<CritterMemory>>().runs, 3);
//! let now = app.world().get::<Critter>(e).unwrap().clock;
//! assert!((now - 2.0 / 30.0).abs() < 1e-9, "{now}");
//! ```
//!
//! # Filling `Decisions` and `Senses`
//!
//! [`Decisions`] holds lasting facts: a brain reads the same word at each
//! of its ticks until the game changes it. Fill it in a system ordered
//! `.before(BrainSystems::Tick)`, from the game's components the facts
//! come from, for the entities where one of them changed (`Changed<T>`),
//! and write it with
//! [`set_if_neq`](bevy_ecs::change_detection::DetectChangesMut::set_if_neq),
//! so that `Decisions` is marked changed only when a flag did change.
//! Filter on the game's own components, not on the agent component of
//! [`component_agent!`]: the brain's tick hands that one to the behaviors
//! mutably, which marks it changed at every tick.
//!
//! [`Senses`] holds stimuli, events that stay live for a while: any
//! system sets one on the entity it happens to, with a payload (here the
//! biter) and a time-out, [`BrainPlugin::with_senses`] tells the plugin
//! the component, and each tick ages the entity's stimuli by its `dt` and
//! drops the expired ones, so the game does not age them itself. A
//! stimulus set before a tick is live at that tick and at those less than
//! its time-out after it (bt-core's `Stimuli`). For a brain that may not
//! tick in the next run (a slow [`TickRate`], or a budget), set it with
//! `set_since` and the seconds since the brain's last tick (the clock now
//! less [`Brain::last_ticked_at`]): its time-out then runs from when it
//! happened, and a brain whose tick comes after it is over does not see it.
//! A brain that has not ticked yet (`last_ticked_at` is `None`) has no
//! last tick to count from, and its first tick's `dt` is the frame's step:
//! a stimulus set before it counts from that first tick.
//!
//! ```
//! use std::time::Duration;
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_time::{TimePlugin, TimeUpdateStrategy};
//! use bt_bevy::{Brain, BrainPlugin, BrainSystems, Decisions, Senses};
//! use bt_core::{behavior, decider, group, tree};
//!
//! bitflags::bitflags! {
//!     /// Decision flags: lasting facts.
//!     #[derive(Clone, Copy)]
//!     struct Facts: u64 { const HURT = 1; }
//!     /// Stimuli: events.
//!     #[derive(Clone, Copy)]
//!     struct Sense: u64 { const BITTEN = 1; }
//! }
//! type SheepSenses = Senses<Sense, 4>; // up to 4 live stimuli, `u64` payloads
//!
//! #[derive(Component)]
//! struct Sheep;
//! bt_bevy::component_agent!(Sheep);
//! #[derive(Component)]
//! struct Health(u32);
//!
//! // Each behavior runs until it ends: fleeing while bitten, limping while hurt.
//! behavior! { FLEE: Sheep, tick: |_s, cx| cx.stimuli & Sense::BITTEN.bits() != 0 }
//! behavior! { LIMP: Sheep, tick: |_s, cx| cx.decision & Facts::HURT.bits() != 0 }
//! behavior! { GRAZE: Sheep }
//! decider! { FLEEING: Sheep => FLEE, stimuli_any: Sense::BITTEN }
//! decider! { LIMPING: Sheep => LIMP, needs_all: Facts::HURT }
//! decider! { GRAZING: Sheep => GRAZE }
//! group! { ROOT: Sheep, prioritized [FLEEING, LIMPING, GRAZING] }
//! tree! { SHEEP: Sheep = ROOT, memory: SheepMemory }
//!
//! /// A wolf bites a sheep: an event, written as a message.
//! #[derive(Message)]
//! struct Bite { sheep: Entity, wolf: Entity }
//!
//! /// The bitten sheep loses health and is `BITTEN` for 0.09 s (three
//! /// frames at 30 per second), with the wolf as the stimulus's payload.
//! fn bites(mut bites: MessageReader<Bite>, mut sheep: Query<(&mut Health, &mut SheepSenses)>) {
//!     for bite in bites.read() {
//!         let Ok((mut health, mut senses)) = sheep.get_mut(bite.sheep) else { continue };
//!         health.0 = health.0.saturating_sub(60);
//!         if let Err(e) = senses.set(Sense::BITTEN, bite.wolf.to_bits(), Some(0.09)) {
//!             log::warn!("sheep {}: {e}", bite.sheep);
//!         }
//!     }
//! }
//!
//! /// The decision flags, for the sheep whose health changed.
//! fn hurt(mut sheep: Query<(&Health, &mut Decisions), Changed<Health>>) {
//!     for (health, mut decisions) in &mut sheep {
//!         let facts = if health.0 < 50 { Facts::HURT } else { Facts::empty() };
//!         decisions.set_if_neq(Decisions::from_flags(facts));
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs(1) / 30))
//!     .add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update).with_senses::<SheepSenses>())
//!     .add_message::<Bite>()
//!     .add_systems(Update, (bites, hurt).chain().before(BrainSystems::Tick));
//! let wolf = app.world_mut().spawn_empty().id();
//! let sheep = app
//!     .world_mut()
//!     .spawn((Sheep, Health(100), Decisions::default(), SheepSenses::default(), Brain::new(&SHEEP)))
//!     .id();
//! let mut running = Vec::new();
//! for frame in 0..8 {
//!     match frame {
//!         2 => _ = app.world_mut().write_message(Bite { sheep, wolf }),
//!         7 => app.world_mut().get_mut::<Health>(sheep).unwrap().0 = 100, // healed
//!         _ => {}
//!     }
//!     app.update();
//!     running.push(app.world().get::<Brain<SheepMemory>>(sheep).unwrap().running_decider());
//! }
//! let (graze, flee, limp) = (Some("GRAZING"), Some("FLEEING"), Some("LIMPING"));
//! assert_eq!(running, [graze, graze, flee, flee, flee, limp, limp, graze]);
//! assert_eq!(app.world().get::<Decisions>(sheep), Some(&Decisions(0)));
//! ```
//!
//! # Two trees in one app
//!
//! Add one plugin per tree. Each plugin's resources, messages and systems
//! are Bevy types over the tree's memory type `M` ([`BrainShared<M>`],
//! [`ActionMessage<M>`], [`BrainStats<M>`], [`Brain<M>`]), so trees with
//! different memory types never meet. Two trees over the same agent type
//! with the same shape have the *same* memory type, and run side by side
//! all the same: their brains are both `Brain<M>`, each bound to its own
//! tree's [`Crowd`] (its own gates, cooldowns, roles and queue) in
//! [`BrainShared<M>`], ticked by its own plugin's system, its launches
//! written as `ActionMessage<M>` naming its entity; [`BrainStats<M>`] sums
//! them. Name the tree where it matters:
//! [`BrainShared::crowd(&TREE)`](BrainShared::crowd) for its shared state,
//! `save_brains_of(&TREE, ..)` and `load_brains_of(&TREE, ..)` to save and
//! load its brains (feature `serde`). One tree per memory type can be
//! recorded for the viewer.
//!
//! ```
//! # use bevy_app::{App, TaskPoolPlugin, Update};
//! # use bevy_ecs::prelude::*;
//! # use bevy_time::TimePlugin;
//! use bt_bevy::{Brain, BrainPlugin, BrainShared};
//! # use bt_core::{behavior, decider, tree};
//! # #[derive(Component, Default)] struct Animal;
//! # bt_bevy::component_agent!(Animal);
//! # behavior! { GRAZE: Animal }
//! # behavior! { HUNT: Animal }
//! # decider! { GRAZING: Animal => GRAZE, gate: 3 }
//! # decider! { HUNTING: Animal => HUNT, gate: 1 }
//! tree! { SHEEP: Animal = GRAZING, memory: AnimalMemory }
//! tree! { WOLF: Animal = HUNTING, memory: WolfMemory }
//! // The same shape: the same memory type.
//! assert_eq!(std::any::TypeId::of::<AnimalMemory>(), std::any::TypeId::of::<WolfMemory>());
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
//!     .add_plugins(BrainPlugin::new(&WOLF).in_schedule(Update));
//! let sheep = app.world_mut().spawn((Animal, Brain::new(&SHEEP))).id();
//! let wolf = app.world_mut().spawn((Animal, Brain::new(&WOLF))).id();
//! app.update();
//! let running = |e| app.world().get::<Brain<AnimalMemory>>(e).unwrap().running_decider();
//! assert_eq!((running(sheep), running(wolf)), (Some("GRAZING"), Some("HUNTING")));
//! let shared = app.world().resource::<BrainShared<AnimalMemory>>();
//! assert_eq!(shared.crowd(&WOLF).unwrap().state().gates_held(), 1);
//! ```
//!
//! A tag type gives a tree types of its own instead, for a game that
//! wants to tell its brains, messages and stats apart by type:
//! [`BrainPlugin::tagged`] and [`Brain::tagged`] make it run as
//! [`Tagged<M, Tag>`](Tagged), with its own resources, messages and
//! systems. A brain made without its plugin's tag (or with another, or for
//! a tree no plugin runs) is refused when it lands on its entity
//! ([`BrainRefused`], through Bevy's error handler, which panics by
//! default): it would never be bound to its tree's crowd. Adding the same
//! tree twice under the same tag panics naming the tree; the same tree
//! under two tags makes two crowds of it.
//!
#![cfg_attr(feature = "serde", doc = include_str!("../docs/saving.md"))]
#![cfg_attr(
    not(feature = "serde"),
    doc = "# Saving and loading\n\n\
    With the feature `serde`, `SaveBrains` (implemented for `World`) saves every brain of a \
    tree with its crowd's shared state through any serde format, and loads such a save into \
    a fresh app or the running one: the brains go on as if they had never stopped. This \
    documentation was built without the feature; build it with `--features serde` to read \
    this section whole."
)]
//!
#![doc = include_str!("../docs/tuning.md")]
#![cfg_attr(feature = "tune-file", doc = include_str!("../docs/tuning_file.md"))]
#![cfg_attr(
    not(feature = "tune-file"),
    doc = "\n## A tuning file\n\n\
    With the feature `tune-file`, `BrainPlugin::tuning_file` watches a TOML file of the \
    tree's tunables: each save takes effect at the crowd's next run, and a bad file changes \
    nothing and is reported as a `TuningFileRead` message and a log line. This documentation \
    was built without the feature; build it with `--features tune-file` to read this \
    section whole."
)]
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
//! # Tick rates and a budget
//!
//! Not every brain needs to decide every frame. Give an entity a
//! [`TickRate`] component — every run, every `k`-th run (`Rate::Every(k)`),
//! or only when woken (`TickRate::ON_WAKE`) — and change it at any time,
//! by distance to the camera say; an entity without one ticks every run.
//! Brains of one period are spread over its runs by agent id, so each run
//! ticks about a `k`-th of them. A rate change makes a brain that is not
//! due, and that has gone both its old and its new period without a tick,
//! due at once (in the run that sees the change); otherwise the new rate
//! takes effect at the first run of its own that comes. `OnWake` has no
//! period: a change from or to it never makes a brain due by this rule.
//! A brain that has not ticked yet counts as ticked before the first run.
//! So a brain whose rate
//! keeps changing among periods up to `K` still ticks within `2K - 2` runs
//! of its last tick (budget aside); one changed every run, within `K`
//! runs. In steady use it makes due only brains whose turn it is at the
//! old rate or the new: a crowd switched at once from `Every(16)` to
//! `Every(4)` ticks, in the run of the switch, no more brains than are
//! due by either rate. A brain ticks out of its turn in the next run
//! when it is woken: by [`Brain::wake`], by a reported deferred-action
//! outcome ([`ActionOutcome`] or [`Brain::complete`]), or when a game
//! system changed its [`Senses`] since the last run (any mutable access
//! counts, as Bevy's change detection sees it; their arrival with the
//! entity does not). Its behaviors get the time since its own last tick as
//! `dt` (its first tick gets the frame's step), and timers and cooldowns
//! run on the clock while it sleeps, so a slow brain's cooldown lasts as
//! long in seconds.
//!
//! [`BrainPlugin::budget`] caps the brains one run ticks (change it with
//! [`Crowd::set_budget`]): the due brains beyond it wait, the longest
//! waiting first, then by agent id, and with `N` brains none waits more
//! than `(N - 1) / budget` runs past its turn ([`Crowd::wait_bound`]).
//! [`BrainStats`] reports each run's due, ticked and waiting brains and
//! the longest wait. The brains chosen are those of bt-core's
//! `tick_scheduled` with the same rates and budget over a crowd indexed by
//! entity index, and so are their decisions, but for two `dt`s. A brain's
//! first tick gets the frame's step, where a scheduled crowd gives an
//! agent's first tick the time since the schedule was made: a brain whose
//! first turn comes after its first run gets the shorter `dt`. And a brain
//! that ticked in the run before gets [`Time::delta_secs`](bevy_time::Time),
//! exact to the clock's nanosecond, where `tick_scheduled` subtracts two
//! clock readings in `f64` seconds, which can round otherwise in the last
//! bits of the `f32` (rarely at a game's frame steps, often at steps of a
//! few nanoseconds). A
//! behavior whose decision turns on the first tick's `dt`, or on those
//! bits, can decide otherwise. A save of the brains (feature `serde`)
//! carries each one's place in this schedule, its rate and the run count:
//! a loaded brain keeps for the schedule the agent id it had when saved
//! (its turns and its place under the budget), and the loaded app ticks
//! the brains and `dt`s the saved one would have (see *Saving and
//! loading*). A run visits every brain of the query (a
//! skipped brain costs a few comparisons); with a budget it first reads
//! every brain's turn, one by one, to choose the cut.
//!
//! ```
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_time::TimePlugin;
//! use bt_bevy::{Brain, BrainPlugin, BrainStats, Rate, TickRate};
//! use bt_core::{behavior, decider, tree};
//!
//! #[derive(Component, Default)]
//! struct Villager { thoughts: u32 }
//! bt_bevy::component_agent!(Villager);
//! behavior! { THINK: Villager, tick: |v, _cx| { v.thoughts += 1; true } }
//! decider! { JUST_THINK: Villager => THINK }
//! tree! { VILLAGE: Villager = JUST_THINK, memory: VillagerMemory }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
//!     .add_plugins(BrainPlugin::new(&VILLAGE).in_schedule(Update).budget(40));
//! let far = TickRate::new(Rate::Every(10))?;
//! for i in 0..100 {
//!     let brain = (Villager::default(), Brain::new(&VILLAGE));
//!     if i < 30 {
//!         app.world_mut().spawn(brain); // near: every run
//!     } else {
//!         app.world_mut().spawn((brain, far));
//!     }
//! }
//! for _ in 0..20 {
//!     app.update();
//!     let stats = app.world().resource::<BrainStats<VillagerMemory>>();
//!     assert!(stats.ticked <= 40);
//! }
//! # Ok::<(), bt_core::RateError>(())
//! ```
//!
//! # Cost
//!
//! Against bt-core's own `tick_all` over slices on the same tree, the
//! plugin adds per agent-tick Bevy's per-entity fetch, the input built
//! from the entity's components (its own `dt`, checked in each tick where
//! `tick_all`'s is one value), the report kept in the [`Brain`] and
//! tallied (both written where the tick ends, a tick that changed nothing
//! keeping the last report's leaf), and change detection; a view over
//! several components adds its copy in and out. [`BrainPlugin::dense`]
//! skips the per-entity fetch by ticking whole table chunks (for agents
//! that implement [`DenseAgent`], as every [`component_agent!`] does), and
//! fetches the memories of the next few brains while one ticks. A brain
//! without a [`TickRate`], in a run that no budget cuts, ticks without the
//! test of whether it is due (in a table chunk whose entities all have
//! [`Decisions`], with the chunked tick); a plugin without senses leaves
//! them out of its query. A plugin made with [`BrainPlugin::of`] from the
//! tree's marker type (`tree!`'s `marker:` key) has the tree as a
//! constant in its tick systems, as `tick_all` given the tree's `static`
//! does, where one made with [`BrainPlugin::new`] reads the tree from each
//! brain's memory: the same ticks, for fewer instructions. A Bevy app also
//! pays for its frame (the schedule, its executor and the hand-offs
//! between threads), brains or not. A tree with shared state ticked on
//! several threads pays, for each tick that stops at its first shared
//! step, a second look-up of its entity and a second visit of its memory
//! (out of the cache again in a large crowd), on one thread; the
//! `w1_shared` benchmark measures it against the serial order.
//!
//! The measured figures, instructions and CPU time per agent-tick on the
//! W1 creature crowd (10 000 entities) for each of these ways, are in the
//! repository's `bt-bench/README.md`, section "The Bevy plugin (bt-bevy)",
//! with the commands that gave them (the crate's `w1` benchmark, `cargo
//! bench -p bt-bevy --bench w1`, and for a tree with shared state its
//! `w1_shared` benchmark) and their date.
//!
//! # Debugging
//!
//! Put [`DebugBrain`] on an entity to trace it: each of its ticks is
//! recorded as a decision trace and followed by a state dump, kept in the
//! component and written to the `log` crate (`info`, target `bt_bevy`),
//! which Bevy's `LogPlugin` shows. The other entities are ticked without
//! any trace. Debugging changes no decision, of the traced brain or any
//! other: in a tree with shared state the traced brain ticks in its place
//! in entity order; in any other it ticks after the parallel tick of the
//! others, which changes nothing, since no brain's tick depends on
//! another's there. bt-core's leveled debug output works as well, for one
//! entity: `bt_core::watch_agent(Some(bt_bevy::agent_id(entity)))`. To look at
//! decisions rather than read them, record the entity for the decision
//! viewer (next section).
//!
#![cfg_attr(feature = "viewer", doc = include_str!("../docs/recording.md"))]
#![cfg_attr(
    not(feature = "viewer"),
    doc = "# Recording for the decision viewer\n\n\
    With the feature `viewer`, `BrainPlugin::record` keeps a flight recorder of the tree's \
    brains, the `BrainRecorder` resource: it exports the recording for bt-viewer's page and \
    serves it live on loopback. This documentation was built without the feature; build it \
    with `--features viewer` to read this section whole."
)]
//!
//! # Features of the build
//!
//! Only `bevy_ecs` (with `multi_threaded`, for the parallel query),
//! `bevy_app` and `bevy_time` are used, with default features off: no
//! renderer, no reflection, no assets (the time a cold build takes is in
//! the repository's `bt-bench/README.md`, section "The Bevy plugin
//! (bt-bevy)").
//!
//! - `viewer` (off by default): recording for the decision viewer (see
//!   above); items that need it say "feature `viewer`". It adds
//!   bt-viewer, with serde, serde_json, and hyper on tokio.
//! - `serde` (off by default): saving and loading brains (see above), with
//!   bt-core's `serde` feature; items that need it say "feature `serde`".
//! - `tune-file` (off by default): a tuning file the plugin watches (see
//!   above), with bt-core's `tune-file` feature; items that need it say
//!   "feature `tune-file`". It adds toml and notify.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod adapter;
mod agent;
mod brain;
mod debug;
#[cfg(feature = "serde")]
mod persist;
mod plugin;
mod rate;
#[cfg(feature = "viewer")]
mod record;
mod refused;
mod tagged;
mod tuning;

pub use adapter::TreeMemory;
pub use agent::{BrainAgent, DenseAgent};
pub use brain::{Brain, Decisions, NoSenses, SenseSource, Senses, agent_id};
/// The decision viewer's crate (feature `viewer`): its [`Recording`](bt_viewer::Recording),
/// [`Capacity`](bt_viewer::Capacity) and page writer.
#[cfg(feature = "viewer")]
#[cfg_attr(docsrs, doc(cfg(feature = "viewer")))]
pub use bt_viewer;
pub use debug::DebugBrain;
#[cfg(feature = "serde")]
pub use persist::{BrainSnapshot, BrainsSnapshot, LoadError, Loaded, SaveBrains, SaveSenses};
pub use plugin::{
    ActionMessage, ActionOutcome, BrainPlugin, BrainShared, BrainStats, BrainSystems, Crowd,
    MarkedTree, MemoryTree, TreeSource,
};
pub use rate::{Rate, TickRate};
#[cfg(feature = "viewer")]
pub use record::{BrainRecorder, EntityData, RecordBrains, Recorded};
pub use refused::BrainRefused;
pub use tagged::Tagged;
#[cfg(feature = "tune-file")]
pub use tuning::TuningFileRead;
pub use tuning::{BrainTuning, CrowdTuning};

/// The example of bt-core's guide, chapter 12, part "In Bevy": run here,
/// where bt-bevy is.
#[cfg(doctest)]
#[doc = include_str!("../../bt-core/docs/guide/tuning_bevy.md")]
mod guide_tuning_in_bevy {}

#[doc(hidden)]
pub mod __private {
    pub use bevy_ecs::change_detection::ContiguousMut;
    pub use bevy_ecs::query::{ContiguousQueryData, QueryData};
}
