//! W1 (the creature crowd) at N = 10 000 through the Bevy plugin, against
//! bt-core's own `tick_all` on the same tree source, interleaved in one run.
//!
//! ```sh
//! cargo bench -p bt-bevy --bench w1                 # 1 compute thread
//! BT_BEVY_THREADS=2 cargo bench -p bt-bevy --bench w1
//! # instruction counts: one contender, T ticks (see bt-bench/README.md,
//! # "The Bevy plugin (bt-bevy)")
//! valgrind --tool=callgrind target/release/deps/w1-* --only dense --ticks 60
//! ```
//!
//! A tick of an agent is its world step plus its tree tick, as in bt-bench.
//! Four contenders:
//! - `core`: bt-core's `tick_all` over slices (the bt-bench W1 loop);
//! - `plugin`: the agent as one component (`component_agent!`), the world
//!   step a parallel system writing `Decisions`, the brains ticked by
//!   `BrainPlugin` in `Update`;
//! - `dense`: the same with `BrainPlugin::dense` and a world step over
//!   table chunks (`contiguous_par_iter_mut`): no per-entity fetch;
//! - `plugin-of` and `dense-of`: `plugin` and `dense` with the plugin made
//!   from the tree's marker type (`BrainPlugin::of`), the tree a constant
//!   in its tick systems;
//! - `view`: the same agent split into two components (the blackboard and
//!   the check-sum tally), which the tree sees through a copied view;
//! - `step` and `bevy-step`: the world step alone, over a slice and as the
//!   `dense` app runs it without brains, so that the tree ticks can be
//!   compared on their own.

#[allow(dead_code)]
#[path = "../../bt-bench/benches/workloads/w1_core.rs"]
mod w1_core;
#[allow(dead_code)]
#[path = "../../bt-bench/benches/workloads/world.rs"]
mod world;

/// The same W1 source again, for the split-components contender: its own
/// agent type, so it can be a view.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../bt-bench/benches/workloads/w1_core.rs"]
mod w1_split;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_app::{App, TaskPoolOptions, TaskPoolPlugin, Update};
use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::prelude::*;
use bevy_ecs::query::QueryData;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bt_bevy::{Brain, BrainAgent, BrainPlugin, BrainStats, BrainSystems, Decisions, TreeMemory};

use world::{Activations, Beh, World};

impl Component for w1_core::Agent {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}
bt_bevy::component_agent!(w1_core::Agent);

/// The W1 tree as a type, for `BrainPlugin::of` (as `tree!` declares one
/// with `marker: W1Tree`; the tree source is bt-bench's, shared).
enum W1Tree {}

impl bt_core::StaticTree for W1Tree {
    type Tree = <w1_core::W1Memory as TreeMemory>::Tree;

    #[inline(always)]
    fn tree() -> &'static Self::Tree {
        &w1_core::W1
    }
}

/// The split contender's components.
#[derive(Component)]
pub struct Blackboard(World);
#[derive(Component)]
pub struct Tally(Activations);

impl BrainAgent for w1_split::Agent {
    type Data = (&'static mut Blackboard, &'static mut Tally);

    #[inline(always)]
    fn with_agent<R>(
        (board, tally): &mut <Self::Data as QueryData>::Item<'_, '_>,
        tick: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let mut agent = w1_split::Agent {
            world: board.0,
            activations: tally.0,
        };
        let r = tick(&mut agent);
        board.0 = agent.world;
        tally.0 = agent.activations;
        r
    }
}

fn step_one(mut creatures: Query<(&mut w1_core::Agent, &mut Decisions)>) {
    creatures.par_iter_mut().for_each(|(mut a, mut d)| {
        a.world.step();
        d.set(a.world.flags());
    });
}

fn step_chunks(mut creatures: Query<(&mut w1_core::Agent, &mut Decisions)>) {
    let chunks = creatures
        .contiguous_par_iter_mut()
        .expect("table components");
    chunks.for_each(|(mut agents, mut decisions)| {
        for (a, d) in agents.iter_mut().zip(decisions.iter_mut()) {
            a.world.step();
            d.set(a.world.flags());
        }
    });
}

fn step_split(mut creatures: Query<(&mut Blackboard, &mut Decisions)>) {
    creatures.par_iter_mut().for_each(|(mut b, mut d)| {
        b.0.step();
        d.set(b.0.flags());
    });
}

fn app(threads: usize) -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(threads),
        },
        TimePlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 30.0,
    )));
    app
}

/// A contender: makes its crowd, then runs `t` ticks of it.
trait Contender {
    fn new(n: usize, threads: usize) -> Self;
    fn run(&mut self, t: u32);
    fn activations(&mut self) -> Activations;
}

struct Core(w1_core::Crowd, u32);

impl Contender for Core {
    fn new(n: usize, _threads: usize) -> Self {
        Core(w1_core::Crowd::new(n), 0)
    }
    fn run(&mut self, t: u32) {
        for _ in 0..t {
            black_box(self.0.tick(self.1));
            self.1 += 1;
        }
    }
    fn activations(&mut self) -> Activations {
        self.0.activations()
    }
}

