//! The recorded entities' own values: read from their components as each
//! tick found them, for recorded entities only, in the room set aside when
//! the plugin was added.

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::query::{QueryData, QueryItem};
use bt_bevy::bt_viewer::{AgentValues, Capacity, DataCapacity, DataOut, Recording};
use bt_bevy::{
    BrainPlugin, BrainRecorder, BrainSystems, EntityData, RecordBrains, Recorded, agent_id,
};
use serde_json::{Value, json};

use crate::common::app;
use crate::critters::{
    CRITTERS, Critter, CritterMemory, Health, Hunger, Mood, Needs, critter, live,
};

/// The critters' app, recording as `settings` say, ticking entity by
/// entity or (`dense`) chunk by chunk.
fn critters_app<V: EntityData>(settings: RecordBrains<V>, dense: bool) -> App {
    let mut app = app();
    let plugin = BrainPlugin::new(&CRITTERS).in_schedule(Update);
    let plugin = if dense { plugin.dense() } else { plugin };
    app.add_plugins(plugin.record(settings))
        .add_systems(Update, live.before(BrainSystems::Tick));
    app
}

fn recorder(app: &App) -> &BrainRecorder<CritterMemory> {
    app.world().resource::<BrainRecorder<CritterMemory>>()
}

/// The values of `entity` in `recording`.
fn values_of(recording: &Recording, entity: Entity) -> Option<&AgentValues> {
    recording
        .values
        .iter()
        .find(|v| v.agent == agent_id(entity))
}

/// The kept ticks' serials of `entity`'s lane.
fn serials_of(recording: &Recording, entity: Entity) -> Vec<u64> {
    let lane = recording
        .agents
        .iter()
        .find(|a| a.agent == agent_id(entity))
        .expect("a lane");
    lane.ticks.iter().map(|t| t[0].as_u64().unwrap()).collect()
}

/// One column of an entity's recorded values.
fn column(values: &AgentValues, name: &str) -> Vec<Value> {
    values.fields[name].as_array().unwrap().clone()
}

/// What the test saw of a watched entity at one frame: its components
/// once the frame ran, and its bites before it.
type Seen = (Health, Hunger, Mood, u32);

/// An `f32` value as the recording writes it: its shortest decimal.
fn num(x: f32) -> Value {
    json!(x.to_string().parse::<f64>().unwrap())
}

fn recorded_values_are_the_components_as_each_tick_found_them(dense: bool) {
    const FRAMES: usize = 40;
    const KEPT: usize = 16;
    let mut app = critters_app(
        RecordBrains::marked(4)
            .capacity(Capacity::new(KEPT, 24))
            .data::<(Health, Hunger, Mood, Critter)>(DataCapacity::new(8, 64)),
        dense,
    );
    let watched = [0.1, 0.13].map(|rate| app.world_mut().spawn((critter(rate), Recorded)).id());
    let unwatched = app.world_mut().spawn(critter(0.07)).id();
    // Per watched entity and frame: its components once the frame ran (the
    // game's step comes before the tick, and the tick does not touch
    // them), and its bites before the frame (the tick adds to them).
    let mut seen: Vec<Vec<Seen>> = vec![Vec::new(); watched.len()];
    for _ in 0..FRAMES {
        let before: Vec<u32> = watched
            .iter()
            .map(|&e| app.world().get::<Critter>(e).unwrap().bites)
            .collect();
        app.update();
        for (k, &e) in watched.iter().enumerate() {
            let w = app.world();
            seen[k].push((
                *w.get::<Health>(e).unwrap(),
                *w.get::<Hunger>(e).unwrap(),
                *w.get::<Mood>(e).unwrap(),
                before[k],
            ));
        }
    }
    let recording = recorder(&app).export();
    for (k, &e) in watched.iter().enumerate() {
        let kept = serials_of(&recording, e);
        assert_eq!(
            kept,
            ((FRAMES - KEPT) as u64..FRAMES as u64).collect::<Vec<_>>()
        );
        let values = values_of(&recording, e).expect("the watched entity's values");
        let at = |serial: &u64| &seen[k][*serial as usize];
        let want =
            |f: &dyn Fn(&Seen) -> Value| -> Vec<Value> { kept.iter().map(|s| f(at(s))).collect() };
        assert_eq!(column(values, "health"), want(&|v| num(v.0.0)), "{e}");
        assert_eq!(column(values, "hunger"), want(&|v| num(v.1.0)), "{e}");
        assert_eq!(column(values, "mood"), want(&|v| json!(v.2.0)), "{e}");
        // As the tick found it: the bites before the tick's own.
        assert_eq!(
            column(values, "bites"),
            want(&|v| json!(f64::from(v.3))),
            "{e}"
        );
        assert!(values.overflow.is_empty());
        // The values move: hunger climbs and falls, the mood follows it.
        let moods = column(values, "mood");
        assert!(moods.contains(&json!("peckish")) && moods.contains(&json!("sated")));
        let bites = column(values, "bites");
        assert_ne!(bites.first(), bites.last(), "{e} never ate");
    }
    assert!(values_of(&recording, unwatched).is_none());
    assert!(
        recording
            .agents
            .iter()
            .all(|a| a.agent != agent_id(unwatched))
    );
    assert_eq!(recording.values.len(), watched.len());
}

