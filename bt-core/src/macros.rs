//! The DSL's public macros. Each forwards its own `$crate` to the
//! implementation in bt-macros (`$crate::__private::__bt_*_impl!`), which
//! writes paths through it, so expansions name bt-core's items even when
//! a user renames the dependency.

// The names the macros' docs link to, as they are at the crate root.
#[allow(unused_imports)]
use crate::{
    ActionState, AgentMemory, BLOCK_ALIGN, CrowdTree, Ctx, DeciderFlags, MAX_CHILDREN,
    MAX_SHUFFLE_CHILDREN, Policy, Shape, StaticTree, SyncChecks, Tree, TreeShared,
};

/// Declares a behavior: the code that runs while a decider is active.
///
/// ```
/// # use bt_core::{behavior, Ctx};
/// # #[derive(Default)] struct Creature { x: f32 }
/// #[derive(Default)]
/// struct PatrolState { leg: u8 }
///
/// fn patrol_tick(c: &mut Creature, m: &mut PatrolState, cx: &Ctx) -> bool {
///     c.x += cx.dt;
///     m.leg += 1;
///     m.leg < 4
/// }
///
/// behavior! {
///     /// Walks four legs around the nest.
///     pub PATROL: Creature,
///     memory: PatrolState,
///     tick: patrol_tick,
///     deactivate: |c, m, _cx| { c.x = 0.0; m.leg = 0; },
/// }
/// ```
///
/// Keys, in any order, each at most once, all optional:
/// - `memory: Type` — the memory block (`Default + Send + 'static`, at most
///   the tree's block size): built at activation, dropped at deactivation.
/// - `dblock: Type` — the value a `decide` may hand to `activate`.
/// - `activate: f` — `f(&mut Agent, [&mut Memory,] [Option<DBlock>,] &Ctx) -> bool`;
///   `false` fails the activation (`deactivate` still runs).
/// - `tick: f` — `f(&mut Agent, [&mut Memory,] &Ctx) -> bool`; `false` ends
///   the behavior.
/// - `deactivate: f` — `f(&mut Agent, [&mut Memory,] &Ctx)`.
/// - `launch: f` — `f(&mut Agent, [&mut Memory,] &Ctx) -> Option<Action>`:
///   makes the behavior a *deferred action*. After a successful `activate`
///   the request is queued in the crowd's [`TreeShared`] for a game system
///   to carry out (`None` fails the activation). The behavior then sees the
///   request's progress in [`Ctx::action`]; without a `tick:` of its own it
///   runs while the action is [pending](ActionState::Pending) and ends once
///   it is reported back ([`AgentMemory::complete`]). Deactivated before
///   that, it queues a cancellation.
/// - `persist` (a bare key; the `serde` feature) — saved agent state keeps
///   the memory block: the memory type must implement serde's `Serialize`
///   and `Deserialize` (a compile error names the behavior otherwise).
///   Without it, a restored agent activates the behavior afresh (see the
///   `persist` module).
/// - `tunables: TABLE` — the table of tunables its callbacks read
///   ([`tunables!`](crate::tunables)): their context is then
///   `Ctx<TABLE>`, which reads each of the table's tunables with one load
///   (an untyped `Ctx` also checks that the tunable is of the tree's
///   table). The tree must have the same table (a compile error names the
///   decider and both tables otherwise); a function given as a callback
///   takes `cx: &Ctx<TABLE>`.
///
/// The bracketed arguments are there exactly when `memory:` / `dblock:` are
/// declared. `f` is a function path or a closure that captures nothing.
#[macro_export]
macro_rules! behavior {
    // behavior! { pub PATROL: Creature, memory: PatrolState, tick: patrol_tick }
    ($($decl:tt)*) => {
        $crate::__private::__bt_behavior_impl! { $crate; $($decl)* }
    };
}

