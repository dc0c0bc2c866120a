//! The recording's JSON written straight from the kept ticks' words into
//! any writer: the same text as serializing the
//! [`Recording`](super::Recording) that [`export`](crate::FlightRecorder::export)
//! or [`export_compact`](crate::FlightRecorder::export_compact) makes, in
//! memory that does not grow with the recording.
//!
//! The agents are read a block at a time ([`BLOCK_WORDS`]): frame by frame,
//! each frame's ticks of the block's agents, which lie side by side, then
//! written agent by agent. (Read agent by agent, every tick would be a
//! cache miss of its own.) What it holds: a block's ticks, a run being
//! merged, a block's values, the text of recent numbers, and [`SPILL`]
//! bytes of text.
//!
//! Each number is written as `serde_json` writes it (its own formatter);
//! each choice the [`Recording`](super::Recording) makes through
//! `serde_json::Value` (a non-finite number is `null`, a decide value or a
//! time active is the shortest decimal of its `f32`, two ticks repeat each
//! other when their values compare equal) is made here on the words, the
//! same way: the tests compare the two texts byte for byte.

mod numbers;
mod ticks;
mod values;

use alloc_crate::vec::Vec;
use core::ops::Range;
use std::io::{self, Write};

use super::{Clock, FORMAT, Legend, TreeInfo, VERSION, input_changed};
use crate::recorder::DataValue;
use numbers::uint;
use ticks::Ticks;
use values::Values;

/// Bytes gathered before they are handed to the writer.
const SPILL: usize = 64 << 10;

/// Words of ticks a block of agents holds, about (one agent's at least).
const BLOCK_WORDS: usize = 1 << 18;

/// The values a tick recorded, by name id, and whether some were dropped;
/// `None` when it recorded none.
pub(crate) type Recorded = Option<(Vec<(usize, DataValue)>, bool)>;

