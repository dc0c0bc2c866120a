//! Tick rates and a frame budget: which agents `tick_scheduled` ticks in
//! each frame, in what order and with what `dt`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bt_core::{
    FrameReport, Rate, RateError, Schedule, TickInput, group, leaf, tick_all, tick_scheduled, tree,
};

/// An agent that writes down each tick it gets.
#[derive(Clone, Debug, Default, PartialEq)]
struct Logger {
    /// `(now, dt)` of each tick.
    ticks: Vec<(f64, f32)>,
    /// Ticks of the gated leaf.
    gated: u32,
    /// Panics in its tick when set.
    explode: bool,
}

leaf! { HOLD: Logger, gate: 2, cooldown: 0.3,
    tick: |l, cx| { l.gated += 1; l.ticks.push((cx.now, cx.dt)); cx.time_active() < 0.5 },
}
leaf! { NOTE: Logger,
    tick: |l, cx| { assert!(!l.explode, "boom"); l.ticks.push((cx.now, cx.dt)); true },
}
group! { LOGGER_ROOT: Logger, prioritized [HOLD, NOTE] }
tree! { LOGGERS: Logger = LOGGER_ROOT, memory: LoggerMemory }

leaf! { JUST_NOTE: Logger,
    tick: |l, cx| { assert!(!l.explode, "boom"); l.ticks.push((cx.now, cx.dt)); true },
}
tree! { NOTES: Logger = JUST_NOTE, memory: NoteMemory }

const DT: f64 = 0.1;

/// The clock of frame `f`.
fn at(f: u64) -> f64 {
    f as f64 * DT
}

/// A crowd of `n` loggers of the plain tree, scheduled from the clock 0.
fn notes(n: usize) -> (Vec<Logger>, Vec<NoteMemory>, Schedule) {
    let agents = vec![Logger::default(); n];
    let memories = (0..n).map(|i| NOTES.new_memory(i as u64)).collect();
    (agents, memories, Schedule::new(n, 0.0))
}

/// Runs frame `f` of a crowd of loggers of the plain tree: the clock is
/// `at(f + 1)`. Returns the report and the agents ticked, in order.
fn frame(
    agents: &mut [Logger],
    memories: &mut [NoteMemory],
    schedule: &mut Schedule,
) -> (FrameReport, Vec<usize>) {
    let now = at(schedule.frame() + 1);
    let mut order = Vec::new();
    let report = tick_scheduled(&NOTES, agents, memories, schedule, now, |i, _, dt| {
        order.push(i);
        TickInput::new(now, dt)
    });
    assert_eq!(report.crowd.errors, 0, "{:?}", report.crowd.first_error);
    (report, order)
}

/// With every agent ticking every frame and no budget, a scheduled crowd
/// is `tick_all`: the same agents in the same order (a gate and a
/// cooldown go to the same ones), with the same `dt`, the same reports.
#[test]
fn every_frame_without_a_budget_ticks_as_tick_all() {
    let n = 12;
    let shared = LOGGERS.new_shared(0);
    let twin_shared = LOGGERS.new_shared(0);
    let mut agents = vec![Logger::default(); n];
    let mut twins = agents.clone();
    let mut memories: Vec<LoggerMemory> = (0..n)
        .map(|i| LOGGERS.new_memory_in(&shared, i as u64))
        .collect();
    let mut twin_memories: Vec<LoggerMemory> = (0..n)
        .map(|i| LOGGERS.new_memory_in(&twin_shared, i as u64))
        .collect();
    let mut schedule = Schedule::new(n, 0.0);
    for f in 1..=30u64 {
        let now = at(f);
        let report = tick_scheduled(
            &LOGGERS,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        );
        let expected = tick_all(&LOGGERS, &mut twins, &mut twin_memories, |_, _| {
            TickInput::new(now, DT as f32)
        });
        assert_eq!(report.crowd, expected, "frame {f}");
        assert_eq!((report.due, report.ticked, report.waiting), (12, 12, 0));
    }
    assert_eq!(agents, twins);
    let leaves = |m: &[LoggerMemory]| m.iter().map(|m| m.leaf()).collect::<Vec<_>>();
    assert_eq!(leaves(&memories), leaves(&twin_memories));
    assert!(agents.iter().map(|a| a.gated).sum::<u32>() > 0);
    assert!(
        agents.iter().any(|a| a.gated == 0),
        "the gate turned some away"
    );
}

/// Agents of period `k` tick in the frames whose number is their phase
/// modulo `k`: a crowd at mixed rates ticks about the same number every
/// frame, each agent its share, in index order also when the rates were
/// set in another order.
#[test]
fn agents_of_one_period_are_spread_over_its_frames() {
    let (mut agents, mut memories, mut schedule) = notes(96);
    let period = |i: usize| [1, 4, 16][i % 3];
    for i in (0..96).rev() {
        schedule.set_rate(i, Rate::Every(period(i))).unwrap();
    }
    let mut total = 0;
    for f in 0..64u64 {
        let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
        assert_eq!(report.frame, f);
        let expected: Vec<usize> = (0..96)
            .filter(|&i| u64::from(Schedule::phase(i, period(i))) == f % u64::from(period(i)))
            .collect();
        assert_eq!(order, expected, "frame {f}");
        // 32 + 8 + 2 on average, and close to it in every frame.
        assert!(
            (38..=46).contains(&report.ticked),
            "frame {f}: {}",
            report.ticked
        );
        total += report.ticked;
    }
    assert_eq!(total, 64 * (32 + 8 + 2));
    assert_eq!(agents[0].ticks.len(), 64);
    assert_eq!(agents[1].ticks.len(), 16);
    assert_eq!(agents[2].ticks.len(), 4);
}

/// Kinds at their own periods whose indexes interleave (birds at the
/// even indexes every 2nd frame, fish at the odd ones every 4th) are as
/// flat as kinds in blocks: no frame gets all the birds.
#[test]
#[cfg_attr(miri, ignore)] // two crowds of a thousand: too slow under Miri
fn interleaved_kinds_at_their_own_periods_are_spread_flat() {
    for interleaved in [true, false] {
        let (mut agents, mut memories, mut schedule) = notes(1000);
        let bird = |i: usize| {
            if interleaved {
                i.is_multiple_of(2)
            } else {
                i < 500
            }
        };
        for i in 0..1000 {
            let rate = if bird(i) {
                Rate::Every(2)
            } else {
                Rate::Every(4)
            };
            schedule.set_rate(i, rate).unwrap();
        }
        for f in 0..8 {
            let (report, _) = frame(&mut agents, &mut memories, &mut schedule);
            // 500 / 2 + 500 / 4 = 375 a frame.
            assert!(
                (365..=385).contains(&report.ticked),
                "interleaved {interleaved}, frame {f}: {}",
                report.ticked
            );
        }
    }
}

/// Each tick's `dt` is the time since the agent's own last tick (since
/// the schedule's start before its first), whatever the frames' steps;
/// `now` is the frame's. A clock that goes backwards gives 0.
#[test]
fn each_agent_gets_the_time_since_its_own_last_tick() {
    let (mut agents, mut memories, _) = notes(3);
    let mut schedule = Schedule::new(3, 1.0);
    schedule.set_rate(1, Rate::Every(3)).unwrap();
    schedule.set_rate(2, Rate::Every(2)).unwrap();
    let clock = [1.5, 1.75, 2.5, 2.625, 3.0, 4.0, 3.5];
    for now in clock {
        tick_scheduled(
            &NOTES,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        );
    }
    assert_eq!(
        agents[0].ticks,
        [
            (1.5, 0.5),
            (1.75, 0.25),
            (2.5, 0.75),
            (2.625, 0.125),
            (3.0, 0.375),
            (4.0, 1.0),
            (3.5, 0.0)
        ]
    );
    // Agent 1 of period 3: frames 1, 4; agent 2 of period 2: frames 0, 2, 4, 6.
    assert_eq!(agents[1].ticks, [(1.75, 0.75), (3.0, 1.25)]);
    assert_eq!(
        agents[2].ticks,
        [(1.5, 0.5), (2.5, 1.0), (3.0, 0.5), (3.5, 0.5)]
    );
    assert_eq!(schedule.last_tick(1), 3.0);
}

