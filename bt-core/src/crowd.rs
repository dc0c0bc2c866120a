//! Ticking a crowd: many agents, one shared tree.

use crate::decl::TickInput;
use crate::interp::{
    Tally, TickError, TickReport, Tracer, pending_under, tick_member, tick_member_traced,
};
use crate::memory::AgentMemory;
use crate::tree::Tree;

mod ids;
#[cfg(feature = "rayon")]
mod par;
mod schedule;

pub use ids::CrowdIds;
pub use schedule::{
    FrameReport, Rate, RateError, Schedule, ScheduledTick, tick_scheduled, tick_scheduled_by,
};

/// What a crowd tick did, summed over the agents.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CrowdReport {
    /// Agents ticked.
    pub ticked: u32,
    /// Agents idle after their tick.
    pub idle: u32,
    /// Agents whose active path changed.
    pub changed: u32,
    /// Deciders activated, over all agents.
    pub activated: u64,
    /// Deciders visited, over all agents.
    pub visited: u64,
    /// Agents whose tick reported a Subset Rule violation.
    pub subset_violations: u32,
    /// Agents whose tick returned an error.
    pub errors: u32,
    /// The error of the agent with the lowest index that had one.
    pub first_error: Option<(usize, TickError)>,
}

impl CrowdReport {
    /// Counts the tick of agent `i` of the crowd, which returned `result`,
    /// as [`tick_all`] counts it (the first error kept is the one of the
    /// lowest index): for code that ticks a crowd in its own way.
    #[inline]
    pub fn add(&mut self, i: usize, result: Result<crate::TickReport, TickError>) {
        self.ticked += 1;
        match result {
            Ok(r) => {
                self.idle += u32::from(r.leaf.is_none());
                self.changed += u32::from(r.changed());
                self.activated += u64::from(r.activated);
                self.visited += u64::from(r.visited);
                self.subset_violations += u32::from(r.subset_violation.is_some());
            }
            Err(e) => {
                self.errors += 1;
                if self.first_error.is_none_or(|(j, _)| i < j) {
                    self.first_error = Some((i, e));
                }
            }
        }
    }

    /// An agent whose tick changed nothing: it has a behavior running.
    #[inline(always)]
    fn add_steady(&mut self, visited: u32) {
        self.ticked += 1;
        self.visited += u64::from(visited);
    }

    /// An agent whose leaf ended and whose group quickly entered another
    /// leaf: one change, one activation.
    #[inline(always)]
    fn add_redecided(&mut self, visited: u32) {
        self.ticked += 1;
        self.changed += 1;
        self.activated += 1;
        self.visited += u64::from(visited);
    }

    /// Adds up two reports of disjoint sets of agents.
    pub fn merge(mut self, other: CrowdReport) -> CrowdReport {
        self.ticked += other.ticked;
        self.idle += other.idle;
        self.changed += other.changed;
        self.activated += other.activated;
        self.visited += other.visited;
        self.subset_violations += other.subset_violations;
        self.errors += other.errors;
        self.first_error = match (self.first_error, other.first_error) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        self
    }
}

/// Ticks every agent once, in index order: agent `i` with `memories[i]`
/// and the input `input(i, &mut agents[i])`, which builds its decision and
/// stimuli words, and may update what the agent keeps for them first (its
/// [`Stimuli`](crate::Stimuli): `agent.senses.update(dt)`). Agent `i`'s id ([`TickInput::agent`]) is `i` unless
/// `input` sets one with [`TickInput::with_agent`]; its deferred actions
/// are launched under that id. Allocates nothing; an agent's error does
/// not stop the others.
///
/// # Errors
/// Each agent's, in the report, as [`tick`](crate::tick) gives them. In a
/// tree with deferred actions, an agent given an id under which another
/// agent holds an action pending is not ticked when that agent is the
/// one whose index is the id, or one ticked before it in this call:
/// [`TickError::AgentIdTaken`] names both (see [`CrowdIds`] for what is
/// checked, and what is not).
///
/// # Panics
/// If the slices differ in length, or a callback panics (the agents after
/// it are not ticked; the panicking agent's memory is left idle).
#[inline]
pub fn tick_all<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    mut input: impl FnMut(usize, &mut A) -> TickInput,
) -> CrowdReport {
    assert_eq!(
        agents.len(),
        memories.len(),
        "tick_all: one memory per agent"
    );
    apply_tuning(tree, memories);
    let mut report = CrowdReport::default();
    tick_slice(tree, agents, memories, 0, &mut input, &mut report);
    report
}

