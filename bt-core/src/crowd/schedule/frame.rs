//! One frame of a scheduled crowd: which agents are due, which of them the
//! budget lets tick, and their ticks, in index order.

use super::buckets::{AHEAD, Buckets, NIL};
use super::{IDLE, Schedule};
use crate::crowd::{CrowdIds, CrowdReport, Member};
use crate::decl::TickInput;
use crate::interp::tick_member;
use crate::memory::AgentMemory;
use crate::raw::Places;
use crate::tree::Tree;

/// What a frame of [`tick_scheduled`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct FrameReport {
    /// The frame's number ([`Schedule::frame`] before it ran).
    pub frame: u64,
    /// Agents due in the frame: those whose turn it was, those woken for
    /// it, and those left waiting by earlier frames.
    pub due: u32,
    /// Agents ticked: at most the budget (the same as `crowd.ticked`).
    pub ticked: u32,
    /// Due agents the budget left waiting for a later frame.
    pub waiting: u32,
    /// The most frames an agent ticked in this frame had waited past the
    /// frame it was due in (0: every agent ticked on time).
    pub longest_wait: u64,
    /// What the ticks did, as [`tick_all`](crate::tick_all) reports it.
    pub crowd: CrowdReport,
}

/// Ticks the agents of a crowd that `schedule` says are due in this frame,
/// at most its budget of them, in index order: agent `i` with
/// `memories[i]` and the input `input(i, &mut agents[i], dt)`, where `dt`
/// is the time from the agent's last tick (or the schedule's start) to
/// `now`. Build the input with that `now` and `dt` (a debug build checks
/// it), and age the agent's stimuli there by that `dt`
/// (`|_, a, dt| TickInput::new(now, dt).with_stimuli(a.senses.update(dt))`),
/// so that a stimulus lasts as long in seconds whatever the agent's rate.
/// An agent's id is its index unless the input sets one, as in
/// [`tick_all`](crate::tick_all), with the same check of ids for a tree
/// with deferred actions.
///
/// Time stays exact for the agents that do not tick: timers and cooldowns
/// are stamped with absolute times and compared with the `now` of the
/// agent's next tick, so a skipped agent's timers run on as the clock
/// does. A clock that goes backwards gives a `dt` of 0, a step past
/// `f32`'s range (a clock jumping by 10^39 s) a `dt` of `f32::MAX`.
///
/// Which agents are due: those whose turn it is by their [`Rate`](super::Rate), those
/// woken for this frame, and those the budget left waiting in earlier
/// frames. With a budget, the frame takes them in the order they became
/// due: first those waiting from earlier frames (the longest waiting
/// first, by index among those due in one frame), then this frame's by
/// index; those it does not take wait. The agents taken tick in index
/// order, as `tick_all` would tick them, so that gates, cooldowns and
/// roles go to the same agents. Same rates, budget, wakes and inputs: the
/// same agents tick with the same `dt`, and make the same decisions.
///
/// The frame costs the agents it ticks and those that become due in it
/// (sorting the agents given a rate or ticked out of turn since their
/// bucket last came up, and copying a bucket that changed into the dense
/// array its turns are read from), not the crowd: an agent the budget leaves
/// waiting costs nothing more until its tick, and the woken beyond the
/// budget wait in index order as the wake calls left them (unless an
/// earlier frame's woken still wait: then they join the backlog). It
/// allocates nothing. [`Schedule`] has an example.
///
/// # Errors
/// Each agent's, in the report's `crowd`, as `tick_all` gives them. A
/// `now` that is not finite fails each agent the frame takes with
/// [`TickError::InvalidInput`](crate::TickError::InvalidInput) naming
/// `now`; their last tick times are kept.
///
/// # Panics
/// If the slices and the schedule differ in length, or a callback panics;
/// in a debug build, if the closure builds an input with another `now`
/// or `dt` than it was given. A panic leaves the schedule consistent: the frame counts as run, the
/// panicking agent as ticked (its memory is left idle), and the agents
/// the frame took and had not ticked yet stay due, first in the next
/// frame.
#[inline]
pub fn tick_scheduled<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    schedule: &mut Schedule,
    now: f64,
    input: impl FnMut(usize, &mut A, f32) -> TickInput,
) -> FrameReport {
    tick_scheduled_by(tree, agents, memories, schedule, now, input, Plain)
}

