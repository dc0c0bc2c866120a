//! What each brain keeps of its last tick, and its change tick, against
//! bt-core's `tick` of the same crowd: in the four ways the plugin ticks a
//! tree without shared state (entity by entity or by table chunks, the
//! plugin made from the tree's `static` or from its marker type), with
//! some brains on entities without `Decisions`.

use std::collections::BTreeSet;

use bevy_app::Update;
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainStats, BrainSystems, TreeMemory};
use bt_core::{StaticTree, TickInput, tick};

use crate::common::{app, clock};
use crate::crowd::{creature, world_step};
use crate::w1_core::{Agent, W1, W1Memory};

/// The W1 tree as a type, as `tree!` declares one with `marker:` (the
/// tree source is the benchmarks', shared).
enum W1Tree {}

impl StaticTree for W1Tree {
    type Tree = <W1Memory as TreeMemory>::Tree;

    fn tree() -> &'static Self::Tree {
        &W1
    }
}

/// The brains whose change tick moved in the last run of the brains' tick.
#[derive(Resource, Default)]
struct Marked(BTreeSet<Entity>);

/// Notes the brains marked changed since this system last ran, right after
/// the brains' tick.
fn note_marked(mut marked: ResMut<Marked>, brains: Query<Entity, Changed<Brain<W1Memory>>>) {
    marked.0 = brains.iter().collect();
}

#[test]
fn entity_by_entity_brains_keep_the_report_and_mark_only_a_changed_path() {
    keeps_the_reports(false, false);
}

#[test]
fn dense_brains_keep_the_report_and_mark_only_a_changed_path() {
    keeps_the_reports(true, false);
}

#[test]
fn brains_of_a_plugin_made_from_the_marker_keep_the_report_and_mark_only_a_changed_path() {
    keeps_the_reports(false, true);
}

#[test]
fn dense_brains_of_a_plugin_made_from_the_marker_keep_the_report_and_mark_only_a_changed_path() {
    keeps_the_reports(true, true);
}

/// Every run: each brain's `last_tick` is what `tick` returns for the same
/// agent, memory and input, and its change tick moved exactly when that
/// report says the active path changed. One creature in three has no
/// `Decisions` (another table, which ticks with none and is not stepped).
fn keeps_the_reports(dense: bool, marker: bool) {
    const N: usize = 600;
    const FRAMES: usize = 120;
    let mut app = app();
    match (dense, marker) {
        (false, false) => app.add_plugins(BrainPlugin::new(&W1).in_schedule(Update)),
        (true, false) => app.add_plugins(BrainPlugin::new(&W1).in_schedule(Update).dense()),
        (false, true) => app.add_plugins(BrainPlugin::of::<W1Tree>().in_schedule(Update)),
        (true, true) => app.add_plugins(BrainPlugin::of::<W1Tree>().in_schedule(Update).dense()),
    };
    app.init_resource::<Marked>().add_systems(
        Update,
        (
            world_step.before(BrainSystems::Tick),
            note_marked.after(BrainSystems::Tick),
        ),
    );
    let flagged = |i: usize| !i.is_multiple_of(3);
    let entities: Vec<Entity> = (0..N)
        .map(|i| {
            let (agent, decisions, brain) = creature(i);
            let mut e = app.world_mut().spawn((agent, brain));
            if flagged(i) {
                e.insert(decisions);
            }
            e.id()
        })
        .collect();
    // The reference, seeded as the plugin seeds its brains: the k-th brain
    // that lands in the crowd with k, from 1.
    let mut agents: Vec<Agent> = (0..N).map(|i| creature(i).0).collect();
    let mut memories: Vec<W1Memory> = (1..=N as u64).map(|k| W1.new_memory(k)).collect();
    let (mut marked, mut kept) = (0, 0);
    for frame in 0..FRAMES {
        app.update();
        let (now, dt) = clock(&app);
        let reports: Vec<_> = (agents.iter_mut().zip(&mut memories).enumerate())
            .map(|(i, (a, m))| {
                let mut input = TickInput::new(now, dt);
                if flagged(i) {
                    a.world.step();
                    input = input.with_decision(a.world.flags());
                }
                tick(&W1, a, m, &input)
            })
            .collect();
        let world = app.world_mut();
        let changed = &world.resource::<Marked>().0;
        for (i, e) in entities.iter().enumerate() {
            let brain = world.get::<Brain<W1Memory>>(*e).unwrap();
            let report = &reports[i];
            assert_eq!(
                brain.last_tick(),
                report.as_ref(),
                "frame {frame}, entity {i}"
            );
            let moved = report.as_ref().map_or(true, |r| r.changed());
            assert_eq!(changed.contains(e), moved, "frame {frame}, entity {i}");
            if frame > 0 {
                marked += usize::from(moved);
                kept += usize::from(!moved);
            }
        }
        let stats = world.resource::<BrainStats<W1Memory>>();
        let switched = reports
            .iter()
            .filter(|r| r.as_ref().map_or(true, |r| r.changed()));
        assert_eq!(stats.changed, switched.count() as u64, "frame {frame}");
    }
    // Both kinds of tick came up often.
    assert!(
        marked > N * FRAMES / 10 && kept > N * FRAMES / 2,
        "{marked} {kept}"
    );
}
