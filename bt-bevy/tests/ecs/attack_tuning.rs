//! Hostile tests of `BrainTuning`'s promises: every tick path, systems
//! that tune at any time, callbacks that tune or panic, two apps of one
//! tree on two threads, tags, loads and the tuning file.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{
    Brain, BrainPlugin, BrainShared, BrainSystems, BrainTuning, DebugBrain, Rate, TickRate,
};
use bt_core::{Ctx, TreeShared, TuneError, TuneValue, behavior, decider, group, tree, tunables};

use crate::common::app;

tunables! { pub HERD_KNOBS:
    /// What every probe reads.
    LEVEL: f64 = 0.25, 0.0..=100_000.0;
    /// A whole number.
    COUNT: i64 = 3, 0..=1000;
    /// Shooters at once.
    SLOTS: i64 = 4, 1..=1000;
}

/// What a brain runs before it reads, with its entity's index.
type Hook = Arc<dyn Fn(u32) + Send + Sync>;

/// Records what each of its ticks read.
#[derive(Component, Default)]
pub struct Deer {
    seen: Vec<f64>,
    hook: Option<Hook>,
    idx: u32,
}
bt_bevy::component_agent!(Deer);

fn deer(idx: u32, hook: Option<&Hook>) -> Deer {
    Deer {
        idx,
        hook: hook.cloned(),
        ..Deer::default()
    }
}

behavior! { GRAZE: Deer,
    tick: |d, cx| {
        if let Some(h) = &d.hook {
            h(d.idx);
        }
        d.seen.push(cx.tuned(LEVEL));
        true
    },
}
decider! { GRAZING: Deer => GRAZE }
group! { DEER_ROOT: Deer, prioritized [GRAZING] }
tree! { HERD: Deer = DEER_ROOT, memory: HerdMemory, tunables: HERD_KNOBS }
// The same shape and table: the same memory type.
tree! { HERD_TWIN: Deer = DEER_ROOT, memory: HerdTwinMemory, tunables: HERD_KNOBS }

/// The same probe behind a tuned gate: shared state, entity order.
#[derive(Component, Default)]
pub struct Wolf {
    seen: Vec<f64>,
    hook: Option<Hook>,
    idx: u32,
}
bt_bevy::component_agent!(Wolf);
behavior! { HUNT: Wolf,
    tick: |w, cx| {
        if let Some(h) = &w.hook {
            h(w.idx);
        }
        w.seen.push(cx.tuned(LEVEL));
        true
    },
}
behavior! { WATCH: Wolf,
    tick: |w, cx| {
        if let Some(h) = &w.hook {
            h(w.idx);
        }
        w.seen.push(cx.tuned(LEVEL));
        true
    },
}
decider! { HUNTING: Wolf => HUNT, gate: tunable(SLOTS) }
decider! { WATCHING: Wolf => WATCH }
group! { WOLF_ROOT: Wolf, prioritized [HUNTING, WATCHING] }
tree! { PACK: Wolf = WOLF_ROOT, memory: PackMemory, tunables: HERD_KNOBS }

/// What the next run should read, set by the test.
#[derive(Resource)]
struct Want(f64);

fn tune_before(want: Res<Want>, tuning: Res<BrainTuning<HerdMemory>>) {
    tuning.tune(LEVEL, want.0).unwrap();
}
fn tune_pack_before(want: Res<Want>, tuning: Res<BrainTuning<PackMemory>>) {
    tuning.tune(LEVEL, want.0).unwrap();
}

/// Every read of every deer since `from` reads each.
fn deer_reads(app: &mut App, from: &[(Entity, usize)]) -> Vec<f64> {
    // A brain despawned during the frame is left out.
    from.iter()
        .filter_map(|&(e, n)| app.world().get::<Deer>(e).map(|d| d.seen[n..].to_vec()))
        .flatten()
        .collect()
}
fn deer_marks(app: &mut App) -> Vec<(Entity, usize)> {
    let w = app.world_mut();
    let mut q = w.query::<(Entity, &Deer)>();
    let mut v: Vec<_> = q.iter(w).map(|(e, d)| (e, d.seen.len())).collect();
    v.sort();
    v
}
fn wolf_reads(app: &mut App) -> Vec<Vec<f64>> {
    let w = app.world_mut();
    let mut q = w.query::<(Entity, &Wolf)>();
    let mut v: Vec<_> = q.iter(w).map(|(e, d)| (e, d.seen.clone())).collect();
    v.sort_by_key(|p| p.0);
    v.into_iter().map(|p| p.1).collect()
}

/// The tests of this file, one at a time: each runs apps with thread pools
/// of their own, some on threads that meet at barriers.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A read outside any tick, on this thread.
fn outside() -> f64 {
    Ctx::at(0.0, 0.1).tuned(LEVEL)
}

// ---------------------------------------------------------------------------
// Every tick path.

/// A system ordered before the tick tunes each frame; every brain of the
/// frame's run reads it, on each way the plugin ticks brains: in
/// parallel, by dense chunks, in entity order serially and on every
/// thread (two phases), traced, under a budget and tick rates.
#[test]
fn a_change_before_the_tick_is_read_by_every_brain_on_every_path() {
    let _serial = serial();
    for path in 0..4 {
        let mut app = app();
        let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
        match path {
            0 => _ = app.add_plugins(plugin),
            1 => _ = app.add_plugins(plugin.dense()),
            2 => _ = app.add_plugins(plugin.parallel_from(0)),
            _ => _ = app.add_plugins(plugin.parallel_from(u32::MAX)),
        }
        app.insert_resource(Want(0.0))
            .add_systems(Update, tune_before.before(BrainSystems::Tick));
        for i in 0..700 {
            let mut e = app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
            if i % 97 == 3 {
                e.insert(DebugBrain::quiet());
            }
        }
        for frame in 0..6 {
            app.world_mut().resource_mut::<Want>().0 = frame as f64 * 10.0 + 1.0;
            let marks = deer_marks(&mut app);
            app.update();
            let got = deer_reads(&mut app, &marks);
            assert_eq!(got.len(), 700, "path {path} frame {frame}");
            let want = frame as f64 * 10.0 + 1.0;
            assert!(got.iter().all(|&v| v == want), "path {path} frame {frame}");
        }
        assert_eq!(outside(), 0.25);
    }
}

