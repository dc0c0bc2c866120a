//! The live endpoint at the HTTP level: loopback only, the page, the
//! recording, and an event stream that follows each publish and ends.

mod scene;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use scene::{CAMP, Creature, crowd};
use serde_json::Value;

fn get(server: &LiveServer, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(server.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s
}

/// The next server-sent event: (event name, data).
fn next_event(r: &mut impl BufRead) -> (String, String) {
    let (mut event, mut data) = (String::new(), String::new());
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "the stream ended");
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() && !event.is_empty() {
            return (event, data);
        }
        if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_owned();
        } else if let Some(d) = line.strip_prefix("data: ") {
            data.push_str(d);
        }
    }
}

#[test]
fn the_stream_sends_the_recording_then_each_tick_then_the_end() {
    let mut server = LiveServer::start(0).unwrap();
    assert!(server.addr().ip().is_loopback());
    let (mut agents, mut memories) = crowd(3);
    let mut recorder = FlightRecorder::new(&CAMP, 3, Watch::Agents(&[2]), Capacity::new(50, 16));
    let mut t = 0;
    let mut run = |n: u32, server: &mut LiveServer| {
        for _ in 0..n {
            agents.iter_mut().for_each(Creature::step);
            recorder.tick_all(&CAMP, &mut agents, &mut memories, |i, c| c.input(i, t));
            server.publish(&recorder);
            t += 1;
        }
    };
    run(5, &mut server);

    let mut events = BufReader::new(get(&server, "/events"));
    let mut status = String::new();
    events.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let mut head = String::new();
    while {
        head.clear();
        events.read_line(&mut head).unwrap();
        head.trim() != ""
    } {
        if head.to_ascii_lowercase().starts_with("content-type") {
            assert!(head.contains("text/event-stream"), "{head}");
        }
    }
    while server.clients() == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    run(1, &mut server);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    let doc: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(doc["agents"][0]["agent"], 2);
    assert_eq!(doc["agents"][0]["ticks"].as_array().unwrap().len(), 6);

    run(2, &mut server);
    for serial in [6, 7] {
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(msg["agents"][0]["agent"], 2);
        assert_eq!(msg["agents"][0]["ticks"][0][0], serial);
    }

    // The page and the recording.
    let mut page = String::new();
    get(&server, "/").read_to_string(&mut page).unwrap();
    assert!(page.contains("<title>bt decision viewer</title>"));
    let mut missing = String::new();
    get(&server, "/nothing")
        .read_to_string(&mut missing)
        .unwrap();
    assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");

    drop(server);
    let (name, _) = next_event(&mut events);
    assert_eq!(name, "end");
}
