//! Stopping a running program from the page, at the HTTP level: pause,
//! step and resume; breakpoints of each kind, which stop the game at the
//! end of the tick where they fire; a page that leaves lets the game go
//! on; with no page, `frame` neither waits nor copies; control requests
//! come only from the page served on loopback; the lanes a page asks to
//! follow come whatever their size.
//!
//! The game runs in a thread of its own, calling `LiveServer::frame` after
//! each tick; the test plays the page.

use crate::scene;
use crate::sse;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bt_core::{Action, ActionState, TickInput, behavior, decider, group, tree};
use bt_viewer::{Capacity, FlightRecorder, LiveServer, Watch};
use scene::{CAMP, CampMemory, Creature, crowd};
use serde_json::{Value, json};

// ---------- HTTP ----------

/// Sends `head` (request line and headers, without the blank line) and
/// `body`; returns the status code and the body of the response.
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
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// The token the served page holds.
fn token(addr: SocketAddr) -> String {
    let (status, page) = exchange(addr, "GET / HTTP/1.1\r\nHost: localhost", "");
    assert_eq!(status, 200);
    let at = page
        .find(r#"<meta name="bt-live-token" content=""#)
        .expect("the token in the page");
    let rest = &page[at + 36..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// A control request as the page sends it.
fn control(addr: SocketAddr, token: &str, body: Value) -> (u16, String) {
    exchange(
        addr,
        &format!(
            "POST /control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             X-Bt-Token: {token}"
        ),
        &body.to_string(),
    )
}

#[track_caller]
fn ok(answer: (u16, String)) {
    assert_eq!(answer.0, 200, "{}", answer.1);
}

/// The page's side: its event stream and its token.
struct Page {
    events: BufReader<TcpStream>,
    token: String,
    addr: SocketAddr,
}

impl Page {
    fn open(addr: SocketAddr) -> Self {
        let token = token(addr);
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut events = BufReader::new(s);
        let mut status = String::new();
        events.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut line = String::new();
            events.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
        }
        Page {
            events,
            token,
            addr,
        }
    }

    /// The next event: (name, data).
    fn next(&mut self) -> (String, String) {
        sse::next_event(&mut self.events)
    }

    /// The next `control` event that says the game is paused.
    fn paused(&mut self) -> Value {
        loop {
            let (name, data) = self.next();
            if name == "control" {
                let c: Value = serde_json::from_str(&data).unwrap();
                if c["paused"] == json!(true) {
                    return c;
                }
            }
        }
    }

    /// The next `control` event.
    fn control(&mut self) -> Value {
        loop {
            let (name, data) = self.next();
            if name == "control" {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }

    fn send(&self, body: Value) -> (u16, String) {
        control(self.addr, &self.token, body)
    }

    /// Reads the stream for `how_long`, answering each `beat` event as the
    /// page does; the number of beats answered. Line by line, so that a
    /// stream of comments alone does not keep it reading past `how_long`.
    fn answer_beats(&mut self, how_long: Duration) -> usize {
        let until = Instant::now() + how_long;
        let (mut answered, mut event) = (0, String::new());
        while Instant::now() < until {
            let mut line = String::new();
            assert!(
                self.events.read_line(&mut line).unwrap() > 0,
                "the stream ended"
            );
            let line = line.trim_end();
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_owned();
            } else if let Some(n) = line.strip_prefix("data: ")
                && event == "beat"
            {
                let n: u64 = n.parse().expect("a beat's number");
                ok(self.send(json!({"op": "beat", "n": n})));
                answered += 1;
            }
        }
        answered
    }

    /// Reads what the server wrote to the stream until it closes it;
    /// whether it did within 10 s.
    fn closed(self) -> bool {
        let mut s = self.events.into_inner();
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let mut buf = [0; 4096];
        while Instant::now() < until {
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                // Reset: closed too.
                Err(_) => return true,
            }
        }
        false
    }
}

// ---------- the game ----------

/// A crowd the game ticks: tick `t`, then its recorder.
trait World: Send + 'static {
    fn tick(&mut self, t: u32);
    fn recorder(&self) -> &FlightRecorder;
}

struct Camp {
    agents: Vec<Creature>,
    memories: Vec<CampMemory>,
    recorder: FlightRecorder,
    /// The agent whose input is broken at a tick, if any.
    broken: Option<(usize, u32)>,
}

impl Camp {
    fn new(n: usize) -> Self {
        let (agents, memories) = crowd(n);
        Camp {
            agents,
            memories,
            recorder: FlightRecorder::new(&CAMP, n, Watch::All, Capacity::new(500, 16)),
            broken: None,
        }
    }

    /// A camp of `n` whose recorder watches `watched` only.
    fn watching(n: usize, watched: &[usize]) -> Self {
        Camp {
            recorder: FlightRecorder::new(&CAMP, n, Watch::Agents(watched), Capacity::new(500, 16)),
            ..Camp::new(n)
        }
    }
}

impl World for Camp {
    fn tick(&mut self, t: u32) {
        self.agents.iter_mut().for_each(Creature::step);
        let broken = self.broken;
        self.recorder
            .tick_all(&CAMP, &mut self.agents, &mut self.memories, |i, c| {
                if broken == Some((i, t)) {
                    TickInput::new(f64::NAN, 0.25)
                } else {
                    c.input(i, t)
                }
            });
    }

    fn recorder(&self) -> &FlightRecorder {
        &self.recorder
    }
}

/// A camp recorded on lanes, as an engine records entities that come and
/// go: creatures 0, 1 and 2 are there from the start (ids 100, 101 and
/// 102), creature 3 (id 103) comes at tick `comes`.
struct Newcomers {
    agents: Vec<Creature>,
    memories: Vec<CampMemory>,
    recorder: FlightRecorder,
    comes: u32,
    lanes: Vec<Option<usize>>,
}

impl Newcomers {
    const LATE: u32 = 103;

    fn new(comes: u32) -> Self {
        let (agents, memories) = crowd(4);
        let mut recorder = FlightRecorder::with_lanes(&CAMP, 4, Capacity::new(500, 16));
        let lanes = (0..4)
            .map(|i| (i < 3).then(|| recorder.assign(100 + i).unwrap()))
            .collect();
        Newcomers {
            agents,
            memories,
            recorder,
            comes,
            lanes,
        }
    }
}

impl World for Newcomers {
    fn tick(&mut self, t: u32) {
        if t == self.comes {
            self.lanes[3] = self.recorder.assign(Self::LATE);
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

    fn recorder(&self) -> &FlightRecorder {
        &self.recorder
    }
}

/// Bots that throw something (a deferred action) once armed.
struct Bot {
    armed: bool,
}

behavior! { HURL: Bot,
    launch: |_b, _cx| Some(Action::new(1, 0)),
    tick: |_b, cx| cx.action == ActionState::Pending,
}
behavior! { LOITER: Bot }
decider! { THROW: Bot => HURL, decide: |b, _| if b.armed { 1.0 } else { 0.0 } }
decider! { WAIT: Bot => LOITER }
group! { BOT_ROOT: Bot, prioritized [THROW, WAIT] }
tree! { BOTS: Bot = BOT_ROOT, memory: BotMemory }

struct Bots {
    bots: Vec<Bot>,
    memories: Vec<BotMemory>,
    recorder: FlightRecorder,
    /// (bot, tick) armed then.
    arm: (usize, u32),
    _shared: Arc<bt_core::TreeShared>,
}

impl Bots {
    fn new(n: usize, arm: (usize, u32)) -> Self {
        let shared = BOTS.new_shared(n);
        Bots {
            bots: (0..n).map(|_| Bot { armed: false }).collect(),
            memories: (0..n)
                .map(|i| BOTS.new_memory_in(&shared, i as u64))
                .collect(),
            recorder: FlightRecorder::new(&BOTS, n, Watch::All, Capacity::new(100, 16)),
            arm,
            _shared: shared,
        }
    }
}

impl World for Bots {
    fn tick(&mut self, t: u32) {
        if t == self.arm.1 {
            self.bots[self.arm.0].armed = true;
        }
        self.recorder
            .tick_all(&BOTS, &mut self.bots, &mut self.memories, |i, _| {
                TickInput::new(f64::from(t) * 0.1, 0.1).with_agent(i as u32)
            });
    }

    fn recorder(&self) -> &FlightRecorder {
        &self.recorder
    }
}

/// The game's thread: ticks `from..to`, calling `frame` after each, and
/// says which tick's `frame` returned.
struct Game {
    done: Receiver<u32>,
    /// The last tick whose `frame` returned, as seen so far.
    last: std::cell::Cell<Option<u32>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Game {
    fn start<W: World>(mut server: LiveServer, mut world: W, from: u32, to: u32) -> Self {
        let (tx, done) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            for t in from..to {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                world.tick(t);
                server.frame(world.recorder());
                if tx.send(t).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Game {
            done,
            last: std::cell::Cell::new(None),
            stop,
            thread: Some(thread),
        }
    }

    /// The tick whose `frame` returned next, or `None` after `wait`.
    fn next(&self, wait: Duration) -> Option<u32> {
        match self.done.recv_timeout(wait) {
            Ok(t) => {
                self.last.set(Some(t));
                Some(t)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the game ended"),
        }
    }

    /// Waits until the frame of tick `t` returned.
    fn until(&self, t: u32) {
        while self
            .next(Duration::from_secs(10))
            .expect("the game stalled")
            < t
        {}
    }

    /// Drains the frames returned so far; the last one.
    fn drain(&self) -> Option<u32> {
        if let Some(t) = self.done.try_iter().last() {
            self.last.set(Some(t));
        }
        self.last.get()
    }
}

impl Drop for Game {
    fn drop(&mut self) {
        // A paused game goes on once its page is gone; the page is
        // dropped before the game in each test.
        self.stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.done.recv_timeout(Duration::from_millis(100)) {
                Err(RecvTimeoutError::Disconnected) => break,
                // Still paused by a page a failed test left: let it be.
                _ if Instant::now() > deadline => return,
                _ => {}
            }
        }
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
            && !std::thread::panicking()
        {
            panic!("the game's thread panicked");
        }
    }
}

/// A server whose first `n` ticks of `world` the page has seen: the page
/// follows the stream and got its recording.
fn followed<W: World>(mut world: W, n: u32) -> (LiveServer, W, Page) {
    let mut server = LiveServer::start(0).unwrap();
    let page = Page::open(server.addr());
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.clients() == 0 {
        assert!(Instant::now() < deadline, "the page never followed");
        std::thread::sleep(Duration::from_millis(5));
    }
    for t in 0..n {
        world.tick(t);
        server.frame(world.recorder());
    }
    let mut page = page;
    assert_eq!(page.next().0, "recording");
    (server, world, page)
}

const QUIET: Duration = Duration::from_millis(300);

// ---------- pause, step, resume ----------

#[test]
fn pause_blocks_frame_until_resume() {
    let (server, camp, mut page) = followed(Camp::new(4), 2);
    let game = Game::start(server, camp, 2, 100_000);
    game.until(5);
    ok(page.send(json!({"op": "pause"})));
    let c = page.paused();
    assert_eq!(c["why"], "pause");
    let at = c["tick"].as_u64().unwrap() as u32;
    // Every frame before the one it waits in returned; that one does not.
    let last = game.drain().unwrap_or(0);
    assert_eq!(last + 1, at, "stopped at the end of tick {at}");
    assert_eq!(game.next(QUIET), None, "a frame returned while paused");
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)), Some(at));
    assert_eq!(game.next(Duration::from_secs(5)), Some(at + 1));
    drop(page);
}

#[test]
fn step_lets_exactly_one_frame_through() {
    let (server, camp, mut page) = followed(Camp::new(4), 2);
    let game = Game::start(server, camp, 2, 100_000);
    game.until(3);
    ok(page.send(json!({"op": "pause"})));
    let at = page.paused()["tick"].as_u64().unwrap() as u32;
    game.drain();
    assert_eq!(game.next(QUIET), None);
    for k in 0..3 {
        ok(page.send(json!({"op": "step"})));
        // The frame it waited in returns; the next one waits.
        assert_eq!(game.next(Duration::from_secs(5)), Some(at + k));
        let c = page.paused();
        assert_eq!(c["why"], "step");
        assert_eq!(c["tick"], at + k + 1);
        assert_eq!(game.next(QUIET), None, "more than one frame per step");
    }
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)), Some(at + 3));
    drop(page);
}

