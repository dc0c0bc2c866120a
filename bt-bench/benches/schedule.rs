//! Tick rates and a frame budget: what `tick_scheduled` adds to the ticks
//! it makes, and how long agents wait under a budget.
//!
//! ```sh
//! cargo bench -p bt-bench --bench schedule
//! BT_BENCH_PROFILE=scheduled|prepared BT_BENCH_T=100 valgrind --tool=callgrind \
//!     --toggle-collect='*Scheduled*frame*' --toggle-collect='*Prepared*frame*' \
//!     target/release/deps/schedule-<hash>
//! BT_BENCH_PROFILE=budget BT_BENCH_T=60 valgrind --tool=callgrind \
//!     --toggle-collect='*budget_frame*' target/release/deps/schedule-<hash>
//! ```
//!
//! **A tenth of the crowd each frame.** 100 000 W1 agents, each ticking
//! every 10th frame: `tick_scheduled` finds the frame's 10 000 agents in
//! their bucket and ticks them where they are in the crowd's slices. The
//! same agents, sorted beforehand into ten slices of their own (agent
//! `p + 10 j` at place `j` of slice `p`), are ticked by `tick_all`, one
//! slice a frame: what a game gets from a crowd it keeps sorted by phase,
//! with nothing to find. Both make the same decisions (the check-sum of
//! activations is compared); each agent-tick is its world step plus its
//! tree tick. The two run interleaved, frame block by frame block, in one
//! process, and the ratio is of their times in each block.
//!
//! **A budget.** 100 000 W1 agents on a field, their rates set every frame
//! by the distance to a circling camera (every frame, every 4th, every
//! 16th), with predator scares waking agents, under a budget of 5 000
//! agent-ticks a frame: once with rates whose load is below the budget
//! but for the wake-ups, once with rates asking for twice the budget.

#[allow(dead_code)]
#[path = "workloads/world.rs"]
mod world;

#[allow(dead_code)]
#[path = "workloads/w1_core.rs"]
mod w1_core;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bt_core::{FrameReport, Rate, Schedule, TickInput, tick_all, tick_scheduled};
use w1_core::{Agent, W1, W1Memory, sum};
use world::{Activations, now};

const N: usize = 100_000;
const PERIOD: u32 = 10;

/// W1's input for an agent's tick: its world step first.
#[inline(always)]
fn input(now: f64, dt: f32, a: &mut Agent) -> TickInput {
    world_step(a);
    TickInput::new(now, dt).with_decision(a.world.flags())
}

/// An agent's world step, a call in every contender: inlined into the
/// input closure, it makes the closure large enough that one codegen unit
/// leaves it out of line in `tick_scheduled`'s loop but not in
/// `tick_all`'s, and the comparison would measure the inliner.
#[inline(never)]
fn world_step(a: &mut Agent) {
    a.world.step();
}

/// The crowd in one pair of slices, scheduled at every 10th frame.
struct Scheduled {
    agents: Vec<Agent>,
    memories: Vec<W1Memory>,
    schedule: Schedule,
    frame: u32,
}

impl Scheduled {
    fn new() -> Self {
        let mut schedule = Schedule::new(N, 0.0);
        for i in 0..N {
            schedule.set_rate(i, Rate::Every(PERIOD)).unwrap();
        }
        Scheduled {
            agents: (0..N).map(Agent::spawn).collect(),
            memories: (0..N).map(|i| W1.new_memory(i as u64)).collect(),
            schedule,
            frame: 0,
        }
    }

    /// One frame: the tenth of the crowd whose turn it is.
    #[inline(never)]
    fn frame(&mut self) -> u32 {
        let now = now(self.frame + 1);
        self.frame += 1;
        let report = tick_scheduled(
            &W1,
            &mut self.agents,
            &mut self.memories,
            &mut self.schedule,
            now,
            |_, a, dt| input(now, dt, a),
        );
        report.ticked
    }

    fn activations(&self) -> Activations {
        sum(self.agents.iter().map(|a| &a.activations))
    }
}