#[test]
fn recorded_values_are_the_components_as_each_tick_found_them_entity_by_entity() {
    recorded_values_are_the_components_as_each_tick_found_them(false);
}

#[test]
fn recorded_values_are_the_components_as_each_tick_found_them_chunk_by_chunk() {
    recorded_values_are_the_components_as_each_tick_found_them(true);
}

#[test]
fn the_values_stay_in_the_room_set_aside_for_them() {
    const LANES: usize = 3;
    let capacity = Capacity::new(8, 24);
    // Two values and four bytes of text a tick: the mood is cut, the
    // hunger and the bites are dropped.
    let room = DataCapacity::new(2, 4);
    let mut app = critters_app(
        RecordBrains::all(LANES)
            .capacity(capacity)
            .data::<(Mood, Health, Hunger, Critter)>(room),
        false,
    );
    let entities: Vec<Entity> = [0.1, 0.2]
        .map(|r| app.world_mut().spawn(critter(r)).id())
        .into();
    let bytes = recorder(&app).recorder().frame_bytes();
    let per_lane_tick = capacity.bytes_per_tick() + room.bytes_per_tick();
    assert_eq!(
        bytes,
        LANES * capacity.ticks * per_lane_tick + room.names * 16,
        "the room is set aside when the plugin is added"
    );
    for _ in 0..30 {
        app.update();
    }
    assert_eq!(recorder(&app).recorder().frame_bytes(), bytes);
    let recording = recorder(&app).export();
    for &e in &entities {
        let values = values_of(&recording, e).unwrap();
        let names: Vec<&str> = values.fields.keys().map(String::as_str).collect();
        assert_eq!(names, ["mood", "health"]);
        for mood in column(values, "mood") {
            assert!(mood == json!("peck") || mood == json!("sate"), "{mood}");
        }
        // Every kept tick says some of its values are missing.
        assert_eq!(values.overflow, serials_of(&recording, e));
        assert_eq!(values.overflow.len(), capacity.ticks);
    }
}

/// Values computed from a query of the game's own.
#[derive(QueryData)]
struct Vitals {
    health: &'static Health,
    hunger: &'static Hunger,
}

impl EntityData for Vitals {
    type Data = Vitals;
    fn record(v: &QueryItem<'_, '_, Vitals>, out: &mut DataOut<'_>) {
        out.num("vigour", f64::from(v.health.0 * (1.0 - v.hunger.0)));
    }
}

#[test]
fn a_query_of_the_game_s_own_gives_the_values() {
    let mut app = critters_app(
        RecordBrains::marked(1).data::<Vitals>(DataCapacity::default()),
        false,
    );
    let e = app.world_mut().spawn((critter(0.1), Recorded)).id();
    let mut want = Vec::new();
    for _ in 0..5 {
        app.update();
        let w = app.world();
        let (h, u) = (w.get::<Health>(e).unwrap().0, w.get::<Hunger>(e).unwrap().0);
        want.push(num(h * (1.0 - u)));
    }
    let recording = recorder(&app).export();
    let values = values_of(&recording, e).unwrap();
    assert_eq!(values.fields.len(), 1);
    assert_eq!(column(values, "vigour"), want);
}

#[test]
fn an_entity_that_stops_being_recorded_records_no_values() {
    let mut app = critters_app(
        RecordBrains::marked(2).data::<(Hunger,)>(DataCapacity::default()),
        false,
    );
    let e = app.world_mut().spawn((critter(0.1), Recorded)).id();
    for _ in 0..3 {
        app.update();
    }
    app.world_mut().entity_mut(e).remove::<Recorded>();
    for _ in 0..3 {
        app.update();
    }
    app.world_mut().entity_mut(e).insert(Recorded);
    app.update();
    let recording = recorder(&app).export();
    assert_eq!(serials_of(&recording, e), [0, 1, 2, 6]);
    let hunger = column(values_of(&recording, e).unwrap(), "hunger");
    // Frame n's hunger: 0.1 added n + 1 times, in f32.
    let mut h = 0.0f32;
    let sums: Vec<Value> = (0..7)
        .map(|_| {
            h += 0.1;
            num(h)
        })
        .collect();
    assert_eq!(hunger, [0, 1, 2, 6].map(|i| sums[i].clone()));
}

#[test]
fn the_flag_names_reach_the_recording() {
    let app = critters_app(RecordBrains::marked(1).name_flags::<Needs, Needs>(), false);
    let recording = recorder(&app).export();
    assert_eq!(
        recording.tree.flag_names.decision,
        [(0, "HUNGRY"), (1, "TIRED")]
    );
    assert_eq!(
        recording.tree.flag_names.stimuli,
        [(0, "HUNGRY"), (1, "TIRED")]
    );
    let app = critters_app(
        RecordBrains::marked(1).name_decision_flags::<Needs>(),
        false,
    );
    let recording = recorder(&app).export();
    assert_eq!(recording.tree.flag_names.decision.len(), 2);
    assert!(recording.tree.flag_names.stimuli.is_empty());
}

/// The tag of a second crowd of critters.
struct Second;

#[test]
#[should_panic(expected = "call `record()` after `tagged()`")]
fn values_asked_for_before_a_tag_panic_when_the_plugin_is_added() {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&CRITTERS)
            .record(RecordBrains::marked(1).data::<(Hunger,)>(DataCapacity::default()))
            .tagged::<Second>(),
    );
}
