//! The tracers that write one agent's tick into a frame, and the reader
//! that turns a kept tick's words back into events and a path.

use super::*;
use crate::export::TreeInfo;
use bt_core::{Rejection, WalkStop};

/// Hands each event to the frame and to another tracer.
pub(super) struct Tee<'a, 'r, T> {
    pub(super) frame: &'a mut FrameTracer<'r>,
    pub(super) also: &'a mut T,
}

impl<T: Tracer> Tracer for Tee<'_, '_, T> {
    // A steady tick's events, when the other tracer takes them: the frame
    // then keeps them as any tick's.
    const STEADY: bool = T::STEADY;

    #[inline(always)]
    fn event(&mut self, event: &Event) {
        self.frame.event(event);
        self.also.event(event);
    }
}

/// The [`Tracer`] that writes one tick's events into a frame. It takes no
/// steady tick: one sends it nothing, any other [`Event::Walked`] in place
/// of its walk's events ([`TickWords::own_into`] puts them back).
pub(super) struct FrameTracer<'r> {
    /// Room for the events.
    pub(super) events: &'r mut [u64],
    /// Events written.
    pub(super) n: usize,
    pub(super) visited: u32,
    /// The header flags: [`STEADY`] until the tick sends its start or
    /// where its walk stopped.
    pub(super) flags: u8,
    /// The bits of the value of the last [`Event::Declined`], which the
    /// [`Rejection::Decide`] after it carries.
    pub(super) declined: u32,
}

impl<'r> FrameTracer<'r> {
    /// A tracer writing into `events`.
    #[inline(always)]
    pub(super) fn new(events: &'r mut [u64]) -> Self {
        FrameTracer {
            events,
            n: 0,
            visited: 0,
            flags: STEADY,
            declined: 0,
        }
    }

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
    const STEADY: bool = false;

