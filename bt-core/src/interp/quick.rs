//! The quick redecide: a leaf ended, and its group picks the next child
//! without the step machine.
//!
//! In most crowds the most common change is a leaf behavior that finishes
//! inside a group whose children are decided by their flag tests alone
//! (an idle group drawing its next animation, a sequence moving on). The
//! steady walk hands that case here. It does what the step machine's
//! `Fail`, `Choose` and `Enter` steps do for it, in the same order and
//! with the same counts, and hands over to the step machine at the first
//! thing it does not cover: a group with no child left, a picked child
//! that is a group or launches a deferred action, or a new leaf that
//! fails at once.

use crate::decl::{Ctx, Policy, TickInput};
use crate::memory::raw::Entered;
use crate::memory::{self, AgentMemory, Level};
use crate::tree::{Has, Item};

use super::Why;
use super::steady::Bail;

/// Where the step machine goes on after a quick redecide at level `k`:
/// the leaf there was deactivated and masked in its group (one redecide).
#[derive(Clone, Copy, Debug)]
pub(super) enum Then {
    /// The group found no child to run: it fails for the reason given.
    GroupFails(Why),
    /// The group picked this child, a group or a deferred action: enter
    /// it at level `k`.
    Enter(u16),
    /// The picked leaf was entered at level `k` (one activation) and failed
    /// for the reason given.
    Failed(Why),
}

/// The leaf at level `k` (its group at `k - 1`), marked `QUICK_END` by the
/// compile step in a tree whose redecide limit is not 0, ended in a tick
/// that has visited `visited` deciders so far.
///
/// `Ok(visited)`: the tick is over; the group's new leaf is active and
/// running. `Err`: the step machine goes on from where this stopped.
#[inline(always)]
pub(super) fn redecide<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    k: usize,
    mut visited: u32,
) -> Result<u32, (Bail, u32)> {
    let items = mem.tree.items;
    let g = mem.levels[k - 1].item as usize;
    let group = &items[g];
    let leaf = &items[mem.levels[k].item as usize];
    // `Fail`: the leaf leaves the path, then is masked in its group.
    if leaf.is(Has::DEACTIVATE) {
        cx.since = mem.levels[k].since;
        cx.flags = leaf.behavior_flags;
        cx.depth = k as u8;
        mem.blocks.deactivate(k, agent, cx);
    }
    mem.set_depth(k);
    mem.blocks.release(k);
    let ci = leaf.child_index;
    let level = &mut mem.levels[k - 1];
    level.mask |= 1u64 << ci;
    level.redecides = level.redecides.saturating_add(1);
    if group.policy == Policy::Sequential {
        level.cursor = ci + 1;
    }
    let (mask, cursor) = (level.mask, level.cursor);
    // `Choose`, among the children `g + 1 .. end`.
    let children = &items[g + 1..group.end as usize];
    let picked = if group.is(Has::BARE_LEAVES) {
        // Child `c` is item `g + 1 + c`, and every child passes (both shifts
        // are below 128: at most 64 children).
        let all = ((1u128 << group.child_count) - 1) as u64;
        let from = (u128::MAX << cursor) as u64;
        let open = all & from & !mask;
        if group.policy == Policy::Random {
            pick_bit(&mut mem.rng, open, &mut visited)
        } else {
            // The first open child passes: it is the only one tested.
            visited += u32::from(open != 0);
            (open != 0).then(|| open.trailing_zeros() as usize)
        }
    } else if group.policy == Policy::Random {
        draw(&mut mem.rng, children, g + 1, mask, input, &mut visited)
    } else {
        first(children, g + 1, mask, cursor, input, &mut visited)
    };
    let Some(c) = picked else {
        let why = if group.policy == Policy::Sequential {
            // A sequence that ran out of children is done, not failed.
            Why::Ended
        } else {
            Why::NoChild
        };
        return Err((Bail::Redecided(k, Then::GroupFails(why)), visited));
    };
    let c = g + 1 + c;
    let item = &items[c];
    if item.has.intersects(Has::GROUP.union(Has::LAUNCH)) {
        return Err((Bail::Redecided(k, Then::Enter(c as u16)), visited));
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
        let why = match mem.blocks.enter(k, b, agent, cx) {
            Entered::Running => return Ok(visited),
            Entered::ActivateFailed => Why::ActivateFailed,
            Entered::Ended => Why::Ended,
        };
        return Err((Bail::Redecided(k, Then::Failed(why)), visited));
    }
    Ok(visited)
}

/// The random policy's draw among plain children, as the step machine
/// makes it: the same reservoir, so the same random numbers. Children
/// start at item `base`; returns the drawn child's offset in `children`.
#[inline(always)]
fn draw<A: 'static>(
    rng: &mut u64,
    children: &[Item<A>],
    base: usize,
    mask: u64,
    input: &TickInput,
    visited: &mut u32,
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

/// The prioritized (and sequential, from `cursor` on) pick among plain
/// children: the offset in `children` of the first not masked that
/// passes its flag tests. Children start at item `base`.
#[inline(always)]
fn first<A: 'static>(
    children: &[Item<A>],
    base: usize,
    mask: u64,
    cursor: u8,
    input: &TickInput,
    visited: &mut u32,
) -> Option<usize> {
    let mut c = 0;
    while let Some(item) = children.get(c) {
        if item.child_index >= cursor && mask & (1u64 << item.child_index) == 0 {
            *visited += 1;
            if item.flags_pass(input.decision, input.stimuli) {
                return Some(c);
            }
        }
        c = item.end as usize - base;
    }
    None
}
