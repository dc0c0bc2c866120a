//! What the game's thread hands the server: the words of the ticks each
//! publish adds, and of the values the agents recorded at them, left in
//! an outbox the server's thread empties, and kept by the server's thread
//! for as long as the recorder keeps them. The server's thread makes the
//! recording and the stream's messages from them; the game's thread only
//! copies words.
//!
//! # The `ticks` messages
//!
//! Each publish that added ticks is one message, made once (when a stream
//! first needs it) and shared by every stream:
//!
//! ```text
//! { "agents": [ { "agent", "ticks": [ tick or run, … ] }, … ],
//!   "clock":  { "first", "now": [ time or null, … ] },                 (with runs)
//!   "values": [ { "agent", "fields": { name: [ value, … ] }, "overflow" }, … ] }
//! ```
//!
//! Ticks and values are as in the recording. A run `[n, [since, …]]` is
//! the `n` ticks after the agent's previous one (in the recording or in an
//! earlier message), each a serial later, repeating it but for time, at
//! the message's `clock` time of its serial; `[n]` is a run whose levels
//! are active since the previous tick's time minus its time active (as
//! `f32`), as they are while a behavior goes on. The stream sends a tick
//! as a run only when it reads back exactly so. The messages are made in
//! publish order, each from what the one before it left ([`Encoder`]): a
//! stream that starts from a whole recording made at one publish and the
//! messages of the publishes after it sees every tick.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};

use hyper::body::Bytes;
use serde_json::{Map, Value};

use super::control::Status;
use crate::export::{Clock, TreeInfo, agent_values, compact, implied_since, tick_json};
use crate::recorder::{DataStore, DataValue, TickWords, TuneLog};

mod crowd;
mod parts;
mod publish;
mod query;
mod recording;

pub(super) use crowd::Summary;
use parts::{Lane, Parts};
pub(super) use parts::{View, Wanted};
pub(super) use publish::Publisher;
pub(super) use query::Query;

/// One tick of a [`Delta`]: where its words and its values' words are.
struct Entry {
    slot: u32,
    agent: u32,
    serial: u64,
    start: usize,
    len: usize,
    /// Its values' words in [`Delta::data`] (none when `data_len` is 0)
    /// and their text in [`Delta::text`].
    data_start: usize,
    data_len: usize,
    text_start: usize,
    text_len: usize,
}

/// The ticks one publish added, in watch-slot order, each slot's in the
/// order they were recorded.
pub(super) struct Delta {
    /// The tree of the recorder, which reading a tick's words needs.
    tree: Arc<TreeInfo>,
    seq: u64,
    /// The recorder's frame count at the publish: the ticks are older.
    frames: u64,
    entries: Vec<Entry>,
    words: Vec<u64>,
    /// The values' blocks, as the recorder holds them.
    data: Vec<u64>,
    text: Vec<u8>,
    /// Its `ticks` message with every agent's ticks, once a stream that
    /// follows every agent needed it.
    message: OnceLock<Bytes>,
    /// Its agents' parts of the `ticks` messages, made once.
    parts: OnceLock<Parts>,
    /// What its ticks say of the whole crowd (made when the server takes
    /// it in).
    summary: OnceLock<Summary>,
}

impl Delta {
    /// Its ticks: (agent, frame, own words).
    pub(super) fn ticks(&self) -> impl Iterator<Item = (u32, u64, &[u64])> {
        self.entries
            .iter()
            .map(|e| (e.agent, e.serial, &self.words[e.start..e.start + e.len]))
    }

    fn tick(&self, e: &Entry) -> Value {
        tick_json(&TickWords::new(e.serial, &self.own(e)).decode())
    }

    /// `e`'s words, standing alone (see [`TickWords::own_into`]).
    fn own(&self, e: &Entry) -> Vec<u64> {
        let mut own = Vec::with_capacity(e.len);
        self.read_into(e.serial, &self.words[e.start..e.start + e.len], &mut own);
        own
    }

    /// Appends the words of the tick of frame `serial` that it holds as
    /// `words` to `out`, standing alone (see [`TickWords::own_into`]).
    pub(super) fn read_into(&self, serial: u64, words: &[u64], out: &mut Vec<u64>) {
        TickWords::new(serial, words).own_into(&self.tree, out);
    }

    /// The values recorded at `e`'s tick: by name id, and whether some
    /// were dropped.
    fn values(&self, e: &Entry) -> Option<(Vec<(usize, DataValue)>, bool)> {
        (e.data_len > 0).then(|| {
            DataStore::read_raw(
                &self.data[e.data_start..e.data_start + e.data_len],
                &self.text[e.text_start..e.text_start + e.text_len],
            )
        })
    }
}