/// The same crowd sorted by phase: slice `p` holds the agents whose phase
/// of period 10 is `p`, and the clock of its last tick (its agents' `dt`
/// is the time since).
struct Prepared {
    parts: Vec<(Vec<Agent>, Vec<W1Memory>, f64)>,
    frame: u32,
}

impl Prepared {
    fn new() -> Self {
        let p = PERIOD as usize;
        let parts = (0..p)
            .map(|phase| {
                let ids: Vec<usize> = (0..N)
                    .filter(|&i| Schedule::phase(i, PERIOD) as usize == phase)
                    .collect();
                let agents = ids.iter().map(|&i| Agent::spawn(i)).collect();
                let memories = ids.iter().map(|&i| W1.new_memory(i as u64)).collect();
                (agents, memories, 0.0)
            })
            .collect();
        Prepared { parts, frame: 0 }
    }

    /// One frame: `tick_all` over the slice whose turn it is.
    #[inline(never)]
    fn frame(&mut self) -> u32 {
        let now = now(self.frame + 1);
        let (agents, memories, last) = &mut self.parts[(self.frame % PERIOD) as usize];
        self.frame += 1;
        let dt = (now - core::mem::replace(last, now)) as f32;
        tick_all(&W1, agents, memories, |_, a| input(now, dt, a)).ticked
    }

