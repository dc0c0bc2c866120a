//! The schedule's backlog: a queue of agents with room for the crowd.

use alloc::vec::Vec;

use super::buckets::NIL;

/// A queue of agents with room for the whole crowd.
#[derive(Clone, Debug)]
pub(super) struct Ring {
    slots: Vec<u32>,
    head: usize,
    pub(super) len: usize,
}

impl Ring {
    pub(super) fn new(agents: usize) -> Self {
        Ring {
            slots: alloc::vec![NIL; agents],
            head: 0,
            len: 0,
        }
    }

    pub(super) fn push(&mut self, i: u32) {
        let n = self.slots.len();
        debug_assert!(self.len < n);
        let mut at = self.head + self.len;
        if at >= n {
            at -= n;
        }
        self.slots[at] = i;
        self.len += 1;
    }

    /// The agent that goes first, if any.
    pub(super) fn front(&self) -> Option<u32> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    pub(super) fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let i = self.slots[self.head];
        self.head += 1;
        if self.head == self.slots.len() {
            self.head = 0;
        }
        self.len -= 1;
        Some(i)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (back, front) = self.slots.split_at(self.head);
        front.iter().chain(back).take(self.len).copied()
    }

    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}
