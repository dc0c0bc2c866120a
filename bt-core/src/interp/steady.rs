//! The steady tick: an untraced tick walks the active path without the
//! step machine for as long as nothing changes.
//!
//! Most ticks of a running agent keep its whole path: each level's
//! behavior ticks and goes on running, and every earlier sibling of a
//! prioritized group is turned down by its flag tests or its timer. This
//! walk does exactly what the step machine's walk does in that case, with
//! no `Run` to build, no step to dispatch and no DBlock scratch to clear.
//! At the first level where something else may happen (a behavior ended,
//! an earlier sibling passed its flag tests, a scored or slot group, a
//! deferred action) it stops and says where; the step machine takes over
//! from that very point, so no callback runs twice and none is skipped.
//!
//! A traced tick ([`traced`]) takes the same walk, and the quick
//! redecide of an ended leaf after it, handing its tracer the events the
//! step machine would hand it, in the same order. For a tracer that takes
//! no steady tick ([`Tracer::STEADY`] false, a flight recorder's) the walk
//! is the untraced one, reusing the last tick's finding: a steady tick
//! sends nothing, and a tick that goes on past its walk sends one
//! [`Event::Walked`] for it; so a recorded crowd pays for the events of
//! what changes, not for a traced walk on every tick.

use crate::decl::tune_field::tuned_timer_runs;
use crate::decl::tuned::Tuned;
use crate::decl::{Ctx, Policy, TickInput, period_runs, period_runs_until};
use crate::memory::shared::TreeShared;
use crate::memory::{AgentMemory, Steady};
use crate::tree::{Has, Item, NO_SLOT, Tree};

use super::quick::{self, Counts, Step};

mod traced;

use super::{Event, NoTrace, NodeRef, Rejection, Tracer};
pub(super) use traced::{end_event, start_event, traced};

/// Where the step machine takes over from a steady walk.
#[derive(Clone, Copy, Debug)]
pub(super) enum Bail {
    /// Level `k` is not visited yet: walk from it.
    Walk(usize),
    /// Level `k` was visited; its behavior ended. The walk found every
    /// earlier sibling on the levels above turned down, for as long as
    /// given.
    Ended(usize, Found),
    /// Level `k`, a group, was visited but has no active child.
    NoChild(usize),
    /// Level `k`, a group, was visited and its behavior ticked; its policy
    /// checks go on from child `from` (prioritized groups: the earlier
    /// siblings before `from` were turned down by their flag tests or
    /// timers).
    Checks(usize, usize),
    /// The quick steps (`quick.rs`) went as far as this step, with these
    /// counts.
    Quick(Step, Counts),
}

/// What a steady walk that stopped at an ended behavior found about the
/// earlier siblings on the levels above it: all turned down, and for how
/// long.
#[derive(Clone, Copy, Debug)]
pub(super) enum Found {
    /// As the finding the memory keeps says: the walk reused it.
    Kept,
    /// From the tick's clock until this time (the earliest an earlier
    /// sibling's timer runs out).
    Until(f64),
}

/// The finding of a walk at clock `now` whose earlier siblings are turned
/// down until `until`: the span rounded down to an `f32`, so that it never
/// reaches further (for any `t` at or after `until`, `t - now` rounds to
/// at least `until - now`), and 0 (an empty window) when `until` is not
/// after `now` or is NaN.
#[inline]
fn finding(input: &TickInput, until: f64, visited: u32) -> Steady {
    let span = until - input.now;
    let mut short = span as f32;
    if f64::from(short) > span {
        short = short.next_down();
    }
    if short.is_nan() || short <= 0.0 {
        short = 0.0;
    }
    Steady {
        decision: input.decision,
        stimuli: input.stimuli,
        from: input.now,
        span: short,
        visited,
    }
}

/// Whether the clock `now` is in the window of `steady`. Not before
/// `from`: a timer stamped ahead of the clock runs out once the clock is
/// more than a period before its stamp (see `period_runs`), so a clock
/// gone back is not covered.
///
/// One comparison: the time since `from`, rounded to an `f32`, compared
/// by its bits with the span's (never NaN, see [`finding`]). The bits of
/// `f32` values from +0 up are in their order, and anything before `from`
/// (or NaN) has bits above every span's. Rounding keeps the order, so a
/// clock at or after `from + span` never rounds below the span.
#[inline(always)]
fn covers(steady: &Steady, now: f64) -> bool {
    ((now - steady.from) as f32).to_bits() < steady.span.to_bits()
}

