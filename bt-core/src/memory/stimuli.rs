//! Stimuli: short-lived facts about an agent's world.
//!
//! A stimulus is one flag of the user's own `bitflags` type (a token, bit
//! 0..64), a small payload (`P`, `u64` by default: an agent id, an amount, a
//! handle) and a time-out. Deciders test the word [`Stimuli::update`]
//! returns with `stimuli_all:`, `stimuli_any:`, `stimuli_none:` and
//! `stimuli_not_all:` preconditions.

use core::fmt;
use core::marker::PhantomData;

use arrayvec::ArrayVec;

/// Up to `N` live stimuli of the flags type `F`, each with a payload `P`.
///
/// Fixed size, no heap: store one beside each agent. Any code may set a
/// stimulus on any agent (a bite sets `HIT` on the bitten one, with the
/// biter's id as payload).
///
/// # Time
///
/// Call [`update`](Stimuli::update) once per tick, before the tick, with the
/// tick's `dt`, and pass the word it returns to the tick
/// ([`TickInput::with_stimuli`](crate::TickInput::with_stimuli)). A stimulus
/// set with a time-out of `T` seconds is live for the ticks less than `T`
/// seconds after the one it was set for: stimuli set since the last update
/// are not aged by the next one (they happened *now*), older ones age by
/// each update's `dt`, and a stimulus whose age reaches `T` exactly has
/// expired. With `dt = 0.5` and `T = 2.0` that is four ticks. Ages are
/// kept in `f64`, so a time-out of days still ends on the tick it should
/// at 60 ticks a second. A `dt` that is not a finite number of seconds at
/// or above zero (NaN, an infinity, a negative step) ages nothing: no
/// stimulus expires in that update.
///
/// A stimulus that happened *between* two updates, some time after the
/// last, is set with [`set_since`](Stimuli::set_since): its time-out then
/// runs from when it happened, however long the agent takes to tick again
/// (an agent of a slow rate, or one a frame budget keeps waiting). Saved
/// and restored, stimuli keep their time left either way.
///
/// ```
/// use bt_core::Stimuli;
///
/// bitflags::bitflags! {
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub struct Sense: u64 {
///         const HIT = 1 << 0;
///         const SMELL_FOOD = 1 << 1;
///     }
/// }
///
/// let mut stimuli = Stimuli::<Sense, 4, u32>::new();
/// stimuli.set(Sense::HIT, 17, Some(1.0))?; // hit by agent 17, for a second
/// stimuli.set(Sense::SMELL_FOOD, 0, None)?; // until cleared
/// assert_eq!(stimuli.update(0.5), Sense::HIT | Sense::SMELL_FOOD);
/// assert_eq!(stimuli.get(Sense::HIT).map(|s| s.payload), Some(17));
/// // Half a second later: still hit.
/// assert_eq!(stimuli.update(0.5), Sense::HIT | Sense::SMELL_FOOD);
/// // A second after it was set, the hit has expired.
/// assert_eq!(stimuli.update(0.5), Sense::SMELL_FOOD);
/// # Ok::<(), bt_core::StimuliError>(())
/// ```
pub struct Stimuli<F, const N: usize, P: Copy = u64> {
    live: ArrayVec<Entry<P>, N>,
    word: u64,
    _flags: PhantomData<fn() -> F>,
}

#[derive(Clone, Copy, Debug)]
struct Entry<P> {
    bit: u8,
    /// How long after the last update it happened: the next update ages
    /// it by the part of its step after that (none of a step shorter than
    /// this). Infinite for a stimulus set by `set` (it happened at the
    /// next update), 0 once an update aged it.
    ahead: f32,
    payload: P,
    /// Seconds left; `f64::INFINITY` for a stimulus that never expires.
    /// An `f64`: at 60 ticks a second, an `f32` time-out above about
    /// 260 000 s would not move at all, and long ones would drift.
    left: f64,
}

/// One live stimulus, as [`Stimuli::get`] and [`Stimuli::iter`] show it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Stimulus<P> {
    /// Its bit index in the flags word.
    pub bit: u8,
    /// Its payload.
    pub payload: P,
    /// Seconds until it expires (`None`: never).
    pub remaining: Option<f32>,
}