/// How a scheduled frame ticks each agent it takes, for a caller that
/// wraps the tick (a flight recorder records the watched ones).
#[doc(hidden)]
pub trait ScheduledTick<A: 'static, const L: usize, const S: usize, const N: usize> {
    /// Ticks agent `index` (its id already checked) as
    /// [`tick_all`](crate::tick_all) ticks it, adding the tick to
    /// `report` once its callbacks have run: a frame whose callback
    /// panics counts the agents that ticked by the report.
    fn tick(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        report: &mut CrowdReport,
        index: usize,
    );
}

/// The tick itself.
struct Plain;

impl<A: 'static, const L: usize, const S: usize, const N: usize> ScheduledTick<A, L, S, N>
    for Plain
{
    #[inline(always)]
    fn tick(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        report: &mut CrowdReport,
        index: usize,
    ) {
        tick_member(tree, agent, memory, input, &mut Member(report, index));
    }
}

/// [`tick_scheduled`], each tick made by `hook`.
#[doc(hidden)]
#[inline(always)]
pub fn tick_scheduled_by<A: 'static, H, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    schedule: &mut Schedule,
    now: f64,
    input: impl FnMut(usize, &mut A, f32) -> TickInput,
    mut hook: H,
) -> FrameReport
where
    H: ScheduledTick<A, L, S, N>,
{
    assert_eq!(
        agents.len(),
        memories.len(),
        "tick_scheduled: one memory per agent"
    );
    assert_eq!(
        agents.len(),
        schedule.len(),
        "tick_scheduled: the schedule's crowd and the agents differ in length"
    );
    crate::crowd::apply_tuning(tree, memories);
    schedule.settle_rates();
    let f = schedule.frame;
    schedule.frame += 1;
    let cap = schedule.budget.map_or(usize::MAX, |b| b as usize);
    // Each period's bucket whose turn it is, settled into index order.
    let (mut turns, mut only, mut due) = (0, 0, 0);
    let Schedule {
        buckets, scratch, ..
    } = &mut *schedule;
    for k in 0..buckets.active.len() {
        let b = buckets.take_turn(buckets.active[k], f);
        buckets.settle(b, &mut scratch[2]);
        let len = buckets.bucket(b).len as usize;
        if len > 0 {
            turns += 1;
            only = b;
            due += len;
        }
    }
    let fast = turns == 1 && schedule.buckets.bucket(only).loose == 0;
    if tree.shape.actions > 0
        || schedule.waiting() > 0
        || !schedule.woken.is_empty()
        || turns > 1
        || due > cap
        || !now.is_finite()
        || (turns == 1 && !fast)
    {
        let report = by_order(schedule, f, cap);
        let run = Run {
            tree,
            agents,
            memories,
            report: CrowdReport::default(),
            ids: CrowdIds::new(),
            launching: tree.shape.actions > 0,
            hook,
        };
        return tick_order(schedule, f, now, input, run, report);
    }
    if turns == 0 {
        return FrameReport {
            frame: f,
            ..FrameReport::default()
        };
    }
    // One bucket's turn, each of its agents at the bucket's clock, and
    // nobody else due: its listing is the frame, ticked as `tick_all`
    // ticks a slice, with one `dt` and everything in locals.
    let mut input = input;
    let Schedule {
        buckets,
        waiting,
        backlog,
        ..
    } = schedule;
    let at = buckets.listing(only);
    let m = due;
    let dt = step(now, buckets.bucket(only).clock);
    let mut rest = TurnRest {
        buckets,
        waiting,
        backlog,
        bucket: only,
        at,
        len: m,
        frame: f,
        now,
        done: false,
        report: CrowdReport::default(),
    };
    // The agents of a bucket are spread over the crowd, where the CPU
    // cannot guess the next address: fetch them `AHEAD` agents ahead.
    // The listing is followed by `AHEAD` entries that are agents too,
    // fetched for nothing at the end, which costs less than a test.
    // Every index is checked once, before the walk, which then indexes
    // the two slices without a check.
    let listed = &rest.buckets.listed[at..at + m + AHEAD];
    let report = &mut rest.report;
    let walked = Places::new(listed, agents, memories).and_then(|places| {
        places.walk(
            m,
            AHEAD,
            |agent, memory| {
                crate::raw::prefetch_lines(agent);
                memory.prefetch();
            },
            |i, agent, memory| {
                let input = input(i, agent, dt).or_agent(i);
                debug_assert!(same_time(&input, now, dt), "{}", WRONG_TIME);
                hook.tick(tree, agent, memory, &input, report, i);
            },
        )
    });
    assert!(walked.is_some(), "a bucket lists an agent past the crowd");
    rest.done = true;
    let report = core::mem::take(&mut rest.report);
    FrameReport {
        frame: f,
        due: due as u32,
        ticked: report.ticked,
        waiting: 0,
        longest_wait: 0,
        crowd: report,
    }
}