/// Ticks agents `range` of a crowd once, in index order, as [`tick_all`]
/// ticks them: agent `i` (an index into the whole slices) with
/// `memories[i]`, the input `input(i, &mut agents[i])` and the id `i` unless
/// the input sets one. For a crowd ticked a part at a time (a tenth of it
/// each frame, say), or around agents ticked another way.
///
/// ```
/// # use bt_core::{TickInput, behavior, decider, group, tick_range, tree};
/// # #[derive(Default)] struct Npc;
/// # behavior! { IDLE: Npc }
/// # decider! { REST: Npc => IDLE }
/// # group! { ROOT: Npc, prioritized [REST] }
/// # tree! { NPCS: Npc = ROOT }
/// let mut agents: Vec<Npc> = (0..100).map(|_| Npc).collect();
/// let mut memories: Vec<_> = (0..100).map(|i| NPCS.new_memory(i)).collect();
/// // A tenth of the crowd a frame: each agent ticks every tenth frame.
/// for frame in 0..10usize {
///     let part = frame % 10 * 10..frame % 10 * 10 + 10;
///     let input = |_, _: &mut Npc| TickInput::new(frame as f64 / 60.0, 1.0 / 6.0);
///     let report = tick_range(&NPCS, &mut agents, &mut memories, part, input);
///     assert_eq!(report.ticked, 10);
/// }
/// ```
///
/// # Errors
/// As [`tick_all`]: an agent of the range is not ticked
/// ([`TickError::AgentIdTaken`]) when its id is one under which the agent
/// of the whole crowd whose index it is, or an agent of the range ticked
/// before it, holds an action pending.
///
/// # Panics
/// If the slices differ in length, `range` is not within them, or a
/// callback panics (as [`tick_all`]).
#[inline]
pub fn tick_range<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    range: core::ops::Range<usize>,
    input: impl FnMut(usize, &mut A) -> TickInput,
) -> CrowdReport {
    check_range(agents.len(), memories.len(), &range);
    apply_tuning(tree, &memories[range.clone()]);
    tick_range_in_frame(tree, agents, memories, range, input)
}

/// [`tick_range`] for a part of a frame that ticks the crowd in several
/// parts (the flight recorder's runs of agents it does not record): puts
/// no tunable change in effect, which the caller did when its frame
/// started, so that a change staged by a callback of an earlier part
/// waits for the next frame, as in [`tick_all`]. The slices are checked
/// as `tick_range` checks them.
#[doc(hidden)]
#[inline]
pub fn tick_range_in_frame<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    range: core::ops::Range<usize>,
    mut input: impl FnMut(usize, &mut A) -> TickInput,
) -> CrowdReport {
    check_range(agents.len(), memories.len(), &range);
    let mut report = CrowdReport::default();
    if tree.shape.actions > 0 {
        tick_launching(tree, agents, memories, range, &mut input, &mut report);
        return report;
    }
    let base = range.start;
    tick_slice(
        tree,
        &mut agents[range.clone()],
        &mut memories[range],
        base,
        &mut input,
        &mut report,
    );
    report
}

/// The checks of [`tick_range`]'s slices and range.
///
/// # Panics
/// If the slices differ in length or `range` is not within them.
#[inline(always)]
fn check_range(agents: usize, memories: usize, range: &core::ops::Range<usize>) {
    assert_eq!(agents, memories, "tick_range: one memory per agent");
    assert!(
        range.start <= range.end && range.end <= agents,
        "tick_range: agents {}..{} of a crowd of {}",
        range.start,
        range.end,
        agents
    );
}

/// Whether agent `index` of the crowd `memories` may tick with `input`:
/// not when its id is the index of another agent of the crowd whose
/// memory has a deferred action pending under that id (two agents'
/// requests would name the same agent), which is
/// [`TickError::AgentIdTaken`]. The crowd's indexes are the lookup: no
/// search, no allocation. Part of the check [`tick_all`] and
/// [`tick_range`] make before each agent's tick, for a tree with deferred
/// actions; [`CrowdIds::check`] makes all of it, for code that ticks a
/// crowd in its own way.
#[inline]
pub fn check_agent_id<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memories: &[AgentMemory<A, L, S, N>],
    index: usize,
    input: &TickInput,
) -> Result<(), TickError> {
    let id = input.agent as usize;
    if tree.shape.actions > 0
        && id != index
        && id < memories.len()
        && pending_under(tree, &memories[id], input.agent)
    {
        return Err(TickError::AgentIdTaken {
            id: input.agent,
            agent: index,
            holder: id,
        });
    }
    Ok(())
}

