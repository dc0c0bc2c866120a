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

mod error;
mod event;
mod jump;
mod kept;
pub(crate) mod log;
mod pause;
mod policy;
mod precondition;
mod quick;
mod report;
mod run;
mod shared;
mod steady;
mod walk;

pub use error::TickError;
pub use event::{Event, NoTrace, NodeRef, Rejection, Tracer, WalkStop, Why, write_event};
pub use report::TickReport;

#[doc(hidden)]
pub use kept::{Kept, Timed, tick_kept, tick_kept_timed};

use kept::One;
pub use pause::{Resume, UntilShared, resume_tick, tick_until_shared};
#[cfg(feature = "rayon")]
pub(crate) use pause::{member_until_shared, resume_member};
use quick::Counts;
use run::Run;
pub(crate) use shared::{pending_agents, pending_under};

use crate::decl::tuned::Tuned;
use crate::decl::{Ctx, TickInput};
use crate::memory::AgentMemory;
use crate::raw::DPool;
use crate::tree::Tree;

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
/// A tick of a tree whose behaviors take DBlocks keeps scratch space for
/// them of `levels × block size` bytes on the stack while its step machine
/// runs (384 bytes for three levels of 128-byte blocks); a tree without
/// DBlocks reserves none. Each memory block or DBlock value is built on
/// the stack before it is moved into its block. A tree with large blocks
/// needs a thread stack to match: with blocks of a few hundred KiB, more
/// than a rayon worker thread's 2 MiB default. `(levels + 8) × block size`
/// and 256 KiB more is enough, unoptimised builds included (they move a
/// value through a few frames); see
/// [What a tick costs in stack](crate::semantics#what-a-tick-costs-in-stack).
/// The memory itself is wherever the caller keeps it.
#[inline]
pub fn tick<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> Result<TickReport, TickError> {
    let mut one = One::new();
    tick_member(tree, agent, memory, input, &mut one);
    one.0
}

/// Where a crowd's loop adds up how its members' ticks went: a steady
/// tick (nothing changed, the agent's behavior is still the one its path
/// ends in) adds only what it visited, without a report to build. The
/// memory is the one ticked, as the tick left it.
pub(crate) trait Tally {
    /// A tick that changed nothing and visited `visited` deciders.
    fn steady<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    );
    /// A tick in which a leaf ended and its group quickly entered another
    /// leaf (one deactivation, one redecide, one activation), visiting
    /// `visited` deciders.
    fn redecided<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    );
    /// Any other tick.
    fn ticked(&mut self, result: Result<TickReport, TickError>);
}

/// [`tick`] for a crowd's loop, inlined into it: tallies how the tick went.
#[inline(always)]
pub(crate) fn tick_member<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tally: &mut impl Tally,
) {
    tick_member_at::<false, A, L, S, N>(tree, agent, memory, input, tally);
}

/// [`tick_member`]; `TIMED`: the input's times passed [`check`] already
/// (see [`Timed`](kept::Timed)), and the untraced tick does not test them.
#[inline(always)]
pub(crate) fn tick_member_at<
    const TIMED: bool,
    A: 'static,
    const L: usize,
    const S: usize,
    const N: usize,
>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tally: &mut impl Tally,
) {
    // Debug output off: one load and this branch.
    match log::level_for(input.agent) {
        0 => {
            let tuned = tuned_for(tree, memory);
            untraced::<TIMED, A, L, S, N>(tree, agent, memory, input, tally, tuned);
        }
        level => {
            // A copy: the caller's input never has its address taken in
            // the untraced tick, so it stays in registers there.
            let input = *input;
            tally.ticked(logged(level, tree, agent, memory, &input, &mut NoTrace));
        }
    }
}

/// The tunables a tick of `memory` reads: those of the memory's crowd for
/// a tree with tunables (a constant test where the tree is one), found
/// when the memory was made (the table's defaults for a memory of no
/// crowd), none for a tree without tunables; `'t` is the tick's (see
/// `raw::TunedAt::head`).
#[inline(always)]
fn tuned_for<'t, A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
) -> Tuned<'t> {
    if tree.tunables.is_some() {
        Tuned::of(memory.tuned.head())
    } else {
        Tuned::NONE
    }
}

/// [`tick_traced`] for a crowd's loop, inlined into it: tallies how the
/// tick went.
#[inline(always)]
pub(crate) fn tick_member_traced<
    A: 'static,
    T: Tracer,
    const L: usize,
    const S: usize,
    const N: usize,
>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
    tally: &mut impl Tally,
) {
    match log::level_for(input.agent) {
        0 => steady::traced(tree, agent, memory, input, tracer, tally),
        level => {
            let input = *input;
            tally.ticked(logged(level, tree, agent, memory, &input, tracer))
        }
    }
}

/// Runs `f` with `memory` and the callbacks' context of a tick with
/// `input`, which reads the tunables of the memory's crowd
/// ([`tuned_for`]).
#[inline(always)]
pub(crate) fn with_cx<A: 'static, R, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    f: impl FnOnce(&mut AgentMemory<A, L, S, N>, Ctx<'_>) -> R,
) -> R {
    let tuned = tuned_for(tree, memory);
    f(memory, Ctx::of(input).with_tuned(tuned))
}

