//! Tick rates and a frame budget: which agents of a crowd tick in a frame.
//!
//! The frame itself, [`tick_scheduled`], is in `frame.rs`; the buckets
//! that find the agents due in a frame, in `buckets.rs`.

use alloc::vec::Vec;
use core::fmt;

use crate::memory::AgentMemory;
use crate::memory::shared::{Outcome, Ticket};
use crate::memory::stimuli::{Stimuli, StimuliError};

mod buckets;
mod frame;
#[cfg(feature = "serde")]
mod parts;
mod ring;
mod set;
#[cfg(test)]
mod tests;

use buckets::{Buckets, NIL};
pub use frame::{FrameReport, ScheduledTick, tick_scheduled, tick_scheduled_by};
use ring::Ring;
use set::IndexSet;

/// A frame number no agent waits from: the agent is not due.
const IDLE: u64 = u64::MAX;

/// How often an agent of a [`Schedule`] ticks.
///
/// Agents of one period are spread over its frames by index: agent `i` of
/// period `k` ticks in the frames whose number is
/// [`Schedule::phase(i, k)`](Schedule::phase) modulo `k`, so each frame
/// ticks about a `k`-th of them, in blocks of indexes or interleaved
/// (see [`Schedule::phase`] for the index sets it does not spread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rate {
    /// Every frame (the same as `Every(1)`).
    EveryFrame,
    /// Every `k`-th frame, `k` from 1 to [`Schedule::MAX_PERIOD`].
    Every(u32),
    /// Only in the frame after it is woken ([`Schedule::wake`]).
    OnWake,
}

impl Rate {
    /// The period in frames; 0 for [`Rate::OnWake`].
    fn period(self) -> Result<u32, RateError> {
        match self {
            Rate::EveryFrame => Ok(1),
            Rate::Every(0) => Err(RateError::ZeroPeriod),
            Rate::Every(k) if k > Schedule::MAX_PERIOD => Err(RateError::PeriodTooLong {
                period: k,
                max: Schedule::MAX_PERIOD,
            }),
            Rate::Every(k) => Ok(k),
            Rate::OnWake => Ok(0),
        }
    }
}

/// Why a [`Rate`] was refused ([`Schedule::set_rate`]); nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateError {
    /// `Rate::Every(0)`: no frame comes every 0 frames.
    ZeroPeriod,
    /// A period longer than the schedule keeps: use [`Rate::OnWake`] and
    /// wake the agent from the game's own timer instead.
    PeriodTooLong {
        /// The period given.
        period: u32,
        /// The longest period ([`Schedule::MAX_PERIOD`]).
        max: u32,
    },
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RateError::ZeroPeriod => f.write_str("a rate of every 0 frames"),
            RateError::PeriodTooLong { period, max } => write!(
                f,
                "a rate of every {period} frames: the longest period is {max} frames"
            ),
        }
    }
}

impl core::error::Error for RateError {}

