//! The interpreter: one tick of one agent.
//!
//! A tick is a small state machine over the flat item stream. Each step
//! works on one depth level of the agent's active path:
//!
//! - `Walk(k)`: the decider active at level `k` is visited; its behavior
//!   ticks (a group behavior before its children), then a prioritized or
//!   scored group gets its chance to switch to another child. Otherwise the
//!   walk goes on into the active child *without* checking it again.
//! - `Enter(k, pick)`: the picked decider becomes active at level `k`; its
//!   memory block is built and its behavior activated. A leaf ticks at once,
//!   a group goes on to `Choose`.
//! - `Choose(k, first)`: the group at level `k` picks a child by its policy,
//!   skipping children masked out by failures in this tick.
//! - `Fail(k, why)`: the decider at level `k` failed. Its subtree is
//!   deactivated deepest first, it is masked in its parent, and the parent
//!   redecides; at the root the agent goes idle.
//!
//! Every failure masks one child, so a tick makes at most one redecide per
//! item; the tree's redecide budget bounds it further and turns a runaway
//! into [`TickError::RedecideLimit`] with every behavior deactivated.
//!
//! If a callback panics, the memory is left idle with every block value
//! dropped (no further callbacks run) and the panic goes on to the caller.

use core::fmt;

mod event;

pub use event::{Event, NoTrace, NodeRef, Rejection, Tracer, Why};

use crate::decl::{ActionState, Ctx, DecideRaw, ItemIdx, Policy, TickInput, period_runs};
use crate::memory::raw::{DIn, DPool};
use crate::memory::shared::{
    self as sync, ActionOp, ActionRequest, RoleAnswer, Ticket, TreeShared,
};
use crate::memory::{AgentMemory, Level};
use crate::stream::{Has, Item, NO_SLOT, Tree};

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickReport {
    /// The behavior decider active after the tick (`None`: idle).
    pub behavior: Option<ItemIdx>,
    /// Deciders activated in this tick.
    ///
    /// An idle agent that stays idle counts none: when its root group has
    /// no group behavior and finds no child to run, the root is entered and
    /// left within the tick (the trace shows both), which is not a change.
    pub activated: u16,
    /// Deciders deactivated in this tick (see [`activated`](Self::activated)).
    pub deactivated: u16,
    /// Masked redecides made in this tick.
    pub redecides: u16,
    /// Deciders visited: active ones walked through plus candidates tried.
    pub visited: u32,
    /// A group that broke the Subset Rule in this tick: it accepted, but
    /// none of its children could run. The root of an idle agent breaks it
    /// only through a `decide` of its own that accepted: without one, a
    /// root with no child to run just leaves the agent idle.
    pub subset_violation: Option<ItemIdx>,
}

impl TickReport {
    /// Whether the active path changed.
    pub fn changed(&self) -> bool {
        self.activated != 0 || self.deactivated != 0
    }
}

/// Why a tick stopped without finishing.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TickError {
    /// The tick made more masked redecides than the tree's budget allows.
    /// Every active behavior was deactivated; the agent is idle.
    RedecideLimit {
        /// The group that was about to redecide once too often.
        group: &'static str,
        /// Its item in the stream.
        item: ItemIdx,
        /// The budget.
        limit: u32,
    },
    /// The memory was made by another tree. Nothing ran.
    WrongTree {
        /// The tree the memory belongs to.
        memory: &'static str,
        /// The tree given to the tick.
        tree: &'static str,
    },
    /// The tree has gates, global cooldowns, group roles or deferred
    /// actions, and the memory was not made with a
    /// [`TreeShared`](crate::TreeShared) ([`Tree::new_memory_in`]). Nothing
    /// ran.
    NotShared {
        /// The tree.
        tree: &'static str,
    },
    /// A time value is unusable. Nothing ran.
    InvalidInput {
        /// `now` or `dt`.
        field: &'static str,
        /// The value given.
        value: f64,
    },
}

impl fmt::Display for TickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TickError::RedecideLimit { group, limit, .. } => write!(
                f,
                "group `{group}`: more than {limit} masked redecides in one tick; \
                 every behavior was deactivated"
            ),
            TickError::WrongTree { memory, tree } => write!(
                f,
                "agent memory made by tree `{memory}` ticked with tree `{tree}`"
            ),
            TickError::NotShared { tree } => write!(
                f,
                "tree `{tree}` has gates, cooldowns, group roles or deferred actions; \
                 make its agents' memories with `new_memory_in`"
            ),
            TickError::InvalidInput { field, value } => {
                write!(
                    f,
                    "tick input `{field}` is {value}; it must be finite and not negative"
                )
            }
        }
    }
}

impl core::error::Error for TickError {}

/// Runs one tick of one agent, step by step as the
/// [tick semantics](crate::semantics) describe.
///
/// `tree` must be the tree that made `memory`. With debug output on
/// ([`set_debug_level`](crate::set_debug_level)), the tick also writes its
/// steps to the `log` crate.
///
/// # Errors
/// Before anything runs, and changing nothing:
/// - [`TickError::WrongTree`] when `memory` was made by another tree;
/// - [`TickError::NotShared`] when the tree has gates, global cooldowns,
///   group roles or deferred actions and `memory` was made without a
///   [`TreeShared`](crate::TreeShared). For a tree declared with
///   [`tree!`](crate::tree) that is a compile error (its `new_memory` does
///   not build); only a hand-assembled table gets here;
/// - [`TickError::InvalidInput`] when `now` is not finite, or `dt` is not
///   finite or negative.
///
/// During the tick: [`TickError::RedecideLimit`] when it makes more masked
/// redecides than the tree's budget; every behavior is then deactivated and
/// the agent idle.
///
/// # Panics
/// Only if a callback panics. The panic goes on to the caller; the memory is
/// then idle, with every block value dropped exactly once and no further
/// callback run.
///
/// # Stack
/// A tick keeps scratch space for DBlocks of `levels × block size` bytes
/// on the stack (384 bytes for three levels of 128-byte blocks), and
/// builds each memory block value on the stack before moving it into its
/// block. A tree with large blocks needs a thread stack to match: with
/// blocks of a few hundred KiB, more than a rayon worker thread's 2 MiB
/// default. Twice `levels × block size` and 256 KiB more is enough,
/// unoptimised builds included. The memory itself is wherever the caller
/// keeps it.
#[inline]
pub fn tick<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> Result<TickReport, TickError> {
    // Debug output off: one load and this branch.
    match crate::debug::log::level_for(input.agent) {
        0 => run(tree, agent, memory, input, &mut NoTrace),
        level => logged(level, tree, agent, memory, input, &mut NoTrace),
    }
}

