//! Two trees whose memory types are the same, in one app: side by side as
//! one brain type, each tree with its own crowd; or told apart by a tag,
//! each with its own types. A brain made with the wrong tag is refused.

use std::any::TypeId;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{ActionMessage, ActionOutcome, Brain, BrainPlugin, BrainShared, BrainStats, Tagged};
use bt_core::{Action, Outcome, behavior, decider, group, tree};

use crate::common::app;

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

/// Every action message of the two untagged trees, in order.
#[derive(Resource, Default)]
struct SeenUntagged(Vec<ActionMessage<SheepMemory>>);

fn collect_untagged(
    mut messages: MessageReader<ActionMessage<SheepMemory>>,
    mut seen: ResMut<SeenUntagged>,
) {
    seen.0.extend(messages.read().copied());
}

/// The sheep's and the wolves' trees, untagged, in one app: both run as
/// `Brain<SheepMemory>`.
fn untagged_app() -> App {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
        .add_plugins(BrainPlugin::new(&WOLF).in_schedule(Update))
        .init_resource::<SeenUntagged>()
        .add_systems(Update, collect_untagged.after(bt_bevy::BrainSystems::Tick));
    app
}

/// Four sheep, then four wolves.
fn spawn_flock(app: &mut App) -> (Vec<Entity>, Vec<Entity>) {
    let mut spawn = |tree| {
        (0..4)
            .map(|_| {
                app.world_mut()
                    .spawn((Animal::default(), Brain::new(tree)))
                    .id()
            })
            .collect::<Vec<Entity>>()
    };
    let sheep = spawn(&SHEEP);
    let wolves = spawn(&WOLF);
    (sheep, wolves)
}

fn running_of(app: &App, animals: &[Entity]) -> Vec<Option<&'static str>> {
    let w = app.world();
    animals
        .iter()
        .map(|&e| w.get::<Brain<SheepMemory>>(e).unwrap().running_decider())
        .collect()
}

#[test]
fn two_untagged_trees_of_one_memory_type_tick_side_by_side_each_with_its_own_crowd() {
    let mut app = untagged_app();
    let (sheep, wolves) = spawn_flock(&mut app);
    app.update();

    // Each brain runs its own tree, in its own crowd: the sheep's gate of
    // one, the wolves' of three, the first in entity order getting in.
    let (fetching, grazing) = (Some("S_FETCHING"), Some("S_GRAZING"));
    let (hunting, prowling) = (Some("W_HUNTING"), Some("W_PROWLING"));
    assert_eq!(
        running_of(&app, &sheep),
        [fetching, grazing, grazing, grazing]
    );
    assert_eq!(
        running_of(&app, &wolves),
        [hunting, hunting, hunting, prowling]
    );
    let w = app.world();
    let shared = w.resource::<BrainShared<SheepMemory>>();
    assert_eq!(shared.crowds().len(), 2);
    let sheep_crowd = shared.crowd(&SHEEP).unwrap();
    let wolf_crowd = shared.crowd(&WOLF).unwrap();
    assert!(!std::sync::Arc::ptr_eq(
        sheep_crowd.state(),
        wolf_crowd.state()
    ));
    let s_item = SHEEP.find("S_FETCHING").unwrap();
    let w_item = WOLF.find("W_HUNTING").unwrap();
    assert_eq!(sheep_crowd.state().gate_count(s_item), Some(1));
    assert_eq!(wolf_crowd.state().gate_count(w_item), Some(3));
    // The stats sum the two trees' runs.
    let stats = w.resource::<BrainStats<SheepMemory>>();
    assert_eq!((stats.ticked, stats.changed, stats.runs), (8, 8, 1));

    // One message type for both trees: the sheep's launches first (their
    // plugin was added first), each naming its own entity.
    let seen = std::mem::take(&mut app.world_mut().resource_mut::<SeenUntagged>().0);
    let codes: Vec<(Entity, u32)> = seen
        .iter()
        .map(|m| (m.entity, m.launch().unwrap().code))
        .collect();
    assert_eq!(
        codes,
        [
            (sheep[0], 1),
            (wolves[0], 2),
            (wolves[1], 2),
            (wolves[2], 2)
        ]
    );

    // A wolf's report ends its hunt and frees its slot in the wolves'
    // gate: the prowling wolf, later in entity order, takes it in the same
    // frame. The sheep's gate does not move.
    app.world_mut()
        .write_message(seen[1].outcome(Outcome::Succeeded));
    app.update();
    assert_eq!(
        running_of(&app, &wolves),
        [prowling, hunting, hunting, hunting]
    );
    assert_eq!(
        running_of(&app, &sheep),
        [fetching, grazing, grazing, grazing]
    );
    // Each tree's behaviors ran on its own entities only.
    let w = app.world();
    let animal = |e: &Entity| w.get::<Animal>(*e).unwrap();
    assert_eq!(sheep.iter().map(|e| animal(e).grazed).sum::<u32>(), 3 * 2);
    assert!(sheep.iter().all(|e| animal(e).prowled == 0));
    let prowled: Vec<u32> = wolves.iter().map(|e| animal(e).prowled).collect();
    assert_eq!(prowled, [1, 0, 0, 1], "the last wolf, then the first");
    assert!(wolves.iter().all(|e| animal(e).grazed == 0));
    // Calls that name no tree say which trees there are.
    let text = panic_text(|| {
        app.world().resource::<BrainShared<SheepMemory>>().state();
    });
    assert!(text.contains("`SHEEP` and `WOLF`"), "{text}");
    assert!(text.contains("crowd(&TREE)"), "{text}");
}

