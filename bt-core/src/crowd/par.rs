//! `par_tick_all` for a tree with shared state: every agent's tick runs in
//! parallel up to its first access to the shared state, and what is left
//! of the stopped ticks goes on in index order, a part of the crowd at a
//! time, as soon as every part before it is done.
//!
//! The parts are taken in index order by one task per thread, from a
//! counter. A task ticks its part's agents up to their first shared
//! access and keeps the part; between two parts it ticks, it goes on with
//! the stopped ticks of the parts it kept, in order, each as soon as every
//! part before it is settled, while their agents are still in its core's
//! cache. The parts alternate between the tasks, so a part waits for
//! about one part's tick of another task. No task ever waits for another:
//! once no part is left to tick, a task hands the parts it kept over, and
//! whoever holds the settling lock goes on with the handed-over parts in
//! order, until it meets one that is neither settled nor handed over; the
//! caller settles what is left once every task is done. (A callback that
//! uses rayon may run another task on the same thread, beneath it.)
//!
//! A callback that panics stops the settling at its agent: the agents
//! before it finish, its memory is left idle (by the tick, as always), and
//! stopped ticks after it stay as they stopped, with nothing taken from
//! the shared state. The panic of the lowest index goes on to the caller
//! once every task is done.

use std::boxed::Box;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, TryLockError};
use std::vec::Vec;

use crate::decl::TickInput;
use crate::interp::{Resume, member_until_shared, resume_member};
use crate::memory::AgentMemory;
use crate::tree::Tree;

use super::{CrowdReport, Member};

/// Agents per part: large enough to amortise the hand-over (a few locks),
/// small enough that the parts in index order follow each other closely.
/// Under Miri, small, so that its small crowds have several parts.
const PART: usize = if cfg!(miri) { 16 } else { 256 };

/// Stopped ticks ahead whose agent and memory a settling fetches.
const AHEAD: usize = 4;

/// A panic's payload, and the index of the agent whose callback raised it.
type Panic = (usize, Box<dyn core::any::Any + Send>);

/// One part of the crowd.
struct Part<'a, A: 'static, const L: usize, const S: usize, const N: usize> {
    /// The index of its first agent.
    base: usize,
    agents: &'a mut [A],
    memories: &'a mut [AgentMemory<A, L, S, N>],
    /// Its stopped ticks, in index order: the agent (from `base`) and
    /// where it goes on.
    stopped: Vec<(u32, Resume)>,
    /// Handed over: its task has no part left to tick and leaves its
    /// settling to whoever holds the settling lock.
    ready: bool,
    /// The agent (from `base`) whose callback panicked, if one did: no
    /// agent from it on goes on.
    panicked: Option<usize>,
}

/// What the tasks share.
struct Crowd<'a, A: 'static, const L: usize, const S: usize, const N: usize> {
    parts: Vec<Mutex<Option<Part<'a, A, L, S, N>>>>,
    /// The next part to take.
    next: AtomicUsize,
    /// The first part not settled.
    settled: AtomicUsize,
    /// Held while settling the parts handed over.
    settling: Mutex<()>,
    /// A callback panicked: nothing is settled from its agent on.
    stop: AtomicBool,
    /// The panic of the lowest index.
    panic: Mutex<Option<Panic>>,
}

