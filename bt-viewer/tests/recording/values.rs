//! The agents' own values, flag names and compact recordings: what the
//! recorder keeps of them is what the run did.

use crate::herd;
use crate::scene;

use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
use scene::{CAMP, Creature, Facts, crowd};
use serde_json::{Value, json};

/// What a creature says about itself: its facts as a number, and whether
/// it is in danger as a text.
impl AgentData for Creature {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("facts", f64::from(self.facts.bits()));
        let danger = self.facts.contains(Facts::DANGER);
        out.text("danger", if danger { "yes" } else { "no" });
    }
}

/// The full ticks of a compact recording's agent `k`, as the viewer
/// reads them.
pub fn expand(doc: &Value, k: usize) -> Vec<Value> {
    let clock = &doc["clock"];
    let first = clock["first"].as_u64().unwrap();
    let mut out: Vec<Value> = Vec::new();
    let mut base: Option<Value> = None;
    for entry in doc["agents"][k]["ticks"].as_array().unwrap() {
        let e = entry.as_array().unwrap();
        if e.len() == 7 {
            base = Some(entry.clone());
            out.push(entry.clone());
            continue;
        }
        let b = base.as_ref().expect("a run after a full tick");
        let since = e[1].as_array().unwrap();
        for q in 1..=e[0].as_u64().unwrap() {
            let s = b[0].as_u64().unwrap() + q;
            let now = clock["now"][(s - first) as usize].as_f64().unwrap();
            let mut t = b.clone();
            t[0] = json!(s);
            t[1] = json!(now);
            let path = t[5].as_array_mut().unwrap();
            for (l, c) in path.chunks_mut(4).zip(since) {
                l[2] = json!((now - c.as_f64().unwrap()) as f32);
            }
            out.push(t);
        }
    }
    out
}

