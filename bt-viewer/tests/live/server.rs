//! The live endpoint at the HTTP level: loopback only, the page, the
//! recording, and an event stream that follows each publish and ends; and
//! what slow, idle, hostile and many clients get, without the game ever
//! waiting for them.

use crate::herd;
use crate::scene;
use crate::sse;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bt_core::TickInput;
use bt_viewer::{Capacity, DataCapacity, FlightRecorder, Limits, LiveServer, Watch};
use herd::{Grazer, HERD, HerdMemory, Sense, herd};
use scene::{CAMP, CampMemory, Creature, crowd};
use serde_json::{Value, json};
use sse::next_event;

fn request(server: &LiveServer, path: &str, host: &str) -> TcpStream {
    let mut s = TcpStream::connect(server.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s
}

fn get(server: &LiveServer, path: &str) -> TcpStream {
    request(server, path, "localhost")
}

/// The whole response: (status line, head, body).
fn response(mut s: TcpStream) -> (String, String, Vec<u8>) {
    let mut all = Vec::new();
    s.read_to_end(&mut all).expect("the response");
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8(all[..end].to_vec()).unwrap();
    let status = head.lines().next().unwrap().to_owned();
    (status, head, all[end + 4..].to_vec())
}

/// Reads a response's status line and head.
fn read_head(r: &mut impl BufRead) -> (String, String) {
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            return (status, head);
        }
        head.push_str(&line);
    }
}

/// A stream client: connected, its head read.
fn follow(server: &LiveServer) -> BufReader<TcpStream> {
    let mut events = BufReader::new(get(server, "/events"));
    let (status, head) = read_head(&mut events);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(head.contains("text/event-stream"), "{head}");
    events
}

