//! Writing ticks into the current frame: a crowd's runs of watched agents,
//! a single watched agent, and the words of one tick (see the layout in
//! the parent module).

use bt_core::{
    AgentMemory, CrowdReport, TickError, TickInput, TickReport, Tracer, Tree, check_agent_id,
    tick_range_in_frame, tick_traced, tick_traced_into,
};

use super::frame::{FrameTracer, Tee};
use super::runs::next_watched;
use super::words::{ERROR_SHIFT, HEADER, NO_LEAF, STEADY, error_code};
use super::{DataStore, FlightRecorder};

impl FlightRecorder {
    /// Inlined into the caller, so that the runs of unwatched agents
    /// compile as the caller's own [`tick_all`](bt_core::tick_all) would
    /// (with a tree declared as a `static`, its fields are constants
    /// there), and so do the runs of watched ones.
    #[inline(always)]
    pub(super) fn crowd<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agents: &mut [A],
        memories: &mut [AgentMemory<A, L, S, N>],
        mut input: impl FnMut(usize, &mut A) -> TickInput,
        values: Option<fn(&mut DataStore, usize, &A)>,
    ) -> CrowdReport {
        assert_eq!(
            agents.len(),
            memories.len(),
            "FlightRecorder::tick_all: one memory per agent"
        );
        assert!(
            agents.len() <= self.slot_of.len(),
            "FlightRecorder::tick_all: {} agents, the recorder was made for {}",
            agents.len(),
            self.slot_of.len()
        );
        // The changes staged on the crowd's tunables take effect now, for
        // every agent of the frame alike: the runs of unwatched agents
        // put none in effect, so that one a callback stages waits for the
        // next frame, as in `tick_all`.
        self.tune.learn(memories.first().and_then(|m| m.shared()));
        self.tune.apply();
        self.begin_frame();
        let mut report = CrowdReport::default();
        let mut from = 0;
        let n = agents.len();
        while from < n {
            // The run of unwatched agents from `from`.
            let mut to = next_watched(&self.slot_of[..n], from);
            if to > from {
                let part = tick_range_in_frame(tree, agents, memories, from..to, &mut input);
                report = report.merge(part);
            }
            if to < n {
                to = self.record_run(tree, agents, memories, &mut input, values, to, &mut report);
            }
            from = to;
        }
        // A change staged while the frame ran, which its runs put in
        // effect.
        self.tune.look(self.frames - 1);
        report
    }

    /// Ticks and records the run of watched agents from `to`, adding each
    /// tick to `report`: where the run ends. The frame's fill is kept in
    /// locals for the run, and the counters are brought up to date once.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn record_run<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agents: &mut [A],
        memories: &mut [AgentMemory<A, L, S, N>],
        input: &mut impl FnMut(usize, &mut A) -> TickInput,
        values: Option<fn(&mut DataStore, usize, &A)>,
        mut to: usize,
        report: &mut CrowdReport,
    ) -> usize {
        // Only a tree with deferred actions can have an id taken.
        let launching = tree.shape().actions > 0;
        let (frame, lanes, fixed) = (self.frame, self.lanes, self.fixed);
        let first = self.fill;
        let mut fill = first;
        let mut events_end = self.events_end();
        let words = &mut self.words[frame * self.frame_words..][..self.frame_words];
        let row = &mut self.offsets[frame * lanes..][..lanes];
        let slot_of = &self.slot_of[..agents.len()];
        let mut ticked = 0;
        while to < agents.len() && slot_of[to] != u32::MAX {
            let slot = slot_of[to] as usize;
            let inp = input(to, &mut agents[to]).or_agent(to);
            if launching && let Err(e) = check_agent_id(tree, memories, to, &inp) {
                report.add(to, Err(e));
                to += 1;
                continue;
            }
            if let (Some(f), Some(data)) = (values, &mut self.data) {
                f(data, frame * lanes + slot, &agents[to]);
            }
            let agent = &mut agents[to];
            let (_, end) = write_tick(
                words,
                fill,
                events_end,
                &mut memories[to],
                &inp,
                |memory, tracer| tick_traced_into(tree, agent, memory, &inp, tracer, report, to),
            );
            row[slot] = fill as u32;
            fill = end;
            events_end += fixed;
            ticked += 1;
            to += 1;
        }
        self.written += (fill - first) as u64;
        self.ticks += ticked;
        self.filled += ticked as usize;
        self.fill = fill;
        to
    }

    /// Where the events of the current frame's next tick must end: the
    /// header and deepest path of every watched agent not yet in the frame
    /// but that one stay free.
    fn events_end(&self) -> usize {
        let reserved = self.agent_of.len().saturating_sub(self.filled) * self.fixed;
        self.frame_words + HEADER - reserved
    }

    /// Ticks watched agent `slot` through [`tick_traced`] into the current
    /// frame, its events also handed to `also`.
    pub(super) fn record<A: 'static, const L: usize, const S: usize, const N: usize, T: Tracer>(
        &mut self,
        slot: usize,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        also: &mut T,
    ) -> Result<TickReport, TickError> {
        self.record_with(slot, memory, input, |memory, tracer| {
            if T::ENABLED {
                let mut tee = Tee {
                    frame: tracer,
                    also,
                };
                tick_traced(tree, agent, memory, input, &mut tee)
            } else {
                tick_traced(tree, agent, memory, input, tracer)
            }
        })
    }

    /// Ticks watched agent `slot` (agent `index` of a crowd) into the
    /// current frame, adding the tick to `report`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_into<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        slot: usize,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        report: &mut CrowdReport,
        index: usize,
    ) {
        // Its error, if any, is in the report.
        let _ = self.record_with(slot, memory, input, |memory, tracer| {
            tick_traced_into(tree, agent, memory, input, tracer, report, index)
        });
    }

    /// Ticks watched agent `slot` with `run` into the current frame.
    fn record_with<A: 'static, const L: usize, const S: usize, const N: usize, R: Outcome>(
        &mut self,
        slot: usize,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        run: impl FnOnce(&mut AgentMemory<A, L, S, N>, &mut FrameTracer<'_>) -> R,
    ) -> R {
        let start = self.fill;
        let events_end = self.events_end();
        let base = self.frame * self.frame_words;
        let (result, end) = write_tick(
            &mut self.words[base..base + self.frame_words],
            start,
            events_end,
            memory,
            input,
            run,
        );
        self.offsets[self.frame * self.lanes + slot] = start as u32;
        self.written += (end - start) as u64;
        self.ticks += 1;
        self.fill = end;
        self.filled += 1;
        result
    }
}