/// An input built with another `dt` than the agent's is a mistake a debug
/// build stops at, naming it.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "must build the input with the frame's `now` and the agent's `dt`")]
fn an_input_with_another_dt_panics_in_a_debug_build() {
    let (mut agents, mut memories, mut schedule) = notes(2);
    tick_scheduled(
        &NOTES,
        &mut agents,
        &mut memories,
        &mut schedule,
        1.0,
        |_, _, _| TickInput::new(1.0, 1.0 / 60.0),
    );
}

/// A new rate takes effect at its first frame from the next one on; an
/// agent switched to `OnWake` ticks no more until woken.
#[test]
fn a_new_rate_takes_effect_at_its_first_frame() {
    let (mut agents, mut memories, mut schedule) = notes(8);
    for i in 0..8 {
        schedule.set_rate(i, Rate::Every(8)).unwrap();
    }
    let mut ticked = vec![Vec::new(); 8];
    for f in 0..40u64 {
        match f {
            10 => schedule.set_rate(7, Rate::EveryFrame).unwrap(),
            13 => schedule.set_rate(7, Rate::Every(4)).unwrap(),
            20 => schedule.set_rate(7, Rate::OnWake).unwrap(),
            30 => schedule.wake(7),
            33 => schedule.set_rate(7, Rate::Every(2)).unwrap(),
            _ => {}
        }
        for i in frame(&mut agents, &mut memories, &mut schedule).1 {
            ticked[i].push(f);
        }
    }
    let phases = [(3, 8), (7, 8), (7, 4), (7, 2)].map(|(i, k)| Schedule::phase(i, k));
    assert_eq!(phases, [6, 2, 1, 0]);
    assert_eq!(ticked[0], [0, 8, 16, 24, 32]);
    assert_eq!(ticked[3], [6, 14, 22, 30, 38]);
    // Every 8th by its phase 2 (2), every frame (10..=12), every 4th by
    // its phase 1 (13, 17), nothing, woken (30), every 2nd by its phase 0
    // (34, ...; not 33, the frame its rate was set in).
    assert_eq!(ticked[7], [2, 10, 11, 12, 13, 17, 30, 34, 36, 38]);
    assert_eq!(schedule.rate(7), Rate::Every(2));
    schedule.set_rate(7, Rate::Every(1)).unwrap();
    assert_eq!(schedule.rate(7), Rate::EveryFrame);
}

/// Rates no schedule can keep are refused, naming the period; the agent
/// keeps its rate.
#[test]
fn a_period_of_zero_or_beyond_the_longest_is_refused() {
    let mut schedule = Schedule::new(2, 0.0);
    schedule.set_rate(1, Rate::Every(3)).unwrap();
    assert_eq!(
        schedule.set_rate(1, Rate::Every(0)),
        Err(RateError::ZeroPeriod)
    );
    let long = Schedule::MAX_PERIOD + 1;
    let refused = schedule.set_rate(1, Rate::Every(long)).unwrap_err();
    assert_eq!(
        refused,
        RateError::PeriodTooLong {
            period: long,
            max: Schedule::MAX_PERIOD
        }
    );
    assert!(refused.to_string().contains("4097"), "{refused}");
    assert_eq!(schedule.rate(1), Rate::Every(3));
    schedule
        .set_rate(1, Rate::Every(Schedule::MAX_PERIOD))
        .unwrap();
}

/// An agent index past the crowd is a panic naming it.
#[test]
#[should_panic(expected = "Schedule::wake: agent 5 of a crowd of 5")]
fn waking_an_agent_past_the_crowd_panics_naming_it() {
    Schedule::new(5, 0.0).wake(5);
}

/// A frame runs the input closure of the agents it ticks and of no
/// other: the crowd's other agents are not looked at.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_frame_reads_only_the_agents_it_ticks() {
    let n = 10_000;
    let (mut agents, mut memories, mut schedule) = notes(n);
    for i in 0..n {
        schedule.set_rate(i, Rate::Every(1000)).unwrap();
    }
    let mut ticked = 0;
    for f in 0..5 {
        let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
        let expected: Vec<usize> = (0..n).filter(|&i| Schedule::phase(i, 1000) == f).collect();
        assert!((8..=12).contains(&expected.len()));
        assert_eq!(order, expected);
        assert_eq!(report.due as usize, expected.len());
        ticked += expected.len();
    }
    let untouched = agents.iter().filter(|a| a.ticks.is_empty()).count();
    assert_eq!(untouched, n - ticked);
}

/// A callback that panics ends the frame; the agents the frame took and
/// had not ticked yet stay due and tick first in the next frame (before
/// the budget's other agents), and the schedule goes on.
#[test]
fn a_panic_in_a_frame_leaves_the_agents_not_ticked_due() {
    for budget in [None, Some(6)] {
        let (mut agents, mut memories, mut schedule) = notes(8);
        schedule.set_budget(budget);
        schedule.set_rate(6, Rate::OnWake).unwrap();
        schedule.set_rate(7, Rate::OnWake).unwrap();
        frame(&mut agents, &mut memories, &mut schedule);
        if budget.is_some() {
            schedule.wake(7); // a second list: the frame goes by its order
        }
        agents[2].explode = true;
        let result = catch_unwind(AssertUnwindSafe(|| {
            frame(&mut agents, &mut memories, &mut schedule)
        }));
        assert!(result.is_err());
        agents[2].explode = false;
        let expected: &[usize] = match budget {
            None => &[3, 4, 5],
            Some(_) => &[3, 4, 5, 7],
        };
        for &i in expected {
            assert!(schedule.is_due(i), "{budget:?}: agent {i}");
        }
        assert!(!schedule.is_due(2) && !schedule.is_due(1));
        assert_eq!(schedule.waiting(), expected.len());
        // The agents before the panic, and the panicking one, count as
        // ticked at the frame's clock; those left keep their last time.
        for i in 0..6 {
            let last = if i <= 2 { at(2) } else { at(1) };
            assert_eq!(schedule.last_tick(i), last, "{budget:?}: agent {i}");
        }
        let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
        match budget {
            // Everyone due: the ones left over and the frame's own.
            None => assert_eq!(order, [0, 1, 2, 3, 4, 5]),
            // The four left over first, then two of the frame's own.
            Some(_) => assert_eq!(order, [0, 1, 3, 4, 5, 7]),
        }
        assert_eq!(report.longest_wait, 1);
        assert_eq!(agents[0].ticks.len(), 3);
        assert_eq!(agents[3].ticks.len(), 2);
        assert_eq!(agents[3].ticks[1], (at(3), (at(3) - at(1)) as f32));
        assert_eq!(agents[1].ticks[2], (at(3), (at(3) - at(2)) as f32));
        // The idle memory of agent 2 starts again.
        assert!(memories[2].leaf().is_some() || budget.is_some());
    }
}

