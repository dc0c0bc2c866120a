//! The tree's tunables as the recorder sees them: the values in effect
//! and every change put in effect, with the frame it took effect at, so
//! that a recording says which values each of its ticks read.
//!
//! The recorder learns the crowd's shared state from the memories it
//! ticks ([`AgentMemory::shared`](bt_core::AgentMemory::shared)). At the
//! start of each frame (and after a crowd's tick) it loads the count of
//! changes put in effect ([`TreeShared::tuning_changes`]); only when that
//! moved does it read the values and log those that differ. A change is
//! put in effect at the start of a crowd's tick, so the frame that sees it
//! first is the first whose ticks read it.

use alloc_crate::collections::VecDeque;
use alloc_crate::sync::Arc;
use alloc_crate::vec::Vec;

use bt_core::{TreeShared, Tunables};

/// Changes the log has room for from the start; more grow it (in a frame
/// where a value changed, never in another).
const ROOM: usize = 64;

/// One change put in effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// The first frame whose ticks read the new value.
    pub(crate) serial: u64,
    /// The tunable's place in the table.
    pub(crate) index: usize,
    /// The value before, and after, as bits.
    pub(crate) from: u64,
    pub(crate) to: u64,
}

/// The values of the tree's tunables and the changes of the frames kept.
#[derive(Clone, Debug)]
pub(crate) struct TuneLog {
    /// The tree's table, if it has one.
    pub(crate) table: Option<&'static Tunables>,
    /// The crowd's shared state, once a tick showed it.
    pub(crate) shared: Option<Arc<TreeShared>>,
    /// [`TreeShared::tuning_changes`] at the last look (`u64::MAX`: look
    /// at the values whatever it says).
    count: u64,
    /// The values in effect at the last look, as bits, in the table's
    /// order (the defaults until a shared state is seen).
    pub(crate) now: Vec<u64>,
    /// The changes after the first frame kept, oldest first.
    pub(crate) changes: VecDeque<Change>,
    /// Changes logged so far, kept or not.
    pub(crate) logged: u64,
}

impl TuneLog {
    /// The log of a tree with `table`: its defaults, no change.
    pub(crate) fn new(table: Option<&'static Tunables>) -> Self {
        let decls = table.map_or(&[][..], Tunables::decls);
        TuneLog {
            table: table.filter(|t| !t.is_empty()),
            shared: None,
            count: u64::MAX,
            now: decls.iter().map(|d| d.default).collect(),
            changes: VecDeque::with_capacity(if decls.is_empty() { 0 } else { ROOM }),
            logged: 0,
        }
    }

    /// Takes `shared` as the crowd's shared state when it is a new one of
    /// the tree's (its values are then read at the next look).
    #[inline]
    pub(crate) fn learn(&mut self, shared: Option<&Arc<TreeShared>>) {
        let (Some(table), Some(shared)) = (self.table, shared) else {
            return;
        };
        if self.shared.as_ref().is_some_and(|s| Arc::ptr_eq(s, shared)) {
            return;
        }
        self.learn_new(table, shared);
    }

    #[cold]
    fn learn_new(&mut self, table: &'static Tunables, shared: &Arc<TreeShared>) {
        if shared.tunables().is_some_and(|t| core::ptr::eq(t, table)) {
            self.shared = Some(Arc::clone(shared));
            self.count = u64::MAX;
        }
    }

    /// Puts the changes staged on the crowd's shared state in effect, as a
    /// crowd's tick does when it starts.
    #[inline]
    pub(crate) fn apply(&self) {
        if let Some(shared) = &self.shared {
            shared.apply_tuning();
        }
    }

    /// Looks at the values in effect: when some changed since the last
    /// look, logs each change as taking effect at frame `serial`.
    #[inline]
    pub(crate) fn look(&mut self, serial: u64) {
        if let Some(shared) = &self.shared
            && shared.tuning_changes() != self.count
        {
            self.read(serial);
        }
    }

    #[cold]
    fn read(&mut self, serial: u64) {
        let Some(shared) = &self.shared else { return };
        self.count = shared.tuning_changes();
        for (index, now) in self.now.iter_mut().enumerate() {
            let Some(bits) = shared.tuned_bits(index) else {
                continue;
            };
            if bits != *now {
                self.changes.push_back(Change {
                    serial,
                    index,
                    from: *now,
                    to: bits,
                });
                self.logged += 1;
                *now = bits;
            }
        }
    }

    /// Lets go of the changes at or before frame `first`, the first kept:
    /// the values in effect there hold them.
    #[inline]
    pub(crate) fn trim(&mut self, first: u64) {
        while self.changes.front().is_some_and(|c| c.serial <= first) {
            self.changes.pop_front();
        }
    }

    /// The values in effect at frame `first` (the values now, the changes
    /// after it undone), and the changes after it, oldest first.
    pub(crate) fn since(&self, first: u64) -> (Vec<u64>, Vec<Change>) {
        let mut start = self.now.clone();
        let after: Vec<Change> = self
            .changes
            .iter()
            .filter(|c| c.serial > first)
            .copied()
            .collect();
        for c in after.iter().rev() {
            start[c.index] = c.from;
        }
        (start, after)
    }
}
