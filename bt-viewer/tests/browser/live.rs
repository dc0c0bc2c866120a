//! The live page's controls in a real browser (headless Chromium driven
//! through chromedriver): a breakpoint set in the page stops a running
//! program at the tick it names, the page shows that tick, and resuming
//! lets the program go on; the page holds a paused program while it is
//! open; the page says when it no longer follows, and
//! past its room it lets go of its oldest ticks and keeps the rest exact.
//!
//! Needs Debian's `chromium` and `chromium-driver`, as `tests/browser.rs`
//! does. Without them the test is reported as ignored, except under CI
//! (`CI` set), where it fails.

use crate::herd;
use crate::scene;
use crate::webdriver;
use webdriver::{click, js, until};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use bt_viewer::{Capacity, DataCapacity, FlightRecorder, LiveServer, Watch};
use fantoccini::Client;
use herd::{Grazer, HERD, Sense, herd};
use scene::{CAMP, Creature, crowd};
use serde_json::{Value, json};

/// The page's size in this test.
fn with_browser<F>(test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    webdriver::with_browser((1400, 1000), test);
}

const AGENTS: usize = 6;

/// Opens the live page at `url` and waits until `server` counts it.
async fn open_live(client: &Client, server: &LiveServer, url: &str) {
    client.goto(url).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.clients() == 0 {
        assert!(Instant::now() < deadline, "the page never followed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the page holds tick `last`.
async fn until_last(client: &Client, last: u32) {
    let script = format!("return btViewer.state().last === {last};");
    until(client, &script, "the page did not get every tick").await;
}

/// Each agent's first tick from 2 on where it enters GUARD, in a run of
/// the camp: (tick, agent).
fn first_guards() -> Vec<(u64, u64)> {
    let (mut agents, mut memories) = crowd(AGENTS);
    let mut recorder = FlightRecorder::new(&CAMP, AGENTS, Watch::All, Capacity::new(400, 16));
    for t in 0..400 {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    }
    let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let items = doc["tree"]["items"].as_array().unwrap();
    let guard = items.iter().find(|it| it["name"] == "GUARD").unwrap()["index"].clone();
    let activate = 4;
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| {
            a["ticks"].as_array().unwrap().iter().find_map(|tk| {
                let entered = tk[6]
                    .as_array()
                    .unwrap()
                    .chunks(4)
                    .any(|e| e[0] == activate && e[2] == guard);
                (tk[0].as_u64().unwrap() >= 2 && entered)
                    .then(|| (tk[0].as_u64().unwrap(), a["agent"].as_u64().unwrap()))
            })
        })
        .collect()
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_breakpoint_set_in_the_page_stops_the_program_at_its_tick() {
    // The agent that enters GUARD last: the breakpoint names it, and lets
    // the others by.
    let firsts = first_guards();
    let (at, agent) = *firsts.iter().max().unwrap();
    assert!(firsts.iter().min().unwrap().0 < at);

    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut agents, mut memories) = crowd(AGENTS);
    let mut recorder = FlightRecorder::new(&CAMP, AGENTS, Watch::All, Capacity::new(400, 16));
    let mut tick = move |t: u32, recorder: &mut FlightRecorder| {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    };
    with_browser(|client| async move {
        open_live(&client, &server, &url).await;
        for t in 0..2 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        assert_eq!(
            js(
                &client,
                "return document.getElementById('live-controls').hidden;"
            )
            .await,
            json!(false)
        );

        // An entry is of one decider: the form offers no "any decider"
        // for it (the program would refuse it), but does for a report.
        let offered = js(
            &client,
            "const on = document.getElementById('bp-on'), dec = document.getElementById('bp-decider');\
             const any = () => dec.querySelector('option[value=\"\"]');\
             on.value = 'enter'; on.dispatchEvent(new Event('change'));\
             const entry = [any().disabled, dec.value !== ''];\
             on.value = 'subset-rule'; on.dispatchEvent(new Event('change'));\
             return entry.concat([any().disabled]);",
        )
        .await;
        assert_eq!(offered, json!([true, true, false]));

        // The breakpoint, set through the page's form.
        js(
            &client,
            &format!(
                "document.getElementById('bp-on').value = 'enter';\
                 document.getElementById('bp-on').dispatchEvent(new Event('change'));\
                 document.getElementById('bp-decider').value = 'GUARD';\
                 document.getElementById('bp-agent').value = '{agent}';"
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
        assert_eq!(
            js(&client, "return window.btLive.state().breakpoints;").await,
            json!([{"id": 1, "on": "enter", "decider": "GUARD", "agent": agent}])
        );

        // The program runs in its thread, one frame per tick.
        let (done, frames) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let game = std::thread::spawn(move || {
            for t in 2..5000 {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                tick(t, &mut recorder);
                server.frame(&recorder);
                if done.send(t).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(30));
            }
        });
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the program never stopped",
        )
        .await;
        let control = js(&client, "return window.btLive.state();").await;
        assert_eq!(control["tick"], json!(at), "{control}");
        assert_eq!(
            control["hit"],
            json!({"breakpoint": 0, "agent": agent, "tick": at})
        );
        // Every frame before that tick's returned; its own waits.
        let mut last = None;
        loop {
            match frames.recv_timeout(Duration::from_millis(400)) {
                Ok(t) => last = Some(t),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => panic!("the program ended"),
            }
        }
        assert_eq!(last.map(u64::from), Some(at - 1));
        // The page shows that tick, of that agent.
        let state = js(&client, "return btViewer.state();").await;
        assert_eq!(state["cursor"], json!(at), "{state}");
        assert_eq!(state["agent"], json!(agent), "{state}");
        let said = js(
            &client,
            "return document.getElementById('live-state').textContent;",
        )
        .await;
        let said = said.as_str().unwrap();
        assert!(said.contains(&format!("tick {at}")), "{said}");
        assert!(said.contains("GUARD entered"), "{said}");

        // Removed, then resumed: the program goes on.
        click(&client, ".bp-remove").await;
        until(
            &client,
            "return window.btLive.state().breakpoints.length === 0;",
            "the breakpoint was not removed",
        )
        .await;
        click(&client, "#live-resume").await;
        assert_eq!(
            frames.recv_timeout(Duration::from_secs(5)).map(u64::from),
            Ok(at)
        );
        until(
            &client,
            &format!("return btViewer.state().last > {};", at + 5),
            "the page did not follow the program on",
        )
        .await;
        until(
            &client,
            "return btViewer.state().cursor === btViewer.state().last;",
            "the page does not follow",
        )
        .await;
        assert_eq!(
            js(
                &client,
                "return document.getElementById('live-follow').hidden;"
            )
            .await,
            json!(true)
        );

        // Looking back: the page says it no longer follows, and follows
        // again when asked.
        click(&client, "#first").await;
        until(
            &client,
            "return !document.getElementById('live-follow').hidden;",
            "no word that the page no longer follows",
        )
        .await;
        let first = js(&client, "return btViewer.state().first;").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(js(&client, "return btViewer.state().cursor;").await, first);
        click(&client, "#live-follow-again").await;
        until(
            &client,
            "return btViewer.state().cursor === btViewer.state().last \
             && document.getElementById('live-follow').hidden;",
            "the page did not follow again",
        )
        .await;
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));

        // The page leaves; the program ends by itself.
        stop.store(true, Ordering::Relaxed);
        drop(frames);
        game.join().expect("the program's thread");
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_page_holds_a_paused_program_as_long_as_it_is_open() {
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut agents, mut memories) = crowd(AGENTS);
    let mut recorder = FlightRecorder::new(&CAMP, AGENTS, Watch::All, Capacity::new(400, 16));
    let mut tick = move |t: u32, recorder: &mut FlightRecorder| {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    };
    with_browser(|client| async move {
        open_live(&client, &server, &url).await;
        for t in 0..2 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        let (done, frames) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let game = std::thread::spawn(move || {
            for t in 2..100_000 {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                tick(t, &mut recorder);
                server.frame(&recorder);
                if done.send(t).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        click(&client, "#live-pause").await;
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the pause took no effect",
        )
        .await;
        let at = js(&client, "return window.btLive.state().tick;").await;
        while let Ok(t) = frames.recv_timeout(Duration::from_millis(200)) {
            assert!(u64::from(t) < at.as_u64().unwrap(), "{t} after {at}");
        }
        // Twice as long as a page that answers nothing holds it: the page
        // answers the server's beats.
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(frames.try_recv().ok(), None, "the program went on");
        assert_eq!(
            js(&client, "return window.btLive.state().paused;").await,
            json!(true)
        );
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        // The page leaves: the program goes on.
        client.goto("about:blank").await.unwrap();
        assert!(frames.recv_timeout(Duration::from_secs(10)).is_ok());
        stop.store(true, Ordering::Relaxed);
        drop(frames);
        game.join().expect("the program's thread");
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn the_live_page_shows_the_agents_values_at_each_tick_and_plots_them() {
    const N: usize = 30;
    const TICKS: u32 = 150;
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut grazers, mut memories) = herd(N);
    let mut recorder = FlightRecorder::new(&HERD, N, Watch::All, Capacity::new(400, 12))
        .with_data(DataCapacity::new(4, 8))
        .name_flags::<Sense, Sense>();
    // Per tick, each grazer's fields as the tick found them.
    let mut truth: Vec<Vec<(f32, f32, bool)>> = Vec::new();
    with_browser(|client| async move {
        open_live(&client, &server, &url).await;
        for t in 0..TICKS {
            grazers.iter_mut().for_each(Grazer::step);
            truth.push(
                grazers
                    .iter()
                    .map(|g| (g.hunger, g.fatigue, g.sense.contains(Sense::DANGER)))
                    .collect(),
            );
            recorder.tick_all_with_data(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
            server.publish(&recorder);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        until_last(&client, TICKS - 1).await;
        for agent in [0, 7, 29] {
            js(&client, &format!("btViewer.selectAgent({agent});")).await;
            for t in (0..TICKS as usize).step_by(13).chain([TICKS as usize - 1]) {
                js(&client, &format!("btViewer.seek({t});")).await;
                let (hunger, fatigue, danger) = truth[t][agent];
                let shown = client
                    .execute(
                        "const v = Object.fromEntries([...document.querySelectorAll('#values tr')]\
                         .map(r => [r.dataset.name, JSON.parse(r.dataset.value)]));\
                         return [v.hunger === Number(arguments[0]), v.fatigue === Number(arguments[1]), v.danger];",
                        // (The recording writes an f32 as its shortest decimal.)
                        vec![json!(hunger.to_string()), json!(fatigue.to_string())],
                    )
                    .await
                    .unwrap();
                let danger = if danger { "yes" } else { "no" };
                assert_eq!(
                    shown,
                    json!([true, true, danger]),
                    "agent {agent} at tick {t}"
                );
            }
        }
        // The numbers plotted under the selected lane.
        let plotted = js(
            &client,
            "const c = document.getElementById('lanes'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;\
             let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 11 && d[i + 1] === 107 && d[i + 2] === 46) n++; return n;",
        )
        .await;
        assert!(plotted.as_u64().unwrap() > 100, "plot pixels: {plotted}");
        // Flag names, not masks.
        let flee = js(
            &client,
            "return document.querySelector('#tree .node[data-name=\"FLEE\"] text.sub').textContent;",
        )
        .await;
        assert!(flee.as_str().unwrap().contains("needs DANGER"), "{flee}");
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        drop(server);
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_live_page_past_its_room_lets_go_of_its_oldest_ticks_and_keeps_the_rest_exact() {
    const N: usize = 30;
    const TICKS: u32 = 300;
    const KEEP: u64 = 1500;
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = format!("{}?keep={KEEP}", server.url());
    let (mut grazers, mut memories) = herd(N);
    // Room for every tick, to compare the page with.
    let mut recorder = FlightRecorder::new(&HERD, N, Watch::All, Capacity::new(400, 12))
        .with_data(DataCapacity::new(4, 8));
    let mut hunger: Vec<Vec<f32>> = Vec::new();
    with_browser(|client| async move {
        open_live(&client, &server, &url).await;
        for t in 0..TICKS {
            grazers.iter_mut().for_each(Grazer::step);
            hunger.push(grazers.iter().map(|g| g.hunger).collect());
            recorder.tick_all_with_data(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
            // Every 6 ticks: a quiet grazer's repeats come as runs of up
            // to 6, and the page lets go of ticks in the middle of some.
            if t % 6 == 5 || t == TICKS - 1 {
                server.publish(&recorder);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        until_last(&client, TICKS - 1).await;
        let entries = js(&client, "return btViewer.entries();")
            .await
            .as_u64()
            .unwrap();
        let first = js(&client, "return btViewer.state().first;")
            .await
            .as_u64()
            .unwrap();
        assert!(entries <= KEEP, "{entries} entries kept");
        assert!(first > 0, "nothing was let go of");
        let said = js(
            &client,
            "return document.getElementById('message').textContent;",
        )
        .await;
        assert!(
            said.as_str().unwrap().contains("up to 1500 entries"),
            "{said}"
        );
        // Every kept tick of every agent, as the page holds it.
        let shown = js(
            &client,
            &format!(
                "const out = []; for (let a = 0; a < {N}; a++) {{ const row = [];\
                 for (let s = {first}; s < {TICKS}; s++) row.push(btViewer.tick(a, s)); out.push(row); }} return out;"
            ),
        )
        .await;
        let doc: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
        // Numbers as numbers: JSON from the page writes 1.0 as 1.
        let num = |v: &Value| -> Value {
            match v {
                Value::Array(a) => a.iter().map(|x| json!(x.as_f64())).collect(),
                x => json!(x.as_f64()),
            }
        };
        let items = |p: &Value| -> Vec<Value> {
            p.as_array()
                .unwrap()
                .chunks(4)
                .flat_map(|l| [l[0].clone(), l[1].clone()])
                .collect()
        };
        for agent in 0..N {
            let whole = doc["agents"][agent]["ticks"].as_array().unwrap();
            for (q, shown) in shown[agent].as_array().unwrap().iter().enumerate() {
                let s = first + q as u64;
                let want = whole.iter().find(|tk| tk[0] == s).unwrap();
                // Serial, clock, leaf, visited, flags and events as
                // recorded; the path's items and redecides (its times are
                // rounded again from a run's start).
                for i in [0, 1, 2, 3, 4, 6] {
                    assert_eq!(
                        num(&shown[i]),
                        num(&want[i]),
                        "agent {agent}, tick {s}, field {i}"
                    );
                }
                assert_eq!(items(&shown[5]), items(&want[5]), "agent {agent}, tick {s}");
            }
        }
        // The values beside them.
        for agent in [0usize, 7, 29] {
            js(&client, &format!("btViewer.selectAgent({agent});")).await;
            for s in (first..u64::from(TICKS)).step_by(7).chain([first]) {
                js(&client, &format!("btViewer.seek({s});")).await;
                let value = client
                    .execute(
                        "const r = document.querySelector('#values tr[data-name=\"hunger\"]');\
                         return r ? JSON.parse(r.dataset.value) === Number(arguments[0]) : null;",
                        vec![json!(hunger[s as usize][agent].to_string())],
                    )
                    .await
                    .unwrap();
                assert_eq!(value, json!(true), "hunger of agent {agent} at tick {s}");
            }
        }
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        drop(server);
    });
}

// ---------- the breakpoints' list, a reload, the bar ----------

/// How long a paused program whose last page closed waits for one to come
/// back (a reload), as the docs say.
const RELOAD: Duration = Duration::from_secs(3);

/// Sets a breakpoint through the page's form, as a user does.
async fn add_breakpoint(client: &Client, on: &str, decider: &str, agent: &str) {
    js(
        client,
        &format!(
            "document.getElementById('bp-on').value = '{on}';\
             document.getElementById('bp-on').dispatchEvent(new Event('change'));\
             document.getElementById('bp-decider').value = '{decider}';\
             document.getElementById('bp-agent').value = '{agent}';"
        ),
    )
    .await;
    click(client, "#bp-add").await;
}

/// Waits until the page lists `n` breakpoints.
async fn until_listed(client: &Client, n: usize) {
    until(
        client,
        &format!("return window.btLive.state().breakpoints.length === {n};"),
        "the breakpoints were not set",
    )
    .await;
}

/// What the page says in its live bar.
async fn said(client: &Client) -> String {
    js(
        client,
        "return document.getElementById('live-state').textContent;",
    )
    .await
    .as_str()
    .unwrap()
    .to_owned()
}

/// The program in a thread of its own: one frame every 30 ms, from tick
/// `from` on.
struct Game {
    frames: std::sync::mpsc::Receiver<u32>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Game {
    fn start(
        mut server: LiveServer,
        from: u32,
        mut tick: impl FnMut(u32, &mut LiveServer) + Send + 'static,
    ) -> Self {
        let (done, frames) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            for t in from..100_000 {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                tick(t, &mut server);
                if done.send(t).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(30));
            }
        });
        Game {
            frames,
            stop,
            thread,
        }
    }

    /// The last frame that returned, once none has for 400 ms (within
    /// 20 s).
    fn settled(&self) -> Option<u32> {
        let (mut last, deadline) = (None, Instant::now() + Duration::from_secs(20));
        loop {
            assert!(Instant::now() < deadline, "the program never stopped");
            match self.frames.recv_timeout(Duration::from_millis(400)) {
                Ok(t) => last = Some(t),
                Err(RecvTimeoutError::Timeout) => return last,
                Err(RecvTimeoutError::Disconnected) => panic!("the program ended"),
            }
        }
    }

    /// Ends the program (its page gone).
    fn end(self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.frames);
        self.thread.join().expect("the program's thread");
    }
}

/// The camp's program, recorded and followed.
fn camp_program() -> (FlightRecorder, impl FnMut(u32, &mut FlightRecorder) + Send) {
    let (mut agents, mut memories) = crowd(AGENTS);
    let recorder = FlightRecorder::new(&CAMP, AGENTS, Watch::All, Capacity::new(400, 16));
    let tick = move |t: u32, recorder: &mut FlightRecorder| {
        agents.iter_mut().for_each(Creature::step);
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
    };
    (recorder, tick)
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn reloading_the_page_while_paused_keeps_the_program_paused_at_its_tick() {
    let (at, agent) = *first_guards().iter().max().unwrap();
    let server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut recorder, mut tick) = camp_program();
    with_browser(|client| async move {
        let mut server = server;
        open_live(&client, &server, &url).await;
        for t in 0..2 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        add_breakpoint(&client, "enter", "GUARD", &agent.to_string()).await;
        until_listed(&client, 1).await;
        let game = Game::start(server, 2, move |t, server| {
            tick(t, &mut recorder);
            server.frame(&recorder);
        });
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the program never stopped",
        )
        .await;
        assert_eq!(game.settled().map(u64::from), Some(at - 1));

        // The page reloads.
        let reloaded = Instant::now();
        client.refresh().await.unwrap();
        until(
            &client,
            "return !!(window.btLive && window.btLive.state() && window.btLive.state().paused === true \
             && btViewer.state().cursor === window.btLive.state().hit.tick);",
            "the reloaded page does not show the program paused",
        )
        .await;
        println!(
            "the reloaded page showed the pause {:?} after the reload",
            reloaded.elapsed()
        );
        // It shows the tick the program stopped at, of the breakpoint's
        // agent, and says why.
        let control = js(&client, "return window.btLive.state();").await;
        assert_eq!(control["tick"], json!(at), "{control}");
        assert_eq!(
            control["hit"],
            json!({"breakpoint": 0, "agent": agent, "tick": at})
        );
        let state = js(&client, "return btViewer.state();").await;
        assert_eq!(state["cursor"], json!(at), "{state}");
        assert_eq!(state["agent"], json!(agent), "{state}");
        let text = said(&client).await;
        assert!(text.contains(&format!("tick {at}")), "{text}");
        assert!(
            text.contains(&format!("GUARD entered, agent #{agent}")),
            "{text}"
        );
        // Held past the grace: the reloaded page holds it.
        tokio::time::sleep(RELOAD + Duration::from_secs(1)).await;
        assert_eq!(game.frames.try_recv().ok(), None, "the program went on");
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));

        // The page closes for good: the program goes on after the grace.
        client.goto("about:blank").await.unwrap();
        let closed = Instant::now();
        assert_eq!(
            game.frames
                .recv_timeout(Duration::from_secs(15))
                .map(u64::from),
            Ok(at)
        );
        let took = closed.elapsed();
        println!("the program went on {took:?} after its page closed");
        assert!(took >= RELOAD * 2 / 3, "went on after {took:?}");
        assert!(took < RELOAD * 3, "went on only after {took:?}");
        game.end();
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn after_the_list_is_edited_the_page_names_the_breakpoint_that_stopped_the_program() {
    let (at, agent) = *first_guards().iter().max().unwrap();
    let server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut recorder, mut tick) = camp_program();
    with_browser(|client| async move {
        let mut server = server;
        open_live(&client, &server, &url).await;
        for t in 0..2 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        // Agents 0 and 1 make no error: the second breakpoint fires.
        add_breakpoint(&client, "error", "", "0").await;
        until_listed(&client, 1).await;
        add_breakpoint(&client, "enter", "GUARD", &agent.to_string()).await;
        until_listed(&client, 2).await;
        add_breakpoint(&client, "error", "", "1").await;
        until_listed(&client, 3).await;
        let game = Game::start(server, 2, move |t, server| {
            tick(t, &mut recorder);
            server.frame(&recorder);
        });
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the program never stopped",
        )
        .await;
        assert_eq!(game.settled().map(u64::from), Some(at - 1));
        let guard = format!("(GUARD entered, agent #{agent}) fired for agent #{agent}");
        let text = said(&client).await;
        assert!(text.contains(&format!("breakpoint 2 {guard}")), "{text}");
        let fired = js(
            &client,
            "return [...document.querySelectorAll('#bp-list li')].map(li => li.classList.contains('fired'));",
        )
        .await;
        assert_eq!(fired, json!([false, true, false]));

        // The first one removed: the one that fired is the first now.
        js(
            &client,
            "document.querySelectorAll('.bp-remove')[0].click();",
        )
        .await;
        until_listed(&client, 2).await;
        let text = said(&client).await;
        assert!(text.contains(&format!("breakpoint 1 {guard}")), "{text}");
        // The user looks elsewhere and edits again: the page stays there.
        js(&client, &format!("btViewer.seek({});", at - 3)).await;
        js(
            &client,
            "document.querySelectorAll('.bp-remove')[1].click();",
        )
        .await;
        until_listed(&client, 1).await;
        assert!(
            said(&client)
                .await
                .contains(&format!("breakpoint 1 {guard}"))
        );
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(at - 3)
        );
        // Removed: still named, as removed.
        js(
            &client,
            "document.querySelectorAll('.bp-remove')[0].click();",
        )
        .await;
        until_listed(&client, 0).await;
        let text = said(&client).await;
        assert!(
            text.contains(&format!("a breakpoint since removed {guard}")),
            "{text}"
        );
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        click(&client, "#live-resume").await;
        assert_eq!(
            game.frames
                .recv_timeout(Duration::from_secs(5))
                .map(u64::from),
            Ok(at)
        );
        client.goto("about:blank").await.unwrap();
        game.end();
    });
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn with_many_breakpoints_the_live_bar_leaves_the_lanes_in_view() {
    let mut server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut recorder, mut tick) = camp_program();
    with_browser(|client| async move {
        open_live(&client, &server, &url).await;
        for t in 0..40 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        until_last(&client, 39).await;
        for n in [1, 3, 8] {
            js(
                &client,
                &format!(
                    "window.btLive.send({{op: 'breakpoints', set: [...Array({n}).keys()]\
                     .map(i => ({{on: 'enter', decider: 'GUARD', agent: i % {AGENTS}}}))}});"
                ),
            )
            .await;
            until_listed(&client, n).await;
            // Two frames: the page lays itself out again.
            js(
                &client,
                "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));",
            )
            .await;
            let rects = js(
                &client,
                "const r = id => { const b = document.getElementById(id).getBoundingClientRect();\
                 return {top: b.top, bottom: b.bottom, height: b.height}; };\
                 return {bar: r('live-bar'), timeline: r('timeline'), lanes: r('lanes'),\
                 drawn: btViewer.drawn().length, rows: btViewer.rows().length};",
            )
            .await;
            println!("{n} breakpoints: {rects}");
            let at = |k: &str, f: &str| rects[k][f].as_f64().unwrap();
            // Every lane of the six agents recorded is in the page, and the
            // lanes' box is above the bar.
            assert_eq!(rects["rows"], json!(AGENTS), "{rects}");
            assert!(at("timeline", "height") >= 100.0, "{n}: {rects}");
            assert!(
                at("timeline", "bottom") <= at("bar", "top") + 0.5,
                "{n} breakpoints: the bar covers the lanes: {rects}"
            );
            let lanes_seen = at("lanes", "bottom").min(at("timeline", "bottom"));
            assert!(lanes_seen <= at("bar", "top") + 0.5, "{n}: {rects}");
        }
        assert_eq!(js(&client, "return window.btErrors;").await, json!([]));
        drop(server);
    });
}

/// The camp recorded on lanes, as an engine records entities that come
/// and go: creatures 0, 1 and 2 from the start (ids 100, 101, 102),
/// creature 3 (id `LATE`) from tick `COMES` on.
struct Newcomers {
    agents: Vec<Creature>,
    memories: Vec<scene::CampMemory>,
    recorder: FlightRecorder,
    lanes: Vec<Option<usize>>,
}

const LATE: u32 = 103;
const COMES: u32 = 30;

impl Newcomers {
    fn new() -> Self {
        let (agents, memories) = crowd(4);
        let mut recorder = FlightRecorder::with_lanes(&CAMP, 4, Capacity::new(400, 16));
        let lanes = (0..4)
            .map(|i| (i < 3).then(|| recorder.assign(100 + i).unwrap()))
            .collect();
        Newcomers {
            agents,
            memories,
            recorder,
            lanes,
        }
    }

    fn tick(&mut self, t: u32) {
        if t == COMES {
            self.lanes[3] = self.recorder.assign(LATE);
        }
        self.recorder.begin_frame();
        for (i, lane) in self.lanes.iter().enumerate() {
            self.agents[i].step();
            if let Some(lane) = *lane {
                let input = self.agents[i].input(i, t);
                self.recorder
                    .tick_lane(
                        lane,
                        &CAMP,
                        &mut self.agents[i],
                        &mut self.memories[i],
                        &input,
                    )
                    .unwrap();
            }
        }
    }
}

#[test]
#[cfg_attr(
    no_browser,
    ignore = "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
)]
fn a_breakpoint_on_an_agent_that_is_not_recorded_says_so_in_the_page() {
    // Offline: the newcomer's first tick that enters a decider, and that
    // decider.
    let mut offline = Newcomers::new();
    for t in 0..COMES + 10 {
        offline.tick(t);
    }
    let doc: Value = serde_json::from_str(&offline.recorder.export().to_json()).unwrap();
    let late = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == LATE)
        .expect("the newcomer's lane");
    let (at, entered) = late["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|tk| {
            let e = tk[6].as_array().unwrap().chunks(4).find(|e| e[0] == 4)?;
            Some((tk[0].as_u64().unwrap(), e[2].as_u64().unwrap()))
        })
        .expect("the newcomer enters a decider");
    let decider = doc["tree"]["items"][entered as usize]["name"]
        .as_str()
        .unwrap()
        .to_owned();

    let server = LiveServer::start(0).expect("a loopback port");
    let url = server.url();
    let (mut recorder, mut tick) = camp_program();
    let lanes_server = LiveServer::start(0).expect("a loopback port");
    let lanes_url = lanes_server.url();
    let mut world = Newcomers::new();
    with_browser(|client| async move {
        // A recorder that watches six agents: a seventh is refused.
        let mut server = server;
        open_live(&client, &server, &url).await;
        for t in 0..2 {
            tick(t, &mut recorder);
            server.frame(&recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        assert!(!recorder.is_watched(99));
        add_breakpoint(&client, "enter", "GUARD", "99").await;
        until(
            &client,
            "return window.btLive.error() !== '';",
            "the page said nothing",
        )
        .await;
        let error = js(
            &client,
            "return document.getElementById('live-error').textContent;",
        )
        .await;
        assert!(
            error
                .as_str()
                .unwrap()
                .contains("breakpoint 1: agent #99 is not recorded"),
            "{error}"
        );
        assert_eq!(
            js(&client, "return window.btLive.state().breakpoints.length;").await,
            json!(0)
        );
        drop(server);

        // A recorder on lanes: the newcomer's breakpoint waits for it,
        // and the page says so.
        let mut server = lanes_server;
        open_live(&client, &server, &lanes_url).await;
        for t in 0..2 {
            world.tick(t);
            server.frame(&world.recorder);
        }
        until(
            &client,
            "return !!(window.btLive.state() && window.btLive.state().framing);",
            "the page never showed the controls",
        )
        .await;
        add_breakpoint(&client, "enter", &decider, &LATE.to_string()).await;
        until_listed(&client, 1).await;
        let item = "return document.querySelector('#bp-list li').textContent;";
        let listed = js(&client, item).await;
        assert!(
            listed
                .as_str()
                .unwrap()
                .contains(&format!("agent #{LATE} is not recorded now")),
            "{listed}"
        );
        assert_eq!(
            js(&client, "return window.btLive.error();").await,
            json!("")
        );
        let game = Game::start(server, 2, move |t, server| {
            world.tick(t);
            server.frame(&world.recorder);
        });
        until(
            &client,
            "return window.btLive.state().paused === true;",
            "the program never stopped",
        )
        .await;
        assert_eq!(game.settled().map(u64::from), Some(at - 1));
        let control = js(&client, "return window.btLive.state();").await;
        assert_eq!(
            control["hit"],
            json!({"breakpoint": 0, "agent": LATE, "tick": at}),
            "{control}"
        );
        let listed = js(&client, item).await;
        assert!(
            !listed.as_str().unwrap().contains("not recorded"),
            "{listed}"
        );
        let text = said(&client).await;
        assert!(text.contains(&format!("tick {at}")), "{text}");
        assert!(text.contains(&format!("fired for agent #{LATE}")), "{text}");
        assert_eq!(
            js(&client, "return btViewer.state().cursor;").await,
            json!(at)
        );
        click(&client, "#live-resume").await;
        assert_eq!(
            game.frames
                .recv_timeout(Duration::from_secs(5))
                .map(u64::from),
            Ok(at)
        );
        client.goto("about:blank").await.unwrap();
        game.end();
    });
}
