//! A reference model of the tick semantics (`bt_core::semantics`), with
//! the shared checks and crowds, and the random trees and crowds it is
//! compared on.
//!
//! The model is a small recursive interpreter over the *declared* deciders
//! (`&'static Decider<Sim>`), not the compiled stream: a `Vec` path of
//! levels, timers and shuffle rounds in hash maps keyed by the place (the
//! route of child indices from the root), and its own copy of the agent's
//! random generator. It allocates freely and aims to be obviously right
//! rather than fast. It emits the same [`Event`]s as the production
//! interpreter, so the two traces compare event for event.
//!
//! # What the model takes from production (details the semantics leave open)
//!
//! The semantics fix what happens; these are the places where they do not
//! say *how*, and where the model follows production so that traces compare:
//!
//! - **Events and counts.** Which events exist and their order, and the
//!   `visited` count: +1 per active decider walked through, per candidate
//!   tried (delegates' children included) and per
//!   `CALL_DECIDE_ON_REDECIDE` recheck. Item indices are preorder positions.
//! - **Random draws.** xorshift64* from the memory's initial state
//!   ([`AgentMemory::rng_state`]); a draw is a reservoir sample over the
//!   accepting candidates in declaration order: the first one is taken
//!   without a draw, each later one with weight `w` replaces the pick when
//!   `u * total < w`, with `u` = the next `f64` in `[0, 1)` (53 bits) and
//!   `total` the running `f64` sum of weights including `w`. A candidate is
//!   decided (its own nested draws included) before its draw.
//! - **Shuffle rounds.** A child counts as run when a pick that goes
//!   through it is kept (before its activation, which may still fail). A
//!   draw is among the unmasked children not yet run in this round; when
//!   none of those accepts, among the unmasked ones already run, and picking
//!   one of those starts a new round with it. A round also ends when every
//!   child has run.
//! - **Scored groups.** The active child's current score is its `decide`
//!   alone (no preconditions, no timer), 0 when it rejects, 1 without a
//!   `decide`; a delegating active child scores what its own active child
//!   scores. A challenger must beat the best so far strictly, so the active
//!   child and earlier children win ties. (Calling a timed child's `decide`
//!   every tick goes against the letter of Spore's timers, which count from
//!   the last call to `decide`: see the timer tests in `differential.rs`.)
//! - **Subset Rule.** Reported only when a group finds no child right after
//!   its own activation (also for a group without `decide`), not when it
//!   runs out of children after failures. The root of an idle agent, when
//!   it has no group behavior, reports it only if it has a `decide`.
//! - **An idle agent that stays idle.** A root without a group behavior
//!   that finds no child right after its activation is deactivated at once
//!   (the events show both), and neither step counts in the report.
//! - **Timers.** Stamped when the timer check passes, before `decide`; a
//!   stamp more than one period ahead of `now` has run out; a
//!   `CALL_DECIDE_ON_REDECIDE` recheck tests flags and `decide`, not the
//!   timer (the same caveat).
//! - **DBlocks.** A pick carries the value its own `decide` set; `activate`
//!   receives it only for the last decider of a delegation chain.
//! - **Sequential groups.** The next pick starts after the child that
//!   failed or ended, across ticks; after a group ran out it fails as
//!   `Why::Ended`.
//! - **Panics.** A panicking callback leaves the agent idle with no further
//!   callbacks; timers, shuffle rounds and the generator are kept.
//! - **Memory blocks.** Built (`Default`) before `activate`, dropped after
//!   `deactivate`; the redecide budget is checked before each masked
//!   redecide.
//! - **Slot groups.** A slot group without a selected child (none, or an
//!   index past its children) is rejected after its timer, before
//!   `decide`. It runs only the selected child, and not if that child is
//!   masked. When the selection changes under it, the new child preempts
//!   the running one if it accepts. Otherwise the group fails as
//!   `Why::Reselected`, and that reason goes down to every level below.
//!   Every generated slot group selects the child `Sim::slot`, which each
//!   tick's script sets.
//!
//! - **References.** A picked reference is never on the path; it jumps.
//!   The redecide budget is checked first and a jump made counts against
//!   it (not in the report's redecides); a refused one only as the failure
//!   of its reference. The deciders the jump would enter
//!   are asked top down before anything changes: each new level's group, if
//!   a slot group, must select the way's child (else that child is
//!   rejected as `NoSelection`); the groups on the way as candidates
//!   without delegation and without a DBlock, the target as any candidate.
//!   A refusal fails the reference in its group as `Why::Refused`. Else an
//!   [`Event::Jump`], the shuffle rounds of the groups that pick on the way
//!   (the common ancestor's included), the levels below the common
//!   ancestor deactivated as `Why::Preempted`, and the way down entered
//!   like a delegation chain. Generated references have no shared checks.
//! - **Crowds.** A case ticks a crowd of one to three agents, in index
//!   order, each with agent id = its index, sharing one [`Crowd`] (the
//!   model of a `TreeShared`). Gates, global cooldowns and group roles are
//!   keyed by place. A candidate's gate and cooldown are checked after its
//!   timer and before a slot group's selection (a place the agent is in,
//!   which only a jump's restart asks about, does not count its own gate
//!   place); its role after it
//!   accepted (a delegating group's pick is kept only once the role lets
//!   it in). The gate place, the cooldown stamp and the role place are
//!   taken at activation, before the memory block is built; ticked one
//!   agent at a time, that claim never fails. A role is a lobby of agents:
//!   the one that fills it to the role's size admits them all; while any
//!   is admitted or inside, the role is busy; an agent that did not ask in
//!   a tick leaves the lobby at its end. A cooldown stamped more than a
//!   period ahead of `now` has run out.
//! - **Deferred actions.** `launch` runs after `activate`; a launch takes
//!   the crowd's next serial (also when the queue turns it away) and its
//!   ticket the memory slot numbers of production (`Node::action_slot`)
//!   and the production crowd's id. A deactivation cancels a pending
//!   launch after `deactivate`, before the block is dropped; a panic or
//!   `reset` cancels without events. Each crowd tick's requests are
//!   drained and some launches reported back by their tickets.
//! - **The untraced path.** A third copy of the crowd, with a `TreeShared`
//!   of its own, runs `tick_all` (no id set: the index is the id) or
//!   `tick` agent by agent without a tracer, and must make the same
//!   decisions: the same callbacks, paths, generators, timers, reports,
//!   requests (but for the crowd id) and shared counts.
//! - **Tunables.** A generated decider's timer, gate and cooldown may
//!   name a tunable of [`GEN_TUNING`] (the tree then has the table, and
//!   every crowd a `TreeShared`); such a field is there whatever its
//!   value, and reads the crowd's value in effect. A script changes one
//!   before a tick, in effect for that tick's agents: staged on both
//!   production crowds, put in effect by `apply_tuning` where agents are
//!   ticked one by one and by `tick_all` itself.
//! - **Stopping and resetting.** A script may stop an agent with
//!   `deactivate_all` (its `deactivate` callbacks run, no events, then it
//!   leaves every lobby) or `reset` it (what it holds is given back
//!   without callbacks; timers, shuffle rounds and actions are cleared,
//!   the generator kept) before a tick.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::sync::{Mutex, Once};

use bt_core::__private::{DecideFn, DecideRaw, decide_for, flatten_vec, shape};
use bt_core::{
    Action, ActionOp, ActionRequest, ActionState, AgentMemory, Ctx, Decider, DeciderFlags,
    DeciderKind, ErasedBehavior, Event, FlagTest, Has, ItemIdx, NodeRef, Policy, Preconditions,
    Rejection, SyncChecks, TIMER_SLACK, TickError, TickInput, TickReport, Ticket, Tracer, Tree,
    TreeShared, TunedFields, WalkStop, Why, behavior, tunables, write_event,
};
use proptest::prelude::*;

/// Depth levels of every generated tree's memory.
pub const LEVELS: usize = 6;
/// Per-agent slots of every generated tree's memory: 24 for the timers,
/// shuffle rounds, roles and deferred actions, and one more for the crowd
/// a tree with shared state names.
pub const SLOTS: usize = 25;
/// Most items (places) of a generated tree.
pub const MAX_ITEMS: usize = 40;
/// Most deciders declared for one generated tree (and `decide` functions).
pub const MAX_DECIDERS: usize = 32;
/// Most children of a generated group.
pub const MAX_FANOUT: usize = 6;

/// A generated tree.
pub type GenTree = Tree<Sim, LEVELS, SLOTS>;
/// Its agent memory.
pub type GenMemory = AgentMemory<Sim, LEVELS, SLOTS>;

// ---------------------------------------------------------------------------
// The harness: callback counting, scripted panics, live-instance counters.
// Thread-local: each test runs on its own thread, and production and model
// run one after the other on it.

/// The payload of a scripted panic (the panic hook keeps quiet about it).
#[derive(Debug)]
pub struct ScriptedPanic(pub &'static str);

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static PANIC_AT: Cell<u32> = const { Cell::new(u32::MAX) };
    static LIVE_MEMS: RefCell<BTreeSet<u64>> = const { RefCell::new(BTreeSet::new()) };
    static NEXT_MEM: Cell<u64> = const { Cell::new(0) };
    static BAD_DROPS: Cell<u32> = const { Cell::new(0) };
    static LIVE_TOKENS: Cell<i64> = const { Cell::new(0) };
    static KINDS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

pub mod harness {
    use super::*;

    /// Starts counting the callbacks of one tick; the `panic_at`-th (from
    /// 0) panics.
    pub fn begin(panic_at: Option<u32>) {
        quiet_scripted_panics();
        CALLS.with(|c| c.set(0));
        KINDS.with(|k| k.borrow_mut().clear());
        PANIC_AT.with(|p| p.set(panic_at.unwrap_or(u32::MAX)));
    }

    /// The kinds of the callbacks counted since [`begin`], in order.
    pub fn kinds() -> Vec<&'static str> {
        KINDS.with(|k| k.borrow().clone())
    }

    /// Stops counting; returns the number of callbacks made.
    pub fn end() -> u32 {
        PANIC_AT.with(|p| p.set(u32::MAX));
        CALLS.with(Cell::get)
    }

    /// Counts one callback: its ordinal, or `Err` if it is the one that
    /// panics (then disarmed: one panic per tick at most).
    pub fn callback(what: &'static str) -> Result<u32, ScriptedPanic> {
        KINDS.with(|k| k.borrow_mut().push(what));
        let n = CALLS.with(|c| {
            let n = c.get();
            c.set(n + 1);
            n
        });
        if PANIC_AT.with(Cell::get) == n {
            PANIC_AT.with(|p| p.set(u32::MAX));
            return Err(ScriptedPanic(what));
        }
        Ok(n)
    }

    /// [`callback`] for production callbacks: panics for real.
    pub fn hit(what: &'static str) -> u32 {
        match callback(what) {
            Ok(n) => n,
            Err(p) => std::panic::panic_any(p),
        }
    }

    /// Live memory block values ([`Mem`]).
    pub fn live_mems() -> usize {
        LIVE_MEMS.with(|l| l.borrow().len())
    }

    /// Drops of a value that was not live (double drops or drops of
    /// values never built), since the thread started.
    pub fn bad_drops() -> u32 {
        BAD_DROPS.with(Cell::get)
    }

    /// Live DBlock values ([`Token`]).
    pub fn live_tokens() -> i64 {
        LIVE_TOKENS.with(Cell::get)
    }

    /// Installs, once, a panic hook that stays quiet about scripted panics.
    pub fn quiet_scripted_panics() {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if info.payload().downcast_ref::<ScriptedPanic>().is_none() {
                    default(info);
                }
            }));
        });
    }
}

/// A memory block value: counts the behavior's ticks, and its live
/// instances by id (a double drop finds its id gone).
pub struct Mem {
    id: u64,
    pub ticks: u32,
}

impl Default for Mem {
    fn default() -> Self {
        harness::hit("memory default");
        let id = NEXT_MEM.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        LIVE_MEMS.with(|l| l.borrow_mut().insert(id));
        Mem { id, ticks: 0 }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if !LIVE_MEMS.with(|l| l.borrow_mut().remove(&self.id)) {
            BAD_DROPS.with(|b| b.set(b.get() + 1));
        }
        if !std::thread::panicking() {
            harness::hit("memory drop");
        }
    }
}

/// Saved agent state keeps a block's tick count; a restored block is a new
/// live instance.
impl serde::Serialize for Mem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.ticks)
    }
}

impl<'de> serde::Deserialize<'de> for Mem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ticks = u32::deserialize(d)?;
        let id = NEXT_MEM.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        LIVE_MEMS.with(|l| l.borrow_mut().insert(id));
        Ok(Mem { id, ticks })
    }
}

/// A DBlock value: the ordinal of the `decide` call that made it.
pub struct Token(u32);

impl Token {
    fn new(n: u32) -> Self {
        LIVE_TOKENS.with(|l| l.set(l.get() + 1));
        Token(n)
    }

    fn value(&self) -> u32 {
        self.0
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        LIVE_TOKENS.with(|l| l.set(l.get() - 1));
    }
}

// ---------------------------------------------------------------------------
// The agent and its behaviors.

/// One behavior callback, as the agent's journal records it.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    Activate {
        b: u8,
        seen: Ctx<'static>,
        dblock: Option<u32>,
        mem: Option<u32>,
        ok: bool,
    },
    Tick {
        b: u8,
        seen: Ctx<'static>,
        mem: Option<u32>,
        running: bool,
    },
    Deactivate {
        b: u8,
        seen: Ctx<'static>,
        mem: Option<u32>,
    },
    Launch {
        b: u8,
        seen: Ctx<'static>,
        action: Option<Action>,
    },
}

/// The scripted agent. Production and model each get a clone.
#[derive(Clone, Debug, Default)]
pub struct Sim {
    /// What each decider's `decide` returns, by decider id.
    pub answers: Vec<f32>,
    /// Bit `b`: behavior `Bb`'s `tick` returns false this tick.
    pub ends: u8,
    /// Bit `b`: behavior `Bb`'s `activate` returns false this tick.
    pub fails: u8,
    /// Behavior `Bb` (with a memory block) ends after this many ticks of
    /// one activation (0: never).
    pub end_after: [u8; 8],
    /// The child a slot group selects this tick (see [`select_slot`]).
    pub slot: u8,
    /// Every behavior callback, in order.
    pub journal: Vec<Call>,
}

impl Sim {
    pub fn answer(&self, id: usize) -> f32 {
        self.answers.get(id).copied().unwrap_or(1.0)
    }

    pub fn on_activate(
        &mut self,
        b: u8,
        mem: Option<&mut u32>,
        dblock: Option<u32>,
        seen: Ctx<'_>,
    ) -> bool {
        let ok = self.fails & (1 << b) == 0;
        self.journal.push(Call::Activate {
            b,
            seen: seen.detach(),
            dblock,
            mem: mem.map(|m| *m),
            ok,
        });
        ok
    }

