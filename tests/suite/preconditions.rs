//! Preconditions, timers and stimuli.

use std::cell::RefCell;

use bt_core::{
    Decide, Rejection, Stimuli, StimuliError, TickInput, TraceRecorder, behavior, decider, group,
    tick, tick_traced, tree,
};

bitflags::bitflags! {
    /// Decision flags of these tests.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Day: u8 {
        const DAY = 1 << 0;
        const WARM = 1 << 1;
        const RAIN = 1 << 2;
    }

    /// Stimuli of these tests; HIT is far up the 64-bit word.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sense: u64 {
        const NOISE = 1 << 0;
        const SMELL = 1 << 1;
        const HIT = 1 << 63;
    }
}

/// The agent: a log of the `decide` calls, with the tick time of each.
#[derive(Default)]
pub struct Probe {
    pub decides: RefCell<Vec<(&'static str, f64)>>,
    pub accept: bool,
}

impl Probe {
    fn decide(&self, name: &'static str, d: &Decide) -> f32 {
        self.decides.borrow_mut().push((name, d.now()));
        if self.accept { 1.0 } else { 0.0 }
    }

    fn calls(&self) -> Vec<&'static str> {
        self.decides.borrow().iter().map(|(n, _)| *n).collect()
    }
}

behavior! { RUN: Probe }

macro_rules! probe {
    ($name:ident $(, $key:ident : $($v:tt)+)?) => {
        decider! { $name: Probe => RUN, decide: |p, d| p.decide(stringify!($name), d) $(, $key: $($v)+)? }
    };
}

probe!(ALL_DAY_WARM, needs_all: Day::DAY | Day::WARM);
probe!(ANY_DAY_WARM, needs_any: Day::DAY | Day::WARM);
probe!(NONE_RAIN, needs_none: Day::RAIN);
probe!(NOT_ALL_DAY_RAIN, needs_not_all: Day::DAY | Day::RAIN);
probe!(S_ALL, stimuli_all: Sense::NOISE | Sense::HIT);
probe!(S_ANY, stimuli_any: Sense::SMELL | Sense::HIT);
probe!(S_NONE, stimuli_none: Sense::HIT);
probe!(S_NOT_ALL, stimuli_not_all: Sense::NOISE | Sense::SMELL);
probe!(TIMED, every: 1.0);
tree! { T_ALL_DAY_WARM: Probe = ALL_DAY_WARM }
tree! { T_ANY_DAY_WARM: Probe = ANY_DAY_WARM }
tree! { T_NONE_RAIN: Probe = NONE_RAIN }
tree! { T_NOT_ALL_DAY_RAIN: Probe = NOT_ALL_DAY_RAIN }
tree! { T_S_ALL: Probe = S_ALL }
tree! { T_S_ANY: Probe = S_ANY }
tree! { T_S_NONE: Probe = S_NONE }
tree! { T_S_NOT_ALL: Probe = S_NOT_ALL }
tree! { T_TIMED: Probe = TIMED }

/// Ticks a one-decider tree once with `decision` and `stimuli`; returns
/// whether its `decide` was called (it accepts, so that is also whether the
/// decider activated).
macro_rules! passes {
    ($tree:ident, $decision:expr, $stimuli:expr) => {{
        let mut probe = Probe {
            accept: true,
            ..Probe::default()
        };
        let mut memory = $tree.new_memory(0);
        let input = TickInput::new(0.0, 0.1)
            .with_decision($decision)
            .with_stimuli($stimuli);
        let report = tick(&$tree, &mut probe, &mut memory, &input).unwrap();
        let called = !probe.calls().is_empty();
        assert_eq!(called, report.leaf.is_some(), "{}", stringify!($tree));
        called
    }};
}

