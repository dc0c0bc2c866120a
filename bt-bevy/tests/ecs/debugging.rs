//! Debugging one picked entity, and stimuli from a component.

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, DebugBrain, Senses};
use bt_core::{Action, behavior, decider, group, tree};

use crate::common::app;

#[derive(Component, Default)]
struct Guard;
bt_bevy::component_agent!(Guard);

bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Sense: u64 {
        const HIT = 1 << 0;
    }
}

// Calls for help while hit: a deferred action the game carries out.
behavior! { CALL_FOR_HELP: Guard,
    launch: |_g, _cx| Some(Action::new(1, 0)),
    tick: |_g, cx| cx.stimuli & Sense::HIT.bits() != 0,
}
behavior! { LOOK_AROUND: Guard }
behavior! { STAND: Guard }
decider! { HELP: Guard => CALL_FOR_HELP, stimuli_all: Sense::HIT }
decider! { WATCH: Guard => LOOK_AROUND, every: 0.1 }
decider! { IDLE: Guard => STAND }
group! { GUARD_ROOT: Guard, prioritized [HELP, WATCH, IDLE] }
tree! { GUARD: Guard = GUARD_ROOT, memory: GuardMemory }

type GuardSenses = Senses<Sense, 4>;

#[test]
fn a_debugged_entity_gets_its_trace_and_dump_and_the_others_none() {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&GUARD)
            .in_schedule(Update)
            .with_senses::<GuardSenses>(),
    );
    let picked = app
        .world_mut()
        .spawn((
            Guard,
            Brain::new(&GUARD),
            GuardSenses::default(),
            DebugBrain::quiet(),
        ))
        .id();
    let other = app
        .world_mut()
        .spawn((Guard, Brain::new(&GUARD), GuardSenses::default()))
        .id();
    let mut text = String::new();
    for frame in 0..5 {
        if frame == 2 {
            // Hit for 0.09 s: three frames at 30 per second.
            for e in [picked, other] {
                let mut senses = app.world_mut().get_mut::<GuardSenses>(e).unwrap();
                senses.set(Sense::HIT, 0, Some(0.09)).unwrap();
            }
        }
        app.update();
        let debug = app.world().get::<DebugBrain>(picked).unwrap();
        text.push_str(&format!(
            "## frame {frame}\n{}-- state\n{}",
            debug.trace(),
            debug.dump()
        ));
        let [p, o] = [picked, other].map(|e| {
            app.world()
                .get::<Brain<GuardMemory>>(e)
                .unwrap()
                .running_decider()
        });
        assert_eq!(p, o, "frame {frame}: traced or not, the same decision");
    }
    assert!(app.world().get::<DebugBrain>(other).is_none());
    insta::assert_snapshot!(text);
}

#[test]
fn stimuli_from_the_senses_component_expire_with_the_clock() {
    stimuli_expire(false);
}

#[test]
fn dense_ticking_ages_the_senses_too() {
    stimuli_expire(true);
}

#[test]
#[should_panic(expected = "call `dense()` after `with_senses()`")]
fn dense_before_with_senses_is_refused() {
    let mut app = app();
    let plugin = BrainPlugin::new(&GUARD).dense();
    app.add_plugins(plugin.with_senses::<GuardSenses>());
}

fn stimuli_expire(dense: bool) {
    let mut app = app();
    let plugin = BrainPlugin::new(&GUARD)
        .in_schedule(Update)
        .with_senses::<GuardSenses>();
    if dense {
        app.add_plugins(plugin.dense());
    } else {
        app.add_plugins(plugin);
    }
    let guard = app
        .world_mut()
        .spawn((Guard, Brain::new(&GUARD), GuardSenses::default()))
        .id();
    let running = |app: &App| {
        app.world()
            .get::<Brain<GuardMemory>>(guard)
            .unwrap()
            .running_decider()
    };
    app.update();
    assert_eq!(running(&app), Some("WATCH"));
    app.world_mut()
        .get_mut::<GuardSenses>(guard)
        .unwrap()
        .set(Sense::HIT, 0, Some(0.09))
        .unwrap();
    let mut helping = 0;
    for _ in 0..8 {
        app.update();
        helping += usize::from(running(&app) == Some("HELP"));
    }
    assert_eq!(
        helping, 3,
        "live for the frames less than 0.09 s after it was set"
    );
}