/// Ticks agent `index` of a crowd through `tracer`, as
/// [`tick_traced`](crate::tick_traced) ticks it, and adds the tick to
/// `report` as [`tick_all`] adds it: for code that ticks a crowd in its
/// own way and traces its agents (a flight recorder, say). A tick that
/// changed nothing adds what it visited without building a
/// [`TickReport`], as in [`tick_all`]'s loop. Checks no id: see
/// [`check_agent_id`].
///
/// ```
/// # use bt_core::{CrowdReport, TickInput, TraceRecorder, behavior, decider, group, tick_traced_into, tree};
/// # #[derive(Default)] struct Npc;
/// # behavior! { IDLE: Npc }
/// # decider! { REST: Npc => IDLE }
/// # group! { ROOT: Npc, prioritized [REST] }
/// # tree! { NPCS: Npc = ROOT }
/// let mut agents: Vec<Npc> = (0..10).map(|_| Npc).collect();
/// let mut memories: Vec<_> = (0..10).map(|i| NPCS.new_memory(i)).collect();
/// let mut report = CrowdReport::default();
/// let mut trace = TraceRecorder::new();
/// for (i, (agent, memory)) in agents.iter_mut().zip(&mut memories).enumerate() {
///     let input = TickInput::new(0.0, 0.1).with_agent(i as u32);
///     tick_traced_into(&NPCS, agent, memory, &input, &mut trace, &mut report, i).unwrap();
/// }
/// assert_eq!((report.ticked, report.changed), (10, 10));
/// assert!(trace.text().contains("REST"));
/// ```
///
/// # Errors
/// The tick's error, if it had one (`report` counts it too).
///
/// # Panics
/// As [`tick`](crate::tick).
#[inline(always)]
pub fn tick_traced_into<A: 'static, T: Tracer, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    tracer: &mut T,
    report: &mut CrowdReport,
    index: usize,
) -> Result<(), TickError> {
    /// The crowd's report, and the error of the tick if it had one.
    struct Into<'r>(Member<'r>, Result<(), TickError>);
    impl Tally for Into<'_> {
        #[inline(always)]
        fn steady<A: 'static, const L: usize, const S: usize, const N: usize>(
            &mut self,
            memory: &AgentMemory<A, L, S, N>,
            visited: u32,
        ) {
            self.0.steady(memory, visited);
        }
        #[inline(always)]
        fn redecided<A: 'static, const L: usize, const S: usize, const N: usize>(
            &mut self,
            memory: &AgentMemory<A, L, S, N>,
            visited: u32,
        ) {
            self.0.redecided(memory, visited);
        }
        #[inline(always)]
        fn ticked(&mut self, result: Result<TickReport, TickError>) {
            if let Err(e) = result {
                self.1 = Err(e);
            }
            self.0.ticked(result);
        }
    }
    let mut into = Into(Member(report, index), Ok(()));
    tick_member_traced(tree, agent, memory, input, tracer, &mut into);
    into.1
}

/// Puts the tunable changes staged on the crowd's shared state in effect,
/// as a crowd's tick starts, so that every agent of the tick reads the
/// same values: the shared state of the first memory, which a crowd's
/// memories share. A constant test for a tree without tunables.
#[inline(always)]
pub(crate) fn apply_tuning<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    memories: &[AgentMemory<A, L, S, N>],
) {
    if tree.tunables.is_some()
        && let Some(shared) = memories.first().and_then(|m| m.shared.as_deref())
    {
        shared.apply_tuning();
    }
}

/// Ticks `agents[j]` with `memories[j]` (agent index `base + j`) in order,
/// adding to `report`. Both slices are read front to back, a pattern the
/// CPU's own prefetcher follows, so no software prefetch is issued.
#[inline(always)]
fn tick_slice<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    base: usize,
    input: &mut impl FnMut(usize, &mut A) -> TickInput,
    report: &mut CrowdReport,
) {
    if tree.shape.actions > 0 {
        // Only `tick_all` comes here with such a tree: the whole crowd.
        debug_assert_eq!(base, 0);
        let n = agents.len();
        return tick_launching(tree, agents, memories, 0..n, input, report);
    }

    for (j, (agent, memory)) in agents.iter_mut().zip(memories).enumerate() {
        let input = input(base + j, agent).or_agent(base + j);
        tick_member(tree, agent, memory, &input, &mut Member(report, base + j));
    }
}

/// Ticks agents `range` of the crowd `agents` / `memories` for a tree
/// with deferred actions, each after the check of its id by [`CrowdIds`].
#[inline(never)]
fn tick_launching<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    range: core::ops::Range<usize>,
    input: &mut impl FnMut(usize, &mut A) -> TickInput,
    report: &mut CrowdReport,
) {
    let mut ids = CrowdIds::new();
    for i in range {
        let input = input(i, &mut agents[i]).or_agent(i);
        match ids.check(tree, memories, i, &input) {
            Ok(()) => tick_member(
                tree,
                &mut agents[i],
                &mut memories[i],
                &input,
                &mut Member(report, i),
            ),
            Err(e) => report.add(i, Err(e)),
        }
        ids.note(tree, &memories[i], i);
    }
}

/// A crowd report, adding up the tick of agent `.1`.
struct Member<'r>(&'r mut CrowdReport, usize);

