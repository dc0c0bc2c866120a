//! Candidate tests: flag preconditions, timers, `decide` calls and the
//! DBlock scratch space they fill.

use crate::decl::tune_field::tuned_timer_runs;
use crate::decl::{ActionState, DecideRaw, ItemIdx, period_runs};
use crate::memory::shared::{self as sync};
use crate::tree::{Has, Item, NO_SLOT};

use super::run::{NO_DSLOT, Pick, Run, dblock_does_not_fit};
use super::{Event, Rejection, Tracer};

impl crate::decl::Preconditions {
    /// Which flag test turns the decider down with these decision and
    /// stimuli flags, in the order a tick tests them (the decision test
    /// first); `None` when both pass.
    pub const fn flag_rejection(&self, decision: u64, stimuli: u64) -> Option<Rejection> {
        if !self.decision.passes(decision) {
            Some(Rejection::Decision)
        } else if !self.stimuli.passes(stimuli) {
            Some(Rejection::Stimuli)
        } else {
            None
        }
    }
}

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// Tries candidate `c`: preconditions, cheapest first, then its `decide`
    /// (or, for a delegating group, its children).
    #[inline]
    pub(super) fn evaluate(&mut self, c: usize) -> Option<Pick<L>> {
        self.evaluate_in(c, false)
    }

    /// [`evaluate`](Self::evaluate); `dry` as in [`select_in`](Self::select_in).
    ///
    /// Inlined into each policy's loop: a candidate with nothing to call
    /// (no `decide`, no DBlock, not delegating) is decided here at once.
    #[inline(always)]
    pub(super) fn evaluate_in(&mut self, c: usize, dry: bool) -> Option<Pick<L>> {
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
    pub(super) fn decide(&mut self, c: usize, dry: bool) -> Option<Pick<L>> {
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
    pub(super) fn rejected_early(&mut self, item: &Item<A>) -> bool {
        if T::ENABLED {
            return false;
        }
        let rejected =
            self.flag_rejection(item).is_some() || (item.is(Has::TIMER) && self.timer_waits(item));
        self.report.visited += u32::from(rejected);
        rejected
    }

    /// Whether the timer of `item` has not run out yet. A tuned timer
    /// (its number 0, never running) is read from the crowd's values.
    #[inline(always)]
    pub(super) fn timer_waits(&self, item: &Item<A>) -> bool {
        let last = f64::from_bits(self.mem.slots[item.timer as usize]);
        period_runs(last, self.input.now, item.every)
            || (item.is(Has::TUNED)
                && tuned_timer_runs(
                    item.decider.tuned.every,
                    self.cx.tuned_values(),
                    last,
                    self.input.now,
                ))
    }

    #[inline]
    pub(super) fn flag_rejection(&self, item: &Item<A>) -> Option<Rejection> {
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
    pub(super) fn call_decide(&mut self, c: usize, slot: u8) -> Option<f32> {
        let f = self.items[c].decide?;
        let sink = match &mut self.pool {
            Some(pool) if slot != NO_DSLOT => Some(pool.sink(slot as usize)),
            _ => None,
        };
        let raw = DecideRaw {
            input: self.input,
            item: ItemIdx(c as u16),
            sink,
            tuned: self.cx.tuned_values(),
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
            self.trace(|r| Event::Declined {
                node: r.node(c),
                value,
            });
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by: Rejection::Decide,
            });
            None
        }
    }

    #[inline]
    pub(super) fn alloc(&mut self) -> u8 {
        let free = (!self.used).trailing_zeros() as usize;
        if free >= L || self.pool.is_none() {
            // Unreachable by the nesting bound above, and for a tree whose
            // `dblocks` is true (`Tree::validate` checks a hand-made one);
            // the DBlock is then simply not carried.
            return NO_DSLOT;
        }
        self.used |= 1 << free;
        free as u8
    }

    #[inline]
    pub(super) fn free(&mut self, slot: u8) {
        if slot != NO_DSLOT {
            self.used &= !(1u32 << slot);
            if let Some(pool) = &mut self.pool {
                pool.clear(slot as usize);
            }
        }
    }

    /// Sets the per-level fields of [`cx`](Self::cx) for a callback of
    /// `item`, active at level `k`.
    #[inline]
    pub(super) fn fill_cx(&mut self, k: usize, item: &Item<A>) {
        self.cx.since = self.mem.levels[k].since;
        self.cx.flags = item.behavior_flags;
        self.cx.depth = k as u8;
        self.cx.action = if item.is(Has::LAUNCH) {
            sync::action_state(self.mem.slots[item.action as usize])
        } else {
            ActionState::None
        };
    }
}
