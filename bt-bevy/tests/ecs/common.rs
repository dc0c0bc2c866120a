//! A headless app with a manual clock.

use std::sync::Mutex;
use std::time::Duration;

use bevy_app::{App, TaskPoolOptions, TaskPoolPlugin};
use bevy_time::{TimePlugin, TimeUpdateStrategy};

/// Frames per second of the manual clock.
pub const FPS: f64 = 30.0;

/// An app with a thread pool (six threads, so the parallel
/// query really runs in parallel) and a clock that moves 1/30 s per update.
pub fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(6),
        },
        TimePlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / FPS,
    )));
    app
}

/// The clock of the frame that just ran: `(now, dt)` as the brains saw it.
pub fn clock(app: &App) -> (f64, f32) {
    let time = app.world().resource::<bevy_time::Time>();
    (time.elapsed_secs_f64(), time.delta_secs())
}

/// The warnings of the `bt_bevy` target logged so far by every test of
/// this binary (the tests run in parallel: look for one naming your own
/// tree).
pub fn warnings() -> Vec<String> {
    static LOGGER: Warnings = Warnings(Mutex::new(Vec::new()));
    // Only the first call installs it; the others find it in place.
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    LOGGER.0.lock().unwrap().clone()
}

/// Keeps the warnings of the `bt_bevy` target.
struct Warnings(Mutex<Vec<String>>);

impl log::Log for Warnings {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn && metadata.target() == "bt_bevy"
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            self.0.lock().unwrap().push(record.args().to_string());
        }
    }

    fn flush(&self) {}
}