/// A panic while a frame ticks agents of a mass wake the budget left
/// waiting: the ones it took and did not tick go first in the next frame,
/// among the others of that wake by index, before anyone woken later.
#[test]
fn a_panic_among_a_mass_wakes_waiting_agents_keeps_their_order() {
    let (mut agents, mut memories, mut schedule) = notes(8);
    schedule.set_budget(Some(3));
    for i in 0..8 {
        schedule.set_rate(i, Rate::OnWake).unwrap();
    }
    for i in (0..8).rev() {
        schedule.wake(i);
    }
    assert_eq!(
        frame(&mut agents, &mut memories, &mut schedule).1,
        [0, 1, 2]
    );
    agents[4].explode = true;
    let result = catch_unwind(AssertUnwindSafe(|| {
        frame(&mut agents, &mut memories, &mut schedule)
    }));
    assert!(result.is_err());
    agents[4].explode = false;
    assert_eq!(agents[3].ticks.len(), 1);
    assert!(!schedule.is_due(3) && !schedule.is_due(4));
    assert_eq!(schedule.waiting(), 3);
    schedule.wake(0);
    let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
    assert_eq!((order.as_slice(), report.longest_wait), (&[5, 6, 7][..], 2));
    assert_eq!(frame(&mut agents, &mut memories, &mut schedule).1, [0]);
}

/// A small deterministic generator for the scripted crowds below.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// When each agent became due, kept by the test from the rates and wakes
/// it gives, without the schedule's help: the frames each agent waits.
struct Dues {
    rates: Vec<Rate>,
    since: Vec<Option<u64>>,
    /// The frame of each agent's last tick.
    last: Vec<Option<u64>>,
    /// The frame before which an agent's rate last changed, and its rate
    /// in the frame before that one.
    was: Vec<Option<(u64, Rate)>>,
}

/// A rate's period in frames; 0 for `OnWake`.
fn period(rate: Rate) -> u64 {
    match rate {
        Rate::EveryFrame => 1,
        Rate::Every(k) => u64::from(k),
        _ => 0,
    }
}

impl Dues {
    /// Agent `i`'s rate set to `rate` before frame `f`, its rate of the
    /// last frame kept for [`settle`](Self::settle).
    fn set_rate(&mut self, i: usize, rate: Rate, f: u64) {
        if period(self.rates[i]) != period(rate) && !matches!(self.was[i], Some((w, _)) if w == f) {
            self.was[i] = Some((f, self.rates[i]));
        }
        self.rates[i] = rate;
    }

    /// As frame `f` starts: an agent whose rate changed since the last
    /// frame, to another period, that is not due and has gone both its
    /// period of the last frame and its period now without a tick is due
    /// in `f`.
    fn settle(&mut self, f: u64) {
        for i in 0..self.rates.len() {
            let Some((w, was)) = self.was[i] else {
                continue;
            };
            let (old, new) = (period(was), period(self.rates[i]));
            let gone = self.last[i].map_or(f + 1, |l| f - l);
            if w == f && old > 0 && new > 0 && old != new && gone >= old.max(new) {
                self.since[i].get_or_insert(f);
            }
        }
    }

    /// Marks the agents due in frame `f` by their rates.
    fn turn(&mut self, f: u64) {
        for (i, rate) in self.rates.iter().enumerate() {
            let turn = match *rate {
                Rate::EveryFrame => true,
                Rate::Every(k) => f % u64::from(k) == u64::from(Schedule::phase(i, k)),
                _ => false,
            };
            if turn && self.since[i].is_none() {
                self.since[i] = Some(f);
            }
        }
    }
}

/// Random rates, rate changes, wakes and budgets over random frames: no
/// frame ticks more than its budget, agents go in the order they became
/// due, and an agent due in frame `d` ticks by the first frame `g` whose
/// budgets from `d` to `g` add up to the crowd: with a steady budget `B`,
/// within `(N - 1) / B` frames, the schedule's `wait_bound`.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn no_frame_ticks_more_than_its_budget_and_no_agent_waits_past_the_bound() {
    let mut reached = 0;
    for seed in 0..40 {
        let mut rng = Lcg(seed);
        let n = 1 + rng.below(60) as usize;
        let (mut agents, mut memories, mut schedule) = notes(n);
        let steady = rng.below(2) == 0;
        let mut budget = 1 + rng.below(n as u64) as u32;
        schedule.set_budget(Some(budget));
        let mut dues = Dues {
            rates: vec![Rate::EveryFrame; n],
            since: vec![None; n],
            last: vec![None; n],
            was: vec![None; n],
        };
        let mut budgets = Vec::new();
        for f in 0..200u64 {
            for _ in 0..rng.below(4) {
                let i = rng.below(n as u64) as usize;
                let rate = match rng.below(4) {
                    0 => Rate::EveryFrame,
                    1 => Rate::OnWake,
                    _ => Rate::Every(1 + rng.below(12) as u32),
                };
                schedule.set_rate(i, rate).unwrap();
                dues.set_rate(i, rate, f);
            }
            for _ in 0..rng.below(3) {
                let i = rng.below(n as u64) as usize;
                schedule.wake(i);
                dues.since[i].get_or_insert(f);
            }
            if !steady && rng.below(8) == 0 {
                budget = rng.below(n as u64 / 2 + 2) as u32;
                schedule.set_budget(Some(budget));
            }
            budgets.push(budget);
            dues.settle(f);
            dues.turn(f);
            let due_before: Vec<(u64, usize)> = (0..n)
                .filter_map(|i| dues.since[i].map(|d| (d, i)))
                .collect();
            let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
            assert!(report.ticked <= budget, "seed {seed} frame {f}");
            assert_eq!(report.ticked as usize, order.len());
            assert_eq!(
                report.due as usize,
                due_before.len(),
                "seed {seed} frame {f}"
            );
            // The first `ticked` agents in the order they became due.
            let mut expected = due_before.clone();
            expected.sort();
            let mut taken: Vec<usize> = expected[..order.len()].iter().map(|&(_, i)| i).collect();
            taken.sort();
            assert_eq!(order, taken, "seed {seed} frame {f}");
            let mut longest = 0;
            for &i in &order {
                let d = dues.since[i].take().expect("ticked while not due");
                dues.last[i] = Some(f);
                assert_eq!(schedule.last_tick_frame(i), Some(f));
                let waited = f - d;
                longest = longest.max(waited);
                let before: u64 = budgets[d as usize..f as usize]
                    .iter()
                    .map(|&b| u64::from(b))
                    .sum();
                assert!(before < n as u64, "seed {seed}: agent {i} waited too long");
                if steady {
                    assert!(waited <= schedule.wait_bound().unwrap(), "seed {seed}");
                    reached += u32::from(waited == schedule.wait_bound().unwrap() && waited > 0);
                }
            }
            assert_eq!(report.longest_wait, longest, "seed {seed} frame {f}");
            assert_eq!(report.waiting as usize, schedule.waiting());
            assert_eq!(schedule.waiting(), due_before.len() - order.len());
        }
    }
    assert!(reached > 0, "no run reached the bound");
}

/// The bound is tight: with every agent due in every frame, the last of
/// the crowd waits `(N - 1) / B` frames for its first tick.
#[test]
fn the_last_agent_of_a_crowd_due_every_frame_waits_the_bound() {
    let (mut agents, mut memories, mut schedule) = notes(10);
    schedule.set_budget(Some(3));
    assert_eq!(schedule.wait_bound(), Some(3));
    let mut orders = Vec::new();
    let mut longest = Vec::new();
    for _ in 0..6 {
        let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
        orders.push(order);
        longest.push(report.longest_wait);
    }
    assert_eq!(orders[0], [0, 1, 2]);
    assert_eq!(orders[1], [3, 4, 5]);
    assert_eq!(orders[2], [6, 7, 8]);
    assert_eq!(orders[3], [0, 1, 9]); // agent 9, due in frame 0, first
    assert_eq!(longest, [0, 1, 2, 3, 3, 3]);
    assert_eq!(agents[9].ticks, [(0.4, 0.4)]);
}

