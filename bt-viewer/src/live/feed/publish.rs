//! The game's side of the feed: what a publish copies from the recorder,
//! and sends the server.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::{Delta, Entry, Feed, Published, Status, ToServer};
use crate::FlightRecorder;
use crate::export::TreeInfo;

/// The game's side: what was sent of each watched agent.
pub(in crate::live) struct Publisher {
    /// Wakes the server's thread when the outbox has something new.
    wake: mpsc::UnboundedSender<()>,
    /// Per watch slot, the serial after the last tick sent.
    sent: Vec<u64>,
    /// The recorder's frame count and capacity at the last publish.
    frames: u64,
    keep: u64,
    seq: u64,
    agents: Arc<Vec<u32>>,
    /// The number of value names sent.
    names: usize,
    /// The recorder published last ([`Instance`](crate::recorder::Instance)).
    instance: u64,
    /// The recorder's tree, copied once per recorder.
    tree: Option<Arc<TreeInfo>>,
    /// The tunables' changes logged and the crowd's shared state, as of
    /// the last publish that sent them.
    tuned: (u64, usize),
}

impl Publisher {
    pub(in crate::live) fn new(wake: mpsc::UnboundedSender<()>) -> Self {
        Publisher {
            wake,
            sent: Vec::new(),
            frames: 0,
            keep: 0,
            seq: 0,
            agents: Arc::default(),
            names: 0,
            tree: None,
            instance: 0,
            tuned: (0, 0),
        }
    }

    /// Copies the ticks `recorder` kept since the last publish, and the
    /// values recorded at them, into the feed's outbox (see
    /// [`Feed::outbox`]): work in proportion to the new ticks (and a look
    /// at each watched agent's slot in the last frame). Returns the ticks
    /// it copied, if any.
    pub(in crate::live) fn publish(
        &mut self,
        feed: &Feed,
        recorder: &FlightRecorder,
    ) -> Option<Arc<Delta>> {
        let frames = recorder.frames();
        let keep = recorder.capacity().ticks as u64;
        // Another recorder (or one that started again): start afresh.
        let instance = recorder.instance.get();
        let fresh =
            self.seq == 0 || instance != self.instance || frames < self.frames || keep != self.keep;
        self.instance = instance;
        if fresh {
            self.sent.clear();
            self.tree = None;
        }
        let tree = Arc::clone(
            self.tree
                .get_or_insert_with(|| Arc::new(recorder.tree.clone())),
        );
        let watched = recorder.watched();
        self.sent.resize(watched, 0);
        // Ticks of the last frame published may have come after it.
        let since = if fresh {
            0
        } else {
            self.frames.saturating_sub(1)
        };
        let copy = copy(recorder, &mut self.sent, since);
        let agents_changed = self.agents.len() != watched || copy.agents_changed(&self.agents);
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
        let delta =
            (!copy.entries.is_empty()).then(|| Arc::new(copy.delta(&tree, self.seq, frames)));
        let names = recorder
            .data
            .as_ref()
            .map_or(&[][..], |d| d.names.as_slice());
        let names_changed = fresh || names.len() != self.names;
        self.names = names.len();
        let tune = &recorder.tune;
        let tuned = (
            tune.logged,
            tune.shared.as_ref().map_or(0, |s| Arc::as_ptr(s) as usize),
        );
        let tuning = (fresh || tuned != self.tuned).then(|| Arc::new(tune.clone()));
        self.tuned = tuned;
        // The tree is copied once per recorder.
        let published = Published {
            seq: self.seq,
            frames,
            keep,
            tree: fresh.then(|| Arc::clone(&tree)),
            agents: agents_changed.then(|| Arc::clone(&self.agents)),
            names: names_changed.then(|| Arc::new(names.to_vec())),
            delta: delta.clone(),
            tuning,
        };
        self.send(feed, ToServer::Published(published), Some((frames, keep)));
        feed.published.store(self.seq, Ordering::Relaxed);
        delta
    }

    /// Tells the server where the game stands, after the ticks published
    /// so far.
    pub(in crate::live) fn report(&self, feed: &Feed, status: Status) {
        self.send(feed, ToServer::Status(status), None);
    }