/// Why a stimulus could not be set.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum StimuliError {
    /// All `capacity` places hold live stimuli; nothing was changed. Clear
    /// one, or give the agent a larger `Stimuli`.
    Full {
        /// Bit of the stimulus that did not fit.
        bit: u8,
        /// The capacity `N`.
        capacity: usize,
    },
    /// The flag value has not exactly one bit set (or a bit above 63).
    NotOneFlag {
        /// The flag value's bits.
        bits: u128,
    },
    /// A time-out that is not a finite number of seconds above zero.
    BadTimeout {
        /// Bit of the stimulus.
        bit: u8,
        /// The time-out given.
        timeout: f32,
    },
    /// A time since the last update ([`Stimuli::set_since`]) that is not a
    /// finite number of seconds at or above zero.
    BadElapsed {
        /// Bit of the stimulus.
        bit: u8,
        /// The time given.
        elapsed: f32,
    },
}

impl fmt::Display for StimuliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StimuliError::Full { bit, capacity } => write!(
                f,
                "stimulus bit {bit}: all {capacity} places hold live stimuli"
            ),
            StimuliError::NotOneFlag { bits } => write!(
                f,
                "a stimulus is one flag of a 64-bit word; got bits {bits:#x}"
            ),
            StimuliError::BadTimeout { bit, timeout } => write!(
                f,
                "stimulus bit {bit}: time-out {timeout} is not a finite number of seconds above zero"
            ),
            StimuliError::BadElapsed { bit, elapsed } => write!(
                f,
                "stimulus bit {bit}: {elapsed} is not a finite number of seconds since the last update"
            ),
        }
    }
}

impl core::error::Error for StimuliError {}

impl<F, const N: usize, P: Copy> Default for Stimuli<F, N, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F, const N: usize, P: Copy> Clone for Stimuli<F, N, P> {
    fn clone(&self) -> Self {
        Stimuli {
            live: self.live.clone(),
            word: self.word,
            _flags: PhantomData,
        }
    }
}

impl<F, const N: usize, P: Copy> Stimuli<F, N, P> {
    /// No stimuli.
    pub const fn new() -> Self {
        const { assert!(N <= 64, "at most 64 stimuli: one per bit of the word") };
        Stimuli {
            live: ArrayVec::new_const(),
            word: 0,
            _flags: PhantomData,
        }
    }

    /// Number of live stimuli.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether none is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Whether all `N` places hold live stimuli.
    pub fn is_full(&self) -> bool {
        self.live.is_full()
    }

    /// The raw word of the live stimuli, without aging them.
    pub fn bits(&self) -> u64 {
        self.word
    }

