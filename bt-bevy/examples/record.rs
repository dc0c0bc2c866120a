//! Recording brains for the decision viewer: a headless Bevy app of
//! foragers, a few of them marked `Recorded` with their food, energy and
//! fear recorded beside each tick, and the viewer page written when it
//! ends (or served live while it runs, where the page can pause it).
//!
//! ```sh
//! cargo run -p bt-bevy --example record --features viewer
//! cargo run -p bt-bevy --example record --features viewer -- --live             # 60 s
//! cargo run -p bt-bevy --example record --features viewer -- --live --seconds 5
//! ```
//!
//! Without `--live` it simulates 20 s at 30 Hz as fast as it can, writes
//! `target/bt-bevy-viewer/viewer.html` and prints its path. With `--live`
//! it serves the page on 127.0.0.1, runs in real time for the given
//! seconds, then writes the page as well. In the live page, *pause*,
//! *step* and *resume* hold the app, and a breakpoint (say, `enter`
//! `FORAGE` for one agent) stops it at the end of the tick where it fires:
//! `app.update()` waits until the page lets it go on, or closes. Every 5 s
//! one recorded forager leaves (its lane ends) and a newcomer, recorded
//! too, arrives. Search the page for an agent id the example prints: it
//! is the entity's index. Select an agent to see its food, energy and fear
//! as each tick found them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bevy_app::{App, FixedUpdate, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
use bt_bevy::bt_viewer::{AgentData, Capacity, DataCapacity, DataOut};
use bt_bevy::{
    Brain, BrainPlugin, BrainRecorder, BrainSystems, Decisions, RecordBrains, Recorded, agent_id,
};
use bt_core::{behavior, decider, group, tree};

const FORAGERS: usize = 500;
const HZ: f64 = 30.0;

bitflags::bitflags! {
    /// What a forager knows this tick.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Facts: u32 {
        const DANGER = 1 << 0;
        const HUNGRY = 1 << 1;
        const TIRED = 1 << 2;
    }
}

/// A forager: its needs, and its own random generator for the world.
#[derive(Component, Clone, Copy)]
pub struct Forager {
    rng: u64,
    food: f32,
    energy: f32,
    fear: f32,
}
bt_bevy::component_agent!(Forager);

/// What the viewer shows of a recorded forager at each tick.
impl AgentData for Forager {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("food", f64::from(self.food));
        out.num("energy", f64::from(self.energy));
        out.num("fear", f64::from(self.fear));
    }
}

impl Forager {
    fn new(i: u64) -> Self {
        Forager {
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i + 1),
            food: 1.0,
            energy: 1.0,
            fear: 0.0,
        }
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % 1000 < per_mille
    }
}

behavior! { FLEE: Forager, tick: |f, cx| { f.fear -= cx.dt; f.fear > 0.0 } }
behavior! { EAT: Forager, tick: |f, cx| { f.food += cx.dt; f.food < 1.0 } }
behavior! { SLEEP: Forager, tick: |f, cx| { f.energy += 0.5 * cx.dt; f.energy < 1.0 } }
behavior! { WANDER: Forager }
behavior! { LOOK_AROUND: Forager }
decider! { RUN_AWAY: Forager => FLEE, needs_all: Facts::DANGER }
decider! { FORAGE: Forager => EAT, needs_all: Facts::HUNGRY }
decider! { REST: Forager => SLEEP, needs_all: Facts::TIRED, needs_none: Facts::HUNGRY }
decider! { STROLL: Forager => WANDER }
decider! { PAUSE: Forager => LOOK_AROUND }
group! { IDLE: Forager, random [STROLL, PAUSE] }
group! { ROOT: Forager, prioritized [RUN_AWAY, FORAGE, REST, IDLE] }
tree! { FORAGER: Forager = ROOT, memory: ForagerMemory }

/// The world step: needs fall, danger comes now and then; then the flags.
fn world_step(time: Res<Time>, mut foragers: Query<(&mut Forager, &mut Decisions)>) {
    let dt = time.delta_secs();
    foragers.par_iter_mut().for_each(|(mut f, mut d)| {
        f.food -= 0.08 * dt;
        f.energy -= 0.05 * dt;
        if f.chance(2) {
            f.fear = 1.5;
        }
        let mut facts = Facts::empty();
        facts.set(Facts::DANGER, f.fear > 0.0);
        facts.set(Facts::HUNGRY, f.food < 0.3);
        facts.set(Facts::TIRED, f.energy < 0.2);
        d.set(facts);
    });
}

fn forager(i: u64) -> (Forager, Decisions, Brain<ForagerMemory>) {
    (Forager::new(i), Decisions::default(), Brain::new(&FORAGER))
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let live = args.iter().any(|a| a == "--live");
    let seconds: u64 = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .map_or(if live { 60 } else { 20 }, |s| {
            s.parse().expect("--seconds takes a number")
        });
    let step = Duration::from_secs_f64(1.0 / HZ);

    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
        .add_plugins(
            // Up to 16 recorded foragers, each with its last 600 ticks (20 s)
            // and its three needs at each, the flags named.
            BrainPlugin::new(&FORAGER).record(
                RecordBrains::marked(16)
                    .capacity(Capacity::new(600, 16))
                    .data::<(Forager,)>(DataCapacity::new(3, 0))
                    .name_decision_flags::<Facts>(),
            ),
        )
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step))
        .add_systems(FixedUpdate, world_step.before(BrainSystems::Tick));
    let mut recorded: Vec<Entity> = Vec::new();
    for i in 0..FORAGERS as u64 {
        let mut e = app.world_mut().spawn(forager(i));
        if i % 100 == 7 {
            e.insert(Recorded);
            recorded.push(e.id());
        }
    }
    let ids: Vec<u32> = recorded.iter().map(|&e| agent_id(e)).collect();
    println!("recording agents {ids:?} of {FORAGERS} foragers");
    if live {
        let url = app
            .world_mut()
            .resource_mut::<BrainRecorder<ForagerMemory>>()
            .serve(0)?;
        println!(
            "live view: {url}  (stops after {seconds} s of running; \
             the page can pause it, step it and set breakpoints)"
        );
    }

    let ticks = seconds * HZ as u64;
    let mut due = Instant::now();
    let mut newcomers = FORAGERS as u64;
    for tick in 1..=ticks {
        app.update();
        // Every 5 s a recorded forager leaves and a recorded newcomer comes.
        if tick % (5 * HZ as u64) == 0 && tick < ticks && !recorded.is_empty() {
            let gone = recorded.remove(0);
            app.world_mut().despawn(gone);
            let new = app.world_mut().spawn((forager(newcomers), Recorded)).id();
            newcomers += 1;
            recorded.push(new);
            println!(
                "t = {:>4.1} s: agent {} left, agent {} arrived",
                tick as f64 / HZ,
                agent_id(gone),
                agent_id(new)
            );
        }
        if live {
            // Real time: wait for the next tick's moment. After the page
            // held the app, the ticks go on from now rather than rush to
            // catch up.
            due += step;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            } else {
                due = now;
            }
        }
    }

    let recorder = app.world().resource::<BrainRecorder<ForagerMemory>>();
    let page = recorder.write_page(&target_dir().join("bt-bevy-viewer"))?;
    let page = page.canonicalize().unwrap_or(page);
    let kept: usize = recorder.export().agents.iter().map(|a| a.ticks.len()).sum();
    println!(
        "{} lanes, {kept} ticks kept; open {}",
        recorder.recorder().watched(),
        page.display()
    );
    Ok(())
}

/// `target/` of the workspace (or `CARGO_TARGET_DIR`).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}