/// A budget of 0 pauses the crowd: nothing ticks, the due agents wait,
/// and go first, the longest waiting first, once the budget is back.
#[test]
fn a_budget_of_zero_pauses_and_the_waiting_go_first_after() {
    let (mut agents, mut memories, mut schedule) = notes(6);
    for i in 0..6 {
        schedule.set_rate(i, Rate::Every(3)).unwrap();
    }
    schedule.set_budget(Some(0));
    assert_eq!(schedule.wait_bound(), None);
    // Phases of period 3: agents 0, 2 and 5 in frame 0, 1 and 4 in
    // frame 1, 3 in frame 2.
    let phases: Vec<u32> = (0..6).map(|i| Schedule::phase(i, 3)).collect();
    assert_eq!(phases, [0, 1, 0, 2, 1, 0]);
    for (f, due) in [(0, 3), (1, 5)] {
        let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
        assert!(order.is_empty(), "frame {f}");
        assert_eq!((report.due, report.waiting), (due, due));
    }
    schedule.set_budget(Some(3));
    // Frame 2: agents 0, 2 and 5 (due in 0); 1 and 4 (due in 1) and the
    // frame's own 3 wait.
    let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
    assert_eq!(order, [0, 2, 5]);
    assert_eq!((report.due, report.waiting, report.longest_wait), (6, 3, 2));
    // Frame 3: the waiting go before 0, 2 and 5, whose turn it is again.
    let (_, order) = frame(&mut agents, &mut memories, &mut schedule);
    assert_eq!(order, [1, 3, 4]);
    // Their dt covers the pause.
    assert_eq!(agents[4].ticks, [(0.4, 0.4)]);
}

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Sense: u8 { const PREDATOR = 1 << 0; }
}

/// A deer that flees while it senses a predator, and grazes otherwise.
#[derive(Default)]
struct Deer {
    senses: bt_core::Stimuli<Sense, 2>,
    /// When it fled.
    fled: Vec<f64>,
}

leaf! { FLEE: Deer, stimuli_any: Sense::PREDATOR,
    tick: |d, cx| { d.fled.push(cx.now); cx.stimuli_as::<Sense>().contains(Sense::PREDATOR) },
}
leaf! { GRAZE: Deer }
group! { DEER_ROOT: Deer, prioritized [FLEE, GRAZE] }
tree! { HERD: Deer = DEER_ROOT, memory: HerdMemory }

/// Ticks frame `f` of a herd, its stimuli kept on the clock.
fn herd_frame(
    herd: &mut [Deer],
    memories: &mut [HerdMemory],
    schedule: &mut Schedule,
) -> Vec<usize> {
    let now = at(schedule.frame() + 1);
    let mut order = Vec::new();
    tick_scheduled(&HERD, herd, memories, schedule, now, |i, deer, dt| {
        order.push(i);
        TickInput::new(now, dt).with_stimuli(deer.senses.update(dt))
    });
    order
}

/// A stimulus set with `stimulate` wakes its agent for the next frame
/// whatever its rate, and lasts its seconds on the clock at any rate: each
/// tick before it is over sees it. Set with `Stimuli::set_since` alone, it
/// waits for the agent's turn, and an agent whose turn comes after it is
/// over never sees it.
#[test]
fn a_new_stimulus_wakes_its_agent_and_lasts_its_seconds_at_any_rate() {
    let mut herd: Vec<Deer> = (0..4).map(|_| Deer::default()).collect();
    let mut memories: Vec<HerdMemory> = (0..4).map(|i| HERD.new_memory(i)).collect();
    let mut schedule = Schedule::new(4, 0.0);
    schedule.set_rate(1, Rate::Every(5)).unwrap();
    schedule.set_rate(2, Rate::OnWake).unwrap();
    schedule.set_rate(3, Rate::Every(10)).unwrap();
    // Deer 1's turns: frames 3, 8, 13, ...; deer 3's: 8, 18, 28.
    assert_eq!((Schedule::phase(1, 5), Schedule::phase(3, 10)), (3, 8));
    let mut ticked = vec![Vec::new(); 4];
    for f in 0..30u64 {
        if f == 7 {
            // Seen at 0.75 s (frame 7 runs at 0.8), remembered for a second.
            for (i, deer) in herd.iter_mut().take(3).enumerate() {
                schedule
                    .stimulate(i, &mut deer.senses, Sense::PREDATOR, 9, Some(1.0), 0.75)
                    .unwrap();
            }
        }
        if f == 10 {
            // Heard at 1.05 s for half a second, without waking anyone:
            // over at 1.55 s, before deer 3's turn at 1.9 s.
            let deer = &mut herd[3].senses;
            let elapsed = (1.05 - schedule.last_tick(3)) as f32;
            deer.set_since(Sense::PREDATOR, 9, Some(0.5), elapsed)
                .unwrap();
        }
        if f == 20 {
            let deer = &mut herd[2].senses;
            let elapsed = (2.05 - schedule.last_tick(2)) as f32;
            deer.set_since(Sense::PREDATOR, 9, Some(1.0), elapsed)
                .unwrap();
        }
        for i in herd_frame(&mut herd, &mut memories, &mut schedule) {
            ticked[i].push(f);
        }
    }
    // Every deer flees from its first tick after the sighting; each stops
    // at its first tick at 1.75 s or later.
    assert_eq!(herd[0].fled.len(), 11); // 0.8 ..= 1.8
    assert_eq!(herd[0].fled.last(), Some(&at(18)));
    assert_eq!(herd[1].fled, [at(8), at(9), at(14), at(19)]); // frames 7, 8, 13, 18
    assert_eq!(herd[2].fled, [at(8)]); // woken once, then asleep
    assert!(herd[3].fled.is_empty(), "{:?}", herd[3].fled);
    assert_eq!(ticked[1][..4], [3, 7, 8, 13]);
    assert_eq!(ticked[2], [7]); // a stimulus set without waking waits
    assert_eq!(ticked[3], [8, 18, 28]);
    // A woken agent that is due anyway ticks once.
    assert_eq!(ticked[0].len(), 30);
}

/// A stimulus given a clock reading far ahead of the tick that sees it
/// (milliseconds given as seconds, or an infinite one) counts as happened
/// at that tick: it lasts its second from then, not until the clock
/// catches up.
#[test]
fn a_stimulus_stamped_far_ahead_lasts_its_time_out_from_the_tick_that_sees_it() {
    for stamp in [750.0, 1e300, f64::INFINITY] {
        let mut herd: Vec<Deer> = (0..2).map(|_| Deer::default()).collect();
        let mut memories: Vec<HerdMemory> = (0..2).map(|i| HERD.new_memory(i)).collect();
        let mut schedule = Schedule::new(2, 0.0);
        schedule.set_rate(1, Rate::Every(4)).unwrap();
        for f in 0..40u64 {
            if f == 7 {
                let senses = &mut herd[1].senses;
                (schedule.stimulate(1, senses, Sense::PREDATOR, 0, Some(1.0), stamp)).unwrap();
            }
            herd_frame(&mut herd, &mut memories, &mut schedule);
        }
        // Woken for frame 7 (at 0.8 s), then its turns every 0.4 s: it
        // flees until its first tick at 1.8 s or later (1.9 s), which
        // finds the stimulus over.
        let fled = &herd[1].fled;
        assert_eq!(fled.first(), Some(&at(8)), "stamp {stamp}");
        assert_eq!(fled.last(), Some(&at(19)), "stamp {stamp}: {fled:?}");
        assert!(herd[1].senses.is_empty(), "stamp {stamp}");
    }
}

