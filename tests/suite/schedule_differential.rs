//! The schedule against a reference: random trees of the model's
//! generator (with gates, cooldowns, roles and deferred actions), random
//! crowds, and random rates, rate changes, wakes, budgets, outcomes
//! reported back and clocks over random frames. `tick_scheduled` runs one
//! copy of the crowd; the other copy is ticked agent by agent with plain
//! `bt_core::tick`, at the frames a naive model of the schedule's rules
//! picks (every agent looked at in every frame), with the `dt` the model
//! computes. Both copies must make the same decisions: the same
//! callbacks with the same `now` and `dt`, reports, paths, generators,
//! timers, deferred actions, requests and shared counts.
//!
//! Run with `BT_PROPTEST_CASES` cases (default 1024), as the other
//! property tests (`differential.rs`).

use bt_core::{
    ActionOp, ActionRequest, CrowdReport, Outcome, Rate, Schedule, TickInput, Ticket,
    tick_scheduled,
};
use proptest::prelude::*;

use crate::differential::config;
use crate::model::{
    ANSWERS, Case, GEN_COOLDOWN, GEN_EVERY, GEN_GATE, GenMemory, MAX_DECIDERS, STEPS, Sim,
    TUNED_VALUES, build, case, harness, live_blocks, path_of,
};

/// What the game does before one frame.
#[derive(Clone, Debug)]
struct FrameOps {
    /// `(agent, rate)`: 0 every frame, 1 on wake, `r` every `1 + r % 9`.
    rates: Vec<(u8, u8)>,
    wakes: Vec<u8>,
    /// `Some(None)`: no budget from now on; `Some(Some(b))`: `b` modulo
    /// the crowd plus one.
    budget: Option<Option<u8>>,
    /// How many of the launches heard of so far are reported back, oldest
    /// first, through the schedule.
    reports: u8,
    succeed: bool,
    /// The clock's step: an index into [`STEPS`], or back half a second.
    step: u8,
    /// The schedule is saved and restored before the frame.
    resave: bool,
}

fn frame_ops() -> impl Strategy<Value = FrameOps> {
    (
        prop::collection::vec((any::<u8>(), any::<u8>()), 0..3),
        prop::collection::vec(any::<u8>(), 0..3),
        prop::option::weighted(0.15, prop::option::weighted(0.8, any::<u8>())),
        prop_oneof![3 => Just(0u8), 1 => 1..3u8],
        any::<bool>(),
        0..12u8,
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(rates, wakes, budget, reports, succeed, step, resave)| FrameOps {
                rates,
                wakes,
                budget,
                reports,
                succeed,
                step,
                resave,
            },
        )
}

fn rate_of(r: u8) -> Rate {
    match r % 12 {
        0 => Rate::EveryFrame,
        1 => Rate::OnWake,
        r => Rate::Every(1 + u32::from(r) % 9),
    }
}

/// The schedule's rules, looking at every agent in every frame.
struct Naive {
    rates: Vec<Rate>,
    /// The frame each agent has been due since.
    since: Vec<Option<u64>>,
    last: Vec<f64>,
    /// The frame of each agent's last tick.
    last_frame: Vec<Option<u64>>,
    /// The frame before which an agent's rate last changed, and its rate
    /// in the frame before that one.
    was: Vec<Option<(u64, Rate)>>,
    budget: Option<u32>,
    frame: u64,
}

/// A rate's period in frames; 0 for `OnWake`.
fn period(rate: Rate) -> u64 {
    match rate {
        Rate::EveryFrame => 1,
        Rate::Every(k) => u64::from(k),
        _ => 0,
    }
}

/// What the model's frame decided.
struct Picked {
    due: usize,
    /// The agents to tick, in index order.
    taken: Vec<usize>,
    longest_wait: u64,
    waiting: usize,
}

impl Naive {
    fn wake(&mut self, i: usize) {
        self.since[i].get_or_insert(self.frame);
    }

