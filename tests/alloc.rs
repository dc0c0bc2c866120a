//! Ticking never allocates: after the first tick, a crowd of agents running
//! a tree that uses every policy, both decider flags, every kind of
//! precondition, memory blocks and a DBlock makes no heap allocation at all,
//! through `tick_all` and through `tick_traced` with `NoTrace`; nor does a
//! crowd bound to a `TreeShared`, with gates, a global cooldown, a group
//! role, a slot group and deferred actions drained every tick; nor does
//! bt-viewer's flight recorder once it is made. And a JSON snapshot with a
//! large unknown field is refused without holding it.
//!
//! A separate test binary, because it installs a counting global allocator.
//! It counts per thread (the test harness allocates on its own threads), and
//! only while a test switches counting on.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bt_core::{
    AgentMemory, Decide, NoTrace, Rate, Schedule, Stimuli, TickInput, behavior, decider, group,
    tick_all, tick_scheduled, tick_traced, tree,
};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Bytes allocated and not freed while counting, and their peak.
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the thread-locals may be gone while a thread exits.
    let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
    if counting {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

/// Adds `bytes` (freed when negative) to this thread's live bytes.
fn note_bytes(bytes: i64) {
    let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
    if counting {
        let live = LIVE.try_with(|n| {
            n.set(n.get() + bytes);
            n.get()
        });
        if let Ok(live) = live {
            let _ = PEAK.try_with(|p| p.set(p.get().max(live)));
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counting only touches `const`-initialised thread-locals,
// which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        note_bytes(layout.size() as i64);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        note_bytes(layout.size() as i64);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        note_bytes(new_size as i64 - layout.size() as i64);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note_bytes(-(layout.size() as i64));
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` with this thread's allocations counted; returns how many.
fn allocations_in(f: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f` with this thread's allocations counted; returns the most
/// bytes it held at once.
fn peak_bytes_in(f: impl FnOnce()) -> u64 {
    LIVE.with(|n| n.set(0));
    PEAK.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    PEAK.with(Cell::get).max(0) as u64
}

/// Runs `f` with this thread's allocations counted; returns the bytes it
/// allocated and did not free.
fn held_bytes_in(f: impl FnOnce()) -> i64 {
    LIVE.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    LIVE.with(Cell::get)
}

const AGENTS: usize = 200;
const TICKS: u32 = 300;
const DT: f32 = 1.0 / 30.0;

bitflags::bitflags! {
    /// Decision flags, made from the agent's world each tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Decision: u32 {
        const DANGER = 1 << 0;
        const INTRUDER = 1 << 1;
        const HURT = 1 << 2;
        const HUNGRY = 1 << 3;
        const TIRED = 1 << 4;
        const HAS_NEST = 1 << 5;
        const CALM = 1 << 6;
        const PLAYFUL = 1 << 7;
    }

    /// Stimuli, set by the world with time-outs.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Sense: u64 {
        const SMELL = 1 << 0;
        const NOISE = 1 << 1;
        const HIT = 1 << 2;
    }
}

/// What each behavior counts its activations under.
#[derive(Clone, Copy)]
enum B {
    Flee,
    GuardScope,
    Yell,
    Fight,
    FindFood,
    FoodSpotReceived,
    EatFood,
    Sniff,
    Listen,
    Patrol,
    Chase,
    Pounce,
    Rest,
    Flip,
    Roll,
    Dance,
    North,
    South,
    East,
    West,
}

const NAMES: [&str; 20] = [
    "FLEE",
    "GUARD_SCOPE",
    "YELL",
    "FIGHT",
    "FIND_FOOD",
    "(food spot)",
    "EAT_FOOD",
    "SNIFF",
    "LISTEN",
    "PATROL",
    "CHASE",
    "POUNCE",
    "REST",
    "FLIP",
    "ROLL",
    "DANCE",
    "NORTH",
    "SOUTH",
    "EAST",
    "WEST",
];

/// The agent: a W1-like world with stimuli, a mood, and counters.
struct Critter {
    rng: u64,
    danger: bool,
    intruder: bool,
    hurt: bool,
    hungry: bool,
    tired: bool,
    has_nest: bool,
    calm: bool,
    playful: bool,
    /// A random byte redrawn each tick, read by `decide` functions.
    mood: u8,
    stimuli: Stimuli<Sense, 3, u32>,
    sensed: Sense,
    activations: [u32; 20],
}

fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn chance(s: &mut u64, per_mille: u64) -> bool {
    next(s) % 1000 < per_mille
}

impl Critter {
    fn new(i: usize) -> Self {
        Critter {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            danger: false,
            intruder: false,
            hurt: false,
            hungry: false,
            tired: false,
            has_nest: i.is_multiple_of(2),
            calm: true,
            playful: false,
            mood: 0,
            stimuli: Stimuli::new(),
            sensed: Sense::empty(),
            activations: [0; 20],
        }
    }

    fn count(&mut self, b: B) {
        self.activations[b as usize] += 1;
    }

    /// The world step, before the tick.
    fn live(&mut self) {
        let s = &mut self.rng;
        self.danger = if self.danger {
            !chance(s, 150)
        } else {
            chance(s, 5)
        };
        if self.has_nest {
            self.intruder = if self.intruder {
                !chance(s, 100)
            } else {
                chance(s, 10)
            };
        }
        if self.intruder && !self.hurt {
            self.hurt = chance(s, 20);
        } else if !self.intruder && self.hurt {
            self.hurt = !chance(s, 300);
        }
        self.hungry |= chance(s, 15);
        self.tired |= chance(s, 8);
        self.calm = if self.calm {
            !chance(s, 40)
        } else {
            chance(s, 60)
        };
        self.playful = if self.playful {
            !chance(s, 100)
        } else {
            chance(s, 20)
        };
        self.mood = next(s) as u8;
        // A full `Stimuli` refuses a stimulus; the world then simply loses it.
        if chance(s, 15) {
            let _ = self.stimuli.set(Sense::SMELL, 7, Some(1.0));
        }
        if chance(s, 15) {
            let _ = self.stimuli.set(Sense::NOISE, 3, Some(0.5));
        }
        if self.hurt && chance(s, 50) {
            let _ = self.stimuli.set(Sense::HIT, 66, Some(0.3));
        }
        self.sensed = self.stimuli.update(DT);
    }

    fn decision(&self) -> Decision {
        let mut d = Decision::empty();
        d.set(Decision::DANGER, self.danger);
        d.set(Decision::INTRUDER, self.intruder);
        d.set(Decision::HURT, self.hurt);
        d.set(Decision::HUNGRY, self.hungry);
        d.set(Decision::TIRED, self.tired);
        d.set(Decision::HAS_NEST, self.has_nest);
        d.set(Decision::CALM, self.calm);
        d.set(Decision::PLAYFUL, self.playful);
        d
    }

    fn input(&self, i: usize, now: f64) -> TickInput {
        TickInput::new(now, DT)
            .with_decision(self.decision())
            .with_stimuli(self.sensed)
            .with_agent(i as u32)
    }
}

/// A memory block: ticks so far (and a budget from a DBlock).
#[derive(Default)]
struct Ticks {
    done: u8,
    budget: u8,
}

fn step(m: &mut Ticks, n: u8) -> bool {
    m.done += 1;
    m.done < n
}

/// The DBlock FIND_FOOD's `decide` hands to its behavior.
struct FoodSpot {
    distance: u8,
}

fn accept(yes: bool) -> f32 {
    if yes { 1.0 } else { 0.0 }
}

macro_rules! timed {
    ($($name:ident: $b:ident, $n:expr;)*) => {$(
        behavior! { $name: Critter, memory: Ticks,
            activate: |c, _m, _cx| { c.count(B::$b); true },
            tick: |_c, m, _cx| step(m, $n),
        }
    )*};
}

timed! {
    YELL: Yell, 2;
    LISTEN: Listen, 2;
    PATROL: Patrol, 10;
    CHASE: Chase, 4;
    POUNCE: Pounce, 3;
    FLIP: Flip, 2;
    ROLL: Roll, 3;
    DANCE: Dance, 4;
    NORTH: North, 2;
    SOUTH: South, 2;
    EAST: East, 3;
    WEST: West, 3;
}

behavior! { FLEE: Critter,
    activate: |c, _cx| { c.count(B::Flee); true },
    tick: |c, _cx| c.danger,
}
behavior! { GUARD_SCOPE: Critter,
    activate: |c, _cx| { c.count(B::GuardScope); true },
    deactivate: |_c, _cx| {},
}
behavior! { FIGHT: Critter, memory: Ticks,
    activate: |c, _m, _cx| { c.count(B::Fight); true },
    tick: |c, m, _cx| {
        let running = step(m, 5);
        c.intruder &= running;
        running
    },
}
behavior! { FIND_FOOD: Critter, memory: Ticks, dblock: FoodSpot,
    activate: |c, m, spot, _cx| {
        c.count(B::FindFood);
        let Some(spot) = spot else { return false };
        c.count(B::FoodSpotReceived);
        m.budget = spot.distance;
        true
    },
    tick: |_c, m, _cx| { let budget = m.budget; step(m, budget) },
}
behavior! { EAT_FOOD: Critter, memory: Ticks,
    activate: |c, _m, _cx| { c.count(B::EatFood); true },
    tick: |c, m, _cx| {
        let running = step(m, 4);
        c.hungry &= running;
        running
    },
}
behavior! { SNIFF: Critter, memory: Ticks,
    activate: |c, _m, _cx| { c.count(B::Sniff); true },
    tick: |c, m, _cx| {
        let running = step(m, 3);
        if !running {
            c.stimuli.clear(Sense::SMELL);
        }
        running
    },
}
behavior! { REST: Critter, memory: Ticks,
    activate: |c, _m, _cx| { c.count(B::Rest); true },
    tick: |c, m, _cx| {
        let running = step(m, 6);
        c.tired &= running;
        running
    },
}

fn find_food(c: &Critter, d: &mut Decide<FoodSpot>) -> f32 {
    d.set(FoodSpot {
        distance: 2 + c.mood % 3,
    });
    1.0
}

// Prioritized groups, decision flags (all four tests) and a group behavior
// with CALL_DECIDE_ON_REDECIDE.
decider! { D_FLEE: Critter => FLEE, needs_all: Decision::DANGER }
decider! { D_YELL: Critter => YELL, needs_all: Decision::HURT, stimuli_any: Sense::HIT | Sense::NOISE }
decider! { D_FIGHT: Critter => FIGHT }
group! { GUARD: Critter, prioritized [D_YELL, D_FIGHT],
    needs_all: Decision::HAS_NEST | Decision::INTRUDER,
    decide: |c, _| accept(c.intruder),
    behavior: GUARD_SCOPE,
    flags: CALL_DECIDE_ON_REDECIDE,
}
// Sequential, with a DBlock.
decider! { D_FIND_FOOD: Critter => FIND_FOOD, decide: find_food }
decider! { D_EAT_FOOD: Critter => EAT_FOOD }
group! { EAT: Critter, sequential [D_FIND_FOOD, D_EAT_FOOD],
    needs_all: Decision::HUNGRY,
    needs_none: Decision::DANGER,
}
// Delegating, with stimuli tests (all four).
decider! { D_SNIFF: Critter => SNIFF, stimuli_all: Sense::SMELL, stimuli_none: Sense::HIT }
decider! { D_LISTEN: Critter => LISTEN, stimuli_any: Sense::NOISE, stimuli_not_all: Sense::SMELL | Sense::NOISE }
group! { INVESTIGATE: Critter, prioritized [D_SNIFF, D_LISTEN], flags: DELEGATE_DECIDE }
// A timer.
decider! { D_PATROL: Critter => PATROL, needs_all: Decision::HAS_NEST, every: 2.0 }
// Scored.
decider! { D_CHASE: Critter => CHASE, decide: |c, _| f32::from(1 + c.mood % 5) }
decider! { D_POUNCE: Critter => POUNCE, decide: |c, _| f32::from(1 + c.mood / 51) }
group! { PLAY: Critter, scored [D_CHASE, D_POUNCE],
    needs_any: Decision::PLAYFUL,
    needs_not_all: Decision::TIRED | Decision::HUNGRY,
}
decider! { D_REST: Critter => REST, needs_all: Decision::TIRED }
// Random, weighted.
decider! { D_FLIP: Critter => FLIP }
decider! { D_ROLL: Critter => ROLL, decide: |_, _| 2.0 }
decider! { D_DANCE: Critter => DANCE, decide: |c, _| f32::from(c.mood % 3) }
group! { IDLE: Critter, random [D_FLIP, D_ROLL, D_DANCE], needs_all: Decision::CALM }
// Shuffle.
decider! { D_NORTH: Critter => NORTH }
decider! { D_SOUTH: Critter => SOUTH }
decider! { D_EAST: Critter => EAST }
decider! { D_WEST: Critter => WEST }
group! { WANDER: Critter, shuffle [D_NORTH, D_SOUTH, D_EAST, D_WEST] }
group! { ROOT: Critter,
    prioritized [D_FLEE, GUARD, EAT, INVESTIGATE, D_PATROL, PLAY, D_REST, IDLE, WANDER],
}
tree! { CRITTER: Critter = ROOT, memory: CritterMemory }

struct Crowd {
    critters: Vec<Critter>,
    memories: Vec<CritterMemory>,
}

impl Crowd {
    fn new() -> Self {
        Crowd {
            critters: (0..AGENTS).map(Critter::new).collect(),
            memories: (0..AGENTS).map(|i| CRITTER.new_memory(i as u64)).collect(),
        }
    }

    /// Every behavior ran: the tree was exercised everywhere.
    fn assert_every_behavior_ran(&self) {
        for (i, name) in NAMES.iter().enumerate() {
            let n: u32 = self.critters.iter().map(|c| c.activations[i]).sum();
            assert!(n > 0, "{name} never activated");
        }
    }
}

/// Ticks the crowd with `tick_all`; returns the allocations after tick 0.
fn run_tick_all(crowd: &mut Crowd) -> u64 {
    let mut tick = |t: u32| {
        let now = f64::from(t) / 30.0;
        crowd.critters.iter_mut().for_each(Critter::live);
        let report = tick_all(
            &CRITTER,
            &mut crowd.critters,
            &mut crowd.memories,
            |i, c| c.input(i, now),
        );
        assert_eq!(report.errors, 0);
        assert_eq!(report.subset_violations, 0);
    };
    tick(0);
    allocations_in(|| (1..TICKS).for_each(&mut tick))
}

/// Ticks the crowd with `tick_traced` and `NoTrace`; returns the
/// allocations after tick 0.
fn run_traced(crowd: &mut Crowd) -> u64 {
    let mut tick = |t: u32| {
        let now = f64::from(t) / 30.0;
        for (i, (c, m)) in crowd
            .critters
            .iter_mut()
            .zip(&mut crowd.memories)
            .enumerate()
        {
            c.live();
            let input = c.input(i, now);
            let report = tick_traced(&CRITTER, c, m, &input, &mut NoTrace).unwrap();
            assert!(report.subset_violation.is_none());
        }
    };
    tick(0);
    allocations_in(|| (1..TICKS).for_each(&mut tick))
}

#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn tick_all_allocates_nothing_after_the_first_tick() {
    let mut crowd = Crowd::new();
    assert_eq!(
        run_tick_all(&mut crowd),
        0,
        "heap allocations while ticking"
    );
    crowd.assert_every_behavior_ran();
}

#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn tick_traced_with_no_trace_allocates_nothing_after_the_first_tick() {
    let mut crowd = Crowd::new();
    assert_eq!(run_traced(&mut crowd), 0, "heap allocations while ticking");
    crowd.assert_every_behavior_ran();
}

