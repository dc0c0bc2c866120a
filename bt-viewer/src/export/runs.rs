//! Runs of repeated ticks: a compact recording (and the live stream)
//! writes a tick that repeats its agent's last full one but for time as
//! part of a run, without loss.

use alloc_crate::vec::Vec;

use serde_json::Value;

use super::Clock;

/// A path level of a full tick: item, redecides, time active, mask.
type Level<'v> = (&'v Value, &'v Value, f32, &'v Value);

/// The serial, time and path levels of a full tick.
fn parts(t: &[Value]) -> Option<(u64, f64, Vec<Level<'_>>)> {
    let path = t[5].as_array()?;
    let levels = path
        .chunks(4)
        .map(|l| Some((&l[0], &l[1], l[2].as_f64()? as f32, &l[3])))
        .collect::<Option<Vec<_>>>()?;
    Some((t[0].as_u64()?, t[1].as_f64()?, levels))
}

/// The times `c` for which `(now - c) as f32` is `active`, about: the
/// interval a level's activation time lies in, seen from one tick.
fn window(now: f64, active: f32) -> (f64, f64) {
    let a = f64::from(active);
    let below = (a + f64::from(active.next_down())) / 2.0;
    let above = (a + f64::from(active.next_up())) / 2.0;
    (now - above, now - below)
}

/// A run of repeats being built: the times and actives of its ticks
/// (the full tick first), and per level the window its activation time
/// lies in and the time chosen in it. It keeps its room from run to run:
/// a run allocates only when it is longer or deeper than any before.
#[derive(Default)]
pub(crate) struct Run {
    /// Per tick, its time; and its levels' actives, `levels` a tick.
    nows: Vec<f64>,
    actives: Vec<f32>,
    windows: Vec<(f64, f64)>,
    since: Vec<f64>,
    /// Room for the next windows and times, while a tick is tried.
    next: Vec<(f64, f64)>,
    mids: Vec<f64>,
}

/// Whether each level, active since `since`, is `actives` active at `now`.
fn exact(since: &[f64], now: f64, actives: &[f32]) -> bool {
    since
        .iter()
        .zip(actives)
        .all(|(&c, &a)| (now - c) as f32 == a)
}

impl Run {
    /// Starts a run at a full tick at `now` whose levels are `actives`
    /// active.
    pub(crate) fn start(&mut self, now: f64, actives: &[f32]) {
        self.windows.clear();
        self.windows.extend(actives.iter().map(|&a| window(now, a)));
        self.since.clear();
        self.since
            .extend(self.windows.iter().map(|w| (w.0 + w.1) / 2.0));
        self.nows.clear();
        self.nows.push(now);
        self.actives.clear();
        self.actives.extend_from_slice(actives);
    }

    /// Its ticks, the full one included.
    pub(crate) fn len(&self) -> usize {
        self.nows.len()
    }

    /// Per level, the time it is active since.
    pub(crate) fn since(&self) -> &[f64] {
        &self.since
    }

    /// Adds a tick at `now` whose levels are `actives` active, if some
    /// activation times give every tick of the run its actives exactly.
    pub(crate) fn add(&mut self, now: f64, actives: &[f32]) -> bool {
        let levels = self.since.len();
        if actives.len() != levels {
            return false;
        }
        self.next.clear();
        for (w, &a) in self.windows.iter().zip(actives) {
            let (lo, hi) = window(now, a);
            let w = (w.0.max(lo), w.1.min(hi));
            if w.0 > w.1 {
                return false;
            }
            self.next.push(w);
        }
        if !exact(&self.since, now, actives) {
            self.mids.clear();
            self.mids
                .extend(self.next.iter().map(|w| (w.0 + w.1) / 2.0));
            let mids = &self.mids;
            if !exact(mids, now, actives)
                || !self
                    .nows
                    .iter()
                    .enumerate()
                    .all(|(i, &n)| exact(mids, n, &self.actives[i * levels..(i + 1) * levels]))
            {
                return false;
            }
            core::mem::swap(&mut self.since, &mut self.mids);
        }
        core::mem::swap(&mut self.windows, &mut self.next);
        self.nows.push(now);
        self.actives.extend_from_slice(actives);
        true
    }
}

