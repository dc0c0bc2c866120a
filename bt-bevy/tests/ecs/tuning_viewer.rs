//! A tree's tunables in the recordings made through bt-bevy: the values
//! in effect and each change with the tick (the run) that first read it,
//! whether or not a recorded brain ticks in that run; and the live page's
//! tune control, applied on the app's thread and in effect at the next
//! run, through the server's HTTP API.

use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::bt_viewer::{AgentData, DataCapacity, DataOut, LiveServer, TuningChange};
use bt_bevy::{
    Brain, BrainPlugin, BrainRecorder, BrainShared, BrainStats, BrainTuning, Rate, RecordBrains,
    TickRate,
};
use serde_json::{Value, json};

use crate::common::app;
use crate::sse::next_event;
use crate::tuning::{Deer, FLEE_BELOW, GRAZERS, HEALTHS, HERD, HerdMemory};

impl AgentData for Deer {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("health", self.health);
    }
}

fn recorder(app: &App) -> &BrainRecorder<HerdMemory> {
    app.world().resource::<BrainRecorder<HerdMemory>>()
}

fn tuning(app: &App) -> &BrainTuning<HerdMemory> {
    app.world().resource::<BrainTuning<HerdMemory>>()
}

/// The changes a recording of `app` holds.
fn changes(app: &App) -> Vec<TuningChange> {
    let recording = recorder(app).export();
    recording.tuning.expect("the tree has tunables").changes
}

fn change(tick: u64, name: &'static str, from: Value, to: Value) -> TuningChange {
    TuningChange {
        tick,
        name,
        from,
        to,
    }
}

/// A change from a system, one staged by a brain in the middle of a run,
/// and a load's: each kept with the run whose brains first read it; the
/// recording starts from the defaults.
#[test]
fn a_recording_keeps_each_change_with_the_run_that_first_read_it() {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&HERD)
            .in_schedule(Update)
            .record(RecordBrains::all(4)),
    );
    let herd: Vec<Entity> = HEALTHS
        .iter()
        .map(|&h| {
            app.world_mut()
                .spawn((Deer::new(h), Brain::new(&HERD)))
                .id()
        })
        .collect();
    for run in 0..9 {
        match run {
            3 => tuning(&app).tune(FLEE_BELOW, 0.5).unwrap(),
            6 => {
                let state = Arc::clone(app.world().resource::<BrainShared<HerdMemory>>().state());
                app.world_mut().get_mut::<Deer>(herd[2]).unwrap().tunes = Some((state, 0.3));
            }
            _ => {}
        }
        app.update();
    }
    let recording = recorder(&app).export();
    let tuned = recording.tuning.clone().unwrap();
    assert_eq!(tuned.first, 0);
    assert_eq!(
        tuned
            .start
            .iter()
            .map(|v| (v.name, v.value.clone()))
            .collect::<Vec<_>>(),
        [("FLEE_BELOW", json!(0.25)), ("GRAZERS", json!(3))]
    );
    assert_eq!(
        tuned.changes,
        [
            change(3, "FLEE_BELOW", json!(0.25), json!(0.5)),
            change(7, "FLEE_BELOW", json!(0.5), json!(0.3)),
        ]
    );
    // The recording's JSON, as the page reads it, holds them.
    let json: Value = serde_json::from_str(&recording.to_json()).unwrap();
    assert_eq!(json["tuning"]["changes"][1]["tick"], json!(7));

    #[cfg(feature = "serde")]
    {
        use bt_bevy::{NoSenses, SaveBrains};
        // A load into the running app: its values are a change at the
        // run after it, the first whose brains read them.
        let keys: Vec<Entity> = herd.clone();
        let save = app
            .world_mut()
            .save_brains::<HerdMemory, NoSenses, usize>(|e| keys.iter().position(|&k| k == e));
        let saved = serde_json::to_string(&save).unwrap();
        tuning(&app).tune(GRAZERS, 5).unwrap();
        app.update(); // run 9
        app.world_mut()
            .load_brains::<HerdMemory, NoSenses, usize, _>(
                &mut serde_json::Deserializer::from_str(&saved),
                |&k| herd.get(k).copied(),
            )
            .unwrap();
        app.update(); // run 10
        assert_eq!(
            changes(&app)[2..],
            [
                change(9, "GRAZERS", json!(3), json!(5)),
                change(10, "GRAZERS", json!(5), json!(3)),
            ]
        );
    }
}