/// A tick with debug output at `level` (see [`set_debug_level`](crate::set_debug_level)).
#[cold]
#[inline(never)]
fn logged<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    level: u8,
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
) -> Result<TickReport, TickError> {
    let log = crate::debug::log::LogTracer::new(level, input.agent, input.now);
    let result = run(
        tree,
        agent,
        memory,
        input,
        &mut crate::debug::log::Tee(tracer, log),
    );
    if let Err(e) = &result {
        log::debug!(target: "bt", "agent {}: tick error: {e}", input.agent);
    }
    result
}

/// [`tick`], handing every step to `tracer` (see [`Event`]).
///
/// # Errors
/// As [`tick`].
///
/// # Panics
/// As [`tick`].
pub fn tick_traced<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
) -> Result<TickReport, TickError> {
    match crate::debug::log::level_for(input.agent) {
        0 => run(tree, agent, memory, input, tracer),
        level => logged(level, tree, agent, memory, input, tracer),
    }
}

/// Deactivates the whole active path, deepest first, running every
/// behavior's `deactivate` (the agent is leaving the simulation, or its tree
/// is being swapped). The memory is idle afterwards, and holds nothing in
/// its [`TreeShared`](crate::TreeShared): gate slots are given back, pending
/// deferred actions cancelled and group-role lobbies left.
///
/// # Errors
/// [`TickError::WrongTree`], [`TickError::NotShared`] or
/// [`TickError::InvalidInput`], as for [`tick`]; nothing ran.
///
/// # Panics
/// Only if a callback panics; the memory is then idle, as with [`tick`].
pub fn deactivate_all<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> Result<(), TickError> {
    check(tree, memory, input)?;
    let mut tracer = NoTrace;
    let mut r = Run::new(tree, agent, memory, input, &mut tracer);
    r.deactivate_to(0, Why::Stopped);
    r.armed = false;
    drop(r);
    memory.leave_lobbies();
    Ok(())
}

#[inline(always)]
fn check<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> Result<(), TickError> {
    // NaN fails both comparisons; -0.0 is a valid `dt`.
    let now_ok = input.now.abs() <= f64::MAX;
    let dt_ok = input.dt >= 0.0 && input.dt <= f32::MAX;
    let shared_ok = !tree.needs_shared() || memory.shared.is_some();
    if core::ptr::eq(memory.tree, tree) && now_ok && dt_ok && shared_ok {
        Ok(())
    } else {
        Err(refuse(tree, memory, input))
    }
}

/// Why [`check`] refused a tick.
#[cold]
#[inline(never)]
fn refuse<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> TickError {
    if !core::ptr::eq(memory.tree, tree) {
        return TickError::WrongTree {
            memory: memory.tree.name,
            tree: tree.name,
        };
    }
    if tree.needs_shared() && memory.shared.is_none() {
        return TickError::NotShared { tree: tree.name };
    }
    if !input.now.is_finite() {
        return TickError::InvalidInput {
            field: "now",
            value: input.now,
        };
    }
    TickError::InvalidInput {
        field: "dt",
        value: f64::from(input.dt),
    }
}

#[inline(never)]
fn run<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
) -> Result<TickReport, TickError> {
    check(tree, memory, input)?;
    let mut r = Run::new(tree, agent, memory, input, tracer);
    let result = r.run();
    r.armed = false;
    result
}

/// A `decide` result on its way to activation.
///
/// `chain[top..=end]` are the items to activate, one per level: more than
/// one when delegating groups passed the choice down to a child. Only the
/// last item can have a `decide` (delegating groups have none), so a pick
/// carries at most one DBlock, in scratch slot `slot`.
#[derive(Clone, Copy)]
struct Pick<const L: usize> {
    chain: [u16; L],
    end: u8,
    slot: u8,
    value: f32,
}

impl<const L: usize> Pick<L> {
    /// A pick of the single item `c` at level `depth`.
    #[inline(always)]
    fn one(c: usize, depth: usize, slot: u8, value: f32) -> Self {
        let mut chain = [0; L];
        chain[depth] = c as u16;
        Pick {
            chain,
            end: depth as u8,
            slot,
            value,
        }
    }
}

const NO_DSLOT: u8 = u8::MAX;

enum Step<const L: usize> {
    Walk(usize),
    Enter(usize, Pick<L>),
    Choose(usize, bool),
    Fail(usize, Why),
    Done,
}

/// One tick in progress. If it is dropped while `armed` (a callback
/// panicked), the agent's memory is abandoned to a consistent idle state.
struct Run<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize> {
    items: &'static [Item<A>],
    agent: &'r mut A,
    mem: &'r mut AgentMemory<A, L, S, N>,
    input: &'r TickInput,
    tracer: &'r mut T,
    /// DBlock scratch: at most one held per selection frame plus the
    /// candidate being decided, and frames nest at most `L - 1` deep.
    pool: DPool<L, N>,
    used: u32,
    redecides: u32,
    limit: u32,
    report: TickReport,
    /// The callbacks' context: the tick's fields set once, the level's
    /// fields (`since`, `flags`, `depth`, `action`) before each call.
    cx: Ctx,
    armed: bool,
}

