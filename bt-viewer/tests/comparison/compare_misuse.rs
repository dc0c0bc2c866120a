//! Attempts to break what `bt_viewer::compare` promises: two recordings of
//! one tree give, per agent, the first tick whose decisions differ and
//! what differs; recordings of two trees, or of a tree whose structure
//! changed, are a `CompareError`; what is not a recording is one too.

use std::sync::mpsc;
use std::time::Duration;

use bt_core::TickInput;
use bt_viewer::{Capacity, CompareError, Difference, FlightRecorder, Watch, compare};
use serde_json::{Value, json};

use crate::misuse_common;
use misuse_common::{
    CRITTER, Critter, HERD, Run, after, before, grown, record, renamed, reordered,
};

/// Runs `f` on its own thread; `None` when it does not answer within
/// `secs` or panics.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

#[test]
fn compare_same_run_twice_is_same() {
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&CRITTER, Run::default(), before);
    assert_eq!(a, b, "one scenario recorded twice is one text");
    let c = compare(&a, &b).expect("one tree");
    assert!(c.same(), "{c}");
    assert_eq!(c.agents.len(), 6);
    assert!(c.agents.iter().all(|a| a.ticks == 30));
    assert!(c.diverged_by_tick.is_empty(), "{:?}", c.diverged_by_tick);
    assert!(c.unmatched.is_empty());
    assert_eq!(c.first_tick(), None);
    assert!(c.same_before(u64::MAX));
}

#[test]
fn compare_finds_first_tick_and_what() {
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&CRITTER, Run::default(), after);
    let c = compare(&a, &b).expect("one tree");
    let diverged: Vec<(u32, u64)> = c.diverged().iter().map(|(a, d)| (*a, d.tick)).collect();
    assert_eq!(diverged, [(2, 12), (4, 24)], "{c}");
    assert_eq!(c.first_tick(), Some(12));
    assert!(c.same_before(12) && !c.same_before(13));
    assert_eq!(c.diverged_by_tick, [(12, 1), (24, 2)]);
    let agent4 = &c.agents[4].first.as_ref().unwrap();
    assert_eq!(
        agent4.what,
        Difference::DecideValue {
            decider: "FEED".into(),
            accepted: true,
            values: (1.0, 2.0)
        },
        "{c}"
    );
    // EAT ends in the tick it starts: the agent is idle after each tick.
    assert_eq!(agent4.leaf, (None, None), "{c}");
    let agent2 = &c.agents[2].first.as_ref().unwrap();
    // At tick 12, FEED's decide turned it down (0) before, accepted (0.5) after.
    match &agent2.what {
        Difference::Rejection { decider, outcomes } => {
            assert_eq!(decider, "FEED");
            assert_eq!(outcomes.1, "accepted", "{c}");
            assert_ne!(outcomes.0, "accepted", "{c}");
        }
        other => panic!("agent 2 at tick 12: {other:?}\n{c}"),
    }
    assert_eq!(agent2.leaf, (None, None));
}

#[test]
fn compare_is_symmetric() {
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&CRITTER, Run::default(), after);
    let ab = compare(&a, &b).unwrap();
    let ba = compare(&b, &a).unwrap();
    assert_eq!(ab.diverged_by_tick, ba.diverged_by_tick);
    for (x, y) in ab.agents.iter().zip(&ba.agents) {
        let (Some(x), Some(y)) = (&x.first, &y.first) else {
            assert_eq!(x.first.is_none(), y.first.is_none());
            continue;
        };
        assert_eq!(x.tick, y.tick);
        assert_eq!((&x.leaf.0, &x.leaf.1), (&y.leaf.1, &y.leaf.0));
        if let (
            Difference::DecideValue { values: v1, .. },
            Difference::DecideValue { values: v2, .. },
        ) = (&x.what, &y.what)
        {
            assert_eq!((v1.0, v1.1), (v2.1, v2.0));
        }
    }
}

