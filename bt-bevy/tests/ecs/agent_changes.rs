//! The change ticks of the agent and sense components a plugin ticks:
//! exactly the rows whose brain ticked in a run are marked changed, and a
//! column that keeps Bevy's summary tick says it changed, entity by entity
//! and by table chunks, in chunks where every brain ticks and in chunks
//! whose brains have rates.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy_app::{App, Update};
use bevy_ecs::change_detection::ContiguousRef;
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainSystems, Decisions, Rate, SenseSource, TickRate};
use bt_core::{behavior, decider, group, tree};

use crate::common::app;

/// An agent whose column keeps a summary tick. It panics at its tick
/// number `panic_at` (0: never).
#[derive(Component, Default)]
#[component(summary_tick)]
struct Counter {
    ticks: u32,
    panic_at: u32,
}
bt_bevy::component_agent!(Counter);

/// A game's own stimuli component, whose column keeps a summary tick: it
/// counts the times the plugin aged it.
#[derive(Component, Default)]
#[component(summary_tick)]
struct Smell {
    aged: u32,
}

impl SenseSource for Smell {
    fn update_bits(&mut self, _dt: f32) -> u64 {
        self.aged += 1;
        0
    }
}

behavior! { COUNT: Counter, tick: |c, _cx| {
    c.ticks += 1;
    assert_ne!(c.ticks, c.panic_at, "the counter's tick panics");
    true
} }
decider! { COUNTING: Counter => COUNT }
group! { ROOT: Counter, prioritized [COUNTING] }
tree! { COUNTER: Counter = ROOT, memory: CounterMemory }

/// What the observer saw after each run of the brains' tick.
#[derive(Resource, Default)]
struct Seen {
    /// Each counter's value when last seen.
    last: BTreeMap<Entity, u32>,
    /// Per run: the counters that moved, and those marked changed.
    moved: Vec<(Vec<Entity>, Vec<Entity>)>,
    /// Per run, per table: whether a counter in it moved, and what its
    /// summary tick says.
    summaries: Vec<Vec<(bool, Option<bool>)>>,
}

fn observe(
    mut seen: ResMut<Seen>,
    counters: Query<(Entity, &Counter)>,
    changed: Query<Entity, Changed<Counter>>,
    tables: Query<(Entity, Ref<Counter>)>,
) {
    let seen = &mut *seen;
    let moved: Vec<Entity> = counters
        .iter()
        .filter(|(e, c)| seen.last.get(e).is_none_or(|&n| n != c.ticks))
        .map(|(e, _)| e)
        .collect();
    for (e, c) in &counters {
        seen.last.insert(e, c.ticks);
    }
    let mut marked: Vec<Entity> = changed.iter().collect();
    marked.sort();
    let mut sorted = moved.clone();
    sorted.sort();
    let summaries = tables
        .contiguous_iter()
        .expect("a dense query")
        .map(|(ids, counters)| {
            let (_, ticks) = ContiguousRef::split(counters);
            (
                ids.iter().any(|e| moved.contains(e)),
                ticks.summary_tick_is_changed(),
            )
        })
        .collect();
    seen.moved.push((sorted, marked));
    seen.summaries.push(summaries);
}

/// What the observer of the stimuli saw: as [`Seen`], for `Smell`.
#[derive(Resource, Default)]
struct SeenSmells(Seen);

fn observe_smells(
    mut seen: ResMut<SeenSmells>,
    smells: Query<(Entity, &Smell)>,
    changed: Query<Entity, Changed<Smell>>,
    tables: Query<(Entity, Ref<Smell>)>,
) {
    let seen = &mut seen.0;
    let mut moved: Vec<Entity> = smells
        .iter()
        .filter(|(e, s)| seen.last.get(e).is_none_or(|&n| n != s.aged))
        .map(|(e, _)| e)
        .collect();
    for (e, s) in &smells {
        seen.last.insert(e, s.aged);
    }
    let summaries = tables
        .contiguous_iter()
        .expect("a dense query")
        .map(|(ids, smells)| {
            let (_, ticks) = ContiguousRef::split(smells);
            (
                ids.iter().any(|e| moved.contains(e)),
                ticks.summary_tick_is_changed(),
            )
        })
        .collect();
    let mut marked: Vec<Entity> = changed.iter().collect();
    marked.sort();
    moved.sort();
    seen.moved.push((moved, marked));
    seen.summaries.push(summaries);
}

#[test]
fn entity_by_entity_the_agents_of_the_brains_ticked_are_marked_changed() {
    marks_the_agents_ticked(false);
}

#[test]
fn by_table_chunks_the_agents_of_the_brains_ticked_are_marked_changed() {
    marks_the_agents_ticked(true);
}

/// 300 counters in three tables: half with `Decisions` and no rate (where
/// the chunked tick takes every row), half every other or every third run,
/// and one with `Decisions`, alone in its table, every third run. Each
/// run, the counters marked changed are those that counted, and each
/// table's summary tick says whether one of its counters did.
fn marks_the_agents_ticked(dense: bool) {
    let mut app: App = app();
    let plugin = BrainPlugin::new(&COUNTER).in_schedule(Update);
    app.add_plugins(if dense { plugin.dense() } else { plugin })
        .init_resource::<Seen>()
        .add_systems(Update, observe.after(BrainSystems::Tick));
    spawn_counters(&mut app, false);
    let seen = run(&mut app, |world| world.resource::<Seen>());
    check(seen, 3);
}

#[test]
fn entity_by_entity_the_senses_of_the_brains_ticked_are_marked_changed() {
    marks_the_senses_aged(false);
}