// ---------- breakpoints ----------

/// The first tick from `from` on where an event of `kind` (as the legend
/// names it) matching `pick` happened, in `world` run offline for `ticks`
/// ticks: (tick, agent).
fn first_event<W: World>(
    mut world: W,
    ticks: u32,
    from: u64,
    pick: impl Fn(&Value, &[Value]) -> bool,
) -> (u64, u64) {
    for t in 0..ticks {
        world.tick(t);
    }
    let doc: Value = serde_json::from_str(&world.recorder().export().to_json()).unwrap();
    let mut first: Option<(u64, u64)> = None;
    for a in doc["agents"].as_array().unwrap() {
        for tk in a["ticks"].as_array().unwrap() {
            let serial = tk[0].as_u64().unwrap();
            let events = tk[6].as_array().unwrap();
            let fired = pick(tk, events);
            if serial >= from && fired && first.is_none_or(|f| serial < f.0) {
                first = Some((serial, a["agent"].as_u64().unwrap()));
            }
        }
    }
    let first = first.expect("the event happens in the run");
    assert!(first.0 > from, "the event happens late enough to test");
    first
}

/// Whether the tick's events hold one of `kind` (from 1) at `item` (any
/// when `None`) with `code`.
fn has(events: &[Value], kind: u64, item: Option<u64>, code: Option<u64>) -> bool {
    events
        .chunks(4)
        .any(|e| e[0] == kind && item.is_none_or(|i| e[2] == i) && code.is_none_or(|c| e[1] == c))
}