#[test]
fn compare_compact_against_full_of_one_run_is_same() {
    let full = record(&CRITTER, Run::default(), before);
    let compact = record(
        &CRITTER,
        Run {
            compact: true,
            ..Run::default()
        },
        before,
    );
    assert_ne!(full, compact, "the compact export merges runs");
    for (x, y) in [(&full, &compact), (&compact, &full), (&compact, &compact)] {
        let c = compare(x, y).expect("one tree");
        assert!(c.same(), "{c}");
        assert!(c.agents.iter().all(|a| a.ticks == 30), "{:?}", c.agents);
    }
    // And a compact "after" finds the very same divergences as a full one.
    let after_compact = record(
        &CRITTER,
        Run {
            compact: true,
            ..Run::default()
        },
        after,
    );
    let after_full = record(&CRITTER, Run::default(), after);
    assert_eq!(
        compare(&compact, &after_compact).unwrap(),
        compare(&full, &after_full).unwrap()
    );
}

#[test]
fn compare_constant_agents_in_compact_runs() {
    // Long quiet runs (nothing changes but time): a compact recording
    // holds them as runs; a divergence inside a run is still found at its tick.
    let quiet = |_: usize, _: u64| -1.0;
    let late = |i: usize, t: u64| if i == 1 && t == 25 { 3.0 } else { -1.0 };
    let run = Run {
        compact: true,
        ..Run::default()
    };
    let a = record(&CRITTER, run, quiet);
    let b = record(&CRITTER, run, late);
    let c = compare(&a, &b).unwrap();
    let diverged: Vec<(u32, u64)> = c.diverged().iter().map(|(a, d)| (*a, d.tick)).collect();
    assert_eq!(diverged, [(1, 25)], "{c}");
}

#[test]
fn compare_other_tree_of_same_shape_is_error() {
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&HERD, Run::default(), before);
    match compare(&a, &b) {
        Err(CompareError::OtherTree { first, second }) => {
            assert_eq!((first.as_str(), second.as_str()), ("CRITTER", "HERD"));
        }
        other => panic!("two trees of one shape: {other:?}"),
    }
}

#[test]
fn compare_changed_structure_is_error() {
    let a = record(&CRITTER, Run::default(), before);
    for (what, b) in [
        ("grown", record(&grown::CRITTER, Run::default(), before)),
        (
            "reordered",
            record(&reordered::CRITTER, Run::default(), before),
        ),
        ("renamed", record(&renamed::CRITTER, Run::default(), before)),
    ] {
        match compare(&a, &b) {
            Err(e @ CompareError::StructureChanged { .. }) => {
                let text = e.to_string();
                assert!(text.contains("CRITTER"), "{what}: {text}");
            }
            other => panic!("{what}: {other:?}"),
        }
        // Both ways round.
        assert!(
            matches!(compare(&b, &a), Err(CompareError::StructureChanged { .. })),
            "{what}"
        );
    }
}

#[test]
fn compare_agents_in_one_run_only() {
    let a = record(
        &CRITTER,
        Run {
            watch: &[0, 1, 2, 3],
            ..Run::default()
        },
        before,
    );
    let b = record(
        &CRITTER,
        Run {
            watch: &[2, 3, 4, 5],
            ..Run::default()
        },
        after,
    );
    let c = compare(&a, &b).unwrap();
    let agents: Vec<u32> = c.agents.iter().map(|a| a.agent).collect();
    assert_eq!(agents, [2, 3], "{c}");
    let mut unmatched = c.unmatched.clone();
    unmatched.sort();
    assert_eq!(unmatched, [0, 1, 4, 5], "{c}");
    // Agent 4 changed in "after" but is not in "before": not a divergence.
    let diverged: Vec<u32> = c.diverged().iter().map(|(a, _)| *a).collect();
    assert_eq!(diverged, [2]);
    assert!(c.to_string().contains("one run only"), "{c}");
}

#[test]
fn compare_other_tick_ranges_compare_the_overlap() {
    // "before" keeps ticks 20..30 (capacity 10), "after" all 30; the
    // divergence of agent 2 at 12 is outside what both kept, agent 4's at
    // 24 inside.
    let a = record(
        &CRITTER,
        Run {
            capacity: 10,
            ..Run::default()
        },
        before,
    );
    let b = record(&CRITTER, Run::default(), after);
    let c = compare(&a, &b).unwrap();
    assert!(c.agents.iter().all(|a| a.ticks == 10), "{:?}", c.agents);
    let diverged: Vec<(u32, u64)> = c.diverged().iter().map(|(a, d)| (*a, d.tick)).collect();
    // Agent 2 is hungry at every kept tick after: its first kept tick, 20.
    assert_eq!(diverged, [(2, 20), (4, 24)], "{c}");
    assert_eq!(c.diverged_by_tick, [(20, 1), (24, 2)]);
}

