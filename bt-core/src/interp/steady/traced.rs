//! The traced tick's walk and the events of a walk.

use crate::decl::{ItemIdx, TickInput};
use crate::memory::AgentMemory;
use crate::tree::Tree;

use super::super::{Event, NoTrace, Tally, Tracer, WalkStop};
use super::{Bail, ended, node, walk};

/// A traced tick: the steady walk first, as an untraced tick takes it,
/// handing `tracer` the same events as the step machine would (or, for a
/// tracer that takes no steady tick, untraced, and [`Event::Walked`] where
/// it stops); the step machine goes on from wherever it stops (an ended
/// behavior, a candidate, a deferred action), with no quick steps, which
/// trace nothing. A tick that changes nothing, most of a running crowd's,
/// then costs its walk and its events (for a flight recorder, its walk
/// alone), not a step machine's run. How the tick went goes to `tally`,
/// with no report built for a tick that changed nothing.
///
/// Always inlined: a flight recorder reaches it from its crowd loop and
/// from its single ticks alike, and out of line it costs a recorded W1
/// tick 6 instructions more (one watched agent among 1 000: 4).
#[inline(always)]
pub(in crate::interp) fn traced<
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
    // As an untraced tick decides it (written out there, where a helper
    // costs W1's crowd loop an instruction per agent-tick).
    if memory.depth() == 0
        || (tree.needs_shared() && !memory.joined_now())
        || super::super::check(tree, memory, input).is_err()
    {
        // A copy, as an untraced tick makes: the caller's input never has
        // its address taken, and stays in registers.
        let input = *input;
        return tally.ticked(super::super::run(tree, agent, memory, &input, tracer, None));
    }
    super::super::with_cx(tree, memory, input, |memory, mut cx| {
        let walked = if T::STEADY {
            walk(tree, agent, memory, &mut cx, tracer, true)
        } else {
            // The walk of an untraced tick; where it stopped, if it did.
            // It stops at a gate as well: the step machine's events say
            // what the gate did.
            let walked = walk(tree, agent, memory, &mut cx, &mut NoTrace, false);
            if let Err((bail, _)) = walked {
                walked_event(tree, memory, bail, tracer);
            }
            walked
        };
        let from = match walked {
            Ok(visited) => return tally.steady(memory, visited),
            Err((Bail::Ended(k, found), visited)) => {
                match ended(tree, agent, memory, &mut cx, k, found, visited, tracer) {
                    Ok(visited) => return tally.redecided(memory, visited),
                    Err(from) => from,
                }
            }
            Err(from) => from,
        };
        let input = *input;
        tally.ticked(super::super::run(
            tree,
            agent,
            memory,
            &input,
            tracer,
            Some(from),
        ))
    })
}

/// The [`Event::Walked`] of an untraced walk that stopped at `bail`.
#[inline(always)]
fn walked_event<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    mem: &AgentMemory<A, L, S, N>,
    bail: Bail,
    tracer: &mut T,
) {
    let (k, stop) = match bail {
        Bail::Walk(k) => (k, WalkStop::Before),
        Bail::Ended(k, _) => (k, WalkStop::Ended),
        Bail::NoChild(k) => (
            k,
            WalkStop::At {
                from: ItemIdx(mem.levels[k].item + 1),
            },
        ),
        Bail::Checks(k, from) => (
            k,
            WalkStop::At {
                from: ItemIdx(from as u16),
            },
        ),
        Bail::Quick(..) => unreachable!("the quick steps run untraced"),
    };
    tracer.event(&Event::Walked {
        node: node(tree.items, mem.levels[k].item as usize),
        stop,
    });
}

/// The `Start` event of a tick with `input`.
#[inline(always)]
pub(in crate::interp) fn start_event<T: Tracer>(tracer: &mut T, input: &TickInput) {
    tracer.event(&Event::Start {
        agent: input.agent,
        now: input.now,
        dt: input.dt,
        decision: input.decision,
        stimuli: input.stimuli,
    });
}

/// The `End` event of a tick that ends with `mem`'s path, having visited
/// `visited` deciders.
#[inline(always)]
pub(in crate::interp) fn end_event<
    A: 'static,
    T: Tracer,
    const L: usize,
    const S: usize,
    const N: usize,
>(
    tracer: &mut T,
    mem: &AgentMemory<A, L, S, N>,
    visited: u32,
) {
    let leaf = mem.leaf().map(|l| node(mem.tree.items, l.get()));
    tracer.event(&Event::End { leaf, visited });
}
