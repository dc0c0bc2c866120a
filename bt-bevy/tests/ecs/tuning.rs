//! A tree's tunables in a Bevy app: the `BrainTuning` resource reads and
//! changes the crowd's values; a change takes effect when the crowd's next
//! run starts, for every brain of the run alike, on every tick path
//! (parallel entity by entity, with senses, by table chunks, from the
//! tree's marker type, traced, recorded, in entity order and in two phases
//! on every thread; read through contexts typed by the table too), and
//! resets no brain's state.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{
    Brain, BrainPlugin, BrainShared, BrainSystems, BrainTuning, DebugBrain, Decisions,
    RecordBrains, Senses, TreeMemory,
};
use bt_core::{TreeShared, TuneError, TuneValue, behavior, group, leaf, tree, tunables};

use crate::common::app;

tunables! { pub HERD_TUNING:
    /// Health fraction below which a deer flees.
    FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    /// Deer grazing side by side at the best spot.
    GRAZERS: i64 = 3, 1..=10;
}

tunables! { pub PACK_TUNING:
    /// Whether wolves howl.
    HOWL: bool = false;
}

/// A deer: its health, whether it is hungry, and the `FLEE_BELOW` each of
/// its ticks read.
#[derive(Component, Default)]
pub struct Deer {
    pub health: f64,
    pub hungry: bool,
    pub read: Vec<f64>,
    /// Set by a test: its next tick stages this threshold, in the middle
    /// of the run.
    pub tunes: Option<(Arc<TreeShared>, f64)>,
}
bt_bevy::component_agent!(Deer);

impl Deer {
    pub fn new(health: f64) -> Self {
        Deer {
            health,
            ..Deer::default()
        }
    }
}