    fn activations(&self) -> Activations {
        sum(self
            .parts
            .iter()
            .flat_map(|(a, _, _)| a)
            .map(|a| &a.activations))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `BT_BENCH_PROFILE=scheduled|prepared|budget`: `BT_BENCH_T` frames
/// (default 100) of one contender (`budget`: the load twice the budget),
/// untimed, for callgrind.
fn profile(what: &str) {
    let t = std::env::var("BT_BENCH_T")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100u32);
    let ticks: u64 = match what {
        "scheduled" => {
            let mut c = Scheduled::new();
            (0..t).map(|_| u64::from(c.frame())).sum()
        }
        "prepared" => {
            let mut c = Prepared::new();
            (0..t).map(|_| u64::from(c.frame())).sum()
        }
        "budget" => budget("load twice the budget", 60.0, 200.0, 16, t),
        other => panic!("BT_BENCH_PROFILE: unknown contender `{other}`"),
    };
    println!("{what}: {t} frames, {ticks} agent-ticks");
}

/// A tenth of the crowd each frame: scheduled against prepared.
fn tenth() {
    let (mut scheduled, mut prepared) = (Scheduled::new(), Prepared::new());
    // A block is a full round of the period: each agent ticks once.
    let block = PERIOD;
    let blocks = std::env::var("BT_BENCH_BLOCKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let time = |frame: &mut dyn FnMut() -> u32| {
        let start = Instant::now();
        let ticks: u32 = (0..block).map(|_| black_box(frame())).sum();
        (start.elapsed(), ticks)
    };
    // A warm-up block each.
    time(&mut || scheduled.frame());
    time(&mut || prepared.frame());
    let (mut ratios, mut s_ns, mut p_ns) = (Vec::new(), Vec::new(), Vec::new());
    for b in 0..blocks {
        // Alternate which goes first.
        let (s, p) = if b % 2 == 0 {
            let s = time(&mut || scheduled.frame());
            (s, time(&mut || prepared.frame()))
        } else {
            let p = time(&mut || prepared.frame());
            (time(&mut || scheduled.frame()), p)
        };
        assert_eq!(s.1, p.1);
        let per = |(d, n): (Duration, u32)| d.as_secs_f64() * 1e9 / f64::from(n);
        s_ns.push(per(s));
        p_ns.push(per(p));
        ratios.push(s.0.as_secs_f64() / p.0.as_secs_f64());
    }
    assert_eq!(
        scheduled.activations(),
        prepared.activations(),
        "the two made other decisions"
    );
    println!(
        "A tenth of {N} W1 agents each frame ({blocks} blocks of {block} frames, medians):\n  \
         tick_scheduled {:.1} ns per agent-tick, tick_all on the prepared slice {:.1} ns: \
         {:.3}x (blocks from {:.3}x to {:.3}x)",
        median(s_ns),
        median(p_ns),
        median(ratios.clone()),
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
}

/// An agent's place on the field, from its index.
fn place(i: usize) -> (f32, f32) {
    let mut s = 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1);
    let mut unit = || (world::next(&mut s) % 1_000_000) as f32 / 1_000_000.0;
    (unit() * 1000.0, unit() * 1000.0)
}

/// One frame of [`budget`]'s crowd.
#[inline(never)]
fn budget_frame(
    agents: &mut [Agent],
    memories: &mut [W1Memory],
    schedule: &mut Schedule,
    now: f64,
) -> FrameReport {
    tick_scheduled(&W1, agents, memories, schedule, now, |_, a, dt| {
        input(now, dt, a)
    })
}

/// 100 000 agents at rates by a circling camera, under a budget of 5 000,
/// for `frames` frames; the agent-ticks.
fn budget(name: &str, near: f32, mid: f32, slow: u32, frames: u32) -> u64 {
    const BUDGET: u32 = 5_000;
    let places: Vec<(f32, f32)> = (0..N).map(place).collect();
    let mut agents: Vec<Agent> = (0..N).map(Agent::spawn).collect();
    let mut memories: Vec<W1Memory> = (0..N).map(|i| W1.new_memory(i as u64)).collect();
    let mut schedule = Schedule::new(N, 0.0).with_budget(Some(BUDGET));
    let bound = schedule.wait_bound().unwrap();
    let (mut most, mut longest, mut late, mut ticks, mut woken) = (0, 0, 0, 0u64, 0u64);
    let mut waits = Vec::new();
    let mut spent = Duration::ZERO;
    for f in 0..frames {
        let a = f as f32 / 300.0 * std::f32::consts::TAU;
        let (cx, cy) = (500.0 + 300.0 * a.cos(), 500.0 + 300.0 * a.sin());
        let (px, py) = (
            500.0 + 250.0 * (1.7 * a).sin(),
            500.0 + 150.0 * (2.0 * a).cos(),
        );
        for (i, &(x, y)) in places.iter().enumerate() {
            let d = ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
            let rate = if d < near {
                Rate::EveryFrame
            } else if d < mid {
                Rate::Every(4)
            } else {
                Rate::Every(slow)
            };
            schedule.set_rate(i, rate).unwrap();
            // A predator wakes what it passes; every 100th frame, what
            // hears it roar.
            let r2 = (x - px).powi(2) + (y - py).powi(2);
            if r2 < 20.0 * 20.0 || (f % 100 == 50 && r2 < 150.0 * 150.0) {
                schedule.wake(i);
                woken += 1;
            }
        }
        let now = now(f + 1);
        let start = Instant::now();
        let report = budget_frame(&mut agents, &mut memories, &mut schedule, now);
        spent += start.elapsed();
        assert_eq!(report.crowd.errors, 0);
        assert!(report.ticked <= BUDGET, "over budget");
        assert!(report.longest_wait <= bound, "waited past the bound");
        most = most.max(report.ticked);
        longest = longest.max(report.longest_wait);
        late += u32::from(report.longest_wait > 0);
        ticks += u64::from(report.ticked);
        waits.push(report.longest_wait as f64);
    }
    println!(
        "{name}: {frames} frames, {:.0} agent-ticks a frame (most {most}, budget {BUDGET}), \
         {:.0} wake-ups a frame; the longest wait {longest} frames (bound {bound}), \
         frames with a late agent {late}, median longest wait {:.0}; {:.1} ns per agent-tick",
        ticks as f64 / f64::from(frames),
        woken as f64 / f64::from(frames),
        median(waits),
        spent.as_secs_f64() * 1e9 / ticks as f64,
    );
    ticks
}

fn main() {
    if let Ok(what) = std::env::var("BT_BENCH_PROFILE") {
        profile(&what);
        return;
    }
    // `BT_BENCH_ONLY=tenth` or `budget` runs that part alone.
    let only = std::env::var("BT_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "tenth" {
        tenth();
    }
    if only.is_empty() || only == "budget" {
        println!(
            "\nA budget of 5 000 agent-ticks a frame, {N} W1 agents at rates by a moving camera:"
        );
        budget("  load below the budget", 30.0, 120.0, 32, 600);
        budget("  load twice the budget", 60.0, 200.0, 16, 600);
    }
}
