//! Save and restore: a restored run continues exactly as an uninterrupted
//! one, and bad snapshots give typed errors, never a panic, a leak or a
//! double drop.
//!
//! The property tests run `BT_PROPTEST_CASES` cases each (default 256),
//! from the fixed seed of the differential tests. A long run:
//!
//! ```sh
//! BT_PROPTEST_CASES=10000 cargo test --release --test suite persist
//! ```
//!
//! Under Miri only the pinned decoder cases run (`cargo +nightly miri test
//! -p bt-suite --test suite persist`).

use std::cell::Cell;
use std::fmt::Display;
use std::sync::Arc;

use bt_core::{
    Action, ActionOp, ActionState, AgentMemory, Event, Outcome as ActionOutcome, RestoreError,
    SnapshotError, Stimuli, TickInput, Tree, TreeShared, behavior, decider, group, tick,
    tick_traced, tree,
};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::model::{
    ANSWERS, Call, Case, Events, GenMemory, GenTree, MAX_DECIDERS, STEPS, Sim, build, case, harness,
};

/// The differential tests' configuration, with 256 cases unless
/// `BT_PROPTEST_CASES` says otherwise.
fn config() -> ProptestConfig {
    let mut config = crate::differential::config();
    if std::env::var_os("BT_PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    config
}

// ---------------------------------------------------------------------------
// Formats.

/// The two formats snapshots are tested in: compact binary and JSON.
#[derive(Clone, Copy, Debug)]
enum Format {
    Postcard,
    Json,
}

fn save<T: Serialize>(format: Format, value: &T) -> Vec<u8> {
    match format {
        Format::Postcard => postcard::to_allocvec(value).expect("postcard writes it"),
        Format::Json => serde_json::to_vec(value).expect("JSON writes it"),
    }
}

/// The format's error as text, so both formats give one type.
fn typed<T, E: Display>(r: Result<T, RestoreError<E>>) -> Result<T, RestoreError<String>> {
    r.map_err(|e| match e {
        RestoreError::Format(e) => RestoreError::Format(e.to_string()),
        RestoreError::Snapshot(e) => RestoreError::Snapshot(e),
    })
}

fn load_memory<A: 'static, const L: usize, const S: usize, const N: usize>(
    format: Format,
    bytes: &[u8],
    memory: &mut AgentMemory<A, L, S, N>,
    now: f64,
) -> Result<(), RestoreError<String>> {
    match format {
        Format::Postcard => {
            typed(memory.restore(now, &mut postcard::Deserializer::from_bytes(bytes)))
        }
        Format::Json => {
            typed(memory.restore(now, &mut serde_json::Deserializer::from_slice(bytes)))
        }
    }
}

fn load_stimuli(format: Format, bytes: &[u8]) -> Result<Stimuli<(), 8, u32>, RestoreError<String>> {
    match format {
        Format::Postcard => typed(Stimuli::restore(&mut postcard::Deserializer::from_bytes(
            bytes,
        ))),
        Format::Json => typed(Stimuli::restore(&mut serde_json::Deserializer::from_slice(
            bytes,
        ))),
    }
}

fn load_shared<A: 'static, const L: usize, const S: usize, const N: usize>(
    format: Format,
    bytes: &[u8],
    shared: &TreeShared,
    tree: &'static Tree<A, L, S, N>,
    now: f64,
) -> Result<(), RestoreError<String>> {
    match format {
        Format::Postcard => {
            typed(shared.restore(tree, now, &mut postcard::Deserializer::from_bytes(bytes)))
        }
        Format::Json => {
            typed(shared.restore(tree, now, &mut serde_json::Deserializer::from_slice(bytes)))
        }
    }
}

// ---------------------------------------------------------------------------
// Continuation on the differential generator's random trees: every policy,
// flag and timer preconditions, DBlocks, slot groups, memory blocks, and
// stimuli with time-outs.

/// Where a run is cut: before tick `at` (a crowd: after its agents
/// ticked, before the game drains the queue), through `format`, restored under
/// a clock moved by `shift` seconds.
#[derive(Clone, Copy, Debug)]
struct Cut {
    at: usize,
    format: Format,
    shift: f64,
}