// The root's behavior ticks at every tick of the brain.
behavior! { HERDING: Deer,
    tick: |d, cx| {
        d.read.push(cx.tuned(FLEE_BELOW));
        if let Some((shared, v)) = d.tunes.take() {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
        true
    },
}
// The same, its context typed by the table: it reads what the untyped
// context reads.
behavior! { HERDING_TYPED: Deer, tunables: HERD_TUNING,
    tick: |d, cx| {
        let read = cx.tuned(FLEE_BELOW);
        assert_eq!(read, cx.untyped().tuned(FLEE_BELOW));
        d.read.push(read);
        if let Some((shared, v)) = d.tunes.take() {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
        true
    },
}
leaf! { FLEE: Deer, when: |d, x| d.health < x.tuned(FLEE_BELOW) }
leaf! { GRAZE: Deer }
leaf! { GRAZE_TOGETHER: Deer, gate: tunable(GRAZERS), when: |d, _| d.hungry,
    tick: |d, _| d.hungry,
}
group! { ROOT: Deer, prioritized [FLEE, GRAZE], behavior: HERDING }
group! { GATED_ROOT: Deer, prioritized [FLEE, GRAZE_TOGETHER, GRAZE], behavior: HERDING }
group! { TYPED_ROOT: Deer, prioritized [FLEE, GRAZE], behavior: HERDING_TYPED }
// A tree whose brains share nothing, and one with a gate (ticked in
// entity order).
tree! { pub HERD: Deer = ROOT, memory: HerdMemory, tunables: HERD_TUNING, marker: HerdTree }
tree! { pub GATED: Deer = GATED_ROOT, memory: GatedMemory, tunables: HERD_TUNING }
tree! { pub TYPED: Deer = TYPED_ROOT, memory: TypedMemory, tunables: HERD_TUNING }
// Trees of the same memory type as `HERD`: with another table, without
// tunables.
tree! { pub PACK: Deer = ROOT, memory: PackMemory, tunables: PACK_TUNING }
tree! { pub BARE: Deer = ROOT, memory: BareMemory }

bitflags::bitflags! {
    #[derive(Clone, Copy)]
    pub struct Smell: u64 { const WOLF = 1; }
}
type Nose = Senses<Smell, 2>;

/// The healths of the herd of the path tests.
pub const HEALTHS: [f64; 4] = [0.1, 0.28, 0.4, 0.9];

/// At run 3, a system raises `FLEE_BELOW` to 0.5, before the brains tick.
fn tune_at_run_3<M: TreeMemory>(mut run: Local<u32>, tuning: Res<BrainTuning<M>>) {
    if *run == 3 {
        tuning.tune(FLEE_BELOW, 0.5).unwrap();
    }
    *run += 1;
}

/// What one run showed: each deer's running decider and the threshold its
/// tick read.
type Run = Vec<(&'static str, f64)>;

/// Runs the herd of `HEALTHS` (each with what `extra` inserts) for 9
/// frames in an app that `add` sets up, with brains of `brain()`: a system
/// raises `FLEE_BELOW` to 0.5 at run 3, and the last deer's tick at run 6
/// lowers it to 0.3 in the middle of the run.
fn herd_runs<M: TreeMemory<Agent = Deer>>(
    path: &str,
    add: impl FnOnce(&mut App),
    brain: fn() -> Brain<M>,
    extra: impl Fn(&mut EntityWorldMut),
) -> (&str, Vec<Run>) {
    let mut app = app();
    add(&mut app);
    app.add_systems(Update, tune_at_run_3::<M>.before(BrainSystems::Tick));
    let herd: Vec<Entity> = HEALTHS
        .iter()
        .map(|&h| {
            let mut e = app.world_mut().spawn((Deer::new(h), brain()));
            extra(&mut e);
            e.id()
        })
        .collect();
    let mut runs = Vec::new();
    for run in 0..9 {
        if run == 6 {
            let state = Arc::clone(app.world().resource::<BrainShared<M>>().state());
            let mut last = app.world_mut().get_mut::<Deer>(herd[3]).unwrap();
            last.tunes = Some((state, 0.3));
        }
        let changes = app.world().resource::<BrainTuning<M>>().changes();
        app.update();
        let tuning = app.world().resource::<BrainTuning<M>>();
        let in_effect = match run {
            0..3 => 0.25,
            3..7 => 0.5,
            _ => 0.3,
        };
        assert_eq!(tuning.tuned(FLEE_BELOW), in_effect, "{path}, run {run}");
        let changed = u64::from(run == 3 || run == 7);
        assert_eq!(tuning.changes(), changes + changed, "{path}, run {run}");
        let world = app.world();
        runs.push(
            herd.iter()
                .map(|&e| {
                    let leaf = world.get::<Brain<M>>(e).unwrap().running_decider();
                    let read = *world.get::<Deer>(e).unwrap().read.last().unwrap();
                    (leaf.unwrap(), read)
                })
                .collect(),
        );
    }
    (path, runs)
}

/// The runs every path must show.
fn expected() -> Vec<Run> {
    let calm = |t| vec![("FLEE", t), ("GRAZE", t), ("GRAZE", t), ("GRAZE", t)];
    let scared = |t| vec![("FLEE", t), ("FLEE", t), ("FLEE", t), ("GRAZE", t)];
    let mut runs = vec![calm(0.25); 3];
    // In effect at the run of the system that tuned it; the change staged
    // in the middle of run 6 is not read before run 7, by any deer.
    runs.extend([scared(0.5), scared(0.5), scared(0.5), scared(0.5)]);
    // Lowered to 0.3: the deer of health 0.4 goes on fleeing (a change
    // resets no brain's state).
    runs.extend([scared(0.3), scared(0.3)]);
    runs
}

fn none(_: &mut EntityWorldMut) {}

fn with_decisions(e: &mut EntityWorldMut) {
    e.insert(Decisions::default());
}

#[test]
fn a_value_tuned_from_a_system_takes_effect_at_the_next_run_on_every_tick_path() {
    let herd = || Brain::new(&HERD);
    let gated = || Brain::new(&GATED);
    let plugin = || BrainPlugin::new(&HERD).in_schedule(Update);
    let marked = || BrainPlugin::of::<HerdTree>().in_schedule(Update);
    let ordered = |from| {
        BrainPlugin::new(&GATED)
            .in_schedule(Update)
            .parallel_from(from)
    };
    let nose = |e: &mut EntityWorldMut| _ = e.insert(Nose::default());
    let traced = |e: &mut EntityWorldMut| _ = e.insert(DebugBrain::quiet());
    let runs = [
        herd_runs(
            "entity by entity",
            |a| _ = a.add_plugins(plugin()),
            herd,
            none,
        ),
        herd_runs(
            "entity by entity, with senses",
            |a| _ = a.add_plugins(plugin().with_senses::<Nose>()),
            herd,
            nose,
        ),
        herd_runs(
            "table chunks, every brain due",
            |a| _ = a.add_plugins(plugin().dense()),
            herd,
            with_decisions,
        ),
        herd_runs(
            "table chunks, brain by brain",
            |a| _ = a.add_plugins(plugin().dense()),
            herd,
            none,
        ),
        herd_runs("marker type", |a| _ = a.add_plugins(marked()), herd, none),
        herd_runs(
            "marker type, table chunks",
            |a| _ = a.add_plugins(marked().dense()),
            herd,
            with_decisions,
        ),
        herd_runs(
            "typed context, entity by entity",
            |a| _ = a.add_plugins(BrainPlugin::new(&TYPED).in_schedule(Update)),
            || Brain::new(&TYPED),
            none,
        ),
        herd_runs(
            "typed context, table chunks",
            |a| _ = a.add_plugins(BrainPlugin::new(&TYPED).in_schedule(Update).dense()),
            || Brain::new(&TYPED),
            with_decisions,
        ),
        herd_runs("traced", |a| _ = a.add_plugins(plugin()), herd, traced),
        herd_runs(
            "recorded",
            |a| _ = a.add_plugins(plugin().record(RecordBrains::all(4))),
            herd,
            none,
        ),
        herd_runs(
            "entity order",
            |a| _ = a.add_plugins(ordered(u32::MAX)),
            gated,
            none,
        ),
        herd_runs(
            "two phases on every thread",
            |a| _ = a.add_plugins(ordered(0)),
            gated,
            none,
        ),
    ];
    let want = expected();
    for (path, runs) in runs {
        for (run, (got, want)) in runs.iter().zip(&want).enumerate() {
            assert_eq!(got, want, "{path}, run {run}");
        }
    }
}

/// The gate's count and each deer's running decider after each run.
fn gate_runs(parallel: bool) -> Vec<(u32, Vec<&'static str>)> {
    let mut app = app();
    let plugin = BrainPlugin::new(&GATED).in_schedule(Update);
    app.add_plugins(plugin.parallel_from(if parallel { 0 } else { u32::MAX }));
    let herd: Vec<Entity> = (0..5)
        .map(|_| {
            let deer = Deer {
                hungry: true,
                ..Deer::new(0.9)
            };
            app.world_mut().spawn((deer, Brain::new(&GATED))).id()
        })
        .collect();
    let spot = GATED.find("GRAZE_TOGETHER").unwrap();
    let mut runs = Vec::new();
    for run in 0..7 {
        let tuning = app.world().resource::<BrainTuning<GatedMemory>>();
        match run {
            2 => tuning.tune(GRAZERS, 1).unwrap(),
            5 => tuning.tune(GRAZERS, 3).unwrap(),
            _ => {}
        }
        if run == 3 {
            for &e in &herd[..2] {
                app.world_mut().get_mut::<Deer>(e).unwrap().hungry = false;
            }
        }
        app.update();
        let world = app.world();
        let shared = world.resource::<BrainShared<GatedMemory>>();
        let leaves = herd
            .iter()
            .map(|&e| {
                let brain = world.get::<Brain<GatedMemory>>(e).unwrap();
                brain.running_decider().unwrap()
            })
            .collect();
        runs.push((shared.state().gate_count(spot).unwrap(), leaves));
    }
    runs
}

/// A gate lowered below the brains inside keeps them inside and admits no
/// one new, those that leave included, until fewer than its new size are
/// inside; raised, it admits more from the next run. In entity order and
/// in two phases alike.
#[test]
fn a_gate_lowered_below_its_holders_admits_no_one_new_until_they_leave() {
    let (g, t) = ("GRAZE", "GRAZE_TOGETHER");
    let want = vec![
        (3, vec![t, t, t, g, g]),
        (3, vec![t, t, t, g, g]),
        // Lowered to 1: the three inside stay.
        (3, vec![t, t, t, g, g]),
        // Two leave: one is inside, and the gate is full.
        (1, vec![g, g, t, g, g]),
        (1, vec![g, g, t, g, g]),
        // Raised to 3: two hungry deer get in, in entity order.
        (3, vec![g, g, t, t, t]),
        (3, vec![g, g, t, t, t]),
    ];
    assert_eq!(gate_runs(false), want, "entity order");
    assert_eq!(gate_runs(true), want, "two phases");
}

/// A change is staged: the value in effect is the old one until the
/// crowd's next run. A value the tunable cannot take changes nothing.
#[test]
fn a_change_is_staged_until_the_next_run_and_a_bad_value_changes_nothing() {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update));
    let deer = app
        .world_mut()
        .spawn((Deer::new(0.28), Brain::new(&HERD)))
        .id();
    app.update();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    assert_eq!(tuning.tree().name(), "HERD");
    assert!(std::ptr::eq(tuning.tunables(), &HERD_TUNING));
    tuning
        .tune_named("FLEE_BELOW", TuneValue::Float(0.3))
        .unwrap();
    assert_eq!(tuning.tuned(FLEE_BELOW), 0.25);
    assert_eq!(tuning.changes(), 0);
    let err = tuning.tune(FLEE_BELOW, 1.5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tunable `FLEE_BELOW`: 1.5 is outside 0..=1"
    );
    let err = tuning.tune(HOWL, true).unwrap_err();
    assert!(matches!(err, TuneError::OtherTable { .. }), "{err}");
    let err = tuning.tune_named("RUN_FOR", TuneValue::Int(3)).unwrap_err();
    assert_eq!(err.to_string(), "tree `HERD` has no tunable `RUN_FOR`");
    let running = |app: &App| {
        app.world()
            .get::<Brain<HerdMemory>>(deer)
            .unwrap()
            .running_decider()
    };
    assert_eq!(running(&app), Some("GRAZE"));
    app.update();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    assert_eq!((tuning.tuned(FLEE_BELOW), tuning.changes()), (0.3, 1));
    assert_eq!(tuning.tuned(GRAZERS), 3);
    assert_eq!(running(&app), Some("FLEE"));
    assert_eq!(
        format!("{tuning:?}"),
        r#"[CrowdTuning { tree: "HERD", tunables: "HERD_TUNING", values: [("FLEE_BELOW", 0.3), ("GRAZERS", 3)], changes: 1, .. }]"#
    );
}

fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("it panics");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast::<&str>().map(|s| s.to_string()).unwrap(),
    }
}