#[test]
fn compare_disjoint_tick_ranges_compare_nothing() {
    // "before" ran 10 ticks, "after" 40 keeping the last 10: no tick in common.
    let a = record(
        &CRITTER,
        Run {
            ticks: 10,
            ..Run::default()
        },
        before,
    );
    let b = record(
        &CRITTER,
        Run {
            ticks: 40,
            capacity: 10,
            ..Run::default()
        },
        after,
    );
    // Nothing compared is no "same": an error saying so.
    match compare(&a, &b) {
        Err(e @ CompareError::NothingInCommon { agents: 6 }) => {
            assert!(
                e.to_string().contains("no tick of an agent in common"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn compare_with_and_without_values_and_flag_names_is_same() {
    // What is compared is what the tick decided: recording values (or not)
    // must not make a difference.
    use bt_viewer::DataCapacity;
    let plain = record(&CRITTER, Run::default(), before);
    let mut critters: Vec<Critter> = (0..6).map(|_| Critter { hunger: 0.0 }).collect();
    let mut memories: Vec<_> = (0..6).map(|i| CRITTER.new_memory(i as u64)).collect();
    let mut recorder = FlightRecorder::new(&CRITTER, 6, Watch::All, Capacity::ticks(30))
        .with_data(DataCapacity::values(1));
    for t in 0..30u64 {
        for (i, c) in critters.iter_mut().enumerate() {
            c.hunger = before(i, t);
        }
        recorder.tick_all_with_data(&CRITTER, &mut critters, &mut memories, |i, _| {
            TickInput::new(t as f64 * 0.1, 0.1).with_agent(i as u32)
        });
    }
    let with_values = recorder.export().to_json();
    assert!(with_values.contains("\"hunger\""));
    let c = compare(&plain, &with_values).unwrap();
    assert!(c.same(), "{c}");
}

fn mutate(text: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn compare_bad_documents_name_which() {
    let good = record(&CRITTER, Run::default(), before);
    let bads: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("truncated", good[..good.len() / 2].to_string()),
        ("not json", "hello".into()),
        ("an array", "[]".into()),
        (
            "other format",
            mutate(&good, |v| v["format"] = json!("bt-other")),
        ),
        ("version 3", mutate(&good, |v| v["version"] = json!(3))),
        ("version 1", mutate(&good, |v| v["version"] = json!(1))),
        (
            "no tree",
            mutate(&good, |v| {
                v.as_object_mut().unwrap().remove("tree");
            }),
        ),
        (
            "no agents",
            mutate(&good, |v| {
                v.as_object_mut().unwrap().remove("agents");
            }),
        ),
        (
            "agents not a list",
            mutate(&good, |v| v["agents"] = json!({})),
        ),
        (
            "ticks not a list",
            mutate(&good, |v| v["agents"][0]["ticks"] = json!(7)),
        ),
        (
            "a tick not a list",
            mutate(&good, |v| v["agents"][0]["ticks"][0] = json!("x")),
        ),
    ];
    let mut failures = Vec::new();
    for (what, bad) in &bads {
        for (first, second, which) in [
            (bad.as_str(), good.as_str(), 1),
            (good.as_str(), bad.as_str(), 2),
        ] {
            let (f, s) = (first.to_string(), second.to_string());
            let result = within(10, move || compare(&f, &s));
            match result {
                Some(Err(CompareError::NotARecording { which: w, problem })) if w == which => {
                    println!("{what} as {which}: {problem}");
                }
                Some(other) => failures.push(format!(
                    "{what} as recording {which}: {}",
                    match other {
                        Ok(c) => format!("accepted: {c}"),
                        Err(e) => format!("{e:?}"),
                    }
                )),
                None => failures.push(format!("{what} as recording {which}: panicked or hung")),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A recording whose numbers lie: every result must be an answer (an
/// error or a comparison), never a panic or a hang.
#[test]
fn compare_lying_numbers_never_panic_or_hang() {
    let good = record(&CRITTER, Run::default(), before);
    let compact = record(
        &CRITTER,
        Run {
            compact: true,
            ..Run::default()
        },
        |_, _| -1.0,
    );
    let mut cases: Vec<(String, String, String)> = Vec::new();
    let mut add = |what: &str, base: &str, f: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(base).unwrap();
        f(&mut v);
        cases.push((what.to_string(), base.to_string(), v.to_string()));
    };
    add("leaf out of range", &good, &|v| {
        v["agents"][0]["ticks"][3][2] = json!(999)
    });
    add("leaf negative", &good, &|v| {
        v["agents"][0]["ticks"][3][2] = json!(-1)
    });
    add("leaf a string", &good, &|v| {
        v["agents"][0]["ticks"][3][2] = json!("FEED")
    });
    add("serial huge", &good, &|v| {
        v["agents"][0]["ticks"][3][0] = json!(u64::MAX)
    });
    add("serial negative", &good, &|v| {
        v["agents"][0]["ticks"][3][0] = json!(-5)
    });
    add("serial float", &good, &|v| {
        v["agents"][0]["ticks"][3][0] = json!(3.5)
    });
    add("serial repeated", &good, &|v| {
        let t = v["agents"][0]["ticks"][3].clone();
        v["agents"][0]["ticks"].as_array_mut().unwrap().insert(4, t);
    });
    add("ticks reversed", &good, &|v| {
        v["agents"][0]["ticks"].as_array_mut().unwrap().reverse();
    });
    add("event kind 0", &good, &|v| {
        v["agents"][0]["ticks"][3][6][0] = json!(0)
    });
    add("event kind 999", &good, &|v| {
        v["agents"][0]["ticks"][3][6][0] = json!(999)
    });
    add("rejection code 999", &good, &|v| {
        let ev = v["agents"][0]["ticks"][0][6].as_array_mut().unwrap();
        for chunk in ev.chunks_mut(4) {
            chunk[1] = json!(999);
        }
    });
    add("events length not 4n", &good, &|v| {
        v["agents"][0]["ticks"][3][6]
            .as_array_mut()
            .unwrap()
            .push(json!(1));
    });
    add("path length not 4n", &good, &|v| {
        v["agents"][0]["ticks"][3][5]
            .as_array_mut()
            .unwrap()
            .push(json!(1));
    });
    add("path item out of range", &good, &|v| {
        v["agents"][0]["ticks"][3][5] = json!([12345, 0, 0.0, 0]);
    });
    add("short tick", &good, &|v| {
        v["agents"][0]["ticks"][3] = json!([3])
    });
    add("agent twice", &good, &|v| {
        let a = v["agents"][1].clone();
        v["agents"].as_array_mut().unwrap().push(a);
    });
    add("agent index huge", &good, &|v| {
        v["agents"][0]["agent"] = json!(u64::MAX)
    });
    add("no items", &good, &|v| v["tree"]["items"] = json!([]));
    add("legend emptied", &good, &|v| {
        v["legend"]["events"] = json!([])
    });
    add("run first, before any tick", &compact, &|v| {
        let ticks = v["agents"][0]["ticks"].as_array_mut().unwrap();
        let pos = ticks
            .iter()
            .position(|t| t.as_array().is_some_and(|a| a.len() == 2))
            .unwrap();
        let run = ticks.remove(pos);
        ticks.insert(0, run);
    });
    add("clock.now short", &compact, &|v| {
        v["clock"]["now"] = json!([])
    });
    add("no clock", &compact, &|v| {
        v.as_object_mut().unwrap().remove("clock");
    });
    let mut failures = Vec::new();
    for (what, base, bad) in cases {
        for (x, y) in [(base.clone(), bad.clone()), (bad.clone(), base.clone())] {
            let started = std::time::Instant::now();
            match within(10, move || compare(&x, &y).map(|c| c.to_string())) {
                None => failures.push(format!("{what}: panicked or hung (>10 s)")),
                Some(r) => println!(
                    "{what}: {:?} in {:?}",
                    r.as_ref()
                        .map(|s| s.lines().next().unwrap_or("").to_string()),
                    started.elapsed()
                ),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A compact recording whose run says it repeats a tick `n` times, where
/// it was 1: the comparison must say the file lies, not try to expand it.
/// (Run in a child process: an allocation that fails aborts the process.)
#[test]
fn compare_run_length_that_lies() {
    let compact = record(
        &CRITTER,
        Run {
            compact: true,
            ..Run::default()
        },
        |_, _| -1.0,
    );
    let lie = |n: u64| {
        mutate(&compact, |v| {
            let ticks = v["agents"][0]["ticks"].as_array_mut().unwrap();
            let run = ticks
                .iter_mut()
                .find(|t| t.as_array().is_some_and(|a| a.len() == 2))
                .expect("a run in a quiet compact recording");
            run[0] = json!(n);
        })
    };
    if let Ok(n) = std::env::var("BT_MISUSE_RUN_LENGTH") {
        let n: u64 = n.parse().unwrap();
        let bad = lie(n);
        match compare(&compact, &bad) {
            Err(CompareError::NotARecording { which: 2, problem }) => println!("said: {problem}"),
            other => panic!("a run of {n} ticks: {:?}", other.map(|c| c.to_string())),
        }
        return;
    }
    let mut failures = Vec::new();
    for n in [1_000_000_000_000u64, u64::MAX] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "compare_run_length_that_lies",
                "--exact",
                "--nocapture",
                "--include-ignored",
            ])
            .env("BT_MISUSE_RUN_LENGTH", n.to_string())
            .output()
            .unwrap();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            failures.push(format!("run of {n}: {:?}: {err}", out.status));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Malformed ticks that no recorder writes are "not a recording this crate
/// reads" (`CompareError::NotARecording`), not silently compared.
#[test]
fn compare_malformed_ticks_are_errors() {
    let good = record(&CRITTER, Run::default(), before);
    let cases: Vec<(&str, String)> = vec![
        (
            "ticks not a list",
            mutate(&good, |v| v["agents"][0]["ticks"] = json!(7)),
        ),
        (
            "serial negative",
            mutate(&good, |v| v["agents"][0]["ticks"][3][0] = json!(-5)),
        ),
        (
            "serial 3.5",
            mutate(&good, |v| v["agents"][0]["ticks"][3][0] = json!(3.5)),
        ),
        (
            "leaf a string",
            mutate(&good, |v| v["agents"][0]["ticks"][3][2] = json!("FEED")),
        ),
        (
            "leaf 999 of 3 items",
            mutate(&good, |v| v["agents"][0]["ticks"][3][2] = json!(999)),
        ),
        (
            "events of 5 numbers",
            mutate(&good, |v| {
                v["agents"][0]["ticks"][3][6]
                    .as_array_mut()
                    .unwrap()
                    .push(json!(1));
            }),
        ),
        (
            "event kind 999",
            mutate(&good, |v| v["agents"][0]["ticks"][3][6][0] = json!(999)),
        ),
        (
            "agent 1 twice",
            mutate(&good, |v| {
                let a = v["agents"][1].clone();
                v["agents"].as_array_mut().unwrap().push(a);
            }),
        ),
        (
            "agent index 2^64-1",
            mutate(&good, |v| v["agents"][0]["agent"] = json!(u64::MAX)),
        ),
    ];
    let mut accepted = Vec::new();
    for (what, bad) in &cases {
        match compare(&good, bad) {
            Err(CompareError::NotARecording { which: 2, .. }) => {}
            Ok(c) => accepted.push(format!("{what}: accepted: {}", c.to_string().trim())),
            Err(e) => accepted.push(format!("{what}: {e:?}")),
        }
    }
    assert!(accepted.is_empty(), "{accepted:#?}");
}

/// The same agent listed twice in one recording was counted once or twice
/// depending on which side it was: either way round, it is refused.
#[test]
fn compare_duplicate_agent_counts_the_same_both_ways() {
    let good = record(&CRITTER, Run::default(), before);
    let twice = mutate(&good, |v| {
        let a = v["agents"][1].clone();
        v["agents"].as_array_mut().unwrap().push(a);
    });
    // Either way round, the file that lists it twice is refused, named.
    for (ab, which) in [(compare(&good, &twice), 2), (compare(&twice, &good), 1)] {
        match ab {
            Err(bt_viewer::CompareError::NotARecording { which: w, problem }) => {
                assert_eq!(w, which);
                assert!(problem.contains("agent #1 is listed twice"), "{problem}");
            }
            other => panic!("recording {which} lists agent #1 twice: {other:?}"),
        }
    }
}

// ---------- numbers by value, keys given twice, runs before the clock ----------

/// Rewrites every whole number written as a float as an integer, as a
/// JavaScript tool that parses and writes a recording does (1.0 -> 1).
fn as_javascript_writes(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap();
            if f.fract() == 0.0 && f.abs() < 1e15 {
                *v = if f < 0.0 {
                    json!(f as i64)
                } else {
                    json!(f as u64)
                };
            }
        }
        Value::Array(a) => a.iter_mut().for_each(as_javascript_writes),
        Value::Object(o) => o.values_mut().for_each(as_javascript_writes),
        _ => {}
    }
}

#[test]
fn compare_reads_numbers_by_value_not_by_how_they_are_written() {
    for compact in [false, true] {
        let run = Run {
            compact,
            ..Run::default()
        };
        let a = record(&CRITTER, run, after);
        let mut v: Value = serde_json::from_str(&a).unwrap();
        as_javascript_writes(&mut v);
        let b = v.to_string();
        assert_ne!(a, b, "the rewrite changed nothing");
        let c = compare(&a, &b).unwrap();
        assert!(c.same(), "the same run written by another tool:\n{c}");
        // And a real change of value is still one.
        let changed = compare(&record(&CRITTER, run, before), &b).unwrap();
        assert!(!changed.same());
    }
}

#[test]
fn compare_refuses_a_key_given_twice() {
    let (a, b) = (
        record(&CRITTER, Run::default(), before),
        record(&CRITTER, Run::default(), after),
    );
    let (va, vb): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
    );
    // The second run's agents, then the first run's under the same key.
    let twice = format!(
        r#"{{"format":{},"version":{},"tree":{},"legend":{},"agents":{},"agents":{}}}"#,
        vb["format"], vb["version"], vb["tree"], vb["legend"], vb["agents"], va["agents"]
    );
    match compare(&a, &twice) {
        Err(CompareError::NotARecording { which: 2, problem }) => {
            assert!(problem.contains("`agents` is given twice"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn compare_refuses_a_run_before_the_clock_without_reserving_its_ticks() {
    let run = Run {
        compact: true,
        ..Run::default()
    };
    let a = record(&CRITTER, run, before);
    let mut v: Value = serde_json::from_str(&a).unwrap();
    // A clock that starts at frame 10^15, and a run from the first tick
    // (serial 0) that reaches it: 10^15 ticks of one entry.
    let far = 1_000_000_000_000_000u64;
    v["clock"]["first"] = json!(far);
    let ticks = v["agents"][0]["ticks"].as_array_mut().unwrap();
    ticks.truncate(1);
    ticks.push(json!([far, [0]]));
    let t0 = std::time::Instant::now();
    match compare(&a, &v.to_string()) {
        Err(CompareError::NotARecording { which: 2, problem }) => {
            assert!(
                problem.contains("agent #0") && problem.contains("tick entry 1"),
                "{problem}"
            );
            assert!(
                problem.contains("before the recording's first frame"),
                "{problem}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn compare_names_the_agent_entry_nested_too_deep() {
    let a = record(&CRITTER, Run::default(), before);
    let mut v: Value = serde_json::from_str(&a).unwrap();
    v["agents"][3]["ticks"][0][6] = json!([1, 0, 0, "deep"]);
    let deep = "[".repeat(200_000) + &"]".repeat(200_000);
    let text = v.to_string().replacen("\"deep\"", &deep, 1);
    match compare(&a, &text) {
        Err(CompareError::NotARecording { which: 2, problem }) => {
            assert!(problem.contains("agent entry 3"), "{problem}");
            assert!(problem.contains("recursion limit"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn compare_words_a_decide_that_turned_down_in_both_runs_as_such() {
    // FEED's decide turns it down at 0 in the first run and at -0.5 in
    // the second, from tick 5 on, for agent 1.
    let a = record(&CRITTER, Run::default(), |_, _| 0.0);
    let b = record(&CRITTER, Run::default(), |i, t| {
        if i == 1 && t >= 5 { -0.5 } else { 0.0 }
    });
    let c = compare(&a, &b).unwrap();
    let d = c.agents[1].first.as_ref().expect("agent 1 diverged");
    assert_eq!(d.tick, 5);
    assert_eq!(
        d.what,
        Difference::DecideValue {
            decider: "FEED".into(),
            accepted: false,
            values: (0.0, -0.5)
        }
    );
    let said = c.to_string();
    assert!(
        said.contains("FEED turned down by its decide with 0 / -0.5"),
        "{said}"
    );
    assert!(!said.contains("accepted"), "{said}");
}
