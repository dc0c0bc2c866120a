//! One agent's ticks, written as the recording holds them: whole, or
//! (compact) merged into runs of repeats where [`compact`](super::super::compact)
//! merges them, the choices made on the words as the `serde_json` values
//! would make them.

use alloc_crate::vec::Vec;
use std::io::{self, Write};

use super::Sink;
use super::numbers::{LINE, Line, Memo, Text, hex, uint};
use crate::export::Clock;
use crate::export::runs::Run;
use crate::recorder::{HEADER, NO_LEAF, value_payload};
use alloc_crate::boxed::Box;

/// A tick's header, read from its words.
struct Head {
    now: f64,
    leaf: u16,
    visited: u16,
    events: usize,
    levels: usize,
    flags: u8,
}

impl Head {
    fn of(words: &[u64]) -> Self {
        let h = words[1];
        Head {
            now: f64::from_bits(words[0]),
            leaf: h as u16,
            visited: (h >> 16) as u16,
            events: usize::from((h >> 32) as u16),
            levels: usize::from((h >> 48) as u8),
            flags: (h >> 56) as u8,
        }
    }
}

/// The words of a tick's events and of its path.
fn parts<'w>(words: &'w [u64], head: &Head) -> (&'w [u64], &'w [u64]) {
    let events = &words[HEADER..HEADER + head.events];
    let path = &words[HEADER + head.events..][..2 * head.levels];
    (events, path)
}

/// A path level's time active.
fn active(level: &[u64]) -> f32 {
    f32::from_bits((level[0] >> 32) as u32)
}

/// Whether two event words are the same in the recording: the decide
/// value of an `accept` (or of a `decide` that rejected) is compared as the number it is written as.
fn same_event(a: u64, b: u64) -> bool {
    if a as u32 != b as u32 {
        return false;
    }
    if !value_payload(a as u8, (a >> 8) as u8) {
        return a == b;
    }
    let (x, y) = (
        f32::from_bits((a >> 32) as u32),
        f32::from_bits((b >> 32) as u32),
    );
    x == y || (!x.is_finite() && !y.is_finite())
}

/// One agent's ticks, written one by one: whole, or (with a clock) each
/// tick that repeats the last whole one but for time merged into the run
/// after it, as [`compact`](super::super::compact) merges them.
pub(super) struct Ticks<'c> {
    clock: Option<&'c Clock>,
    /// Entries written for the agent so far.
    entries: usize,
    /// The last whole tick (its serial and words), when a run may follow
    /// it: its time and every time active are finite.
    base: Option<u64>,
    base_words: Vec<u64>,
    /// Whether `run` was started at the base: a tick may have joined it.
    started: bool,
    run: Run,
    actives: Vec<f32>,
    times: Memo,
    shorts: Memo,
    /// Room for a tick's text.
    line: Box<[u8; LINE]>,
}

impl<'c> Ticks<'c> {
    pub(super) fn new(clock: Option<&'c Clock>) -> Self {
        Ticks {
            clock,
            entries: 0,
            base: None,
            base_words: Vec::new(),
            started: false,
            run: Run::default(),
            actives: Vec::new(),
            times: Memo::new(),
            shorts: Memo::new(),
            line: Box::new([0; LINE]),
        }
    }

    /// Starts the next agent's ticks.
    pub(super) fn begin(&mut self) {
        self.entries = 0;
        self.base = None;
    }

    /// Takes in the tick of frame `serial` whose words are `words`.
    pub(super) fn tick<W: Write>(
        &mut self,
        w: &mut Sink<W>,
        serial: u64,
        words: &[u64],
    ) -> io::Result<()> {
        let Some(clock) = self.clock else {
            self.whole(&mut w.buf, serial, words);
            return w.spill();
        };
        let head = Head::of(words);
        let (_, path) = parts(words, &head);
        let runnable = head.now.is_finite() && path.chunks_exact(2).all(|l| active(l).is_finite());
        if runnable && self.repeats(serial, words, &head, clock) {
            if !self.started {
                // The base's run, made when a tick may join it.
                let base = Head::of(&self.base_words);
                let (_, p0) = parts(&self.base_words, &base);
                self.actives.clear();
                self.actives.extend(p0.chunks_exact(2).map(active));
                self.run.start(base.now, &self.actives);
                self.started = true;
            }
            self.actives.clear();
            self.actives.extend(path.chunks_exact(2).map(active));
            if self.run.add(head.now, &self.actives) {
                return Ok(());
            }
        }
        self.end(&mut w.buf);
        self.whole(&mut w.buf, serial, words);
        self.base = runnable.then_some(serial);
        self.started = false;
        self.base_words.clear();
        self.base_words.extend_from_slice(words);
        w.spill()
    }

