//! A tuning file watched by the plugin (`BrainPlugin::tuning_file`): read
//! when the plugin is added and after each save while the app runs, each
//! good file in effect from the run that takes it, before any brain ticks;
//! a bad file, a missing one or a folder that cannot be watched changes
//! nothing and is reported as a `TuningFileRead` message and a log line,
//! never a panic.
//!
//! The files are written in a folder of the test's own under the system's
//! temporary folder; the app runs until the watcher's reading comes, with
//! a deadline, never a fixed sleep.

use std::fs;
use std::path::PathBuf;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use bevy_app::{App, PostUpdate, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainTuning, TuningFileRead};
use bt_core::TuneFileError;

use crate::common::app;
use crate::tuning::{BARE, Deer, FLEE_BELOW, GRAZERS, HERD, HerdMemory};

/// A folder of the test's own, removed when dropped.
pub struct Folder(pub PathBuf);

impl Folder {
    pub fn new(test: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!("bt-bevy-tune-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// What the readings of the file said, as the game's system saw them:
/// the tunables changed, or the error's text.
#[derive(Resource, Default)]
pub struct Readings(pub Vec<Result<Vec<&'static str>, String>>);

fn collect(mut read: MessageReader<TuningFileRead<HerdMemory>>, mut seen: ResMut<Readings>) {
    for r in read.read() {
        assert_eq!(r.tree, "HERD");
        seen.0.push(match &r.outcome {
            Ok(applied) => Ok(applied.changed.clone()),
            Err(e) => Err(format!("{}: {e}", variant(e))),
        });
    }
}

fn variant(e: &TuneFileError) -> &'static str {
    match e {
        TuneFileError::Read { .. } => "Read",
        TuneFileError::Syntax { .. } => "Syntax",
        TuneFileError::UnknownKey { .. } => "UnknownKey",
        TuneFileError::WrongType { .. } => "WrongType",
        TuneFileError::OutOfRange { .. } => "OutOfRange",
        TuneFileError::Watch { .. } => "Watch",
        _ => "other",
    }
}

/// An app of `HERD` in `Update` watching `path`, its readings collected
/// at the end of each frame, with one deer of health 0.28.
pub fn watching(path: &PathBuf) -> (App, Entity) {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&HERD)
            .in_schedule(Update)
            .tuning_file(path),
    )
    .init_resource::<Readings>()
    // After every system of the frame: a reading comes in the frame that
    // took it.
    .add_systems(PostUpdate, collect);
    let deer = app
        .world_mut()
        .spawn((Deer::new(0.28), Brain::new(&HERD)))
        .id();
    (app, deer)
}

/// Runs the app until a reading comes (at most 5 s); the run's readings.
#[track_caller]
pub fn until_read(app: &mut App) -> Vec<Result<Vec<&'static str>, String>> {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        app.update();
        let seen = std::mem::take(&mut app.world_mut().resource_mut::<Readings>().0);
        if !seen.is_empty() {
            return seen;
        }
        assert!(Instant::now() < end, "no reading within 5 s");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The threshold the deer's last tick read.
pub fn read(app: &App, deer: Entity) -> f64 {
    *app.world().get::<Deer>(deer).unwrap().read.last().unwrap()
}

/// The lines the crate logged, kept by a logger of the test binary's own.
static LINES: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Keep;

impl log::Log for Keep {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target() == "bt_bevy" && m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            let line = r.args().to_string();
            LINES.lock().unwrap().push((r.level(), line));
        }
    }
    fn flush(&self) {}
}

/// The lines logged so far that hold `text`.
fn logged(text: &str) -> Vec<(log::Level, String)> {
    static KEEP: Once = Once::new();
    KEEP.call_once(|| {
        let _ = log::set_logger(&Keep);
        log::set_max_level(log::LevelFilter::Info);
    });
    let lines = LINES.lock().unwrap();
    lines
        .iter()
        .filter(|(_, l)| l.contains(text))
        .cloned()
        .collect()
}

