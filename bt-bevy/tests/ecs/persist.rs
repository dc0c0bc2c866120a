//! Saving every brain with the crowd's shared state, and loading it into a
//! fresh app or the running one: both go on tick for tick as a run that
//! never stopped.

use std::collections::BTreeMap;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{
    ActionMessage, ActionOutcome, Brain, BrainPlugin, BrainShared, BrainStats, BrainSystems,
    DebugBrain, Decisions, LoadError, SaveBrains, Senses,
};
use bt_core::{Action, ActionOp, Outcome, Ticket, behavior, decider, group, tree};
use serde::{Deserialize, Serialize};

use crate::common::app;

bt_core::bitflags::bitflags! {
    /// What a worker is told to do this frame.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Want: u8 {
        const HAUL = 1;
        const DIG = 2;
    }
}

bt_core::bitflags::bitflags! {
    /// What a worker heard.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Heard: u8 {
        const ALARM = 1;
    }
}

/// A worker: its id in the game's save, and what its behaviors did this
/// frame.
#[derive(Component, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Worker {
    id: u32,
    log: Vec<String>,
}
bt_bevy::component_agent!(Worker);

/// A persisted count.
#[derive(Default, Serialize, Deserialize)]
struct Count(u32);

behavior! { HAUL: Worker, memory: Count, persist,
    launch: |w, m, _cx| { m.0 += 1; Some(Action::new(5, u64::from(w.id) << 8 | u64::from(m.0))) },
    deactivate: |w, m, cx| w.log.push(format!("haul {} ended {:?}", m.0, cx.action)),
}
behavior! { DIG: Worker, memory: Count, persist,
    tick: |w, m, _cx| { m.0 += 1; w.log.push(format!("dig {}", m.0)); m.0 % 4 != 0 },
}
behavior! { FLEE: Worker, memory: Count, persist,
    tick: |w, m, _cx| { m.0 += 1; w.log.push(format!("flee {}", m.0)); m.0 < 2 },
}
behavior! { IDLE: Worker }
decider! { FLEEING: Worker => FLEE, stimuli_any: Heard::ALARM, cooldown: 0.2 }
decider! { HAULING: Worker => HAUL, needs_all: Want::HAUL, gate: 2 }
decider! { DIGGING: Worker => DIG, needs_all: Want::DIG }
decider! { RESTING: Worker => IDLE }
group! { W_ROOT: Worker, prioritized [FLEEING, HAULING, DIGGING, RESTING] }
tree! { CREW: Worker = W_ROOT, memory: CrewMemory }

type WorkerSenses = Senses<Heard, 4, u32>;

const WORKERS: u32 = 6;

/// The frame count, the game's own clock of the script.
#[derive(Resource, Clone, Copy, Default, Serialize, Deserialize)]
struct Frame(u32);

/// A deferred action the game carries out: due at a frame.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Job {
    worker: u32,
    /// The ticket as `(crowd, agent, slot, serial)`.
    ticket: (u32, u32, u16, u32),
    due: u32,
}

fn ticket_of(t: (u32, u32, u16, u32)) -> Ticket {
    Ticket::new(t.0, t.1, t.2, t.3)
}

/// The game's deferred actions under way.
#[derive(Resource, Clone, Default, Serialize, Deserialize)]
struct Jobs(Vec<Job>);