struct Plugin(App);

impl Contender for Plugin {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_plugins(BrainPlugin::new(&w1_core::W1).in_schedule(Update))
            .add_systems(Update, step_one.before(BrainSystems::Tick));
        spawn_agents(&mut app, n);
        Plugin(app)
    }
    fn run(&mut self, t: u32) {
        run_app(&mut self.0, t);
    }
    fn activations(&mut self) -> Activations {
        agent_activations(&mut self.0)
    }
}

struct Dense(App);

impl Contender for Dense {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_plugins(BrainPlugin::new(&w1_core::W1).in_schedule(Update).dense())
            .add_systems(Update, step_chunks.before(BrainSystems::Tick));
        spawn_agents(&mut app, n);
        Dense(app)
    }
    fn run(&mut self, t: u32) {
        run_app(&mut self.0, t);
    }
    fn activations(&mut self) -> Activations {
        agent_activations(&mut self.0)
    }
}

/// `Plugin` with the plugin made from the tree's type.
struct PluginOf(App);

impl Contender for PluginOf {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_plugins(BrainPlugin::of::<W1Tree>().in_schedule(Update))
            .add_systems(Update, step_one.before(BrainSystems::Tick));
        spawn_agents(&mut app, n);
        PluginOf(app)
    }
    fn run(&mut self, t: u32) {
        run_app(&mut self.0, t);
    }
    fn activations(&mut self) -> Activations {
        agent_activations(&mut self.0)
    }
}

/// `Dense` with the plugin made from the tree's type.
struct DenseOf(App);

impl Contender for DenseOf {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_plugins(BrainPlugin::of::<W1Tree>().in_schedule(Update).dense())
            .add_systems(Update, step_chunks.before(BrainSystems::Tick));
        spawn_agents(&mut app, n);
        DenseOf(app)
    }
    fn run(&mut self, t: u32) {
        run_app(&mut self.0, t);
    }
    fn activations(&mut self) -> Activations {
        agent_activations(&mut self.0)
    }
}

fn spawn_agents(app: &mut App, n: usize) {
    app.world_mut().spawn_batch((0..n).map(|i| {
        let agent = w1_core::Agent {
            world: World::spawn(i),
            activations: [0; Beh::COUNT],
        };
        (agent, Decisions::default(), Brain::new(&w1_core::W1))
    }));
}

fn run_app(app: &mut App, t: u32) {
    for _ in 0..t {
        app.update();
    }
    let stats = app.world().resource::<BrainStats<w1_core::W1Memory>>();
    assert!(stats.ticked > 0 && stats.errors == 0);
}

fn agent_activations(app: &mut App) -> Activations {
    let world = app.world_mut();
    let all: Vec<Activations> = world
        .query::<&w1_core::Agent>()
        .iter(world)
        .map(|a| a.activations)
        .collect();
    w1_core::sum(all.iter())
}

/// The world step alone, over a slice (what `core` does besides ticking).
struct Step(Vec<World>);

impl Contender for Step {
    fn new(n: usize, _threads: usize) -> Self {
        Step((0..n).map(World::spawn).collect())
    }
    fn run(&mut self, t: u32) {
        for _ in 0..t {
            for w in &mut self.0 {
                w.step();
                black_box(w.flags());
            }
        }
    }
    fn activations(&mut self) -> Activations {
        [0; Beh::COUNT]
    }
}

/// The world step alone, as the `dense` app runs it: the same app, the
/// same entities and the same chunked step system, no brains.
struct BevyStep(App);

impl Contender for BevyStep {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_systems(Update, step_chunks);
        app.world_mut().spawn_batch((0..n).map(|i| {
            let agent = w1_core::Agent {
                world: World::spawn(i),
                activations: [0; Beh::COUNT],
            };
            (agent, Decisions::default())
        }));
        BevyStep(app)
    }
    fn run(&mut self, t: u32) {
        for _ in 0..t {
            self.0.update();
        }
    }
    fn activations(&mut self) -> Activations {
        [0; Beh::COUNT]
    }
}

struct View(App);

