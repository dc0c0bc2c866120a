//! What the ticks of a publish say of the whole crowd, frame by frame:
//! how many agents run each leaf (or none), and how many had a Subset
//! Rule report, an error or a rejection. The server's thread makes it
//! once per publish from the words it keeps; a page that follows only
//! some agents' lanes draws the crowd's overview from it.

use hyper::body::Bytes;
use serde_json::{Map, Value, json};

use super::{Delta, sse};
use crate::recorder::{ERROR_BITS, ERROR_SHIFT, HEADER, Kind, NO_LEAF};

/// Per-frame counts over the crowd, from frame `first` on.
#[derive(Clone, Default)]
pub(in crate::live) struct Tally {
    first: u64,
    frames: usize,
    /// Leaf places: the tree's items, then one for idle.
    places: usize,
    /// Per place, per frame: agents whose tick ran that leaf.
    leaves: Vec<u32>,
    subset: Vec<u32>,
    errors: Vec<u32>,
    rejections: Vec<u32>,
}

impl Tally {
    fn new(first: u64, frames: usize, items: usize) -> Self {
        Tally {
            first,
            frames,
            places: items + 1,
            leaves: vec![0; (items + 1) * frames],
            subset: vec![0; frames],
            errors: vec![0; frames],
            rejections: vec![0; frames],
        }
    }

    /// Adds `other`'s counts of the frames both cover.
    fn add(&mut self, other: &Tally) {
        for f in 0..other.frames {
            let Some(at) = (other.first + f as u64)
                .checked_sub(self.first)
                .map(|d| d as usize)
                .filter(|&d| d < self.frames)
            else {
                continue;
            };
            let places = self.places.min(other.places);
            for p in 0..places {
                self.leaves[p * self.frames + at] += other.leaves[p * other.frames + f];
            }
            self.subset[at] += other.subset[f];
            self.errors[at] += other.errors[f];
            self.rejections[at] += other.rejections[f];
        }
    }

    /// Its JSON fields: `first`, `leaves` (per item index, and `idle`,
    /// those with some agent), `subset`, `errors`, `rejections`.
    fn fields(&self, out: &mut Map<String, Value>) {
        let mut leaves = Map::new();
        for p in 0..self.places {
            let row = &self.leaves[p * self.frames..(p + 1) * self.frames];
            if row.iter().any(|&n| n > 0) {
                let name = if p + 1 == self.places {
                    "idle".to_owned()
                } else {
                    p.to_string()
                };
                leaves.insert(name, json!(row));
            }
        }
        out.insert("first".into(), self.first.into());
        out.insert("leaves".into(), Value::Object(leaves));
        out.insert("subset".into(), json!(self.subset));
        out.insert("errors".into(), json!(self.errors));
        out.insert("rejections".into(), json!(self.rejections));
    }
}

/// What one publish's ticks say of the crowd, and the agents first
/// recorded at it.
pub(in crate::live) struct Summary {
    tally: Tally,
    /// Its part of a `ticks` message: the tally and `new`, the agents
    /// first recorded at this publish.
    pub(super) json: String,
}

impl Summary {
    /// Counts `delta`'s ticks, of a tree of `items` items; `new` are the
    /// agents first recorded at it. `scratch` is room for a tick's words.
    pub(super) fn of(delta: &Delta, items: usize, new: &[u32], scratch: &mut Vec<u64>) -> Self {
        let first = delta.entries.iter().map(|e| e.serial).min().unwrap_or(0);
        let last = delta.entries.iter().map(|e| e.serial).max().unwrap_or(0);
        let frames = (last - first + 1) as usize;
        let mut tally = Tally::new(first, frames, items);
        for e in &delta.entries {
            scratch.clear();
            delta.read_into(e.serial, &delta.words[e.start..e.start + e.len], scratch);
            let f = (e.serial - first) as usize;
            let h = scratch[1];
            let leaf = h as u16;
            let place = if leaf == NO_LEAF {
                items
            } else {
                usize::from(leaf).min(items)
            };
            tally.leaves[place * frames + f] += 1;
            let events = usize::from((h >> 32) as u16);
            let flags = (h >> 56) as u8;
            let (mut subset, mut error, mut rejected) = (false, false, false);
            for &w in scratch.iter().skip(HEADER).take(events) {
                let kind = w as u8;
                subset |= kind == Kind::SubsetViolation as u8;
                error |= kind == Kind::RedecideLimit as u8;
                rejected |= kind == Kind::Rejected as u8;
            }
            error |= (flags >> ERROR_SHIFT) & ERROR_BITS != 0;
            tally.subset[f] += u32::from(subset);
            tally.errors[f] += u32::from(error);
            tally.rejections[f] += u32::from(rejected);
        }
        let mut fields = Map::new();
        tally.fields(&mut fields);
        fields.insert("new".into(), json!(new));
        Summary {
            tally,
            json: Value::Object(fields).to_string(),
        }
    }
}

/// The `crowd` event a stream that follows some lanes starts with (after
/// its recording): its `stream` number, every agent recorded (`agents`,
/// in lane order), the frames the recorder keeps (`keep`), and the
/// tally of the kept frames from `from` on of `deltas`.
pub(in crate::live) fn crowd_event<'d>(
    stream: u64,
    agents: &[u32],
    keep: u64,
    from: u64,
    items: usize,
    deltas: impl Iterator<Item = &'d Delta> + Clone,
) -> Bytes {
    let last = deltas
        .clone()
        .filter_map(|d| d.summary.get())
        .map(|s| s.tally.first + s.tally.frames as u64)
        .max()
        .unwrap_or(from);
    let mut tally = Tally::new(from, last.saturating_sub(from) as usize, items);
    for summary in deltas.filter_map(|d| d.summary.get()) {
        tally.add(&summary.tally);
    }
    let mut fields = Map::new();
    fields.insert("stream".into(), stream.into());
    fields.insert("keep".into(), keep.into());
    fields.insert("agents".into(), json!(agents));
    tally.fields(&mut fields);
    sse("crowd", &Value::Object(fields).to_string())
}
