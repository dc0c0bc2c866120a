//! The declared data: what the DSL macros write as `static` items.
//!
//! Everything here is const-constructible plain data. The fields are public
//! (and hidden from the docs) so that macro expansions can write `static`
//! literals; read them through the methods.

use core::fmt;
use core::marker::PhantomData;

use crate::raw::{DSink, ErasedBehavior, TypeLayout};

pub(crate) mod behavior;
mod input;
pub(crate) mod msg;
pub(crate) mod tune;
pub(crate) mod tune_field;
pub(crate) mod tuned;

pub(crate) use behavior::bits_as;
pub use behavior::fnv1a;
pub use behavior::{Action, ActionState, AnyTable, BehaviorDef, Ctx, ItemIdx, TunableTable};
pub use input::{FlagBits, TIMER_SLACK, TickInput};
pub(crate) use input::{period_runs, period_runs_until};

/// How a group decider picks the child that runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Policy {
    /// Children in priority order: each tick the children before the active
    /// one may preempt it; on a redecide the first that accepts runs.
    Prioritized,
    /// Children run one after another in declaration order, as steps; the
    /// group ends after the last. No preemption.
    ///
    /// A step that rejects, fails to activate or ends (either way) is passed
    /// over: the next step after it that activates runs, in the same tick.
    /// When no step after it activates, the sequence has *ended*, not
    /// failed, and its parent decides again without it, as after any
    /// behavior that ends. A sequence entered with no step that accepts at
    /// all fails like any group without a runnable child. Entered again
    /// later, it starts over from its first step.
    Sequential,
    /// One child drawn among those that accept, weighted by their `decide`
    /// values, with the agent's own generator. No preemption.
    Random,
    /// Like [`Policy::Random`], without repeats until every child has run
    /// once: a round. The round lives in the agent's memory. When none of
    /// the children left in the round accepts, a new round starts among
    /// the others. No preemption.
    Shuffle,
    /// Sims-like: every child is scored each tick and the highest score
    /// wins; the active child keeps running unless another beats it.
    Scored,
    /// A child-tree slot: the group's `select` function names, per agent and
    /// at run time, which child runs (the contextual behaviors an agent
    /// picks up from its surroundings). Every child is compiled into the
    /// tree, so the agent's memory already has room for the largest. When
    /// `select` names another child than the active one, that child takes
    /// over; when it names none (or one that does not accept), the group
    /// fails.
    Slot,
}

impl Policy {
    /// The policy's name as the DSL spells it (`prioritized`, `random`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Prioritized => "prioritized",
            Policy::Sequential => "sequential",
            Policy::Random => "random",
            Policy::Shuffle => "shuffle",
            Policy::Scored => "scored",
            Policy::Slot => "slot",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

bitflags::bitflags! {
    /// Flags that change how a decider decides.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct DeciderFlags: u8 {
        /// When a group redecides because its active child ended or failed,
        /// its own preconditions (flags, not timer) and `decide` are checked
        /// again first; if they reject, the group ends instead.
        const CALL_DECIDE_ON_REDECIDE = 1 << 0;
        /// The group accepts exactly when one of its children would, and
        /// activates that child without calling its `decide` a second time.
        /// A delegating group has no `decide` of its own; in a scored
        /// group it scores what its chosen child scores. (Spore offered a
        /// helper, `DelegateDecideToChildren`, to call from a group's own
        /// decide; as a flag, the child's decide also runs only once.)
        const DELEGATE_DECIDE = 1 << 1;
    }
}

/// One flag-word test: all of `all` set, at least one of `any` set, none of
/// `none` set, and at least one of `not_all` clear. A zero mask is no test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagTest {
    /// Every one of these bits must be set.
    pub all: u64,
    /// At least one of these bits must be set (no test when zero).
    pub any: u64,
    /// Every one of these bits must be clear.
    pub none: u64,
    /// At least one of these bits must be clear (no test when zero).
    pub not_all: u64,
}

impl FlagTest {
    /// No test at all.
    pub const NONE: FlagTest = FlagTest {
        all: 0,
        any: 0,
        none: 0,
        not_all: 0,
    };

    /// Whether this tests anything.
    pub const fn is_some(&self) -> bool {
        (self.all | self.any | self.none | self.not_all) != 0
    }

    /// Whether `word` passes the test.
    pub const fn passes(&self, word: u64) -> bool {
        (word & self.all) == self.all
            && (self.any == 0 || word & self.any != 0)
            && (word & self.none) == 0
            && (self.not_all == 0 || (word & self.not_all) != self.not_all)
    }
}

