//! The world of WORKLOAD.md: one xorshift64* generator per agent, and the
//! W1 world step in its exact draw order.

/// Seconds per tick.
pub const DT: f32 = 1.0 / 30.0;

/// The time of tick `t` (the same for every library, so that the timer
/// emulation sees the same clock as bt-core's timers).
pub fn now(t: u32) -> f64 {
    f64::from(t) / 30.0
}

/// The seed of agent `i`'s world generator.
pub fn seed(i: usize) -> u64 {
    0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1)
}

/// xorshift64*, as WORKLOAD.md writes it.
#[inline(always)]
pub fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// One draw: true with `per_mille` in a thousand.
#[inline(always)]
pub fn chance(s: &mut u64, per_mille: u64) -> bool {
    next(s) % 1000 < per_mille
}

/// The modulus of W3's "on" draws: W1's per-mille chances, 20 times rarer.
const STEADY_ON: u64 = 20_000;

/// How much longer W3's behaviors run than W1's.
pub const STEADY_SCALE: u8 = 20;

bitflags::bitflags! {
    /// W1's decision flags, made from the blackboard once per tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct W1Flags: u32 {
        const DANGER = 1 << 0;
        const INTRUDER = 1 << 1;
        const HURT = 1 << 2;
        const HUNGRY = 1 << 3;
        const TIRED = 1 << 4;
        const HAS_NEST = 1 << 5;
    }
}

/// W1's per-agent world state (the blackboard) with its generator.
#[derive(Clone, Copy, Debug, Default)]
pub struct World {
    pub rng: u64,
    /// In the workload's blackboard, part of every agent's bytes; no rule
    /// of W1 reads or writes it.
    #[expect(dead_code, reason = "W1 declares it but no rule uses it")]
    pub energy: u32,
    pub danger: bool,
    pub intruder: bool,
    pub hurt: bool,
    pub hungry: bool,
    pub tired: bool,
    pub has_nest: bool,
}

impl World {
    /// Agent `i` at spawn: even agents have a nest.
    pub fn spawn(i: usize) -> Self {
        World {
            rng: seed(i),
            has_nest: i.is_multiple_of(2),
            ..World::default()
        }
    }

    /// The world step, before the tree is ticked. A variable draws only when
    /// it can change in the present state.
    #[inline(always)]
    pub fn step(&mut self) {
        let s = &mut self.rng;
        // 1. danger: always one draw.
        let r = next(s) % 1000;
        self.danger = if self.danger { r >= 150 } else { r < 5 };
        // 2. intruder: one draw for agents with a nest.
        if self.has_nest {
            let r = next(s) % 1000;
            self.intruder = if self.intruder { r >= 100 } else { r < 10 };
        }
        // 3. hurt: on while intruder, off while not.
        if self.intruder && !self.hurt {
            self.hurt = chance(s, 20);
        } else if !self.intruder && self.hurt {
            self.hurt = !chance(s, 300);
        }
        // 4-5. hungry and tired: draw while off; cleared by EAT_FOOD / REST.
        if !self.hungry {
            self.hungry = chance(s, 15);
        }
        if !self.tired {
            self.tired = chance(s, 8);
        }
    }

    /// W3's world step: W1's, with every "on" chance divided by 20 (one draw
    /// `next() % 20000 < p`); the "off" chances and the draw rule as in W1.
    #[inline(always)]
    pub fn step_steady(&mut self) {
        let s = &mut self.rng;
        let x = next(s);
        self.danger = if self.danger {
            x % 1000 >= 150
        } else {
            x % STEADY_ON < 5
        };
        if self.has_nest {
            let x = next(s);
            self.intruder = if self.intruder {
                x % 1000 >= 100
            } else {
                x % STEADY_ON < 10
            };
        }
        if self.intruder && !self.hurt {
            self.hurt = next(s) % STEADY_ON < 20;
        } else if !self.intruder && self.hurt {
            self.hurt = !chance(s, 300);
        }
        if !self.hungry {
            self.hungry = next(s) % STEADY_ON < 15;
        }
        if !self.tired {
            self.tired = next(s) % STEADY_ON < 8;
        }
    }

    /// The decision flags of this tick.
    #[inline]
    pub fn flags(&self) -> W1Flags {
        W1Flags::from_bits_retain(
            u32::from(self.danger)
                | u32::from(self.intruder) << 1
                | u32::from(self.hurt) << 2
                | u32::from(self.hungry) << 3
                | u32::from(self.tired) << 4
                | u32::from(self.has_nest) << 5,
        )
    }
}

/// W1's behaviors, in the order of the check-sum table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Beh {
    Flee,
    GuardScope,
    Yell,
    Fight,
    FindFood,
    EatFood,
    Patrol,
    Rest,
    Flip,
    Roll,
    Dance,
}

impl Beh {
    pub const COUNT: usize = 11;
    pub const NAMES: [&'static str; Beh::COUNT] = [
        "FLEE",
        "GUARD_SCOPE",
        "YELL",
        "FIGHT",
        "FIND_FOOD",
        "EAT_FOOD",
        "PATROL",
        "REST",
        "FLIP",
        "ROLL",
        "DANCE",
    ];
    pub const IDLE: [Beh; 3] = [Beh::Flip, Beh::Roll, Beh::Dance];
    /// Every behavior, in the order of [`Beh::NAMES`].
    pub const ALL: [Beh; Beh::COUNT] = [
        Beh::Flee,
        Beh::GuardScope,
        Beh::Yell,
        Beh::Fight,
        Beh::FindFood,
        Beh::EatFood,
        Beh::Patrol,
        Beh::Rest,
        Beh::Flip,
        Beh::Roll,
        Beh::Dance,
    ];

    /// Ticks the behavior runs (FLEE: while danger, shown as 0).
    pub const fn ticks(self) -> u8 {
        match self {
            Beh::Flee | Beh::GuardScope => 0,
            Beh::Yell | Beh::Flip => 2,
            Beh::Fight => 5,
            Beh::FindFood | Beh::Roll => 3,
            Beh::EatFood | Beh::Dance => 4,
            Beh::Patrol => 10,
            Beh::Rest => 6,
        }
    }

    /// Ticks the behavior runs in W3: 20 times W1's.
    pub const fn steady_ticks(self) -> u8 {
        self.ticks() * STEADY_SCALE
    }
}

/// Activation counts per behavior: the check-sum.
pub type Activations = [u32; Beh::COUNT];
