//! Spore-style hierarchical state machines of *deciders*, declared as static
//! tables and run by a small data-oriented interpreter.
//!
//! A tree is declared once, in Rust source, with four macros: a
//! [`behavior!`] is the code that acts (activate / tick / deactivate, with a
//! typed memory block), a [`decider!`] decides whether its behavior should
//! run, a [`group!`] picks among child deciders by a policy, and [`tree!`]
//! compiles a root decider into a flat [`Tree`] **at compile time**, with
//! const functions that also validate the declaration. For the common
//! leaf, [`leaf!`] declares a behavior and its decider in one go; a
//! [`reference!`] is a child that, when picked, jumps the agent to a
//! decider elsewhere in the tree. Each agent
//! owns a fixed-size [`AgentMemory`] made by the tree; [`tick`] runs one
//! agent for one frame without allocating.
//!
//! ```
//! use bt_core::{behavior, decider, group, tree, tick, TickInput};
//!
//! #[derive(Default)]
//! struct Critter {
//!     hunger: f32,
//!     log: Vec<&'static str>,
//! }
//!
//! behavior! { EAT: Critter,
//!     tick: |c, cx| {
//!         c.hunger -= 4.0 * cx.dt;
//!         c.log.push("eat");
//!         c.hunger > 0.0 // false ends the behavior
//!     },
//! }
//! behavior! { WANDER: Critter,
//!     tick: |c, cx| {
//!         c.hunger += 2.0 * cx.dt;
//!         c.log.push("wander");
//!         true
//!     },
//! }
//! decider! { EAT_WHEN_HUNGRY: Critter => EAT, when: |c, _| c.hunger > 3.0 }
//! decider! { JUST_WANDER: Critter => WANDER }
//! group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
//! tree! { CRITTER: Critter = ROOT }
//!
//! let mut critter = Critter::default();
//! let mut memory = CRITTER.new_memory(1); // 1: the seed of its random generator
//! for frame in 0..4 {
//!     let input = TickInput::new(f64::from(frame), 1.0);
//!     let report = tick(&CRITTER, &mut critter, &mut memory, &input).unwrap();
//!     assert!(report.leaf.is_some());
//! }
//! // Wandering makes it hungry; once hungry, eating preempts wandering. When
//! // eating ends, the same tick falls back to wandering.
//! assert_eq!(critter.log, ["wander", "wander", "eat", "wander", "wander"]);
//! ```
//!
//! New to the library? [The guide](guide) starts from this example and
//! builds up, a chapter at a time.
//!
//! # Features
//!
//! - Declarations are plain `static` data; the compiled [`Tree`] is `Sync`
//!   and shared by every agent. Mistakes in a declaration (a cycle, an empty
//!   group, a memory type larger than its block, …) are compile errors that
//!   name the decider at fault.
//! - Policies: prioritized, sequential, random, shuffle and scored groups
//!   ([`Policy`]), group behaviors, and delegating groups
//!   ([`DeciderFlags::DELEGATE_DECIDE`]).
//! - Preconditions checked before any `decide` is called: decision-flag and
//!   stimuli-flag mask tests taking the user's own `bitflags` types, and
//!   timers ([`Preconditions`]); [`Stimuli`] keeps an agent's short-lived
//!   stimuli with payloads and time-outs.
//! - Typed memory blocks per level, built at activation and dropped exactly
//!   once, and DBlocks: a value a `decide` hands to its behavior's `activate`
//!   ([`Decide::set`]).
//! - Decision traces: every step of a tick as an [`Event`], rendered one line
//!   per event by [`TraceRecorder`] ([`tick_traced`]); [`NoTrace`] compiles
//!   them out.
//! - Debug output levels 0–5 through the `log` crate under the `bt` target
//!   ([`set_debug_level`], [`watch_agent`] to follow one agent in a crowd);
//!   off, it costs one branch per tick and formats nothing.
//! - Crowds: [`tick_all`] ticks slices of agents against one tree without
//!   allocating, each agent under its index as id; with the `rayon`
//!   feature, `par_tick_all` gives the same results on every core, for
//!   trees with gates, cooldowns and roles too.
//! - Tick rates: a [`Schedule`] ticks each agent every frame, every k-th
//!   frame or when woken, within a budget of agent-ticks per frame, with
//!   the time since its own last tick as `dt` ([`tick_scheduled`]); a
//!   frame costs the agents due in it, not the crowd.
//! - Synchronized trees: gates ("at most N agents in here"), global
//!   cooldowns and group roles ("exactly K agents start together"), with
//!   their counters in a [`TreeShared`] of atomics, so they hold under
//!   parallel ticking too ([`SyncChecks`]).
//! - Child-tree slots: a `slot` group runs the child tree an agent's
//!   surroundings select ([`Policy::Slot`]).
//! - Deferred actions: a behavior's `launch` queues a request for a game
//!   system instead of acting; the outcome comes back to the behavior, and
//!   preemption cancels it ([`behavior!`], [`TreeShared::drain_actions`]).
//! - Save and restore, with the `serde` feature: an agent's memory, its
//!   stimuli and a crowd's shared state go through any serde format and
//!   come back into the same tree, continuing exactly where they stopped
//!   (the `persist` module).
//! - `no_std` without the default `std` feature, with `alloc`: an
//!   [`AgentMemory`] is one fixed-size value and
//!   holds no heap memory of its own, but a [`TreeShared`] allocates its
//!   counters and request queue once when it is made and is shared through
//!   an `Arc`, and [`TraceRecorder`] writes into a `String`. A tick never
//!   allocates.
//! - [`bitflags`] is re-exported, so the flag types that preconditions,
//!   [`TickInput`] and [`Stimuli`] take can be declared without a
//!   dependency of their own (`bt_core::bitflags::bitflags! { … }`).
//! - Tunables: a tree's named, typed values ([`tunables!`]), read by its
//!   closures and changed while the game runs; with the `tune-file`
//!   feature, read from a TOML file the game watches (`TuningFile`).
//! - Cargo features: `std` (on by default: crowd ids drawn from the
//!   operating system's random numbers; off, the crate is `no_std`),
//!   `rayon` (`par_tick_all`, needs `std`), `serde` (save and restore) and
//!   `tune-file` (tunables read from a watched TOML file, needs `std`),
//!   all three off by default.
//!
//! # Targets
//!
//! The crate needs Rust 1.88 or later, and is built for these targets
//! before each change goes in:
//!
//! - `x86_64-unknown-linux-gnu`, with every feature, and tested there;
//! - `wasm32-unknown-unknown`, for web builds, with every feature; with no
//!   threads there, `par_tick_all` runs on the calling thread, and with no
//!   files, `TuningFile::watch` is an error (`TuneFileError::Watch`);
//! - `thumbv7em-none-eabihf` (32-bit Arm microcontrollers, no `std`), with
//!   `serde` or no feature (`rayon` needs `std`). That target has no 64-bit
//!   atomics: the crowd's 64-bit counters use `portable-atomic`'s
//!   lock-based fallback there, which needs nothing from you; only `alloc`
//!   needs a global allocator. Its lock spins, so a program that ticks one
//!   crowd both in an interrupt handler and in the code it interrupts
//!   should enable `portable-atomic`'s `unsafe-assume-single-core` or
//!   `critical-section` feature in its own `Cargo.toml`.
//!
//! # Where to go next
//!
//! - **[The guide](guide)**, in short chapters whose examples all run as
//!   tests:
//!   1. [A first tree](guide::ch01_first_tree): behaviors, deciders, a
//!      prioritized group, and ticking an agent.
//!   2. [Preconditions, flags, stimuli and timers](guide::ch02_preconditions):
//!      deciding without calling your code.
//!   3. [Memory blocks and DBlocks](guide::ch03_memory_blocks): state per
//!      behavior, and what a `decide` hands to the behavior it starts.
//!   4. [The group policies](guide::ch04_policies): sequential, random,
//!      shuffle, scored, slot and delegating groups.
//!   5. [Debugging](guide::ch05_debugging): the state dump, traces, log
//!      levels, DOT, and the browser viewer.
//!   6. [Crowds and shared state](guide::ch06_crowds): `tick_all`, gates,
//!      cooldowns and group roles.
//!   7. [Deferred actions](guide::ch07_deferred_actions): asking a game
//!      system to act, and hearing back.
//!   8. [Save and load](guide::ch08_save_and_load): snapshots of agents and
//!      crowds (feature `serde`).
//!   9. [Performance](guide::ch09_performance): what a tick costs and how to
//!      keep it cheap.
//!   10. [In a Bevy app](guide::ch10_bevy): what the `bt-bevy` crate maps
//!       to what.
//!   11. [Tick rates and a frame budget](guide::ch11_tick_rates): agents
//!       that tick every k-th frame or when woken, a budget of agent-ticks
//!       per frame, and how long an agent can wait.
//!   12. [Tuning a running game](guide::ch12_tuning): a tree's numbers and
//!       choices as tunables, read by its closures and changed while the
//!       crowd runs, from code or from a TOML file the game watches.
//! - **The rules**: [`semantics`] specifies a tick step by step;
//!   [`bad_input`] lists every input the library refuses or treats
//!   specially, and what it gets.
//! - **Examples**: the repository's `examples/` directory has runnable
//!   programs (`cargo run --example guard_nest` is the main demo), each
//!   listed with one line in `examples/README.md`.
//! - **Other crates**: `bt-viewer` records agents and shows their decisions
//!   in a browser page; `bt-bevy` runs trees on Bevy entities. Each has its
//!   own documentation.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod compile;
mod crowd;
mod debug;
mod decl;
mod interp;
mod memory;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod persist;
mod raw;
mod tree;
#[cfg(feature = "tune-file")]
#[cfg_attr(docsrs, doc(cfg(feature = "tune-file")))]
pub mod tune_file;