/// The checks made before a decider's `decide` is called, cheapest first:
/// decision flags, stimuli flags, then the timer. When one fails, `decide`
/// is not called at all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preconditions {
    /// Test of the caller's per-tick decision flags.
    pub decision: FlagTest,
    /// Test of the agent's stimuli flags.
    pub stimuli: FlagTest,
    /// Timer: `decide` runs at most once every `every` seconds per agent,
    /// counted from its last call (less [`TIMER_SLACK`](crate::TIMER_SLACK)
    /// for rounding) when it is a candidate to start; a last call more
    /// than a period ahead of the clock (a tick given a time far ahead)
    /// counts as run out. Zero means no timer.
    /// Like every precondition it gates starting only: a scored group
    /// rescoring its running child, and `CALL_DECIDE_ON_REDECIDE` asking a
    /// running group again, call `decide` without it. Each place a decider is used in a
    /// tree has its own timer slot: a decider shared by two groups is timed
    /// separately under each (Spore kept one stamp per static decider).
    pub every: f64,
    /// Checks shared by every agent ticking the tree: gates, global
    /// cooldowns and group roles (see [`SyncChecks`]).
    pub sync: SyncChecks,
}

impl Preconditions {
    /// No preconditions.
    pub const NONE: Preconditions = Preconditions {
        decision: FlagTest::NONE,
        stimuli: FlagTest::NONE,
        every: 0.0,
        sync: SyncChecks::NONE,
    };
}

/// Preconditions shared by a crowd: their counters live in a
/// [`TreeShared`](crate::TreeShared) that every agent's memory is bound to
/// ([`Tree::new_memory_in`](crate::Tree::new_memory_in)).
///
/// They are checked after the agent's own preconditions and before
/// `decide`; the slot or stamp is taken when the decider activates, with an
/// atomic compare-and-swap, so the limits hold under
/// `par_tick_all` too. An agent that loses that race
/// sees its activation refused ([`Why::Refused`](crate::Why::Refused)) and
/// its group decides again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyncChecks {
    /// A gate: at most this many agents active in the decider at once
    /// (0: no gate). The slot is given back on every kind of deactivation.
    pub gate: u16,
    /// A global cooldown: no agent enters the decider within this many
    /// seconds of the last agent that did (0: none).
    pub cooldown: f64,
    /// A group role: the decider opens only when this many agents want in
    /// at once, and then lets exactly those in together (0: none).
    pub together: u8,
}

impl SyncChecks {
    /// No shared checks.
    pub const NONE: SyncChecks = SyncChecks {
        gate: 0,
        cooldown: 0.0,
        together: 0,
    };

    /// Whether any shared check is declared.
    pub const fn is_some(&self) -> bool {
        self.gate != 0 || self.cooldown != 0.0 || self.together != 0
    }
}

/// The compiled form of a `decide`: the DSL wraps the user's function in one
/// of these.
pub type DecideFn<A> = fn(&A, DecideRaw<'_>) -> f32;

/// The `select` of a [`Policy::Slot`] group: which child runs for this
/// agent now, by child index (`None`, or an index past the last child:
/// none).
pub type SelectFn<A> = fn(&A) -> Option<usize>;

/// What a decider is.
pub enum DeciderKind<A: 'static> {
    /// A leaf that runs a behavior.
    Behavior(&'static ErasedBehavior<A>),
    /// A group of child deciders.
    Group {
        /// How a child is picked.
        policy: Policy,
        /// The children, in declaration (priority) order.
        children: &'static [&'static Decider<A>],
        /// A behavior that runs while the group is active (activates before
        /// its children, ticks before them, deactivates after them).
        behavior: Option<&'static ErasedBehavior<A>>,
    },
    /// A reference: picked by its group, it is never active itself; the
    /// agent's active path moves to the target instead (a jump from one
    /// part of the tree to another).
    Reference {
        /// The target's path from the tree's root: the root first, then
        /// each decider a child of the one before, the target last.
        target: &'static [&'static Decider<A>],
    },
}

/// A decider, as declared with [`decider!`](crate::decider),
/// [`group!`](crate::group) or [`reference!`](crate::reference). Fields are for the macros; read them through
/// the methods.
pub struct Decider<A: 'static> {
    #[doc(hidden)]
    pub name: &'static str,
    #[doc(hidden)]
    pub id: u32,
    #[doc(hidden)]
    pub kind: DeciderKind<A>,
    #[doc(hidden)]
    pub decide: Option<DecideFn<A>>,
    #[doc(hidden)]
    pub pre: Preconditions,
    #[doc(hidden)]
    pub flags: DeciderFlags,
    #[doc(hidden)]
    pub behavior_flags: u64,
    #[doc(hidden)]
    pub select: Option<SelectFn<A>>,
    #[doc(hidden)]
    pub tuned: tune_field::TunedFields,
}