/// The rate of an agent `distance` places from a camera that moves along
/// the crowd: near ones every frame, then every 4th and every 16th frame,
/// the farthest only when woken.
fn rate_at(distance: usize) -> Rate {
    match distance {
        0..40 => Rate::EveryFrame,
        40..120 => Rate::Every(4),
        120..190 => Rate::Every(16),
        _ => Rate::OnWake,
    }
}

/// A scheduled crowd allocates nothing once it is set up: every frame the
/// camera moves and rates change, under a budget that leaves agents
/// waiting, with agents woken by a call and by a stimulus.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_scheduled_crowd_allocates_nothing_after_its_setup() {
    const BUDGET: u32 = 60;
    let mut crowd = Crowd::new();
    let mut schedule = Schedule::new(AGENTS, 0.0).with_budget(Some(BUDGET));
    let (mut ticked, mut waited) = (0, 0);
    let mut tick = |t: u32| {
        let now = f64::from(t) / 30.0;
        crowd.critters.iter_mut().for_each(Critter::live);
        for i in 0..AGENTS {
            let rate = rate_at((i + 3 * t as usize) % AGENTS);
            schedule.set_rate(i, rate).unwrap();
        }
        schedule.wake(7 * t as usize % AGENTS);
        let i = 13 * t as usize % AGENTS;
        let _ = schedule.stimulate(
            i,
            &mut crowd.critters[i].stimuli,
            Sense::NOISE,
            1,
            Some(0.5),
            now,
        );
        let report = tick_scheduled(
            &CRITTER,
            &mut crowd.critters,
            &mut crowd.memories,
            &mut schedule,
            now,
            |i, c, dt| {
                let mut input = c.input(i, now);
                input.dt = dt;
                input
            },
        );
        assert_eq!(report.crowd.errors, 0);
        assert!(report.ticked <= BUDGET);
        ticked += report.ticked;
        waited += report.waiting;
    };
    // The setup: the first frame, after which every period of the run has
    // its buckets.
    tick(0);
    let allocations = allocations_in(|| (1..TICKS).for_each(&mut tick));
    assert_eq!(allocations, 0, "heap allocations while ticking");
    assert!(ticked > 0 && waited > 0, "the budget left agents waiting");
    crowd.assert_every_behavior_ran();
}