/// Ticks an agent with `run` (which hands the tick's events to the tracer
/// it is given), writing the tick into `frame` from `start`, its events no
/// further than `events_end`: the tick's result, and where its words end.
#[inline(always)]
fn write_tick<A: 'static, const L: usize, const S: usize, const N: usize, R: Outcome>(
    frame: &mut [u64],
    start: usize,
    events_end: usize,
    memory: &mut AgentMemory<A, L, S, N>,
    input: &TickInput,
    run: impl FnOnce(&mut AgentMemory<A, L, S, N>, &mut FrameTracer<'_>) -> R,
) -> (R, usize) {
    let first = start + HEADER;
    let events_end = events_end.max(first).min(first + usize::from(u16::MAX));
    let (head, events) = frame[start..events_end].split_at_mut(HEADER);
    head[0] = input.now.to_bits();
    head[2] = input.decision;
    head[3] = input.stimuli;
    let mut tracer = FrameTracer::new(events);
    let result = run(memory, &mut tracer);
    if let Some(e) = result.error() {
        // A tick refused before it started sent nothing, and is not a
        // steady one.
        tracer.flags = tracer.flags & !STEADY | error_code(e) << ERROR_SHIFT;
    }
    let (events, visited, flags) = (tracer.n, tracer.visited, tracer.flags);
    // The path: two words a level, written whatever they hold (a branch
    // or a count for the masks that are not zero costs more than the
    // words).
    let at = start + HEADER + events;
    let depth = memory.depth();
    let path = &mut frame[at..at + 2 * depth];
    let mut leaf = NO_LEAF;
    for (w, level) in path.chunks_exact_mut(2).zip(memory.active_path()) {
        let active = (input.now - level.since) as f32;
        leaf = level.item.0;
        w[0] =
            u64::from(leaf) | u64::from(level.redecides) << 16 | u64::from(active.to_bits()) << 32;
        w[1] = level.mask;
    }
    let end = at + 2 * depth;
    frame[start + 1] = header(
        leaf,
        visited.min(u32::from(u16::MAX)) as u16,
        events as u16,
        depth as u8,
        flags,
    );
    (result, end)
}

/// What a tick returned, as far as its words say.
trait Outcome {
    fn error(&self) -> Option<&TickError>;
}

impl<T> Outcome for Result<T, TickError> {
    #[inline(always)]
    fn error(&self) -> Option<&TickError> {
        self.as_ref().err()
    }
}

fn header(leaf: u16, visited: u16, events: u16, levels: u8, flags: u8) -> u64 {
    u64::from(leaf)
        | u64::from(visited) << 16
        | u64::from(events) << 32
        | u64::from(levels) << 48
        | u64::from(flags) << 56
}