/// Waits (10 s at most) until the server counts `n` stream clients.
fn wait_clients(server: &LiveServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.clients() != n {
        assert!(
            Instant::now() < deadline,
            "{} stream clients, not {n}",
            server.clients()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A camp of creatures ticked through a recorder.
struct Camp {
    agents: Vec<Creature>,
    memories: Vec<CampMemory>,
    recorder: FlightRecorder,
    t: u32,
}

impl Camp {
    fn new(n: usize, watch: Watch<'_>, capacity: Capacity) -> Self {
        let (agents, memories) = crowd(n);
        let recorder = FlightRecorder::new(&CAMP, n, watch, capacity);
        Camp {
            agents,
            memories,
            recorder,
            t: 0,
        }
    }

    fn tick(&mut self) {
        self.agents.iter_mut().for_each(Creature::step);
        let t = self.t;
        self.recorder
            .tick_all(&CAMP, &mut self.agents, &mut self.memories, |i, c| {
                c.input(i, t)
            });
        self.t += 1;
    }

    /// Ticks `n` times, publishing after each tick.
    fn run(&mut self, n: u32, server: &mut LiveServer) {
        for _ in 0..n {
            self.tick();
            server.publish(&self.recorder);
        }
    }
}

/// A page's view of the stream: the recording, with the ticks events
/// appended as the viewer appends them (their entries, their clock, their
/// values).
fn apply_ticks(doc: &mut Value, data: &str) {
    let msg: Value = serde_json::from_str(data).unwrap();
    if let Some(clock) = msg.get("clock") {
        let first = clock["first"].as_u64().unwrap();
        if doc.get("clock").is_none() {
            doc["clock"] = json!({"first": first, "now": []});
        }
        let base = doc["clock"]["first"].as_u64().unwrap();
        assert!(first >= base, "a clock before the recording's");
        let now = doc["clock"]["now"].as_array_mut().unwrap();
        for (i, t) in clock["now"].as_array().unwrap().iter().enumerate() {
            let at = (first - base) as usize + i;
            if now.len() <= at {
                now.resize(at + 1, Value::Null);
            }
            if !t.is_null() {
                now[at] = t.clone();
            }
        }
    }
    for part in msg["agents"].as_array().unwrap() {
        let lane = doc["agents"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|a| a["agent"] == part["agent"])
            .expect("a ticks event for an agent of the recording");
        let before = count(lane["ticks"].as_array().unwrap());
        let ticks = lane["ticks"].as_array_mut().unwrap();
        ticks.extend(part["ticks"].as_array().unwrap().iter().cloned());
        let added = count(part["ticks"].as_array().unwrap());
        let agent = part["agent"].clone();
        let new = msg
            .get("values")
            .and_then(|v| v.as_array().unwrap().iter().find(|v| v["agent"] == agent));
        let Some(new) = new else { continue };
        if doc.get("values").is_none() {
            doc["values"] = json!([]);
        }
        let all = doc["values"].as_array_mut().unwrap();
        if !all.iter().any(|v| v["agent"] == agent) {
            all.push(json!({"agent": agent, "fields": {}, "overflow": []}));
        }
        let mine = all.iter_mut().find(|v| v["agent"] == agent).unwrap();
        let fields = mine["fields"].as_object_mut().unwrap();
        for (name, col) in new["fields"].as_object().unwrap() {
            let have = fields
                .entry(name.clone())
                .or_insert_with(|| json!(vec![Value::Null; before]));
            have.as_array_mut()
                .unwrap()
                .extend(col.as_array().unwrap().iter().cloned());
        }
        for col in fields.values_mut() {
            col.as_array_mut()
                .unwrap()
                .resize(before + added, Value::Null);
        }
        let overflow = mine["overflow"].as_array_mut().unwrap();
        overflow.extend(new["overflow"].as_array().unwrap().iter().cloned());
    }
}

/// The ticks an agent's entries stand for.
fn count(entries: &[Value]) -> usize {
    entries
        .iter()
        .map(|e| match e.as_array().unwrap().len() {
            7 => 1,
            _ => e[0].as_u64().unwrap() as usize,
        })
        .sum()
}

/// `doc` with every run of repeats written out whole, as the viewer reads
/// it (a run is the ticks after the entry before it, repeating the last
/// full tick but for time), and no clock.
fn expanded(doc: &Value) -> Value {
    let mut out = doc.clone();
    let clock = &doc["clock"];
    for (k, a) in doc["agents"].as_array().unwrap().iter().enumerate() {
        let mut ticks: Vec<Value> = Vec::new();
        let mut base: Option<&Value> = None;
        for entry in a["ticks"].as_array().unwrap() {
            let e = entry.as_array().unwrap();
            if e.len() == 7 {
                base = Some(entry);
                ticks.push(entry.clone());
                continue;
            }
            let b = base.expect("a run after a full tick");
            let before = ticks.last().unwrap();
            // `[n]`: since the tick before's time minus its times active.
            let implied: Vec<Value> = before[5]
                .as_array()
                .unwrap()
                .chunks(4)
                .map(|l| {
                    let active = l[2].as_f64().unwrap() as f32;
                    json!(before[1].as_f64().unwrap() - f64::from(active))
                })
                .collect();
            let since = e.get(1).map_or(&implied, |s| s.as_array().unwrap());
            let after = before[0].as_u64().unwrap();
            for q in 1..=e[0].as_u64().unwrap() {
                let s = after + q;
                let first = clock["first"].as_u64().unwrap();
                let now = clock["now"][(s - first) as usize].as_f64().unwrap();
                let mut t = b.clone();
                t[0] = json!(s);
                t[1] = json!(now);
                let since = since.clone();
                let path = t[5].as_array_mut().unwrap();
                assert_eq!(path.len(), since.len() * 4);
                for (l, c) in path.chunks_mut(4).zip(&since) {
                    l[2] = json!((now - c.as_f64().unwrap()) as f32);
                }
                ticks.push(t);
            }
        }
        out["agents"][k]["ticks"] = Value::Array(ticks);
    }
    out.as_object_mut().unwrap().remove("clock");
    out
}

/// Asserts that `seen`, written out whole, holds what `recorder` holds:
/// the last ticks of each agent (the page keeps the older ones), with
/// the values recorded at them, the times and times active read back
/// as the recorder's `f32`s.
fn assert_holds(seen: &Value, recorder: &FlightRecorder) {
    let seen = expanded(seen);
    let kept: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    assert_eq!(seen["tree"], kept["tree"]);
    let (seen_agents, kept_agents) = (
        seen["agents"].as_array().unwrap(),
        kept["agents"].as_array().unwrap(),
    );
    assert_eq!(seen_agents.len(), kept_agents.len());
    for (k, (a, b)) in seen_agents.iter().zip(kept_agents).enumerate() {
        assert_eq!(a["agent"], b["agent"]);
        let (a, b) = (
            a["ticks"].as_array().unwrap(),
            b["ticks"].as_array().unwrap(),
        );
        assert!(
            a.len() >= b.len(),
            "agent entry {k}: {} of {}",
            a.len(),
            b.len()
        );
        let skip = a.len() - b.len();
        for (x, y) in a[skip..].iter().zip(b) {
            same_tick(x, y);
        }
        let values = |doc: &Value| {
            doc.get("values").and_then(|all| {
                all.as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["agent"] == b_agent(doc, k))
                    .cloned()
            })
        };
        match (values(&seen), values(&kept)) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                let (fx, fy) = (
                    x["fields"].as_object().unwrap(),
                    y["fields"].as_object().unwrap(),
                );
                assert_eq!(fx.keys().collect::<Vec<_>>(), fy.keys().collect::<Vec<_>>());
                for (name, col) in fy {
                    let col = col.as_array().unwrap();
                    let got = fx[name].as_array().unwrap();
                    assert_eq!(got[got.len() - col.len()..], col[..], "{name} of entry {k}");
                }
                assert_eq!(x["overflow"], y["overflow"]);
            }
            (x, y) => panic!("values of entry {k}: {x:?} vs {y:?}"),
        }
    }
}

