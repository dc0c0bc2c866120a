//! Shuffle: each child runs once per round, in a random order; the round
//! state lives in a memory slot.

use crate::decl::Policy;

use super::super::Tracer;
use super::super::run::{Pick, Run};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// A draw among the children of `g` not yet used in this round; when
    /// none of them accepts, a new round starts among the others.
    #[inline(always)]
    pub(super) fn shuffle(&mut self, g: usize, mask: u64, dry: bool) -> Option<Pick<L>> {
        let used = self.mem.slots[self.items[g].shuffle as usize] & 0xFFFF_FFFF;
        let depth = self.items[g].depth as usize;
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

    /// Records a kept pick in the shuffle rounds: each delegating shuffle
    /// group on its chain, from depth `from` down, runs the next item.
    #[inline]
    pub(in crate::interp) fn commit(&mut self, pick: &Pick<L>, from: usize) {
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
    pub(in crate::interp) fn mark(&mut self, g: usize, c: usize) {
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
}
