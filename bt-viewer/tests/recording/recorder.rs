//! The flight recorder: it ticks exactly as bt-core does, keeps the last
//! K ticks whole, and what it keeps is what the tick did.

use crate::embedded;
use crate::scene;

use bt_core::{Event, TickInput, Tracer, tick_all, tick_traced};
use bt_viewer::{Capacity, FORMAT, FlightRecorder, VERSION, Watch};
use scene::{CAMP, Creature, crowd};
use serde_json::Value;

/// Ticks of a scene run, as the export writes them, for agent entry `k`.
fn ticks(json: &Value, k: usize) -> &Vec<Value> {
    json["agents"][k]["ticks"].as_array().expect("ticks")
}

fn export(recorder: &FlightRecorder) -> Value {
    serde_json::from_str(&recorder.export().to_json()).expect("the export is JSON")
}

#[test]
fn recording_a_crowd_ticks_it_as_tick_all_does() {
    for watch in [Watch::All, Watch::Agents(&[0, 7, 8, 30])] {
        let (mut plain, mut plain_mem) = crowd(40);
        let (mut rec, mut rec_mem) = crowd(40);
        let mut recorder = FlightRecorder::new(&CAMP, 40, watch, Capacity::new(20, 16));
        for t in 0..200 {
            plain.iter_mut().for_each(Creature::step);
            rec.iter_mut().for_each(Creature::step);
            let a = tick_all(&CAMP, &mut plain, &mut plain_mem, |i, c| c.input(i, t));
            let b = recorder.tick_all(&CAMP, &mut rec, &mut rec_mem, |i, c| c.input(i, t));
            assert_eq!(a, b, "crowd report at tick {t} ({watch:?})");
            for (i, (x, y)) in plain_mem.iter().zip(&rec_mem).enumerate() {
                assert!(
                    x.active_path().eq(y.active_path()),
                    "agent {i} at tick {t} ({watch:?})"
                );
            }
        }
    }
}

#[test]
fn a_full_recorder_keeps_exactly_the_last_k_ticks() {
    let (mut agents, mut memories) = crowd(3);
    let mut recorder = FlightRecorder::new(&CAMP, 3, Watch::Agents(&[2]), Capacity::new(5, 16));
    for t in 0..12 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let json = export(&recorder);
    assert_eq!(json["format"], FORMAT);
    assert_eq!(json["version"], VERSION);
    assert_eq!(json["agents"].as_array().unwrap().len(), 1);
    assert_eq!(json["agents"][0]["agent"], 2);
    assert_eq!(json["agents"][0]["first_tick"], 7);
    let serials: Vec<u64> = ticks(&json, 0)
        .iter()
        .map(|t| t[0].as_u64().unwrap())
        .collect();
    assert_eq!(serials, [7, 8, 9, 10, 11]);
    let times: Vec<f64> = ticks(&json, 0)
        .iter()
        .map(|t| t[1].as_f64().unwrap())
        .collect();
    assert_eq!(times, [1.75, 2.0, 2.25, 2.5, 2.75]);
}

