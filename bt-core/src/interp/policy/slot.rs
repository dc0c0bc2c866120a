//! Slot: the agent's `select` callback names the child that runs.

use super::super::Tracer;
use super::super::run::{Pick, Run};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The child of `g` that its `select` names, if it is not `mask`ed and
    /// accepts.
    #[inline(always)]
    pub(super) fn slot(&mut self, g: usize, mask: u64, dry: bool) -> Option<Pick<L>> {
        let c = self.selected(g)?;
        if mask & (1u64 << self.items[c].child_index) != 0 {
            return None;
        }
        self.evaluate_in(c, dry)
    }

    /// The child of slot group `g` that its `select` names for this agent.
    #[inline]
    pub(in crate::interp) fn selected(&self, g: usize) -> Option<usize> {
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
