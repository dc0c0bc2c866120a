//! Group policies: how a group picks the child that runs (prioritized,
//! sequential, random, shuffle, scored, slot), and the commit of a pick.

use crate::decl::Policy;
use crate::tree::Has;

use super::run::{NO_DSLOT, Pick, Run};
use super::{Event, Tracer};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// Picks a child of group `g` by its policy, skipping `mask`ed children.
    #[inline(always)]
    pub(super) fn select(&mut self, g: usize, mask: u64, cursor: u8) -> Option<Pick<L>> {
        self.select_in(g, mask, cursor, false)
    }

    /// [`select`](Self::select). When `dry`, the pick is a candidate that
    /// the caller may still drop: shuffle rounds are left as they are, and
    /// the caller [commits](Self::commit) the pick if it keeps it.
    #[inline(always)]
    pub(super) fn select_in(
        &mut self,
        g: usize,
        mask: u64,
        cursor: u8,
        dry: bool,
    ) -> Option<Pick<L>> {
        let item = &self.items[g];
        let end = item.end as usize;
        match item.policy {
            Policy::Prioritized | Policy::Sequential => {
                let mut c = g + 1;
                while c < end {
                    let child = &self.items[c];
                    if child.child_index >= cursor
                        && mask & (1u64 << child.child_index) == 0
                        && !self.rejected_early(child)
                        && let Some(pick) = self.evaluate_in(c, dry)
                    {
                        return Some(pick);
                    }
                    c = child.end as usize;
                }
                None
            }
            Policy::Random => self.draw(g, mask, u64::MAX, dry),
            Policy::Slot => {
                let c = self.selected(g)?;
                if mask & (1u64 << self.items[c].child_index) != 0 {
                    return None;
                }
                self.evaluate_in(c, dry)
            }
            Policy::Shuffle => {
                let used = self.mem.slots[item.shuffle as usize] & 0xFFFF_FFFF;
                let depth = item.depth as usize;
                let pick = match self.draw(g, mask, !used, dry) {
                    Some(pick) => Some(pick),
                    // No child left in this round accepts: a new round
                    // starts among the others (`mark` sees the repeat).
                    None if used != 0 => self.draw(g, mask, used, dry),
                    None => None,
                };
                if !dry && let Some(pick) = &pick {
                    self.mark(g, pick.chain[depth + 1] as usize);
                }
                pick
            }
            Policy::Scored => {
                let mut best: Option<Pick<L>> = None;
                let mut c = g + 1;
                while c < end {
                    let child = &self.items[c];
                    if mask & (1u64 << child.child_index) == 0
                        && let Some(pick) = self.evaluate_in(c, true)
                    {
                        match &best {
                            Some(b) if pick.value <= b.value => self.free(pick.slot),
                            _ => {
                                if let Some(old) = best.replace(pick) {
                                    self.free(old.slot);
                                }
                            }
                        }
                    }
                    c = self.items[c].end as usize;
                }
                if !dry && let Some(pick) = &best {
                    self.commit(pick, item.depth as usize + 1);
                }
                best
            }
        }
    }

    /// A weighted draw among the accepting children of `g` whose bit is in
    /// `among` and not in `mask` (reservoir sampling: one pass, one pick).
    /// The candidates are tried `dry`; the one drawn is committed unless the
    /// draw itself is `dry`.
    pub(super) fn draw(&mut self, g: usize, mask: u64, among: u64, dry: bool) -> Option<Pick<L>> {
        if self.items[g].is(Has::PLAIN_CHILDREN) {
            return self.draw_plain(g, mask, among);
        }
        let end = self.items[g].end as usize;
        let mut best: Option<Pick<L>> = None;
        let mut total = 0.0f64;
        let mut c = g + 1;
        while c < end {
            let bit = 1u64 << self.items[c].child_index;
            if mask & bit == 0
                && among & bit != 0
                && let Some(pick) = self.evaluate_in(c, true)
            {
                total += f64::from(pick.value);
                let take = best.is_none() || self.mem.next_f64() * total < f64::from(pick.value);
                if take {
                    if let Some(old) = best.replace(pick) {
                        self.free(old.slot);
                    }
                } else {
                    self.free(pick.slot);
                }
            }
            c = self.items[c].end as usize;
        }
        if !dry && let Some(pick) = &best {
            self.commit(pick, self.items[g].depth as usize + 1);
        }
        best
    }

    /// [`draw`](Self::draw) among children that are decided by their flag
    /// tests alone: every weight is 1, so the same reservoir draws the same
    /// numbers, but only the child index is carried through the loop and
    /// no pick is built until the end. Nothing to commit: no child delegates.
    #[inline]
    pub(super) fn draw_plain(&mut self, g: usize, mask: u64, among: u64) -> Option<Pick<L>> {
        let end = self.items[g].end as usize;
        let mut total = 0.0f64;
        let mut drawn = None;
        let mut c = g + 1;
        while c < end {
            let item = &self.items[c];
            let bit = 1u64 << item.child_index;
            if mask & bit == 0 && among & bit != 0 {
                self.report.visited += 1;
                if let Some(by) = self.flag_rejection(item) {
                    self.trace(|r| Event::Rejected {
                        node: r.node(c),
                        by,
                    });
                } else {
                    total += 1.0;
                    if drawn.is_none() || self.mem.next_f64() * total < 1.0 {
                        drawn = Some(c);
                    }
                }
            }
            c = item.end as usize;
        }
        let c = drawn?;
        Some(Pick::one(c, self.items[c].depth as usize, NO_DSLOT, 1.0))
    }

    /// Records a kept pick in the shuffle rounds: each delegating shuffle
    /// group on its chain, from depth `from` down, runs the next item.
    #[inline]
    pub(super) fn commit(&mut self, pick: &Pick<L>, from: usize) {
        for j in from..pick.end as usize {
            let g = pick.chain[j] as usize;
            if self.items[g].policy == Policy::Shuffle {
                self.mark(g, pick.chain[j + 1] as usize);
            }
        }
    }

    /// Shuffle bookkeeping (slot: `used` mask in the low 32 bits, round
    /// count in the high 32): group `g` runs its child item `c`. A child
    /// already used in this round is only drawn when no unused child
    /// accepts, which starts a new round; a round also ends once every
    /// child has been used.
    #[inline]
    pub(super) fn mark(&mut self, g: usize, c: usize) {
        let item = &self.items[g];
        let slot = item.shuffle as usize;
        let state = self.mem.slots[slot];
        let mut used = state & 0xFFFF_FFFF;
        let mut rounds = state >> 32;
        let bit = 1u64 << self.items[c].child_index;
        let all = (1u64 << item.child_count) - 1;
        if used & bit != 0 {
            used = 0;
            rounds = rounds.wrapping_add(1) & 0xFFFF_FFFF;
        }
        used |= bit;
        if used == all {
            used = 0;
            rounds = rounds.wrapping_add(1) & 0xFFFF_FFFF;
        }
        self.mem.slots[slot] = (rounds << 32) | used;
    }

    /// The child of slot group `g` that its `select` names for this agent.
    #[inline]
    pub(super) fn selected(&self, g: usize) -> Option<usize> {
        let item = &self.items[g];
        let want = (item.decider.select?)(self.agent);
        let end = item.end as usize;
        let mut c = g + 1;
        while c < end {
            if Some(self.items[c].child_index as usize) == want {
                return Some(c);
            }
            c = self.items[c].end as usize;
        }
        None
    }
}
