//! The flight recorder: the last ticks of every watched agent, in buffers
//! allocated once.
//!
//! # Layout
//!
//! The recorder keeps the last K *frames*; a frame is one tick of the
//! crowd ([`FlightRecorder::tick_all`]). Each frame is an arena of `u64`
//! words that the watched agents' ticks are written into one after the
//! other, in the order they are ticked, and a row of
//! offsets, one per watched agent, saying where its tick starts (or that
//! it was not ticked). Writing a crowd's tick is thus one sequential
//! stream of words, whatever the crowd's size. One recorded tick is:
//!
//! ```text
//! header  4 words   now (f64 bits); leaf u16 | visited u16 | events u16 | levels u8 | flags u8;
//!                   the decision flags; the stimuli flags
//! events  n words   kind u8 | code u8 | item u16 | payload u32   (one per kept event)
//! path    2d words  item u16 | redecides u16 | time active (f32 bits); the redecide mask
//! ```
//!
//! The path is the agent's active path after the tick, root first, as
//! [`AgentMemory::active_path`] gives it, so every tick can be shown on its
//! own: the oldest one kept needs nothing that was overwritten. Steps that
//! the rest of a tick already says are not kept: `Start` (the header),
//! `Visit` (the count is in the header; the walk follows the path),
//! `Ticked` of a behavior that goes on (the leaf is in the header), `Idle`
//! (no leaf) and `End` (the header).
//!
//! Nor are the events of the tick's walk of its active path: the
//! recorder's tracer takes no steady tick ([`Tracer::STEADY`]). A steady
//! tick (its walk changed nothing, most ticks of a running crowd) keeps no
//! event at all and is marked so in its header; any other keeps one word
//! where its walk stopped ([`Event::Walked`]), then the events of the rest
//! of the tick. Reading a tick puts the walk's events back: on each level
//! of the path (down to where the walk stopped), in a prioritized group,
//! each child before the one on the path, turned down by the flag test it
//! fails with the tick's flags or, passing them, by its timer. So a
//! recorded tick costs the untraced tick's walk, not a traced one.
//!
//! A new frame overwrites the oldest one whole, so the last K ticks are
//! always there. A frame holds `watched × words_per_tick` words; the header
//! and path of every watched agent are set aside in it, and the events share
//! the rest, first come, first served. A tick whose events do not fit is
//! kept with the events that did and marked truncated. Nothing is
//! allocated after [`FlightRecorder::new`], but in a frame where a
//! tunable of the tree changed past the 64 changes the recorder keeps room
//! for (see the `tuning` module).

use alloc_crate::vec;
use alloc_crate::vec::Vec;

use bt_core::{
    AgentMemory, CrowdReport, Event, ItemIdx, NoTrace, TickError, TickInput, TickReport, Tracer,
    Tree, tick,
};

/// How much a [`FlightRecorder`] keeps per watched agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// The number of most recent ticks kept (K).
    pub ticks: usize,
    /// Words (8 bytes) per watched agent per tick: 4 for the header, 2 per
    /// level of the active path, 1 per kept event (a steady tick keeps
    /// none, any other one for its walk and one per step after it). An
    /// agent's tick may use more or fewer; a frame holds
    /// `watched × words_per_tick` in all. Less than the header and the
    /// deepest path (`4 + 2 × levels`) counts as that.
    pub words_per_tick: usize,
}

impl Capacity {
    /// The last `ticks` frames (`ticks` = seconds kept × frames a second:
    /// 300 keeps 10 s at 30 Hz): the last `ticks` ticks of each watched
    /// agent that ticks every frame; one ticking every `k`-th frame of a
    /// schedule keeps about `ticks / k` of its own. With room for a typical
    /// tick: 16 words, enough for a path of 4 levels and 4 decision steps
    /// (a steady tick needs only its header and path). What does not fit
    /// is kept with the steps that did, marked truncated; raise
    /// [`words_per_tick`](Self::words_per_tick) for deep trees or busy
    /// agents.
    pub const fn ticks(ticks: usize) -> Self {
        Capacity::new(ticks, 16)
    }

