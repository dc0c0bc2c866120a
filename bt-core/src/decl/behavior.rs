//! The contract a behavior implements: its definition, the context its
//! callbacks see, its deferred action, and the index of the place it runs
//! at. The unsafe storage (`raw`) erases these and imports nothing
//! else from the crate.

use core::fmt;
use core::marker::PhantomData;

use crate::decl::tune::{Tunable, TunableValue, Tunables};
use crate::decl::tuned::Tuned;

/// A behavior's definition, as the [`behavior!`](crate::behavior) macro
/// writes it: the memory and DBlock types and the callbacks. Every callback
/// has a default, and the `HAS_*` constants let the interpreter skip the
/// call when the default would run.
pub trait BehaviorDef<A>: 'static {
    /// The memory block: built by `Default` at activation, handed to every
    /// callback, dropped at deactivation.
    type Memory: Default + Send + 'static;
    /// The value a `decide` may hand to `activate`.
    type DBlock: 'static;
    /// The table of tunables the callbacks' context is typed by (the
    /// `tunables:` key), or [`AnyTable`].
    type Table: TunableTable;
    /// The behavior's name.
    const NAME: &'static str;
    /// The module that declares it (part of the stable id).
    const MODULE: &'static str;
    /// The memory type as written in the declaration.
    const MEMORY_TYPE: &'static str = "()";
    /// The DBlock type as written in the declaration.
    const DBLOCK_TYPE: &'static str = "()";
    /// Whether a `decide` may hand a DBlock to `activate`.
    const HAS_DBLOCK: bool = false;
    /// Whether `activate` is defined.
    const HAS_ACTIVATE: bool = false;
    /// Whether `tick` is defined.
    const HAS_TICK: bool = false;
    /// Whether `deactivate` is defined.
    const HAS_DEACTIVATE: bool = false;
    /// Whether `launch` is defined: the behavior is a deferred action.
    const HAS_LAUNCH: bool = false;
    /// How the memory block is saved and restored (`persist` key); `None`:
    /// it is not, and a restored agent re-activates the behavior.
    const PERSIST: Option<crate::raw::PersistFns> = None;

    /// Starts the behavior; `false` fails it (its `deactivate` still runs).
    fn activate(
        agent: &mut A,
        memory: &mut Self::Memory,
        dblock: Option<Self::DBlock>,
        cx: &Ctx<'_, Self::Table>,
    ) -> bool {
        let _ = (agent, memory, dblock, cx);
        true
    }

    /// Runs one tick; `false` ends the behavior. The default runs until
    /// something preempts it.
    fn tick(agent: &mut A, memory: &mut Self::Memory, cx: &Ctx<'_, Self::Table>) -> bool {
        let _ = (agent, memory, cx);
        true
    }

    /// Stops the behavior; runs exactly once per activation.
    fn deactivate(agent: &mut A, memory: &mut Self::Memory, cx: &Ctx<'_, Self::Table>) {
        let _ = (agent, memory, cx);
    }

    /// A deferred action: runs after a successful `activate` and returns
    /// the request for a game system to carry out (`None` fails the
    /// activation). The request goes to the [`TreeShared`](crate::TreeShared)
    /// queue; the behavior then sees its progress in [`Ctx::action`].
    fn launch(
        agent: &mut A,
        memory: &mut Self::Memory,
        cx: &Ctx<'_, Self::Table>,
    ) -> Option<Action> {
        let _ = (agent, memory, cx);
        None
    }
}

/// A table of tunables as a type: what a behavior's `tunables:` key names
/// (`tunables: SQUAD_TUNING`), so that its callbacks' [`Ctx`](crate::Ctx)
/// is typed by the table and reads each of its tunables with one load.
///
/// [`tunables!`](crate::tunables) implements it for a type of the table's
/// name, beside its static; [`AnyTable`] is the context of a behavior that
/// names none.
pub trait TunableTable: 'static {
    /// The table (`None`: [`AnyTable`]).
    #[doc(hidden)]
    const TABLE: Option<&'static Tunables>;
}

/// The table of a context whose behavior names none: it reads a tunable
/// of any table, checking that it is the tree's (a comparison more a
/// read), and the default for any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyTable {}

impl TunableTable for AnyTable {
    const TABLE: Option<&'static Tunables> = None;
}