/// Ticks the crowd as [`tick_all`](super::tick_all) does, on every thread
/// of rayon's pool: see the module's documentation.
pub(super) fn tick_shared<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    input: &(impl Fn(usize, &mut A) -> TickInput + Sync),
) -> CrowdReport {
    let parts = agents
        .chunks_mut(PART)
        .zip(memories.chunks_mut(PART))
        .enumerate()
        .map(|(c, (agents, memories))| {
            Mutex::new(Some(Part {
                base: c * PART,
                agents,
                memories,
                stopped: Vec::new(),
                ready: false,
                panicked: None,
            }))
        })
        .collect();
    let crowd = Crowd {
        parts,
        next: AtomicUsize::new(0),
        settled: AtomicUsize::new(0),
        settling: Mutex::new(()),
        stop: AtomicBool::new(false),
        panic: Mutex::new(None),
    };
    let tasks = threads().min(crowd.parts.len()).max(1);
    let reports: Vec<Mutex<CrowdReport>> = (0..tasks)
        .map(|_| Mutex::new(CrowdReport::default()))
        .collect();
    let crowd_ref = &crowd;
    let task = |report: &Mutex<CrowdReport>| work(tree, crowd_ref, input, &mut lock(report));
    #[cfg(not(miri))]
    rayon::scope(|s| {
        for report in &reports[1..] {
            s.spawn(move |_| task(report));
        }
        task(&reports[0]);
    });
    // Miri checks the same tasks on threads of its own: rayon's pool
    // trips its borrow model inside crossbeam, not in this crate.
    #[cfg(miri)]
    std::thread::scope(|s| {
        for report in &reports[1..] {
            s.spawn(move || task(report));
        }
        task(&reports[0]);
    });
    // Every task handed over what it kept: what nobody settled yet, this
    // settles.
    let mut last = CrowdReport::default();
    settle_handed(tree, &crowd, &mut last);
    if let Some((_, payload)) = lock(&crowd.panic).take() {
        resume_unwind(payload);
    }
    debug_assert_eq!(crowd.settled.load(Ordering::SeqCst), crowd.parts.len());
    reports
        .into_iter()
        .map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()))
        .fold(last, CrowdReport::merge)
}

/// The tasks a crowd is ticked by: one per thread of rayon's pool (two
/// under Miri).
fn threads() -> usize {
    if cfg!(miri) {
        2
    } else {
        rayon::current_num_threads()
    }
}

/// A task: takes parts in index order, ticks each up to the agents' first
/// shared access, and between two parts settles those it took whose turn
/// it is; with no part left to tick, hands over the rest and settles what
/// it can of the handed-over parts.
fn work<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    crowd: &Crowd<'_, A, L, S, N>,
    input: &(impl Fn(usize, &mut A) -> TickInput + Sync),
    report: &mut CrowdReport,
) {
    // The parts this task ticked and has not settled, in index order.
    let mut kept = VecDeque::new();
    // The lists of stopped ticks of the parts it settled, emptied, for
    // the next parts it takes: a task's few lists grow once a call.
    let mut lists = Vec::new();
    loop {
        let c = crowd.next.fetch_add(1, Ordering::SeqCst);
        let Some(slot) = crowd.parts.get(c) else {
            break;
        };
        let Some(mut part) = lock(slot).take() else {
            unreachable!("each part is taken once");
        };
        part.stopped = lists.pop().unwrap_or_default();
        let mut at = 0;
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let base = part.base;
            for (j, (agent, memory)) in part
                .agents
                .iter_mut()
                .zip(part.memories.iter_mut())
                .enumerate()
            {
                at = j;
                let input = input(base + j, agent).or_agent(base + j);
                let mut member = Member(report, base + j);
                if let Some(r) = member_until_shared(tree, agent, memory, &input, &mut member) {
                    part.stopped.push((j as u32, r));
                }
            }
        }));
        if let Err(payload) = ran {
            part.panicked = Some(at);
            keep_panic(crowd, part.base + at, payload);
        }
        kept.push_back((c, part));
        settle_kept(tree, crowd, &mut kept, report, &mut lists);
    }
    for (c, mut part) in kept {
        part.ready = true;
        *lock(&crowd.parts[c]) = Some(part);
    }
    settle_handed(tree, crowd, report);
}

/// Settles the parts `kept` in order while the first is the first part
/// not settled, and puts their emptied lists of stopped ticks in `lists`.
/// After a panic (`Crowd::stop`), settles nothing more.
fn settle_kept<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    crowd: &Crowd<'_, A, L, S, N>,
    kept: &mut VecDeque<(usize, Part<'_, A, L, S, N>)>,
    report: &mut CrowdReport,
    lists: &mut Vec<Vec<(u32, Resume)>>,
) {
    while let Some((c, part)) = kept.front_mut() {
        if crowd.stop.load(Ordering::SeqCst) {
            kept.clear();
            return;
        }
        if crowd.settled.load(Ordering::SeqCst) != *c {
            return;
        }
        let settled = settle_part(tree, crowd, part, report);
        lists.push(core::mem::take(&mut part.stopped));
        let c = *c;
        kept.pop_front();
        if settled.is_err() {
            crowd.stop.store(true, Ordering::SeqCst);
            kept.clear();
            return;
        }
        crowd.settled.store(c + 1, Ordering::SeqCst);
    }
}

