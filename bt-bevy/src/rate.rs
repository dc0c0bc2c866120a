//! Tick rates and a per-run budget for brains: which brains a run of the
//! tick system ticks, and the `dt` each gets.
//!
//! A brain's rate is its entity's [`TickRate`] component (every run when
//! it has none). Each brain keeps its place in the schedule in its
//! [`Brain`](crate::Brain) ([`Turn`]): since when it is due, when it last
//! ticked, and its slot, the id its rate's turns are spread by. A run of
//! crowd `r` ticks a brain when its turn comes by its rate, when it was
//! woken, or when an earlier run's budget left it waiting; under a budget,
//! the due brains go in the order they became due, then by slot (then by
//! agent id), and those past the budget wait.

use bevy_ecs::change_detection::Tick;
use bevy_ecs::prelude::*;
pub use bt_core::Rate;
use bt_core::RateError;

use crate::plugin::RunFigures;

/// How often an entity's brain ticks: every run of the plugin's schedule
/// (the same as no `TickRate` at all), every `k`-th run, or only when
/// woken. Change it at any time (by distance to the camera, say), as
/// often as every run; removing it is a change to every run.
///
/// A rate change makes a brain that is not due, and that has gone both
/// its old and its new period without a tick, due at once (in the run
/// that sees the change); otherwise the new rate takes effect at the
/// first run of its own that comes. `OnWake` has no period: a change
/// from or to it never makes a brain due by this rule. A brain that has
/// not ticked yet counts as ticked before the first run. So a brain whose rate keeps changing
/// among periods up to `K` still ticks within `2K - 2` runs of its last
/// tick (budget aside); one changed every run, within `K` runs. In steady
/// use it makes due only brains whose turn it is at the old rate or the
/// new: a crowd switched at once from `Every(16)` to `Every(4)` ticks, in
/// the run of the switch, no more brains than are due by either rate.
///
/// Brains of one period are spread over its runs by agent id: the brain
/// of agent id `i` (the entity's index) with `Rate::Every(k)` ticks in the
/// runs whose number is [`Schedule::phase(i, k)`](bt_core::Schedule::phase)
/// modulo `k`, as in a scheduled crowd, so each run ticks about a `k`-th
/// of them. A brain loaded from a save (`SaveBrains`, feature
/// `serde`) keeps for this, and for its place under a budget, the agent
/// id it had when saved, whatever its entity now: its turns come in the
/// runs they would have. A brain ticks out of its turn when woken
/// ([`Brain::wake`](crate::Brain::wake), a reported deferred-action
/// outcome, or its [`Senses`](crate::Senses) changed since the last run),
/// and its behaviors always get the time since its own last tick as `dt`.
///
/// ```
/// use bt_bevy::{Rate, TickRate};
/// let far = TickRate::new(Rate::Every(10))?;
/// assert_eq!(far.rate(), Rate::Every(10));
/// assert!(TickRate::new(Rate::Every(0)).is_err());
/// # Ok::<(), bt_core::RateError>(())
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TickRate {
    /// The period in runs; 0: only when woken.
    period: u32,
}

impl TickRate {
    /// Every run: the rate of a brain without this component.
    pub const EVERY_RUN: TickRate = TickRate { period: 1 };
    /// Only in the run after the brain is woken.
    pub const ON_WAKE: TickRate = TickRate { period: 0 };

    /// The component for `rate`.
    ///
    /// # Errors
    /// [`RateError`] for `Rate::Every(0)` or a period above
    /// [`bt_core::Schedule::MAX_PERIOD`], as bt-core's schedule refuses
    /// them.
    pub fn new(rate: Rate) -> Result<Self, RateError> {
        let period = match rate {
            Rate::EveryFrame => 1,
            Rate::Every(0) => return Err(RateError::ZeroPeriod),
            Rate::Every(k) if k > bt_core::Schedule::MAX_PERIOD => {
                return Err(RateError::PeriodTooLong {
                    period: k,
                    max: bt_core::Schedule::MAX_PERIOD,
                });
            }
            Rate::Every(k) => k,
            Rate::OnWake => 0,
        };
        Ok(TickRate { period })
    }

    /// The rate (a period of 1 reads as [`Rate::EveryFrame`]).
    pub fn rate(self) -> Rate {
        match self.period {
            0 => Rate::OnWake,
            1 => Rate::EveryFrame,
            k => Rate::Every(k),
        }
    }

