//! Reading the kept ticks back, for the export and the live view.

use super::*;

impl FlightRecorder {
    /// The ticks kept for watched agent number `slot` (in watch order): its
    /// agent index, the serial of its first kept tick (or of the first kept
    /// frame if it has none), and each kept tick's words.
    pub(crate) fn ticks_of(&self, slot: usize) -> (u32, u64, impl Iterator<Item = TickWords<'_>>) {
        let from = self.frames.saturating_sub(self.capacity.ticks as u64);
        let first = (from..self.frames)
            .find(|&s| self.tick_at(slot, s).is_some())
            .unwrap_or(from);
        (self.agent_of[slot], first, self.ticks_since(slot, from))
    }

    /// The kept ticks of watched agent `slot` from frame `serial` on: the
    /// live view streams these. It looks at those frames only.
    pub(crate) fn ticks_since(
        &self,
        slot: usize,
        serial: u64,
    ) -> impl Iterator<Item = TickWords<'_>> {
        let from = self
            .frames
            .saturating_sub(self.capacity.ticks as u64)
            .max(serial);
        (from..self.frames).filter_map(move |s| self.tick_at(slot, s))
    }

    /// Hands `each` the kept ticks of the watched agents `slots` (slot and
    /// words), frame by frame and in slot order in a frame: in the order
    /// they lie in memory, for a block of slots.
    pub(crate) fn frame_ticks(
        &self,
        slots: core::ops::Range<usize>,
        mut each: impl FnMut(usize, TickWords<'_>),
    ) {
        let from = self.frames.saturating_sub(self.capacity.ticks as u64);
        for serial in from..self.frames {
            let f = (serial % self.capacity.ticks as u64) as usize;
            let row = &self.offsets[f * self.lanes..(f + 1) * self.lanes][slots.clone()];
            let frame = &self.words[f * self.frame_words..(f + 1) * self.frame_words];
            for (slot, &off) in slots.clone().zip(row) {
                if off != NONE {
                    let words = &frame[off as usize..];
                    each(slot, TickWords { serial, words });
                }
            }
        }
    }

    /// The agent of each watch slot.
    pub(crate) fn agents(&self) -> &[u32] {
        &self.agent_of
    }

    /// The values watched agent `slot` recorded in frame `serial`, if any.
    pub(crate) fn data_at(
        &self,
        slot: usize,
        serial: u64,
    ) -> Option<(Vec<(usize, DataValue)>, bool)> {
        let data = self.data.as_ref()?;
        let f = (serial % self.capacity.ticks as u64) as usize;
        data.read(f * self.lanes + slot)
    }

    /// The tick of watched agent `slot` in frame `serial`, if it is kept.
    fn tick_at(&self, slot: usize, serial: u64) -> Option<TickWords<'_>> {
        let f = (serial % self.capacity.ticks as u64) as usize;
        let off = self.offsets[f * self.lanes + slot];
        (off != NONE).then(|| TickWords {
            serial,
            words: &self.words[f * self.frame_words + off as usize..(f + 1) * self.frame_words],
        })
    }
}