/// `value` written and read back, in JSON or postcard.
fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T, compact: bool) -> T {
    if compact {
        postcard::from_bytes(&postcard::to_allocvec(value).unwrap()).unwrap()
    } else {
        serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
    }
}

/// Saved and loaded between the stamp and the tick that sees it, a
/// stimulus stamped far ahead lasts its time-out from that tick, as it
/// does unsaved: the save keeps how long after the last update it
/// happened.
#[test]
fn a_stimulus_stamped_far_ahead_keeps_its_time_out_through_a_save() {
    for stamp in [750.0, 1e300, f64::INFINITY] {
        for compact in [false, true] {
            let mut herd: Vec<Deer> = (0..2).map(|_| Deer::default()).collect();
            let mut memories: Vec<HerdMemory> = (0..2).map(|i| HERD.new_memory(i)).collect();
            let mut schedule = Schedule::new(2, 0.0);
            schedule.set_rate(1, Rate::Every(4)).unwrap();
            for f in 0..40u64 {
                if f == 7 {
                    let senses = &mut herd[1].senses;
                    (schedule.stimulate(1, senses, Sense::PREDATOR, 0, Some(1.0), stamp)).unwrap();
                    herd[1].senses = round_trip(&herd[1].senses, compact);
                }
                herd_frame(&mut herd, &mut memories, &mut schedule);
            }
            let fled = &herd[1].fled;
            assert_eq!(fled.first(), Some(&at(8)), "stamp {stamp}");
            assert_eq!(fled.last(), Some(&at(19)), "stamp {stamp}: {fled:?}");
        }
    }
    // A save without stimuli ahead is written as before; one that names
    // an `ahead` of no stimulus, or of one set by `set`, is refused.
    let mut senses = bt_core::Stimuli::<Sense, 2>::new();
    senses.set(Sense::PREDATOR, 0, Some(1.0)).unwrap();
    let json = serde_json::to_string(&senses).unwrap();
    assert!(!json.contains("ahead"), "{json}");
    for bad in [
        json.replace("]}", "],\"ahead\":[[0,0.5]]}"),
        json.replace("]}", "],\"ahead\":[[5,0.5]]}"),
    ] {
        let read = serde_json::from_str::<bt_core::Stimuli<Sense, 2>>(&bad);
        let why = read.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(why.contains("stimulus ahead"), "{bad}: {why}");
    }
    let mut aged = bt_core::Stimuli::<Sense, 2>::new();
    aged.set_since(Sense::PREDATOR, 0, Some(1.0), 0.25).unwrap();
    let json = serde_json::to_string(&aged).unwrap();
    assert!(json.contains("\"ahead\":[[0,0.25]]"), "{json}");
}

/// A stimulus whose agent the budget keeps waiting runs on the clock all
/// the same: woken at once, the agent waits its turn in the budget's order
/// and does not see a stimulus that was over before it ticked.
#[test]
fn a_stimulus_runs_on_the_clock_while_its_agent_waits_under_a_budget() {
    for n in [30usize, 3] {
        let mut herd: Vec<Deer> = (0..n).map(|_| Deer::default()).collect();
        let mut memories: Vec<HerdMemory> = (0..n).map(|i| HERD.new_memory(i as u64)).collect();
        let mut schedule = Schedule::new(n, 0.0).with_budget(Some(1));
        let last = n - 1;
        for f in 0..60u64 {
            if f == 1 {
                // Seen at 0.15 s, for half a second: over at 0.65 s.
                let senses = &mut herd[last].senses;
                let seen = schedule.stimulate(last, senses, Sense::PREDATOR, 0, Some(0.5), 0.15);
                seen.unwrap();
            }
            herd_frame(&mut herd, &mut memories, &mut schedule);
        }
        let fled = &herd[last].fled;
        if n == 30 {
            // Behind 29 others at one tick a frame: its tick comes after.
            assert!(fled.is_empty(), "deer {last} fled at {fled:?}");
        } else {
            // In a herd of three it ticks in time, and flees.
            assert!(!fled.is_empty() && fled[0] < 0.65, "{fled:?}");
        }
    }
}

/// A deferred action's outcome, reported through the schedule, wakes the
/// agent that launched it for the next frame, where it sees the outcome;
/// a ticket that completes nothing wakes nobody.
#[test]
fn a_reported_outcome_wakes_the_agent_that_launched_it() {
    use bt_core::{ActionOp, ActionState, Outcome};

    /// A courier that asks for a parcel and waits for it.
    #[derive(Default)]
    struct Courier {
        /// What it saw at each tick.
        seen: Vec<(u64, ActionState)>,
        frame: u64,
    }
    bt_core::behavior! { FETCH: Courier,
        launch: |_c, _cx| Some(bt_core::Action::new(1, 0)),
        tick: |c, cx| { c.seen.push((c.frame, cx.action)); cx.action == ActionState::Pending },
    }
    bt_core::decider! { DO_FETCH: Courier => FETCH }
    tree! { COURIERS: Courier = DO_FETCH, memory: CourierMemory }

    let shared = COURIERS.new_shared(8);
    let mut couriers: Vec<Courier> = (0..4).map(|_| Courier::default()).collect();
    let mut memories: Vec<CourierMemory> =
        (0..4).map(|i| COURIERS.new_memory_in(&shared, i)).collect();
    let mut schedule = Schedule::new(4, 0.0);
    for i in 0..4 {
        schedule.set_rate(i, Rate::Every(10)).unwrap();
    }
    let mut tickets = Vec::new();
    for f in 0..25u64 {
        if f == 5 {
            // The parcel of agent 2 arrives, and a made-up one for agent 3.
            let (two, _) = tickets
                .iter()
                .copied()
                .find(|&(t, _): &(bt_core::Ticket, usize)| t.agent() == 2)
                .unwrap();
            assert!(schedule.complete(&mut memories, two, Outcome::Succeeded));
            assert!(schedule.is_due(2));
            let made_up = bt_core::Ticket::new(shared.id(), 3, 0, 999);
            assert!(!schedule.complete(&mut memories, made_up, Outcome::Failed));
            assert!(!schedule.is_due(3));
            let past_the_crowd = bt_core::Ticket::new(shared.id(), 40, 0, 1);
            assert!(!schedule.complete(&mut memories, past_the_crowd, Outcome::Failed));
        }
        let now = at(f + 1);
        for c in &mut couriers {
            c.frame = f;
        }
        let report = tick_scheduled(
            &COURIERS,
            &mut couriers,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        );
        assert_eq!(report.crowd.errors, 0);
        shared.drain_actions(|r| {
            if let ActionOp::Launch(_) = r.op {
                tickets.push((r.ticket, r.agent as usize));
            }
        });
    }
    // Agent 2 (phase 2) launched at its first turn (frame 2), heard back
    // at frame 5:
    // it sees the outcome at frame 5, not at its next turn (12).
    assert_eq!(
        couriers[2].seen,
        [
            (2, ActionState::Pending),
            (5, ActionState::Succeeded),
            (12, ActionState::Pending),
            (22, ActionState::Pending)
        ]
    );
    // Agent 3 (phase 8) only at its turns.
    assert_eq!(Schedule::phase(3, 10), 8);
    assert_eq!(
        couriers[3].seen.iter().map(|s| s.0).collect::<Vec<_>>(),
        [8, 18]
    );
}

