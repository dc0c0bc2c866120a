//! Scored: the accepting child with the highest value runs.

use super::super::Tracer;
use super::super::run::{Pick, Run};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The accepting child of `g`, not `mask`ed, with the highest value;
    /// on a tie the earlier child.
    #[inline(always)]
    pub(super) fn scored(&mut self, g: usize, mask: u64, dry: bool) -> Option<Pick<L>> {
        let end = self.items[g].end as usize;
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
            self.commit(pick, self.items[g].depth as usize + 1);
        }
        best
    }
}
