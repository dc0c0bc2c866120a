//! The contract a behavior implements: its definition, the context its
//! callbacks see, its deferred action, and the index of the place it runs
//! at. The unsafe storage (`raw`) erases these and imports nothing
//! else from the crate.

use core::fmt;

use crate::decl::tune::{Tunable, TunableValue};
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
        cx: &Ctx,
    ) -> bool {
        let _ = (agent, memory, dblock, cx);
        true
    }

    /// Runs one tick; `false` ends the behavior. The default runs until
    /// something preempts it.
    fn tick(agent: &mut A, memory: &mut Self::Memory, cx: &Ctx) -> bool {
        let _ = (agent, memory, cx);
        true
    }

    /// Stops the behavior; runs exactly once per activation.
    fn deactivate(agent: &mut A, memory: &mut Self::Memory, cx: &Ctx) {
        let _ = (agent, memory, cx);
    }

    /// A deferred action: runs after a successful `activate` and returns
    /// the request for a game system to carry out (`None` fails the
    /// activation). The request goes to the [`TreeShared`](crate::TreeShared)
    /// queue; the behavior then sees its progress in [`Ctx::action`].
    fn launch(agent: &mut A, memory: &mut Self::Memory, cx: &Ctx) -> Option<Action> {
        let _ = (agent, memory, cx);
        None
    }
}

/// What a behavior callback sees besides the agent and its memory block.
///
/// Its lifetime is the tick's: the values of the crowd's tunables it reads
/// ([`tuned`](Ctx::tuned)) are borrowed for the tick. Name it `Ctx` (or
/// `Ctx<'_>`) in a function's arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Ctx<'t> {
    /// Absolute time of this tick, in seconds.
    pub now: f64,
    /// Time since the previous tick, in seconds.
    pub dt: f32,
    /// When the behavior's decider was activated.
    pub since: f64,
    /// The behavior flags word of the decider that runs the behavior.
    pub flags: u64,
    /// The caller's decision flags for this tick.
    pub decision: u64,
    /// The agent's stimuli flags for this tick.
    pub stimuli: u64,
    /// The agent id given in the tick input.
    pub agent: u32,
    /// Depth of the decider in the tree (the root is 0).
    pub depth: u8,
    /// The state of the behavior's deferred action ([`ActionState::None`]
    /// for a behavior without `launch`).
    pub action: ActionState,
    /// The values of the crowd's tunables in effect.
    tuned: Tuned<'t>,
}

impl<'t> Ctx<'t> {
    /// The value of `tunable` in effect for this tick, the same for every
    /// agent of the crowd's tick: its default until the game changes it
    /// ([`TreeShared::tune`](crate::TreeShared::tune)). A tunable of
    /// another table than the tree's reads as its default, as does any in
    /// a context made by [`Ctx::at`].
    ///
    /// ```
    /// use bt_core::{TickInput, group, leaf, tick, tree, tunables};
    /// tunables! { SQUAD_TUNING:
    ///     /// Health fraction below which a soldier flees.
    ///     FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    /// }
    /// #[derive(Default)]
    /// struct Soldier { health: f64 }
    /// leaf! { FLEE: Soldier, when: |s, d| s.health < d.tuned(FLEE_BELOW) }
    /// leaf! { FIGHT: Soldier }
    /// group! { ROOT: Soldier, prioritized [FLEE, FIGHT] }
    /// tree! { SQUAD: Soldier = ROOT, memory: SquadMemory, tunables: SQUAD_TUNING }
    ///
    /// let shared = SQUAD.new_shared(0);
    /// let mut memory: SquadMemory = SQUAD.new_memory_in(&shared, 0);
    /// let mut soldier = Soldier { health: 0.3 };
    /// let input = TickInput::new(0.0, 0.1);
    /// tick(&SQUAD, &mut soldier, &mut memory, &input)?;
    /// assert_eq!(memory.leaf(), SQUAD.find("FIGHT")); // 0.3 is not below 0.25
    /// shared.tune(FLEE_BELOW, 0.4)?;
    /// shared.apply_tuning(); // as a crowd's tick does when it starts
    /// tick(&SQUAD, &mut soldier, &mut memory, &input)?;
    /// assert_eq!(memory.leaf(), SQUAD.find("FLEE"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    pub fn tuned<T: TunableValue>(&self, tunable: Tunable<T>) -> T {
        self.tuned.read(tunable)
    }

    /// A copy of this context that outlives the tick (to keep in a log),
    /// without the crowd's tunables: its [`tuned`](Self::tuned) reads
    /// every tunable's default.
    pub const fn detach(&self) -> Ctx<'static> {
        Ctx {
            now: self.now,
            dt: self.dt,
            since: self.since,
            flags: self.flags,
            decision: self.decision,
            stimuli: self.stimuli,
            agent: self.agent,
            depth: self.depth,
            action: self.action,
            tuned: Tuned::NONE,
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
        }
    }

    /// The same context with the deferred-action state `action`.
    pub const fn with_action(mut self, action: ActionState) -> Ctx<'t> {
        self.action = action;
        self
    }

    /// The same context with the behavior flags word `flags`.
    pub const fn with_flags(mut self, flags: u64) -> Ctx<'t> {
        self.flags = flags;
        self
    }

    /// The same context, activated at `since`.
    pub const fn with_since(mut self, since: f64) -> Ctx<'t> {
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