/// The tree with a tuned gate (shared state), serial and in two phases on
/// every thread, with traced brains, a budget and tick rates: the brains
/// that tick in a run read that run's values, whichever run it is.
#[test]
fn a_gated_tree_reads_each_runs_values_on_every_path() {
    let _serial = serial();
    for path in 0..4 {
        let mut app = app();
        let plugin = BrainPlugin::new(&PACK).in_schedule(Update);
        let plugin = match path {
            0 => plugin.parallel_from(0),
            1 => plugin.parallel_from(u32::MAX),
            2 => plugin.parallel_from(0).budget(150),
            _ => plugin.parallel_from(0),
        };
        app.add_plugins(plugin)
            .insert_resource(Want(0.0))
            .add_systems(Update, tune_pack_before.before(BrainSystems::Tick));
        for i in 0..600 {
            let mut e = app.world_mut().spawn((
                Wolf {
                    idx: i,
                    ..Wolf::default()
                },
                Brain::new(&PACK),
            ));
            if i % 50 == 7 {
                e.insert(DebugBrain::quiet());
            }
            if path == 3 && i % 3 == 0 {
                e.insert(TickRate::new(Rate::Every(3)).unwrap());
            }
        }
        let mut by_frame = Vec::new();
        for frame in 0..8 {
            let want = frame as f64 + 0.5;
            app.world_mut().resource_mut::<Want>().0 = want;
            let before: Vec<usize> = wolf_reads(&mut app).iter().map(Vec::len).collect();
            app.update();
            let after = wolf_reads(&mut app);
            let mut ticked = 0;
            for (b, a) in before.iter().zip(&after) {
                for &v in &a[*b..] {
                    ticked += 1;
                    assert_eq!(v, want, "path {path} frame {frame}");
                }
            }
            by_frame.push(ticked);
        }
        // The budget and rates let fewer tick, but some tick each run.
        assert!(by_frame.iter().all(|&n| n > 0), "path {path}: {by_frame:?}");
        let shared = app.world().resource::<BrainShared<PackMemory>>();
        let hunt = PACK.find("HUNTING").unwrap();
        assert_eq!(shared.state().gate_count(hunt), Some(4), "path {path}");
    }
}

/// A system with no order against the tick tunes on every frame: every
/// brain of a run reads one value, never two.
#[test]
fn an_unordered_system_never_splits_a_run() {
    let _serial = serial();
    fn churn(tuning: Res<BrainTuning<HerdMemory>>, mut k: Local<u32>) {
        *k += 1;
        for j in 0..50 {
            tuning.tune(LEVEL, f64::from((*k * 50 + j) % 1000)).unwrap();
        }
    }
    for path in 0..2 {
        let mut app = app();
        let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
        if path == 0 {
            app.add_plugins(plugin);
        } else {
            app.add_plugins(plugin.dense());
        }
        app.add_systems(Update, churn);
        for i in 0..2000 {
            app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
        }
        for frame in 0..15 {
            let marks = deer_marks(&mut app);
            app.update();
            let got = deer_reads(&mut app, &marks);
            assert!(
                got.windows(2).all(|w| w[0] == w[1]),
                "path {path} frame {frame}: split"
            );
        }
    }
}

/// A brain's callback stages a change in the middle of a run (through
/// the crowd's shared state): no brain of that run reads it, every brain
/// of the next run does.
#[test]
fn a_change_staged_by_a_brain_waits_for_the_next_run() {
    let _serial = serial();
    for path in 0..3 {
        let mut app = app();
        let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
        match path {
            0 => _ = app.add_plugins(plugin),
            1 => _ = app.add_plugins(plugin.dense()),
            _ => _ = app.add_plugins(plugin.parallel_from(0)),
        }
        let state: Arc<TreeShared> =
            Arc::clone(app.world().resource::<BrainShared<HerdMemory>>().state());
        let s = Arc::downgrade(&state);
        let hook: Hook = Arc::new(move |idx| {
            if idx % 200 == 5 {
                let s = s.upgrade().unwrap();
                let v = s.tuned(LEVEL);
                s.tune(LEVEL, v + 1.0).unwrap();
            }
        });
        for i in 0..1000 {
            app.world_mut()
                .spawn((deer(i, Some(&hook)), Brain::new(&HERD)));
        }
        for frame in 0..4 {
            let marks = deer_marks(&mut app);
            app.update();
            let got = deer_reads(&mut app, &marks);
            let want = 0.25 + frame as f64;
            assert!(got.iter().all(|&v| v == want), "path {path} frame {frame}");
        }
    }
}

// ---------------------------------------------------------------------------
// Two apps, two tags, two trees.