/// What one frame showed: each worker's behavior and log, the requests
/// the game received (worker, launch or cancel, action), the gate count
/// of `HAULING` and the tick's stats.
type Seen = (
    Vec<(Option<&'static str>, Vec<String>)>,
    Vec<String>,
    u32,
    [u64; 3],
);

/// Every frame seen.
#[derive(Resource, Default)]
struct Record(Vec<Seen>);

fn worker_ids(q: &Query<(Entity, &Worker)>) -> BTreeMap<Entity, u32> {
    q.iter().map(|(e, w)| (e, w.id)).collect()
}

/// The script: each worker's wishes and the alarms it hears, from the
/// frame number and its id.
fn script(frame: Res<Frame>, mut q: Query<(&Worker, &mut Decisions, &mut WorkerSenses)>) {
    let f = frame.0;
    for (w, mut d, mut senses) in &mut q {
        let mut want = Want::empty();
        if (f + w.id) % 5 < 3 {
            want |= Want::HAUL;
        }
        if !(f * 7 + w.id).is_multiple_of(3) {
            want |= Want::DIG;
        }
        d.set(want);
        if (f + 2 * w.id).is_multiple_of(11) {
            senses.set_bit(0, f, Some(0.05)).unwrap();
        }
    }
}

/// The game's side of the deferred actions: each launch is done a few
/// frames later (and fails every third time); a cancel drops it.
fn work(
    mut actions: MessageReader<ActionMessage<CrewMemory>>,
    mut outcomes: MessageWriter<ActionOutcome<CrewMemory>>,
    mut jobs: ResMut<Jobs>,
    frame: Res<Frame>,
    workers: Query<(Entity, &Worker)>,
    mut record: ResMut<Record>,
) {
    let ids = worker_ids(&workers);
    let mut requests = Vec::new();
    for a in actions.read() {
        let worker = *ids.get(&a.entity).expect("an action names a worker");
        let t = a.ticket;
        match a.op {
            ActionOp::Launch(action) => {
                requests.push(format!("{worker} launch {action:?}"));
                jobs.0.push(Job {
                    worker,
                    ticket: (t.crowd(), t.agent(), t.slot() as u16, t.serial()),
                    due: frame.0 + 1 + (action.arg as u32 % 3),
                });
            }
            ActionOp::Cancel => {
                requests.push(format!("{worker} cancel"));
                jobs.0.retain(|j| ticket_of(j.ticket) != t);
            }
        }
    }
    let by_id: BTreeMap<u32, Entity> = ids.iter().map(|(&e, &id)| (id, e)).collect();
    jobs.0.retain(|j| {
        if j.due > frame.0 {
            return true;
        }
        let outcome = if j.ticket.3 % 3 == 0 {
            Outcome::Failed
        } else {
            Outcome::Succeeded
        };
        outcomes.write(ActionOutcome::new(
            by_id[&j.worker],
            ticket_of(j.ticket),
            outcome,
        ));
        false
    });
    record.0.push((Vec::new(), requests, 0, [0; 3]));
}

/// After the frame: each worker's behavior and log, by id.
fn look(
    mut q: Query<(&Brain<CrewMemory>, &mut Worker)>,
    mut record: ResMut<Record>,
    mut frame: ResMut<Frame>,
    shared: Res<BrainShared<CrewMemory>>,
    stats: Res<BrainStats<CrewMemory>>,
) {
    let mut workers: Vec<_> = q
        .iter_mut()
        .map(|(b, mut w)| (w.id, b.running_decider(), std::mem::take(&mut w.log)))
        .collect();
    workers.sort_by_key(|w| w.0);
    let seen = record.0.last_mut().unwrap();
    seen.0 = workers.into_iter().map(|(_, r, l)| (r, l)).collect();
    seen.2 = shared
        .state()
        .gate_count(CREW.find("HAULING").unwrap())
        .unwrap();
    seen.3 = [stats.ticked, stats.idle, stats.changed];
    frame.0 += 1;
}

fn crew_app() -> App {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&CREW)
            .in_schedule(Update)
            .with_senses::<WorkerSenses>(),
    )
    .init_resource::<Frame>()
    .init_resource::<Jobs>()
    .init_resource::<Record>()
    .add_systems(Update, script.before(BrainSystems::Outcomes))
    .add_systems(Update, (work, look).chain().after(BrainSystems::Tick));
    app
}

/// Spawns the workers, in the order of `ids`: the crew's brains (a tree
/// with a gate) tick in the order of their entities' indexes, the same in
/// every app. They are debugged too, which changes none of their
/// decisions.
fn spawn(app: &mut App, ids: impl IntoIterator<Item = u32>) -> BTreeMap<u32, Entity> {
    ids.into_iter()
        .map(|id| {
            let worker = Worker {
                id,
                log: Vec::new(),
            };
            let e = app
                .world_mut()
                .spawn((
                    worker,
                    Decisions::default(),
                    WorkerSenses::default(),
                    Brain::new(&CREW),
                    DebugBrain::quiet(),
                ))
                .id();
            (id, e)
        })
        .collect()
}

fn run(app: &mut App, frames: usize) -> Vec<Seen> {
    for _ in 0..frames {
        app.update();
    }
    std::mem::take(&mut app.world_mut().resource_mut::<Record>().0)
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Postcard,
    Json,
}