#[test]
fn two_untagged_trees_of_one_memory_type_are_saved_and_loaded_tree_by_tree() {
    use bt_bevy::{LoadError, NoSenses, SaveBrains};

    let mut app = untagged_app();
    let (sheep, wolves) = spawn_flock(&mut app);
    let animals: Vec<Entity> = sheep.iter().chain(&wolves).copied().collect();
    for _ in 0..3 {
        app.update();
    }
    let seen = std::mem::take(&mut app.world_mut().resource_mut::<SeenUntagged>().0);
    // The hunt of the first wolf, whose report the game keeps for later.
    let hunt = seen
        .iter()
        .find(|m| m.entity == wolves[0])
        .copied()
        .unwrap();
    let key_of = |animals: &[Entity]| {
        let animals = animals.to_vec();
        move |e: Entity| animals.iter().position(|&a| a == e)
    };
    let world = app.world_mut();
    let save_of = |world: &mut World, tree| {
        let save = world.save_brains_of::<SheepMemory, NoSenses, _>(tree, key_of(&animals));
        serde_json::to_string(&save).unwrap()
    };
    let sheep_save = save_of(world, &SHEEP);
    let wolf_save = save_of(world, &WOLF);
    // Each save holds its own tree's brains.
    let saved = |save: &str| {
        let v: serde_json::Value = serde_json::from_str(save).unwrap();
        let brains = v["brains"].as_array().unwrap();
        brains
            .iter()
            .map(|b| b["key"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(saved(&sheep_save), [0, 1, 2, 3]);
    assert_eq!(saved(&wolf_save), [4, 5, 6, 7]);
    // A save that names no tree cannot tell which.
    let text = panic_text(|| {
        let _ = world.save_brains::<SheepMemory, NoSenses, usize>(|_| None);
    });
    assert!(text.contains("runs the trees `SHEEP` and `WOLF`"), "{text}");
    assert!(text.contains("save_brains_of(&TREE, ..)"), "{text}");

    // Into a fresh app, tree by tree.
    let mut fresh = untagged_app();
    let (sheep2, wolves2) = spawn_flock(&mut fresh);
    let animals2: Vec<Entity> = sheep2.iter().chain(&wolves2).copied().collect();
    let load = |app: &mut App, tree, save: &str, animals: &[Entity]| {
        app.world_mut()
            .load_brains_of::<SheepMemory, NoSenses, usize, _>(
                tree,
                &mut serde_json::Deserializer::from_str(save),
                |&k| animals.get(k).copied(),
            )
    };
    // A save of the other tree is refused, changing nothing.
    assert!(matches!(
        load(&mut fresh, &WOLF, &sheep_save, &animals2),
        Err(LoadError::Shared(_))
    ));
    let loaded = load(&mut fresh, &SHEEP, &sheep_save, &animals2).unwrap();
    assert_eq!((loaded.brains, loaded.fresh), (4, 0));
    let loaded = load(&mut fresh, &WOLF, &wolf_save, &animals2).unwrap();
    assert_eq!((loaded.brains, loaded.fresh), (4, 0));
    assert_eq!(running_of(&fresh, &animals2), running_of(&app, &animals));
    let gates = |app: &App| {
        let shared = app.world().resource::<BrainShared<SheepMemory>>();
        [(&SHEEP, "S_FETCHING"), (&WOLF, "W_HUNTING")].map(|(tree, name)| {
            let crowd = shared.crowd(tree).unwrap();
            crowd.state().gate_count(tree.find(name).unwrap()).unwrap()
        })
    };
    assert_eq!(gates(&fresh), [1, 3]);

    // Both go on alike: the kept report ends the hunt in each, through the
    // loaded crowd in the fresh app.
    app.world_mut()
        .write_message(hunt.outcome(Outcome::Succeeded));
    let adopted = fresh
        .world()
        .resource::<BrainShared<SheepMemory>>()
        .adopt_ticket(hunt.ticket)
        .expect("issued before the save");
    assert_ne!(adopted, hunt.ticket);
    fresh
        .world_mut()
        .write_message(ActionOutcome::<SheepMemory>::new(
            wolves2[0],
            adopted,
            Outcome::Succeeded,
        ));
    for _ in 0..3 {
        app.update();
        fresh.update();
        assert_eq!(running_of(&fresh, &animals2), running_of(&app, &animals));
        assert_eq!(gates(&fresh), gates(&app));
    }
    assert_eq!(running_of(&app, &wolves)[0], Some("W_PROWLING"));

    // Back into the running app: the wolves' save brings the hunt back,
    // the sheep go on.
    let sheep_now = running_of(&app, &sheep);
    let loaded = load(&mut app, &WOLF, &wolf_save, &animals).unwrap();
    assert_eq!((loaded.brains, loaded.fresh), (4, 0));
    assert_eq!(running_of(&app, &wolves)[0], Some("W_HUNTING"));
    assert_eq!(running_of(&app, &sheep), sheep_now);
    assert_eq!(gates(&app), [1, 3]);
}

/// The errors Bevy's error handler was given, as text.
static REPORTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn keep_error(error: bevy_ecs::error::BevyError, _: bevy_ecs::error::ErrorContext) {
    REPORTED.lock().unwrap().push(error.to_string());
}

#[test]
fn a_brain_without_the_tag_of_its_trees_plugin_is_refused_naming_the_tree_and_the_tag() {
    tree! { LONE_WOLF: Animal = W_ROOT, memory: LoneWolfMemory }
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&LONE_WOLF)
            .tagged::<Wolves>()
            .in_schedule(Update),
    );
    // By default the refusal panics, naming the tree and the tag.
    let text = panic_text(|| {
        app.world_mut()
            .spawn((Animal::default(), Brain::new(&LONE_WOLF)));
    });
    assert!(text.contains("brain of tree `LONE_WOLF` refused"), "{text}");
    assert!(text.contains("made without a tag"), "{text}");
    assert!(
        text.contains("runs it under the tag `ecs::two_trees::Wolves`"),
        "{text}"
    );
    assert!(
        text.contains("`Brain::new(&LONE_WOLF).tagged::<ecs::two_trees::Wolves>()`"),
        "{text}"
    );
}

#[test]
fn a_refused_brain_never_ticks_and_the_save_of_its_trees_brains_loads() {
    use bevy_ecs::error::FallbackErrorHandler;
    use bt_bevy::{NoSenses, SaveBrains};

    // Sheep untagged, wolves tagged: a wolf's brain made without the tag
    // is a `Brain<SheepMemory>` of the tree `WOLF`.
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update))
        .add_plugins(
            BrainPlugin::new(&WOLF)
                .tagged::<Wolves>()
                .in_schedule(Update),
        );
    // A game that logs errors instead of panicking goes on without it.
    app.insert_resource(FallbackErrorHandler(keep_error));
    let sheep = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&SHEEP)))
        .id();
    let stray = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&WOLF)))
        .id();
    let wolf = app
        .world_mut()
        .spawn((Animal::default(), Brain::new(&WOLF).tagged::<Wolves>()))
        .id();
    let reported = REPORTED.lock().unwrap().clone();
    let text = reported
        .iter()
        .find(|t| t.contains(&format!("{stray}: brain of tree `WOLF` refused")))
        .unwrap_or_else(|| panic!("not reported: {reported:?}"));
    assert!(
        text.contains("`Brain::new(&WOLF).tagged::<ecs::two_trees::Wolves>()`"),
        "{text}"
    );
    assert!(app.world().get::<Brain<SheepMemory>>(stray).is_none());
    for _ in 0..3 {
        app.update();
    }
    let w = app.world();
    assert_eq!(w.get::<Animal>(stray).unwrap().prowled, 0, "never ticked");
    assert_eq!(w.resource::<BrainStats<SheepMemory>>().ticked, 1);
    assert_eq!(
        w.get::<Brain<WolfBrain>>(wolf).unwrap().running_decider(),
        Some("W_HUNTING")
    );

    // The sheep's save holds the sheep alone, and loads fresh and in place.
    let world = app.world_mut();
    let save = world
        .save_brains::<SheepMemory, NoSenses, u32>(|e| (e == sheep || e == stray).then_some(7));
    let save = serde_json::to_string(&save).unwrap();
    let load = |app: &mut App, e: Entity| {
        app.world_mut()
            .load_brains::<SheepMemory, NoSenses, u32, _>(
                &mut serde_json::Deserializer::from_str(&save),
                |_| Some(e),
            )
            .map(|l| l.brains)
            .map_err(|e| e.to_string())
    };
    assert_eq!(load(&mut app, sheep), Ok(1));
    let mut fresh = self::app();
    fresh.add_plugins(BrainPlugin::new(&SHEEP).in_schedule(Update));
    let sheep2 = fresh
        .world_mut()
        .spawn((Animal::default(), Brain::new(&SHEEP)))
        .id();
    assert_eq!(load(&mut fresh, sheep2), Ok(1));
    let brain = fresh.world().get::<Brain<SheepMemory>>(sheep2).unwrap();
    assert_eq!(brain.running_decider(), Some("S_FETCHING"));
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
        w.get::<Brain<SheepMemory>>(a).unwrap().running_decider(),
        Some("S_FETCHING")
    );
    let b = w.get::<Brain<Tagged<SheepMemory, Wolves>>>(b).unwrap();
    assert_eq!(b.running_decider(), Some("S_FETCHING"), "its own gate of 1");
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
            .map(|&e| {
                w.get::<Brain<SheepMemory>>(e)
                    .unwrap()
                    .running_decider()
                    .unwrap()
            })
            .collect();
        let v: Vec<_> = wolves
            .iter()
            .map(|&e| {
                w.get::<Brain<WolfBrain>>(e)
                    .unwrap()
                    .running_decider()
                    .unwrap()
            })
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
    assert_eq!(hunter.running_decider(), Some("W_PROWLING"));
    // The freed slot goes to the wolf that prowled, in this frame: it
    // ticks after the hunter, in entity order. Three hunt again.
    let (_, v) = running(&app);
    assert_eq!(count(&v, "W_HUNTING"), 3, "{v:?}");
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

