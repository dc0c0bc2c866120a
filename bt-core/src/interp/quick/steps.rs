//! The quick steps: `Fail`, `Choose` and `Enter`, and a prioritized
//! group's preemption, for an untraced tick in groups marked `QUICK_GROUP`
//! (see the parent module). The caller guards the memory: a callback may
//! panic.

use crate::decl::{Ctx, Policy, TickInput};
use crate::memory::{AgentMemory, Level};
use crate::raw::Entered;
use crate::tree::{Has, Item};

use super::super::steady::Bail;
use super::super::{NoTrace, Why};
use super::{Counts, Step, accepts, mask, pick, ran_out};

/// What the step machine's report needs from the quick steps: the counts
/// and the deciders visited.
pub(in crate::interp) type Done = (Counts, u32);

/// Goes on with an untraced tick from `step`, with `n` counted and
/// `visited` deciders visited so far; `cx` is the tick's callback context,
/// its level fields set before each call.
///
/// `Ok`: the tick is over. `Err`: the step machine goes on from the step
/// given ([`Bail::Quick`]), which nothing here has started.
pub(in crate::interp) fn go_on<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    mut step: Step,
    mut n: Counts,
    mut visited: u32,
) -> Result<Done, (Bail, u32)> {
    let items = mem.tree.items;
    loop {
        step = match step {
            Step::Fail(k8, _) => {
                let k = usize::from(k8);
                if !may_fail(mem, k, n.redecides) {
                    break;
                }
                let i = mem.levels[k].item as usize;
                deactivate_to(agent, mem, cx, k, &mut n);
                if k == 0 {
                    // The root failed: the agent is idle.
                    return Ok((n, visited));
                }
                n.redecides += 1;
                let gi = mem.levels[k - 1].item as usize;
                mask(mem, k - 1, items[i].child_index, items[gi].policy);
                Step::Choose(k8 - 1, false)
            }
            Step::Choose(k8, first) => {
                let g = mem.levels[usize::from(k8)].item as usize;
                let group = &items[g];
                if !quick_pick(items, g, g + 1, group.end as usize, input) {
                    break;
                }
                match pick(mem.tree, mem, g, input, &mut visited, &mut NoTrace) {
                    Some(c) => Step::Enter(k8 + 1, c as u16),
                    // Staying idle or breaking the Subset Rule: the step
                    // machine's, from the empty pick on.
                    None if first => return Err((Bail::Quick(Step::NoPick(k8, true), n), visited)),
                    None => Step::Fail(k8, ran_out(group.policy)),
                }
            }
            Step::Enter(k8, c) => {
                let k = usize::from(k8);
                let item = &items[usize::from(c)];
                if item.has.intersects(Has::SYNC.union(Has::LAUNCH)) {
                    break;
                }
                mem.levels[k] = Level {
                    since: input.now,
                    mask: 0,
                    item: c,
                    redecides: 0,
                    cursor: 0,
                };
                mem.set_depth(k + 1);
                n.activated = n.activated.saturating_add(1);
                if let Some(b) = item.behavior {
                    // Its block, `activate`, and its first tick (a group's
                    // before its children's).
                    cx.since = input.now;
                    cx.flags = item.behavior_flags;
                    cx.depth = k8;
                    match mem.blocks.enter(k, b, agent, cx) {
                        Entered::Running => {}
                        Entered::ActivateFailed => {
                            step = Step::Fail(k8, Why::ActivateFailed);
                            continue;
                        }
                        Entered::Ended => {
                            step = Step::Fail(k8, Why::Ended);
                            continue;
                        }
                    }
                }
                if !item.is(Has::GROUP) {
                    return Ok((n, visited));
                }
                Step::Choose(k8, true)
            }
            Step::NoPick(..) | Step::Walk(_) => break,
        };
    }
    Err((Bail::Quick(step, n), visited))
}