#[test]
fn busy_agents_share_a_frame_and_only_events_are_cut() {
    // Room for the header and path of each agent (8 words) and 2 more
    // words each on average: busy agents use what quiet ones leave, and
    // when the frame is full the late agents' events are cut, never their
    // paths.
    const N: usize = 6;
    let (mut agents, mut memories) = crowd(N);
    let mut recorder = FlightRecorder::new(&CAMP, N, Watch::All, Capacity::new(40, 10));
    let mut leaves = Vec::new();
    for t in 0..100 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        leaves.push(
            memories
                .iter()
                .map(|m| (m.leaf().map(|l| l.0), m.depth()))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(recorder.frames(), 100);
    let json = export(&recorder);
    let mut cut = 0;
    for (serial, frame) in leaves.iter().enumerate().skip(60) {
        let mut words = 0;
        for (k, &(leaf, depth)) in frame.iter().enumerate() {
            let tick = &ticks(&json, k)[serial - 60];
            assert_eq!(tick[0].as_u64().unwrap() as usize, serial);
            let got = tick[2].as_u64().map(|l| l as u16);
            assert_eq!(got, leaf, "leaf of agent {k} at {serial}");
            let levels = tick[5].as_array().unwrap().len() / 4;
            assert_eq!(levels, depth, "the whole path of {k} at {serial}");
            let path = tick[5].as_array().unwrap();
            let masks = path.chunks(4).filter(|l| l[3] != 0).count();
            words += 2 + levels + masks + tick[6].as_array().unwrap().len() / 4;
            cut += tick[4].as_u64().unwrap() & 1;
        }
        assert!(words <= N * 10, "frame {serial} holds {words} words");
    }
    assert!(cut > 0, "no tick was cut short: the test does not test");
}

#[test]
fn ticking_agents_one_by_one_records_frame_by_frame() {
    let (mut agents, mut memories) = crowd(3);
    let mut recorder = FlightRecorder::new(&CAMP, 3, Watch::Agents(&[0, 2]), Capacity::new(8, 16));
    for t in 0..5 {
        for i in [2, 1, 0] {
            let input = agents[i].input(i, t);
            recorder
                .tick(&CAMP, &mut agents[i], &mut memories[i], &input, i)
                .unwrap();
        }
    }
    assert_eq!(recorder.frames(), 5);
    let json = export(&recorder);
    for k in 0..2 {
        let serials: Vec<u64> = ticks(&json, k)
            .iter()
            .map(|t| t[0].as_u64().unwrap())
            .collect();
        assert_eq!(serials, [0, 1, 2, 3, 4]);
    }
}

#[test]
fn lanes_record_agents_under_their_own_ids_as_watching_them_does() {
    let (mut agents, mut memories) = crowd(3);
    let (mut twins, mut twin_memories) = crowd(3);
    let capacity = Capacity::new(8, 16);
    let mut watching = FlightRecorder::new(&CAMP, 3, Watch::Agents(&[0, 2]), capacity);
    let mut lanes = FlightRecorder::with_lanes(&CAMP, 4, capacity);
    assert_eq!((lanes.lanes(), lanes.watched()), (4, 0));
    let ids = [lanes.assign(900), lanes.assign(7)];
    assert_eq!(ids, [Some(0), Some(1)]);
    assert_eq!(lanes.lane_agent(1), Some(7));
    let mut traced = Vec::new();
    for t in 0..6 {
        agents.iter_mut().for_each(Creature::step);
        watching.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        twins.iter_mut().for_each(Creature::step);
        lanes.begin_frame();
        for (lane, i) in [(0, 0), (1, 2)] {
            let input = twins[i].input(i, t);
            let mut also = Kept::default();
            lanes
                .tick_lane_traced(
                    lane,
                    &CAMP,
                    &mut twins[i],
                    &mut twin_memories[i],
                    &input,
                    &mut also,
                )
                .unwrap();
            traced.push(also.0.len());
        }
        let input = twins[1].input(1, t);
        bt_core::tick(&CAMP, &mut twins[1], &mut twin_memories[1], &input).unwrap();
    }
    let (want, got) = (export(&watching), export(&lanes));
    assert_eq!(got["agents"].as_array().unwrap().len(), 2);
    assert_eq!(
        (
            got["agents"][0]["agent"].as_u64(),
            got["agents"][1]["agent"].as_u64()
        ),
        (Some(900), Some(7))
    );
    for k in 0..2 {
        assert_eq!(ticks(&got, k), ticks(&want, k), "lane {k}");
    }
    // The other tracer saw what the lane kept.
    let kept: Vec<usize> = (0..6)
        .flat_map(|t| (0..2).map(move |k| (t, k)))
        .map(|(t, k)| ticks(&got, k)[t][6].as_array().unwrap().len() / 4)
        .collect();
    assert_eq!(traced, kept);
    assert!(kept.iter().sum::<usize>() > 0);
}

#[test]
fn a_released_lane_is_given_again_only_once_its_ticks_are_overwritten() {
    let (mut agents, mut memories) = crowd(1);
    let mut lanes = FlightRecorder::with_lanes(&CAMP, 1, Capacity::new(3, 16));
    let lane = lanes.assign(1).unwrap();
    let mut run = |lanes: &mut FlightRecorder, t: u32, record: bool| {
        lanes.begin_frame();
        if record {
            let input = agents[0].input(0, t);
            lanes
                .tick_lane(lane, &CAMP, &mut agents[0], &mut memories[0], &input)
                .unwrap();
        }
    };
    run(&mut lanes, 0, true);
    run(&mut lanes, 1, true);
    lanes.release(lane);
    assert_eq!(lanes.assign(2), None, "its ticks are still kept");
    run(&mut lanes, 2, false);
    run(&mut lanes, 3, false);
    assert_eq!(lanes.assign(2), None, "its tick 1 is still kept");
    let json = export(&lanes);
    assert_eq!(json["agents"][0]["agent"], 1);
    assert_eq!(ticks(&json, 0).len(), 1);
    run(&mut lanes, 4, false);
    assert_eq!(lanes.assign(2), Some(lane));
    run(&mut lanes, 5, true);
    let json = export(&lanes);
    assert_eq!(json["agents"][0]["agent"], 2);
    assert_eq!(ticks(&json, 0)[0][0], 5);
}

/// Collects the events the recorder keeps: a `decide`'s value that
/// rejects is kept in its rejection, so it is kept here beside the line of
/// the rejection, by its place.
#[derive(Default)]
struct Kept(Vec<String>, Vec<(usize, f32)>);

impl Tracer for Kept {
    fn event(&mut self, event: &Event) {
        if let Event::Declined { value, .. } = *event {
            self.1.push((self.0.len(), value));
            return;
        }
        let kept = !matches!(
            event,
            Event::Start { .. }
                | Event::Visit { .. }
                | Event::Idle
                | Event::End { .. }
                | Event::Ticked { running: true, .. }
        );
        if kept {
            let mut line = String::new();
            bt_core::write_event(&mut line, event).unwrap();
            self.0.push(line.trim().to_owned());
        }
    }
}

#[test]
fn kept_ticks_hold_the_events_and_the_active_path_of_the_tick() {
    let (mut agents, mut memories) = crowd(2);
    let (mut twins, mut twin_mem) = crowd(2);
    let mut recorder = FlightRecorder::new(&CAMP, 2, Watch::All, Capacity::new(300, 40));
    let mut lines = Vec::new();
    let mut declined = Vec::new();
    let mut paths = Vec::new();
    for t in 0..300 {
        agents.iter_mut().for_each(Creature::step);
        twins.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        let mut kept = Kept::default();
        let input = twins[1].input(1, t);
        tick_traced(&CAMP, &mut twins[1], &mut twin_mem[1], &input, &mut kept).unwrap();
        lines.push(kept.0);
        declined.push(kept.1);
        let now = scene::now(t);
        paths.push(
            twin_mem[1]
                .active_path()
                .map(|l| (l.item.0, l.redecides, (now - l.since) as f32, l.mask))
                .collect::<Vec<_>>(),
        );
    }
    let json = export(&recorder);
    let legend = &json["legend"];
    let name = |i: u64| {
        json["tree"]["items"][i as usize]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let mut kinds_seen = std::collections::BTreeSet::new();
    let mut declined_seen = 0;
    for (t, tick) in ticks(&json, 1).iter().enumerate() {
        let events = tick[6].as_array().unwrap();
        assert_eq!(
            events.len() / 4,
            lines[t].len(),
            "events of tick {t}: {:?}",
            lines[t]
        );
        for (k, line) in events.chunks(4).zip(&lines[t]) {
            let kind = legend["events"][k[0].as_u64().unwrap() as usize - 1]
                .as_str()
                .unwrap();
            kinds_seen.insert(kind.to_owned());
            let item = format!("{}:{}", k[2], name(k[2].as_u64().unwrap()));
            assert!(line.contains(&item), "tick {t}: {kind} of {item} vs {line}");
            let word = match kind {
                "reject" => "reject",
                "accept" => "accept",
                "preempt" => "preempt",
                "activate" => "activate",
                "ended" => "ended",
                "deactivate" => "deactivate",
                "redecide" => "redecide",
                "subset-rule" => "SUBSET RULE",
                other => other,
            };
            assert!(line.contains(word), "tick {t}: {kind} vs {line}");
            if kind == "reject" || kind == "deactivate" {
                let table = if kind == "reject" {
                    "rejections"
                } else {
                    "whys"
                };
                let reason = legend[table][k[1].as_u64().unwrap() as usize]
                    .as_str()
                    .unwrap();
                assert!(
                    line.ends_with(&format!("({reason})")),
                    "tick {t}: {reason} vs {line}"
                );
            }
            // A `decide` that rejects keeps its value, as one that accepts.
            if kind == "reject" && line.ends_with("(decide)") {
                let place = lines[t].iter().position(|l| l == line).unwrap();
                let value = declined[t]
                    .iter()
                    .find(|&&(at, _)| at == place)
                    .map(|&(_, v)| v)
                    .expect("bt-core's value for the rejection");
                assert_eq!(k[3].as_f64(), Some(f64::from(value)), "tick {t}: {line}");
                declined_seen += 1;
            }
        }
        let path = tick[5].as_array().unwrap();
        let got: Vec<_> = path
            .chunks(4)
            .map(|l| {
                (
                    l[0].as_u64().unwrap() as u16,
                    l[1].as_u64().unwrap() as u16,
                    l[2].as_f64().unwrap() as f32,
                    l[3].as_str().map_or(0, |m| {
                        u64::from_str_radix(m.trim_start_matches("0x"), 16).unwrap()
                    }),
                )
            })
            .collect();
        assert_eq!(got, paths[t], "path after tick {t}");
    }
    for kind in [
        "reject",
        "activate",
        "deactivate",
        "preempt",
        "redecide",
        "subset-rule",
        "ended",
    ] {
        assert!(
            kinds_seen.contains(kind),
            "the scene never shows `{kind}`: {kinds_seen:?}"
        );
    }
    assert!(
        declined_seen > 0,
        "the scene never shows a `decide` rejecting"
    );
}

#[test]
fn a_tick_larger_than_its_frame_is_marked_and_cut_short() {
    let (mut agents, mut memories) = crowd(1);
    // One tick of at most 4 words: the header and the path fill it.
    let mut recorder = FlightRecorder::new(&CAMP, 1, Watch::All, Capacity::new(1, 4));
    agents[0].facts = scene::Facts::NEST | scene::Facts::INTRUDER;
    recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, 0));
    let json = export(&recorder);
    let tick = &ticks(&json, 0)[0];
    assert_eq!(tick[4].as_u64().unwrap() & 1, 1, "{tick}");
    assert!(tick[6].as_array().unwrap().is_empty());
    // The path is whole all the same.
    assert_eq!(tick[5].as_array().unwrap().len(), 4 * memories[0].depth());
}