    /// A launch: declines when `Bb`'s bit (modulo 8) of `fails` is set.
    pub fn on_launch(&mut self, b: u8, seen: Ctx<'_>) -> Option<Action> {
        let action = (self.fails & (1 << (b % 8)) == 0).then(|| {
            Action::new(
                u32::from(b),
                (seen.now * 4.0) as u64 + u64::from(seen.agent),
            )
        });
        self.journal.push(Call::Launch {
            b,
            seen: seen.detach(),
            action,
        });
        action
    }

    pub fn on_tick(&mut self, b: u8, mem: Option<&mut u32>, seen: Ctx<'_>) -> bool {
        let mut running = self.ends & (1 << (b % 8)) == 0;
        let ticks = mem.map(|m| {
            *m += 1;
            *m
        });
        if let Some(t) = ticks {
            let after = u32::from(self.end_after[b as usize % 8]);
            running &= after == 0 || t < after;
        }
        self.journal.push(Call::Tick {
            b,
            seen: seen.detach(),
            mem: ticks,
            running,
        });
        running
    }

    pub fn on_deactivate(&mut self, b: u8, mem: Option<&mut u32>, seen: Ctx<'_>) {
        self.journal.push(Call::Deactivate {
            b,
            seen: seen.detach(),
            mem: mem.map(|m| *m),
        });
    }
}

// The pool of behaviors the generated deciders pick from, with different
// subsets of callbacks, memory blocks and DBlocks.
behavior! { pub B0: Sim, memory: Mem, dblock: Token, persist,
    activate: |s, m, d, cx| { harness::hit("activate"); s.on_activate(0, Some(&mut m.ticks), d.map(|t| t.value()), *cx) },
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(0, Some(&mut m.ticks), *cx) },
    deactivate: |s, m, cx| { harness::hit("deactivate"); s.on_deactivate(0, Some(&mut m.ticks), *cx) },
}
behavior! { pub B1: Sim, memory: Mem, dblock: Token, persist,
    activate: |s, m, d, cx| { harness::hit("activate"); s.on_activate(1, Some(&mut m.ticks), d.map(|t| t.value()), *cx) },
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(1, Some(&mut m.ticks), *cx) },
    deactivate: |s, m, cx| { harness::hit("deactivate"); s.on_deactivate(1, Some(&mut m.ticks), *cx) },
}
behavior! { pub B2: Sim, memory: Mem, persist,
    activate: |s, m, cx| { harness::hit("activate"); s.on_activate(2, Some(&mut m.ticks), None, *cx) },
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(2, Some(&mut m.ticks), *cx) },
    deactivate: |s, m, cx| { harness::hit("deactivate"); s.on_deactivate(2, Some(&mut m.ticks), *cx) },
}
behavior! { pub B3: Sim, memory: Mem, persist,
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(3, Some(&mut m.ticks), *cx) },
}
behavior! { pub B4: Sim, dblock: Token,
    activate: |s, d, cx| { harness::hit("activate"); s.on_activate(4, None, d.map(|t| t.value()), *cx) },
    deactivate: |s, cx| { harness::hit("deactivate"); s.on_deactivate(4, None, *cx) },
}
behavior! { pub B5: Sim }
behavior! { pub B6: Sim,
    activate: |s, cx| { harness::hit("activate"); s.on_activate(6, None, None, *cx) },
    tick: |s, cx| { harness::hit("tick"); s.on_tick(6, None, *cx) },
    deactivate: |s, cx| { harness::hit("deactivate"); s.on_deactivate(6, None, *cx) },
}
behavior! { pub B7: Sim, memory: Mem, persist,
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(7, Some(&mut m.ticks), *cx) },
    deactivate: |s, m, cx| { harness::hit("deactivate"); s.on_deactivate(7, Some(&mut m.ticks), *cx) },
}

// Deferred actions: `B8` runs while its action is pending, `B9` ticks on
// its own and sees the action's state.
behavior! { pub B8: Sim,
    launch: |s, cx| { harness::hit("launch"); s.on_launch(8, *cx) },
}
behavior! { pub B9: Sim, memory: Mem,
    launch: |s, _m, cx| { harness::hit("launch"); s.on_launch(9, *cx) },
    tick: |s, m, cx| { harness::hit("tick"); s.on_tick(9, Some(&mut m.ticks), *cx) },
}

/// `B8` or `B9`, by the parity of `b`.
pub fn launch_pool(b: u8) -> &'static ErasedBehavior<Sim> {
    if b.is_multiple_of(2) {
        B8.__erased()
    } else {
        B9.__erased()
    }
}

/// Behavior `Bb` of the pool.
pub fn pool(b: u8) -> &'static ErasedBehavior<Sim> {
    match b % 8 {
        0 => B0.__erased(),
        1 => B1.__erased(),
        2 => B2.__erased(),
        3 => B3.__erased(),
        4 => B4.__erased(),
        5 => B5.__erased(),
        6 => B6.__erased(),
        _ => B7.__erased(),
    }
}

/// The `decide` of decider `I`: answers `agent.answers[I]` and hands the
/// ordinal of this callback to `activate` as its DBlock.
fn decide_n<const I: usize>(sim: &Sim, raw: DecideRaw<'_>) -> f32 {
    decide_for(&B0, sim, raw, |sim, d| {
        let n = harness::hit("decide");
        d.set(Token::new(n));
        sim.answer(I)
    })
}

macro_rules! decide_table {
    ($($i:literal)*) => { [$(decide_n::<$i> as DecideFn<Sim>),*] };
}

/// The `select` of every slot group: the child `sim.slot`, none from 7 up
/// (and none when the group has fewer children).
pub fn select_slot(sim: &Sim) -> Option<usize> {
    (sim.slot < 7).then_some(usize::from(sim.slot))
}

/// One `decide` per decider id: a fn pointer cannot know its caller.
pub const DECIDES: [DecideFn<Sim>; MAX_DECIDERS] = decide_table!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
);

// ---------------------------------------------------------------------------
// Random trees.

/// One decider of a generated tree, as raw choices: [`build`] makes a valid
/// tree of any list of them, so that proptest can shrink freely.
#[derive(Clone)]
pub struct RawDecider {
    pub group: bool,
    /// Leaf behavior (a behavior decider), `Bb` of the pool.
    pub behavior: u8,
    /// Group behavior.
    pub group_behavior: Option<u8>,
    /// 0 prioritized, 1 sequential, 2 random, 3 shuffle, 4 scored.
    pub policy: u8,
    /// Children: each taken modulo the number of deciders declared before
    /// this one; repeats and children that would break the limits dropped.
    pub children: Vec<u8>,
    pub decide: bool,
    /// `[all, any, none, not_all]` masks over 4 decision flag bits.
    pub decision: [u8; 4],
    /// The same over 4 stimuli flag bits.
    pub stimuli: [u8; 4],
    /// Timer: index into [`PERIODS`].
    pub every: u8,
    pub recheck: bool,
    pub delegate: bool,
    pub behavior_flags: u8,
    /// Shared checks: index into [`SYNCS`].
    pub sync: u8,
    /// A leaf launches a deferred action: its behavior is `B8` or `B9`.
    pub launch: bool,
    /// A leaf (not the root) is a reference: its target is the place of
    /// this index (modulo their number) among the places that can be
    /// targets (see [`build`]). It has no shared checks.
    pub reference: Option<u8>,
    /// Fields that name a tunable of [`GEN_TUNING`]: bit 0 the timer
    /// (`GEN_EVERY`), bit 1 the gate (`GEN_GATE`), bit 2 the cooldown
    /// (`GEN_COOLDOWN`), each in place of the number. A reference's gate
    /// and cooldown stay off.
    pub tuned: u8,
}

impl RawDecider {
    /// A decider of the given kind, behavior, policy and children, with no
    /// flag test, timer, `decide`, delegation or shared check.
    pub fn plain(group: bool, behavior: u8, policy: u8, children: &[u8]) -> RawDecider {
        RawDecider {
            group,
            behavior,
            group_behavior: None,
            policy,
            children: children.to_vec(),
            decide: false,
            decision: [0; 4],
            stimuli: [0; 4],
            every: 0,
            recheck: false,
            delegate: false,
            behavior_flags: 0,
            sync: 0,
            launch: false,
            reference: None,
            tuned: 0,
        }
    }
}

/// The shared checks a generated decider may have (index 0: none).
pub const SYNCS: [SyncChecks; 7] = [
    SyncChecks::NONE,
    SyncChecks {
        gate: 1,
        cooldown: 0.0,
        together: 0,
    },
    SyncChecks {
        gate: 2,
        cooldown: 0.0,
        together: 0,
    },
    SyncChecks {
        gate: 0,
        cooldown: 0.5,
        together: 0,
    },
    SyncChecks {
        gate: 0,
        cooldown: 1.0,
        together: 0,
    },
    SyncChecks {
        gate: 0,
        cooldown: 0.0,
        together: 2,
    },
    SyncChecks {
        gate: 1,
        cooldown: 1.0,
        together: 2,
    },
];

tunables! { pub GEN_TUNING:
    /// The period of a tuned timer.
    GEN_EVERY: f64 = 1.0, 0.0..=3.0;
    /// The size of a tuned gate.
    GEN_GATE: i64 = 1, 1..=3;
    /// The length of a tuned global cooldown.
    GEN_COOLDOWN: f64 = 0.5, 0.0..=3.0;
}

/// The values a script tunes each of [`GEN_TUNING`]'s tunables to, in
/// the table's order.
pub const TUNED_VALUES: [&[f64]; 3] = [
    &[0.0, 0.5, 1.0, 2.5, 3.0],
    &[1.0, 2.0, 3.0],
    &[0.0, 0.5, 1.0, 2.5],
];

/// Timer periods (index 0: no timer).
pub const PERIODS: [f64; 4] = [0.0, 0.5, 1.0, 2.5];
/// Tick steps.
pub const STEPS: [f32; 5] = [0.0, 0.25, 0.5, 1.0, 3.0];
/// `decide` answers: rejections (0, negative, NaN), weights and scores,
/// infinity (clamped to `f32::MAX`).
pub const ANSWERS: [f32; 16] = [
    0.0,
    1.0,
    1.0,
    2.0,
    0.5,
    3.0,
    1.0,
    -1.0,
    f32::NAN,
    f32::INFINITY,
    0.0,
    1.5,
    2.0,
    0.25,
    1.0,
    3.0,
];

const POLICIES: [Policy; 6] = [
    Policy::Prioritized,
    Policy::Sequential,
    Policy::Random,
    Policy::Shuffle,
    Policy::Scored,
    Policy::Slot,
];

/// One tick of a script.
#[derive(Clone)]
pub struct TickScript {
    /// Index into [`STEPS`].
    pub dt: u8,
    pub decision: u8,
    pub stimuli: u8,
    /// `(decider id, index into ANSWERS)`: answers that change now.
    pub changes: Vec<(u8, u8)>,
    pub ends: u8,
    pub fails: u8,
    /// The callback (from 0, in this tick) that panics.
    pub panic_at: Option<u8>,
    /// What slot groups select this tick ([`Sim::slot`]).
    pub slot: u8,
    /// Before the tick, agent `who` (modulo the crowd) is: 0, left alone;
    /// 1, stopped with `deactivate_all`; 2, `reset`.
    pub op: u8,
    pub who: u8,
    /// Whether the untraced copy is ticked one agent at a time with `tick`
    /// rather than with `tick_all` (always, when a panic is scripted).
    pub one_by_one: bool,
    /// Whether this tick's clock is far ahead (`now` × 1000 + 1000, as a
    /// game passing milliseconds for seconds would give); the next tick's
    /// is back to normal.
    pub far: bool,
    /// `(tunable, value)`: before the tick, tunable `tunable` of
    /// [`GEN_TUNING`] (modulo its length) takes value `value` of
    /// [`TUNED_VALUES`] (modulo theirs), in effect for this tick.
    pub tune: Option<(u8, u8)>,
}

/// A whole test case: a tree and a script of ticks. Its `Debug` output is
/// Rust source: a shrunk failing case pastes into a regression test.
#[derive(Clone)]
pub struct Case {
    pub deciders: Vec<RawDecider>,
    pub end_after: [u8; 8],
    /// The redecide budget (`None`: the default, the item count).
    pub limit: Option<u8>,
    pub seed: u64,
    /// Initial answers, indices into [`ANSWERS`], by decider id.
    pub answers: Vec<u8>,
    pub ticks: Vec<TickScript>,
    /// Agents in the crowd (at least 1).
    pub agents: u8,
    /// Room in the deferred-action queue (at least 1).
    pub capacity: u8,
}

impl fmt::Debug for RawDecider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RawDecider {{ group: {}, behavior: {}, group_behavior: {:?}, policy: {}, \
             children: vec!{:?}, decide: {}, decision: {:?}, stimuli: {:?}, every: {}, \
             recheck: {}, delegate: {}, behavior_flags: {}, sync: {}, launch: {}, \
             reference: {:?}, tuned: {} }}",
            self.group,
            self.behavior,
            self.group_behavior,
            self.policy,
            self.children,
            self.decide,
            self.decision,
            self.stimuli,
            self.every,
            self.recheck,
            self.delegate,
            self.behavior_flags,
            self.sync,
            self.launch,
            self.reference,
            self.tuned
        )
    }
}

impl fmt::Debug for TickScript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TickScript {{ dt: {}, decision: {}, stimuli: {}, changes: vec!{:?}, ends: {}, \
             fails: {}, panic_at: {:?}, slot: {}, op: {}, who: {}, one_by_one: {}, far: {}, \
             tune: {:?} }}",
            self.dt,
            self.decision,
            self.stimuli,
            self.changes,
            self.ends,
            self.fails,
            self.panic_at,
            self.slot,
            self.op,
            self.who,
            self.one_by_one,
            self.far,
            self.tune
        )
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Case {{\n    deciders: vec![")?;
        for d in &self.deciders {
            writeln!(f, "        {d:?},")?;
        }
        writeln!(
            f,
            "    ],\n    end_after: {:?},\n    limit: {:?},\n    seed: {:#x},\n    answers: vec!{:?},\n    agents: {},\n    capacity: {},\n    ticks: vec![",
            self.end_after, self.limit, self.seed, self.answers, self.agents, self.capacity
        )?;
        for t in &self.ticks {
            writeln!(f, "        {t:?},")?;
        }
        write!(f, "    ],\n}}")
    }
}

fn mask4() -> impl Strategy<Value = u8> {
    prop_oneof![3 => Just(0u8), 1 => 1..16u8]
}

fn flag_test() -> impl Strategy<Value = [u8; 4]> {
    prop_oneof![5 => Just([0u8; 4]), 1 => [mask4(), mask4(), mask4(), mask4()]]
}

pub fn raw_decider() -> impl Strategy<Value = RawDecider> {
    (
        (
            prop::bool::weighted(0.6),
            0..8u8,
            prop::option::weighted(0.4, 0..8u8),
            0..POLICIES.len() as u8,
            prop::collection::vec(any::<u8>(), 1..=MAX_FANOUT),
            prop::bool::weighted(0.7),
        ),
        (
            flag_test(),
            flag_test(),
            prop_oneof![4 => Just(0u8), 1 => 1..4u8],
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.25),
            prop_oneof![Just(0u8), any::<u8>()],
        ),
        (
            prop_oneof![5 => Just(0u8), 1 => 1..SYNCS.len() as u8],
            prop::bool::weighted(0.2),
            prop::option::weighted(0.15, any::<u8>()),
            prop_oneof![6 => Just(0u8), 1 => 1..8u8],
        ),
    )
        .prop_map(
            |(
                (group, behavior, group_behavior, policy, children, decide),
                (decision, stimuli, every, recheck, delegate, behavior_flags),
                (sync, launch, reference, tuned),
            )| RawDecider {
                group,
                behavior,
                group_behavior,
                policy,
                children,
                decide,
                decision,
                stimuli,
                every,
                recheck,
                delegate,
                behavior_flags,
                sync,
                launch,
                reference,
                tuned,
            },
        )
}

