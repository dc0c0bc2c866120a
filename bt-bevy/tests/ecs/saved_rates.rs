//! Saving and loading brains that tick at rates under a budget: the save
//! carries each brain's place in the schedule (waiting, woken, its last
//! tick), its rate and the crowd's run count, so a loaded app ticks the
//! brains, runs and `dt`s the saved one would have.

use std::collections::BTreeMap;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{
    Brain, BrainPlugin, BrainShared, BrainStats, BrainSystems, Decisions, LoadError, Rate,
    SaveBrains, Senses, TickRate, TreeMemory,
};
use bt_core::{behavior, decider, group, tree};
use serde::{Deserialize, Serialize};

use crate::common::app;

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Noise: u8 { const BANG = 1; }
}

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Job: u64 { const WORK = 1; }
}

/// A napper: its id in the game's save, and the `dt` and behavior of
/// each of its ticks this run.
#[derive(Component, Default)]
struct Napper {
    id: u32,
    log: Vec<(f32, &'static str)>,
}
bt_bevy::component_agent!(Napper);

/// A persisted count.
#[derive(Default, Serialize, Deserialize)]
struct Count(u32);

behavior! { NAP: Napper, memory: Count, persist,
    tick: |n, m, cx| { m.0 += 1; n.log.push((cx.dt, "nap")); m.0 % 4 != 0 },
}
behavior! { WORK: Napper, memory: Count, persist,
    tick: |n, m, cx| { m.0 += 1; n.log.push((cx.dt, "work")); m.0 % 3 != 0 },
}
behavior! { JUMP: Napper, tick: |n, cx| { n.log.push((cx.dt, "jump")); false } }
decider! { STARTLED: Napper => JUMP, stimuli_any: Noise::BANG }
decider! { WORKING: Napper => WORK, needs_all: Job::WORK }
decider! { NAPPING: Napper => NAP }
group! { ROOT: Napper, prioritized [STARTLED, WORKING, NAPPING] }
tree! { NAPPERS: Napper = ROOT, memory: NapperMemory }

// The same with a gate: its brains tick one after the other, in entity
// order.
decider! { ON_SHIFT: Napper => WORK, needs_all: Job::WORK, gate: 3 }
group! { SHIFT_ROOT: Napper, prioritized [STARTLED, ON_SHIFT, NAPPING] }
tree! { SHIFTS: Napper = SHIFT_ROOT, memory: ShiftMemory }

type Ears = Senses<Noise, 2>;

/// Nappers the game saves; an id from `N` on is another brain of the
/// crowd, not in the save.
const N: u32 = 25;
const BUDGET: u32 = 9;

/// The game's frame count, saved beside the brains.
#[derive(Resource, Clone, Copy, Default)]
struct Frame(u32);

/// What one run showed: each saved napper's ticks (`dt`, behavior), whether
/// it is due after the run and its decider; the run's ticked, due and
/// waiting brains, longest wait and run count.
type Seen = (
    Vec<(u32, Vec<(f32, &'static str)>, bool, Option<&'static str>)>,
    [u64; 5],
);

#[derive(Resource, Default)]
struct Record(Vec<Seen>);

/// The rate a napper is spawned with: every run (no `TickRate`), every
/// 2nd, 3rd or 5th run, or only when woken.
fn first_rate(id: u32) -> Option<TickRate> {
    match id % 5 {
        0 => None,
        1 => Some(TickRate::new(Rate::Every(2)).unwrap()),
        2 => Some(TickRate::new(Rate::Every(3)).unwrap()),
        3 => Some(TickRate::new(Rate::Every(5)).unwrap()),
        _ => Some(TickRate::ON_WAKE),
    }
}

/// The game: work orders, noises (which wake), calls that wake the
/// nappers that tick only when woken, and a few rates changed early on.
fn script<M: TreeMemory>(
    frame: Res<Frame>,
    mut q: Query<(Entity, &Napper, &mut Decisions, &mut Ears, &mut Brain<M>)>,
    mut commands: Commands,
) {
    let f = frame.0;
    for (e, n, mut decisions, mut ears, mut brain) in &mut q {
        let id = n.id;
        if id >= N {
            continue;
        }
        decisions.set(if (f + id) % 5 < 2 {
            Job::WORK
        } else {
            Job::empty()
        });
        if (3 * f + id).is_multiple_of(13) {
            ears.set(Noise::BANG, 0, Some(0.05)).unwrap();
        }
        if id % 5 == 4 && (f + id).is_multiple_of(6) {
            brain.wake();
        }
        match (f, id) {
            (4, _) if id % 4 == 1 => {
                _ = commands
                    .entity(e)
                    .insert(TickRate::new(Rate::Every(4)).unwrap())
            }
            (9, _) if id % 7 == 2 => _ = commands.entity(e).insert(TickRate::ON_WAKE),
            (9, 6) => _ = commands.entity(e).remove::<TickRate>(),
            _ => {}
        }
    }
}

/// After the run: what each saved napper did.
fn look<M: TreeMemory>(
    mut q: Query<(&Brain<M>, &mut Napper)>,
    stats: Res<BrainStats<M>>,
    mut record: ResMut<Record>,
    mut frame: ResMut<Frame>,
) {
    let mut nappers: Vec<_> = q
        .iter_mut()
        .filter(|(_, n)| n.id < N)
        .map(|(b, mut n)| {
            let log = std::mem::take(&mut n.log);
            (n.id, log, b.is_due(), b.running_decider())
        })
        .collect();
    nappers.sort_by_key(|n| n.0);
    let s = &*stats;
    let figures = [s.ticked, s.due, s.waiting, s.longest_wait, s.runs];
    record.0.push((nappers, figures));
    frame.0 += 1;
}

/// How the crowd's brains tick.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// In parallel, entity by entity.
    Plain,
    /// In parallel, table chunk by table chunk.
    Dense,
    /// In entity order (a tree with a gate).
    Gated,
}

/// The plugin for `tree`: in `Update`, with senses, under the budget.
macro_rules! plugin {
    ($tree:expr) => {
        BrainPlugin::new($tree)
            .in_schedule(Update)
            .with_senses::<Ears>()
            .budget(BUDGET)
    };
}

fn napper_app(kind: Kind, scripted: bool) -> App {
    let mut app = app();
    match kind {
        Kind::Plain => app.add_plugins(plugin!(&NAPPERS)),
        Kind::Dense => app.add_plugins(plugin!(&NAPPERS).dense()),
        Kind::Gated => app.add_plugins(plugin!(&SHIFTS)),
    };
    app.init_resource::<Frame>().init_resource::<Record>();
    match kind {
        Kind::Plain | Kind::Dense => systems::<NapperMemory>(&mut app, scripted),
        Kind::Gated => systems::<ShiftMemory>(&mut app, scripted),
    }
    app
}

fn systems<M: TreeMemory>(app: &mut App, scripted: bool) {
    if scripted {
        app.add_systems(Update, script::<M>.before(BrainSystems::Outcomes));
    }
    app.add_systems(Update, look::<M>.after(BrainSystems::Tick));
}

/// Spawns nappers `ids` in that order, with `rate(id)`.
fn spawn(
    app: &mut App,
    kind: Kind,
    ids: impl IntoIterator<Item = u32>,
    rate: impl Fn(u32) -> Option<TickRate>,
) -> BTreeMap<u32, Entity> {
    ids.into_iter()
        .map(|id| {
            let napper = (
                Napper {
                    id,
                    log: Vec::new(),
                },
                Decisions::default(),
                Ears::default(),
            );
            let mut e = app.world_mut().spawn(napper);
            match kind {
                Kind::Plain | Kind::Dense => e.insert(Brain::new(&NAPPERS)),
                Kind::Gated => e.insert(Brain::new(&SHIFTS)),
            };
            if let Some(rate) = rate(id) {
                e.insert(rate);
            }
            (id, e.id())
        })
        .collect()
}

fn run(app: &mut App, runs: usize) -> Vec<Seen> {
    for _ in 0..runs {
        app.update();
    }
    std::mem::take(&mut app.world_mut().resource_mut::<Record>().0)
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Postcard,
    Json,
}

/// The game's save: the brains (the saved nappers) and its frame count.
struct Save {
    brains: Vec<u8>,
    frame: Frame,
}

fn save(app: &mut App, kind: Kind, format: Format) -> Save {
    match kind {
        Kind::Plain | Kind::Dense => save_as::<NapperMemory>(app, format),
        Kind::Gated => save_as::<ShiftMemory>(app, format),
    }
}

fn save_as<M: TreeMemory>(app: &mut App, format: Format) -> Save {
    let world = app.world_mut();
    let ids: BTreeMap<Entity, u32> = world
        .query::<(Entity, &Napper)>()
        .iter(world)
        .filter(|(_, n)| n.id < N)
        .map(|(e, n)| (e, n.id))
        .collect();
    let frame = *world.resource::<Frame>();
    let snapshot = world.save_brains::<M, Ears, u32>(|e| ids.get(&e).copied());
    let brains = match format {
        Format::Postcard => postcard::to_allocvec(&snapshot).unwrap(),
        Format::Json => serde_json::to_vec(&snapshot).unwrap(),
    };
    Save { brains, frame }
}

fn load(
    app: &mut App,
    kind: Kind,
    format: Format,
    save: &Save,
    ids: &BTreeMap<u32, Entity>,
) -> Result<bt_bevy::Loaded, String> {
    *app.world_mut().resource_mut::<Frame>() = save.frame;
    match kind {
        Kind::Plain | Kind::Dense => load_as::<NapperMemory>(app, format, &save.brains, ids),
        Kind::Gated => load_as::<ShiftMemory>(app, format, &save.brains, ids),
    }
}

fn load_as<M: TreeMemory>(
    app: &mut App,
    format: Format,
    bytes: &[u8],
    ids: &BTreeMap<u32, Entity>,
) -> Result<bt_bevy::Loaded, String> {
    let world = app.world_mut();
    let entity = |id: &u32| ids.get(id).copied();
    match format {
        Format::Postcard => world
            .load_brains::<M, Ears, u32, _>(&mut postcard::Deserializer::from_bytes(bytes), entity)
            .map_err(|e| e.to_string()),
        Format::Json => world
            .load_brains::<M, Ears, u32, _>(
                &mut serde_json::Deserializer::from_slice(bytes),
                entity,
            )
            .map_err(|e| e.to_string()),
    }
}

/// Compares two runs after a load, run by run.
#[track_caller]
fn same(straight: &[Seen], loaded: &[Seen], what: &str) {
    assert_eq!(straight.len(), loaded.len());
    for (t, (a, b)) in straight.iter().zip(loaded).enumerate() {
        assert_eq!(a, b, "{what}: run {t} after the load");
    }
}

/// The saved runs; the runs after the save.
const K: usize = 16;
const M: usize = 30;

/// The script does what the tests need: brains wait, sleep, are woken and
/// tick with a `dt` longer than the frame's.
fn exercised(seen: &[Seen]) {
    let frame = (1.0 / crate::common::FPS) as f32;
    assert!(seen.iter().any(|s| s.1[2] > 2), "brains wait");
    assert!(
        seen.iter().any(|s| s.1[3] > 0),
        "brains tick past their run"
    );
    let ticks = || seen.iter().flat_map(|s| s.0.iter().flat_map(|n| &n.1));
    assert!(ticks().any(|t| t.0 > 3.5 * frame), "long dts");
    assert!(ticks().any(|t| t.1 == "jump"), "noises");
    assert!(ticks().any(|t| t.1 == "work"), "work");
    // A napper that ticks only when woken ticked, and not every run.
    let woken = seen.iter().filter(|s| !s.0[4].1.is_empty()).count();
    assert!(woken > 2 && woken < seen.len() / 2, "woken {woken} times");
}

/// Between two runs, the game makes a noise at napper 24, which ticks only
/// when woken: that wakes it in the next run.
fn bang(app: &mut App, ids: &BTreeMap<u32, Entity>) {
    let world = app.world_mut();
    let mut ears = world.get_mut::<Ears>(ids[&24]).unwrap();
    ears.set(Noise::BANG, 0, Some(10.0)).unwrap();
}

#[test]
fn loaded_with_rates_and_a_budget_the_brains_tick_as_if_never_stopped() {
    for (i, kind) in [Kind::Plain, Kind::Dense, Kind::Gated]
        .into_iter()
        .enumerate()
    {
        let (fresh_format, running_format) = if i % 2 == 0 {
            (Format::Json, Format::Postcard)
        } else {
            (Format::Postcard, Format::Json)
        };
        let mut a = napper_app(kind, true);
        let ids = spawn(&mut a, kind, 0..N, first_rate);
        let mut straight = run(&mut a, K);
        bang(&mut a, &ids);
        straight.extend(run(&mut a, M));
        exercised(&straight);
        // The noise between the runs woke napper 24, which had nothing
        // else to tick for: it is due, and hears it at its next tick.
        assert!(!straight[K - 1].0[24].2, "due before the noise");
        assert!(straight[K].0[24].2 || !straight[K].0[24].1.is_empty());
        let next = straight[K..].iter().find_map(|s| s.0[24].1.first());
        assert_eq!(next.map(|t| t.1), Some("jump"));

        let mut a = napper_app(kind, true);
        let ids = spawn(&mut a, kind, 0..N, first_rate);
        run(&mut a, K);
        bang(&mut a, &ids);
        let due = straight[K - 1].0.iter().filter(|n| n.2).count();
        assert!(due > 3, "{kind:?}: {due} brains due at the save");
        let fresh_save = save(&mut a, kind, fresh_format);
        let running_save = save(&mut a, kind, running_format);

        // A fresh app: its clock and its run count have moved on, other
        // entities hold the first indexes, and the nappers are spawned
        // with their first rates.
        let mut b = napper_app(kind, true);
        run(&mut b, 3);
        b.world_mut()
            .spawn_batch((0..4).map(|_| Decisions::default()));
        let ids = spawn(&mut b, kind, 0..N, first_rate);
        let loaded = load(&mut b, kind, fresh_format, &fresh_save, &ids).unwrap();
        assert_eq!((loaded.brains, loaded.fresh), (N as usize, 0));
        let what = format!("{kind:?}, fresh app, {fresh_format:?}");
        same(&straight[K..], &run(&mut b, M), &what);

        // An app that ran its own state a while: other rates, brains
        // woken and waiting, a newcomer not in the save, senses just
        // changed by the game.
        let mut c = napper_app(kind, true);
        c.world_mut()
            .spawn_batch((0..2).map(|_| Decisions::default()));
        let ids = spawn(&mut c, kind, 0..N, |id| {
            (id % 3 != 0).then(|| TickRate::new(Rate::Every(2)).unwrap())
        });
        let newcomer = spawn(&mut c, kind, [N + 7], |_| Some(TickRate::ON_WAKE))[&(N + 7)];
        run(&mut c, 21);
        let world = c.world_mut();
        for e in [newcomer, ids[&3], ids[&9]] {
            match kind {
                Kind::Plain | Kind::Dense => {
                    world.get_mut::<Brain<NapperMemory>>(e).unwrap().wake()
                }
                Kind::Gated => world.get_mut::<Brain<ShiftMemory>>(e).unwrap().wake(),
            }
        }
        world
            .get_mut::<Ears>(ids[&8])
            .unwrap()
            .set(Noise::BANG, 0, Some(1.0))
            .unwrap();
        let loaded = load(&mut c, kind, running_format, &running_save, &ids).unwrap();
        assert_eq!((loaded.brains, loaded.fresh), (N as usize, 1));
        let what = format!("{kind:?}, running app, {running_format:?}");
        same(&straight[K..], &run(&mut c, M), &what);
    }
}

/// The ids of the brains due after each run, and those that ticked in it.
fn due_and_ticked(seen: &[Seen]) -> Vec<(Vec<u32>, Vec<u32>)> {
    seen.iter()
        .map(|s| {
            let due = s.0.iter().filter(|n| n.2).map(|n| n.0).collect();
            let ticked =
                s.0.iter()
                    .filter(|n| !n.1.is_empty())
                    .map(|n| n.0)
                    .collect();
            (due, ticked)
        })
        .collect()
}

#[test]
fn brains_waiting_at_the_save_wait_after_the_load_in_the_same_order() {
    const BRAINS: u32 = 23;
    // Every brain due every run, 10 ticked a run: they wait, some since
    // an earlier run than others.
    let mut a = napper_app(Kind::Plain, false);
    spawn(&mut a, Kind::Plain, 0..BRAINS, |_| None);
    let straight = due_and_ticked(&run(&mut a, 7 + 12));

    let mut a = napper_app(Kind::Plain, false);
    spawn(&mut a, Kind::Plain, 0..BRAINS, |_| None);
    run(&mut a, 7);
    let waiting = &straight[6].0;
    assert!(waiting.len() > BUDGET as usize, "{waiting:?}");
    let save = save(&mut a, Kind::Plain, Format::Json);

    // Another app, whose entities come in the reverse order, after others:
    // each brain keeps its place, whatever its entity's index.
    let mut b = napper_app(Kind::Plain, false);
    b.world_mut()
        .spawn_batch((0..3).map(|_| Decisions::default()));
    let ids = spawn(&mut b, Kind::Plain, (0..BRAINS).rev(), |_| None);
    load(&mut b, Kind::Plain, Format::Json, &save, &ids).unwrap();
    let mut due: Vec<u32> = ids
        .iter()
        .filter(|(_, e)| b.world().get::<Brain<NapperMemory>>(**e).unwrap().is_due())
        .map(|(id, _)| *id)
        .collect();
    due.sort();
    assert_eq!(&due, waiting, "waiting after the load");
    let loaded = due_and_ticked(&run(&mut b, 12));
    assert_eq!(loaded, straight[7..], "the order they tick in");
}

#[test]
fn a_save_without_the_schedule_loads_its_brains_not_due_and_bad_turns_are_named() {
    let kind = Kind::Plain;
    let mut a = napper_app(kind, true);
    spawn(&mut a, kind, 0..N, first_rate);
    run(&mut a, K);
    let save = save(&mut a, kind, Format::Json);
    let json: serde_json::Value = serde_json::from_slice(&save.brains).unwrap();
    let runs = json["schedule"]["runs"].as_u64().unwrap();
    assert_eq!(runs, K as u64);

    let mut c = napper_app(kind, false);
    let ids = spawn(&mut c, kind, 0..N, |_| {
        Some(TickRate::new(Rate::Every(2)).unwrap())
    });
    run(&mut c, 5);
    for e in ids.values() {
        c.world_mut()
            .get_mut::<Brain<NapperMemory>>(*e)
            .unwrap()
            .wake();
    }
    let state = |c: &mut App| {
        let world = c.world_mut();
        let mut brains: Vec<(u32, bool, Option<f64>, Option<TickRate>)> = world
            .query::<(&Napper, &Brain<NapperMemory>, Option<&TickRate>)>()
            .iter(world)
            .map(|(n, b, r)| (n.id, b.is_due(), b.last_ticked_at(), r.copied()))
            .collect();
        brains.sort_by_key(|b| b.0);
        let crowd = world.resource::<BrainShared<NapperMemory>>().state().id();
        (brains, crowd)
    };
    let before = state(&mut c);
    let try_load = |c: &mut App, json: &serde_json::Value| {
        c.world_mut()
            .load_brains::<NapperMemory, Ears, u32, _>(json, |id| ids.get(id).copied())
            .map(|_| ())
    };
    let edited = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut json = json.clone();
        edit(&mut json);
        json
    };

