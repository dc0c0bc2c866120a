//! How the schedule holds its agents between frames.

use alloc::vec::Vec;

use super::{Rate, Schedule, tick_scheduled};
use crate::decl::TickInput;

#[derive(Default)]
struct Npc;

crate::leaf! { IDLING: Npc }
crate::tree! { NPCS: Npc = IDLING }

/// Runs one frame of `n` idle agents at the clock `now`.
fn frame(schedule: &mut Schedule, now: f64) -> super::FrameReport {
    ticked(schedule, now).0
}

/// Runs one frame of `n` idle agents at the clock `now`; with the agents
/// it ticked, in order.
fn ticked(schedule: &mut Schedule, now: f64) -> (super::FrameReport, Vec<usize>) {
    let n = schedule.len();
    let mut agents: Vec<Npc> = (0..n).map(|_| Npc).collect();
    let mut memories: Vec<_> = (0..n).map(|i| NPCS.new_memory(i as u64)).collect();
    let mut order = Vec::new();
    let report = tick_scheduled(
        &NPCS,
        &mut agents,
        &mut memories,
        schedule,
        now,
        |i, _, dt| {
            order.push(i);
            TickInput::new(now, dt)
        },
    );
    (report, order)
}

/// Agents in the buckets of every period.
fn in_buckets(schedule: &Schedule) -> u32 {
    let b = &schedule.buckets;
    (0..b.classes.len())
        .flat_map(|c| {
            let k = u64::from(b.classes[c].period);
            (0..k).map(move |f| (c as u32, f))
        })
        .map(|(c, f)| b.bucket(b.due_bucket(c, f)).len)
        .sum()
}

/// The agents a budget leaves waiting, and the woken ones, are out of
/// their buckets until they tick: a bucket's turn walks only the agents
/// that become due in it, so a frame under a small budget does not walk
/// a large backlog again. Each goes back to its bucket when it ticks.
#[test]
#[cfg_attr(miri, ignore)] // a thousand memories a frame: too slow under Miri
fn waiting_agents_are_out_of_their_buckets_until_they_tick() {
    let n = 1000;
    let mut schedule = Schedule::new(n, 0.0).with_budget(Some(10));
    schedule.set_rate(999, Rate::OnWake).unwrap();
    schedule.wake(999);
    assert!(schedule.buckets.parked(999));
    let report = frame(&mut schedule, 0.1);
    assert_eq!((report.ticked, report.waiting), (10, 990));
    // Only the ten that ticked are in a bucket; the waiting are parked.
    assert_eq!(in_buckets(&schedule), 10);
    assert!(schedule.buckets.parked(500) && schedule.buckets.parked(999));
    for f in 1..=200 {
        let report = frame(&mut schedule, 0.1 * f64::from(f + 1));
        assert_eq!(report.ticked, 10);
        // Each frame: the ten due by their turn join the backlog, ten
        // from it tick and go back to their buckets (agent 999 to none).
        assert!((9..=10).contains(&in_buckets(&schedule)));
        assert_eq!(report.due as usize, schedule.waiting() + 10);
    }
    // A new rate for a parked agent keeps it parked and due.
    let parked = (0..n).find(|&i| schedule.buckets.parked(i as u32)).unwrap();
    schedule.set_rate(parked, Rate::Every(3)).unwrap();
    assert!(schedule.buckets.parked(parked as u32) && schedule.is_due(parked));
    assert_eq!(schedule.rate(parked), Rate::Every(3));
    schedule.set_budget(None);
    frame(&mut schedule, 100.0);
    assert_eq!(schedule.waiting(), 0);
    assert!((0..n as u32).all(|i| !schedule.buckets.parked(i)));
    assert_eq!(in_buckets(&schedule) as usize, n - 1); // agent 999 ticks only when woken
}

/// The woken agents a budget leaves waiting stay in their set, which hands
/// them out in index order, instead of being sorted into the backlog: the
/// frame after a mass wake takes its budget's share without touching the
/// rest. The woken of a later frame, while those wait, join the backlog
/// behind them; the order is the documented one throughout.
#[test]
#[cfg_attr(miri, ignore)] // a thousand memories a frame: too slow under Miri
fn the_woken_left_by_the_budget_wait_in_their_set() {
    let n = 1000;
    let mut schedule = Schedule::new(n, 0.0).with_budget(Some(10));
    for i in 0..n {
        schedule.set_rate(i, Rate::OnWake).unwrap();
    }
    for i in (0..n).rev() {
        schedule.wake(i);
    }
    let (report, order) = ticked(&mut schedule, 0.1);
    assert_eq!(order, (0..10).collect::<Vec<_>>());
    assert_eq!((report.due, report.waiting), (1000, 990));
    assert_eq!((schedule.backlog.len, schedule.held.len()), (0, 990));
    // Woken for frame 1, while frame 0's woken wait: behind them.
    schedule.wake(3);
    schedule.wake(2);
    let (report, order) = ticked(&mut schedule, 0.2);
    assert_eq!(order, (10..20).collect::<Vec<_>>());
    assert_eq!(
        (report.due, report.waiting, report.longest_wait),
        (992, 982, 1)
    );
    assert_eq!((schedule.backlog.len, schedule.held.len()), (2, 980));
    let mut all = Vec::new();
    for f in 2..=100 {
        all.extend(ticked(&mut schedule, 0.1 * f64::from(f + 1)).1);
    }
    let expected: Vec<usize> = (20..n).chain([2, 3]).collect();
    assert_eq!(all, expected);
    assert_eq!(schedule.waiting(), 0);
}