/// Declares a behavior decider: it decides whether its behavior runs.
///
/// ```
/// # use bt_core::{behavior, decider, Decide};
/// # #[derive(Default)] struct Creature { hunger: f32 }
/// # bt_core::bitflags::bitflags! { #[derive(Clone, Copy)] pub struct Decision: u32 { const DAY = 1; const HAS_NEST = 2; } }
/// # behavior! { PATROL: Creature }
/// fn patrol_wanted(c: &Creature, _: &mut Decide) -> bool {
///     c.hunger < 5.0
/// }
///
/// decider! { pub GUARD_NEST_PATROL: Creature => PATROL,
///     when: patrol_wanted,
///     needs_all: Decision::DAY | Decision::HAS_NEST,
///     every: 2.0,
/// }
///
/// // The full form also sets the name and the id.
/// decider! { full pub PATROL_AGAIN: Creature => PATROL,
///     name: "patrol-again",
///     id: 7,
///     decide: |c, _| 1.0 / (1.0 + c.hunger),
/// }
/// assert_eq!(PATROL_AGAIN.name(), "patrol-again");
/// ```
///
/// Keys, in any order, each at most once, all optional:
/// - `decide: f` — `f(&Agent, &mut Decide<DBlock>) -> f32`: 0 (or less, or
///   NaN) rejects, above 0 accepts and is the weight (random groups) or the
///   score (scored groups). No `decide` means 1.0.
/// - `when: f` — `f(&Agent, &mut Decide<DBlock>) -> bool`: the yes/no form
///   of `decide` (`true` is 1.0, `false` rejects), for the common decider
///   that only accepts or rejects. Give `decide` or `when`, not both.
/// - `needs_all`, `needs_any`, `needs_none`, `needs_not_all: A | B | …` —
///   decision-flag tests (all set, any set, all clear, any clear), with the
///   user's own `bitflags` constants.
/// - `stimuli_all`, `stimuli_any`, `stimuli_none`, `stimuli_not_all: …` — the
///   same tests of the stimuli flags.
/// - `every: seconds` — a timer: `decide` runs at most this often per agent.
/// - `flags: CALL_DECIDE_ON_REDECIDE | DELEGATE_DECIDE` — [`DeciderFlags`]
///   (groups only).
/// - `behavior_flags: A | B | …` — the word handed to the behavior in
///   [`Ctx::flags`].
/// - `gate: n` — at most `n` agents active in this decider at once, counted
///   across every agent bound to the same [`TreeShared`] ([`SyncChecks`]).
/// - `cooldown: seconds` — a global cooldown: no agent enters within this
///   time of the last agent that did.
/// - `together: k` — a group role: the decider opens only when `k` agents
///   (2 or more) want in, and lets exactly those in.
/// - `name: "…"`, `id: u32` — the `full` form only (and required there).
///
/// `every:`, `cooldown:` and `gate:` also take `tunable(NAME)`, a tunable
/// of the tree's table ([`tunables!`](crate::tunables)) instead of a number: a float tunable
/// of seconds at or above 0 for `every:` and `cooldown:`, an int tunable
/// within 1..=65535 for `gate:`. Each tick uses the value in effect for the
/// agent's crowd ([`TreeShared::tune`] changes it from the crowd's next
/// tick); a tunable of another kind or range, or of another table than the
/// tree's, is a compile error naming the decider, the key and the tunable
/// (see [the guide](crate::guide::ch12_tuning#declarative-fields)).
///
/// ```
/// # use bt_core::{decider, behavior, tree, tunables};
/// # struct Soldier;
/// tunables! { SQUAD_TUNING:
///     /// Seconds between two grenades of the squad.
///     GRENADE_COOLDOWN: f64 = 5.0, 0.0..=30.0;
///     /// Soldiers throwing at once.
///     THROWERS: i64 = 1, 1..=4;
/// }
/// behavior! { THROW: Soldier }
/// decider! { THROW_GRENADE: Soldier => THROW,
///     cooldown: tunable(GRENADE_COOLDOWN),
///     gate: tunable(THROWERS),
/// }
/// tree! { SQUAD: Soldier = THROW_GRENADE, tunables: SQUAD_TUNING }
/// assert_eq!(THROW_GRENADE.preconditions().sync.cooldown, 5.0); // the default
/// assert_eq!(THROW_GRENADE.tuned_fields().gate.unwrap().name(), "THROWERS");
/// ```
#[macro_export]
macro_rules! decider {
    // decider! { full pub X: Creature => PATROL, name: "x", id: 7, decide: f }
    (full $($decl:tt)*) => {
        $crate::__private::__bt_decider_impl! { $crate; full; $($decl)* }
    };
    // decider! { pub GUARD_NEST_PATROL: Creature => PATROL, decide: f, needs_all: Decision::DAY }
    ($($decl:tt)*) => {
        $crate::__private::__bt_decider_impl! { $crate; plain; $($decl)* }
    };
}