/// Ticks the crowd through a flight recorder watching `watch`; returns
/// the allocations after tick 0.
fn run_recorded(crowd: &mut Crowd, watch: bt_viewer::Watch<'_>) -> u64 {
    let capacity = bt_viewer::Capacity::new(64, 16);
    let mut recorder = bt_viewer::FlightRecorder::new(&CRITTER, AGENTS, watch, capacity);
    let mut tick = |t: u32| {
        let now = f64::from(t) / 30.0;
        crowd.critters.iter_mut().for_each(Critter::live);
        let report = recorder.tick_all(
            &CRITTER,
            &mut crowd.critters,
            &mut crowd.memories,
            |i, c| c.input(i, now),
        );
        assert_eq!(report.errors, 0);
    };
    tick(0);
    let n = allocations_in(|| (1..TICKS).for_each(&mut tick));
    // The rings did fill and wrap.
    assert!(recorder.mean_words_per_tick() > 4.0);
    n
}

#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_flight_recorder_allocates_nothing_after_the_first_tick() {
    let mut crowd = Crowd::new();
    let all = run_recorded(&mut crowd, bt_viewer::Watch::All);
    assert_eq!(all, 0, "heap allocations while recording every agent");
    crowd.assert_every_behavior_ran();
    let mut crowd = Crowd::new();
    let some = run_recorded(&mut crowd, bt_viewer::Watch::Agents(&[1, 2, 40]));
    assert_eq!(some, 0, "heap allocations while recording some agents");
}