/// An untraced tick. A running agent first walks its path without the
/// step machine, inlined into the caller's loop; the step machine takes
/// over only where something changes (or with the input refused, to say
/// why). Past the input checks, everything reads the tick's fields from
/// the callbacks' context.
///
/// `TIMED`: the input's times passed [`check`] already.
#[inline(always)]
fn untraced<const TIMED: bool, A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tally: &mut impl Tally,
    tuned: Tuned<'_>,
) {
    // A memory whose holdings a restore of its crowd's shared state
    // replaced counts them again in the step machine first (see
    // `AgentMemory::rejoin`).
    if memory.depth() == 0
        || (tree.needs_shared() && !memory.joined_now())
        || !(if TIMED {
            fits(tree, memory)
        } else {
            check(tree, memory, input).is_ok()
        })
    {
        let input = *input;
        return tally.ticked(run(tree, agent, memory, &input, &mut NoTrace, None));
    }
    // The callbacks' context: the tick's fields set once, the level's
    // before each call.
    let mut cx = Ctx::of(input).with_tuned(tuned);
    match steady::walk(tree, agent, memory, &mut cx, &mut NoTrace, true) {
        Ok(visited) => tally.steady(memory, visited),
        Err((steady::Bail::Ended(k, found), visited)) => {
            match ended(tree, agent, memory, &mut cx, (k, found, visited)) {
                Stopped::Redecided(visited) => tally.redecided(memory, visited),
                Stopped::Ran(result) => tally.ticked(result),
            }
        }
        Err(from) => tally.ticked(stopped(tree, agent, memory, &mut cx, from)),
    }
}

/// How a tick whose steady walk stopped at an ended behavior went on.
enum Stopped {
    /// A leaf ended and its group quickly entered another, visiting this
    /// many deciders in all.
    Redecided(u32),
    /// The quick steps or the step machine went on.
    Ran(Result<TickReport, TickError>),
}

/// An untraced tick whose steady walk stopped where the behavior at level
/// `k` ended (`found` and `visited` as [`steady::Bail::Ended`] has them):
/// a leaf is redecided quickly where its group allows it, anything else
/// goes on in the quick steps or the step machine. Inlined into the
/// crowd loop: about two in five of W1's ticks come here, and there the
/// tree's fields are constants when the tree is a `static`.
#[inline(always)]
fn ended<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    (k, found, visited): (usize, steady::Found, u32),
) -> Stopped {
    match steady::ended(tree, agent, memory, cx, k, found, visited, &mut NoTrace) {
        Ok(visited) => Stopped::Redecided(visited),
        Err(from) => Stopped::Ran(went_on(tree, agent, memory, cx, k, from)),
    }
}

/// The rest of [`ended`]'s tick, where no quick redecide finished it: the
/// quick steps, then the step machine if they stop. Out of line, as
/// [`stopped`].
#[inline(never)]
fn went_on<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    k: usize,
    (bail, visited): (steady::Bail, u32),
) -> Result<TickReport, TickError> {
    let input = TickInput::of(cx);
    let went = quick_after_end(agent, memory, &input, cx, k, (bail, visited));
    finish(tree, agent, memory, &input, went)
}

/// The quick steps of a tick whose steady walk stopped where the behavior
/// at level `k` ended and no quick redecide finished it.
#[inline(always)]
fn quick_after_end<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    k: usize,
    (bail, visited): (steady::Bail, u32),
) -> Result<quick::Done, (steady::Bail, u32)> {
    let (step, n) = match bail {
        steady::Bail::Quick(step, n) => (step, n),
        _ => (quick::Step::Fail(k as u8, Why::Ended), Counts::default()),
    };
    steady::guarded(memory, |mem| {
        quick::go_on(agent, mem, input, cx, step, n, visited)
    })
}

/// An untraced tick whose steady walk stopped at `from` for another
/// reason than an ended behavior: the quick steps go on where they can,
/// the step machine anywhere else. Out of line, to keep the crowd loop
/// small: in W1, 4 ticks in a hundred come here.
#[inline(never)]
fn stopped<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    (bail, visited): (steady::Bail, u32),
) -> Result<TickReport, TickError> {
    let input = TickInput::of(cx);
    let went = quick_after_stop(agent, memory, &input, cx, (bail, visited));
    finish(tree, agent, memory, &input, went)
}

/// The quick steps of a tick whose steady walk stopped at `bail` for
/// another reason than an ended behavior, where they can go on.
#[inline(always)]
fn quick_after_stop<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    (bail, visited): (steady::Bail, u32),
) -> Result<quick::Done, (steady::Bail, u32)> {
    match bail {
        steady::Bail::Checks(k, from) => steady::guarded(memory, |mem| {
            quick::checks(agent, mem, input, cx, k, from, visited)
        }),
        steady::Bail::NoChild(k) => steady::guarded(memory, |mem| {
            let choose = quick::Step::Choose(k as u8, false);
            quick::go_on(agent, mem, input, cx, choose, Counts::default(), visited)
        }),
        _ => Err((bail, visited)),
    }
}