/// Holds each party's brain callback in frame `f` until every party's
/// has come (at most 0.2 s): two apps' runs forced to overlap,
/// without a deadlock if one never comes.
struct Rendezvous {
    arrived: Vec<AtomicUsize>,
    overlapped: AtomicUsize,
    parties: usize,
}
impl Rendezvous {
    fn new(parties: usize, frames: usize) -> Self {
        Rendezvous {
            arrived: (0..frames).map(|_| AtomicUsize::new(0)).collect(),
            overlapped: AtomicUsize::new(0),
            parties,
        }
    }
    fn meet(&self, frame: usize) {
        let n = &self.arrived[frame];
        n.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_millis(200);
        while n.load(Ordering::SeqCst) < self.parties {
            if Instant::now() > deadline {
                return;
            }
            std::thread::yield_now();
        }
        self.overlapped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Three apps of one tree, each on its own thread, each tuned to its own
/// values every frame, their runs forced to overlap inside a brain's
/// callback: each app's brains read their app's values.
#[test]
fn apps_on_several_threads_read_their_own_values() {
    let _serial = serial();
    const APPS: usize = 3;
    const FRAMES: usize = 12;
    let meet = Arc::new(Rendezvous::new(APPS, FRAMES));
    let handles: Vec<_> = (0..APPS)
        .map(|a| {
            let meet = Arc::clone(&meet);
            std::thread::spawn(move || {
                let mut app = app();
                let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
                if a % 2 == 0 {
                    app.add_plugins(plugin);
                } else {
                    app.add_plugins(plugin.dense());
                }
                app.insert_resource(Want(0.0))
                    .add_systems(Update, tune_before.before(BrainSystems::Tick));
                let m = Arc::clone(&meet);
                let now = Arc::new(AtomicUsize::new(0));
                let f = Arc::clone(&now);
                let hook: Hook = Arc::new(move |idx| {
                    if idx == 10 {
                        m.meet(f.load(Ordering::SeqCst));
                    }
                });
                for i in 0..600 {
                    app.world_mut()
                        .spawn((deer(i, Some(&hook)), Brain::new(&HERD)));
                }
                let mut wrong = Vec::new();
                for frame in 0..FRAMES {
                    now.store(frame, Ordering::SeqCst);
                    let want = (a * 1000 + frame) as f64;
                    app.world_mut().resource_mut::<Want>().0 = want;
                    let marks = deer_marks(&mut app);
                    app.update();
                    let got = deer_reads(&mut app, &marks);
                    if let Some(v) = got.iter().find(|&&v| v != want) {
                        wrong.push((frame, *v));
                    }
                }
                (a, wrong)
            })
        })
        .collect();
    for h in handles {
        let (a, wrong) = h.join().unwrap();
        assert!(
            wrong.is_empty(),
            "app {a}: frames with another app's values {wrong:?}"
        );
    }
    // The runs did overlap (on a loaded machine a thread may miss some).
    let overlapped = meet.overlapped.load(Ordering::SeqCst);
    eprintln!(
        "{overlapped} of {} callbacks met the other apps'",
        APPS * FRAMES
    );
    assert!(overlapped >= APPS, "{overlapped} overlapping runs");
}

/// Two apps of the tree with shared state, on two threads, in two phases
/// on the shared compute pool: each reads its own.
#[test]
fn two_gated_apps_on_two_threads_read_their_own_values() {
    let _serial = serial();
    let meet = Arc::new(Rendezvous::new(2, 15));
    let handles: Vec<_> = (0..2)
        .map(|a| {
            let meet = Arc::clone(&meet);
            std::thread::spawn(move || {
                let mut app = app();
                app.add_plugins(BrainPlugin::new(&PACK).in_schedule(Update).parallel_from(0))
                    .insert_resource(Want(0.0))
                    .add_systems(Update, tune_pack_before.before(BrainSystems::Tick));
                let m = Arc::clone(&meet);
                let now = Arc::new(AtomicUsize::new(0));
                let f = Arc::clone(&now);
                let hook: Hook = Arc::new(move |idx| {
                    if idx == 300 {
                        m.meet(f.load(Ordering::SeqCst));
                    }
                });
                for i in 0..700 {
                    app.world_mut().spawn((
                        Wolf {
                            idx: i,
                            hook: Some(Arc::clone(&hook)),
                            ..Wolf::default()
                        },
                        Brain::new(&PACK),
                    ));
                }
                let mut wrong = Vec::new();
                for frame in 0..15 {
                    now.store(frame, Ordering::SeqCst);
                    let want = (a * 1000 + frame) as f64;
                    app.world_mut().resource_mut::<Want>().0 = want;
                    let before: Vec<usize> = wolf_reads(&mut app).iter().map(Vec::len).collect();
                    app.update();
                    for (b, r) in before.iter().zip(wolf_reads(&mut app)) {
                        if let Some(v) = r[*b..].iter().find(|&&v| v != want) {
                            wrong.push((frame, *v));
                        }
                    }
                }
                (a, wrong)
            })
        })
        .collect();
    for h in handles {
        let (a, wrong) = h.join().unwrap();
        assert!(
            wrong.is_empty(),
            "app {a}: {} wrong reads, first {:?}",
            wrong.len(),
            wrong.first()
        );
    }
    let overlapped = meet.overlapped.load(Ordering::SeqCst);
    eprintln!("{overlapped} of 30 callbacks met the other app's");
    assert!(overlapped >= 2, "{overlapped} overlapping runs");
}

/// An app dropped and another made (its crowd likely where the first
/// one's was), tuned as many times to another value: its first run reads
/// its own values.
#[test]
fn a_new_app_after_a_dropped_one_reads_its_own_values() {
    let _serial = serial();
    for round in 0..12 {
        let want = if round % 2 == 0 { 7.0 } else { 9.0 };
        let mut app = app();
        app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update));
        let e = app
            .world_mut()
            .spawn((deer(0, None), Brain::new(&HERD)))
            .id();
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, want)
            .unwrap();
        app.update();
        assert_eq!(
            app.world().get::<Deer>(e).unwrap().seen,
            [want],
            "round {round}"
        );
    }
}

struct Red;
struct Blue;

/// The same tree under two tags: two crowds in one app, tuned apart,
/// each read by its own brains, frame after frame.
#[test]
fn one_tree_under_two_tags_reads_two_sets_of_values() {
    let _serial = serial();
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update).tagged::<Red>())
        .add_plugins(
            BrainPlugin::new(&HERD)
                .in_schedule(Update)
                .tagged::<Blue>()
                .dense(),
        );
    let reds: Vec<Entity> = (0..300)
        .map(|i| {
            app.world_mut()
                .spawn((deer(i, None), Brain::new(&HERD).tagged::<Red>()))
                .id()
        })
        .collect();
    let blues: Vec<Entity> = (0..300)
        .map(|i| {
            app.world_mut()
                .spawn((deer(i, None), Brain::new(&HERD).tagged::<Blue>()))
                .id()
        })
        .collect();
    for frame in 0..6 {
        let (r, b) = (frame as f64 + 1.0, frame as f64 + 101.0);
        app.world()
            .resource::<BrainTuning<bt_bevy::Tagged<HerdMemory, Red>>>()
            .tune(LEVEL, r)
            .unwrap();
        app.world()
            .resource::<BrainTuning<bt_bevy::Tagged<HerdMemory, Blue>>>()
            .tune(LEVEL, b)
            .unwrap();
        app.update();
        for &e in &reds {
            assert_eq!(app.world().get::<Deer>(e).unwrap().seen.last(), Some(&r));
        }
        for &e in &blues {
            assert_eq!(app.world().get::<Deer>(e).unwrap().seen.last(), Some(&b));
        }
    }
}