/// What the recorder keeps of a critter beside its decisions.
impl bt_viewer::AgentData for Critter {
    fn record(&self, out: &mut bt_viewer::DataOut<'_>) {
        out.num("mood", f64::from(self.mood));
        out.num("hungry", f64::from(u8::from(self.hungry)));
        out.text("state", if self.danger { "in danger" } else { "calm" });
    }
}

/// Recording the watched agents' own values allocates nothing either:
/// their names are interned and their values written into room set aside
/// when the recorder was made.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn recording_agent_values_allocates_nothing_after_the_first_tick() {
    let mut crowd = Crowd::new();
    let capacity = bt_viewer::Capacity::new(64, 16);
    let mut recorder = bt_viewer::FlightRecorder::new(
        &CRITTER,
        AGENTS,
        bt_viewer::Watch::Agents(&[0, 3, 17]),
        capacity,
    )
    .with_data(bt_viewer::DataCapacity::new(4, 32));
    let mut tick = |t: u32| {
        let now = f64::from(t) / 30.0;
        crowd.critters.iter_mut().for_each(Critter::live);
        let report = recorder.tick_all_with_data(
            &CRITTER,
            &mut crowd.critters,
            &mut crowd.memories,
            |i, c| c.input(i, now),
        );
        assert_eq!(report.errors, 0);
    };
    tick(0);
    let n = allocations_in(|| (1..TICKS).for_each(&mut tick));
    assert_eq!(n, 0, "heap allocations while recording agent values");
    // The values were recorded, up to the last tick.
    let json = recorder.export().to_json();
    for name in ["\"mood\"", "\"hungry\"", "in danger"] {
        assert!(json.contains(name), "{name} missing from the recording");
    }
}