impl Contender for View {
    fn new(n: usize, threads: usize) -> Self {
        let mut app = app(threads);
        app.add_plugins(BrainPlugin::new(&w1_split::W1).in_schedule(Update))
            .add_systems(Update, step_split.before(BrainSystems::Tick));
        app.world_mut().spawn_batch((0..n).map(|i| {
            (
                Blackboard(World::spawn(i)),
                Tally([0; Beh::COUNT]),
                Decisions::default(),
                Brain::new(&w1_split::W1),
            )
        }));
        View(app)
    }
    fn run(&mut self, t: u32) {
        for _ in 0..t {
            self.0.update();
        }
    }
    fn activations(&mut self) -> Activations {
        let world = self.0.world_mut();
        let all: Vec<Activations> = world.query::<&Tally>().iter(world).map(|t| t.0).collect();
        w1_core::sum(all.iter())
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

/// One timed run.
struct Figures {
    /// Wall-clock ns per agent-tick.
    wall: f64,
    /// CPU ns per agent-tick, over all threads.
    cpu: f64,
    activations: Activations,
}

/// `t` ticks of a fresh crowd of `n`, after one warm-up tick.
fn time<C: Contender>(n: usize, t: u32, threads: usize) -> Figures {
    let mut c = C::new(n, threads);
    c.run(1);
    let agent_ticks = n as f64 * f64::from(t);
    let (start, cpu) = (Instant::now(), cpu_ns());
    c.run(t);
    let wall = start.elapsed().as_nanos() as f64 / agent_ticks;
    let cpu = (cpu_ns() - cpu) as f64 / agent_ticks;
    Figures {
        wall,
        cpu,
        activations: c.activations(),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let threads = std::env::var("BT_BEVY_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let n: usize = arg("--n").and_then(|v| v.parse().ok()).unwrap_or(10_000);
    // `--only core|plugin|dense|plugin-of|dense-of|view --ticks T`: one
    // contender, for callgrind.
    if let Some(only) = arg("--only") {
        let t = arg("--ticks").and_then(|v| v.parse().ok()).unwrap_or(60);
        let f = match only.as_str() {
            "core" => time::<Core>(n, t, threads),
            "plugin" => time::<Plugin>(n, t, threads),
            "dense" => time::<Dense>(n, t, threads),
            "plugin-of" => time::<PluginOf>(n, t, threads),
            "dense-of" => time::<DenseOf>(n, t, threads),
            "view" => time::<View>(n, t, threads),
            "step" => time::<Step>(n, t, threads),
            "bevy-step" => time::<BevyStep>(n, t, threads),
            other => panic!(
                "--only {other}: expected core, plugin, dense, plugin-of, dense-of, view, step \
                 or bevy-step"
            ),
        };
        println!("{only}: N={n} T={t}: {:.1} ns per agent-tick", f.wall);
        return;
    }
    let t = 300;
    let runs: usize = std::env::var("BT_BEVY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    println!(
        "W1, N = {n}, T = {t}, {threads} compute thread(s), medians of {runs} interleaved runs"
    );
    // Warm-up.
    time::<Core>(n, 30, threads);
    time::<Plugin>(n, 30, threads);
    time::<Dense>(n, 30, threads);
    time::<View>(n, 30, threads);
    time::<PluginOf>(n, 30, threads);
    time::<DenseOf>(n, 30, threads);
    let mut figures: [Vec<Figures>; 8] = Default::default();
    for _ in 0..runs {
        figures[0].push(time::<Core>(n, t, threads));
        figures[1].push(time::<Plugin>(n, t, threads));
        figures[2].push(time::<Dense>(n, t, threads));
        figures[3].push(time::<View>(n, t, threads));
        figures[4].push(time::<PluginOf>(n, t, threads));
        figures[5].push(time::<DenseOf>(n, t, threads));
        figures[6].push(time::<Step>(n, t, threads));
        figures[7].push(time::<BevyStep>(n, t, threads));
    }
    let names = [
        "core   (tick_all over slices)  ",
        "plugin (agent as one component)",
        "dense  (one component, chunks) ",
        "view   (two components, a view)",
        "plugin-of (plugin, tree's type)",
        "dense-of  (dense, tree's type) ",
    ];
    let wall = figures
        .each_ref()
        .map(|f| median(f.iter().map(|f| f.wall).collect()));
    let cpu = figures
        .each_ref()
        .map(|f| median(f.iter().map(|f| f.cpu).collect()));
    println!("                                   wall ns/agent-tick     CPU ns/agent-tick");
    for i in 0..names.len() {
        println!(
            "  {}  {:7.1} {:>+6.0} %       {:7.1} {:>+6.0} %",
            names[i],
            wall[i],
            (wall[i] / wall[0] - 1.0) * 100.0,
            cpu[i],
            (cpu[i] / cpu[0] - 1.0) * 100.0,
        );
    }
    // The same worlds from tick 0: the check-sum totals agree except for
    // the random group's split (the plugin seeds brains from entity bits,
    // bt-bench from agent indices).
    println!(
        "  world step alone: {:.1} ns over a slice, {:.1} ns as a Bevy app (CPU)",
        cpu[6], cpu[7]
    );
    // What the brains add on each side: the tree tick through the plugin
    // against the tree tick of `tick_all`, each without its world step.
    let core_tick = cpu[0] - cpu[6];
    for (name, i) in [("dense", 2), ("dense-of", 5)] {
        let tick = cpu[i] - cpu[7];
        println!(
            "  tree tick without the world step (CPU): tick_all {core_tick:.1} ns, {name} plugin {tick:.1} ns ({:+.0} %)",
            (tick / core_tick - 1.0) * 100.0
        );
    }
    println!("  activations, core:   {:?}", figures[0][0].activations);
    println!("  activations, plugin: {:?}", figures[1][0].activations);
}
