//! A hundred thousand creatures ticked at three rates by their distance to
//! a moving camera, within a budget of agent-ticks per frame.
//!
//! The creatures live on a 1 000 × 1 000 field; the camera circles over
//! it. Near ones (within 60 units) think every frame, those within 200
//! units every 4th frame, the rest every 16th: their rates are set again
//! every frame as the camera moves. A predator roams too: creatures it
//! passes get a `SCARED` stimulus through `Schedule::stimulate`, which
//! wakes them for the next frame whatever their rate, and at frame 120 it
//! roars: every creature within 300 units is scared at once. The frame's
//! budget is 10 000 agent-ticks; due agents beyond it wait, the longest
//! waiting first, so the roar's thousands of wake-ups spread over the
//! next frames instead of one long frame.
//!
//! Each line is a frame: the agents due, ticked and left waiting, the
//! longest an agent ticked in it had waited (in frames), and the wall time
//! of the frame's ticks. At the end, the run checks that no frame went
//! over the budget and no agent waited longer than `Schedule::wait_bound`,
//! and compares the time with ticking every creature every frame.
//!
//! Run it with `cargo run --release --example lod`.

use std::time::{Duration, Instant};

use bt_core::{
    Rate, Schedule, Stimuli, TickInput, behavior, decider, group, tick_all, tick_scheduled, tree,
};

const CREATURES: usize = 100_000;
const FRAMES: u64 = 240;
const HZ: f64 = 60.0;
const BUDGET: u32 = 10_000;
const NEAR: f32 = 60.0;
const MID: f32 = 200.0;
/// The frame the predator roars.
const ROAR: u64 = 120;

bt_core::bitflags::bitflags! {
    /// Decision flags, made from the creature at each of its ticks.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Need: u32 {
        const HUNGRY = 1 << 0;
        const TIRED = 1 << 1;
    }

    /// What the world tells a creature, for a while.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Sense: u8 {
        const SCARED = 1 << 0;
    }
}

/// One creature: where it is, what it needs, what it senses.
struct Creature {
    x: f32,
    y: f32,
    hunger: f32,
    fatigue: f32,
    senses: Stimuli<Sense, 1>,
}

impl Creature {
    fn new(i: usize) -> Self {
        let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
        let mut unit = || (next(&mut rng) % 1_000_000) as f32 / 1_000_000.0;
        Creature {
            x: unit() * 1000.0,
            y: unit() * 1000.0,
            hunger: unit(),
            fatigue: unit(),
            senses: Stimuli::new(),
        }
    }

    /// What it needs, after living `dt` seconds since its last tick.
    fn live(&mut self, dt: f32) -> Need {
        self.hunger += 0.08 * dt;
        self.fatigue += 0.05 * dt;
        let mut need = Need::empty();
        need.set(Need::HUNGRY, self.hunger > 1.0);
        need.set(Need::TIRED, self.fatigue > 1.0);
        need
    }
}

/// xorshift64*.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

// Behaviors measure time, not ticks, so a creature that thinks every 16th
// frame eats, sleeps and plays as long as one that thinks every frame.
behavior! { RUN_AWAY: Creature,
    tick: |c, cx| { c.x += 40.0 * cx.dt; cx.stimuli_as::<Sense>().contains(Sense::SCARED) },
}
behavior! { SEARCH: Creature, tick: |_c, cx| cx.time_active() < 2.0 }
behavior! { CHEW: Creature,
    tick: |c, cx| { c.hunger -= 0.5 * cx.dt; c.hunger > 0.0 },
}
behavior! { SLEEP: Creature,
    tick: |c, cx| { c.fatigue -= 0.25 * cx.dt; c.fatigue > 0.0 },
}
behavior! { GRAZE: Creature, tick: |_c, cx| cx.time_active() < 3.0 }
behavior! { ROAM: Creature, tick: |c, cx| { c.y += 5.0 * cx.dt; cx.time_active() < 4.0 } }
behavior! { PLAY: Creature, tick: |_c, cx| cx.time_active() < 1.5 }

decider! { FLEE: Creature => RUN_AWAY, stimuli_any: Sense::SCARED }
decider! { FIND_FOOD: Creature => SEARCH }
decider! { EAT_FOOD: Creature => CHEW }
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], needs_all: Need::HUNGRY }
decider! { REST: Creature => SLEEP, needs_all: Need::TIRED }
decider! { GRAZING: Creature => GRAZE }
decider! { ROAMING: Creature => ROAM }
decider! { PLAYING: Creature => PLAY }
group! { IDLE: Creature, random [GRAZING, ROAMING, PLAYING] }
group! { ROOT: Creature, prioritized [FLEE, EAT, REST, IDLE] }
tree! { HERD: Creature = ROOT, memory: HerdMemory }