    /// The live stimuli, in the order they were first set.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Stimulus<P>> + '_ {
        self.live.iter().map(Entry::view)
    }

    /// Forgets every stimulus.
    pub fn clear_all(&mut self) {
        self.live.clear();
        self.word = 0;
    }

    /// Sets the stimulus of bit `bit` (0..64); see [`set`](Stimuli::set).
    ///
    /// # Errors
    /// As [`set`](Stimuli::set); [`StimuliError::NotOneFlag`] for a bit
    /// above 63.
    pub fn set_bit(
        &mut self,
        bit: u8,
        payload: P,
        timeout: Option<f32>,
    ) -> Result<(), StimuliError> {
        let left = Self::checked(bit, timeout)?;
        self.put(Entry {
            bit,
            ahead: f32::INFINITY,
            payload,
            left,
        })
    }

    /// Sets the stimulus of bit `bit` (0..64) as happened `elapsed`
    /// seconds after the last update; see [`set_since`](Stimuli::set_since).
    ///
    /// # Errors
    /// As [`set_since`](Stimuli::set_since); [`StimuliError::NotOneFlag`]
    /// for a bit above 63.
    pub fn set_bit_since(
        &mut self,
        bit: u8,
        payload: P,
        timeout: Option<f32>,
        elapsed: f32,
    ) -> Result<(), StimuliError> {
        let left = Self::checked(bit, timeout)?;
        if !(elapsed.is_finite() && elapsed >= 0.0) {
            return Err(StimuliError::BadElapsed { bit, elapsed });
        }
        self.put(Entry {
            bit,
            ahead: elapsed,
            payload,
            left,
        })
    }

    /// The seconds a stimulus of bit `bit` set with `timeout` is live for,
    /// checked.
    fn checked(bit: u8, timeout: Option<f32>) -> Result<f64, StimuliError> {
        if bit >= 64 {
            return Err(StimuliError::NotOneFlag {
                bits: 1u128 << bit.min(127),
            });
        }
        if let Some(t) = timeout
            && !(t.is_finite() && t > 0.0)
        {
            return Err(StimuliError::BadTimeout { bit, timeout: t });
        }
        Ok(timeout.map_or(f64::INFINITY, f64::from))
    }

    /// Puts `entry` in the place of its bit's stimulus, or a new place.
    fn put(&mut self, entry: Entry<P>) -> Result<(), StimuliError> {
        let bit = entry.bit;
        if let Some(e) = self.live.iter_mut().find(|e| e.bit == bit) {
            *e = entry;
            return Ok(());
        }
        self.live
            .try_push(entry)
            .map_err(|_| StimuliError::Full { bit, capacity: N })?;
        self.word |= 1 << bit;
        Ok(())
    }

    /// Removes the stimulus of bit `bit`, returning it if it was live.
    pub fn clear_bit(&mut self, bit: u8) -> Option<Stimulus<P>> {
        let i = self.live.iter().position(|e| e.bit == bit)?;
        let e = self.live.remove(i);
        self.word &= !(1 << bit);
        Some(e.view())
    }

    /// The live stimulus of bit `bit`.
    pub fn get_bit(&self, bit: u8) -> Option<Stimulus<P>> {
        self.live.iter().find(|e| e.bit == bit).map(Entry::view)
    }

    /// Ages the stimuli by `dt` seconds, drops the expired ones and returns
    /// the raw word of those still live. Call once per tick, before it. A
    /// `dt` that is NaN, infinite or negative ages nothing.
    pub fn update_bits(&mut self, dt: f32) -> u64 {
        let dt = if dt.is_finite() && dt > 0.0 {
            f64::from(dt)
        } else {
            0.0
        };
        let mut word = 0;
        self.live.retain(|e| {
            // The part of the step after it happened (none, for one set
            // at or after the update's time). An update of no time leaves
            // a stimulus that happened after the last one where it is.
            e.left -= (dt - f64::from(e.ahead)).max(0.0);
            if dt > 0.0 || e.ahead == f32::INFINITY {
                e.ahead = 0.0;
            }
            let live = e.left > 0.0;
            if live {
                word |= 1 << e.bit;
            }
            live
        });
        self.word = word;
        word
    }
}