#[test]
fn the_counter_sees_allocations() {
    // The counting itself works: a `Vec` allocates once.
    let n = allocations_in(|| {
        std::hint::black_box(Vec::<u8>::with_capacity(16));
    });
    assert_eq!(n, 1);
}

/// The tree's shape, checked at compile time: three levels, two slots
/// (the timer and the shuffle group), and 16-byte blocks, fitted to its
/// largest memory type.
const _: fn(CritterMemory) -> AgentMemory<Critter, 3, 2, 16> = |m| m;

/// The shared checks and deferred actions allocate nothing either: a squad
/// whose memories are bound to one `TreeShared`, with a gate, a global
/// cooldown, a group role, a slot group and a deferred action, and a game
/// loop that drains the requests into a buffer it owns and reports
/// outcomes back.
mod shared {
    use bt_core::{
        Action, ActionOp, ActionState, Outcome, TickInput, Ticket, behavior, decider, group,
        tick_all, tree,
    };

    use super::{DT, allocations_in};

    const SOLDIERS: usize = 64;
    const TICKS: u32 = 600;
    /// Ticks from a launch to the game's report.
    const FLIGHT: u32 = 20;

    #[derive(Default)]
    struct Soldier {
        rng: u64,
        sees: bool,
        under_fire: bool,
        wants_flank: bool,
        /// Activations of THROW, FIRE, FLANK_MOVE, HIDE and MOVE_UP.
        runs: [u32; 5],
    }