impl<A: 'static> Decider<A> {
    /// The decider's name (its identifier in the declaration).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// A stable id: a hash of the module path and the name.
    pub const fn id(&self) -> u32 {
        self.id
    }

    /// Whether this is a group decider.
    pub const fn is_group(&self) -> bool {
        matches!(self.kind, DeciderKind::Group { .. })
    }

    /// The group's policy, or `None` for a behavior decider.
    pub const fn policy(&self) -> Option<Policy> {
        match self.kind {
            DeciderKind::Group { policy, .. } => Some(policy),
            DeciderKind::Behavior(_) | DeciderKind::Reference { .. } => None,
        }
    }

    /// Whether this is a reference decider.
    pub const fn is_reference(&self) -> bool {
        matches!(self.kind, DeciderKind::Reference { .. })
    }

    /// A reference's target path, from the root (empty for other deciders).
    pub const fn target(&self) -> &'static [&'static Decider<A>] {
        match self.kind {
            DeciderKind::Reference { target } => target,
            _ => &[],
        }
    }

    /// The group's children (empty for a behavior decider).
    pub const fn children(&self) -> &'static [&'static Decider<A>] {
        match self.kind {
            DeciderKind::Group { children, .. } => children,
            DeciderKind::Behavior(_) | DeciderKind::Reference { .. } => &[],
        }
    }

    /// The behavior this decider runs: the leaf behavior of a behavior
    /// decider, or the group behavior of a group.
    pub const fn behavior(&self) -> Option<&'static ErasedBehavior<A>> {
        match self.kind {
            DeciderKind::Behavior(b) => Some(b),
            DeciderKind::Group { behavior, .. } => behavior,
            DeciderKind::Reference { .. } => None,
        }
    }

    /// The preconditions. A field that names a tunable
    /// ([`tuned_fields`](Self::tuned_fields)) holds the tunable's default.
    pub const fn preconditions(&self) -> &Preconditions {
        &self.pre
    }

    /// Which of the declarative fields (`every:`, `gate:`, `cooldown:`)
    /// name a tunable instead of a number, and which one each names.
    pub const fn tuned_fields(&self) -> &tune_field::TunedFields {
        &self.tuned
    }

    /// The decider flags.
    pub const fn flags(&self) -> DeciderFlags {
        self.flags
    }

    /// The behavior flags word passed to this decider's behavior.
    pub const fn behavior_flags(&self) -> u64 {
        self.behavior_flags
    }

    /// Whether the decider has a `decide` function (none means "always 1.0").
    pub const fn has_decide(&self) -> bool {
        self.decide.is_some()
    }
}

impl<A: 'static> fmt::Debug for Decider<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{:#x}", self.name, self.id)
    }
}

/// A behavior, as declared with [`behavior!`](crate::behavior): the code that
/// acts. `D` is the type of the DBlock its `activate` receives from the
/// deciding `decide` (`()` when it takes none).
pub struct Behavior<A: 'static, D: 'static = ()> {
    erased: ErasedBehavior<A>,
    _dblock: PhantomData<fn() -> D>,
}

impl<A: 'static, D: 'static> Behavior<A, D> {
    #[doc(hidden)]
    pub const fn __new<T: BehaviorDef<A, DBlock = D>>() -> Self {
        Behavior {
            erased: ErasedBehavior::new::<T>(),
            _dblock: PhantomData,
        }
    }

    #[doc(hidden)]
    pub const fn __erased(&'static self) -> &'static ErasedBehavior<A> {
        &self.erased
    }

    /// The behavior's name.
    pub const fn name(&self) -> &'static str {
        self.erased.name
    }

    /// A stable id: a hash of the module path and the name.
    pub const fn id(&self) -> u32 {
        self.erased.id
    }
}

impl<A: 'static> ErasedBehavior<A> {
    /// The behavior's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// A stable id: a hash of the module path and the name.
    pub const fn id(&self) -> u32 {
        self.id
    }

    /// Size and alignment of its memory block type.
    pub const fn memory_layout(&self) -> TypeLayout {
        self.memory
    }

    /// The memory block type as written in the declaration (`()` for none).
    pub const fn memory_type(&self) -> &'static str {
        self.memory_type
    }

    /// The DBlock type as written in the declaration (`()` for none).
    pub const fn dblock_type(&self) -> &'static str {
        self.dblock_type
    }

    /// Which of `activate`, `tick` and `deactivate` it defines.
    pub const fn callbacks(&self) -> (bool, bool, bool) {
        (self.has_activate, self.has_tick, self.has_deactivate)
    }

    /// Whether it launches a deferred action (defines `launch`).
    pub const fn is_deferred(&self) -> bool {
        self.has_launch
    }

    /// Whether saved agent state keeps its memory block: it was declared
    /// with `persist`, or its memory type has no size (nothing to keep).
    pub const fn persists_memory(&self) -> bool {
        self.persist.is_some() || self.memory.size == 0
    }
}

