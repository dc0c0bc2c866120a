//! Random: a weighted draw among the accepting children, and the draw
//! that shuffle shares.

use crate::tree::Has;

use super::super::run::{NO_DSLOT, Pick, Run};
use super::super::{Event, Tracer};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// A weighted draw among all accepting children of `g` not `mask`ed.
    #[inline(always)]
    pub(super) fn random(&mut self, g: usize, mask: u64, dry: bool) -> Option<Pick<L>> {
        self.draw(g, mask, u64::MAX, dry)
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
        let mut visited = 0;
        let allowed = among & !mask;
        let mut c = g + 1;
        while c < end {
            let item = &self.items[c];
            if allowed & (1u64 << item.child_index) != 0 {
                visited += 1;
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
        self.report.visited += visited;
        let c = drawn?;
        Some(Pick::one(c, self.items[c].depth as usize, NO_DSLOT, 1.0))
    }
}