    /// The ticks of the run after the base, the base included.
    fn run_len(&self) -> usize {
        if self.started { self.run.len() } else { 1 }
    }

    /// Whether the tick (runnable) repeats the base `k` serials later, at
    /// the clock's time, but for the time its levels were active.
    fn repeats(&self, serial: u64, words: &[u64], head: &Head, clock: &Clock) -> bool {
        let Some(s0) = self.base else {
            return false;
        };
        let base = Head::of(&self.base_words);
        let (e0, p0) = parts(&self.base_words, &base);
        let (e, p) = parts(words, head);
        serial == s0 + self.run_len() as u64
            && clock.at(serial) == Some(head.now)
            && (base.leaf, base.visited, base.flags) == (head.leaf, head.visited, head.flags)
            && e0.len() == e.len()
            && e0.iter().zip(e).all(|(&a, &b)| same_event(a, b))
            && p0.len() == p.len()
            && p0
                .chunks_exact(2)
                .zip(p.chunks_exact(2))
                .all(|(a, b)| a[0] as u32 == b[0] as u32 && a[1] == b[1])
    }

    /// Writes the run after the base, if any: `[n, [since, …]]`.
    pub(super) fn end(&mut self, buf: &mut Vec<u8>) {
        let n = self.run_len() - 1;
        if self.base.is_none() || n == 0 {
            return;
        }
        buf.extend_from_slice(b",[");
        uint(buf, n as u64);
        buf.extend_from_slice(b",[");
        for (i, &since) in self.run.since().iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            self.times.float(buf, since);
        }
        buf.extend_from_slice(b"]]");
        self.entries += 1;
        // The run is written: nothing more joins it.
        self.base = None;
    }

    /// Writes the tick whole: `[serial, now, leaf, visited, flags, path,
    /// events]`. On the stack when its text surely fits a [`Line`] (most
    /// ticks), else straight into `out`.
    fn whole(&mut self, out: &mut Vec<u8>, serial: u64, words: &[u64]) {
        let head = Head::of(words);
        let (events, path) = parts(words, &head);
        if self.entries > 0 {
            out.push(b',');
        }
        self.entries += 1;
        let (times, shorts) = (&mut self.times, &mut self.shorts);
        // Numbers take 24 bytes at most; a header's five and its marks, a
        // level's four and an event's four fit these.
        if 160 + 112 * head.levels + 112 * events.len() <= LINE {
            let mut line = Line::new(&mut self.line);
            whole(&mut line, times, shorts, serial, &head, events, path);
            out.extend_from_slice(line.text());
        } else {
            whole(out, times, shorts, serial, &head, events, path);
        }
    }
}

/// The text of a whole tick.
#[inline(always)]
fn whole(
    buf: &mut impl Text,
    times: &mut Memo,
    shorts: &mut Memo,
    serial: u64,
    head: &Head,
    events: &[u64],
    path: &[u64],
) {
    buf.byte(b'[');
    uint(buf, serial);
    buf.byte(b',');
    times.float(buf, head.now);
    buf.byte(b',');
    if head.leaf == NO_LEAF {
        buf.bytes(b"null");
    } else {
        uint(buf, u64::from(head.leaf));
    }
    buf.byte(b',');
    uint(buf, u64::from(head.visited));
    buf.byte(b',');
    uint(buf, u64::from(head.flags));
    buf.bytes(b",[");
    for (i, level) in path.chunks_exact(2).enumerate() {
        if i > 0 {
            buf.byte(b',');
        }
        let (w0, mask) = (level[0], level[1]);
        uint(buf, u64::from(w0 as u16));
        buf.byte(b',');
        uint(buf, u64::from((w0 >> 16) as u16));
        buf.byte(b',');
        shorts.short(buf, active(level));
        buf.byte(b',');
        if mask == 0 {
            buf.byte(b'0');
        } else {
            buf.bytes(hex(mask).text());
        }
    }
    buf.bytes(b"],[");
    for (i, &e) in events.iter().enumerate() {
        if i > 0 {
            buf.byte(b',');
        }
        let kind = e as u8;
        uint(buf, u64::from(kind));
        buf.byte(b',');
        uint(buf, u64::from((e >> 8) as u8));
        buf.byte(b',');
        uint(buf, u64::from((e >> 16) as u16));
        buf.byte(b',');
        let arg = (e >> 32) as u32;
        if value_payload(kind, (e >> 8) as u8) {
            shorts.short(buf, f32::from_bits(arg));
        } else {
            uint(buf, u64::from(arg));
        }
    }
    buf.bytes(b"]]");
}