    impl Soldier {
        fn new(i: usize) -> Self {
            Soldier {
                rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
                ..Soldier::default()
            }
        }

        fn chance(&mut self, per_mille: u64) -> bool {
            super::chance(&mut self.rng, per_mille)
        }

        fn live(&mut self) {
            self.sees ^= self.chance(if self.sees { 30 } else { 15 });
            self.under_fire ^= self.chance(20);
            self.wants_flank |= self.chance(5);
        }
    }

    behavior! { THROW: Soldier,
        activate: |s, _cx| { s.runs[0] += 1; true },
        launch: |s, _cx| Some(Action::new(1, s.rng)),
        tick: |s, cx| s.sees && cx.action == ActionState::Pending,
    }
    behavior! { FIRE: Soldier, memory: u8,
        activate: |s, _m, _cx| { s.runs[1] += 1; true },
        tick: |_s, m, _cx| { *m += 1; *m < 10 },
    }
    behavior! { FLANK_MOVE: Soldier,
        activate: |s, _cx| { s.runs[2] += 1; true },
        tick: |_s, cx| cx.time_active() < 1.0,
        deactivate: |s, _cx| s.wants_flank = false,
    }
    behavior! { HIDE: Soldier, activate: |s, _cx| { s.runs[3] += 1; true } }
    behavior! { MOVE_UP: Soldier, activate: |s, _cx| { s.runs[4] += 1; true } }

    fn accept(yes: bool) -> f32 {
        if yes { 1.0 } else { 0.0 }
    }

