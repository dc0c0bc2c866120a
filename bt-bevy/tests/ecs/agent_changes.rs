//! The change ticks of the agent components a plugin ticks: exactly the
//! rows whose brain ticked in a run are marked changed, and a column that
//! keeps Bevy's summary tick says it changed, entity by entity and by table
//! chunks, in chunks where every brain ticks and in chunks whose brains
//! have rates.

use std::collections::BTreeMap;

use bevy_app::{App, Update};
use bevy_ecs::change_detection::ContiguousRef;
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainSystems, Decisions, Rate, TickRate};
use bt_core::{behavior, decider, group, tree};

use crate::common::app;

/// An agent whose column keeps a summary tick.
#[derive(Component, Default)]
#[component(summary_tick)]
struct Counter {
    ticks: u32,
}
bt_bevy::component_agent!(Counter);

behavior! { COUNT: Counter, tick: |c, _cx| { c.ticks += 1; true } }
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
    for i in 0..300 {
        let mut e = app
            .world_mut()
            .spawn((Counter::default(), Brain::new(&COUNTER)));
        match i % 4 {
            0 | 2 => e.insert(Decisions::default()),
            1 => e.insert(TickRate::new(Rate::Every(2)).unwrap()),
            _ => e.insert(TickRate::new(Rate::Every(3)).unwrap()),
        };
    }
    app.world_mut().spawn((
        Counter::default(),
        Brain::new(&COUNTER),
        Decisions::default(),
        TickRate::new(Rate::Every(3)).unwrap(),
    ));
    for _ in 0..12 {
        app.update();
    }
    let seen = app.world().resource::<Seen>();
    for (run, ((moved, marked), summaries)) in seen.moved.iter().zip(&seen.summaries).enumerate() {
        assert!(!moved.is_empty(), "run {run}: nothing ticked");
        assert_eq!(moved, marked, "run {run}: the counters marked changed");
        assert_eq!(summaries.len(), 3, "run {run}: three tables");
        for (table, &(any, summary)) in summaries.iter().enumerate() {
            assert_eq!(
                summary,
                Some(any),
                "run {run}, table {table}: the summary tick against a counter that moved"
            );
        }
    }
    // The lone counter's table is untouched two runs in three, so the
    // summary is tested both ways.
    assert!(seen.summaries.iter().flatten().any(|&(any, _)| !any));
}