/// A good file is in effect from the run that takes it (the first run
/// for the file read when the plugin was added); a bad file, written
/// while the app runs, changes nothing and is reported, with a warning in
/// the log; a key left out keeps its value; a deleted file changes
/// nothing.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_good_file_takes_effect_at_the_next_run_and_a_bad_one_changes_nothing() {
    let folder = Folder::new("good-bad");
    let path = folder.file("herd.toml");
    logged("");
    fs::write(&path, "# The designer's\nFLEE_BELOW = 0.5\n").unwrap();
    let (mut app, deer) = watching(&path);
    // Read when the plugin was added, staged; the first run takes it.
    assert_eq!(until_read(&mut app), [Ok(vec!["FLEE_BELOW"])]);
    assert_eq!(read(&app, deer), 0.5);
    let running = |app: &App| {
        app.world()
            .get::<Brain<HerdMemory>>(deer)
            .unwrap()
            .running_decider()
    };
    assert_eq!(running(&app), Some("FLEE"));
    let path_text = path.display().to_string();
    assert_eq!(logged(&path_text).len(), 1, "{:?}", logged(&path_text));

    for (text, want) in [
        (
            "FLEE_BELOW = 0.2\nGRAZERS = 40\n",
            format!("OutOfRange: {path_text}:2: tunable `GRAZERS`: 40 is outside 1..=10"),
        ),
        (
            "FLEE_BELOW = \n",
            format!("Syntax: {path_text}:1: not TOML"),
        ),
        (
            "FLEE = 0.2\n",
            format!("UnknownKey: {path_text}:1: tunables `HERD_TUNING` have no `FLEE`"),
        ),
        (
            "FLEE_BELOW = true\n",
            format!("WrongType: {path_text}:1: tunable `FLEE_BELOW` is a float, not true"),
        ),
    ] {
        fs::write(&path, text).unwrap();
        let seen = until_read(&mut app);
        assert_eq!(seen.len(), 1, "{text}: {seen:?}");
        let said = seen[0].as_ref().unwrap_err();
        assert!(said.starts_with(&want), "{text}: {said}");
        // Nothing changed, in this run or the next.
        app.update();
        let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
        assert_eq!(
            (tuning.tuned(FLEE_BELOW), tuning.tuned(GRAZERS)),
            (0.5, 3),
            "{text}"
        );
        assert_eq!(tuning.changes(), 1, "{text}");
        assert_eq!(read(&app, deer), 0.5, "{text}");
    }
    let warned = logged(&path_text);
    assert_eq!(warned.len(), 5, "{warned:?}");
    assert!(
        warned[1..]
            .iter()
            .all(|(level, line)| *level == log::Level::Warn
                && line.starts_with("tree `HERD`: tuning file not taken, nothing changed: ")),
        "{warned:?}"
    );

    // A good save: in effect from the run that takes it, before the deer
    // ticks; the deer that flees goes on fleeing.
    fs::write(&path, "GRAZERS = 4\nFLEE_BELOW = 0.2\n").unwrap();
    assert_eq!(until_read(&mut app), [Ok(vec!["GRAZERS", "FLEE_BELOW"])]);
    assert_eq!(read(&app, deer), 0.2);
    assert_eq!(running(&app), Some("FLEE"));
    // A key left out keeps its value.
    fs::write(&path, "FLEE_BELOW = 0.3\n").unwrap();
    assert_eq!(until_read(&mut app), [Ok(vec!["FLEE_BELOW"])]);
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    assert_eq!((tuning.tuned(FLEE_BELOW), tuning.tuned(GRAZERS)), (0.3, 4));
    assert_eq!(tuning.changes(), 4);
    assert_eq!(tuning.crowd(&HERD).unwrap().file(), Some(path.as_path()));

    // Deleted: reported, nothing changed.
    fs::remove_file(&path).unwrap();
    let seen = until_read(&mut app);
    assert!(
        seen[0].as_ref().is_err_and(|e| e.starts_with("Read: ")),
        "{seen:?}"
    );
    app.update();
    assert_eq!(read(&app, deer), 0.3);
}

/// A file missing when the plugin is added, and a folder that cannot be
/// watched, are reported at the first run, and the app runs on with the
/// values it has.
#[test]
#[cfg_attr(miri, ignore = "watches files, which Miri's isolation forbids")]
fn a_missing_file_or_folder_is_reported_at_the_first_run_not_a_panic() {
    let folder = Folder::new("missing");
    let path = folder.file("herd.toml");
    let (mut app, deer) = watching(&path);
    let seen = until_read(&mut app);
    assert!(
        seen[0].as_ref().is_err_and(|e| e.starts_with("Read: ")),
        "{seen:?}"
    );
    assert_eq!(read(&app, deer), 0.25);
    // Written later, it is read.
    fs::write(&path, "FLEE_BELOW = 0.4\n").unwrap();
    assert_eq!(until_read(&mut app), [Ok(vec!["FLEE_BELOW"])]);
    assert_eq!(read(&app, deer), 0.4);

    let nowhere = folder.file("gone/herd.toml");
    let (mut app, deer) = watching(&nowhere);
    let seen = until_read(&mut app);
    assert!(
        seen[0].as_ref().is_err_and(|e| e.starts_with("Watch: ")),
        "{seen:?}"
    );
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(read(&app, deer), 0.25);
    assert!(app.world().resource::<Readings>().0.is_empty());
}

/// A tuning file for a tree without tunables is a mistake in the app's
/// code: adding the plugin panics, naming the tree.
#[test]
fn a_tuning_file_for_a_tree_without_tunables_panics_when_the_plugin_is_added() {
    let payload = std::panic::catch_unwind(|| {
        let mut app = app();
        app.add_plugins(BrainPlugin::new(&BARE).tuning_file("bare.toml"));
    })
    .expect_err("it panics");
    let said = payload.downcast::<String>().map(|s| *s).unwrap_or_default();
    assert_eq!(
        said,
        "BrainPlugin for tree `BARE`: `tuning_file(bare.toml)` for a tree without tunables: \
         declare them with `tunables!` and name the table with `tree!`'s `tunables:` key"
    );
}