/// What a frame's input closure was given and must build the input with.
const WRONG_TIME: &str = "tick_scheduled: the input closure must build the input with the \
                          frame's `now` and the agent's `dt` it was given";

/// Whether `input` has the clock reading `now` and the step `dt`.
fn same_time(input: &TickInput, now: f64, dt: f32) -> bool {
    input.now.to_bits() == now.to_bits() && input.dt.to_bits() == dt.to_bits()
}

/// The step from `last` to `now`: 0 for a clock gone back, and at most
/// `f32::MAX` (the most a tick takes) for a step past `f32`'s range.
#[inline(always)]
fn step(now: f64, last: f64) -> f32 {
    (now - last).clamp(0.0, f64::from(f32::MAX)) as f32
}

/// Starts fetching agent `i` and its memory into the cache.
#[inline(always)]
fn fetch<A: 'static, const L: usize, const S: usize, const N: usize>(
    agents: &[A],
    memories: &[AgentMemory<A, L, S, N>],
    i: usize,
) {
    crate::raw::prefetch_lines(&agents[i]);
    memories[i].prefetch();
}

/// A bucket's turn that a frame is ticking, alone, and the report of its
/// ticks. Dropped, it sets the bucket's clock to the frame's `now`; if a
/// callback panicked, it first keeps the agents not ticked yet due, first
/// in the next frame (nobody else was due: they go in index order), with
/// their own last tick time, out of the bucket. Each tick counts in the
/// report, so the agents not ticked yet are those after the first
/// `ticked + 1`; the walk records nothing more.
struct TurnRest<'s> {
    buckets: &'s mut Buckets,
    waiting: &'s mut [u64],
    backlog: &'s mut super::Ring,
    /// The bucket, and where its `len` agents are listed.
    bucket: usize,
    at: usize,
    len: usize,
    frame: u64,
    now: f64,
    /// Whether every agent ticked.
    done: bool,
    report: CrowdReport,
}

impl Drop for TurnRest<'_> {
    fn drop(&mut self) {
        if !self.done {
            // The agents that ticked, and the one whose tick panicked, go
            // by the clock; the others leave with the old time.
            let ticked = (self.report.ticked as usize + 1).min(self.len);
            for k in ticked..self.len {
                let i = self.buckets.listed[self.at + k];
                self.waiting[i as usize] = self.frame;
                self.backlog.push(i);
                self.buckets.park(i);
            }
        }
        self.buckets.turned_one(self.bucket, self.now, self.frame);
    }
}

