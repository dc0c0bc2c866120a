//! What the caller hands a tick.

/// What the caller tells a tick: the time and this tick's flag words.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct TickInput {
    /// Absolute time, in seconds. Must be finite. A clock that goes
    /// backwards is accepted: timers then wait until `now` passes their
    /// last stamp plus their period, and `Ctx::time_active` may be negative.
    pub now: f64,
    /// Time since the previous tick, in seconds. Must be finite and not
    /// negative.
    pub dt: f32,
    /// Decision flags: ad hoc per-tick facts from the caller (is-night,
    /// has-nest, …), tested by deciders' `needs_*` preconditions.
    pub decision: u64,
    /// Stimuli flags, usually from [`Stimuli::update`](crate::Stimuli::update),
    /// tested by deciders' `stimuli_*` preconditions.
    pub stimuli: u64,
    /// The agent's id, handed on to callbacks and traces, and the id
    /// under which its deferred actions are launched
    /// ([`ActionRequest::agent`](crate::ActionRequest::agent)). Set it with
    /// [`with_agent`](Self::with_agent): [`tick_all`](crate::tick_all)
    /// replaces an id not set that way with the agent's index.
    pub agent: u32,
    /// Whether `agent` was set with `with_agent`.
    agent_given: bool,
}

impl TickInput {
    /// Input at time `now` with step `dt`, no flags, agent 0 (in
    /// [`tick_all`](crate::tick_all): the agent's index).
    pub const fn new(now: f64, dt: f32) -> Self {
        TickInput {
            now,
            dt,
            decision: 0,
            stimuli: 0,
            agent: 0,
            agent_given: false,
        }
    }

    /// With the decision flags `flags` (any `bitflags` type up to 64 bits).
    pub fn with_decision<F: bitflags::Flags>(mut self, flags: F) -> Self
    where
        F::Bits: Into<u64>,
    {
        self.decision = flags.bits().into();
        self
    }

    /// With the raw decision flag word `bits`.
    pub const fn with_decision_bits(mut self, bits: u64) -> Self {
        self.decision = bits;
        self
    }

    /// With the stimuli flags `flags` (any `bitflags` type up to 64 bits).
    pub fn with_stimuli<F: bitflags::Flags>(mut self, flags: F) -> Self
    where
        F::Bits: Into<u64>,
    {
        self.stimuli = flags.bits().into();
        self
    }

    /// With the raw stimuli flag word `bits`.
    pub const fn with_stimuli_bits(mut self, bits: u64) -> Self {
        self.stimuli = bits;
        self
    }

    /// With the agent id `agent` (also in [`tick_all`](crate::tick_all),
    /// which otherwise gives each agent its index). Deferred actions are
    /// launched under it and their requests name it, so each agent of a
    /// crowd needs its own (see
    /// [`TickError::AgentIdTaken`](crate::TickError::AgentIdTaken)).
    pub const fn with_agent(mut self, agent: u32) -> Self {
        self.agent = agent;
        self.agent_given = true;
        self
    }

    /// The input of a tick at `now` with step `dt` of the agent with id
    /// `agent` (set, as by [`with_agent`](Self::with_agent)), decision
    /// flags `decision` and stimuli flags `stimuli`.
    #[inline(always)]
    pub(crate) const fn of_agent(
        now: f64,
        dt: f32,
        agent: u32,
        decision: u64,
        stimuli: u64,
    ) -> Self {
        TickInput {
            now,
            dt,
            decision,
            stimuli,
            agent,
            agent_given: true,
        }
    }

    /// The input a tick with context `cx` was given (its agent id set).
    #[inline(always)]
    pub(crate) const fn of(cx: &super::Ctx) -> Self {
        TickInput {
            now: cx.now,
            dt: cx.dt,
            decision: cx.decision,
            stimuli: cx.stimuli,
            agent: cx.agent,
            agent_given: true,
        }
    }

    /// With the agent id `index`, unless an id was set with
    /// [`with_agent`](Self::with_agent) (or by an earlier `or_agent`),
    /// which it keeps: what [`tick_all`](crate::tick_all) does to the
    /// input of the agent at `index`. For code that ticks a crowd in its
    /// own way and means to give its agents the ids `tick_all` would.
    ///
    /// ```
    /// use bt_core::TickInput;
    ///
    /// assert_eq!(TickInput::new(0.0, 0.1).or_agent(7).agent, 7);
    /// assert_eq!(TickInput::new(0.0, 0.1).with_agent(3).or_agent(7).agent, 3);
    /// assert_eq!(TickInput::new(0.0, 0.1).or_agent(7).or_agent(9).agent, 7);
    /// ```
    #[inline(always)]
    pub const fn or_agent(mut self, index: usize) -> Self {
        if !self.agent_given {
            self.agent = index as u32;
            self.agent_given = true;
        }
        self
    }
}

/// Rounding slack of timer preconditions, in seconds: game clocks add up
/// `dt`s, and a period of 1.0 should not slip a whole tick because the sum
/// came to 0.9999999999999996.
pub const TIMER_SLACK: f64 = 1e-6;

/// Whether a period of `period` seconds that started at `last` still runs
/// at `now`, less [`TIMER_SLACK`]: the test of timers and of global
/// cooldowns. A stamp more than one period later than `now` (the clock
/// went back, or one tick was given a time far ahead, milliseconds as
/// seconds) counts as run out, so one bad tick does not hold the timer
/// until the clock catches up.
#[inline(always)]
pub(crate) fn period_runs(last: f64, now: f64, period: f64) -> bool {
    now - last < period - TIMER_SLACK && last - now < period
}

/// A time before which [`period_runs`]`(last, now, period)` holds for
/// every `now` not earlier than one at which it held (a later `now` only
/// moves away from a stamp ahead of it): the end of the period less the
/// slack, less a margin of 2^-40 of the magnitudes involved, far above
/// the rounding of the subtraction in `period_runs` (2^-53 of them). NaN
/// or -inf when the period is unusable or never ran: then no `now` is
/// before it.
#[inline(always)]
pub(crate) fn period_runs_until(last: f64, period: f64) -> f64 {
    let p = period - TIMER_SLACK;
    last + p - (last.abs() + p.abs()) * (1.0 / (1u64 << 40) as f64)
}

/// The bit types a `bitflags` type may have to be read back from a flag
/// word: `u8`, `u16`, `u32` and `u64`. A word is cut to the type's width.
pub trait FlagBits: bitflags::Bits + sealed::Sealed {
    /// The low bits of `word`.
    fn from_word(word: u64) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! flag_bits {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl FlagBits for $t {
            #[inline(always)]
            fn from_word(word: u64) -> Self {
                word as $t
            }
        }
    )*};
}
flag_bits!(u8, u16, u32, u64);

/// The flag word `word` as the `bitflags` type `F`, every bit kept (also
/// bits `F` does not name).
#[inline(always)]
pub(crate) fn flags_of<F: bitflags::Flags>(word: u64) -> F
where
    F::Bits: FlagBits,
{
    F::from_bits_retain(F::Bits::from_word(word))
}