    /// The period in runs (0: only when woken), as a save holds it.
    #[cfg(feature = "serde")]
    pub(crate) fn period(self) -> u32 {
        self.period
    }

    /// The period of `rate` (a brain without one ticks every run: 1).
    #[inline(always)]
    pub(crate) fn period_of(rate: Option<&TickRate>) -> u32 {
        rate.map_or(1, |t| t.period)
    }

    /// Whether run `r` is the turn of agent id `id` at this rate.
    #[inline(always)]
    fn turn(self, id: u32, r: u64) -> bool {
        match self.period {
            0 => false,
            1 => true,
            k => r % u64::from(k) == u64::from(bt_core::Schedule::phase(id as usize, k)),
        }
    }
}

/// A run number no brain is due since: it is not due.
const IDLE: u64 = u64::MAX;
/// Woken for the next run (due since that run).
const WOKEN: u64 = u64::MAX - 1;

/// A brain's place in its crowd's schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Turn {
    /// The run it has been due since while it waits ([`IDLE`]: not due,
    /// [`WOKEN`]: due from the next run).
    since: u64,
    /// The run of its last tick ([`NEVER`]: it has not ticked yet; see
    /// [`Turn::last_run`]): a word where an `Option` took two, one store
    /// less in each tick.
    last_run: u64,
    /// The clock's reading at its last tick.
    pub(crate) last_now: f64,
    /// The id its rate's turns are spread by, and that orders it among the
    /// brains due since the same run: its agent id when it landed, or the
    /// one it was saved with.
    slot: u32,
    /// The period of the rate the last run that asked whether the brain
    /// is due found (1: no [`TickRate`], 0: only when woken): a run that
    /// finds another applies the rate-change rule ([`Turn::starved`]).
    /// The every-run path, which does not ask, leaves it as it was: that
    /// changes no decision (see `plugin::tick::every`). [`UNSEEN`] until
    /// a run first asks: the rate a brain lands with is no change.
    period: u32,
}

/// In [`Turn::period`]: no run has asked yet.
const UNSEEN: u32 = u32::MAX;

/// In [`Turn::last_run`]: no tick yet. No run has this number: a crowd
/// counts its runs from 0, one a frame.
const NEVER: u64 = u64::MAX;

// The period kept for the rate-change rule fits in the padding.
const _: () = assert!(std::mem::size_of::<Turn>() == 32);

impl Default for Turn {
    fn default() -> Self {
        Turn::landed(0)
    }
}

impl Turn {
    /// The turn of a brain that landed with agent id `id`: not due, never
    /// ticked.
    pub(crate) fn landed(id: u32) -> Self {
        Turn {
            since: IDLE,
            last_run: NEVER,
            last_now: 0.0,
            slot: id,
            period: UNSEEN,
        }
    }

    /// Makes the brain due from the next run, whatever its rate; a brain
    /// already due keeps its place.
    #[inline]
    pub(crate) fn wake(&mut self) {
        if self.since == IDLE {
            self.since = WOKEN;
        }
    }

    /// Whether the brain is due (woken, or left waiting by a budget).
    pub(crate) fn is_due(&self) -> bool {
        self.since != IDLE
    }

    /// The run of the brain's last tick (`None`: it has not ticked yet).
    #[inline(always)]
    pub(crate) fn last_run(&self) -> Option<u64> {
        (self.last_run != NEVER).then_some(self.last_run)
    }

    /// The run since which the brain is due in run `r`, if it is: its
    /// own turn, a wake, a wait, or a change of rate that found it starved
    /// ([`Turn::starved`]). `sensed`: its senses changed since the last
    /// run.
    #[inline(always)]
    pub(crate) fn due_since(&self, rate: Option<&TickRate>, r: u64, sensed: bool) -> Option<u64> {
        match self.since {
            IDLE if sensed
                || rate.is_none_or(|t| t.turn(self.slot, r) || self.starved(t.period, r)) =>
            {
                Some(r)
            }
            IDLE => None,
            WOKEN => Some(r),
            since => Some(since),
        }
    }