/// Settles the parts handed over, in order, while it holds the settling
/// lock; looks again after letting it go, for a part handed over
/// meanwhile. A part its task still keeps is not in its slot: the task
/// settles it, or hands it over.
fn settle_handed<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    crowd: &Crowd<'_, A, L, S, N>,
    report: &mut CrowdReport,
) {
    let handed = |c: usize| {
        crowd
            .parts
            .get(c)
            .is_some_and(|slot| lock(slot).as_ref().is_some_and(|p| p.ready))
    };
    loop {
        let guard = match crowd.settling.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            // The holder looks again once it lets go.
            Err(TryLockError::WouldBlock) => return,
        };
        while !crowd.stop.load(Ordering::SeqCst) {
            let c = crowd.settled.load(Ordering::SeqCst);
            let Some(slot) = crowd.parts.get(c) else {
                break;
            };
            let mut part = lock(slot);
            let Some(part) = part.as_mut().filter(|p| p.ready) else {
                break;
            };
            if settle_part(tree, crowd, part, report).is_err() {
                crowd.stop.store(true, Ordering::SeqCst);
                break;
            }
            crowd.settled.store(c + 1, Ordering::SeqCst);
        }
        drop(guard);
        if crowd.stop.load(Ordering::SeqCst) || !handed(crowd.settled.load(Ordering::SeqCst)) {
            return;
        }
    }
}

/// Goes on with the stopped ticks of `part` in index order. `Err` when a
/// callback panicked in the part (now or in its parallel ticks): nothing
/// after it is settled.
fn settle_part<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    crowd: &Crowd<'_, A, L, S, N>,
    part: &mut Part<'_, A, L, S, N>,
    report: &mut CrowdReport,
) -> Result<(), ()> {
    let end = part.panicked.unwrap_or(usize::MAX);
    let mut at = 0;
    let ran = catch_unwind(AssertUnwindSafe(|| {
        let stopped = &part.stopped;
        for (k, &(j, r)) in stopped.iter().enumerate() {
            let j = j as usize;
            if j >= end {
                break;
            }
            // The stopped ticks are a part's scattered agents, ticked up
            // to their stops a while ago: fetch the one `AHEAD` stops on.
            if let Some(&(next, _)) = stopped.get(k + AHEAD) {
                let next = next as usize;
                if let (Some(agent), Some(memory)) =
                    (part.agents.get(next), part.memories.get(next))
                {
                    crate::raw::prefetch_lines(agent);
                    memory.prefetch();
                }
            }
            at = j;
            let i = part.base + j;
            resume_member(
                tree,
                &mut part.agents[j],
                &mut part.memories[j],
                r,
                &mut Member(report, i),
            );
        }
    }));
    part.stopped.clear();
    match ran {
        Err(payload) => {
            keep_panic(crowd, part.base + at, payload);
            Err(())
        }
        Ok(()) if part.panicked.is_some() => Err(()),
        Ok(()) => Ok(()),
    }
}

/// Keeps the panic of agent `i` if no agent before it panicked.
fn keep_panic<A: 'static, const L: usize, const S: usize, const N: usize>(
    crowd: &Crowd<'_, A, L, S, N>,
    i: usize,
    payload: Box<dyn core::any::Any + Send>,
) {
    let mut kept = lock(&crowd.panic);
    if kept.as_ref().is_none_or(|(j, _)| i < *j) {
        *kept = Some((i, payload));
    }
}

/// A lock, whether or not a panic poisoned it: every panic is caught
/// where its state is still consistent.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