/// What the game saves: its own state beside the brains'.
struct Save {
    brains: Vec<u8>,
    frame: Frame,
    jobs: Jobs,
    workers: Vec<Worker>,
}

fn save(app: &mut App, format: Format) -> Save {
    let world = app.world_mut();
    let workers: BTreeMap<Entity, u32> = world
        .query::<(Entity, &Worker)>()
        .iter(world)
        .map(|(e, w)| (e, w.id))
        .collect();
    let snapshot = world.save_brains::<CrewMemory, WorkerSenses, u32>(|e| workers.get(&e).copied());
    assert_eq!(snapshot.len(), WORKERS as usize);
    let brains = match format {
        Format::Postcard => postcard::to_allocvec(&snapshot).unwrap(),
        Format::Json => serde_json::to_vec(&snapshot).unwrap(),
    };
    let mut workers: Vec<Worker> = world.query::<&Worker>().iter(world).cloned().collect();
    workers.sort_by_key(|w| w.id);
    Save {
        brains,
        frame: *world.resource::<Frame>(),
        jobs: world.resource::<Jobs>().clone(),
        workers,
    }
}

fn load_brains(
    app: &mut App,
    format: Format,
    bytes: &[u8],
    ids: &BTreeMap<u32, Entity>,
) -> Result<bt_bevy::Loaded, LoadError<String>> {
    let world = app.world_mut();
    let entity = |id: &u32| ids.get(id).copied();
    let r = match format {
        Format::Postcard => world
            .load_brains::<CrewMemory, WorkerSenses, u32, _>(
                &mut postcard::Deserializer::from_bytes(bytes),
                entity,
            )
            .map_err(|e| e.to_string()),
        Format::Json => world
            .load_brains::<CrewMemory, WorkerSenses, u32, _>(
                &mut serde_json::Deserializer::from_slice(bytes),
                entity,
            )
            .map_err(|e| e.to_string()),
    };
    r.map_err(LoadError::Format)
}

/// Loads the game's save: its own state, then the brains.
fn load(
    app: &mut App,
    format: Format,
    save: &Save,
    ids: &BTreeMap<u32, Entity>,
) -> bt_bevy::Loaded {
    let world = app.world_mut();
    for w in &save.workers {
        *world.get_mut::<Worker>(ids[&w.id]).unwrap() = w.clone();
    }
    *world.resource_mut::<Frame>() = save.frame;
    let loaded = load_brains(app, format, &save.brains, ids).expect("loads");
    let world = app.world_mut();
    // The game's tickets name the saved crowd: the loaded one adopts them.
    let shared = world.resource::<BrainShared<CrewMemory>>();
    let jobs = Jobs(
        save.jobs
            .0
            .iter()
            .map(|j| {
                let t = shared
                    .adopt_ticket(ticket_of(j.ticket))
                    .expect("issued before the save");
                Job {
                    ticket: (t.crowd(), t.agent(), t.slot() as u16, t.serial()),
                    ..*j
                }
            })
            .collect(),
    );
    *world.resource_mut::<Jobs>() = jobs;
    loaded
}

/// Compares two runs frame by frame.
#[track_caller]
fn same(straight: &[Seen], loaded: &[Seen], what: &str) {
    assert_eq!(straight.len(), loaded.len());
    for (t, (a, b)) in straight.iter().zip(loaded).enumerate() {
        assert_eq!(a, b, "{what}: frame {t} after the load");
    }
}

const N: usize = 17;
const M: usize = 40;

/// The script does what the test needs: gates full, actions reported
/// late and cancelled, blocks counting, alarms.
#[test]
fn the_script_exercises_the_gate_the_actions_and_the_alarms() {
    let mut app = crew_app();
    spawn(&mut app, 0..WORKERS);
    let seen = run(&mut app, N + M);
    assert!(seen.iter().any(|s| s.2 == 2), "the gate fills");
    let requests: Vec<&String> = seen.iter().flat_map(|s| &s.1).collect();
    assert!(
        requests.iter().any(|r| r.contains("cancel")),
        "{requests:?}"
    );
    assert!(requests.iter().filter(|r| r.contains("launch")).count() > 10);
    let logs: Vec<&String> = seen
        .iter()
        .flat_map(|s| s.0.iter().flat_map(|w| &w.1))
        .collect();
    assert!(logs.iter().any(|l| l.starts_with("flee")), "{logs:?}");
    assert!(logs.iter().any(|l| l.contains("ended Failed")), "{logs:?}");
    assert!(
        logs.iter().any(|l| l.contains("ended Succeeded")),
        "{logs:?}"
    );
    assert!(logs.iter().any(|l| l.contains("ended Pending")), "{logs:?}");
    assert!(logs.iter().any(|l| l == &"dig 4"), "{logs:?}");
}