#[test]
fn each_flag_test_passes_and_fails() {
    let none = Sense::empty();
    let nd = Day::empty();
    // Decision flags: all set, any set, all clear, any clear.
    assert!(passes!(
        T_ALL_DAY_WARM,
        Day::DAY | Day::WARM | Day::RAIN,
        none
    ));
    assert!(!passes!(T_ALL_DAY_WARM, Day::DAY, none));
    assert!(passes!(T_ANY_DAY_WARM, Day::WARM, none));
    assert!(!passes!(T_ANY_DAY_WARM, Day::RAIN, none));
    assert!(passes!(T_NONE_RAIN, Day::DAY, none));
    assert!(!passes!(T_NONE_RAIN, Day::RAIN | Day::DAY, none));
    assert!(passes!(T_NOT_ALL_DAY_RAIN, Day::DAY, none));
    assert!(passes!(T_NOT_ALL_DAY_RAIN, nd, none));
    assert!(!passes!(T_NOT_ALL_DAY_RAIN, Day::DAY | Day::RAIN, none));
    // Stimuli flags, the same four tests, up to bit 63.
    assert!(passes!(T_S_ALL, nd, Sense::NOISE | Sense::HIT));
    assert!(!passes!(T_S_ALL, nd, Sense::HIT));
    assert!(passes!(T_S_ANY, nd, Sense::HIT));
    assert!(!passes!(T_S_ANY, nd, Sense::NOISE));
    assert!(passes!(T_S_NONE, nd, Sense::NOISE));
    assert!(!passes!(T_S_NONE, nd, Sense::HIT | Sense::NOISE));
    assert!(passes!(T_S_NOT_ALL, nd, Sense::NOISE | Sense::HIT));
    assert!(!passes!(T_S_NOT_ALL, nd, Sense::NOISE | Sense::SMELL));
    // A decider without preconditions always reaches its decide.
    assert!(passes!(T_TIMED, nd, none));
}

probe!(COMBINED, needs_all: Day::DAY, needs_none: Day::RAIN, stimuli_any: Sense::SMELL | Sense::NOISE, stimuli_none: Sense::HIT, every: 5.0);
tree! { T_COMBINED: Probe = COMBINED }

#[test]
fn combined_preconditions_all_have_to_pass_in_order() {
    let cases: [(Day, Sense, Option<Rejection>); 6] = [
        (Day::DAY, Sense::SMELL, None),
        (Day::DAY | Day::WARM, Sense::NOISE | Sense::SMELL, None),
        (Day::WARM, Sense::SMELL, Some(Rejection::Decision)),
        (
            Day::DAY | Day::RAIN,
            Sense::SMELL,
            Some(Rejection::Decision),
        ),
        // Both words fail: the decision flags are checked first.
        (Day::RAIN, Sense::HIT, Some(Rejection::Decision)),
        (
            Day::DAY,
            Sense::SMELL | Sense::HIT,
            Some(Rejection::Stimuli),
        ),
    ];
    for (decision, stimuli, rejection) in cases {
        let mut probe = Probe {
            accept: true,
            ..Probe::default()
        };
        let mut memory = T_COMBINED.new_memory(0);
        let mut trace = TraceRecorder::new();
        let input = TickInput::new(0.0, 0.1)
            .with_decision(decision)
            .with_stimuli(stimuli);
        tick_traced(&T_COMBINED, &mut probe, &mut memory, &input, &mut trace).unwrap();
        let case = format!("{decision:?} {stimuli:?}");
        match rejection {
            None => assert_eq!(probe.calls(), ["COMBINED"], "{case}"),
            Some(by) => {
                assert!(probe.calls().is_empty(), "{case}: decide not called");
                let line = format!("reject 0:COMBINED ({})", by.as_str());
                assert!(trace.text().contains(&line), "{case}: {}", trace.text());
                // A flag rejection does not use up the timer.
                assert_eq!(memory.timer(0), f64::NEG_INFINITY, "{case}");
            }
        }
    }
}

#[test]
fn timer_lets_decide_run_once_per_period_with_uneven_steps() {
    let mut probe = Probe::default(); // rejects: the decider stays a candidate
    let mut memory = T_TIMED.new_memory(0);
    let times = [
        0.0, 0.3, 0.95, 1.0, 1.05, 1.7, 1.999, 2.0, 2.6, 3.1, 3.2, 4.0999, 4.1,
    ];
    let mut last = 0.0;
    for now in times {
        let dt = (now - last) as f32;
        last = now;
        tick(&T_TIMED, &mut probe, &mut memory, &TickInput::new(now, dt)).unwrap();
    }
    let ran: Vec<f64> = probe.decides.borrow().iter().map(|(_, t)| *t).collect();
    // Counted from the last call: 0.0, then 1.0 (not 0.95), 2.0 (not
    // 1.999), 3.1, 4.1 (not 4.0999).
    assert_eq!(ran, [0.0, 1.0, 2.0, 3.1, 4.1]);
    assert_eq!(memory.timer(0), 4.1);
}

behavior! { HOLD: Probe }
decider! { GUARD: Probe => HOLD, decide: |p, d| p.decide("GUARD", d), needs_all: Day::DAY, stimuli_none: Sense::HIT, every: 10.0 }
decider! { REST: Probe => HOLD }
group! { DAY_ROOT: Probe, prioritized [GUARD, REST] }
tree! { T_DAY: Probe = DAY_ROOT }