/// Two trees of one memory type and one table: the calls that name no
/// tree panic, naming both; each crowd, named, reads its own.
#[test]
fn two_trees_of_one_memory_type_read_their_own() {
    let _serial = serial();
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update))
        .add_plugins(BrainPlugin::new(&HERD_TWIN).in_schedule(Update));
    let a = app
        .world_mut()
        .spawn((deer(0, None), Brain::new(&HERD)))
        .id();
    let b = app
        .world_mut()
        .spawn((deer(1, None), Brain::new(&HERD_TWIN)))
        .id();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    let e = catch_unwind(AssertUnwindSafe(|| tuning.tune(LEVEL, 1.0))).unwrap_err();
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("HERD") && msg.contains("HERD_TWIN") && msg.contains("crowd"),
        "{msg}"
    );
    tuning.crowd(&HERD).unwrap().tune(LEVEL, 1.0).unwrap();
    tuning.crowd(&HERD_TWIN).unwrap().tune(LEVEL, 2.0).unwrap();
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(app.world().get::<Deer>(a).unwrap().seen, [1.0; 3]);
    assert_eq!(app.world().get::<Deer>(b).unwrap().seen, [2.0; 3]);
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    assert_eq!(tuning.crowd(&HERD).unwrap().changes(), 1);
    assert_eq!(tuning.crowds().len(), 2);
}

// ---------------------------------------------------------------------------
// Spawns, despawns, panics.

/// Brains spawned and despawned between runs, and by a system during the
/// frame: the new brains' first tick reads the run's values.
#[test]
fn brains_spawned_and_despawned_mid_run_read_the_runs_values() {
    let _serial = serial();
    fn churn(mut commands: Commands, q: Query<(Entity, &Deer)>, mut k: Local<u32>) {
        *k += 1;
        for (e, d) in &q {
            if (d.idx + *k).is_multiple_of(3) {
                commands.entity(e).despawn();
            }
        }
        for i in 0..50 {
            commands.spawn((deer(10_000 + *k * 100 + i, None), Brain::new(&HERD)));
        }
    }
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update))
        .insert_resource(Want(0.0))
        .add_systems(Update, tune_before.before(BrainSystems::Tick))
        .add_systems(Update, churn.after(BrainSystems::Tick));
    for i in 0..300 {
        app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
    }
    for frame in 0..8 {
        let want = frame as f64 * 2.0 + 1.0;
        app.world_mut().resource_mut::<Want>().0 = want;
        let marks = deer_marks(&mut app);
        app.update();
        let got = deer_reads(&mut app, &marks);
        assert!(got.iter().all(|&v| v == want), "frame {frame}");
        assert!(!got.is_empty());
    }
}

/// A brain's callback panics in the middle of a run (caught around the
/// update): reads outside any tick are the defaults, here and on the
/// compute pool's threads, and an app made afterwards (and this one)
/// read their own values.
#[test]
fn a_panicking_brain_leaves_no_values_behind() {
    let _serial = serial();
    static ARMED: AtomicBool = AtomicBool::new(true);
    for path in 0..3 {
        ARMED.store(true, Ordering::SeqCst);
        let hook: Hook = Arc::new(|idx| {
            if idx == 333 && ARMED.load(Ordering::SeqCst) {
                panic!("a brain's callback panics");
            }
        });
        let mut app = app();
        let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
        match path {
            0 => _ = app.add_plugins(plugin),
            1 => _ = app.add_plugins(plugin.dense()),
            _ => _ = app.add_plugins(plugin.parallel_from(0)),
        }
        for i in 0..1000 {
            app.world_mut()
                .spawn((deer(i, Some(&hook)), Brain::new(&HERD)));
        }
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 55.0)
            .unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| app.update()));
        assert!(r.is_err(), "path {path}");
        assert_eq!(outside(), 0.25, "path {path}");
        // On the compute pool's threads.
        let pool = bevy_tasks::ComputeTaskPool::get();
        let reads: Vec<f64> = pool.scope(|s| {
            for _ in 0..64 {
                s.spawn(async { outside() });
            }
        });
        assert!(reads.iter().all(|&v| v == 0.25), "path {path}: {reads:?}");
        // Another app, other values.
        let mut other = app_with_herd(2000.0);
        let marks = deer_marks(&mut other);
        other.update();
        assert!(
            deer_reads(&mut other, &marks).iter().all(|&v| v == 2000.0),
            "path {path}"
        );
        // This app, the panic disarmed, if Bevy lets it run again.
        ARMED.store(false, Ordering::SeqCst);
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 56.0)
            .unwrap();
        let marks = deer_marks(&mut app);
        if catch_unwind(AssertUnwindSafe(|| app.update())).is_ok() {
            let got = deer_reads(&mut app, &marks);
            assert!(got.iter().all(|&v| v == 56.0), "path {path}");
        }
    }
}

fn app_with_herd(level: f64) -> App {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update));
    for i in 0..700 {
        app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
    }
    app.world()
        .resource::<BrainTuning<HerdMemory>>()
        .tune(LEVEL, level)
        .unwrap();
    app
}

// ---------------------------------------------------------------------------
// The resource itself.

/// Refused values change nothing and count nothing; `tuned` of a
/// tunable of another table reads its default; the Debug output shows
/// the values in effect.
#[test]
fn the_resource_refuses_bad_values_and_shows_what_is_in_effect() {
    let _serial = serial();
    tunables! { OTHER:
        /// Other.
        X: f64 = 0.5, 0.0..=1.0;
    }
    let mut app = app_with_herd(1.0);
    app.update();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    for v in [f64::NAN, f64::INFINITY, -0.5, 1e9] {
        assert!(
            matches!(tuning.tune(LEVEL, v), Err(TuneError::OutOfRange { .. })),
            "{v}"
        );
    }
    assert!(matches!(
        tuning.tune(X, 0.7),
        Err(TuneError::OtherTable { .. })
    ));
    assert!(matches!(
        tuning.tune_named("COUNT", TuneValue::Float(1.5)),
        Err(TuneError::OutOfRange { .. } | TuneError::WrongType { .. })
    ));
    assert!(matches!(
        tuning.tune_named("NOPE", TuneValue::Int(1)),
        Err(TuneError::Unknown { .. })
    ));
    assert_eq!(tuning.tuned(X), 0.5);
    assert_eq!((tuning.tuned(LEVEL), tuning.changes()), (1.0, 1));
    let shown = format!("{tuning:?}");
    assert!(shown.contains("LEVEL") && shown.contains("1.0"), "{shown}");
    app.update();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    assert_eq!((tuning.tuned(LEVEL), tuning.changes()), (1.0, 1));
}