#[test]
fn the_values_of_each_tick_are_the_agents_fields_the_tick_saw() {
    let (mut agents, mut memories) = crowd(6);
    let mut recorder = FlightRecorder::new(&CAMP, 6, Watch::Agents(&[1, 4]), Capacity::new(50, 16))
        .with_data(DataCapacity::new(4, 16));
    let mut seen: Vec<[u32; 2]> = Vec::new();
    for t in 0..80 {
        agents.iter_mut().for_each(Creature::step);
        seen.push([agents[1].facts.bits(), agents[4].facts.bits()]);
        recorder.tick_all_with_data(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let values = doc["values"].as_array().unwrap();
    assert_eq!(values.len(), 2);
    for (k, v) in values.iter().enumerate() {
        assert_eq!(v["agent"], [1, 4][k]);
        let facts: Vec<u64> = v["fields"]["facts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as u64)
            .collect();
        let want: Vec<u64> = seen[30..].iter().map(|s| u64::from(s[k])).collect();
        assert_eq!(facts, want, "agent {}", v["agent"]);
        let danger: Vec<bool> = v["fields"]["danger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x == "yes")
            .collect();
        let want: Vec<bool> = want.iter().map(|f| f & 1 == 1).collect();
        assert_eq!(danger, want);
        assert_eq!(v["overflow"], json!([]));
    }
    // Agents whose values are not recorded do not appear, and `tick_all`
    // records none.
    let mut plain = FlightRecorder::new(&CAMP, 6, Watch::All, Capacity::new(5, 16))
        .with_data(DataCapacity::default());
    plain.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, 0));
    let doc: Value = serde_json::from_str(&plain.export().to_json()).unwrap();
    assert!(doc.get("values").is_none(), "{}", doc["values"]);
}

/// Writes more than the room holds.
struct Greedy(usize);

impl AgentData for Greedy {
    fn record(&self, out: &mut DataOut<'_>) {
        const NAMES: [&str; 4] = ["a", "b", "c", "d"];
        out.text("long", "héllo wörld");
        for name in NAMES.iter().take(self.0) {
            out.num(name, 1.0);
        }
    }
}

#[test]
fn values_past_their_room_are_dropped_and_the_tick_marked() {
    use bt_core::{TickInput, tree};
    tree! { ONE: Greedy = scene_root::LEAF }
    mod scene_root {
        use super::Greedy;
        bt_core::behavior! { WAIT: Greedy }
        bt_core::decider! { pub LEAF: Greedy => WAIT }
    }
    let mut agents = vec![Greedy(0), Greedy(1), Greedy(4)];
    let mut memories: Vec<_> = (0..3).map(|i| ONE.new_memory(i)).collect();
    let mut recorder =
        FlightRecorder::new(&ONE, 3, Watch::All, Capacity::new(4, 8)).with_data(DataCapacity {
            fields: 3,
            text_bytes: 7,
            names: 3,
        });
    for t in 0..2 {
        recorder.tick_all_with_data(&ONE, &mut agents, &mut memories, |i, _| {
            TickInput::new(f64::from(t), 1.0).with_agent(i as u32)
        });
    }
    let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let v = &doc["values"];
    // "héllo w" is 8 bytes: the text is cut before the "w", at 7 bytes
    // ("héllo " and no half character).
    assert_eq!(v[0]["fields"]["long"], json!(["héllo ", "héllo "]));
    assert_eq!(v[0]["overflow"], json!([0, 1]));
    assert_eq!(v[1]["fields"]["a"], json!([1.0, 1.0]));
    // Three fields a tick, three names in all: "c" and "d" are dropped.
    assert_eq!(v[2]["fields"]["b"], json!([1.0, 1.0]));
    assert!(v[2]["fields"].get("c").is_none());
    // The fields by name, whatever order the JSON map keeps them in.
    let mut names: Vec<_> = v[2]["fields"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["a", "b", "long"]);
}

#[test]
fn flag_bits_are_exported_by_name() {
    let recorder = FlightRecorder::new(&CAMP, 1, Watch::All, Capacity::default())
        .name_decision_flags::<Facts>();
    let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let names = &doc["tree"]["flag_names"];
    assert_eq!(
        names["decision"],
        json!([
            [0, "DANGER"],
            [1, "NEST"],
            [2, "INTRUDER"],
            [3, "HURT"],
            [4, "HUNGRY"],
            [5, "CONFUSED"]
        ])
    );
    assert_eq!(names["stimuli"], json!([]));
    let both =
        FlightRecorder::new(&CAMP, 1, Watch::All, Capacity::default()).name_flags::<Facts, Facts>();
    let doc: Value = serde_json::from_str(&both.export().to_json()).unwrap();
    assert_eq!(
        doc["tree"]["flag_names"]["stimuli"][5],
        json!([5, "CONFUSED"])
    );
}

/// Checks that `recorder`'s compact export holds every tick of its
/// whole one; returns the number of runs and the two sizes.
fn same_ticks(recorder: &FlightRecorder) -> (usize, usize, usize) {
    let whole_json = recorder.export().to_json();
    let whole: Value = serde_json::from_str(&whole_json).unwrap();
    let small_json = recorder.export_compact().to_json();
    let small: Value = serde_json::from_str(&small_json).unwrap();
    let mut runs = 0;
    for (k, w) in whole["agents"].as_array().unwrap().iter().enumerate() {
        let compact = small["agents"][k]["ticks"].as_array().unwrap();
        runs += compact
            .iter()
            .filter(|e| e.as_array().unwrap().len() == 2)
            .count();
        let full = w["ticks"].as_array().unwrap();
        let back = expand(&small, k);
        assert_eq!(back.len(), full.len());
        for (a, b) in back.iter().zip(full) {
            assert_eq!(a[0], b[0]);
            assert_eq!(a[1].as_f64(), b[1].as_f64(), "time of tick {}", b[0]);
            assert_eq!((&a[2], &a[3], &a[4]), (&b[2], &b[3], &b[4]));
            assert_eq!(a[6], b[6]);
            let (x, y) = (a[5].as_array().unwrap(), b[5].as_array().unwrap());
            assert_eq!(x.len(), y.len());
            for (x, y) in x.chunks(4).zip(y.chunks(4)) {
                assert_eq!((&x[0], &x[1], &x[3]), (&y[0], &y[1], &y[3]));
                assert_eq!(
                    x[2].as_f64().unwrap() as f32,
                    y[2].as_f64().unwrap() as f32,
                    "time active at tick {}",
                    b[0]
                );
            }
        }
    }
    // Compacting a recording does what exporting it compact does.
    let mut again = recorder.export();
    again.compact();
    assert_eq!(again.to_json(), small_json);
    (runs, small_json.len(), whole_json.len())
}

#[test]
fn a_compact_recording_holds_every_tick_of_the_whole_one() {
    let (mut agents, mut memories) = crowd(30);
    let mut recorder = FlightRecorder::new(&CAMP, 30, Watch::All, Capacity::new(200, 24));
    for t in 0..260 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let (runs, small, whole) = same_ticks(&recorder);
    assert!(runs > 100, "only {runs} runs: the test does not test");
    assert!(small < whole, "{small} vs {whole}");
}

#[test]
fn a_herd_at_30_hz_compacts_many_times_over_and_loses_nothing() {
    // 1/30 s is no binary fraction: the times of the ticks and the
    // times active come from the clock and the activation times.
    let (mut grazers, mut memories) = herd::herd(40);
    let mut recorder = FlightRecorder::new(&herd::HERD, 40, Watch::All, Capacity::new(500, 12));
    for t in 0..700 {
        grazers.iter_mut().for_each(herd::Grazer::step);
        recorder.tick_all(&herd::HERD, &mut grazers, &mut memories, |i, g| {
            g.input(i, t)
        });
    }
    let (runs, small, whole) = same_ticks(&recorder);
    assert!(runs > 200, "only {runs} runs");
    assert!(small * 10 < whole, "{small} bytes of {whole}");
}

#[test]
fn lanes_record_values_as_watching_does() {
    let (mut agents, mut memories) = crowd(3);
    let (mut twins, mut twin_mem) = crowd(3);
    let mut watching = FlightRecorder::new(&CAMP, 3, Watch::Agents(&[0, 2]), Capacity::new(8, 16))
        .with_data(DataCapacity::default());
    let mut lanes = FlightRecorder::with_lanes(&CAMP, 2, Capacity::new(8, 16))
        .with_data(DataCapacity::default());
    let lane = [lanes.assign(0).unwrap(), lanes.assign(2).unwrap()];
    for t in 0..12 {
        agents.iter_mut().for_each(Creature::step);
        twins.iter_mut().for_each(Creature::step);
        watching.tick_all_with_data(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        lanes.begin_frame();
        for (k, i) in [0, 2].into_iter().enumerate() {
            let input = twins[i].input(i, t);
            lanes
                .tick_lane_with_data(lane[k], &CAMP, &mut twins[i], &mut twin_mem[i], &input)
                .unwrap();
        }
    }
    let a: Value = serde_json::from_str(&watching.export().to_json()).unwrap();
    let b: Value = serde_json::from_str(&lanes.export().to_json()).unwrap();
    assert_eq!(a["values"].as_array().unwrap().len(), 2);
    assert_eq!(a["values"], b["values"]);
}

/// Says a widened `f32` and an `f64` no `f32` holds.
struct Widened(f32);

impl AgentData for Widened {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("f32", f64::from(self.0));
        out.num("f64", f64::from(self.0) + 0.1);
    }
}

#[test]
fn a_widened_f32_is_written_as_its_shortest_decimal_and_reads_back_exactly() {
    use bt_core::{TickInput, tree};
    tree! { ONE: Widened = widened_root::LEAF }
    mod widened_root {
        use super::Widened;
        bt_core::behavior! { WAIT: Widened }
        bt_core::decider! { pub LEAF: Widened => WAIT }
    }
    let xs = [0.1f32, 2.764, 1e-7, 3.4e38, 16_777_217.0];
    let mut agents: Vec<Widened> = xs.iter().map(|&x| Widened(x)).collect();
    let mut memories: Vec<_> = (0..xs.len()).map(|i| ONE.new_memory(i as u64)).collect();
    let mut recorder = FlightRecorder::new(&ONE, xs.len(), Watch::All, Capacity::new(2, 8))
        .with_data(DataCapacity::new(2, 8));
    recorder.tick_all_with_data(&ONE, &mut agents, &mut memories, |i, _| {
        TickInput::new(0.0, 1.0).with_agent(i as u32)
    });
    let text = recorder.export().to_json();
    let mut streamed = Vec::new();
    recorder.write_json(&mut streamed).unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), text);
    assert!(text.contains(r#""f32":[0.1]"#), "{text}");
    assert!(text.contains(r#""f32":[2.764]"#), "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    for (k, &x) in xs.iter().enumerate() {
        let f = &doc["values"][k]["fields"];
        assert_eq!(f["f32"][0].as_f64().unwrap() as f32, x);
        let y = f64::from(x) + 0.1;
        if f64::from(y as f32) == y {
            continue;
        }
        // Written whole (serde_json reads it back to within an ulp).
        let read = f["f64"][0].as_f64().unwrap();
        assert!((read - y).abs() <= y.abs() * 1e-15, "{read} for {y}");
        assert!(text.contains(&format!("{y}")), "{y} in {text}");
    }
}
