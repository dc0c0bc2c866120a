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