/// The item index of `name` in CAMP.
fn item(name: &str) -> u64 {
    let doc: Value = serde_json::from_str(&Camp::new(1).recorder.export().to_json()).unwrap();
    doc["tree"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|it| it["name"] == name)
        .expect("an item of that name")["index"]
        .as_u64()
        .unwrap()
}

/// Runs `world` with `breakpoint` set after tick 1: the game must stop at
/// the end of tick `at` (of agent `agent`), not before, and go on when
/// resumed.
#[track_caller]
fn stops_at<W: World>(world: W, breakpoint: Value, at: u64, agent: u64) {
    let (server, world, mut page) = followed(world, 2);
    ok(page.send(json!({"op": "breakpoints", "set": [breakpoint]})));
    let game = Game::start(server, world, 2, 10_000);
    let c = page.paused();
    assert_eq!(c["why"], "breakpoint", "{c}");
    assert_eq!(c["tick"], at, "{c}");
    assert_eq!(
        c["hit"],
        json!({"breakpoint": 0, "agent": agent, "tick": at})
    );
    // As set, with the id the server gave it.
    let mut shown = c["breakpoints"].clone();
    let id = shown[0].as_object_mut().unwrap().remove("id");
    assert!(id.is_some_and(|id| id.is_u64()), "{c}");
    assert_eq!(shown, json!([breakpoint]));
    // The frames of the ticks before it returned; its own did not.
    let mut last = None;
    while let Some(t) = game.next(QUIET) {
        last = Some(t);
    }
    assert_eq!(last.map(u64::from), Some(at - 1));
    ok(page.send(json!({"op": "breakpoints", "set": []})));
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)).map(u64::from), Some(at));
    game.until(at as u32 + 5);
    drop(page);
}

