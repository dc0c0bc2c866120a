//! A recording of a crowd whose tree has tunables holds their values at
//! its start and every change put in effect, with the tick it took effect
//! at; its files carry them, and a comparison of two runs names the
//! tunables whose values differ.

use crate::tuned;

use bt_core::{TuneValue, tick_all};
use bt_viewer::{
    Capacity, FlightRecorder, TunableDifference, TunableInfo, TunedValue, Tuning, TuningChange,
    Watch, compare,
};
use serde_json::{Value, json};
use tuned::{DEER, FLEE_BELOW, GRAZING, RUN_FOR, herd, input, leaf_at, record};

fn json_of(recorder: &FlightRecorder) -> Value {
    serde_json::from_str(&recorder.export().to_json()).unwrap()
}

fn start(values: [Value; 3]) -> Vec<TunedValue> {
    ["FLEE_BELOW", "RUN_FOR", "GRAZING"]
        .into_iter()
        .zip(values)
        .map(|(name, value)| TunedValue { name, value })
        .collect()
}

#[test]
fn a_recording_keeps_the_values_at_its_start_and_every_change_with_its_tick() {
    let recorder = record(&[0.1, 0.28, 0.9], 10, 50, |t, shared| match t {
        4 => shared.tune(FLEE_BELOW, 0.3).unwrap(),
        7 => shared
            .tune_named("GRAZING", TuneValue::Bool(false))
            .unwrap(),
        _ => {}
    });
    let recording = recorder.export();
    assert_eq!(
        recording.tuning,
        Some(Tuning {
            first: 0,
            start: start([json!(0.25), json!(40), json!(true)]),
            changes: vec![
                TuningChange {
                    tick: 4,
                    name: "FLEE_BELOW",
                    from: json!(0.25),
                    to: json!(0.3)
                },
                TuningChange {
                    tick: 7,
                    name: "GRAZING",
                    from: json!(true),
                    to: json!(false)
                },
            ],
        })
    );
    assert_eq!(
        recording.tree.tunables[0],
        TunableInfo {
            name: "FLEE_BELOW",
            doc: "Health fraction below which a deer flees.",
            kind: "float",
            min: json!(0.0),
            max: json!(1.0),
            default: json!(0.25),
            choices: &[],
        }
    );
    let kinds: Vec<_> = recording.tree.tunables.iter().map(|t| t.kind).collect();
    assert_eq!(kinds, ["float", "int", "bool"]);
    // The tick a change took effect at is the first whose decisions read
    // it: deer 1 (health 0.28) flees from tick 4. (Deer 2 goes on grazing
    // after GRAZING is turned off: a change resets no agent's state.)
    let json = json_of(&recorder);
    assert_eq!(leaf_at(&json, 1, 3).as_deref(), Some("GRAZE"));
    assert_eq!(leaf_at(&json, 1, 4).as_deref(), Some("FLEE"));
    assert_eq!(leaf_at(&json, 2, 9).as_deref(), Some("GRAZE"));
}

#[test]
fn a_change_takes_effect_for_every_agent_of_the_recorders_next_frame_alike() {
    // Deer 0 is watched, deer 1 (as weak) is not: both flee from the frame
    // after the change, as with bt-core's tick_all.
    for watch in [Watch::All, Watch::Agents(&[0]), Watch::Agents(&[1])] {
        let (shared, mut deer, mut memories) = herd(&[0.27, 0.27]);
        let (plain_shared, mut plain, mut plain_memories) = herd(&[0.27, 0.27]);
        let mut recorder = FlightRecorder::new(&DEER, 2, watch, Capacity::ticks(20));
        for t in 0..6 {
            if t == 3 {
                shared.tune(FLEE_BELOW, 0.3).unwrap();
                plain_shared.tune(FLEE_BELOW, 0.3).unwrap();
            }
            recorder.tick_all(&DEER, &mut deer, &mut memories, |_, _| input(t));
            tick_all(&DEER, &mut plain, &mut plain_memories, |_, _| input(t));
            let leaves: Vec<_> = memories.iter().map(|m| m.leaf()).collect();
            let plain: Vec<_> = plain_memories.iter().map(|m| m.leaf()).collect();
            assert_eq!(leaves, plain, "tick {t}, {watch:?}");
            let want = if t < 3 { "GRAZE" } else { "FLEE" };
            assert_eq!(leaves, [DEER.find(want); 2], "tick {t}, {watch:?}");
        }
        let tuning = recorder.export().tuning.unwrap();
        assert_eq!(tuning.changes.len(), 1, "{watch:?}");
        assert_eq!(tuning.changes[0].tick, 3, "{watch:?}");
    }
}

