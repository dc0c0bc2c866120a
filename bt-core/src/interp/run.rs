//! One tick in progress: the `Run` that holds it and the step machine
//! whose arms are the steps of the documented semantics
//! ([`semantics`](crate::semantics)): walk the active path, enter a
//! pick, choose in a group, fail a level.

use crate::decl::{Ctx, TickInput};
use crate::memory::AgentMemory;
use crate::raw::DPool;
use crate::tree::{Item, Tree};

use super::quick::Step as Quick;
use super::steady::Bail;
use super::{Event, NodeRef, TickError, TickReport, Tracer, Why};

/// A `decide` result on its way to activation.
///
/// `chain[top..=end]` are the items to activate, one per level: more than
/// one when delegating groups passed the choice down to a child. Only the
/// last item can have a `decide` (delegating groups have none), so a pick
/// carries at most one DBlock, in scratch slot `slot`.
#[derive(Clone, Copy)]
pub(super) struct Pick<const L: usize> {
    pub(super) chain: [u16; L],
    pub(super) end: u8,
    pub(super) slot: u8,
    pub(super) value: f32,
}

impl<const L: usize> Pick<L> {
    /// A pick of the single item `c` at level `depth`.
    #[inline(always)]
    pub(super) fn one(c: usize, depth: usize, slot: u8, value: f32) -> Self {
        let mut chain = [0; L];
        chain[depth] = c as u16;
        Pick {
            chain,
            end: depth as u8,
            slot,
            value,
        }
    }
}

pub(super) const NO_DSLOT: u8 = u8::MAX;

/// The steps of a tick, as `docs/semantics.md` numbers them; each names
/// the level it works on.
pub(super) enum Step<const L: usize> {
    /// 1, 2 and 4: walk down the active path from a level, ticking each
    /// behavior and letting each group preempt (`walk.rs`).
    Walk(usize),
    /// 2 and 3: deactivate below a level and activate a pick there
    /// (`walk.rs`).
    Enter(usize, Pick<L>),
    /// 3: a group at a level picks a child by its policy (`walk.rs`,
    /// `policy.rs`).
    Choose(usize, bool),
    /// 5 and 6: the decider at a level failed; mask it and redecide its
    /// group, within the redecide budget (`walk.rs`).
    Fail(usize, Why),
    /// The tick is over.
    Done,
}

/// One tick in progress. If it is dropped while `armed` (a callback
/// panicked), the agent's memory is abandoned to a consistent idle state.
pub(super) struct Run<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize> {
    pub(super) items: &'static [Item<A>],
    pub(super) agent: &'r mut A,
    pub(super) mem: &'r mut AgentMemory<A, L, S, N>,
    pub(super) input: &'r TickInput,
    pub(super) tracer: &'r mut T,
    /// DBlock scratch: at most one held per selection frame plus the
    /// candidate being decided, and frames nest at most `L - 1` deep.
    /// `None` for a tree without DBlocks: its ticks reserve no scratch
    /// space (see [`run`](super::run)).
    pub(super) pool: Option<&'r mut DPool<L, N>>,
    pub(super) used: u32,
    pub(super) redecides: u32,
    pub(super) limit: u32,
    pub(super) report: TickReport,
    /// The callbacks' context: the tick's fields set once, the level's
    /// fields (`since`, `flags`, `depth`, `action`) before each call.
    pub(super) cx: Ctx<'r>,
    pub(super) armed: bool,
}

impl<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize> Drop
    for Run<'_, A, T, L, S, N>
{
    fn drop(&mut self) {
        if self.armed {
            self.mem.abandon();
        }
    }
}

