//! What the game's thread hands the server: the words of the ticks each
//! publish adds, sent through a channel that takes no lock, and kept by
//! the server's thread for as long as the recorder keeps them. The
//! server's thread makes the recording and the stream's messages from
//! them; the game's thread only copies words.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::control::Status;
use crate::FlightRecorder;
use crate::export::{AgentTicks, Recording, TreeInfo, tick_json};
use crate::recorder::TickWords;

/// One tick of a [`Delta`]: where its words are.
struct Entry {
    slot: u32,
    agent: u32,
    serial: u64,
    start: usize,
    len: usize,
}

/// The ticks one publish added, in watch-slot order, each slot's in the
/// order they were recorded.
pub(super) struct Delta {
    seq: u64,
    /// The recorder's frame count at the publish: the ticks are older.
    frames: u64,
    entries: Vec<Entry>,
    words: Vec<u64>,
}

impl Delta {
    /// Its ticks: (agent, frame, own words).
    pub(super) fn ticks(&self) -> impl Iterator<Item = (u32, u64, &[u64])> {
        self.entries
            .iter()
            .map(|e| (e.agent, e.serial, &self.words[e.start..e.start + e.len]))
    }

    fn tick(&self, e: &Entry) -> Value {
        tick_json(&TickWords::new(e.serial, &self.words[e.start..e.start + e.len]).decode())
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
    /// Every publish with a tick the recorder still keeps, oldest first.
    deltas: VecDeque<Arc<Delta>>,
    /// The newest publish whose ticks were let go (all overwritten, or
    /// of a recorder published before): a client that saw less than it
    /// lacks ticks.
    dropped: u64,
}

/// What the game's thread and the server's share: counters only.
#[derive(Default)]
pub(super) struct Feed {
    /// Publishes so far, as the game's thread counts them.
    pub(super) published: AtomicU64,
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
    delta: Option<Arc<Delta>>,
}

impl Kept {
    /// Takes in one publish. The deltas whose ticks are all overwritten
    /// are let go.
    pub(super) fn take(&mut self, p: Published) {
        if let Some(tree) = p.tree {
            self.tree = Some(tree);
            self.deltas.clear();
            self.dropped = p.seq;
        }
        self.seq = p.seq;
        self.frames = p.frames;
        self.keep = p.keep;
        if let Some(agents) = p.agents {
            self.agents = agents;
        }
        self.deltas.extend(p.delta);
        while let Some(oldest) = self.deltas.front()
            && oldest.frames + self.keep <= self.frames
        {
            self.dropped = self.dropped.max(oldest.seq);
            self.deltas.pop_front();
        }
    }

    /// Publishes taken in so far.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// The kept publishes, as of now.
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            seq: self.seq,
            frames: self.frames,
            keep: self.keep,
            tree: self.tree.clone(),
            agents: Arc::clone(&self.agents),
            deltas: self.deltas.iter().cloned().collect(),
            dropped: self.dropped,
        }
    }
}

/// The game's side: what was sent of each watched agent.
pub(super) struct Publisher {
    to_server: mpsc::UnboundedSender<ToServer>,
    /// Per watch slot, the serial after the last tick sent.
    sent: Vec<u64>,
    /// The recorder's frame count and capacity at the last publish.
    frames: u64,
    keep: u64,
    seq: u64,
    agents: Arc<Vec<u32>>,
}

impl Publisher {
    pub(super) fn new(to_server: mpsc::UnboundedSender<ToServer>) -> Self {
        Publisher {
            to_server,
            sent: Vec::new(),
            frames: 0,
            keep: 0,
            seq: 0,
            agents: Arc::default(),
        }
    }