    /// A new rate, its rate of the last frame kept for the next frame.
    fn set_rate(&mut self, i: usize, rate: Rate) {
        let f = self.frame;
        if period(self.rates[i]) != period(rate) && !matches!(self.was[i], Some((w, _)) if w == f) {
            self.was[i] = Some((f, self.rates[i]));
        }
        self.rates[i] = rate;
    }

    fn frame(&mut self) -> Picked {
        let f = self.frame;
        // An agent whose rate changed since the last frame, to another
        // period, that is not due and has gone both its period of the last
        // frame and its period now without a tick (counting this frame) is
        // due.
        for i in 0..self.rates.len() {
            if let Some((w, was)) = self.was[i] {
                let (old, new) = (period(was), period(self.rates[i]));
                let gone = self.last_frame[i].map_or(f + 1, |l| f - l);
                if w == f && old > 0 && new > 0 && old != new && gone >= old.max(new) {
                    self.wake(i);
                }
            }
        }
        self.frame += 1;
        for (i, rate) in self.rates.iter().enumerate() {
            let turn = match *rate {
                Rate::EveryFrame => true,
                Rate::Every(k) => f % u64::from(k) == u64::from(Schedule::phase(i, k)),
                _ => false,
            };
            if turn {
                self.since[i].get_or_insert(f);
            }
        }
        let mut due: Vec<(u64, usize)> = (0..self.rates.len())
            .filter_map(|i| self.since[i].map(|d| (d, i)))
            .collect();
        due.sort();
        let n = due
            .len()
            .min(self.budget.map_or(usize::MAX, |b| b as usize));
        let longest_wait = due[..n].iter().map(|&(d, _)| f - d).max().unwrap_or(0);
        let mut taken: Vec<usize> = due[..n].iter().map(|&(_, i)| i).collect();
        taken.sort();
        for &i in &taken {
            self.since[i] = None;
            self.last_frame[i] = Some(f);
        }
        Picked {
            due: due.len(),
            taken,
            longest_wait,
            waiting: due.len() - n,
        }
    }
}

/// A request as both copies must queue it: the crowds' ids aside.
fn request(r: &ActionRequest) -> (u32, bt_core::ItemIdx, usize, u32, ActionOp) {
    (r.agent, r.item, r.ticket.slot(), r.ticket.serial(), r.op)
}