    /// The last `ticks` ticks, with room for `words_per_tick` words (8
    /// bytes) each: 4 for the tick's header, 2 per level of the active
    /// path, 1 per decision step kept (a steady tick keeps none). For a
    /// typical game, [`Capacity::ticks`] (16 words); for a tree 8 levels
    /// deep whose agents change their minds often, 32.
    pub const fn new(ticks: usize, words_per_tick: usize) -> Self {
        Capacity {
            ticks,
            words_per_tick,
        }
    }

    /// Bytes one watched agent takes per tick kept: its share of a frame's
    /// words, and its offset in the frame's row.
    pub fn bytes_per_tick(&self) -> usize {
        self.words_per_tick * 8 + 4
    }
}

impl Default for Capacity {
    /// 300 ticks (10 s at 30 Hz) of 16 words.
    fn default() -> Self {
        Capacity::new(300, 16)
    }
}

/// Which agents a [`FlightRecorder`] records.
#[derive(Clone, Copy, Debug)]
pub enum Watch<'a> {
    /// Every agent.
    All,
    /// These agent indices only (the others are ticked untraced).
    Agents(&'a [usize]),
}

/// Offset of an agent that has no tick in a frame.
const NONE: u32 = u32::MAX;

/// The flight recorder of a crowd: for each watched agent, its last ticks
/// (see [`Capacity`]) as compact decision events and its active path, in
/// memory allocated once, by [`new`](Self::new).
///
/// Tick agents through it ([`tick_all`](Self::tick_all) for a crowd,
/// [`tick`](Self::tick) for one agent) instead of through bt-core's
/// functions: it runs [`tick_traced`](bt_core::tick_traced) for the watched agents (with a
/// tracer that takes no steady tick) and plain [`tick`] for the others,
/// with the same results.
/// [`export`](Self::export) turns what it holds into a
/// [`Recording`](crate::Recording) for the viewer.
///
/// For a tree with tunables, it also keeps their values: it learns the
/// crowd's [`TreeShared`](bt_core::TreeShared) from the memories it ticks,
/// and at the start of each frame loads the count of changes put in
/// effect; when that moved, it reads the values and keeps each one that
/// changed with the frame's tick (the first whose decisions read it). The
/// recording holds the values at its first frame and every change after
/// it ([`Recording::tuning`](crate::Recording::tuning)).
#[derive(Clone, Debug)]
pub struct FlightRecorder {
    pub(crate) tree: crate::export::TreeInfo,
    /// Per agent index: its watch slot, or `u32::MAX` when unwatched.
    slot_of: Vec<u32>,
    /// Per watch slot: the agent index.
    agent_of: Vec<u32>,
    /// K frames of `frame_words` words.
    words: Vec<u64>,
    /// K rows of one offset per watch slot (`lanes` per row).
    offsets: Vec<u32>,
    /// Watch slots per frame: those watched, or the lanes of
    /// [`with_lanes`](Self::with_lanes), assigned or not.
    lanes: usize,
    /// Per watch slot: given back by [`release`](Self::release), to be
    /// assigned again once none of its ticks is kept.
    released: Vec<bool>,
    capacity: Capacity,
    frame_words: usize,
    /// Words of a tick that are not events: the header and the deepest path.
    fixed: usize,
    /// Frames begun so far; the current one is `frames - 1`.
    frames: u64,
    /// The current frame's place among the K.
    frame: usize,
    /// Words used in the current frame.
    fill: usize,
    /// Watched agents with a tick in the current frame.
    filled: usize,
    /// Words written over all frames, for [`mean_words_per_tick`](Self::mean_words_per_tick).
    written: u64,
    /// Ticks written over all frames.
    ticks: u64,
    /// The agents' own values, when [`with_data`](Self::with_data) set
    /// room aside for them: one block per (frame, lane).
    pub(crate) data: Option<DataStore>,
    /// The tree's tunables: the values in effect and the changes of the
    /// frames kept.
    pub(crate) tune: TuneLog,
    /// Which recorder it is: a clone is another one (the live server
    /// tells them apart).
    #[cfg_attr(not(feature = "live"), allow(dead_code))]
    pub(crate) instance: Instance,
}