    /// Adds `message` to the outbox, and wakes the server's thread when
    /// it found the outbox empty. After a publish of frame count and
    /// capacity `trim`, the waiting ticks the recorder no longer keeps are
    /// let go.
    fn send(&self, feed: &Feed, message: ToServer, trim: Option<(u64, u64)>) {
        let mut outbox = feed.outbox.lock().unwrap_or_else(|e| e.into_inner());
        let wake = outbox.is_empty();
        outbox.push_back(message);
        if let Some((frames, keep)) = trim {
            let_go(&mut outbox, frames, keep);
        }
        drop(outbox);
        if wake {
            // Once the server has stopped, nobody is listening.
            let _ = self.wake.send(());
        }
    }
}

/// Lets go of the ticks of the publishes in `outbox` that a recorder at
/// frame count `frames`, keeping `keep` ticks, no longer keeps (the server
/// would let go of them at once), and folds a publish left with none into
/// the next one: what it keeps of them goes on.
fn let_go(outbox: &mut VecDeque<ToServer>, frames: u64, keep: u64) {
    for message in outbox.iter_mut() {
        let ToServer::Published(p) = message else {
            continue;
        };
        match &p.delta {
            Some(d) if d.frames + keep <= frames => p.delta = None,
            Some(_) => break,
            None => {}
        }
    }
    while outbox.len() > 1
        && let Some(ToServer::Published(first)) = outbox.front()
        && first.delta.is_none()
        && matches!(outbox.get(1), Some(ToServer::Published(_)))
    {
        let Some(ToServer::Published(gone)) = outbox.pop_front() else {
            break;
        };
        if let Some(ToServer::Published(next)) = outbox.front_mut() {
            next.tree = next.tree.take().or(gone.tree);
            next.agents = next.agents.take().or(gone.agents);
            next.names = next.names.take().or(gone.names);
            next.tuning = next.tuning.take().or(gone.tuning);
        }
    }
}

/// The words a publish copies: ticks, with their values' words and text.
#[derive(Default)]
struct Copy {
    entries: Vec<Entry>,
    words: Vec<u64>,
    data: Vec<u64>,
    text: Vec<u8>,
    /// Per watch slot, the agent of its lane.
    lanes: Vec<u32>,
}

impl Copy {
    /// Whether the lanes' agents are others than `agents`.
    fn agents_changed(&self, agents: &[u32]) -> bool {
        self.lanes
            .iter()
            .enumerate()
            .any(|(slot, a)| agents.get(slot) != Some(a))
    }

    fn delta(self, tree: &Arc<TreeInfo>, seq: u64, frames: u64) -> Delta {
        Delta {
            tree: Arc::clone(tree),
            seq,
            frames,
            entries: self.entries,
            words: self.words,
            data: self.data,
            text: self.text,
            message: OnceLock::new(),
            parts: OnceLock::new(),
            summary: OnceLock::new(),
        }
    }
}

/// Copies each watch slot's ticks from the serial `after[slot]` (and not
/// before `since`) on, and moves `after` past them.
fn copy(recorder: &FlightRecorder, after: &mut [u64], since: u64) -> Copy {
    let keep = recorder.capacity().ticks as u64;
    let lanes = recorder.lanes();
    let mut out = Copy::default();
    for (slot, after) in after.iter_mut().enumerate() {
        let agent = recorder.lane_agent(slot).unwrap_or(u32::MAX);
        out.lanes.push(agent);
        for tick in recorder.ticks_since(slot, (*after).max(since)) {
            let own = tick.own();
            let block = recorder
                .data
                .as_ref()
                .and_then(|d| d.raw((tick.serial % keep) as usize * lanes + slot));
            let (block_words, block_text) = block.unwrap_or((&[], &[]));
            out.entries.push(Entry {
                slot: slot as u32,
                agent,
                serial: tick.serial,
                start: out.words.len(),
                len: own.len(),
                data_start: out.data.len(),
                data_len: block_words.len(),
                text_start: out.text.len(),
                text_len: block_text.len(),
            });
            out.words.extend_from_slice(own);
            out.data.extend_from_slice(block_words);
            out.text.extend_from_slice(block_text);
            *after = tick.serial + 1;
        }
    }
    out
}