/// Where the kept ticks come from: the recorder, or the live server's
/// copies of them.
pub(crate) trait Source {
    /// The tree the ticks are of.
    fn tree(&self) -> &TreeInfo;
    /// The names of the agents' values, by id.
    fn names(&self) -> &[&'static str];
    /// The agent of each watch slot.
    fn agents(&self) -> &[u32];
    /// The frames kept: from the first on, as many as the recorder keeps.
    fn frames(&self) -> (u64, usize);
    /// Puts every kept tick of the slots `slots` into `lanes` (each slot's
    /// oldest first): [`Lanes::tick`] with its slot and serial, then its
    /// words, standing alone (see
    /// [`TickWords::own_into`](crate::recorder::TickWords::own_into)),
    /// appended to what that returns.
    fn ticks(&mut self, slots: Range<usize>, lanes: &mut Lanes);
    /// Hands `each` the values recorded at every kept tick of the slots
    /// `slots`, in the order [`ticks`](Self::ticks) hands the ticks: its
    /// slot, its serial, and the values by name id with whether some were
    /// dropped, or `None` when it recorded none. It may hand nothing when
    /// no tick recorded values.
    fn values(&mut self, slots: Range<usize>, each: &mut dyn FnMut(usize, u64, Recorded));
    /// Hands `each` the serial and time of every kept tick.
    fn times(&mut self, each: &mut dyn FnMut(u64, f64));
    /// The values of the tree's tunables over the frames kept, when it
    /// has tunables.
    fn tuning(&self) -> Option<super::Tuning>;
    /// Whether to give up: the writing then ends with an
    /// [`Interrupted`](io::ErrorKind::Interrupted) error.
    fn stopped(&self) -> bool {
        false
    }
}

/// Writes the recording of `src` into `out` (with runs of repeated ticks
/// merged when `compact`), as serializing the [`Recording`](super::Recording)
/// of the same ticks would.
pub(crate) fn write(src: &mut impl Source, compact: bool, out: impl Write) -> io::Result<()> {
    let mut w = Sink {
        buf: Vec::with_capacity(SPILL + 4096),
        out,
    };
    let clock = compact.then(|| Clock::of_each(|each| src.times(each)));
    w.buf.extend_from_slice(b"{\"format\":");
    serde_json::to_writer(&mut w.buf, FORMAT)?;
    w.buf.extend_from_slice(b",\"version\":");
    uint(&mut w.buf, u64::from(VERSION));
    w.buf.extend_from_slice(b",\"tree\":");
    serde_json::to_writer(&mut w.buf, src.tree())?;
    w.buf.extend_from_slice(b",\"legend\":");
    serde_json::to_writer(&mut w.buf, &Legend::new())?;
    if let Some(tuning) = src.tuning() {
        w.buf.extend_from_slice(b",\"tuning\":");
        serde_json::to_writer(&mut w.buf, &tuning)?;
    }
    w.buf.extend_from_slice(b",\"agents\":[");
    let agents = src.agents().to_vec();
    let (from, kept) = src.frames();
    // Agents a block: a tick takes some 16 words.
    let block = (BLOCK_WORDS / (kept.max(1) * 16)).clamp(1, agents.len().max(1));
    let mut lanes = Lanes {
        start: 0,
        lanes: (0..block).map(|_| Lane::default()).collect(),
    };
    let mut counts = Vec::with_capacity(agents.len());
    let mut ticks = Ticks::new(clock.as_ref());
    for start in (0..agents.len()).step_by(block) {
        stop_if(src)?;
        let slots = start..(start + block).min(agents.len());
        lanes.start = start;
        lanes.lanes.iter_mut().for_each(Lane::clear);
        src.ticks(slots.clone(), &mut lanes);
        for slot in slots {
            let lane = &lanes.lanes[slot - start];
            if slot > 0 {
                w.buf.push(b',');
            }
            w.buf.extend_from_slice(b"{\"agent\":");
            uint(&mut w.buf, u64::from(agents[slot]));
            w.buf.extend_from_slice(b",\"first_tick\":");
            uint(&mut w.buf, lane.serials.first().copied().unwrap_or(from));
            w.buf.extend_from_slice(b",\"ticks\":[");
            ticks.begin();
            for (k, &serial) in lane.serials.iter().enumerate() {
                ticks.tick(&mut w, serial, lane.words(k))?;
            }
            ticks.end(&mut w.buf);
            w.buf.push(b']');
            let mut last = None;
            for (k, &serial) in lane.serials.iter().enumerate() {
                let head = lane.words(k);
                if input_changed(&mut last, (head[2], head[3])) {
                    w.buf
                        .extend_from_slice(if k == 0 { b",\"inputs\":[" } else { b"," });
                    uint(&mut w.buf, serial);
                    for mask in [head[2], head[3]] {
                        w.buf.push(b',');
                        if mask == 0 {
                            w.buf.push(b'0');
                        } else {
                            w.buf.extend_from_slice(numbers::hex(mask).text());
                        }
                    }
                }
            }
            if !lane.serials.is_empty() {
                w.buf.push(b']');
            }
            w.buf.push(b'}');
            counts.push(lane.serials.len());
        }
    }
    w.buf.push(b']');
    drop(lanes);
    let mut values: Vec<Values> = (0..block).map(|_| Values::default()).collect();
    let mut places = alloc_crate::vec![0; block];
    let mut any = false;
    for start in (0..agents.len()).step_by(block) {
        stop_if(src)?;
        let slots = start..(start + block).min(agents.len());
        for (k, slot) in slots.clone().enumerate() {
            values[k].reset(counts[slot]);
            places[k] = 0;
        }
        src.values(slots.clone(), &mut |slot, serial, recorded| {
            let k = slot - start;
            if let Some((recorded, over)) = recorded {
                values[k].add(places[k], serial, recorded, over);
            }
            places[k] += 1;
        });
        for (k, slot) in slots.enumerate() {
            if values[k].any() {
                w.buf
                    .extend_from_slice(if any { b"," } else { b",\"values\":[" });
                any = true;
                values[k].write(&mut w.buf, agents[slot], src.names())?;
                w.spill()?;
            }
        }
    }
    if any {
        w.buf.push(b']');
    }
    if let Some(clock) = &clock {
        w.buf.extend_from_slice(b",\"clock\":");
        serde_json::to_writer(&mut w.buf, clock)?;
    }
    w.buf.push(b'}');
    w.out.write_all(&w.buf)?;
    w.out.flush()
}

fn stop_if(src: &impl Source) -> io::Result<()> {
    if src.stopped() {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "the recording was given up",
        ));
    }
    Ok(())
}

/// The kept ticks of a block of agents, as a [`Source`] reads them.
pub(crate) struct Lanes {
    /// The block's first slot.
    start: usize,
    lanes: Vec<Lane>,
}

impl Lanes {
    /// Takes a tick of `slot` (of the block) of frame `serial`, after the
    /// slot's ticks taken so far: its words are to be appended to the
    /// vector returned.
    pub(crate) fn tick(&mut self, slot: usize, serial: u64) -> &mut Vec<u64> {
        let lane = &mut self.lanes[slot - self.start];
        lane.serials.push(serial);
        lane.starts.push(lane.all.len());
        &mut lane.all
    }
}

/// The kept ticks of one agent of a block, oldest first.
#[derive(Default)]
struct Lane {
    serials: Vec<u64>,
    /// Where each tick's words start in `all`.
    starts: Vec<usize>,
    all: Vec<u64>,
}

impl Lane {
    fn clear(&mut self) {
        self.serials.clear();
        self.starts.clear();
        self.all.clear();
    }

    /// The words of its `k`-th tick.
    fn words(&self, k: usize) -> &[u64] {
        let end = self.starts.get(k + 1).copied().unwrap_or(self.all.len());
        &self.all[self.starts[k]..end]
    }
}

/// The text being written: gathered in `buf`, handed to `out` in pieces
/// of about [`SPILL`] bytes.
struct Sink<W> {
    buf: Vec<u8>,
    out: W,
}

impl<W: Write> Sink<W> {
    fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= SPILL {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}