#[test]
fn preconditions_are_not_checked_again_on_the_active_decider() {
    let mut probe = Probe {
        accept: true,
        ..Probe::default()
    };
    let mut memory = T_DAY.new_memory(0);
    let day = TickInput::new(0.0, 1.0).with_decision(Day::DAY);
    tick(&T_DAY, &mut probe, &mut memory, &day).unwrap();
    assert_eq!(memory.leaf(), T_DAY.find("GUARD"));
    // Night, a hit, and the timer not due: all three preconditions would
    // reject GUARD now, but it is active, so none of them is tested.
    let night = TickInput::new(1.0, 1.0).with_stimuli(Sense::HIT);
    for _ in 0..3 {
        tick(&T_DAY, &mut probe, &mut memory, &night).unwrap();
    }
    assert_eq!(memory.leaf(), T_DAY.find("GUARD"));
    assert_eq!(probe.calls(), ["GUARD"]);
}

// The trace of rejections: each candidate stopped by a different check.
probe!(WANTS_DAY, needs_all: Day::DAY);
probe!(FEARS_HIT, stimuli_none: Sense::HIT);
probe!(EVERY_TWO, every: 2.0);
probe!(JUST_DECIDES);
decider! { FALLBACK: Probe => RUN }
group! { CHECKS: Probe, prioritized [WANTS_DAY, FEARS_HIT, EVERY_TWO, JUST_DECIDES, FALLBACK] }
tree! { T_CHECKS: Probe = CHECKS }

#[test]
fn trace_shows_which_check_rejected_which_decider() {
    let mut probe = Probe::default();
    let mut memory = T_CHECKS.new_memory(0);
    let mut stimuli = Stimuli::<Sense, 4>::new();
    let mut trace = TraceRecorder::new();
    stimuli.set(Sense::HIT, 0, Some(1.0)).unwrap();
    for (i, note) in [
        "hit, night: EVERY_TWO's timer runs its first decide",
        "hit, night, timer not due",
        "the hit expired: FEARS_HIT is asked",
        "day, timer due again",
    ]
    .into_iter()
    .enumerate()
    {
        let now = f64::from(i as u32) * 0.7;
        let decision = if i == 3 { Day::DAY } else { Day::empty() };
        let input = TickInput::new(now, 0.7)
            .with_decision(decision)
            .with_stimuli(stimuli.update(0.7));
        trace.note(note);
        tick_traced(&T_CHECKS, &mut probe, &mut memory, &input, &mut trace).unwrap();
    }
    snapshot!(trace.text());
}

// Stimuli.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cause {
    Bite { by: u32, damage: f32 },
    Sound(u16),
}

#[test]
fn stimulus_expires_exactly_at_its_time_out() {
    let mut stimuli = Stimuli::<Sense, 2>::new();
    stimuli.set(Sense::HIT, 9, Some(2.0)).unwrap();
    // Set for this tick: reported now and for the ticks less than 2.0 s later.
    let seen: Vec<bool> = (0..6)
        .map(|_| stimuli.update(0.5).contains(Sense::HIT))
        .collect();
    assert_eq!(seen, [true, true, true, true, false, false]);
    assert!(stimuli.is_empty());
    assert_eq!(stimuli.get(Sense::HIT), None);

    // A stimulus without time-out stays until cleared.
    stimuli.set(Sense::SMELL, 1, None).unwrap();
    for _ in 0..100 {
        assert_eq!(stimuli.update(1000.0), Sense::SMELL);
    }
    assert_eq!(stimuli.clear(Sense::SMELL).map(|s| s.payload), Some(1));
    assert_eq!(stimuli.update(0.1), Sense::empty());
    assert_eq!(stimuli.clear(Sense::SMELL), None);
}

#[test]
fn setting_a_live_stimulus_refreshes_it() {
    let mut stimuli = Stimuli::<Sense, 1>::new();
    stimuli.set(Sense::NOISE, 1, Some(1.0)).unwrap();
    stimuli.update(0.5);
    stimuli.update(0.25);
    assert_eq!(stimuli.get(Sense::NOISE).unwrap().remaining, Some(0.75));
    // Same token again: new payload and a full time-out, in the same place
    // (a full `Stimuli` still takes it).
    stimuli.set(Sense::NOISE, 2, Some(1.0)).unwrap();
    let seen: Vec<bool> = (0..3)
        .map(|_| stimuli.update(0.5) == Sense::NOISE)
        .collect();
    assert_eq!(seen, [true, true, false]);
}