/// Where runs are cut: frame `N`, and every frame whose first tick
/// cancels a deferred action launched before the cut (the cancellation
/// names the entity that launched it, in the new app another one).
fn cuts(straight: &[Seen]) -> Vec<usize> {
    let mut cuts = vec![N];
    cuts.extend(
        (1..straight.len() - 5).filter(|&t| straight[t].1.iter().any(|r| r.contains("cancel"))),
    );
    assert!(cuts.len() > 2, "the script cancels: {cuts:?}");
    cuts
}

#[test]
fn loaded_into_a_fresh_app_the_brains_go_on_as_if_never_stopped() {
    let mut app = crew_app();
    spawn(&mut app, 0..WORKERS);
    let straight = run(&mut app, N + M);
    for (i, at) in cuts(&straight).into_iter().enumerate() {
        let format = if i % 2 == 0 {
            Format::Postcard
        } else {
            Format::Json
        };
        let mut first = crew_app();
        spawn(&mut first, 0..WORKERS);
        run(&mut first, at);
        let save = save(&mut first, format);
        drop(first);

        let mut fresh = crew_app();
        // The clock runs a while, and other entities take the first
        // indices: the workers get other entities than before.
        run(&mut fresh, 3);
        fresh
            .world_mut()
            .spawn_batch((0..5).map(|_| Decisions::default()));
        let ids = spawn(&mut fresh, 0..WORKERS);
        load(&mut fresh, format, &save, &ids);
        let loaded = run(&mut fresh, N + M - at);
        same(
            &straight[at..],
            &loaded,
            &format!("cut at {at}, {format:?}"),
        );
    }
}

#[test]
fn loaded_into_the_running_app_the_brains_go_on_as_if_never_stopped() {
    let mut app = crew_app();
    let ids = spawn(&mut app, 0..WORKERS);
    let straight = run(&mut app, N + M);
    for (i, at) in cuts(&straight).into_iter().enumerate() {
        let format = if i % 2 == 0 {
            Format::Json
        } else {
            Format::Postcard
        };
        let mut app = crew_app();
        assert_eq!(spawn(&mut app, 0..WORKERS), ids);
        run(&mut app, at);
        let save = save(&mut app, format);
        // Further on, a worker joins and takes part: the load gives back
        // the saved crowd, the newcomer idle in it, holding nothing.
        run(&mut app, 4);
        let newcomer = spawn(&mut app, [99])[&99];
        run(&mut app, 5);
        let loaded = load(&mut app, format, &save, &ids);
        assert_eq!(
            (loaded.brains, loaded.fresh),
            (WORKERS as usize, 1),
            "{loaded:?}"
        );
        let brain = app.world().get::<Brain<CrewMemory>>(newcomer).unwrap();
        assert!(brain.memory().is_idle());
        app.world_mut().despawn(newcomer);
        let loaded = run(&mut app, N + M - at);
        same(
            &straight[at..],
            &loaded,
            &format!("cut at {at}, {format:?}"),
        );
    }
}

// A tree of another name, to load a crew's save into.
behavior! { LOAF: Worker }
decider! { LOAFING: Worker => LOAF }
tree! { SLACKERS: Worker = LOAFING, memory: SlackerMemory }

