//! The game's side of the feed: what a publish copies from the recorder,
//! and sends the server.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::{Delta, Entry, Feed, Published, Status, ToServer};
use crate::FlightRecorder;
use crate::export::TreeInfo;

/// The game's side: what was sent of each watched agent.
pub(in crate::live) struct Publisher {
    to_server: mpsc::UnboundedSender<ToServer>,
    /// Per watch slot, the serial after the last tick sent.
    sent: Vec<u64>,
    /// The recorder's frame count and capacity at the last publish.
    frames: u64,
    keep: u64,
    seq: u64,
    agents: Arc<Vec<u32>>,
    /// The number of value names sent.
    names: usize,
    /// The recorder's tree, copied once per recorder.
    tree: Option<Arc<TreeInfo>>,
}

impl Publisher {
    pub(in crate::live) fn new(to_server: mpsc::UnboundedSender<ToServer>) -> Self {
        Publisher {
            to_server,
            sent: Vec::new(),
            frames: 0,
            keep: 0,
            seq: 0,
            agents: Arc::default(),
            names: 0,
            tree: None,
        }
    }

    /// Copies the ticks `recorder` kept since the last publish, and the
    /// values recorded at them, into the channel to the server: work in
    /// proportion to the new ticks (and a look at each watched agent's
    /// slot in the last frame). Returns the ticks it sent, if any.
    pub(in crate::live) fn publish(
        &mut self,
        feed: &Feed,
        recorder: &FlightRecorder,
    ) -> Option<Arc<Delta>> {
        let frames = recorder.frames();
        let keep = recorder.capacity().ticks as u64;
        // Another recorder (or one that started again): start afresh.
        let fresh = self.seq == 0 || frames < self.frames || keep != self.keep;
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
        let (mut entries, mut words) = (Vec::new(), Vec::new());
        let (mut data, mut text) = (Vec::new(), Vec::new());
        let lanes = recorder.lanes();
        let mut agents_changed = self.agents.len() != watched;
        for (slot, sent) in self.sent.iter_mut().enumerate() {
            let agent = recorder.lane_agent(slot).unwrap_or(u32::MAX);
            agents_changed |= self.agents.get(slot) != Some(&agent);
            for tick in recorder.ticks_since(slot, (*sent).max(since)) {
                let own = tick.own();
                let block = recorder
                    .data
                    .as_ref()
                    .and_then(|d| d.raw((tick.serial % keep) as usize * lanes + slot));
                let (block_words, block_text) = block.unwrap_or((&[], &[]));
                entries.push(Entry {
                    slot: slot as u32,
                    agent,
                    serial: tick.serial,
                    start: words.len(),
                    len: own.len(),
                    data_start: data.len(),
                    data_len: block_words.len(),
                    text_start: text.len(),
                    text_len: block_text.len(),
                });
                words.extend_from_slice(own);
                data.extend_from_slice(block_words);
                text.extend_from_slice(block_text);
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
                tree: Arc::clone(&tree),
                seq: self.seq,
                frames,
                entries,
                words,
                data,
                text,
                message: OnceLock::new(),
                parts: OnceLock::new(),
                summary: OnceLock::new(),
            })
        });
        let names = recorder
            .data
            .as_ref()
            .map_or(&[][..], |d| d.names.as_slice());
        let names_changed = fresh || names.len() != self.names;
        self.names = names.len();
        // The tree is copied once per recorder.
        let published = Published {
            seq: self.seq,
            frames,
            keep,
            tree: fresh.then(|| Arc::clone(&tree)),
            agents: agents_changed.then(|| Arc::clone(&self.agents)),
            names: names_changed.then(|| Arc::new(names.to_vec())),
            delta: delta.clone(),
        };
        // Once the server has stopped, nobody is listening.
        let _ = self.to_server.send(ToServer::Published(published));
        feed.published.store(self.seq, Ordering::Relaxed);
        delta
    }

    /// Tells the server where the game stands, after the ticks sent so
    /// far.
    pub(in crate::live) fn report(&self, status: Status) {
        let _ = self.to_server.send(ToServer::Status(status));
    }
}