#[test]
fn a_tick_error_is_kept_with_its_tick() {
    let (mut agents, mut memories) = crowd(1);
    let mut recorder = FlightRecorder::new(&CAMP, 1, Watch::All, Capacity::new(4, 16));
    let bad = TickInput::new(f64::NAN, 0.25);
    let result = recorder.tick(&CAMP, &mut agents[0], &mut memories[0], &bad, 0);
    assert!(result.is_err());
    let json = export(&recorder);
    let tick = &ticks(&json, 0)[0];
    let code = tick[4].as_u64().unwrap() >> 1;
    assert_eq!(json["legend"]["errors"][code as usize - 1], "invalid input");
}

#[test]
fn unwatched_agents_are_not_recorded() {
    let (mut agents, mut memories) = crowd(4);
    let mut recorder =
        FlightRecorder::new(&CAMP, 4, Watch::Agents(&[3, 1, 3]), Capacity::new(4, 16));
    assert_eq!(recorder.watched(), 2);
    assert!(recorder.is_watched(1) && recorder.is_watched(3));
    assert!(!recorder.is_watched(0) && !recorder.is_watched(2) && !recorder.is_watched(9));
    recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, 0));
    let json = export(&recorder);
    let ids: Vec<u64> = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [3, 1]);
}

#[test]
fn the_tree_is_exported_with_every_item() {
    let recorder = FlightRecorder::new(&CAMP, 1, Watch::All, Capacity::default());
    let json = export(&recorder);
    let items = json["tree"]["items"].as_array().unwrap();
    assert_eq!(items.len(), CAMP.len());
    let by_name = |n: &str| items.iter().find(|i| i["name"] == n).unwrap();
    let guard = by_name("GUARD");
    assert_eq!(guard["kind"], "group");
    assert_eq!(guard["policy"], "prioritized");
    assert_eq!(guard["behavior"], "GUARD_SCOPE");
    assert_eq!(guard["preconditions"]["decision"]["all"], "0x6");
    let children: Vec<&str> = guard["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            items[c.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(children, ["YELL", "FIGHT"]);
    assert_eq!(by_name("PATROL")["preconditions"]["every"], 2.0);
    assert_eq!(
        by_name("THINK")["preconditions"]["decision"]["none"],
        "0x20"
    );
    assert_eq!(by_name("MUDDLE")["decide"], true);
    assert_eq!(by_name("IDLE")["policy"], "random");
    assert_eq!(by_name("FLIP")["parent"], by_name("IDLE")["index"]);
    assert!(by_name("ROOT")["parent"].is_null());
}

#[test]
#[should_panic(expected = "watched agent 5 of a crowd of 4")]
fn watching_an_agent_outside_the_crowd_panics() {
    FlightRecorder::new(&CAMP, 4, Watch::Agents(&[5]), Capacity::default());
}

#[test]
fn capacity_states_its_bytes_per_tick() {
    let c = Capacity::new(300, 16);
    assert_eq!(c.bytes_per_tick(), 16 * 8 + 4);
    let recorder = FlightRecorder::new(&CAMP, 10, Watch::Agents(&[1, 2]), c);
    assert_eq!(recorder.frame_bytes(), 2 * 300 * c.bytes_per_tick());
}

#[test]
fn the_legend_names_every_code_in_order() {
    use bt_core::{Rejection, Why};
    let json = export(&FlightRecorder::new(
        &CAMP,
        1,
        Watch::All,
        Capacity::default(),
    ));
    let rejections = [
        Rejection::Decision,
        Rejection::Stimuli,
        Rejection::Timer,
        Rejection::Decide,
        Rejection::NoChild,
        Rejection::Gate,
        Rejection::Cooldown,
        Rejection::Waiting,
        Rejection::RoleBusy,
        Rejection::NoSelection,
    ];
    let names: Vec<&str> = rejections.iter().map(|r| r.as_str()).collect();
    assert_eq!(json["legend"]["rejections"], serde_json::json!(names));
    let whys = [
        Why::Ended,
        Why::ActivateFailed,
        Why::Preempted,
        Why::NoChild,
        Why::Rejected,
        Why::ParentLeft,
        Why::Error,
        Why::Stopped,
        Why::Refused,
        Why::Reselected,
    ];
    let names: Vec<&str> = whys.iter().map(|w| w.as_str()).collect();
    assert_eq!(json["legend"]["whys"], serde_json::json!(names));
}

/// Deciders whose names look like markup, to put in a page.
const MARKUP_NAMES: [&str; 4] = ["<!--<script>", "</script>", "a > b && c", "<!-- x -->"];

/// A small recording whose first deciders are named [`MARKUP_NAMES`].
fn markup_recording() -> String {
    let (mut agents, mut memories) = crowd(2);
    let mut recorder = FlightRecorder::new(&CAMP, 2, Watch::All, Capacity::new(8, 16));
    for t in 0..8 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let mut recording = recorder.export();
    for (item, name) in recording.tree.items.iter_mut().zip(MARKUP_NAMES) {
        item.name = name;
    }
    recording.to_json()
}

#[test]
fn decider_names_like_markup_cannot_end_or_hide_the_page_script() {
    let json = markup_recording();
    let page = bt_viewer::page_with(&json);
    let (_, embedded) = embedded::element(&page, "recording").expect("the embedded recording");
    // Nothing inside can open a tag, a comment or an entity...
    assert!(
        !embedded.contains(['<', '>', '&']),
        "markup left in the embedded recording"
    );
    // ...and it reads as the same recording, names and all.
    let text = embedded::embedded_recording(&page, "recording");
    let read: Value = serde_json::from_str(&text).expect("the embedded JSON");
    assert_eq!(read, serde_json::from_str::<Value>(&json).unwrap());
    for (k, name) in MARKUP_NAMES.iter().enumerate() {
        assert_eq!(read["tree"]["items"][k]["name"], *name);
    }
    // The page's own script follows, whole.
    let end = embedded.as_ptr() as usize - page.as_ptr() as usize + embedded.len();
    let rest = &page[end..];
    let tail = &bt_viewer::PAGE[bt_viewer::PAGE.find("<!--RECORDING-->").unwrap() + 16..];
    assert_eq!(rest.strip_prefix("</script>"), Some(tail));

    // write_page writes that page, and the recording as it is.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/viewer-tests/markup-names-text");
    let written = bt_viewer::write_page(&dir, &json).unwrap();
    assert!(std::fs::read_to_string(written).unwrap() == page);
    assert!(std::fs::read_to_string(dir.join("recording.json")).unwrap() == json);
}

/// An agent that notes the id its tick was given.
#[derive(Clone, Debug, Default)]
struct Named(u32);

bt_core::behavior! { NOTE_ID: Named, tick: |a, cx| { a.0 = cx.agent; true } }
bt_core::decider! { NOTE: Named => NOTE_ID }
bt_core::group! { NAMED_ROOT: Named, prioritized [NOTE] }
bt_core::tree! { NAMED: Named = NAMED_ROOT }

/// With no id set by the input, every agent ticks under its index, as
/// `tick_all` gives it: the watched ones and the unwatched ones between
/// and after them.
#[test]
fn a_recorded_crowd_gives_each_agent_its_index_as_id_as_tick_all_does() {
    for watch in [Watch::All, Watch::Agents(&[2, 5]), Watch::Agents(&[])] {
        let mut agents = vec![Named(u32::MAX); 8];
        let mut memories: Vec<_> = (0..8).map(|i| NAMED.new_memory(i)).collect();
        let mut recorder = FlightRecorder::new(&NAMED, 8, watch, Capacity::new(4, 16));
        for t in 0..3 {
            recorder.tick_all(&NAMED, &mut agents, &mut memories, |_, _| {
                TickInput::new(f64::from(t), 1.0)
            });
            let ids: Vec<u32> = agents.iter().map(|a| a.0).collect();
            assert_eq!(ids, (0..8).collect::<Vec<u32>>(), "{watch:?}, tick {t}");
        }
        // An id the input sets is kept.
        recorder.tick_all(&NAMED, &mut agents, &mut memories, |i, _| {
            TickInput::new(9.0, 1.0).with_agent(100 + i as u32)
        });
        let ids: Vec<u32> = agents.iter().map(|a| a.0).collect();
        assert_eq!(ids, (100..108).collect::<Vec<u32>>(), "{watch:?}");
    }
}

/// A courier: fetches once (a deferred action), then waits.
#[derive(Clone, Debug, Default)]
struct Courier(u32);

bt_core::leaf! { FETCH: Courier,
    when: |c, _| c.0 == 0,
    launch: |_, _cx| Some(bt_core::Action::new(7, 0)),
    deactivate: |c, _cx| c.0 += 1,
}
bt_core::leaf! { WAIT: Courier }
bt_core::group! { COURIER_ROOT: Courier, prioritized [FETCH, WAIT] }
bt_core::tree! { COURIERS: Courier = COURIER_ROOT }

/// An agent given the id of another whose action is pending under it is
/// refused as `tick_all` refuses it, whether it, the holder or neither is
/// watched, and the launches name the same agents.
#[test]
fn a_recorded_crowd_refuses_an_id_taken_as_tick_all_does() {
    let run = |watch: Option<Watch>| {
        let shared = COURIERS.new_shared(16);
        let mut agents = vec![Courier::default(); 6];
        let mut memories: Vec<_> = (0..6).map(|i| COURIERS.new_memory_in(&shared, i)).collect();
        let mut recorder =
            watch.map(|w| FlightRecorder::new(&COURIERS, 6, w, Capacity::new(4, 16)));
        let mut reports = Vec::new();
        let mut launched = Vec::new();
        for t in 0..2 {
            // Agent 4 takes agent 1's id at the second tick, while agent
            // 1's fetch is pending.
            let input = |i: usize, _: &mut Courier| {
                let id = if t == 1 && i == 4 { 1 } else { i as u32 };
                TickInput::new(f64::from(t), 0.1).with_agent(id)
            };
            reports.push(match &mut recorder {
                Some(r) => r.tick_all(&COURIERS, &mut agents, &mut memories, input),
                None => tick_all(&COURIERS, &mut agents, &mut memories, input),
            });
            shared.drain_actions(|r| launched.push(r.agent));
        }
        (reports, launched)
    };
    let plain = run(None);
    assert_eq!(plain.0[1].errors, 1, "the clash is there to find");
    for watch in [
        Watch::All,
        Watch::Agents(&[4]),
        Watch::Agents(&[1]),
        Watch::Agents(&[0]),
    ] {
        assert_eq!(run(Some(watch)), plain, "{watch:?}");
    }
}