/// `wake` makes an agent due in the next frame; under a budget it goes
/// by its place in that frame's order, and waking an agent already due
/// keeps its place.
#[test]
fn a_woken_agent_goes_in_the_next_frame_by_its_place() {
    let (mut agents, mut memories, mut schedule) = notes(6);
    for i in 0..6 {
        schedule.set_rate(i, Rate::OnWake).unwrap();
    }
    schedule.set_budget(Some(2));
    assert!(
        frame(&mut agents, &mut memories, &mut schedule)
            .1
            .is_empty()
    );
    for i in [5, 3, 4] {
        schedule.wake(i);
    }
    assert!(schedule.is_due(5) && !schedule.is_due(0));
    let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
    assert_eq!((order, report.waiting), (vec![3, 4], 1));
    // 5 waits from frame 1; woken again it keeps its place before 0.
    schedule.wake(0);
    schedule.wake(5);
    let (report, order) = frame(&mut agents, &mut memories, &mut schedule);
    assert_eq!((order, report.longest_wait), (vec![0, 5], 1));
    assert!(
        frame(&mut agents, &mut memories, &mut schedule)
            .1
            .is_empty()
    );
}

/// In a tree with deferred actions, agents given one id are checked as
/// `tick_all` checks them: of those ticked in a frame, the first that
/// launches under the id goes on, the others are refused naming it.
#[test]
fn agents_given_one_id_are_refused_as_in_tick_all() {
    use bt_core::{Action, TickError};

    #[derive(Default)]
    struct Runner;
    leaf! { RUN: Runner, launch: |_, _| Some(Action::new(7, 0)) }
    tree! { RUNNERS: Runner = RUN, memory: RunnerMemory }

    let shared = RUNNERS.new_shared(8);
    let mut runners = [Runner, Runner, Runner];
    let mut memories: Vec<RunnerMemory> =
        (0..3).map(|i| RUNNERS.new_memory_in(&shared, i)).collect();
    let mut schedule = Schedule::new(3, 0.0);
    schedule.set_rate(1, Rate::OnWake).unwrap();
    let report = tick_scheduled(
        &RUNNERS,
        &mut runners,
        &mut memories,
        &mut schedule,
        0.1,
        |_, _, dt| TickInput::new(0.1, dt).with_agent(1000),
    );
    let taken = TickError::AgentIdTaken {
        id: 1000,
        agent: 2,
        holder: 0,
    };
    assert_eq!((report.ticked, report.crowd.errors), (2, 1));
    assert_eq!(report.crowd.first_error, Some((2, taken)));
}

/// A crowd of gated loggers at mixed rates under a budget, with agents
/// woken, run frame by frame at the clock `start + f / 8`.
struct Run {
    shared: std::sync::Arc<bt_core::TreeShared>,
    agents: Vec<Logger>,
    memories: Vec<LoggerMemory>,
    schedule: Schedule,
    start: f64,
}

impl Run {
    fn new(n: usize) -> Self {
        let shared = LOGGERS.new_shared(0);
        let memories = (0..n)
            .map(|i| LOGGERS.new_memory_in(&shared, i as u64))
            .collect();
        let mut schedule = Schedule::new(n, 0.0).with_budget(Some(5));
        for i in 0..n {
            let rate = [
                Rate::EveryFrame,
                Rate::Every(3),
                Rate::Every(7),
                Rate::OnWake,
            ][i % 4];
            schedule.set_rate(i, rate).unwrap();
        }
        Run {
            shared,
            agents: vec![Logger::default(); n],
            memories,
            schedule,
            start: 0.0,
        }
    }

    /// The next frame: agent `f % n` woken first.
    fn frame(&mut self) -> FrameReport {
        let f = self.schedule.frame();
        self.schedule.wake(f as usize * 5 % self.agents.len());
        let now = self.start + (f + 1) as f64 / 8.0;
        tick_scheduled(
            &LOGGERS,
            &mut self.agents,
            &mut self.memories,
            &mut self.schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        )
    }
}

/// A schedule saved with its crowd and restored, under the same clock or
/// one that reads 1024 s later, continues exactly: the same agents tick
/// in the same frames with the same `dt` and make the same decisions,
/// also those the budget had left waiting and those woken at the save.
#[test]
fn a_restored_schedule_continues_exactly() {
    for shift in [0.0, 1024.0] {
        let mut run = Run::new(24);
        for _ in 0..20 {
            run.frame();
        }
        run.schedule.wake(2);
        assert!(run.schedule.waiting() > 0 && run.schedule.is_due(2));
        let now = 20.0 / 8.0;
        let crowd = serde_json::to_string(&run.shared.snapshot_crowd(&run.memories, now)).unwrap();
        let saved = serde_json::to_string(&run.schedule.snapshot(now)).unwrap();

        let mut restored = Run::new(24);
        restored.start = shift;
        // The game's own state, saved with the crowd; the logs start afresh.
        restored.agents = run.agents.clone();
        let before: Vec<usize> = run.agents.iter().map(|a| a.ticks.len()).collect();
        restored.agents.iter_mut().for_each(|a| a.ticks.clear());
        let mut de = serde_json::Deserializer::from_str(&crowd);
        (restored.shared)
            .restore_crowd(&LOGGERS, now + shift, &mut restored.memories, &mut de)
            .unwrap();
        let mut de = serde_json::Deserializer::from_str(&saved);
        restored.schedule = Schedule::restore(now + shift, &mut de).unwrap();
        if shift == 0.0 {
            // Saved again, the same snapshot, bit for bit.
            let again = serde_json::to_string(&restored.schedule.snapshot(now)).unwrap();
            assert_eq!(again, saved);
        }
        for f in 20..60 {
            let (a, b) = (run.frame(), restored.frame());
            assert_eq!(a, b, "shift {shift}, frame {f}");
        }
        for (i, (a, b)) in run.agents.iter().zip(&restored.agents).enumerate() {
            assert_eq!(a.gated, b.gated);
            let moved: Vec<(f64, f32)> = a.ticks[before[i]..]
                .iter()
                .map(|&(t, dt)| (t + shift, dt))
                .collect();
            assert_eq!(moved, b.ticks, "shift {shift}, agent {i}");
            assert!(!b.ticks.is_empty() || i % 4 == 3);
        }
    }
}

/// An agent woken before the save is due in the next frame after the
/// load, in its place among the agents due then: behind a lower index
/// whose turn it is, not before it as one left waiting would be.
#[test]
fn a_restored_schedule_keeps_a_woken_agent_in_its_place() {
    let (mut agents, mut memories, mut schedule) = notes(3);
    schedule.set_budget(Some(1));
    schedule.set_rate(1, Rate::OnWake).unwrap();
    schedule.set_rate(2, Rate::OnWake).unwrap();
    frame(&mut agents, &mut memories, &mut schedule);
    schedule.wake(2);
    let saved = serde_json::to_string(&schedule.snapshot(1.0)).unwrap();
    let mut de = serde_json::Deserializer::from_str(&saved);
    let mut restored = Schedule::restore(1.0, &mut de).unwrap();
    for schedule in [&mut schedule, &mut restored] {
        let orders: Vec<Vec<usize>> = (0..3)
            .map(|_| frame(&mut agents, &mut memories, schedule).1)
            .collect();
        assert_eq!(orders, [vec![0], vec![2], vec![0]]);
    }
}