    decider! { FLANK: Soldier => FLANK_MOVE, decide: |s, _| accept(s.wants_flank), together: 2 }
    decider! { THROW_GRENADE: Soldier => THROW, decide: |s, _| accept(s.sees), gate: 1, cooldown: 1.0 }
    decider! { SHOOT: Soldier => FIRE, decide: |s, _| accept(s.sees), gate: 3 }
    decider! { TAKE_COVER: Soldier => HIDE }
    decider! { ADVANCE: Soldier => MOVE_UP }
    group! { MOVE: Soldier, slot [TAKE_COVER, ADVANCE],
        select: |s| Some(usize::from(!s.under_fire)),
    }
    group! { ROOT: Soldier, prioritized [FLANK, THROW_GRENADE, SHOOT, MOVE] }
    tree! { SQUAD: Soldier = ROOT, memory: SquadMemory }

    #[test]
    #[cfg_attr(miri, ignore)] // too slow under Miri
    fn shared_checks_and_deferred_actions_allocate_nothing_after_the_first_tick() {
        let mut soldiers: Vec<Soldier> = (0..SOLDIERS).map(Soldier::new).collect();
        let shared = SQUAD.new_shared(2 * SOLDIERS);
        let mut memories: Vec<SquadMemory> = (0..SOLDIERS)
            .map(|i| SQUAD.new_memory_in(&shared, i as u64))
            .collect();
        // The game's own buffers, sized once: what it carries out, and
        // what it was told this tick.
        let mut in_flight: Vec<(usize, Ticket, u32)> = Vec::with_capacity(SOLDIERS);
        let (mut launched, mut cancelled, mut reported) = (0u32, 0u32, 0u32);
        let mut tick = |t: u32| {
            let now = f64::from(t) / 30.0;
            in_flight.retain(|&(agent, ticket, lands)| {
                if lands > t {
                    return true;
                }
                let outcome = if agent % 2 == 0 {
                    Outcome::Succeeded
                } else {
                    Outcome::Failed
                };
                reported += u32::from(memories[agent].complete(ticket, outcome));
                false
            });
            soldiers.iter_mut().for_each(Soldier::live);
            let report = tick_all(&SQUAD, &mut soldiers, &mut memories, |i, _| {
                TickInput::new(now, DT).with_agent(i as u32)
            });
            assert_eq!(report.errors, 0, "{:?}", report.first_error);
            shared.drain_actions(|req| match req.op {
                ActionOp::Launch(_) => {
                    launched += 1;
                    in_flight.push((req.agent as usize, req.ticket, t + FLIGHT));
                }
                ActionOp::Cancel => {
                    cancelled += 1;
                    in_flight.retain(|&(a, k, _)| a != req.agent as usize || k != req.ticket);
                }
            });
            assert_eq!(shared.lost_requests(), 0);
        };
        tick(0);
        let allocations = allocations_in(|| (1..TICKS).for_each(&mut tick));
        assert_eq!(allocations, 0, "heap allocations while ticking");
        // Everything was exercised: launches that came back and launches
        // called off, pairs, shooters and both child trees of the slot.
        assert!(launched > 0 && cancelled > 0 && reported > 0);
        let runs = soldiers.iter().fold([0u32; 5], |mut sum, s| {
            sum.iter_mut().zip(s.runs).for_each(|(a, b)| *a += b);
            sum
        });
        assert!(runs.iter().all(|&n| n > 0), "runs: {runs:?}");
    }