impl<F: bitflags::Flags, const N: usize, P: Copy> Stimuli<F, N, P>
where
    F::Bits: Into<u128>,
{
    fn bit_of(flag: &F) -> Result<u8, StimuliError> {
        let bits: u128 = flag.bits().into();
        if bits.count_ones() != 1 || bits >= 1 << 64 {
            return Err(StimuliError::NotOneFlag { bits });
        }
        Ok(bits.trailing_zeros() as u8)
    }

    /// Sets the stimulus `flag` (one flag of `F`) with `payload`, live for
    /// `timeout` seconds (`None`: until cleared). Setting a live stimulus
    /// again replaces its payload and restarts its time-out.
    ///
    /// # Errors
    /// [`StimuliError::Full`] when `N` other stimuli are live (nothing is
    /// changed: no stimulus is ever dropped to make room),
    /// [`StimuliError::NotOneFlag`] when `flag` is not exactly one bit,
    /// [`StimuliError::BadTimeout`] for a time-out that is not finite and
    /// above zero.
    pub fn set(&mut self, flag: F, payload: P, timeout: Option<f32>) -> Result<(), StimuliError> {
        self.set_bit(Self::bit_of(&flag)?, payload, timeout)
    }

    /// Sets the stimulus `flag` as happened `elapsed` seconds after the
    /// last update (the agent's last tick), live for `timeout` seconds from
    /// then: the next update, `dt` after the last, ages it by the `dt -
    /// elapsed` seconds since it happened. So its time-out runs from when
    /// it happened however long the agent takes to tick again, where
    /// [`set`](Stimuli::set) counts from the next update. For an agent of a
    /// [`Schedule`](crate::Schedule), `elapsed` is the clock now less
    /// [`Schedule::last_tick`](crate::Schedule::last_tick)
    /// ([`Schedule::stimulate`](crate::Schedule::stimulate) does this).
    /// An `elapsed` longer than the next update's step (a stimulus stamped
    /// after the tick that sees it: a clock in milliseconds given as
    /// seconds, say) counts as happened at that update: it is live for
    /// `timeout` seconds from then, never longer.
    ///
    /// ```
    /// # use bt_core::Stimuli;
    /// # bitflags::bitflags! {
    /// #     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    /// #     pub struct Sense: u64 { const HIT = 1 << 0; }
    /// # }
    /// // An agent that last ticked at 10.0 s is hit at 10.15 s, for half a
    /// // second: over at 10.65 s.
    /// let mut fast = Stimuli::<Sense, 4>::new();
    /// fast.set_since(Sense::HIT, 0, Some(0.5), 0.15)?;
    /// assert_eq!(fast.update(0.2), Sense::HIT); // its tick at 10.2 s sees it
    /// assert_eq!(fast.update(0.4), Sense::HIT); // and the one at 10.6 s
    /// assert_eq!(fast.update(0.1), Sense::empty()); // at 10.7 s it is over
    /// // A slow agent whose next tick is at 11.0 s never sees it.
    /// let mut slow = Stimuli::<Sense, 4>::new();
    /// slow.set_since(Sense::HIT, 0, Some(0.5), 0.15)?;
    /// assert_eq!(slow.update(1.0), Sense::empty());
    /// // Stamped 600 s after the last update, seen by an update 0.2 s
    /// // after it: live for its half second from then.
    /// let mut early = Stimuli::<Sense, 4>::new();
    /// early.set_since(Sense::HIT, 0, Some(0.5), 600.0)?;
    /// assert_eq!(early.update(0.2), Sense::HIT);
    /// assert_eq!(early.update(0.5), Sense::empty());
    /// # Ok::<(), bt_core::StimuliError>(())
    /// ```
    ///
    /// # Errors
    /// As [`set`](Stimuli::set), and [`StimuliError::BadElapsed`] for an
    /// `elapsed` that is negative or not finite.
    pub fn set_since(
        &mut self,
        flag: F,
        payload: P,
        timeout: Option<f32>,
        elapsed: f32,
    ) -> Result<(), StimuliError> {
        self.set_bit_since(Self::bit_of(&flag)?, payload, timeout, elapsed)
    }

    /// Removes the stimulus `flag`, returning it if it was live (a value
    /// that is not one flag clears nothing).
    pub fn clear(&mut self, flag: F) -> Option<Stimulus<P>> {
        self.clear_bit(Self::bit_of(&flag).ok()?)
    }

    /// The live stimulus `flag`, with its payload and remaining time.
    pub fn get(&self, flag: F) -> Option<Stimulus<P>> {
        self.get_bit(Self::bit_of(&flag).ok()?)
    }

    /// The live stimuli as `F`, without aging them.
    pub fn flags(&self) -> F
    where
        F::Bits: TryFrom<u64>,
    {
        crate::decl::bits_as(self.word)
    }

    /// Ages the stimuli by `dt` seconds (the tick's step), drops the
    /// expired ones and returns the flags of those still live, for
    /// [`TickInput::with_stimuli`](crate::TickInput::with_stimuli). A `dt`
    /// that is NaN, infinite or negative ages nothing.
    pub fn update(&mut self, dt: f32) -> F
    where
        F::Bits: TryFrom<u64>,
    {
        crate::decl::bits_as(self.update_bits(dt))
    }
}

// --- snapshots (the `serde` feature): what `persist::stimuli` reads and writes.

#[cfg(feature = "serde")]
impl<F, const N: usize, P: Copy> Stimuli<F, N, P> {
    /// Every live stimulus as `(bit, fresh, payload, seconds left, ahead)`,
    /// in order: `ahead` is how long after the last update one set since
    /// then with `set_since` happened (0 for the others).
    pub(crate) fn entries(&self) -> impl ExactSizeIterator<Item = (u8, bool, P, f64, f32)> + '_ {
        self.live.iter().map(|e| {
            let fresh = e.ahead == f32::INFINITY;
            let ahead = if fresh { 0.0 } else { e.ahead };
            (e.bit, fresh, e.payload, e.left, ahead)
        })
    }

    /// Stimuli made of checked entries: at most `N`, distinct bits below 64,
    /// time left above zero, `ahead` finite and at least 0 (and 0 for a
    /// fresh one).
    pub(crate) fn from_entries(entries: impl Iterator<Item = (u8, bool, P, f64, f32)>) -> Self {
        let mut s = Self::new();
        for (bit, fresh, payload, left, ahead) in entries {
            s.live.push(Entry {
                bit,
                ahead: if fresh { f32::INFINITY } else { ahead },
                payload,
                left,
            });
            s.word |= 1 << bit;
        }
        s
    }
}