/// A plugin in `FixedUpdate` that runs zero, one or several times a
/// frame: a change staged before the frame is read by every run of it
/// and counted once.
#[test]
fn fixed_update_runs_several_times_a_frame_read_one_value() {
    let _serial = serial();
    let mut app = bevy_app::App::new();
    app.add_plugins((bevy_app::TaskPoolPlugin::default(), bevy_time::TimePlugin))
        .insert_resource(bevy_time::TimeUpdateStrategy::FixedTimesteps(3))
        .add_plugins(BrainPlugin::new(&HERD));
    let e = app
        .world_mut()
        .spawn((deer(0, None), Brain::new(&HERD)))
        .id();
    app.update(); // starts the clock, no run
    app.world()
        .resource::<BrainTuning<HerdMemory>>()
        .tune(LEVEL, 4.0)
        .unwrap();
    app.update();
    assert_eq!(app.world().get::<Deer>(e).unwrap().seen, [4.0; 3]);
    assert_eq!(
        app.world().resource::<BrainTuning<HerdMemory>>().changes(),
        1
    );
}

// ---------------------------------------------------------------------------
// Saves and loads.

#[cfg(feature = "serde")]
mod saved {
    use bt_bevy::{NoSenses, SaveBrains};

    use super::*;

    fn save(app: &mut App) -> String {
        let w = app.world_mut();
        let mut q = w.query::<(Entity, &Deer)>();
        let ids: std::collections::HashMap<Entity, u32> =
            q.iter(w).map(|(e, d)| (e, d.idx)).collect();
        let s = w.save_brains::<HerdMemory, NoSenses, u32>(|e| ids.get(&e).copied());
        serde_json::to_string(&s).unwrap()
    }

    fn load(app: &mut App, json: &str) {
        let w = app.world_mut();
        let mut q = w.query::<(Entity, &Deer)>();
        let ids: std::collections::HashMap<u32, Entity> =
            q.iter(w).map(|(e, d)| (d.idx, e)).collect();
        w.load_brains::<HerdMemory, NoSenses, u32, _>(
            &mut serde_json::Deserializer::from_str(json),
            |i| ids.get(i).copied(),
        )
        .unwrap();
    }

    /// A save holds the values in effect (not a change staged since the
    /// last run); a load into the running app puts them in effect, drops
    /// the staged change, and the resource then tunes the loaded crowd
    /// (a handle on the crowd from before the load tunes nothing the
    /// brains read).
    #[test]
    fn a_load_into_the_running_app_then_tuning_through_the_resource() {
        let _serial = serial();
        let mut app = app_with_herd(3.0);
        app.update();
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 4.0)
            .unwrap();
        let json = save(&mut app);
        let old: Arc<TreeShared> =
            Arc::clone(app.world().resource::<BrainShared<HerdMemory>>().state());
        app.update(); // reads 4.0
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 6.0)
            .unwrap();
        load(&mut app, &json);
        let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
        assert_eq!(
            tuning.tuned(LEVEL),
            3.0,
            "the save holds the value in effect"
        );
        assert_eq!(
            tuning.changes(),
            3,
            "3.0, then 4.0, then back to 3.0 by the load"
        );
        let marks = deer_marks(&mut app);
        app.update();
        assert!(
            deer_reads(&mut app, &marks).iter().all(|&v| v == 3.0),
            "staged 6.0 dropped"
        );
        // Tuned through the resource after the load: read next run.
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 8.0)
            .unwrap();
        old.tune(LEVEL, 99.0).unwrap();
        old.apply_tuning();
        let marks = deer_marks(&mut app);
        app.update();
        assert!(deer_reads(&mut app, &marks).iter().all(|&v| v == 8.0));
        assert_eq!(
            app.world().resource::<BrainTuning<HerdMemory>>().changes(),
            4
        );
    }

    /// Two trees of one memory type: a load of one tree's brains and crowd
    /// changes that tree's values and count only; the other goes on.
    #[test]
    fn a_load_of_one_of_two_trees_leaves_the_others_values() {
        let _serial = serial();
        let mut app = app();
        app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update))
            .add_plugins(BrainPlugin::new(&HERD_TWIN).in_schedule(Update));
        let a = app
            .world_mut()
            .spawn((deer(0, None), Brain::new(&HERD)))
            .id();
        let b = app
            .world_mut()
            .spawn((deer(1, None), Brain::new(&HERD_TWIN)))
            .id();
        let crowd = |app: &App, t| {
            let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
            (
                tuning.crowd(t).unwrap().tuned(LEVEL),
                tuning.crowd(t).unwrap().changes(),
            )
        };
        let tune = |app: &App, t, v| {
            let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
            tuning.crowd(t).unwrap().tune(LEVEL, v).unwrap();
        };
        tune(&app, &HERD, 1.0);
        tune(&app, &HERD_TWIN, 2.0);
        app.update();
        let w = app.world_mut();
        let json = serde_json::to_string(
            &w.save_brains_of::<HerdMemory, NoSenses, u32>(&HERD, |e| (e == a).then_some(0)),
        )
        .unwrap();
        tune(&app, &HERD, 3.0);
        tune(&app, &HERD_TWIN, 4.0);
        app.update();
        app.world_mut()
            .load_brains_of::<HerdMemory, NoSenses, u32, _>(
                &HERD,
                &mut serde_json::Deserializer::from_str(&json),
                |_| Some(a),
            )
            .unwrap();
        assert_eq!(crowd(&app, &HERD), (1.0, 3));
        assert_eq!(crowd(&app, &HERD_TWIN), (4.0, 2));
        app.update();
        assert_eq!(app.world().get::<Deer>(a).unwrap().seen, [1.0, 3.0, 1.0]);
        assert_eq!(app.world().get::<Deer>(b).unwrap().seen, [2.0, 4.0, 4.0]);
    }

    /// One app loads its save every frame (a new crowd each time) while
    /// another app of the tree runs beside it on another thread: each
    /// reads its own values, every frame.
    #[test]
    fn an_app_that_loads_every_frame_beside_another() {
        let _serial = serial();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = Arc::clone(&stop);
        let beside = std::thread::spawn(move || {
            let mut app = app_with_herd(5.0);
            let mut wrong = 0;
            let mut frames = 0;
            while !s2.load(Ordering::SeqCst) || frames < 5 {
                let marks = deer_marks(&mut app);
                app.update();
                wrong += deer_reads(&mut app, &marks)
                    .iter()
                    .filter(|&&v| v != 5.0)
                    .count();
                frames += 1;
            }
            (wrong, frames)
        });
        let mut app = app_with_herd(6.0);
        app.update();
        let json = save(&mut app);
        let mut wrong = 0;
        for frame in 0..20 {
            if frame % 2 == 0 {
                load(&mut app, &json);
            } else {
                app.world()
                    .resource::<BrainTuning<HerdMemory>>()
                    .tune(LEVEL, 7.0)
                    .unwrap();
            }
            let want = if frame % 2 == 0 { 6.0 } else { 7.0 };
            let marks = deer_marks(&mut app);
            app.update();
            wrong += deer_reads(&mut app, &marks)
                .iter()
                .filter(|&&v| v != want)
                .count();
        }
        stop.store(true, Ordering::SeqCst);
        let (beside_wrong, frames) = beside.join().unwrap();
        assert_eq!((wrong, beside_wrong), (0, 0), "over {frames} frames beside");
    }

    /// The same save loaded twice into a fresh app, then an app running
    /// beside it ticked: each reads its own.
    #[test]
    fn the_same_save_loaded_twice_into_a_fresh_app() {
        let _serial = serial();
        let mut a = app_with_herd(12.0);
        a.update();
        let json = save(&mut a);
        let mut fresh = app_with_herd(0.0);
        // The staged 0.0 is dropped by the load.
        load(&mut fresh, &json);
        load(&mut fresh, &json);
        let tuning = fresh.world().resource::<BrainTuning<HerdMemory>>();
        assert_eq!((tuning.tuned(LEVEL), tuning.changes()), (12.0, 1));
        a.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 13.0)
            .unwrap();
        let marks = deer_marks(&mut a);
        a.update();
        assert!(deer_reads(&mut a, &marks).iter().all(|&v| v == 13.0));
        let marks = deer_marks(&mut fresh);
        fresh.update();
        assert!(deer_reads(&mut fresh, &marks).iter().all(|&v| v == 12.0));
    }
}