/// A schedule snapshot that does not fit is refused with a typed error
/// naming what is wrong.
#[test]
fn a_schedule_snapshot_that_does_not_fit_is_refused() {
    use bt_core::{RestoreError, SnapshotError};

    let mut schedule = Schedule::new(3, 0.0);
    schedule.wake(1);
    let saved: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&schedule.snapshot(1.0)).unwrap()).unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value), now: f64| {
        let mut v = saved.clone();
        edit(&mut v);
        match Schedule::restore(now, &v) {
            Err(RestoreError::Snapshot(e)) => e,
            other => panic!("not refused as a bad snapshot: {other:?}"),
        }
    };
    let bad = |what| SnapshotError::BadValue { what };
    assert!(matches!(
        refused(&|v| v["version"] = 99.into(), 1.0),
        SnapshotError::Version { found: 99, .. }
    ));
    assert_eq!(refused(&|_| {}, f64::NAN), bad("clock reading"));
    assert_eq!(
        refused(&|v| v["last"] = serde_json::json!([0.0, 0.0]), 1.0),
        SnapshotError::Count {
            what: "last tick times",
            found: 2,
            expected: 3
        }
    );
    assert_eq!(
        refused(&|v| v["periods"][0] = 5000.into(), 1.0),
        bad("period (above Schedule::MAX_PERIOD)")
    );
    assert_eq!(
        refused(&|v| v["due"] = serde_json::json!([[3, 0]]), 1.0),
        SnapshotError::OutOfRange {
            what: "due agent",
            index: 3,
            len: 3
        }
    );
    assert_eq!(
        refused(&|v| v["due"] = serde_json::json!([[1, 0], [1, 0]]), 1.0),
        bad("due agent (given twice)")
    );
    assert_eq!(
        refused(&|v| v["due"] = serde_json::json!([[1, 1]]), 1.0),
        bad("frame an agent is due since (after the next frame)")
    );
    for frame in [u64::MAX, u64::MAX - 1, Schedule::MAX_FRAME + 1] {
        assert_eq!(
            refused(&|v| v["frame"] = frame.into(), 1.0),
            bad("frame count")
        );
    }
    let unknown = Schedule::restore(
        1.0,
        &serde_json::json!({"version": bt_core::SNAPSHOT_VERSION, "extra": 1}),
    );
    assert!(
        matches!(unknown, Err(RestoreError::Format(e)) if e.to_string().contains("unknown field `extra`"))
    );
    assert_eq!(
        refused(&|v| v["last_frames"] = serde_json::json!([null]), 1.0),
        SnapshotError::Count {
            what: "last tick frames",
            found: 1,
            expected: 3
        }
    );
    // Frame 0 is the next: no agent ticked in it yet.
    assert_eq!(
        refused(&|v| v["last_frames"][2] = 0.into(), 1.0),
        bad("last tick frame (not before the next frame)")
    );
    assert_eq!(
        refused(&|v| v["rate_changes"] = serde_json::json!([[3, 1]]), 1.0),
        SnapshotError::OutOfRange {
            what: "agent whose rate changed",
            index: 3,
            len: 3
        }
    );
    assert_eq!(
        refused(
            &|v| v["rate_changes"] = serde_json::json!([[0, 1], [0, 2]]),
            1.0
        ),
        bad("agent whose rate changed (given twice)")
    );
    assert_eq!(
        refused(&|v| v["rate_changes"] = serde_json::json!([[0, 5000]]), 1.0),
        bad("period before a rate change (above Schedule::MAX_PERIOD)")
    );
    // As saved, it loads; without the rate changes (an earlier version's
    // save) too.
    assert!(Schedule::restore(1.0, &saved).unwrap().is_due(1));
    let mut older = saved.clone();
    older.as_object_mut().unwrap().remove("rate_changes");
    assert!(Schedule::restore(1.0, &older).unwrap().is_due(1));
}

/// The frames of the agents' last ticks come back from a snapshot; one
/// saved without them (by an earlier version) loads with every agent as
/// ticked in the frame before the next.
#[test]
fn a_restored_schedule_keeps_the_frames_of_the_last_ticks() {
    let (mut agents, mut memories, mut schedule) = notes(4);
    schedule.set_rate(1, Rate::Every(4)).unwrap();
    schedule.set_rate(2, Rate::OnWake).unwrap();
    for _ in 0..6 {
        frame(&mut agents, &mut memories, &mut schedule);
    }
    let frames = |s: &Schedule| (0..4).map(|i| s.last_tick_frame(i)).collect::<Vec<_>>();
    let p = u64::from(Schedule::phase(1, 4));
    let every_4th = (0..6).rev().find(|f| f % 4 == p);
    assert_eq!(frames(&schedule), [Some(5), every_4th, None, Some(5)]);
    let saved: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&schedule.snapshot(1.0)).unwrap()).unwrap();
    assert_eq!(
        frames(&Schedule::restore(1.0, &saved).unwrap()),
        frames(&schedule)
    );
    let mut old = saved.clone();
    old.as_object_mut().unwrap().remove("last_frames");
    assert_eq!(frames(&Schedule::restore(1.0, &old).unwrap()), [Some(5); 4]);
}

/// Agent `i`'s frames in which it ticked, in `frames` frames of a crowd
/// of `n` whose rates `rates(f, i)` sets before each frame (`None`: no
/// change).
fn ticks_under(n: usize, frames: u64, rates: impl Fn(u64, usize) -> Option<Rate>) -> Vec<Vec<u64>> {
    let (mut agents, mut memories, mut schedule) = notes(n);
    let mut ticked = vec![Vec::new(); n];
    for f in 0..frames {
        for i in 0..n {
            if let Some(rate) = rates(f, i) {
                schedule.set_rate(i, rate).unwrap();
            }
        }
        for i in frame(&mut agents, &mut memories, &mut schedule).1 {
            ticked[i].push(f);
        }
    }
    ticked
}

/// The most frames between two ticks of an agent (and from the start and
/// to the end of the run).
fn longest_gap(ticks: &[u64], frames: u64) -> u64 {
    let mut last = None::<u64>;
    let mut gap = 0;
    for &f in ticks.iter().chain([frames].iter()) {
        gap = gap.max(last.map_or(f + 1, |l| f - l));
        last = Some(f);
    }
    gap
}

/// An agent whose rate flips every frame between `Every(4)` and
/// `Every(16)`, with phases that never meet the frames of their rate,
/// still ticks at least every 16 frames: a rate change makes it due once
/// it has gone both periods without a tick.
#[test]
fn an_agent_whose_rate_flips_every_frame_ticks_within_the_longer_period() {
    let i = (0..10_000)
        .find(|&i| {
            Schedule::phase(i, 16).is_multiple_of(2) && !Schedule::phase(i, 4).is_multiple_of(2)
        })
        .unwrap();
    let flip = |f: u64| {
        if f.is_multiple_of(2) {
            Rate::Every(4)
        } else {
            Rate::Every(16)
        }
    };
    let ticked = ticks_under(i + 1, 400, |f, j| (j == i).then(|| flip(f)));
    assert!(ticked[i].len() >= 400 / 16 - 1, "{:?}", ticked[i]);
    assert!(longest_gap(&ticked[i], 400) <= 16, "{:?}", ticked[i]);
}