/// Declares a leaf in one go: a behavior decider and the behavior it runs,
/// under one name.
///
/// Most leaves are one idea — "eat when hungry" — that the two-level model
/// spells as a [`behavior!`] and a [`decider!`] with two names. `leaf!`
/// takes the keys of both in one list and declares the decider `NAME`; its
/// behavior is named `NAME` too (in traces and dumps) but is not a separate
/// item, so it cannot be shared. Declare the two separately when several
/// deciders run the same behavior.
///
/// ```
/// use bt_core::{group, leaf, tick, tree, TickInput};
///
/// #[derive(Default)]
/// struct Critter { hunger: f32 }
///
/// leaf! { EAT: Critter,
///     when: |c, _| c.hunger > 3.0,
///     tick: |c, cx| { c.hunger -= 4.0 * cx.dt; c.hunger > 0.0 },
/// }
/// leaf! { WANDER: Critter, tick: |c, cx| { c.hunger += 2.0 * cx.dt; true } }
/// group! { ROOT: Critter, prioritized [EAT, WANDER] }
/// tree! { CRITTER: Critter = ROOT }
///
/// let mut critter = Critter { hunger: 5.0 };
/// let mut memory = CRITTER.new_memory(0);
/// tick(&CRITTER, &mut critter, &mut memory, &TickInput::new(0.0, 0.5))?;
/// assert_eq!(memory.leaf(), CRITTER.find("EAT"));
/// assert_eq!(CRITTER.node(memory.leaf().unwrap()).behavior().unwrap().name(), "EAT");
/// # Ok::<(), bt_core::TickError>(())
/// ```
///
/// Keys, in any order, each at most once: those of [`behavior!`]
/// (`memory`, `dblock`, `activate`, `tick`, `deactivate`, `launch`,
/// `tunables`) and
/// those of [`decider!`] (`decide` or `when`, the preconditions, `flags`,
/// `behavior_flags`, `gate`, `cooldown`, `together`), `every`, `gate` and
/// `cooldown` in their `tunable(NAME)` form too.
#[macro_export]
macro_rules! leaf {
    // leaf! { pub EAT: Critter, when: |c, _| c.hungry, tick: eat_tick }
    ($($decl:tt)*) => {
        $crate::__private::__bt_leaf_impl! { $crate; $($decl)* }
    };
}

/// Declares a group decider: it picks one of its child deciders by a policy.
///
/// ```
/// # use bt_core::{behavior, decider, group};
/// # #[derive(Default)] struct Creature;
/// # behavior! { FIGHT: Creature } behavior! { PATROL: Creature } behavior! { ALERT: Creature }
/// # decider! { GUARD_NEST_FIGHT: Creature => FIGHT }
/// # decider! { GUARD_NEST_PATROL: Creature => PATROL }
/// group! { pub GUARD_NEST: Creature, prioritized [GUARD_NEST_FIGHT, GUARD_NEST_PATROL],
///     behavior: ALERT,
///     decide: |_, _| 1.0,
///     flags: CALL_DECIDE_ON_REDECIDE,
/// }
/// ```
///
/// The policy is one of `prioritized`, `sequential`, `random`, `shuffle`,
/// `scored`, `slot` ([`Policy`]); children are deciders, each at most once.
/// Keys are those of [`decider!`] (`every`, `gate` and `cooldown` in their
/// `tunable(NAME)` form too), plus `behavior: B`, a group behavior that
/// activates before the children, ticks before them every tick and
/// deactivates after them, and, for `slot` groups only (where it is
/// required), `select: f` with `f(&Agent) -> Option<usize>` naming the child
/// that runs for this agent now. A `full` form sets `name:` and `id:` as
/// well.
///
/// ```
/// # use bt_core::{behavior, decider, group, tree};
/// # #[derive(Default)] struct Creature { object: Option<usize> }
/// # behavior! { SIT: Creature } behavior! { TYPE: Creature }
/// decider! { SIT_ON_BENCH: Creature => SIT }
/// decider! { USE_TERMINAL: Creature => TYPE }
/// // Which child tree runs comes from the object the creature stands at.
/// group! { USE_OBJECT: Creature, slot [SIT_ON_BENCH, USE_TERMINAL], select: |c| c.object }
/// tree! { CREATURE: Creature = USE_OBJECT }
/// ```
#[macro_export]
macro_rules! group {
    // group! { full pub G: Creature, random [A, B], name: "g", id: 9 }
    (full $($decl:tt)*) => {
        $crate::__private::__bt_decider_impl! { $crate; full; $($decl)* }
    };
    // group! { pub GUARD_NEST: Creature, prioritized [HELP, FIGHT, PATROL], behavior: ALERT }
    ($($decl:tt)*) => {
        $crate::__private::__bt_decider_impl! { $crate; plain; $($decl)* }
    };
}

