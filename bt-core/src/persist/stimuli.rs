//! Snapshots of an agent's stimuli.

use alloc::vec::Vec;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{Body, Fault, Fields, RestoreError, SNAPSHOT_VERSION, SnapshotError, read_struct};
use crate::memory::stimuli::Stimuli;

const FIELDS: &[&str] = &["version", "live", "clock"];

/// The version of stimuli saved with a clock: those of stimuli on the
/// clock ([`Stimuli::set_at`], [`Stimuli::update_at`]). Stimuli without
/// are saved as [`SNAPSHOT_VERSION`], as they always were.
const CLOCK_VERSION: u16 = SNAPSHOT_VERSION + 1;

/// One live stimulus as saved.
#[derive(serde::Serialize, serde::Deserialize)]
struct StimulusSnap<P> {
    bit: u8,
    /// Set since the last update: the next update does not age it.
    fresh: bool,
    payload: P,
    /// Seconds left; `None`: never expires.
    left: Option<f64>,
}

/// One live stimulus as saved with a clock.
#[derive(serde::Serialize, serde::Deserialize)]
struct ClockedSnap<P> {
    bit: u8,
    /// Set since the last update: the next update does not age it.
    fresh: bool,
    /// On the clock: `left` is the clock reading it expires at.
    at: bool,
    payload: P,
    /// Seconds left, or the clock reading it expires at; `None`: never.
    left: Option<f64>,
}

/// Live stimuli with their payloads, remaining time-outs and whether they
/// were set since the last update. Stimuli kept by `update` keep no
/// clock: a restored stimulus has the time left that it had. Stimuli on
/// the clock are saved with the clock reading each expires at and the
/// latest reading they saw, so that they expire at the same reading
/// after a load.
impl<F, const N: usize, P: Copy + Serialize> Serialize for Stimuli<F, N, P> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let finite = |x: f64| x.is_finite().then_some(x);
        let clocked = self.clock().is_finite();
        let mut st = s.serialize_struct("Stimuli", FIELDS.len() - usize::from(!clocked))?;
        if clocked {
            st.serialize_field("version", &CLOCK_VERSION)?;
            let live: Vec<_> = self
                .entries()
                .map(|(bit, fresh, at, payload, left)| ClockedSnap {
                    bit,
                    fresh,
                    at,
                    payload,
                    left: finite(left),
                })
                .collect();
            st.serialize_field("live", &live)?;
            st.serialize_field("clock", &self.clock())?;
        } else {
            st.serialize_field("version", &SNAPSHOT_VERSION)?;
            let live: Vec<_> = self
                .entries()
                .map(|(bit, fresh, _, payload, left)| StimulusSnap {
                    bit,
                    fresh,
                    payload,
                    left: finite(left),
                })
                .collect();
            st.serialize_field("live", &live)?;
        }
        st.end()
    }
}

/// Checked as [`Stimuli::restore`] checks it; a [`SnapshotError`] becomes
/// the format's error message.
impl<'de, F, const N: usize, P: Copy + Deserialize<'de>> Deserialize<'de> for Stimuli<F, N, P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::restore(d).map_err(|e| match e {
            RestoreError::Format(e) => e,
            RestoreError::Snapshot(e) => serde::de::Error::custom(e),
        })
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<F, const N: usize, P: Copy> Stimuli<F, N, P> {
    /// Reads stimuli saved with their `Serialize` implementation.
    ///
    /// # Errors
    /// [`RestoreError::Format`] when `d` cannot decode them;
    /// [`RestoreError::Snapshot`] for another format version, more than `N`
    /// stimuli, a bit above 63 or given twice, a time left that is not
    /// above zero, or a clock reading that is not finite or a stimulus on
    /// the clock that expired by it.
    pub fn restore<'de, D: Deserializer<'de>>(d: D) -> Result<Self, RestoreError<D::Error>>
    where
        P: Deserialize<'de>,
    {
        let fault = Fault::default();
        let r = read_struct(
            d,
            "Stimuli",
            FIELDS,
            StimuliBody::<F, N, P>(&fault, core::marker::PhantomData),
        );
        fault.finish(r)
    }
}

struct StimuliBody<'f, F, const N: usize, P>(&'f Fault, core::marker::PhantomData<fn() -> (F, P)>);

impl<'de, F, const N: usize, P: Copy + Deserialize<'de>> Body<'de> for StimuliBody<'_, F, N, P> {
    type Value = Stimuli<F, N, P>;

    fn read<R: Fields<'de>>(self, f: &mut R) -> Result<Self::Value, R::Error> {
        let fault = self.0;
        let raise = |e| fault.raise::<R::Error>(e);
        let version: u16 = f.field("version")?;
        let (live, clock) = match version {
            SNAPSHOT_VERSION => {
                let live: Vec<StimulusSnap<P>> = f.field("live")?;
                let live = live.into_iter().map(|s| ClockedSnap {
                    bit: s.bit,
                    fresh: s.fresh,
                    at: false,
                    payload: s.payload,
                    left: s.left,
                });
                (live.collect::<Vec<_>>(), f64::NAN)
            }
            CLOCK_VERSION => {
                let live: Vec<ClockedSnap<P>> = f.field("live")?;
                let clock: f64 = f.field("clock")?;
                if !clock.is_finite() {
                    return Err(raise(SnapshotError::BadValue {
                        what: "stimuli clock reading",
                    }));
                }
                (live, clock)
            }
            found => {
                return Err(raise(SnapshotError::Version {
                    found,
                    supported: CLOCK_VERSION,
                }));
            }
        };
        if live.len() > N {
            return Err(raise(SnapshotError::Count {
                what: "live stimuli",
                found: live.len(),
                expected: N,
            }));
        }
        let mut bits = 0u64;
        for s in &live {
            if s.bit >= 64 || bits & (1 << s.bit) != 0 {
                return Err(raise(SnapshotError::BadValue {
                    what: "stimulus bit (above 63, or given twice)",
                }));
            }
            bits |= 1 << s.bit;
            let bad = match s.left {
                None => false,
                Some(expires) if s.at => !(expires.is_finite() && expires > clock),
                Some(left) => !(left.is_finite() && left > 0.0),
            };
            if bad {
                return Err(raise(SnapshotError::BadValue {
                    what: if s.at {
                        "stimulus expiry (not after the stimuli's clock)"
                    } else {
                        "stimulus time left"
                    },
                }));
            }
        }
        Ok(Stimuli::from_entries(
            live.into_iter().map(|s| {
                (
                    s.bit,
                    s.fresh,
                    s.at,
                    s.payload,
                    s.left.unwrap_or(f64::INFINITY),
                )
            }),
            clock,
        ))
    }
}