impl<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize> Drop
    for Run<'_, A, T, L, S, N>
{
    fn drop(&mut self) {
        if self.armed {
            self.mem.abandon();
        }
    }
}

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    fn new(
        tree: &Tree<A, L, S, N>,
        agent: &'r mut A,
        mem: &'r mut AgentMemory<A, L, S, N>,
        input: &'r TickInput,
        tracer: &'r mut T,
    ) -> Self {
        Run {
            items: mem.tree.items,
            agent,
            limit: tree.redecide_limit,
            mem,
            input,
            tracer,
            pool: DPool::new(),
            used: 0,
            redecides: 0,
            report: TickReport::default(),
            cx: Ctx {
                now: input.now,
                dt: input.dt,
                since: input.now,
                flags: 0,
                decision: input.decision,
                stimuli: input.stimuli,
                agent: input.agent,
                depth: 0,
                action: ActionState::None,
            },
            armed: true,
        }
    }

    #[inline(always)]
    fn run(&mut self) -> Result<TickReport, TickError> {
        if T::ENABLED {
            let i = self.input;
            self.tracer.event(&Event::Start {
                agent: i.agent,
                now: i.now,
                dt: i.dt,
                decision: i.decision,
                stimuli: i.stimuli,
            });
        }
        // The last tick's redecide marks, kept for the state dump, are
        // cleared by `walk` as it passes each level: every level it does
        // not reach is deactivated or entered afresh in this tick.
        let mut step = if self.mem.depth() == 0 {
            self.start()
        } else {
            Step::Walk(0)
        };
        loop {
            step = match step {
                Step::Walk(k) => self.walk(k),
                Step::Enter(k, pick) => self.enter(k, pick),
                Step::Choose(k, first) => self.choose(k, first),
                Step::Fail(k, why) => match self.fail(k, why) {
                    Ok(step) => step,
                    Err(e) => {
                        self.end();
                        return Err(e);
                    }
                },
                Step::Done => break,
            };
        }
        self.end();
        Ok(self.report)
    }

    fn end(&mut self) {
        if self.mem.shared.is_some() {
            self.sweep_roles();
        }
        self.report.behavior = self.mem.leaf();
        if T::ENABLED {
            let leaf = self.report.behavior.map(|i| self.node(i.get()));
            let visited = self.report.visited;
            self.tracer.event(&Event::End { leaf, visited });
        }
    }

    /// An idle agent starts from the root.
    fn start(&mut self) -> Step<L> {
        match self.evaluate(0) {
            Some(pick) => Step::Enter(0, pick),
            None => {
                self.trace(|_| Event::Idle);
                Step::Done
            }
        }
    }

    /// Walks down the active path from level `k`. A tick in
    /// which nothing changes stays in this loop from the root to the leaf.
    fn walk(&mut self, mut k: usize) -> Step<L> {
        loop {
            let level = &mut self.mem.levels[k];
            level.mask = 0;
            level.redecides = 0;
            let i = level.item as usize;
            let item = &self.items[i];
            self.report.visited += 1;
            self.trace(|r| Event::Visit { node: r.node(i) });
            if item.is(Has::TICK) && !self.tick_level(k, i) {
                return Step::Fail(k, Why::Ended);
            }
            if !item.is(Has::GROUP) {
                return Step::Done;
            }
            if k + 1 >= self.mem.depth() {
                // An active group always has an active child after a tick;
                // this only guards against a memory edited by hand.
                return Step::Choose(k, false);
            }
            let active = self.mem.levels[k + 1].item as usize;
            match item.policy {
                Policy::Prioritized => {
                    let mut c = i + 1;
                    while c < active {
                        let child = &self.items[c];
                        // The common case, an earlier sibling stopped by a
                        // flag test or its timer, costs a mask test here,
                        // not a candidate.
                        if self.rejected_early(child) {
                            c = child.end as usize;
                            continue;
                        }
                        if let Some(pick) = self.evaluate(c) {
                            return self.preempt(k, pick);
                        }
                        c = self.items[c].end as usize;
                    }
                }
                Policy::Scored => {
                    if let Some(pick) = self.challenge(i, active) {
                        return self.preempt(k, pick);
                    }
                }
                Policy::Slot => {
                    let selected = self.selected(i);
                    if selected != Some(active) {
                        // The environment changed the agent's child tree.
                        return match selected.and_then(|c| self.evaluate(c)) {
                            Some(pick) => self.preempt(k, pick),
                            None => Step::Fail(k, Why::Reselected),
                        };
                    }
                }
                Policy::Sequential | Policy::Random | Policy::Shuffle => {}
            }
            k += 1;
        }
    }

    /// A scored group's children challenge its active child: the best
    /// strictly above the active child's current score wins.
    ///
    /// The current score is the active child's `decide` alone, without its
    /// preconditions (the test to start is not the test to continue); no
    /// `decide` scores 1.0. A delegating child has no `decide`: it scores
    /// what its own active child scores, as it did when it won.
    fn challenge(&mut self, g: usize, active: usize) -> Option<Pick<L>> {
        let mut scored = active;
        let mut level = self.items[active].depth as usize;
        while self.items[scored].is(Has::DELEGATE) && level + 1 < self.mem.depth() {
            level += 1;
            scored = self.mem.levels[level].item as usize;
        }
        let current = if self.items[scored].is(Has::DECIDE) {
            self.call_decide(scored, NO_DSLOT).unwrap_or(0.0)
        } else {
            1.0
        };
        let mut best: Option<Pick<L>> = None;
        let mut bar = current;
        let end = self.items[g].end as usize;
        let mut c = g + 1;
        while c < end {
            if c != active
                && let Some(pick) = self.evaluate_in(c, true)
            {
                if pick.value > bar {
                    bar = pick.value;
                    if let Some(old) = best.replace(pick) {
                        self.free(old.slot);
                    }
                } else {
                    self.free(pick.slot);
                }
            }
            c = self.items[c].end as usize;
        }
        if let Some(pick) = &best {
            self.commit(pick, self.items[active].depth as usize);
        }
        best
    }

    fn preempt(&mut self, k: usize, pick: Pick<L>) -> Step<L> {
        self.trace(|r| Event::Preempt {
            group: r.node(r.mem.levels[k].item as usize),
            by: r.node(pick.chain[k + 1] as usize),
        });
        self.deactivate_to(k + 1, Why::Preempted);
        Step::Enter(k + 1, pick)
    }

    fn enter(&mut self, k: usize, pick: Pick<L>) -> Step<L> {
        let i = pick.chain[k] as usize;
        let item = &self.items[i];
        let last = k == pick.end as usize;
        self.mem.levels[k] = Level {
            since: self.input.now,
            mask: 0,
            item: i as u16,
            redecides: 0,
            cursor: 0,
        };
        if item.is(Has::SYNC) && !self.claim(i) {
            // Not activated: the level stays inactive (depth `k`), so the
            // failure masks the item without deactivating anything.
            self.free(pick.slot);
            return Step::Fail(k, Why::Refused);
        }
        self.mem.set_depth(k + 1);
        self.report.activated = self.report.activated.saturating_add(1);
        if let Some(b) = item.behavior {
            self.mem.blocks.init(k, b);
            if item.is(Has::ACTIVATE) {
                self.fill_cx(k, item);
                let din = if last && pick.slot != NO_DSLOT {
                    self.pool.input(Some(pick.slot as usize))
                } else {
                    DIn::EMPTY
                };
                if !self.mem.blocks.activate(k, self.agent, din, &self.cx) {
                    self.free(pick.slot);
                    self.trace(|r| Event::ActivateFailed {
                        node: r.node(i),
                        behavior: b.name,
                    });
                    return Step::Fail(k, Why::ActivateFailed);
                }
            }
            if item.is(Has::LAUNCH) && !self.launch(k, i) {
                self.free(pick.slot);
                self.trace(|r| Event::ActivateFailed {
                    node: r.node(i),
                    behavior: b.name,
                });
                return Step::Fail(k, Why::ActivateFailed);
            }
        }
        if last {
            self.free(pick.slot);
        }
        self.trace(|r| Event::Activated {
            node: r.node(i),
            behavior: item.behavior.map(|b| b.name),
            flags: item.behavior_flags,
        });
        // Every active behavior ticks once per tick, the activation tick
        // included; a group behavior before its children.
        if item.is(Has::TICK) && !self.tick_level(k, i) {
            if !last {
                // A delegating group ended before the chain reached its
                // leaf: the leaf's DBlock will reach no `activate`.
                self.free(pick.slot);
            }
            return Step::Fail(k, Why::Ended);
        }
        if !item.is(Has::GROUP) {
            return Step::Done;
        }
        if last {
            Step::Choose(k, true)
        } else {
            Step::Enter(k + 1, pick)
        }
    }

    fn choose(&mut self, k: usize, first: bool) -> Step<L> {
        let level = self.mem.levels[k];
        let g = level.item as usize;
        match self.select(g, level.mask, level.cursor) {
            Some(pick) => Step::Enter(k + 1, pick),
            None => {
                if first {
                    if self.stays_idle(k, g) {
                        Step::Done
                    } else {
                        Step::Fail(k, Why::NoChild)
                    }
                } else if self.items[g].policy == Policy::Sequential {
                    // A sequence that ran out of children is done, not failed.
                    Step::Fail(k, Why::Ended)
                } else {
                    Step::Fail(k, Why::NoChild)
                }
            }
        }
    }

    /// Group `g`, entered at level `k` in this tick, has no child to run.
    /// It broke the Subset Rule and fails (false), unless it is the root of
    /// an idle agent with nothing to run or claim on entry. Then the agent
    /// stays idle (true): that is no change, so neither the root's entry
    /// nor its exit counts in the report, and no Subset Rule is broken
    /// unless the root's own `decide` accepted.
    #[cold]
    #[inline(never)]
    fn stays_idle(&mut self, k: usize, g: usize) -> bool {
        let item = &self.items[g];
        if k != 0 || item.has.intersects(Has::BEHAVIOR.union(Has::SYNC)) {
            self.subset_violation(g);
            return false;
        }
        if item.is(Has::DECIDE) {
            self.subset_violation(g);
        }
        self.deactivate_to(0, Why::NoChild);
        self.report.activated = self.report.activated.saturating_sub(1);
        self.report.deactivated = self.report.deactivated.saturating_sub(1);
        self.trace(|_| Event::Idle);
        true
    }

    fn subset_violation(&mut self, g: usize) {
        self.report.subset_violation = Some(ItemIdx(g as u16));
        self.trace(|r| Event::SubsetViolation { group: r.node(g) });
        if log::log_enabled!(target: "bt", log::Level::Warn) {
            warn_subset_violation(self.items[g].decider.name, self.input.agent);
        }
    }

    fn fail(&mut self, k: usize, why: Why) -> Result<Step<L>, TickError> {
        let i = self.mem.levels[k].item as usize;
        self.deactivate_to(k, why);
        if k == 0 {
            self.trace(|_| Event::Idle);
            return Ok(Step::Done);
        }
        let g = k - 1;
        let gi = self.mem.levels[g].item as usize;
        if self.redecides >= self.limit {
            self.trace(|r| Event::RedecideLimit { group: r.node(gi) });
            self.deactivate_to(0, Why::Error);
            return Err(TickError::RedecideLimit {
                group: self.items[gi].decider.name,
                item: ItemIdx(gi as u16),
                limit: self.limit,
            });
        }
        self.redecides += 1;
        self.report.redecides = self.report.redecides.saturating_add(1);
        let ci = self.items[i].child_index;
        let level = &mut self.mem.levels[g];
        level.mask |= 1u64 << ci;
        level.redecides = level.redecides.saturating_add(1);
        if self.items[gi].policy == Policy::Sequential {
            level.cursor = ci + 1;
        }
        let mask = level.mask;
        self.trace(|r| Event::Redecide {
            group: r.node(gi),
            failed: r.node(i),
            mask,
        });
        if self.items[gi].is(Has::RECHECK) && !self.recheck(gi) {
            return Ok(Step::Fail(g, Why::Rejected));
        }
        Ok(Step::Choose(g, false))
    }

    /// `CALL_DECIDE_ON_REDECIDE`: the group's flag tests and `decide` again
    /// (not its timer: the group is already running).
    fn recheck(&mut self, g: usize) -> bool {
        let item = &self.items[g];
        self.report.visited += 1;
        if let Some(by) = self.flag_rejection(item) {
            self.trace(|r| Event::Rejected {
                node: r.node(g),
                by,
            });
            return false;
        }
        if item.is(Has::DECIDE) {
            return self.call_decide(g, NO_DSLOT).is_some();
        }
        true
    }

    /// Deactivates every level from the deepest up to and including `level`.
    fn deactivate_to(&mut self, level: usize, why: Why) {
        while self.mem.depth() > level {
            let j = self.mem.depth() - 1;
            let i = self.mem.levels[j].item as usize;
            let item = &self.items[i];
            let why = if j == level { why } else { why.below() };
            if item.is(Has::DEACTIVATE) {
                self.fill_cx(j, item);
                self.mem.blocks.deactivate(j, self.agent, &self.cx);
            }
            // Off the path only once `deactivate` has run: a panic there
            // leaves the level for `abandon`, which gives back its shared
            // slots. Given back after `deactivate`, a gate slot is never
            // taken by another agent while this one is still leaving.
            self.mem.set_depth(j);
            if item.has.intersects(Has::SYNC.union(Has::LAUNCH)) {
                self.release(i);
            }
            self.mem.blocks.release(j);
            self.report.deactivated = self.report.deactivated.saturating_add(1);
            self.trace(|r| Event::Deactivated {
                node: r.node(i),
                why,
            });
        }
    }

    #[inline(always)]
    fn tick_level(&mut self, k: usize, i: usize) -> bool {
        let item = &self.items[i];
        let running = if item.is(Has::LAUNCH) {
            self.tick_deferred(k, i)
        } else {
            self.fill_cx(k, item);
            self.mem.blocks.tick(k, self.agent, &self.cx)
        };
        if let Some(b) = item.behavior {
            self.trace(|r| Event::Ticked {
                node: r.node(i),
                behavior: b.name,
                running,
            });
        }
        running
    }

    /// Picks a child of group `g` by its policy, skipping `mask`ed children.
    #[inline(always)]
    fn select(&mut self, g: usize, mask: u64, cursor: u8) -> Option<Pick<L>> {
        self.select_in(g, mask, cursor, false)
    }

    /// [`select`](Self::select). When `dry`, the pick is a candidate that
    /// the caller may still drop: shuffle rounds are left as they are, and
    /// the caller [commits](Self::commit) the pick if it keeps it.
    #[inline(always)]
    fn select_in(&mut self, g: usize, mask: u64, cursor: u8, dry: bool) -> Option<Pick<L>> {
        let item = &self.items[g];
        let end = item.end as usize;
        match item.policy {
            Policy::Prioritized | Policy::Sequential => {
                let mut c = g + 1;
                while c < end {
                    let child = &self.items[c];
                    if child.child_index >= cursor
                        && mask & (1u64 << child.child_index) == 0
                        && !self.rejected_early(child)
                        && let Some(pick) = self.evaluate_in(c, dry)
                    {
                        return Some(pick);
                    }
                    c = child.end as usize;
                }
                None
            }
            Policy::Random => self.draw(g, mask, u64::MAX, dry),
            Policy::Slot => {
                let c = self.selected(g)?;
                if mask & (1u64 << self.items[c].child_index) != 0 {
                    return None;
                }
                self.evaluate_in(c, dry)
            }
            Policy::Shuffle => {
                let used = self.mem.slots[item.shuffle as usize] & 0xFFFF_FFFF;
                let depth = item.depth as usize;
                let pick = match self.draw(g, mask, !used, dry) {
                    Some(pick) => Some(pick),
                    // No child left in this round accepts: a new round
                    // starts among the others (`mark` sees the repeat).
                    None if used != 0 => self.draw(g, mask, used, dry),
                    None => None,
                };
                if !dry && let Some(pick) = &pick {
                    self.mark(g, pick.chain[depth + 1] as usize);
                }
                pick
            }
            Policy::Scored => {
                let mut best: Option<Pick<L>> = None;
                let mut c = g + 1;
                while c < end {
                    let child = &self.items[c];
                    if mask & (1u64 << child.child_index) == 0
                        && let Some(pick) = self.evaluate_in(c, true)
                    {
                        match &best {
                            Some(b) if pick.value <= b.value => self.free(pick.slot),
                            _ => {
                                if let Some(old) = best.replace(pick) {
                                    self.free(old.slot);
                                }
                            }
                        }
                    }
                    c = self.items[c].end as usize;
                }
                if !dry && let Some(pick) = &best {
                    self.commit(pick, item.depth as usize + 1);
                }
                best
            }
        }
    }

    /// A weighted draw among the accepting children of `g` whose bit is in
    /// `among` and not in `mask` (reservoir sampling: one pass, one pick).
    /// The candidates are tried `dry`; the one drawn is committed unless the
    /// draw itself is `dry`.
    fn draw(&mut self, g: usize, mask: u64, among: u64, dry: bool) -> Option<Pick<L>> {
        if self.items[g].is(Has::PLAIN_CHILDREN) {
            return self.draw_plain(g, mask, among);
        }
        let end = self.items[g].end as usize;
        let mut best: Option<Pick<L>> = None;
        let mut total = 0.0f64;
        let mut c = g + 1;
        while c < end {
            let bit = 1u64 << self.items[c].child_index;
            if mask & bit == 0
                && among & bit != 0
                && let Some(pick) = self.evaluate_in(c, true)
            {
                total += f64::from(pick.value);
                let take = best.is_none() || self.mem.next_f64() * total < f64::from(pick.value);
                if take {
                    if let Some(old) = best.replace(pick) {
                        self.free(old.slot);
                    }
                } else {
                    self.free(pick.slot);
                }
            }
            c = self.items[c].end as usize;
        }
        if !dry && let Some(pick) = &best {
            self.commit(pick, self.items[g].depth as usize + 1);
        }
        best
    }

    /// [`draw`](Self::draw) among children that are decided by their flag
    /// tests alone: every weight is 1, so the same reservoir draws the same
    /// numbers, but only the child index is carried through the loop and
    /// no pick is built until the end. Nothing to commit: no child delegates.
    fn draw_plain(&mut self, g: usize, mask: u64, among: u64) -> Option<Pick<L>> {
        let end = self.items[g].end as usize;
        let mut total = 0.0f64;
        let mut drawn = None;
        let mut c = g + 1;
        while c < end {
            let item = &self.items[c];
            let bit = 1u64 << item.child_index;
            if mask & bit == 0 && among & bit != 0 {
                self.report.visited += 1;
                if let Some(by) = self.flag_rejection(item) {
                    self.trace(|r| Event::Rejected {
                        node: r.node(c),
                        by,
                    });
                } else {
                    total += 1.0;
                    if drawn.is_none() || self.mem.next_f64() * total < 1.0 {
                        drawn = Some(c);
                    }
                }
            }
            c = item.end as usize;
        }
        let c = drawn?;
        Some(Pick::one(c, self.items[c].depth as usize, NO_DSLOT, 1.0))
    }

    /// Records a kept pick in the shuffle rounds: each delegating shuffle
    /// group on its chain, from depth `from` down, runs the next item.
    fn commit(&mut self, pick: &Pick<L>, from: usize) {
        for j in from..pick.end as usize {
            let g = pick.chain[j] as usize;
            if self.items[g].policy == Policy::Shuffle {
                self.mark(g, pick.chain[j + 1] as usize);
            }
        }
    }

    /// Shuffle bookkeeping (slot: `used` mask in the low 32 bits, round
    /// count in the high 32): group `g` runs its child item `c`. A child
    /// already used in this round is only drawn when no unused child
    /// accepts, which starts a new round; a round also ends once every
    /// child has been used.
    fn mark(&mut self, g: usize, c: usize) {
        let item = &self.items[g];
        let slot = item.shuffle as usize;
        let state = self.mem.slots[slot];
        let mut used = state & 0xFFFF_FFFF;
        let mut rounds = state >> 32;
        let bit = 1u64 << self.items[c].child_index;
        let all = (1u64 << item.child_count) - 1;
        if used & bit != 0 {
            used = 0;
            rounds = rounds.wrapping_add(1) & 0xFFFF_FFFF;
        }
        used |= bit;
        if used == all {
            used = 0;
            rounds = rounds.wrapping_add(1) & 0xFFFF_FFFF;
        }
        self.mem.slots[slot] = (rounds << 32) | used;
    }

    /// Tries candidate `c`: preconditions, cheapest first, then its `decide`
    /// (or, for a delegating group, its children).
    fn evaluate(&mut self, c: usize) -> Option<Pick<L>> {
        self.evaluate_in(c, false)
    }

    /// [`evaluate`](Self::evaluate); `dry` as in [`select_in`](Self::select_in).
    ///
    /// Inlined into each policy's loop: a candidate with nothing to call
    /// (no `decide`, no DBlock, not delegating) is decided here at once.
    #[inline(always)]
    fn evaluate_in(&mut self, c: usize, dry: bool) -> Option<Pick<L>> {
        let item = &self.items[c];
        self.report.visited += 1;
        if let Some(by) = self.flag_rejection(item) {
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by,
            });
            return None;
        }
        if item.is(Has::TIMER) {
            if self.timer_waits(item) {
                self.trace(|r| Event::Rejected {
                    node: r.node(c),
                    by: Rejection::Timer,
                });
                return None;
            }
            self.mem.slots[item.timer as usize] = self.input.now.to_bits();
        }
        if item.has.intersects(Has::SYNC.union(Has::SLOT))
            && let Some(by) = self.shared_rejection(c)
        {
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by,
            });
            return None;
        }
        if !item.has.intersects(
            Has::DELEGATE
                .union(Has::DBLOCK)
                .union(Has::DECIDE)
                .union(Has::SYNC),
        ) {
            return Some(Pick::one(c, item.depth as usize, NO_DSLOT, 1.0));
        }
        self.decide(c, dry)
    }

    /// The rest of [`evaluate_in`](Self::evaluate_in) for a candidate that
    /// passed its preconditions: its `decide` with its DBlock, or, for a
    /// delegating group, its children; then its group role, if it has one.
    #[inline(never)]
    fn decide(&mut self, c: usize, dry: bool) -> Option<Pick<L>> {
        let item = &self.items[c];
        let depth = item.depth as usize;
        // A group role may still turn the candidate down once it has
        // accepted: its pick is then kept (shuffle rounds marked) only
        // after the role lets it in.
        let role = item.is(Has::SYNC) && item.role != NO_SLOT;
        let pick = if item.is(Has::DELEGATE) {
            let Some(mut pick) = self.select_in(c, 0, 0, dry || role) else {
                self.trace(|r| Event::Rejected {
                    node: r.node(c),
                    by: Rejection::NoChild,
                });
                return None;
            };
            pick.chain[depth] = c as u16;
            pick
        } else {
            let slot = if item.is(Has::DBLOCK) {
                if let Some(b) = item.behavior
                    && !b.dblock.fits(N)
                {
                    dblock_does_not_fit(item.decider.name, b.name, N);
                }
                self.alloc()
            } else {
                NO_DSLOT
            };
            let value = if item.is(Has::DECIDE) {
                match self.call_decide(c, slot) {
                    Some(value) => value,
                    None => {
                        self.free(slot);
                        return None;
                    }
                }
            } else {
                1.0
            };
            Pick::one(c, depth, slot, value)
        };
        if role && let Some(by) = self.role_rejection(item) {
            self.free(pick.slot);
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by,
            });
            return None;
        }
        if role && !dry && item.is(Has::DELEGATE) {
            self.commit(&pick, depth);
        }
        if item.is(Has::DELEGATE) {
            let value = pick.value;
            self.trace(|r| Event::Decided {
                node: r.node(c),
                value,
            });
        }
        Some(pick)
    }

    /// Without a tracer, a candidate whose flag tests fail, or whose timer
    /// has not run out, is rejected before any of the candidate machinery
    /// runs (with one, `evaluate` rejects it and says why). Nothing is
    /// written: a candidate that passes is tried in full by `evaluate`.
    #[inline(always)]
    fn rejected_early(&mut self, item: &Item<A>) -> bool {
        if T::ENABLED {
            return false;
        }
        let rejected =
            self.flag_rejection(item).is_some() || (item.is(Has::TIMER) && self.timer_waits(item));
        self.report.visited += u32::from(rejected);
        rejected
    }

    /// Whether the timer of `item` has not run out yet.
    #[inline(always)]
    fn timer_waits(&self, item: &Item<A>) -> bool {
        let last = f64::from_bits(self.mem.slots[item.timer as usize]);
        period_runs(last, self.input.now, item.every)
    }

    fn flag_rejection(&self, item: &Item<A>) -> Option<Rejection> {
        if !item.decision.passes(self.input.decision) {
            return Some(Rejection::Decision);
        }
        if item.is(Has::STIMULI) && !item.stimuli.passes(self.input.stimuli) {
            return Some(Rejection::Stimuli);
        }
        None
    }

    /// Calls the `decide` of item `c`, letting it fill scratch `slot`.
    /// `Some(value)` when it accepts (above 0; NaN rejects).
    ///
    /// Out of line: it calls through a pointer anyway, and inlined into
    /// the walk it cost the steady tick a few instructions (callgrind, W1).
    #[inline(never)]
    fn call_decide(&mut self, c: usize, slot: u8) -> Option<f32> {
        let f = self.items[c].decide?;
        let sink = (slot != NO_DSLOT).then(|| self.pool.sink(slot as usize));
        let raw = DecideRaw {
            input: self.input,
            item: ItemIdx(c as u16),
            sink,
        };
        let value = f(self.agent, raw);
        if value > 0.0 {
            let value = value.min(f32::MAX);
            self.trace(|r| Event::Decided {
                node: r.node(c),
                value,
            });
            Some(value)
        } else {
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by: Rejection::Decide,
            });
            None
        }
    }

    fn alloc(&mut self) -> u8 {
        let free = (!self.used).trailing_zeros() as usize;
        if free >= L {
            // Unreachable by the nesting bound above; the DBlock is then
            // simply not carried.
            return NO_DSLOT;
        }
        self.used |= 1 << free;
        free as u8
    }

    fn free(&mut self, slot: u8) {
        if slot != NO_DSLOT {
            self.used &= !(1u32 << slot);
            self.pool.clear(slot as usize);
        }
    }

    /// Sets the per-level fields of [`cx`](Self::cx) for a callback of
    /// `item`, active at level `k`.
    fn fill_cx(&mut self, k: usize, item: &Item<A>) {
        self.cx.since = self.mem.levels[k].since;
        self.cx.flags = item.behavior_flags;
        self.cx.depth = k as u8;
        self.cx.action = if item.is(Has::LAUNCH) {
            sync::action_state(self.mem.slots[item.action as usize])
        } else {
            ActionState::None
        };
    }

    /// The child of slot group `g` that its `select` names for this agent.
    fn selected(&self, g: usize) -> Option<usize> {
        let item = &self.items[g];
        let want = (item.decider.select?)(self.agent);
        let end = item.end as usize;
        let mut c = g + 1;
        while c < end {
            if Some(self.items[c].child_index as usize) == want {
                return Some(c);
            }
            c = self.items[c].end as usize;
        }
        None
    }

    /// The crowd's shared state; only items with shared checks or deferred
    /// actions reach it, and `check` made sure it is there for them.
    fn shared(&self) -> &TreeShared {
        match &self.mem.shared {
            Some(shared) => shared,
            None => unreachable!("`check` requires a TreeShared for this tree"),
        }
    }

    /// The checks of a candidate with shared checks or a slot: its gate
    /// and global cooldown, or, for a slot group, whether the agent
    /// selects a child tree at all.
    #[inline(never)]
    fn shared_rejection(&self, c: usize) -> Option<Rejection> {
        let item = &self.items[c];
        if item.is(Has::SYNC)
            && let Some(by) = self.sync_rejection(item)
        {
            return Some(by);
        }
        if item.is(Has::SLOT) && self.selected(c).is_none() {
            return Some(Rejection::NoSelection);
        }
        None
    }

    /// The gate and global cooldown of a candidate.
    fn sync_rejection(&self, item: &Item<A>) -> Option<Rejection> {
        let shared = self.shared();
        let sync = &item.decider.pre.sync;
        if item.gate != NO_SLOT && !shared.gate_open(item.gate, sync.gate) {
            return Some(Rejection::Gate);
        }
        if item.cooldown != NO_SLOT
            && !shared.cooldown_ready(item.cooldown, self.input.now, sync.cooldown)
        {
            return Some(Rejection::Cooldown);
        }
        None
    }

    /// The group role of a candidate that accepts: it registers in the
    /// lobby, and goes on only once its group has formed.
    fn role_rejection(&mut self, item: &Item<A>) -> Option<Rejection> {
        let mem = &mut *self.mem;
        let shared = mem.shared.as_deref()?;
        let size = item.decider.pre.sync.together;
        match shared.role_want(
            item.role,
            size,
            &mut mem.slots[mem.tree.shape.role_slot(item.role)],
        ) {
            RoleAnswer::Enter => None,
            RoleAnswer::Wait => Some(Rejection::Waiting),
            RoleAnswer::Busy => Some(Rejection::RoleBusy),
        }
    }

    /// Takes item `i`'s gate slot, cooldown and role place, all or none
    /// (a cooldown already stamped stays stamped). Fails only when another
    /// agent, ticked in parallel, got there first.
    fn claim(&mut self, i: usize) -> bool {
        let item = &self.items[i];
        let sync = &item.decider.pre.sync;
        let now = self.input.now;
        let mem = &mut *self.mem;
        let Some(shared) = mem.shared.as_deref() else {
            return false;
        };
        let gated = item.gate != NO_SLOT;
        let refused = if gated && !shared.gate_take(item.gate, sync.gate) {
            Rejection::Gate
        } else if item.cooldown != NO_SLOT
            && !shared.cooldown_take(item.cooldown, now, sync.cooldown)
        {
            Rejection::Cooldown
        } else if item.role != NO_SLOT
            && !shared.role_enter(
                item.role,
                &mut mem.slots[mem.tree.shape.role_slot(item.role)],
            )
        {
            Rejection::Waiting
        } else {
            return true;
        };
        if gated && refused != Rejection::Gate {
            shared.gate_give(item.gate);
        }
        self.trace(|r| Event::Rejected {
            node: r.node(i),
            by: refused,
        });
        false
    }

    /// Gives back what item `i`, leaving the path, holds in the shared
    /// state; a pending deferred action is cancelled.
    fn release(&mut self, i: usize) {
        let item = &self.items[i];
        if T::ENABLED && item.action != NO_SLOT {
            let slot = self.mem.slots[item.action as usize];
            if sync::action_state(slot) == ActionState::Pending {
                let ticket = sync::ticket_of(self.shared().id(), item.action, slot);
                self.trace(|r| Event::Cancelled {
                    node: r.node(i),
                    ticket,
                });
            }
        }
        let mem = &mut *self.mem;
        if let Some(shared) = mem.shared.as_deref() {
            sync::release(shared, item, i as u16, &mut mem.slots);
        }
    }

    /// Launches the deferred action of the behavior active at level `k`.
    /// False when `launch` declines or the queue is full.
    fn launch(&mut self, k: usize, i: usize) -> bool {
        let item = &self.items[i];
        self.fill_cx(k, item);
        let Some(action) = self.mem.blocks.launch(k, self.agent, &self.cx) else {
            return false;
        };
        let agent = self.input.agent;
        let mem = &mut *self.mem;
        let Some(shared) = mem.shared.as_deref() else {
            return false;
        };
        let slot = &mut mem.slots[item.action as usize];
        let serial = shared.next_serial();
        let ticket = Ticket::new(shared.id(), agent, item.action, serial);
        let queued = shared.push(ActionRequest {
            agent,
            item: ItemIdx(i as u16),
            ticket,
            op: ActionOp::Launch(action),
        });
        if !queued {
            return false;
        }
        *slot = sync::action_slot(agent, serial, ActionState::Pending);
        self.trace(|r| Event::Launched {
            node: r.node(i),
            action,
            ticket,
        });
        true
    }

    /// A deferred action's tick: its own `tick` if it has one, else it runs
    /// until the game system reports back.
    #[inline(never)]
    fn tick_deferred(&mut self, k: usize, i: usize) -> bool {
        let items = self.items;
        self.fill_cx(k, &items[i]);
        if self.cx.action.is_done() {
            let state = self.cx.action;
            self.trace(|r| Event::ActionReported {
                node: r.node(i),
                state,
            });
        }
        match self.items[i].behavior {
            Some(b) if b.has_tick => self.mem.blocks.tick(k, self.agent, &self.cx),
            _ => self.cx.action == ActionState::Pending,
        }
    }

    /// The end of a tick: the agent leaves the lobbies of the group roles
    /// it did not ask again in this tick.
    #[inline(never)]
    fn sweep_roles(&mut self) {
        let mem = &mut *self.mem;
        let shape = mem.tree.shape;
        if let Some(shared) = mem.shared.as_deref() {
            for r in 0..shape.roles as u16 {
                shared.role_sweep(r, &mut mem.slots[shape.role_slot(r)]);
            }
        }
    }

    fn node(&self, i: usize) -> NodeRef {
        let item = &self.items[i];
        NodeRef {
            index: ItemIdx(i as u16),
            name: item.decider.name,
            depth: item.depth,
        }
    }

    /// Hands an event to the tracer; compiled out when tracing is off.
    #[inline(always)]
    fn trace(&mut self, event: impl FnOnce(&Self) -> Event) {
        if T::ENABLED {
            let event = event(self);
            self.tracer.event(&event);
        }
    }
}

/// Only a hand-made table that skipped [`Tree::validate`] gets here.
#[cold]
#[inline(never)]
fn dblock_does_not_fit(decider: &str, behavior: &str, block: usize) -> ! {
    panic!(
        "decider `{decider}`: the DBlock of behavior `{behavior}` does not fit a {block}-byte block"
    )
}

#[cold]
#[inline(never)]
fn warn_subset_violation(group: &str, agent: u32) {
    log::warn!(
        target: "bt",
        "subset rule: group `{group}` accepted but none of its children can run (agent {agent})"
    );
}
