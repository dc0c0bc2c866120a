//! Two trees whose memory types are the same, in one app: each with its own
//! shared state, tick, messages and stats, told apart by a tag.

use std::any::TypeId;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{ActionMessage, ActionOutcome, Brain, BrainPlugin, BrainShared, BrainStats, Tagged};
use bt_core::{Action, Outcome, behavior, decider, group, tree};

use crate::common::{app, warnings};

#[derive(Component, Default)]
struct Animal {
    grazed: u32,
    prowled: u32,
}
bt_bevy::component_agent!(Animal);

behavior! { FETCH_GRASS: Animal, launch: |_a, cx| Some(Action::new(1, u64::from(cx.agent))) }
behavior! { GRAZE: Animal, tick: |a, _cx| { a.grazed += 1; true } }
decider! { S_FETCHING: Animal => FETCH_GRASS, gate: 1 }
decider! { S_GRAZING: Animal => GRAZE }
group! { S_ROOT: Animal, prioritized [S_FETCHING, S_GRAZING] }
tree! { SHEEP: Animal = S_ROOT, memory: SheepMemory }

behavior! { HUNT: Animal, launch: |_a, cx| Some(Action::new(2, u64::from(cx.agent))) }
behavior! { PROWL: Animal, tick: |a, _cx| { a.prowled += 1; true } }
decider! { W_HUNTING: Animal => HUNT, gate: 3 }
decider! { W_PROWLING: Animal => PROWL }
group! { W_ROOT: Animal, prioritized [W_HUNTING, W_PROWLING] }
tree! { WOLF: Animal = W_ROOT, memory: WolfMemory }

/// The wolves' tag.
struct Wolves;
type WolfBrain = Tagged<WolfMemory, Wolves>;

/// Every action message of each tree, in order.
#[derive(Resource, Default)]
struct Seen {
    sheep: Vec<ActionMessage<SheepMemory>>,
    wolves: Vec<ActionMessage<WolfBrain>>,
}

fn collect(
    mut sheep: MessageReader<ActionMessage<SheepMemory>>,
    mut wolves: MessageReader<ActionMessage<WolfBrain>>,
    mut seen: ResMut<Seen>,
) {
    seen.sheep.extend(sheep.read().copied());
    seen.wolves.extend(wolves.read().copied());
}

fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("it panics");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast::<&str>().map(|s| s.to_string()).unwrap(),
    }
}

#[test]
fn the_two_trees_have_the_same_memory_type() {
    // What the rest of this file is about.
    assert_eq!(TypeId::of::<SheepMemory>(), TypeId::of::<WolfMemory>());
}

#[test]
fn a_second_tree_of_the_same_memory_type_without_a_tag_panics_saying_what_to_do() {
    let text = panic_text(|| {
        app()
            .add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
            .add_plugins(BrainPlugin::new(&WOLF).in_schedule(Update));
    });
    assert!(text.contains("tree `WOLF`"), "{text}");
    assert!(text.contains("tree `SHEEP` already runs"), "{text}");
    assert!(text.contains(".tagged::<Tag>()"), "{text}");
}

#[test]
fn a_brain_without_the_tag_of_its_trees_plugin_warns_naming_the_tag() {
    tree! { LONE_WOLF: Animal = W_ROOT, memory: LoneWolfMemory }
    warnings(); // the logger, in place before the brain lands
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&LONE_WOLF)
            .tagged::<Wolves>()
            .in_schedule(Update),
    );
    // The tag left out: a `Brain<LoneWolfMemory>`, which no plugin runs.
    let e = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&LONE_WOLF)))
        .id();
    app.update();
    let brain = app.world().get::<Brain<LoneWolfMemory>>(e).unwrap();
    assert_eq!(brain.running(), None, "never ticked");
    let warnings = warnings();
    let text = warnings
        .iter()
        .find(|w| w.contains("tree `LONE_WOLF`"))
        .unwrap_or_else(|| panic!("no warning for LONE_WOLF in {warnings:?}"));
    assert!(
        text.contains("runs its brains as `Brain<bt_bevy::"),
        "{text}"
    );
    assert!(text.contains("::Wolves>>`"), "{text}");
    assert!(
        text.contains("`Brain::new(&TREE).tagged::<Tag>()`"),
        "{text}"
    );
}

#[test]
fn the_same_tree_added_twice_panics_naming_it() {
    let text = panic_text(|| {
        app()
            .add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
            .add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update));
    });
    assert!(text.contains("already added"), "{text}");
    assert!(text.contains("tree `SHEEP`"), "{text}");
    // Under another tag, it is a second crowd of its own.
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
        .add_plugins(
            BrainPlugin::new(&SHEEP)
                .tagged::<Wolves>()
                .in_schedule(Update),
        );
    let a = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&SHEEP)))
        .id();
    let b = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&SHEEP).tagged::<Wolves>()))
        .id();
    app.update();
    let w = app.world();
    assert_eq!(
        w.get::<Brain<SheepMemory>>(a).unwrap().running(),
        Some("S_FETCHING")
    );
    let b = w.get::<Brain<Tagged<SheepMemory, Wolves>>>(b).unwrap();
    assert_eq!(b.running(), Some("S_FETCHING"), "its own gate of 1");
}

