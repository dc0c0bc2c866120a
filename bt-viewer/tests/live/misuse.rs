//! Misuse of the live view at scale: the lanes a page follows (`POST
//! /view`), the crowd's counts, the server's queries (`GET /query`),
//! newcomers' lanes, agents released and assigned again, two pages, a
//! page that reloads, a breakpoint after a long run or on a newcomer.
//! Each test says what it tried; those that break are ignored with the
//! reason.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bt_core::{TickInput, behavior, decider, group, tree};
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use serde_json::{Value, json};

use crate::webdriver;

// ---------- a small crowd ----------

#[derive(Default, Clone)]
struct Bot {
    id: u32,
    t: u32,
}

behavior! { RARE_ACT: Bot }
behavior! { EAT: Bot }
behavior! { WANDER: Bot }
decider! { RARE: Bot => RARE_ACT, when: |b, _| b.id == 7 && b.t % 50 >= 40 }
decider! { EAT_D: Bot => EAT, decide: |b, _| if (b.id + b.t) % 3 == 0 { 1.0 } else { 0.0 } }
decider! { WANDER_D: Bot => WANDER }
group! { ROOT: Bot, prioritized [RARE, EAT_D, WANDER_D] }
tree! { BOTS: Bot = ROOT, memory: BotMemory }

fn crowd(n: u32) -> (Vec<Bot>, Vec<BotMemory>) {
    let bots: Vec<Bot> = (0..n).map(|id| Bot { id, t: 0 }).collect();
    let memories = (0..n).map(|i| BOTS.new_memory(u64::from(i))).collect();
    (bots, memories)
}

/// Ticks every bot once through the recorder at tick `t`.
fn step(recorder: &mut FlightRecorder, bots: &mut [Bot], memories: &mut [BotMemory], t: u32) {
    for b in bots.iter_mut() {
        b.t = t;
    }
    let now = f64::from(t) * 0.1;
    recorder.tick_all(&BOTS, bots, memories, |_, _| TickInput::new(now, 0.1));
}

// ---------- HTTP by hand ----------

/// One request on a connection of its own: (status, body).
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
        addr.port()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = tcp.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    let chunked = text.split_once("\r\n\r\n").is_some_and(|(h, _)| {
        h.to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
    });
    (status, if chunked { dechunk(&body) } else { body })
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

fn token(addr: SocketAddr) -> String {
    let (status, page) = request(addr, "GET", "/", &[], "");
    assert_eq!(status, 200);
    let mark = r#"name="bt-live-token" content=""#;
    let at = page.find(mark).expect("the token") + mark.len();
    page[at..at + page[at..].find('"').unwrap()].to_owned()
}

/// A stream client: reads server-sent events (HTTP/1.0, so that the body
/// is not chunked).
struct Sse {
    reader: BufReader<TcpStream>,
}

impl Sse {
    fn open(addr: SocketAddr, path: &str) -> Sse {
        let mut tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            tcp,
            "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n",
            addr.port()
        )
        .unwrap();
        let mut reader = BufReader::new(tcp);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains("200"), "{path}: {line}");
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        Sse { reader }
    }

    /// The next event (name, data), or `None` at the end or after 10 s.
    fn next(&mut self) -> Option<(String, Value)> {
        let (mut name, mut data) = (String::from("message"), String::new());
        let mut line = String::new();
        loop {
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let l = line.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                if data.is_empty() {
                    continue;
                }
                let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
                return Some((name, value));
            }
            if let Some(v) = l.strip_prefix("event:") {
                name = v.trim().to_owned();
            } else if let Some(v) = l.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
    }

    /// Events until one named `name` (within 10 s).
    fn until(&mut self, name: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match self.next() {
                Some((n, v)) if n == name => return v,
                Some(_) => {}
                None => break,
            }
        }
        panic!("no `{name}` event");
    }
}

fn server() -> LiveServer {
    LiveServer::start(0).expect("a server")
}

/// Publishes until the stream client got its `recording` and `crowd`.
fn join(live: &mut LiveServer, recorder: &FlightRecorder, path: &str) -> (Sse, Value) {
    let mut sse = Sse::open(live.addr(), path);
    // The server counts the client, then the next publish makes its start.
    let deadline = Instant::now() + Duration::from_secs(5);
    while live.clients() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    live.publish(recorder);
    let _ = sse.until("recording");
    let crowd = sse.until("crowd");
    (sse, crowd)
}

// ---------- POST /view: bad, huge, stale, another stream's, no token ----------

/// What a case tried, its headers, its body and the status it must get.
type ViewCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, String, u16);

