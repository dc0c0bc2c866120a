//! The live page holds the app: a pause, a step or a breakpoint set in the
//! page stops `app.update()` at the end of the tick system's run, and the
//! app goes on when the page resumes it or goes away. The test plays the
//! page over HTTP; `browser_pause.rs` does the same in a real browser.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy_app::Update;
use bevy_ecs::prelude::*;
use bt_bevy::bt_viewer::{DataCapacity, Recording};
use bt_bevy::{BrainPlugin, BrainRecorder, BrainStats, BrainSystems, RecordBrains, agent_id};
use serde_json::{Value, json};

use crate::common::app;
use crate::critters::{CRITTERS, CritterMemory, HUNGRY_ABOVE, Hunger, Mood, critter, live};

// ---------- the page's side, over HTTP ----------

/// Sends a request; returns the status and the body of the response.
fn exchange(addr: SocketAddr, head: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).expect("the response");
    let all = String::from_utf8(all).unwrap();
    let (head, body) = all.split_once("\r\n\r\n").expect("a response head");
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.to_owned(),
    )
}

/// A page following the app: its event stream and the token of its
/// control requests.
struct Page {
    events: BufReader<TcpStream>,
    token: String,
    addr: SocketAddr,
}

impl Page {
    fn open(addr: SocketAddr) -> Self {
        let (status, page) = exchange(addr, "GET / HTTP/1.1\r\nHost: localhost", "");
        assert_eq!(status, 200);
        let marker = r#"<meta name="bt-live-token" content=""#;
        let at = page.find(marker).expect("the token in the page") + marker.len();
        let token = page[at..][..page[at..].find('"').unwrap()].to_owned();
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut events = BufReader::new(s);
        let mut line = String::new();
        events.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        Page {
            events,
            token,
            addr,
        }
    }

    /// The next event: (name, data).
    fn next(&mut self) -> (String, String) {
        crate::sse::next_event(&mut self.events)
    }

    /// Reads events up to the first `name` one; returns its data.
    fn until(&mut self, name: &str) -> String {
        loop {
            let (event, data) = self.next();
            if event == name {
                return data;
            }
        }
    }

    /// The next `control` event that says the app is paused for `why`
    /// (the server tells the page again when the breakpoints change).
    fn paused(&mut self, why: &str) -> Value {
        loop {
            let c: Value = serde_json::from_str(&self.until("control")).unwrap();
            if c["paused"] == json!(true) && c["why"] == why {
                return c;
            }
        }
    }

    /// A control request, as the page sends it: the response's status.
    fn send(&self, body: Value) -> u16 {
        let (status, text) = exchange(
            self.addr,
            &format!(
                "POST /control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 X-Bt-Token: {}",
                self.token
            ),
            &body.to_string(),
        );
        assert!(status == 200 || status == 409, "{status}: {text}");
        status
    }
}

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

#[derive(Resource)]
struct First(Entity);

/// The running app: its thread, what it tells, how to stop it.
struct Running {
    addr: SocketAddr,
    /// The first critter's agent id.
    agent: u32,
    progress: Progress,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Recording>,
}

