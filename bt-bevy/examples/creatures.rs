//! The creature crowd: the Spore figure-1 tree on 10 000 entities, headless.
//!
//! ```sh
//! cargo run --release -p bt-bevy --example creatures
//! ```
//!
//! Each creature is an entity with a `Blackboard` (what it knows of its
//! world), a `Tally` (how often each behavior started), `Decisions` and a
//! `Brain`. The world step is a parallel system that updates the blackboard
//! and writes the decision flags; the plugin then ticks every brain on the
//! fixed clock (30 Hz), in parallel. The behaviors see a `Creature` view
//! made from the two components. Every simulated second the example prints
//! what the crowd is doing; after ten it stops.

use std::time::Duration;

use bevy_app::{App, AppExit, FixedUpdate, ScheduleRunnerPlugin, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_ecs::query::QueryData;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
use bt_bevy::{Brain, BrainAgent, BrainPlugin, BrainStats, BrainSystems, Decisions};
use bt_core::{behavior, decider, group, tree};

const CREATURES: usize = 10_000;
const SECONDS: u32 = 10;
const HZ: f64 = 30.0;

bitflags::bitflags! {
    /// The decision flags the world step writes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Facts: u32 {
        const DANGER = 1 << 0;
        const INTRUDER = 1 << 1;
        const HURT = 1 << 2;
        const HUNGRY = 1 << 3;
        const TIRED = 1 << 4;
        const HAS_NEST = 1 << 5;
    }
}

/// What a creature knows of its world, with its own random generator.
#[derive(Component, Clone, Copy, Default)]
pub struct Blackboard {
    rng: u64,
    danger: bool,
    intruder: bool,
    hurt: bool,
    hungry: bool,
    tired: bool,
    has_nest: bool,
}

/// How often each behavior started, by `Beh`.
#[derive(Component, Default)]
pub struct Tally([u32; BEHAVIORS]);

const BEHAVIORS: usize = 11;
const NAMES: [&str; BEHAVIORS] = [
    "FLEE",
    "GUARD",
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

/// What the tree sees of a creature: the blackboard's flags it may clear,
/// and the behaviors it started this tick (one bit each), to be tallied.
pub struct Creature {
    danger: bool,
    intruder: bool,
    hungry: bool,
    tired: bool,
    started: u16,
}

impl BrainAgent for Creature {
    type Data = (&'static mut Blackboard, &'static mut Tally);

    fn with_agent<R>(
        (board, tally): &mut <Self::Data as QueryData>::Item<'_, '_>,
        tick: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let mut c = Creature {
            danger: board.danger,
            intruder: board.intruder,
            hungry: board.hungry,
            tired: board.tired,
            started: 0,
        };
        let r = tick(&mut c);
        // Write back only what behaviors change, and only when it changed.
        if (c.intruder, c.hungry, c.tired) != (board.intruder, board.hungry, board.tired) {
            board.intruder = c.intruder;
            board.hungry = c.hungry;
            board.tired = c.tired;
        }
        let mut started = c.started;
        while started != 0 {
            tally.0[started.trailing_zeros() as usize] += 1;
            started &= started - 1;
        }
        r
    }
}

/// A behavior's tick counter.
#[derive(Default)]
pub struct Ticks(u8);

fn started(c: &mut Creature, b: u8) -> bool {
    c.started |= 1 << b;
    true
}

behavior! { FLEE_B: Creature, activate: |c, _cx| started(c, 0), tick: |c, _cx| c.danger }
behavior! { GUARD_SCOPE: Creature, activate: |c, _cx| started(c, 1) }
behavior! { YELL: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 2),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 2 } }
behavior! { FIGHT_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 3),
tick: |c, m, _cx| { m.0 += 1; if m.0 == 5 { c.intruder = false; } m.0 < 5 } }
behavior! { FIND_FOOD_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 4),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 3 } }
behavior! { EAT_FOOD_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 5),
tick: |c, m, _cx| { m.0 += 1; if m.0 == 4 { c.hungry = false; } m.0 < 4 } }
behavior! { PATROL_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 6),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 10 } }
behavior! { REST_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 7),
tick: |c, m, _cx| { m.0 += 1; if m.0 == 6 { c.tired = false; } m.0 < 6 } }
behavior! { FLIP_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 8),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 2 } }
behavior! { ROLL_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 9),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 3 } }
behavior! { DANCE_B: Creature, memory: Ticks,
activate: |c, _m, _cx| started(c, 10),
tick: |_c, m, _cx| { m.0 += 1; m.0 < 4 } }