#[test]
fn a_breakpoint_on_entering_a_decider_stops_at_its_tick() {
    let guard = item("GUARD");
    let (at, agent) = first_event(Camp::new(6), 400, 2, |_, ev| has(ev, 4, Some(guard), None));
    stops_at(
        Camp::new(6),
        json!({"on": "enter", "decider": "GUARD"}),
        at,
        agent,
    );
}

#[test]
fn a_breakpoint_for_one_agent_lets_the_others_by() {
    let guard = item("GUARD");
    let mut camp = Camp::new(6);
    for t in 0..400 {
        camp.tick(t);
    }
    let doc: Value = serde_json::from_str(&camp.recorder.export().to_json()).unwrap();
    // Each agent's first tick (from 2) entering GUARD.
    let firsts: Vec<(u64, u64)> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| {
            a["ticks"].as_array().unwrap().iter().find_map(|tk| {
                let serial = tk[0].as_u64().unwrap();
                (serial >= 2 && has(tk[6].as_array().unwrap(), 4, Some(guard), None))
                    .then(|| (serial, a["agent"].as_u64().unwrap()))
            })
        })
        .collect();
    let earliest = firsts.iter().min().unwrap();
    let (at, agent) = *firsts.iter().max().unwrap();
    assert!(earliest.0 < at, "another agent enters GUARD before {agent}");
    stops_at(
        Camp::new(6),
        json!({"on": "enter", "decider": "GUARD", "agent": agent}),
        at,
        agent,
    );
}

#[test]
fn a_breakpoint_on_a_rejection_for_a_reason_stops_at_its_tick() {
    let patrol = item("PATROL");
    // PATROL is rejected by its flags most ticks, by its timer now and then.
    let (at, agent) = first_event(Camp::new(6), 400, 2, |_, ev| {
        has(ev, 1, Some(patrol), Some(2))
    });
    stops_at(
        Camp::new(6),
        json!({"on": "reject", "decider": "PATROL", "reason": "timer"}),
        at,
        agent,
    );
}

#[test]
fn a_breakpoint_on_a_rejection_of_a_steady_tick_stops_at_its_tick() {
    // A steady tick keeps none of its rejections; a breakpoint must find
    // them all the same. An agent and a rejection (decider and reason)
    // whose first tick from 2 on is a steady one (it has nothing but
    // rejections): the flags changed, the path did not.
    let mut camp = Camp::new(6);
    for t in 0..400 {
        camp.tick(t);
    }
    let doc: Value = serde_json::from_str(&camp.recorder.export().to_json()).unwrap();
    let mut first = std::collections::BTreeMap::new();
    for a in doc["agents"].as_array().unwrap() {
        let agent = a["agent"].as_u64().unwrap();
        for tk in a["ticks"].as_array().unwrap() {
            let serial = tk[0].as_u64().unwrap();
            let events = tk[6].as_array().unwrap();
            let steady = events.chunks(4).all(|e| e[0] == 1);
            for e in events.chunks(4).filter(|e| e[0] == 1 && serial >= 2) {
                let key = (agent, e[2].as_u64().unwrap(), e[1].as_u64().unwrap());
                first.entry(key).or_insert((serial, steady));
            }
        }
    }
    let (&(agent, item, code), &(at, _)) = first
        .iter()
        .find(|&(_, &(at, steady))| at > 2 && steady)
        .expect("a rejection first made by a steady tick");
    let decider = doc["tree"]["items"][item as usize]["name"].clone();
    let reason = doc["legend"]["rejections"][code as usize].clone();
    stops_at(
        Camp::new(6),
        json!({"on": "reject", "decider": decider, "reason": reason, "agent": agent}),
        at,
        agent,
    );
}

#[test]
fn a_breakpoint_on_a_subset_rule_report_stops_at_its_tick() {
    let (at, agent) = first_event(Camp::new(6), 400, 2, |_, ev| has(ev, 9, None, None));
    stops_at(Camp::new(6), json!({"on": "subset-rule"}), at, agent);
}

#[test]
fn a_breakpoint_on_an_error_stops_at_its_tick() {
    let broken = || {
        let mut camp = Camp::new(4);
        camp.broken = Some((3, 9));
        camp
    };
    let (at, agent) = first_event(broken(), 20, 2, |tk, _| tk[4].as_u64().unwrap() >> 1 != 0);
    assert_eq!((at, agent), (9, 3));
    stops_at(broken(), json!({"on": "error"}), at, agent);
}

#[test]
fn a_breakpoint_on_a_deferred_action_launched_stops_at_its_tick() {
    let (at, agent) = first_event(Bots::new(3, (1, 7)), 20, 2, |_, ev| has(ev, 10, None, None));
    assert_eq!((at, agent), (7, 1));
    stops_at(
        Bots::new(3, (1, 7)),
        json!({"on": "launch", "decider": "THROW"}),
        at,
        agent,
    );
}

