//! A schedule as its snapshots hold it: the parts `persist` writes and
//! reads back.

use alloc::vec::Vec;

use super::{Rate, Schedule};

impl Schedule {
    /// Each agent's period (0: it ticks only when woken), for a snapshot.
    pub(crate) fn periods(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        let classes = &self.buckets.classes;
        (self.buckets.class.iter()).map(|&c| classes.get(c as usize).map_or(0, |c| c.period))
    }

    /// When each agent last ticked, for a snapshot.
    pub(crate) fn last_ticks(&self) -> Vec<f64> {
        (0..self.len() as u32)
            .map(|i| self.buckets.time(i))
            .collect()
    }

    /// The frame of each agent's last tick, for a snapshot.
    pub(crate) fn last_frames(&self) -> Vec<Option<u64>> {
        (0..self.len() as u32)
            .map(|i| self.buckets.after(i).checked_sub(1))
            .collect()
    }

    /// The due agents, each with the frame it has been due since, in the
    /// order they go: by that frame, then by index.
    pub(crate) fn due_agents(&self) -> Vec<(u32, u64)> {
        let mut due: Vec<(u32, u64)> = (self
            .backlog
            .iter()
            .chain(self.held.iter())
            .chain(self.woken.iter()))
        .map(|i| (i, self.waiting[i as usize]))
        .collect();
        due.sort_unstable_by_key(|&(i, since)| (since, i));
        due
    }

    /// The agents whose rate changed since the last frame, each with the
    /// period of its rate in the last frame, by index, for a snapshot.
    pub(crate) fn rate_changes(&self) -> Vec<(u32, u32)> {
        (self.changed.iter())
            .map(|i| (i, self.period_was[i as usize]))
            .collect()
    }

    /// The schedule with these parts, as a snapshot holds them, checked
    /// by the caller: periods up to [`MAX_PERIOD`](Self::MAX_PERIOD), finite
    /// times, each due agent once, due since a frame before `frame` (or,
    /// woken, in `frame`), each agent of `changes` once, with a period up to
    /// `MAX_PERIOD`.
    pub(crate) fn from_parts(
        frame: u64,
        budget: Option<u32>,
        periods: &[u32],
        last: Vec<f64>,
        after: Vec<u64>,
        due: &mut [(u32, u64)],
        changes: &[(u32, u32)],
    ) -> Self {
        let mut schedule = Schedule::new(periods.len(), 0.0);
        for (i, &k) in periods.iter().enumerate() {
            let rate = if k == 0 { Rate::OnWake } else { Rate::Every(k) };
            let set = schedule.set_rate(i, rate);
            debug_assert!(set.is_ok());
        }
        // The saved rates are no change; the saved changes are.
        while schedule.changed.pop().is_some() {}
        for &(i, was) in changes {
            schedule.changed.insert(i);
            schedule.period_was[i as usize] = was;
        }
        schedule.buckets.set_times(last, after);
        schedule.frame = frame;
        schedule.budget = budget;
        due.sort_unstable_by_key(|&(i, since)| (since, i));
        for &(i, since) in due.iter() {
            schedule.waiting[i as usize] = since;
            schedule.buckets.park(i);
            if since < frame {
                schedule.backlog.push(i);
            } else {
                schedule.woken.insert(i);
            }
        }
        schedule
    }
}