// ---------------------------------------------------------------------------
// The tuning file.

#[cfg(feature = "tune-file")]
mod file {
    use bt_bevy::TuningFileRead;

    use super::*;

    #[derive(Resource, Default)]
    struct Reads(Vec<Result<Vec<&'static str>, String>>);

    fn collect(mut r: MessageReader<TuningFileRead<HerdMemory>>, mut reads: ResMut<Reads>) {
        for m in r.read() {
            reads.0.push(match &m.outcome {
                Ok(a) => Ok(a.changed.clone()),
                Err(e) => Err(e.to_string()),
            });
        }
    }

    /// Updates until a reading arrives (at most five seconds).
    fn until_read(app: &mut App) -> Result<Vec<&'static str>, String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            app.update();
            if let Some(r) = app.world_mut().resource_mut::<Reads>().0.pop() {
                return r;
            }
            assert!(Instant::now() < deadline, "no reading of the file");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("bt-tuning-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Good, bad and good again while the app runs: the bad one changes
    /// nothing and names its key and line; each good one is read by every
    /// brain of the run that took it; nothing panics.
    #[test]
    fn the_file_good_bad_good_while_running() {
        let _serial = serial();
        let d = dir("ggb");
        let path = d.join("herd.toml");
        std::fs::write(&path, "LEVEL = 5.0\n").unwrap();
        let mut app = app();
        app.add_plugins(
            BrainPlugin::new(&HERD)
                .in_schedule(Update)
                .tuning_file(&path),
        )
        .init_resource::<Reads>()
        .add_systems(Update, collect.after(BrainSystems::Tick));
        for i in 0..600 {
            app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
        }
        let marks = deer_marks(&mut app);
        app.update();
        assert!(deer_reads(&mut app, &marks).iter().all(|&v| v == 5.0));
        let bads = [
            "LEVEL = 6.0\nCOUNT = 2000\n",
            "LEVEL = 6.0\nNOPE = 1\n",
            "LEVEL = \"six\"\n",
            "LEVEL = nan\n",
            "LEVEL = inf\n",
            "LEVEL = 6.0\nLEVEL = 7.0\n",
            "LEVEL = 6.0\n[COUNT]\n",
            "LEVEL = 6.0\nCOUNT = 2.5\n",
            "\u{0}\u{ff}",
        ];
        app.world_mut().resource_mut::<Reads>().0.clear();
        for bad in bads {
            std::fs::write(&path, bad).unwrap();
            let r = until_read(&mut app);
            assert!(r.is_err(), "{bad:?} taken: {r:?}");
            let marks = deer_marks(&mut app);
            app.update();
            assert!(
                deer_reads(&mut app, &marks).iter().all(|&v| v == 5.0),
                "{bad:?}"
            );
        }
        std::fs::write(&path, "LEVEL = 9.5\nCOUNT = 7\n").unwrap();
        assert_eq!(until_read(&mut app), Ok(vec!["LEVEL", "COUNT"]));
        let marks = deer_marks(&mut app);
        app.update();
        assert!(deer_reads(&mut app, &marks).iter().all(|&v| v == 9.5));
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A tuning file for a path whose folder does not exist: reported,
    /// never a panic, and the brains read the defaults.
    #[test]
    fn a_tuning_file_in_a_missing_folder() {
        let _serial = serial();
        let path = std::env::temp_dir().join("bt-tuning-no-such-dir/x/herd.toml");
        let mut app = app();
        app.add_plugins(
            BrainPlugin::new(&HERD)
                .in_schedule(Update)
                .tuning_file(&path),
        )
        .init_resource::<Reads>()
        .add_systems(Update, collect.after(BrainSystems::Tick));
        let e = app
            .world_mut()
            .spawn((deer(0, None), Brain::new(&HERD)))
            .id();
        for _ in 0..3 {
            app.update();
        }
        let reads = &app.world().resource::<Reads>().0;
        assert!(
            !reads.is_empty() && reads.iter().all(Result::is_err),
            "{reads:?}"
        );
        assert_eq!(app.world().get::<Deer>(e).unwrap().seen, [0.25; 3]);
    }

    /// After a load into the running app, the file's next save is staged
    /// on the loaded crowd: read by the next run.
    #[cfg(feature = "serde")]
    #[test]
    fn the_file_goes_on_with_the_loaded_crowd() {
        let _serial = serial();
        use bt_bevy::{NoSenses, SaveBrains};
        let d = dir("load");
        let path = d.join("herd.toml");
        std::fs::write(&path, "LEVEL = 2.0\n").unwrap();
        let mut app = app();
        app.add_plugins(
            BrainPlugin::new(&HERD)
                .in_schedule(Update)
                .tuning_file(&path),
        )
        .init_resource::<Reads>()
        .add_systems(Update, collect.after(BrainSystems::Tick));
        let e = app
            .world_mut()
            .spawn((deer(0, None), Brain::new(&HERD)))
            .id();
        app.update();
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 3.0)
            .unwrap();
        app.update();
        let w = app.world_mut();
        let json = serde_json::to_string(&w.save_brains::<HerdMemory, NoSenses, u32>(|_| Some(0)))
            .unwrap();
        app.world()
            .resource::<BrainTuning<HerdMemory>>()
            .tune(LEVEL, 4.0)
            .unwrap();
        app.update();
        app.world_mut()
            .load_brains::<HerdMemory, NoSenses, u32, _>(
                &mut serde_json::Deserializer::from_str(&json),
                |_| Some(e),
            )
            .unwrap();
        app.world_mut().resource_mut::<Reads>().0.clear();
        app.update();
        assert_eq!(app.world().get::<Deer>(e).unwrap().seen.last(), Some(&3.0));
        std::fs::write(&path, "LEVEL = 11.0\n").unwrap();
        assert_eq!(until_read(&mut app), Ok(vec!["LEVEL"]));
        app.update();
        assert_eq!(app.world().get::<Deer>(e).unwrap().seen.last(), Some(&11.0));
        let _ = std::fs::remove_dir_all(&d);
    }
}

// ---------------------------------------------------------------------------
// Observation changes nothing.

/// The same app with and without traced brains, by the same tunes at the
/// same frames: the same decisions (here, the gate's members).
#[test]
fn tracing_changes_no_decision_under_tuning() {
    let _serial = serial();
    fn run(traced: bool) -> Vec<Vec<Option<&'static str>>> {
        let mut app = app();
        app.add_plugins(BrainPlugin::new(&PACK).in_schedule(Update).parallel_from(0));
        let es: Vec<Entity> = (0..600)
            .map(|i| {
                let mut e = app.world_mut().spawn((
                    Wolf {
                        idx: i,
                        ..Wolf::default()
                    },
                    Brain::new(&PACK),
                ));
                if traced && i % 7 == 0 {
                    e.insert(DebugBrain::quiet());
                }
                e.id()
            })
            .collect();
        let mut out = Vec::new();
        for frame in 0..6u32 {
            let t = app.world().resource::<BrainTuning<PackMemory>>();
            t.tune(SLOTS, i64::from(frame * 37 % 50 + 1)).unwrap();
            app.update();
            out.push(
                es.iter()
                    .map(|&e| {
                        app.world()
                            .get::<Brain<PackMemory>>(e)
                            .unwrap()
                            .running_decider()
                    })
                    .collect(),
            );
        }
        out
    }
    assert_eq!(run(false), run(true));
}

// ---------------------------------------------------------------------------
// Recording and scale.

/// The same app recorded and not, tuned at the same frames: the same
/// decisions; the recording holds the change, from the value before to
/// the value after, at a tick after its first frame.
#[test]
fn recording_changes_no_decision_and_keeps_the_change() {
    fn run(
        recorded: bool,
    ) -> (
        Vec<Vec<Option<&'static str>>>,
        Option<bt_bevy::bt_viewer::Tuning>,
    ) {
        let mut app = app();
        let plugin = BrainPlugin::new(&PACK).in_schedule(Update).parallel_from(0);
        if recorded {
            app.add_plugins(plugin.record(bt_bevy::RecordBrains::all(64)));
        } else {
            app.add_plugins(plugin);
        }
        let es: Vec<Entity> = (0..600)
            .map(|i| {
                let w = Wolf {
                    idx: i,
                    ..Wolf::default()
                };
                app.world_mut().spawn((w, Brain::new(&PACK))).id()
            })
            .collect();
        let mut out = Vec::new();
        for frame in 0..6u32 {
            if frame == 3 {
                let t = app.world().resource::<BrainTuning<PackMemory>>();
                t.tune(SLOTS, 9).unwrap();
                t.tune(LEVEL, 2.5).unwrap();
            }
            app.update();
            let running = es.iter().map(|&e| {
                app.world()
                    .get::<Brain<PackMemory>>(e)
                    .unwrap()
                    .running_decider()
            });
            out.push(running.collect());
        }
        let tuning = recorded
            .then(|| {
                app.world()
                    .resource::<bt_bevy::BrainRecorder<PackMemory>>()
                    .export()
                    .tuning
            })
            .flatten();
        (out, tuning)
    }
    let _serial = serial();
    let (plain, _) = run(false);
    let (recorded, tuning) = run(true);
    assert_eq!(plain, recorded);
    let tuning = tuning.expect("the recording holds the tunables");
    let names: Vec<&str> = tuning.changes.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), 2, "{:?}", tuning.changes);
    assert!(names.contains(&"SLOTS") && names.contains(&"LEVEL"));
    let slots = tuning.changes.iter().find(|c| c.name == "SLOTS").unwrap();
    assert_eq!((slots.from.as_i64(), slots.to.as_i64()), (Some(4), Some(9)));
    assert!(slots.tick > tuning.first, "{tuning:?}");
}