/// Declares a reference decider: when its group picks it, the agent's
/// active path jumps to the target, a decider elsewhere in the same tree.
///
/// The target is named by its path of deciders from the tree's root, so a
/// misspelt name is a Rust error; a path that leaves the tree, or
/// references that lead only to each other, are compile errors naming the
/// reference. A reference takes the keys of [`decider!`] that decide
/// (`decide:`/`when:`, the flag tests, `every:`, `gate:`, `cooldown:`,
/// `together:`); it runs no behavior and is never active itself, so
/// `flags:`, `behavior_flags:`, `behavior:` and `select:` are compile
/// errors saying that a reference does not take them.
///
/// ```
/// use bt_core::{decider, group, leaf, reference, tick, tree, TickInput};
///
/// #[derive(Default)]
/// struct Creature { won: bool }
///
/// leaf! { FIGHT: Creature, tick: |c: &mut Creature, _| { c.won = true; false } }
/// leaf! { GUARD: Creature }
/// leaf! { WANDER: Creature }
/// group! { NEST: Creature, prioritized [GUARD] }
/// // After a won fight, straight to the nest's GUARD.
/// reference! { GO_GUARD: Creature => [ROOT, NEST, GUARD], when: |c: &Creature, _| c.won }
/// group! { ROAD: Creature, prioritized [GO_GUARD, FIGHT] }
/// group! { ROOT: Creature, prioritized [ROAD, NEST] }
/// tree! { CREATURE: Creature = ROOT }
///
/// let (mut c, mut memory) = (Creature::default(), CREATURE.new_memory(0));
/// tick(&CREATURE, &mut c, &mut memory, &TickInput::new(0.0, 0.1))?;
/// // FIGHT ran and ended; ROAD redecided, GO_GUARD jumped.
/// assert_eq!(memory.leaf(), CREATURE.find_path("ROOT/NEST/GUARD"));
/// # Ok::<(), bt_core::TickError>(())
/// ```
///
/// See [the semantics](crate::semantics) for what a jump deactivates,
/// checks and activates.
#[macro_export]
macro_rules! reference {
    // reference! { pub GO_GUARD: Creature => [ROOT, NEST, GUARD], when: won }
    ($($decl:tt)*) => {
        $crate::__private::__bt_decider_impl! { $crate; reference; $($decl)* }
    };
}

