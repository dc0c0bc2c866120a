//! Comparing two recordings of one tree: the first tick at which each agent
//! decided otherwise is the one bt-core's own ticks say, and recordings of
//! two trees, or of another structure, are refused by name.

use std::sync::atomic::{AtomicU32, Ordering};

use bt_core::{
    CrowdReport, ItemIdx, TickInput, TraceRecorder, behavior, decider, group, tick_traced_into,
    tree,
};
use bt_viewer::{Capacity, CompareError, Difference, FlightRecorder, Watch, compare};

/// The thirst above which a deer drinks, in hundredths: the "number" a
/// team changes between two runs.
static THRESHOLD: AtomicU32 = AtomicU32::new(60);

#[derive(Default)]
pub struct Deer {
    thirst: f32,
}

fn thirsty(d: &Deer) -> bool {
    d.thirst * 100.0 > THRESHOLD.load(Ordering::Relaxed) as f32
}

behavior! { SIP: Deer, tick: |d, cx| { d.thirst -= 0.5 * cx.dt; d.thirst > 0.1 } }
behavior! { GRAZE: Deer, tick: |d, cx| { d.thirst += 0.1 * cx.dt; true } }
decider! { DRINK: Deer => SIP, when: |d, _| thirsty(d), gate: 6 }
decider! { EAT: Deer => GRAZE }
group! { ROOT: Deer, prioritized [DRINK, EAT] }
tree! { HERD: Deer = ROOT }

/// Another tree under another name, and one under the same name with
/// another structure.
mod other {
    use super::Deer;
    use bt_core::{behavior, decider, group, tree};
    behavior! { GRAZE: Deer }
    behavior! { SLEEP: Deer }
    decider! { EAT: Deer => GRAZE }
    decider! { NAP: Deer => SLEEP }
    group! { ROOT: Deer, prioritized [NAP, EAT] }
    tree! { pub FLOCK: Deer = ROOT }
    pub mod same_name {
        use super::{Deer, ROOT};
        use bt_core::tree;
        tree! { pub HERD: Deer = ROOT }
    }
}

const N: usize = 12;
const TICKS: u32 = 120;

/// Per deer, per tick: its leaf and its decision trace.
type Seen = Vec<Vec<(Option<ItemIdx>, String)>>;

/// One run with the threshold at `from` until tick `change`, `to` after:
/// the recording's JSON, and what bt-core says of the same run, played
/// again without the recorder: each deer's leaf and its decision trace
/// after each tick.
fn run(from: u32, change: u32, to: u32) -> (String, Seen) {
    let play = |recorder: Option<&mut FlightRecorder>| {
        THRESHOLD.store(from, Ordering::Relaxed);
        let shared = HERD.new_shared(0);
        let mut herd: Vec<Deer> = (0..N)
            .map(|i| Deer {
                thirst: 0.3 + 0.05 * i as f32,
            })
            .collect();
        let mut memories: Vec<_> = (0..N)
            .map(|i| HERD.new_memory_in(&shared, i as u64))
            .collect();
        let mut seen = vec![Vec::new(); N];
        let mut recorder = recorder;
        for t in 0..TICKS {
            if t == change {
                THRESHOLD.store(to, Ordering::Relaxed);
            }
            let now = f64::from(t) * 0.1;
            match recorder.as_deref_mut() {
                Some(r) => {
                    r.tick_all(&HERD, &mut herd, &mut memories, |_, _| {
                        TickInput::new(now, 0.1)
                    });
                }
                None => {
                    let mut report = CrowdReport::default();
                    for (k, (d, m)) in herd.iter_mut().zip(&mut memories).enumerate() {
                        let mut trace = TraceRecorder::new();
                        let input = TickInput::new(now, 0.1).with_agent(k as u32);
                        tick_traced_into(&HERD, d, m, &input, &mut trace, &mut report, k).unwrap();
                        seen[k].push((m.leaf(), trace.take()));
                    }
                }
            }
        }
        seen
    };
    let mut recorder = FlightRecorder::new(&HERD, N, Watch::All, Capacity::ticks(TICKS as usize));
    play(Some(&mut recorder));
    (recorder.export().to_json(), play(None))
}

/// Whether only one test ticks with the threshold at a time.
static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn two_runs_of_one_scenario_compare_equal() {
    let _one = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (a, _) = run(60, 0, 60);
    let (b, _) = run(60, 0, 60);
    let c = compare(&a, &b).unwrap();
    assert!(c.same(), "{c}");
    assert_eq!(c.agents.len(), N);
    assert!(c.agents.iter().all(|a| a.ticks == TICKS as usize));
    assert_eq!(c.first_tick(), None);
    assert!(c.diverged_by_tick.is_empty());
}