    /// Copies the ticks `recorder` kept since the last publish into the
    /// channel to the server: work in proportion to the new ticks (and a
    /// look at each watched agent's slot in the last frame). Returns the
    /// ticks it sent, if any.
    pub(super) fn publish(&mut self, feed: &Feed, recorder: &FlightRecorder) -> Option<Arc<Delta>> {
        let frames = recorder.frames();
        let keep = recorder.capacity().ticks as u64;
        // Another recorder (or one that started again): start afresh.
        let fresh = self.seq == 0 || frames < self.frames || keep != self.keep;
        if fresh {
            self.sent.clear();
        }
        let watched = recorder.watched();
        self.sent.resize(watched, 0);
        // Ticks of the last frame published may have come after it.
        let since = if fresh {
            0
        } else {
            self.frames.saturating_sub(1)
        };
        let (mut entries, mut words) = (Vec::new(), Vec::new());
        let mut agents_changed = self.agents.len() != watched;
        for (slot, sent) in self.sent.iter_mut().enumerate() {
            let agent = recorder.lane_agent(slot).unwrap_or(u32::MAX);
            agents_changed |= self.agents.get(slot) != Some(&agent);
            for tick in recorder.ticks_since(slot, (*sent).max(since)) {
                let own = tick.own();
                entries.push(Entry {
                    slot: slot as u32,
                    agent,
                    serial: tick.serial,
                    start: words.len(),
                    len: own.len(),
                });
                words.extend_from_slice(own);
                *sent = tick.serial + 1;
            }
        }
        if agents_changed {
            self.agents = Arc::new(
                (0..watched)
                    .filter_map(|s| recorder.lane_agent(s))
                    .collect(),
            );
        }
        self.seq += 1;
        self.frames = frames;
        self.keep = keep;
        let delta = (!entries.is_empty()).then(|| {
            Arc::new(Delta {
                seq: self.seq,
                frames,
                entries,
                words,
            })
        });
        // The tree is copied once per recorder.
        let published = Published {
            seq: self.seq,
            frames,
            keep,
            tree: fresh.then(|| Arc::new(recorder.tree.clone())),
            agents: agents_changed.then(|| Arc::clone(&self.agents)),
            delta: delta.clone(),
        };
        // Once the server has stopped, nobody is listening.
        let _ = self.to_server.send(ToServer::Published(published));
        feed.published.store(self.seq, Ordering::Relaxed);
        delta
    }

    /// Tells the server where the game stands, after the ticks sent so
    /// far.
    pub(super) fn report(&self, status: Status) {
        let _ = self.to_server.send(ToServer::Status(status));
    }
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
    deltas: Vec<Arc<Delta>>,
    dropped: u64,
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

    /// The `recording` event of the whole recording, as
    /// [`FlightRecorder::export`] made it at the publish; `None` before the
    /// first publish or when `stop` is set on the way.
    pub(super) fn recording(&self, stop: &AtomicBool) -> Option<Bytes> {
        let tree = self.tree.as_ref()?;
        let from = self.frames.saturating_sub(self.keep);
        let n = self.agents.len();
        let mut ticks: Vec<Vec<Value>> = (0..n).map(|_| Vec::new()).collect();
        let mut first: Vec<Option<u64>> = vec![None; n];
        for delta in &self.deltas {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            for e in &delta.entries {
                let slot = e.slot as usize;
                if e.serial < from || slot >= n {
                    continue;
                }
                first[slot].get_or_insert(e.serial);
                ticks[slot].push(delta.tick(e));
            }
        }
        let agents = ticks
            .into_iter()
            .zip(first)
            .zip(self.agents.iter())
            .map(|((ticks, first), &agent)| AgentTicks {
                agent,
                first_tick: first.unwrap_or(from),
                ticks,
            })
            .collect();
        let recording = Recording::of((**tree).clone(), agents);
        let mut event = RECORDING_HEAD.as_bytes().to_vec();
        // Serializing plain data to memory cannot fail.
        serde_json::to_writer(&mut event, &recording).expect("a recording serializes");
        event.extend_from_slice(RECORDING_END.as_bytes());
        Some(Bytes::from(event))
    }

    /// The `ticks` messages of the publishes after `seen` up to this one,
    /// one per publish that added ticks, or [`Gap`] when some of those
    /// publishes are no longer kept.
    pub(super) fn ticks_after(&self, seen: u64) -> Result<Vec<Bytes>, Gap> {
        if seen < self.dropped {
            return Err(Gap);
        }
        let messages = self
            .deltas
            .iter()
            .filter(|d| d.seq > seen)
            .map(|delta| {
                let agents: Vec<Value> = delta
                    .entries
                    .chunk_by(|a, b| a.slot == b.slot)
                    .map(|run| {
                        let ticks: Vec<Value> = run.iter().map(|e| delta.tick(e)).collect();
                        json!({ "agent": run[0].agent, "ticks": ticks })
                    })
                    .collect();
                sse("ticks", &json!({ "agents": agents }).to_string())
            })
            .collect();
        Ok(messages)
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
