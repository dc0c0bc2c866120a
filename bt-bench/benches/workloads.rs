//! The reference workloads of `WORKLOAD.md`, W1, W3 and W2, with bt-core
//! and with bonsai-bt (a tree-instance-per-agent library), W1 and W3 also
//! written by hand with no library (the floor; once more with each
//! behavior called through a table), and `par_tick_all` against
//! `tick_all`, in one run.
//!
//! ```sh
//! cargo bench -p bt-bench                      # the full figures
//! BT_BENCH_QUICK=1 cargo bench -p bt-bench     # N = 1 000 only, fewer runs
//! cargo run --release -p bt-bench --bench workloads -- --quick
//! BT_BENCH_ONLY=w3,par cargo bench -p bt-bench  # only the parts named (w1, w3, par, w2)
//! ```
//!
//! Times are medians of ns per agent-tick over several runs after a warm-up
//! run; a tick of an agent is its world step plus its tree tick. Heap
//! figures come from a counting global allocator, switched on only in a
//! separate counted run (the timed runs pay one relaxed load per
//! allocation).

#[path = "workloads/alloc.rs"]
mod alloc;
#[path = "workloads/w1_bonsai.rs"]
mod w1_bonsai;
#[path = "workloads/w1_core.rs"]
mod w1_core;
#[path = "workloads/w1_hand.rs"]
mod w1_hand;
#[path = "workloads/w1_tuned.rs"]
mod w1_tuned;
#[path = "workloads/w2_bonsai.rs"]
mod w2_bonsai;
#[path = "workloads/w2_core.rs"]
mod w2_core;
#[path = "workloads/w3_core.rs"]
mod w3_core;
#[path = "workloads/world.rs"]
mod world;

use std::hint::black_box;
use std::time::Instant;

use w2_core::Size;
use world::{Activations, Beh, World};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// What to run.
struct Config {
    quick: bool,
    /// W1 crowd sizes.
    w1_n: Vec<usize>,
    w1_t: u32,
    /// Timed runs after the warm-up.
    runs: usize,
    w2_n: usize,
    w2_t: u32,
    /// bonsai-bt's W2 crowd: smaller, because its cost grows with the tree
    /// (about 0.4 ms per agent-tick and 0.5 MB per agent for (4, 6)).
    w2_bonsai_n: usize,
    /// Timed runs of bonsai-bt's W2.
    w2_bonsai_runs: usize,
}

