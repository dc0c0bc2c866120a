//! Snapshots of a crowd's schedule: rates, the frame count, the budget,
//! the last tick times and the agents due.

use alloc::vec::Vec;
use core::fmt;

use serde::de::Deserializer;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{Body, Fault, Fields, RestoreError, SNAPSHOT_VERSION, SnapshotError, read_struct};
use crate::crowd::Schedule;

/// The field names of a schedule snapshot.
const FIELDS: &[&str] = &[
    "version",
    "saved_at",
    "frame",
    "budget",
    "periods",
    "last",
    "due",
    "last_frames",
    "rate_changes",
];

/// A [`Schedule`] as serde writes it: made by [`Schedule::snapshot`],
/// restored by [`Schedule::restore`].
pub struct ScheduleSnapshot<'s> {
    schedule: &'s Schedule,
    now: f64,
}

impl fmt::Debug for ScheduleSnapshot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScheduleSnapshot")
            .field("schedule", self.schedule)
            .field("now", &self.now)
            .finish()
    }
}

/// The version, the clock reading it was taken at, the number of the next
/// frame, the budget, each agent's period (0: only when woken), each
/// agent's last tick time, the due agents as `(agent, frame due since)`
/// in the order they go, the frame of each agent's last tick (`None`:
/// none yet), and the agents whose rate changed since the last frame, each
/// with its period in the last frame.
impl Serialize for ScheduleSnapshot<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let schedule = self.schedule;
        let mut st = s.serialize_struct("Schedule", FIELDS.len())?;
        st.serialize_field("version", &SNAPSHOT_VERSION)?;
        st.serialize_field("saved_at", &self.now)?;
        st.serialize_field("frame", &schedule.frame())?;
        st.serialize_field("budget", &schedule.budget())?;
        st.serialize_field("periods", &schedule.periods().collect::<Vec<u32>>())?;
        st.serialize_field("last", &schedule.last_ticks())?;
        st.serialize_field("due", &schedule.due_agents())?;
        st.serialize_field("last_frames", &schedule.last_frames())?;
        st.serialize_field("rate_changes", &schedule.rate_changes())?;
        st.end()
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Schedule {
    /// A snapshot of this schedule taken at clock reading `now` (feature
    /// `serde`): each agent's rate, last tick time and frame, the frame count and
    /// the budget, and the agents due with the frame each has been due
    /// since (their order follows from that). Save it with the crowd's
    /// memories (`TreeShared::snapshot_crowd`), between frames.
    ///
    /// ```
    /// use bt_core::{Rate, Schedule};
    ///
    /// let mut schedule = Schedule::new(4, 0.0).with_budget(Some(2));
    /// schedule.set_rate(3, Rate::Every(8))?;
    /// schedule.wake(1);
    /// let json = serde_json::to_string(&schedule.snapshot(10.0)).unwrap();
    /// // Loaded under a clock that reads 500 now.
    /// let mut de = serde_json::Deserializer::from_str(&json);
    /// let restored = Schedule::restore(500.0, &mut de).unwrap();
    /// assert_eq!(restored.rate(3), Rate::Every(8));
    /// assert!(restored.is_due(1));
    /// assert_eq!(restored.budget(), Some(2));
    /// assert_eq!(restored.last_tick(0), 490.0); // ten seconds before the clock, as saved
    /// # Ok::<(), bt_core::RateError>(())
    /// ```
    pub fn snapshot(&self, now: f64) -> ScheduleSnapshot<'_> {
        ScheduleSnapshot {
            schedule: self,
            now,
        }
    }

    /// Reads a schedule saved with [`snapshot`](Self::snapshot) (feature
    /// `serde`), under a clock that reads `now`: every last tick time
    /// moves by `now` minus the clock reading the snapshot was taken at,
    /// so each agent's next `dt` is what it would have been without the
    /// save (restored at the same `now`, every time is bit for bit what it
    /// was). The frame count, the rates, the budget, the due agents in
    /// their order and the rate changes made since the last frame come back
    /// as they were: the restored schedule picks the frames and agents the
    /// saved one would have.
    ///
    /// # Errors
    /// [`RestoreError::Format`] when `d` cannot decode a snapshot;
    /// [`RestoreError::Snapshot`] for another format version, a last tick
    /// time for each agent missing ([`SnapshotError::Count`]), a period
    /// above [`Schedule::MAX_PERIOD`], a frame count above
    /// [`Schedule::MAX_FRAME`], a time or clock reading that is not
    /// finite, or a due agent that is not in the crowd, is given twice or
    /// is due since a frame after the next, or a last tick frame that is
    /// not before the next frame, or an agent whose rate changed that is not
    /// in the crowd, is given twice or had a period above `MAX_PERIOD`
    /// ([`SnapshotError::BadValue`], [`SnapshotError::OutOfRange`]). A
    /// snapshot of an earlier version without the frames of the last ticks
    /// (JSON; other formats refuse it) loads with every agent as ticked in
    /// the frame before the next, and one without the rate changes as one
    /// taken with none.
    pub fn restore<'de, D: Deserializer<'de>>(
        now: f64,
        d: D,
    ) -> Result<Schedule, RestoreError<D::Error>> {
        let fault = Fault::default();
        let body = ScheduleBody { now, fault: &fault };
        let r = read_struct(d, "Schedule", FIELDS, body);
        fault.finish(r)
    }
}

