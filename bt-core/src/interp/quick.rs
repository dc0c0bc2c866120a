//! The quick redecide, and the quick steps: the changes of an untraced
//! tick in the parts of a tree that decide by flag tests and timers alone,
//! without the step machine.
//!
//! In most crowds the most common change is a leaf behavior that finishes
//! inside a group whose children are decided by their flag tests alone
//! (an idle group drawing its next animation, a sequence moving on). The
//! steady walk hands that case to [`redecide`]. Whatever else such a tick
//! does (the group ran out of children, a higher-priority sibling took
//! over, a group was entered) goes on in the quick steps (`steps.rs`).
//! Both do what the step machine's `Fail`, `Choose` and `Enter` steps do,
//! in the same order and with the same counts, and hand over to the step
//! machine, at the very step it would be at, at the first thing they do
//! not cover: a `decide` to call, a DBlock, a delegating or shuffled,
//! scored or slot group, a shared check, a deferred action, a group that
//! is entered and finds no child, the redecide budget running out.
//!
//! The quick redecide also serves a traced tick: it then hands its tracer
//! the step machine's events of what it does. The quick steps stay
//! untraced; a traced tick goes on in the step machine instead.

use crate::decl::{Ctx, Policy, TickInput, period_runs};
use crate::memory::{self, AgentMemory, Level};
use crate::raw::Entered;
use crate::tree::{Has, Item, Tree};

use super::steady::{Bail, node};
use super::{Event, Rejection, Tracer, Why};

mod steps;

pub(super) use steps::{Done, checks, go_on};

/// A step of the step machine (see `run.rs`), where the quick steps hand
/// a tick over to it. Levels are `u8`, items `u16`, as in the memory.
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    /// The decider at level `k` failed.
    Fail(u8, Why),
    /// The group at level `k` picks a child (`true`: just entered).
    Choose(u8, bool),
    /// The group at level `k` picked and found no child to run.
    NoPick(u8, bool),
    /// Item `c` is entered at level `k`.
    Enter(u8, u16),
    /// The walk goes on from level `k`.
    Walk(u8),
}

/// What the quick steps did in a tick so far, counted as the step
/// machine's report counts it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub(super) activated: u16,
    pub(super) deactivated: u16,
    /// Masked redecides, the count the redecide budget is checked against.
    pub(super) redecides: u32,
}

impl Counts {
    /// The redecides as a report counts them: saturating at `u16::MAX`.
    #[inline(always)]
    pub(super) fn reported_redecides(&self) -> u16 {
        self.redecides.min(u32::from(u16::MAX)) as u16
    }
}

/// The leaf at level `k` (its group at `k - 1`), marked `QUICK_END` by the
/// compile step in a tree whose redecide limit is not 0, ended in a tick
/// that has visited `visited` deciders so far.
///
/// `Ok(visited)`: the tick is over; the group's new leaf is active and
/// running. `Err`: the tick goes on from where this stopped ([`Bail::Quick`]).
/// A traced redecide hands `tracer` the step machine's events for what it
/// does, in the step machine's order.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn redecide<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    k: usize,
    mut visited: u32,
    tracer: &mut T,
) -> Result<u32, (Bail, u32)> {
    let items = tree.items;
    let g = mem.levels[k - 1].item as usize;
    let group = &items[g];
    let leaf = &items[mem.levels[k].item as usize];
    // `Fail`: the leaf leaves the path, then is masked in its group. (One
    // level of `steps::deactivate_to`, written out: its loop costs this
    // path 15 instructions of W1's tick.)
    if leaf.is(Has::DEACTIVATE) {
        cx.since = mem.levels[k].since;
        cx.flags = leaf.behavior_flags;
        cx.depth = k as u8;
        mem.blocks.deactivate(k, agent, cx);
    }
    mem.set_depth(k);
    mem.blocks.release(k);
    let mut n = Counts {
        activated: 0,
        deactivated: 1,
        redecides: 1,
    };
    mask(mem, k - 1, leaf.child_index, group.policy);
    // `Choose`, among the children `g + 1 .. end`.
    let Some(c) = repick(tree, mem, g, k, input, &mut visited, tracer) else {
        let step = Step::Fail((k - 1) as u8, ran_out(group.policy));
        return Err((Bail::Quick(step, n), visited));
    };
    let item = &items[c];
    if item.has.intersects(Has::GROUP.union(Has::LAUNCH)) {
        return Err((Bail::Quick(Step::Enter(k as u8, c as u16), n), visited));
    }
    // `Enter` a leaf: its block, `activate`, and its first tick.
    mem.levels[k] = Level {
        since: input.now,
        mask: 0,
        item: c as u16,
        redecides: 0,
        cursor: 0,
    };
    mem.set_depth(k + 1);
    if let Some(b) = item.behavior {
        cx.since = input.now;
        cx.flags = item.behavior_flags;
        cx.depth = k as u8;
        let why = match enter(mem, k, c, b, agent, cx, tracer) {
            Entered::Running => return Ok(visited),
            Entered::ActivateFailed => Why::ActivateFailed,
            Entered::Ended => Why::Ended,
        };
        n.activated = 1;
        return Err((Bail::Quick(Step::Fail(k as u8, why), n), visited));
    }
    if T::ENABLED {
        activated(tracer, items, c);
    }
    Ok(visited)
}

