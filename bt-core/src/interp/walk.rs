//! The walk down the active path: each level is kept, challenged by a
//! higher-priority sibling, preempted, entered or chosen afresh; a failed
//! level redecides its group or the one above.

use crate::decl::{ItemIdx, Policy};
use crate::memory::Level;
use crate::raw::DIn;
use crate::tree::Has;

use super::run::{NO_DSLOT, Pick, Run, Step, warn_subset_violation};
use super::{Event, TickError, Tracer, Why};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// An idle agent starts from the root.
    #[inline]
    pub(super) fn start(&mut self) -> Step<L> {
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
    #[inline]
    pub(super) fn walk(&mut self, mut k: usize) -> Step<L> {
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
            if let Some(step) = self.checks(k, i, active, i + 1) {
                return step;
            }
            k += 1;
        }
    }

    /// The policy checks of group `i`, visited at level `k` with `active`
    /// active below it: a prioritized group's earlier siblings from `from`
    /// on may preempt it, a scored group's children challenge it, a slot
    /// group follows its selection. `None`: the active child stays.
    #[inline(always)]
    pub(super) fn checks(
        &mut self,
        k: usize,
        i: usize,
        active: usize,
        from: usize,
    ) -> Option<Step<L>> {
        match self.items[i].policy {
            Policy::Prioritized => {
                let mut c = from;
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
                        return Some(self.preempt(k, pick));
                    }
                    c = self.items[c].end as usize;
                }
            }
            Policy::Scored => {
                if let Some(pick) = self.challenge(i, active) {
                    return Some(self.preempt(k, pick));
                }
            }
            Policy::Slot => {
                let selected = self.selected(i);
                if selected != Some(active) {
                    // The environment changed the agent's child tree.
                    return Some(match selected.and_then(|c| self.evaluate(c)) {
                        Some(pick) => self.preempt(k, pick),
                        None => Step::Fail(k, Why::Reselected),
                    });
                }
            }
            Policy::Sequential | Policy::Random | Policy::Shuffle => {}
        }
        None
    }

    /// A scored group's children challenge its active child: the best
    /// strictly above the active child's current score wins.
    ///
    /// The current score is the active child's `decide` alone, without its
    /// preconditions (the test to start is not the test to continue); no
    /// `decide` scores 1.0. A delegating child has no `decide`: it scores
    /// what its own active child scores, as it did when it won.
    #[inline]
    pub(super) fn challenge(&mut self, g: usize, active: usize) -> Option<Pick<L>> {
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

    #[inline]
    pub(super) fn preempt(&mut self, k: usize, pick: Pick<L>) -> Step<L> {
        self.trace(|r| Event::Preempt {
            group: r.node(r.mem.levels[k].item as usize),
            by: r.node(pick.chain[k + 1] as usize),
        });
        self.deactivate_to(k + 1, Why::Preempted);
        Step::Enter(k + 1, pick)
    }

    #[inline]
    pub(super) fn enter(&mut self, k: usize, pick: Pick<L>) -> Step<L> {
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
        if item.has.intersects(Has::SYNC.union(Has::REFERENCE)) {
            if item.is(Has::SYNC) && !self.claim(i) {
                // Not activated: the level stays inactive (depth `k`), so
                // the failure masks the item without deactivating anything.
                self.free(pick.slot);
                return Step::Fail(k, Why::Refused);
            }
            if item.is(Has::REFERENCE) {
                // Never activated: the level stays inactive, as above.
                return self.jump(k);
            }
        }
        self.mem.set_depth(k + 1);
        self.report.activated = self.report.activated.saturating_add(1);
        if let Some(b) = item.behavior {
            self.mem.blocks.init(k, b);
            if item.is(Has::ACTIVATE) {
                self.fill_cx(k, item);
                let din = match &mut self.pool {
                    Some(pool) if last && pick.slot != NO_DSLOT => {
                        pool.input(Some(pick.slot as usize))
                    }
                    _ => DIn::EMPTY,
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

    #[inline]
    pub(super) fn choose(&mut self, k: usize, first: bool) -> Step<L> {
        let level = self.mem.levels[k];
        match self.select(level.item as usize, level.mask, level.cursor) {
            Some(pick) => Step::Enter(k + 1, pick),
            None => self.chose_none(k, first),
        }
    }

    /// The group at level `k` found no child to run (`first`: it was
    /// entered in this tick).
    #[inline]
    pub(super) fn chose_none(&mut self, k: usize, first: bool) -> Step<L> {
        let g = self.mem.levels[k].item as usize;
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

    /// Group `g`, entered at level `k` in this tick, has no child to run.
    /// It broke the Subset Rule and fails (false), unless it is the root of
    /// an idle agent with nothing to run or claim on entry. Then the agent
    /// stays idle (true): that is no change, so neither the root's entry
    /// nor its exit counts in the report, and no Subset Rule is broken
    /// unless the root's own `decide` accepted.
    #[cold]
    #[inline(never)]
    pub(super) fn stays_idle(&mut self, k: usize, g: usize) -> bool {
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

    #[inline]
    pub(super) fn subset_violation(&mut self, g: usize) {
        self.report.subset_violation = Some(ItemIdx(g as u16));
        self.trace(|r| Event::SubsetViolation { group: r.node(g) });
        if ::log::log_enabled!(target: "bt", ::log::Level::Warn) {
            warn_subset_violation(self.items[g].decider.name, self.input.agent);
        }
    }

    #[inline]
    pub(super) fn fail(&mut self, k: usize, why: Why) -> Result<Step<L>, TickError> {
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
    #[inline]
    pub(super) fn recheck(&mut self, g: usize) -> bool {
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
    pub(super) fn deactivate_to(&mut self, level: usize, why: Why) {
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
    pub(super) fn tick_level(&mut self, k: usize, i: usize) -> bool {
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
}