#[test]
fn by_table_chunks_the_senses_of_the_brains_ticked_are_marked_changed() {
    marks_the_senses_aged(true);
}

/// As [`marks_the_agents_ticked`], with a stimuli component of the game's
/// own on every counter, which the plugin ages at each tick (every chunk
/// then takes the loop that asks each brain whether it is due).
fn marks_the_senses_aged(dense: bool) {
    let mut app: App = app();
    let plugin = BrainPlugin::new(&COUNTER)
        .in_schedule(Update)
        .with_senses::<Smell>();
    app.add_plugins(if dense { plugin.dense() } else { plugin })
        .init_resource::<SeenSmells>()
        .add_systems(Update, observe_smells.after(BrainSystems::Tick));
    spawn_counters(&mut app, true);
    let seen = run(&mut app, |world| &world.resource::<SeenSmells>().0);
    check(seen, 3);
}

/// Spawns the counters of [`marks_the_agents_ticked`], each with a `Smell`
/// if `smell`.
fn spawn_counters(app: &mut App, smell: bool) {
    for i in 0..301 {
        let mut e = app
            .world_mut()
            .spawn((Counter::default(), Brain::new(&COUNTER)));
        if smell {
            e.insert(Smell::default());
        }
        match i % 4 {
            _ if i == 300 => {
                e.insert((Decisions::default(), TickRate::new(Rate::Every(3)).unwrap()))
            }
            0 | 2 => e.insert(Decisions::default()),
            1 => e.insert(TickRate::new(Rate::Every(2)).unwrap()),
            _ => e.insert(TickRate::new(Rate::Every(3)).unwrap()),
        };
    }
}

/// Runs the app 12 times and returns what `seen` reads of its world.
fn run<'a>(app: &'a mut App, seen: impl FnOnce(&'a World) -> &'a Seen) -> &'a Seen {
    for _ in 0..12 {
        app.update();
    }
    seen(app.world())
}

/// Each run: the rows marked changed are those that moved, and each of the
/// `tables` says in its summary tick whether one of its rows moved.
fn check(seen: &Seen, tables: usize) {
    assert_eq!(seen.moved.len(), 12);
    for (run, ((moved, marked), summaries)) in seen.moved.iter().zip(&seen.summaries).enumerate() {
        assert!(!moved.is_empty(), "run {run}: nothing ticked");
        assert_eq!(moved, marked, "run {run}: the rows marked changed");
        assert_eq!(summaries.len(), tables, "run {run}: the tables");
        for (table, &(any, summary)) in summaries.iter().enumerate() {
            assert_eq!(
                summary,
                Some(any),
                "run {run}, table {table}: the summary tick against a row that moved"
            );
        }
    }
    // The lone counter's table is untouched two runs in three, so the
    // summary is tested both ways.
    assert!(seen.summaries.iter().flatten().any(|&(any, _)| !any));
}

#[test]
fn entity_by_entity_a_tick_that_panics_leaves_the_agents_not_ticked_unmarked() {
    a_panic_marks_only_the_agents_ticked(false);
}

#[test]
fn by_table_chunks_a_tick_that_panics_leaves_the_agents_not_ticked_unmarked() {
    a_panic_marks_only_the_agents_ticked(true);
}

/// 64 counters in one table, each ticked every run; the second panics at
/// its third tick, which stops its chunk of the table (Bevy's batches go
/// on with the others, on any thread). In the run that panics, the
/// counters marked changed are those that counted (the one that panicked
/// counted first): the brains the panic left unticked keep their agents'
/// change ticks.
fn a_panic_marks_only_the_agents_ticked(dense: bool) {
    let mut app = app();
    let plugin = BrainPlugin::new(&COUNTER).in_schedule(Update);
    app.add_plugins(if dense { plugin.dense() } else { plugin });
    let counters: Vec<Entity> = (0..64)
        .map(|i| {
            let counter = Counter {
                ticks: 0,
                panic_at: if i == 1 { 3 } else { 0 },
            };
            let brain = Brain::new(&COUNTER);
            app.world_mut()
                .spawn((counter, brain, Decisions::default()))
                .id()
        })
        .collect();
    let state = |app: &App| -> Vec<(u32, bevy_ecs::change_detection::Tick)> {
        let world = app.world();
        let of = |&e: &Entity| {
            let ticks = world.entity(e).get_change_ticks::<Counter>();
            let counter = world.get::<Counter>(e).expect("a counter");
            (counter.ticks, ticks.expect("a counter").changed)
        };
        counters.iter().map(of).collect()
    };
    let mut panicked = None;
    for run in 0..4 {
        let before = state(&app);
        if catch_unwind(AssertUnwindSafe(|| app.update())).is_err() {
            panicked = Some((run, before, state(&app)));
            break;
        }
    }
    let (run, before, after) = panicked.expect("the second counter's third tick panics");
    assert_eq!(run, 2, "the run that panicked");
    let counted: Vec<bool> = before.iter().zip(&after).map(|(b, a)| a.0 != b.0).collect();
    let marked: Vec<bool> = before.iter().zip(&after).map(|(b, a)| a.1 != b.1).collect();
    assert!(counted[1], "the counter that panicked counted");
    if dense {
        // Ticked in order within a chunk: the third row shares the
        // second's, and the panic stopped it.
        assert!(
            !counted[2],
            "a counter after the one that panicked counted: {counted:?}"
        );
    }
    let why = "counters marked changed against those that counted";
    assert_eq!(marked, counted, "{why}");
}
