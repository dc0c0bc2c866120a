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
//!
//! A frame that ticks one bucket alone reads it as a dense array: each
//! bucket's sorted list is copied, when it comes up changed, into
//! [`Buckets::listed`] ([`Buckets::listing`]), where the frame walks it as
//! a slice and fetches the agents ahead of their ticks without following
//! the list.
//!
//! Each bucket has a clock, the time of its last turn: an agent that
//! ticked in its bucket's turn has that time as its last tick time (its
//! entry in [`Buckets::last`] is NaN), so the turn gives all of them one
//! `dt` and writes no time per agent. An agent with a time of its own
//! (it ticked out of turn, joined the bucket since its turn, or the
//! budget made it late) is *loose*, counted in [`Bucket::loose`], until
//! it ticks in its bucket's turn again. An agent takes its time along
//! out of its bucket: one not in a bucket always has its own.
//!
//! The frame of an agent's last tick is kept the same way: a bucket keeps
//! the frame after its last turn ([`Bucket::after`]), and a loose agent
//! its own ([`Buckets::after`]), written where its own time is. A rate
//! change reads it ([`Schedule::set_rate`]).

use alloc::vec::Vec;

use super::Schedule;

/// No agent: the end of a list.
pub(super) const NIL: u32 = u32::MAX;

/// In `prev`: the agent is parked, in no bucket while it is due (no
/// agent has this index: a crowd has fewer than [`NIL`] agents).
const PARKED: u32 = u32::MAX - 1;

/// How many agents ahead of its tick a frame starts fetching an agent;
/// a bucket's listing is followed by as many readable entries.
pub(super) const AHEAD: usize = 16;

/// In [`Bucket::listed`]: the bucket changed since it was listed.
const STALE: usize = usize::MAX;

/// One bucket: its two lists, how many agents they hold, and its clock.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bucket {
    /// The first agent of the sorted list.
    pub(super) head: u32,
    tail: u32,
    fresh_head: u32,
    fresh_tail: u32,
    /// Agents in both lists.
    pub(super) len: u32,
    /// Agents in both lists with a last tick time of their own.
    pub(super) loose: u32,
    /// Where the sorted list starts in [`Buckets::listed`]; [`STALE`]
    /// when it changed since.
    listed: usize,
    /// The last tick time of its agents that are not loose.
    pub(super) clock: f64,
    /// The frame after its last turn (0: no turn yet).
    pub(super) after: u64,
}

impl Bucket {
    /// An empty bucket whose clock reads `clock`.
    const fn empty(clock: f64) -> Bucket {
        Bucket {
            head: NIL,
            tail: NIL,
            fresh_head: NIL,
            fresh_tail: NIL,
            len: 0,
            loose: 0,
            listed: STALE,
            clock,
            after: 0,
        }
    }
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
    /// The bucket whose turn the frame under way is ([`Buckets::take_turn`]).
    turn: u32,
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
    pub(super) buckets: Vec<Bucket>,
    /// When each agent last ticked; NaN: at its bucket's clock.
    pub(super) last: Vec<f64>,
    /// The frame after each agent's last tick (0: none since the schedule
    /// was made), when it has a time of its own; else its bucket's.
    after: Vec<u64>,
    /// The clock a new bucket starts with.
    start: f64,
    /// Buckets' sorted lists as dense arrays (room for two crowds, and
    /// [`AHEAD`] more): each bucket listed since it last changed, and the
    /// stale listings of others, up to `used`. Every entry is an agent.
    pub(super) listed: Vec<u32>,
    used: usize,
    /// How many times the listings started over (for tests).
    #[cfg(test)]
    pub(super) restarts: u32,
}