/// What one tick showed: its events (only compared without a clock
/// shift: they carry the clock), the callbacks the agent saw (times moved
/// back by the shift), the leaf and the active path.
#[derive(Debug, PartialEq)]
struct Seen {
    events: Option<Vec<Event>>,
    journal: Vec<Call>,
    outcome: Result<Option<u16>, String>,
    path: Vec<(u16, f64)>,
}

/// Runs `case`, cut and restored into a fresh memory and fresh stimuli at
/// `cut`, and returns what each tick showed.
fn drive(case: &Case, cut: Option<Cut>) -> Vec<Seen> {
    let built = build(&case.deciders, case.limit);
    let tree: &'static GenTree = built.tree;
    let mut memory: GenMemory = tree.new_memory(case.seed);
    let mut stimuli = Stimuli::<(), 8, u32>::new();
    let mut answers: Vec<f32> = case
        .answers
        .iter()
        .map(|&a| ANSWERS[a as usize % ANSWERS.len()])
        .collect();
    let mut sim = Sim {
        end_after: case.end_after,
        ..Sim::default()
    };
    let mut now = 0.0f64;
    let mut offset = 0.0f64;
    let mut seen = Vec::new();
    for (t, script) in case.ticks.iter().enumerate() {
        if let Some(c) = cut
            && c.at == t
        {
            let bytes = save(c.format, &memory.snapshot(now + offset));
            let stimuli_bytes = save(c.format, &stimuli);
            drop(memory);
            offset += c.shift;
            memory = tree.new_memory(0xDEAD);
            load_memory(c.format, &bytes, &mut memory, now + offset).expect("restores");
            stimuli = load_stimuli(c.format, &stimuli_bytes).expect("restores");
        }
        for &(id, a) in &script.changes {
            answers[id as usize % MAX_DECIDERS] = ANSWERS[a as usize % ANSWERS.len()];
        }
        sim.answers.clone_from(&answers);
        sim.ends = script.ends;
        sim.fails = script.fails;
        sim.slot = script.slot;
        for bit in 0..4u8 {
            if script.stimuli & (1 << bit) != 0 {
                let timeout = (bit != 3).then_some(0.75);
                stimuli.set_bit(bit, t as u32, timeout).unwrap();
            }
        }
        let dt = STEPS[script.dt as usize % STEPS.len()];
        let word = stimuli.update_bits(dt);
        let input = TickInput::new(now + offset, dt)
            .with_decision_bits(u64::from(script.decision))
            .with_stimuli_bits(word)
            .with_agent(7);
        let mut events = Events::default();
        harness::begin(None);
        let outcome = tick_traced(tree, &mut sim, &mut memory, &input, &mut events)
            .map(|r| r.behavior.map(|i| i.0))
            .map_err(|e| e.to_string());
        harness::end();
        let mut journal = std::mem::take(&mut sim.journal);
        for call in &mut journal {
            let (Call::Activate { seen, .. }
            | Call::Tick { seen, .. }
            | Call::Deactivate { seen, .. }) = call;
            seen.now -= offset;
            seen.since -= offset;
        }
        seen.push(Seen {
            events: (offset == 0.0).then_some(events.0),
            journal,
            outcome,
            path: memory
                .active_path()
                .map(|l| (l.item.0, l.since - offset))
                .collect(),
        });
        now += f64::from(dt);
    }
    seen
}

/// Compares two runs tick by tick, events only where both have them.
fn same_runs(straight: &[Seen], restored: &[Seen]) -> Result<(), TestCaseError> {
    prop_assert_eq!(straight.len(), restored.len());
    for (t, (a, b)) in straight.iter().zip(restored).enumerate() {
        if let (Some(x), Some(y)) = (&a.events, &b.events) {
            prop_assert_eq!(x, y, "events of tick {}", t);
        }
        prop_assert_eq!(&a.journal, &b.journal, "callbacks of tick {}", t);
        prop_assert_eq!(&a.outcome, &b.outcome, "outcome of tick {}", t);
        prop_assert_eq!(&a.path, &b.path, "active path after tick {}", t);
    }
    Ok(())
}

fn cut() -> impl Strategy<Value = (usize, bool, bool)> {
    (0..14usize, any::<bool>(), prop::bool::weighted(0.25))
}