/// `a & b`: a byte with each bit set with probability 1/4.
fn sparse() -> impl Strategy<Value = u8> {
    (any::<u8>(), any::<u8>()).prop_map(|(a, b)| a & b)
}

pub fn tick_script(panics: bool) -> impl Strategy<Value = TickScript> {
    let panic = if panics {
        prop::option::weighted(0.35, 0..24u8).boxed()
    } else {
        Just(None).boxed()
    };
    (
        0..STEPS.len() as u8,
        0..16u8,
        0..16u8,
        prop::collection::vec((0..MAX_DECIDERS as u8, 0..ANSWERS.len() as u8), 0..4),
        (sparse(), any::<u8>()).prop_map(|(a, b)| a & b),
        (sparse(), sparse()).prop_map(|(a, b)| a & b),
        panic,
        prop_oneof![3 => 0..2u8, 1 => 0..8u8],
        (
            prop_oneof![12 => Just(0u8), 1 => 1..3u8],
            0..4u8,
            any::<bool>(),
            prop::bool::weighted(0.06),
            prop::option::weighted(0.2, (0..3u8, any::<u8>())),
        ),
    )
        .prop_map(
            |(
                dt,
                decision,
                stimuli,
                changes,
                ends,
                fails,
                panic_at,
                slot,
                (op, who, one_by_one, far, tune),
            )| TickScript {
                dt,
                decision,
                stimuli,
                changes,
                ends,
                fails,
                panic_at,
                slot,
                op,
                who,
                one_by_one,
                far,
                tune,
            },
        )
}

/// Cases of up to `deciders` deciders and `ticks` ticks.
pub fn case(deciders: usize, ticks: usize, panics: bool) -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(raw_decider(), 1..=deciders),
        prop::array::uniform8(prop_oneof![2 => Just(0u8), 1 => 1..4u8]),
        prop::option::weighted(0.25, 0..5u8),
        any::<u64>(),
        prop::collection::vec(0..ANSWERS.len() as u8, MAX_DECIDERS),
        prop::collection::vec(tick_script(panics), 1..=ticks),
        (
            prop_oneof![1 => Just(1u8), 2 => 2..4u8],
            1..8u8,
            prop::collection::vec(prop::bool::weighted(0.6), ticks),
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.5),
        ),
    )
        .prop_map(
            |(
                mut deciders,
                end_after,
                limit,
                seed,
                answers,
                mut ticks,
                (agents, capacity, keep, plain, bare),
            )| {
                // Groups whose children are decided by their flag tests
                // alone redecide without the step machine when a leaf
                // ends: 30 % of the cases are made of such deciders.
                if plain {
                    for d in &mut deciders {
                        d.decide = false;
                        d.every = 0;
                        d.delegate = false;
                        d.sync = 0;
                        d.tuned = 0;
                        // Half of them test no flags either: their groups
                        // pick by the redecide mask alone.
                        if bare {
                            d.decision = [0; 4];
                            d.stimuli = [0; 4];
                        }
                    }
                }
                // Most game ticks see the flag words of the tick before:
                // the steady walk then reuses what it found, up to the tick
                // an earlier sibling's timer runs out.
                for i in 1..ticks.len() {
                    if keep[i] {
                        ticks[i].decision = ticks[i - 1].decision;
                        ticks[i].stimuli = ticks[i - 1].stimuli;
                    }
                }
                Case {
                    deciders,
                    end_after,
                    limit,
                    seed,
                    answers,
                    ticks,
                    agents,
                    capacity,
                }
            },
        )
}

/// Cases made for the quick redecide: a group of 2 to 6 plain leaves
/// (random, prioritized or sequential; in half of the cases no leaf tests a
/// flag) whose behaviors end every few ticks, under a prioritized root
/// with a plain leaf before it. Most leaf ends then happen in a steady
/// walk, which redecides them without the step machine.
pub fn quick_case(ticks: usize) -> impl Strategy<Value = Case> {
    let leaf = (0..8u8, flag_test(), flag_test());
    (
        case(1, ticks, false),
        prop::collection::vec(leaf, 3..=MAX_FANOUT.min(7)),
        (0..3u8, any::<bool>()),
        prop::array::uniform8(1..4u8),
    )
        .prop_map(|(mut case, leaves, (policy, bare), end_after)| {
            let plain = |behavior: u8, decision: [u8; 4], stimuli: [u8; 4]| RawDecider {
                decision,
                stimuli,
                ..RawDecider::plain(false, behavior, 0, &[])
            };
            let mut deciders: Vec<RawDecider> = leaves
                .iter()
                .map(|&(b, d, s)| match bare {
                    true => plain(b, [0; 4], [0; 4]),
                    false => plain(b, d, s),
                })
                .collect();
            // The first leaf needs two decision flags (a quarter of the
            // words): an earlier sibling that mostly turns down.
            deciders[0].decision = [0b0011, 0, 0, 0];
            let n = deciders.len() as u8;
            // The group of all leaves but the first, then the root: the
            // first leaf (an earlier sibling to test), then the group.
            let group: Vec<u8> = (1..n).collect();
            deciders.push(RawDecider::plain(true, 0, policy, &group));
            deciders.push(RawDecider::plain(true, 0, 0, &[0, n]));
            case.deciders = deciders;
            case.end_after = end_after;
            case
        })
}

/// A leaf of [`plain_case`]: behavior, flag tests, timer (index into
/// [`PERIODS`]).
type PlainLeaf = (u8, [u8; 4], u8);

/// A child of [`plain_case`]'s root.
#[derive(Clone, Debug)]
enum PlainChild {
    Leaf(PlainLeaf),
    /// Policy (prioritized, sequential, random), group behavior, flag
    /// tests, leaves, and the leaves of a group nested after them.
    Group(
        u8,
        Option<u8>,
        [u8; 4],
        Vec<PlainLeaf>,
        Option<Vec<PlainLeaf>>,
    ),
}

/// Trees whose groups pick by flag tests and timers alone, the shape of
/// most game trees: a prioritized root over leaves with flag tests and
/// timers, and over groups (prioritized, sequential or random; some with a
/// group behavior, some holding a group of their own) of leaves that end
/// every few ticks. A leaf ending under the root, a group that runs out
/// of children, an earlier sibling taking over, a group entered on the
/// way down: an untraced tick makes these changes without the step
/// machine, except where a random group has a timed child or a group has
/// a child whose timer a tunable gives (one past [`PERIODS`]).
pub fn plain_case(ticks: usize) -> impl Strategy<Value = Case> {
    let tested = || {
        prop_oneof![
            1 => Just([0u8; 4]),
            3 => (mask4(), mask4()).prop_map(|(all, none)| [all, 0, none & !all, 0]),
        ]
    };
    // One past the periods: a timer that names `GEN_EVERY`.
    let timer = || prop_oneof![3 => Just(0u8), 1 => 1..=PERIODS.len() as u8];
    let leaves = || prop::collection::vec((0..8u8, flag_test(), timer()), 1..=3);
    let root_leaf = (0..8u8, tested(), timer());
    let group = (
        0..3u8,
        prop::option::weighted(0.5, 0..8u8),
        tested(),
        leaves(),
        prop::option::weighted(0.3, leaves()),
    )
        .prop_map(|(p, b, t, l, n)| PlainChild::Group(p, b, t, l, n));
    let child = prop_oneof![root_leaf.prop_map(PlainChild::Leaf), group];
    (
        case(1, ticks, false),
        prop::collection::vec(child, 2..=4),
        prop::array::uniform8(1..4u8),
    )
        .prop_map(|(mut case, children, end_after)| {
            let mut deciders: Vec<RawDecider> = Vec::new();
            let mut push = |d: RawDecider| {
                deciders.push(d);
                (deciders.len() - 1) as u8
            };
            let leaf = |(b, decision, every): PlainLeaf| RawDecider {
                decision,
                every,
                tuned: u8::from(usize::from(every) == PERIODS.len()),
                ..RawDecider::plain(false, b, 0, &[])
            };
            let mut top = Vec::new();
            for child in children {
                match child {
                    PlainChild::Leaf(l) => top.push(push(leaf(l))),
                    PlainChild::Group(policy, behavior, decision, leaves, nested) => {
                        let mut ids: Vec<u8> = leaves.into_iter().map(|l| push(leaf(l))).collect();
                        if let Some(nested) = nested {
                            let inner: Vec<u8> =
                                nested.into_iter().map(|l| push(leaf(l))).collect();
                            ids.push(push(RawDecider::plain(true, 0, 0, &inner)));
                        }
                        top.push(push(RawDecider {
                            group_behavior: behavior,
                            decision,
                            ..RawDecider::plain(true, 0, policy, &ids)
                        }));
                    }
                }
            }
            push(RawDecider::plain(true, 0, 0, &top));
            case.deciders = deciders;
            case.end_after = end_after;
            case
        })
}

/// Everything the tests leak to make `'static` trees at run time, kept
/// reachable from a static: it is live until the process ends, and Miri's
/// leak check sees it so.
static KEPT: Mutex<Vec<&'static (dyn Any + Sync)>> = Mutex::new(Vec::new());

/// `Box::leak`, kept reachable (see [`KEPT`]).
pub fn leak<T: Any + Sync>(value: T) -> &'static T {
    let r: &'static T = Box::leak(Box::new(value));
    KEPT.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    r
}

/// `Vec::leak`, kept reachable (see [`KEPT`]).
pub fn leak_vec<T: Any + Sync>(v: Vec<T>) -> &'static [T] {
    let s: &'static [T] = v.leak();
    leak(s)
}

/// A generated tree, compiled.
pub struct Built {
    pub root: &'static Decider<Sim>,
    pub tree: &'static GenTree,
}

fn name_of(j: usize, group: bool) -> &'static str {
    const LEAVES: [&str; MAX_DECIDERS] = [
        "L0", "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13",
        "L14", "L15", "L16", "L17", "L18", "L19", "L20", "L21", "L22", "L23", "L24", "L25", "L26",
        "L27", "L28", "L29", "L30", "L31",
    ];
    const GROUPS: [&str; MAX_DECIDERS] = [
        "G0", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10", "G11", "G12", "G13",
        "G14", "G15", "G16", "G17", "G18", "G19", "G20", "G21", "G22", "G23", "G24", "G25", "G26",
        "G27", "G28", "G29", "G30", "G31",
    ];
    if group { GROUPS[j] } else { LEAVES[j] }
}

fn flag_test_of(m: [u8; 4]) -> FlagTest {
    FlagTest {
        all: u64::from(m[0]),
        any: u64::from(m[1]),
        none: u64::from(m[2]),
        not_all: u64::from(m[3]),
    }
}

/// Declares the deciders of `raw` at run time (leaked) and compiles the
/// last one's tree with the production compile step. Decider `j` has id `j`
/// and, if it decides, `DECIDES[j]`.
///
/// A leaf with `reference` set (not the root) becomes a reference. Its
/// target path is found in a first build in which it is a plain leaf: the
/// places that can be targets are those whose subtree holds a behavior
/// decider that is not to be a reference, and with no group taking a
/// DBlock above them. The compile step follows a target path by decider
/// ids, so the first build's deciders name places of the second.
pub fn build(raw: &[RawDecider], limit: Option<u8>) -> Built {
    assert!(!raw.is_empty() && raw.len() <= MAX_DECIDERS);
    let is_ref = |j: usize| raw[j].reference.is_some() && j + 1 < raw.len();
    let first = declare(raw, &HashMap::new());
    let root = *first.last().expect("a decider");
    let mut places: Vec<Vec<&'static Decider<Sim>>> = Vec::new();
    fn targets(
        d: &'static Decider<Sim>,
        path: &mut Vec<&'static Decider<Sim>>,
        is_ref: &dyn Fn(usize) -> bool,
        out: &mut Vec<Vec<&'static Decider<Sim>>>,
    ) -> bool {
        path.push(d);
        let mut holds = !d.is_group() && !is_ref(d.id as usize);
        for c in d.children() {
            holds |= targets(c, path, is_ref, out);
        }
        let above_take_dblock = path[..path.len() - 1]
            .iter()
            .any(|g| g.behavior().is_some_and(|b| caps(b).dblock));
        if holds && !above_take_dblock {
            out.push(path.clone());
        }
        path.pop();
        holds
    }
    targets(root, &mut Vec::new(), &is_ref, &mut places);
    let mut chosen: HashMap<usize, &'static [&'static Decider<Sim>]> = HashMap::new();
    if !places.is_empty() {
        for (j, r) in raw.iter().enumerate() {
            if let (true, Some(t)) = (is_ref(j), r.reference) {
                let path = places[t as usize % places.len()].clone();
                chosen.insert(j, leak_vec(path));
            }
        }
    }
    let made = declare(raw, &chosen);
    let root = *made.last().expect("a decider");
    compile(root, limit)
}