/// What a behavior callback sees besides the agent and its memory block.
///
/// Its lifetime is the tick's: the values of the crowd's tunables it reads
/// ([`tuned`](Ctx::tuned)) are borrowed for the tick. Name it `Ctx` (or
/// `Ctx<'_>`) in a function's arguments.
///
/// `Tb` is the table of tunables of the behavior's `tunables:` key (a type
/// [`tunables!`](crate::tunables) declares with the table's name), or
/// [`AnyTable`] for a behavior that names none: a context typed by its
/// table reads each of the table's tunables with one load. A function
/// that takes the context of such a behavior names it
/// (`cx: &Ctx<SQUAD_TUNING>`).
#[repr(C)]
#[non_exhaustive]
pub struct Ctx<'t, Tb = AnyTable> {
    /// Absolute time of this tick, in seconds.
    pub now: f64,
    /// When the behavior's decider was activated.
    pub since: f64,
    /// The behavior flags word of the decider that runs the behavior.
    pub flags: u64,
    /// The caller's decision flags for this tick.
    pub decision: u64,
    /// The agent's stimuli flags for this tick.
    pub stimuli: u64,
    /// The values of the crowd's tunables in effect: the table `Tb`'s,
    /// when it is not [`AnyTable`].
    tuned: Tuned<'t>,
    /// Time since the previous tick, in seconds.
    pub dt: f32,
    /// The agent id given in the tick input.
    pub agent: u32,
    /// Depth of the decider in the tree (the root is 0).
    pub depth: u8,
    /// The state of the behavior's deferred action ([`ActionState::None`]
    /// for a behavior without `launch`).
    pub action: ActionState,
    _table: PhantomData<fn() -> Tb>,
}

impl<Tb> Clone for Ctx<'_, Tb> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Tb> Copy for Ctx<'_, Tb> {}

impl<Tb> PartialEq for Ctx<'_, Tb> {
    fn eq(&self, other: &Self) -> bool {
        self.now == other.now
            && self.since == other.since
            && self.flags == other.flags
            && self.decision == other.decision
            && self.stimuli == other.stimuli
            && self.tuned == other.tuned
            && self.dt == other.dt
            && self.agent == other.agent
            && self.depth == other.depth
            && self.action == other.action
    }
}

impl<Tb> fmt::Debug for Ctx<'_, Tb> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("now", &self.now)
            .field("dt", &self.dt)
            .field("since", &self.since)
            .field("flags", &self.flags)
            .field("decision", &self.decision)
            .field("stimuli", &self.stimuli)
            .field("agent", &self.agent)
            .field("depth", &self.depth)
            .field("action", &self.action)
            .field("tuned", &self.tuned)
            .finish()
    }
}