    /// The same squad scheduled: every third frame, a budget, and each
    /// outcome reported through the schedule, which wakes its soldier.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow under Miri
    fn a_scheduled_squad_hearing_back_allocates_nothing_after_the_first_tick() {
        use bt_core::{Rate, Schedule, tick_scheduled};

        let mut soldiers: Vec<Soldier> = (0..SOLDIERS).map(Soldier::new).collect();
        let shared = SQUAD.new_shared(2 * SOLDIERS);
        let mut memories: Vec<SquadMemory> = (0..SOLDIERS)
            .map(|i| SQUAD.new_memory_in(&shared, i as u64))
            .collect();
        let mut schedule = Schedule::new(SOLDIERS, 0.0).with_budget(Some(24));
        for i in 0..SOLDIERS {
            schedule.set_rate(i, Rate::Every(3)).unwrap();
        }
        let mut in_flight: Vec<(Ticket, u32)> = Vec::with_capacity(SOLDIERS);
        let (mut launched, mut reported) = (0u32, 0u32);
        let mut tick = |t: u32| {
            let now = f64::from(t) / 30.0;
            in_flight.retain(|&(ticket, lands)| {
                if lands > t {
                    return true;
                }
                reported += u32::from(schedule.complete(&mut memories, ticket, Outcome::Succeeded));
                false
            });
            soldiers.iter_mut().for_each(Soldier::live);
            let report = tick_scheduled(
                &SQUAD,
                &mut soldiers,
                &mut memories,
                &mut schedule,
                now,
                |_, _, dt| TickInput::new(now, dt),
            );
            assert_eq!(report.crowd.errors, 0, "{:?}", report.crowd.first_error);
            shared.drain_actions(|req| match req.op {
                ActionOp::Launch(_) => {
                    launched += 1;
                    in_flight.push((req.ticket, t + FLIGHT));
                }
                ActionOp::Cancel => in_flight.retain(|&(k, _)| k != req.ticket),
            });
        };
        tick(0);
        let allocations = allocations_in(|| (1..TICKS).for_each(&mut tick));
        assert_eq!(allocations, 0, "heap allocations while ticking");
        assert!(launched > 0 && reported > 0);
    }
}

/// A JSON snapshot with an unknown field of 6 MB, first in the snapshot
/// where a field that comes early is kept for later, is refused on the
/// field's name: the restore holds a few bytes, not the field.
#[test]
fn an_unknown_field_is_refused_without_holding_it() {
    let mut stimuli: Stimuli<Sense, 4> = Stimuli::new();
    stimuli.set(Sense::NOISE, 5, Some(1.0)).unwrap();
    let saved = serde_json::to_string(&stimuli).unwrap();
    let big = format!("[{}0]", "0,".repeat(3 << 20));
    let text = saved.replacen('{', &format!("{{\"extra\":{big},"), 1);
    assert!(text.len() > 6 << 20);
    let mut refused = None;
    let peak = peak_bytes_in(|| {
        let r = Stimuli::<Sense, 4>::restore(&mut serde_json::Deserializer::from_str(&text));
        refused = r.err().map(|e| e.to_string());
    });
    let refused = refused.expect("refused");
    assert!(refused.contains("unknown field `extra`"), "{refused}");
    assert!(
        peak < 4096,
        "{peak} bytes held for a {}-byte snapshot",
        text.len()
    );
}

/// A schedule allocates its lists when it is made: about 64 bytes an
/// agent, as `Schedule::new` says (and the every-frame period's one
/// bucket).
#[test]
fn a_schedule_takes_the_bytes_the_docs_give() {
    let n = 10_000;
    let mut schedule = None;
    let held = held_bytes_in(|| schedule = Some(Schedule::new(n, 0.0)));
    let per_agent = held as f64 / n as f64;
    assert!(
        (63.5..=65.5).contains(&per_agent),
        "{per_agent} bytes an agent"
    );
    drop(schedule);
}

/// The first agent set to a period allocates that period's buckets, 48
/// bytes a frame of the period, as `Schedule::set_rate` says: no more
/// when periods come one after the other (the buckets of all periods
/// share one buffer, which must not grow by doubling).
#[test]
fn a_periods_buckets_take_the_bytes_the_docs_give() {
    let mut schedule = Schedule::new(100, 0.0);
    let periods = 2..=64u32;
    let held = held_bytes_in(|| {
        for (i, p) in periods.clone().enumerate() {
            schedule.set_rate(i, Rate::Every(p)).unwrap();
        }
    });
    let buckets: i64 = periods.map(|p| 48 * i64::from(p)).sum();
    // Besides the buckets: a few bytes a period for the list of periods.
    assert!(
        held <= buckets + 4096,
        "{held} bytes held for {buckets} bytes of buckets"
    );
}