#[test]
fn payload_round_trips() {
    let mut stimuli = Stimuli::<Sense, 4, Cause>::new();
    let bite = Cause::Bite {
        by: 42,
        damage: 1.5,
    };
    stimuli.set(Sense::HIT, bite, Some(3.0)).unwrap();
    stimuli.set(Sense::NOISE, Cause::Sound(440), None).unwrap();
    stimuli.update(1.0);
    stimuli.update(1.0);
    let hit = stimuli.get(Sense::HIT).unwrap();
    assert_eq!(hit.payload, bite);
    assert_eq!(hit.bit, 63);
    assert_eq!(hit.remaining, Some(2.0));
    let noise = stimuli.get(Sense::NOISE).unwrap();
    assert_eq!((noise.payload, noise.remaining), (Cause::Sound(440), None));
    let all: Vec<u8> = stimuli.iter().map(|s| s.bit).collect();
    assert_eq!(all, [63, 0]);
    assert_eq!(stimuli.flags(), Sense::HIT | Sense::NOISE);
}

#[test]
fn a_full_stimuli_refuses_and_keeps_what_it_has() {
    let mut stimuli = Stimuli::<Sense, 2>::new();
    stimuli.set(Sense::NOISE, 1, None).unwrap();
    stimuli.set(Sense::SMELL, 2, None).unwrap();
    assert!(stimuli.is_full());
    let err = stimuli.set(Sense::HIT, 3, Some(1.0)).unwrap_err();
    assert_eq!(
        err,
        StimuliError::Full {
            bit: 63,
            capacity: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "stimulus bit 63: all 2 places hold live stimuli"
    );
    assert_eq!(stimuli.update(0.1), Sense::NOISE | Sense::SMELL);
    assert_eq!(stimuli.get(Sense::NOISE).map(|s| s.payload), Some(1));
}

#[test]
fn a_stimulus_is_one_flag_with_a_positive_time_out() {
    let mut stimuli = Stimuli::<Sense, 4>::new();
    assert!(matches!(
        stimuli.set(Sense::NOISE | Sense::SMELL, 0, None),
        Err(StimuliError::NotOneFlag { bits: 0b11 })
    ));
    assert!(matches!(
        stimuli.set(Sense::empty(), 0, None),
        Err(StimuliError::NotOneFlag { .. })
    ));
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            stimuli.set(Sense::HIT, 0, Some(bad)),
            Err(StimuliError::BadTimeout { bit: 63, .. })
        ));
    }
    assert!(stimuli.is_empty());
}

// Stimuli wake a decider: a hit preempts resting, and the payload reaches
// the behavior through the agent.
#[derive(Default)]
pub struct Critter {
    pub stimuli: Stimuli<Sense, 4, u32>,
    pub fought: Vec<u32>,
}

behavior! { FIGHT_BACK: Critter,
    tick: |c, _cx| {
        let attacker = c.stimuli.get(Sense::HIT).map(|s| s.payload);
        c.fought.extend(attacker);
        attacker.is_some()
    },
}
behavior! { DOZE: Critter }
decider! { FIGHT: Critter => FIGHT_BACK, stimuli_all: Sense::HIT }
decider! { SLEEP: Critter => DOZE }
group! { CRITTER_ROOT: Critter, prioritized [FIGHT, SLEEP] }
tree! { CRITTER: Critter = CRITTER_ROOT }

#[test]
fn a_hit_stimulus_wakes_fight_until_it_expires() {
    let mut critter = Critter::default();
    let mut memory = CRITTER.new_memory(0);
    let mut leaves = Vec::new();
    for i in 0..6 {
        if i == 1 {
            critter.stimuli.set(Sense::HIT, 77, Some(1.0)).unwrap();
        }
        let flags = critter.stimuli.update(0.5);
        let input = TickInput::new(f64::from(i) * 0.5, 0.5).with_stimuli(flags);
        tick(&CRITTER, &mut critter, &mut memory, &input).unwrap();
        leaves.push(CRITTER.node(memory.leaf().unwrap()).name());
    }
    assert_eq!(
        leaves,
        ["SLEEP", "FIGHT", "FIGHT", "SLEEP", "SLEEP", "SLEEP"]
    );
    assert_eq!(critter.fought, [77, 77]);
}