#[test]
fn two_tagged_trees_tick_their_own_brains_with_their_own_gates_messages_and_stats() {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
        .add_plugins(
            BrainPlugin::new(&WOLF)
                .tagged::<Wolves>()
                .in_schedule(Update),
        )
        .init_resource::<Seen>()
        .add_systems(Update, collect.after(bt_bevy::BrainSystems::Tick));
    let sheep: Vec<Entity> = (0..4)
        .map(|_| {
            app.world_mut()
                .spawn((Animal::default(), Brain::new(&SHEEP)))
                .id()
        })
        .collect();
    let wolves: Vec<Entity> = (0..4)
        .map(|_| {
            app.world_mut()
                .spawn((Animal::default(), Brain::new(&WOLF).tagged::<Wolves>()))
                .id()
        })
        .collect();
    app.update();

    let running = |app: &App| {
        let w = app.world();
        let s: Vec<_> = sheep
            .iter()
            .map(|&e| w.get::<Brain<SheepMemory>>(e).unwrap().running().unwrap())
            .collect();
        let v: Vec<_> = wolves
            .iter()
            .map(|&e| w.get::<Brain<WolfBrain>>(e).unwrap().running().unwrap())
            .collect();
        (s, v)
    };
    let count = |v: &[&str], name: &str| v.iter().filter(|&&r| r == name).count();
    let (s, v) = running(&app);
    assert_eq!(
        (count(&s, "S_FETCHING"), count(&s, "S_GRAZING")),
        (1, 3),
        "{s:?}"
    );
    assert_eq!(
        (count(&v, "W_HUNTING"), count(&v, "W_PROWLING")),
        (3, 1),
        "{v:?}"
    );

    // Each tree's gate counts in its own shared state.
    let gate = |shared: &bt_core::TreeShared, tree_item| shared.gate_count(tree_item).unwrap();
    let s_item = SHEEP.find("S_FETCHING").unwrap();
    let w_item = WOLF.find("W_HUNTING").unwrap();
    let w = app.world();
    let sheep_shared = w.resource::<BrainShared<SheepMemory>>().state();
    let wolf_shared = w.resource::<BrainShared<WolfBrain>>().state();
    assert!(!std::sync::Arc::ptr_eq(sheep_shared, wolf_shared));
    assert_eq!(gate(sheep_shared, s_item), 1);
    assert_eq!(gate(wolf_shared, w_item), 3);
    // Each tree's stats.
    assert_eq!(w.resource::<BrainStats<SheepMemory>>().ticked, 4);
    assert_eq!(w.resource::<BrainStats<WolfBrain>>().ticked, 4);
    assert_eq!(w.resource::<BrainStats<WolfBrain>>().changed, 4);

    // Each tree's launches as its own messages, naming its own entities.
    let seen = std::mem::take(&mut *app.world_mut().resource_mut::<Seen>());
    assert_eq!(seen.sheep.len(), 1);
    assert_eq!(seen.wolves.len(), 3);
    assert!(seen.sheep.iter().all(|m| sheep.contains(&m.entity)));
    assert!(seen.sheep.iter().all(|m| m.launch().unwrap().code == 1));
    assert!(seen.wolves.iter().all(|m| wolves.contains(&m.entity)));
    assert!(seen.wolves.iter().all(|m| m.launch().unwrap().code == 2));

    // A wolf's report sent as the sheep's message reaches no wolf; sent as
    // the wolves' message it ends that wolf's hunt.
    let hunt = seen.wolves[0];
    let mut mislaid: ActionOutcome<SheepMemory> = seen.sheep[0].outcome(Outcome::Succeeded);
    mislaid.entity = hunt.entity;
    mislaid.ticket = hunt.ticket;
    app.world_mut().write_message(mislaid);
    app.update();
    let (_, v) = running(&app);
    assert_eq!(count(&v, "W_HUNTING"), 3, "{v:?}");
    app.world_mut()
        .write_message(hunt.outcome(Outcome::Succeeded));
    app.update();
    let w = app.world();
    let hunter = w.get::<Brain<WolfBrain>>(hunt.entity).unwrap();
    assert_eq!(hunter.running(), Some("W_PROWLING"));
    // The freed slot goes to a wolf that prowled: in this frame if it
    // ticked after the hunter, in the next if before (the parallel tick
    // keeps no order between entities). Then three hunt again.
    let (_, v) = running(&app);
    assert!((2..=3).contains(&count(&v, "W_HUNTING")), "{v:?}");
    app.update();
    let w = app.world();
    let (s, v) = running(&app);
    assert_eq!(count(&v, "W_HUNTING"), 3, "{v:?}");
    assert_eq!(count(&s, "S_FETCHING"), 1, "{s:?}");
    assert_eq!(
        gate(w.resource::<BrainShared<SheepMemory>>().state(), s_item),
        1
    );
    // The sheep grazed and the wolves prowled on their own components.
    let grazed: u32 = sheep
        .iter()
        .map(|&e| w.get::<Animal>(e).unwrap().grazed)
        .sum();
    let prowled: u32 = wolves
        .iter()
        .map(|&e| w.get::<Animal>(e).unwrap().prowled)
        .sum();
    assert_eq!(grazed, 3 * 4);
    assert!(prowled >= 3, "{prowled}");
    assert!(
        sheep
            .iter()
            .all(|&e| w.get::<Animal>(e).unwrap().prowled == 0)
    );
    assert!(
        wolves
            .iter()
            .all(|&e| w.get::<Animal>(e).unwrap().grazed == 0)
    );
}