fn b_agent(doc: &Value, k: usize) -> Value {
    doc["agents"][k]["agent"].clone()
}

/// Two ticks alike, the times active compared as the `f32`s they are.
fn same_tick(x: &Value, y: &Value) {
    assert_eq!(x[0], y[0]);
    assert_eq!(x[1].as_f64(), y[1].as_f64(), "time of tick {}", y[0]);
    assert_eq!(
        (&x[2], &x[3], &x[4], &x[6]),
        (&y[2], &y[3], &y[4], &y[6]),
        "tick {}",
        y[0]
    );
    let (p, q) = (x[5].as_array().unwrap(), y[5].as_array().unwrap());
    assert_eq!(p.len(), q.len(), "path of tick {}", y[0]);
    for (l, m) in p.chunks(4).zip(q.chunks(4)) {
        assert_eq!(
            (&l[0], &l[1], &l[3]),
            (&m[0], &m[1], &m[3]),
            "tick {}",
            y[0]
        );
        assert_eq!(
            l[2].as_f64().unwrap() as f32,
            m[2].as_f64().unwrap() as f32,
            "time active at tick {}",
            y[0]
        );
    }
}

#[test]
fn the_stream_sends_the_recording_then_each_tick_then_the_end() {
    let mut server = LiveServer::start(0).unwrap();
    assert!(server.addr().ip().is_loopback());
    let mut camp = Camp::new(3, Watch::Agents(&[2]), Capacity::new(50, 16));
    camp.run(5, &mut server);

    let mut events = follow(&server);
    wait_clients(&server, 1);
    camp.run(1, &mut server);
    let (name, recording) = next_event(&mut events);
    assert_eq!(name, "recording");
    let mut doc: Value = serde_json::from_str(&recording).unwrap();
    assert_eq!(doc["agents"][0]["agent"], 2);
    assert_eq!(count(doc["agents"][0]["ticks"].as_array().unwrap()), 6);
    // The recording the game's thread would have made itself.
    assert!(recording == camp.recorder.export_compact().to_json());

    camp.run(2, &mut server);
    for serial in [6, 7] {
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(msg["agents"][0]["agent"], 2);
        assert_eq!(count(msg["agents"][0]["ticks"].as_array().unwrap()), 1);
        apply_ticks(&mut doc, &data);
        let ticks = expanded(&doc)["agents"][0]["ticks"].clone();
        assert_eq!(ticks[serial][0], serial);
    }
    assert_holds(&doc, &camp.recorder);

    // The page and the recording.
    let (status, head, page) = response(get(&server, "/"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(head.contains("text/html"), "{head}");
    assert!(
        String::from_utf8(page)
            .unwrap()
            .contains("<title>bt decision viewer</title>")
    );
    // The one made for the stream, less than a second ago.
    let (status, head, json) = response(get(&server, "/recording.json"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(head.contains("application/json"), "{head}");
    assert!(json == recording.as_bytes());
    assert_eq!(server.exports_made(), 1);
    let (status, _, _) = response(get(&server, "/nothing"));
    assert!(status.starts_with("HTTP/1.1 404"), "{status}");

    drop(server);
    let (name, _) = next_event(&mut events);
    assert_eq!(name, "end");
}

#[test]
fn publish_makes_no_whole_recording_until_a_client_asks_and_shares_it() {
    let mut server = LiveServer::start(0).unwrap();
    let mut camp = Camp::new(20, Watch::All, Capacity::new(40, 16));
    // Longer than the recorder keeps, with nobody watching.
    camp.run(60, &mut server);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.exports_made(), 0);

    let mut first = follow(&server);
    wait_clients(&server, 1);
    camp.run(1, &mut server);
    let (name, data) = next_event(&mut first);
    assert_eq!(name, "recording");
    assert!(data == camp.recorder.export_compact().to_json());
    assert_eq!(server.exports_made(), 1);
    let mut first_doc: Value = serde_json::from_str(&data).unwrap();

    // The next client, a moment later, starts from the same recording and
    // the ticks published since: it sees what the recorder holds.
    camp.run(2, &mut server);
    let mut second = follow(&server);
    wait_clients(&server, 2);
    camp.run(1, &mut server);
    let (name, data) = next_event(&mut second);
    assert_eq!(name, "recording");
    let mut doc: Value = serde_json::from_str(&data).unwrap();
    for _ in 0..3 {
        let (name, data) = next_event(&mut second);
        assert_eq!(name, "ticks");
        apply_ticks(&mut doc, &data);
    }
    assert_holds(&doc, &camp.recorder);
    let (status, _, _) = response(get(&server, "/recording.json"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(server.exports_made(), 1, "one whole recording for all");

    // The first client follows each publish.
    for _ in 61..64 {
        let (name, data) = next_event(&mut first);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(msg["agents"].as_array().unwrap().len(), 20);
        apply_ticks(&mut first_doc, &data);
    }
    assert_holds(&first_doc, &camp.recorder);
}

#[test]
fn ticks_recorded_in_a_frame_after_its_publish_are_sent_with_the_next() {
    let (mut agents, mut memories) = crowd(3);
    let mut recorder = FlightRecorder::with_lanes(&CAMP, 3, Capacity::new(50, 16));
    for id in [10, 11, 12] {
        recorder.assign(id);
    }
    let mut server = LiveServer::start(0).unwrap();
    let mut events = follow(&server);
    wait_clients(&server, 1);
    let mut doc = None::<Value>;
    for t in 0..6u32 {
        recorder.begin_frame();
        for lane in 0..3 {
            let input = agents[lane].input(lane, t);
            recorder
                .tick_lane(lane, &CAMP, &mut agents[lane], &mut memories[lane], &input)
                .unwrap();
            // Published between the lanes of a frame.
            if lane == 0 {
                server.publish(&recorder);
                let (name, data) = next_event(&mut events);
                match name.as_str() {
                    "recording" => doc = Some(serde_json::from_str(&data).unwrap()),
                    "ticks" => apply_ticks(doc.as_mut().unwrap(), &data),
                    other => panic!("a {other} event"),
                }
            }
        }
    }
    server.publish(&recorder);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "ticks");
    let mut doc = doc.unwrap();
    apply_ticks(&mut doc, &data);
    let kept: Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let seen = expanded(&doc);
    for (seen, kept) in seen["agents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(kept["agents"].as_array().unwrap())
    {
        let (a, b) = (
            seen["ticks"].as_array().unwrap(),
            kept["ticks"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "agent {}", kept["agent"]);
        a.iter().zip(b).for_each(|(x, y)| same_tick(x, y));
    }
}

#[test]
fn publishing_another_recorder_starts_the_clients_again_from_its_recording() {
    let mut server = LiveServer::start(0).unwrap();
    let mut first = Camp::new(4, Watch::All, Capacity::new(30, 16));
    first.run(20, &mut server);
    let mut events = follow(&server);
    wait_clients(&server, 1);
    first.run(1, &mut server);
    assert_eq!(next_event(&mut events).0, "recording");

    // Fewer frames, another crowd: all of it is sent, from a recording of
    // the second one.
    let mut second = Camp::new(2, Watch::All, Capacity::new(30, 16));
    second.run(5, &mut server);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    let mut doc: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(doc["agents"].as_array().unwrap().len(), 2);
    assert_eq!(doc["agents"][0]["first_tick"], 0);
    while count(doc["agents"][0]["ticks"].as_array().unwrap()) < 5 {
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        apply_ticks(&mut doc, &data);
    }
    assert_holds(&doc, &second.recorder);
    assert_eq!(
        count(expanded(&doc)["agents"][1]["ticks"].as_array().unwrap()),
        5
    );
}

#[test]
fn a_client_that_never_reads_delays_no_other_client_nor_the_drop() {
    let mut server = LiveServer::start(0).unwrap();
    // A recording larger than the sockets between them hold.
    let mut camp = Camp::new(500, Watch::All, Capacity::new(200, 16));
    camp.run(200, &mut server);
    let mut events = follow(&server);
    wait_clients(&server, 1);
    camp.run(1, &mut server);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    assert!(data.len() > 8 << 20, "{} bytes", data.len());

    // One client asks for the recording and reads nothing; another
    // stream client reads nothing either.
    let _stuck = get(&server, "/recording.json");
    let _stuck_stream = get(&server, "/events");
    wait_clients(&server, 2);
    camp.run(3, &mut server);
    std::thread::sleep(Duration::from_millis(500));

    let started = Instant::now();
    let (status, _, page) = response(get(&server, "/"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(!page.is_empty());
    let (status, _, json) = response(get(&server, "/recording.json"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(json.len() > 8 << 20);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "served in {:?}",
        started.elapsed()
    );

    let dropped = Instant::now();
    drop(server);
    assert!(
        dropped.elapsed() < Duration::from_secs(1),
        "the drop took {:?}",
        dropped.elapsed()
    );
}

/// Publishes until the server counts no stream client (30 s at most);
/// returns how long it took.
fn publish_until_dropped(camp: &mut Camp, server: &mut LiveServer) -> Duration {
    let started = Instant::now();
    while server.clients() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still {} clients",
            server.clients()
        );
        camp.run(1, server);
        std::thread::sleep(Duration::from_millis(1));
    }
    started.elapsed()
}

#[test]
fn stream_clients_that_never_read_share_one_recording_and_are_dropped_after_their_backlog() {
    let limits = Limits {
        backlog_bytes: 256 << 10,
        write_stall: Duration::from_secs(60),
        ..Limits::default()
    };
    let mut server = LiveServer::start_with(0, limits).unwrap();
    let mut camp = Camp::new(200, Watch::All, Capacity::new(100, 16));
    camp.run(100, &mut server);
    // 24 clients that read nothing, coming over several publishes.
    let mut stuck = Vec::new();
    for i in 0..24 {
        stuck.push(get(&server, "/events"));
        wait_clients(&server, i + 1);
        if i % 8 == 7 {
            camp.run(1, &mut server);
        }
    }
    camp.run(1, &mut server);
    let took = publish_until_dropped(&mut camp, &mut server);
    assert!(took < Duration::from_secs(30));
    assert_eq!(server.exports_made(), 1, "one whole recording for all");
    // They were dropped, not stalled: the connections are closed.
    for s in &mut stuck {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    // A new client is served.
    let _reader = follow(&server);
    wait_clients(&server, 1);
}

#[test]
fn a_stream_client_that_stops_reading_is_dropped_after_the_write_stall() {
    let limits = Limits {
        backlog_bytes: 1 << 30,
        write_stall: Duration::from_millis(300),
        ..Limits::default()
    };
    let mut server = LiveServer::start_with(0, limits).unwrap();
    // Every tick whole, to fill the socket's buffers sooner.
    server.set_runs(false);
    let mut camp = Camp::new(200, Watch::All, Capacity::new(100, 16));
    camp.run(10, &mut server);
    let _stuck = get(&server, "/events");
    wait_clients(&server, 1);
    let took = publish_until_dropped(&mut camp, &mut server);
    assert!(took > Duration::from_millis(300), "{took:?}");
}

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn idle_connections_take_no_thread_each_are_limited_and_time_out() {
    let limits = Limits {
        connections: 40,
        idle: Duration::from_millis(800),
        ..Limits::default()
    };
    let server = LiveServer::start_with(0, limits).unwrap();
    let before = threads();
    let opened = Instant::now();
    let mut idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let grown = threads().saturating_sub(before);
    assert!(grown < 20, "{grown} more threads for 100 connections");

    // Over the limit: 503 at once.
    let mut busy = 0;
    for s in &mut idle {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        let text = String::from_utf8_lossy(&got);
        if text.starts_with("HTTP/1.1 503") {
            busy += 1;
        } else {
            // The others are closed when their time is up.
            assert!(!text.starts_with("HTTP/1.1 2"), "{text}");
        }
    }
    assert_eq!(busy, 60);
    let closed = opened.elapsed();
    assert!(
        closed >= Duration::from_millis(800) && closed < Duration::from_secs(5),
        "closed after {closed:?}"
    );
    // Then a client is served.
    let (status, _, _) = response(get(&server, "/"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

#[test]
fn a_header_line_without_end_is_refused_unread() {
    let server = LiveServer::start(0).unwrap();
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = s.try_clone().unwrap();
    let sent = std::thread::spawn(move || {
        let mut sent = 0usize;
        if writer
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: ")
            .is_err()
        {
            return sent;
        }
        let chunk = vec![b'a'; 64 << 10];
        // 256 MiB at most, unless the server stops it.
        while sent < 256 << 20 {
            match writer.write(&chunk) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        sent
    });
    let mut status = String::new();
    match BufReader::new(&mut s).read_line(&mut status) {
        Ok(_) => assert!(status.starts_with("HTTP/1.1 431"), "{status}"),
        // A reset may overtake the answer; the writer tells the rest.
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}"),
    }
    let sent = sent.join().unwrap();
    assert!(
        sent < 32 << 20,
        "the server read {sent} bytes of one header"
    );
}

#[test]
fn only_loopback_hosts_are_answered() {
    let mut server = LiveServer::start(0).unwrap();
    let mut camp = Camp::new(3, Watch::All, Capacity::new(10, 16));
    camp.run(2, &mut server);
    let port = server.addr().port();
    for path in ["/", "/recording.json", "/events"] {
        for host in [
            "evil.example".to_owned(),
            format!("evil.example:{port}"),
            format!("localhost.evil.example:{port}"),
            format!("127.0.0.1.nip.io:{port}"),
        ] {
            let (status, _, _) = response(request(&server, path, &host));
            assert!(status.starts_with("HTTP/1.1 403"), "{host}{path}: {status}");
        }
    }
    assert_eq!(server.clients(), 0);
    assert_eq!(server.exports_made(), 0);
    // No Host at all, and an absolute address naming another host.
    for raw in [
        "GET / HTTP/1.0\r\n\r\n".to_owned(),
        format!("GET http://evil.example/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"),
    ] {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let (status, _, _) = response(s);
        assert!(status.contains(" 403 "), "{raw:?}: {status}");
    }
    for host in [
        "localhost".to_owned(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        "127.0.0.1".to_owned(),
        format!("[::1]:{port}"),
    ] {
        let (status, _, _) = response(request(&server, "/", &host));
        assert!(status.starts_with("HTTP/1.1 200"), "{host}: {status}");
    }
}

#[test]
fn a_request_with_more_than_one_host_or_origin_is_refused() {
    let mut server = LiveServer::start(0).unwrap();
    let mut camp = Camp::new(3, Watch::All, Capacity::new(10, 16));
    camp.run(2, &mut server);
    let port = server.addr().port();
    let send = |head: &str| {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "{head}Connection: close\r\n\r\n").unwrap();
        response(s)
    };
    for path in ["/", "/recording.json", "/events", "/control"] {
        for hosts in [
            // A loopback name first, another after it, and the other order.
            vec!["localhost".to_owned(), "evil.example".to_owned()],
            vec![format!("localhost:{port}"), format!("evil.example:{port}")],
            vec!["evil.example".to_owned(), "127.0.0.1".to_owned()],
            // The same loopback name twice, and two loopback names.
            vec!["localhost".to_owned(), "localhost".to_owned()],
            vec![format!("127.0.0.1:{port}"), format!("[::1]:{port}")],
        ] {
            let head: String = hosts.iter().map(|h| format!("Host: {h}\r\n")).collect();
            let (status, _, body) = send(&format!("GET {path} HTTP/1.1\r\n{head}"));
            assert!(
                status.starts_with("HTTP/1.1 400"),
                "{hosts:?}{path}: {status}"
            );
            let body = String::from_utf8(body).unwrap();
            assert!(body.contains("more than one Host"), "{body}");
        }
        // Two origins, a page of loopback's first.
        let (status, _, body) = send(&format!(
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\
             Origin: http://evil.example\r\n"
        ));
        assert!(
            status.starts_with("HTTP/1.1 400"),
            "origins{path}: {status}"
        );
        assert!(
            String::from_utf8(body)
                .unwrap()
                .contains("more than one Origin")
        );
    }
    assert_eq!(server.clients(), 0);
    assert_eq!(server.exports_made(), 0);
    // One of each is answered.
    let (status, _, _) = send("GET / HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

#[test]
fn limits_out_of_range_are_named() {
    let cases = [
        (
            Limits {
                header_bytes: 100,
                ..Limits::default()
            },
            "header_bytes",
        ),
        (
            Limits {
                connections: 0,
                ..Limits::default()
            },
            "connections",
        ),
        (
            Limits {
                idle: Duration::ZERO,
                ..Limits::default()
            },
            "idle",
        ),
        (
            Limits {
                backlog_bytes: 0,
                ..Limits::default()
            },
            "backlog_bytes",
        ),
    ];
    for (limits, field) in cases {
        let e = LiveServer::start_with(0, limits).err().expect("an error");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
}

/// A herd of grazers, every one watched with its flag names (and its
/// values when asked), ticked through a recorder: a large, mostly quiet
/// crowd.
struct Herd {
    grazers: Vec<Grazer>,
    memories: Vec<HerdMemory>,
    recorder: FlightRecorder,
    t: u32,
}

impl Herd {
    fn new(n: usize, keep: usize, values: bool) -> Self {
        let (grazers, memories) = herd(n);
        let recorder = FlightRecorder::new(&HERD, n, Watch::All, Capacity::new(keep, 12))
            .name_flags::<Sense, Sense>();
        let recorder = if values {
            recorder.with_data(DataCapacity::new(4, 8))
        } else {
            recorder
        };
        Herd {
            grazers,
            memories,
            recorder,
            t: 0,
        }
    }

    /// Ticks once and publishes.
    fn run(&mut self, server: &mut LiveServer) {
        self.tick();
        server.publish(&self.recorder);
    }

    /// Ticks once.
    fn tick(&mut self) {
        self.grazers.iter_mut().for_each(Grazer::step);
        let t = self.t;
        self.recorder
            .tick_all_with_data(&HERD, &mut self.grazers, &mut self.memories, |i, g| {
                g.input(i, t)
            });
        self.t += 1;
    }
}

/// Follows `server` while `herd` runs about `ticks` ticks, publishing
/// after every `every`: the page's view of the stream, and the bytes of
/// the events it got.
fn follow_herd(server: &mut LiveServer, herd: &mut Herd, ticks: u32, every: u32) -> (Value, usize) {
    let mut events = follow(server);
    wait_clients(server, 1);
    herd.run(server);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    let mut bytes = data.len();
    let mut doc: Value = serde_json::from_str(&data).unwrap();
    for _ in 1..ticks / every {
        (1..every).for_each(|_| herd.tick());
        herd.run(server);
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        bytes += data.len();
        apply_ticks(&mut doc, &data);
    }
    (doc, bytes)
}

#[test]
fn the_whole_recording_is_the_recorders_own_byte_for_byte() {
    // Values, runs, times that are not numbers in some frames, ticks let
    // go of, and several publishes.
    let mut server = LiveServer::start(0).unwrap();
    let mut herd = Herd::new(30, 60, true);
    for t in 0..150u32 {
        herd.grazers.iter_mut().for_each(Grazer::step);
        let grazers = &mut herd.grazers;
        herd.recorder
            .tick_all_with_data(&HERD, grazers, &mut herd.memories, |i, g| {
                match (i, t % 9) {
                    (3, 4) => TickInput::new(f64::NAN, 1.0 / 30.0),
                    (7, 2) => TickInput::new(f64::INFINITY, 1.0 / 30.0).with_agent(7),
                    _ => g.input(i, t),
                }
            });
        if t % 7 == 0 {
            server.publish(&herd.recorder);
        }
    }
    server.publish(&herd.recorder);
    for runs in [true, false] {
        server.set_runs(runs);
        // The next publish, a second after the last recording: a new one.
        std::thread::sleep(Duration::from_millis(1100));
        server.publish(&herd.recorder);
        std::thread::sleep(Duration::from_millis(100));
        let (status, _, json) = response(get(&server, "/recording.json"));
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let expected = if runs {
            herd.recorder.export_compact().to_json()
        } else {
            herd.recorder.export().to_json()
        };
        assert!(json == expected.as_bytes(), "runs: {runs}");
    }
    assert_eq!(server.exports_made(), 2);
}

#[test]
fn the_stream_carries_the_values_recorded_at_each_new_tick_and_the_flag_names() {
    let mut server = LiveServer::start(0).unwrap();
    let mut herd = Herd::new(8, 50, true);
    // Some ticks before the page comes, more than the recorder keeps after.
    for _ in 0..10 {
        herd.run(&mut server);
    }
    let mut events = follow(&server);
    wait_clients(&server, 1);
    herd.run(&mut server);
    let (name, data) = next_event(&mut events);
    assert_eq!(name, "recording");
    let mut doc: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(doc["values"].as_array().unwrap().len(), 8);
    let flags = &doc["tree"]["flag_names"];
    assert_eq!(flags["decision"], json!([[0, "DANGER"], [1, "FOOD"]]));
    for _ in 0..80 {
        herd.run(&mut server);
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        // Each message holds the values of its ticks only.
        let msg: Value = serde_json::from_str(&data).unwrap();
        let values = msg["values"].as_array().unwrap();
        assert_eq!(values.len(), 8);
        for v in values {
            for col in v["fields"].as_object().unwrap().values() {
                assert_eq!(col.as_array().unwrap().len(), 1);
            }
        }
        apply_ticks(&mut doc, &data);
    }
    // What the page holds is what the recorder holds, values included.
    assert_holds(&doc, &herd.recorder);
    let hunger = |doc: &Value| doc["values"][3]["fields"]["hunger"].clone();
    let kept: Value = serde_json::from_str(&herd.recorder.export().to_json()).unwrap();
    let (seen, kept) = (hunger(&doc), hunger(&kept));
    let (seen, kept) = (seen.as_array().unwrap(), kept.as_array().unwrap());
    assert_eq!(seen.len(), 91);
    assert_eq!(seen[91 - 50..], kept[..]);
}

/// The ticks of a quiet crowd (no values: those change at every tick and
/// are sent as they are), with runs and whole.
#[test]
fn runs_on_the_stream_send_a_quiet_crowd_in_a_fraction_of_the_bytes_and_lose_nothing() {
    quiet_crowd_on_the_stream(1, 2.0);
}

/// As a game that ticks at 60 Hz and publishes at 10 Hz: a message holds
/// six ticks of each agent, and those that repeat go as runs too.
#[test]
fn runs_on_the_stream_hold_within_a_message_of_several_ticks() {
    quiet_crowd_on_the_stream(6, 5.0);
}

/// A quiet herd followed with and without runs, publishing every `every`
/// ticks: the page sees the same, in `gain` times fewer bytes or better.
fn quiet_crowd_on_the_stream(every: u32, gain: f64) {
    const N: usize = 300;
    const TICKS: u32 = 240;
    let mut plain = LiveServer::start(0).unwrap();
    plain.set_runs(false);
    let mut twin = Herd::new(N, 300, false);
    let (whole, whole_bytes) = follow_herd(&mut plain, &mut twin, TICKS, every);
    let mut server = LiveServer::start(0).unwrap();
    let mut herd = Herd::new(N, 300, false);
    let (small, small_bytes) = follow_herd(&mut server, &mut herd, TICKS, every);
    // The same run, and the page sees the same ticks and values either way.
    assert!(herd.recorder.export().to_json() == twin.recorder.export().to_json());
    assert!(whole.get("clock").is_none());
    let runs: usize = small["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            a["ticks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e.as_array().unwrap().len() < 7)
                .count()
        })
        .sum();
    assert!(runs > N, "only {runs} runs");
    assert_holds(&small, &herd.recorder);
    assert_holds(&whole, &twin.recorder);
    let (a, b) = (expanded(&small), whole);
    for (x, y) in a["agents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["agents"].as_array().unwrap())
    {
        let (x, y) = (
            x["ticks"].as_array().unwrap(),
            y["ticks"].as_array().unwrap(),
        );
        assert_eq!(x.len(), herd.t as usize);
        x.iter().zip(y).for_each(|(p, q)| same_tick(p, q));
    }
    eprintln!(
        "{N} grazers x {TICKS} ticks, published every {every}: {small_bytes} bytes \
         with runs, {whole_bytes} whole ({:.2}x)",
        whole_bytes as f64 / small_bytes as f64
    );
    assert!(
        small_bytes as f64 * gain < whole_bytes as f64,
        "{small_bytes} vs {whole_bytes}"
    );
}
