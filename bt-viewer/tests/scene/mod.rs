//! A camp of creatures for the viewer's tests: the tree of the W1
//! workload plus a group that breaks the Subset Rule now and then, in a
//! world drawn from one seeded generator per creature.

#![allow(dead_code)]

use bt_core::{TickInput, behavior, decider, group, tree};

/// Seconds per tick.
pub const DT: f32 = 0.25;

bitflags::bitflags! {
    /// What a creature knows this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Facts: u32 {
        const DANGER = 1 << 0;
        const NEST = 1 << 1;
        const INTRUDER = 1 << 2;
        const HURT = 1 << 3;
        const HUNGRY = 1 << 4;
        const CONFUSED = 1 << 5;
    }
}

/// One creature.
#[derive(Clone, Debug)]
pub struct Creature {
    rng: u64,
    pub facts: Facts,
}

impl Creature {
    pub fn new(i: usize) -> Self {
        let mut facts = Facts::empty();
        facts.set(Facts::NEST, i.is_multiple_of(2));
        Creature {
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

    /// The world moves.
    pub fn step(&mut self) {
        let flip = |c: &mut Self, f: Facts, on: u64, off: u64| {
            let now = c.facts.contains(f);
            if c.chance(if now { off } else { on }) {
                c.facts.toggle(f);
            }
        };
        flip(self, Facts::DANGER, 20, 200);
        if self.facts.contains(Facts::NEST) {
            flip(self, Facts::INTRUDER, 40, 150);
        }
        flip(self, Facts::HURT, 60, 300);
        flip(self, Facts::HUNGRY, 30, 0);
        flip(self, Facts::CONFUSED, 10, 500);
    }

    pub fn input(&self, i: usize, t: u32) -> TickInput {
        TickInput::new(now(t), DT)
            .with_decision(self.facts)
            .with_agent(i as u32)
    }
}

/// The time of tick `t`.
pub fn now(t: u32) -> f64 {
    f64::from(t) * f64::from(DT)
}

/// Ticks of the running behavior, in its memory block.
#[derive(Default)]
pub struct Ticks(u8);

behavior! { RUN_AWAY: Creature, tick: |c, _cx| c.facts.contains(Facts::DANGER) }
behavior! { GUARD_SCOPE: Creature, activate: |_c, _cx| true }
behavior! { SHOUT: Creature, memory: Ticks, tick: |_c, m, _cx| { m.0 += 1; m.0 < 2 } }
behavior! { BITE: Creature, memory: Ticks,
    tick: |c, m, _cx| {
        m.0 += 1;
        if m.0 >= 5 {
            c.facts.remove(Facts::INTRUDER);
        }
        m.0 < 5
    },
}
behavior! { SEARCH: Creature, memory: Ticks, tick: |_c, m, _cx| { m.0 += 1; m.0 < 3 } }
behavior! { CHEW: Creature, memory: Ticks,
    tick: |c, m, _cx| {
        m.0 += 1;
        if m.0 >= 4 {
            c.facts.remove(Facts::HUNGRY);
        }
        m.0 < 4
    },
}
behavior! { WALK: Creature, memory: Ticks, tick: |_c, m, _cx| { m.0 += 1; m.0 < 8 } }
behavior! { PONDER: Creature }
behavior! { FLIP_OVER: Creature, memory: Ticks, tick: |_c, m, _cx| { m.0 += 1; m.0 < 2 } }
behavior! { ROLL_OVER: Creature, memory: Ticks, tick: |_c, m, _cx| { m.0 += 1; m.0 < 3 } }

decider! { FLEE: Creature => RUN_AWAY, needs_all: Facts::DANGER }
decider! { YELL: Creature => SHOUT, needs_all: Facts::HURT }
decider! { FIGHT: Creature => BITE }
group! { GUARD: Creature, prioritized [YELL, FIGHT],
    needs_all: Facts::NEST | Facts::INTRUDER,
    behavior: GUARD_SCOPE,
}
// Accepts when confused, but its only child never runs then: a tree bug
// the viewer shows as a Subset Rule marker.
decider! { THINK: Creature => PONDER, needs_none: Facts::CONFUSED }
// Rejects with -1 (not 0) when not confused: a value a recording keeps.
group! { MUDDLE: Creature, prioritized [THINK], decide: |c, _| if c.facts.contains(Facts::CONFUSED) { 1.0 } else { -1.0 } }
decider! { FIND_FOOD: Creature => SEARCH }
decider! { EAT_FOOD: Creature => CHEW }
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], needs_all: Facts::HUNGRY }
decider! { PATROL: Creature => WALK, needs_all: Facts::NEST, every: 2.0 }
decider! { FLIP: Creature => FLIP_OVER }
decider! { ROLL: Creature => ROLL_OVER }
group! { IDLE: Creature, random [FLIP, ROLL] }
group! { ROOT: Creature, prioritized [FLEE, GUARD, MUDDLE, EAT, PATROL, IDLE] }
tree! { pub CAMP: Creature = ROOT, memory: CampMemory }

/// A crowd of `n` creatures and their memories.
pub fn crowd(n: usize) -> (Vec<Creature>, Vec<CampMemory>) {
    (
        (0..n).map(Creature::new).collect(),
        (0..n).map(|i| CAMP.new_memory(i as u64)).collect(),
    )
}
