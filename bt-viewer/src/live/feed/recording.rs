//! The whole recording a page that joins starts from, written from the
//! kept publishes' words as the library writes its own
//! ([`FlightRecorder::write_json_compact`](crate::FlightRecorder::write_json_compact)):
//! in pieces, with no [`Recording`](crate::Recording) in memory. The
//! recording's text is all it keeps, besides the kept publishes.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hyper::body::Bytes;

use super::{Delta, Entry, Snapshot, sse};
use crate::export::{Lanes, Recorded, Source, TreeInfo, Tuning, write_json};
use crate::live::rope::Chunks;
use crate::recorder::TickWords;

impl Snapshot {
    /// The JSON of the whole recording, in pieces, as
    /// [`FlightRecorder::export`](crate::FlightRecorder::export) made it
    /// at the publish (as
    /// [`FlightRecorder::export_compact`](crate::FlightRecorder::export_compact)
    /// did when `runs`), of the watch slots `only` (sorted) when given;
    /// `None` before the first publish or when `stop` is set on the way.
    pub(in crate::live) fn recording(
        &self,
        stop: &AtomicBool,
        runs: bool,
        only: Option<&[u32]>,
    ) -> Option<Arc<[Bytes]>> {
        let tree = self.tree.as_deref()?;
        let agents = only.map(|only| {
            only.iter()
                .filter_map(|&s| self.agents.get(s as usize).copied())
                .collect()
        });
        let mut copies = Copies {
            snapshot: self,
            tree,
            stop,
            from: self.frames.saturating_sub(self.keep),
            at: vec![0; self.deltas.len()],
            only: only.map(|o| &o[..agents.as_ref().map_or(0, Vec::len)]),
            agents,
        };
        let mut chunks = Chunks::default();
        write_json(&mut copies, runs, &mut chunks).ok()?;
        Some(chunks.finish())
    }

    /// The tunables' values over the frames kept, as the recording holds
    /// them, when the tree has tunables.
    fn tuning(&self) -> Option<Tuning> {
        self.tuning
            .as_ref()?
            .tuning(self.frames.saturating_sub(self.keep))
    }

    /// The `tuning` event: the tunables' values over the frames kept
    /// (`{"first", "start", "changes"}`, as the recording's `tuning`), when
    /// the tree has tunables.
    pub(in crate::live) fn tuning_event(&self) -> Option<Bytes> {
        let tuning = serde_json::to_string(&self.tuning()?).ok()?;
        Some(sse("tuning", &tuning))
    }

    /// The crowd's shared state, which takes the tunables' changes, once
    /// the recorder ticked a memory bound to it.
    pub(in crate::live) fn tuned_shared(&self) -> Option<&std::sync::Arc<bt_core::TreeShared>> {
        self.tuning.as_ref()?.shared.as_ref()
    }
}

/// The kept publishes of a snapshot, read a block of slots at a time:
/// each publish's ticks are in slot order, so a pass keeps one place in
/// each.
struct Copies<'s> {
    snapshot: &'s Snapshot,
    tree: &'s TreeInfo,
    stop: &'s AtomicBool,
    /// The oldest frame kept.
    from: u64,
    /// Per publish, its first tick this pass has not gone past.
    at: Vec<usize>,
    /// The watch slots written (sorted), when not all: the recording's
    /// slot `i` is `only[i]`.
    only: Option<&'s [u32]>,
    /// Their agents.
    agents: Option<Vec<u32>>,
}

impl Copies<'_> {
    /// Hands `each` the ticks of the slots `slots` still kept, publish by
    /// publish, going past those of the slots before; a pass that starts
    /// again at slot 0 starts from each publish's first tick.
    fn each_of(&mut self, slots: Range<usize>, mut each: impl FnMut(&Delta, &Entry, usize)) {
        if slots.start == 0 {
            self.at.fill(0);
        }
        let only = self.only;
        let (start, end) = match only {
            Some(_) if slots.is_empty() => return,
            Some(only) => (only[slots.start], only[slots.end - 1] + 1),
            None => (slots.start as u32, slots.end as u32),
        };
        let from = self.from;
        for (delta, at) in self.snapshot.deltas.iter().zip(&mut self.at) {
            while let Some(e) = delta.entries.get(*at) {
                if e.slot >= end {
                    break;
                }
                *at += 1;
                if e.slot < start || e.serial < from {
                    continue;
                }
                match only {
                    None => each(delta, e, e.slot as usize),
                    Some(only) => {
                        if let Ok(i) = only.binary_search(&e.slot) {
                            each(delta, e, i);
                        }
                    }
                }
            }
        }
    }
}

impl Source for Copies<'_> {
    fn tree(&self) -> &TreeInfo {
        self.tree
    }

    fn names(&self) -> &[&'static str] {
        &self.snapshot.names
    }

    fn agents(&self) -> &[u32] {
        self.agents.as_deref().unwrap_or(&self.snapshot.agents)
    }

    fn frames(&self) -> (u64, usize) {
        (self.from, self.snapshot.keep as usize)
    }

    fn ticks(&mut self, slots: Range<usize>, lanes: &mut Lanes) {
        self.each_of(slots, |delta, e, slot| {
            let words = &delta.words[e.start..e.start + e.len];
            delta.read_into(e.serial, words, lanes.tick(slot, e.serial));
        });
    }

    fn values(&mut self, slots: Range<usize>, each: &mut dyn FnMut(usize, u64, Recorded)) {
        self.each_of(slots, |delta, e, slot| {
            each(slot, e.serial, delta.values(e))
        });
    }

    fn times(&mut self, each: &mut dyn FnMut(u64, f64)) {
        let slots = self.snapshot.agents.len();
        for delta in &self.snapshot.deltas {
            for e in &delta.entries {
                let shown = match self.only {
                    Some(only) => only.binary_search(&e.slot).is_ok(),
                    None => (e.slot as usize) < slots,
                };
                if e.serial >= self.from && shown {
                    let words = &delta.words[e.start..e.start + e.len];
                    each(e.serial, TickWords::new(e.serial, words).now());
                }
            }
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn tuning(&self) -> Option<Tuning> {
        self.snapshot.tuning()
    }
}