/// The ids of the breakpoints of a `control` event.
fn ids(c: &Value) -> Vec<u64> {
    c["breakpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_u64().expect("a breakpoint's id"))
        .collect()
}

#[test]
fn the_status_names_the_breakpoint_that_fired_after_the_list_is_edited() {
    let broken = || {
        let mut camp = Camp::new(4);
        camp.broken = Some((3, 9));
        camp
    };
    let (at, agent) = first_event(broken(), 20, 2, |tk, _| tk[4].as_u64().unwrap() >> 1 != 0);
    let (server, world, mut page) = followed(broken(), 2);
    // Agents 0 and 1 make no error: the second breakpoint fires.
    let (a, b, c) = (
        json!({"on": "error", "agent": 0}),
        json!({"on": "error"}),
        json!({"on": "error", "agent": 1}),
    );
    ok(page.send(json!({"op": "breakpoints", "set": [a, b, c]})));
    let game = Game::start(server, world, 2, 10_000);
    let stopped = page.paused();
    assert_eq!(
        stopped["hit"],
        json!({"breakpoint": 1, "agent": agent, "tick": at}),
        "{stopped}"
    );
    let set = stopped["breakpoints"].clone();
    let id = ids(&stopped);
    assert!(id[0] != id[1] && id[1] != id[2] && id[0] != id[2], "{id:?}");
    assert_eq!(stopped["fired"], set[1], "{stopped}");
    assert_eq!(set[1]["on"], "error");

    // The first one removed: the one that fired is the first now.
    ok(page.send(json!({"op": "breakpoints", "set": [set[1], set[2]]})));
    let edited = page.control();
    assert_eq!(ids(&edited), [id[1], id[2]], "{edited}");
    assert_eq!(
        edited["hit"],
        json!({"breakpoint": 0, "agent": agent, "tick": at}),
        "{edited}"
    );
    assert_eq!(edited["fired"], set[1], "{edited}");
    assert_eq!(edited["paused"], true);

    // Removed: it has no place in the list, and is still named.
    ok(page.send(json!({"op": "breakpoints", "set": [set[2]]})));
    let edited = page.control();
    assert_eq!(ids(&edited), [id[2]], "{edited}");
    assert_eq!(edited["hit"]["breakpoint"], Value::Null, "{edited}");
    assert_eq!(edited["fired"], set[1], "{edited}");

    // One alike but set anew is another breakpoint.
    ok(page.send(json!({"op": "breakpoints", "set": [set[2], b]})));
    let edited = page.control();
    let now = ids(&edited);
    assert!(now[0] == id[2] && !id.contains(&now[1]), "{edited}");
    assert_eq!(edited["hit"]["breakpoint"], Value::Null, "{edited}");

    // An id the server did not give, or given twice, is refused.
    for (set, says) in [
        (
            json!([{"id": 999, "on": "error"}]),
            "breakpoint 1: no breakpoint has id 999",
        ),
        (json!([set[2], set[2]]), "breakpoint 2: id"),
    ] {
        let (status, why) = page.send(json!({"op": "breakpoints", "set": set}));
        assert_eq!(status, 400, "{why}");
        assert!(why.contains(says), "{why}");
    }
    // Still paused where it stopped.
    assert_eq!(game.drain().map(u64::from), Some(at - 1));
    ok(page.send(json!({"op": "breakpoints", "set": []})));
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)).map(u64::from), Some(at));
    drop(page);
}

#[test]
fn a_breakpoint_on_an_agent_the_recorder_never_records_is_refused_naming_it() {
    for camp in [Camp::new(4), Camp::watching(6, &[1, 3])] {
        // What the recorder says: agent 5 is not one it records.
        assert!(!camp.recorder.is_watched(5));
        let watched = (0..6).find(|&i| camp.recorder.is_watched(i)).unwrap();
        let (_server, _camp, mut page) = followed(camp, 2);
        let (status, why) = page.send(json!({"op": "breakpoints", "set": [
            {"on": "error"},
            {"on": "enter", "decider": "GUARD", "agent": 5},
        ]}));
        assert_eq!(status, 400, "{why}");
        assert!(
            why.contains("breakpoint 2: agent #5 is not recorded"),
            "{why}"
        );
        assert!(why.contains("never fire"), "{why}");
        // An agent it records is taken.
        let bp = json!({"on": "enter", "decider": "GUARD", "agent": watched});
        ok(page.send(json!({"op": "breakpoints", "set": [bp]})));
        let c = loop {
            let c = page.control();
            if c["breakpoints"].as_array().unwrap().len() == 1 {
                break c;
            }
        };
        assert_eq!(c["breakpoints"][0]["agent"], watched, "{c}");
        assert_eq!(c["unrecorded"], json!([]), "{c}");
    }
}