impl Tally for Member<'_> {
    #[inline(always)]
    fn steady<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        _: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        self.0.add_steady(visited);
    }

    #[inline(always)]
    fn redecided<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        _: &AgentMemory<A, L, S, N>,
        visited: u32,
    ) {
        self.0.add_redecided(visited);
    }

    #[inline(always)]
    fn ticked(&mut self, result: Result<TickReport, TickError>) {
        self.0.add(self.1, result);
    }
}

/// [`tick_all`] on every core (feature `rayon`): exactly the results of
/// [`tick_all`] (reports, agents, memories, shared state and queued
/// requests), in chunks of agents ticked in parallel. `input` must be
/// `Sync`, so it cannot hold mutable state; it is called once per agent,
/// before the agent's tick, but not in index order across agents.
///
/// A tree with gates, global cooldowns or group roles (a
/// [`TreeShared`](crate::TreeShared)) runs on every core too, with the
/// results of [`tick_all`] in index order. Each agent's tick runs in
/// parallel up to the first step that would read or write the shared
/// state; most ticks (a behavior running on, a leaf ending in a group
/// without shared checks, a redecide whose gated, cooled-down and role
/// children all fail their flag tests) never get there and finish in
/// parallel. The
/// others stop at that step boundary, having changed nothing shared, and
/// go on from it in index order, a chunk of the crowd at a time, as soon
/// as the chunks before it are done, on the thread that ticked the chunk
/// (its agents still in that core's cache), while the threads tick the
/// chunks after it: no callback runs twice, none is undone, and every
/// gate, cooldown and role sees the agents in the order [`tick_all`] shows
/// them. What it costs: the ticks that stop are run by one thread at a time, so
/// the more agents reach a shared check in a frame (a gate that stays
/// full turns its waiting agents away each tick), the less the cores
/// help; and a call allocates a table of one entry per 256 agents and
/// its lists of stopped ticks. An agent waiting in a role's lobby, an
/// idle agent and a tick with debug output on stop before they start.
///
/// A tree with deferred actions is ticked in index order on the calling
/// thread: whether an agent may tick depends on the ids under which the
/// agents before it hold actions, which their ticks in this frame can
/// change before anything of its own tick may run. (Ticking agents of a
/// tree with shared state from several threads with
/// [`tick`](crate::tick) keeps every limit; it only gives up the order.)
///
/// Called from a thread outside rayon's pool, each call hands the crowd to
/// the pool's workers and waits; workers that slept through the rest of
/// the frame take a while to wake up. A frame that runs inside the pool
/// (its loop in [`rayon::scope`] or `ThreadPool::install`, as an engine's
/// job system runs it) starts on the calling worker at once: on two cores,
/// W1 at N = 100 000 ticks nearly twice as fast as with [`tick_all`] that
/// way, less so from outside (figures in the repository's
/// `bt-bench/README.md`).
///
/// # Panics
/// If the slices differ in length, or a callback panics: the panic goes
/// on to the caller once every thread is done, and the panicking agent's
/// memory is left idle, as with [`tick_all`]. Agents after it in index
/// order may have been ticked, wholly or up to their first shared step
/// (their memories hold what they held in the shared state before). With
/// shared state, every agent before it finished its tick, and the shared
/// state is what [`tick_all`] leaves, except that an agent that panics
/// before its first shared step gives back its gate slots and role places
/// then, which agents before it may take. If several agents panic, the
/// panic of the lowest index goes on.
#[cfg(feature = "rayon")]
pub fn par_tick_all<A: Send + 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agents: &mut [A],
    memories: &mut [AgentMemory<A, L, S, N>],
    input: impl Fn(usize, &mut A) -> TickInput + Sync,
) -> CrowdReport {
    use rayon::prelude::*;
    assert_eq!(
        agents.len(),
        memories.len(),
        "par_tick_all: one memory per agent"
    );
    apply_tuning(tree, memories);
    /// Agents per task: large enough to amortise scheduling.
    const CHUNK: usize = 256;
    if tree.needs_shared() && tree.shape.actions == 0 {
        return par::tick_shared(tree, agents, memories, &input);
    }
    if tree.needs_shared() {
        let mut report = CrowdReport::default();
        let mut input = |i: usize, a: &mut A| input(i, a);
        tick_slice(tree, agents, memories, 0, &mut input, &mut report);
        return report;
    }
    agents
        .par_chunks_mut(CHUNK)
        .zip(memories.par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, (agents, memories))| {
            let mut report = CrowdReport::default();
            let mut input = |i: usize, a: &mut A| input(i, a);
            tick_slice(tree, agents, memories, c * CHUNK, &mut input, &mut report);
            report
        })
        .reduce(CrowdReport::default, CrowdReport::merge)
}