impl Running {
    /// The app recording every critter with its hunger and mood, served
    /// live (`settings` as given), updating every 10 ms.
    fn start(settings: RecordBrains) -> Self {
        let progress = Progress::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (told, tell) = channel();
        let (p, s) = (progress.clone(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut app = app();
            app.add_plugins(
                BrainPlugin::new(&CRITTERS)
                    .in_schedule(Update)
                    .record(settings.data::<(Hunger, Mood)>(DataCapacity::default())),
            )
            .insert_resource(p.clone())
            .add_systems(Update, (live, note).chain().before(BrainSystems::Tick));
            let first = app.world_mut().spawn(critter(0.1)).id();
            app.world_mut().spawn(critter(0.13));
            app.insert_resource(First(first));
            let mut recorder = app
                .world_mut()
                .resource_mut::<BrainRecorder<CritterMemory>>();
            recorder.serve(0).unwrap();
            let addr = recorder.live().unwrap().addr();
            told.send((addr, agent_id(first))).unwrap();
            while !s.load(Ordering::SeqCst) {
                app.update();
                p.updates.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
            }
            app.world()
                .resource::<BrainRecorder<CritterMemory>>()
                .export()
        });
        let (addr, agent) = tell.recv_timeout(Duration::from_secs(30)).unwrap();
        Running {
            addr,
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

    /// Waits (10 s at most) until the app has returned from more than
    /// `n` updates.
    fn goes_past(&self, n: u64, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.updates() <= n {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Checks that the app waits at the end of frame `tick`: its `update`
    /// does not return for a while.
    fn waits_at(&self, tick: u64) {
        for _ in 0..3 {
            assert_eq!(self.ticking(), tick);
            assert_eq!(self.updates(), tick, "update {tick} returned");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the app: its recording.
    fn end(self) -> Recording {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the app's thread")
    }
}

#[test]
fn the_page_pauses_steps_and_breaks_the_app_and_closing_it_lets_the_app_go_on() {
    let app = Running::start(RecordBrains::all(4));
    let mut page = Page::open(app.addr);
    page.until("recording");

    // Paused: `update` does not return.
    assert_eq!(page.send(json!({"op": "pause"})), 200);
    let c = page.paused("pause");
    let at = c["tick"].as_u64().unwrap();
    app.waits_at(at);

    // One step: one more frame, then it waits again.
    assert_eq!(page.send(json!({"op": "step"})), 200);
    let c = page.paused("step");
    assert_eq!(c["tick"], json!(at + 1));
    app.waits_at(at + 1);

    // A breakpoint on the first critter's turning to its food, then on.
    let bp = json!({"on": "enter", "decider": "EAT_WHEN_HUNGRY", "agent": app.agent});
    assert_eq!(page.send(json!({"op": "breakpoints", "set": [bp]})), 200);
    assert_eq!(page.send(json!({"op": "resume"})), 200);
    let c = page.paused("breakpoint");
    let hit = c["tick"].as_u64().unwrap();
    assert!(hit > at + 1, "{c}");
    assert_eq!(
        c["hit"],
        json!({"breakpoint": 0, "agent": app.agent, "tick": hit})
    );
    app.waits_at(hit);
    // It stopped at a frame where the critter was hungry.
    let seen = app.progress.seen.lock().unwrap().clone();
    assert_eq!(seen.len() as u64, hit + 1);
    assert!(
        seen[hit as usize].0 > HUNGRY_ABOVE,
        "{:?}",
        seen[hit as usize]
    );

    // The page goes away while the app waits: it goes on.
    drop(page);
    app.goes_past(hit + 3, "the app still waits for a page that left");

    // The values recorded at the frame where it stopped are the
    // critter's then.
    let agent = app.agent;
    let recording = app.end();
    let values = recording
        .values
        .iter()
        .find(|v| v.agent == agent)
        .expect("the first critter's values");
    let lane = recording
        .agents
        .iter()
        .find(|a| a.agent == values.agent)
        .unwrap();
    let j = lane
        .ticks
        .iter()
        .position(|t| t[0] == json!(hit))
        .expect("the tick is kept");
    assert_eq!(
        values.fields["hunger"][j],
        // (As the recording writes an f32: its shortest decimal.)
        json!(seen[hit as usize].0.to_string().parse::<f64>().unwrap())
    );
    assert_eq!(values.fields["mood"][j], json!("peckish"));
}

#[test]
fn an_app_that_publishes_on_a_timer_is_never_held() {
    let app = Running::start(RecordBrains::all(4).publish_every(Duration::ZERO));
    let mut page = Page::open(app.addr);
    page.until("recording");
    assert_eq!(page.send(json!({"op": "pause"})), 409);
    let n = app.updates();
    app.goes_past(n + 5, "the app stopped");
    page.until("ticks");
    app.end();
}