/// Which agents of a crowd tick in each frame: a rate per agent, a budget
/// per frame, and the agents woken for the next frame. Ticked with
/// [`tick_scheduled`], which also hands each agent the time since its own
/// last tick as `dt`.
///
/// - **Rates.** Each agent ticks every frame, every `k`-th frame or only
///   when woken ([`Rate`]); all agents start at [`Rate::EveryFrame`], and
///   [`set_rate`](Self::set_rate) changes an agent's rate at any time
///   (each frame by its distance to the camera, say). Agent `i` of period
///   `k` is due in the frames whose number is [`phase(i, k)`](Self::phase)
///   modulo `k`: the agents of one period are spread evenly over its
///   frames, and a new rate takes effect at the first frame of its own
///   that comes (at once for an agent that has gone both periods without
///   a tick: a rate that keeps changing never starves an agent).
/// - **A budget.** With [`set_budget`](Self::set_budget), no frame ticks
///   more than that many agents. The due agents beyond it wait, and go
///   first in the frames after, the longest waiting first: with a budget
///   of `B` agent-ticks in every frame and a crowd of `N`, no agent ticks
///   later than `(N - 1) / B` frames (rounded down) after the frame it was
///   due in ([`wait_bound`](Self::wait_bound)).
/// - **Waking.** [`wake`](Self::wake) makes an agent due in the next frame
///   whatever its rate; [`stimulate`](Self::stimulate) sets a stimulus and
///   wakes the agent, [`complete`](Self::complete) reports a deferred
///   action's outcome and wakes the agent that launched it.
///
/// A frame finds its due agents without looking at any other agent, and
/// allocates nothing: the schedule's lists are allocated when it is made,
/// and each period's buckets the first time an agent is set to it.
///
/// ```
/// use bt_core::{Rate, Schedule, TickInput, behavior, decider, group, tick_scheduled, tree};
/// # #[derive(Default)] struct Npc { thoughts: u32 }
/// behavior! { THINK: Npc, tick: |npc, _cx| { npc.thoughts += 1; true } }
/// decider! { JUST_THINK: Npc => THINK }
/// tree! { NPCS: Npc = JUST_THINK }
///
/// let mut npcs: Vec<Npc> = (0..100).map(|_| Npc::default()).collect();
/// let mut memories: Vec<_> = (0..100).map(|i| NPCS.new_memory(i)).collect();
/// let mut schedule = Schedule::new(100, 0.0);
/// for i in 10..100 {
///     schedule.set_rate(i, Rate::Every(10))?; // the far ones: every tenth frame
/// }
/// let mut ticked = 0;
/// for frame in 1..=20 {
///     let now = f64::from(frame) / 60.0;
///     let report = tick_scheduled(&NPCS, &mut npcs, &mut memories, &mut schedule, now,
///         |_, _, dt| TickInput::new(now, dt));
///     // Ten near ones, and about a tenth of the far ones.
///     assert!((10 + 8..=10 + 10).contains(&report.ticked));
///     ticked += report.ticked;
/// }
/// assert_eq!(ticked, 20 * 10 + 2 * 90); // each far one twice
/// assert_eq!((npcs[0].thoughts, npcs[50].thoughts), (20, 2));
/// # Ok::<(), bt_core::RateError>(())
/// ```
#[derive(Clone)]
pub struct Schedule {
    /// The number of the next frame.
    frame: u64,
    budget: Option<u32>,
    /// The buckets, which also keep when each agent last ticked.
    buckets: Buckets,
    /// The frame each agent has been due since, while it waits for its
    /// tick; [`IDLE`] when it is not due.
    waiting: Vec<u64>,
    /// The agents due in earlier frames that the budget left waiting, in
    /// the order they go: by the frame they were due in, then by index
    /// (with `held`, whose agents go among them by that order).
    backlog: Ring,
    /// The agents woken for an earlier frame, `held_since`, that the
    /// budget left waiting, while the woken of no other frame wait: they
    /// stay in their set rather than join the backlog one by one.
    held: IndexSet,
    held_since: u64,
    /// The agents woken for the next frame that were not due before.
    woken: IndexSet,
    /// The agents whose rate changed since the last frame, and for each
    /// the period of its rate in the last frame (0: only when woken):
    /// changes between two frames count as one change, from that rate to
    /// the one given last, which the next frame settles.
    changed: IndexSet,
    period_was: Vec<u32>,
    /// Room for a frame's lists: the newly due agents, the agents taken
    /// from the backlog, and the order of the frame's ticks.
    scratch: [Vec<u32>; 3],
    /// The heads of the lists a frame merges (a due bucket per period).
    heads: Vec<u32>,
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("agents", &self.len())
            .field("frame", &self.frame)
            .field("budget", &self.budget)
            .field("waiting", &self.waiting())
            .field("woken", &self.woken.len())
            .finish_non_exhaustive()
    }
}

impl Schedule {
    /// The longest period of [`Rate::Every`]: 4 096 frames, over a minute
    /// at 60 frames a second. A period's buckets take 48 bytes a frame.
    pub const MAX_PERIOD: u32 = 4096;

    /// The highest frame count a restored schedule may have: 2^62 frames,
    /// millions of years at a thousand frames a second, so that no count
    /// restored from a snapshot can run out.
    pub const MAX_FRAME: u64 = 1 << 62;

