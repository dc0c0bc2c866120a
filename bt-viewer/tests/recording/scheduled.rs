//! A scheduled crowd through the recorder: the same agents tick with the
//! same `dt` and decide alike as with `bt_core::tick_scheduled`, only the
//! agents ticked are recorded, and the page shows a skipped tick as a gap
//! in the lane and counts only the agents ticked.

use crate::herd;
use crate::webdriver;

use std::collections::BTreeSet;

use bt_core::{FrameReport, Rate, Schedule, TickInput, tick_scheduled};
use bt_viewer::{Capacity, FlightRecorder, Watch, write_page};
use herd::{Grazer, HERD, HerdMemory, herd, now};
use serde_json::Value;
use webdriver::{file_url, js, out_dir};

const AGENTS: usize = 48;
const FRAMES: u32 = 90;

/// Agent `i`'s rate: every frame, every third, every seventh, or when
/// woken.
fn rate(i: usize) -> Rate {
    match i % 4 {
        0 => Rate::EveryFrame,
        1 => Rate::Every(3),
        2 => Rate::Every(7),
        _ => Rate::OnWake,
    }
}

fn schedule() -> Schedule {
    // Less than the agents due in the busiest frames: some wait.
    let mut s = Schedule::new(AGENTS, now(0)).with_budget(Some(20));
    for i in 0..AGENTS {
        s.set_rate(i, rate(i)).unwrap();
    }
    s
}

/// Wakes the agents woken at frame `f` (each woken one every 10 frames).
fn wake(s: &mut Schedule, f: u32) {
    for i in (3..AGENTS).step_by(4) {
        if (f as usize + i).is_multiple_of(10) {
            s.wake(i);
        }
    }
}

fn input(i: usize, g: &Grazer, t: u32, dt: f32) -> TickInput {
    TickInput::new(now(t), dt)
        .with_decision(g.sense)
        .with_agent(i as u32)
}

/// The run without the recorder: each frame's report, and per frame the
/// agents ticked with their `dt` and their leaf after it.
type Run = Vec<(FrameReport, Vec<(usize, u32, Option<u16>)>)>;

fn leaves(memories: &[HerdMemory], ticked: &[(usize, u32)]) -> Vec<(usize, u32, Option<u16>)> {
    ticked
        .iter()
        .map(|&(i, dt)| (i, dt, memories[i].leaf().map(|l| l.0)))
        .collect()
}

/// The run ticked by `tick_scheduled`, or through `recorder` when given.
fn run(mut recorder: Option<&mut FlightRecorder>) -> Run {
    let (mut grazers, mut memories) = herd(AGENTS);
    let mut s = schedule();
    let mut out = Vec::new();
    for t in 0..FRAMES {
        grazers.iter_mut().for_each(Grazer::step);
        wake(&mut s, t);
        let mut ticked = Vec::new();
        let mut tick_input = |i: usize, g: &mut Grazer, dt: f32| {
            ticked.push((i, dt.to_bits()));
            input(i, g, t, dt)
        };
        let (agents, mems, at) = (&mut grazers[..], &mut memories[..], now(t));
        let report = match recorder.as_deref_mut() {
            Some(r) => r.tick_scheduled(&HERD, agents, mems, &mut s, at, &mut tick_input),
            None => tick_scheduled(&HERD, agents, mems, &mut s, at, &mut tick_input),
        };
        out.push((report, leaves(&memories, &ticked)));
    }
    out
}

fn plain() -> Run {
    run(None)
}

fn recorded(watch: Watch<'_>) -> (Run, FlightRecorder) {
    let mut recorder =
        FlightRecorder::new(&HERD, AGENTS, watch, Capacity::new(FRAMES as usize, 12));
    (run(Some(&mut recorder)), recorder)
}

/// Per agent, the frames it ticked in.
fn ticked_frames(run: &Run) -> Vec<BTreeSet<u64>> {
    let mut out = vec![BTreeSet::new(); AGENTS];
    for (f, (_, ticks)) in run.iter().enumerate() {
        for &(i, _, _) in ticks {
            out[i].insert(f as u64);
        }
    }
    out
}