    // An unknown field is refused by name, in a brain or the schedule.
    let e = try_load(&mut c, &edited(&|j| j["brains"][3]["bogus"] = 1.into())).unwrap_err();
    assert!(e.to_string().contains("unknown field `bogus`"), "{e}");
    let e = try_load(&mut c, &edited(&|j| j["schedule"]["bogus"] = 1.into())).unwrap_err();
    assert!(e.to_string().contains("unknown field `bogus`"), "{e}");
    // Turns without the schedule they count in.
    let e = try_load(
        &mut c,
        &edited(&|j| _ = j.as_object_mut().unwrap().remove("schedule")),
    )
    .unwrap_err();
    assert!(matches!(&e, LoadError::Format(_)), "{e:?}");
    assert!(e.to_string().contains("missing field `schedule`"), "{e}");
    // A brain due since after the next run, a rate too slow, a bad run count.
    let later = edited(&|j| j["brains"][2]["turn"]["due_since"] = (runs + 1).into());
    let e = try_load(&mut c, &later).unwrap_err();
    let key = |e: &LoadError<serde_json::Error>| match e {
        LoadError::Brain {
            key,
            error: bt_core::SnapshotError::BadValue { .. },
            ..
        } => key.clone(),
        e => panic!("{e:?}"),
    };
    assert_eq!(key(&e), json["brains"][2]["key"].to_string(), "{e}");
    assert!(e.to_string().contains("due since"), "{e}");
    let slow = edited(&|j| j["brains"][4]["turn"]["rate"] = 5000.into());
    let e = try_load(&mut c, &slow).unwrap_err();
    assert_eq!(key(&e), json["brains"][4]["key"].to_string(), "{e}");
    let seen_slow = edited(&|j| j["brains"][5]["turn"]["seen_rate"] = 5000.into());
    let e = try_load(&mut c, &seen_slow).unwrap_err();
    assert_eq!(key(&e), json["brains"][5]["key"].to_string(), "{e}");
    assert!(e.to_string().contains("the last run found"), "{e}");
    let e = try_load(
        &mut c,
        &edited(&|j| j["schedule"]["runs"] = u64::MAX.into()),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::Schedule(bt_core::SnapshotError::BadValue { .. })
        ),
        "{e:?}"
    );
    assert_eq!(state(&mut c), before, "nothing changed");

    // A save written before saves held the schedule: its brains load not
    // due and never ticked, and the rates stay the app's.
    let old = edited(&|j| {
        j.as_object_mut().unwrap().remove("schedule");
        for b in j["brains"].as_array_mut().unwrap() {
            b.as_object_mut().unwrap().remove("turn");
        }
    });
    try_load(&mut c, &old).unwrap();
    let (brains, _) = state(&mut c);
    let every_2 = Some(TickRate::new(Rate::Every(2)).unwrap());
    for (id, due, last, rate) in brains {
        assert_eq!((due, last, rate), (false, None, every_2), "napper {id}");
    }
    c.update();
    let stats = c.world().resource::<BrainStats<NapperMemory>>();
    assert_eq!(stats.runs, 6, "the app's own run count");

    // A save written before turns held the rate the last run found loads
    // as the full save does (each saved rate counted as the one the last
    // run found).
    let unseen = edited(&|j| {
        for b in j["brains"].as_array_mut().unwrap() {
            b["turn"].as_object_mut().unwrap().remove("seen_rate");
        }
    });
    try_load(&mut c, &json).unwrap();
    let (full, _) = state(&mut c);
    try_load(&mut c, &unseen).unwrap();
    assert_eq!(state(&mut c).0, full);
}