impl<A: 'static> fmt::Debug for ErasedBehavior<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{:#x}", self.name, self.id)
    }
}

/// The raw form of a [`Decide`]: what a compiled `decide` receives.
pub struct DecideRaw<'a> {
    pub(crate) input: &'a TickInput,
    pub(crate) item: ItemIdx,
    pub(crate) sink: Option<DSink<'a>>,
    pub(crate) tuned: tuned::Tuned<'a>,
}

/// What a `decide` function sees besides the agent: the tick's time and
/// flags, and the DBlock it may fill for its behavior's `activate`.
///
/// `D` is the DBlock type of the behavior the decider activates (`()` when
/// it takes none); the macros check it at compile time.
pub struct Decide<'a, D: 'static = ()> {
    raw: DecideRaw<'a>,
    _dblock: PhantomData<fn(D)>,
}

impl<'a, D: 'static> Decide<'a, D> {
    pub(crate) fn new(raw: DecideRaw<'a>) -> Self {
        Decide {
            raw,
            _dblock: PhantomData,
        }
    }

    /// Absolute time of this tick, in seconds.
    pub fn now(&self) -> f64 {
        self.raw.input.now
    }

    /// The value of `tunable` in effect for this tick, as
    /// [`Ctx::tuned`] reads it.
    #[inline(always)]
    pub fn tuned<T: crate::TunableValue>(&self, tunable: crate::Tunable<T>) -> T {
        self.raw.tuned.read(tunable)
    }

    /// Time since the previous tick, in seconds.
    pub fn dt(&self) -> f32 {
        self.raw.input.dt
    }

    /// The caller's decision flags for this tick.
    pub fn decision(&self) -> u64 {
        self.raw.input.decision
    }

    /// The agent's stimuli flags for this tick.
    pub fn stimuli(&self) -> u64 {
        self.raw.input.stimuli
    }

    /// This tick's decision flags as the `bitflags` type `F`
    /// (`d.decision_as::<Job>().contains(Job::WORK)`).
    pub fn decision_as<F: bitflags::Flags>(&self) -> F
    where
        F::Bits: FlagBits,
    {
        input::flags_of(self.raw.input.decision)
    }

    /// This tick's stimuli flags as the `bitflags` type `F`
    /// (`d.stimuli_as::<Sense>().contains(Sense::PREDATOR)`).
    pub fn stimuli_as<F: bitflags::Flags>(&self) -> F
    where
        F::Bits: FlagBits,
    {
        input::flags_of(self.raw.input.stimuli)
    }

    /// The agent id given in the tick input.
    pub fn agent(&self) -> u32 {
        self.raw.input.agent
    }

    /// The deciding decider at its place in the tree. A decider used in
    /// more than one group is one item per place, so its `decide` can tell
    /// where it is asked:
    ///
    /// ```
    /// use bt_core::{behavior, decider, group, tree, tick, Decide, TickInput};
    ///
    /// #[derive(Default)]
    /// struct Guard { asked: Vec<&'static str> }
    ///
    /// fn fight(g: &Guard, d: &mut Decide) -> bool {
    ///     let _ = g;
    ///     // Only the place under NEST fights.
    ///     d.item() == GUARD.find_path("ROOT/NEST/FIGHT").unwrap()
    /// }
    ///
    /// behavior! { SWING: Guard }
    /// behavior! { WAIT: Guard }
    /// decider! { FIGHT: Guard => SWING, when: fight }
    /// decider! { IDLE: Guard => WAIT }
    /// group! { ROAD: Guard, prioritized [FIGHT, IDLE] }
    /// group! { NEST: Guard, prioritized [FIGHT, IDLE] }
    /// group! { ROOT: Guard, prioritized [ROAD, NEST] }
    /// tree! { GUARD: Guard = ROOT }
    ///
    /// let mut memory = GUARD.new_memory(0);
    /// tick(&GUARD, &mut Guard::default(), &mut memory, &TickInput::new(0.0, 0.1))?;
    /// // ROAD/FIGHT rejected, ROAD/IDLE ran.
    /// assert_eq!(memory.leaf(), GUARD.find_path("ROOT/ROAD/IDLE"));
    /// # Ok::<(), bt_core::TickError>(())
    /// ```
    pub fn item(&self) -> ItemIdx {
        self.raw.item
    }

    /// Hands `value` to the `activate` of this decider's behavior, if the
    /// decider activates; otherwise it is dropped before the next `decide`
    /// runs. Setting it again replaces (and drops) the earlier value.
    pub fn set(&mut self, value: D) {
        if let Some(sink) = &mut self.raw.sink {
            sink.put(value);
        }
    }
}