#[test]
fn the_start_is_the_values_in_effect_at_the_first_frame_kept() {
    // 5 ticks kept of 20: frames 15 to 19.
    let recorder = record(&[0.5], 20, 5, |t, shared| match t {
        3 => shared.tune(RUN_FOR, 60).unwrap(),
        12 => shared.tune(RUN_FOR, 80).unwrap(),
        15 => shared.tune(GRAZING, false).unwrap(),
        17 => shared.tune(FLEE_BELOW, 0.75).unwrap(),
        _ => {}
    });
    let tuning = recorder.export().tuning.unwrap();
    assert_eq!(tuning.first, 15);
    // The change at the first frame kept is one of its values.
    assert_eq!(tuning.start, start([json!(0.25), json!(80), json!(false)]));
    assert_eq!(
        tuning.changes,
        [TuningChange {
            tick: 17,
            name: "FLEE_BELOW",
            from: json!(0.25),
            to: json!(0.75)
        }]
    );
    let json = json_of(&recorder);
    assert_eq!(leaf_at(&json, 0, 16).as_deref(), Some("GRAZE"));
    assert_eq!(leaf_at(&json, 0, 17).as_deref(), Some("FLEE"));
}

#[test]
fn values_tuned_before_the_recording_are_its_start_and_no_change() {
    let recorder = record(&[0.5], 3, 10, |t, shared| {
        if t == 0 {
            shared.tune(RUN_FOR, 7).unwrap();
        }
    });
    let tuning = recorder.export().tuning.unwrap();
    assert_eq!(tuning.start[1].value, json!(7));
    assert!(tuning.changes.is_empty(), "{tuning:?}");
}

#[test]
fn a_change_staged_and_undone_before_a_tick_is_no_change() {
    let recorder = record(&[0.5], 4, 10, |t, shared| {
        if t == 2 {
            shared.tune(RUN_FOR, 7).unwrap();
            shared.tune(RUN_FOR, 40).unwrap();
        }
    });
    assert!(recorder.export().tuning.unwrap().changes.is_empty());
}

#[test]
fn scheduled_and_lane_ticks_record_changes_at_their_frame() {
    // A scheduled crowd.
    let (shared, mut deer, mut memories) = herd(&[0.28]);
    let mut recorder = FlightRecorder::new(&DEER, 1, Watch::All, Capacity::ticks(20));
    let mut schedule = bt_core::Schedule::new(1, 0.0);
    for t in 0..5u64 {
        if t == 2 {
            shared.tune(FLEE_BELOW, 0.5).unwrap();
        }
        let now = t as f64 * 0.1;
        recorder.tick_scheduled(
            &DEER,
            &mut deer,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| bt_core::TickInput::new(now, dt),
        );
    }
    let json = json_of(&recorder);
    assert_eq!(json["tuning"]["changes"][0]["tick"], json!(2));
    assert_eq!(leaf_at(&json, 0, 1).as_deref(), Some("GRAZE"));
    assert_eq!(leaf_at(&json, 0, 2).as_deref(), Some("FLEE"));

    // Agents ticked one by one on lanes: the game puts the staged changes
    // in effect at the start of its frame.
    let (shared, mut deer, mut memories) = herd(&[0.28]);
    let mut recorder = FlightRecorder::with_lanes(&DEER, 1, Capacity::ticks(20));
    let lane = recorder.assign(9).unwrap();
    for t in 0..5u64 {
        if t == 3 {
            shared.tune(FLEE_BELOW, 0.5).unwrap();
        }
        shared.apply_tuning();
        recorder.begin_frame();
        recorder
            .tick_lane(lane, &DEER, &mut deer[0], &mut memories[0], &input(t))
            .unwrap();
    }
    let json = json_of(&recorder);
    assert_eq!(json["tuning"]["changes"][0]["tick"], json!(3));
    assert_eq!(leaf_at(&json, 0, 3).as_deref(), Some("FLEE"));
}

