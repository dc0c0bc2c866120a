//! A recorded tick keeps none of the events of its walk of the active
//! path (a steady tick keeps no event at all): reading it puts them back,
//! from its path and flags. What it reads must be exactly what a tick that
//! kept every event wrote, whatever happens to the agents.

use bt_core::{Event, TickInput, Tracer, behavior, decider, group, tree};
use bt_viewer::{Capacity, FlightRecorder, Watch};
use serde_json::Value;

const DT: f32 = 0.25;

bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Facts: u32 {
        const DANGER = 1 << 0;
        const HUNGRY = 1 << 1;
        const TIRED = 1 << 2;
        const NEST = 1 << 3;
    }
}

#[derive(Clone, Debug)]
struct Grazer {
    rng: u64,
    facts: Facts,
}

impl Grazer {
    fn new(i: usize) -> Self {
        let mut facts = Facts::empty();
        facts.set(Facts::NEST, !i.is_multiple_of(3));
        Grazer {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            facts,
        }
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        let s = &mut self.rng;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D) % 1000 < per_mille
    }

    /// The world moves: flags change now and then, so that most ticks
    /// find the flags of the tick before.
    fn step(&mut self) {
        for (f, on, off) in [
            (Facts::DANGER, 8, 150),
            (Facts::HUNGRY, 15, 0),
            (Facts::TIRED, 10, 0),
        ] {
            let now = self.facts.contains(f);
            if self.chance(if now { off } else { on }) {
                self.facts.toggle(f);
            }
        }
    }

    fn input(&self, i: usize, t: u32) -> TickInput {
        TickInput::new(f64::from(t) * f64::from(DT), DT)
            .with_decision(self.facts)
            .with_agent(i as u32)
    }
}

#[derive(Default)]
struct Ticks(u8);

behavior! { RUN: Grazer, tick: |g, _cx| g.facts.contains(Facts::DANGER) }
/// Runs for `n` ticks, then clears `fact`: eating ends hunger, a nap
/// tiredness.
fn lasts_then_clears(g: &mut Grazer, m: &mut Ticks, n: u8, fact: Facts) -> bool {
    m.0 += 1;
    if m.0 >= n {
        g.facts.remove(fact);
    }
    m.0 < n
}

behavior! { GRAZE: Grazer, memory: Ticks, tick: |g, m, _cx| lasts_then_clears(g, m, 4, Facts::HUNGRY) }
behavior! { SEEK: Grazer, memory: Ticks, tick: |_g, m, _cx| { m.0 += 1; m.0 < 3 } }
behavior! { NAP: Grazer, memory: Ticks, tick: |g, m, _cx| lasts_then_clears(g, m, 5, Facts::TIRED) }
behavior! { ROUND: Grazer, memory: Ticks, tick: |_g, m, _cx| { m.0 += 1; m.0 < 6 } }
behavior! { HOP: Grazer, memory: Ticks, tick: |_g, m, _cx| { m.0 += 1; m.0 < 2 } }
behavior! { SNIFF: Grazer, memory: Ticks, tick: |_g, m, _cx| { m.0 += 1; m.0 < 3 } }
behavior! { STARE: Grazer, memory: Ticks, tick: |_g, m, _cx| { m.0 += 1; m.0 < 40 } }

decider! { FLEE: Grazer => RUN, needs_all: Facts::DANGER }
decider! { FIND: Grazer => SEEK }
decider! { CHEW: Grazer => GRAZE }
group! { EAT: Grazer, sequential [FIND, CHEW], needs_all: Facts::HUNGRY }
decider! { REST: Grazer => NAP, needs_all: Facts::TIRED }
decider! { PATROL: Grazer => ROUND, needs_all: Facts::NEST, every: 3.0 }
decider! { JUMP: Grazer => HOP }
decider! { SMELL: Grazer => SNIFF }
group! { PLAY: Grazer, random [JUMP, SMELL], every: 2.0 }
decider! { GAZE: Grazer => STARE, needs_none: Facts::NEST }
decider! { WAIT: Grazer => STARE }
group! { LOAF: Grazer, prioritized [GAZE, WAIT] }
group! { IDLE: Grazer, prioritized [PLAY, LOAF], needs_none: Facts::TIRED }
group! { ROOT: Grazer, prioritized [FLEE, EAT, REST, PATROL, IDLE] }
tree! { HERD: Grazer = ROOT, memory: HerdMemory }

/// A tracer that takes every event: a recorder that hands it the events
/// keeps all of them.
struct Full;

impl Tracer for Full {
    fn event(&mut self, _: &Event) {}
}

/// A tracer that takes no steady tick, as the recorder alone does, and
/// counts the ticks that sent it nothing and those whose walk stopped.
#[derive(Default)]
struct Quiet {
    events: usize,
    steady: usize,
    walked: usize,
}

impl Tracer for Quiet {
    const STEADY: bool = false;

    fn event(&mut self, event: &Event) {
        self.events += 1;
        self.walked += usize::from(matches!(event, Event::Walked { .. }));
    }
}