impl<'t, Tb: TunableTable> Ctx<'t, Tb> {
    /// The value of `tunable` in effect for this tick, the same for every
    /// agent of the crowd's tick: its default until the game changes it
    /// ([`TreeShared::tune`](crate::TreeShared::tune)). A tunable of
    /// another table than the tree's reads as its default, as does any in
    /// a context made by [`Ctx::at`].
    ///
    /// In a behavior that names its table (`tunables: SQUAD_TUNING`), the
    /// context is typed by it and a read of one of its tunables is one
    /// load (the first [`FAST_SLOTS`](crate::FAST_SLOTS) of a table);
    /// without the key, a read also checks that the tunable is of the
    /// tree's table.
    ///
    /// ```
    /// use bt_core::{Ctx, TickInput, group, leaf, tick, tree, tunables};
    /// tunables! { SQUAD_TUNING:
    ///     /// Health fraction below which a soldier flees.
    ///     FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    ///     /// Health a soldier gets back each tick as it flees.
    ///     HEAL: f64 = 0.125, 0.0..=1.0;
    /// }
    /// #[derive(Default)]
    /// struct Soldier { health: f64 }
    /// fn heal(s: &mut Soldier, cx: &Ctx<SQUAD_TUNING>) -> bool {
    ///     s.health += cx.tuned(HEAL);
    ///     true
    /// }
    /// leaf! { FLEE: Soldier, when: |s, d| s.health < d.tuned(FLEE_BELOW),
    ///     tunables: SQUAD_TUNING, tick: heal }
    /// leaf! { FIGHT: Soldier }
    /// group! { ROOT: Soldier, prioritized [FLEE, FIGHT] }
    /// tree! { SQUAD: Soldier = ROOT, memory: SquadMemory, tunables: SQUAD_TUNING }
    ///
    /// let shared = SQUAD.new_shared(0);
    /// let mut memory: SquadMemory = SQUAD.new_memory_in(&shared, 0);
    /// let mut soldier = Soldier { health: 0.375 };
    /// let input = TickInput::new(0.0, 0.1);
    /// tick(&SQUAD, &mut soldier, &mut memory, &input)?;
    /// assert_eq!(memory.leaf(), SQUAD.find("FIGHT")); // not below 0.25
    /// shared.tune(FLEE_BELOW, 0.5)?;
    /// shared.tune(HEAL, 0.25)?;
    /// shared.apply_tuning(); // as a crowd's tick does when it starts
    /// tick(&SQUAD, &mut soldier, &mut memory, &input)?;
    /// assert_eq!(memory.leaf(), SQUAD.find("FLEE"));
    /// assert_eq!(soldier.health, 0.625);
    /// // Outside a tick, the defaults of the table the context is typed by:
    /// heal(&mut soldier, &Ctx::at(0.0, 0.1).with_table());
    /// assert_eq!(soldier.health, 0.75);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    pub fn tuned<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        self.tuned.read_in::<Tb, T>(tunable)
    }

    /// A copy of this context that outlives the tick (to keep in a log),
    /// without the crowd's tunables: its [`tuned`](Self::tuned) reads
    /// every tunable's default.
    pub const fn detach(&self) -> Ctx<'static, Tb> {
        self.with_table()
    }

    /// A copy of this context typed by the table `U`, without the crowd's
    /// tunables: its [`tuned`](Self::tuned) reads every tunable's default.
    /// For calling the callbacks of a behavior that names its table in a
    /// unit test: `&Ctx::at(0.0, 0.1).with_table::<SQUAD_TUNING>()`.
    pub const fn with_table<U: TunableTable>(&self) -> Ctx<'static, U> {
        Ctx {
            now: self.now,
            since: self.since,
            flags: self.flags,
            decision: self.decision,
            stimuli: self.stimuli,
            tuned: Tuned::defaults_of::<U>(),
            dt: self.dt,
            agent: self.agent,
            depth: self.depth,
            action: self.action,
            _table: PhantomData,
        }
    }

    /// This context, untyped: the same values, each read checking that its
    /// tunable is of the tree's table. For a function written for any
    /// behavior's context (`cx: &Ctx`).
    pub const fn untyped(&self) -> Ctx<'t> {
        Ctx {
            now: self.now,
            since: self.since,
            flags: self.flags,
            decision: self.decision,
            stimuli: self.stimuli,
            tuned: self.tuned,
            dt: self.dt,
            agent: self.agent,
            depth: self.depth,
            action: self.action,
            _table: PhantomData,
        }
    }

    /// The same context with the values `tuned`.
    #[inline(always)]
    pub(crate) fn with_tuned(mut self, tuned: Tuned<'t>) -> Self {
        self.tuned = tuned;
        self
    }

    /// The values of the crowd's tunables this context reads.
    #[inline(always)]
    pub(crate) fn tuned_values(&self) -> Tuned<'t> {
        self.tuned
    }

    /// This tick's decision flags as the `bitflags` type `F` the tree's
    /// `needs_*` keys name:
    ///
    /// ```
    /// use bt_core::{behavior, leaf, tree, tick, TickInput};
    ///
    /// bitflags::bitflags! {
    ///     #[derive(Clone, Copy)]
    ///     struct Day: u8 { const NIGHT = 1; }
    ///     #[derive(Clone, Copy)]
    ///     struct Sense: u8 { const PREDATOR = 1; const THIRST = 2; }
    /// }
    /// #[derive(Default)]
    /// struct Deer { fled: bool, slept: bool }
    ///
    /// leaf! { GRAZE: Deer, tick: |d, cx| {
    ///     d.slept = cx.decision_as::<Day>().contains(Day::NIGHT);
    ///     d.fled = cx.stimuli_as::<Sense>().contains(Sense::PREDATOR);
    ///     true
    /// } }
    /// tree! { DEER: Deer = GRAZE }
    ///
    /// let mut deer = Deer::default();
    /// let input = TickInput::new(0.0, 0.1)
    ///     .with_decision(Day::NIGHT)
    ///     .with_stimuli(Sense::PREDATOR);
    /// tick(&DEER, &mut deer, &mut DEER.new_memory(0), &input)?;
    /// assert!(deer.slept && deer.fled);
    /// # Ok::<(), bt_core::TickError>(())
    /// ```
    #[inline(always)]
    pub fn decision_as<F: bitflags::Flags>(&self) -> F
    where
        F::Bits: super::FlagBits,
    {
        super::input::flags_of(self.decision)
    }

    /// This tick's stimuli flags as the `bitflags` type `F` the tree's
    /// `stimuli_*` keys name (see [`decision_as`](Self::decision_as)).
    #[inline(always)]
    pub fn stimuli_as<F: bitflags::Flags>(&self) -> F
    where
        F::Bits: super::FlagBits,
    {
        super::input::flags_of(self.stimuli)
    }

    /// The same context with the deferred-action state `action`.
    pub const fn with_action(mut self, action: ActionState) -> Self {
        self.action = action;
        self
    }

    /// The same context with the behavior flags word `flags`.
    pub const fn with_flags(mut self, flags: u64) -> Self {
        self.flags = flags;
        self
    }

    /// The same context, activated at `since`.
    pub const fn with_since(mut self, since: f64) -> Self {
        self.since = since;
        self
    }

    /// Seconds since the behavior's decider was activated.
    pub fn time_active(&self) -> f64 {
        self.now - self.since
    }

    /// The behavior flags word as the user's own flags type.
    pub fn flags_as<F: bitflags::Flags>(&self) -> F
    where
        F::Bits: TryFrom<u64>,
    {
        bits_as(self.flags)
    }
}

