//! The live page holds a running Bevy app, in a real browser (headless
//! Chromium driven through chromedriver): a breakpoint set through the
//! page's form stops `app.update()` at the end of the frame where it
//! fires, the page shows that frame, resuming lets the app go on, and a
//! page that closes while the app waits lets it go on too.
//!
//! Needs Debian's `chromium` and `chromium-driver`. Without them the test
//! is reported as ignored, except under CI (`CI` set), where it fails.

mod critters;
#[path = "../../bt-viewer/tests/webdriver/mod.rs"]
mod webdriver;
use webdriver::{click, js, until};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bt_bevy::bt_viewer::DataCapacity;
use bt_bevy::{BrainPlugin, BrainRecorder, BrainStats, BrainSystems, RecordBrains, agent_id};
use critters::{CRITTERS, CritterMemory, HUNGRY_ABOVE, Hunger, Mood, critter, live};
use fantoccini::Client;
use serde_json::{Value, json};

// ---------- the app, on a thread of its own ----------

/// Where the app stands, as its thread and its systems tell the test.
#[derive(Resource, Clone, Default)]
struct Progress {
    /// `app.update()` calls that returned.
    updates: Arc<AtomicU64>,
    /// The frame the brains tick in this run (the recording's serial).
    ticking: Arc<AtomicU64>,
    /// Per frame, the first critter's hunger and mood as its tick found
    /// them.
    seen: Arc<Mutex<Vec<(f32, &'static str)>>>,
}

/// The critter the test watches.
#[derive(Resource)]
struct First(Entity);

/// Notes the frame about to tick and the first critter's components.
fn note(
    progress: Res<Progress>,
    stats: Res<BrainStats<CritterMemory>>,
    critters: Query<(&Hunger, &Mood)>,
    first: Res<First>,
) {
    progress.ticking.store(stats.runs, Ordering::SeqCst);
    let (hunger, mood) = critters.get(first.0).unwrap();
    progress.seen.lock().unwrap().push((hunger.0, mood.0));
}

/// The running app.
struct Running {
    url: String,
    /// The first critter's agent id.
    agent: u32,
    progress: Progress,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Running {
    /// Two critters, both recorded with their hunger and mood, served
    /// live; one update every 30 ms.
    fn start() -> Self {
        let progress = Progress::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (told, tell) = channel();
        let (p, s) = (progress.clone(), Arc::clone(&stop));
        let thread =
            std::thread::spawn(move || {
                let mut app = App::new();
                app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
                    .insert_resource(TimeUpdateStrategy::ManualDuration(
                        Duration::from_secs(1) / 30,
                    ))
                    .add_plugins(BrainPlugin::new(&CRITTERS).in_schedule(Update).record(
                        RecordBrains::all(4).data::<(Hunger, Mood)>(DataCapacity::default()),
                    ))
                    .insert_resource(p.clone())
                    .add_systems(Update, (live, note).chain().before(BrainSystems::Tick));
                let first = app.world_mut().spawn(critter(0.1)).id();
                app.world_mut().spawn(critter(0.13));
                app.insert_resource(First(first));
                let url = app
                    .world_mut()
                    .resource_mut::<BrainRecorder<CritterMemory>>()
                    .serve(0)
                    .unwrap();
                told.send((url, agent_id(first))).unwrap();
                while !s.load(Ordering::SeqCst) {
                    app.update();
                    p.updates.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(30));
                }
            });
        let (url, agent) = tell.recv_timeout(Duration::from_secs(30)).unwrap();
        Running {
            url,
            agent,
            progress,
            stop,
            thread,
        }
    }

    fn updates(&self) -> u64 {
        self.progress.updates.load(Ordering::SeqCst)
    }

    fn ticking(&self) -> u64 {
        self.progress.ticking.load(Ordering::SeqCst)
    }

    /// What the test saw of the first critter at frame `tick`.
    fn seen(&self, tick: u64) -> (f32, &'static str) {
        self.progress.seen.lock().unwrap()[tick as usize]
    }