impl Buckets {
    /// `agents` agents in no bucket, which last ticked at `start`.
    pub(super) fn new(agents: usize, start: f64) -> Self {
        Buckets {
            next: alloc::vec![NIL; agents],
            prev: alloc::vec![NIL; agents],
            class: alloc::vec![NIL; agents],
            classes: Vec::new(),
            active: Vec::new(),
            buckets: Vec::new(),
            last: alloc::vec![start; agents],
            after: alloc::vec![0; agents],
            start,
            listed: alloc::vec![0; 2 * agents + AHEAD],
            used: 0,
            #[cfg(test)]
            restarts: 0,
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
        self.buckets.extend(core::iter::repeat_n(
            Bucket::empty(self.start),
            period as usize,
        ));
        self.classes.push(Class {
            period,
            first,
            members: 0,
            turn: first,
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

    /// The bucket of class `c` that comes up in `frame`, noted as the
    /// class's turn: the frame under way is `frame` until the next call.
    #[inline]
    pub(super) fn take_turn(&mut self, c: u32, frame: u64) -> usize {
        let b = self.due_bucket(c, frame);
        self.classes[c as usize].turn = b as u32;
        b
    }

    /// The bucket of class `c` whose turn the frame under way is.
    #[inline]
    pub(super) fn turn(&self, c: u32) -> usize {
        self.classes[c as usize].turn as usize
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
    /// list when it goes there, else to the fresh list. It comes with its
    /// own time, and stays loose unless that is the bucket's clock.
    fn push(&mut self, i: u32, c: u32) {
        let b = self.bucket_of(i, c);
        self.link(i, b);
        let bucket = &mut self.buckets[b];
        let last = &mut self.last[i as usize];
        debug_assert!(
            !last.is_nan(),
            "an agent out of its bucket has its own time"
        );
        if last.to_bits() == bucket.clock.to_bits() && self.after[i as usize] == bucket.after {
            *last = f64::NAN;
        } else {
            bucket.loose += 1;
        }
    }

    /// Links agent `i` into bucket `b`'s lists (as [`push`](Self::push),
    /// its time left to the caller).
    #[inline]
    fn link(&mut self, i: u32, b: usize) {
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
        bucket.listed = STALE;
        self.prev[i as usize] = before;
        self.next[i as usize] = NIL;
    }

    /// Unlinks agent `i` from its bucket of class `c`; it takes its last
    /// tick time along.
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
        bucket.listed = STALE;
        let last = &mut self.last[i as usize];
        if last.is_nan() {
            *last = bucket.clock;
            self.after[i as usize] = bucket.after;
        } else {
            bucket.loose -= 1;
        }
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
        bucket.listed = STALE;
    }

    /// Where bucket `b`'s sorted list (settled: its only list) starts in
    /// [`listed`](Self::listed), copied there if it changed since it was
    /// last: its `len` agents, in index order, then [`AHEAD`] more entries
    /// that are agents too.
    pub(super) fn listing(&mut self, b: usize) -> usize {
        let bucket = self.buckets[b];
        debug_assert_eq!(bucket.fresh_head, NIL);
        if bucket.listed != STALE {
            return bucket.listed;
        }
        let len = bucket.len as usize;
        if self.used + len + AHEAD > self.listed.len() {
            // Full of stale listings: start over, the others listed again
            // when they come up (each listing is at most a crowd, so at
            // least a crowd's worth was listed since the last time).
            for bucket in &mut self.buckets {
                bucket.listed = STALE;
            }
            self.used = 0;
            #[cfg(test)]
            {
                self.restarts += 1;
            }
        }
        let at = self.used;
        let mut i = bucket.head;
        for slot in &mut self.listed[at..at + len] {
            *slot = i;
            i = self.next[i as usize];
        }
        debug_assert_eq!(i, NIL);
        self.used += len;
        self.buckets[b].listed = at;
        at
    }

    /// The frame after agent `i`'s last tick (0: none since the schedule
    /// was made).
    pub(super) fn after(&self, i: u32) -> u64 {
        if self.last[i as usize].is_nan() {
            self.buckets[self.bucket_of(i, self.class[i as usize])].after
        } else {
            self.after[i as usize]
        }
    }

    /// When agent `i` last ticked.
    pub(super) fn time(&self, i: u32) -> f64 {
        let last = self.last[i as usize];
        if last.is_nan() {
            self.buckets[self.bucket_of(i, self.class[i as usize])].clock
        } else {
            last
        }
    }

    /// Agent `i` ticks at `now` (finite) in frame `f`, the frame under way: back
    /// into its bucket if it was parked, on the bucket's clock if it is
    /// the bucket's turn ([`turned`](Self::turned) sets the clock to `now`
    /// once the frame's ticks are done), else with `now` as its own time.
    /// Returns when it ticked before.
    #[inline(always)]
    pub(super) fn tick(&mut self, i: u32, now: f64, f: u64) -> f64 {
        let at = i as usize;
        let (c, last) = (self.class[at], self.last[at]);
        let parked = self.prev[at] == PARKED;
        if c == NIL {
            if parked {
                self.prev[at] = NIL;
            }
            self.last[at] = now;
            self.after[at] = f + 1;
            return last;
        }
        let b = self.bucket_of(i, c);
        if parked {
            self.link(i, b);
        }
        let in_turn = b == self.turn(c);
        let bucket = &mut self.buckets[b];
        // A parked agent has its own time and is not counted loose yet.
        let loose = !parked && !last.is_nan();
        if in_turn {
            bucket.loose -= u32::from(loose);
            self.last[at] = f64::NAN;
        } else {
            bucket.loose += u32::from(!loose);
            self.last[at] = now;
            self.after[at] = f + 1;
        }
        if last.is_nan() { bucket.clock } else { last }
    }

    /// Sets the clock of each bucket whose turn the frame under way, `f`,
    /// is to `now`: every agent of theirs that goes by it ticked in the
    /// frame.
    pub(super) fn turned(&mut self, now: f64, f: u64) {
        for k in 0..self.active.len() {
            let b = self.turn(self.active[k]);
            self.turned_one(b, now, f);
        }
    }

    /// Sets bucket `b`'s clock: its turn came in frame `f`, at `now`.
    #[inline]
    pub(super) fn turned_one(&mut self, b: usize, now: f64, f: u64) {
        let bucket = &mut self.buckets[b];
        bucket.clock = now;
        bucket.after = f + 1;
    }

    /// Gives every agent the time `last[i]` as its own, and the frame
    /// after its last tick `after[i]`.
    #[cfg(feature = "serde")]
    pub(super) fn set_times(&mut self, last: Vec<f64>, after: Vec<u64>) {
        debug_assert_eq!(last.len(), self.last.len());
        debug_assert_eq!(after.len(), self.last.len());
        self.last = last;
        self.after = after;
        for bucket in &mut self.buckets {
            bucket.loose = bucket.len;
        }
    }

    /// Checks the clocks' books: each bucket counts its loose agents, and
    /// only an agent in a bucket goes by its clock (for tests).
    #[cfg(test)]
    pub(super) fn check_clocks(&self) {
        let mut loose = alloc::vec![0u32; self.buckets.len()];
        for i in 0..self.last.len() as u32 {
            let (c, t) = (self.class[i as usize], self.last[i as usize]);
            if c == NIL || self.prev[i as usize] == PARKED {
                assert!(!t.is_nan(), "agent {i} out of its bucket goes by a clock");
            } else if !t.is_nan() {
                loose[self.bucket_of(i, c)] += 1;
            }
        }
        for (b, bucket) in self.buckets.iter().enumerate() {
            assert_eq!(bucket.loose, loose[b], "the loose agents of bucket {b}");
        }
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

    use super::{Bucket, Buckets, NIL};

    /// A bucket takes the 48 bytes the docs say a frame of a period takes.
    #[test]
    fn a_bucket_takes_48_bytes() {
        assert_eq!(core::mem::size_of::<Bucket>(), 48);
    }

    /// Agents added out of order, and some removed from either list,
    /// come out of `settle` in index order, with the bucket's count right.
    #[test]
    fn settle_merges_fresh_agents_in_index_order() {
        // Agents whose phase of period 4 is 1.
        let mut b = Buckets::new(50, 0.0);
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