/// A frame with agents waiting, woken, due in several periods or more
/// than the budget, or with agents loose from their bucket's clock: the
/// due agents merged into one list and the budget's share of them taken,
/// in index order, into `scratch[2]`, for [`tick_order`] to tick.
#[inline(never)]
fn by_order(schedule: &mut Schedule, f: u64, cap: usize) -> FrameReport {
    let Schedule {
        buckets,
        waiting,
        backlog,
        held,
        held_since,
        woken,
        scratch: [fresh, old, order],
        heads,
        ..
    } = &mut *schedule;
    let before = backlog.len + held.len();
    // The budget: first the agents due in earlier frames, by the frame
    // they were due in and then by index (the backlog and the held woken
    // merged), ...
    old.clear();
    while old.len() < cap {
        let i = match (backlog.front(), held.first()) {
            (None, None) => break,
            (Some(a), Some(b)) if (*held_since, b) < (waiting[a as usize], a) => held.pop(),
            (Some(_), _) => backlog.pop(),
            (None, Some(_)) => held.pop(),
        };
        old.push(i.unwrap_or(NIL));
    }
    let longest_wait = old.first().map_or(0, |&i| f - waiting[i as usize]);
    // ... then this frame's by index: the buckets whose turn it is and
    // the woken agents, merged. An agent already due (waiting, or woken)
    // is parked out of its bucket.
    heads.clear();
    for &c in &buckets.active {
        let head = buckets.bucket(buckets.turn(c)).head;
        if head != NIL {
            heads.push(head);
        }
    }
    let room = cap - old.len();
    // Once the budget is spent, the woken that are left wait as they are
    // when no earlier frame's woken wait; else they join the backlog.
    let can_hold = held.is_empty() && !woken.is_empty();
    let mut hold = room == 0 && can_hold;
    let mut due = 0;
    fresh.clear();
    loop {
        let (mut best, mut from) = (NIL, usize::MAX);
        if !hold && let Some(w) = woken.first() {
            best = w;
        }
        for (k, &head) in heads.iter().enumerate() {
            if head < best {
                (best, from) = (head, k);
            }
        }
        if best == NIL {
            break;
        }
        if from == usize::MAX {
            woken.pop();
        } else {
            heads[from] = buckets.next[best as usize];
            debug_assert_eq!(waiting[best as usize], IDLE, "a due agent in its bucket");
        }
        due += 1;
        if fresh.len() < room {
            fresh.push(best);
            hold = fresh.len() == room && can_hold && !woken.is_empty();
        } else {
            waiting[best as usize] = f;
            backlog.push(best);
            buckets.park(best);
        }
    }
    heads.clear();
    if hold {
        due += woken.len();
        core::mem::swap(held, woken);
        *held_since = f;
    }
    let take = fresh.len();
    // The agents taken, in index order.
    old.sort_unstable();
    order.clear();
    let (mut a, mut b) = (old.iter().peekable(), fresh[..take].iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        order.push(
            if x < y { a.next() } else { b.next() }
                .copied()
                .unwrap_or(NIL),
        );
    }
    order.extend(a.chain(b));
    FrameReport {
        frame: f,
        due: (before + due) as u32,
        waiting: (backlog.len + held.len()) as u32,
        longest_wait,
        ..FrameReport::default()
    }
}

