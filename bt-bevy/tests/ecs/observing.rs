//! Observation changes no decision: the same crowd, with a gate, a
//! cooldown and a group role, makes the same decisions with or without
//! `DebugBrain` and the flight recorder, however they are spread over it.

use bevy_app::Update;
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, DebugBrain, Rate, RecordBrains, Recorded, TickRate};
use bt_core::{behavior, decider, group, tree};

use crate::common::app;

#[derive(Component, Default)]
struct Beast {
    thirst: u32,
    energy: u32,
}
bt_bevy::component_agent!(Beast);

behavior! { DRINK: Beast, tick: |b, _cx| { b.thirst = b.thirst.saturating_sub(4); b.thirst > 0 } }
behavior! { HOWL: Beast, tick: |_b, cx| cx.time_active() < 0.1 }
behavior! { HUNT: Beast, tick: |b, cx| { b.energy = b.energy.saturating_sub(2); cx.time_active() < 0.2 } }
behavior! { WANDER: Beast, tick: |b, _cx| { b.thirst += 1; b.energy += 1; b.thirst % 4 != 0 } }
// At most three at the waterhole, a howl a quarter second at most, and the
// hunt only in pairs.
decider! { AT_WATER: Beast => DRINK, when: |b, _| b.thirst > 6, gate: 3 }
decider! { HOWLING: Beast => HOWL, when: |b, _| b.energy % 5 == 0, cooldown: 0.25 }
decider! { HUNTING: Beast => HUNT, when: |b, _| b.energy > 9, together: 2 }
decider! { WANDERING: Beast => WANDER }
group! { BEAST_ROOT: Beast, prioritized [HUNTING, AT_WATER, HOWLING, WANDERING] }
tree! { BEASTS: Beast = BEAST_ROOT, memory: BeastMemory }

const N: usize = 200;
const FRAMES: usize = 60;

