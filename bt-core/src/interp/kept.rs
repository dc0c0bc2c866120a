//! A tick for crates that tick one agent at a time in a loop of their own
//! and keep each agent's last report (bt-bevy's brains): the report is
//! written over the last one where the tick ends (a tick that changed
//! nothing keeps the last report's leaf), and how the tick went is handed
//! to the caller there, as `tick_all`'s loop adds each tick to its tally
//! where it ends. Also the report of one tick for [`tick`](crate::tick).

use crate::decl::TickInput;
use crate::memory::AgentMemory;
use crate::tree::Tree;

use super::{Tally, TickError, TickReport, tick_member, tick_member_at, times_ok};

/// How a [`tick_kept`] went, for the caller's tally.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The active path changed, or the tick failed.
    pub changed: bool,
    /// The agent is idle after a tick that did not fail.
    pub idle: bool,
    /// The tick returned an error.
    pub failed: bool,
}

impl Kept {
    /// How a tick that returned `result` went.
    #[inline(always)]
    pub fn of(result: &Result<TickReport, TickError>) -> Kept {
        match result {
            Ok(r) => Kept {
                changed: r.changed(),
                idle: r.leaf.is_none(),
                failed: false,
            },
            Err(_) => Kept {
                changed: true,
                idle: false,
                failed: true,
            },
        }
    }
}

/// [`tick`](crate::tick), its result kept in `last`, and how it went
/// handed to `went` (called once, where the tick ends, so that what it
/// adds up is a constant on the paths a tick takes most): afterwards
/// `last` holds what [`tick`](crate::tick) would have returned. `last`
/// must hold the result of the memory's last tick, or a report without a
/// leaf (as `TickReport::default()`): a tick that changed nothing takes
/// its leaf from the last report rather than from the memory. For crates
/// that keep each agent's last report in a loop of their own.
///
/// # Panics
/// As [`tick`](crate::tick).
#[doc(hidden)]
#[inline(always)]
pub fn tick_kept<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    last: &mut Result<TickReport, TickError>,
    went: impl FnMut(Kept),
) {
    tick_member(tree, agent, memory, input, &mut Keep { last, went });
}

/// A tick's times, checked: a finite clock reading `now` and a step `dt`
/// from 0 to `f32::MAX`, as every tick needs. A loop that ticks many
/// agents with the same times checks them once, here, and
/// [`tick_kept_timed`] does not check them again at each agent.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timed {
    now: f64,
    dt: f32,
}

impl Timed {
    /// `now` and `dt`, if a tick can take them.
    #[inline(always)]
    pub fn new(now: f64, dt: f32) -> Option<Timed> {
        times_ok(now, dt).then_some(Timed { now, dt })
    }

    /// The clock reading.
    #[inline(always)]
    pub fn now(self) -> f64 {
        self.now
    }

    /// The step.
    #[inline(always)]
    pub fn dt(self) -> f32 {
        self.dt
    }
}

/// [`tick_kept`] at the checked times `at`, for the agent with id `id`,
/// decision flags `decision` and stimuli flags `stimuli`: the tick does
/// not test the times again.
///
/// # Panics
/// As [`tick`](crate::tick).
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn tick_kept_timed<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    at: Timed,
    (id, decision, stimuli): (u32, u64, u64),
    last: &mut Result<TickReport, TickError>,
    went: impl FnMut(Kept),
) {
    let input = TickInput::of_agent(at.now, at.dt, id, decision, stimuli);
    tick_member_at::<true, A, L, S, N>(tree, agent, memory, &input, &mut Keep { last, went });
}

/// The report of a tick that ended where [`Tally`] says, written over the
/// last one, and how it went, handed to `went`.
struct Keep<'l, F> {
    last: &'l mut Result<TickReport, TickError>,
    went: F,
}

