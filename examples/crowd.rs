//! Ten thousand guard-nest creatures, ticked together with `tick_all`.
//!
//! Every creature runs a compact version of the tree of `guard_nest.rs`:
//! guard the nest (fight back when bitten, growl at strangers, patrol, or
//! loiter), leave to eat when hungry, or roam when it has no nest. The world
//! around them is random but seeded, so every run decides the same; only the
//! wall times change. The crowd runs 20 simulated seconds at 30 Hz; each
//! second prints how many creatures run each behavior, how many active
//! paths changed during that second, and the wall time of its 30 ticks. At
//! the end comes the distribution of the active behaviors.
//!
//! Run it with `cargo run --release --example crowd`.

use std::time::{Duration, Instant};

use bt_core::{Stimuli, TickInput, behavior, decider, group, tick_all, tree};

const CREATURES: usize = 10_000;
const HZ: u32 = 30;
const SECONDS: u32 = 20;
const DT: f32 = 1.0 / HZ as f32;
/// Night falls at this second: no new patrols after it.
const NIGHTFALL: u32 = 12;

bt_core::bitflags::bitflags! {
    /// Decision flags, made from the creature each tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Decision: u32 {
        const HAS_NEST = 1 << 0;
        const NIGHT = 1 << 1;
    }

    /// Stimuli the world sets on a creature, with a time-out.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Sense: u64 {
        /// Bitten; the payload is the biter's id.
        const HIT = 1 << 0;
        const STRANGER = 1 << 1;
    }
}

/// One creature and what it perceives.
struct Creature {
    rng: u64,
    has_nest: bool,
    /// Hunger gained per second: each creature its own.
    appetite: f32,
    hunger: f32,
    hungry: bool,
    stimuli: Stimuli<Sense, 2, u32>,
    /// This tick's stimuli word, from `stimuli.update`.
    sensed: Sense,
}

impl Creature {
    fn new(i: usize) -> Self {
        let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
        let appetite = 0.05 + (next(&mut rng) % 100) as f32 / 1000.0;
        Creature {
            has_nest: !i.is_multiple_of(4),
            appetite,
            hunger: (next(&mut rng) % 100) as f32 / 100.0,
            hungry: false,
            stimuli: Stimuli::new(),
            sensed: Sense::empty(),
            rng,
        }
    }

    /// The world moves: hunger grows, strangers come by, enemies bite.
    fn live(&mut self) {
        self.hunger += self.appetite * DT;
        self.hungry |= self.hunger >= 1.0;
        let roll = next(&mut self.rng) % 10_000;
        // Setting a stimulus fails only when all places are live; a creature
        // that misses one event loses nothing important here.
        if self.has_nest && roll < 20 {
            let _ = self.stimuli.set(Sense::STRANGER, 0, Some(4.0));
        } else if self.has_nest && roll < 25 {
            let _ = self.stimuli.set(Sense::HIT, (roll % 97) as u32, Some(2.0));
        }
        self.sensed = self.stimuli.update(DT);
    }
}

/// xorshift64*: the world's generator.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// A memory block counting rounds.
#[derive(Default)]
struct Rounds(u8);

behavior! { STAY_NEAR_NEST: Creature, tick: |c, _cx| !c.hungry }
behavior! { FIGHT: Creature, memory: Rounds,
    tick: |c, m, _cx| {
        m.0 += 1;
        if m.0 < 20 {
            return true;
        }
        c.stimuli.clear(Sense::HIT);
        false
    },
}
behavior! { GROWL: Creature, memory: Rounds,
    tick: |c, m, _cx| {
        m.0 += 1;
        if m.0 < 45 {
            return true;
        }
        c.stimuli.clear(Sense::STRANGER);
        false
    },
}
behavior! { PATROL: Creature, tick: |_c, cx| cx.time_active() < 3.0 }
behavior! { LOITER: Creature }
behavior! { FORAGE: Creature, tick: |_c, cx| cx.time_active() < 1.5 }
behavior! { CHEW: Creature,
    tick: |c, cx| {
        c.hunger -= 0.5 * cx.dt;
        c.hungry = c.hunger > 0.0;
        c.hungry
    },
}
behavior! { WANDER: Creature }