/// Trees of one memory type: each tree with tunables has its own, named
/// with `crowd(&TREE)`; a call that names no tree panics saying so, and
/// a tree without tunables has none.
#[test]
fn several_trees_of_one_memory_type_are_named_as_in_brain_shared() {
    assert_eq!(
        std::any::TypeId::of::<HerdMemory>(),
        std::any::TypeId::of::<PackMemory>()
    );
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update))
        .add_plugins(BrainPlugin::new(&BARE).in_schedule(Update));
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    // The tree without tunables has none: the one with them is the tree.
    assert_eq!(tuning.crowds().len(), 1);
    assert!(tuning.crowd(&BARE).is_none());
    assert_eq!(tuning.tree().name(), "HERD");

    app.add_plugins(BrainPlugin::new(&PACK).in_schedule(Update));
    let wolf = app
        .world_mut()
        .spawn((Deer::new(0.9), Brain::new(&PACK)))
        .id();
    let deer = app
        .world_mut()
        .spawn((Deer::new(0.28), Brain::new(&HERD)))
        .id();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    let said = panic_text(|| _ = tuning.tuned(FLEE_BELOW));
    assert_eq!(
        said,
        format!(
            "BrainTuning<{}>::tuned: this memory type runs the trees `HERD` and `PACK` with \
             tunables; name one with `crowd(&TREE)`",
            std::any::type_name::<HerdMemory>()
        )
    );
    let herd = tuning.crowd(&HERD).unwrap();
    let pack = tuning.crowd(&PACK).unwrap();
    herd.tune(FLEE_BELOW, 0.3).unwrap();
    pack.tune(HOWL, true).unwrap();
    assert!(pack.tune(FLEE_BELOW, 0.3).is_err());
    app.update();
    let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
    let (herd, pack) = (tuning.crowd(&HERD).unwrap(), tuning.crowd(&PACK).unwrap());
    assert_eq!((herd.tuned(FLEE_BELOW), herd.changes()), (0.3, 1));
    assert_eq!((pack.tuned(HOWL), pack.changes()), (true, 1));
    // Each tree's brains read their own crowd's values.
    let read = |e| *app.world().get::<Deer>(e).unwrap().read.last().unwrap();
    assert_eq!((read(deer), read(wolf)), (0.3, 0.25));
}