decider! { FLEE: Creature => FLEE_B, needs_all: Facts::DANGER }
decider! { YELL_FOR_HELP: Creature => YELL, needs_all: Facts::HURT }
decider! { FIGHT: Creature => FIGHT_B }
group! { GUARD: Creature, prioritized [YELL_FOR_HELP, FIGHT],
needs_all: Facts::HAS_NEST | Facts::INTRUDER, behavior: GUARD_SCOPE }
decider! { FIND_FOOD: Creature => FIND_FOOD_B }
decider! { EAT_FOOD: Creature => EAT_FOOD_B }
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], needs_all: Facts::HUNGRY }
decider! { PATROL: Creature => PATROL_B, needs_all: Facts::HAS_NEST, every: 2.0 }
decider! { REST: Creature => REST_B, needs_all: Facts::TIRED }
decider! { FLIP: Creature => FLIP_B }
decider! { ROLL: Creature => ROLL_B }
decider! { DANCE: Creature => DANCE_B }
group! { IDLE: Creature, random [FLIP, ROLL, DANCE] }
group! { ROOT: Creature, prioritized [FLEE, GUARD, EAT, PATROL, REST, IDLE] }
tree! { CREATURE: Creature = ROOT, memory: CreatureMemory }

/// xorshift64*.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn chance(s: &mut u64, per_mille: u64) -> bool {
    next(s) % 1000 < per_mille
}

/// The world step of every creature, then its decision flags.
fn world_step(mut creatures: Query<(&mut Blackboard, &mut Decisions)>) {
    creatures.par_iter_mut().for_each(|(mut b, mut d)| {
        let b = &mut *b;
        let s = &mut b.rng;
        b.danger = if b.danger {
            !chance(s, 150)
        } else {
            chance(s, 5)
        };
        if b.has_nest {
            b.intruder = if b.intruder {
                !chance(s, 100)
            } else {
                chance(s, 10)
            };
        }
        if b.intruder && !b.hurt {
            b.hurt = chance(s, 20);
        } else if !b.intruder && b.hurt {
            b.hurt = !chance(s, 300);
        }
        if !b.hungry {
            b.hungry = chance(s, 15);
        }
        if !b.tired {
            b.tired = chance(s, 8);
        }
        let facts = [b.danger, b.intruder, b.hurt, b.hungry, b.tired, b.has_nest]
            .iter()
            .enumerate()
            .fold(Facts::empty(), |f, (i, on)| {
                if *on {
                    f | Facts::from_bits_retain(1 << i)
                } else {
                    f
                }
            });
        d.set(facts);
    });
}

/// Once per simulated second: what the crowd does; stops after `SECONDS`.
fn report(
    time: Res<Time<Fixed>>,
    stats: Res<BrainStats<CreatureMemory>>,
    brains: Query<&Brain<CreatureMemory>>,
    tallies: Query<&Tally>,
    mut exit: MessageWriter<AppExit>,
    mut ticks: Local<u32>,
) {
    *ticks += 1;
    if !(*ticks).is_multiple_of(HZ as u32) {
        return;
    }
    let mut running = [0u32; 16];
    let mut idle = 0;
    for brain in &brains {
        match brain.memory().leaf() {
            Some(i) => running[i.get().min(15)] += 1,
            None => idle += 1,
        }
    }
    let doing: Vec<String> = CREATURE
        .nodes()
        .filter(|n| running[n.index().get().min(15)] > 0 && !n.is_group())
        .map(|n| format!("{} {}", n.name(), running[n.index().get()]))
        .collect();
    println!(
        "t={:>4.1}s  {} brains, {} switched this tick, {} idle  |  {}",
        time.elapsed_secs_f64(),
        stats.ticked,
        stats.changed,
        idle,
        doing.join(", ")
    );
    if *ticks == SECONDS * HZ as u32 {
        let mut total = [0u64; BEHAVIORS];
        for t in &tallies {
            for (s, x) in total.iter_mut().zip(t.0) {
                *s += u64::from(x);
            }
        }
        println!("activations over {SECONDS} s:");
        for (name, n) in NAMES.iter().zip(total) {
            println!("  {name:<10} {n}");
        }
        exit.write(AppExit::Success);
    }
}

fn main() -> AppExit {
    let step = Duration::from_secs_f64(1.0 / HZ);
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TimePlugin,
        // Headless: update as fast as possible on a simulated clock.
        ScheduleRunnerPlugin::run_loop(Duration::ZERO),
        BrainPlugin::new(&CREATURE),
    ))
    .insert_resource(Time::<Fixed>::from_duration(step))
    .insert_resource(TimeUpdateStrategy::ManualDuration(step))
    .add_systems(
        FixedUpdate,
        (
            world_step.before(BrainSystems::Tick),
            report.after(BrainSystems::Tick),
        ),
    );
    app.world_mut().spawn_batch((0..CREATURES).map(|i| {
        let board = Blackboard {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
            has_nest: i.is_multiple_of(2),
            ..Blackboard::default()
        };
        (
            board,
            Tally::default(),
            Decisions::default(),
            Brain::new(&CREATURE),
        )
    }));
    app.run()
}