#[test]
fn a_changed_number_shows_where_each_agent_decided_otherwise() {
    let _one = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (a, seen_a) = run(60, 0, 60);
    // The second run lowers the threshold from tick 50 on.
    let (b, seen_b) = run(60, 50, 45);
    let c = compare(&a, &b).unwrap();
    assert!(!c.same());
    assert!(c.same_before(50), "nothing changed before the change: {c}");
    // Per agent, the first tick whose trace differs in bt-core's own run.
    for agent in &c.agents {
        let k = agent.agent as usize;
        let first = (0..TICKS as usize).find(|&t| seen_a[k][t] != seen_b[k][t]);
        let found = agent.first.as_ref().map(|d| d.tick as usize);
        assert_eq!(found, first, "agent {k}: {c}");
        if let Some(d) = &agent.first {
            let name = |l: Option<ItemIdx>| l.map(|l| HERD.node(l).name().to_string());
            let t = d.tick as usize;
            assert_eq!(d.leaf, (name(seen_a[k][t].0), name(seen_b[k][t].0)));
            // DRINK turned down by its `decide` in one run, accepted or kept
            // out by its gate in the other, as the traces say.
            let Difference::Rejection { decider, outcomes } = &d.what else {
                panic!("agent {k}: {:?}", d.what)
            };
            assert_eq!(decider, "DRINK");
            for (outcome, trace) in [
                (&outcomes.0, &seen_a[k][t].1),
                (&outcomes.1, &seen_b[k][t].1),
            ] {
                let line = match outcome.as_str() {
                    "accepted" => "accept 1:DRINK".to_string(),
                    reason => format!("reject 1:DRINK ({reason})"),
                };
                assert!(
                    trace.contains(&line),
                    "agent {k} tick {t}: {line} in\n{trace}"
                );
            }
        }
    }
    // How many had diverged by each tick, growing to all that did.
    let diverged = c.agents.iter().filter(|a| a.first.is_some()).count();
    assert_eq!(c.diverged_by_tick.last().map(|&(_, n)| n), Some(diverged));
    assert!(
        c.diverged_by_tick
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
    );
    let report = c.to_string();
    assert!(report.contains("DRINK"), "{report}");
}

#[test]
fn recordings_of_two_trees_or_of_another_structure_are_refused() {
    let _one = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (a, _) = run(60, 0, 60);
    let record = |tree: &'static bt_core::Tree<Deer, 2, 0, 0>| {
        let mut herd: Vec<Deer> = (0..2).map(|_| Deer::default()).collect();
        let mut memories: Vec<_> = (0..2).map(|i| tree.new_memory(i)).collect();
        let mut r = FlightRecorder::new(tree, 2, Watch::All, Capacity::ticks(4));
        r.tick_all(tree, &mut herd, &mut memories, |_, _| {
            TickInput::new(0.0, 0.1)
        });
        r.export().to_json()
    };
    let flock = record(&other::FLOCK);
    assert_eq!(
        compare(&a, &flock),
        Err(CompareError::OtherTree {
            first: "HERD".into(),
            second: "FLOCK".into()
        })
    );
    let renamed = record(&other::same_name::HERD);
    let err = compare(&a, &renamed).unwrap_err();
    assert!(
        matches!(&err, CompareError::StructureChanged { tree, .. } if tree == "HERD"),
        "{err}"
    );
    assert!(err.to_string().contains("another structure"), "{err}");
    let err = compare(&a, "{\"format\": \"something else\"}").unwrap_err();
    assert!(
        matches!(err, CompareError::NotARecording { which: 2, .. }),
        "{err}"
    );
}

#[test]
fn the_command_says_what_changed_and_exits_as_a_ci_job_needs() {
    let _one = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("bt-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, _) = run(60, 0, 60);
    let (b, _) = run(60, 50, 45);
    let (fa, fb) = (dir.join("before.json"), dir.join("after.json"));
    std::fs::write(&fa, a).unwrap();
    std::fs::write(&fb, b).unwrap();
    let bin = env!("CARGO_BIN_EXE_bt-compare");
    let go = |args: &[&std::path::Path], extra: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .args(extra)
            .output()
            .unwrap()
    };
    let same = go(&[&fa, &fa], &[]);
    assert_eq!(same.status.code(), Some(0));
    let changed = go(&[&fa, &fb], &[]);
    assert_eq!(changed.status.code(), Some(1));
    let text = String::from_utf8(changed.stdout).unwrap();
    assert!(
        text.contains("12 decided otherwise") && text.contains("from tick 50"),
        "{text}"
    );
    assert_eq!(go(&[&fa, &fb], &["--before", "50"]).status.code(), Some(0));
    assert_eq!(go(&[&fa, &fb], &["--before", "51"]).status.code(), Some(1));
    let missing = go(&[&fa, &dir.join("none.json")], &[]);
    assert_eq!(missing.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