impl Config {
    fn from_env() -> Self {
        let quick = std::env::var("BT_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
            || std::env::args().any(|a| a == "--quick");
        let runs = env_usize("BT_BENCH_RUNS").unwrap_or(if quick { 2 } else { 5 });
        let mut config = Self::preset(quick, runs);
        // `BT_BENCH_W1_N=10000,100000` picks the W1 crowd sizes.
        if let Ok(list) = std::env::var("BT_BENCH_W1_N") {
            let sizes: Vec<usize> = list
                .split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect();
            if !sizes.is_empty() {
                config.w1_n = sizes;
            }
        }
        config
    }

    fn preset(quick: bool, runs: usize) -> Self {
        if quick {
            Config {
                quick,
                w1_n: vec![1_000],
                w1_t: 300,
                runs,
                w2_n: 1_000,
                w2_t: 100,
                w2_bonsai_n: env_usize("BT_BENCH_W2_BONSAI_N").unwrap_or(100),
                w2_bonsai_runs: 1,
            }
        } else {
            Config {
                quick,
                w1_n: vec![1_000, 10_000, 100_000],
                w1_t: 300,
                runs,
                w2_n: 10_000,
                w2_t: 100,
                w2_bonsai_n: env_usize("BT_BENCH_W2_BONSAI_N").unwrap_or(1_000),
                w2_bonsai_runs: runs.min(3),
            }
        }
    }
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Median, min and max of ns per agent-tick.
#[derive(Clone, Copy)]
struct Time {
    median: f64,
    min: f64,
    max: f64,
}

impl Time {
    fn cell(&self) -> String {
        format!("{:8.1}", self.median)
    }

    fn spread(&self) -> String {
        format!("{:.1}-{:.1}", self.min, self.max)
    }
}

/// Runs a crowd `runs + 1` times (the first is the warm-up) for `t` ticks
/// and times the ticks only. `fingerprint` must be the same after every run
/// (the workload is deterministic).
fn time<C>(
    n: usize,
    t: u32,
    runs: usize,
    make: impl Fn(usize) -> C,
    tick: impl Fn(&mut C, u32) -> u32,
    fingerprint: impl Fn(&C) -> u64,
) -> Time {
    let mut samples = Vec::with_capacity(runs);
    let mut first = None;
    for run in 0..=runs {
        let mut crowd = make(n);
        let start = Instant::now();
        let mut failed = 0;
        for tick_no in 0..t {
            failed += tick(&mut crowd, tick_no);
        }
        let elapsed = start.elapsed();
        assert_eq!(failed, 0, "a tree stopped or failed");
        let print = fingerprint(black_box(&crowd));
        assert_eq!(*first.get_or_insert(print), print, "runs differ");
        if run > 0 {
            samples.push(elapsed.as_secs_f64() * 1e9 / (n as f64 * f64::from(t)));
        }
        // Dropping the crowd is not timed.
        drop(crowd);
    }
    samples.sort_by(f64::total_cmp);
    Time {
        median: samples[samples.len() / 2],
        min: samples[0],
        max: samples[samples.len() - 1],
    }
}

/// The world step as the agents of a bt-core run take it: each tick's
/// world step and tree tick timed apart, over `runs` runs after a warm-up.
/// Returns the medians of the world step's and the trees' ns per
/// agent-tick. Unlike the bare world step, which has no tree to clear
/// `hungry`, `tired` or `intruder`, this world step draws as often as the
/// workload's agents make it.
fn time_split<C>(
    n: usize,
    t: u32,
    runs: usize,
    make: impl Fn(usize) -> C,
    world: impl Fn(&mut C),
    tree: impl Fn(&mut C, u32) -> u32,
) -> (f64, f64) {
    let (mut worlds, mut trees) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for run in 0..=runs {
        let mut crowd = make(n);
        let (mut w, mut k) = (0.0, 0.0);
        for tick_no in 0..t {
            let start = Instant::now();
            world(&mut crowd);
            let stepped = Instant::now();
            assert_eq!(tree(&mut crowd, tick_no), 0, "a tree stopped or failed");
            let done = Instant::now();
            w += (stepped - start).as_secs_f64();
            k += (done - stepped).as_secs_f64();
        }
        black_box(&crowd);
        if run > 0 {
            let per = 1e9 / (n as f64 * f64::from(t));
            worlds.push(w * per);
            trees.push(k * per);
        }
    }
    worlds.sort_by(f64::total_cmp);
    trees.sort_by(f64::total_cmp);
    (worlds[runs / 2], trees[runs / 2])
}

/// What the counted run saw.
struct Counted<C> {
    crowd: C,
    /// Live heap bytes per agent right after the crowd was made (its own
    /// `Vec`s included).
    heap_made: f64,
    /// Live heap bytes per agent after the last tick.
    heap_end: f64,
    /// Live heap blocks per agent right after the crowd was made.
    blocks: f64,
    /// Allocations per agent-tick, ticks 2..=T.
    allocs: f64,
}

fn counted<C>(
    n: usize,
    t: u32,
    make: impl Fn(usize) -> C,
    tick: impl Fn(&mut C, u32) -> u32,
) -> Counted<C> {
    let counter = alloc::start();
    let mut crowd = make(n);
    let made = counter.read();
    tick(&mut crowd, 0);
    let first = counter.read();
    for tick_no in 1..t {
        tick(&mut crowd, tick_no);
    }
    let end = counter.stop();
    // The crowd's own `Vec`s are per agent too: everything is counted
    // (for bt-core that is exactly its agents and memories).
    Counted {
        crowd,
        heap_made: made.live as f64 / n as f64,
        heap_end: end.live as f64 / n as f64,
        blocks: made.blocks as f64 / n as f64,
        allocs: (end.allocs - first.allocs) as f64 / (n as f64 * f64::from(t - 1)),
    }
}

fn fingerprint(counts: &Activations) -> u64 {
    counts.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| {
        (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `BT_BENCH_PROFILE=world|w1-core|w1-tuned|w1-twin|w1-hand|w1-calls|w1-bonsai|w2-core|world-w3|w3-core|w3-hand|w3-calls`: one
/// untimed run of one crowd (N = `BT_BENCH_N`, default 1 000; T = 300, W2: 100), for
/// `valgrind --tool=callgrind`.
fn profile(what: &str) {
    let n = env_usize("BT_BENCH_N").unwrap_or(1_000);
    fn run<C>(n: usize, t: u32, make: impl Fn(usize) -> C, tick: impl Fn(&mut C, u32) -> u32) -> C {
        let mut crowd = make(n);
        for tick_no in 0..t {
            assert_eq!(tick(&mut crowd, tick_no), 0);
        }
        crowd
    }
    let print = match what {
        "world" => {
            let w = run(
                n,
                300,
                |n| (0..n).map(World::spawn).collect::<Vec<_>>(),
                |w, _| {
                    w.iter_mut().for_each(World::step);
                    0
                },
            );
            w.iter().fold(0, |h, a| h ^ a.rng)
        }
        "world-w3" => {
            let w = run(
                n,
                300,
                |n| (0..n).map(World::spawn).collect::<Vec<_>>(),
                |w, _| {
                    w.iter_mut().for_each(World::step_steady);
                    0
                },
            );
            w.iter().fold(0, |h, a| h ^ a.rng)
        }
        "w3-core" => {
            fingerprint(&run(n, 300, w3_core::Crowd::new, w3_core::Crowd::tick).activations())
        }
        "w1-core" => {
            fingerprint(&run(n, 300, w1_core::Crowd::new, w1_core::Crowd::tick).activations())
        }
        "w1-tuned" => {
            fingerprint(&run(n, 300, w1_tuned::Crowd::new, w1_tuned::Crowd::tick).activations())
        }
        "w1-twin" => fingerprint(
            &run(
                n,
                300,
                w1_tuned::twin::Crowd::new,
                w1_tuned::twin::Crowd::tick,
            )
            .activations(),
        ),
        "w1-hand" => {
            fingerprint(&run(n, 300, w1_hand::Crowd::new, w1_hand::Crowd::tick).activations())
        }
        "w3-hand" => fingerprint(
            &run(n, 300, w1_hand::Crowd::new_steady, w1_hand::Crowd::tick).activations(),
        ),
        "w1-calls" => {
            fingerprint(&run(n, 300, w1_hand::Crowd::new_calls, w1_hand::Crowd::tick).activations())
        }
        "w3-calls" => fingerprint(
            &run(
                n,
                300,
                w1_hand::Crowd::new_steady_calls,
                w1_hand::Crowd::tick,
            )
            .activations(),
        ),
        "w1-bonsai" => {
            fingerprint(&run(n, 300, w1_bonsai::Crowd::new, w1_bonsai::Crowd::tick).activations())
        }
        "w2-core" => run(n, 100, w2_core::Crowd4x6::new, w2_core::Crowd4x6::tick).leaves(),
        other => panic!("BT_BENCH_PROFILE: unknown crowd `{other}`"),
    };
    println!("{what}: N = {n}, fingerprint {print:#x}");
}

fn main() {
    if let Ok(what) = std::env::var("BT_BENCH_PROFILE") {
        profile(&what);
        return;
    }
    let cfg = Config::from_env();
    println!(
        "bt-bench workloads, {} mode: medians of {} timed runs after 1 warm-up run",
        if cfg.quick { "quick" } else { "full" },
        cfg.runs,
    );
    println!("ns per agent-tick = time of (world step + tree tick) over all agents / (N * T)");
    // `BT_BENCH_ONLY=w1,w3,par,w2` runs only the parts named.
    let only = std::env::var("BT_BENCH_ONLY").unwrap_or_default();
    let runs = |part: &str| only.is_empty() || only.split(',').any(|p| p.trim() == part);
    let w1 = if runs("w1") {
        crowd(&cfg, &W1)
    } else {
        Vec::new()
    };
    let w3 = if runs("w3") {
        crowd(&cfg, &W3)
    } else {
        Vec::new()
    };
    if !w1.is_empty() && !w3.is_empty() {
        println!("\nbt-core / world step, same run: W1 and W3");
        for ((n, r1), (_, r3)) in w1.iter().zip(&w3) {
            println!(
                "  N = {n:>7}: W1 {r1:.2}x, W3 {r3:.2}x, W1 / W3 {:.2}",
                r1 / r3
            );
        }
    }
    if runs("par") {
        par(&cfg);
    }
    if runs("w2") {
        w2(&cfg);
    }
}

/// W1 or W3: the same tree, table and contenders; W3 runs its behaviors
/// 20 times longer and turns things on 20 times less often.
struct Workload<C> {
    name: &'static str,
    title: &'static str,
    core_new: fn(usize) -> C,
    core_tick: fn(&mut C, u32) -> u32,
    /// `core_tick` in its two halves: the world step, then the trees.
    core_world: fn(&mut C),
    core_tree: fn(&mut C, u32) -> u32,
    core_activations: fn(&C) -> Activations,
    /// Agent-ticks in which nothing was activated or deactivated, where
    /// the crowd counts them.
    core_steady: fn(&C) -> Option<u64>,
    memory_bytes: fn() -> usize,
    bonsai_new: fn(usize) -> w1_bonsai::Crowd,
    hand_new: fn(usize) -> w1_hand::Crowd,
    /// By hand, each behavior a function called through a table.
    calls_new: fn(usize) -> w1_hand::Crowd,
    world_step: fn(&mut World),
}

const W1: Workload<w1_core::Crowd> = Workload {
    name: "W1",
    title: "creature crowd",
    core_new: w1_core::Crowd::new,
    core_tick: w1_core::Crowd::tick,
    core_world: w1_core::Crowd::world_step,
    core_tree: w1_core::Crowd::tree_tick,
    core_activations: w1_core::Crowd::activations,
    core_steady: |_| None,
    memory_bytes: w1_core::memory_bytes,
    bonsai_new: w1_bonsai::Crowd::new,
    hand_new: w1_hand::Crowd::new,
    calls_new: w1_hand::Crowd::new_calls,
    world_step: World::step,
};

const W3: Workload<w3_core::Crowd> = Workload {
    name: "W3",
    title: "steady crowd, behaviors 20x longer, 'on' chances 20x rarer",
    core_new: w3_core::Crowd::new,
    core_tick: w3_core::Crowd::tick,
    core_world: w3_core::Crowd::world_step,
    core_tree: w3_core::Crowd::tree_tick,
    core_activations: w3_core::Crowd::activations,
    core_steady: |c| Some(c.steady),
    memory_bytes: w3_core::memory_bytes,
    bonsai_new: w1_bonsai::Crowd::new_steady,
    hand_new: w1_hand::Crowd::new_steady,
    calls_new: w1_hand::Crowd::new_steady_calls,
    world_step: World::step_steady,
};

/// The W1 or W3 figures; returns the bt-core / world time ratio per N.
fn crowd<C>(cfg: &Config, wl: &Workload<C>) -> Vec<(usize, f64)> {
    let (items, levels, slots, block) = w1_core::shape();
    let t = cfg.w1_t;
    println!("\n== {}: {}, T = {t} ==", wl.name, wl.title);
    println!(
        "bt-core   : {items} items, {levels} levels, {slots} timer slot, {block}-byte blocks; tick_all"
    );
    println!(
        "by hand   : no library; a match on the running leaf, bt-core's semantics ({} B per agent)",
        w1_hand::brain_bytes()
    );
    println!(
        "calls     : by hand, each behavior's tick a function of its own called through a table"
    );
    println!(
        "bonsai-bt : one BT per agent; reactive Select/Sequence .memory(false) under While(WaitForever); \
         timer, random pick, tick counts and activation hooks emulated in leaves and the blackboard"
    );

    // The counted runs: heap, allocations and check-sums.
    let n_check = if cfg.quick { 1_000 } else { 10_000 };
    let core = counted(n_check, t, wl.core_new, wl.core_tick);
    let core_counts = (wl.core_activations)(&core.crowd);
    let core_steady = (wl.core_steady)(&core.crowd);
    let (core_heap, core_allocs) = (core.heap_made, core.allocs);
    drop(core);
    let bonsai = counted(n_check, t, wl.bonsai_new, w1_bonsai::Crowd::tick);
    let bonsai_counts = bonsai.crowd.activations();
    let (heap_made, heap_end, blocks, bonsai_allocs) = (
        bonsai.heap_made,
        bonsai.heap_end,
        bonsai.blocks,
        bonsai.allocs,
    );
    drop(bonsai);
    // The floors must make bt-core's decisions, or they measure
    // something else.
    for (what, new) in [("by hand", wl.hand_new), ("calls", wl.calls_new)] {
        let mut crowd = new(n_check);
        for tick_no in 0..t {
            w1_hand::Crowd::tick(&mut crowd, tick_no);
        }
        assert_eq!(
            core_counts,
            crowd.activations(),
            "{}: the activations {what} differ from bt-core's",
            wl.name
        );
    }

    let world_bytes = size_of::<World>();
    let agent_bytes = size_of::<w1_core::Agent>();
    let memory_bytes = (wl.memory_bytes)();
    let inline = w1_bonsai::inline_bytes() as f64;
    println!("\nbytes per agent (counted at N = {n_check}):");
    println!(
        "  bt-core   {:>6} = AgentMemory {memory_bytes} + blackboard {world_bytes}; nothing on the heap \
         (all the allocator saw per agent: {core_heap:.0} = the agent's and the memory's slots in \
         their Vecs; the agent struct holds {} B of the bench's check-sum counters, not counted)",
        memory_bytes + world_bytes,
        agent_bytes - world_bytes,
    );
    println!(
        "  bonsai-bt {heap_made:>6.0} = BT {inline} inline (its blackboard {} of it: world {world_bytes}, \
         counters {}, emulation state) + {:.0} more in {blocks:.0} heap blocks after BT::new \
         ({heap_end:.0} in all after T ticks)",
        size_of::<w1_bonsai::Board>(),
        size_of::<Activations>(),
        heap_made - inline,
    );
    println!(
        "            counted by the bench's global allocator: bytes requested and not freed, \
         the BTs' slots in their Vec included; malloc's own overhead (8-16 B a block) not included"
    );
    println!(
        "heap allocations per agent-tick after the first tick: bt-core {core_allocs:.3}, \
         bonsai-bt {bonsai_allocs:.2}"
    );

    println!("\nns per agent-tick (median; [min-max] below):");
    println!(
        "  {:>7}  {:>8}  {:>8}  {:>8}  {:>8}  {:>9}  {:>13}  {:>13}  {:>13}  {:>13}  {:>13}",
        "N",
        "world",
        "by hand",
        "calls",
        "bt-core",
        "bonsai-bt",
        "bonsai/core",
        "core/world",
        "hand/world",
        "core/hand",
        "core/calls"
    );
    let mut spreads = Vec::new();
    let mut ratios = Vec::new();
    let mut splits = Vec::new();
    for &n in &cfg.w1_n {
        let world = time(
            n,
            t,
            cfg.runs,
            |n| (0..n).map(World::spawn).collect::<Vec<_>>(),
            |w, _| {
                w.iter_mut().for_each(wl.world_step);
                0
            },
            |w| w.iter().fold(0, |h, a| h ^ a.rng),
        );
        let hand = time(n, t, cfg.runs, wl.hand_new, w1_hand::Crowd::tick, |c| {
            fingerprint(&c.activations())
        });
        let calls = time(n, t, cfg.runs, wl.calls_new, w1_hand::Crowd::tick, |c| {
            fingerprint(&c.activations())
        });
        let core = time(n, t, cfg.runs, wl.core_new, wl.core_tick, |c| {
            fingerprint(&(wl.core_activations)(c))
        });
        let bonsai = time(n, t, cfg.runs, wl.bonsai_new, w1_bonsai::Crowd::tick, |c| {
            fingerprint(&c.activations())
        });
        println!(
            "  {n:>7}  {}  {}  {}  {}  {:>9}  {:>12.1}x  {:>12.2}x  {:>12.2}x  {:>12.2}x  {:>12.2}x",
            world.cell(),
            hand.cell(),
            calls.cell(),
            core.cell(),
            bonsai.cell(),
            bonsai.median / core.median,
            core.median / world.median,
            hand.median / world.median,
            core.median / hand.median,
            core.median / calls.median,
        );
        spreads.push((
            n,
            world.spread(),
            hand.spread(),
            calls.spread(),
            core.spread(),
            bonsai.spread(),
        ));
        ratios.push((n, core.median / world.median));
        splits.push((
            n,
            time_split(n, t, cfg.runs, wl.core_new, wl.core_world, wl.core_tree),
            core.median,
        ));
    }
    for (n, w, h, k, c, b) in spreads {
        println!("  {n:>7}  [world {w}] [by hand {h}] [calls {k}] [bt-core {c}] [bonsai-bt {b}]");
    }
    println!(
        "bt-core's tick timed in its halves (medians; the bare world step above runs a world in \
         which no tree clears hungry, tired or intruder, so it draws less often):"
    );
    for (n, (world, tree), core) in splits {
        println!(
            "  {n:>7}  world step {world:.1} ns, trees {tree:.1} ns ({:.1} in all, {core:.1} timed whole); \
             bt-core / this world step {:.2}x",
            world + tree,
            core / world
        );
    }

    if let Some(steady) = core_steady {
        println!(
            "\nagent-ticks in which bt-core activated or deactivated nothing: {:.1}% (N = {n_check}, T = {t})",
            steady as f64 * 100.0 / (n_check as f64 * f64::from(t))
        );
    }

    println!(
        "\ncheck-sum: activations per behavior, N = {n_check}, T = {t} (by hand: bt-core's, \
         checked)"
    );
    println!(
        "  {:<15} {:>9} {:>10} {:>8}",
        "behavior", "bt-core", "bonsai-bt", "diff"
    );
    for (i, name) in Beh::NAMES.iter().enumerate() {
        let (c, b) = (core_counts[i], bonsai_counts[i]);
        println!(
            "  {name:<15} {c:>9} {b:>10} {:>+7.1}%",
            (f64::from(b) - f64::from(c)) * 100.0 / f64::from(c.max(1))
        );
    }
    let idle = |c: &Activations| Beh::IDLE.iter().map(|&b| c[b as usize]).sum::<u32>();
    let (ci, bi) = (idle(&core_counts), idle(&bonsai_counts));
    println!(
        "  {:<15} {ci:>9} {bi:>10} {:>+7.1}%",
        "FLIP+ROLL+DANCE",
        (f64::from(bi) - f64::from(ci)) * 100.0 / f64::from(ci.max(1))
    );
    for note in [
        "where the models differ (bonsai-bt side):",
        "- guards on the running branch are re-checked every tick: GUARD stops when intruder",
        "  turns off by itself (bt-core's active GUARD runs on until FIGHT clears it);",
        "- no per-tick mask of a child that just ended: YELL starts again at once while hurt,",
        "  where bt-core's GUARD runs FIGHT (preempted by YELL the next tick): more YELL, less FIGHT;",
        "- EAT's progress is the fact food_found: an EAT interrupted after FIND_FOOD resumes at",
        "  EAT_FOOD (bt-core restarts the sequence): fewer FIND_FOOD;",
        "- IDLE: next() % 3 from its own generator may repeat a child; bt-core's random group",
        "  draws with its generator and never repeats the child that just ended in that tick.",
    ] {
        println!("  {note}");
    }
    ratios
}

/// Process CPU time (user + system, every thread) in seconds, from
/// `/proc/self/stat` (`None` where there is none). Clock ticks of 10 ms.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses: the
    // state is field 3, utime field 14 and stime field 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// How [`par_run`] ticks the crowd's trees.
#[derive(Clone, Copy, PartialEq)]
enum Ticking {
    /// `tick_all`.
    Serial,
    /// `par_tick_all`, called from the main thread: rayon's workers, asleep
    /// through the serial world step, wake up for each call.
    Parallel,
    /// `par_tick_all` with the whole frame loop inside rayon's pool (as an
    /// engine that runs its frame on its job system would call it): the
    /// thread that calls it is a worker and starts at once.
    InPool,
}

/// One run of W1 ticked as `how` says: the wall time of the tree ticks
/// alone, of the world steps (serial in every case), and the process CPU
/// time over the whole run, all in seconds.
fn par_run(n: usize, t: u32, how: Ticking) -> (f64, f64, Option<f64>, Activations) {
    let mut crowd = w1_core::Crowd::new(n);
    let cpu_start = cpu_seconds();
    let (mut tree, mut world) = (0.0, 0.0);
    let mut frames = || {
        for tick_no in 0..t {
            let start = Instant::now();
            for a in &mut crowd.agents {
                a.world.step();
            }
            let stepped = Instant::now();
            let now = world::now(tick_no);
            let input = |_: usize, a: &mut w1_core::Agent| {
                bt_core::TickInput::new(now, world::DT).with_decision(a.world.flags())
            };
            let report = if how == Ticking::Serial {
                bt_core::tick_all(&w1_core::W1, &mut crowd.agents, &mut crowd.memories, input)
            } else {
                bt_core::par_tick_all(&w1_core::W1, &mut crowd.agents, &mut crowd.memories, input)
            };
            let done = Instant::now();
            assert_eq!(report.errors, 0, "a tree failed");
            world += (stepped - start).as_secs_f64();
            tree += (done - stepped).as_secs_f64();
        }
    };
    if how == Ticking::InPool {
        rayon::scope(|_| frames());
    } else {
        frames();
    }
    let cpu = cpu_start.zip(cpu_seconds()).map(|(a, b)| b - a);
    (tree, world, cpu, black_box(&crowd).activations())
}

/// `par_tick_all` against `tick_all` on W1, interleaved run by run: wall
/// time of the tree ticks, and CPU time next to it, so that a machine
/// busy with other work shows as such (CPU / wall well under the number
/// of cores while the parallel ticks run).
fn par(cfg: &Config) {
    let n = env_usize("BT_BENCH_PAR_N").unwrap_or(100_000);
    let t = if cfg.quick { 100 } else { cfg.w1_t };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "\n== par_tick_all against tick_all: W1, N = {n}, T = {t}, {threads} hardware threads, \
         rayon's default pool =="
    );
    let mut serial = Vec::new();
    let mut parallel = Vec::new();
    let mut in_pool = Vec::new();
    let mut first = None;
    for run in 0..=cfg.runs {
        for (how, samples) in [
            (Ticking::Serial, &mut serial),
            (Ticking::Parallel, &mut parallel),
            (Ticking::InPool, &mut in_pool),
        ] {
            let (tree, world, cpu, counts) = par_run(n, t, how);
            assert_eq!(
                *first.get_or_insert(counts),
                counts,
                "par_tick_all and tick_all differ"
            );
            if run > 0 {
                samples.push((tree, world, cpu));
            }
        }
    }
    let per = |secs: f64| secs * 1e9 / (n as f64 * f64::from(t));
    let median = |samples: &mut Vec<(f64, f64, Option<f64>)>| {
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        samples[samples.len() / 2]
    };
    let (s_tree, s_world, s_cpu) = median(&mut serial);
    let (p_tree, p_world, p_cpu) = median(&mut parallel);
    let (q_tree, q_world, q_cpu) = median(&mut in_pool);
    println!(
        "  {:<13} {:>15} {:>15} {:>22} {:>14}",
        "", "tree ns/a-tick", "world ns/a-tick", "tree CPU ns/a-tick", "tree CPU/wall"
    );
    for (name, tree, world, cpu) in [
        ("tick_all", s_tree, s_world, s_cpu),
        ("par_tick_all", p_tree, p_world, p_cpu),
        ("  in the pool", q_tree, q_world, q_cpu),
    ] {
        // The world step runs on one thread: its CPU time is its wall time.
        let tree_cpu = cpu.map(|c| (c - world).max(0.0));
        let cpu_cell = tree_cpu.map_or("n/a".to_string(), |c| format!("{:.1}", per(c)));
        let ratio_cell = tree_cpu.map_or("n/a".to_string(), |c| format!("{:.2}", c / tree));
        println!(
            "  {name:<13} {:>15.1} {:>15.1} {cpu_cell:>22} {ratio_cell:>14}",
            per(tree),
            per(world),
        );
    }
    println!(
        "  par_tick_all speed-up on the tree ticks (wall): {:.2}x called from the main thread, \
         {:.2}x with the frame loop inside rayon's pool (median runs; CPU from /proc/self/stat \
         in 10 ms ticks, the serial world step's wall time taken off)",
        s_tree / p_tree,
        s_tree / q_tree
    );
}

fn w2(cfg: &Config) {
    let t = cfg.w2_t;
    let (n, nb) = (cfg.w2_n, cfg.w2_bonsai_n);
    println!(
        "\n== W2: wide and deep, T = {t}; bt-core N = {n}, bonsai-bt N = {nb} \
         ({} timed runs after a warm-up) ==",
        cfg.w2_bonsai_runs
    );
    println!(
        "  {:>6} {:>8} | {:>8} {:>7} {:>6} {:>6} | {:>9} {:>8} {:>7} {:>6} | {:>11}",
        "(D,F)",
        "deciders",
        "bt-core",
        "B/agent",
        "allocs",
        "leaves",
        "bonsai-bt",
        "B/agent",
        "allocs",
        "leaves",
        "bonsai/core"
    );
    for (d, f, deciders, memory) in w2_core::sizes() {
        let (core, core_allocs, core_leaves) = match (d, f) {
            (2, 8) => w2_core_size::<w2_core::Crowd2x8>(cfg),
            (3, 8) => w2_core_size::<w2_core::Crowd3x8>(cfg),
            _ => w2_core_size::<w2_core::Crowd4x6>(cfg),
        };
        let (tree, count) = w2_bonsai::tree(d, f);
        drop(tree);
        assert_eq!(
            count, deciders,
            "bonsai-bt's tree has the size of bt-core's"
        );
        let make = |n| w2_bonsai::Crowd::new(n, d, f);
        let bonsai = counted(nb, t, make, w2_bonsai::Crowd::tick);
        let bonsai_leaves = bonsai.crowd.leaves() as f64 / (nb as f64 * f64::from(t));
        // The BTs' slots in their Vec included.
        let bonsai_bytes = bonsai.heap_made;
        let bonsai_allocs = bonsai.allocs;
        drop(bonsai);
        let bonsai_time = time(
            nb,
            t,
            cfg.w2_bonsai_runs,
            make,
            w2_bonsai::Crowd::tick,
            w2_bonsai::Crowd::leaves,
        );
        println!(
            "  {:>6} {deciders:>8} | {} {:>7} {core_allocs:>6.3} {core_leaves:>6.3} | {:>9} {bonsai_bytes:>8.0} {bonsai_allocs:>7.1} {bonsai_leaves:>6.3} | {:>10.0}x",
            format!("({d},{f})"),
            core.cell(),
            memory + size_of::<w2_core::Agent>(),
            bonsai_time.cell(),
            bonsai_time.median / core.median,
        );
    }
    println!(
        "  ns per agent-tick; B/agent: bt-core AgentMemory + agent ({} B), bonsai-bt BT inline ({} B) \
         + its heap after BT::new; allocs and leaf activations per agent-tick",
        size_of::<w2_core::Agent>(),
        w2_bonsai::inline_bytes()
    );
    println!(
        "  (bonsai-bt re-checks every precondition on the running branch each tick, so with a \
         fresh mask each tick few of its leaves run their 3 ticks)"
    );
}

/// One W2 size with bt-core: its time, allocations and leaf activations per
/// agent-tick.
fn w2_core_size<C: Size>(cfg: &Config) -> (Time, f64, f64) {
    let (n, t) = (cfg.w2_n, cfg.w2_t);
    let counted = counted(n, t, C::new, C::tick);
    let leaves = counted.crowd.leaves() as f64 / (n as f64 * f64::from(t));
    let allocs = counted.allocs;
    drop(counted);
    let time = time(n, t, cfg.runs, C::new, C::tick, C::leaves);
    (time, allocs, leaves)
}