    #[inline(always)]
    fn event(&mut self, event: &Event) {
        let w = match *event {
            Event::Start { .. } => {
                self.flags &= !STEADY;
                return;
            }
            Event::Visit { .. } | Event::Ticked { running: true, .. } | Event::Idle => return,
            Event::End { visited, .. } => {
                self.visited = visited;
                return;
            }
            Event::Walked { node, stop } => {
                self.flags &= !STEADY;
                walked_word(node.index, stop)
            }
            Event::Declined { value, .. } => {
                self.declined = value.to_bits();
                return;
            }
            Event::Rejected { node, by } => {
                let value = if by == Rejection::Decide {
                    self.declined
                } else {
                    0
                };
                word(Kind::Rejected, rejection_code(by), node.index, value)
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
    /// by [`own_into`](Self::own_into) will do).
    pub fn new(serial: u64, words: &'r [u64]) -> Self {
        TickWords { serial, words }
    }

    /// The tick's own words, as kept: its header, events and path, and
    /// nothing of the ticks after it in the frame (see
    /// [`own_into`](Self::own_into) for words that stand alone).
    #[cfg(feature = "live")]
    pub fn own(&self) -> &'r [u64] {
        let h = self.at(1);
        let events = usize::from((h >> 32) as u16);
        let levels = usize::from((h >> 48) as u8);
        &self.words[..HEADER + events + 2 * levels]
    }

    /// Appends the tick's own words to `out`, standing alone: its header,
    /// events and path, and nothing of the ticks after it in the frame.
    /// The events its walk of the active path sent, which it did not keep
    /// (all of a steady tick's), are put back, as they follow from its
    /// path in `tree` and its flags; a steady tick gets its count of
    /// visits.
    pub fn own_into(&self, tree: &TreeInfo, out: &mut Vec<u64>) {
        let h = self.at(1);
        let events = usize::from((h >> 32) as u16);
        let levels = usize::from((h >> 48) as u8);
        let flags = (h >> 56) as u8;
        let kept = &self.words[HEADER..HEADER + events];
        let path = &self.words[HEADER + events..][..2 * levels];
        let at = out.len();
        // Word by word below: the pieces are a few words long, shorter
        // than a call to copy them takes.
        out.reserve(HEADER + events + 2 * levels);
        out.extend_from_slice(&self.words[..HEADER]);
        let (walk, rest) = match kept.split_first() {
            // The whole path, its leaf visited.
            _ if flags & STEADY != 0 && levels > 0 => {
                let leaf = h as u16;
                let stop = WalkStop::At {
                    from: ItemIdx(leaf + 1),
                };
                (Some((ItemIdx(leaf), stop)), kept)
            }
            Some((&w, rest)) if w as u8 == WALKED => (Some(walked_of(w)), rest),
            _ => (None, kept),
        };
        if let Some((node, stop)) = walk {
            walk_words(tree, node, stop, self.at(2), self.at(3), out);
        }
        for &w in rest {
            out.push(w);
        }
        let n = (out.len() - at - HEADER).min(usize::from(u16::MAX)) as u64;
        let mut header = h & !(0xffff << 32 | u64::from(STEADY) << 56) | n << 32;
        if flags & STEADY != 0 {
            // The path and the siblings turned down.
            let visited = (levels as u64 + n).min(u64::from(u16::MAX));
            header = header & !(0xffff << 16) | visited << 16;
        }
        out[at + 1] = header;
        for &w in path {
            out.push(w);
        }
    }

    /// The tick's time.
    pub fn now(&self) -> f64 {
        f64::from_bits(self.at(0))
    }

    fn at(&self, i: usize) -> u64 {
        self.words[i]
    }

    /// The tick, decoded: its words must stand alone (see
    /// [`own_into`](Self::own_into)).
    pub fn decode(&self) -> TickView {
        let now = f64::from_bits(self.at(0));
        let h = self.at(1);
        let leaf = (h & 0xffff) as u16;
        let events = usize::from((h >> 32) as u16);
        let levels = usize::from((h >> 48) as u8);
        let flags = (h >> 56) as u8;
        debug_assert_eq!(flags & STEADY, 0, "a steady tick's own words stand alone");
        let visited = (h >> 16) as u16;
        let events_v = self.words[HEADER..HEADER + events]
            .iter()
            .map(|&w| (w as u8, (w >> 8) as u8, (w >> 16) as u16, (w >> 32) as u32))
            .collect();
        let path = self.words[HEADER + events..][..2 * levels]
            .chunks_exact(2)
            .map(|w| {
                let (w0, mask) = (w[0], w[1]);
                (
                    w0 as u16,
                    (w0 >> 16) as u16,
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

/// The word that stands for [`Event::Walked`] until the tick is read.
#[inline(always)]
fn walked_word(node: ItemIdx, stop: WalkStop) -> u64 {
    let (code, from): (u8, u16) = match stop {
        WalkStop::Before => (0, 0),
        WalkStop::Ended => (1, 0),
        WalkStop::At { from } => (2, from.0),
    };
    u64::from(WALKED) | u64::from(code) << 8 | u64::from(node.0) << 16 | u64::from(from) << 32
}

/// Where and how the walk of [`walked_word`]'s `w` stopped.
fn walked_of(w: u64) -> (ItemIdx, WalkStop) {
    let stop = match (w >> 8) as u8 {
        0 => WalkStop::Before,
        1 => WalkStop::Ended,
        _ => WalkStop::At {
            from: ItemIdx((w >> 32) as u16),
        },
    };
    (ItemIdx((w >> 16) as u16), stop)
}

/// Appends the event words of a walk that stopped at `node` as `stop`
/// says, with the tick's flags `decision` and `stimuli`: on each level
/// above `node`, in a prioritized group, every child before the one on
/// the path, turned down by the flag test it fails or, passing them, by
/// its timer (the walk stops at any other); then, at `node`, its end if
/// its behavior ended, or its children before the first the walk did not
/// turn down.
fn walk_words(
    tree: &TreeInfo,
    node: ItemIdx,
    stop: WalkStop,
    decision: u64,
    stimuli: u64,
    out: &mut Vec<u64>,
) {
    let flags = (decision, stimuli);
    let node = usize::from(node.0);
    above(tree, node, flags, out);
    match stop {
        WalkStop::Before => {}
        WalkStop::Ended => out.push(word(Kind::Ended, 0, ItemIdx(node as u16), 0)),
        WalkStop::At { from } => turned_down(tree, node, usize::from(from.0), flags, out),
    }
}

/// The rejections on the levels above item `i`, root first: every item
/// has one parent.
fn above(tree: &TreeInfo, i: usize, flags: (u64, u64), out: &mut Vec<u64>) {
    if let Some(p) = tree.items[i].parent {
        above(tree, p, flags, out);
        turned_down(tree, p, i, flags, out);
    }
}

/// The rejections of the children of `group` before item `before`, when
/// `group` is prioritized, with the tick's decision and stimuli `flags`.
fn turned_down(
    tree: &TreeInfo,
    group: usize,
    before: usize,
    flags: (u64, u64),
    out: &mut Vec<u64>,
) {
    let item = &tree.items[group];
    if item.policy != Some("prioritized") {
        return;
    }
    for &c in item.children.iter().take_while(|&&c| c < before) {
        let by = tree.preconditions[c]
            .flag_rejection(flags.0, flags.1)
            .unwrap_or(Rejection::Timer);
        out.push(word(
            Kind::Rejected,
            rejection_code(by),
            ItemIdx(c as u16),
            0,
        ));
    }
}