#[test]
fn the_files_carry_the_tuning_and_write_json_matches_export() {
    let recorder = record(&[0.1, 0.28], 30, 20, |t, shared| {
        if t == 15 {
            shared.tune(FLEE_BELOW, 0.3).unwrap();
        }
    });
    let mut text = Vec::new();
    recorder.write_json(&mut text).unwrap();
    assert_eq!(
        String::from_utf8(text).unwrap(),
        recorder.export().to_json()
    );
    let mut compact = Vec::new();
    recorder.write_json_compact(&mut compact).unwrap();
    let compact = String::from_utf8(compact).unwrap();
    assert_eq!(compact, recorder.export_compact().to_json());
    let doc: Value = serde_json::from_str(&compact).unwrap();
    assert_eq!(
        doc["tuning"],
        json!({"first": 10, "start": [
            {"name": "FLEE_BELOW", "value": 0.25}, {"name": "RUN_FOR", "value": 40},
            {"name": "GRAZING", "value": true}],
          "changes": [{"tick": 15, "name": "FLEE_BELOW", "from": 0.25, "to": 0.3}]})
    );
    assert_eq!(doc["tree"]["tunables"][1]["min"], json!(1));
    assert_eq!(doc["tree"]["tunables"][2]["min"], Value::Null);
    // The page holds it, and a comparison reads it back.
    let dir = std::env::temp_dir().join(format!("bt-viewer-tuning-{}", std::process::id()));
    bt_viewer::write_page(&dir, &compact).unwrap();
    let page = std::fs::read_to_string(dir.join("recording.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let same = compare(&page, &recorder.export().to_json()).unwrap();
    assert!(same.same() && same.tuning.is_empty(), "{same}");
}

#[test]
fn a_tree_without_tunables_writes_no_tuning() {
    let (mut agents, mut memories) = (vec![0u8; 2], Vec::new());
    bt_core::behavior! { IDLE: u8 }
    bt_core::decider! { JUST_IDLE: u8 => IDLE }
    bt_core::tree! { PLAIN: u8 = JUST_IDLE }
    memories.extend((0..2).map(|i| PLAIN.new_memory(i)));
    let mut recorder = FlightRecorder::new(&PLAIN, 2, Watch::All, Capacity::ticks(4));
    recorder.tick_all(&PLAIN, &mut agents, &mut memories, |_, _| input(0));
    let text = recorder.export().to_json();
    assert!(
        !text.contains("tuning") && !text.contains("tunables"),
        "{text}"
    );
}

/// A run of the herd, FLEE_BELOW raised to `raise` at tick `at` when given.
fn run(raise: Option<(u64, f64)>, before: Option<f64>) -> String {
    record(&[0.1, 0.28, 0.35, 0.9], 20, 20, |t, shared| {
        if t == 0
            && let Some(v) = before
        {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
        if let Some((at, v)) = raise
            && t == at
        {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
    })
    .export()
    .to_json()
}

#[test]
fn a_comparison_names_the_tunable_changed_and_the_agents_it_changed_from_its_tick() {
    let c = compare(&run(None, None), &run(Some((8, 0.3)), None)).unwrap();
    // Deer 1 (health 0.28) flees from tick 8; the others decide alike.
    let diverged: Vec<_> = c.diverged().iter().map(|(a, d)| (*a, d.tick)).collect();
    assert_eq!(diverged, [(1, 8)]);
    assert_eq!(
        c.tuning,
        [TunableDifference {
            name: "FLEE_BELOW".into(),
            start: (Some(json!(0.25)), Some(json!(0.25))),
            changes: (vec![], vec![(8, json!(0.3))]),
            first_tick: 8,
        }]
    );
    let text = c.to_string();
    assert!(
        text.contains("tunable FLEE_BELOW: 0.25 / 0.25, 0.3 from tick 8: first differs at tick 8"),
        "{text}"
    );
    // As the comparison page reads it.
    let report = serde_json::to_value(&c).unwrap();
    assert_eq!(report["tuning"][0]["changes"], json!([[], [[8, 0.3]]]));

    // Values that differ from the start: from the first tick.
    let c = compare(&run(None, Some(0.4)), &run(None, None)).unwrap();
    let diverged: Vec<_> = c.diverged().iter().map(|(a, d)| (*a, d.tick)).collect();
    assert_eq!(diverged, [(1, 0), (2, 0)]);
    assert_eq!(c.tuning.len(), 1);
    assert_eq!(c.tuning[0].start, (Some(json!(0.4)), Some(json!(0.25))));
    assert_eq!(c.tuning[0].first_tick, 0);

    // The same value reached another way (set before, or changed back) is
    // no difference; runs that change alike have none.
    let c = compare(&run(Some((5, 0.3)), None), &run(Some((5, 0.3)), None)).unwrap();
    assert!(c.tuning.is_empty() && c.same(), "{c}");
    let c = compare(&run(None, Some(0.25)), &run(None, None)).unwrap();
    assert!(c.tuning.is_empty(), "{c}");
}

#[test]
fn a_recording_without_tuning_still_compares() {
    let after = run(Some((8, 0.3)), None);
    let mut old: Value = serde_json::from_str(&run(None, None)).unwrap();
    // As a recording made before recordings held tunables.
    old.as_object_mut().unwrap().remove("tuning");
    old["tree"].as_object_mut().unwrap().remove("tunables");
    let c = compare(&old.to_string(), &after).unwrap();
    assert_eq!(c.diverged().len(), 1);
    // Its tunables are unknown: each of the other's is listed as missing
    // there.
    let names: Vec<_> = c.tuning.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["FLEE_BELOW", "RUN_FOR", "GRAZING"]);
    assert_eq!(c.tuning[0].start.0, None);
}

#[test]
fn a_malformed_tuning_is_an_error_naming_it() {
    let good: Value = serde_json::from_str(&run(Some((8, 0.3)), None)).unwrap();
    for (change, problem) in [
        (json!({"first": "x"}), "`first` is not a tick"),
        (json!({"first": 0, "start": 3}), "`start` is not a list"),
        (
            json!({"first": 0, "start": [{"name": 1}], "changes": []}),
            "a value of `start` has no name or no value",
        ),
        (
            json!({"first": 0, "start": [{"name": "A", "value": 1}],
                   "changes": [{"tick": 0, "name": "A", "from": 1, "to": 2}]}),
            "change 0 is not a tick after `first`",
        ),
        (
            json!({"first": 0, "start": [{"name": "A", "value": 1}],
                   "changes": [{"tick": 3, "name": "B", "from": 1, "to": 2}]}),
            "change 0 is not",
        ),
    ] {
        let mut bad = good.clone();
        bad["tuning"] = change;
        let e = compare(&good.to_string(), &bad.to_string()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with(
                "recording 2 is not a bt-viewer recording: its `tuning` is malformed: "
            ) && text.contains(problem),
            "{text}"
        );
    }
}

mod moods {
    use bt_core::{group, leaf, tree, tunables};

    tunables! { pub MOOD_TUNING:
        /// How the herd feels.
        MOOD: enum Mood { Calm, Wary, Bold } = Calm;
    }

    #[derive(Clone, Debug, Default)]
    pub struct Deer;

    leaf! { HIDE: Deer, when: |_, x| x.tuned(MOOD) == Mood::Wary }
    leaf! { GRAZE: Deer }
    group! { ROOT: Deer, prioritized [HIDE, GRAZE] }
    tree! { pub MOODY: Deer = ROOT, memory: MoodyMemory, tunables: MOOD_TUNING }
}

/// A choice is recorded by its names: the table lists them, and a change
/// given by name shows the names it went from and to.
#[test]
fn a_choice_is_recorded_by_its_names() {
    use moods::{Deer, MOODY};
    let shared = MOODY.new_shared(0);
    let mut deer = vec![Deer; 2];
    let mut memories: Vec<_> = (0..2).map(|i| MOODY.new_memory_in(&shared, i)).collect();
    let mut recorder = FlightRecorder::new(&MOODY, 2, Watch::All, Capacity::ticks(20));
    for t in 0..6u64 {
        if t == 3 {
            (shared.tune_named("MOOD", TuneValue::Name("Wary".into()))).unwrap();
        }
        recorder.tick_all(&MOODY, &mut deer, &mut memories, |_, _| input(t));
    }
    let recording = recorder.export();
    let info = &recording.tree.tunables[0];
    assert_eq!(
        (info.kind, info.choices),
        ("choice", &["Calm", "Wary", "Bold"][..])
    );
    assert_eq!((&info.default, &info.min), (&json!("Calm"), &Value::Null));
    let tuning = recording.tuning.unwrap();
    assert_eq!(tuning.start[0].value, json!("Calm"));
    assert_eq!(
        tuning.changes,
        [TuningChange {
            tick: 3,
            name: "MOOD",
            from: json!("Calm"),
            to: json!("Wary")
        }]
    );
    let json = json_of(&recorder);
    assert_eq!(
        json["tree"]["tunables"][0]["choices"],
        json!(["Calm", "Wary", "Bold"])
    );
    assert_eq!(memories[0].leaf(), MOODY.find("HIDE"));
}

bt_core::tunables! { FIELD_TUNING:
    /// Seconds between looks.
    LOOK_EVERY: f64 = 1.0, 0.0..=10.0;
    /// Deer at the water at once.
    DRINKERS: i64 = 2, 1..=9;
    /// Seconds after a call before the next.
    CALL_COOLDOWN: f64 = 3.0, 0.0..=30.0;
}
bt_core::leaf! { LOOK: tuned::Deer, every: tunable(LOOK_EVERY) }
bt_core::leaf! { DRINK: tuned::Deer, gate: tunable(DRINKERS), cooldown: tunable(CALL_COOLDOWN) }
bt_core::leaf! { REST: tuned::Deer, gate: 4 }
bt_core::group! { FIELD_ROOT: tuned::Deer, prioritized [LOOK, DRINK, REST] }
bt_core::tree! { FIELD: tuned::Deer = FIELD_ROOT, memory: FieldMemory, tunables: FIELD_TUNING }

#[test]
fn an_item_whose_fields_name_tunables_is_recorded_with_their_names() {
    let shared = FIELD.new_shared(0);
    let mut deer = vec![tuned::Deer { health: 1.0 }];
    let mut memories = vec![FIELD.new_memory_in(&shared, 0)];
    let mut recorder = FlightRecorder::new(&FIELD, 1, Watch::All, Capacity::ticks(4));
    recorder.tick_all(&FIELD, &mut deer, &mut memories, |_, _| input(0));
    let json = json_of(&recorder);
    let item = |name: &str| {
        let items = json["tree"]["items"].as_array().unwrap();
        items.iter().find(|i| i["name"] == name).unwrap().clone()
    };
    // The name beside the number, which is the tunable's default.
    let look = item("LOOK");
    assert_eq!(look["tuned"], json!({"every": "LOOK_EVERY"}));
    assert_eq!(look["preconditions"]["every"], json!(1.0));
    let drink = item("DRINK");
    assert_eq!(
        drink["tuned"],
        json!({"gate": "DRINKERS", "cooldown": "CALL_COOLDOWN"})
    );
    assert_eq!(drink["shared"]["gate"], json!(2));
    // A number is a number: no `tuned`.
    assert!(item("REST").get("tuned").is_none(), "{}", item("REST"));
    assert!(item("FIELD_ROOT").get("tuned").is_none());
}

/// A probe that keeps the `FLEE_BELOW` each of its ticks read, and the
/// first one's callback stages a change when told.
#[derive(Default)]
struct Probe {
    read: Vec<f64>,
    tunes: Option<(std::sync::Arc<bt_core::TreeShared>, f64)>,
}

bt_core::leaf! { PROBING: Probe,
    tick: |p, cx| {
        p.read.push(cx.tuned(FLEE_BELOW));
        if let Some((shared, v)) = p.tunes.take() {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
        true
    },
}
bt_core::tree! { PROBES: Probe = PROBING, memory: ProbeMemory, tunables: tuned::HERD_TUNING }

/// A change a callback stages in the middle of a recorded frame waits for
/// the next frame, for the agents the recorder watches and those it does
/// not alike, as under `tick_all`: recording changes no value read.
#[test]
fn a_change_staged_by_a_callback_waits_for_the_next_frame_when_recorded_too() {
    let run = |recorded: bool| {
        let shared = PROBES.new_shared(0);
        let mut probes: Vec<Probe> = (0..8).map(|_| Probe::default()).collect();
        let mut memories: Vec<ProbeMemory> =
            (0..8).map(|i| PROBES.new_memory_in(&shared, i)).collect();
        probes[0].tunes = Some((std::sync::Arc::clone(&shared), 0.75));
        let mut recorder =
            FlightRecorder::new(&PROBES, 8, Watch::Agents(&[0, 6]), Capacity::ticks(10));
        for t in 0..2 {
            if recorded {
                recorder.tick_all(&PROBES, &mut probes, &mut memories, |_, _| input(t));
            } else {
                tick_all(&PROBES, &mut probes, &mut memories, |_, _| input(t));
            }
        }
        probes.into_iter().map(|p| p.read).collect::<Vec<_>>()
    };
    let plain = run(false);
    assert_eq!(plain[1], [0.25, 0.75]);
    assert_eq!(run(true), plain);
}