/// How an earlier sibling of the active child fares in the steady walk.
enum Sibling {
    /// Turned down by its flag tests: as long as the flag words stay.
    Flags,
    /// Turned down by its timer, which runs until the time given.
    Timer(f64),
    /// A candidate: the step machine must try it.
    Candidate,
}

/// How `item`, an earlier sibling of the active child, fares: exactly as
/// the full candidate test would turn it down (it writes nothing). The
/// values of the crowd's tunables are `tuned`.
#[inline(always)]
fn sibling<A: 'static>(
    item: &Item<A>,
    input: &TickInput,
    slots: &[u64],
    tuned: Tuned<'_>,
) -> Sibling {
    if !item.flags_pass(input.decision, input.stimuli) {
        return Sibling::Flags;
    }
    if item.is(Has::TIMER) {
        let last = f64::from_bits(slots[item.timer as usize]);
        if period_runs(last, input.now, item.every) {
            return Sibling::Timer(period_runs_until(last, item.every));
        }
        // A tuned timer's number is 0: it is read from the crowd.
        if item.is(Has::TUNED) && tuned_timer_runs(item.decider.tuned.every, tuned, last, input.now)
        {
            // Its period may change by the next tick: the finding is
            // good for this tick only.
            return Sibling::Timer(input.now);
        }
    }
    Sibling::Candidate
}

/// Walks the active path of a non-idle agent while nothing changes.
/// `tree` is the memory's (the caller has checked it): read from here
/// rather than through the memory, its fields are constants for a tree
/// declared as a `static`.
///
/// `Ok(visited)`: the tick is over; it changed nothing and visited
/// `visited` deciders. `Err((bail, visited))`: the step machine goes on
/// from `bail`, with `visited` deciders visited so far. `cx` is the tick's
/// callback context. If a callback panics the memory is abandoned, as the
/// step machine would leave it.
///
/// A traced walk (`T::ENABLED`) hands `tracer` the events the step
/// machine's walk would, in its order, from the tick's start up to where
/// it stops (its `End` too when it finishes the tick); the step machine
/// that takes over goes on from there. It tests every earlier sibling,
/// to say what turned it down, rather than reuse the last tick's finding
/// (which only an untraced walk does).
///
/// With `reads`, for a tick that runs in its crowd's order, an earlier
/// sibling whose gate is full is turned down here, as the step machine
/// would turn it down (see [`gate_refuses`]); without, the walk stops at
/// it, having read nothing of the crowd's shared state.
#[inline(always)]
pub(super) fn walk<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    tracer: &mut T,
    reads: bool,
) -> Result<u32, (Bail, u32)> {
    let input = TickInput::of(cx);
    // Not `guarded`: with a closure here, W3's crowd loop compiled to 36
    // instructions more per agent-tick.
    let guard = Abandon(memory);
    let result = walk_levels(tree, agent, &mut *guard.0, &input, cx, tracer, reads);
    // Nothing panicked: the memory is consistent.
    core::mem::forget(guard);
    result
}

/// The untraced walk of a tick that stopped at the policy checks of the
/// prioritized group at level `k`, going on from its child `from`
/// (`visited` deciders visited so far), in the crowd's order: what
/// [`walk`] with `reads` does from there. Its finding holds for this tick
/// only. If a callback panics the memory is abandoned.
#[inline(always)]
pub(super) fn walk_on<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    (k, from, visited): (usize, usize, u32),
) -> Result<u32, (Bail, u32)> {
    let input = TickInput::of(cx);
    let guard = Abandon(memory);
    let mem = &mut *guard.0;
    // The finding holds for this tick only.
    let (mut visited, mut until) = (visited, input.now);
    let result = earlier_siblings(
        tree,
        mem,
        &input,
        cx,
        &mut NoTrace,
        true,
        (k, from),
        (&mut visited, &mut until),
    )
    .and_then(|()| {
        let at = At {
            k: k + 1,
            visited,
            until,
        };
        walk_path(tree, agent, mem, &input, cx, &mut NoTrace, true, at)
    });
    // Nothing panicked: the memory is consistent.
    core::mem::forget(guard);
    result
}

