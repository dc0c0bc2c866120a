//! W1 with shared state through the Bevy plugin: a gate on EAT (at most
//! 2 000 creatures eating at once) and a global cooldown on
//! YELL_FOR_HELP (one yell in the crowd every 0.1 s), the tree bt-bench's
//! `par_shared` ticks with bt-core, at N = 10 000 (`--n`; at 100 000, as
//! there, the gate stays full and about one tick in four reaches it
//! each frame, against three in a hundred at 10 000). The same app
//! ticks its brains one after the other in entity order
//! (`BrainPlugin::parallel_from(u32::MAX)`) and in two phases on the
//! compute task pool (`parallel_from(0)`), in interleaved runs of one
//! process; each run checks that both made the same decisions (the
//! check-sum of activations, compared exactly).
//!
//! ```sh
//! cargo bench -p bt-bevy --bench w1_shared            # 2 compute threads
//! BT_BEVY_T=60 cargo bench -p bt-bevy --bench w1_shared -- --n 100000
//! ```
//!
//! A tick of an agent is its world step (a parallel system) plus its tree
//! tick, as in the `w1` bench; the ratio printed is of the medians of the
//! wall-clock times of the whole frames. Beside it, the CPU time the
//! process used over all its threads, and how many cores that kept busy
//! on average: on a machine busy with other work, fewer than the pool's
//! threads. `BT_BEVY_THREADS` sets the compute task pool's threads
//! (default 2), `BT_BEVY_T` the frames of a run (default 300),
//! `BT_BEVY_RUNS` the timed runs (default 5).

#[allow(dead_code)]
#[path = "../../bt-bench/benches/workloads/w1_core.rs"]
mod w1_core;
#[allow(dead_code)]
#[path = "../../bt-bench/benches/workloads/world.rs"]
mod world;

/// W1 with a gate on EAT and a cooldown on YELL_FOR_HELP.
mod shared {
    use crate::w1_core::{Agent, Ticks, step};
    use crate::world::W1Flags;

    crate::w1_core::creature_tree!(W1S, W1SMemory, ticks, eat: [, gate: 2000], yell: [, cooldown: 0.1]);
}

use std::time::{Duration, Instant};

use bevy_app::{App, TaskPoolOptions, TaskPoolPlugin, TaskPoolThreadAssignmentPolicy, Update};
use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::prelude::*;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bt_bevy::{Brain, BrainPlugin, BrainStats, BrainSystems, Decisions};

use world::{Activations, Beh, World};

impl Component for w1_core::Agent {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}
bt_bevy::component_agent!(w1_core::Agent);

fn step_one(mut creatures: Query<(&mut w1_core::Agent, &mut Decisions)>) {
    creatures.par_iter_mut().for_each(|(mut a, mut d)| {
        a.world.step();
        d.set(a.world.flags());
    });
}

/// An app whose compute task pool has `threads` threads (the pool is the
/// process's: the first app made sets it).
fn app(threads: usize) -> App {
    let exactly = TaskPoolThreadAssignmentPolicy {
        min_threads: threads,
        max_threads: threads,
        percent: 1.0,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin {
            task_pool_options: TaskPoolOptions {
                compute: exactly,
                ..TaskPoolOptions::default()
            },
        },
        TimePlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 30.0,
    )));
    app
}

/// The crowd of `n` creatures, its brains ticked in two phases from
/// `parallel_from` brains on.
fn crowd(n: usize, threads: usize, parallel_from: u32) -> App {
    let mut app = app(threads);
    app.add_plugins(
        BrainPlugin::new(&shared::W1S)
            .in_schedule(Update)
            .parallel_from(parallel_from),
    )
    .add_systems(Update, step_one.before(BrainSystems::Tick));
    app.world_mut().spawn_batch((0..n).map(|i| {
        let agent = w1_core::Agent {
            world: World::spawn(i),
            activations: [0; Beh::COUNT],
        };
        (agent, Decisions::default(), Brain::new(&shared::W1S))
    }));
    app
}

/// One timed run.
struct Figures {
    /// Wall-clock ns per agent-tick.
    wall: f64,
    /// CPU ns per agent-tick, over all threads.
    cpu: f64,
    activations: Activations,
}

/// `t` frames of a fresh crowd after one warm-up frame.
fn time(n: usize, t: u32, threads: usize, parallel: bool) -> Figures {
    let mut app = crowd(n, threads, if parallel { 0 } else { u32::MAX });
    app.update();
    let (start, cpu) = (Instant::now(), cpu_ns());
    for _ in 0..t {
        app.update();
    }
    let agent_ticks = n as f64 * f64::from(t);
    let wall = start.elapsed().as_nanos() as f64 / agent_ticks;
    let cpu = (cpu_ns() - cpu) as f64 / agent_ticks;
    let stats = app.world().resource::<BrainStats<shared::W1SMemory>>();
    assert!(stats.ticked > 0 && stats.errors == 0);
    let world = app.world_mut();
    let all: Vec<Activations> = world
        .query::<&w1_core::Agent>()
        .iter(world)
        .map(|a| a.activations)
        .collect();
    Figures {
        wall,
        cpu,
        activations: w1_core::sum(all.iter()),
    }
}

/// CPU time this process has used, over all its threads, in ns (Linux:
/// `/proc/self/task/*/schedstat`; 0 elsewhere).
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = args
        .iter()
        .position(|a| a == "--n")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(10_000);
    let threads = env("BT_BEVY_THREADS", 2);
    let runs = env("BT_BEVY_RUNS", 5);
    let t = env("BT_BEVY_T", 300) as u32;
    println!(
        "W1 with a gate on EAT (2 000) and a cooldown on YELL_FOR_HELP (0.1 s) through the plugin, \
         N = {n}, T = {t}, {threads} compute thread(s), medians of {runs} interleaved runs"
    );
    time(n, 30, threads, false);
    time(n, 30, threads, true);
    let (mut serial, mut parallel) = (Vec::new(), Vec::new());
    let mut first = None;
    for _ in 0..runs {
        for (par, samples) in [(false, &mut serial), (true, &mut parallel)] {
            let f = time(n, t, threads, par);
            assert_eq!(
                *first.get_or_insert(f.activations),
                f.activations,
                "the two phases and the ordered pass decided differently"
            );
            samples.push(f);
        }
    }
    let medians = |f: &[Figures]| {
        (
            median(f.iter().map(|f| f.wall).collect()),
            median(f.iter().map(|f| f.cpu).collect()),
        )
    };
    let ((sw, sc), (pw, pc)) = (medians(&serial), medians(&parallel));
    println!("                   wall ns/agent-tick   CPU ns/agent-tick   cores busy");
    for (name, w, c) in [("in entity order", sw, sc), ("in two phases  ", pw, pc)] {
        println!("  {name}  {w:10.1}          {c:10.1}          {:.2}", c / w);
    }
    println!(
        "  speed-up (wall clock, world step included): {:.2}x, decisions identical",
        sw / pw
    );
}