/// The camera and the predator at frame `f`: two points circling the field.
fn camera(f: u64) -> (f32, f32) {
    let a = f as f32 / 240.0 * std::f32::consts::TAU;
    (500.0 + 300.0 * a.cos(), 500.0 + 300.0 * a.sin())
}

fn predator(f: u64) -> (f32, f32) {
    let a = f as f32 / 90.0 * std::f32::consts::TAU;
    (500.0 + 250.0 * a.sin(), 500.0 + 150.0 * (2.0 * a).cos())
}

fn rate_at(distance: f32) -> Rate {
    if distance < NEAR {
        Rate::EveryFrame
    } else if distance < MID {
        Rate::Every(4)
    } else {
        Rate::Every(16)
    }
}

/// The input of a creature's tick: its needs and senses after `dt`.
fn input(now: f64, c: &mut Creature, dt: f32) -> TickInput {
    let need = c.live(dt);
    TickInput::new(now, dt)
        .with_decision(need)
        .with_stimuli(c.senses.update(dt))
}

fn main() {
    let mut herd: Vec<Creature> = (0..CREATURES).map(Creature::new).collect();
    let mut memories: Vec<HerdMemory> = (0..CREATURES).map(|i| HERD.new_memory(i as u64)).collect();
    let mut schedule = Schedule::new(CREATURES, 0.0).with_budget(Some(BUDGET));
    let bound = schedule.wait_bound().expect("a budget above 0");
    println!(
        "{CREATURES} creatures, a budget of {BUDGET} agent-ticks a frame: \
         no agent waits more than {bound} frames"
    );
    println!("frame   due  ticked  waiting  longest wait  tick time");
    let (mut ticks, mut longest, mut scared) = (0u64, 0u64, 0u64);
    let mut spent = Duration::ZERO;
    for f in 0..FRAMES {
        let now = (f + 1) as f64 / HZ;
        let (cx, cy) = camera(f);
        let (px, py) = predator(f);
        for (i, c) in herd.iter_mut().enumerate() {
            let distance = ((c.x - cx).powi(2) + (c.y - cy).powi(2)).sqrt();
            schedule
                .set_rate(i, rate_at(distance))
                .expect("a valid rate");
            // The predator scares what it passes, for a second, and at
            // frame 120 what hears its roar.
            let near = (c.x - px).abs() < 15.0 && (c.y - py).abs() < 15.0;
            let roar = f == ROAR && (c.x - px).powi(2) + (c.y - py).powi(2) < 300.0 * 300.0;
            if (near || roar) && c.senses.is_empty() {
                let _ = schedule.stimulate(i, &mut c.senses, Sense::SCARED, 0, Some(1.0), now);
                scared += 1;
            }
        }
        let start = Instant::now();
        let report = tick_scheduled(
            &HERD,
            &mut herd,
            &mut memories,
            &mut schedule,
            now,
            |_, c, dt| input(now, c, dt),
        );
        let took = start.elapsed();
        spent += took;
        assert_eq!(report.crowd.errors, 0, "{:?}", report.crowd.first_error);
        assert!(report.ticked <= BUDGET, "frame {f} went over the budget");
        assert!(
            report.longest_wait <= bound,
            "frame {f}: a wait past the bound"
        );
        ticks += u64::from(report.ticked);
        longest = longest.max(report.longest_wait);
        println!(
            "{f:5} {:6} {:7} {:8} {:13} {:8.2} ms",
            report.due,
            report.ticked,
            report.waiting,
            report.longest_wait,
            took.as_secs_f64() * 1e3
        );
    }
    let per_frame = ticks as f64 / FRAMES as f64;
    println!(
        "\n{FRAMES} frames: {per_frame:.0} agent-ticks a frame on average ({:.1} % of the crowd), \
         {scared} scares, the longest wait {longest} frames (bound {bound})",
        100.0 * per_frame / CREATURES as f64
    );
    // The same crowd ticked whole every frame, for comparison.
    let start = Instant::now();
    for f in 0..16 {
        let now = (FRAMES + f + 1) as f64 / HZ;
        tick_all(&HERD, &mut herd, &mut memories, |_, c| {
            input(now, c, (1.0 / HZ) as f32)
        });
    }
    let whole = start.elapsed() / 16;
    let scheduled = spent / FRAMES as u32;
    println!(
        "a scheduled frame took {:.2} ms on average; ticking all {CREATURES} creatures {:.2} ms{}",
        scheduled.as_secs_f64() * 1e3,
        whole.as_secs_f64() * 1e3,
        if cfg!(debug_assertions) {
            " (a build without optimizations: run with --release for real times)"
        } else {
            ""
        }
    );
}