fn ticks_of(json: &Value) -> Vec<(u64, Value)> {
    json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent"].as_u64().unwrap(), a["ticks"].clone()))
        .collect()
}

/// The same herd recorded three times: through `tick_all`, which keeps
/// no event of the ticks' walks, lane by lane with a tracer that takes
/// every event, so that the recorder keeps them all, and lane by lane with
/// a tracer that takes no steady tick. Grazers swap places (agents and
/// memories) now and then, and one grazer's memory is made afresh: the
/// recordings must still be equal, tick for tick.
#[test]
fn a_tick_read_without_its_walk_is_the_tick_that_kept_it() {
    const N: usize = 24;
    const T: u32 = 400;
    let capacity = Capacity::new(T as usize, 40);
    let mut grazers: Vec<Grazer> = (0..N).map(Grazer::new).collect();
    let mut memories: Vec<HerdMemory> = (0..N).map(|i| HERD.new_memory(i as u64)).collect();
    let mut twins = grazers.clone();
    let mut twin_memories: Vec<HerdMemory> = (0..N).map(|i| HERD.new_memory(i as u64)).collect();
    let mut quick = FlightRecorder::new(&HERD, N, Watch::All, capacity);
    let mut full = FlightRecorder::with_lanes(&HERD, N, capacity);
    for i in 0..N {
        assert_eq!(full.assign(i as u32), Some(i));
    }
    // A third herd, recorded lane by lane with a tracer that counts the
    // steady ticks and the walks that stopped.
    let mut counted_herd = grazers.clone();
    let mut counted_memories: Vec<HerdMemory> = (0..N).map(|i| HERD.new_memory(i as u64)).collect();
    let mut counted = FlightRecorder::with_lanes(&HERD, N, capacity);
    for i in 0..N {
        assert_eq!(counted.assign(i as u32), Some(i));
    }
    let mut quiet = Quiet::default();
    for t in 0..T {
        if t % 10 == 5 {
            // Pairs with the same flags, often on different paths.
            for (x, y) in [(4, 5), (7, 8), (10, 11), (13, 14), (3, 6)] {
                grazers.swap(x, y);
                twins.swap(x, y);
                counted_herd.swap(x, y);
                memories.swap(x, y);
                twin_memories.swap(x, y);
                counted_memories.swap(x, y);
            }
        }
        if t == 120 {
            memories[7] = HERD.new_memory(99);
            twin_memories[7] = HERD.new_memory(99);
            counted_memories[7] = HERD.new_memory(99);
        }
        grazers.iter_mut().for_each(Grazer::step);
        twins.iter_mut().for_each(Grazer::step);
        counted_herd.iter_mut().for_each(Grazer::step);
        let report = quick.tick_all(&HERD, &mut grazers, &mut memories, |i, g| g.input(i, t));
        assert_eq!(report.errors, 0);
        full.begin_frame();
        for i in 0..N {
            let input = twins[i].input(i, t);
            full.tick_lane_traced(
                i,
                &HERD,
                &mut twins[i],
                &mut twin_memories[i],
                &input,
                &mut Full,
            )
            .unwrap();
        }
        counted.begin_frame();
        for i in 0..N {
            let g = &mut counted_herd[i];
            let input = g.input(i, t);
            let before = quiet.events;
            counted
                .tick_lane_traced(i, &HERD, g, &mut counted_memories[i], &input, &mut quiet)
                .unwrap();
            quiet.steady += usize::from(quiet.events == before);
        }
    }
    // Many ticks were steady, and many stopped their walk: the comparison
    // below is not between two recordings that kept every event.
    assert!(
        quiet.steady > N * T as usize / 3,
        "{} steady ticks",
        quiet.steady
    );
    assert!(
        quiet.walked > N * T as usize / 10,
        "{} walks stopped",
        quiet.walked
    );
    assert_eq!(
        ticks_of(&serde_json::from_str(&counted.export().to_json()).unwrap()),
        ticks_of(&serde_json::from_str(&full.export().to_json()).unwrap()),
    );
    let (a, b) = (quick.export().to_json(), full.export().to_json());
    let (a, b): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
    );
    let (a, b) = (ticks_of(&a), ticks_of(&b));
    assert_eq!(a.len(), N);
    let mut rejections = 0;
    for ((agent, ticks), (twin, twin_ticks)) in a.iter().zip(&b) {
        assert_eq!(agent, twin);
        let (ticks, twin_ticks) = (ticks.as_array().unwrap(), twin_ticks.as_array().unwrap());
        assert_eq!(ticks.len(), twin_ticks.len());
        for (k, (x, y)) in ticks.iter().zip(twin_ticks).enumerate() {
            assert_eq!(x, y, "agent {agent}, tick {k}");
            rejections += x[6]
                .as_array()
                .unwrap()
                .chunks(4)
                .filter(|e| e[0] == 1)
                .count();
        }
    }
    // The herd's ticks do reject earlier siblings, most of them.
    assert!(rejections > N * T as usize, "{rejections} rejections");
}
