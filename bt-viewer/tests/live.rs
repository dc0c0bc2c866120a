//! The live endpoint at the HTTP level: loopback only, the page, the
//! recording, and an event stream that follows each publish and ends; and
//! what slow, idle, hostile and many clients get, without the game ever
//! waiting for them.

mod scene;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bt_viewer::{Capacity, FlightRecorder, Limits, LiveServer, Watch};
use scene::{CAMP, CampMemory, Creature, crowd};
use serde_json::Value;

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

/// The next server-sent event: (event name, data). Each event is one
/// chunk of the response, so the chunk sizes are lines of their own.
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
/// appended as the viewer appends them.
fn apply_ticks(doc: &mut Value, data: &str) {
    let msg: Value = serde_json::from_str(data).unwrap();
    for part in msg["agents"].as_array().unwrap() {
        let lane = doc["agents"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|a| a["agent"] == part["agent"])
            .expect("a ticks event for an agent of the recording");
        let ticks = lane["ticks"].as_array_mut().unwrap();
        ticks.extend(part["ticks"].as_array().unwrap().iter().cloned());
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
    let doc: Value = serde_json::from_str(&recording).unwrap();
    assert_eq!(doc["agents"][0]["agent"], 2);
    assert_eq!(doc["agents"][0]["ticks"].as_array().unwrap().len(), 6);
    // The recording the game's thread would have made itself.
    assert!(recording == camp.recorder.export().to_json());

    camp.run(2, &mut server);
    for serial in [6, 7] {
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(msg["agents"][0]["agent"], 2);
        assert_eq!(msg["agents"][0]["ticks"][0][0], serial);
    }

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
    assert!(data == camp.recorder.export().to_json());
    assert_eq!(server.exports_made(), 1);

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
    let now: Value = serde_json::from_str(&camp.recorder.export().to_json()).unwrap();
    for (seen, kept) in doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(now["agents"].as_array().unwrap())
    {
        let seen = seen["ticks"].as_array().unwrap();
        let kept = kept["ticks"].as_array().unwrap();
        assert_eq!(seen[seen.len() - kept.len()..], kept[..]);
    }
    let (status, _, _) = response(get(&server, "/recording.json"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(server.exports_made(), 1, "one whole recording for all");

    // The first client follows each publish.
    for serial in 61..64 {
        let (name, data) = next_event(&mut first);
        assert_eq!(name, "ticks");
        let msg: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(msg["agents"].as_array().unwrap().len(), 20);
        assert_eq!(msg["agents"][0]["ticks"][0][0], serial);
    }
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
    for (seen, kept) in doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(kept["agents"].as_array().unwrap())
    {
        assert_eq!(seen["ticks"], kept["ticks"], "agent {}", kept["agent"]);
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
    while doc["agents"][0]["ticks"].as_array().unwrap().len() < 5 {
        let (name, data) = next_event(&mut events);
        assert_eq!(name, "ticks");
        apply_ticks(&mut doc, &data);
    }
    let kept: Value = serde_json::from_str(&second.recorder.export().to_json()).unwrap();
    assert_eq!(doc["agents"], kept["agents"]);
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