#[test]
fn view_refuses_bad_huge_stale_and_tokenless_requests_by_status() {
    let (mut bots, mut mems) = crowd(20);
    let mut recorder = FlightRecorder::new(&BOTS, 20, Watch::All, Capacity::ticks(50));
    for t in 0..5 {
        step(&mut recorder, &mut bots, &mut mems, t);
    }
    let mut live = server();
    let addr = live.addr();
    let tok = token(addr);
    let (_sse, crowd) = join(&mut live, &recorder, "/events?first=4");
    let stream = crowd["stream"].as_u64().expect("a stream number");
    let with = [("X-Bt-Token", tok.as_str())];
    let good = json!({"stream": stream, "agents": [1, 2]}).to_string();
    let cases: Vec<ViewCase> = vec![
        ("no token", vec![], good.clone(), 403),
        (
            "wrong token",
            vec![("X-Bt-Token", "0123456789abcdef")],
            good.clone(),
            403,
        ),
        ("empty token", vec![("X-Bt-Token", "")], good.clone(), 403),
        ("not json", with.to_vec(), "{stream".into(), 400),
        ("not an object", with.to_vec(), "[1,2]".into(), 400),
        (
            "stream a string",
            with.to_vec(),
            r#"{"stream":"1","agents":[]}"#.into(),
            400,
        ),
        (
            "stream negative",
            with.to_vec(),
            r#"{"stream":-1,"agents":[]}"#.into(),
            400,
        ),
        (
            "stream a float",
            with.to_vec(),
            r#"{"stream":1.5,"agents":[]}"#.into(),
            400,
        ),
        (
            "stream huge",
            with.to_vec(),
            r#"{"stream":1e300,"agents":[]}"#.into(),
            400,
        ),
        (
            "agents not a list",
            with.to_vec(),
            json!({"stream": stream, "agents": 3}).to_string(),
            400,
        ),
        (
            "agent negative",
            with.to_vec(),
            json!({"stream": stream, "agents": [-3]}).to_string(),
            400,
        ),
        (
            "agent past u32",
            with.to_vec(),
            json!({"stream": stream, "agents": [u64::MAX]}).to_string(),
            400,
        ),
        (
            "513 agents",
            with.to_vec(),
            json!({"stream": stream, "agents": (0..513).collect::<Vec<_>>()}).to_string(),
            400,
        ),
        (
            "stale stream",
            with.to_vec(),
            json!({"stream": stream + 1000, "agents": [1]}).to_string(),
            404,
        ),
        (
            "stream u64 max",
            with.to_vec(),
            json!({"stream": u64::MAX, "agents": [1]}).to_string(),
            404,
        ),
        ("fine", with.to_vec(), good.clone(), 200),
        (
            "unknown agents only",
            with.to_vec(),
            json!({"stream": stream, "agents": [100_000]}).to_string(),
            200,
        ),
    ];
    let mut wrong = Vec::new();
    for (what, headers, body, want) in cases {
        let (got, text) = request(addr, "POST", "/view", &headers, &body);
        println!("{what}: {got} {}", text.trim());
        if got != want {
            wrong.push(format!("{what}: {got} (wanted {want}) {}", text.trim()));
        }
        if got == 400 {
            assert!(
                !text.trim().is_empty(),
                "{what}: a 400 says what is at fault"
            );
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn view_of_a_stream_that_follows_every_lane_is_not_found() {
    let (mut bots, mut mems) = crowd(10);
    let mut recorder = FlightRecorder::new(&BOTS, 10, Watch::All, Capacity::ticks(50));
    step(&mut recorder, &mut bots, &mut mems, 0);
    let mut live = server();
    let tok = token(live.addr());
    // Every lane: a plain /events has a crowd event? The docs give the
    // stream's number in the crowd event of a partial stream only.
    let (_partial, crowd) = join(&mut live, &recorder, "/events?first=2");
    let partial = crowd["stream"].as_u64().unwrap();
    let mut whole = Sse::open(live.addr(), "/events");
    std::thread::sleep(Duration::from_millis(100));
    step(&mut recorder, &mut bots, &mut mems, 1);
    live.publish(&recorder);
    let _ = whole.until("recording");
    // Stream numbers are given in order; the whole one is one of the
    // numbers near the partial one. None of them but the partial one may
    // take a view.
    for n in [partial.saturating_sub(1), partial + 1, partial + 2] {
        let (status, text) = request(
            live.addr(),
            "POST",
            "/view",
            &[("X-Bt-Token", &tok)],
            &json!({"stream": n, "agents": [1]}).to_string(),
        );
        println!("stream {n}: {status} {text}");
        assert_eq!(status, 404, "stream {n} does not follow some lanes: {text}");
    }
}

// ---------- two pages at once ----------

#[test]
fn two_pages_follow_their_own_lanes() {
    let (mut bots, mut mems) = crowd(40);
    let mut recorder = FlightRecorder::new(&BOTS, 40, Watch::All, Capacity::ticks(100));
    for t in 0..3 {
        step(&mut recorder, &mut bots, &mut mems, t);
    }
    let mut live = server();
    let tok = token(live.addr());
    let (mut a, ca) = join(&mut live, &recorder, "/events?agents=1,2");
    let (mut b, cb) = join(&mut live, &recorder, "/events?agents=30,31");
    let (sa, sb) = (
        ca["stream"].as_u64().unwrap(),
        cb["stream"].as_u64().unwrap(),
    );
    assert_ne!(sa, sb, "two pages, two streams");
    // Page A switches to 10 and 11; page B keeps its lanes.
    let (status, _) = request(
        live.addr(),
        "POST",
        "/view",
        &[("X-Bt-Token", &tok)],
        &json!({"stream": sa, "agents": [10, 11]}).to_string(),
    );
    assert_eq!(status, 200);
    let lanes = a.until("lanes");
    let got: Vec<u64> = lanes["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["agent"].as_u64().unwrap())
        .collect();
    assert_eq!(
        got,
        [10, 11],
        "the lanes event holds the lanes newly followed"
    );
    step(&mut recorder, &mut bots, &mut mems, 3);
    live.publish(&recorder);
    let ta = a.until("ticks");
    let tb = b.until("ticks");
    let ids = |v: &Value| -> Vec<u64> {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["agent"].as_u64().unwrap())
            .collect()
    };
    println!("A {:?} B {:?}", ids(&ta), ids(&tb));
    assert_eq!(ids(&ta), [10, 11]);
    assert_eq!(ids(&tb), [30, 31]);
}

// ---------- a page that reloads mid-stream ----------

#[test]
fn a_page_that_reloads_mid_stream_misses_no_tick_and_gets_none_twice() {
    let (mut bots, mut mems) = crowd(8);
    let mut recorder = FlightRecorder::new(&BOTS, 8, Watch::All, Capacity::ticks(500));
    let mut live = server();
    let mut t = 0;
    step(&mut recorder, &mut bots, &mut mems, t);
    // First page: joins, reads a few ticks, goes away.
    let (mut first, _) = join(&mut live, &recorder, "/events?first=8");
    for _ in 0..3 {
        t += 1;
        step(&mut recorder, &mut bots, &mut mems, t);
        live.publish(&recorder);
        let _ = first.until("ticks");
    }
    drop(first);
    // The reload: within a second of the whole recording, with ticks
    // published between the two.
    let mut second = Sse::open(live.addr(), "/events?first=8");
    std::thread::sleep(Duration::from_millis(50));
    for _ in 0..3 {
        t += 1;
        step(&mut recorder, &mut bots, &mut mems, t);
        live.publish(&recorder);
    }
    let rec = second.until("recording");
    let _crowd = second.until("crowd");
    // Serials agent 0 holds: from the recording, then from each ticks event.
    let mut serials: Vec<u64> = Vec::new();
    let a0 = rec["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == 0)
        .expect("agent 0");
    let first_tick = a0["first_tick"].as_u64().unwrap();
    let n = count_ticks(&a0["ticks"]);
    serials.extend(first_tick..first_tick + n);
    let deadline = Instant::now() + Duration::from_secs(3);
    while serials.last() != Some(&u64::from(t)) && Instant::now() < deadline {
        let (name, v) = second.next().expect("an event");
        if name != "ticks" {
            continue;
        }
        if let Some(a) = v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["agent"] == 0)
        {
            let from = a["first_tick"]
                .as_u64()
                .unwrap_or(serials.last().map_or(0, |s| s + 1));
            let n = count_ticks(&a["ticks"]);
            serials.extend(from..from + n);
        }
    }
    println!("serials {serials:?} (t = {t})");
    let want: Vec<u64> = (0..=u64::from(t)).collect();
    assert_eq!(serials, want, "every tick once, in order");
}

/// Tick entries, a run `[n, [...]]` counting `n`.
fn count_ticks(ticks: &Value) -> u64 {
    ticks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match t.as_array() {
            Some(run) if run.len() == 2 && run[0].is_u64() && run[1].is_array() => {
                run[0].as_u64().unwrap()
            }
            _ => 1,
        })
        .sum()
}

// ---------- GET /query ----------

#[test]
fn query_refuses_bad_questions_and_takes_odd_ranges() {
    let (mut bots, mut mems) = crowd(20);
    let mut recorder = FlightRecorder::new(&BOTS, 20, Watch::All, Capacity::ticks(50));
    for t in 0..10 {
        step(&mut recorder, &mut bots, &mut mems, t);
    }
    let mut live = server();
    let (_sse, _) = join(&mut live, &recorder, "/events?first=2");
    let addr = live.addr();
    let eat = BOTS.find("EAT_D").expect("EAT_D").0;
    let cases: Vec<(String, u16)> = vec![
        ("/query".into(), 400),
        ("/query?kind=".into(), 400),
        ("/query?kind=bogus".into(), 400),
        (format!("/query?kind=entered&item={}", u32::MAX), 400),
        ("/query?kind=entered&item=999".into(), 400),
        ("/query?kind=entered&item=-1".into(), 400),
        ("/query?kind=entered&item=abc".into(), 400),
        ("/query?kind=entered&item=".into(), 400),
        (format!("/query?kind=entered&item={eat}&from=x"), 400),
        (format!("/query?kind=entered&item={eat}&to=1e400"), 400),
        (format!("/query?kind=entered&item={eat}&from=NaN"), 400),
        (format!("/query?kind=rejected&item={eat}&reason=abc"), 400),
        // A parameter given twice: which one was meant?
        (format!("/query?kind=entered&item={eat}&kind=ran"), 400),
        // Ranges that hold nothing, or more than is kept: an answer.
        (format!("/query?kind=entered&item={eat}&from=9&to=2"), 200),
        (
            format!("/query?kind=entered&item={eat}&from=1000000&to=2000000"),
            200,
        ),
        (format!("/query?kind=rejected&item={eat}&reason=99999"), 200),
        (format!("/query?kind=rejected&item={eat}&reason=-5"), 200),
        ("/query?kind=trouble".into(), 200),
    ];
    let mut wrong = Vec::new();
    for (path, want) in cases {
        let (got, text) = request(addr, "GET", &path, &[], "");
        println!("{path}: {got} {}", text.trim());
        if got != want {
            wrong.push(format!("{path}: {got} (wanted {want}) {}", text.trim()));
        } else if got == 200 {
            let v: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
            assert!(v["matches"].is_array(), "{path}: {text}");
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// What plain bt-core says: per agent, the first tick (from `from`) at
/// which its leaf after the tick is `leaf`.
fn first_ran(n: u32, ticks: u32, leaf: &str, from: u32) -> Vec<[u64; 2]> {
    let (mut bots, mut mems) = crowd(n);
    let want = BOTS.find(leaf);
    let mut first = vec![None; n as usize];
    for t in 0..ticks {
        for b in bots.iter_mut() {
            b.t = t;
        }
        let now = f64::from(t) * 0.1;
        bt_core::tick_all(&BOTS, &mut bots, &mut mems, |_, _| TickInput::new(now, 0.1));
        for (i, m) in mems.iter().enumerate() {
            if t >= from && first[i].is_none() && m.leaf() == want {
                first[i] = Some(t);
            }
        }
    }
    let mut out: Vec<[u64; 2]> = first
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| [i as u64, u64::from(t)]))
        .collect();
    out.sort_by_key(|[a, t]| (*t, *a));
    out
}

#[test]
fn query_ran_agrees_with_bt_core_over_the_kept_ticks() {
    let (n, ticks, keep) = (60u32, 130u32, 100usize);
    let (mut bots, mut mems) = crowd(n);
    let mut recorder = FlightRecorder::new(&BOTS, n as usize, Watch::All, Capacity::ticks(keep));
    for t in 0..ticks {
        step(&mut recorder, &mut bots, &mut mems, t);
    }
    let mut live = server();
    let (_sse, _) = join(&mut live, &recorder, "/events?first=2");
    for leaf in ["RARE", "EAT_D", "WANDER_D"] {
        let item = BOTS.find(leaf).unwrap().0;
        let (status, text) = request(
            live.addr(),
            "GET",
            &format!("/query?kind=ran&item={item}"),
            &[],
            "",
        );
        assert_eq!(status, 200, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        let got: Vec<[u64; 2]> = serde_json::from_value(v["matches"].clone()).unwrap();
        let want = first_ran(n, ticks, leaf, ticks - keep as u32);
        println!("{leaf}: got {} matches, bt-core {}", got.len(), want.len());
        assert_eq!(got, want, "{leaf}");
    }
}

// ---------- the crowd's counts against bt-core ----------

#[test]
fn crowd_counts_are_the_agents_running_each_leaf_as_bt_core_says() {
    let (n, ticks) = (100u32, 60u32);
    let (mut bots, mut mems) = crowd(n);
    let mut recorder = FlightRecorder::new(&BOTS, n as usize, Watch::All, Capacity::ticks(200));
    step(&mut recorder, &mut bots, &mut mems, 0);
    let mut live = server();
    let (mut sse, crowd0) = join(&mut live, &recorder, "/events?first=3");
    // The counts per leaf name per tick, from the crowd event and the
    // ticks events.
    let names: std::collections::HashMap<String, String> = ["RARE", "EAT_D", "WANDER_D"]
        .iter()
        .map(|n| (BOTS.find(n).unwrap().0.to_string(), (*n).to_owned()))
        .collect();
    let mut counts: std::collections::BTreeMap<(u64, String), u64> = Default::default();
    let mut take = |c: &Value| {
        let first = c["first"].as_u64().unwrap();
        if let Some(leaves) = c["leaves"].as_object() {
            for (k, per) in leaves {
                let name = names.get(k).cloned().unwrap_or_else(|| k.clone());
                for (j, x) in per.as_array().unwrap().iter().enumerate() {
                    counts.insert((first + j as u64, name.clone()), x.as_u64().unwrap());
                }
            }
        } else {
            panic!("leaves: {c}");
        }
    };
    take(&crowd0);
    for t in 1..ticks {
        step(&mut recorder, &mut bots, &mut mems, t);
        live.publish(&recorder);
        let v = sse.until("ticks");
        take(&v["crowd"]);
    }
    // bt-core's view.
    let (mut bots2, mut mems2) = crowd(n);
    let mut wrong = Vec::new();
    for t in 0..ticks {
        for b in bots2.iter_mut() {
            b.t = t;
        }
        bt_core::tick_all(&BOTS, &mut bots2, &mut mems2, |_, _| {
            TickInput::new(f64::from(t) * 0.1, 0.1)
        });
        for leaf in ["RARE", "EAT_D", "WANDER_D"] {
            let want = mems2.iter().filter(|m| m.leaf() == BOTS.find(leaf)).count() as u64;
            let got = counts
                .get(&(u64::from(t), leaf.to_owned()))
                .copied()
                .unwrap_or(0);
            if got != want {
                wrong.push(format!("tick {t} {leaf}: page gets {got}, bt-core {want}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong: {:#?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}

/// A tick serial is a `u64`: a range to `u64::MAX` is a number.
#[test]

fn query_takes_a_range_to_the_largest_serial() {
    let (mut bots, mut mems) = crowd(4);
    let mut recorder = FlightRecorder::new(&BOTS, 4, Watch::All, Capacity::ticks(10));
    step(&mut recorder, &mut bots, &mut mems, 0);
    let mut live = server();
    let (_sse, _) = join(&mut live, &recorder, "/events?first=2");
    let eat = BOTS.find("EAT_D").unwrap().0;
    let path = format!("/query?kind=entered&item={eat}&from=0&to={}", u64::MAX);
    let (status, text) = request(live.addr(), "GET", &path, &[], "");
    println!("{path}: {status} {text}");
    assert_eq!(status, 200, "{text}");
}

// ---------- agents released and assigned again ----------

/// A recorder of lanes: agent 7 recorded, released, then assigned again
/// (a lane never used is taken first: agent 7 is then on two lanes).
#[test]

fn an_agent_released_and_assigned_again_is_listed_once() {
    let mut recorder = FlightRecorder::with_lanes(&BOTS, 4, Capacity::ticks(50));
    let (mut bots, mut mems) = crowd(10);
    let lane7 = recorder.assign(7).unwrap();
    let lane3 = recorder.assign(3).unwrap();
    let mut live = server();
    let mut tick = |recorder: &mut FlightRecorder, lanes: &[(usize, usize)], t: u32| {
        recorder.begin_frame();
        for &(lane, i) in lanes {
            bots[i].t = t;
            recorder
                .tick_lane(
                    lane,
                    &BOTS,
                    &mut bots[i],
                    &mut mems[i],
                    &TickInput::new(f64::from(t) * 0.1, 0.1),
                )
                .unwrap();
        }
    };
    tick(&mut recorder, &[(lane7, 7), (lane3, 3)], 0);
    let (mut sse, crowd0) = join(&mut live, &recorder, "/events?first=4");
    println!("crowd agents {}", crowd0["agents"]);
    tick(&mut recorder, &[(lane7, 7), (lane3, 3)], 1);
    live.publish(&recorder);
    let _ = sse.until("ticks");
    recorder.release(lane7);
    let again = recorder.assign(7).unwrap();
    println!("agent 7: lane {lane7}, then lane {again}");
    tick(&mut recorder, &[(again, 7), (lane3, 3)], 2);
    live.publish(&recorder);
    let v = sse.until("ticks");
    println!("ticks crowd {}", v["crowd"]);
    let export = recorder.export();
    let ids: Vec<u32> = export.agents.iter().map(|a| a.agent).collect();
    println!("export agents {ids:?}");
    let sevens = ids.iter().filter(|&&a| a == 7).count();
    // The library's own comparison refuses a recording that lists an
    // agent twice: the recorder must not make one.
    let json = export.to_json();
    let cmp = bt_viewer::compare(&json, &json);
    println!(
        "compare of the recording with itself: {:?}",
        cmp.as_ref()
            .map(|c| c.first_tick())
            .map_err(|e| e.to_string())
    );
    let (status, text) = request(live.addr(), "GET", "/query?kind=trouble&from=0", &[], "");
    println!("query: {status} {text}");
    assert_eq!(sevens, 1, "agent 7 listed {sevens} times: {ids:?}");
    assert!(
        cmp.is_ok(),
        "the recording is refused by compare: {:?}",
        cmp.err().map(|e| e.to_string())
    );
}

// ---------- newcomers ----------

#[test]
fn newcomers_are_announced_and_counted() {
    let mut recorder = FlightRecorder::with_lanes(&BOTS, 8, Capacity::ticks(50));
    let (mut bots, mut mems) = crowd(8);
    let mut lanes: Vec<(usize, usize)> = vec![(recorder.assign(0).unwrap(), 0)];
    let mut live = server();
    let tick = |recorder: &mut FlightRecorder,
                lanes: &[(usize, usize)],
                bots: &mut [Bot],
                mems: &mut [BotMemory],
                t: u32| {
        recorder.begin_frame();
        for &(lane, i) in lanes {
            bots[i].t = t;
            recorder
                .tick_lane(
                    lane,
                    &BOTS,
                    &mut bots[i],
                    &mut mems[i],
                    &TickInput::new(f64::from(t) * 0.1, 0.1),
                )
                .unwrap();
        }
    };
    tick(&mut recorder, &lanes, &mut bots, &mut mems, 0);
    let (mut sse, crowd0) = join(&mut live, &recorder, "/events?first=1");
    assert_eq!(crowd0["agents"], json!([0]));
    let mut seen_new = Vec::new();
    for t in 1..6u32 {
        lanes.push((recorder.assign(t).unwrap(), t as usize));
        tick(&mut recorder, &lanes, &mut bots, &mut mems, t);
        live.publish(&recorder);
        let v = sse.until("ticks");
        let c = &v["crowd"];
        seen_new.extend(
            c["new"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|x| x.as_u64().unwrap()),
        );
        let total: u64 = c["leaves"]
            .as_object()
            .unwrap()
            .values()
            .map(|per| {
                per.as_array()
                    .unwrap()
                    .last()
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            })
            .sum();
        let idle = c["leaves"]
            .get("idle")
            .and_then(|x| x.as_array())
            .and_then(|a| a.last())
            .and_then(Value::as_u64)
            .unwrap_or(0);
        println!(
            "t {t}: new {} counts {} (total {total}, idle {idle})",
            c["new"], c["leaves"]
        );
        assert_eq!(
            total,
            u64::from(t) + 1,
            "tick {t}: every recorded agent is counted once"
        );
    }
    assert_eq!(seen_new, [1, 2, 3, 4, 5]);
}

// ---------- breakpoints: after a long run, on a newcomer ----------

/// Runs a game thread that calls `frame` each tick; returns the server's
/// address through a channel. The game ends at `stop` frames.
#[test]
fn a_breakpoint_on_a_newcomer_after_a_long_run_stops_at_its_tick() {
    breakpoint_on_a_newcomer(true);
}

/// The game not paced: it calls `frame` as fast as it can (a simulation
/// run headless, say). A page that connects gets its recording (the
/// server took in publishes for as long as they came, and never served
/// it); one that cannot keep up is dropped, as the docs say, and one that
/// connects again gets its recording again.
#[test]

fn a_page_gets_its_recording_from_a_game_that_calls_frame_in_a_tight_loop() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let game = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut recorder = FlightRecorder::with_lanes(&BOTS, 16, Capacity::ticks(64));
            let (mut bots, mut mems) = crowd(1);
            let mut live = server();
            tx.send(live.addr()).unwrap();
            let lane = recorder.assign(0).unwrap();
            let mut t = 0u32;
            while !stop.load(Ordering::Relaxed) {
                recorder.begin_frame();
                bots[0].t = t;
                recorder
                    .tick_lane(
                        lane,
                        &BOTS,
                        &mut bots[0],
                        &mut mems[0],
                        &TickInput::new(f64::from(t) * 0.01, 0.01),
                    )
                    .unwrap();
                live.frame(&recorder);
                t += 1;
            }
            t
        })
    };
    let addr = rx.recv().unwrap();
    for _ in 0..2 {
        let mut sse = Sse::open(addr, "/events?first=4");
        let recording = sse.until("recording");
        assert_eq!(recording["tree"]["name"], json!("BOTS"), "{recording}");
    }
    stop.store(true, Ordering::Relaxed);
    let frames = game.join().unwrap();
    println!("the game made {frames} frames");
}

fn breakpoint_on_a_newcomer(pace: bool) {
    use std::sync::mpsc;
    let (tx, rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let game = std::thread::spawn(move || {
        let mut recorder = FlightRecorder::with_lanes(&BOTS, 16, Capacity::ticks(64));
        let (mut bots, mut mems) = crowd(16);
        let mut live = server();
        tx.send(live.addr()).unwrap();
        while live.clients() == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut lanes = vec![(recorder.assign(0).unwrap(), 0usize)];
        let mut t = 0u32;
        let mut newcomer_at = None;
        let started = Instant::now();
        loop {
            recorder.begin_frame();
            for &(lane, i) in &lanes {
                bots[i].t = t;
                recorder
                    .tick_lane(
                        lane,
                        &BOTS,
                        &mut bots[i],
                        &mut mems[i],
                        &TickInput::new(f64::from(t) * 0.01, 0.01),
                    )
                    .unwrap();
            }
            live.frame(&recorder);
            if pace {
                std::thread::sleep(Duration::from_micros(20));
            }
            t += 1;
            // After 20 000 frames, agent 7 comes (once the test asks).
            if t >= 20_000 && newcomer_at.is_none() && done_rx.try_recv().is_ok() {
                lanes.push((recorder.assign(7).unwrap(), 7));
                newcomer_at = Some(t);
            }
            if t > 200_000 && (pace || started.elapsed() > Duration::from_secs(6)) {
                return (t, newcomer_at);
            }
            if newcomer_at.is_some_and(|n| t > n + 400) {
                return (t, newcomer_at);
            }
        }
    });
    let addr = rx.recv().unwrap();
    let tok = token(addr);
    let mut sse = Sse::open(addr, "/events?first=4");
    let _ = sse.until("recording");
    // Wait until the game is past 20 000 frames.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (name, v) = sse.next().expect("events");
        if name == "ticks" {
            let last = v["clock"]["first"].as_u64().unwrap_or(0);
            if last > 20_100 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the game ran too slowly");
    }
    // Agent 7 enters RARE at a tick t with t % 50 == 40.
    let body =
        json!({"op": "breakpoints", "set": [{"on": "enter", "decider": "RARE", "agent": 7}]})
            .to_string();
    let (status, text) = request(addr, "POST", "/control", &[("X-Bt-Token", &tok)], &body);
    println!("breakpoint: {status} {text}");
    assert_eq!(status, 200, "{text}");
    done_tx.send(()).unwrap();
    // The game must stop with the breakpoint's hit.
    let deadline = Instant::now() + Duration::from_secs(20);
    let hit = loop {
        let (name, v) = sse.next().expect("events");
        if name == "beat" {
            let n = v.as_u64().unwrap_or(0);
            let _ = request(
                addr,
                "POST",
                "/control",
                &[("X-Bt-Token", &tok)],
                &json!({"op": "beat", "n": n}).to_string(),
            );
        }
        if name == "control" && v["paused"] == true {
            break v;
        }
        assert!(Instant::now() < deadline, "never stopped");
    };
    println!("hit {}", hit);
    let tick = hit["hit"]["tick"].as_u64().unwrap();
    assert_eq!(hit["hit"]["agent"], 7);
    assert!(
        (40..50).contains(&(tick % 50)),
        "RARE is entered at a tick t with t % 50 >= 40: {tick}"
    );
    assert_eq!(
        hit["tick"].as_u64().unwrap(),
        tick,
        "the game waits at the end of that tick"
    );
    let _ = request(
        addr,
        "POST",
        "/control",
        &[("X-Bt-Token", &tok)],
        r#"{"op":"breakpoints","set":[]}"#,
    );
    let _ = request(
        addr,
        "POST",
        "/control",
        &[("X-Bt-Token", &tok)],
        r#"{"op":"resume"}"#,
    );
    drop(sse);
    let (t, at) = game.join().unwrap();
    println!("game ran {t} frames, newcomer at {at:?}");
    // The newcomer's first tick is `at`; it enters RARE at the first tick
    // from then on with t % 50 >= 40 (at once when it comes inside that
    // window).
    let at = u64::from(at.expect("the newcomer came"));
    let first_rare = if at % 50 >= 40 { at } else { at + 40 - at % 50 };
    assert_eq!(
        tick, first_rare,
        "the breakpoint stops at the newcomer's first entry"
    );
}

// ---------- the live window: ?window=1, 10, 10^9 ----------

/// Follows a server of 30 agents with 200 ticks published, at `window`:
/// how many ticks the timeline shows (v1 - v0 + 1).
fn shown_with_window(window: &str) -> u64 {
    let (mut bots, mut mems) = crowd(30);
    let mut recorder = FlightRecorder::new(&BOTS, 30, Watch::All, Capacity::ticks(300));
    for t in 0..200 {
        step(&mut recorder, &mut bots, &mut mems, t);
    }
    let live = std::sync::Arc::new(std::sync::Mutex::new(server()));
    let url = format!("{}?window={window}", live.lock().unwrap().url());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let publisher = {
        let (live, stop) = (live.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut t = 200;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                step(&mut recorder, &mut bots, &mut mems, t);
                live.lock().unwrap().publish(&recorder);
                t += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let shown = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let out = shown.clone();
    webdriver::with_browser((1200, 900), |c| async move {
        c.goto(&url).await.unwrap();
        webdriver::until(
            &c,
            "return !!window.btViewer && window.btViewer.state().last >= 210",
            "following",
        )
        .await;
        let s = webdriver::js(&c, "return window.btViewer.state()").await;
        println!("window={window}: {s}");
        // A window it did not take as asked, it says so.
        let said = webdriver::js(&c, "return document.getElementById('message').textContent").await;
        let small = window.parse::<u64>().is_ok_and(|n| (1..10).contains(&n));
        assert_eq!(
            said.as_str()
                .unwrap_or("")
                .contains("a window of 10 ticks, the least"),
            small,
            "window={window}: {said}"
        );
        out.store(
            s["v1"].as_u64().unwrap() - s["v0"].as_u64().unwrap() + 1,
            std::sync::atomic::Ordering::Relaxed,
        );
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    publisher.join().unwrap();
    shown.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn the_live_window_is_the_number_in_the_address() {
    assert_eq!(shown_with_window("10"), 10);
    // More than is kept: every tick kept.
    let all = shown_with_window("1000000000");
    assert!(all >= 200, "window=10^9 shows {all} ticks");
}

#[test]

fn a_live_window_under_ten_ticks_shows_ten() {
    // The docs: at least 10; a smaller one shows 10 (it showed the
    // default 600 without a word).
    let shown = shown_with_window("1");
    assert_eq!(shown, 10, "window=1 shows {shown} ticks");
}

// ---------- another recorder, of another tree ----------

behavior! { NAP: Bot }
decider! { NAP_D: Bot => NAP }
group! { SLEEP_ROOT: Bot, prioritized [NAP_D] }
tree! { SLEEPERS: Bot = SLEEP_ROOT, memory: SleeperMemory }

/// A recorder of another tree, of the same capacity and further on than
/// the first, handed to the same server: the pages start again from its
/// whole recording, and `/recording.json` is its.
#[test]
fn another_recorder_of_another_tree_starts_the_pages_again() {
    let (mut bots, mut mems) = crowd(4);
    let mut first = FlightRecorder::new(&BOTS, 4, Watch::All, Capacity::ticks(64));
    let mut live = server();
    for t in 0..10 {
        step(&mut first, &mut bots, &mut mems, t);
        live.publish(&first);
    }
    let mut sse = Sse::open(live.addr(), "/events");
    let deadline = Instant::now() + Duration::from_secs(5);
    while live.clients() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    step(&mut first, &mut bots, &mut mems, 10);
    live.publish(&first);
    assert_eq!(sse.until("recording")["tree"]["name"], json!("BOTS"));
    let (status, body) = request(live.addr(), "GET", "/recording.json", &[], "");
    assert_eq!(status, 200);
    assert!(body.contains("\"BOTS\""));

    let mut sleepers = vec![Bot::default(); 4];
    let mut sleeping: Vec<SleeperMemory> = (0..4).map(|i| SLEEPERS.new_memory(i)).collect();
    let mut second = FlightRecorder::new(&SLEEPERS, 4, Watch::All, Capacity::ticks(64));
    for t in 0..20 {
        let now = f64::from(t) * 0.1;
        second.tick_all(&SLEEPERS, &mut sleepers, &mut sleeping, |_, _| {
            TickInput::new(now, 0.1)
        });
    }
    live.publish(&second);
    let recording = sse.until("recording");
    assert_eq!(recording["tree"]["name"], json!("SLEEPERS"), "{recording}");
    let (status, body) = request(live.addr(), "GET", "/recording.json", &[], "");
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["tree"]["name"], json!("SLEEPERS"));

    // A clone is another recorder too: published after the original, it
    // starts the pages again (its ticks are the original's).
    let third = second.clone();
    live.publish(&third);
    let again = sse.until("recording");
    assert_eq!(again["tree"]["name"], json!("SLEEPERS"));
}