/// What the publishes left, as the server's thread keeps it.
#[derive(Default)]
pub(super) struct Kept {
    /// Publishes so far.
    seq: u64,
    /// The recorder's frame count and capacity (K) at the last publish.
    frames: u64,
    keep: u64,
    tree: Option<Arc<TreeInfo>>,
    /// Per watch slot, the agent it records.
    agents: Arc<Vec<u32>>,
    /// The names of the agents' values, by id.
    names: Arc<Vec<&'static str>>,
    /// Every publish with a tick the recorder still keeps, oldest first.
    deltas: VecDeque<Arc<Delta>>,
    /// What the `ticks` messages made so far left.
    encoder: Arc<Mutex<Encoder>>,
    /// The newest publish whose ticks were let go (all overwritten, or
    /// of a recorder published before): a client that saw less than it
    /// lacks ticks.
    dropped: u64,
    /// Agents first recorded since the last publish with ticks.
    newcomers: Vec<u32>,
    /// Room for a tick's words.
    scratch: Vec<u64>,
    /// The tree's tunables, as of the last publish that changed them.
    tuning: Option<Arc<TuneLog>>,
}

/// What the game's thread and the server's share: counters only.
#[derive(Default)]
pub(super) struct Feed {
    /// Publishes so far, as the game's thread counts them.
    pub(super) published: AtomicU64,
    /// What the game's thread hands the server's, in order, until the
    /// server's thread takes it all in one go. Only those two threads lock
    /// it, each for a moment: the game to add one message, the server to
    /// take them. A publish whose ticks the recorder no longer keeps waits
    /// there without them, so that what waits stays within what the
    /// recorder keeps however far behind the server's thread is.
    pub(super) outbox: Mutex<VecDeque<ToServer>>,
    /// Stream clients, as the server counts them.
    pub(super) clients: AtomicUsize,
    /// Stream clients and `/recording.json` clients waiting for a publish,
    /// as the server counts them: a frame with none publishes nothing.
    pub(super) wanted: AtomicUsize,
    /// `/recording.json` clients waiting for a publish.
    pub(super) waiters: AtomicUsize,
    /// Set by the game's first frame: it may skip publishes, and it can
    /// be paused.
    pub(super) framing: AtomicBool,
    /// Whole recordings made so far.
    pub(super) exports: AtomicU64,
    /// Set when the server stops: recordings being made give up.
    pub(super) stopping: AtomicBool,
    /// Set when the stream sends every tick whole (no runs).
    pub(super) plain: AtomicBool,
    /// Set by the game's thread when its recorder gives lanes to agents
    /// as they come: a breakpoint may name one not recorded yet.
    pub(super) newcomers: AtomicBool,
}

/// What the game's thread sends the server, in order.
pub(super) enum ToServer {
    Published(Published),
    Status(Status),
}

/// One publish, as the game's thread sends it.
pub(super) struct Published {
    seq: u64,
    frames: u64,
    keep: u64,
    /// The tree of a recorder published for the first time.
    tree: Option<Arc<TreeInfo>>,
    /// The agents of the watch slots, when they changed.
    agents: Option<Arc<Vec<u32>>>,
    /// The names of the agents' values, when there are new ones.
    names: Option<Arc<Vec<&'static str>>>,
    delta: Option<Arc<Delta>>,
    /// The tree's tunables, when they changed (or the recorder is new).
    tuning: Option<Arc<TuneLog>>,
}

impl Kept {
    /// Takes in one publish. The deltas whose ticks are all overwritten
    /// are let go. Returns whether the tunables' values changed.
    pub(super) fn take(&mut self, p: Published) -> bool {
        let fresh = p.tree.is_some();
        let tuned = p.tuning.is_some();
        if fresh || tuned {
            self.tuning = p.tuning;
        }
        if let Some(tree) = p.tree {
            self.tree = Some(tree);
            self.deltas.clear();
            self.dropped = p.seq;
            self.encoder = Arc::default();
            self.newcomers.clear();
        }
        if let Some(names) = p.names {
            self.names = names;
        }
        self.seq = p.seq;
        self.frames = p.frames;
        self.keep = p.keep;
        if let Some(agents) = p.agents {
            if !fresh {
                // Agents in lanes of their own that had none before, or
                // had another agent.
                let before = &self.agents;
                self.newcomers.extend(
                    agents
                        .iter()
                        .enumerate()
                        .filter(|&(s, a)| before.get(s) != Some(a))
                        .map(|(_, &a)| a),
                );
            }
            self.agents = agents;
        }
        if let Some(delta) = p.delta {
            let items = self.tree.as_ref().map_or(0, |t| t.items.len());
            let summary = Summary::of(&delta, items, &self.newcomers, &mut self.scratch);
            self.newcomers.clear();
            let _ = delta.summary.set(summary);
            self.deltas.push_back(delta);
        }
        while let Some(oldest) = self.deltas.front()
            && oldest.frames + self.keep <= self.frames
        {
            self.dropped = self.dropped.max(oldest.seq);
            self.deltas.pop_front();
        }
        tuned
    }