/// The pick of group `g`, at level `k - 1`, after its leaf at `k` failed
/// (off the path, masked), as [`pick`] makes it; a traced one first hands
/// `tracer` the step machine's events of that failure and redecide.
#[inline(always)]
fn repick<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    mem: &mut AgentMemory<A, L, S, N>,
    g: usize,
    k: usize,
    input: &TickInput,
    visited: &mut u32,
    tracer: &mut T,
) -> Option<usize> {
    if T::ENABLED {
        let items = tree.items;
        let failed = mem.levels[k].item as usize;
        tracer.event(&Event::Deactivated {
            node: node(items, failed),
            why: Why::Ended,
        });
        tracer.event(&Event::Redecide {
            group: node(items, g),
            failed: node(items, failed),
            mask: mem.levels[k - 1].mask,
        });
    }
    pick(tree, mem, g, input, visited, tracer)
}

/// Enters the behavior `b` of leaf `c` at level `k` (its block,
/// `activate`, its first tick); a traced one hands `tracer` the step
/// machine's events of it.
#[inline(always)]
fn enter<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    mem: &mut AgentMemory<A, L, S, N>,
    k: usize,
    c: usize,
    b: &'static crate::raw::ErasedBehavior<A>,
    agent: &mut A,
    cx: &Ctx,
    tracer: &mut T,
) -> Entered {
    let entered = mem.blocks.enter(k, b, agent, cx);
    if T::ENABLED {
        entered_events(tracer, mem.tree.items, c, entered);
    }
    entered
}

/// The events of the step machine's `Enter` of leaf `c`, whose behavior
/// was entered as `entered` says.
#[inline(always)]
fn entered_events<A: 'static, T: Tracer>(
    tracer: &mut T,
    items: &[Item<A>],
    c: usize,
    entered: Entered,
) {
    let item = &items[c];
    let Some(b) = item.behavior else { return };
    if let Entered::ActivateFailed = entered {
        tracer.event(&Event::ActivateFailed {
            node: node(items, c),
            behavior: b.name,
        });
        return;
    }
    activated(tracer, items, c);
    if item.is(Has::TICK) {
        tracer.event(&Event::Ticked {
            node: node(items, c),
            behavior: b.name,
            running: matches!(entered, Entered::Running),
        });
    }
}

/// The `Activated` event of item `c`.
#[inline(always)]
fn activated<A: 'static, T: Tracer>(tracer: &mut T, items: &[Item<A>], c: usize) {
    let item = &items[c];
    tracer.event(&Event::Activated {
        node: node(items, c),
        behavior: item.behavior.map(|b| b.name),
        flags: item.behavior_flags,
    });
}

/// Why the flag tests of `item`, which fail, turned it down.
#[inline(always)]
pub(super) fn flag_rejection<A: 'static>(item: &Item<A>, input: &TickInput) -> Rejection {
    if item.decision.passes(input.decision) {
        Rejection::Stimuli
    } else {
        Rejection::Decision
    }
}

/// Masks the child with index `ci` in the group at level `g`, as a
/// failure does: one more redecide there, and a sequence moves past it.
#[inline(always)]
fn mask<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &mut AgentMemory<A, L, S, N>,
    g: usize,
    ci: u8,
    policy: Policy,
) {
    let level = &mut mem.levels[g];
    level.mask |= 1u64 << ci;
    level.redecides = level.redecides.saturating_add(1);
    if policy == Policy::Sequential {
        level.cursor = ci + 1;
    }
}

/// Why a group with no child left to run fails: a sequence that ran out
/// of children is done, not failed.
#[inline(always)]
fn ran_out(policy: Policy) -> Why {
    if policy == Policy::Sequential {
        Why::Ended
    } else {
        Why::NoChild
    }
}

/// The pick of group `g` (its level's mask and cursor as they stand), as
/// the step machine's policy makes it for a group marked `PLAIN_CHILDREN`
/// or `QUICK_GROUP`: the same candidates visited, the same timers
/// stamped, the same random numbers drawn. Returns the picked item.
#[inline(always)]
fn pick<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    mem: &mut AgentMemory<A, L, S, N>,
    g: usize,
    input: &TickInput,
    visited: &mut u32,
    tracer: &mut T,
) -> Option<usize> {
    let items = tree.items;
    let group = &items[g];
    let level = &mem.levels[group.depth as usize];
    let (mask, cursor) = (level.mask, level.cursor);
    if group.is(Has::BARE_LEAVES) {
        // Child `c` is item `g + 1 + c`, and every child passes (both shifts
        // are below 128: at most 64 children).
        let all = ((1u128 << group.child_count) - 1) as u64;
        let from = (u128::MAX << cursor) as u64;
        let open = all & from & !mask;
        let c = if group.policy == Policy::Random {
            pick_bit(&mut mem.rng, open, visited)
        } else {
            // The first open child passes: it is the only one tested.
            *visited += u32::from(open != 0);
            (open != 0).then(|| open.trailing_zeros() as usize)
        };
        return c.map(|c| g + 1 + c);
    }
    let children = &items[g + 1..group.end as usize];
    let c = if group.policy == Policy::Random {
        draw(&mut mem.rng, children, g + 1, mask, input, visited, tracer)
    } else {
        first(
            children,
            g + 1,
            mask,
            cursor,
            input,
            &mut mem.slots,
            visited,
            tracer,
        )
    };
    c.map(|c| g + 1 + c)
}

