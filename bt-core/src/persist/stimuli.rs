//! Snapshots of an agent's stimuli.

use alloc::vec::Vec;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{Body, Fault, Fields, RestoreError, SNAPSHOT_VERSION, SnapshotError, read_struct};
use crate::memory::stimuli::Stimuli;

const FIELDS: &[&str] = &["version", "live", "ahead"];

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

/// Live stimuli with their payloads, remaining time-outs and whether they
/// were set since the last update, and `ahead`: for each one set since the
/// last update with `set_since`, `[bit, seconds after the update]`. Stimuli
/// keep no clock: a restored stimulus has the time left that it had.
/// A self-describing format leaves `ahead` out when it is empty; a compact
/// one always writes it.
impl<F, const N: usize, P: Copy + Serialize> Serialize for Stimuli<F, N, P> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let ahead: Vec<(u8, f32)> = self
            .entries()
            .filter(|e| e.4 > 0.0)
            .map(|e| (e.0, e.4))
            .collect();
        let with_ahead = !ahead.is_empty() || !s.is_human_readable();
        let mut st = s.serialize_struct("Stimuli", 2 + usize::from(with_ahead))?;
        st.serialize_field("version", &SNAPSHOT_VERSION)?;
        let live: Vec<_> = self
            .entries()
            .map(|(bit, fresh, payload, left, _)| StimulusSnap {
                bit,
                fresh,
                payload,
                left: left.is_finite().then_some(left),
            })
            .collect();
        st.serialize_field("live", &live)?;
        if with_ahead {
            st.serialize_field("ahead", &ahead)?;
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
    /// stimuli, a bit above 63 or given twice, or a time left that is not
    /// above zero.
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
        if version != SNAPSHOT_VERSION {
            return Err(raise(SnapshotError::Version {
                found: version,
                supported: SNAPSHOT_VERSION,
            }));
        }
        let live: Vec<StimulusSnap<P>> = f.field("live")?;
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
            if let Some(left) = s.left
                && !(left.is_finite() && left > 0.0)
            {
                return Err(raise(SnapshotError::BadValue {
                    what: "stimulus time left",
                }));
            }
        }
        // Absent from a save made before stimuli kept it: none ahead.
        let ahead: Vec<(u8, f32)> = f
            .optional_field_seed("ahead", core::marker::PhantomData)?
            .unwrap_or_default();
        let mut ahead_bits = 0u64;
        for &(bit, a) in &ahead {
            let fresh = live.iter().find(|s| s.bit == bit).map(|s| s.fresh);
            if fresh != Some(false) || ahead_bits & (1 << bit) != 0 || !(a.is_finite() && a > 0.0) {
                return Err(raise(SnapshotError::BadValue {
                    what: "stimulus ahead (of no stimulus, of a fresh one, given twice, \
                           or not a time above 0)",
                }));
            }
            ahead_bits |= 1 << bit;
        }
        Ok(Stimuli::from_entries(live.into_iter().map(|s| {
            let a = ahead.iter().find(|a| a.0 == s.bit).map_or(0.0, |a| a.1);
            (
                s.bit,
                s.fresh,
                s.payload,
                s.left.unwrap_or(f64::INFINITY),
                a,
            )
        })))
    }
}