/// A plugin of a tree without tunables adds no resource for them.
#[test]
fn a_tree_without_tunables_has_no_tuning_resource() {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&BARE).in_schedule(Update));
    assert!(
        app.world()
            .get_resource::<BrainTuning<BareMemory>>()
            .is_none()
    );
}

/// Two apps of one tree updated at the same time on two threads, each with
/// its own threshold: every tick of every deer reads its own app's, on
/// every thread of each app's pool, entity by entity and in two phases.
#[test]
fn two_apps_of_one_tree_updated_at_once_each_read_their_own_values() {
    let frames = 30;
    let run = |flee_below: f64, ordered: bool| {
        std::thread::spawn(move || {
            let mut app = app();
            if ordered {
                app.add_plugins(
                    BrainPlugin::new(&GATED)
                        .in_schedule(Update)
                        .parallel_from(1),
                );
            } else {
                app.add_plugins(BrainPlugin::new(&HERD).in_schedule(Update));
            }
            let deer: Vec<Entity> = (0..64)
                .map(|i| {
                    let d = Deer::new(f64::from(i) / 64.0);
                    if ordered {
                        app.world_mut().spawn((d, Brain::new(&GATED))).id()
                    } else {
                        app.world_mut().spawn((d, Brain::new(&HERD))).id()
                    }
                })
                .collect();
            if ordered {
                let tuning = app.world().resource::<BrainTuning<GatedMemory>>();
                tuning.tune(FLEE_BELOW, flee_below).unwrap();
            } else {
                let tuning = app.world().resource::<BrainTuning<HerdMemory>>();
                tuning.tune(FLEE_BELOW, flee_below).unwrap();
            }
            for _ in 0..frames {
                app.update();
            }
            let world = app.world();
            (deer.iter())
                .flat_map(|&e| world.get::<Deer>(e).unwrap().read.clone())
                .collect::<Vec<f64>>()
        })
    };
    for ordered in [false, true] {
        let (a, b) = (run(0.5, ordered), run(0.75, ordered));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        assert_eq!(a, vec![0.5; 64 * frames], "ordered: {ordered}");
        assert_eq!(b, vec![0.75; 64 * frames], "ordered: {ordered}");
    }
}