/// Declares the deciders of `raw`; those in `targets` as references to
/// the path given. A decider with `reference` set has no shared checks
/// and launches nothing either way, so both builds have the same shape.
fn declare(
    raw: &[RawDecider],
    targets: &HashMap<usize, &'static [&'static Decider<Sim>]>,
) -> Vec<&'static Decider<Sim>> {
    let mut made: Vec<&'static Decider<Sim>> = Vec::new();
    // Per decider: height (levels), places, timer + shuffle slots.
    let mut dims: Vec<(usize, usize, usize)> = Vec::new();
    for (j, r) in raw.iter().enumerate() {
        let mut children: Vec<&'static Decider<Sim>> = Vec::new();
        let (mut height, mut items, mut slots) = (0, 1, 0);
        // The last decider is the root: a group whenever it can be.
        if (r.group || j + 1 == raw.len()) && j > 0 {
            let mut taken = Vec::new();
            for &c in &r.children {
                let c = c as usize % j;
                let (h, n, s) = dims[c];
                if taken.contains(&c)
                    || taken.len() == MAX_FANOUT
                    || h + 1 > LEVELS
                    || items + n > MAX_ITEMS
                    // Room for the group's own timer, shuffle round and
                    // role, and for the crowd's slot.
                    || slots + s > SLOTS - 4
                {
                    continue;
                }
                taken.push(c);
                children.push(made[c]);
                height = height.max(h);
                items += n;
                slots += s;
            }
        }
        let group = !children.is_empty();
        let reference = !group && r.reference.is_some();
        let policy = POLICIES[r.policy as usize % POLICIES.len()];
        let delegate = group && r.delegate;
        let every = PERIODS[r.every as usize % PERIODS.len()];
        // A reference has no shared checks, tuned or not.
        let tune = if reference { r.tuned & 1 } else { r.tuned };
        let tuned = TunedFields {
            every: (tune & 1 != 0).then_some(GEN_EVERY),
            gate: (tune & 2 != 0).then_some(GEN_GATE),
            cooldown: (tune & 4 != 0).then_some(GEN_COOLDOWN),
        };
        let mut flags = DeciderFlags::empty();
        if delegate {
            flags |= DeciderFlags::DELEGATE_DECIDE;
        }
        if group && r.recheck {
            flags |= DeciderFlags::CALL_DECIDE_ON_REDECIDE;
        }
        if every != 0.0 || tuned.every.is_some() {
            slots += 1;
        }
        if group && policy == Policy::Shuffle {
            slots += 1;
        }
        let mut sync = if reference {
            SyncChecks::NONE
        } else {
            SYNCS[r.sync as usize % SYNCS.len()]
        };
        // As the macros write a field that names a tunable: its default.
        let every = match tuned.every {
            Some(t) => t.default_value(),
            None => every,
        };
        if let Some(t) = tuned.gate {
            sync.gate = t.default_value() as u16;
        }
        if let Some(t) = tuned.cooldown {
            sync.cooldown = t.default_value();
        }
        if sync.together != 0 {
            slots += 1;
        }
        let launch = r.launch && !group && !reference;
        if launch {
            slots += 1;
        }
        let target = targets.get(&j).filter(|_| reference);
        let kind = if group {
            DeciderKind::Group {
                policy,
                children: leak_vec(children),
                behavior: r.group_behavior.map(pool),
            }
        } else if let Some(&target) = target {
            DeciderKind::Reference { target }
        } else if launch {
            DeciderKind::Behavior(launch_pool(r.behavior))
        } else {
            DeciderKind::Behavior(pool(r.behavior))
        };
        let d: &'static Decider<Sim> = leak(Decider {
            name: name_of(j, group),
            id: j as u32,
            kind,
            decide: (r.decide && !delegate).then_some(DECIDES[j]),
            pre: Preconditions {
                decision: flag_test_of(r.decision),
                stimuli: flag_test_of(r.stimuli),
                every,
                sync,
            },
            flags,
            behavior_flags: if target.is_some() {
                0
            } else {
                u64::from(r.behavior_flags)
            },
            select: (group && policy == Policy::Slot).then_some(select_slot as fn(&Sim) -> _),
            tuned,
        });
        made.push(d);
        dims.push((height + 1, items, slots));
    }
    made
}

/// Compiles `root` with the production compile step: `shape` (which
/// validates) and `flatten_vec`, then checks the result with `validate`.
pub fn compile(root: &'static Decider<Sim>, limit: Option<u8>) -> Built {
    let shape = shape(root, bt_core::DEFAULT_BLOCK, LEVELS);
    assert!(shape.levels <= LEVELS && shape.slots() <= SLOTS);
    let items = leak_vec(flatten_vec(root, shape));
    // `Tree::__new` wants exactly `LEVELS` levels; a literal takes fewer,
    // and `validate` checks it against the memory's sizes.
    let tree: &'static GenTree = leak(Tree {
        items,
        name: "GEN",
        redecide_limit: limit.map_or(items.len() as u32, u32::from),
        shape,
        shared: shape.needs_shared(),
        dblocks: GenTree::dblocks_in(items),
        tunables: items
            .iter()
            .any(|it| it.decider.tuned_fields().is_some())
            .then_some(&GEN_TUNING),
    });
    tree.validate().expect("a generated tree is valid");
    Built { root, tree }
}

/// The tree under `d` as an indented outline, for failure messages.
pub fn outline(d: &'static Decider<Sim>) -> String {
    fn go(out: &mut String, d: &'static Decider<Sim>, depth: usize, index: &mut usize) {
        let _ = write!(
            out,
            "{:indent$}{}:{}",
            "",
            index,
            d.name,
            indent = 2 * depth
        );
        *index += 1;
        if let Some(p) = d.policy() {
            let _ = write!(out, " {p}");
        }
        if let Some(b) = d.behavior() {
            let _ = write!(out, " [{}]", b.name());
        }
        if d.is_reference() {
            let ids: Vec<u32> = d.target().iter().map(|t| t.id).collect();
            let _ = write!(out, " jumps to ids {ids:?}");
        }
        if d.decide.is_some() {
            let _ = write!(out, " decide#{}", d.id);
        }
        if !d.flags.is_empty() {
            let _ = write!(out, " {:?}", d.flags);
        }
        if d.pre.decision.is_some() {
            let _ = write!(out, " decision{:?}", d.pre.decision);
        }
        if d.pre.stimuli.is_some() {
            let _ = write!(out, " stimuli{:?}", d.pre.stimuli);
        }
        let tuned = d.tuned_fields();
        if let Some(t) = tuned.every {
            let _ = write!(out, " every {}", t.name());
        } else if d.pre.every != 0.0 {
            let _ = write!(out, " every {}", d.pre.every);
        }
        if let Some(t) = tuned.gate {
            let _ = write!(out, " gate {}", t.name());
        } else if d.pre.sync.gate != 0 {
            let _ = write!(out, " gate {}", d.pre.sync.gate);
        }
        if let Some(t) = tuned.cooldown {
            let _ = write!(out, " cooldown {}", t.name());
        } else if d.pre.sync.cooldown != 0.0 {
            let _ = write!(out, " cooldown {}", d.pre.sync.cooldown);
        }
        if d.behavior_flags != 0 {
            let _ = write!(out, " bflags={:#x}", d.behavior_flags);
        }
        out.push('\n');
        for c in d.children() {
            go(out, c, depth + 1, index);
        }
    }
    let mut out = String::new();
    go(&mut out, d, 0, &mut 0);
    out
}

// ---------------------------------------------------------------------------
// The reference model.

/// A decider at one place: its route of child indices from the root, and
/// its preorder position (for events).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Place {
    route: Vec<u8>,
    index: u16,
}

fn size(d: &'static Decider<Sim>) -> u16 {
    1 + d.children().iter().map(|c| size(c)).sum::<u16>()
}

impl Place {
    fn root() -> Self {
        Place {
            route: Vec::new(),
            index: 0,
        }
    }

    fn child(&self, group: &'static Decider<Sim>, ci: usize) -> Place {
        let before: u16 = group.children()[..ci].iter().map(|c| size(c)).sum();
        let mut route = self.route.clone();
        route.push(ci as u8);
        Place {
            route,
            index: self.index + 1 + before,
        }
    }

    fn depth(&self) -> usize {
        self.route.len()
    }
}

/// What the model knows of a behavior.
#[derive(Clone, Copy)]
struct Caps {
    b: u8,
    launch: bool,
    activate: bool,
    tick: bool,
    deactivate: bool,
    memory: bool,
    dblock: bool,
}

fn caps(b: &'static ErasedBehavior<Sim>) -> Caps {
    let (activate, tick, deactivate) = b.callbacks();
    let n: u8 = b.name()[1..].parse().expect("a pool behavior");
    Caps {
        b: n,
        launch: matches!(n, 8 | 9),
        activate,
        tick,
        deactivate,
        memory: b.memory_type() != "()",
        dblock: b.dblock_type() != "()",
    }
}

/// One level of the model's active path.
struct Level {
    d: &'static Decider<Sim>,
    at: Place,
    since: f64,
    mask: u64,
    redecides: u16,
    /// Sequential groups: the first child index the next pick may take.
    cursor: usize,
    /// The memory block: the behavior's tick count.
    mem: Option<u32>,
}

/// A candidate that accepted: the deciders to activate, one per level (more
/// than one through delegating groups), its value and its DBlock.
struct Pick {
    chain: Vec<(&'static Decider<Sim>, Place)>,
    value: f32,
    dblock: Option<u32>,
}

/// Why a step stops.
enum Stop {
    /// The decider at the level concerned failed.
    Fail(Why),
    /// The redecide budget ran out.
    Limit(TickError),
    /// A callback panicked.
    Panic,
    /// A reference jumped: the group at level `.0 - 1` enters the pick
    /// (the way down to the target) once the levels from `.0` on are
    /// deactivated.
    Jump(usize, Pick),
}

impl From<ScriptedPanic> for Stop {
    fn from(_: ScriptedPanic) -> Self {
        Stop::Panic
    }
}

/// The model's [`TickReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub behavior: Option<ItemIdx>,
    pub activated: u16,
    pub deactivated: u16,
    pub redecides: u16,
    pub visited: u32,
    pub subset_violation: Option<ItemIdx>,
}

impl From<&TickReport> for Report {
    fn from(r: &TickReport) -> Self {
        Report {
            behavior: r.leaf,
            activated: r.activated,
            deactivated: r.deactivated,
            redecides: r.redecides,
            visited: r.visited,
            subset_violation: r.subset_violation,
        }
    }
}

/// How a tick ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Done(Report),
    Error(TickError),
    Panicked,
}

/// One level of an active path as the comparison sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathLevel {
    pub item: ItemIdx,
    pub since: f64,
    pub mask: u64,
    pub redecides: u16,
}

/// What the model's crowd shares (the model of a `TreeShared`), keyed by
/// the place (route) of the decider concerned.
pub struct Crowd {
    /// The production crowd's id, which tickets carry.
    pub id: u32,
    /// Agents active in each gated place.
    gates: HashMap<Vec<u8>, u32>,
    /// When an agent last entered each place with a global cooldown.
    stamps: HashMap<Vec<u8>, f64>,
    roles: HashMap<Vec<u8>, Role>,
    /// The deferred-action queue.
    pub queue: Vec<ActionRequest>,
    capacity: usize,
    pub lost: usize,
    launches: u32,
    /// The values in effect of [`GEN_TUNING`]'s tunables, in its order.
    pub tuned: [f64; 3],
}

/// Whether decider `d` has a shared check: a gate, a global cooldown or a
/// group role, given as a number or by a tunable.
fn has_sync(d: &Decider<Sim>) -> bool {
    let tuned = d.tuned_fields();
    d.pre.sync.is_some() || tuned.gate.is_some() || tuned.cooldown.is_some()
}

/// A decider's timer, gate and global cooldown for one tick: `None` where
/// it has none. A field that names a tunable is there whatever its value,
/// which is the crowd's in effect.
struct Fields {
    every: Option<f64>,
    gate: Option<u32>,
    cooldown: Option<f64>,
}

/// A group role: the agents (by crowd index) waiting in its lobby, those
/// admitted when their group formed and not yet entered, and how many are
/// inside.
#[derive(Default)]
struct Role {
    lobby: Vec<usize>,
    admitted: Vec<usize>,
    inside: u32,
}

/// What a role says to an agent that wants in.
enum RoleAnswer {
    Enter,
    Wait,
    Busy,
}

impl Crowd {
    pub fn new(id: u32, capacity: usize) -> Self {
        Crowd {
            id,
            gates: HashMap::new(),
            stamps: HashMap::new(),
            roles: HashMap::new(),
            queue: Vec::new(),
            capacity,
            lost: 0,
            launches: 0,
            tuned: [
                GEN_EVERY.default_value(),
                GEN_GATE.default_value() as f64,
                GEN_COOLDOWN.default_value(),
            ],
        }
    }

    /// Decider `d`'s timer, gate and cooldown in this tick.
    fn fields(&self, d: &Decider<Sim>) -> Fields {
        let (pre, tuned) = (d.pre, d.tuned_fields());
        let value = |index: usize| self.tuned[index];
        Fields {
            every: match tuned.every {
                Some(t) => Some(value(t.index())),
                None => (pre.every != 0.0).then_some(pre.every),
            },
            gate: match tuned.gate {
                Some(t) => Some(value(t.index()) as u32),
                None => (pre.sync.gate != 0).then_some(u32::from(pre.sync.gate)),
            },
            cooldown: match tuned.cooldown {
                Some(t) => Some(value(t.index())),
                None => (pre.sync.cooldown != 0.0).then_some(pre.sync.cooldown),
            },
        }
    }

    /// Agents holding a gate place, over all gates.
    pub fn gates_held(&self) -> u64 {
        self.gates.values().map(|&n| u64::from(n)).sum()
    }

    /// Agents waiting in, admitted to or inside any role.
    pub fn roles_held(&self) -> u64 {
        self.roles
            .values()
            .map(|r| (r.lobby.len() + r.admitted.len()) as u64 + u64::from(r.inside))
            .sum()
    }

    /// A global cooldown of `period` stamped at the place runs until
    /// `period` (less the timer slack) after its stamp; a stamp more than
    /// a period ahead of `now` has run out.
    fn cooldown_runs(&self, route: &[u8], now: f64, period: f64) -> bool {
        let last = self.stamps.get(route).copied().unwrap_or(f64::NEG_INFINITY);
        now - last < period - TIMER_SLACK && last - now < period
    }

    fn push(&mut self, r: ActionRequest) -> bool {
        if self.queue.len() >= self.capacity {
            self.lost += 1;
            return false;
        }
        self.queue.push(r);
        true
    }

    /// Agent `who` wants into the role at `route` of `size`.
    fn role_want(&mut self, route: &[u8], size: u8, who: usize) -> RoleAnswer {
        let role = self.roles.entry(route.to_vec()).or_default();
        if role.lobby.contains(&who) {
            return RoleAnswer::Wait;
        }
        if role.admitted.contains(&who) {
            return RoleAnswer::Enter;
        }
        if !role.admitted.is_empty() || role.inside > 0 {
            return RoleAnswer::Busy;
        }
        role.lobby.push(who);
        if role.lobby.len() == usize::from(size) {
            role.admitted = std::mem::take(&mut role.lobby);
            return RoleAnswer::Enter;
        }
        RoleAnswer::Wait
    }

    /// Agent `who` leaves the lobby, or gives up its admission.
    fn role_withdraw(&mut self, route: &[u8], who: usize) {
        if let Some(role) = self.roles.get_mut(route) {
            role.lobby.retain(|&a| a != who);
            role.admitted.retain(|&a| a != who);
        }
    }

    /// Whether agent `who` waits in or is admitted to the role.
    fn role_registered(&self, route: &[u8], who: usize) -> bool {
        self.roles
            .get(route)
            .is_some_and(|r| r.lobby.contains(&who) || r.admitted.contains(&who))
    }
}