decider! { FIGHT_BACK: Creature => FIGHT, stimuli_all: Sense::HIT }
decider! { GROWL_AT: Creature => GROWL, stimuli_all: Sense::STRANGER }
decider! { PATROL_NEST: Creature => PATROL, needs_none: Decision::NIGHT, every: 5.0 }
decider! { LOITER_AT_NEST: Creature => LOITER }
group! { GUARD_NEST: Creature,
    prioritized [FIGHT_BACK, GROWL_AT, PATROL_NEST, LOITER_AT_NEST],
    behavior: STAY_NEAR_NEST,
    when: |c, _| !c.hungry,
    needs_all: Decision::HAS_NEST,
}
decider! { SEARCH: Creature => FORAGE }
decider! { EAT_FOOD: Creature => CHEW }
group! { EAT: Creature, sequential [SEARCH, EAT_FOOD], when: |c, _| c.hungry }
decider! { ROAM: Creature => WANDER }
group! { ROOT: Creature, prioritized [GUARD_NEST, EAT, ROAM] }
tree! { CREATURE: Creature = ROOT, memory: CreatureMemory }

/// Agents per behavior decider (indexed by item), and idle agents.
fn census(memories: &[CreatureMemory], counts: &mut [u32], idle: &mut u32) {
    counts.fill(0);
    *idle = 0;
    for memory in memories {
        match memory.leaf() {
            Some(leaf) => counts[leaf.get()] += 1,
            None => *idle += 1,
        }
    }
}

fn main() {
    let mut creatures: Vec<Creature> = (0..CREATURES).map(Creature::new).collect();
    let mut memories: Vec<CreatureMemory> = (0..CREATURES)
        .map(|i| CREATURE.new_memory(i as u64))
        .collect();
    // The behavior deciders, in tree order: the columns.
    let leaves: Vec<_> = CREATURE.nodes().filter(|n| !n.is_group()).collect();
    let mut counts = vec![0u32; CREATURE.len()];
    let mut idle = 0;

    println!(
        "crowd: {CREATURES} creatures, {SECONDS} s at {HZ} Hz with tick_all ({} B of memory each); night at {NIGHTFALL} s\n",
        CreatureMemory::byte_size()
    );
    print!("  time");
    for leaf in &leaves {
        print!(" {}", leaf.name());
    }
    println!(" {:>5} {:>8} {:>9}", "idle", "changed", "ms/second");

    let mut total = Duration::ZERO;
    for second in 0..SECONDS {
        let mut changed = 0;
        let mut wall = Duration::ZERO;
        for frame in 0..HZ {
            let now = f64::from(second) + f64::from(frame) / f64::from(HZ);
            let mut flags = Decision::empty();
            flags.set(Decision::NIGHT, second >= NIGHTFALL);
            creatures.iter_mut().for_each(Creature::live);
            let start = Instant::now();
            let report = tick_all(&CREATURE, &mut creatures, &mut memories, |i, c| {
                let mut flags = flags;
                flags.set(Decision::HAS_NEST, c.has_nest);
                TickInput::new(now, DT)
                    .with_decision(flags)
                    .with_stimuli(c.sensed)
                    .with_agent(i as u32)
            });
            wall += start.elapsed();
            assert_eq!(report.errors, 0, "{:?}", report.first_error);
            changed += report.changed;
        }
        total += wall;
        census(&memories, &mut counts, &mut idle);
        print!("  {:>3} s", second + 1);
        for leaf in &leaves {
            let width = leaf.name().len();
            print!(" {:>width$}", counts[leaf.index().get()]);
        }
        println!(" {idle:>5} {changed:>8} {:>9.2}", wall.as_secs_f64() * 1e3);
    }

    let ticks = f64::from(SECONDS * HZ) * CREATURES as f64;
    println!(
        "\n{} agent-ticks in {:.1} ms: {:.0} ns per agent-tick (tick_all only)",
        ticks,
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e9 / ticks
    );
    if cfg!(debug_assertions) {
        println!(
            "  (a debug build, without optimizations: times are several times those of \
             `cargo run --release --example crowd`)"
        );
    }
    println!("active behaviors at {SECONDS} s:");
    for leaf in &leaves {
        let n = counts[leaf.index().get()];
        let share = f64::from(n) * 100.0 / CREATURES as f64;
        let bar = "#".repeat((share / 2.0).round() as usize);
        println!("  {:<14} {n:>6}  {share:5.1}%  {bar}", leaf.name());
    }
    println!("  {:<14} {idle:>6}", "(idle)");
}