impl<P: Copy> Entry<P> {
    fn view(&self) -> Stimulus<P> {
        Stimulus {
            bit: self.bit,
            payload: self.payload,
            remaining: self.left.is_finite().then_some(self.left as f32),
        }
    }
}

impl<F, const N: usize, P: Copy + fmt::Debug> fmt::Debug for Stimuli<F, N, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Word = Stimuli<(), 4, u32>;

    /// A time-out of 10^5 s at 60 ticks a second ends within one tick of
    /// 10^5 s (aged in `f32`, it would end some 6 000 s late).
    #[test]
    #[cfg_attr(miri, ignore)] // six million updates
    fn a_long_time_out_expires_on_time_at_sixty_ticks_a_second() {
        let mut s = Word::new();
        s.set_bit(3, 0, Some(1e5)).unwrap();
        let dt = 1.0f32 / 60.0;
        let mut ticks = 0u64;
        while s.update_bits(dt) != 0 {
            ticks += 1;
            assert!(ticks < 7_000_000, "never expired");
        }
        let lived = ticks as f64 * f64::from(dt);
        assert!((lived - 1e5).abs() <= f64::from(dt), "lived {lived} s");
    }

    /// NaN, infinite and negative steps age nothing; a stimulus that never
    /// expires survives every step.
    #[test]
    fn a_step_that_is_not_a_finite_time_ages_nothing() {
        let mut s = Word::new();
        s.set_bit(0, 1, Some(1.0)).unwrap();
        s.set_bit(1, 2, None).unwrap();
        assert_eq!(s.update_bits(0.25), 0b11);
        for dt in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -5.0] {
            assert_eq!(s.update_bits(dt), 0b11, "dt {dt}");
            assert_eq!(s.get_bit(0).unwrap().remaining, Some(1.0), "dt {dt}");
        }
        assert_eq!(s.update_bits(1.0), 0b10);
        assert_eq!(s.update_bits(f32::MAX), 0b10);
        assert_eq!(s.get_bit(1).unwrap().remaining, None);
    }

    /// A stimulus set some time after the last update is aged by the rest
    /// of the next step only; a time that is negative or not finite is
    /// refused, and changes nothing.
    #[test]
    fn a_stimulus_set_since_the_last_update_counts_from_then() {
        let mut s = Word::new();
        s.set_bit_since(2, 7, Some(1.0), 0.25).unwrap();
        // Happened 0.25 s into a step of 0.5: 0.25 s old at the update.
        assert_eq!(s.update_bits(0.5), 0b100);
        assert_eq!(s.get_bit(2).unwrap().remaining, Some(0.75));
        assert_eq!(s.update_bits(0.75), 0);
        for elapsed in [-0.1, f32::NAN, f32::INFINITY] {
            let err = s.set_bit_since(3, 1, Some(1.0), elapsed).unwrap_err();
            assert!(matches!(err, StimuliError::BadElapsed { bit: 3, .. }));
        }
        assert!(s.is_empty());
        // Never expiring, whenever it happened.
        s.set_bit_since(4, 1, None, 5.0).unwrap();
        assert_eq!(s.update_bits(100.0), 0b1_0000);
    }

    /// A stimulus stamped after the update that sees it counts from that
    /// update; an update of no time (a clock that did not move) leaves it
    /// where it happened, for the next update to age by the rest.
    #[test]
    fn a_stimulus_stamped_ahead_counts_from_the_update_that_sees_it() {
        let mut s = Word::new();
        s.set_bit_since(1, 0, Some(1.0), 600.0).unwrap();
        assert_eq!(s.update_bits(0.25), 0b10);
        assert_eq!(s.get_bit(1).unwrap().remaining, Some(1.0));
        assert_eq!(s.update_bits(0.75), 0b10);
        assert_eq!(s.update_bits(0.25), 0);
        s.set_bit_since(2, 0, Some(1.0), 0.25).unwrap();
        assert_eq!(s.update_bits(0.0), 0b100);
        assert_eq!(s.update_bits(0.5), 0b100);
        assert_eq!(s.get_bit(2).unwrap().remaining, Some(0.75));
        s.set_bit(3, 0, Some(1.0)).unwrap();
        assert_eq!(s.update_bits(0.0), 0b1100);
        assert_eq!(s.update_bits(0.5), 0b1100);
        assert_eq!(s.get_bit(3).unwrap().remaining, Some(0.5));
    }
}