impl<F: FnMut(Kept)> Tally for Keep<'_, F> {
    #[inline(always)]
    fn steady<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        match &mut *self.last {
            // The path is the one the last tick left: so is the leaf.
            Ok(r) if r.leaf.is_some() => {
                *r = TickReport {
                    leaf: r.leaf,
                    visited,
                    ..TickReport::default()
                }
            }
            last => *last = Ok(steady_report(memory, visited)),
        }
        (self.went)(Kept {
            changed: false,
            idle: false,
            failed: false,
        });
    }

    #[inline(always)]
    fn redecided<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        *self.last = Ok(redecided_report(memory, visited));
        (self.went)(Kept {
            changed: true,
            idle: false,
            failed: false,
        });
    }

    #[inline(always)]
    fn ticked(&mut self, result: Result<TickReport, TickError>) {
        (self.went)(Kept::of(&result));
        match (&mut *self.last, result) {
            // Over the last report in place: its fields alone.
            (Ok(last), Ok(report)) => *last = report,
            (last, result) => *last = result,
        }
    }
}

/// The report of a steady tick that visited `visited` deciders.
#[inline(always)]
fn steady_report<A: 'static, const L: usize, const S: usize, const N: usize>(
    memory: &AgentMemory<A, L, S, N>,
    visited: u32,
) -> TickReport {
    TickReport {
        leaf: memory.leaf(),
        visited,
        ..TickReport::default()
    }
}

/// The report of a tick whose leaf ended and was quickly redecided.
#[inline(always)]
fn redecided_report<A: 'static, const L: usize, const S: usize, const N: usize>(
    memory: &AgentMemory<A, L, S, N>,
    visited: u32,
) -> TickReport {
    TickReport {
        leaf: memory.leaf(),
        activated: 1,
        deactivated: 1,
        redecides: 1,
        visited,
        subset_violation: None,
    }
}

/// How one tick went, for a caller that wants its report.
pub(super) struct One(pub(super) Result<TickReport, TickError>);

impl One {
    /// Before the tick.
    #[inline(always)]
    pub(super) fn new() -> Self {
        One(Ok(TickReport::default()))
    }
}

