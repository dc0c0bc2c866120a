//! Tuning a running program from the page, at the HTTP level: a
//! `{"op": "tune"}` control request changes a tunable from the program's
//! next tick on; a value it cannot take, a request without the page's
//! token and a body that is not a request are refused and change nothing;
//! the pages are shown the values and each change with its tick.
//!
//! The test plays both the page and the game, which ticks and calls
//! `LiveServer::frame` when the test says.

use crate::scene;
use crate::sse;
use crate::tuned;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bt_core::TreeShared;
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use scene::CAMP;
use serde_json::{Value, json};
use tuned::{DEER, Deer, DeerMemory, FLEE_BELOW, herd, input, leaf_at};

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

/// The token the served page holds.
fn token(addr: SocketAddr) -> String {
    let (_, page) = exchange(addr, "GET / HTTP/1.1\r\nHost: localhost", "");
    let at = page
        .find(r#"<meta name="bt-live-token" content=""#)
        .unwrap();
    let rest = &page[at + 36..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// A control request with `token` and a raw `body`.
fn control_raw(addr: SocketAddr, token: &str, body: &str) -> (u16, String) {
    exchange(
        addr,
        &format!(
            "POST /control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             X-Bt-Token: {token}"
        ),
        body,
    )
}

/// The page: its event stream and its token.
struct Page {
    events: BufReader<TcpStream>,
    token: String,
    addr: SocketAddr,
}

impl Page {
    fn open(server: &LiveServer) -> Self {
        let addr = server.addr();
        let token = token(addr);
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut events = BufReader::new(s);
        loop {
            let mut line = String::new();
            events.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.clients() == 0 {
            assert!(Instant::now() < deadline, "the page never followed");
            std::thread::sleep(Duration::from_millis(5));
        }
        Page {
            events,
            token,
            addr,
        }
    }

    fn tune(&self, name: &str, value: Value) -> (u16, String) {
        let body = json!({"op": "tune", "name": name, "value": value});
        control_raw(self.addr, &self.token, &body.to_string())
    }

    /// The data of the next `name` event.
    fn next_of(&mut self, name: &str) -> Value {
        loop {
            let (event, data) = sse::next_event(&mut self.events);
            if event == name {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }
}

/// The game: a herd of deer (healths 0.1, 0.28, 0.9) ticked when told.
struct Game {
    shared: Arc<TreeShared>,
    deer: Vec<Deer>,
    memories: Vec<DeerMemory>,
    recorder: FlightRecorder,
    server: LiveServer,
    t: u64,
}

impl Game {
    fn new() -> Self {
        let (shared, deer, memories) = herd(&[0.1, 0.28, 0.9]);
        Game {
            shared,
            deer,
            memories,
            recorder: FlightRecorder::new(&DEER, 3, Watch::All, Capacity::ticks(100)),
            server: LiveServer::start(0).unwrap(),
            t: 0,
        }
    }

    /// Ticks the herd `n` times, calling `frame` after each.
    fn frames(&mut self, n: u64) {
        for _ in 0..n {
            let t = self.t;
            self.recorder
                .tick_all(&DEER, &mut self.deer, &mut self.memories, |_, _| input(t));
            self.server.frame(&self.recorder);
            self.t += 1;
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.recorder.export().to_json()).unwrap()
    }
}

#[test]
fn a_value_tuned_from_the_page_takes_effect_at_the_programs_next_tick() {
    let mut game = Game::new();
    let mut page = Page::open(&game.server);
    game.frames(2);
    // The recording the page starts from holds the tunables and their
    // values; a `tuning` event follows it.
    let recording = page.next_of("recording");
    assert_eq!(
        recording["tree"]["tunables"][0]["name"],
        json!("FLEE_BELOW")
    );
    assert_eq!(recording["tuning"]["changes"], json!([]));
    let tuning = page.next_of("tuning");
    assert_eq!(
        tuning["start"][0],
        json!({"name": "FLEE_BELOW", "value": 0.25})
    );

    let (status, body) = page.tune("FLEE_BELOW", json!(0.3));
    assert_eq!(status, 200, "{body}");
    // Not in effect until the program's next frame takes it, and its next
    // tick puts it in effect.
    assert_eq!(game.shared.tuned(FLEE_BELOW), 0.25);
    game.frames(1); // tick 2, then the frame takes the change
    assert_eq!(game.shared.tuned(FLEE_BELOW), 0.25);
    game.frames(1); // tick 3 reads 0.3
    assert_eq!(game.shared.tuned(FLEE_BELOW), 0.3);
    let json = game.json();
    assert_eq!(leaf_at(&json, 1, 2).as_deref(), Some("GRAZE"));
    assert_eq!(leaf_at(&json, 1, 3).as_deref(), Some("FLEE"));
    let change = json!([{"tick": 3, "name": "FLEE_BELOW", "from": 0.25, "to": 0.3}]);
    assert_eq!(json["tuning"]["changes"], change);

    // The pages are shown the change with its tick.
    let tuning = page.next_of("tuning");
    assert_eq!(tuning["changes"], change, "{tuning}");

    // An int tunable takes a whole float; a float one an int.
    assert_eq!(page.tune("RUN_FOR", json!(12.0)).0, 200);
    assert_eq!(page.tune("FLEE_BELOW", json!(1)).0, 200);
    game.frames(2);
    assert_eq!(game.shared.tuned(tuned::RUN_FOR), 12);
    assert_eq!(game.shared.tuned(FLEE_BELOW), 1.0);
    assert_eq!(
        page.next_of("tuning")["changes"].as_array().unwrap().len(),
        3
    );

    // A page that joins now starts from the recording made for the first
    // one (less than a second ago) and the ticks since: its `tuning` event
    // holds every change.
    let mut late = Page::open(&game.server);
    game.frames(1);
    late.next_of("recording");
    assert_eq!(
        late.next_of("tuning")["changes"].as_array().unwrap().len(),
        3
    );

    // The whole recording holds them all (once the one made for the page
    // is more than a second old: a newer one is made).
    std::thread::sleep(Duration::from_millis(1100));
    game.frames(1);
    let (status, body) = exchange(
        game.server.addr(),
        "GET /recording.json HTTP/1.1\r\nHost: localhost",
        "",
    );
    assert_eq!(status, 200);
    let whole: Value = serde_json::from_str(&body).unwrap();
    let ours: Value = serde_json::from_str(&game.recorder.export_compact().to_json()).unwrap();
    assert_eq!(whole["tuning"], ours["tuning"]);
    assert_eq!(whole["tuning"]["changes"].as_array().unwrap().len(), 3);
}

#[test]
fn a_value_the_tunable_cannot_take_is_refused_naming_it_and_changes_nothing() {
    let mut game = Game::new();
    let mut page = Page::open(&game.server);
    game.frames(2);
    page.next_of("recording");
    for (name, value, why) in [
        ("FLEE", json!(0.3), "tree `DEER` has no tunable `FLEE`"),
        (
            "flee_below",
            json!(0.3),
            "tree `DEER` has no tunable `flee_below`",
        ),
        (
            "FLEE_BELOW",
            json!(true),
            "tunable `FLEE_BELOW` is a float, not true",
        ),
        ("GRAZING", json!(1), "tunable `GRAZING` is a bool, not 1"),
        (
            "RUN_FOR",
            json!(2.5),
            "tunable `RUN_FOR` is an int, not 2.5",
        ),
        (
            "FLEE_BELOW",
            json!(1.5),
            "tunable `FLEE_BELOW`: 1.5 is outside 0..=1",
        ),
        (
            "FLEE_BELOW",
            json!(-0.1),
            "tunable `FLEE_BELOW`: -0.1 is outside 0..=1",
        ),
        (
            "RUN_FOR",
            json!(0),
            "tunable `RUN_FOR`: 0 is outside 1..=500",
        ),
        (
            "RUN_FOR",
            json!(u64::MAX),
            "tunable `RUN_FOR` is an int, not",
        ),
        (
            "FLEE_BELOW",
            json!("0.3"),
            "tunable `FLEE_BELOW` is a float, not",
        ),
        (
            "GRAZING",
            json!(null),
            "tunable `GRAZING`: null is neither a number, true or false nor a name",
        ),
        (
            "GRAZING",
            json!({"bool": true}),
            "tunable `GRAZING`: {\"bool\":true} is neither",
        ),
    ] {
        let (status, body) = page.tune(name, value.clone());
        assert_eq!(status, 400, "{name} = {value}: {body}");
        assert!(body.starts_with(why), "{name} = {value}: {body}");
    }
    game.frames(5);
    assert_eq!(game.shared.tuning_changes(), 0);
    assert_eq!(game.json()["tuning"]["changes"], json!([]));
}

#[test]
fn a_tune_request_without_the_token_or_that_is_not_one_is_refused() {
    let mut game = Game::new();
    let mut page = Page::open(&game.server);
    game.frames(2);
    page.next_of("recording");
    let addr = game.server.addr();
    let body = json!({"op": "tune", "name": "FLEE_BELOW", "value": 0.3}).to_string();
    // No token, another token, or another site's page.
    let (status, _) = exchange(
        addr,
        "POST /control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json",
        &body,
    );
    assert_eq!(status, 403);
    assert_eq!(control_raw(addr, "0123456789abcdef", &body).0, 403);
    let (status, _) = exchange(
        addr,
        &format!(
            "POST /control HTTP/1.1\r\nHost: evil.example\r\nX-Bt-Token: {}",
            page.token
        ),
        &body,
    );
    assert_eq!(status, 403);
    // Bodies that are not a tune request.
    for body in [
        "",
        "tune FLEE_BELOW 0.3",
        "{\"op\": \"tune\"",
        r#"{"op": "tune", "name": "FLEE_BELOW"}"#,
        r#"{"op": "tune", "value": 0.3}"#,
        r#"{"op": "tune", "name": 7, "value": 0.3}"#,
        r#"{"op": "tune", "name": "FLEE_BELOW", "value": 0.3, "when": "now"}"#,
        r#"{"op": "tunes", "name": "FLEE_BELOW", "value": 0.3}"#,
        r#"[{"op": "tune", "name": "FLEE_BELOW", "value": 0.3}]"#,
    ] {
        let (status, why) = control_raw(addr, &page.token, body);
        assert_eq!(status, 400, "{body}: {why}");
        assert!(
            why.starts_with("this is not a control request"),
            "{body}: {why}"
        );
    }
    // A body larger than a control request.
    let long = format!(
        r#"{{"op": "tune", "name": "{}", "value": 0.3}}"#,
        "X".repeat(8000)
    );
    let (status, _) = control_raw(addr, &page.token, &long);
    assert_eq!(status, 413);
    game.frames(3);
    assert_eq!(game.shared.tuning_changes(), 0);
    // The server still answers.
    assert_eq!(page.tune("FLEE_BELOW", json!(0.3)).0, 200);
}

#[test]
fn a_program_that_cannot_take_a_change_says_why() {
    // A tree without tunables.
    let mut server = LiveServer::start(0).unwrap();
    let mut page = Page::open(&server);
    let (mut agents, mut memories) = scene::crowd(2);
    let mut recorder = FlightRecorder::new(&CAMP, 2, Watch::All, Capacity::ticks(10));
    for t in 0..2 {
        recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
        server.frame(&recorder);
    }
    page.next_of("recording");
    let (status, why) = page.tune("FLEE_BELOW", json!(0.3));
    assert_eq!(
        (status, why.as_str()),
        (400, "tree `CAMP` has no tunable `FLEE_BELOW`: it has none")
    );

    // A program that only publishes cannot be tuned from the page.
    let mut game = Game::new();
    let mut page = Page::open(&game.server);
    let t = 0;
    game.recorder
        .tick_all(&DEER, &mut game.deer, &mut game.memories, |_, _| input(t));
    game.server.publish(&game.recorder);
    page.next_of("recording");
    assert_eq!(page.tune("FLEE_BELOW", json!(0.3)).0, 409);
}

bt_core::tunables! { PACE_TUNING:
    /// How the herd moves.
    PACE: enum Pace { Walk, Trot, Gallop } = Walk;
}
bt_core::leaf! { GALLOP: Deer, when: |_, x| x.tuned(PACE) == Pace::Gallop }
bt_core::leaf! { AMBLE: Deer }
bt_core::group! { PACE_ROOT: Deer, prioritized [GALLOP, AMBLE] }
bt_core::tree! { PACED: Deer = PACE_ROOT, memory: PacedMemory, tunables: PACE_TUNING }

#[test]
fn a_choice_tuned_from_the_page_takes_one_of_its_names_and_nothing_else() {
    let shared = PACED.new_shared(0);
    let mut deer = vec![Deer { health: 1.0 }];
    let mut memories = vec![PACED.new_memory_in(&shared, 0)];
    let mut recorder = FlightRecorder::new(&PACED, 1, Watch::All, Capacity::ticks(50));
    let mut server = LiveServer::start(0).unwrap();
    let mut page = Page::open(&server);
    let mut t = 0;
    let mut frames = |n: u64, recorder: &mut FlightRecorder, server: &mut LiveServer| {
        for _ in 0..n {
            recorder.tick_all(&PACED, &mut deer, &mut memories, |_, _| input(t));
            server.frame(recorder);
            t += 1;
        }
    };
    frames(2, &mut recorder, &mut server);
    // The page is given the names to offer.
    let recording = page.next_of("recording");
    let declared = &recording["tree"]["tunables"][0];
    assert_eq!(declared["name"], json!("PACE"));
    assert_eq!(declared["choices"], json!(["Walk", "Trot", "Gallop"]));
    assert_eq!(page.next_of("tuning")["start"][0]["value"], json!("Walk"));

    // Anything but one of the names, spelt as declared, is refused.
    for (value, why) in [
        (
            json!("Run"),
            r#"tunable `PACE`: "Run" is not one of "Walk", "Trot", "Gallop""#,
        ),
        (json!("gallop"), r#"tunable `PACE`: "gallop" is not one of"#),
        (json!(""), r#"tunable `PACE`: "" is not one of"#),
        (json!(2), "tunable `PACE` is a choice, not 2"),
        (json!(true), "tunable `PACE` is a choice, not true"),
    ] {
        let (status, body) = page.tune("PACE", value.clone());
        assert_eq!(status, 400, "{value}: {body}");
        assert!(body.starts_with(why), "{value}: {body}");
    }
    frames(2, &mut recorder, &mut server);
    assert_eq!(shared.tuning_changes(), 0);

    // A name is taken at the next frame, in effect from the tick after.
    assert_eq!(page.tune("PACE", json!("Gallop")).0, 200);
    frames(2, &mut recorder, &mut server); // ticks 4 and 5
    assert_eq!(shared.tuned(PACE), Pace::Gallop);
    let json: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    assert_eq!(leaf_at(&json, 0, 4).as_deref(), Some("AMBLE"));
    assert_eq!(leaf_at(&json, 0, 5).as_deref(), Some("GALLOP"));
    let change = json!([{"tick": 5, "name": "PACE", "from": "Walk", "to": "Gallop"}]);
    assert_eq!(json["tuning"]["changes"], change);
    assert_eq!(page.next_of("tuning")["changes"], change);
}
