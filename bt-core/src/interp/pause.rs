//! A tick that stops before its first access to the crowd's shared state,
//! for `par_tick_all` and for crates that tick a crowd in their own way
//! (bt-bevy): the part of a tick that reads and writes only the agent's
//! own data runs on any thread, and the rest, which depends on every agent
//! ticked before it, goes on later in index order.
//!
//! The steady walk (told so), the quick redecide and the quick steps touch
//! no shared state (they hand over to the step machine at any gate,
//! cooldown, role or deferred action), and the end-of-tick sweep of role lobbies
//! touches it only for an agent that waits in one, so a tick stops where
//! it would enter the step machine, at a step boundary, with nothing to
//! undo: the step machine goes on from there as it would have at once.
//! (A tick that stopped at an earlier sibling of a prioritized group's
//! active child, often one a full gate turns down, goes on in the steady
//! walk from that sibling, as a tick in order would have.)

use crate::decl::{Policy, TickInput};
use crate::memory::AgentMemory;
use crate::tree::{Has, Tree};

use super::{
    NoTrace, One, Stopped, Tally, TickError, TickReport, check, ended, finish, log,
    quick_after_end, quick_after_stop, run, steady, stopped, tick_member,
};

/// Where a stopped tick goes on: from its start (nothing of it ran), or in
/// the step machine from where the steady walk or the quick steps
/// stopped. For crates that tick a crowd in their own way: see
/// [`tick_until_shared`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Resume {
    input: TickInput,
    from: Option<(steady::Bail, u32)>,
}

/// How [`tick_until_shared`] left a tick.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum UntilShared {
    /// The tick is over, without a step on the shared state: what
    /// [`tick`](crate::tick) would have returned.
    Finished(Result<TickReport, TickError>),
    /// It stopped before its first step that could read or write the
    /// shared state, having changed nothing there: go on with
    /// [`resume_tick`].
    Stopped(Resume),
}

/// [`tick`](crate::tick) up to the first step that could read or write the
/// crowd's shared state (a gate, a global cooldown, a group role, a
/// deferred action), for crates that tick a crowd in their own way: the
/// ticks of a crowd's agents may run this on any threads at once, and then
/// [`resume_tick`] each stopped one in index order; the results are those
/// of [`tick`](crate::tick) on every agent in index order. Untraced; a
/// tick with debug output on (or of an idle agent, or of one waiting in a
/// role's lobby) stops before it starts.
///
/// # Panics
/// As [`tick`](crate::tick): if a callback panics, the memory is left
/// idle, having given back what it held in the shared state.
#[doc(hidden)]
#[inline]
pub fn tick_until_shared<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
) -> UntilShared {
    let mut one = One::new();
    match member_until_shared(tree, agent, memory, input, &mut one) {
        None => UntilShared::Finished(one.0),
        Some(at) => UntilShared::Stopped(at),
    }
}

/// Goes on with a tick [`tick_until_shared`] stopped, as
/// [`tick`](crate::tick) would have gone on, and returns what it would
/// have returned: for crates that tick a crowd in their own way. `tree`,
/// `agent` and `memory` are the stopped tick's.
///
/// # Panics
/// As [`tick`](crate::tick).
#[doc(hidden)]
#[inline]
pub fn resume_tick<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    at: Resume,
) -> Result<TickReport, TickError> {
    let mut one = One::new();
    resume_member(tree, agent, memory, at, &mut one);
    one.0
}

/// Ticks as [`tick_member`] does, untraced, up to the first step that
/// could read or write the crowd's shared state: `None` when the tick
/// finished (`tally` has it), or where it stopped. A stopped tick has
/// changed nothing in the shared state, and goes on with
/// [`resume_member`].
#[inline(always)]
pub(crate) fn member_until_shared<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tally: &mut impl Tally,
) -> Option<Resume> {
    // As `untraced` decides whether to start in the step machine; a
    // logged tick, an agent waiting in a role lobby (the sweep that ends
    // its tick may leave it) and a tick that would rejoin the crowd's
    // counts do too.
    if log::level_for(input.agent) != 0
        || memory.depth() == 0
        || !memory.joined_now()
        || memory.in_lobby()
        || check(tree, memory, input).is_err()
    {
        return Some(Resume {
            input: *input,
            from: None,
        });
    }
    super::with_cx(tree, memory, input, |memory, mut cx| {
        let went = match steady::walk(tree, agent, memory, &mut cx, &mut NoTrace, false) {
            Ok(visited) => {
                tally.steady(memory, visited);
                return None;
            }
            Err((steady::Bail::Ended(k, found), visited)) => {
                match steady::ended(
                    tree,
                    agent,
                    memory,
                    &mut cx,
                    k,
                    found,
                    visited,
                    &mut NoTrace,
                ) {
                    Ok(visited) => {
                        tally.redecided(memory, visited);
                        return None;
                    }
                    Err(from) => {
                        let input = TickInput::of(&cx);
                        quick_after_end(agent, memory, &input, &mut cx, k, from)
                    }
                }
            }
            // An earlier sibling with a shared check that passed its flag
            // tests: the quick steps would hand it back as it is.
            Err(at @ (steady::Bail::Checks(_, c), _)) if tree.items[c].is(Has::SYNC) => Err(at),
            Err(from) => {
                let input = TickInput::of(&cx);
                quick_after_stop(agent, memory, &input, &mut cx, from)
            }
        };
        let input = TickInput::of(&cx);
        match went {
            Ok(done) => {
                tally.ticked(finish(tree, agent, memory, &input, Ok(done)));
                None
            }
            Err(from) => {
                // As the step machine starts: no steady walk found this.
                memory.steady.from = f64::INFINITY;
                Some(Resume {
                    input,
                    from: Some(from),
                })
            }
        }
    })
}

/// Goes on with a tick [`member_until_shared`] stopped, as it would have
/// gone on.
#[inline(never)]
pub(crate) fn resume_member<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    at: Resume,
    tally: &mut impl Tally,
) {
    let input = at.input;
    match at.from {
        None => tick_member(tree, agent, memory, &input, tally),
        // Stopped at an earlier sibling in a prioritized group, most often
        // one a full gate turns down: the walk goes on from it, now that
        // the tick runs in order.
        Some((steady::Bail::Checks(k, c), visited))
            if tree.items[memory.levels[k].item as usize].policy == Policy::Prioritized =>
        {
            walk_on(tree, agent, memory, &input, (k, c, visited), tally);
        }
        Some(from) => tally.ticked(run(tree, agent, memory, &input, &mut NoTrace, Some(from))),
    }
}

/// Goes on with a tick that stopped at the checks of the prioritized group
/// at level `k`, from its child `c` (`visited` deciders visited), as an
/// untraced tick in order goes on from its walk: the rest of the walk,
/// then the quick redecide, the quick steps or the step machine.
#[inline(never)]
fn walk_on<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    at: (usize, usize, u32),
    tally: &mut impl Tally,
) {
    super::with_cx(tree, memory, input, |memory, mut cx| match steady::walk_on(
        tree, agent, memory, &mut cx, at,
    ) {
        Ok(visited) => tally.steady(memory, visited),
        Err((steady::Bail::Ended(k, found), visited)) => {
            match ended(tree, agent, memory, &mut cx, (k, found, visited)) {
                Stopped::Redecided(visited) => tally.redecided(memory, visited),
                Stopped::Ran(result) => tally.ticked(result),
            }
        }
        Err(from) => tally.ticked(stopped(tree, agent, memory, &mut cx, from)),
    });
}
