//! The tracers that write one agent's tick into a frame, and the reader
//! that turns a kept tick's words back into events and a path.

use super::*;
use siblings::LaneWords;

/// Hands each event to the frame and to another tracer.
pub(super) struct Tee<'a, 'r, T> {
    pub(super) frame: &'a mut FrameTracer<'r>,
    pub(super) also: &'a mut T,
}

impl<T: Tracer> Tracer for Tee<'_, '_, T> {
    // Only when the other tracer takes `Unchanged` too.
    const UNCHANGED: bool = T::UNCHANGED;

    #[inline(always)]
    fn knows_unchanged(&self) -> bool {
        self.frame.knows_unchanged() && self.also.knows_unchanged()
    }

    #[inline(always)]
    fn event(&mut self, event: &Event) {
        self.frame.event(event);
        self.also.event(event);
    }
}

/// The [`Tracer`] that writes one tick's events into a frame.
pub(super) struct FrameTracer<'r> {
    /// Room for the events.
    pub(super) events: &'r mut [u64],
    /// Events written.
    pub(super) n: usize,
    pub(super) visited: u32,
    pub(super) flags: u8,
    /// The lane's earlier-sibling words (see `siblings.rs`).
    pub(super) siblings: LaneWords<'r>,
    /// They hold for this tick's agent, flags and path.
    pub(super) known: bool,
    /// From the tick's start until its walk sends something else than a
    /// visit, a running behavior's tick or a rejection: the rejections so
    /// far are written into the lane's words too.
    pub(super) collecting: bool,
    /// Rejections written into the lane's words in this tick.
    pub(super) collected: usize,
    /// Every rejection collected was by flags or timer, and fitted.
    pub(super) clean: bool,
    /// The walk ended collecting, clean: the words are the lane's now.
    pub(super) complete: bool,
}

impl<'r> FrameTracer<'r> {
    /// A tracer writing into `events`, with the lane's sibling words.
    #[inline(always)]
    pub(super) fn new(events: &'r mut [u64], siblings: LaneWords<'r>, known: bool) -> Self {
        FrameTracer {
            events,
            n: 0,
            visited: 0,
            flags: 0,
            siblings,
            known,
            collecting: false,
            collected: 0,
            clean: true,
            complete: false,
        }
    }

    /// A rejection by `by`, written as `w`, while collecting.
    #[inline(always)]
    fn collect(&mut self, w: u64, by: bt_core::Rejection) {
        let by_walk = matches!(
            by,
            bt_core::Rejection::Decision | bt_core::Rejection::Stimuli | bt_core::Rejection::Timer
        );
        match self.siblings.words.get_mut(self.collected) {
            Some(slot) if by_walk => {
                *slot = w;
                self.collected += 1;
            }
            _ => self.clean = false,
        }
    }

    /// The lane's words of the earlier siblings on the first `levels`
    /// levels, written as if tested again.
    #[inline(always)]
    fn unchanged(&mut self, levels: u8) {
        self.collecting = false;
        let len = self.siblings.len;
        let room = self.events.len() - self.n;
        if levels + 1 >= self.siblings.depth && len <= room {
            self.events[self.n..self.n + len].copy_from_slice(&self.siblings.words[..len]);
            self.n += len;
            return;
        }
        self.unchanged_some(levels);
    }

    /// [`unchanged`](Self::unchanged) for fewer levels than the path
    /// has, or with too little room left.
    #[cold]
    #[inline(never)]
    fn unchanged_some(&mut self, levels: u8) {
        for i in 0..self.siblings.len {
            let w = self.siblings.words[i];
            let item = usize::from((w >> 16) as u16);
            if self.siblings.depth_of[item] <= levels {
                self.push(w);
            }
        }
    }
}

impl FrameTracer<'_> {
    #[inline(always)]
    pub(super) fn push(&mut self, w: u64) {
        if let Some(slot) = self.events.get_mut(self.n) {
            *slot = w;
            self.n += 1;
        } else {
            self.flags |= TRUNCATED;
        }
    }
}