// A once-a-second check above a fallback: the check's behavior ends in
// the tick it starts, the fallback runs until preempted.
behavior! { ONCE: Probe, tick: |_p, _cx| false }
behavior! { KEEP: Probe, tick: |_p, _cx| true }
decider! { CHECK: Probe => ONCE, every: 1.0, needs_all: Day::DAY }
decider! { STAY: Probe => KEEP }
group! { CHECK_ROOT: Probe, prioritized [CHECK, STAY] }
tree! { T_CHECK: Probe = CHECK_ROOT }

/// The ticks at `times`, with the decision flags `day(now)`, in which
/// CHECK ran (the path changed). Untraced ticks (the steady walk) and
/// traced ones (the step machine every tick) must report the same.
fn check_runs(times: &[f64], day: impl Fn(f64) -> Day) -> Vec<f64> {
    let mut probe = Probe::default();
    let mut untraced = T_CHECK.new_memory(0);
    let mut traced = T_CHECK.new_memory(0);
    let mut runs = Vec::new();
    for &now in times {
        let input = TickInput::new(now, 0.25).with_decision_bits(u64::from(day(now).bits()));
        let a = tick(&T_CHECK, &mut probe, &mut untraced, &input).unwrap();
        let mut rec = TraceRecorder::default();
        let b = tick_traced(&T_CHECK, &mut probe, &mut traced, &input, &mut rec).unwrap();
        assert_eq!(a, b, "untraced and traced reports at {now}");
        assert_eq!(T_CHECK.node(a.leaf.unwrap()).name(), "STAY");
        if a.activated > 0 && now > 0.0 {
            runs.push(now);
        }
    }
    runs
}

#[test]
fn a_sibling_held_back_by_its_timer_starts_the_tick_it_runs_out_with_the_same_flags() {
    // Same flags every tick: the walk keeps what it found from one tick to
    // the next, and must still let CHECK in exactly when its second is up.
    let times: Vec<f64> = (0..14).map(|i| f64::from(i) * 0.25).collect();
    assert_eq!(check_runs(&times, |_| Day::DAY), [1.0, 2.0, 3.0]);
}

#[test]
fn flags_that_change_and_change_back_are_tested_again() {
    // Night hides CHECK from 0.5 to 1.25: when day comes back at 1.5 its
    // timer has long run out, and it starts at once, not at 2.0.
    let times: Vec<f64> = (0..14).map(|i| f64::from(i) * 0.25).collect();
    let day = |now: f64| {
        if (0.5..1.5).contains(&now) {
            Day::empty()
        } else {
            Day::DAY
        }
    };
    assert_eq!(check_runs(&times, day), [1.5, 2.5]);
}

// Typed flags in callbacks: `decide` and behaviors read the tick's words as
// the tree's own flag types, whatever their width.

#[derive(Default)]
pub struct Reader {
    seen: Vec<(Day, Sense, &'static str)>,
}

behavior! { R_READ: Reader, tick: |r, cx| {
    r.seen.push((cx.decision_as::<Day>(), cx.stimuli_as::<Sense>(), "tick"));
    true
} }
decider! { R_READING: Reader => R_READ, when: |r, d| {
    let _ = r;
    d.decision_as::<Day>().contains(Day::WARM) && d.stimuli_as::<Sense>().contains(Sense::HIT)
} }
decider! { R_IDLE: Reader => R_READ }
group! { R_ROOT: Reader, prioritized [R_READING, R_IDLE] }
tree! { READER: Reader = R_ROOT }

#[test]
fn callbacks_read_the_flag_words_as_the_trees_flag_types() {
    let mut reader = Reader::default();
    let mut memory = READER.new_memory(0);
    let input = TickInput::new(0.0, 0.1)
        .with_decision(Day::WARM | Day::RAIN)
        .with_stimuli(Sense::HIT | Sense::NOISE);
    let report = tick(&READER, &mut reader, &mut memory, &input).unwrap();
    assert_eq!(report.leaf, READER.find("R_READING"));
    assert_eq!(
        reader.seen,
        [(Day::WARM | Day::RAIN, Sense::HIT | Sense::NOISE, "tick")]
    );
    // A word wider than the type keeps the type's own bits.
    let input = TickInput::new(1.0, 0.1).with_decision_bits(0x1_02);
    tick(&READER, &mut reader, &mut memory, &input).unwrap();
    assert_eq!(reader.seen[1].0, Day::WARM);
    // A fresh memory's decide reads it too: no HIT, no reading.
    let mut memory = READER.new_memory(0);
    tick(&READER, &mut reader, &mut memory, &input).unwrap();
    assert_eq!(memory.leaf(), READER.find("R_IDLE"));
}