/// The report of a tick the quick steps finished, or the step machine's
/// from where they stopped.
#[inline(always)]
fn finish<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    went: Result<quick::Done, (steady::Bail, u32)>,
) -> Result<TickReport, TickError> {
    match went {
        Ok((n, visited)) => {
            steady::sweep(memory);
            Ok(TickReport {
                leaf: memory.leaf(),
                activated: n.activated,
                deactivated: n.deactivated,
                redecides: n.reported_redecides(),
                visited,
                subset_violation: None,
            })
        }
        Err(from) => run(tree, agent, memory, input, &mut NoTrace, Some(from)),
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
    let log = log::LogTracer::new(level, input.agent, input.now);
    let result = run(tree, agent, memory, input, &mut log::Tee(tracer, log), None);
    if let Err(e) = &result {
        ::log::debug!(target: "bt", "agent {}: tick error: {e}", input.agent);
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
#[inline]
pub fn tick_traced<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
) -> Result<TickReport, TickError> {
    let mut one = One::new();
    tick_member_traced(tree, agent, memory, input, tracer, &mut one);
    one.0
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
    memory.rejoin();
    check(tree, memory, input)?;
    let mut tracer = NoTrace;
    with_cx(tree, memory, input, |memory, cx| {
        let mut r = Run::new(tree, agent, memory, input, &mut tracer, None, cx);
        r.deactivate_to(0, Why::Stopped);
        r.armed = false;
    });
    memory.leave_lobbies();
    Ok(())
}

/// Whether a tick (or, `ids` false, a `deactivate_all`) may run: the
/// memory is the tree's and has the shared state it needs, the times are
/// usable and, `ids` true, no deferred action of the memory is pending
/// under another agent id (a tree without deferred actions has none to
/// look at).
#[inline(always)]
fn check<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> Result<(), TickError> {
    // As `times_ok` and `fits`, in the order the compiler lays out best.
    let now_ok = input.now.abs() <= f64::MAX;
    let dt_ok = input.dt >= 0.0 && input.dt <= f32::MAX;
    let shared_ok = !tree.needs_shared() || memory.shared.is_some();
    if core::ptr::eq(memory.tree, tree) && now_ok && dt_ok && shared_ok {
        Ok(())
    } else {
        // The times by value: the input's address is never taken here.
        Err(refuse(tree, memory, input.now, input.dt))
    }
}

/// Whether `now` and `dt` are usable times for a tick.
#[inline(always)]
pub(crate) fn times_ok(now: f64, dt: f32) -> bool {
    // NaN fails both comparisons; -0.0 is a valid `dt`.
    now.abs() <= f64::MAX && (0.0..=f32::MAX).contains(&dt)
}

/// [`check`] but the times: the memory is the tree's and has the shared
/// state it needs.
#[inline(always)]
fn fits<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
) -> bool {
    let shared_ok = !tree.needs_shared() || memory.shared.is_some();
    core::ptr::eq(memory.tree, tree) && shared_ok
}

/// Why [`check`] refused a tick.
#[cold]
#[inline(never)]
fn refuse<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    now: f64,
    dt: f32,
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
    if !now.is_finite() {
        return TickError::InvalidInput {
            field: "now",
            value: now,
        };
    }
    TickError::InvalidInput {
        field: "dt",
        value: f64::from(dt),
    }
}

/// The step machine, for a whole tick or from where a steady walk
/// stopped (`from`). One instance per tracer type, so its steps are
/// inlined into it.
#[inline(never)]
fn run<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
    from: Option<(steady::Bail, u32)>,
) -> Result<TickReport, TickError> {
    // A steady walk that stopped had its input checked.
    if from.is_none() {
        memory.rejoin();
        check(tree, memory, input)?;
    }
    if tree.dblocks {
        with_dblocks(tree, agent, memory, input, tracer, from)
    } else {
        run_with(tree, agent, memory, input, tracer, from, None)
    }
}

/// [`run`] for a tree with DBlocks, with their scratch space in its own
/// stack frame: a tree without them reserves none.
#[inline(never)]
fn with_dblocks<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
    from: Option<(steady::Bail, u32)>,
) -> Result<TickReport, TickError> {
    let mut pool = DPool::new();
    run_with(tree, agent, memory, input, tracer, from, Some(&mut pool))
}

/// The step machine itself, with the DBlock scratch space `pool`, if the
/// tree has DBlocks.
#[inline(never)]
fn run_with<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
    from: Option<(steady::Bail, u32)>,
    pool: Option<&mut DPool<L, N>>,
) -> Result<TickReport, TickError> {
    with_cx(tree, memory, input, |memory, cx| {
        let mut r = Run::new(tree, agent, memory, input, tracer, pool, cx);
        let step = r.first_step(from);
        let result = r.run_from(step);
        r.armed = false;
        result
    })
}
