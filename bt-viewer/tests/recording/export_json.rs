//! `FlightRecorder::write_json` and `write_json_compact` write, byte for
//! byte, the text of `export().to_json()` and `export_compact().to_json()`
//! (what the viewer reads), for every kind of recording: kept ticks that
//! wrapped around, some agents watched, runs of repeats, decide values,
//! Subset Rule reports, errors with a time that is not a number, events
//! cut short, agents' values (numbers, texts, some dropped, a name past
//! the room), lanes given back and given again, nothing recorded.

use crate::herd;
use crate::scene;

use bt_core::TickInput;
use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
use herd::{HERD, herd};
use scene::{CAMP, Creature, crowd};

/// Both writers against the recordings they stand for.
#[track_caller]
fn same_text(recorder: &FlightRecorder) {
    let mut plain = Vec::new();
    recorder.write_json(&mut plain).unwrap();
    let expected = recorder.export().to_json();
    assert!(
        plain == expected.as_bytes(),
        "{}",
        first_difference(&plain, &expected)
    );
    let mut compact = Vec::new();
    recorder.write_json_compact(&mut compact).unwrap();
    let expected = recorder.export_compact().to_json();
    assert!(
        compact == expected.as_bytes(),
        "{}",
        first_difference(&compact, &expected)
    );
}

fn first_difference(got: &[u8], expected: &str) -> String {
    let at = got
        .iter()
        .zip(expected.as_bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(expected.len()));
    let around = |s: &[u8]| {
        String::from_utf8_lossy(&s[at.saturating_sub(80)..(at + 80).min(s.len())]).into_owned()
    };
    format!(
        "{} bytes written, {} expected; first difference at {at}:\n  written:  {}\n  expected: {}",
        got.len(),
        expected.len(),
        around(got),
        around(expected.as_bytes())
    )
}

fn camp(n: usize, watch: Watch<'_>, capacity: Capacity, ticks: u32) -> FlightRecorder {
    let (mut agents, mut memories) = crowd(n);
    let mut recorder = FlightRecorder::new(&CAMP, n, watch, capacity);
    for t in 0..ticks {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    recorder
}

#[test]
fn a_camp_kept_whole_and_wrapped_around() {
    same_text(&camp(12, Watch::All, Capacity::new(300, 16), 200));
    same_text(&camp(12, Watch::All, Capacity::new(40, 16), 333));
    same_text(&camp(
        30,
        Watch::Agents(&[29, 3, 17]),
        Capacity::new(64, 16),
        150,
    ));
}

#[test]
fn nothing_recorded_yet() {
    same_text(&camp(5, Watch::All, Capacity::new(10, 16), 0));
    same_text(&camp(5, Watch::Agents(&[]), Capacity::new(10, 16), 4));
}

#[test]
fn events_cut_short() {
    // Room for the header and the path only: most events are dropped.
    same_text(&camp(20, Watch::All, Capacity::new(50, 4), 120));
}

#[test]
fn ticks_with_errors_and_times_that_are_not_numbers() {
    let n = 8;
    let (mut agents, mut memories) = crowd(n);
    let mut recorder = FlightRecorder::new(&CAMP, n, Watch::All, Capacity::new(60, 16));
    for t in 0..80u32 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| match (i, t % 7) {
            (2, 3) => TickInput::new(f64::NAN, 0.25),
            (5, 1) => TickInput::new(f64::INFINITY, 0.25),
            (6, _) if t > 40 => TickInput::new(f64::NAN, 0.25).with_agent(6),
            _ => c.input(i, t),
        });
    }
    same_text(&recorder);
}

#[test]
fn a_herd_with_its_values_runs_and_decide_values() {
    let n = 40;
    let (mut grazers, mut memories) = herd(n);
    let mut recorder = FlightRecorder::new(&HERD, n, Watch::All, Capacity::new(400, 12))
        .with_data(DataCapacity::new(4, 8))
        .name_flags::<herd::Sense, herd::Sense>();
    for t in 0..500 {
        grazers.iter_mut().for_each(herd::Grazer::step);
        recorder.tick_all_with_data(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
    }
    same_text(&recorder);
    // Runs are merged: the compact text is much the smaller.
    let (mut plain, mut compact) = (Vec::new(), Vec::new());
    recorder.write_json(&mut plain).unwrap();
    recorder.write_json_compact(&mut compact).unwrap();
    assert!(
        compact.len() * 2 < plain.len(),
        "{} and {}",
        compact.len(),
        plain.len()
    );
}

/// Values past their room, a text cut, values that are not numbers, and
/// ticks that record none.
struct Odd(u32);

impl AgentData for Odd {
    fn record(&self, out: &mut DataOut<'_>) {
        match self.0 % 5 {
            0 => {}
            1 => out.num("x", f64::from(self.0) / 3.0),
            2 => {
                out.text("say", "héllo \"wörld\"\n<tag>");
                out.num("x", f64::NAN);
            }
            3 => {
                out.num("nan", f64::NAN);
                out.num("y", f64::INFINITY);
            }
            _ => {
                for name in ["a", "b", "c", "d", "e"] {
                    out.num(name, 1.5);
                }
            }
        }
    }
}

#[test]
fn values_of_every_kind() {
    use bt_core::{behavior, decider, tree};
    behavior! { WAIT: Odd, tick: |o, _cx| { o.0 += 1; true } }
    decider! { LEAF: Odd => WAIT }
    tree! { ONE: Odd = LEAF }
    let mut agents: Vec<Odd> = (0..4).map(Odd).collect();
    let mut memories: Vec<_> = (0..4).map(|i| ONE.new_memory(i)).collect();
    let mut recorder =
        FlightRecorder::new(&ONE, 4, Watch::All, Capacity::new(30, 8)).with_data(DataCapacity {
            fields: 3,
            text_bytes: 9,
            names: 6,
        });
    for t in 0..45 {
        recorder.tick_all_with_data(&ONE, &mut agents, &mut memories, |i, _| {
            TickInput::new(f64::from(t) * 0.1, 0.1).with_agent(i as u32)
        });
    }
    same_text(&recorder);
}

#[test]
fn lanes_given_back_and_given_again() {
    let (mut agents, mut memories) = crowd(6);
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 4, Capacity::new(12, 16));
    let mut lanes: Vec<(usize, usize)> = (0..3)
        .map(|i| (recorder.assign(100 + i as u32).unwrap(), i))
        .collect();
    for t in 0..60u32 {
        if t == 20 {
            // Agent 1 leaves; agent 4 comes, on a lane never used.
            recorder.release(lanes[1].0);
            lanes.remove(1);
            lanes.push((recorder.assign(104).unwrap(), 4));
        }
        if t == 40 {
            // Its lane's ticks are overwritten by now: agent 5 takes it.
            lanes.push((recorder.assign(105).unwrap(), 5));
        }
        recorder.begin_frame();
        for &(lane, i) in &lanes {
            agents[i].step();
            let input = agents[i].input(i, t);
            recorder
                .tick_lane(lane, &CAMP, &mut agents[i], &mut memories[i], &input)
                .unwrap();
        }
    }
    same_text(&recorder);
}

#[test]
fn a_writer_that_fails_is_told_of() {
    struct Broken(usize);
    impl std::io::Write for Broken {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 > 100_000 {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let recorder = camp(50, Watch::All, Capacity::new(100, 16), 100);
    let e = recorder.write_json(Broken(0)).unwrap_err();
    assert_eq!(e.to_string(), "disk full");
}
