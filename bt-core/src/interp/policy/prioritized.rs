//! Prioritized: the first child, in declared order, that accepts runs.

use super::super::Tracer;
use super::super::run::{Pick, Run};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The first child of `g` from `cursor` on, not `mask`ed, that accepts.
    #[inline(always)]
    pub(super) fn prioritized(
        &mut self,
        g: usize,
        mask: u64,
        cursor: u8,
        dry: bool,
    ) -> Option<Pick<L>> {
        let end = self.items[g].end as usize;
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
}