impl<'r, A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>
    Run<'r, A, T, L, S, N>
{
    #[inline]
    pub(super) fn new(
        tree: &Tree<A, L, S, N>,
        agent: &'r mut A,
        mem: &'r mut AgentMemory<A, L, S, N>,
        input: &'r TickInput,
        tracer: &'r mut T,
        pool: Option<&'r mut DPool<L, N>>,
        cx: Ctx<'r>,
    ) -> Self {
        // Whatever this tick does, it is not the steady walk the cache
        // was found by.
        mem.steady.from = f64::INFINITY;
        Run {
            items: mem.tree.items,
            agent,
            limit: tree.redecide_limit,
            mem,
            input,
            tracer,
            pool,
            used: 0,
            redecides: 0,
            report: TickReport::default(),
            cx,
            armed: true,
        }
    }

    /// The first step of a tick: from the start, or from where a steady
    /// walk stopped (`from`: where, and how many deciders it visited).
    #[inline(always)]
    pub(super) fn first_step(&mut self, from: Option<(Bail, u32)>) -> Step<L> {
        if let Some((bail, visited)) = from {
            return self.resume(bail, visited);
        }
        if T::ENABLED {
            super::steady::start_event(self.tracer, self.input);
        }
        // The last tick's redecide marks, kept for the state dump, are
        // cleared by `walk` as it passes each level: every level it does
        // not reach is deactivated or entered afresh in this tick.
        if self.mem.depth() == 0 {
            self.start()
        } else {
            Step::Walk(0)
        }
    }

    /// The step from where a steady walk stopped at `bail`, having visited
    /// `visited` deciders. Out of line: a tick that starts in the step
    /// machine keeps it as small as it was without steady walks.
    #[inline(never)]
    fn resume(&mut self, bail: Bail, visited: u32) -> Step<L> {
        self.report.visited = visited;
        match bail {
            Bail::Walk(k) => Step::Walk(k),
            Bail::Ended(k, _) => Step::Fail(k, Why::Ended),
            Bail::NoChild(k) => Step::Choose(k, false),
            Bail::Quick(step, n) => {
                self.redecides = n.redecides;
                self.report.redecides = n.reported_redecides();
                self.report.activated = n.activated;
                self.report.deactivated = n.deactivated;
                match step {
                    Quick::Fail(k, why) => Step::Fail(k.into(), why),
                    Quick::Choose(k, first) => Step::Choose(k.into(), first),
                    Quick::NoPick(k, first) => self.chose_none(k.into(), first),
                    Quick::Enter(k, c) => {
                        let k = usize::from(k);
                        Step::Enter(k, Pick::one(c.into(), k, NO_DSLOT, 1.0))
                    }
                    Quick::Walk(k) => Step::Walk(k.into()),
                }
            }
            Bail::Checks(k, from) => {
                let i = self.mem.levels[k].item as usize;
                let active = self.mem.levels[k + 1].item as usize;
                self.checks(k, i, active, from).unwrap_or(Step::Walk(k + 1))
            }
        }
    }

    /// The step machine, from `step` on.
    #[inline(always)]
    pub(super) fn run_from(&mut self, mut step: Step<L>) -> Result<TickReport, TickError> {
        loop {
            step = match step {
                Step::Walk(k) => self.walk(k),
                Step::Enter(k, pick) => self.enter(k, pick),
                Step::Choose(k, first) => self.choose(k, first),
                Step::Fail(k, why) => match self.fail(k, why) {
                    Ok(step) => step,
                    Err(e) => {
                        self.end();
                        return Err(e);
                    }
                },
                Step::Done => break,
            };
        }
        self.end();
        Ok(self.report)
    }

    #[inline]
    pub(super) fn end(&mut self) {
        super::steady::sweep(self.mem);
        self.report.leaf = self.mem.leaf();
        if T::ENABLED {
            super::steady::end_event(self.tracer, self.mem, self.report.visited);
        }
    }

    #[inline]
    pub(super) fn node(&self, i: usize) -> NodeRef {
        super::steady::node(self.items, i)
    }

    /// Hands an event to the tracer; compiled out when tracing is off.
    #[inline(always)]
    pub(super) fn trace(&mut self, event: impl FnOnce(&Self) -> Event) {
        if T::ENABLED {
            let event = event(self);
            self.tracer.event(&event);
        }
    }
}

/// Only a hand-made table that skipped [`Tree::validate`] gets here.
#[cold]
#[inline(never)]
pub(super) fn dblock_does_not_fit(decider: &str, behavior: &str, block: usize) -> ! {
    panic!(
        "decider `{decider}`: the DBlock of behavior `{behavior}` does not fit a {block}-byte block"
    )
}

#[cold]
#[inline(never)]
pub(super) fn warn_subset_violation(group: &str, agent: u32) {
    ::log::warn!(
        target: "bt",
        "subset rule: group `{group}` accepted but none of its children can run (agent {agent})"
    );
}

#[cfg(test)]
mod tests {
    use super::Run;
    use crate::interp::NoTrace;

    /// The per-tick state holds no DBlock scratch space of its own: with
    /// three levels of 64 KiB blocks it stays a few hundred bytes (the
    /// scratch space, when the tree has DBlocks, is in a frame of its own).
    #[test]
    fn the_per_tick_state_holds_no_block_sized_scratch() {
        type Big = Run<'static, u32, NoTrace, 3, 4, 65536>;
        type Small = Run<'static, u32, NoTrace, 3, 4, 16>;
        assert_eq!(size_of::<Big>(), size_of::<Small>());
        assert!(size_of::<Big>() < 1024, "{} bytes", size_of::<Big>());
    }
}