struct ScheduleBody<'f> {
    now: f64,
    fault: &'f Fault,
}

impl<'de> Body<'de> for ScheduleBody<'_> {
    type Value = Schedule;

    fn read<F: Fields<'de>>(self, f: &mut F) -> Result<Schedule, F::Error> {
        let raise = |e| self.fault.raise::<F::Error>(e);
        let bad = |what| raise(SnapshotError::BadValue { what });
        let version: u16 = f.field("version")?;
        if version != SNAPSHOT_VERSION {
            return Err(raise(SnapshotError::Version {
                found: version,
                supported: SNAPSHOT_VERSION,
            }));
        }
        let saved_at: f64 = f.field("saved_at")?;
        if !saved_at.is_finite() || !self.now.is_finite() {
            return Err(bad("clock reading"));
        }
        let shift = self.now - saved_at;
        let frame: u64 = f.field("frame")?;
        if frame > Schedule::MAX_FRAME {
            return Err(bad("frame count"));
        }
        let budget: Option<u32> = f.field("budget")?;
        let periods: Vec<u32> = f.field("periods")?;
        if periods.len() >= u32::MAX as usize {
            return Err(bad("crowd size"));
        }
        if periods.iter().any(|&k| k > Schedule::MAX_PERIOD) {
            return Err(bad("period (above Schedule::MAX_PERIOD)"));
        }
        let mut last: Vec<f64> = f.field("last")?;
        if last.len() != periods.len() {
            return Err(raise(SnapshotError::Count {
                what: "last tick times",
                found: last.len(),
                expected: periods.len(),
            }));
        }
        for t in &mut last {
            *t += shift;
            if !t.is_finite() {
                return Err(bad("last tick time"));
            }
        }
        let mut due: Vec<(u32, u64)> = f.field("due")?;
        let last_frames: Option<Vec<Option<u64>>> =
            f.optional_field_seed("last_frames", core::marker::PhantomData)?;
        let mut seen = alloc::vec![false; periods.len()];
        for &(i, since) in &due {
            let Some(seen) = seen.get_mut(i as usize) else {
                return Err(raise(SnapshotError::OutOfRange {
                    what: "due agent",
                    index: u64::from(i),
                    len: periods.len(),
                }));
            };
            if core::mem::replace(seen, true) {
                return Err(bad("due agent (given twice)"));
            }
            if since > frame {
                return Err(bad("frame an agent is due since (after the next frame)"));
            }
        }
        // Without the frames (a save of an earlier version), every agent
        // counts as ticked in the frame before the next.
        let after = match last_frames {
            None => alloc::vec![frame; periods.len()],
            Some(frames) => {
                if frames.len() != periods.len() {
                    return Err(raise(SnapshotError::Count {
                        what: "last tick frames",
                        found: frames.len(),
                        expected: periods.len(),
                    }));
                }
                let mut after = Vec::with_capacity(frames.len());
                for l in frames {
                    match l {
                        None => after.push(0),
                        Some(l) if l < frame => after.push(l + 1),
                        Some(_) => {
                            return Err(bad("last tick frame (not before the next frame)"));
                        }
                    }
                }
                after
            }
        };
        let changes: Option<Vec<(u32, u32)>> =
            f.optional_field_seed("rate_changes", core::marker::PhantomData)?;
        let changes = changes.unwrap_or_default();
        let mut changed = alloc::vec![false; periods.len()];
        for &(i, was) in &changes {
            let Some(changed) = changed.get_mut(i as usize) else {
                return Err(raise(SnapshotError::OutOfRange {
                    what: "agent whose rate changed",
                    index: u64::from(i),
                    len: periods.len(),
                }));
            };
            if core::mem::replace(changed, true) {
                return Err(bad("agent whose rate changed (given twice)"));
            }
            if was > Schedule::MAX_PERIOD {
                return Err(bad(
                    "period before a rate change (above Schedule::MAX_PERIOD)",
                ));
            }
        }
        Ok(Schedule::from_parts(
            frame, budget, &periods, last, after, &mut due, &changes,
        ))
    }
}