/// The schedule's rules, looking at every agent in every frame.
#[cfg(feature = "std")]
struct Model {
    /// Each agent's period; 0: it ticks only when woken.
    periods: Vec<u32>,
    /// The frame each agent has been due since.
    since: Vec<Option<u64>>,
    last: Vec<f64>,
    /// The frame of each agent's last tick.
    last_frame: Vec<Option<u64>>,
    /// The frame before which an agent's period last changed, and its
    /// period in the frame before that one.
    was: Vec<Option<(u64, u32)>>,
    budget: Option<u32>,
    frame: u64,
}

#[cfg(feature = "std")]
impl Model {
    /// Agent `i`'s period set to `k`: due at once when it has gone both
    /// its period of the last frame and `k` without a tick, counting the
    /// next frame.
    fn set(&mut self, i: usize, k: u32) {
        if self.periods[i] != k {
            let f = self.frame;
            let old = match self.was[i] {
                Some((w, old)) if w == f => old,
                _ => self.was[i].insert((f, self.periods[i])).1,
            };
            let gone = self.last_frame[i].map_or(f + 1, |l| f - l);
            if old > 0 && k > 0 && gone >= u64::from(old.max(k)) {
                self.since[i].get_or_insert(f);
            }
        }
        self.periods[i] = k;
    }

    /// The agents a frame ticks, in index order.
    fn frame(&mut self) -> Vec<usize> {
        let f = self.frame;
        self.frame += 1;
        for (i, &k) in self.periods.iter().enumerate() {
            if k > 0 && f % u64::from(k) == u64::from(Schedule::phase(i, k)) {
                self.since[i].get_or_insert(f);
            }
        }
        let mut due: Vec<(u64, usize)> = (self.since.iter().enumerate())
            .filter_map(|(i, d)| d.map(|d| (d, i)))
            .collect();
        due.sort_unstable();
        due.truncate(self.budget.map_or(usize::MAX, |b| b as usize));
        let mut taken: Vec<usize> = due.iter().map(|&(_, i)| i).collect();
        taken.sort_unstable();
        taken
    }
}

/// A small deterministic generator.
#[cfg(feature = "std")]
fn below(state: &mut u64, n: u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*state >> 33) % n
}