#[test]
fn one_tree_of_a_memory_type_is_recorded_and_a_second_recorder_is_refused() {
    use bt_bevy::{BrainRecorder, RecordBrains, Recorded, agent_id};

    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&SHEEP)
            .in_schedule(Update)
            .record(RecordBrains::all(8)),
    )
    .add_plugins(BrainPlugin::new(&WOLF).in_schedule(Update));
    let (sheep, wolves) = spawn_flock(&mut app);
    for _ in 0..3 {
        app.update();
    }
    // Every sheep is recorded, three ticks each; no wolf is.
    let w = app.world();
    assert!(wolves.iter().all(|&e| w.get::<Recorded>(e).is_none()));
    let recording = w.resource::<BrainRecorder<SheepMemory>>().export();
    let lanes: Vec<(u32, usize)> = recording
        .agents
        .iter()
        .map(|a| (a.agent, a.ticks.len()))
        .collect();
    let want: Vec<(u32, usize)> = sheep.iter().map(|&e| (agent_id(e), 3)).collect();
    assert_eq!(lanes, want);
    // A second recorder of the same memory type is refused by name.
    let text = panic_text(|| {
        self::app()
            .add_plugins(BrainPlugin::new(&SHEEP).record(RecordBrains::marked(1)))
            .add_plugins(BrainPlugin::new(&WOLF).record(RecordBrains::marked(1)));
    });
    assert!(text.contains("tree `WOLF`"), "{text}");
    assert!(text.contains("tree `SHEEP`"), "{text}");
    assert!(text.contains(".tagged::<Tag>()"), "{text}");
}
