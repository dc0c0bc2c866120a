//! The schedule's buckets: for each period in use, one bucket per frame
//! of the period, holding the agents of that period whose phase it is.
//!
//! An agent of period `k` has the phase [`Schedule::phase`] and sits in
//! that bucket of its period's buckets for as long as its rate stays: the
//! bucket of frame `f` is `f % k`, so the agents due in a frame are the
//! members of one bucket per period, found without looking at any other
//! agent, and a tick moves no agent between buckets.
//!
//! A bucket is two lists threaded through the per-agent `next` and `prev`
//! arrays (allocated once, for the whole crowd): `sorted`, in index
//! order, and `fresh`, the agents added since the bucket last came up, in
//! the order they came. When the bucket comes up, [`Buckets::settle`]
//! sorts the fresh agents (O(m log m) in the m added) and merges them into
//! the sorted list, so a frame reads each bucket in index order. An agent
//! added above the sorted list's last index, with no fresh agent waiting,
//! goes straight to the end of the sorted list: setting a crowd's rates in
//! index order leaves nothing to merge.
//!
//! An agent that is due and waits (woken, or left by the budget) is
//! *parked*: out of its bucket, its class kept, so that a bucket's turn
//! walks only the agents that become due in it, never those still
//! waiting. It goes back into its bucket (the fresh list, or the sorted
//! list's end) when it ticks.

use alloc::vec::Vec;

use super::Schedule;

/// No agent: the end of a list.
pub(super) const NIL: u32 = u32::MAX;

/// In `prev`: the agent is parked, in no bucket while it is due (no
/// agent has this index: a crowd has fewer than [`NIL`] agents).
const PARKED: u32 = u32::MAX - 1;

/// One bucket: its two lists and how many agents they hold.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bucket {
    /// The first agent of the sorted list.
    pub(super) head: u32,
    tail: u32,
    fresh_head: u32,
    fresh_tail: u32,
    /// Agents in both lists.
    pub(super) len: u32,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        head: NIL,
        tail: NIL,
        fresh_head: NIL,
        fresh_tail: NIL,
        len: 0,
    };
}

/// The buckets of one period.
#[derive(Clone, Copy, Debug)]
pub(super) struct Class {
    /// The period, in frames.
    pub(super) period: u32,
    /// The index of its bucket 0 in [`Buckets::buckets`].
    first: u32,
    /// Agents of this period.
    members: u32,
}

/// Every period's buckets, and which agent is in which.
#[derive(Clone, Debug)]
pub(super) struct Buckets {
    /// The next agent in the agent's list.
    pub(super) next: Vec<u32>,
    /// The previous agent in the agent's list.
    prev: Vec<u32>,
    /// The agent's class (an index into `classes`); [`NIL`]: in none (it
    /// ticks only when woken).
    pub(super) class: Vec<u32>,
    /// Each period used so far, in the order first used.
    pub(super) classes: Vec<Class>,
    /// The classes that have agents, in no particular order.
    pub(super) active: Vec<u32>,
    buckets: Vec<Bucket>,
}