/// Each agent's last tick time stays its own through everything that
/// moves it on and off its bucket's clock: rates changed one at a time
/// and for the whole crowd, wakes, budgets, a clock that goes back or is
/// not finite, and callbacks that panic in both kinds of frame. Every
/// frame ticks the agents and `dt`s of a model that keeps a time per
/// agent, each bucket counts its loose agents right, and the listings
/// start over when their room is used up.
#[test]
#[cfg(feature = "std")]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn every_agent_keeps_its_own_time_on_and_off_its_buckets_clock() {
    use std::panic::{AssertUnwindSafe, catch_unwind};

    let n = 150;
    let mut agents: Vec<Npc> = (0..n).map(|_| Npc).collect();
    let mut memories: Vec<_> = (0..n).map(|i| NPCS.new_memory(i as u64)).collect();
    let mut schedule = Schedule::new(n, 0.25);
    let mut model = Model {
        periods: alloc::vec![1; n],
        since: alloc::vec![None; n],
        last: alloc::vec![0.25; n],
        last_frame: alloc::vec![None; n],
        was: alloc::vec![None; n],
        budget: None,
        frame: 0,
    };
    let periods = [1, 2, 3, 5, 8, 0];
    let set = |schedule: &mut Schedule, model: &mut Model, i: usize, k: u32| {
        let rate = if k == 0 { Rate::OnWake } else { Rate::Every(k) };
        schedule.set_rate(i, rate).unwrap();
        model.set(i, k);
    };
    let mut state = 7;
    let (mut clock, mut panics, mut fast) = (0.25, 0, 0);
    for f in 0..3000u64 {
        // In most frames no wakes, budgets or panics: the quick frames.
        let calm = f % 400 < 300;
        if f % 400 == 0 {
            schedule.set_budget(None);
            model.budget = None;
        }
        match below(&mut state, 40) {
            // The whole crowd to one rate: every listing made again.
            0 => {
                let k = periods[below(&mut state, 5) as usize];
                (0..n).for_each(|i| set(&mut schedule, &mut model, i, k));
            }
            1..=6 => {
                let (i, k) = (below(&mut state, n as u64) as usize, below(&mut state, 6));
                set(&mut schedule, &mut model, i, periods[k as usize]);
            }
            7 if !calm => {
                let i = below(&mut state, n as u64) as usize;
                schedule.wake(i);
                model.since[i].get_or_insert(model.frame);
            }
            8 if !calm => {
                let budget = (below(&mut state, 3) > 0).then(|| below(&mut state, 40) as u32);
                schedule.set_budget(budget);
                model.budget = budget;
            }
            _ => {}
        }
        clock = match below(&mut state, 50) {
            0 => clock - 0.5,
            _ => clock + 0.125 * below(&mut state, 5) as f64,
        };
        let now = if below(&mut state, 50) == 0 {
            f64::INFINITY
        } else {
            clock
        };
        let finite = now.is_finite();
        let due_before = (0..n).filter(|&i| model.since[i].is_some()).count();
        let taken = model.frame();
        let victim = (!calm && finite && below(&mut state, 8) == 0 && !taken.is_empty())
            .then(|| below(&mut state, taken.len() as u64) as usize);
        let simple = schedule.waiting() == 0 && due_before == 0;
        let mut seen = Vec::new();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            tick_scheduled(
                &NPCS,
                &mut agents,
                &mut memories,
                &mut schedule,
                now,
                |i, _, dt| {
                    seen.push((i, dt));
                    if victim.is_some_and(|v| taken[v] == i) {
                        panic!("a callback panics");
                    }
                    TickInput::new(now, dt)
                },
            )
        }));
        let ticked = match victim {
            Some(v) => {
                assert!(ran.is_err(), "frame {f}");
                panics += 1;
                v + 1
            }
            None => {
                let report = ran.unwrap();
                assert_eq!(report.ticked as usize, taken.len(), "frame {f}");
                taken.len()
            }
        };
        let expected: Vec<(usize, f32)> = taken[..ticked]
            .iter()
            .map(|&i| {
                (
                    i,
                    if finite {
                        (now - model.last[i]).max(0.0) as f32
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        assert_eq!(seen, expected, "frame {f}");
        for &i in &taken[..ticked] {
            model.since[i] = None;
            if finite {
                model.last[i] = now;
                model.last_frame[i] = Some(f);
            }
        }
        fast += u32::from(simple && victim.is_none() && finite);
        for i in 0..n {
            assert_eq!(
                schedule.last_tick(i).to_bits(),
                model.last[i].to_bits(),
                "frame {f}: agent {i}"
            );
            assert_eq!(
                schedule.is_due(i),
                model.since[i].is_some(),
                "frame {f}: agent {i}"
            );
            assert_eq!(
                schedule.last_tick_frame(i),
                model.last_frame[i],
                "frame {f}: agent {i}"
            );
        }
        schedule.buckets.check_clocks();
    }
    assert!(
        panics > 50 && fast > 2000,
        "{panics} panics, {fast} quick frames"
    );
    assert!(
        schedule.buckets.restarts > 0,
        "the listings never started over"
    );
}

/// The agents of each bucket that go by its clock, and those loose from it.
fn loose(schedule: &Schedule) -> Vec<u32> {
    schedule.buckets.buckets.iter().map(|b| b.loose).collect()
}

/// An agent that ticks out of turn has a time of its own, until its
/// bucket's next turn puts it back on the bucket's clock: then the turns
/// after are ticked with one `dt` again.
#[test]
fn an_agent_ticked_out_of_turn_is_back_on_its_buckets_clock_after_its_turn() {
    let n = 40;
    let mut schedule = Schedule::new(n, 0.0);
    for i in 0..n {
        schedule.set_rate(i, Rate::Every(4)).unwrap();
    }
    for f in 0..4 {
        frame(&mut schedule, f64::from(f + 1));
    }
    assert!(loose(&schedule).iter().all(|&l| l == 0));
    // Agent 1's turn comes in the frames whose number is 2 modulo 4.
    assert_eq!(Schedule::phase(1, 4), 2);
    schedule.wake(1);
    let (_, order) = ticked(&mut schedule, 5.0); // frame 4
    assert!(order.contains(&1));
    assert_eq!(loose(&schedule).iter().sum::<u32>(), 1);
    assert!(schedule.buckets.last[1] == 5.0);
    ticked(&mut schedule, 6.0); // frame 5
    let (_, order) = ticked(&mut schedule, 7.0); // frame 6: agent 1's turn
    assert!(order.contains(&1));
    assert!(loose(&schedule).iter().all(|&l| l == 0));
    assert!(schedule.buckets.last[1].is_nan());
    assert_eq!(schedule.last_tick(1), 7.0);
    schedule.buckets.check_clocks();
}