    /// Publishes taken in so far.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// The agents the recorder records, as of the last publish.
    pub(super) fn agents(&self) -> &Arc<Vec<u32>> {
        &self.agents
    }

    /// The kept publishes, as of now.
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            seq: self.seq,
            frames: self.frames,
            keep: self.keep,
            tree: self.tree.clone(),
            agents: Arc::clone(&self.agents),
            names: Arc::clone(&self.names),
            encoder: Arc::clone(&self.encoder),
            deltas: self.deltas.iter().cloned().collect(),
            dropped: self.dropped,
            tuning: self.tuning.clone(),
        }
    }
}

/// What the publishes gone through so far left, for the next `ticks`
/// message: each agent's last tick, and the time of each recent frame's
/// ticks. A publish no stream needs a message of is gone through without
/// one ([`pass`](Self::pass)).
#[derive(Default)]
pub(super) struct Encoder {
    /// The last publish gone through.
    seq: u64,
    /// Per watch slot: its agent, the serial and words of its last tick,
    /// and that tick's JSON once made.
    last: Vec<Option<Last>>,
    /// Per frame from the oldest a new tick may be of: the time of its
    /// ticks sent so far, or `None` when they differ (no run is made
    /// there).
    times: BTreeMap<u64, Option<f64>>,
}

/// An agent's last tick gone through.
struct Last {
    agent: u32,
    serial: u64,
    words: Vec<u64>,
    json: Option<Value>,
}

impl Last {
    /// Its JSON, made once.
    fn json(&mut self) -> &Value {
        let (serial, words) = (self.serial, &self.words);
        self.json
            .get_or_insert_with(|| tick_json(&TickWords::new(serial, words).decode()))
    }
}

impl Encoder {
    /// Goes through `delta` without making its message: the times of its
    /// ticks, and each agent's last one.
    fn pass(&mut self, delta: &Delta) {
        self.clock(delta);
        self.forget_times(delta);
        for run in delta.entries.chunk_by(|a, b| a.slot == b.slot) {
            self.set_last(&run[run.len() - 1], delta, None);
        }
        self.seq = delta.seq;
    }

    fn set_last(&mut self, e: &Entry, delta: &Delta, json: Option<Value>) {
        let slot = e.slot as usize;
        if self.last.len() <= slot {
            self.last.resize_with(slot + 1, || None);
        }
        self.last[slot] = Some(Last {
            agent: e.agent,
            serial: e.serial,
            words: delta.own(e),
            json,
        });
    }

    /// Takes in the times of `delta`'s ticks.
    fn clock(&mut self, delta: &Delta) {
        for e in &delta.entries {
            let now = TickWords::new(e.serial, &delta.words[e.start..e.start + e.len]).now();
            self.times
                .entry(e.serial)
                .and_modify(|t| {
                    if t.is_some_and(|t| t.to_bits() != now.to_bits()) {
                        *t = None;
                    }
                })
                .or_insert(Some(now));
        }
    }

    /// Forgets the times of the frames before `delta`'s last: later
    /// publishes bring ticks of that frame on, not older ones.
    fn forget_times(&mut self, delta: &Delta) {
        self.times = self.times.split_off(&delta.frames.saturating_sub(1));
    }

