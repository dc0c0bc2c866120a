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
use crate::memory::raw::DIn;
use crate::memory::{AgentMemory, Level};
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

/// Whether the end of `leaf`, the active child of `group`, can be
/// redecided quickly: the group's children are plain, its policy picks
/// by their flag tests alone and it has no `decide` to call again, the
/// leaf holds nothing in the shared state, and the tree allows a
/// redecide.
#[inline(always)]
pub(super) fn applies<A: 'static>(group: &Item<A>, leaf: &Item<A>, limit: u32) -> bool {
    let plain = group.has.bits() & (Has::PLAIN_CHILDREN.bits() | Has::RECHECK.bits())
        == Has::PLAIN_CHILDREN.bits();
    plain
        && matches!(
            group.policy,
            Policy::Random | Policy::Prioritized | Policy::Sequential
        )
        && !leaf.has.intersects(Has::SYNC.union(Has::LAUNCH))
        && limit > 0
}

/// The leaf at level `k` (its group at `k - 1`, for which [`applies`]
/// holds) ended in a tick that has visited `visited` deciders so far.
///
/// `Ok(visited)`: the tick is over; the group's new leaf is active and
/// running. `Err`: the step machine goes on from where this stopped.
#[inline(never)]
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
    // `Choose`.
    let picked = if group.policy == Policy::Random {
        draw(mem, g, mask, input, &mut visited)
    } else {
        first(items, g, mask, cursor, input, &mut visited)
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
        mem.blocks.init(k, b);
        cx.since = input.now;
        cx.flags = item.behavior_flags;
        cx.depth = k as u8;
        if item.is(Has::ACTIVATE) && !mem.blocks.activate(k, agent, DIn::EMPTY, cx) {
            return Err((
                Bail::Redecided(k, Then::Failed(Why::ActivateFailed)),
                visited,
            ));
        }
        if item.is(Has::TICK) && !mem.blocks.tick(k, agent, cx) {
            return Err((Bail::Redecided(k, Then::Failed(Why::Ended)), visited));
        }
    }
    Ok(visited)
}

/// The random policy's draw among plain children, as the step machine
/// makes it: the same reservoir, so the same random numbers.
#[inline(always)]
fn draw<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &mut AgentMemory<A, L, S, N>,
    g: usize,
    mask: u64,
    input: &TickInput,
    visited: &mut u32,
) -> Option<usize> {
    let items = mem.tree.items;
    let end = items[g].end as usize;
    let mut total = 0.0f64;
    let mut drawn = None;
    let mut c = g + 1;
    while c < end {
        let item = &items[c];
        if mask & (1u64 << item.child_index) == 0 {
            *visited += 1;
            if passes(item, input) {
                total += 1.0;
                if drawn.is_none() || mem.next_f64() * total < 1.0 {
                    drawn = Some(c);
                }
            }
        }
        c = item.end as usize;
    }
    drawn
}

/// The prioritized (and sequential, from `cursor` on) pick among plain
/// children: the first not masked that passes its flag tests.
#[inline(always)]
fn first<A: 'static>(
    items: &[Item<A>],
    g: usize,
    mask: u64,
    cursor: u8,
    input: &TickInput,
    visited: &mut u32,
) -> Option<usize> {
    let end = items[g].end as usize;
    let mut c = g + 1;
    while c < end {
        let item = &items[c];
        if item.child_index >= cursor && mask & (1u64 << item.child_index) == 0 {
            *visited += 1;
            if passes(item, input) {
                return Some(c);
            }
        }
        c = item.end as usize;
    }
    None
}

/// A plain child's flag tests.
#[inline(always)]
fn passes<A: 'static>(item: &Item<A>, input: &TickInput) -> bool {
    item.decision.passes(input.decision)
        && (!item.is(Has::STIMULI) || item.stimuli.passes(input.stimuli))
}