/// Ten times the crowd of the other tests, retuned every frame: every
/// brain of every run reads its run's value.
#[test]
fn a_large_app_retuned_every_frame() {
    let _serial = serial();
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update).dense())
        .insert_resource(Want(0.0))
        .add_systems(Update, tune_before.before(BrainSystems::Tick));
    for i in 0..7000 {
        app.world_mut().spawn((deer(i, None), Brain::new(&HERD)));
    }
    let t0 = Instant::now();
    for frame in 0..5 {
        let want = frame as f64 * 7.0 + 0.125;
        app.world_mut().resource_mut::<Want>().0 = want;
        let marks = deer_marks(&mut app);
        app.update();
        let got = deer_reads(&mut app, &marks);
        assert_eq!(got.len(), 7000);
        assert!(got.iter().all(|&v| v == want), "frame {frame}");
    }
    eprintln!("7 000 brains x 5 frames: {:?}", t0.elapsed());
    assert_eq!(
        app.world().resource::<BrainTuning<HerdMemory>>().changes(),
        5
    );
}

/// A brain's callback runs a whole frame of another app of the same tree
/// (a callback that re-enters the library): the other app's brains read
/// its values, and this app's brains after the call read this app's.
#[test]
fn a_brain_that_runs_another_apps_frame() {
    let _serial = serial();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // The other app's world, run frame by frame by its main schedule
        // (an `App` is not `Send`; its world is).
        let mut other = app_with_herd(40.0);
        other.finish();
        other.cleanup();
        let inner = Arc::new(std::sync::Mutex::new(std::mem::take(other.world_mut())));
        let i2 = Arc::clone(&inner);
        let hook: Hook = Arc::new(move |idx| {
            if idx % 150 == 3
                && let Ok(mut other) = i2.try_lock()
            {
                other.run_schedule(bevy_app::Main);
            }
        });
        let mut results = Vec::new();
        for path in 0..3 {
            let mut app = app();
            let plugin = BrainPlugin::new(&HERD).in_schedule(Update);
            match path {
                0 => _ = app.add_plugins(plugin),
                1 => _ = app.add_plugins(plugin.dense()),
                _ => _ = app.add_plugins(plugin.parallel_from(0)),
            }
            for i in 0..600 {
                app.world_mut()
                    .spawn((deer(i, Some(&hook)), Brain::new(&HERD)));
            }
            app.world()
                .resource::<BrainTuning<HerdMemory>>()
                .tune(LEVEL, 30.0)
                .unwrap();
            let marks = deer_marks(&mut app);
            let inner_marks = world_marks(&mut inner.lock().unwrap());
            app.update();
            let outer = deer_reads(&mut app, &marks);
            let inner_reads = world_reads(&inner.lock().unwrap(), &inner_marks);
            results.push((
                path,
                outer.iter().filter(|&&v| v != 30.0).count(),
                inner_reads.len(),
                inner_reads.iter().filter(|&&v| v != 40.0).count(),
            ));
        }
        let _ = done.send(results);
    });
    let results = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("a frame run inside a brain's callback never ended");
    for (path, wrong_outer, inner_n, wrong_inner) in results {
        assert!(inner_n > 0, "path {path}: the inner app never ran");
        assert_eq!((wrong_outer, wrong_inner), (0, 0), "path {path}");
    }
}