/// Whether `t` is `base` repeated `k` ticks later at the clock's time,
/// but for the time its levels have been active.
fn repeats(base: &[Value], t: &[Value], k: u64, clock: &Clock) -> bool {
    let (Some((s0, _, p0)), Some((s, n, p))) = (parts(base), parts(t)) else {
        return false;
    };
    s == s0 + k
        && clock.at(s) == Some(n)
        && base[2..5] == t[2..5]
        && base[6] == t[6]
        && p0.len() == p.len()
        && p0
            .iter()
            .zip(&p)
            .all(|(a, b)| a.0 == b.0 && a.1 == b.1 && a.3 == b.3)
}

/// The actives of a full tick's levels.
fn actives(t: &[Value]) -> Vec<f32> {
    parts(t).map_or_else(Vec::new, |p| p.2.iter().map(|l| l.2).collect())
}

/// `ticks` with runs of repeats as `[n, [since…]]` entries (see
/// [`Recording::compact`](crate::Recording::compact)).
pub(crate) fn compact(ticks: Vec<Value>, clock: &Clock) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(ticks.len());
    // The last full tick's place in `out` and the run after it.
    let mut base: Option<usize> = None;
    let mut run = Run::default();
    for tick in ticks {
        let full = tick.as_array().filter(|t| t.len() == 7);
        if let (Some(b), Some(t)) = (base, full) {
            let first = out[b].as_array().expect("a full tick");
            let k = run.len() as u64;
            let now = t[1].as_f64().unwrap_or(f64::NAN);
            if repeats(first, t, k, clock) && run.add(now, &actives(t)) {
                let since = run.since().iter().map(|&x| Value::from(x)).collect();
                let entry = alloc_crate::vec![Value::from(k), Value::Array(since)];
                if k == 1 {
                    out.push(Value::Array(entry));
                } else {
                    *out.last_mut().expect("the run") = Value::Array(entry);
                }
                continue;
            }
        }
        base = full.is_some().then_some(out.len());
        if let Some(t) = full {
            run.start(t[1].as_f64().unwrap_or(f64::NAN), &actives(t));
        }
        out.push(tick);
    }
    out
}

/// Writes each run `[n, [since…]]` of `entries` (what [`compact`] made of
/// `ticks`) as `[n]` when its ticks read back exactly with each path
/// level active since the time the tick before the run gives: that tick's
/// time minus its time active (as `f32`). The live stream's runs are
/// mostly one tick long, and their times are the bulk of them.
#[cfg(feature = "live")]
pub(crate) fn implied_since(entries: &mut [Value], ticks: &[Value]) {
    let mut at: usize = 0;
    for entry in entries {
        let Some(n) = entry
            .as_array()
            .filter(|e| e.len() == 2)
            .and_then(|e| e[0].as_u64())
        else {
            at += 1;
            continue;
        };
        let n = n as usize;
        let since = at
            .checked_sub(1)
            .and_then(|b| parts(ticks[b].as_array()?))
            .map(|(_, now, levels)| {
                levels
                    .iter()
                    .map(|l| now - f64::from(l.2))
                    .collect::<Vec<_>>()
            });
        let exact = since.is_some_and(|since| {
            ticks[at..at + n].iter().all(|t| {
                t.as_array()
                    .and_then(|t| parts(t))
                    .is_some_and(|(_, now, levels)| {
                        levels.len() == since.len()
                            && levels
                                .iter()
                                .zip(&since)
                                .all(|(l, &c)| (now - c) as f32 == l.2)
                    })
            })
        });
        if exact {
            *entry = Value::Array(alloc_crate::vec![Value::from(n)]);
        }
        at += n;
    }
}