/// Where [`walk_path`] starts: at level `k`, with `visited` deciders
/// visited and the earlier siblings above turned down until `until`.
struct At {
    k: usize,
    visited: u32,
    until: f64,
}

/// Whether `item`, an earlier sibling that passed its flag tests and has
/// no timer, is turned down by a gate of its own number that is full in
/// `shared` now: as the step machine's candidate test turns it down, which
/// checks the gate before anything else it may have (a global cooldown,
/// a group role, a `decide`) and changes nothing then. Reads the crowd's
/// shared state: for a tick that runs in the crowd's order.
#[inline(always)]
fn gate_refuses<A: 'static>(shared: Option<&TreeShared>, item: &Item<A>) -> bool {
    item.has & Has::SYNC.union(Has::TIMER).union(Has::TUNED) == Has::SYNC
        && item.gate != NO_SLOT
        && shared.is_some_and(|s| !s.gate_open(item.gate, item.decider.pre.sync.gate))
}

/// Runs `f` on `memory`, abandoning it to an idle state if a callback
/// panics, as the step machine would leave it.
#[inline(always)]
pub(super) fn guarded<A: 'static, const L: usize, const S: usize, const N: usize, R>(
    memory: &mut AgentMemory<A, L, S, N>,
    f: impl FnOnce(&mut AgentMemory<A, L, S, N>) -> R,
) -> R {
    let guard = Abandon(memory);
    let result = f(&mut *guard.0);
    // Nothing panicked: the memory is consistent.
    core::mem::forget(guard);
    result
}

/// Abandons the memory to an idle state if a callback panics.
struct Abandon<'m, A: 'static, const L: usize, const S: usize, const N: usize>(
    &'m mut AgentMemory<A, L, S, N>,
);

impl<A: 'static, const L: usize, const S: usize, const N: usize> Drop for Abandon<'_, A, L, S, N> {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

#[inline(always)]
fn walk_levels<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    tracer: &mut T,
    reads: bool,
) -> Result<u32, (Bail, u32)> {
    let steady = mem.steady;
    if !T::ENABLED
        && (input.decision ^ steady.decision) | (input.stimuli ^ steady.stimuli) == 0
        && covers(&steady, input.now)
    {
        return walk_known(tree, agent, mem, cx);
    }
    if T::ENABLED {
        start_event(tracer, input);
    }
    let at = At {
        k: 0,
        visited: 0,
        until: f64::INFINITY,
    };
    walk_path(tree, agent, mem, input, cx, tracer, reads, at)
}

/// The walk down the active path from `at`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn walk_path<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    tracer: &mut T,
    reads: bool,
    at: At,
) -> Result<u32, (Bail, u32)> {
    let items = tree.items;
    let depth = mem.depth();
    let At {
        mut k,
        mut visited,
        mut until,
    } = at;
    loop {
        let i = mem.levels[k].item as usize;
        let item = &items[i];
        if item.is(Has::LAUNCH) {
            return Err((Bail::Walk(k), visited));
        }
        let level = &mut mem.levels[k];
        level.mask = 0;
        level.redecides = 0;
        visited += 1;
        if T::ENABLED {
            tracer.event(&Event::Visit {
                node: node(items, i),
            });
        }
        if item.is(Has::TICK) {
            cx.since = level.since;
            cx.flags = item.behavior_flags;
            cx.depth = k as u8;
            let running = mem.blocks.tick(k, agent, cx);
            if T::ENABLED
                && let Some(b) = item.behavior
            {
                tracer.event(&Event::Ticked {
                    node: node(items, i),
                    behavior: b.name,
                    running,
                });
            }
            if !running {
                return Err((Bail::Ended(k, Found::Until(until)), visited));
            }
        }
        if !item.is(Has::GROUP) {
            break;
        }
        if k + 1 >= depth {
            return Err((Bail::NoChild(k), visited));
        }
        match item.policy {
            Policy::Prioritized => {
                let found = (&mut visited, &mut until);
                earlier_siblings(tree, mem, input, cx, tracer, reads, (k, i + 1), found)?;
            }
            Policy::Scored | Policy::Slot => {
                return Err((Bail::Checks(k, i + 1), visited));
            }
            Policy::Sequential | Policy::Random | Policy::Shuffle => {}
        }
        k += 1;
    }
    mem.steady = finding(input, until, visited);
    sweep(mem);
    if T::ENABLED {
        end_event(tracer, mem, visited);
    }
    Ok(visited)
}

