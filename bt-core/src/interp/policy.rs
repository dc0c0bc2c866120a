//! Group policies: how a group picks the child that runs. Each policy is
//! one file below (prioritized, sequential, random, shuffle, scored,
//! slot) and one arm of the `match` in [`select_in`](Run::select_in); the
//! weighted draw that random and shuffle share lives with random, the
//! commit of a kept pick with shuffle, whose rounds it records.

mod prioritized;
mod random;
mod scored;
mod sequential;
mod shuffle;
mod slot;

use crate::decl::Policy;

use super::Tracer;
use super::run::{Pick, Run};

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
        match self.items[g].policy {
            Policy::Prioritized => self.prioritized(g, mask, cursor, dry),
            Policy::Sequential => self.sequential(g, mask, cursor, dry),
            Policy::Random => self.random(g, mask, dry),
            Policy::Shuffle => self.shuffle(g, mask, dry),
            Policy::Scored => self.scored(g, mask, dry),
            Policy::Slot => self.slot(g, mask, dry),
        }
    }
}