impl Buckets {
    /// `agents` agents in no bucket.
    pub(super) fn new(agents: usize) -> Self {
        Buckets {
            next: alloc::vec![NIL; agents],
            prev: alloc::vec![NIL; agents],
            class: alloc::vec![NIL; agents],
            classes: Vec::new(),
            active: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// The class of `period`, made (with its buckets) the first time.
    pub(super) fn class_of(&mut self, period: u32) -> u32 {
        if let Some(c) = self.classes.iter().position(|c| c.period == period) {
            return c as u32;
        }
        let first = self.buckets.len() as u32;
        // Exactly the period's buckets: what the docs say a period takes.
        self.buckets.reserve_exact(period as usize);
        self.buckets
            .extend(core::iter::repeat_n(Bucket::EMPTY, period as usize));
        self.classes.push(Class {
            period,
            first,
            members: 0,
        });
        self.active.reserve(self.classes.len() - self.active.len());
        (self.classes.len() - 1) as u32
    }

    /// The bucket of agent `i` in class `c`.
    #[inline]
    fn bucket_of(&self, i: u32, c: u32) -> usize {
        let class = self.classes[c as usize];
        (class.first + Schedule::phase(i as usize, class.period)) as usize
    }

    /// The bucket of class `c` that comes up in `frame`.
    #[inline]
    pub(super) fn due_bucket(&self, c: u32, frame: u64) -> usize {
        let class = self.classes[c as usize];
        class.first as usize + (frame % u64::from(class.period)) as usize
    }

    /// Bucket `b`.
    #[inline]
    pub(super) fn bucket(&self, b: usize) -> Bucket {
        self.buckets[b]
    }

    /// Puts agent `i`, in no class, into class `c`: into its bucket,
    /// unless it is parked.
    pub(super) fn insert(&mut self, i: u32, c: u32) {
        debug_assert_eq!(self.class[i as usize], NIL);
        self.class[i as usize] = c;
        let class = &mut self.classes[c as usize];
        class.members += 1;
        if class.members == 1 {
            self.active.push(c);
        }
        if self.prev[i as usize] != PARKED {
            self.push(i, c);
        }
    }

    /// Takes agent `i` out of its class, if it is in one (a parked agent
    /// stays parked).
    pub(super) fn remove(&mut self, i: u32) {
        let c = self.class[i as usize];
        if c == NIL {
            return;
        }
        if self.prev[i as usize] != PARKED {
            self.cut(i, c);
            self.prev[i as usize] = NIL;
        }
        self.class[i as usize] = NIL;
        let class = &mut self.classes[c as usize];
        class.members -= 1;
        if class.members == 0 {
            let at = self.active.iter().position(|&a| a == c);
            self.active.swap_remove(at.expect("an active class"));
        }
    }

    /// Takes agent `i` out of its bucket while it is due: it keeps its
    /// class, and its bucket's turns no longer walk past it. Parking a
    /// parked agent does nothing.
    pub(super) fn park(&mut self, i: u32) {
        if self.prev[i as usize] == PARKED {
            return;
        }
        let c = self.class[i as usize];
        if c != NIL {
            self.cut(i, c);
        }
        self.prev[i as usize] = PARKED;
        self.next[i as usize] = NIL;
    }

    /// Puts a parked agent back into its class's bucket (once it ticked);
    /// an agent not parked stays where it is.
    #[inline]
    pub(super) fn unpark(&mut self, i: u32) {
        if self.prev[i as usize] != PARKED {
            return;
        }
        self.prev[i as usize] = NIL;
        let c = self.class[i as usize];
        if c != NIL {
            self.push(i, c);
        }
    }

    /// Whether agent `i` is parked.
    #[cfg(test)]
    pub(super) fn parked(&self, i: u32) -> bool {
        self.prev[i as usize] == PARKED
    }

    /// Adds agent `i` of class `c` to its bucket: at the end of the sorted
    /// list when it goes there, else to the fresh list.
    fn push(&mut self, i: u32, c: u32) {
        let b = self.bucket_of(i, c);
        let bucket = &mut self.buckets[b];
        let (head, tail) = if bucket.fresh_head == NIL && (bucket.tail == NIL || bucket.tail < i) {
            (&mut bucket.head, &mut bucket.tail)
        } else {
            (&mut bucket.fresh_head, &mut bucket.fresh_tail)
        };
        let before = *tail;
        *tail = i;
        if before == NIL {
            *head = i;
        } else {
            self.next[before as usize] = i;
        }
        bucket.len += 1;
        self.prev[i as usize] = before;
        self.next[i as usize] = NIL;
    }

    /// Unlinks agent `i` from its bucket of class `c`.
    fn cut(&mut self, i: u32, c: u32) {
        let b = self.bucket_of(i, c);
        let (before, after) = (self.prev[i as usize], self.next[i as usize]);
        let bucket = &mut self.buckets[b];
        if before == NIL {
            if bucket.head == i {
                bucket.head = after;
            } else {
                bucket.fresh_head = after;
            }
        } else {
            self.next[before as usize] = after;
        }
        if after == NIL {
            if bucket.tail == i {
                bucket.tail = before;
            } else {
                bucket.fresh_tail = before;
            }
        } else {
            self.prev[after as usize] = before;
        }
        bucket.len -= 1;
    }

    /// Merges bucket `b`'s fresh agents into its sorted list, using
    /// `scratch` (with room for every agent) to sort them.
    pub(super) fn settle(&mut self, b: usize, scratch: &mut Vec<u32>) {
        let bucket = self.buckets[b];
        if bucket.fresh_head == NIL {
            return;
        }
        scratch.clear();
        let mut i = bucket.fresh_head;
        while i != NIL {
            scratch.push(i);
            i = self.next[i as usize];
        }
        scratch.sort_unstable();
        let (mut head, mut tail) = (bucket.head, bucket.tail);
        let (mut before, mut at) = (NIL, head);
        for &x in scratch.iter() {
            while at != NIL && at < x {
                before = at;
                at = self.next[at as usize];
            }
            self.prev[x as usize] = before;
            self.next[x as usize] = at;
            if before == NIL {
                head = x;
            } else {
                self.next[before as usize] = x;
            }
            if at == NIL {
                tail = x;
            } else {
                self.prev[at as usize] = x;
            }
            before = x;
        }
        let bucket = &mut self.buckets[b];
        bucket.head = head;
        bucket.tail = tail;
        bucket.fresh_head = NIL;
        bucket.fresh_tail = NIL;
    }

    /// The agents of bucket `b`'s sorted list, in order (for tests and
    /// snapshots; a frame walks `next` itself).
    #[cfg(test)]
    pub(super) fn sorted(&self, b: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = self.buckets[b].head;
        while i != NIL {
            out.push(i);
            i = self.next[i as usize];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{Buckets, NIL};

    /// Agents added out of order, and some removed from either list,
    /// come out of `settle` in index order, with the bucket's count right.
    #[test]
    fn settle_merges_fresh_agents_in_index_order() {
        // Agents whose phase of period 4 is 1.
        let mut b = Buckets::new(50);
        let c = b.class_of(4);
        assert_eq!(b.class_of(4), c);
        for i in [4u32, 12, 20, 38, 7, 33, 15, 41, 25, 28] {
            b.insert(i, c);
        }
        b.remove(38); // sorted list, tail
        b.remove(7); // fresh list, head
        b.remove(25); // fresh list, middle
        let due = b.due_bucket(c, 1);
        assert_eq!(b.bucket(due).len, 7);
        let mut scratch = Vec::with_capacity(50);
        b.settle(due, &mut scratch);
        assert_eq!(b.sorted(due), [4, 12, 15, 20, 28, 33, 41]);
        // Settled again: nothing to do; then one more at each end.
        b.settle(due, &mut scratch);
        b.insert(46, c);
        b.insert(38, c);
        b.settle(due, &mut scratch);
        assert_eq!(b.sorted(due), [4, 12, 15, 20, 28, 33, 38, 41, 46]);
        for i in b.sorted(due) {
            b.remove(i);
        }
        assert_eq!((b.bucket(due).len, b.bucket(due).head), (0, NIL));
        assert!(b.active.is_empty());
    }
}