    /// The rate-change rule: whether a rate of period `period` (0: only
    /// when woken), found in run `r` by a brain that is not due, makes it
    /// due at once. It does when the period is not the one the last run
    /// found and the brain has gone both periods without a tick (one that
    /// never ticked counts from before run 0); `OnWake` has no period.
    /// (A brain without a `TickRate` is due in every run anyway.)
    #[inline(always)]
    fn starved(&self, period: u32, r: u64) -> bool {
        let old = self.period;
        old != period
            && old != 0
            && old != UNSEEN
            && period != 0
            && (self.last_run()).map_or(r.saturating_add(1), |last| r.saturating_sub(last))
                >= u64::from(old.max(period))
    }

    /// The last run found the rate of period `period` (1: no `TickRate`).
    #[inline(always)]
    pub(crate) fn saw(&mut self, period: u32) {
        self.period = period;
    }

    /// The `dt` of a tick in run `r` at `now`, whose frame step is
    /// `frame_dt`: the frame's step for a brain that ticked in the run
    /// before (or never), the time since its own last tick otherwise.
    #[inline(always)]
    pub(crate) fn dt(&self, r: u64, now: f64, frame_dt: f32) -> f32 {
        if self.on_time(r) {
            frame_dt
        } else {
            (now - self.last_now).clamp(0.0, f64::from(f32::MAX)) as f32
        }
    }

    /// Whether the brain ticked in run `r` (its turn is updated before its
    /// tick starts).
    #[inline(always)]
    pub(crate) fn ticked_in(&self, r: u64) -> bool {
        self.last_run == r
    }

    /// Whether a tick in run `r` takes the frame's step as its `dt`: the
    /// brain ticked in the run before, or never.
    #[inline(always)]
    pub(crate) fn on_time(&self, r: u64) -> bool {
        // A last tick is in a run before `r` (a save's too: its load
        // checks), and `NEVER` is past every run: one test says "the run
        // before `r`, or never" (in run 0, never, as every brain's).
        self.last_run >= r.wrapping_sub(1)
    }

    /// The brain ticked in run `r` at `now`.
    #[inline(always)]
    pub(crate) fn ticked(&mut self, r: u64, now: f64) {
        self.since = IDLE;
        self.last_run = r;
        self.last_now = now;
    }

    /// The brain was due in run `r` since `since` and the budget left it
    /// waiting.
    #[inline]
    pub(crate) fn wait(&mut self, since: u64) {
        self.since = since;
    }

    /// The runs a brain due since `since` waited past it, ticking in `r`.
    pub(crate) fn waited(since: u64, r: u64) -> u64 {
        r.saturating_sub(since)
    }

    /// The brain's order among the brains due since the same run, as that
    /// of agent id `id`: by slot, then (two brains of one slot, one of them
    /// loaded) by agent id.
    #[inline(always)]
    pub(crate) fn order(&self, id: u32) -> u64 {
        u64::from(self.slot) << 32 | u64::from(id)
    }
}

/// A turn as a save holds it (feature `serde`): run numbers are the
/// crowd's, the time a reading of its clock.
#[cfg(feature = "serde")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TurnParts {
    /// The id its rate's turns are spread by.
    pub(crate) slot: u32,
    /// The run it is due since (the crowd's next run: woken for it).
    pub(crate) due_since: Option<u64>,
    /// The run and the clock reading of its last tick.
    pub(crate) last: Option<(u64, f64)>,
    /// The period of the rate the last run that asked found (`None`: no
    /// run asked yet), for the rate-change rule; in a save since this
    /// field was added, read as `Some(..)`.
    pub(crate) seen: Option<Option<u32>>,
}

#[cfg(feature = "serde")]
impl Turn {
    /// The turn's parts, in a crowd whose next run is `next`.
    pub(crate) fn parts(&self, next: u64) -> TurnParts {
        TurnParts {
            slot: self.slot,
            due_since: match self.since {
                IDLE => None,
                WOKEN => Some(next),
                since => Some(since),
            },
            last: self.last_run().map(|r| (r, self.last_now)),
            seen: Some((self.period != UNSEEN).then_some(self.period)),
        }
    }