/// Runs a case's tree on `n` agents, scheduled by `ops`, against the
/// naive model ticking agent by agent.
fn check(case: &Case, n: usize, ops: &[FrameOps]) -> Result<(), TestCaseError> {
    harness::begin(None);
    let built = build(&case.deciders, case.limit);
    let tree = built.tree;
    let capacity = usize::from(case.capacity.max(1)) * n;
    let shared = tree.needs_shared().then(|| tree.new_shared(capacity));
    let twin_shared = tree.needs_shared().then(|| tree.new_shared(capacity));
    let seed = |i: usize| case.seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9));
    let make = |sh: &Option<std::sync::Arc<bt_core::TreeShared>>, i: usize| match sh {
        Some(sh) => tree.new_memory_in(sh, seed(i)),
        None => tree.new_memory(seed(i)),
    };
    let mut memories: Vec<GenMemory> = (0..n).map(|i| make(&shared, i)).collect();
    let mut twin_memories: Vec<GenMemory> = (0..n).map(|i| make(&twin_shared, i)).collect();
    let sim = Sim {
        end_after: case.end_after,
        ..Sim::default()
    };
    let mut agents = vec![sim.clone(); n];
    let mut twins = agents.clone();
    let mut answers: Vec<f32> = case
        .answers
        .iter()
        .map(|&a| ANSWERS[a as usize % ANSWERS.len()])
        .collect();
    let start = 0.5;
    let mut schedule = Schedule::new(n, start);
    let mut naive = Naive {
        rates: vec![Rate::EveryFrame; n],
        since: vec![None; n],
        last: vec![start; n],
        last_frame: vec![None; n],
        was: vec![None; n],
        budget: None,
        frame: 0,
    };
    // Launches heard of and not reported yet: the scheduled copy's ticket
    // and the twin's.
    let mut in_flight: Vec<(Ticket, Ticket)> = Vec::new();
    let mut now = start;
    for (f, (script, op)) in case.ticks.iter().zip(ops).enumerate() {
        let context = |what: &str| format!("frame {f}: {what}");
        // The game's calls, on both sides.
        for &(i, r) in &op.rates {
            let (i, rate) = (usize::from(i) % n, rate_of(r));
            schedule.set_rate(i, rate).unwrap();
            naive.set_rate(i, rate);
        }
        for &i in &op.wakes {
            schedule.wake(usize::from(i) % n);
            naive.wake(usize::from(i) % n);
        }
        if let Some(budget) = op.budget {
            let budget = budget.map(|b| u32::from(b) % (n as u32 + 1));
            schedule.set_budget(budget);
            naive.budget = budget;
        }
        if op.resave {
            let saved = serde_json::to_string(&schedule.snapshot(now)).unwrap();
            let mut de = serde_json::Deserializer::from_str(&saved);
            schedule = Schedule::restore(now, &mut de).unwrap();
        }
        let outcome = if op.succeed {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        };
        for (ticket, twin) in in_flight.drain(..usize::from(op.reports).min(in_flight.len())) {
            let done = schedule.complete(&mut memories, ticket, outcome);
            let i = twin.agent() as usize;
            let twin_done = twin_memories[i].complete(twin, outcome);
            prop_assert_eq!(done, twin_done, "{}", context("completed"));
            if twin_done {
                naive.wake(i);
            }
        }
        for &(id, a) in &script.changes {
            answers[id as usize % MAX_DECIDERS] = ANSWERS[a as usize % ANSWERS.len()];
        }
        for sim in agents.iter_mut().chain(&mut twins) {
            sim.answers.clone_from(&answers);
            sim.ends = script.ends;
            sim.fails = script.fails;
            sim.slot = script.slot;
        }
        now += match op.step {
            11 => -0.5,
            s => f64::from(STEPS[usize::from(s) % STEPS.len()]),
        };
        let base = TickInput::new(now, 0.0)
            .with_decision_bits(u64::from(script.decision))
            .with_stimuli_bits(u64::from(script.stimuli));

        // A tunable changed before the frame, staged on both crowds: in
        // effect from the scheduled crowd's frame, and for the twins when
        // the model's frame starts.
        if let Some((which, value)) = script.tune
            && tree.tunables.is_some()
        {
            let which = usize::from(which) % TUNED_VALUES.len();
            let values = TUNED_VALUES[which];
            let value = values[usize::from(value) % values.len()];
            for sh in shared.iter().chain(&twin_shared) {
                match which {
                    0 => sh.tune(GEN_EVERY, value),
                    1 => sh.tune(GEN_GATE, value as i64),
                    _ => sh.tune(GEN_COOLDOWN, value),
                }
                .expect("a value in range");
            }
        }

        // The scheduled crowd. Callbacks are counted (and DBlocks
        // numbered) from 0 for each agent, on both sides.
        let mut dts = vec![None; n];
        let mut calls = vec![0; n];
        let mut ticking = None;
        let report = tick_scheduled(
            tree,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |i, _, dt| {
                if let Some(j) = ticking.replace(i) {
                    calls[j] = harness::end();
                }
                harness::begin(None);
                dts[i] = Some(dt);
                let mut input = base;
                input.dt = dt;
                input
            },
        );
        if let Some(j) = ticking {
            calls[j] = harness::end();
        }
        // The model's pick, ticked one by one.
        if let Some(sh) = &twin_shared {
            sh.apply_tuning();
        }
        let picked = naive.frame();
        let mut expected = CrowdReport::default();
        for &i in &picked.taken {
            let dt = (now - naive.last[i]).max(0.0) as f32;
            naive.last[i] = now;
            prop_assert_eq!(dts[i], Some(dt), "{}", context(&format!("agent {i}'s dt")));
            let mut input = base.with_agent(i as u32);
            input.dt = dt;
            harness::begin(None);
            expected.add(
                i,
                bt_core::tick(tree, &mut twins[i], &mut twin_memories[i], &input),
            );
            prop_assert_eq!(
                calls[i],
                harness::end(),
                "{}",
                context(&format!("agent {i}'s calls"))
            );
        }
        prop_assert_eq!(
            dts.iter().filter(|d| d.is_some()).count(),
            picked.taken.len(),
            "{}",
            context("agents ticked")
        );
        prop_assert_eq!(
            (
                report.due,
                report.ticked,
                report.waiting,
                report.longest_wait
            ),
            (
                picked.due as u32,
                picked.taken.len() as u32,
                picked.waiting as u32,
                picked.longest_wait
            ),
            "{}",
            context("the frame's counts")
        );
        prop_assert_eq!(report.crowd, expected, "{}", context("reports"));
        if let Some(b) = schedule.budget() {
            prop_assert!(report.ticked <= b);
        }
        for i in 0..n {
            let context = |what: &str| context(&format!("agent {i}: {what}"));
            prop_assert_eq!(
                schedule.is_due(i),
                naive.since[i].is_some(),
                "{}",
                context("due")
            );
            prop_assert_eq!(
                schedule.last_tick_frame(i),
                naive.last_frame[i],
                "{}",
                context("last tick frame")
            );
            prop_assert_eq!(
                schedule.last_tick(i).to_bits(),
                naive.last[i].to_bits(),
                "{}",
                context("last tick")
            );
            prop_assert_eq!(
                &agents[i].journal,
                &twins[i].journal,
                "{}",
                context("callbacks")
            );
            let (m, t) = (&memories[i], &twin_memories[i]);
            prop_assert_eq!(path_of(m), path_of(t), "{}", context("paths"));
            prop_assert_eq!(m.rng_state(), t.rng_state(), "{}", context("generators"));
            prop_assert_eq!(live_blocks(m), live_blocks(t), "{}", context("blocks"));
            for node in tree.nodes() {
                if let Some(slot) = node.timer_slot() {
                    prop_assert_eq!(m.timer(slot).to_bits(), t.timer(slot).to_bits());
                }
                if let Some(slot) = node.action_slot() {
                    prop_assert_eq!(m.action_state(slot), t.action_state(slot));
                }
            }
        }
        if let (Some(sh), Some(twin)) = (&shared, &twin_shared) {
            prop_assert_eq!(
                (sh.gates_held(), sh.roles_held(), sh.lost_requests()),
                (twin.gates_held(), twin.roles_held(), twin.lost_requests()),
                "{}",
                context("shared counts")
            );
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            sh.drain_actions(|r| ours.push(r));
            twin.drain_actions(|r| theirs.push(r));
            let key = |rs: &[ActionRequest]| rs.iter().map(request).collect::<Vec<_>>();
            prop_assert_eq!(key(&ours), key(&theirs), "{}", context("requests"));
            for (a, b) in ours.iter().zip(&theirs) {
                match a.op {
                    ActionOp::Launch(_) => in_flight.push((a.ticket, b.ticket)),
                    ActionOp::Cancel => in_flight.retain(|&(t, _)| t != a.ticket),
                }
            }
        }
    }
    harness::end();
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// A scheduled crowd makes the decisions of its agents ticked one by
    /// one at the frames the schedule's rules pick, with their own `dt`.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow under Miri
    fn scheduled_crowds_match_agents_ticked_one_by_one(
        case in case(16, 40, false),
        n in 1..10usize,
        ops in prop::collection::vec(frame_ops(), 40),
    ) {
        check(&case, n, &ops)?;
    }
}
