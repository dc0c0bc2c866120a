//! Sequential: the children run in declared order. The walk keeps the
//! cursor; the pick from the cursor on is a prioritized one.

use super::super::Tracer;
use super::super::run::{Pick, Run};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The first child of `g` from `cursor` on, not `mask`ed, that accepts.
    #[inline(always)]
    pub(super) fn sequential(
        &mut self,
        g: usize,
        mask: u64,
        cursor: u8,
        dry: bool,
    ) -> Option<Pick<L>> {
        self.prioritized(g, mask, cursor, dry)
    }
}
