//! Lanes: a recorder for a crowd whose members come and go, each agent
//! recorded on the lane it is assigned while it lives.

use super::*;

impl FlightRecorder {
    /// A recorder with room for `lanes` agents that are not known yet:
    /// each one is given a lane when it appears ([`assign`](Self::assign),
    /// with the id it is to have in the recording) and ticked into it
    /// ([`tick_lane`](Self::tick_lane)) after [`begin_frame`](Self::begin_frame).
    /// For crowds whose members come and go, such as the entities of an
    /// ECS. The frames take what those of `lanes` watched agents take, all
    /// allocated here.
    ///
    /// # Panics
    /// If `capacity.ticks` is 0, or a frame would hold more than
    /// `u32::MAX` words.
    pub fn with_lanes<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: &'static Tree<A, L, S, N>,
        lanes: usize,
        capacity: Capacity,
    ) -> Self {
        let mut recorder = Self::new(tree, 0, Watch::All, capacity);
        let frame_words = lanes * capacity.words_per_tick.max(recorder.fixed);
        assert!(
            u32::try_from(frame_words).is_ok(),
            "a frame of {lanes} lanes x {} words is too large",
            capacity.words_per_tick
        );
        recorder.agent_of = Vec::with_capacity(lanes);
        recorder.released = vec![false; lanes];
        recorder.lanes = lanes;
        recorder.frame_words = frame_words;
        recorder.words = vec![u64::MAX; capacity.ticks * frame_words];
        recorder.offsets = vec![NONE; capacity.ticks * lanes];
        recorder
    }

    /// The number of lanes: watched agents, or the room given to
    /// [`with_lanes`](Self::with_lanes).
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Gives agent `id` a lane of its own: the recording shows its ticks
    /// under `agent: id`. A lane never used is taken first, then one given
    /// back by [`release`](Self::release) whose ticks have all been
    /// overwritten. An agent that has (or had, released) a lane gets that
    /// lane again, so that its ticks stay under one `agent` in the
    /// recording. `None` when there is none: the agent is not recorded.
    /// Allocates nothing.
    pub fn assign(&mut self, id: u32) -> Option<usize> {
        if let Some(lane) = self.agent_of.iter().position(|&a| a == id) {
            self.released[lane] = false;
            return Some(lane);
        }
        if self.agent_of.len() < self.lanes {
            self.agent_of.push(id);
            return Some(self.agent_of.len() - 1);
        }
        let lanes = self.lanes;
        let lane = (0..self.agent_of.len()).find(|&lane| {
            self.released[lane]
                && (0..self.capacity.ticks).all(|f| self.offsets[f * lanes + lane] == NONE)
        })?;
        self.released[lane] = false;
        self.agent_of[lane] = id;
        Some(lane)
    }

    /// Ends `lane`: its agent is gone. Its kept ticks stay in the recording
    /// until they are overwritten; then [`assign`](Self::assign) may give
    /// the lane to another agent.
    ///
    /// # Panics
    /// If `lane` was never assigned.
    pub fn release(&mut self, lane: usize) {
        assert!(
            lane < self.agent_of.len(),
            "lane {lane} was not assigned ({} are)",
            self.agent_of.len()
        );
        self.released[lane] = true;
    }

    /// Whether it gives lanes to agents as they come (it was made by
    /// [`with_lanes`](Self::with_lanes), with room for one at least): an
    /// agent it does not record now may be recorded later. (A recorder
    /// made by [`new`](Self::new) watches the agents it was given and
    /// keeps no table of agents for lanes.)
    #[cfg(feature = "live")]
    pub(crate) fn assigns_lanes(&self) -> bool {
        self.slot_of.is_empty() && self.lanes > 0
    }

    /// The id of the agent that `lane` records.
    pub fn lane_agent(&self, lane: usize) -> Option<u32> {
        self.agent_of.get(lane).copied()
    }

    /// Ticks one agent with `memory`, as [`tick`] does, recording the tick
    /// in `lane` of the current frame (see [`begin_frame`](Self::begin_frame);
    /// a lane that already has a tick in it begins the next frame).
    /// `input.agent` is left as the caller set it.
    ///
    /// # Errors
    /// As [`tick`].
    ///
    /// # Panics
    /// If `lane` was never assigned; as [`tick`]; a tick that panics is not
    /// kept.
    #[inline]
    pub fn tick_lane<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        lane: usize,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
    ) -> Result<TickReport, TickError> {
        self.tick_lane_traced(lane, tree, agent, memory, input, &mut NoTrace)
    }

    /// [`tick_lane`](Self::tick_lane), every event of the tick also handed
    /// to `also` (a `TraceRecorder` for a text trace, for instance).
    ///
    /// # Errors
    /// As [`tick`].
    ///
    /// # Panics
    /// As [`tick_lane`](Self::tick_lane).
    pub fn tick_lane_traced<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        lane: usize,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        also: &mut impl Tracer,
    ) -> Result<TickReport, TickError> {
        assert!(
            lane < self.agent_of.len(),
            "lane {lane} was not assigned ({} are)",
            self.agent_of.len()
        );
        self.tune.learn(memory.shared());
        if self.frames == 0 || self.offsets[self.frame * self.lanes + lane] != NONE {
            self.begin_frame();
        }
        self.tune.look(self.frames - 1);
        self.record(lane, tree, agent, memory, input, also)
    }

    /// [`tick_lane`](Self::tick_lane), the agent's own values
    /// ([`AgentData::record`]) recorded in the lane before its tick, when
    /// [`with_data`](Self::with_data) set room aside for them.
    ///
    /// # Errors
    /// As [`tick`].
    ///
    /// # Panics
    /// As [`tick_lane`](Self::tick_lane).
    pub fn tick_lane_with_data<
        A: AgentData + 'static,
        const L: usize,
        const S: usize,
        const N: usize,
    >(
        &mut self,
        lane: usize,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
    ) -> Result<TickReport, TickError> {
        self.record_lane_data(lane, &*agent);
        self.tick_lane(lane, tree, agent, memory, input)
    }
}