/// The reference interpreter's per-agent state.
pub struct Model {
    root: &'static Decider<Sim>,
    /// The production tree, for the memory slot numbers that tickets carry.
    tree: &'static GenTree,
    limit: u32,
    /// The agent's index in its crowd.
    who: usize,
    path: Vec<Level>,
    timers: HashMap<Vec<u8>, f64>,
    /// Shuffle groups: the children run in the current round.
    rounds: HashMap<Vec<u8>, u64>,
    /// Deferred actions: the state and ticket of each place's last launch.
    actions: HashMap<Vec<u8>, (ActionState, Ticket)>,
    /// Roles whose decider this tick evaluated.
    touched: Vec<Vec<u8>>,
    rng: u64,
}

impl Model {
    /// A fresh agent: idle, timers never run, no shuffle round begun, the
    /// generator in state `rng` (from [`AgentMemory::rng_state`]).
    pub fn new(built: &Built, who: usize, rng: u64) -> Self {
        Model {
            root: built.root,
            tree: built.tree,
            limit: built.tree.redecide_limit(),
            who,
            path: Vec::new(),
            timers: HashMap::new(),
            rounds: HashMap::new(),
            actions: HashMap::new(),
            touched: Vec::new(),
            rng,
        }
    }

    /// The state of the deferred action at `route`.
    pub fn action(&self, route: &[u8]) -> ActionState {
        self.actions.get(route).map_or(ActionState::None, |a| a.0)
    }

    /// `AgentMemory::complete`: the pending launch with this ticket gets
    /// `outcome`.
    pub fn complete(&mut self, ticket: Ticket, outcome: bt_core::Outcome) -> bool {
        for (state, t) in self.actions.values_mut() {
            if *t == ticket && *state == ActionState::Pending {
                *state = match outcome {
                    bt_core::Outcome::Succeeded => ActionState::Succeeded,
                    bt_core::Outcome::Failed => ActionState::Failed,
                };
                return true;
            }
        }
        false
    }

    /// `deactivate_all`: every level deactivated, deepest first, with its
    /// `deactivate` and no events; then the agent leaves every lobby.
    pub fn deactivate_all(&mut self, sim: &mut Sim, input: &TickInput, crowd: &mut Crowd) {
        let mut run = Run::new(self, sim, input, crowd);
        if run.deactivate_to(0, Why::Stopped).is_err() {
            unreachable!("no panic is scripted here");
        }
        run.leave_lobbies();
    }

    /// `AgentMemory::reset`: what the agent holds is given back without
    /// callbacks, and its timers, rounds, roles and actions are cleared;
    /// the generator is kept.
    pub fn reset(&mut self, crowd: &mut Crowd) {
        let sim = &mut Sim::default();
        let input = TickInput::new(0.0, 0.0);
        Run::new(self, sim, &input, crowd).abandon();
        self.timers.clear();
        self.rounds.clear();
        self.actions.clear();
    }

    pub fn rng_state(&self) -> u64 {
        self.rng
    }

    /// Levels of the active path holding a memory block value.
    pub fn live_blocks(&self) -> usize {
        self.path.iter().filter(|l| l.mem.is_some()).count()
    }

    pub fn path(&self) -> Vec<PathLevel> {
        self.path
            .iter()
            .map(|l| PathLevel {
                item: ItemIdx(l.at.index),
                since: l.since,
                mask: l.mask,
                redecides: l.redecides,
            })
            .collect()
    }

    /// The last `decide` time of the timer at `route` (never: -∞).
    pub fn timer(&self, route: &[u8]) -> f64 {
        self.timers.get(route).copied().unwrap_or(f64::NEG_INFINITY)
    }

    /// One tick: the events it emits and how it ended.
    pub fn tick(
        &mut self,
        sim: &mut Sim,
        input: &TickInput,
        crowd: &mut Crowd,
    ) -> (Vec<Event>, Outcome) {
        let mut run = Run::new(self, sim, input, crowd);
        let outcome = run.run();
        (run.events, outcome)
    }
}

struct Run<'a> {
    m: &'a mut Model,
    sim: &'a mut Sim,
    input: &'a TickInput,
    c: &'a mut Crowd,
    events: Vec<Event>,
    report: Report,
    redecides: u32,
    /// The root was entered with nothing to run and found no child: the
    /// agent stays idle, and the root's entry and exit do not count.
    stays_idle: bool,
    /// A reference whose jump was refused: never on the path, it is the
    /// failed child its group's redecide masks.
    refused: Option<(&'static Decider<Sim>, Place)>,
}

fn node(d: &'static Decider<Sim>, at: &Place) -> NodeRef {
    NodeRef {
        index: ItemIdx(at.index),
        name: d.name,
        depth: at.depth() as u8,
    }
}

fn passes(word: u64, t: &FlagTest) -> bool {
    word & t.all == t.all
        && (t.any == 0 || word & t.any != 0)
        && word & t.none == 0
        && (t.not_all == 0 || word & t.not_all != t.not_all)
}