impl Tracer for FrameTracer<'_> {
    const UNCHANGED: bool = true;

    #[inline(always)]
    fn knows_unchanged(&self) -> bool {
        self.known
    }

    #[inline(always)]
    fn event(&mut self, event: &Event) {
        let w = match *event {
            Event::Start { .. } => {
                self.collecting = true;
                self.collected = 0;
                self.clean = true;
                return;
            }
            Event::Visit { .. } | Event::Ticked { running: true, .. } => return,
            Event::Idle => {
                self.collecting = false;
                return;
            }
            Event::End { visited, .. } => {
                self.visited = visited;
                if self.collecting {
                    self.collecting = false;
                    self.complete = self.clean;
                }
                return;
            }
            Event::Unchanged { levels } => return self.unchanged(levels),
            Event::Rejected { node, by } => {
                let w = word(Kind::Rejected, rejection_code(by), node.index, 0);
                if self.collecting {
                    self.collect(w, by);
                }
                return self.push(w);
            }
            Event::Decided { node, value } => word(Kind::Decided, 0, node.index, value.to_bits()),
            Event::Preempt { group, by } => {
                word(Kind::Preempt, 0, group.index, u32::from(by.index.0))
            }
            Event::Activated { node, .. } => word(Kind::Activated, 0, node.index, 0),
            Event::ActivateFailed { node, .. } => word(Kind::ActivateFailed, 0, node.index, 0),
            Event::Ticked { node, .. } => word(Kind::Ended, 0, node.index, 0),
            Event::Deactivated { node, why } => {
                word(Kind::Deactivated, why_code(why), node.index, 0)
            }
            Event::Redecide { group, failed, .. } => {
                word(Kind::Redecide, 0, group.index, u32::from(failed.index.0))
            }
            Event::SubsetViolation { group } => word(Kind::SubsetViolation, 0, group.index, 0),
            Event::Launched { node, action, .. } => {
                word(Kind::Launched, 0, node.index, action.code)
            }
            Event::Cancelled { node, ticket } => {
                let slot = ticket.slot().min(usize::from(u8::MAX)) as u8;
                word(Kind::Cancelled, slot, node.index, ticket.serial())
            }
            Event::ActionReported { node, state } => {
                let code = match state {
                    bt_core::ActionState::None => 0,
                    bt_core::ActionState::Pending => 1,
                    bt_core::ActionState::Succeeded => 2,
                    bt_core::ActionState::Failed => 3,
                };
                word(Kind::ActionReported, code, node.index, 0)
            }
            Event::RedecideLimit { group } => word(Kind::RedecideLimit, 0, group.index, 0),
            Event::Jump { from, to } => word(Kind::Jump, 0, from.index, u32::from(to.index.0)),
            _ => word(Kind::Other, 0, ItemIdx(0), 0),
        };
        self.collecting = false;
        self.push(w);
    }
}

/// One kept tick's words, for the export.
#[derive(Clone, Copy)]
pub(crate) struct TickWords<'r> {
    /// The frame's serial number (0 for the first).
    pub serial: u64,
    /// From the tick's header to the end of its frame.
    pub(super) words: &'r [u64],
}

/// A kept tick, decoded.
pub(crate) struct TickView {
    pub serial: u64,
    pub now: f64,
    pub leaf: Option<u16>,
    pub visited: u16,
    pub flags: u8,
    /// (item, redecides, time active, mask) per level, root first.
    pub path: Vec<(u16, u16, f32, u64)>,
    /// (kind, code, item, payload) per event.
    pub events: Vec<(u8, u8, u16, u32)>,
}

impl<'r> TickWords<'r> {
    /// The tick of frame `serial` whose words start `words` (a copy made
    /// by [`own`](Self::own) will do).
    #[cfg(feature = "live")]
    pub fn new(serial: u64, words: &'r [u64]) -> Self {
        TickWords { serial, words }
    }

    /// The tick's own words: its header, events and path, and nothing of
    /// the ticks after it in the frame.
    #[cfg(feature = "live")]
    pub fn own(&self) -> &'r [u64] {
        let h = self.at(1);
        let events = usize::from((h >> 32) as u16);
        let levels = usize::from((h >> 48) as u8);
        let path = &self.words[2 + events..][..levels];
        let masks = path.iter().filter(|&&w| w & 1 << 31 != 0).count();
        let at = 2 + events + levels + masks;
        &self.words[..at]
    }

    /// The tick's time.
    pub fn now(&self) -> f64 {
        f64::from_bits(self.at(0))
    }

    fn at(&self, i: u64) -> u64 {
        self.words[i as usize]
    }

    pub fn decode(&self) -> TickView {
        let now = f64::from_bits(self.at(0));
        let h = self.at(1);
        let leaf = (h & 0xffff) as u16;
        let visited = (h >> 16) as u16;
        let events = u64::from((h >> 32) as u16);
        let levels = u64::from((h >> 48) as u8);
        let flags = (h >> 56) as u8;
        let events_v = (0..events)
            .map(|i| {
                let w = self.at(2 + i);
                (w as u8, (w >> 8) as u8, (w >> 16) as u16, (w >> 32) as u32)
            })
            .collect();
        let mut masks = 2 + events + levels;
        let path = (0..levels)
            .map(|i| {
                let w0 = self.at(2 + events + i);
                let mask = if w0 & 1 << 31 != 0 {
                    masks += 1;
                    self.at(masks - 1)
                } else {
                    0
                };
                (
                    w0 as u16,
                    (w0 >> 16) as u16 & MAX_REDECIDES,
                    f32::from_bits((w0 >> 32) as u32),
                    mask,
                )
            })
            .collect();
        TickView {
            serial: self.serial,
            now,
            leaf: (leaf != NO_LEAF).then_some(leaf),
            visited,
            flags,
            path,
            events: events_v,
        }
    }
}
