//! A headless app with a manual clock.

use std::time::Duration;

use bevy_app::{App, TaskPoolOptions, TaskPoolPlugin};
use bevy_time::{TimePlugin, TimeUpdateStrategy};

/// Frames per second of the manual clock.
pub const FPS: f64 = 30.0;

/// An app with a thread pool (six threads, so the parallel
/// query really runs in parallel) and a clock that moves 1/30 s per update.
///
/// Bevy's compute pool is one per process, sized by the first app that
/// starts it: every app of this test binary asks for the same six threads,
/// since a test that ran first with fewer would change every other test's
/// pool (and a frame run from inside a brain's callback needs a second
/// thread of the pool to run its systems).
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