/// Compiles a root decider into a [`Tree`] at compile time.
///
/// ```
/// # use bt_core::{behavior, decider, tree};
/// # #[derive(Default)] pub struct Creature;
/// # behavior! { IDLE: Creature }
/// # decider! { ROOT: Creature => IDLE }
/// tree! { pub CREATURE: Creature = ROOT,
///     block: 64,           // bytes per memory block (default: fitted, see below)
///     max_depth: 8,        // levels allowed (default and most: 32)
///     redecide_limit: 100, // masked redecides and jumps per tick (default: item count)
///     memory: CreatureMemory, // declares `type CreatureMemory = AgentMemory<…>`
///     marker: CreatureTree,   // declares `enum CreatureTree {}`, the tree as a type
/// }
/// let memory: CreatureMemory = CREATURE.new_memory(0);
/// assert_eq!(CREATURE.levels(), 1);
/// assert!(std::ptr::eq(<CreatureTree as bt_core::StaticTree>::tree(), &CREATURE));
/// ```
///
/// Every key is optional. Without `block:`, each level's block is as large
/// as the largest memory type or DBlock of any behavior in the tree, rounded
/// up to [`BLOCK_ALIGN`] ([`Shape::block`], computed at compile time): an
/// agent whose behaviors keep a counter each needs 16-byte blocks, not
/// Spore's 128. The size is part of the tree's type (`Tree<A, L, S, N>`);
/// the `memory:` key names it for you.
///
/// `memory: Name` is needed only where your code writes the memory's type:
/// a struct field, a `Vec<Name>`, a function's argument. It declares
/// `type Name = AgentMemory<Agent, …>` beside the tree, with the tree's
/// sizes filled in and the tree's visibility (`tree! { pub T: … }` makes
/// both public; `memory:` itself takes no `pub`). Code that only holds what `new_memory` returns
/// (`let mut memory = CREATURE.new_memory(0);`) needs no name.
///
/// `marker: Name` declares `enum Name {}` beside the tree, with the tree's
/// visibility, implementing [`StaticTree`]: the tree as a type, for code
/// generic over the tree that should see its tables as constants (bt-bevy's
/// `BrainPlugin::of::<Name>()`). The agent type must then be at least as
/// visible as the tree (the marker's `StaticTree::Tree` names it).
/// Without the key, nothing is declared.
///
/// The flattening inlines a decider used in two
/// places at both; the validation rejects, naming the decider at fault, a
/// cycle, a tree deeper than `max_depth`, an empty group, a group with more
/// than [`MAX_CHILDREN`] children (a shuffle group: [`MAX_SHUFFLE_CHILDREN`]),
/// the same child twice in a group, a timer that is not positive, flags that
/// do not fit the decider, and a memory or DBlock type larger than the block.
///
/// A tree whose deciders name tunables (`cooldown: tunable(X)`) needs
/// `tunables: TABLE`, their table: a tunable of another table, or none, is
/// a compile error naming the decider, the key and the tunable.
///
/// A tree with gates, global cooldowns, group roles or deferred actions is
/// declared as a [`CrowdTree`]: a [`Tree`] whose agents' memories are made
/// with [`Tree::new_memory_in`], bound to the crowd's [`TreeShared`]
/// (`new_memory` does not compile for it).
#[macro_export]
macro_rules! tree {
    // tree! { pub CREATURE: Creature = ROOT, block: 128, redecide_limit: 64 }
    ($($decl:tt)*) => {
        $crate::__private::__bt_tree_impl! { $crate; $($decl)* }
    };
}

/// Declares a tree's **tunables**: named, typed values with a default, a
/// range and a doc line, which the tree's closures read through the tick's
/// context and the game changes while it runs.
///
/// Emits a `static` table of them (name it in `tree!`'s `tunables:` key),
/// a type of the same name (an empty `enum`, implementing
/// [`TunableTable`](crate::TunableTable): name it in a behavior's
/// `tunables:` key, and the behavior's context reads the table's tunables
/// with one load) and one `const` per tunable, a typed
/// [`Tunable`](crate::Tunable). Four
/// kinds: a number (`f64`), a whole number (`i64`), yes or no (`bool`),
/// and a choice of one of a list of names, for which the macro also
/// declares the `enum` it is read as, with the table's visibility,
/// deriving `Clone`, `Copy`, `Debug`, `PartialEq` and `Eq` (attributes
/// written before `enum` are kept, doc comments on its names too):
///
/// ```
/// bt_core::tunables! { pub SQUAD_TUNING:
///     /// Seconds between two grenades of the squad.
///     GRENADE_COOLDOWN: f64 = 5.0, 1.0..=30.0;
///     /// Soldiers shooting at once.
///     SHOOTERS: i64 = 3, 1..=10;
///     /// Whether the squad charges.
///     AGGRESSIVE: bool = false;
///     /// How the squad holds itself.
///     STANCE: #[derive(Hash)] enum Stance { Crouch, Stand, Prone } = Crouch;
/// }
/// assert_eq!(SQUAD_TUNING.len(), 4);
/// assert_eq!(GRENADE_COOLDOWN.default_value(), 5.0);
/// assert_eq!((SHOOTERS.name(), SHOOTERS.index()), ("SHOOTERS", 1));
/// assert_eq!(STANCE.default_value(), Stance::Crouch);
/// ```
///
/// A default outside its range, a range that holds nothing, a name given
/// twice, a choice with no names, a choice that names one name twice and
/// a choice whose default is not one of its names are compile errors
/// naming the tunable.
///
/// The macro takes one step of expansion a tunable: a table of more than
/// about 120 needs a higher `#![recursion_limit]` in its crate. A typed
/// context reads the first [`FAST_SLOTS`](crate::FAST_SLOTS) of a table
/// with one load, the others as an untyped one does.
#[macro_export]
macro_rules! tunables {
    ($($decl:tt)*) => {
        $crate::__private::__bt_tunables_impl! { $crate; $($decl)* }
    };
}