#[test]
fn a_breakpoint_on_an_agent_not_recorded_yet_waits_for_it_and_fires() {
    const COMES: u32 = 20;
    // Offline: the newcomer's first tick that enters a decider, and that
    // decider.
    let mut world = Newcomers::new(COMES);
    for t in 0..COMES + 10 {
        world.tick(t);
    }
    let doc: Value = serde_json::from_str(&world.recorder.export().to_json()).unwrap();
    let late = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == Newcomers::LATE)
        .expect("the newcomer's lane");
    let (at, entered) = late["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|tk| {
            let events = tk[6].as_array().unwrap();
            let e = events.chunks(4).find(|e| e[0] == 4)?;
            Some((tk[0].as_u64().unwrap(), e[2].as_u64().unwrap()))
        })
        .expect("the newcomer enters a decider");
    assert!(at >= u64::from(COMES), "{at}");
    let decider = doc["tree"]["items"][entered as usize]["name"].clone();

    let (server, world, mut page) = followed(Newcomers::new(COMES), 2);
    let bp = json!({"on": "enter", "decider": decider, "agent": Newcomers::LATE});
    ok(page.send(json!({"op": "breakpoints", "set": [bp]})));
    // Taken, and marked: its agent is not recorded now.
    let c = loop {
        let c = page.control();
        if c["breakpoints"].as_array().unwrap().len() == 1 {
            break c;
        }
    };
    let id = ids(&c)[0];
    assert_eq!(c["unrecorded"], json!([id]), "{c}");
    let game = Game::start(server, world, 2, 10_000);
    let c = page.paused();
    assert_eq!(c["why"], "breakpoint", "{c}");
    assert_eq!(
        c["hit"],
        json!({"breakpoint": 0, "agent": Newcomers::LATE, "tick": at}),
        "{c}"
    );
    assert_eq!(c["unrecorded"], json!([]), "{c}");
    let mut last = None;
    while let Some(t) = game.next(QUIET) {
        last = Some(t);
    }
    assert_eq!(last.map(u64::from), Some(at - 1));
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)).map(u64::from), Some(at));
    drop(page);
}

// ---------- nobody watching ----------

/// How long a paused game whose last page closed waits for one to come
/// back (a reload), as the docs say.
const RELOAD: Duration = Duration::from_secs(3);

#[test]
fn closing_the_page_while_paused_lets_the_game_go_on_after_the_grace_for_a_reload() {
    let (server, camp, mut page) = followed(Camp::new(4), 2);
    let game = Game::start(server, camp, 2, 100_000);
    game.until(3);
    ok(page.send(json!({"op": "pause"})));
    let at = page.paused()["tick"].as_u64().unwrap() as u32;
    game.drain();
    assert_eq!(game.next(QUIET), None);
    let closed = Instant::now();
    drop(page);
    // Room for a reload: still paused two thirds of the grace on.
    assert_eq!(
        game.next(RELOAD * 2 / 3),
        None,
        "went on before the grace for a reload"
    );
    assert_eq!(game.next(Duration::from_secs(10)), Some(at), "still paused");
    let took = closed.elapsed();
    println!("the game went on {took:?} after its page closed");
    assert!(took >= RELOAD, "went on after {took:?}");
    assert!(took < RELOAD * 2, "went on only after {took:?}");
    // And it runs on.
    assert!(game.next(Duration::from_secs(1)).is_some());
}

#[test]
fn a_page_that_comes_back_within_the_grace_finds_the_game_paused_at_its_tick() {
    let (server, camp, mut page) = followed(Camp::new(4), 2);
    let addr = server.addr();
    let game = Game::start(server, camp, 2, 100_000);
    game.until(5);
    ok(page.send(json!({"op": "pause"})));
    let c = page.paused();
    let at = c["tick"].as_u64().unwrap() as u32;
    assert_eq!(game.drain(), Some(at - 1));
    // A reload: the page closes, and comes again.
    drop(page);
    std::thread::sleep(Duration::from_millis(300));
    let mut page = Page::open(addr);
    assert_eq!(page.next().0, "recording");
    let again = page.paused();
    assert_eq!(again["tick"], at, "{again}");
    assert_eq!(again["why"], "pause", "{again}");
    // It holds the game past the grace, as the first page did.
    let answered = page.answer_beats(RELOAD + Duration::from_secs(1));
    assert!(answered >= 8, "{answered} beats");
    assert_eq!(game.next(Duration::from_millis(1)), None, "went on");
    ok(page.send(json!({"op": "resume"})));
    assert_eq!(game.next(Duration::from_secs(5)), Some(at));
    assert_eq!(game.next(Duration::from_secs(5)), Some(at + 1));
    drop(page);
}

/// How long a paused game may wait for a page that stopped reading: the
/// docs say two seconds; this leaves room for a busy machine.
const HUNG: Duration = Duration::from_secs(5);

/// Waits for the game paused at the end of tick `at` (`c`, its `control`
/// event) to go on after its page stopped reading at `stopped` (its socket
/// open), then for `more` frames; how long it took.
fn goes_on_without(game: &Game, c: &Value, stopped: Instant, more: u32) -> Duration {
    let at = c["tick"].as_u64().unwrap() as u32;
    let first = game.next(Duration::from_secs(10)).expect("still paused");
    assert_eq!(first, at, "{c}");
    let took = stopped.elapsed();
    println!("the game went on {took:?} after its page stopped reading");
    assert!(
        took < HUNG,
        "the game waited {took:?} for a page that stopped reading"
    );
    game.until(first + more);
    took
}

#[test]
fn a_page_that_stops_reading_while_paused_lets_the_game_go_on_within_two_seconds() {
    let (server, camp, mut page) = followed(Camp::new(4), 2);
    let game = Game::start(server, camp, 2, 100_000);
    game.until(3);
    ok(page.send(json!({"op": "pause"})));
    let c = page.paused();
    game.drain();
    // A page that reads and answers holds the game as long as it likes.
    let answered = page.answer_beats(Duration::from_secs(3));
    assert!(answered >= 8, "{answered} beats in 3 s");
    assert_eq!(
        game.next(Duration::from_millis(1)),
        None,
        "went on while held"
    );
    // Then it hangs: it reads nothing and answers nothing, its socket open.
    let stopped = Instant::now();
    goes_on_without(&game, &c, stopped, 20);
    // It was let go as if it had closed: its stream is closed.
    assert!(page.closed(), "its stream is still open");
}