#[doc = include_str!("../docs/semantics.md")]
pub mod semantics {}

#[doc = include_str!("../docs/bad_input.md")]
pub mod bad_input {}

/// The guide: short chapters, from a first tree to save and load and
/// performance, each with examples that run as tests.
///
#[doc = include_str!("../docs/guide/index.md")]
pub mod guide {
    #[doc = include_str!("../docs/guide/ch01_first_tree.md")]
    pub mod ch01_first_tree {}
    #[doc = include_str!("../docs/guide/ch02_preconditions.md")]
    pub mod ch02_preconditions {}
    #[doc = include_str!("../docs/guide/ch03_memory_blocks.md")]
    pub mod ch03_memory_blocks {}
    #[doc = include_str!("../docs/guide/ch04_policies.md")]
    pub mod ch04_policies {}
    #[doc = include_str!("../docs/guide/ch05_debugging.md")]
    pub mod ch05_debugging {}
    #[doc = include_str!("../docs/guide/ch06_crowds.md")]
    pub mod ch06_crowds {}
    #[doc = include_str!("../docs/guide/ch07_deferred_actions.md")]
    pub mod ch07_deferred_actions {}
    #[cfg_attr(
        feature = "serde",
        doc = include_str!("../docs/guide/ch08_save_and_load.md")
    )]
    #[cfg_attr(
        not(feature = "serde"),
        doc = "Chapter 8: save and load (feature `serde`).\n\n\
               This chapter is about the `serde` feature: build the docs with \
               `--features serde` to read it."
    )]
    pub mod ch08_save_and_load {}
    #[doc = include_str!("../docs/guide/ch09_performance.md")]
    pub mod ch09_performance {}
    #[doc = include_str!("../docs/guide/ch10_bevy.md")]
    pub mod ch10_bevy {}
    #[doc = include_str!("../docs/guide/ch11_tick_rates.md")]
    pub mod ch11_tick_rates {}
    #[doc = include_str!("../docs/guide/ch12_tuning.md")]
    #[cfg_attr(
        feature = "tune-file",
        doc = include_str!("../docs/guide/tuning_file.md")
    )]
    #[cfg_attr(
        not(feature = "tune-file"),
        doc = "\n# A tuning file\n\n\
               With the `tune-file` feature, a game reads its tunables from a \
               TOML file it watches, so that a designer's save takes effect at \
               the crowd's next tick: build the docs with `--features tune-file` \
               to read this section."
    )]
    // Its example runs as a doctest of bt-bevy, which it needs.
    #[cfg_attr(not(doctest), doc = include_str!("../docs/guide/tuning_bevy.md"))]
    pub mod ch12_tuning {}
}