/// A number no other recorder of the process has, new for a clone: the
/// live server tells the recorders it is handed apart by it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Instance(u64);

impl Instance {
    fn new() -> Self {
        static NEXT: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);
        Instance(NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed))
    }

    /// The number.
    #[cfg_attr(not(feature = "live"), allow(dead_code))]
    pub(crate) fn get(&self) -> u64 {
        self.0
    }
}

impl Clone for Instance {
    fn clone(&self) -> Self {
        Instance::new()
    }
}

impl FlightRecorder {
    /// A recorder for `agents` agents (indices `0..agents`) running `tree`,
    /// recording those `watch` names.
    ///
    /// # Panics
    /// If a watched index is not below `agents`, `capacity.ticks` is 0, or
    /// a frame would hold more than `u32::MAX` words.
    pub fn new<A: 'static, const L: usize, const S: usize, const N: usize>(
        tree: &'static Tree<A, L, S, N>,
        agents: usize,
        watch: Watch<'_>,
        capacity: Capacity,
    ) -> Self {
        assert!(
            capacity.ticks > 0,
            "a flight recorder keeps at least one tick"
        );
        let mut slot_of = vec![u32::MAX; agents];
        let mut agent_of = Vec::new();
        let mut add = |i: usize| {
            assert!(i < agents, "watched agent {i} of a crowd of {agents}");
            if slot_of[i] == u32::MAX {
                slot_of[i] = agent_of.len() as u32;
                agent_of.push(i as u32);
            }
        };
        match watch {
            Watch::All => (0..agents).for_each(&mut add),
            Watch::Agents(list) => list.iter().copied().for_each(&mut add),
        }
        let fixed = HEADER + 2 * L;
        let watched = agent_of.len();
        let frame_words = watched * capacity.words_per_tick.max(fixed);
        assert!(
            u32::try_from(frame_words).is_ok(),
            "a frame of {watched} agents x {} words is too large",
            capacity.words_per_tick
        );
        // Not zero, so that every page is written (and mapped) now rather
        // than on the first ticks; no word is read before it is written.
        let words = vec![u64::MAX; capacity.ticks * frame_words];
        let info = crate::export::TreeInfo::of(tree);
        FlightRecorder {
            tree: info,
            words,
            offsets: vec![NONE; capacity.ticks * watched],
            lanes: watched,
            released: vec![false; watched],
            slot_of,
            agent_of,
            capacity,
            frame_words,
            fixed,
            frames: 0,
            frame: 0,
            fill: 0,
            filled: 0,
            written: 0,
            ticks: 0,
            data: None,
            tune: TuneLog::new(tree.tunables),
            instance: Instance::new(),
        }
    }

    /// The recorder, with room for the watched agents' own values
    /// ([`AgentData`]) at every kept tick, set aside now: `capacity` per
    /// lane and kept tick. [`tick_all_with_data`](Self::tick_all_with_data)
    /// and [`tick_lane_with_data`](Self::tick_lane_with_data) record them
    /// (the other ticks record none); the export holds them. Call it after
    /// [`with_lanes`](Self::with_lanes), which sets the lanes.
    pub fn with_data(mut self, capacity: DataCapacity) -> Self {
        self.data = Some(DataStore::new(capacity, self.capacity.ticks * self.lanes));
        self
    }

    /// Names the bits of the decision flags (`D`) and the stimuli flags
    /// (`S`) by the names of their `bitflags` constants, for the recording:
    /// the viewer then shows `needs ENEMY_VISIBLE` rather than
    /// `needs 0x1`. Flags of more than one bit are not named.
    pub fn name_flags<D, S>(self) -> Self
    where
        D: bitflags::Flags,
        D::Bits: Into<u64>,
        S: bitflags::Flags,
        S::Bits: Into<u64>,
    {
        self.name_decision_flags::<D>().name_stimuli_flags::<S>()
    }

    /// Names the bits of the decision flags only: see
    /// [`name_flags`](Self::name_flags).
    pub fn name_decision_flags<D>(mut self) -> Self
    where
        D: bitflags::Flags,
        D::Bits: Into<u64>,
    {
        self.tree.flag_names.decision = flag_names::<D>();
        self
    }

    /// Names the bits of the stimuli flags only: see
    /// [`name_flags`](Self::name_flags).
    pub fn name_stimuli_flags<S>(mut self) -> Self
    where
        S: bitflags::Flags,
        S::Bits: Into<u64>,
    {
        self.tree.flag_names.stimuli = flag_names::<S>();
        self
    }

    /// What it keeps per watched agent.
    pub fn capacity(&self) -> Capacity {
        self.capacity
    }

    /// The number of watched agents.
    pub fn watched(&self) -> usize {
        self.agent_of.len()
    }

    /// Whether agent `index` is watched.
    pub fn is_watched(&self, index: usize) -> bool {
        self.slot_of.get(index).is_some_and(|&s| s != u32::MAX)
    }

    /// Bytes of the frames and of the agents' values (what recording
    /// costs in memory, beyond a word per agent for the watch table).
    pub fn frame_bytes(&self) -> usize {
        self.words.len() * 8
            + self.offsets.len() * 4
            + self.data.as_ref().map_or(0, DataStore::bytes)
    }

    /// Words written per recorded tick, on average: how full the average
    /// tick is, to size [`Capacity::words_per_tick`].
    pub fn mean_words_per_tick(&self) -> f64 {
        if self.ticks == 0 {
            0.0
        } else {
            self.written as f64 / self.ticks as f64
        }
    }

    /// Frames (crowd ticks) recorded so far, kept or not.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The serial of the oldest frame kept.
    pub(crate) fn first_kept(&self) -> u64 {
        self.frames.saturating_sub(self.capacity.ticks as u64)
    }

    /// Begins a new frame (one tick of the crowd), overwriting the oldest.
    /// [`tick_all`](Self::tick_all) and [`tick`](Self::tick) begin frames
    /// themselves; call it before each round of
    /// [`tick_lane`](Self::tick_lane) calls. A tree's tunables changed
    /// since the last frame (a game that ticks agent by agent puts the
    /// staged changes in effect with
    /// [`TreeShared::apply_tuning`](bt_core::TreeShared::apply_tuning) at
    /// the start of its frame) are recorded as of this frame.
    pub fn begin_frame(&mut self) {
        let lanes = self.lanes;
        let f = (self.frames % self.capacity.ticks as u64) as usize;
        self.offsets[f * lanes..(f + 1) * lanes].fill(NONE);
        if let Some(data) = &mut self.data {
            (f * lanes..(f + 1) * lanes).for_each(|b| data.clear(b));
        }
        self.frames += 1;
        self.frame = f;
        self.fill = 0;
        self.filled = 0;
        self.tune.trim(self.first_kept());
        self.tune.look(self.frames - 1);
    }

    /// Ticks one agent with `memory`, as [`tick`] does, recording the tick
    /// when agent `index` is watched. A watched agent that already has a
    /// tick in the current frame begins the next frame, so a loop that
    /// ticks each agent once per frame is recorded frame by frame.
    /// `input.agent` is left as the caller set it.
    ///
    /// # Errors
    /// As [`tick`].
    ///
    /// # Panics
    /// As [`tick`]; a tick that panics is not kept.
    #[inline]
    pub fn tick<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agent: &mut A,
        memory: &mut AgentMemory<A, L, S, N>,
        input: &TickInput,
        index: usize,
    ) -> Result<TickReport, TickError> {
        match self.slot_of.get(index) {
            Some(&slot) if slot != u32::MAX => {
                let slot = slot as usize;
                self.tune.learn(memory.shared());
                if self.frames == 0 || self.offsets[self.frame * self.lanes + slot] != NONE {
                    self.begin_frame();
                }
                self.tune.look(self.frames - 1);
                self.record(slot, tree, agent, memory, input, &mut NoTrace)
            }
            _ => tick(tree, agent, memory, input),
        }
    }

    /// Ticks every agent once, as [`tick_all`](bt_core::tick_all) does (agent `i` with
    /// `memories[i]` and the input `input(i, &agents[i])`, under the id `i`
    /// unless the input sets one), recording the
    /// watched ones in a new frame. The runs of unwatched agents between them go through
    /// [`tick_range`](bt_core::tick_range), so they cost what they cost there.
    /// As `tick_all`, it first puts the changes staged on the crowd's
    /// tunables in effect, for every agent of the frame alike, and the
    /// recording keeps each change with this frame's tick.
    ///
    /// # Panics
    /// If the slices differ in length or are longer than the crowd the
    /// recorder was made for, or as [`tick_all`](bt_core::tick_all).
    #[inline]
    pub fn tick_all<A: 'static, const L: usize, const S: usize, const N: usize>(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agents: &mut [A],
        memories: &mut [AgentMemory<A, L, S, N>],
        input: impl FnMut(usize, &mut A) -> TickInput,
    ) -> CrowdReport {
        self.crowd(tree, agents, memories, input, None)
    }

    /// [`tick_all`](Self::tick_all), each watched agent's own values
    /// ([`AgentData::record`]) recorded before its tick, when
    /// [`with_data`](Self::with_data) set room aside for them (else as
    /// `tick_all`).
    ///
    /// # Panics
    /// As [`tick_all`](Self::tick_all).
    pub fn tick_all_with_data<
        A: AgentData + 'static,
        const L: usize,
        const S: usize,
        const N: usize,
    >(
        &mut self,
        tree: &Tree<A, L, S, N>,
        agents: &mut [A],
        memories: &mut [AgentMemory<A, L, S, N>],
        input: impl FnMut(usize, &mut A) -> TickInput,
    ) -> CrowdReport {
        self.crowd(
            tree,
            agents,
            memories,
            input,
            Some(|d: &mut DataStore, b, a: &A| d.record(b, a)),
        )
    }
}