/// Ticks the agents [`by_order`] took, in their order, each with the time
/// since its own last tick, and adds the ticks to its `report`.
///
/// The input closure comes alone, by value: a closure that borrows only
/// the frame's `now` is then a pointer this function reads through and
/// keeps nowhere, and the caller's own loop keeps `now` in a register.
/// Handed over inside a struct, the closure's borrow would look kept,
/// and the caller would reload and check `now` at each tick.
#[inline(never)]
fn tick_order<A: 'static, I, H, const L: usize, const S: usize, const N: usize>(
    schedule: &mut Schedule,
    f: u64,
    now: f64,
    mut input: I,
    mut run: Run<'_, A, H, L, S, N>,
    report: FrameReport,
) -> FrameReport
where
    I: FnMut(usize, &mut A, f32) -> TickInput,
    H: ScheduledTick<A, L, S, N>,
{
    let finite = now.is_finite();
    let n = schedule.scratch[2].len();
    for &i in schedule.scratch[2].iter().take(AHEAD) {
        fetch(run.agents, run.memories, i as usize);
    }
    let mut pending = Pending {
        schedule,
        frame: f,
        now: finite.then_some(now),
        at: 0,
    };
    for k in 0..n {
        let s = &mut *pending.schedule;
        let order = &s.scratch[2];
        if let Some(&ahead) = order.get(k + AHEAD) {
            fetch(run.agents, run.memories, ahead as usize);
        }
        let i = order[k] as usize;
        pending.at = k + 1;
        s.waiting[i] = IDLE;
        let dt = if finite {
            step(now, s.buckets.tick(i as u32, now, f))
        } else {
            s.buckets.unpark(i as u32);
            0.0
        };
        let input = input(i, &mut run.agents[i], dt).or_agent(i);
        debug_assert!(same_time(&input, now, dt), "{}", WRONG_TIME);
        run.tick(i, &input);
    }
    drop(pending);
    FrameReport {
        ticked: run.report.ticked,
        crowd: run.report,
        ..report
    }
}

/// What a frame ticks with, apart from the input closure.
struct Run<'a, A: 'static, H, const L: usize, const S: usize, const N: usize> {
    tree: &'a Tree<A, L, S, N>,
    agents: &'a mut [A],
    memories: &'a mut [AgentMemory<A, L, S, N>],
    report: CrowdReport,
    /// For a tree with deferred actions: the ids held so far.
    ids: CrowdIds,
    launching: bool,
    hook: H,
}

impl<A: 'static, H, const L: usize, const S: usize, const N: usize> Run<'_, A, H, L, S, N>
where
    H: ScheduledTick<A, L, S, N>,
{
    /// Ticks agent `i` with `input`, as `tick_all` ticks it.
    #[inline(always)]
    fn tick(&mut self, i: usize, input: &TickInput) {
        if self.launching {
            return self.tick_launching(i, input);
        }
        self.hook.tick(
            self.tree,
            &mut self.agents[i],
            &mut self.memories[i],
            input,
            &mut self.report,
            i,
        );
    }

    /// Ticks agent `i` of a tree with deferred actions, after the check
    /// of its id.
    #[inline(never)]
    fn tick_launching(&mut self, i: usize, input: &TickInput) {
        match self.ids.check(self.tree, self.memories, i, input) {
            Ok(()) => self.hook.tick(
                self.tree,
                &mut self.agents[i],
                &mut self.memories[i],
                input,
                &mut self.report,
                i,
            ),
            Err(e) => self.report.add(i, Err(e)),
        }
        self.ids.note(self.tree, &self.memories[i], i);
    }
}

/// A frame's ticks in its order under way. Dropped, it sets the clocks
/// of the buckets whose turn it was to the frame's `now` (a finite one);
/// if a callback panicked, it first keeps the agents the frame took and
/// did not tick due, in their order, first in the next frame, with their
/// own last tick time, out of their buckets.
struct Pending<'s> {
    schedule: &'s mut Schedule,
    frame: u64,
    now: Option<f64>,
    /// The place of the next agent to tick in the frame's order.
    at: usize,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let f = self.frame;
        let Schedule {
            buckets,
            waiting,
            backlog,
            scratch: [all, _, order],
            ..
        } = &mut *self.schedule;
        let rest = order.get(self.at..).unwrap_or_default();
        for &i in rest {
            if waiting[i as usize] == IDLE {
                waiting[i as usize] = f;
            }
            buckets.park(i);
        }
        if let Some(now) = self.now {
            buckets.turned(now, f);
        }
        if rest.is_empty() {
            return;
        }
        all.clear();
        all.extend(backlog.iter().chain(rest.iter().copied()));
        all.sort_unstable_by_key(|&i| (waiting[i as usize], i));
        backlog.clear();
        for &i in all.iter() {
            backlog.push(i);
        }
    }
}