#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub use crowd::par_tick_all;
pub use crowd::{
    CrowdIds, CrowdReport, FrameReport, Rate, RateError, Schedule, check_agent_id, tick_all,
    tick_range, tick_scheduled, tick_traced_into,
};
#[doc(hidden)]
pub use crowd::{ScheduledTick, tick_range_in_frame, tick_scheduled_by};
pub use debug::trace::TraceRecorder;
pub use debug::{Dump, DumpView, Scenario, debug_print_state, record_trace, to_dot};
pub use decl::{
    Action, ActionState, Behavior, BehaviorDef, Ctx, Decide, DecideRaw, Decider, DeciderFlags,
    DeciderKind, FlagBits, FlagTest, ItemIdx, Policy, Preconditions, SelectFn, SyncChecks,
    TIMER_SLACK, TickInput,
};
pub use interp::log::{debug_level, set_debug_level, watch_agent, watch_agents};
pub use interp::{
    Event, NoTrace, NodeRef, Rejection, TickError, TickReport, Tracer, WalkStop, Why,
    deactivate_all, tick, tick_traced, write_event,
};
#[doc(hidden)]
pub use interp::{
    Kept, Resume, Timed, UntilShared, resume_tick, tick_kept, tick_kept_timed, tick_until_shared,
};
#[cfg(feature = "serde")]
pub use memory::shared::AdoptError;
pub use memory::shared::{ActionOp, ActionRequest, Outcome, Ticket, TreeShared};
pub use memory::stimuli::{Stimuli, StimuliError, Stimulus};
pub use memory::{ActiveLevel, AgentMemory};
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use persist::{
    CrowdSnapshot, MemorySnapshot, PathChange, RestoreError, SNAPSHOT_VERSION, ScheduleSnapshot,
    SharedSnapshot, SnapshotError,
};
pub use raw::{BLOCK_ALIGN, ErasedBehavior, TypeLayout};
pub use tree::{
    CrowdTree, DEFAULT_BLOCK, Has, MAX_CHILDREN, MAX_LEVELS, MAX_SHUFFLE_CHILDREN, Node, Shape,
    StaticTree, Tree, TreeError,
};