#[test]
fn a_page_that_stops_reading_at_a_breakpoint_lets_the_game_go_on_within_two_seconds() {
    let mut broken = Camp::new(4);
    broken.broken = Some((3, 9));
    let (server, world, mut page) = followed(broken, 2);
    ok(page.send(json!({"op": "breakpoints", "set": [{"on": "error"}]})));
    let game = Game::start(server, world, 2, 100_000);
    let c = page.paused();
    assert_eq!(c["why"], "breakpoint", "{c}");
    // The page hangs as soon as it is told.
    let stopped = Instant::now();
    game.drain();
    goes_on_without(&game, &c, stopped, 20);
    assert!(page.closed(), "its stream is still open");
}

#[test]
fn with_no_page_frame_never_waits_and_copies_nothing() {
    let mut server = LiveServer::start(0).unwrap();
    let addr = server.addr();
    let token = token(addr);
    let mut camp = Camp::new(8);
    for t in 0..150 {
        camp.tick(t);
        server.frame(&camp.recorder);
    }
    // A pause with nobody following is refused, and would change nothing.
    let (status, why) = control(addr, &token, json!({"op": "pause"}));
    assert_eq!(status, 409, "{why}");
    assert!(why.contains("no page follows"), "{why}");
    let started = Instant::now();
    for t in 150..200 {
        camp.tick(t);
        server.frame(&camp.recorder);
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.publishes(), 0);
    assert_eq!(server.exports_made(), 0);

    // A page that comes gets every tick still kept.
    let mut page = Page::open(addr);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.clients() == 0 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    camp.tick(200);
    server.frame(&camp.recorder);
    let (name, data) = page.next();
    assert_eq!(name, "recording");
    assert!(data == camp.recorder.export_compact().to_json());
    assert_eq!(server.publishes(), 1);
    let (name, data) = page.next();
    assert_eq!(name, "control");
    let c: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(c["framing"], true);
    assert_eq!(c["paused"], false);
}

#[test]
fn recording_json_of_a_game_that_calls_frame_is_of_its_next_frame() {
    let mut server = LiveServer::start(0).unwrap();
    let addr = server.addr();
    let mut camp = Camp::new(3);
    for t in 0..10 {
        camp.tick(t);
        server.frame(&camp.recorder);
    }
    let asked = std::thread::spawn(move || {
        exchange(addr, "GET /recording.json HTTP/1.1\r\nHost: localhost", "")
    });
    // The request waits for the next frame, which publishes.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut t = 10;
    while server.publishes() == 0 {
        assert!(Instant::now() < deadline, "the request asked for nothing");
        camp.tick(t);
        server.frame(&camp.recorder);
        t += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let (status, json) = asked.join().unwrap();
    assert_eq!(status, 200, "{json}");
    let doc: Value = serde_json::from_str(&json).unwrap();
    // Runs of repeats count their ticks.
    let ticks: u64 = doc["agents"][0]["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e.as_array().unwrap().len() {
            7 => 1,
            _ => e[0].as_u64().unwrap(),
        })
        .sum();
    assert_eq!(ticks, u64::from(t), "every tick up to that frame");
}

// ---------- who may send control requests ----------

#[test]
fn control_requests_come_only_from_the_page_on_loopback() {
    let (mut server, mut camp, page) = followed(Camp::new(3), 2);
    let addr = server.addr();
    let token = page.token.clone();
    let post = |extra: &str, body: &str| {
        exchange(addr, &format!("POST /control HTTP/1.1\r\n{extra}"), body)
    };
    let pause = r#"{"op":"pause"}"#;
    // A foreign Host (a DNS rebinding).
    let (status, _) = post(&format!("Host: evil.example\r\nX-Bt-Token: {token}"), pause);
    assert_eq!(status, 403);
    // A page of another site.
    let (status, _) = post(
        &format!("Host: localhost\r\nOrigin: http://evil.example\r\nX-Bt-Token: {token}"),
        pause,
    );
    assert_eq!(status, 403);
    // No token (a plain form post), or a wrong one.
    let (status, why) = post("Host: localhost\r\nContent-Type: text/plain", pause);
    assert_eq!(status, 403);
    assert!(why.contains("X-Bt-Token"), "{why}");
    let (status, _) = post(
        "Host: localhost\r\nX-Bt-Token: 0123456789abcdef0123456789abcdef",
        pause,
    );
    assert_eq!(status, 403);
    // Not a GET.
    let (status, _) = exchange(
        addr,
        &format!("GET /control HTTP/1.1\r\nHost: localhost\r\nX-Bt-Token: {token}"),
        "",
    );
    assert_eq!(status, 405);
    // The game went on through all of it.
    for t in 2..6 {
        camp.tick(t);
        server.frame(&camp.recorder);
    }

    // Bad bodies are named.
    for (body, says) in [
        (json!({"op": "jump"}), "unknown variant `jump`"),
        (
            json!({"op": "breakpoints", "set": [{"on": "enter"}]}),
            "breakpoint 1: `enter` needs a decider",
        ),
        (
            json!({"op": "breakpoints", "set": [{"on": "enter", "decider": "NOBODY"}]}),
            "no decider named `NOBODY`",
        ),
        (
            json!({"op": "breakpoints", "set": [{"on": "reject", "decider": "FLEE", "reason": "bored"}]}),
            "`bored` is not a rejection reason",
        ),
        (
            json!({"op": "breakpoints", "set": [{"on": "error", "decider": "FLEE"}]}),
            "`error` takes no decider",
        ),
        (
            json!({"op": "breakpoints", "set": [{"on": "launch", "colour": "red"}]}),
            "unknown field `colour`",
        ),
    ] {
        let (status, why) = control(addr, &token, body);
        assert_eq!(status, 400, "{why}");
        assert!(why.contains(says), "{why}");
    }
    let (status, _) = control(
        addr,
        &token,
        json!({"op": "breakpoints", "set": [], "pad": "x".repeat(5000)}),
    );
    assert_eq!(status, 413);
    drop(page);

    // A program that only publishes cannot be stopped.
    let mut publishing = LiveServer::start(0).unwrap();
    let page = Page::open(publishing.addr());
    camp.tick(6);
    publishing.publish(&camp.recorder);
    let (status, why) = page.send(json!({"op": "pause"}));
    assert_eq!(status, 409, "{why}");
    assert!(why.contains("LiveServer::frame"), "{why}");
}

