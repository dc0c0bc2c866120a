//! A reference's jump: the active path moves from where the reference was
//! picked to its target, elsewhere in the tree.

use crate::decl::Policy;
use crate::tree::{Has, NO_SLOT};

use super::run::{NO_DSLOT, Run, Step};
use super::{Event, Rejection, Tracer, Why};

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    /// The reference at level `k` (picked by the group at level `k - 1`,
    /// not activated) jumps to its target.
    ///
    /// First every decider that the jump would enter is asked, top down,
    /// as its group would ask it: the groups on the way by their flag
    /// tests, timers, shared checks and `decide`, the target as a
    /// candidate (delegating as usual). If one refuses, nothing is
    /// deactivated and the reference fails in its group. Otherwise the
    /// levels below the common ancestor of the reference and the target
    /// are deactivated, deepest first, and the way down to the target is
    /// entered as one pick. Each jump made counts one against the
    /// redecide budget; a refused one only as the failure of the reference
    /// (the masked redecide the report counts).
    #[cold]
    #[inline(never)]
    pub(super) fn jump(&mut self, k: usize) -> Step<L> {
        let reference = self.mem.levels[k].item as usize;
        let item = &self.items[reference];
        if item.is(Has::SYNC) {
            // The reference holds nothing: what its claim took is given
            // back at once (a cooldown stays stamped).
            self.release(reference);
        }
        if self.redecides >= self.limit {
            // No budget left for the jump: failing the reference is the
            // redecide that the budget refuses, with its event and error.
            return Step::Fail(k, Why::Refused);
        }
        let Some(t) = crate::tree::target_of(self.items, reference) else {
            // Only a table assembled by hand gets here.
            return Step::Fail(k, Why::Refused);
        };
        let depth = self.items[t].depth as usize;
        // The target's path from the root.
        let mut path = [0u16; L];
        let mut p = t;
        loop {
            path[self.items[p].depth as usize] = p as u16;
            if self.items[p].parent == crate::tree::NO_PARENT {
                break;
            }
            p = self.items[p].parent as usize;
        }
        // The first level where the path leaves the reference's own
        // ancestors; the target itself when it is one of them (a restart).
        let mut j = 0;
        while j < k && j <= depth && path[j] == self.mem.levels[j].item {
            j += 1;
        }
        let j = j.min(depth);
        let Some(mut pick) = self.jump_checks(&path, j, depth) else {
            return Step::Fail(k, Why::Refused);
        };
        self.redecides += 1;
        self.trace(|r| Event::Jump {
            from: r.node(reference),
            to: r.node(t),
        });
        // The groups that pick on the way keep their shuffle rounds.
        let mut m = j.saturating_sub(1);
        while m < depth {
            let g = path[m] as usize;
            if self.items[g].policy == Policy::Shuffle && self.items[g].is(Has::GROUP) {
                self.mark(g, path[m + 1] as usize);
            }
            m += 1;
        }
        self.deactivate_to(j, Why::Preempted);
        pick.chain[j..depth].copy_from_slice(&path[j..depth]);
        Step::Enter(j, pick)
    }

    /// The checks of a jump along `path` from level `j` to the target at
    /// level `depth`: the pick of the target (its chain from `depth` on),
    /// or `None` when a decider on the way refuses.
    fn jump_checks(
        &mut self,
        path: &[u16; L],
        j: usize,
        depth: usize,
    ) -> Option<super::run::Pick<L>> {
        for m in j..=depth {
            let c = path[m] as usize;
            if m > 0 {
                let g = path[m - 1] as usize;
                if self.items[g].policy == Policy::Slot && self.selected(g) != Some(c) {
                    // A slot group runs only the child its `select` names.
                    self.trace(|r| Event::Rejected {
                        node: r.node(c),
                        by: Rejection::NoSelection,
                    });
                    return None;
                }
            }
            if m == depth {
                return self.evaluate_in(c, false);
            }
            if !self.way_accepts(c) {
                return None;
            }
        }
        None
    }

    /// Whether group `c`, on the way to a jump's target, accepts: its flag
    /// tests, timer, shared checks, `decide` and group role. (Whether a
    /// delegating group has a child that accepts is the next check down.)
    fn way_accepts(&mut self, c: usize) -> bool {
        let item = &self.items[c];
        self.report.visited += 1;
        let by = if let Some(by) = self.flag_rejection(item) {
            Some(by)
        } else if item.is(Has::TIMER) && self.timer_waits(item) {
            Some(Rejection::Timer)
        } else {
            if item.is(Has::TIMER) {
                self.mem.slots[item.timer as usize] = self.input.now.to_bits();
            }
            if item.has.intersects(Has::SYNC.union(Has::SLOT)) {
                self.shared_rejection(c)
            } else {
                None
            }
        };
        if let Some(by) = by {
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by,
            });
            return false;
        }
        if item.is(Has::DECIDE) && self.call_decide(c, NO_DSLOT).is_none() {
            return false;
        }
        if item.is(Has::SYNC)
            && item.role != NO_SLOT
            && let Some(by) = self.role_rejection(item)
        {
            self.trace(|r| Event::Rejected {
                node: r.node(c),
                by,
            });
            return false;
        }
        true
    }
}