fn world_marks(w: &mut World) -> Vec<(Entity, usize)> {
    let mut q = w.query::<(Entity, &Deer)>();
    q.iter(w).map(|(e, d)| (e, d.seen.len())).collect()
}
fn world_reads(w: &World, from: &[(Entity, usize)]) -> Vec<f64> {
    from.iter()
        .flat_map(|&(e, n)| w.get::<Deer>(e).unwrap().seen[n..].to_vec())
        .collect()
}

/// The tree with shared state in two phases on every thread, traced and
/// recorded brains among them: a brain's callback stages a change in the
/// middle of the run, in the parallel phase or the serial one; no brain of
/// that run reads it, every brain of the next does.
#[test]
fn a_change_staged_mid_run_in_two_phases_waits_for_the_next_run() {
    let _serial = serial();
    for path in 0..2 {
        let mut app = app();
        let plugin = BrainPlugin::new(&PACK).in_schedule(Update).parallel_from(0);
        if path == 0 {
            app.add_plugins(plugin);
        } else {
            app.add_plugins(plugin.record(bt_bevy::RecordBrains::marked(16)));
        }
        let state = Arc::clone(app.world().resource::<BrainShared<PackMemory>>().state());
        let s = Arc::downgrade(&state);
        let hook: Hook = Arc::new(move |idx| {
            if idx % 250 == 11 {
                let s = s.upgrade().unwrap();
                s.tune(LEVEL, s.tuned(LEVEL) + 1.0).unwrap();
            }
        });
        for i in 0..800 {
            let w = Wolf {
                idx: i,
                hook: Some(Arc::clone(&hook)),
                ..Wolf::default()
            };
            let mut e = app.world_mut().spawn((w, Brain::new(&PACK)));
            if i % 61 == 0 {
                e.insert(DebugBrain::quiet());
            }
            if i % 97 == 5 {
                e.insert(bt_bevy::Recorded);
            }
        }
        for frame in 0..4 {
            let before: Vec<usize> = wolf_reads(&mut app).iter().map(Vec::len).collect();
            app.update();
            let want = 0.25 + frame as f64;
            for (b, r) in before.iter().zip(wolf_reads(&mut app)) {
                assert!(
                    r[*b..].iter().all(|&v| v == want),
                    "path {path} frame {frame}"
                );
            }
        }
    }
}
