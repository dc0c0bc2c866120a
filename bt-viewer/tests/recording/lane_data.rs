//! A lane's values given apart from its agent (`record_lane_data`), as an
//! ECS does with an entity's components: they land in the frame of the
//! lane's next tick, and nothing is kept without room for them.

use crate::scene;

use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder};
use scene::{CAMP, crowd};
use serde_json::json;

/// What the caller records for the agent: not the agent itself.
struct Reading(f64);

impl AgentData for Reading {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("reading", self.0);
    }
}

#[test]
fn a_lane_s_values_land_with_its_next_tick() {
    let (mut agents, mut memories) = crowd(1);
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 2, Capacity::new(8, 16))
        .with_data(DataCapacity::default());
    let lane = recorder.assign(7).unwrap();
    for t in 0..5u32 {
        // No `begin_frame`: the values begin the frame, as `tick_lane`
        // would, when the lane already ticked in the current one.
        recorder.record_lane_data(lane, &Reading(f64::from(t) * 1.5));
        let input = agents[0].input(0, t);
        recorder
            .tick_lane(lane, &CAMP, &mut agents[0], &mut memories[0], &input)
            .unwrap();
    }
    let recording = recorder.export();
    assert_eq!(recorder.frames(), 5);
    assert_eq!(recording.values.len(), 1);
    assert_eq!(recording.values[0].agent, 7);
    assert_eq!(
        recording.values[0].fields["reading"],
        json!([0.0, 1.5, 3.0, 4.5, 6.0])
    );
}

#[test]
fn without_room_for_values_nothing_is_kept() {
    let (mut agents, mut memories) = crowd(1);
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 1, Capacity::new(8, 16));
    let lane = recorder.assign(3).unwrap();
    recorder.record_lane_data(lane, &Reading(1.0));
    let input = agents[0].input(0, 0);
    recorder
        .tick_lane(lane, &CAMP, &mut agents[0], &mut memories[0], &input)
        .unwrap();
    assert_eq!(recorder.frames(), 1);
    assert!(recorder.export().values.is_empty());
}

#[test]
#[should_panic(expected = "lane 1 was not assigned")]
fn values_for_a_lane_never_assigned_are_refused() {
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 2, Capacity::new(8, 16));
    recorder.assign(3).unwrap();
    recorder.record_lane_data(1, &Reading(1.0));
}

/// Values written in an order that changes from tick to tick, one name
/// written from two copies of its text and one new name part-way.
struct Shuffled {
    t: u32,
    /// The same text as "b", at another address.
    b: &'static str,
}

impl AgentData for Shuffled {
    fn record(&self, out: &mut DataOut<'_>) {
        let t = f64::from(self.t);
        let b = if self.t.is_multiple_of(2) {
            "b"
        } else {
            self.b
        };
        match self.t % 3 {
            0 => {
                out.num("a", t);
                out.num(b, 10.0 + t);
            }
            1 => {
                out.num(b, 10.0 + t);
                out.num("a", t);
            }
            _ => {
                out.num("c", 20.0 + t);
                out.num("a", t);
                out.num(b, 10.0 + t);
            }
        }
    }
}

#[test]
fn each_value_keeps_its_name_whatever_the_order_the_agent_writes_them_in() {
    let (mut agents, mut memories) = crowd(1);
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 1, Capacity::new(16, 16))
        .with_data(DataCapacity::default());
    let lane = recorder.assign(0).unwrap();
    let b: &'static str = String::from("b").leak();
    assert!(!std::ptr::eq(b, "b"));
    for t in 0..9u32 {
        recorder.record_lane_data(lane, &Shuffled { t, b });
        let input = agents[0].input(0, t);
        recorder
            .tick_lane(lane, &CAMP, &mut agents[0], &mut memories[0], &input)
            .unwrap();
    }
    let recording = recorder.export();
    let fields = &recording.values[0].fields;
    assert_eq!(fields.len(), 3, "{fields:?}");
    let all: Vec<f64> = (0..9).map(f64::from).collect();
    assert_eq!(fields["a"], json!(all));
    assert_eq!(
        fields["b"],
        json!(all.iter().map(|t| 10.0 + t).collect::<Vec<_>>())
    );
    let c: Vec<serde_json::Value> = (0..9)
        .map(|t| {
            if t % 3 == 2 {
                json!(20.0 + f64::from(t))
            } else {
                json!(null)
            }
        })
        .collect();
    assert_eq!(fields["c"], json!(c));
}