/// The random policy's draw among plain children, as the step machine
/// makes it: the same reservoir, so the same random numbers. Children
/// start at item `base`; returns the drawn child's offset in `children`.
#[inline(always)]
fn draw<A: 'static, T: Tracer>(
    rng: &mut u64,
    children: &[Item<A>],
    base: usize,
    mask: u64,
    input: &TickInput,
    visited: &mut u32,
    tracer: &mut T,
) -> Option<usize> {
    let mut total = 0u64;
    let mut drawn = None;
    let mut c = 0;
    while let Some(item) = children.get(c) {
        if mask & (1u64 << item.child_index) == 0 {
            *visited += 1;
            if item.flags_pass(input.decision, input.stimuli) {
                total += 1;
                if total == 1 || memory::one_in(rng, total) {
                    drawn = Some(c);
                }
            } else if T::ENABLED {
                tracer.event(&Event::Rejected {
                    node: node_at(children, base, c),
                    by: flag_rejection(item, input),
                });
            }
        }
        c = item.end as usize - base;
    }
    drawn
}

/// The random policy's draw among the children whose bits are set in
/// `open`, all passing (each one visited): the same reservoir as
/// [`draw`], on bits.
#[inline(always)]
fn pick_bit(rng: &mut u64, mut open: u64, visited: &mut u32) -> Option<usize> {
    if open == 0 {
        return None;
    }
    let mut drawn = open.trailing_zeros();
    open &= open - 1;
    let mut total = 1;
    while open != 0 {
        total += 1;
        if memory::one_in(rng, total) {
            drawn = open.trailing_zeros();
        }
        open &= open - 1;
    }
    *visited += total as u32;
    Some(drawn as usize)
}

/// The prioritized (and sequential, from `cursor` on) pick among
/// children decided by their flag tests and timers: the offset in
/// `children` of the first not masked that passes them. A timer that lets
/// its child through is stamped with the tick's time. Children start at
/// item `base`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn first<A: 'static, T: Tracer>(
    children: &[Item<A>],
    base: usize,
    mask: u64,
    cursor: u8,
    input: &TickInput,
    slots: &mut [u64],
    visited: &mut u32,
    tracer: &mut T,
) -> Option<usize> {
    let mut c = 0;
    while let Some(item) = children.get(c) {
        if item.child_index >= cursor && mask & (1u64 << item.child_index) == 0 {
            *visited += 1;
            if accepts(item, input, slots) {
                return Some(c);
            }
            if T::ENABLED {
                tracer.event(&Event::Rejected {
                    node: node_at(children, base, c),
                    by: rejection(item, input),
                });
            }
        }
        c = item.end as usize - base;
    }
    None
}

/// Child `c` of `children`, which start at item `base`, as events name it.
#[inline(always)]
fn node_at<A: 'static>(children: &[Item<A>], base: usize, c: usize) -> super::NodeRef {
    let item = &children[c];
    super::NodeRef {
        index: crate::decl::ItemIdx((base + c) as u16),
        name: item.decider.name,
        depth: item.depth,
    }
}

/// Why `item` did not accept, after [`accepts`] turned it down (its timer
/// untouched then): its flag tests, or else its timer.
#[inline(always)]
fn rejection<A: 'static>(item: &Item<A>, input: &TickInput) -> Rejection {
    if item.flags_pass(input.decision, input.stimuli) {
        Rejection::Timer
    } else {
        flag_rejection(item, input)
    }
}

/// Whether `item`, a candidate with no `decide`, DBlock, delegation or
/// shared check, accepts: its flag tests pass and its timer, if it has
/// one, has run out (and is stamped with the tick's time).
#[inline(always)]
fn accepts<A: 'static>(item: &Item<A>, input: &TickInput, slots: &mut [u64]) -> bool {
    if !item.flags_pass(input.decision, input.stimuli) {
        return false;
    }
    // A group with a tuned timer among its children is no quick one.
    debug_assert!(item.decider.tuned.every.is_none());
    if item.is(Has::TIMER) {
        let slot = &mut slots[item.timer as usize];
        if period_runs(f64::from_bits(*slot), input.now, item.every) {
            return false;
        }
        *slot = input.now.to_bits();
    }
    true
}
