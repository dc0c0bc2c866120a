//! A scheduled crowd's frame through the recorder: only the agents the
//! schedule ticks are recorded.

use bt_core::{
    AgentMemory, CrowdReport, FrameReport, NoTrace, Schedule, ScheduledTick, TickInput, Tree,
    tick_scheduled_by, tick_traced_into,
};

use super::FlightRecorder;

impl FlightRecorder {
    /// Ticks the agents `schedule` says are due, as
    /// [`tick_scheduled`](bt_core::tick_scheduled) does (same agents, same
    /// `dt`, same decisions), recording the watched ones it ticks in a new
    /// frame. A watched agent the frame does not tick has no tick in that
    /// frame: the page shows a gap in its lane there, not a behavior
    /// running, and its counts take only the agents ticked. The recorder
    /// keeps its [`Capacity`](crate::Capacity) in frames: an agent ticking
    /// every `k`-th frame keeps about a `k`-th as many ticks of its own.
    ///
    /// ```
    /// use bt_core::{Rate, Schedule, TickInput, behavior, decider, group, tree};
    /// use bt_viewer::{Capacity, FlightRecorder, Watch};
    ///
    /// #[derive(Default)]
    /// struct Npc;
    /// behavior! { IDLE: Npc }
    /// decider! { JUST_IDLE: Npc => IDLE }
    /// group! { ROOT: Npc, prioritized [JUST_IDLE] }
    /// tree! { NPCS: Npc = ROOT, memory: NpcMemory }
    ///
    /// let mut npcs: Vec<Npc> = (0..8).map(|_| Npc).collect();
    /// let mut memories: Vec<NpcMemory> = (0..8).map(|i| NPCS.new_memory(i)).collect();
    /// let mut schedule = Schedule::new(8, 0.0);
    /// schedule.set_rate(3, Rate::Every(4)).unwrap();
    /// let mut recorder = FlightRecorder::new(&NPCS, 8, Watch::All, Capacity::ticks(16));
    /// for f in 0..8 {
    ///     let now = f64::from(f) * 0.1;
    ///     recorder.tick_scheduled(&NPCS, &mut npcs, &mut memories, &mut schedule, now, |_, _, dt| {
    ///         TickInput::new(now, dt)
    ///     });
    /// }
    /// // Agent 3 ticked in two frames of the eight, the others in each.
    /// let recording = recorder.export();
    /// assert_eq!(recording.agents[3].ticks.len(), 2);
    /// assert_eq!(recording.agents[0].ticks.len(), 8);
    /// ```
    ///
    /// # Panics
    /// As [`tick_scheduled`](bt_core::tick_scheduled), and if the slices
    /// are longer than the crowd the recorder was made for.
    #[inline]
    pub fn tick_scheduled<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agents: &mut [A],
        memories: &mut [AgentMemory<A, L, S, N>],
        schedule: &mut Schedule,
        now: f64,
        input: impl FnMut(usize, &mut A, f32) -> TickInput,
    ) -> FrameReport {
        assert!(
            agents.len() <= self.slot_of.len(),
            "FlightRecorder::tick_scheduled: {} agents, the recorder was made for {}",
            agents.len(),
            self.slot_of.len()
        );
        self.tune.learn(memories.first().and_then(|m| m.shared()));
        self.tune.apply();
        self.begin_frame();
        let report = tick_scheduled_by(
            tree,
            agents,
            memories,
            schedule,
            now,
            input,
            Recording(&mut *self),
        );
        self.tune.look(self.frames - 1);
        report
    }
}

/// Each tick of the frame: recorded for a watched agent.
struct Recording<'r>(&'r mut FlightRecorder);

impl<A: 'static, const L: usize, const S: usize, const N: usize> ScheduledTick<A, L, S, N>
    for Recording<'_>
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
        match self.0.slot_of.get(index) {
            Some(&slot) if slot != u32::MAX => {
                self.0
                    .record_into(slot as usize, tree, agent, memory, input, report, index);
            }
            _ => {
                // Its error, if any, is in the report.
                let _ = tick_traced_into(tree, agent, memory, input, &mut NoTrace, report, index);
            }
        }
    }
}