    /// The frame of its period in which agent `i` of period `k` ticks: it
    /// is due in the frames whose number is `phase(i, k)` modulo `k`.
    ///
    /// The phase spreads the index sets a crowd's kinds usually take
    /// evenly over the period, not only a block of them: its fraction of
    /// `k` is `i` times the golden ratio, modulo 1 (Fibonacci hashing), so
    /// the agents of a period get about `1 / k` of each frame whether they
    /// are agents 0 to 999, the even ones, or every third. (`i % k` would
    /// put all the even agents of period 2 in one frame.) No phase spreads
    /// every set (the agents of phase 0 are a set too), and this one
    /// spreads badly the indexes `s` apart for a stride `s` near a
    /// Fibonacci number (610, 987, 1597, …: one column of a grid that
    /// wide): give such a kind indexes of its own, or rates whose periods
    /// the stride is not close to a multiple of. Agent 0 has the phase 0,
    /// and so does every agent of period 1.
    ///
    /// ```
    /// use bt_core::Schedule;
    /// // 500 birds (the even agents), every 2nd frame: flat.
    /// let in_frame_0 = (0..1000).step_by(2).filter(|&i| Schedule::phase(i, 2) == 0).count();
    /// assert!((240..=260).contains(&in_frame_0));
    /// assert_eq!(Schedule::phase(12345, 1), 0);
    /// ```
    #[must_use]
    pub const fn phase(i: usize, k: u32) -> u32 {
        // 2^32 / golden ratio: the fraction of `i * phi` in 32 bits,
        // scaled to the period.
        let fraction = (i as u32).wrapping_mul(0x9E37_79B9);
        ((fraction as u64 * k as u64) >> 32) as u32
    }

    /// The schedule of a crowd of `agents` agents, every one ticking every
    /// frame, with no budget, whose clock reads `now`: an agent's first
    /// tick gets the time since `now` as its `dt`. Allocates the lists of
    /// the whole crowd (about 64 bytes an agent).
    ///
    /// # Panics
    /// If `now` is not finite, or `agents` is `u32::MAX` or more.
    pub fn new(agents: usize, now: f64) -> Self {
        assert!(
            now.is_finite(),
            "Schedule::new: the clock reading {now} is not finite"
        );
        assert!(
            agents < NIL as usize,
            "Schedule::new: {agents} agents; a schedule holds fewer than {NIL}"
        );
        let mut buckets = Buckets::new(agents, now);
        let every_frame = buckets.class_of(1);
        for i in 0..agents as u32 {
            buckets.insert(i, every_frame);
        }
        Schedule {
            frame: 0,
            budget: None,
            buckets,
            waiting: alloc::vec![IDLE; agents],
            backlog: Ring::new(agents),
            held: IndexSet::new(agents),
            held_since: 0,
            woken: IndexSet::new(agents),
            changed: IndexSet::new(agents),
            period_was: alloc::vec![0; agents],
            scratch: [(); 3].map(|()| Vec::with_capacity(agents)),
            heads: Vec::with_capacity(2),
        }
    }

    /// This schedule with the budget `budget` ([`set_budget`](Self::set_budget)).
    #[must_use]
    pub fn with_budget(mut self, budget: Option<u32>) -> Self {
        self.set_budget(budget);
        self
    }

    /// Sets the most agents a frame ticks, from the next frame on; `None`:
    /// every due agent ticks. Due agents beyond the budget wait for a later
    /// frame, the longest waiting first. A budget of 0 ticks nothing (the
    /// crowd pauses, and its due agents wait).
    pub fn set_budget(&mut self, budget: Option<u32>) {
        self.budget = budget;
    }

    /// The most agents a frame ticks (`None`: no limit).
    pub fn budget(&self) -> Option<u32> {
        self.budget
    }

