//! `par_tick_all` on a tree with shared state, against `tick_all`: W1 with
//! a gate on EAT (at most 2 000 agents eating at once) and a global
//! cooldown on YELL_FOR_HELP (one yell in the crowd every 0.1 s), at
//! N = 100 000, T = 100. Each run checks that both make the same decisions
//! (the check-sum of activations, compared exactly).
//!
//! ```sh
//! cargo bench -p bt-bench --bench par_shared
//! BT_BENCH_PROFILE=serial|parallel BT_BENCH_T=20 valgrind --tool=callgrind \
//!     target/release/deps/par_shared-<hash>
//! ```
//!
//! The crowd's tree ticks are timed frame by frame, each frame's world
//! step outside the time, in runs that alternate `tick_all` and
//! `par_tick_all`, the whole frame loop inside rayon's pool (as an engine
//! that runs its frame on its job system calls it). The ratio printed is
//! of the medians of the two's tree times, in one process.
//! `BT_BENCH_THREADS` sets the pool's size (default: every core);
//! `BT_BENCH_N`, `BT_BENCH_T` and `BT_BENCH_RUNS` the crowd, the frames
//! and the timed runs.

#[allow(dead_code, unfulfilled_lint_expectations)]
#[path = "workloads/world.rs"]
mod world;

#[allow(dead_code)]
#[path = "workloads/w1_core.rs"]
mod w1_core;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use bt_core::{TickInput, TreeShared, par_tick_all, tick_all};
use w1_core::{Agent, Ticks, step, sum};
use world::{Activations, DT, W1Flags, now};

w1_core::creature_tree!(W1S, W1SMemory, ticks, eat: [, gate: 2000], yell: [, cooldown: 0.1]);

/// A crowd on `W1S` and its shared state.
struct Crowd {
    _shared: Arc<TreeShared>,
    agents: Vec<Agent>,
    memories: Vec<W1SMemory>,
}

impl Crowd {
    fn new(n: usize) -> Self {
        let shared = W1S.new_shared(0);
        Crowd {
            agents: (0..n).map(Agent::spawn).collect(),
            memories: (0..n)
                .map(|i| W1S.new_memory_in(&shared, i as u64))
                .collect(),
            _shared: shared,
        }
    }

    /// The tree tick `t` of every agent, in parallel or not.
    #[inline(never)]
    fn trees(&mut self, t: u32, parallel: bool) {
        let now = now(t);
        let input =
            |_: usize, a: &mut Agent| TickInput::new(now, DT).with_decision(a.world.flags());
        let report = if parallel {
            par_tick_all(&W1S, &mut self.agents, &mut self.memories, input)
        } else {
            tick_all(&W1S, &mut self.agents, &mut self.memories, input)
        };
        assert_eq!(report.errors, 0, "a tree failed");
    }

    #[inline(never)]
    fn world(&mut self) {
        for a in &mut self.agents {
            a.world.step();
        }
    }

    fn activations(&self) -> Activations {
        sum(self.agents.iter().map(|a| &a.activations))
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One run of `t` frames: the seconds spent in the tree ticks, and the
/// check-sum.
fn run(n: usize, t: u32, parallel: bool) -> (f64, Activations) {
    let mut crowd = Crowd::new(n);
    let mut trees = 0.0;
    for tick in 0..t {
        crowd.world();
        let start = Instant::now();
        crowd.trees(tick, parallel);
        trees += start.elapsed().as_secs_f64();
    }
    (trees, black_box(&crowd).activations())
}

fn main() {
    let n = env("BT_BENCH_N", 100_000);
    let t = env("BT_BENCH_T", 100) as u32;
    let threads = env("BT_BENCH_THREADS", 0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    if let Ok(what) = std::env::var("BT_BENCH_PROFILE") {
        // One run for callgrind, inside the pool.
        let parallel = what == "parallel";
        let (_, counts) = pool.install(|| run(n, t, parallel));
        println!("{what}: N = {n}, T = {t}, activations {counts:?}");
        return;
    }
    let runs = env("BT_BENCH_RUNS", 5);
    println!(
        "== par_tick_all against tick_all: W1 with a gate on EAT (2 000) and a cooldown on \
         YELL_FOR_HELP (0.1 s), N = {n}, T = {t}, {} threads in the pool, frame loop inside it ==",
        pool.current_num_threads()
    );
    let mut serial = Vec::new();
    let mut parallel = Vec::new();
    let mut first = None;
    // A warm-up pair, then `runs` timed pairs, alternating.
    for r in 0..=runs {
        for (par, samples) in [(false, &mut serial), (true, &mut parallel)] {
            let (secs, counts) = pool.install(|| run(n, t, par));
            assert_eq!(
                *first.get_or_insert(counts),
                counts,
                "par_tick_all and tick_all decided differently"
            );
            if r > 0 {
                samples.push(secs * 1e9 / (n as f64 * f64::from(t)));
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (s, p) = (median(&mut serial), median(&mut parallel));
    println!("  tick_all      {s:>7.1} ns per agent-tick (tree only, median of {runs})");
    println!("  par_tick_all  {p:>7.1} ns per agent-tick");
    println!(
        "  par_tick_all speed-up: {:.2}x (decisions identical)",
        s / p
    );
}