impl<'t> Ctx<'t> {
    /// A context at time `now` with step `dt`, activated now, with no
    /// flags: for calling behavior functions directly in unit tests.
    pub const fn at(now: f64, dt: f32) -> Ctx<'static> {
        Ctx {
            now,
            dt,
            since: now,
            flags: 0,
            decision: 0,
            stimuli: 0,
            agent: 0,
            depth: 0,
            action: ActionState::None,
            tuned: Tuned::NONE,
            _table: PhantomData,
        }
    }

    /// The context of a tick with `input`, before any level's fields are
    /// set: activated now, no flags, depth 0, no deferred action, no
    /// tunables (see [`with_tuned`](Self::with_tuned)).
    #[inline(always)]
    pub(crate) const fn of(input: &super::TickInput) -> Ctx<'t> {
        Ctx {
            now: input.now,
            dt: input.dt,
            since: input.now,
            flags: 0,
            decision: input.decision,
            stimuli: input.stimuli,
            agent: input.agent,
            depth: 0,
            action: ActionState::None,
            tuned: Tuned::NONE,
            _table: PhantomData,
        }
    }
}

/// Reads a 64-bit flag word as the user's flags type, dropping bits the
/// type does not define.
pub(crate) fn bits_as<F: bitflags::Flags>(word: u64) -> F
where
    F::Bits: TryFrom<u64>,
{
    let width = 8 * core::mem::size_of::<F::Bits>();
    let word = if width >= 64 {
        word
    } else {
        word & ((1u64 << width) - 1)
    };
    match F::Bits::try_from(word) {
        Ok(bits) => F::from_bits_truncate(bits),
        Err(_) => F::empty(),
    }
}

/// Index of an item (a decider at one place in the tree) in a compiled tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemIdx(pub u16);

impl ItemIdx {
    /// The root.
    pub const ROOT: ItemIdx = ItemIdx(0);

    /// As a `usize` for indexing.
    pub const fn get(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ItemIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A request for a game system, issued by a behavior's `launch`: what to
/// do (`code`, the game's own numbering) and one argument (a target entity,
/// an animation id, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Action {
    /// What to do, in the game's own numbering.
    pub code: u32,
    /// Its argument.
    pub arg: u64,
}

impl Action {
    /// The action `code` with argument `arg`.
    pub const fn new(code: u32, arg: u64) -> Self {
        Action { code, arg }
    }
}

/// The state of a behavior's deferred action, as [`Ctx::action`](crate::Ctx::action)
/// shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ActionState {
    /// The behavior has no deferred action.
    #[default]
    None,
    /// Launched; the game system has not reported back yet.
    Pending,
    /// The game system reported success.
    Succeeded,
    /// The game system reported failure.
    Failed,
}

impl ActionState {
    pub(crate) const fn from_bits(bits: u64) -> Self {
        match bits {
            1 => ActionState::Pending,
            2 => ActionState::Succeeded,
            3 => ActionState::Failed,
            _ => ActionState::None,
        }
    }

    pub(crate) const fn bits(self) -> u64 {
        match self {
            ActionState::None => 0,
            ActionState::Pending => 1,
            ActionState::Succeeded => 2,
            ActionState::Failed => 3,
        }
    }

    /// Whether the game system has reported back.
    pub const fn is_done(self) -> bool {
        matches!(self, ActionState::Succeeded | ActionState::Failed)
    }
}

/// 32-bit FNV-1a of `module::name`: the stable id of a decider or behavior.
pub const fn fnv1a(module: &str, name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    h = fnv_bytes(h, module.as_bytes());
    h = fnv_bytes(h, b"::");
    fnv_bytes(h, name.as_bytes())
}

const fn fnv_bytes(mut h: u32, bytes: &[u8]) -> u32 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u32;
        h = h.wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}