    /// The agents of the crowd.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether the crowd has no agent.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The number of the next frame [`tick_scheduled`] runs: 0 before the
    /// first. Rates, phases and wakes count frames by it.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Sets agent `i`'s rate. The agent is next due in the first frame of
    /// the new rate that comes, from the next frame on (at once for
    /// [`Rate::EveryFrame`]; never, until woken, for [`Rate::OnWake`]),
    /// unless it has gone both its old and its new period without a tick
    /// (counting the next frame): then it is due in the next frame, as if
    /// woken. An agent already due keeps its place: a new rate never takes
    /// back a tick that is owed. Setting the rate it has changes nothing.
    ///
    /// So an agent whose rate keeps changing among periods of at most `K`
    /// frames still ticks within `2K - 2` frames of its last tick, and
    /// within `K` when its rate changes every frame (budget aside), while
    /// a crowd whose rates change together ticks no more agents than its
    /// rates make due: a crowd at `Every(16)` set to `Every(4)` has due at
    /// once only the agents whose `Every(16)` turn the next frame is.
    /// Changes between two frames count as one, from the rate of the last
    /// frame to the one given last, which the next frame settles: an agent
    /// set to a default ([`Rate::EveryFrame`], [`Rate::OnWake`]) and then
    /// to the rate it should have before the next frame (a game that
    /// resets rates each frame) ticks as if set to that rate alone, and
    /// back to the rate it had, as if not set at all. An agent whose rate
    /// was `OnWake` in the last frame, or is set to it, is never made due
    /// by this rule: `OnWake` has no period. [`is_due`](Self::is_due)
    /// counts the agents the rule makes due as soon as their rate is set.
    ///
    /// The first agent set to a period allocates that period's buckets
    /// (48 bytes a frame of the period); nothing else allocates.
    ///
    /// # Errors
    /// [`RateError`] for `Every(0)` or a period above
    /// [`MAX_PERIOD`](Self::MAX_PERIOD); nothing changed.
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn set_rate(&mut self, i: usize, rate: Rate) -> Result<(), RateError> {
        let i = self.agent(i, "set_rate");
        let period = rate.period()?;
        let class = (period > 0).then(|| self.buckets.class_of(period));
        let now = self.buckets.class[i as usize];
        if class.unwrap_or(NIL) != now {
            // The rate of the last frame, however many times it changes
            // before the next: the next frame applies the rule once, from
            // it to the rate given last. An agent that ticked in the last
            // frame (or has not ticked yet in the first) is not kept: the
            // rule asks for two periods without a tick, one of at least two
            // frames.
            let gone = self.frame + 1 - self.buckets.after(i);
            if gone >= 2 && !self.changed.contains(i) {
                self.changed.insert(i);
                self.period_was[i as usize] = self.period_of(now);
            }
            self.buckets.remove(i);
            if let Some(class) = class {
                self.buckets.insert(i, class);
                // A frame merges at most one bucket of each period.
                self.heads.reserve(self.buckets.classes.len());
            }
        }
        Ok(())
    }

    /// The period of rate class `class` (0 for none: only when woken).
    fn period_of(&self, class: u32) -> u32 {
        period_of(&self.buckets, class)
    }

    /// Applies [`set_rate`](Self::set_rate)'s rule to each agent whose rate
    /// changed since the last frame, from its rate in the last frame to the
    /// one it has now, as the next frame starts: an agent that has gone
    /// both periods without a tick (counting the next frame) is due in it,
    /// as if woken. Costs one step per agent changed.
    pub(super) fn settle_rates(&mut self) {
        let Schedule {
            changed,
            period_was,
            buckets,
            frame,
            waiting,
            woken,
            ..
        } = self;
        changed.drain(|i| {
            if overdue(buckets, *frame, period_was[i as usize], i) && waiting[i as usize] == IDLE {
                // As `wake`.
                waiting[i as usize] = *frame;
                woken.insert(i);
                buckets.park(i);
            }
        });
    }

    /// Whether agent `i`, whose rate changed since the last frame, is due
    /// by [`set_rate`](Self::set_rate)'s rule.
    fn overdue(&self, i: u32) -> bool {
        overdue(&self.buckets, self.frame, self.period_was[i as usize], i)
    }

    /// Agent `i`'s rate (a rate of every frame reads as
    /// [`Rate::EveryFrame`], also when set as `Every(1)`).
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn rate(&self, i: usize) -> Rate {
        let i = self.agent(i, "rate");
        match self.buckets.class[i as usize] {
            NIL => Rate::OnWake,
            c => match self.buckets.classes[c as usize].period {
                1 => Rate::EveryFrame,
                k => Rate::Every(k),
            },
        }
    }