/// The earlier siblings of the active child of the prioritized group at
/// level `k`, from child `from`: each turned down by its flag tests, its
/// timer (until when, into `until`) or, with `reads`, its full gate,
/// counted into `visited`; `Err` at the first that is a candidate.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn earlier_siblings<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    mem: &AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &Ctx,
    tracer: &mut T,
    reads: bool,
    (k, from): (usize, usize),
    (visited, until): (&mut u32, &mut f64),
) -> Result<(), (Bail, u32)> {
    let items = tree.items;
    let active = mem.levels[k + 1].item as usize;
    let mut c = from;
    while c < active {
        let child = &items[c];
        let by = match sibling(child, input, &mem.slots, cx.tuned_values()) {
            Sibling::Flags => quick::flag_rejection(child, input),
            Sibling::Timer(t) => {
                *until = until.min(t);
                Rejection::Timer
            }
            Sibling::Candidate if reads && gate_refuses(mem.shared.as_deref(), child) => {
                // The gate may open by the next tick: the finding holds
                // for this one only.
                *until = until.min(input.now);
                Rejection::Gate
            }
            Sibling::Candidate => return Err((Bail::Checks(k, c), *visited)),
        };
        if T::ENABLED {
            tracer.event(&Event::Rejected {
                node: node(items, c),
                by,
            });
        }
        *visited += 1;
        c = child.end as usize;
    }
    Ok(())
}

/// Item `i` as events name it.
#[inline(always)]
pub(super) fn node<A: 'static>(items: &[Item<A>], i: usize) -> NodeRef {
    let item = &items[i];
    NodeRef {
        index: crate::decl::ItemIdx(i as u16),
        name: item.decider.name,
        depth: item.depth,
    }
}

/// The steady walk when the last tick's walk holds: it walked every
/// level and cleared its marks, and every earlier sibling it turned down
/// is still turned down; only the behaviors tick. Untraced: a traced walk
/// says what turned each sibling down, so it tests them again.
#[inline(always)]
fn walk_known<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
) -> Result<u32, (Bail, u32)> {
    let items = tree.items;
    let depth = mem.depth();
    // Only a quick redecide's group, the leaf's parent, can hold marks
    // (a walk clears every level it passes): clear them, with no branch to
    // mispredict (at depth 1, on the last level, which is not active).
    let level = &mut mem.levels[depth.wrapping_sub(2).min(L - 1)];
    level.mask = 0;
    level.redecides = 0;
    for k in 0..depth {
        let level = mem.levels[k];
        let item = &items[level.item as usize];
        if item.is(Has::TICK) {
            cx.since = level.since;
            cx.flags = item.behavior_flags;
            cx.depth = k as u8;
            let running = mem.blocks.tick(k, agent, cx);
            if !running {
                // The leaf's level scans nothing: the walk had visited all
                // it visits.
                let visited = if k + 1 == depth {
                    mem.steady.visited
                } else {
                    visited_to(mem, k)
                };
                return Err((Bail::Ended(k, Found::Kept), visited));
            }
        }
    }
    let visited = mem.steady.visited;
    sweep(mem);
    Ok(visited)
}