fn xorshift64star(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn policy(d: &'static Decider<Sim>) -> Policy {
    d.policy().expect("a group")
}

impl<'a> Run<'a> {
    fn new(m: &'a mut Model, sim: &'a mut Sim, input: &'a TickInput, c: &'a mut Crowd) -> Self {
        Run {
            m,
            sim,
            input,
            c,
            events: Vec::new(),
            report: Report::default(),
            redecides: 0,
            stays_idle: false,
            refused: None,
        }
    }

    fn emit(&mut self, e: Event) {
        self.events.push(e);
    }

    /// A panic: what every level holds is given back, deepest first, with
    /// no callbacks and no events; the agent leaves every lobby; the path
    /// is cleared.
    fn abandon(&mut self) {
        while let Some(l) = self.m.path.pop() {
            self.release(&l, false);
        }
        self.leave_lobbies();
    }

    fn leave_lobbies(&mut self) {
        let who = self.m.who;
        let routes: Vec<Vec<u8>> = self.c.roles.keys().cloned().collect();
        for route in routes {
            self.c.role_withdraw(&route, who);
        }
    }

    /// The end of a tick: the agent leaves the lobbies of the roles it did
    /// not ask again.
    fn sweep(&mut self) {
        let who = self.m.who;
        let touched = std::mem::take(&mut self.m.touched);
        let routes: Vec<Vec<u8>> = self.c.roles.keys().cloned().collect();
        for route in routes {
            if !touched.contains(&route) && self.c.role_registered(&route, who) {
                self.c.role_withdraw(&route, who);
            }
        }
    }

    /// Gives back what level `l`, leaving the path, holds: its gate place,
    /// its place in a role, and its pending deferred action (cancelled;
    /// traced when `events`).
    fn release(&mut self, l: &Level, events: bool) {
        let sync = l.d.pre.sync;
        let route = &l.at.route;
        if self.c.fields(l.d).gate.is_some() {
            let n = self.c.gates.get_mut(route).expect("a held gate");
            *n -= 1;
        }
        if sync.together != 0 {
            let role = self.c.roles.get_mut(route).expect("a role");
            role.inside -= 1;
        }
        let Some(&(state, ticket)) = self.m.actions.get(route) else {
            return;
        };
        if state == ActionState::Pending {
            if events {
                self.emit(Event::Cancelled {
                    node: node(l.d, &l.at),
                    ticket,
                });
            }
            self.c.push(ActionRequest {
                agent: ticket.agent(),
                item: ItemIdx(l.at.index),
                ticket,
                op: ActionOp::Cancel,
            });
        }
        self.m
            .actions
            .insert(route.clone(), (ActionState::None, ticket));
    }

    fn run(&mut self) -> Outcome {
        let i = *self.input;
        self.emit(Event::Start {
            agent: i.agent,
            now: i.now,
            dt: i.dt,
            decision: i.decision,
            stimuli: i.stimuli,
        });
        for l in &mut self.m.path {
            l.mask = 0;
            l.redecides = 0;
        }
        let mut result = if self.m.path.is_empty() {
            self.start()
        } else {
            self.walk(0)
        };
        // A jump to the root restarts the whole tree.
        while let Err(Stop::Jump(0, pick)) = result {
            result = self
                .deactivate_to(0, Why::Preempted)
                .and_then(|()| self.activate(0, pick));
        }
        let result = match result {
            Err(Stop::Fail(why)) => self.deactivate_to(0, why).map(|()| self.emit(Event::Idle)),
            other => other,
        };
        if self.stays_idle {
            self.report.activated -= 1;
            self.report.deactivated -= 1;
        }
        match result {
            Ok(()) => {
                self.end();
                Outcome::Done(self.report)
            }
            Err(Stop::Limit(e)) => {
                self.end();
                Outcome::Error(e)
            }
            Err(Stop::Panic) => {
                // Abandoned: idle, no callbacks; slots and generator kept.
                self.abandon();
                self.m.touched.clear();
                Outcome::Panicked
            }
            Err(Stop::Fail(_)) => unreachable!("failures stop at the root"),
            Err(Stop::Jump(..)) => unreachable!("jumps stop at the root"),
        }
    }

    fn end(&mut self) {
        self.sweep();
        let leaf = self.m.path.last().map(|l| node(l.d, &l.at));
        self.report.behavior = leaf.map(|n| n.index);
        let visited = self.report.visited;
        self.emit(Event::End { leaf, visited });
    }

    /// An idle agent starts from the root.
    fn start(&mut self) -> Result<(), Stop> {
        let root = self.m.root;
        match self.evaluate(root, Place::root())? {
            Some(pick) => {
                self.keep(None, &pick);
                self.activate(0, pick)
            }
            None => {
                self.emit(Event::Idle);
                Ok(())
            }
        }
    }

    /// Walks down the active path from level `k`.
    fn walk(&mut self, k: usize) -> Result<(), Stop> {
        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
        self.report.visited += 1;
        self.emit(Event::Visit { node: node(d, &at) });
        if let Some(b) = d.behavior()
            && (caps(b).tick || caps(b).launch)
            && !self.tick_behavior(k)?
        {
            return Err(Stop::Fail(Why::Ended));
        }
        if !d.is_group() {
            return Ok(());
        }
        let active = *self.m.path[k + 1].at.route.last().expect("a child") as usize;
        let challenger = match policy(d) {
            // Earlier siblings may preempt, in order.
            Policy::Prioritized => {
                let mut found = None;
                for ci in 0..active {
                    let c = d.children()[ci];
                    if let Some(pick) = self.evaluate(c, at.child(d, ci))? {
                        found = Some(pick);
                        break;
                    }
                }
                found
            }
            Policy::Scored => self.challenge(k, active)?,
            Policy::Sequential | Policy::Random | Policy::Shuffle => None,
            // A new selection replaces the running child tree, or fails
            // the slot group when the selected child does not accept.
            Policy::Slot => match self.selected(d) {
                Some(ci) if ci == active => None,
                Some(ci) => match self.evaluate(d.children()[ci], at.child(d, ci))? {
                    Some(pick) => Some(pick),
                    None => return Err(Stop::Fail(Why::Reselected)),
                },
                None => return Err(Stop::Fail(Why::Reselected)),
            },
        };
        if let Some(pick) = challenger {
            self.keep(Some(k), &pick);
            let (by, by_at) = &pick.chain[0];
            self.emit(Event::Preempt {
                group: node(d, &at),
                by: node(by, by_at),
            });
            self.deactivate_to(k + 1, Why::Preempted)?;
            return self.choose(k, Some(pick), false);
        }
        match self.walk(k + 1) {
            Err(Stop::Fail(why)) => {
                self.child_failed(k, why)?;
                self.choose(k, None, false)
            }
            Err(Stop::Jump(j, pick)) if j == k + 1 => {
                self.deactivate_to(j, Why::Preempted)?;
                self.choose(k, Some(pick), false)
            }
            other => other,
        }
    }

    /// A scored group's children challenge its active child `active`.
    fn challenge(&mut self, k: usize, active: usize) -> Result<Option<Pick>, Stop> {
        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
        // The current score: the active child's, through delegation.
        let mut j = k + 1;
        while self.m.path[j]
            .d
            .flags
            .contains(DeciderFlags::DELEGATE_DECIDE)
            && j + 1 < self.m.path.len()
        {
            j += 1;
        }
        let (sd, sat) = (self.m.path[j].d, self.m.path[j].at.clone());
        let current = if sd.decide.is_some() {
            self.call_decide(sd, &sat)?.map_or(0.0, |(v, _)| v)
        } else {
            1.0
        };
        let mut best: Option<Pick> = None;
        let mut bar = current;
        for (ci, &c) in d.children().iter().enumerate() {
            if ci == active {
                continue;
            }
            if let Some(pick) = self.evaluate(c, at.child(d, ci))?
                && pick.value > bar
            {
                bar = pick.value;
                best = Some(pick);
            }
        }
        Ok(best)
    }

    /// Switching, activation and masked redecides for the group at level
    /// `k`: runs `next` (or picks a child by the policy) until a child
    /// runs; a child that fails is masked and the group redecides.
    /// `first`: the group was just activated (a failure to find any child
    /// breaks the Subset Rule).
    fn choose(&mut self, k: usize, mut next: Option<Pick>, mut first: bool) -> Result<(), Stop> {
        loop {
            let pick = match next.take() {
                Some(pick) => pick,
                None => match self.select_at(k)? {
                    Some(pick) => {
                        self.keep(Some(k), &pick);
                        pick
                    }
                    None => {
                        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
                        // An idle agent's root without a group behavior
                        // or shared checks: the agent stays idle, and only
                        // the root's own `decide` can have broken the
                        // Subset Rule.
                        if first && k == 0 && d.behavior().is_none() && !has_sync(d) {
                            self.stays_idle = true;
                            if d.decide.is_some() {
                                self.report.subset_violation = Some(ItemIdx(at.index));
                                self.emit(Event::SubsetViolation {
                                    group: node(d, &at),
                                });
                            }
                            return Err(Stop::Fail(Why::NoChild));
                        }
                        return Err(Stop::Fail(if first {
                            self.report.subset_violation = Some(ItemIdx(at.index));
                            self.emit(Event::SubsetViolation {
                                group: node(d, &at),
                            });
                            Why::NoChild
                        } else if policy(d) == Policy::Sequential {
                            Why::Ended
                        } else {
                            Why::NoChild
                        }));
                    }
                },
            };
            match self.activate(k + 1, pick) {
                Err(Stop::Fail(why)) => {
                    self.child_failed(k, why)?;
                    first = false;
                }
                Err(Stop::Jump(j, pick)) if j == k + 1 => {
                    self.deactivate_to(j, Why::Preempted)?;
                    next = Some(pick);
                    first = false;
                }
                other => return other,
            }
        }
    }

    /// A masked redecide: the child of level `k` failed for `why`.
    fn child_failed(&mut self, k: usize, why: Why) -> Result<(), Stop> {
        let (fd, fat) = match self.m.path.get(k + 1) {
            Some(l) => (l.d, l.at.clone()),
            None => self.refused.take().expect("a refused reference"),
        };
        self.deactivate_to(k + 1, why)?;
        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
        if self.redecides >= self.m.limit {
            self.emit(Event::RedecideLimit {
                group: node(d, &at),
            });
            self.deactivate_to(0, Why::Error)?;
            return Err(Stop::Limit(TickError::RedecideLimit {
                group: d.name,
                item: ItemIdx(at.index),
                limit: self.m.limit,
            }));
        }
        self.redecides += 1;
        self.report.redecides += 1;
        let ci = *fat.route.last().expect("a child") as usize;
        let level = &mut self.m.path[k];
        level.mask |= 1 << ci;
        level.redecides += 1;
        if policy(d) == Policy::Sequential {
            level.cursor = ci + 1;
        }
        let mask = level.mask;
        self.emit(Event::Redecide {
            group: node(d, &at),
            failed: node(fd, &fat),
            mask,
        });
        if d.flags.contains(DeciderFlags::CALL_DECIDE_ON_REDECIDE) {
            self.report.visited += 1;
            if let Some(by) = self.flag_rejection(d) {
                self.emit(Event::Rejected {
                    node: node(d, &at),
                    by,
                });
                return Err(Stop::Fail(Why::Rejected));
            }
            if d.decide.is_some() && self.call_decide(d, &at)?.is_none() {
                return Err(Stop::Fail(Why::Rejected));
            }
        }
        Ok(())
    }

    /// Activation: activates `pick.chain[0]` at level `k`, ticks it, and
    /// goes on down to a leaf.
    fn activate(&mut self, k: usize, mut pick: Pick) -> Result<(), Stop> {
        let (d, at) = pick.chain.remove(0);
        let last = pick.chain.is_empty();
        debug_assert_eq!(self.m.path.len(), k);
        if d.is_reference() {
            return self.jump(k, d, at);
        }
        self.claim(d, &at);
        self.m.path.push(Level {
            d,
            at: at.clone(),
            since: self.input.now,
            mask: 0,
            redecides: 0,
            cursor: 0,
            mem: None,
        });
        self.report.activated += 1;
        let behavior = d.behavior();
        if let Some(b) = behavior {
            let caps = caps(b);
            if caps.memory {
                harness::callback("memory default")?;
                self.m.path[k].mem = Some(0);
            }
            if caps.activate {
                harness::callback("activate")?;
                let dblock = if last && caps.dblock {
                    pick.dblock
                } else {
                    None
                };
                let seen = self.seen(k);
                let mem = self.m.path[k].mem.as_mut();
                if !self.sim.on_activate(caps.b, mem, dblock, seen) {
                    self.emit(Event::ActivateFailed {
                        node: node(d, &at),
                        behavior: b.name(),
                    });
                    return Err(Stop::Fail(Why::ActivateFailed));
                }
            }
            if caps.launch && !self.launch(k)? {
                self.emit(Event::ActivateFailed {
                    node: node(d, &at),
                    behavior: b.name(),
                });
                return Err(Stop::Fail(Why::ActivateFailed));
            }
        }
        self.emit(Event::Activated {
            node: node(d, &at),
            behavior: behavior.map(|b| b.name()),
            flags: d.behavior_flags,
        });
        if let Some(b) = behavior
            && (caps(b).tick || caps(b).launch)
            && !self.tick_behavior(k)?
        {
            return Err(Stop::Fail(Why::Ended));
        }
        if !d.is_group() {
            return Ok(());
        }
        if last {
            self.choose(k, None, true)
        } else {
            self.choose(k, Some(pick), false)
        }
    }

    /// Reference `d` at `at`, picked at level `k`, jumps to its target:
    /// the deciders the jump enters are asked top down (the groups on the
    /// way as candidates without delegation, the target as a candidate);
    /// if one refuses the reference fails in its group, else the frame of
    /// the common ancestor enters the way down (`Stop::Jump`).
    fn jump(&mut self, k: usize, d: &'static Decider<Sim>, at: Place) -> Result<(), Stop> {
        assert!(!has_sync(d), "model: references have no shared checks");
        if self.redecides >= self.m.limit {
            let (g, gat) = (self.m.path[k - 1].d, self.m.path[k - 1].at.clone());
            self.emit(Event::RedecideLimit {
                group: node(g, &gat),
            });
            self.deactivate_to(0, Why::Error)?;
            return Err(Stop::Limit(TickError::RedecideLimit {
                group: g.name,
                item: ItemIdx(gat.index),
                limit: self.m.limit,
            }));
        }
        // The target's way from the root, followed by decider ids.
        let mut way = vec![(self.m.root, Place::root())];
        for t in &d.target()[1..] {
            let (g, gat) = way.last().cloned().expect("the root");
            let ci = g
                .children()
                .iter()
                .position(|c| c.id == t.id)
                .expect("the target path leads down");
            way.push((g.children()[ci], gat.child(g, ci)));
        }
        let depth = way.len() - 1;
        let mut j = 0;
        while j < k && j <= depth && self.m.path[j].at == way[j].1 {
            j += 1;
        }
        let j = j.min(depth);
        let mut target = None;
        for m in j..=depth {
            let (c, cat) = way[m].clone();
            if m > 0 {
                let g = way[m - 1].0;
                let ci = *cat.route.last().expect("a child") as usize;
                if policy(g) == Policy::Slot && self.selected(g) != Some(ci) {
                    self.emit(Event::Rejected {
                        node: node(c, &cat),
                        by: Rejection::NoSelection,
                    });
                    break;
                }
            }
            if m == depth {
                target = self.evaluate(c, cat)?;
            } else if !self.way_accepts(c, &cat)? {
                break;
            }
        }
        let Some(target) = target else {
            self.refused = Some((d, at));
            return Err(Stop::Fail(Why::Refused));
        };
        // Only a jump made counts against the budget: a refused one is the
        // failure of its reference, one masked redecide.
        self.redecides += 1;
        let (t, tat) = way[depth].clone();
        self.emit(Event::Jump {
            from: node(d, &at),
            to: node(t, &tat),
        });
        let mut chain: Vec<_> = way[j..depth].to_vec();
        chain.extend(target.chain);
        let pick = Pick {
            chain,
            value: target.value,
            dblock: target.dblock,
        };
        self.keep(j.checked_sub(1), &pick);
        Err(Stop::Jump(j, pick))
    }

    /// The agents in the gated place `at`, this one not counted: asked
    /// about a decider it is already in (a jump's restart, which leaves it
    /// before it enters again), an agent's own gate place counts as free.
    fn others_inside(&self, at: &Place) -> u32 {
        let inside = self.c.gates.get(&at.route).copied().unwrap_or(0);
        let own = self.m.path.get(at.route.len()).is_some_and(|l| l.at == *at);
        inside - u32::from(own)
    }

    /// A group on the way to a jump's target, asked as a candidate would
    /// be but without delegating: its flag tests, timer, gate, cooldown,
    /// slot selection, `decide` and group role.
    fn way_accepts(&mut self, d: &'static Decider<Sim>, at: &Place) -> Result<bool, Stop> {
        self.report.visited += 1;
        let mut by = self.flag_rejection(d);
        let fields = self.c.fields(d);
        if by.is_none()
            && let Some(every) = fields.every
        {
            let now = self.input.now;
            let last = self.m.timer(&at.route);
            if now - last < every - TIMER_SLACK && last - now < every {
                by = Some(Rejection::Timer);
            } else {
                self.m.timers.insert(at.route.clone(), now);
            }
        }
        if by.is_none()
            && let Some(gate) = fields.gate
            && self.others_inside(at) >= gate
        {
            by = Some(Rejection::Gate);
        }
        if by.is_none()
            && let Some(cooldown) = fields.cooldown
            && self.c.cooldown_runs(&at.route, self.input.now, cooldown)
        {
            by = Some(Rejection::Cooldown);
        }
        if by.is_none() && policy(d) == Policy::Slot && self.selected(d).is_none() {
            by = Some(Rejection::NoSelection);
        }
        if let Some(by) = by {
            self.emit(Event::Rejected {
                node: node(d, at),
                by,
            });
            return Ok(false);
        }
        if d.decide.is_some() && self.call_decide(d, at)?.is_none() {
            return Ok(false);
        }
        if let Some(by) = self.role_rejection(d, at) {
            self.emit(Event::Rejected {
                node: node(d, at),
                by,
            });
            return Ok(false);
        }
        Ok(true)
    }

    /// Takes the gate place, cooldown and role place of `d` at `at`, about
    /// to be activated. Its evaluation just found them free, and nothing in
    /// between (one agent at a time) takes them, so a claim never fails.
    fn claim(&mut self, d: &'static Decider<Sim>, at: &Place) {
        let sync = d.pre.sync;
        let fields = self.c.fields(d);
        let route = &at.route;
        if let Some(gate) = fields.gate {
            let n = self.c.gates.entry(route.clone()).or_insert(0);
            assert!(*n < gate, "model: a gate claim failed");
            *n += 1;
        }
        if let Some(cooldown) = fields.cooldown {
            let now = self.input.now;
            assert!(!self.c.cooldown_runs(route, now, cooldown));
            self.c.stamps.insert(route.clone(), now);
        }
        if sync.together != 0 {
            let who = self.m.who;
            let role = self.c.roles.get_mut(route).expect("a role");
            assert!(role.admitted.contains(&who), "model: a role claim failed");
            role.admitted.retain(|&a| a != who);
            role.inside += 1;
        }
    }

    /// Launches the deferred action of the behavior at level `k`: false
    /// when its `launch` declines or the queue is full.
    fn launch(&mut self, k: usize) -> Result<bool, Stop> {
        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
        harness::callback("launch")?;
        let seen = self.seen(k);
        let b = caps(d.behavior().expect("a behavior")).b;
        let Some(action) = self.sim.on_launch(b, seen) else {
            return Ok(false);
        };
        self.c.launches += 1;
        let serial = (self.c.launches - 1) % ((1 << 30) - 1) + 1;
        let slot = self
            .m
            .tree
            .node(ItemIdx(at.index))
            .action_slot()
            .expect("an action slot");
        let agent = self.input.agent;
        let ticket = Ticket::new(self.c.id, agent, slot as u16, serial);
        let queued = self.c.push(ActionRequest {
            agent,
            item: ItemIdx(at.index),
            ticket,
            op: ActionOp::Launch(action),
        });
        if !queued {
            return Ok(false);
        }
        self.m
            .actions
            .insert(at.route.clone(), (ActionState::Pending, ticket));
        self.emit(Event::Launched {
            node: node(d, &at),
            action,
            ticket,
        });
        Ok(true)
    }

    /// The leaf: the behavior at level `k` ticks. A deferred action's
    /// behavior first sees a report of its action; without a `tick` of its
    /// own it runs while the action is pending.
    fn tick_behavior(&mut self, k: usize) -> Result<bool, Stop> {
        let (d, at) = (self.m.path[k].d, self.m.path[k].at.clone());
        let b = d.behavior().expect("a behavior");
        let caps = caps(b);
        let state = self.m.action(&at.route);
        if caps.launch && matches!(state, ActionState::Succeeded | ActionState::Failed) {
            self.emit(Event::ActionReported {
                node: node(d, &at),
                state,
            });
        }
        let running = if caps.tick {
            harness::callback("tick")?;
            let seen = self.seen(k);
            let mem = self.m.path[k].mem.as_mut();
            self.sim.on_tick(caps.b, mem, seen)
        } else {
            state == ActionState::Pending
        };
        self.emit(Event::Ticked {
            node: node(d, &at),
            behavior: b.name(),
            running,
        });
        Ok(running)
    }

    /// Deactivates the levels from the deepest up to `level`: behavior
    /// `deactivate`, then its memory block is dropped.
    fn deactivate_to(&mut self, level: usize, why: Why) -> Result<(), Stop> {
        while self.m.path.len() > level {
            let j = self.m.path.len() - 1;
            let why = if j == level {
                why
            } else {
                match why {
                    Why::Preempted | Why::Error | Why::Stopped | Why::Reselected => why,
                    _ => Why::ParentLeft,
                }
            };
            let seen = self.seen(j);
            let behavior = self.m.path[j].d.behavior();
            if let Some(b) = behavior
                && caps(b).deactivate
            {
                // A panic here leaves the level on the path: `abandon`
                // gives back what it holds.
                harness::callback("deactivate")?;
                let mem = self.m.path[j].mem.as_mut();
                self.sim.on_deactivate(caps(b).b, mem, seen);
            }
            let l = self.m.path.pop().expect("a level");
            self.release(&l, true);
            if let Some(b) = behavior
                && caps(b).memory
            {
                harness::callback("memory drop")?;
            }
            self.report.deactivated += 1;
            self.emit(Event::Deactivated {
                node: node(l.d, &l.at),
                why,
            });
        }
        Ok(())
    }

    fn seen(&self, k: usize) -> Ctx<'static> {
        let l = &self.m.path[k];
        let i = self.input;
        // Built from the model's own state, field by field.
        let mut cx = Ctx::at(i.now, i.dt)
            .with_since(l.since)
            .with_flags(l.d.behavior_flags);
        cx.decision = i.decision;
        cx.stimuli = i.stimuli;
        cx.agent = i.agent;
        cx.depth = k as u8;
        if l.d.behavior().is_some_and(|b| caps(b).launch) {
            cx.action = self.m.action(&l.at.route);
        }
        cx
    }

    /// The group at level `k` picks among its unmasked children.
    fn select_at(&mut self, k: usize) -> Result<Option<Pick>, Stop> {
        let l = &self.m.path[k];
        let (d, at, mask, cursor) = (l.d, l.at.clone(), l.mask, l.cursor);
        self.select(d, &at, mask, cursor)
    }

    /// Group `d` at `at` picks a child by its policy, skipping `mask`ed
    /// children and (sequential) those before `cursor`. Nothing is
    /// recorded: the caller [keeps](Self::keep) the pick it runs.
    fn select(
        &mut self,
        d: &'static Decider<Sim>,
        at: &Place,
        mask: u64,
        cursor: usize,
    ) -> Result<Option<Pick>, Stop> {
        let children = d.children();
        let open = |ci: usize| mask & (1 << ci) == 0;
        match policy(d) {
            Policy::Slot => match self.selected(d) {
                Some(ci) if open(ci) => self.evaluate(children[ci], at.child(d, ci)),
                _ => Ok(None),
            },
            Policy::Prioritized | Policy::Sequential => {
                for (ci, &c) in children.iter().enumerate() {
                    if ci >= cursor
                        && open(ci)
                        && let Some(pick) = self.evaluate(c, at.child(d, ci))?
                    {
                        return Ok(Some(pick));
                    }
                }
                Ok(None)
            }
            Policy::Random => {
                let all: Vec<usize> = (0..children.len()).filter(|&ci| open(ci)).collect();
                self.draw(d, at, &all)
            }
            Policy::Shuffle => {
                let used = self.m.rounds.get(&at.route).copied().unwrap_or(0);
                let fresh: Vec<usize> = (0..children.len())
                    .filter(|&ci| open(ci) && used & (1 << ci) == 0)
                    .collect();
                if let Some(pick) = self.draw(d, at, &fresh)? {
                    return Ok(Some(pick));
                }
                if used == 0 {
                    return Ok(None);
                }
                let again: Vec<usize> = (0..children.len())
                    .filter(|&ci| open(ci) && used & (1 << ci) != 0)
                    .collect();
                self.draw(d, at, &again)
            }
            Policy::Scored => {
                let mut best: Option<Pick> = None;
                for (ci, &c) in children.iter().enumerate() {
                    if open(ci)
                        && let Some(pick) = self.evaluate(c, at.child(d, ci))?
                        && best.as_ref().is_none_or(|b| pick.value > b.value)
                    {
                        best = Some(pick);
                    }
                }
                Ok(best)
            }
        }
    }

    /// A weighted draw among the children `among` of `d` that accept.
    fn draw(
        &mut self,
        d: &'static Decider<Sim>,
        at: &Place,
        among: &[usize],
    ) -> Result<Option<Pick>, Stop> {
        let mut best: Option<Pick> = None;
        let mut total = 0.0f64;
        for &ci in among {
            let c = d.children()[ci];
            if let Some(pick) = self.evaluate(c, at.child(d, ci))? {
                total += f64::from(pick.value);
                let take = best.is_none() || self.next_f64() * total < f64::from(pick.value);
                if take {
                    best = Some(pick);
                }
            }
        }
        Ok(best)
    }

    fn next_f64(&mut self) -> f64 {
        let x = xorshift64star(&mut self.m.rng);
        (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A pick is kept: every shuffle group it goes through (the selecting
    /// group at level `from`, then delegating groups on the chain) has run
    /// the next child.
    fn keep(&mut self, from: Option<usize>, pick: &Pick) {
        let mut steps: Vec<(&'static Decider<Sim>, Place, usize)> = Vec::new();
        if let Some(k) = from {
            let l = &self.m.path[k];
            let ci = *pick.chain[0].1.route.last().expect("a child") as usize;
            steps.push((l.d, l.at.clone(), ci));
        }
        for w in pick.chain.windows(2) {
            let ci = *w[1].1.route.last().expect("a child") as usize;
            steps.push((w[0].0, w[0].1.clone(), ci));
        }
        for (g, at, ci) in steps {
            if g.policy() == Some(Policy::Shuffle) {
                let all = (1u64 << g.children().len()) - 1;
                let used = self.m.rounds.entry(at.route).or_insert(0);
                if *used & (1 << ci) != 0 {
                    // Only drawn when no fresh child accepted: a new round.
                    *used = 0;
                }
                *used |= 1 << ci;
                if *used == all {
                    *used = 0;
                }
            }
        }
    }

    /// Activation and preconditions: tries candidate `d` at `at`:
    /// preconditions, cheapest first, then its `decide` (or, delegating,
    /// its children).
    fn evaluate(&mut self, d: &'static Decider<Sim>, at: Place) -> Result<Option<Pick>, Stop> {
        self.report.visited += 1;
        if let Some(by) = self.flag_rejection(d) {
            self.emit(Event::Rejected {
                node: node(d, &at),
                by,
            });
            return Ok(None);
        }
        let fields = self.c.fields(d);
        if let Some(every) = fields.every {
            let now = self.input.now;
            let last = self.m.timer(&at.route);
            if now - last < every - TIMER_SLACK && last - now < every {
                self.emit(Event::Rejected {
                    node: node(d, &at),
                    by: Rejection::Timer,
                });
                return Ok(None);
            }
            self.m.timers.insert(at.route.clone(), now);
        }
        let gate_full = fields
            .gate
            .is_some_and(|gate| self.others_inside(&at) >= gate);
        let cooling = fields
            .cooldown
            .is_some_and(|cooldown| self.c.cooldown_runs(&at.route, self.input.now, cooldown));
        if gate_full || cooling {
            self.emit(Event::Rejected {
                node: node(d, &at),
                by: if gate_full {
                    Rejection::Gate
                } else {
                    Rejection::Cooldown
                },
            });
            return Ok(None);
        }
        if d.is_group() && policy(d) == Policy::Slot && self.selected(d).is_none() {
            self.emit(Event::Rejected {
                node: node(d, &at),
                by: Rejection::NoSelection,
            });
            return Ok(None);
        }
        if d.flags.contains(DeciderFlags::DELEGATE_DECIDE) {
            return match self.select(d, &at, 0, 0)? {
                Some(mut pick) => {
                    if let Some(by) = self.role_rejection(d, &at) {
                        self.emit(Event::Rejected {
                            node: node(d, &at),
                            by,
                        });
                        return Ok(None);
                    }
                    self.emit(Event::Decided {
                        node: node(d, &at),
                        value: pick.value,
                    });
                    pick.chain.insert(0, (d, at));
                    Ok(Some(pick))
                }
                None => {
                    self.emit(Event::Rejected {
                        node: node(d, &at),
                        by: Rejection::NoChild,
                    });
                    Ok(None)
                }
            };
        }
        let (value, dblock) = if d.decide.is_some() {
            match self.call_decide(d, &at)? {
                Some(accepted) => accepted,
                None => return Ok(None),
            }
        } else {
            (1.0, None)
        };
        if let Some(by) = self.role_rejection(d, &at) {
            self.emit(Event::Rejected {
                node: node(d, &at),
                by,
            });
            return Ok(None);
        }
        let takes_dblock = d.behavior().is_some_and(|b| caps(b).dblock);
        Ok(Some(Pick {
            chain: vec![(d, at)],
            value,
            dblock: dblock.filter(|_| takes_dblock),
        }))
    }

    /// The group role of a candidate that accepted: it registers in the
    /// lobby, and goes on only once its group has formed.
    fn role_rejection(&mut self, d: &'static Decider<Sim>, at: &Place) -> Option<Rejection> {
        let size = d.pre.sync.together;
        if size == 0 {
            return None;
        }
        if !self.m.touched.contains(&at.route) {
            self.m.touched.push(at.route.clone());
        }
        match self.c.role_want(&at.route, size, self.m.who) {
            RoleAnswer::Enter => None,
            RoleAnswer::Wait => Some(Rejection::Waiting),
            RoleAnswer::Busy => Some(Rejection::RoleBusy),
        }
    }

    /// The child slot group `d` selects for the agent, if it has one.
    fn selected(&self, d: &'static Decider<Sim>) -> Option<usize> {
        let ci = (d.select.expect("a slot group selects"))(self.sim)?;
        (ci < d.children().len()).then_some(ci)
    }

    fn flag_rejection(&self, d: &'static Decider<Sim>) -> Option<Rejection> {
        if !passes(self.input.decision, &d.pre.decision) {
            Some(Rejection::Decision)
        } else if !passes(self.input.stimuli, &d.pre.stimuli) {
            Some(Rejection::Stimuli)
        } else {
            None
        }
    }

    /// Calls `d`'s `decide`: `Some((value, dblock))` when it accepts (above
    /// 0; NaN rejects; +∞ is clamped to `f32::MAX`).
    fn call_decide(
        &mut self,
        d: &'static Decider<Sim>,
        at: &Place,
    ) -> Result<Option<(f32, Option<u32>)>, Stop> {
        let n = harness::callback("decide")?;
        let value = self.sim.answer(d.id as usize);
        if value > 0.0 {
            let value = value.min(f32::MAX);
            self.emit(Event::Decided {
                node: node(d, at),
                value,
            });
            Ok(Some((value, Some(n))))
        } else {
            self.emit(Event::Declined {
                node: node(d, at),
                value,
            });
            self.emit(Event::Rejected {
                node: node(d, at),
                by: Rejection::Decide,
            });
            Ok(None)
        }
    }
}

// ---------------------------------------------------------------------------
// Running production and model side by side.

/// Whether two traces are the same, event for event: as `==` says, but a
/// `decide` that returned NaN in both ([`Event::Declined`]) is the same
/// (NaN is unequal to itself).
pub fn same_events(a: &[Event], b: &[Event]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x == y
                || matches!((x, y), (
                    Event::Declined { node: n, value: v },
                    Event::Declined { node: m, value: w },
                ) if n == m && v.is_nan() && w.is_nan())
        })
}

/// Collects production events.
#[derive(Default)]
pub struct Events(pub Vec<Event>);

impl Tracer for Events {
    fn event(&mut self, event: &Event) {
        self.0.push(*event);
    }
}

/// Collects the events of a tracer that takes no steady tick.
#[derive(Default)]
pub struct QuietEvents(pub Vec<Event>);

impl Tracer for QuietEvents {
    const STEADY: bool = false;

    fn event(&mut self, event: &Event) {
        self.0.push(*event);
    }
}

/// The events a tracer that takes every event gets in a tick with `input`
/// that left `memory` on its active path, from those a tracer that takes
/// no steady tick got (`quiet`), as [`Event::Walked`] says: the walk's
/// events where `Walked` stands for them, and a steady tick's (no event)
/// along the whole path.
fn with_walk(tree: &GenTree, input: &TickInput, memory: &GenMemory, quiet: &[Event]) -> Vec<Event> {
    let node = |i: ItemIdx| {
        let n = tree.node(i);
        NodeRef {
            index: i,
            name: n.name(),
            depth: n.depth() as u8,
        }
    };
    // A level's visit, and its behavior's tick if it ticks one.
    let level = |out: &mut Vec<Event>, i: ItemIdx, running: bool| {
        out.push(Event::Visit { node: node(i) });
        let n = tree.node(i);
        if let (true, Some(b)) = (n.has().contains(Has::TICK), n.behavior()) {
            out.push(Event::Ticked {
                node: node(i),
                behavior: b.name(),
                running,
            });
        }
    };
    // The children of `group` before `before`, turned down.
    let turned_down = |out: &mut Vec<Event>, group: ItemIdx, before: usize| {
        let g = tree.node(group);
        if g.policy() != Some(Policy::Prioritized) {
            return 0;
        }
        let mut n = 0;
        for c in g.children().take_while(|c| c.index().get() < before) {
            let by = c
                .decider()
                .preconditions()
                .flag_rejection(input.decision, input.stimuli)
                .unwrap_or(Rejection::Timer);
            out.push(Event::Rejected {
                node: node(c.index()),
                by,
            });
            n += 1;
        }
        n
    };
    let mut out = vec![Event::Start {
        agent: input.agent,
        now: input.now,
        dt: input.dt,
        decision: input.decision,
        stimuli: input.stimuli,
    }];
    match quiet.first() {
        None => {
            let path: Vec<ItemIdx> = memory.active_path().map(|l| l.item).collect();
            let mut visited = 0;
            for (k, &i) in path.iter().enumerate() {
                level(&mut out, i, true);
                visited += 1;
                if let Some(next) = path.get(k + 1) {
                    visited += turned_down(&mut out, i, next.get());
                }
            }
            out.push(Event::End {
                leaf: path.last().map(|&l| node(l)),
                visited,
            });
        }
        Some(&Event::Walked { node: at, stop }) => {
            let mut path = vec![at.index];
            while let Some(p) = tree.node(path[path.len() - 1]).parent() {
                path.push(p.index());
            }
            path.reverse();
            for pair in path.windows(2) {
                level(&mut out, pair[0], true);
                turned_down(&mut out, pair[0], pair[1].get());
            }
            match stop {
                WalkStop::Before => {}
                WalkStop::Ended => level(&mut out, at.index, false),
                WalkStop::At { from } => {
                    level(&mut out, at.index, true);
                    turned_down(&mut out, at.index, from.get());
                }
            }
            out.extend_from_slice(&quiet[1..]);
        }
        // No walk: every event was sent, its `Start` first.
        Some(_) => out = quiet.to_vec(),
    }
    out
}

/// Events as trace text, one line each.
pub fn render(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        let _ = write_event(&mut out, e);
    }
    out
}

/// The route of child indices from the root to item `i` of `tree`.
fn route_of(tree: &GenTree, i: ItemIdx) -> Vec<u8> {
    let mut route = Vec::new();
    let mut n = tree.node(i);
    while let Some(p) = n.parent() {
        route.push(n.child_index() as u8);
        n = p;
    }
    route.reverse();
    route
}

/// Invariants of one tick that ended normally, checked on the production
/// events alone: a place is activated at most once per tick (a failed
/// child stays masked) and ticks at most once; every behavior on the final
/// path ticked exactly once; every activation, failed or not, is matched
/// by one deactivation (cleanup is unconditional), so the open ones are the active path. `open` counts
/// the activations still open before the tick; returns it after.
fn lifecycle(
    tree: &GenTree,
    memory: &GenMemory,
    events: &[Event],
    mut open: usize,
) -> Result<usize, String> {
    let mut activated = HashMap::new();
    let mut ticked = HashMap::new();
    for e in events {
        match e {
            Event::Activated { node, .. } | Event::ActivateFailed { node, .. } => {
                open += 1;
                *activated.entry(node.index).or_insert(0) += 1;
            }
            Event::Deactivated { node, .. } => {
                open = open
                    .checked_sub(1)
                    .ok_or(format!("{node} deactivated but never activated"))?;
            }
            Event::Ticked { node, .. } => *ticked.entry(node.index).or_insert(0) += 1,
            _ => {}
        }
    }
    // Masks keep an item from running twice in a tick; only a jump (a
    // restart, or a way back to where the tick has been) enters it again,
    // once per jump at most.
    let jumps = events
        .iter()
        .filter(|e| matches!(e, Event::Jump { .. }))
        .count();
    if let Some((i, n)) = activated.iter().find(|(_, n)| **n > 1 + jumps) {
        return Err(format!("item {i} activated {n} times in one tick"));
    }
    if let Some((i, n)) = ticked.iter().find(|(_, n)| **n > 1 + jumps) {
        return Err(format!("item {i} ticked {n} times in one tick"));
    }
    for l in memory.active_path() {
        let ticks = tree
            .node(l.item)
            .behavior()
            .is_some_and(|b| b.callbacks().1);
        if ticks && ticked.get(&l.item).is_none_or(|&n| n < 1) {
            return Err(format!("active item {} did not tick", l.item));
        }
    }
    if open != memory.depth() {
        return Err(format!(
            "{open} activations open, {} levels active",
            memory.depth()
        ));
    }
    Ok(open)
}

/// What one agent's tick looked like in both, for the properties to check.
pub struct Step {
    pub tick: usize,
    /// The agent's index in the crowd.
    pub agent: usize,
    /// How the tick ended (production and model agree).
    pub production: Outcome,
}

/// Memory block values a production memory holds: the levels whose block
/// has an owner with a memory type.
pub fn live_blocks(memory: &GenMemory) -> usize {
    (0..LEVELS)
        .filter(|&l| {
            memory
                .block_behavior(l)
                .is_some_and(|b| b.memory_type() != "()")
        })
        .count()
}

/// Runs `case` on production and on the model side by side and checks
/// that they agree after every agent's tick: events, outcome, the agent's
/// journal of callbacks, the active path, timers, the generator, the live
/// memory blocks and DBlocks; after every crowd tick, the requests queued,
/// the requests lost and what the shared state holds. A third copy runs
/// the untraced path (`tick_all`, or `tick` agent by agent) with a
/// `TreeShared` of its own and must make the same decisions. Launches are
/// reported back (succeeded, failed, or not at all) by their tickets. `each`
/// sees every agent's step.
pub fn check_case(
    case: &Case,
    mut each: impl FnMut(&Built, &Step) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    harness::quiet_scripted_panics();
    let built = build(&case.deciders, case.limit);
    let tree = built.tree;
    let n = usize::from(case.agents.max(1));
    let capacity = usize::from(case.capacity.max(1));
    let live_before = harness::live_mems();
    let bad_before = harness::bad_drops();
    // A tree with tunables keeps their values in the crowd's shared state.
    let crowded = tree.needs_shared() || tree.tunables.is_some();
    let shared = crowded.then(|| tree.new_shared(capacity));
    let quiet_shared = crowded.then(|| tree.new_shared(capacity));
    let seed = |i: usize| case.seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9));
    let make = |sh: &Option<std::sync::Arc<TreeShared>>, i: usize| match sh {
        Some(sh) => tree.new_memory_in(sh, seed(i)),
        None => tree.new_memory(seed(i)),
    };
    let mut memories: Vec<GenMemory> = (0..n).map(|i| make(&shared, i)).collect();
    let mut quiet: Vec<GenMemory> = (0..n).map(|i| make(&quiet_shared, i)).collect();
    let mut crowd = Crowd::new(shared.as_ref().map_or(0, |s| s.id()), capacity);
    let mut models: Vec<Model> = (0..n)
        .map(|i| Model::new(&built, i, memories[i].rng_state()))
        .collect();
    let mut answers: Vec<f32> = case
        .answers
        .iter()
        .map(|&a| ANSWERS[a as usize % ANSWERS.len()])
        .collect();
    let sim = Sim {
        end_after: case.end_after,
        ..Sim::default()
    };
    let mut agents = vec![sim.clone(); n];
    let mut twins = agents.clone();
    let mut quiet_agents = agents.clone();
    let mut now = 0.0f64;
    // Per agent: activations not yet matched by a deactivation.
    let mut open = vec![0usize; n];
    let context = |t: usize, what: &str| {
        format!(
            "tick {t}: {what}\ntree (redecide limit {}):\n{}",
            tree.redecide_limit(),
            outline(built.root)
        )
    };
    for (t, script) in case.ticks.iter().enumerate() {
        for &(id, a) in &script.changes {
            answers[id as usize % MAX_DECIDERS] = ANSWERS[a as usize % ANSWERS.len()];
        }
        for sim in agents.iter_mut().chain(&mut twins).chain(&mut quiet_agents) {
            sim.answers.clone_from(&answers);
            sim.ends = script.ends;
            sim.fails = script.fails;
            sim.slot = script.slot;
        }
        let dt = STEPS[script.dt as usize % STEPS.len()];
        let clock = if script.far {
            now * 1000.0 + 1000.0
        } else {
            now
        };
        let base = TickInput::new(clock, dt)
            .with_decision_bits(u64::from(script.decision))
            .with_stimuli_bits(u64::from(script.stimuli));
        let input = |i: usize| base.with_agent(i as u32);
        let panic_at = script.panic_at.map(u32::from);

        // A tunable changed before the tick: staged on both crowds, in
        // effect for the traced one now (it ticks agent by agent), for the
        // untraced one when its tick starts.
        if let Some((which, value)) = script.tune
            && tree.tunables.is_some()
        {
            let which = usize::from(which) % TUNED_VALUES.len();
            let values = TUNED_VALUES[which];
            let value = values[usize::from(value) % values.len()];
            crowd.tuned[which] = value;
            for sh in shared.iter().chain(&quiet_shared) {
                match which {
                    0 => sh.tune(GEN_EVERY, value),
                    1 => sh.tune(GEN_GATE, value as i64),
                    _ => sh.tune(GEN_COOLDOWN, value),
                }
                .expect("a value in range");
            }
        }
        if let Some(sh) = &shared {
            sh.apply_tuning();
        }

        // An agent stopped or reset before the tick, in all three.
        let who = usize::from(script.who) % n;
        match script.op {
            1 => {
                harness::begin(None);
                bt_core::deactivate_all(tree, &mut agents[who], &mut memories[who], &input(who))
                    .expect("deactivate_all");
                let calls = harness::end();
                harness::begin(None);
                models[who].deactivate_all(&mut twins[who], &input(who), &mut crowd);
                prop_assert_eq!(calls, harness::end(), "{}", context(t, "deactivate_all"));
                bt_core::deactivate_all(tree, &mut quiet_agents[who], &mut quiet[who], &input(who))
                    .expect("deactivate_all");
                open[who] = 0;
            }
            2 => {
                memories[who].reset();
                models[who].reset(&mut crowd);
                quiet[who].reset();
                open[who] = 0;
            }
            _ => {}
        }

        // The traced crowd and the model, agent by agent.
        let mut outcomes = Vec::new();
        let mut traces = Vec::new();
        let mut traced_calls = 0;
        for i in 0..n {
            harness::begin(panic_at);
            let mut events = Events::default();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                bt_core::tick_traced(
                    tree,
                    &mut agents[i],
                    &mut memories[i],
                    &input(i),
                    &mut events,
                )
            }));
            let calls = harness::end();
            traced_calls += calls;
            let production = match &result {
                Ok(Ok(report)) => Outcome::Done(report.into()),
                Ok(Err(e)) => Outcome::Error(*e),
                Err(payload) => {
                    prop_assert!(
                        payload.downcast_ref::<ScriptedPanic>().is_some(),
                        "{}",
                        context(t, "an unscripted panic")
                    );
                    Outcome::Panicked
                }
            };
            prop_assert_eq!(
                harness::live_tokens(),
                0,
                "{}",
                context(t, "a DBlock outlived its tick")
            );

            harness::begin(panic_at);
            let (expected, outcome) = models[i].tick(&mut twins[i], &input(i), &mut crowd);
            let model_calls = harness::end();

            let context = |what: &str| context(t, &format!("agent {i}: {what}"));
            if !same_events(&events.0, &expected) {
                let got = render(&events.0);
                let want = render(&expected);
                let first = got
                    .lines()
                    .zip(want.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
                return Err(TestCaseError::fail(format!(
                    "{}\nevents differ at line {first}\n--- production\n{got}--- model\n{want}",
                    context("traces differ")
                )));
            }
            prop_assert_eq!(&production, &outcome, "{}", context("outcomes differ"));
            prop_assert_eq!(calls, model_calls, "{}", context("callback counts"));
            prop_assert_eq!(
                &agents[i].journal,
                &twins[i].journal,
                "{}",
                context("behavior callbacks differ")
            );
            let memory = &memories[i];
            prop_assert_eq!(
                path_of(memory),
                models[i].path(),
                "{}",
                context("active paths differ")
            );
            prop_assert_eq!(
                memory.rng_state(),
                models[i].rng_state(),
                "{}",
                context("generators differ")
            );
            for node in tree.nodes() {
                if let Some(slot) = node.timer_slot() {
                    let route = route_of(tree, node.index());
                    prop_assert_eq!(
                        memory.timer(slot).to_bits(),
                        models[i].timer(&route).to_bits(),
                        "{}",
                        context(&format!("timer of {node:?}"))
                    );
                }
            }
            prop_assert_eq!(
                live_blocks(memory),
                models[i].live_blocks(),
                "{}",
                context("live memory blocks")
            );
            prop_assert_eq!(
                harness::bad_drops(),
                bad_before,
                "{}",
                context("a block value dropped twice")
            );
            if production == Outcome::Panicked {
                prop_assert!(memory.is_idle());
                open[i] = 0;
            } else {
                open[i] = lifecycle(tree, memory, &events.0, open[i])
                    .map_err(|e| TestCaseError::fail(context(&e)))?;
            }
            each(
                &built,
                &Step {
                    tick: t,
                    agent: i,
                    production: production.clone(),
                },
            )?;
            outcomes.push(production);
            traces.push(events.0);
        }

        // The untraced path, with a crowd of its own, decides the same;
        // agent by agent with no panic, it is traced by a tracer that
        // takes no steady tick, whose events are the traced crowd's once
        // the walks they leave out are put back.
        if panic_at.is_some() || script.one_by_one {
            if let Some(sh) = &quiet_shared {
                sh.apply_tuning();
            }
            for i in 0..n {
                harness::begin(panic_at);
                let mut sent = QuietEvents::default();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    if panic_at.is_some() {
                        bt_core::tick(tree, &mut quiet_agents[i], &mut quiet[i], &input(i))
                    } else {
                        let (agent, memory) = (&mut quiet_agents[i], &mut quiet[i]);
                        bt_core::tick_traced(tree, agent, memory, &input(i), &mut sent)
                    }
                }));
                harness::end();
                if panic_at.is_none() {
                    // As text: the two crowds' tickets name their own
                    // shared states.
                    let got = render(&with_walk(tree, &input(i), &quiet[i], &sent.0));
                    let want = render(&traces[i]);
                    if got != want {
                        return Err(TestCaseError::fail(format!(
                            "{}\n--- quiet, its walks put back\n{got}--- traced\n{want}",
                            context(t, &format!("agent {i}: quiet events")),
                        )));
                    }
                }
                let got = match result {
                    Ok(Ok(report)) => Outcome::Done((&report).into()),
                    Ok(Err(e)) => Outcome::Error(e),
                    Err(_) => Outcome::Panicked,
                };
                prop_assert_eq!(&got, &outcomes[i], "{}", context(t, "untraced outcome"));
            }
        } else {
            // No id set: `tick_all` gives each agent its index. Callbacks
            // are counted (and DBlocks numbered) from 0 for each agent.
            let mut calls = 0;
            harness::begin(None);
            let report = bt_core::tick_all(tree, &mut quiet_agents, &mut quiet, |_, _| {
                calls += harness::end();
                harness::begin(None);
                base
            });
            calls += harness::end();
            prop_assert_eq!(calls, traced_calls, "{}", context(t, "untraced calls"));
            let done: Vec<&Report> = outcomes
                .iter()
                .filter_map(|o| match o {
                    Outcome::Done(r) => Some(r),
                    _ => None,
                })
                .collect();
            let first_error = outcomes.iter().enumerate().find_map(|(i, o)| match o {
                Outcome::Error(e) => Some((i, *e)),
                _ => None,
            });
            prop_assert_eq!(report.ticked as usize, n);
            prop_assert_eq!(report.errors as usize, n - done.len());
            prop_assert_eq!(report.first_error, first_error);
            prop_assert_eq!(
                report.idle as usize,
                done.iter().filter(|r| r.behavior.is_none()).count()
            );
            prop_assert_eq!(
                report.visited,
                done.iter().map(|r| u64::from(r.visited)).sum::<u64>()
            );
            prop_assert_eq!(
                report.activated,
                done.iter().map(|r| u64::from(r.activated)).sum::<u64>()
            );
        }
        for i in 0..n {
            let context = |what: &str| context(t, &format!("untraced agent {i}: {what}"));
            prop_assert_eq!(
                &quiet_agents[i].journal,
                &agents[i].journal,
                "{}",
                context("journal")
            );
            prop_assert_eq!(
                path_of(&quiet[i]),
                path_of(&memories[i]),
                "{}",
                context("path")
            );
            prop_assert_eq!(quiet[i].rng_state(), memories[i].rng_state());
            for slot in 0..tree.timers() {
                prop_assert_eq!(
                    quiet[i].timer(slot).to_bits(),
                    memories[i].timer(slot).to_bits()
                );
            }
        }
        prop_assert_eq!(
            harness::live_mems() - live_before,
            2 * models.iter().map(Model::live_blocks).sum::<usize>(),
            "{}",
            context(t, "live memory blocks of both crowds")
        );

        // The shared state, the queue and the reports back.
        if let (Some(shared), Some(quiet_shared)) = (&shared, &quiet_shared) {
            let mut sent = Vec::new();
            shared.drain_actions(|r| sent.push(r));
            let mut quiet_sent = Vec::new();
            quiet_shared.drain_actions(|r| quiet_sent.push(r));
            let modelled = std::mem::take(&mut crowd.queue);
            prop_assert_eq!(&sent, &modelled, "{}", context(t, "queued requests"));
            let strip = |r: &ActionRequest| {
                let k = r.ticket;
                (r.agent, r.item, r.op, k.agent(), k.slot(), k.serial())
            };
            prop_assert_eq!(
                sent.iter().map(strip).collect::<Vec<_>>(),
                quiet_sent.iter().map(strip).collect::<Vec<_>>(),
                "{}",
                context(t, "untraced requests")
            );
            prop_assert_eq!(shared.lost_requests(), crowd.lost, "{}", context(t, "lost"));
            prop_assert_eq!(quiet_shared.lost_requests(), crowd.lost);
            prop_assert_eq!(
                shared.gates_held(),
                crowd.gates_held(),
                "{}",
                context(t, "gates")
            );
            prop_assert_eq!(
                shared.roles_held(),
                crowd.roles_held(),
                "{}",
                context(t, "roles")
            );
            prop_assert_eq!(quiet_shared.gates_held(), crowd.gates_held());
            prop_assert_eq!(quiet_shared.roles_held(), crowd.roles_held());
            let tuned = |sh: &TreeShared| {
                [
                    sh.tuned(GEN_EVERY),
                    sh.tuned(GEN_GATE) as f64,
                    sh.tuned(GEN_COOLDOWN),
                ]
            };
            if tree.tunables.is_some() {
                prop_assert_eq!(tuned(shared), crowd.tuned, "{}", context(t, "tuned"));
                prop_assert_eq!(tuned(quiet_shared), crowd.tuned);
            }
            for (r, q) in sent.iter().zip(&quiet_sent) {
                if !matches!(r.op, ActionOp::Launch(_)) {
                    continue;
                }
                let outcome = match (r.ticket.serial() as usize + t) % 4 {
                    0 => bt_core::Outcome::Succeeded,
                    1 => bt_core::Outcome::Failed,
                    _ => continue,
                };
                let a = r.agent as usize;
                prop_assert!(
                    !quiet[a].complete(r.ticket, outcome),
                    "a ticket of another crowd"
                );
                let done = memories[a].complete(r.ticket, outcome);
                prop_assert_eq!(done, models[a].complete(r.ticket, outcome));
                prop_assert_eq!(done, quiet[a].complete(q.ticket, outcome));
            }
        }
        for sim in agents.iter_mut().chain(&mut twins).chain(&mut quiet_agents) {
            sim.journal.clear();
        }
        now += f64::from(dt);
    }
    drop(memories);
    drop(quiet);
    prop_assert_eq!(
        harness::live_mems(),
        live_before,
        "dropping the memory drops its blocks"
    );
    prop_assert_eq!(harness::bad_drops(), bad_before, "no double drop");
    for sh in shared.iter().chain(&quiet_shared) {
        prop_assert_eq!((sh.gates_held(), sh.roles_held()), (0, 0), "given back");
    }
    Ok(())
}

/// A production memory's active path as the comparison sees it.
pub fn path_of(memory: &GenMemory) -> Vec<PathLevel> {
    memory
        .active_path()
        .map(|l| PathLevel {
            item: l.item,
            since: l.since,
            mask: l.mask,
            redecides: l.redecides,
        })
        .collect()
}