/// How a run watches the crowd.
#[derive(Clone, Copy, Debug)]
enum Watch {
    Nothing,
    /// Ticked table chunk by table chunk.
    Dense,
    /// `DebugBrain` on these creatures from the start.
    Debug(&'static [usize]),
    /// `DebugBrain` put on these creatures at frame 20, taken off at 40.
    DebugLater(&'static [usize]),
    /// The recorder, on the creatures marked `Recorded`.
    Recorder(&'static [usize]),
    /// The recorder, on every creature.
    RecordAll,
    /// Both, on different creatures and one in common.
    Both,
}

/// Each creature's running decider at each frame.
fn decisions(watch: Watch) -> Vec<Vec<Option<&'static str>>> {
    let mut app = app();
    let plugin = BrainPlugin::new(&BEASTS).in_schedule(Update);
    match watch {
        Watch::Dense => app.add_plugins(plugin.dense()),
        Watch::Recorder(_) | Watch::Both => app.add_plugins(plugin.record(RecordBrains::marked(8))),
        Watch::RecordAll => app.add_plugins(plugin.record(RecordBrains::all(N))),
        _ => app.add_plugins(plugin),
    };
    let marked = |list: &[usize], i| list.contains(&i);
    let beasts: Vec<Entity> = (0..N)
        .map(|i| {
            let mut e = app.world_mut().spawn((
                Beast {
                    thirst: (i % 11) as u32,
                    energy: (i % 13) as u32,
                },
                Brain::new(&BEASTS),
            ));
            match watch {
                Watch::Debug(list) if marked(list, i) => {
                    e.insert(DebugBrain::quiet());
                }
                Watch::Recorder(list) if marked(list, i) => {
                    e.insert(Recorded);
                }
                Watch::Both if marked(&[0, 7, 150], i) => {
                    e.insert(DebugBrain::quiet());
                }
                _ => {}
            }
            if let Watch::Both = watch
                && marked(&[7, 60, 199], i)
            {
                e.insert(Recorded);
            }
            e.id()
        })
        .collect();
    let mut out = vec![Vec::new(); N];
    for frame in 0..FRAMES {
        if let Watch::DebugLater(list) = watch {
            for &i in list {
                let mut e = app.world_mut().entity_mut(beasts[i]);
                match frame {
                    20 => {
                        e.insert(DebugBrain::quiet());
                    }
                    40 => {
                        e.remove::<DebugBrain>();
                    }
                    _ => {}
                }
            }
        }
        app.update();
        for (i, &e) in beasts.iter().enumerate() {
            let brain = app.world().get::<Brain<BeastMemory>>(e).unwrap();
            out[i].push(brain.running_decider());
        }
    }
    // The tree does what it is here for: the gate, the cooldown and the
    // role each let some in.
    let all: Vec<_> = out.iter().flatten().flatten().collect();
    for name in ["AT_WATER", "HOWLING", "HUNTING", "WANDERING"] {
        assert!(all.iter().any(|&&n| n == name), "{watch:?}: no {name}");
    }
    out
}

/// The first creature and frame where `run` differs from `base`.
fn first_difference(
    base: &[Vec<Option<&'static str>>],
    run: &[Vec<Option<&'static str>>],
) -> Option<String> {
    (0..FRAMES).find_map(|frame| {
        (0..N).find_map(|i| {
            (base[i][frame] != run[i][frame]).then(|| {
                format!(
                    "creature {i}, frame {frame}: {:?} unwatched, {:?} watched",
                    base[i][frame], run[i][frame]
                )
            })
        })
    })
}

#[test]
fn debugging_and_recording_change_no_decision_of_a_crowd_with_a_gate_a_cooldown_and_a_role() {
    let base = decisions(Watch::Nothing);
    for watch in [
        Watch::Nothing,
        Watch::Dense,
        Watch::Debug(&[0]),
        Watch::Debug(&[3, 50, 51, 52, 120, 199]),
        Watch::DebugLater(&[1, 2, 90, 180]),
        Watch::Recorder(&[0, 10, 100, 190]),
        Watch::RecordAll,
        Watch::Both,
    ] {
        let run = decisions(watch);
        if let Some(d) = first_difference(&base, &run) {
            panic!("{watch:?}: {d}");
        }
    }
}

// A random group: each brain's draws come from its own generator. The
// recorder's resource moves the ids of the entities spawned after it; the
// brains' seeds, and so their draws, must not move.
behavior! { ROAM: Beast }
behavior! { LOOK: Beast }
decider! { ROAMING: Beast => ROAM, decide: |b, _| 1.0 + b.thirst as f32 }
decider! { LOOKING: Beast => LOOK, decide: |_b, _| 0.7 }
group! { IDLE: Beast, random [ROAMING, LOOKING] }
tree! { IDLERS: Beast = IDLE, memory: IdlerMemory }

#[test]
fn recording_a_whole_tree_moves_no_random_draw() {
    let run = |record: bool| {
        let mut app = app();
        let mut plugin = BrainPlugin::new(&IDLERS).in_schedule(Update);
        if record {
            plugin = plugin.record(RecordBrains::all(64));
        }
        app.add_plugins(plugin);
        let beasts: Vec<Entity> = (0..32)
            .map(|_| {
                app.world_mut()
                    .spawn((Beast::default(), Brain::new(&IDLERS)))
                    .id()
            })
            .collect();
        let mut seen = Vec::new();
        for _ in 0..10 {
            app.update();
            seen.push(
                beasts
                    .iter()
                    .map(|&e| {
                        let brain = app.world().get::<Brain<IdlerMemory>>(e).unwrap();
                        brain.running_decider()
                    })
                    .collect::<Vec<_>>(),
            );
        }
        if record {
            assert!(
                beasts
                    .iter()
                    .all(|&e| app.world().get::<Recorded>(e).is_some()),
                "every brain is recorded"
            );
        }
        seen
    };
    assert_eq!(run(false), run(true));
}

/// Recording moves no agent id: Bevy keeps each resource in an entity, and
/// the recorder's resource takes the place the plugin holds for it, so the
/// brains spawned after the plugin get the entities they get without it,
/// the same turns at their rates, and make the same decisions.
#[test]
fn recording_moves_no_agent_id_nor_any_turn_at_a_rate() {
    let run = |record: bool| {
        let mut app = app();
        let mut plugin = BrainPlugin::new(&BEASTS).in_schedule(Update).budget(50);
        if record {
            plugin = plugin.record(RecordBrains::all(N));
        }
        app.add_plugins(plugin);
        let beasts: Vec<Entity> = (0..N as u32)
            .map(|i| {
                let beast = Beast {
                    thirst: i % 9,
                    energy: i % 13,
                };
                let rate = TickRate::new(Rate::Every(1 + i % 4)).unwrap();
                app.world_mut()
                    .spawn((beast, Brain::new(&BEASTS), rate))
                    .id()
            })
            .collect();
        let mut seen = Vec::new();
        for _ in 0..FRAMES {
            app.update();
            let world = app.world();
            let brain = |e: Entity| world.get::<Brain<BeastMemory>>(e).unwrap();
            seen.push(
                beasts
                    .iter()
                    .map(|&e| brain(e).running_decider())
                    .collect::<Vec<_>>(),
            );
        }
        (beasts, seen)
    };
    let (plain_ids, plain) = run(false);
    let (recorded_ids, recorded) = run(true);
    assert_eq!(plain_ids, recorded_ids);
    assert_eq!(plain, recorded);
}