/// The behavior at level `k` ended in a steady walk that had visited
/// `visited` deciders and found the earlier siblings above turned down
/// for as long as `found` says. A `QUICK_END` leaf's group redecides it
/// here, and the tick is over (`Ok(visited)`: one deactivation, one
/// redecide and one activation); anything else goes on in the step
/// machine, from where this returns. If a callback panics the memory is abandoned, as the
/// step machine would leave it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn ended<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    k: usize,
    found: Found,
    visited: u32,
    tracer: &mut T,
) -> Result<u32, (Bail, u32)> {
    let input = &TickInput::of(cx);
    let items = tree.items;
    // A `QUICK_END` leaf is the deepest level, below its group.
    let quick = k > 0
        && items[memory.levels[k].item as usize].is(Has::QUICK_END)
        && tree.redecide_limit > 0;
    if !quick {
        return Err((Bail::Ended(k, found), visited));
    }
    let walked = visited;
    // The redecide makes the finding invalid by its `from` alone: a kept
    // finding gets it back.
    let from = memory.steady.from;
    // Not `guarded`: the closure is not always inlined (a crate that
    // ticks one tree type from two places got it out of line, a call per
    // quick redecide).
    let guard = Abandon(memory);
    let visited = quick::redecide(tree, agent, &mut *guard.0, input, cx, k, walked, tracer);
    // Nothing panicked: the memory is consistent.
    core::mem::forget(guard);
    let visited = visited?;
    if items[memory.levels[k - 1].item as usize].policy != Policy::Prioritized {
        // The new leaf has no earlier sibling to test: the next walk finds
        // what this one found.
        match found {
            Found::Kept => memory.steady.from = from,
            Found::Until(until) => memory.steady = finding(input, until, walked),
        }
    }
    sweep(memory);
    if T::ENABLED {
        end_event(tracer, memory, visited);
    }
    Ok(visited)
}

/// Deciders a steady walk visits up to level `k` and its behavior: the
/// active ones down to `k`, and the earlier siblings on the levels above
/// it, all turned down while the last tick's finding holds.
#[cold]
#[inline(never)]
fn visited_to<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &AgentMemory<A, L, S, N>,
    k: usize,
) -> u32 {
    let items = mem.tree.items;
    let mut visited = 0;
    for j in 0..k {
        let i = mem.levels[j].item as usize;
        if items[i].policy == Policy::Prioritized {
            let active = mem.levels[j + 1].item as usize;
            let mut c = i + 1;
            while c < active {
                visited += 1;
                c = items[c].end as usize;
            }
        }
    }
    visited + k as u32 + 1
}

/// What ends every tick with a shared state: the group-role lobbies swept
/// (none to sweep in a tree without group roles).
#[inline(always)]
pub(super) fn sweep<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &mut AgentMemory<A, L, S, N>,
) {
    if mem.tree.shape.roles > 0 && mem.shared.is_some() {
        mem.sweep_roles();
    }
}

#[cfg(test)]
mod tests {
    use super::{covers, finding};
    use crate::decl::TickInput;
    use crate::memory::Steady;

    /// A finding's window starts at its own clock and never reaches its
    /// `until`, whatever the magnitudes (the span is rounded down to an
    /// `f32`); an invalid finding covers no clock.
    #[test]
    fn a_window_covers_from_its_clock_to_before_its_end() {
        let nows = [0.0, 0.25, 3.0, 1e5 + 0.1, 1.7e9, -42.5];
        let spans = [1e-7, 0.1, 1.0 - 1e-6, 7.3, 1e6, f64::INFINITY];
        for now in nows {
            for span in spans {
                let until = now + span;
                let steady = finding(&TickInput::new(now, 0.0), until, 3);
                assert!(covers(&steady, now) || until <= now, "{now} {span}");
                for t in [
                    until,
                    until + 1e-3,
                    until * (1.0 + 1e-15),
                    now - 1e-9,
                    now - 1.0,
                ] {
                    if t >= until || t < now {
                        assert!(!covers(&steady, t), "{now} + {span} covers {t}");
                    }
                }
                // Just before the end, for spans an f32 keeps exactly.
                if span == 0.1 || span == 7.3 {
                    let inside = now + f64::from(steady.span) * 0.5;
                    assert!(covers(&steady, inside), "{now} + {span} at {inside}");
                }
            }
        }
        for until in [0.0, -1.0, f64::NAN] {
            assert!(!covers(&finding(&TickInput::new(0.0, 0.0), until, 0), 0.0));
        }
        for t in [0.0, -1e300, 1e300, f64::MAX, -f64::MAX] {
            assert!(!covers(&Steady::INVALID, t));
        }
    }
}
