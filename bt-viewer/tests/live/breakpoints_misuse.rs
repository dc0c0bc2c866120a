//! Attempts to break what the live server promises about breakpoints: one
//! on an agent a `FlightRecorder::new` does not record is refused, naming
//! the breakpoint and the agent; the `control` event's `hit` names the
//! fired breakpoint by its place in the list as it is edited (`null` once
//! removed); a page that comes within 3 s of a paused game's last stream
//! closing finds it still paused at the same tick.
#![cfg(feature = "live")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bt_core::TickInput;
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use serde_json::{Value, json};

use crate::misuse_common;
use misuse_common::{CRITTER, Critter, before};

/// A game of 6 critters, 0 to 2 recorded, calling `frame` every 20 ms on
/// its own thread; `frames` counts the frames done.
struct Game {
    port: u16,
    frames: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Game {
    fn start() -> Game {
        let frames = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (f, s) = (frames.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut live = LiveServer::start(0).unwrap();
            tx.send(live.addr().port()).unwrap();
            let mut critters: Vec<Critter> = (0..6).map(|_| Critter { hunger: 0.0 }).collect();
            let mut memories: Vec<_> = (0..6).map(|i| CRITTER.new_memory(i)).collect();
            let mut recorder = FlightRecorder::new(
                &CRITTER,
                6,
                Watch::Agents(&[0, 1, 2]),
                Capacity::ticks(2000),
            );
            let mut t = 0u64;
            while !s.load(Ordering::Relaxed) {
                for (i, c) in critters.iter_mut().enumerate() {
                    c.hunger = before(i, t);
                }
                recorder.tick_all(&CRITTER, &mut critters, &mut memories, |i, _| {
                    TickInput::new(t as f64 * 0.02, 0.02).with_agent(i as u32)
                });
                live.frame(&recorder);
                t += 1;
                f.store(t, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        Game {
            port,
            frames,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Game {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // A paused game lets go within a few seconds of its last page.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request, `Connection: close`: the status and the body.
fn request(port: u16, method: &str, path: &str, token: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Bt-Token: {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |x| x.1)
        .to_string();
    (status, body)
}

fn token(port: u16) -> String {
    let (status, page) = request(port, "GET", "/", "", "");
    assert_eq!(status, 200);
    let at = page
        .find(r#"name="bt-live-token""#)
        .expect("the token's meta");
    let rest = &page[at..];
    let c = rest.find("content=\"").unwrap() + 9;
    rest[c..c + rest[c..].find('"').unwrap()].to_string()
}

fn control(port: u16, token: &str, body: Value) -> (u16, String) {
    request(port, "POST", "/control", token, &body.to_string())
}

/// A stream: its `control` events come on `rx`; it answers beats.
struct Stream {
    rx: mpsc::Receiver<Value>,
    socket: TcpStream,
}

fn follow(port: u16, token: &str) -> Stream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let socket = s.try_clone().unwrap();
    let (tx, rx) = mpsc::channel();
    let token = token.to_string();
    std::thread::spawn(move || {
        let mut r = BufReader::new(s);
        let mut line = String::new();
        let mut chunked = false;
        loop {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line
                .to_ascii_lowercase()
                .starts_with("transfer-encoding: chunked")
            {
                chunked = true;
            }
            if line == "\r\n" {
                break;
            }
        }
        // The body, de-chunked, split into events.
        let mut text = String::new();
        let (mut event, mut data) = (String::new(), String::new());
        loop {
            let mut piece = Vec::new();
            if chunked {
                line.clear();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let Ok(n) = usize::from_str_radix(line.trim(), 16) else {
                    continue;
                };
                if n == 0 {
                    return;
                }
                piece.resize(n + 2, 0);
                if r.read_exact(&mut piece).is_err() {
                    return;
                }
                piece.truncate(n);
            } else {
                let mut buf = [0u8; 8192];
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => piece.extend_from_slice(&buf[..n]),
                }
            }
            text.push_str(&String::from_utf8_lossy(&piece));
            while let Some(nl) = text.find('\n') {
                let l: String = text.drain(..=nl).collect();
                let l = l.trim_end_matches(['\r', '\n']);
                if let Some(e) = l.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = l.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                } else if l.is_empty() {
                    if event == "control" {
                        let _ = tx.send(serde_json::from_str(&data).unwrap_or(Value::Null));
                    } else if event == "beat" {
                        let n: u64 = data.trim().parse().unwrap_or(0);
                        let (port, token) = (port, token.clone());
                        std::thread::spawn(move || {
                            control(port, &token, json!({"op": "beat", "n": n}));
                        });
                    }
                    event.clear();
                    data.clear();
                }
            }
        }
    });
    Stream { rx, socket }
}

impl Stream {
    /// The next `control` event that `pred` accepts (10 s at most).
    fn until(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) if pred(&v) => return v,
                Ok(v) => seen.push(v),
                Err(_) => panic!("{what}: not seen; control events: {seen:#?}"),
            }
        }
    }
    fn close(self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }
}

#[test]
fn breakpoint_on_unrecorded_agent_is_refused() {
    let game = Game::start();
    let token = token(game.port);
    let stream = follow(game.port, &token);
    stream.until("the first control event", |_| true);
    let mut failures = Vec::new();
    for (what, bp) in [
        (
            "agent 4 (in the crowd, not watched)",
            json!({"on": "enter", "decider": "FEED", "agent": 4}),
        ),
        (
            "agent 99 (not in the crowd)",
            json!({"on": "enter", "decider": "FEED", "agent": 99}),
        ),
        (
            "agent 2^32 (not an id)",
            json!({"on": "enter", "agent": 4294967296u64}),
        ),
        ("agent -1", json!({"on": "enter", "agent": -1})),
        ("agent \"0\"", json!({"on": "enter", "agent": "0"})),
        ("agent 1.5", json!({"on": "enter", "agent": 1.5})),
    ] {
        // Alone, and after one that is fine.
        for set in [json!([bp.clone()]), json!([{"on": "error"}, bp.clone()])] {
            let (status, body) =
                control(game.port, &token, json!({"op": "breakpoints", "set": set}));
            println!("{what}: {status} {body}");
            if status != 400 {
                failures.push(format!("{what}: {status} {body}"));
            }
        }
    }
    // The refusal names the agent.
    let (_, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [{"on": "enter", "decider": "FEED", "agent": 4}]}),
    );
    if !body.contains('4') {
        failures.push(format!("the refusal does not name agent 4: {body}"));
    }
    // And nothing of a refused list was set.
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [{"on": "enter", "decider": "FEED", "agent": 0}]}),
    );
    assert_eq!(status, 200, "a breakpoint on a recorded agent: {body}");
    let c = stream.until("the list with agent 0's breakpoint", |v| {
        v["breakpoints"].as_array().is_some_and(|b| b.len() == 1)
    });
    assert_eq!(c["breakpoints"][0]["agent"], json!(0), "{c}");
    stream.close();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn breakpoint_hit_follows_edits_and_reload_keeps_pause() {
    let game = Game::start();
    let token = token(game.port);
    let stream = follow(game.port, &token);
    stream.until("the first control event", |_| true);
    // A: agent 0 enters FEED (at ticks 3, 10, 17…); B: agent 1 enters ROAM (every other tick).
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [
            {"on": "enter", "decider": "FEED", "agent": 0},
            {"on": "enter", "decider": "ROAM", "agent": 1},
        ]}),
    );
    assert_eq!(status, 200, "{body}");
    let hit = stream.until("paused at a breakpoint", |v| {
        v["paused"] == json!(true) && !v["hit"].is_null()
    });
    let place = hit["hit"]["breakpoint"].as_u64().unwrap() as usize;
    let fired = hit["fired"].clone();
    let list = hit["breakpoints"].as_array().unwrap().clone();
    assert_eq!(
        list[place]["id"], fired["id"],
        "hit names the fired one: {hit}"
    );
    let tick = hit["tick"].clone();
    let other = list[1 - place].clone();
    // Edit: a new one first, then the fired one, then the other, all kept by id.
    let new_list = json!([{"on": "error"}, list[place].clone(), other.clone()]);
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": new_list}),
    );
    assert_eq!(status, 200, "{body}");
    let c = stream.until("the edited list", |v| {
        v["breakpoints"].as_array().is_some_and(|b| b.len() == 3)
    });
    assert_eq!(c["paused"], json!(true), "{c}");
    assert_eq!(c["hit"]["breakpoint"], json!(1), "after the edit: {c}");
    assert_eq!(c["breakpoints"][1]["id"], fired["id"], "{c}");
    // The same id twice is refused.
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [list[place].clone(), list[place].clone()]}),
    );
    assert_eq!(status, 400, "the same id twice: {body}");
    // An id never given is refused.
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [{"id": 987654, "on": "error"}]}),
    );
    assert_eq!(status, 400, "an id never given: {body}");
    // Remove the fired one: hit.breakpoint becomes null, the game stays paused.
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [other.clone()]}),
    );
    assert_eq!(status, 200, "{body}");
    let c = stream.until("the list without the fired one", |v| {
        v["breakpoints"].as_array().is_some_and(|b| b.len() == 1)
    });
    assert!(c["hit"]["breakpoint"].is_null(), "after removing it: {c}");
    assert_eq!(c["paused"], json!(true), "{c}");
    // Reload: the stream closes, another comes within a second.
    let frames = game.frames.load(Ordering::Relaxed);
    stream.close();
    std::thread::sleep(Duration::from_millis(800));
    let again = follow(game.port, &token);
    let c = again.until("a control event after the reload", |_| true);
    assert_eq!(c["paused"], json!(true), "after a reload: {c}");
    assert_eq!(c["tick"], tick, "the paused tick after a reload: {c}");
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(
        game.frames.load(Ordering::Relaxed),
        frames,
        "the game went on while a page that answers beats follows it"
    );
    // Resume and close.
    let (status, body) = control(game.port, &token, json!({"op": "breakpoints", "set": []}));
    assert_eq!(status, 200, "{body}");
    let (status, body) = control(game.port, &token, json!({"op": "resume"}));
    assert_eq!(status, 200, "{body}");
    again.until("resumed", |v| v["paused"] == json!(false));
    again.close();
}