#[test]
fn a_recorded_schedule_ticks_and_decides_as_tick_scheduled_and_records_only_the_agents_ticked() {
    let expected = plain();
    let frames = ticked_frames(&expected);
    // The schedule skips: every agent but the every-frame ones misses
    // frames, and the budget leaves some waiting.
    assert!(frames[1].len() < FRAMES as usize / 2, "{:?}", frames[1]);
    assert!(expected.iter().any(|(r, _)| r.waiting > 0));
    let watched: Vec<usize> = (0..AGENTS).filter(|i| i % 3 != 2).collect();
    for watch in [Watch::All, Watch::Agents(&watched)] {
        let (run, recorder) = recorded(watch);
        // Same agents, same `dt`, same leaves, same reports.
        assert!(
            run == expected,
            "the recorded run differs from tick_scheduled's"
        );
        let recording: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
        let agents = recording["agents"].as_array().unwrap();
        let compact: Value = serde_json::from_str(&recorder.export_compact().to_json()).unwrap();
        let recorded: Vec<u64> = agents
            .iter()
            .map(|a| a["agent"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = match watch {
            Watch::All => (0..AGENTS as u64).collect(),
            Watch::Agents(w) => w.iter().map(|&i| i as u64).collect(),
        };
        assert_eq!(recorded, want);
        for a in agents {
            let i = a["agent"].as_u64().unwrap() as usize;
            let serials: BTreeSet<u64> = a["ticks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t[0].as_u64().unwrap())
                .collect();
            assert_eq!(serials, frames[i], "agent {i}: its recorded ticks");
            // Compacted, a run is of ticks a frame apart only: the gaps stay.
            let entry = compact["agents"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["agent"] == a["agent"])
                .unwrap();
            let mut expanded = BTreeSet::new();
            let mut last = 0;
            for t in entry["ticks"].as_array().unwrap() {
                let t = t.as_array().unwrap();
                if t.len() == 7 {
                    last = t[0].as_u64().unwrap();
                    expanded.insert(last);
                } else {
                    for _ in 0..t[0].as_u64().unwrap() {
                        last += 1;
                        expanded.insert(last);
                    }
                }
            }
            assert_eq!(expanded, frames[i], "agent {i}: its compacted ticks");
            // Each tick at its frame's time, with the leaf the plain run had.
            for t in a["ticks"].as_array().unwrap() {
                let f = t[0].as_u64().unwrap() as usize;
                let at = t[1].as_f64().unwrap();
                assert!((at - now(f as u32)).abs() < 1e-12, "agent {i} at {f}: {at}");
                let leaf = expected[f].1.iter().find(|e| e.0 == i).unwrap().2;
                assert_eq!(t[2].as_u64(), leaf.map(u64::from), "agent {i} at {f}");
            }
        }
    }
}

#[test]
fn the_page_shows_a_skipped_tick_as_a_gap_and_counts_only_the_agents_ticked() {
    let expected = plain();
    let frames = ticked_frames(&expected);
    let (_, recorder) = recorded(Watch::All);
    let page = write_page(&out_dir("scheduled"), &recorder.export().to_json()).unwrap();
    webdriver::with_browser((1600, 1000), |client| async move {
        client.goto(&file_url(&page)).await.unwrap();
        webdriver::wait_ready_within(&client, std::time::Duration::from_secs(30)).await;
        for i in [0usize, 1, 2, 3] {
            let lane = js(&client, &format!("return btViewer.lane({i});")).await;
            // Every tick shown is one it ticked, and every tick it
            // ticked is shown.
            let mut shown = BTreeSet::new();
            for span in lane["spans"].as_array().unwrap() {
                let (from, to) = (span[1].as_u64().unwrap(), span[2].as_u64().unwrap());
                shown.extend(from..=to);
            }
            assert_eq!(shown, frames[i], "agent {i}'s lane: {lane}");
        }
        // The overview: per tick, the agents ticked.
        let overview = js(&client, "return btViewer.overview();").await;
        let first = overview["first"].as_u64().unwrap() as usize;
        let counts = overview["counts"].as_object().unwrap();
        for (f, (report, _)) in expected.iter().enumerate().skip(first) {
            let shown: u64 = counts
                .values()
                .map(|c| c[f - first].as_u64().unwrap())
                .sum();
            assert_eq!(shown, u64::from(report.ticked), "frame {f}");
        }
        let errors = js(&client, "return window.btErrors;").await;
        assert_eq!(errors, serde_json::json!([]));
    });
}