/// A change that takes effect in a run where no recorded brain ticks (a
/// slow `TickRate`), with the recorded values read before the tick: kept
/// with that run all the same.
#[test]
fn a_change_in_a_run_without_a_recorded_tick_is_kept_with_that_run() {
    let mut app = app();
    let settings = RecordBrains::all(2).data::<(Deer,)>(DataCapacity::default());
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update).record(settings));
    let every_other = TickRate::new(Rate::Every(2)).unwrap();
    app.world_mut()
        .spawn((Deer::new(0.28), Brain::new(&HERD), every_other));
    let mut run = 0;
    // Up to a run where the deer ticked: it does not tick in the next.
    loop {
        app.update();
        run += 1;
        if run >= 3 && app.world().resource::<BrainStats<HerdMemory>>().ticked == 1 {
            break;
        }
    }
    tuning(&app).tune(FLEE_BELOW, 0.5).unwrap();
    app.update();
    assert_eq!(app.world().resource::<BrainStats<HerdMemory>>().ticked, 0);
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(
        changes(&app),
        [change(run, "FLEE_BELOW", json!(0.25), json!(0.5))]
    );
}

/// Sends `head` and `body`; the status code and the body of the response.
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

/// A page following the live server: its event stream and its token.
struct Page {
    events: BufReader<TcpStream>,
    token: String,
    addr: SocketAddr,
}

impl Page {
    fn open(server: &LiveServer) -> Self {
        let addr = server.addr();
        let (_, page) = exchange(addr, "GET / HTTP/1.1\r\nHost: localhost", "");
        let at = page
            .find(r#"<meta name="bt-live-token" content=""#)
            .expect("the page's token");
        let rest = &page[at + 36..];
        let token = rest[..rest.find('"').unwrap()].to_owned();
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.clients() == 0 {
            assert!(Instant::now() < deadline, "the page never followed");
            std::thread::sleep(Duration::from_millis(5));
        }
        Page {
            events: BufReader::new(s),
            token,
            addr,
        }
    }

    fn tune(&self, name: &str, value: Value) -> (u16, String) {
        let body = json!({"op": "tune", "name": name, "value": value}).to_string();
        exchange(
            self.addr,
            &format!(
                "POST /control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 X-Bt-Token: {}",
                self.token
            ),
            &body,
        )
    }

    /// The data of the next `name` event.
    fn next_of(&mut self, name: &str) -> Value {
        loop {
            let (event, data) = next_event(&mut self.events);
            if event == name {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }
}

/// The page's tune control reaches the app: checked at once (a value the
/// tunable cannot take is refused naming it), made on the app's thread at
/// the end of its next run, in effect from the run after it, and shown to
/// the page with its tick.
#[test]
fn the_live_pages_tune_control_takes_effect_at_the_apps_next_run() {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&HERD)
            .in_schedule(Update)
            .record(RecordBrains::all(4)),
    );
    let deer = app
        .world_mut()
        .spawn((Deer::new(0.28), Brain::new(&HERD)))
        .id();
    let read = |app: &App| *app.world().get::<Deer>(deer).unwrap().read.last().unwrap();
    app.world_mut()
        .resource_mut::<BrainRecorder<HerdMemory>>()
        .serve(0)
        .unwrap();
    let mut page = Page::open(recorder(&app).live().unwrap());
    app.update();
    app.update();
    page.next_of("recording");
    assert_eq!(
        page.next_of("tuning")["start"][0],
        json!({"name": "FLEE_BELOW", "value": 0.25})
    );

    let (status, body) = page.tune("FLEE_BELOW", json!(1.5));
    assert_eq!(
        (status, body.as_str()),
        (400, "tunable `FLEE_BELOW`: 1.5 is outside 0..=1")
    );
    let (status, body) = page.tune("FLEE_BELOW", json!(0.3));
    assert_eq!(status, 200, "{body}");
    // Run 2 ticks with the old value; the frame at its end takes the
    // change, on the app's thread.
    app.update();
    assert_eq!((read(&app), tuning(&app).tuned(FLEE_BELOW)), (0.25, 0.25));
    // Run 3 reads it.
    app.update();
    assert_eq!((read(&app), tuning(&app).tuned(FLEE_BELOW)), (0.3, 0.3));
    let brain = app.world().get::<Brain<HerdMemory>>(deer).unwrap();
    assert_eq!(brain.running_decider(), Some("FLEE"));
    let want = json!([{"tick": 3, "name": "FLEE_BELOW", "from": 0.25, "to": 0.3}]);
    assert_eq!(page.next_of("tuning")["changes"], want);
    assert_eq!(
        changes(&app),
        [change(3, "FLEE_BELOW", json!(0.25), json!(0.3))]
    );
    assert_eq!(tuning(&app).changes(), 1);
}