/// A game that resets every agent's rate to `OnWake` each frame and then
/// sets the one it wants (`Every(2)` or `Every(4)` by frame, or, worse,
/// a period whose turn the next frame is not): the changes between two
/// frames count as one, so no agent goes more than `2 * 4 - 2` frames
/// without a tick. A crowd asleep for a while and then given a period is
/// not made due by the rule: it ticks by its turns.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_rate_reset_to_on_wake_and_set_again_each_frame_never_starves() {
    for adversarial in [false, true] {
        let n = 100;
        let (mut agents, mut memories, mut schedule) = notes(n);
        let mut ticked = vec![Vec::new(); n];
        for f in 0..300u64 {
            for i in 0..n {
                schedule.set_rate(i, Rate::OnWake).unwrap();
                let k = if adversarial {
                    (2..=4)
                        .find(|&k| f % u64::from(k) != u64::from(Schedule::phase(i, k)))
                        .unwrap_or(2)
                } else if f.is_multiple_of(2) {
                    2
                } else {
                    4
                };
                schedule.set_rate(i, Rate::Every(k)).unwrap();
            }
            for i in frame(&mut agents, &mut memories, &mut schedule).1 {
                ticked[i].push(f);
            }
        }
        let worst = ticked.iter().map(|t| longest_gap(t, 300)).max().unwrap();
        assert!(
            worst <= 6,
            "adversarial {adversarial}: a gap of {worst} frames"
        );
    }

    let n = 64;
    let (mut agents, mut memories, mut schedule) = notes(n);
    for i in 0..n {
        schedule.set_rate(i, Rate::OnWake).unwrap();
    }
    for _ in 0..20 {
        frame(&mut agents, &mut memories, &mut schedule);
    }
    let f = schedule.frame();
    for i in 0..n {
        schedule.set_rate(i, Rate::Every(4)).unwrap();
    }
    let first = frame(&mut agents, &mut memories, &mut schedule).1;
    let turn: Vec<usize> = (0..n)
        .filter(|&i| f % 4 == u64::from(Schedule::phase(i, 4)))
        .collect();
    assert_eq!(first, turn);
}

/// A crowd whose rates sway together between `Every(4)` and `Every(16)`
/// every `m` frames: no agent goes more than `2 * 16 - 2` frames without
/// a tick, whatever `m`.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_crowd_swaying_between_two_rates_ticks_within_twice_the_longer_period() {
    for m in 1..=8u64 {
        let sway = |f: u64| {
            let near = (f / m).is_multiple_of(2);
            f.is_multiple_of(m).then_some(if near {
                Rate::Every(4)
            } else {
                Rate::Every(16)
            })
        };
        let ticked = ticks_under(300, 400, |f, _| sway(f));
        let worst = ticked.iter().map(|t| longest_gap(t, 400)).max().unwrap();
        assert!(
            worst <= 30,
            "swaying every {m} frames: a gap of {worst} frames"
        );
    }
}

/// A crowd at `Every(16)` set to `Every(4)` all at once ticks in the next
/// frame only the agents due by either rate (the rule adds no burst), and
/// by its new rate from then on.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_crowd_whose_rates_change_together_ticks_no_more_than_its_rates_make_due() {
    let n = 400;
    let at = 40;
    let ticked = ticks_under(n, at + 8, |f, _| match f {
        0 => Some(Rate::Every(16)),
        f if f == at => Some(Rate::Every(4)),
        _ => None,
    });
    let turn = |i: usize, k: u32, f: u64| f % u64::from(k) == u64::from(Schedule::phase(i, k));
    for f in at..at + 8 {
        let expected: Vec<usize> = (0..n)
            .filter(|&i| turn(i, 4, f) || (f == at && turn(i, 16, f)))
            .collect();
        let got: Vec<usize> = (0..n).filter(|&i| ticked[i].contains(&f)).collect();
        assert_eq!(got, expected, "frame {f}");
    }
}

/// A `now` that is not finite fails each agent the frame takes with
/// `InvalidInput` naming `now`, as `tick_all` fails every agent, and keeps
/// their last tick times: their next `dt` covers the time since their
/// last real tick.
#[test]
fn a_clock_that_is_not_finite_fails_the_frame_and_keeps_the_times() {
    use bt_core::TickError;

    // Without a budget the frame is one bucket's list; with one, the
    // frame's order.
    for budget in [None, Some(3)] {
        let (mut agents, mut memories, mut schedule) = notes(4);
        let run =
            |agents: &mut [Logger], memories: &mut [NoteMemory], schedule: &mut Schedule, now| {
                tick_scheduled(&NOTES, agents, memories, schedule, now, |_, _, dt| {
                    TickInput::new(now, dt)
                })
            };
        run(&mut agents, &mut memories, &mut schedule, 0.5);
        schedule.set_budget(budget);
        let report = run(&mut agents, &mut memories, &mut schedule, f64::NAN);
        assert_eq!(report.ticked, budget.unwrap_or(4));
        assert_eq!(report.crowd.errors, report.ticked);
        assert!(matches!(
            report.crowd.first_error,
            Some((0, TickError::InvalidInput { field: "now", .. }))
        ));
        assert_eq!(schedule.last_tick(0), 0.5, "{budget:?}");
        schedule.set_budget(None);
        run(&mut agents, &mut memories, &mut schedule, 1.5);
        assert_eq!(agents[0].ticks, [(0.5, 0.5), (1.5, 1.0)], "{budget:?}");
        assert_eq!(agents[3].ticks, [(0.5, 0.5), (1.5, 1.0)], "{budget:?}");
    }
}

/// A schedule made for a crowd of another size is a panic saying so.
#[test]
#[should_panic(expected = "tick_scheduled: the schedule's crowd and the agents differ in length")]
fn a_schedule_of_another_crowd_size_panics() {
    let (mut agents, mut memories, _) = notes(3);
    let mut schedule = Schedule::new(4, 0.0);
    tick_scheduled(
        &NOTES,
        &mut agents,
        &mut memories,
        &mut schedule,
        0.1,
        |_, _, dt| TickInput::new(0.1, dt),
    );
}

/// The highest frame count a snapshot may hold loads, and its crowd runs
/// on: no frame count a restore accepts can run out.
#[test]
fn a_schedule_restored_at_the_highest_frame_count_runs_on() {
    let mut saved = serde_json::to_value(Schedule::new(3, 0.0).snapshot(0.0)).unwrap();
    saved["frame"] = Schedule::MAX_FRAME.into();
    let mut schedule = Schedule::restore(0.0, &saved).unwrap();
    schedule.set_rate(1, Rate::Every(3)).unwrap();
    let (mut agents, mut memories, _) = notes(3);
    for _ in 0..4 {
        frame(&mut agents, &mut memories, &mut schedule);
    }
    assert_eq!(schedule.frame(), Schedule::MAX_FRAME + 4);
    assert_eq!(agents[0].ticks.len(), 4);
    assert!(!agents[1].ticks.is_empty() && agents[1].ticks.len() < 4);
}

/// A clock that jumps past what an `f32` step can hold still ticks the
/// agents the frame takes, with the largest `dt` a tick takes, in both
/// ways a frame goes (one bucket's list, and the order under a budget),
/// and their last tick is that clock's.
#[test]
fn a_step_past_f32s_range_ticks_with_the_largest_dt() {
    for budget in [None, Some(2)] {
        let (mut agents, mut memories, mut schedule) = notes(3);
        schedule.set_budget(budget);
        let now = 1e39;
        let mut dts = Vec::new();
        let report = tick_scheduled(
            &NOTES,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| {
                dts.push(dt);
                TickInput::new(now, dt)
            },
        );
        assert_eq!(
            report.crowd.errors, 0,
            "{budget:?}: {:?}",
            report.crowd.first_error
        );
        assert_eq!(report.ticked, budget.unwrap_or(3));
        assert!(dts.iter().all(|&dt| dt == f32::MAX), "{budget:?}: {dts:?}");
        assert_eq!(schedule.last_tick(0), now);
    }
}