impl Tally for One {
    #[inline(always)]
    fn steady<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        self.0 = Ok(steady_report(memory, visited));
    }

    #[inline(always)]
    fn redecided<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memory: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        self.0 = Ok(redecided_report(memory, visited));
    }

    #[inline(always)]
    fn ticked(&mut self, result: Result<TickReport, TickError>) {
        self.0 = result;
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{Kept, Timed, tick_kept, tick_kept_timed};
    use crate::decl::TickInput;
    use crate::interp::{TickError, TickReport, tick};

    bitflags::bitflags! {
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        struct Wants: u64 {
            const FLEE = 1 << 0;
        }
    }

    /// Counts its ticks; its leaves run for a few ticks each, and it flees
    /// while it is scared.
    #[derive(Clone, Default)]
    struct Npc {
        ticks: u32,
        scared: bool,
    }

    crate::behavior! { FLEE: Npc, tick: |n, _cx| { n.ticks += 1; n.scared } }
    crate::behavior! { WORK: Npc, tick: |n, _cx| { n.ticks += 1; n.ticks % 9 != 0 } }
    crate::behavior! { REST: Npc, tick: |n, _cx| { n.ticks += 1; n.ticks % 5 != 0 } }
    crate::decider! { FLEEING: Npc => FLEE, needs_all: Wants::FLEE, when: |n, _| n.scared }
    crate::decider! { WORKING: Npc => WORK }
    crate::decider! { RESTING: Npc => REST }
    crate::group! { DAY: Npc, sequential [WORKING, RESTING] }
    crate::group! { ROOT: Npc, prioritized [FLEEING, DAY] }
    crate::tree! { NPCS: Npc = ROOT }

    /// Over steady ticks, quick redecides, preemptions, refused inputs and
    /// a report without a leaf, the kept report is what `tick` returns on
    /// a twin, and `Kept` says what the report says; so is the report kept
    /// by `tick_kept_timed` on a third twin, for every input whose times
    /// `Timed` takes (and `Timed` takes those `tick` does not refuse).
    #[test]
    fn the_kept_report_is_the_one_tick_returns() {
        let (mut a, mut b, mut c) = (Npc::default(), Npc::default(), Npc::default());
        let (mut ma, mut mb) = (NPCS.new_memory(7), NPCS.new_memory(7));
        let mut mc = NPCS.new_memory(7);
        let mut last: Result<TickReport, TickError> = Ok(TickReport::default());
        let mut last_timed = last;
        // Ticks that changed nothing after one that changed nothing.
        let mut steady_after_steady = 0;
        for t in 0..200u32 {
            // Told to flee every third tick, scared in one stretch of 10
            // ticks in 40: a flee turned down by `when` changes nothing.
            let flee = t % 3 == 0;
            a.scared = t % 40 >= 30;
            b.scared = a.scared;
            c.scared = a.scared;
            let dt = match t % 37 {
                36 => -1.0,
                17 => -0.0,
                _ => 0.1,
            };
            let decision = if flee { Wants::FLEE.bits() } else { 0 };
            let input = TickInput::new(f64::from(t) * 0.1, dt)
                .with_decision_bits(decision)
                .with_agent(3);
            if t == 120 {
                // As a brain whose memory was replaced (a load) keeps it.
                last = Ok(TickReport::default());
                last_timed = last;
            }
            let before = last;
            let expected = tick(&NPCS, &mut b, &mut mb, &input);
            let mut kept = Vec::new();
            tick_kept(&NPCS, &mut a, &mut ma, &input, &mut last, |k| kept.push(k));
            assert_eq!(last, expected, "tick {t}");
            let said = match expected {
                Ok(r) => Kept {
                    changed: r.changed(),
                    idle: r.leaf.is_none(),
                    failed: false,
                },
                Err(_) => Kept {
                    changed: true,
                    idle: false,
                    failed: true,
                },
            };
            assert_eq!(kept, [said], "tick {t}");
            let mut kept = Vec::new();
            match Timed::new(input.now, input.dt) {
                Some(at) => {
                    assert_eq!((at.now(), at.dt().to_bits()), (input.now, dt.to_bits()));
                    let flags = (3, decision, 0);
                    tick_kept_timed(&NPCS, &mut c, &mut mc, at, flags, &mut last_timed, |k| {
                        kept.push(k)
                    });
                }
                None => {
                    assert!(
                        expected.is_err(),
                        "tick {t}: `Timed` refused what `tick` took"
                    );
                    tick_kept(&NPCS, &mut c, &mut mc, &input, &mut last_timed, |k| {
                        kept.push(k)
                    });
                }
            }
            assert_eq!(last_timed, expected, "tick {t}, timed");
            assert_eq!(kept, [said], "tick {t}, timed");
            let steady = |r: &Result<TickReport, TickError>| {
                r.is_ok_and(|r| r.leaf.is_some() && !r.changed() && r.redecides == 0)
            };
            steady_after_steady += u32::from(steady(&before) && steady(&expected));
        }
        assert_eq!(a.ticks, b.ticks);
        assert_eq!(c.ticks, b.ticks);
        assert!(steady_after_steady > 50, "{steady_after_steady}");
    }

    /// `Timed` takes the times a tick takes, and no others.
    #[test]
    fn timed_takes_the_times_a_tick_takes() {
        let dts = [
            0.0,
            -0.0,
            1e-45,
            0.5,
            f32::MAX,
            -1e-45,
            -1.0,
            f32::INFINITY,
            f32::NAN,
        ];
        let nows = [
            0.0,
            -3.5,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for now in nows {
            for dt in dts {
                let mut npc = Npc::default();
                let mut memory = NPCS.new_memory(1);
                let ticked = tick(&NPCS, &mut npc, &mut memory, &TickInput::new(now, dt));
                let refused = matches!(ticked, Err(TickError::InvalidInput { .. }));
                assert_eq!(
                    Timed::new(now, dt).is_some(),
                    !refused,
                    "now {now}, dt {dt}"
                );
            }
        }
    }
}