/// The policy checks of the prioritized group at level `k`, from child
/// `from` on, that a steady walk stopped at (`visited` deciders visited):
/// the first earlier sibling of the active child that accepts preempts
/// it. As the step machine's `checks`, for a group marked `QUICK_GROUP`
/// whose active levels below hold nothing in the shared state; anything
/// else is handed back as it came.
pub(in crate::interp) fn checks<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    cx: &mut Ctx,
    k: usize,
    from: usize,
    mut visited: u32,
) -> Result<Done, (Bail, u32)> {
    let items = mem.tree.items;
    let g = mem.levels[k].item as usize;
    let group = &items[g];
    let active = mem.levels[k + 1].item as usize;
    if !quick_pick(items, g, from, active, input)
        || group.policy != Policy::Prioritized
        || holds_shared(mem, k + 1)
    {
        return Err((Bail::Checks(k, from), visited));
    }
    let mut c = from;
    while c < active {
        let child = &items[c];
        visited += 1;
        if accepts(child, input, &mut mem.slots) {
            let mut n = Counts::default();
            deactivate_to(agent, mem, cx, k + 1, &mut n);
            let enter = Step::Enter(k as u8 + 1, c as u16);
            return go_on(agent, mem, input, cx, enter, n, visited);
        }
        c = child.end as usize;
    }
    let walk = Step::Walk(k as u8 + 1);
    Err((Bail::Quick(walk, Counts::default()), visited))
}

/// Whether the quick steps may pick in group `g` among its children from
/// item `from` to before item `to`: it is a `QUICK_GROUP`, and none of
/// those children with a shared check passes its flag tests (the step
/// machine makes a pick that may reach a shared check).
#[inline(always)]
fn quick_pick<A: 'static>(
    items: &[Item<A>],
    g: usize,
    from: usize,
    to: usize,
    input: &TickInput,
) -> bool {
    let marks = items[g].has & Has::QUICK_GROUP.union(Has::SYNC_CHILDREN);
    marks == Has::QUICK_GROUP
        || (marks == Has::QUICK_GROUP.union(Has::SYNC_CHILDREN)
            && !sync_child_passes(items, from, to, input))
}

/// Whether a child with a shared check among the siblings from item
/// `from` to before item `to` passes its flag tests.
#[cold]
#[inline(never)]
fn sync_child_passes<A: 'static>(
    items: &[Item<A>],
    from: usize,
    to: usize,
    input: &TickInput,
) -> bool {
    let mut c = from;
    while c < to {
        let child = &items[c];
        if child.is(Has::SYNC) && child.flags_pass(input.decision, input.stimuli) {
            return true;
        }
        c = child.end as usize;
    }
    false
}

/// Whether the quick steps may fail level `k`, `redecides` made so far:
/// nothing on the levels it deactivates holds shared state, and the
/// group above (if any) redecides within the budget without calling its
/// `decide` again.
#[inline(always)]
fn may_fail<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &AgentMemory<A, L, S, N>,
    k: usize,
    redecides: u32,
) -> bool {
    if holds_shared(mem, k) {
        return false;
    }
    k == 0
        || (redecides < mem.tree.redecide_limit
            && !mem.tree.items[mem.levels[k - 1].item as usize].is(Has::RECHECK))
}

/// Whether an active level from `k` down holds a gate slot, a cooldown,
/// a group role or a deferred action.
#[inline(always)]
fn holds_shared<A: 'static, const L: usize, const S: usize, const N: usize>(
    mem: &AgentMemory<A, L, S, N>,
    k: usize,
) -> bool {
    let items = mem.tree.items;
    (k..mem.depth()).any(|j| {
        let item = &items[mem.levels[j].item as usize];
        item.has.intersects(Has::SYNC.union(Has::LAUNCH))
    })
}

/// Deactivates every level from the deepest up to and including `level`,
/// as the step machine does (`deactivate`, off the path, the block
/// released), counting each.
#[inline(always)]
fn deactivate_to<A: 'static, const L: usize, const S: usize, const N: usize>(
    agent: &mut A,
    mem: &mut AgentMemory<A, L, S, N>,
    cx: &mut Ctx,
    level: usize,
    n: &mut Counts,
) {
    let items = mem.tree.items;
    while mem.depth() > level {
        let j = mem.depth() - 1;
        let item = &items[mem.levels[j].item as usize];
        if item.is(Has::DEACTIVATE) {
            cx.since = mem.levels[j].since;
            cx.flags = item.behavior_flags;
            cx.depth = j as u8;
            mem.blocks.deactivate(j, agent, cx);
        }
        mem.set_depth(j);
        mem.blocks.release(j);
        n.deactivated = n.deactivated.saturating_add(1);
    }
}