// ---------- what it costs ----------

/// Prints what `frame` costs with no page, next to `publish`, per call:
/// `cargo test -p bt-viewer --release --test live control:: -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: run it alone, in release"]
fn cost_of_frame_with_no_page_next_to_publish() {
    const AGENTS: usize = 100;
    const TICKS: u32 = 2000;
    let mut publishing = LiveServer::start(0).unwrap();
    let mut framing = LiveServer::start(0).unwrap();
    let mut camp = Camp::new(AGENTS);
    let (mut publish, mut frame) = (Duration::ZERO, Duration::ZERO);
    for t in 0..TICKS {
        camp.tick(t);
        let at = Instant::now();
        publishing.publish(std::hint::black_box(&camp.recorder));
        publish += at.elapsed();
        let at = Instant::now();
        framing.frame(std::hint::black_box(&camp.recorder));
        frame += at.elapsed();
    }
    // The call alone, without the clock's own cost: many in a row.
    let calls = 10_000_000u32;
    let at = Instant::now();
    for _ in 0..calls {
        framing.frame(std::hint::black_box(&camp.recorder));
    }
    let alone = at.elapsed();
    assert_eq!(framing.publishes(), 0);
    let per = |d: Duration, n: u32| d.as_nanos() as f64 / f64::from(n);
    println!(
        "{AGENTS} agents watched, {TICKS} ticks: publish {:.0} ns per call, frame with no page {:.0} ns \
         per call (timed each, clock included), {:.2} ns per call ({calls} in a row)",
        per(publish, TICKS),
        per(frame, TICKS),
        per(alone, calls)
    );
    assert!(frame < publish);
}

/// An engine keeps the server in a resource, shared between systems'
/// threads: it is `Send` and `Sync`.
#[test]
fn the_server_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<LiveServer>();
}

// ---------- the lanes a page follows ----------

/// A page that names lanes to follow gets their kept ticks in a `lanes`
/// event, however large: the answer to its own request does not count as
/// falling behind, and its stream goes on.
#[test]
fn a_lanes_event_larger_than_the_backlog_does_not_drop_the_page_that_asked() {
    let limits = bt_viewer::Limits {
        backlog_bytes: 8 << 10,
        ..bt_viewer::Limits::default()
    };
    let mut server = LiveServer::start_with(0, limits).expect("a loopback port");
    let addr = server.addr();
    let mut camp = Camp::new(40);
    for t in 0..100 {
        camp.tick(t);
    }
    let token = token(addr);
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /events?first=1 HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut events = BufReader::new(s);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.clients() == 0 {
        assert!(Instant::now() < deadline, "the page never followed");
        std::thread::sleep(Duration::from_millis(10));
    }
    server.publish(&camp.recorder);
    let crowd = loop {
        let (name, data) = sse::next_event(&mut events);
        if name == "crowd" {
            break serde_json::from_str::<Value>(&data).unwrap();
        }
    };
    let agents = crowd["agents"].clone();
    assert_eq!(agents.as_array().unwrap().len(), 40);
    let body = json!({ "stream": crowd["stream"], "agents": agents }).to_string();
    ok(exchange(
        addr,
        &format!(
            "POST /view HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             X-Bt-Token: {token}"
        ),
        &body,
    ));
    let (name, data) = sse::next_event(&mut events);
    assert_eq!(name, "lanes");
    assert!(data.len() > 8 << 10, "{} bytes", data.len());
    let lanes: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(
        lanes["agents"].as_array().unwrap().len(),
        39,
        "the 39 it did not follow"
    );
    // The stream goes on, with every lane's new tick.
    camp.tick(100);
    server.publish(&camp.recorder);
    let (name, data) = sse::next_event(&mut events);
    assert_eq!(name, "ticks", "{data}");
    let ticks: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(ticks["agents"].as_array().unwrap().len(), 40);
}