    /// The parts of `delta`'s `ticks` messages, of the lanes `wanted`:
    /// its ticks, as runs where they repeat the tick before them when
    /// `runs`, and their values. A lane not wanted is forgotten: its next
    /// part starts with a whole tick.
    fn encode(
        &mut self,
        delta: &Delta,
        names: &[&'static str],
        runs: bool,
        wanted: &Wanted,
    ) -> Parts {
        self.clock(delta);
        let clock = runs.then(|| {
            let first = delta.entries.iter().map(|e| e.serial).min().unwrap_or(0);
            let last = delta.entries.iter().map(|e| e.serial).max().unwrap_or(0);
            Clock {
                first,
                now: (first..=last)
                    .map(|s| self.times.get(&s).copied().flatten())
                    .collect(),
            }
        });
        // Not before: a message of several frames needs their times for
        // its runs.
        self.forget_times(delta);
        let mut lanes = Vec::new();
        for run in delta.entries.chunk_by(|a, b| a.slot == b.slot) {
            let (slot, agent) = (run[0].slot as usize, run[0].agent);
            if !wanted.has(run[0].slot) {
                if let Some(last) = self.last.get_mut(slot) {
                    *last = None;
                }
                continue;
            }
            let ticks: Vec<Value> = run.iter().map(|e| delta.tick(e)).collect();
            let recorded = run.iter().enumerate().filter_map(|(j, e)| {
                let (vals, over) = delta.values(e)?;
                Some((j, e.serial, vals, over))
            });
            let values = agent_values(agent, ticks.len(), names, recorded);
            let before = self
                .last
                .get_mut(slot)
                .and_then(Option::as_mut)
                .filter(|l| l.agent == agent && l.serial + 1 == run[0].serial);
            let last = ticks.last().cloned();
            let entries = match (&clock, before) {
                // The tick before goes first, so that a tick that repeats
                // it is a run; it was sent already.
                (Some(clock), Some(before)) => {
                    let mut all = Vec::with_capacity(ticks.len() + 1);
                    all.push(before.json().clone());
                    all.extend(ticks);
                    let mut out = compact(all.clone(), clock);
                    implied_since(&mut out, &all);
                    out.remove(0);
                    out
                }
                (Some(clock), _) => {
                    let mut out = compact(ticks.clone(), clock);
                    implied_since(&mut out, &ticks);
                    out
                }
                (None, _) => ticks,
            };
            let run_here = entries
                .iter()
                .any(|e| e.as_array().is_some_and(|e| e.len() < 7));
            self.set_last(&run[run.len() - 1], delta, last);
            let mut part = Map::new();
            part.insert("agent".into(), agent.into());
            part.insert("ticks".into(), Value::Array(entries));
            lanes.push(Lane {
                slot: run[0].slot,
                ticks: Value::Object(part).to_string(),
                values: values.map(|v| to_value(&v).to_string()),
                run: run_here,
            });
        }
        self.seq = delta.seq;
        Parts {
            lanes,
            clock: clock.map(|c| to_value(&c).to_string()),
            all: matches!(wanted, Wanted::All),
        }
    }
}

/// Plain data as JSON.
fn to_value(x: &impl serde::Serialize) -> Value {
    // Serializing plain data to a value cannot fail.
    serde_json::to_value(x).expect("plain data serializes")
}

/// The kept publishes at one moment: handles, cheap to take.
#[derive(Clone)]
pub(super) struct Snapshot {
    /// The publish it is as of.
    pub(super) seq: u64,
    frames: u64,
    keep: u64,
    tree: Option<Arc<TreeInfo>>,
    agents: Arc<Vec<u32>>,
    names: Arc<Vec<&'static str>>,
    encoder: Arc<Mutex<Encoder>>,
    deltas: Vec<Arc<Delta>>,
    dropped: u64,
    tuning: Option<Arc<TuneLog>>,
}

impl Snapshot {
    /// Whether anything was published.
    pub(super) fn published(&self) -> bool {
        self.tree.is_some()
    }

    /// The tree of the recorder last published.
    pub(super) fn tree(&self) -> Option<&TreeInfo> {
        self.tree.as_deref()
    }

    /// The publishes after `seen` up to this one that added ticks, their
    /// parts of the `ticks` messages made for the lanes `wanted` (with
    /// runs of repeats when `runs`), or [`Gap`] when some of those
    /// publishes are no longer kept. The parts are made once, in publish
    /// order, each from what the publishes before it left; a publish gone
    /// through without them (no stream needed it then) is sent with every
    /// tick whole ([`Delta::message_for`]).
    pub(super) fn ticks_after(
        &self,
        seen: u64,
        runs: bool,
        wanted: &Wanted,
    ) -> Result<Vec<Arc<Delta>>, Gap> {
        if seen < self.dropped {
            return Err(Gap);
        }
        {
            let mut encoder = self.encoder.lock().unwrap_or_else(|e| e.into_inner());
            for delta in &self.deltas {
                if delta.seq <= encoder.seq {
                    continue;
                }
                if delta.seq > seen {
                    let parts = encoder.encode(delta, &self.names, runs, wanted);
                    let _ = delta.parts.set(parts);
                } else {
                    encoder.pass(delta);
                }
            }
        }
        Ok(self
            .deltas
            .iter()
            .filter(|d| d.seq > seen)
            .cloned()
            .collect())
    }

    /// The names of the agents' values, by id.
    pub(super) fn names(&self) -> &[&'static str] {
        &self.names
    }
}

/// Some publishes a client needs are no longer kept: it starts again from
/// a whole recording.
pub(super) struct Gap;

/// What a `recording` event starts with; the JSON follows, then
/// [`RECORDING_END`].
pub(super) const RECORDING_HEAD: &str = "event: recording\ndata: ";
/// What ends a `recording` event.
pub(super) const RECORDING_END: &str = "\n\n";

/// One server-sent event. Data with no line break is one `data:` line.
pub(super) fn sse(event: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}
