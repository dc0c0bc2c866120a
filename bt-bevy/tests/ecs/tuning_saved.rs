//! A tree's tunables in a save of its brains: the save holds the values
//! in effect, and a load puts them in effect, in a fresh app or the
//! running one; the values the load changed count as changes, and the
//! `BrainTuning` resource (and a watched tuning file) go on with the
//! loaded crowd.

use std::collections::HashMap;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainShared, BrainTuning, NoSenses, SaveBrains};

use crate::common::app;
use crate::tuning::{Deer, FLEE_BELOW, GRAZERS, HEALTHS, HERD, HerdMemory};

/// An app of `HERD` in `Update` with the herd of `HEALTHS`, keyed by
/// their place.
fn herd_app() -> (App, Vec<Entity>) {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update));
    let herd = HEALTHS
        .iter()
        .map(|&h| {
            app.world_mut()
                .spawn((Deer::new(h), Brain::new(&HERD)))
                .id()
        })
        .collect();
    (app, herd)
}

fn save(app: &mut App, herd: &[Entity]) -> String {
    let keys: HashMap<Entity, u32> = herd
        .iter()
        .enumerate()
        .map(|(i, &e)| (e, i as u32))
        .collect();
    let save = app
        .world_mut()
        .save_brains::<HerdMemory, NoSenses, u32>(|e| keys.get(&e).copied());
    serde_json::to_string(&save).unwrap()
}

fn load(app: &mut App, herd: &[Entity], json: &str) {
    let herd = herd.to_vec();
    app.world_mut()
        .load_brains::<HerdMemory, NoSenses, u32, _>(
            &mut serde_json::Deserializer::from_str(json),
            |&k| herd.get(k as usize).copied(),
        )
        .unwrap();
}

/// Each deer's running decider and the threshold its last tick read.
fn decisions(app: &App, herd: &[Entity]) -> Vec<(Option<&'static str>, f64)> {
    herd.iter()
        .map(|&e| {
            let brain = app.world().get::<Brain<HerdMemory>>(e).unwrap();
            let deer = app.world().get::<Deer>(e).unwrap();
            (brain.running_decider(), *deer.read.last().unwrap())
        })
        .collect()
}

fn tuning(app: &App) -> &BrainTuning<HerdMemory> {
    app.world().resource::<BrainTuning<HerdMemory>>()
}

/// Changed, saved, loaded into a fresh app: the same values in effect,
/// counted as changes there, and the same decisions from then on; the
/// resource tunes the loaded crowd.
#[test]
fn a_save_holds_the_values_in_effect_and_a_fresh_app_loads_them() {
    let (mut app, herd) = herd_app();
    app.update();
    tuning(&app).tune(FLEE_BELOW, 0.5).unwrap();
    tuning(&app).tune(GRAZERS, 4).unwrap();
    app.update();
    app.update();
    let json = save(&mut app, &herd);
    // The crowd's shared state holds them, by name.
    let values = r#""tuned":[{"name":"FLEE_BELOW","value":{"float":0.5}},{"name":"GRAZERS","value":{"int":4}}]"#;
    assert!(json.contains(values), "{json}");

    let (mut fresh, herd2) = herd_app();
    load(&mut fresh, &herd2, &json);
    let t = tuning(&fresh);
    assert_eq!((t.tuned(FLEE_BELOW), t.tuned(GRAZERS)), (0.5, 4));
    assert_eq!(t.changes(), 2);
    for run in 0..4 {
        app.update();
        fresh.update();
        assert_eq!(
            decisions(&fresh, &herd2),
            decisions(&app, &herd),
            "run {run}"
        );
    }
    assert_eq!(
        decisions(&fresh, &herd2)[..3]
            .iter()
            .map(|d| d.0)
            .collect::<Vec<_>>(),
        [Some("FLEE"); 3]
    );
    // The resource tunes the loaded crowd, whose brains read it.
    tuning(&fresh).tune(FLEE_BELOW, 0.95).unwrap();
    fresh.update();
    assert_eq!(decisions(&fresh, &herd2)[3], (Some("FLEE"), 0.95));
    assert_eq!(tuning(&fresh).changes(), 3);
    let shared = fresh.world().resource::<BrainShared<HerdMemory>>();
    assert_eq!(shared.state().tuned(FLEE_BELOW), 0.95);
}

/// A load into the running app puts the saved values in effect and
/// counts those it changed on top of the changes before it; a change
/// staged before the load is dropped with the old crowd, and one made
/// after it takes effect at the next run.
#[test]
fn a_load_into_the_running_app_counts_the_values_it_changed() {
    let (mut app, herd) = herd_app();
    tuning(&app).tune(FLEE_BELOW, 0.5).unwrap();
    app.update();
    let json = save(&mut app, &herd);
    tuning(&app).tune(FLEE_BELOW, 0.3).unwrap();
    tuning(&app).tune(GRAZERS, 5).unwrap();
    app.update();
    assert_eq!(tuning(&app).changes(), 3);
    // Staged, not in effect, when the load comes.
    tuning(&app).tune(FLEE_BELOW, 0.9).unwrap();
    load(&mut app, &herd, &json);
    let t = tuning(&app);
    assert_eq!((t.tuned(FLEE_BELOW), t.tuned(GRAZERS)), (0.5, 3));
    // FLEE_BELOW 0.3 to 0.5, GRAZERS 5 to 3.
    assert_eq!(t.changes(), 5);
    app.update();
    assert!(decisions(&app, &herd).iter().all(|d| d.1 == 0.5));
    assert_eq!(tuning(&app).changes(), 5);
    tuning(&app).tune(FLEE_BELOW, 0.2).unwrap();
    app.update();
    assert!(decisions(&app, &herd).iter().all(|d| d.1 == 0.2));
    assert_eq!(tuning(&app).changes(), 6);
}

/// A tuning file watched before a load stages its later readings on the
/// loaded crowd, whose brains read them.
#[cfg(feature = "tune-file")]
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_tuning_file_goes_on_tuning_the_loaded_crowd() {
    use crate::tuning_file::{Folder, read, until_read, watching};

    let folder = Folder::new("loaded");
    let path = folder.file("herd.toml");
    std::fs::write(&path, "FLEE_BELOW = 0.5\n").unwrap();
    let (mut app, deer) = watching(&path);
    assert_eq!(until_read(&mut app), [Ok(vec!["FLEE_BELOW"])]);
    let json = save(&mut app, &[deer]);
    load(&mut app, &[deer], &json);
    std::fs::write(&path, "FLEE_BELOW = 0.3\n").unwrap();
    assert_eq!(until_read(&mut app), [Ok(vec!["FLEE_BELOW"])]);
    assert_eq!(read(&app, deer), 0.3);
    assert_eq!(tuning(&app).tuned(FLEE_BELOW), 0.3);
}
