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
    let n = schedule.len();
    let mut agents: Vec<Npc> = (0..n).map(|_| Npc).collect();
    let mut memories: Vec<_> = (0..n).map(|i| NPCS.new_memory(i as u64)).collect();
    tick_scheduled(
        &NPCS,
        &mut agents,
        &mut memories,
        schedule,
        now,
        |_, _, dt| TickInput::new(now, dt),
    )
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