    /// Makes agent `i` due in the next frame, whatever its rate. Under a
    /// budget it goes in that frame's order with the other agents due
    /// then (after those due in earlier frames, by index among those due
    /// with it). An agent already due keeps its place.
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn wake(&mut self, i: usize) {
        let i = self.agent(i, "wake");
        if self.waiting[i as usize] == IDLE {
            self.waiting[i as usize] = self.frame;
            self.woken.insert(i);
            self.buckets.park(i);
        }
    }

    /// Sets the stimulus `flag` on agent `i`'s `stimuli` as happened at the
    /// clock reading `now` (as [`Stimuli::set_since`], `now` less the
    /// agent's [`last_tick`](Self::last_tick) after it) and wakes the agent
    /// for the next frame: a new stimulus does not wait for the agent's
    /// turn, and its time-out runs from `now` on the clock: an agent the
    /// budget keeps waiting past it never sees it. The schedule cannot see
    /// your agents' stimuli, so setting one on an agent of a slow rate with
    /// `Stimuli::set_since` alone leaves it to its turn (where it sees it
    /// only if it is not over). A `now` before the agent's last tick counts
    /// from that tick, and one after the clock of the tick that sees the
    /// stimulus (a clock in another unit, or infinite) from that tick: no
    /// stimulus stays live longer than its time-out after it is seen.
    ///
    /// ```
    /// # use bt_core::{Rate, Schedule, Stimuli, TickInput, group, leaf, tick_scheduled, tree};
    /// bt_core::bitflags::bitflags! {
    ///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    ///     struct Sense: u8 { const NOISE = 1; }
    /// }
    /// #[derive(Default)]
    /// struct Guard { senses: Stimuli<Sense, 2> }
    /// leaf! { LOOK: Guard, stimuli_any: Sense::NOISE }
    /// leaf! { DOZE: Guard }
    /// group! { ROOT: Guard, prioritized [LOOK, DOZE] }
    /// tree! { GUARDS: Guard = ROOT }
    ///
    /// let mut guards = [Guard::default(), Guard::default()];
    /// let mut memories = [0, 1].map(|i| GUARDS.new_memory(i));
    /// let mut schedule = Schedule::new(2, 0.0);
    /// schedule.set_rate(1, Rate::OnWake)?;
    /// let frame = |guards: &mut [Guard], memories: &mut [_], schedule: &mut Schedule, now| {
    ///     tick_scheduled(&GUARDS, guards, memories, schedule, now, |_, g: &mut Guard, dt| {
    ///         TickInput::new(now, dt).with_stimuli(g.senses.update(dt))
    ///     })
    /// };
    /// assert_eq!(frame(&mut guards, &mut memories, &mut schedule, 0.1).ticked, 1);
    /// // A noise at 0.15 s, heard for a second.
    /// schedule.stimulate(1, &mut guards[1].senses, Sense::NOISE, 0, Some(1.0), 0.15)?;
    /// let report = frame(&mut guards, &mut memories, &mut schedule, 0.2);
    /// assert_eq!(report.ticked, 2); // the sleeper heard it
    /// assert_eq!(memories[1].leaf(), GUARDS.find("LOOK"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Stimuli::set`]: a stimulus that cannot be set wakes nobody.
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn stimulate<F: bitflags::Flags, const M: usize, P: Copy>(
        &mut self,
        i: usize,
        stimuli: &mut Stimuli<F, M, P>,
        flag: F,
        payload: P,
        timeout: Option<f32>,
        now: f64,
    ) -> Result<(), StimuliError>
    where
        F::Bits: Into<u128>,
    {
        let last = self.last_tick(i);
        // `NaN` (a `now` that is not a number) counts from the last tick.
        let elapsed = (now - last).max(0.0).min(f64::from(f32::MAX)) as f32;
        stimuli.set_since(flag, payload, timeout, elapsed)?;
        self.wake(i);
        Ok(())
    }