    /// Checks that the app waits at the end of frame `tick`: its
    /// `update` does not return for a while.
    async fn waits_at(&self, tick: u64) {
        for _ in 0..4 {
            assert_eq!(self.ticking(), tick);
            assert_eq!(self.updates(), tick, "update {tick} returned");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (10 s at most) until the app has returned from more than `n`
    /// updates.
    async fn goes_past(&self, n: u64, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.updates() <= n {
            assert!(Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn end(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the app's thread");
    }
}

/// The values the page shows for the selected agent at its cursor.
async fn page_values(client: &Client) -> Vec<(String, Value)> {
    let rows = js(
        client,
        "return [...document.querySelectorAll('#values tr')]\
           .map(tr => [tr.dataset.name, tr.dataset.value]);",
    )
    .await;
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let value = r[1].as_str().unwrap();
            let value = if value.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(value).unwrap()
            };
            (r[0].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

/// The app stopped by a breakpoint set in the page, checked as it waits
/// (with the values the page shows for the critter then, when `values`);
/// then resumed, paused again, and let go by the page's leaving.
fn a_breakpoint_set_in_the_page_holds_the_app(values: bool) {
    let app = Running::start();
    webdriver::with_browser((1400, 1000), |client| async move {
        client.goto(&app.url).await.unwrap();
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;

        // The breakpoint, set through the page's form: the first critter
        // turns to its food.
        js(
            &client,
            &format!(
                "document.getElementById('bp-on').value = 'enter';\
                 document.getElementById('bp-on').dispatchEvent(new Event('change'));\
                 document.getElementById('bp-decider').value = 'EAT_WHEN_HUNGRY';\
                 document.getElementById('bp-agent').value = '{}';",
                app.agent
            ),
        )
        .await;
        click(&client, "#bp-add").await;
        until(
            &client,
            "return window.btLive.state().breakpoints.length === 1;",
            "the breakpoint was not set",
        )
        .await;
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the app never stopped",
        )
        .await;
        let control = js(&client, "return window.btLive.state();").await;
        let at = control["tick"].as_u64().expect("the tick it stopped at");
        assert_eq!(
            control["hit"],
            json!({"breakpoint": 0, "agent": app.agent, "tick": at}),
            "{control}"
        );
        // `app.update()` waits at the end of that frame, the frame where
        // the critter became hungry.
        app.waits_at(at).await;
        let (hunger, mood) = app.seen(at);
        assert_eq!(app.progress.seen.lock().unwrap().len() as u64, at + 1);
        assert!(
            hunger > HUNGRY_ABOVE && mood == "peckish",
            "{hunger} {mood}"
        );

        // The page shows that frame, of that critter.
        until(
            &client,
            &format!("return btViewer.state().cursor === {at};"),
            "the page does not show the frame where the app stopped",
        )
        .await;
        let state = js(&client, "return btViewer.state();").await;
        assert_eq!(state["agent"], json!(app.agent), "{state}");
        let said = js(
            &client,
            "return document.getElementById('live-state').textContent;",
        )
        .await;
        let said = said.as_str().unwrap();
        assert!(said.contains(&format!("tick {at}")), "{said}");
        assert!(said.contains("EAT_WHEN_HUNGRY entered"), "{said}");
        if values {
            // The recording writes an f32 as its shortest decimal: compare
            // as f32.
            let shown: Vec<(String, Value)> = (page_values(&client).await.into_iter())
                .map(|(k, v)| match v.as_f64() {
                    Some(x) => (k, json!(x as f32)),
                    None => (k, v),
                })
                .collect();
            assert_eq!(
                shown,
                [
                    ("hunger".to_owned(), json!(hunger)),
                    ("mood".to_owned(), json!(mood)),
                ]
            );
        }

        // Removed, then resumed: the app goes on.
        click(&client, ".bp-remove").await;
        until(
            &client,
            "return window.btLive.state().breakpoints.length === 0;",
            "the breakpoint was not removed",
        )
        .await;
        click(&client, "#live-resume").await;
        app.goes_past(at + 3, "the app did not go on").await;

        // Paused from the page, then the page goes away: the app goes on.
        click(&client, "#live-pause").await;
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the pause took no effect",
        )
        .await;
        let control = js(&client, "return window.btLive.state();").await;
        let paused = control["tick"].as_u64().expect("the tick it paused at");
        app.waits_at(paused).await;
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        client.goto("about:blank").await.unwrap();
        app.goes_past(paused + 3, "the app still waits for a page that left")
            .await;
        app.end();
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_breakpoint_set_in_the_page_stops_the_app_at_the_end_of_its_frame() {
    a_breakpoint_set_in_the_page_holds_the_app(false);
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_page_shows_the_entity_s_component_values_where_the_app_stopped() {
    a_breakpoint_set_in_the_page_holds_the_app(true);
}