pub use bitflags;
/// The `bitflags` crate, whose types the flag tests take: declare decision
/// and stimuli flags with `bt_core::bitflags::bitflags!`, and they match the
/// version bt-core was built with.
///
/// ```
/// use bt_core::bitflags::bitflags;
/// use bt_core::{behavior, decider, tree, tick, TickInput};
///
/// bitflags! {
///     #[derive(Clone, Copy)]
///     pub struct Decision: u32 {
///         const NIGHT = 1 << 0;
///     }
/// }
/// # #[derive(Default)] struct Owl;
/// behavior! { HUNT: Owl }
/// decider! { HUNT_AT_NIGHT: Owl => HUNT, needs_all: Decision::NIGHT }
/// tree! { OWL: Owl = HUNT_AT_NIGHT }
///
/// let mut memory = OWL.new_memory(0);
/// let night = TickInput::new(0.0, 0.1).with_decision(Decision::NIGHT);
/// let report = tick(&OWL, &mut Owl, &mut memory, &night)?;
/// assert_eq!(report.leaf, OWL.find("HUNT_AT_NIGHT"));
/// # Ok::<(), bt_core::TickError>(())
/// ```
pub use decl::tune::{
    Tunable, TunableDecl, TunableKind, TunableValue, Tunables, TuneError, TuneValue,
};
pub use decl::tune_field::TunedFields;
pub use decl::{AnyTable, TunableTable};
pub use raw::FAST_SLOTS;
#[cfg(feature = "tune-file")]
#[cfg_attr(docsrs, doc(cfg(feature = "tune-file")))]
pub use tune_file::{TuneFileError, TuningFile};

// The DSL macros (`behavior!`, `decider!`, `leaf!`, `group!`, `reference!`,
// `tree!`): thin forwards to bt-macros, in their own file.
#[macro_use]
mod macros;