    /// Reports a deferred action back, as
    /// [`AgentMemory::complete`], to the memory of the agent whose index
    /// is the ticket's agent id, and wakes that agent for the next frame,
    /// so that it sees the outcome without waiting for its turn. For
    /// crowds ticked under their indexes as ids (the default of
    /// [`tick_scheduled`], as of [`tick_all`](crate::tick_all)); a game
    /// that gives its agents other ids completes on the agent's memory and
    /// calls [`wake`](Self::wake) with its index.
    ///
    /// Returns whether the ticket completed; `false` changes nothing and
    /// wakes nobody (the launch was cancelled or reported already, or the
    /// ticket names no agent of the crowd or another memory's launch).
    pub fn complete<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        memories: &mut [AgentMemory<A, L, S, N>],
        ticket: Ticket,
        outcome: Outcome,
    ) -> bool {
        let i = ticket.agent() as usize;
        if i >= self.len() {
            return false;
        }
        let Some(memory) = memories.get_mut(i) else {
            return false;
        };
        let done = memory.complete(ticket, outcome);
        if done {
            self.wake(i);
        }
        done
    }

    /// Whether agent `i` is due: woken for the next frame, or left waiting
    /// by the budget. (An agent whose turn comes in the next frame is not
    /// due before that frame.)
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn is_due(&self, i: usize) -> bool {
        let i = self.agent(i, "is_due");
        self.waiting[i as usize] != IDLE || (self.changed.contains(i) && self.overdue(i))
    }

    /// The agents the budget has left waiting for a later frame.
    pub fn waiting(&self) -> usize {
        self.backlog.len + self.held.len()
    }

    /// When agent `i` last ticked: the `now` of its last frame, or the
    /// schedule's start before its first.
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn last_tick(&self, i: usize) -> f64 {
        self.buckets.time(self.agent(i, "last_tick"))
    }

    /// The number of the frame agent `i` last ticked in ([`frame`](Self::frame)
    /// counts them); `None` before its first tick.
    ///
    /// # Panics
    /// If `i` is not an agent of the crowd.
    pub fn last_tick_frame(&self, i: usize) -> Option<u64> {
        self.buckets
            .after(self.agent(i, "last_tick_frame"))
            .checked_sub(1)
    }

    /// The most frames an agent can wait past the frame it is due in, with
    /// the budget in every frame: `(N - 1) / B` rounded down for a crowd
    /// of `N` and a budget of `B`, 0 without a budget, `None` with a
    /// budget of 0.
    ///
    /// Due agents go in the order they became due (by frame, then index),
    /// so an agent due in frame `d` has at most the `N - 1` other agents
    /// before it, and no agent that becomes due later goes before it. Each
    /// frame ticks the first `B` of that order, so every frame the agent
    /// waits through takes `B` of those before it, and it ticks by frame
    /// `d + (N - 1) / B`. The bound is reached: with every agent at
    /// [`Rate::EveryFrame`], the last agent of the crowd is due in the
    /// first frame behind all the others and waits exactly that long.
    /// When the budget changes from frame to frame, an agent due in frame
    /// `d` ticks by the first frame `g` whose budgets from `d` to `g`
    /// add up to `N`.
    pub fn wait_bound(&self) -> Option<u64> {
        match self.budget {
            None => Some(0),
            Some(0) => None,
            Some(b) => Some(self.len().saturating_sub(1) as u64 / u64::from(b)),
        }
    }

    /// `i` as an agent index, checked.
    #[track_caller]
    fn agent(&self, i: usize, what: &str) -> u32 {
        assert!(
            i < self.len(),
            "Schedule::{what}: agent {i} of a crowd of {}",
            self.len()
        );
        i as u32
    }
}

/// The period of rate class `class` in `buckets` (0 for none: only when
/// woken).
fn period_of(buckets: &Buckets, class: u32) -> u32 {
    buckets.classes.get(class as usize).map_or(0, |c| c.period)
}

/// [`Schedule::set_rate`]'s rule for agent `i`, whose rate changed since
/// the last frame, from the period `old` it had then, before frame `frame`:
/// it has gone both that period and its period now without a tick,
/// counting that frame (the frame after its last tick is `after`).
fn overdue(buckets: &Buckets, frame: u64, old: u32, i: u32) -> bool {
    if old == 0 {
        return false;
    }
    let new = period_of(buckets, buckets.class[i as usize]);
    let gone = frame + 1 - buckets.after(i);
    new > 0 && old != new && gone >= u64::from(old.max(new))
}