    /// The turn of `parts`, in a crowd whose next run is `next`, the
    /// entity's rate `rate`: due since at most `next`, its last tick
    /// before it (checked by the caller). The period the last run found
    /// is the saved one; a save without it counts the rate as that.
    pub(crate) fn from_parts(parts: TurnParts, next: u64, rate: Option<&TickRate>) -> Turn {
        Turn {
            since: match parts.due_since {
                None => IDLE,
                Some(s) if s >= next => WOKEN,
                Some(s) => s,
            },
            last_run: parts.last.map_or(NEVER, |(r, _)| r),
            last_now: parts.last.map_or(0.0, |(_, t)| t),
            slot: parts.slot,
            period: match parts.seen {
                Some(seen) => seen.unwrap_or(UNSEEN),
                None => TickRate::period_of(rate),
            },
        }
    }
}

/// What one run decides for a brain of the crowd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Go {
    /// Not due: skipped, its turn untouched.
    Skip,
    /// Due, and it ticks.
    Tick,
    /// Due since this run, and the budget leaves it waiting.
    Wait(u64),
}

/// The run's cut under a budget: which due brains tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Every due brain ticks (no budget, or no more due brains than it).
    #[default]
    All,
    /// The due brains whose `(since, order)` is at most this one tick.
    UpTo(u64, u64),
    /// No brain ticks (a budget of 0).
    Nothing,
}

impl Cut {
    /// What the run does for a brain of order `order` ([`Turn::order`])
    /// due since `since`.
    #[inline(always)]
    pub(crate) fn go(self, since: Option<u64>, order: u64) -> Go {
        let Some(s) = since else {
            return Go::Skip;
        };
        match self {
            Cut::All => Go::Tick,
            Cut::UpTo(cs, co) if (s, order) <= (cs, co) => Go::Tick,
            _ => Go::Wait(s),
        }
    }

    /// The cut for a budget of `budget` ticks among the due brains'
    /// `(since, order)` in `due` (reordered).
    pub(crate) fn of(budget: Option<u32>, due: &mut [(u64, u64)]) -> Cut {
        match budget {
            Some(0) if !due.is_empty() => Cut::Nothing,
            Some(b) if (b as usize) < due.len() => {
                let (_, &mut (s, i), _) = due.select_nth_unstable(b as usize - 1);
                Cut::UpTo(s, i)
            }
            _ => Cut::All,
        }
    }
}

/// One run of a crowd's tick system: its number, its cut, its clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// The run's number (the crowd's runs before it).
    pub(crate) r: u64,
    pub(crate) cut: Cut,
    pub(crate) now: f64,
    /// The frame's step, `Time::delta_secs`.
    pub(crate) dt: f32,
    /// The change tick after which a change to a brain's senses wakes it.
    pub(crate) senses_since: Tick,
}

impl Plan {
    /// Whether the brain with `turn`, `rate` and agent id `id` ticks in
    /// this run (`sensed`: its senses changed since the last run), and
    /// with which `dt`; its turn is updated either way.
    #[inline(always)]
    pub(crate) fn go(
        self,
        turn: &mut Turn,
        rate: Option<&TickRate>,
        id: u32,
        sensed: bool,
    ) -> Option<f32> {
        let since = turn.due_since(rate, self.r, sensed);
        turn.saw(TickRate::period_of(rate));
        match self.cut.go(since, turn.order(id)) {
            Go::Skip => None,
            Go::Wait(s) => {
                turn.wait(s);
                None
            }
            Go::Tick => {
                let dt = turn.dt(self.r, self.now, self.dt);
                turn.ticked(self.r, self.now);
                Some(dt)
            }
        }
    }
}

/// The cut of run `r` under `budget`, from every brain of the crowd's
/// `(due since, order)` (`None`: not due), with the run's figures; the
/// keys of the due ones are kept in `due` (its room reused run to run).
pub(crate) fn cut_of(
    budget: Option<u32>,
    due: &mut Vec<(u64, u64)>,
    r: u64,
    brains: impl Iterator<Item = (Option<u64>, u64)>,
) -> (Cut, RunFigures) {
    due.clear();
    due.extend(brains.filter_map(|(since, id)| since.map(|s| (s, id))));
    let n = due.len() as u64;
    let first = due.iter().map(|&(s, _)| s).min();
    let cut = Cut::of(budget, due);
    let ticked = match cut {
        Cut::All => n,
        Cut::UpTo(..) => u64::from(budget.unwrap_or(0)),
        Cut::Nothing => 0,
    };
    let figures = RunFigures {
        due: n,
        waiting: n - ticked,
        longest_wait: first
            .filter(|_| ticked > 0)
            .map_or(0, |s| Turn::waited(s, r)),
    };
    (cut, figures)
}
