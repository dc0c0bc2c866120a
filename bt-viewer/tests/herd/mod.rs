//! A herd of grazers at 30 Hz for the viewer's tests: hunger grows until
//! grazing wins, fatigue until resting does, danger makes them flee, and
//! an idle grazer draws between wandering and gazing. Behaviors last
//! seconds, as in a game, so most ticks repeat the one before.

#![allow(dead_code)]

use bt_core::{TickInput, behavior, decider, group, tree};
use bt_viewer::{AgentData, DataOut};

/// Ticks per second.
pub const HZ: u32 = 30;

bitflags::bitflags! {
    /// What a grazer senses this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sense: u32 {
        const DANGER = 1 << 0;
        const FOOD = 1 << 1;
    }
}

/// One grazer.
#[derive(Clone, Debug)]
pub struct Grazer {
    rng: u64,
    pub hunger: f32,
    pub fatigue: f32,
    pub sense: Sense,
}

impl Grazer {
    pub fn new(i: usize) -> Self {
        let mut g = Grazer {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            hunger: 0.0,
            fatigue: 0.0,
            sense: Sense::FOOD,
        };
        g.hunger = (g.draw() % 300) as f32 / 100.0;
        g.fatigue = (g.draw() % 400) as f32 / 100.0;
        g
    }

    fn draw(&mut self) -> u64 {
        let s = &mut self.rng;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.draw() % 1000 < per_mille
    }

    /// The world moves.
    pub fn step(&mut self) {
        self.hunger += 0.004;
        self.fatigue += 0.003;
        let danger = self.sense.contains(Sense::DANGER);
        if self.chance(if danger { 15 } else { 1 }) {
            self.sense.toggle(Sense::DANGER);
        }
        let food = self.sense.contains(Sense::FOOD);
        if self.chance(if food { 2 } else { 10 }) {
            self.sense.toggle(Sense::FOOD);
        }
    }

    pub fn input(&self, i: usize, t: u32) -> TickInput {
        TickInput::new(now(t), 1.0 / HZ as f32)
            .with_decision(self.sense)
            .with_agent(i as u32)
    }
}

/// The time of tick `t`.
pub fn now(t: u32) -> f64 {
    f64::from(t) / f64::from(HZ)
}

/// What a grazer records about itself.
impl AgentData for Grazer {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("hunger", f64::from(self.hunger));
        out.num("fatigue", f64::from(self.fatigue));
        let danger = self.sense.contains(Sense::DANGER);
        out.text("danger", if danger { "yes" } else { "no" });
    }
}

behavior! { RUN: Grazer, tick: |g, cx| g.sense.contains(Sense::DANGER) || cx.time_active() < 1.0 }
behavior! { EAT_GRASS: Grazer, tick: |g, _cx| { g.hunger -= 0.03; g.hunger > 0.5 } }
behavior! { SLEEP: Grazer, tick: |g, _cx| { g.fatigue -= 0.02; g.fatigue > 0.5 } }
behavior! { WALK: Grazer, tick: |_g, cx| cx.time_active() < 4.0 }
behavior! { LOOK: Grazer, tick: |_g, cx| cx.time_active() < 2.0 }

decider! { FLEE: Grazer => RUN, needs_all: Sense::DANGER }
decider! { GRAZE: Grazer => EAT_GRASS, needs_all: Sense::FOOD,
    decide: |g, _| if g.hunger > 3.0 { g.hunger } else { 0.0 },
}
// Rejects with -1 (not 0): a value the recording keeps, the same each
// tick, so that ticks still repeat.
decider! { REST: Grazer => SLEEP, decide: |g, _| if g.fatigue > 4.0 { 1.0 } else { -1.0 } }
decider! { WANDER: Grazer => WALK, decide: |g, _| 1.0 + g.fatigue / 8.0 }
decider! { GAZE: Grazer => LOOK, decide: |_g, _| 0.5 }
group! { IDLE: Grazer, random [WANDER, GAZE] }
group! { ROOT: Grazer, prioritized [FLEE, GRAZE, REST, IDLE] }
tree! { pub HERD: Grazer = ROOT, memory: HerdMemory }

/// A herd of `n` grazers and their memories.
pub fn herd(n: usize) -> (Vec<Grazer>, Vec<HerdMemory>) {
    (
        (0..n).map(Grazer::new).collect(),
        (0..n).map(|i| HERD.new_memory(i as u64)).collect(),
    )
}