proptest! {
    #![proptest_config(config())]

    /// Run k ticks, save, restore into a fresh memory (and fresh stimuli),
    /// run to the end: every event, callback (with what it saw), outcome
    /// and active path equals a run that never stopped, in both formats,
    /// also under a clock moved by the restore. Every block value is
    /// dropped exactly once.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow
    fn a_restored_agent_continues_as_if_never_stopped(
        case in case(16, 12, false),
        (at, json, shifted) in cut(),
    ) {
        harness::quiet_scripted_panics();
        let live = harness::live_mems();
        let bad = harness::bad_drops();
        let straight = drive(&case, None);
        let cut = Cut {
            at: at % (case.ticks.len() + 1),
            format: if json { Format::Json } else { Format::Postcard },
            shift: if shifted { 1024.0 } else { 0.0 },
        };
        let restored = drive(&case, Some(cut));
        same_runs(&straight, &restored)?;
        prop_assert_eq!(harness::live_mems(), live, "every block value dropped");
        prop_assert_eq!(harness::bad_drops(), bad, "none dropped twice");
    }
}

// ---------------------------------------------------------------------------
// Continuation of a crowd with shared state: gates, a global cooldown, a
// group role and deferred actions, with their tickets outstanding across
// the restore.

bitflags::bitflags! {
    /// What a soldier wants this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Want: u8 {
        const FLANK = 1 << 0;
        const FETCH = 1 << 1;
        const BARK = 1 << 2;
        const DRILL = 1 << 3;
    }
}

/// A soldier: its wishes for the tick and what its behaviors saw.
#[derive(Default)]
struct Soldier {
    id: u32,
    want: Want,
    /// How far the clock was moved by a restore: the log shows times on
    /// the original clock.
    offset: f64,
    log: Vec<String>,
}

/// A persisted count.
#[derive(Default, Serialize, Deserialize)]
struct Count(u32);

behavior! { S_FLANK: Soldier, memory: Count, persist,
    tick: |s, m, cx| { m.0 += 1; s.log.push(format!("flank {} since {}", m.0, cx.since - s.offset)); m.0 < 3 },
}
behavior! { S_FETCH: Soldier, memory: Count, persist,
    launch: |s, m, _cx| { m.0 += 1; Some(Action::new(7, u64::from(s.id) << 8 | u64::from(m.0))) },
    deactivate: |s, m, cx| s.log.push(format!("fetch {} ended {:?}", m.0, cx.action)),
}
behavior! { S_BARK: Soldier, memory: Count, persist,
    tick: |s, m, cx| { m.0 += 1; s.log.push(format!("bark {} at {}", m.0, cx.now - s.offset)); m.0 < 2 },
}
behavior! { S_DRILL: Soldier, memory: Count, persist,
    tick: |s, m, _cx| { m.0 += 1; s.log.push(format!("drill {}", m.0)); true },
}
behavior! { S_IDLE: Soldier }
decider! { S_FLANKING: Soldier => S_FLANK, needs_all: Want::FLANK, together: 2 }
decider! { S_FETCHING: Soldier => S_FETCH, needs_all: Want::FETCH, gate: 2 }
decider! { S_BARKING: Soldier => S_BARK, needs_all: Want::BARK, cooldown: 1.0 }
decider! { S_LEFT: Soldier => S_DRILL, every: 1.5 }
decider! { S_RIGHT: Soldier => S_DRILL }
group! { S_DRILLS: Soldier, shuffle [S_LEFT, S_RIGHT], needs_all: Want::DRILL }
decider! { S_REST: Soldier => S_IDLE }
group! { S_ROOT: Soldier, prioritized [S_FLANKING, S_FETCHING, S_BARKING, S_DRILLS, S_REST] }
tree! { SQUAD: Soldier = S_ROOT, memory: SquadMemory }

/// One crowd tick of the script: each soldier's wishes, and what the game
/// does with each soldier's outstanding requests (bit 0: report back now,
/// bit 1: as failed).
#[derive(Clone, Debug)]
struct CrowdTick {
    wants: [u8; 4],
    reports: [u8; 4],
    dt: u8,
}

fn crowd_tick() -> impl Strategy<Value = CrowdTick> {
    (any::<[u8; 4]>(), any::<[u8; 4]>(), 0..4u8).prop_map(|(wants, reports, dt)| CrowdTick {
        wants,
        reports,
        dt,
    })
}