/// The single-bit flags of `F` by bit number, for the export.
fn flag_names<F>() -> Vec<(u32, &'static str)>
where
    F: bitflags::Flags,
    F::Bits: Into<u64>,
{
    F::FLAGS
        .iter()
        .filter(|f| !f.name().is_empty())
        .filter_map(|f| {
            let bits: u64 = f.value().bits().into();
            bits.is_power_of_two()
                .then(|| (bits.trailing_zeros(), f.name()))
        })
        .collect()
}

mod data;
mod frame;
mod lanes;
mod read;
mod runs;
mod scheduled;
mod tuning;
mod words;
mod write;

pub use data::{AgentData, DataCapacity, DataOut};
pub(crate) use data::{DataStore, DataValue};

pub(crate) use words::*;

pub(crate) use frame::{TickView, TickWords};
pub(crate) use tuning::{Change, TuneLog};

impl FlightRecorder {
    /// Records `values` ([`AgentData::record`]) as the own values of the
    /// agent on `lane` at its tick of the current frame, for a caller
    /// whose agent's values are not the agent itself (the components of
    /// an ECS entity, say). Call it before the lane's
    /// [`tick_lane`](Self::tick_lane) of the frame: as there, a lane that
    /// already has a tick in the current frame (or a recorder that has
    /// begun no frame) begins the next one, so that the values and the
    /// tick land in the same frame. Does nothing when
    /// [`with_data`](Self::with_data) set no room aside. Allocates
    /// nothing.
    ///
    /// # Panics
    /// If `lane` was never assigned.
    pub fn record_lane_data(&mut self, lane: usize, values: &(impl AgentData + ?Sized)) {
        assert!(
            lane < self.agent_of.len(),
            "lane {lane} was not assigned ({} are)",
            self.agent_of.len()
        );
        if self.data.is_none() {
            return;
        }
        if self.frames == 0 || self.offsets[self.frame * self.lanes + lane] != NONE {
            self.begin_frame();
        }
        let block = self.frame * self.lanes + lane;
        if let Some(data) = &mut self.data {
            data.record(block, values);
        }
    }
}
