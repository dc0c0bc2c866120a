//! The W1 creature crowd through the plugin against bt-core's own crowd
//! tick: the same decisions, entity by entity, frame by frame.

use std::collections::BTreeMap;

use bevy_app::{App, Update};
use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainStats, BrainSystems, Decisions};
use bt_core::{ItemIdx, TickInput, tick, tick_all};

use crate::common::{app, clock};
use crate::w1_core::{Agent, W1, W1Memory};
use crate::world::{Beh, World};

impl Component for Agent {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}
bt_bevy::component_agent!(Agent);

/// The world step of every creature, then its decision flags.
pub(crate) fn world_step(mut creatures: Query<(&mut Agent, &mut Decisions)>) {
    creatures.par_iter_mut().for_each(|(mut a, mut d)| {
        a.world.step();
        d.set(a.world.flags());
    });
}

/// The W1 crowd's app: brains ticked entity by entity, or table chunk by
/// table chunk (`dense`).
fn w1_app(dense: bool) -> App {
    w1_app_with(dense, |plugin| plugin)
}

/// [`w1_app`], its plugin set up by `setup` first (a budget, say).
pub(crate) fn w1_app_with(
    dense: bool,
    setup: impl FnOnce(BrainPlugin<W1Memory>) -> BrainPlugin<W1Memory>,
) -> App {
    let mut app = app();
    let plugin = setup(BrainPlugin::new(&W1).in_schedule(Update));
    if dense {
        app.add_plugins(plugin.dense());
    } else {
        app.add_plugins(plugin);
    }
    app.add_systems(Update, world_step.before(BrainSystems::Tick));
    app
}

pub(crate) fn creature(i: usize) -> (Agent, Decisions, Brain<W1Memory>) {
    let agent = Agent {
        world: World::spawn(i),
        activations: [0; Beh::COUNT],
    };
    (agent, Decisions::default(), Brain::new(&W1))
}

/// The active behavior of every brain, by entity.
fn leaves(app: &mut App) -> BTreeMap<Entity, Option<ItemIdx>> {
    let world = app.world_mut();
    world
        .query::<(Entity, &Brain<W1Memory>)>()
        .iter(world)
        .map(|(e, b)| (e, b.memory().leaf()))
        .collect()
}

#[test]
fn every_entity_decides_as_tick_all_does_with_the_same_seeds_and_inputs() {
    decides_as_tick_all(false);
}

#[test]
fn dense_ticking_decides_as_tick_all_does() {
    decides_as_tick_all(true);
}

fn decides_as_tick_all(dense: bool) {
    const N: usize = 1000;
    const FRAMES: usize = 200;
    let mut app = w1_app(dense);
    let entities: Vec<Entity> = (0..N)
        .map(|i| app.world_mut().spawn(creature(i)).id())
        .collect();
    // The reference: plain slices, seeded as the plugin seeds its brains.
    let mut agents: Vec<Agent> = (0..N).map(|i| creature(i).0).collect();
    // The plugin seeds the k-th brain of a crowd with k, from 1.
    let mut memories: Vec<W1Memory> = (1..=entities.len() as u64)
        .map(|k| W1.new_memory(k))
        .collect();
    let mut switches = 0;
    for frame in 0..FRAMES {
        app.update();
        let (now, dt) = clock(&app);
        for a in &mut agents {
            a.world.step();
        }
        let report = tick_all(&W1, &mut agents, &mut memories, |_, a| {
            TickInput::new(now, dt).with_decision(a.world.flags())
        });
        switches += report.changed;
        let got = leaves(&mut app);
        for (i, e) in entities.iter().enumerate() {
            assert_eq!(got[e], memories[i].leaf(), "frame {frame}, entity {i}");
        }
        let stats = app.world().resource::<BrainStats<W1Memory>>();
        assert_eq!(
            (stats.ticked, stats.changed),
            (N as u64, u64::from(report.changed))
        );
    }
    assert!(
        switches > (N * FRAMES / 10) as u32,
        "the crowd kept switching"
    );
    // The check-sum table: every behavior activated as often.
    let world = app.world_mut();
    let mut by_entity = world.query::<(Entity, &Agent)>();
    for (i, e) in entities.iter().enumerate() {
        let (_, a) = by_entity.get(world, *e).unwrap();
        assert_eq!(a.activations, agents[i].activations, "entity {i}");
    }
}

#[test]
fn entities_spawned_and_despawned_while_running_decide_as_alone() {
    spawned_and_despawned(false);
}

#[test]
fn dense_ticking_follows_spawns_and_despawns() {
    spawned_and_despawned(true);
}

fn spawned_and_despawned(dense: bool) {
    const FRAMES: usize = 120;
    let mut app = w1_app(dense);
    // The reference: each live entity's agent and memory, ticked alone.
    let mut reference: BTreeMap<Entity, (Agent, W1Memory)> = BTreeMap::new();
    let mut spawned = 0;
    let mut spawn = |app: &mut App, reference: &mut BTreeMap<_, _>| {
        let e = app.world_mut().spawn(creature(spawned)).id();
        // The k-th brain that lands in the crowd is seeded with k.
        let seed = spawned as u64 + 1;
        reference.insert(e, (creature(spawned).0, W1.new_memory(seed)));
        spawned += 1;
    };
    for _ in 0..300 {
        spawn(&mut app, &mut reference);
    }
    for frame in 0..FRAMES {
        // Every third frame: despawn every fifth entity, spawn forty.
        if frame % 3 == 1 {
            let gone: Vec<Entity> = reference.keys().copied().step_by(5).collect();
            for e in gone {
                app.world_mut().despawn(e);
                reference.remove(&e);
            }
            for _ in 0..40 {
                spawn(&mut app, &mut reference);
            }
        }
        app.update();
        let (now, dt) = clock(&app);
        for (a, m) in reference.values_mut() {
            a.world.step();
            let input = TickInput::new(now, dt).with_decision(a.world.flags());
            tick(&W1, a, m, &input).unwrap();
        }
        let got = leaves(&mut app);
        assert_eq!(got.len(), reference.len(), "frame {frame}");
        for (e, (_, m)) in &reference {
            assert_eq!(got[e], m.leaf(), "frame {frame}, {e}");
        }
        let stats = app.world().resource::<BrainStats<W1Memory>>();
        assert_eq!(stats.ticked, reference.len() as u64, "frame {frame}");
    }
    assert!(
        spawned > 1000,
        "entity indices were reused: {spawned} spawned"
    );
}