/// What a crowd run showed, tick by tick: every soldier's events and log,
/// and the requests the game system received.
type CrowdSeen = Vec<(Vec<Vec<Event>>, Vec<Vec<String>>, Vec<String>)>;

fn drive_crowd(script: &[CrowdTick], cut: Option<Cut>) -> CrowdSeen {
    let mut shared: Arc<TreeShared> = SQUAD.new_shared(16);
    let mut soldiers: Vec<Soldier> = (0..4)
        .map(|id| Soldier {
            id,
            ..Soldier::default()
        })
        .collect();
    let mut memories: Vec<SquadMemory> = (0..4).map(|i| SQUAD.new_memory_in(&shared, i)).collect();
    // The game system's outstanding requests, per soldier.
    let mut outstanding: Vec<Vec<bt_core::Ticket>> = vec![Vec::new(); 4];
    let mut now = 0.0;
    let mut offset = 0.0;
    let mut seen = Vec::new();
    for (t, step) in script.iter().enumerate() {
        let dt = [0.25f32, 0.5, 1.0, 2.0][step.dt as usize];
        let mut events = Vec::new();
        for (i, (s, m)) in soldiers.iter_mut().zip(&mut memories).enumerate() {
            for &ticket in &outstanding[i] {
                if step.reports[i] & 1 != 0 {
                    let outcome = if step.reports[i] & 2 != 0 {
                        ActionOutcome::Failed
                    } else {
                        ActionOutcome::Succeeded
                    };
                    m.complete(ticket, outcome);
                }
            }
            if step.reports[i] & 1 != 0 {
                outstanding[i].clear();
            }
            s.want = Want::from_bits_truncate(step.wants[i]);
            s.offset = offset;
            let input = TickInput::new(now + offset, dt)
                .with_decision(s.want)
                .with_agent(s.id);
            let mut e = Events::default();
            tick_traced(&SQUAD, s, m, &input, &mut e).expect("ticks");
            for event in &mut e.0 {
                if let Event::Start { now, .. } = event {
                    *now -= offset;
                }
            }
            events.push(e.0);
        }
        if let Some(c) = cut
            && c.at == t
        {
            let shared_bytes = save(c.format, &shared.snapshot(&SQUAD, now + offset));
            let bytes: Vec<_> = memories
                .iter()
                .map(|m| save(c.format, &m.snapshot(now + offset)))
                .collect();
            drop(memories);
            offset += c.shift;
            shared = SQUAD.new_shared(16);
            load_shared(c.format, &shared_bytes, &shared, &SQUAD, now + offset).expect("restores");
            memories = bytes
                .iter()
                .map(|b| {
                    let mut m = SQUAD.new_memory_in(&shared, 99);
                    load_memory(c.format, b, &mut m, now + offset).expect("restores");
                    m
                })
                .collect();
        }
        let mut requests = Vec::new();
        shared.drain_actions(|r| {
            if let ActionOp::Launch(_) = r.op {
                outstanding[r.agent as usize].push(r.ticket);
            }
            requests.push(r.to_string());
        });
        let logs = soldiers
            .iter_mut()
            .map(|s| std::mem::take(&mut s.log))
            .collect();
        seen.push((events, logs, requests));
        now += f64::from(dt);
    }
    seen
}

proptest! {
    #![proptest_config(config())]

    /// A crowd cut and restored (shared state first, then each memory)
    /// goes on exactly as one that never stopped: gate counts, cooldown
    /// stamps, role lobbies, queued and outstanding deferred actions, their
    /// tickets and the agents' blocks all carry over.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow
    fn a_restored_crowd_continues_as_if_never_stopped(
        script in prop::collection::vec(crowd_tick(), 1..14),
        (at, json, shifted) in cut(),
    ) {
        let straight = drive_crowd(&script, None);
        let cut = Cut {
            at: at % (script.len() + 1),
            format: if json { Format::Json } else { Format::Postcard },
            shift: if shifted { 1024.0 } else { 0.0 },
        };
        let restored = drive_crowd(&script, Some(cut));
        prop_assert_eq!(straight.len(), restored.len());
        for (t, (a, b)) in straight.iter().zip(&restored).enumerate() {
            prop_assert_eq!(a, b, "tick {}", t);
        }
    }
}