/// The README's example, run as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// What the macro expansions use. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::compile::{
        check_tuned, check_unique_children, flatten, flatten_vec, measure, shape,
    };
    pub use crate::decl::tune::sealed::Sealed as TunableSealed;
    pub use crate::decl::tune::{choice_at, choice_value};
    pub use crate::decl::{BehaviorDef, DecideFn, DecideRaw, fnv1a};
    #[cfg(feature = "serde")]
    pub use crate::persist::private::{PersistMemory, persist};
    pub use crate::raw::{PersistFns, TunedDefaults};
    pub use crate::tree::{DEFAULT_BLOCK, FlagCheck, Item, Kind, NeedsNoShared, Shape, TreeKind};
    pub use bt_macros::{
        __bt_behavior_impl, __bt_decider_impl, __bt_leaf_impl, __bt_tree_impl, __bt_tunables_impl,
    };
    pub use core;

    use crate::decl::{Behavior, Ctx, Decide, Decider};

    /// Calls a callback that takes the agent and the context.
    #[inline(always)]
    pub fn call_a<A, Tb, R>(
        agent: &mut A,
        cx: &Ctx<'_, Tb>,
        f: impl FnOnce(&mut A, &Ctx<'_, Tb>) -> R,
    ) -> R {
        f(agent, cx)
    }

    /// Calls a callback that takes the agent, its memory and the context.
    #[inline(always)]
    pub fn call_am<A, M, Tb, R>(
        agent: &mut A,
        memory: &mut M,
        cx: &Ctx<'_, Tb>,
        f: impl FnOnce(&mut A, &mut M, &Ctx<'_, Tb>) -> R,
    ) -> R {
        f(agent, memory, cx)
    }

    /// Calls an `activate` that takes the agent, the DBlock and the context.
    #[inline(always)]
    pub fn call_ad<A, D, Tb, R>(
        agent: &mut A,
        dblock: Option<D>,
        cx: &Ctx<'_, Tb>,
        f: impl FnOnce(&mut A, Option<D>, &Ctx<'_, Tb>) -> R,
    ) -> R {
        f(agent, dblock, cx)
    }

    /// Calls an `activate` that takes everything.
    #[inline(always)]
    pub fn call_amd<A, M, D, Tb, R>(
        agent: &mut A,
        memory: &mut M,
        dblock: Option<D>,
        cx: &Ctx<'_, Tb>,
        f: impl FnOnce(&mut A, &mut M, Option<D>, &Ctx<'_, Tb>) -> R,
    ) -> R {
        f(agent, memory, dblock, cx)
    }

    /// Calls a slot group's `select`.
    #[inline(always)]
    pub fn call_select<A>(agent: &A, f: impl FnOnce(&A) -> Option<usize>) -> Option<usize> {
        f(agent)
    }

    /// Calls a `decide` whose DBlock type is `behavior`'s.
    #[inline(always)]
    pub fn decide_for<A, D>(
        behavior: &'static Behavior<A, D>,
        agent: &A,
        raw: DecideRaw<'_>,
        f: impl FnOnce(&A, &mut Decide<'_, D>) -> f32,
    ) -> f32 {
        let _ = behavior;
        f(agent, &mut Decide::new(raw))
    }

    /// A `when:` as a `decide`: `true` accepts with 1.0, `false` rejects.
    #[inline(always)]
    pub fn when<A, D>(
        f: impl Fn(&A, &mut Decide<'_, D>) -> bool,
    ) -> impl Fn(&A, &mut Decide<'_, D>) -> f32 {
        move |agent, decide| if f(agent, decide) { 1.0 } else { 0.0 }
    }

    /// Calls a `decide` of a group without a group behavior.
    #[inline(always)]
    pub fn decide_plain<A>(
        agent: &A,
        raw: DecideRaw<'_>,
        f: impl FnOnce(&A, &mut Decide<'_, ()>) -> f32,
    ) -> f32 {
        f(agent, &mut Decide::new(raw))
    }

    /// Without the `serde` feature no memory type can be persisted.
    #[cfg(not(feature = "serde"))]
    #[diagnostic::on_unimplemented(
        message = "behavior `{B}` is declared with `persist`, which needs the `serde` feature of bt-core",
        label = "enable `features = [\"serde\"]` on the bt-core dependency"
    )]
    pub trait PersistMemory<B> {}

    /// What `persist` expands to without the `serde` feature: an error.
    #[cfg(not(feature = "serde"))]
    pub const fn persist<B, M: PersistMemory<B>>() -> crate::raw::PersistFns {
        crate::raw::PersistFns::unavailable()
    }

    /// Implemented by deciders only; the macros use it to check children.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a decider",
        label = "not a decider",
        note = "a group's children must be deciders declared with `decider!` or `group!`; \
                behaviors run through a behavior decider (`decider! {{ NAME: Agent => BEHAVIOR }}`)"
    )]
    pub trait IsDecider<A> {}

    impl<A: 'static> IsDecider<A> for Decider<A> {}

    /// Type-checks that `child` is a decider of agent type `A`.
    pub fn is_decider<A, T: IsDecider<A> + ?Sized>(child: &T) {
        let _ = child;
    }
}