/// Thirty quick edits of the list while paused, each keeping the fired
/// breakpoint at another place: `hit` follows every one.
#[test]
fn breakpoint_hit_follows_many_edits() {
    let game = Game::start();
    let token = token(game.port);
    let stream = follow(game.port, &token);
    stream.until("the first control event", |_| true);
    let (status, body) = control(
        game.port,
        &token,
        json!({"op": "breakpoints", "set": [{"on": "enter", "decider": "ROAM", "agent": 1}]}),
    );
    assert_eq!(status, 200, "{body}");
    let hit = stream.until("paused", |v| {
        v["paused"] == json!(true) && !v["hit"].is_null()
    });
    let fired = hit["breakpoints"][0].clone();
    let mut extra: Vec<Value> = Vec::new();
    for k in 0..30usize {
        // `k` new ones (by id from the last list) before the fired one.
        let mut set = extra.clone();
        set.push(json!({"on": "launch"}));
        let place = set.len();
        set.push(fired.clone());
        let (status, body) = control(game.port, &token, json!({"op": "breakpoints", "set": set}));
        assert_eq!(status, 200, "edit {k}: {body}");
        let c = stream.until(&format!("edit {k}"), |v| {
            v["breakpoints"]
                .as_array()
                .is_some_and(|b| b.len() == place + 1)
        });
        assert_eq!(c["hit"]["breakpoint"], json!(place), "edit {k}: {c}");
        assert_eq!(c["paused"], json!(true));
        extra = c["breakpoints"].as_array().unwrap()[..place].to_vec();
    }
    let _ = control(game.port, &token, json!({"op": "breakpoints", "set": []}));
    let _ = control(game.port, &token, json!({"op": "resume"}));
    stream.close();
}