#[test]
fn a_bad_save_gives_a_typed_error_naming_what_is_wrong_and_changes_nothing() {
    let mut app = crew_app();
    let ids = spawn(&mut app, 0..WORKERS);
    run(&mut app, N);
    let save = save(&mut app, Format::Json);
    run(&mut app, 3);
    let before = |app: &mut App| {
        let world = app.world_mut();
        let mut running: Vec<(u32, Option<&'static str>)> = world
            .query::<(&Worker, &Brain<CrewMemory>)>()
            .iter(world)
            .map(|(w, b)| (w.id, b.running_decider()))
            .collect();
        running.sort();
        let shared = world.resource::<BrainShared<CrewMemory>>().state();
        let gate = shared.gate_count(CREW.find("HAULING").unwrap());
        (running, shared.id(), gate)
    };
    let state = before(&mut app);
    let load = |app: &mut App, bytes: &[u8], ids: &BTreeMap<u32, Entity>| {
        app.world_mut()
            .load_brains::<CrewMemory, WorkerSenses, u32, _>(
                &mut serde_json::Deserializer::from_slice(bytes),
                |id| ids.get(id).copied(),
            )
            .map(|_| ())
    };

    // A key the game maps to no entity.
    let mut fewer = ids.clone();
    fewer.remove(&4);
    let e = load(&mut app, &save.brains, &fewer).unwrap_err();
    assert!(
        matches!(&e, LoadError::UnknownKey { key } if key == "4"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the brain saved as 4: no entity was given for it"
    );
    // An entity without a brain of the tree.
    let plain = app.world_mut().spawn_empty().id();
    let mut wrong = ids.clone();
    wrong.insert(1, plain);
    let e = load(&mut app, &save.brains, &wrong).unwrap_err();
    assert!(
        matches!(&e, LoadError::NoBrain { key, entity } if key == "1" && *entity == plain),
        "{e:?}"
    );
    // Two keys, one entity.
    let mut twice = ids.clone();
    twice.insert(5, ids[&0]);
    let e = load(&mut app, &save.brains, &twice).unwrap_err();
    assert!(
        matches!(&e, LoadError::SameEntity { key, .. } if key == "5"),
        "{e:?}"
    );
    // A brain whose memory was tampered with: the last one, after the
    // others were read.
    let mut json: serde_json::Value = serde_json::from_slice(&save.brains).unwrap();
    json["brains"][5]["memory"]["items"] = serde_json::json!(3);
    let e = load(&mut app, &serde_json::to_vec(&json).unwrap(), &ids).unwrap_err();
    match &e {
        LoadError::Brain { key, entity, error } => {
            assert_eq!((key.as_str(), *entity), ("5", ids[&5]));
            assert!(
                matches!(
                    error,
                    bt_core::SnapshotError::StructureChanged {
                        what: "item count",
                        ..
                    }
                ),
                "{error:?}"
            );
        }
        e => panic!("{e:?}"),
    }
    assert!(e.to_string().starts_with("the brain saved as 5 ("), "{e}");
    // Cut short.
    let e = load(&mut app, &save.brains[..save.brains.len() - 9], &ids).unwrap_err();
    assert!(matches!(e, LoadError::Format(_)), "{e:?}");
    // The crew's save loaded as another tree's.
    app.add_plugins(BrainPlugin::new(&SLACKERS).in_schedule(Update));
    let e = app
        .world_mut()
        .load_brains::<SlackerMemory, bt_bevy::NoSenses, u32, _>(
            &mut serde_json::Deserializer::from_slice(&save.brains),
            |id| ids.get(id).copied(),
        )
        .unwrap_err();
    assert!(
        matches!(&e, LoadError::Shared(bt_core::SnapshotError::OtherTree { found, .. }) if found == "CREW"),
        "{e:?}"
    );

    assert_eq!(before(&mut app), state, "nothing changed");
    // And the good save still loads.
    load(&mut app, &save.brains, &ids).unwrap();
}

#[test]
fn saves_read_the_clock_the_brains_tick_with() {
    use bevy_time::{Fixed, Time, Virtual};
    for fixed in [true, false] {
        let mut app = app();
        let plugin = BrainPlugin::new(&SLACKERS);
        if fixed {
            app.add_plugins(plugin);
        } else {
            app.add_plugins(plugin.in_schedule(Update));
        }
        for _ in 0..10 {
            app.update();
        }
        let world = app.world();
        let now = world.resource::<BrainShared<SlackerMemory>>().now(world);
        let fixed_now = world.resource::<Time<Fixed>>().elapsed_secs_f64();
        let virtual_now = world.resource::<Time<Virtual>>().elapsed_secs_f64();
        assert_ne!(fixed_now, virtual_now);
        assert_eq!(now, if fixed { fixed_now } else { virtual_now });
    }
}
