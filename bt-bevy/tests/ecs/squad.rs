//! Shared state through the ECS: deferred actions as messages, despawning
//! mid-action, and gates in a large crowd, ticked in entity order.

use std::collections::{BTreeSet, HashSet};

use bevy_app::{App, PostUpdate, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{ActionMessage, Brain, BrainPlugin, BrainShared, BrainStats};
use bt_core::{Action, ActionOp, Outcome, behavior, decider, group, tree};

use crate::common::app;

#[derive(Component, Default)]
struct Soldier {
    shots: u32,
}
bt_bevy::component_agent!(Soldier);

behavior! { THROW: Soldier, launch: |_s, cx| Some(Action::new(7, u64::from(cx.agent))) }
behavior! { SHOOT: Soldier, tick: |s, _cx| { s.shots += 1; true } }
decider! { THROW_GRENADE: Soldier => THROW, gate: 1 }
decider! { FIRE: Soldier => SHOOT }
group! { SQUAD_ROOT: Soldier, prioritized [THROW_GRENADE, FIRE] }
tree! { SQUAD: Soldier = SQUAD_ROOT, memory: SquadMemory }

/// Every action message seen, in order.
#[derive(Resource, Default)]
struct Seen(Vec<ActionMessage<SquadMemory>>);

fn collect(mut reader: MessageReader<ActionMessage<SquadMemory>>, mut seen: ResMut<Seen>) {
    seen.0.extend(reader.read().copied());
}

fn squad_app() -> App {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&SQUAD).in_schedule(Update))
        .init_resource::<Seen>()
        .add_systems(PostUpdate, collect);
    app
}

fn seen(app: &mut App) -> Vec<ActionMessage<SquadMemory>> {
    std::mem::take(&mut app.world_mut().resource_mut::<Seen>().0)
}

fn running(app: &mut App, e: Entity) -> Option<&'static str> {
    app.world()
        .get::<Brain<SquadMemory>>(e)
        .unwrap()
        .running_decider()
}

fn shared(app: &App) -> &bt_core::TreeShared {
    app.world().resource::<BrainShared<SquadMemory>>().state()
}

#[test]
fn a_launch_becomes_a_message_and_its_reported_outcome_ends_the_behavior() {
    let mut app = squad_app();
    let soldiers: Vec<Entity> = (0..3)
        .map(|_| {
            app.world_mut()
                .spawn((Soldier::default(), Brain::new(&SQUAD)))
                .id()
        })
        .collect();
    app.update();
    let launches = seen(&mut app);
    assert_eq!(launches.len(), 1, "one grenade at a time: {launches:?}");
    let throw = launches[0];
    assert_eq!(
        throw.launch(),
        Some(Action::new(7, u64::from(throw.entity.index_u32())))
    );
    assert!(soldiers.contains(&throw.entity));
    assert_eq!(running(&mut app, throw.entity), Some("THROW_GRENADE"));
    // Pending: the thrower keeps throwing while the game works on it.
    app.update();
    assert_eq!(running(&mut app, throw.entity), Some("THROW_GRENADE"));
    assert!(seen(&mut app).is_empty());
    // The brains of a tree with a gate tick in entity order: the first
    // soldier threw, and the second throws next.
    assert_eq!(throw.entity, soldiers[0]);
    // The game reports success with one message: the throw ends and gives
    // the gate back, and the next soldier in entity order takes it in the
    // same frame: exactly one new throw.
    app.world_mut()
        .write_message(throw.outcome(Outcome::Succeeded));
    app.update();
    assert_ne!(running(&mut app, throw.entity), Some("THROW_GRENADE"));
    let next = seen(&mut app);
    assert_eq!(next.len(), 1, "{next:?}");
    assert!(matches!(next[0].op, ActionOp::Launch(_)));
    assert_eq!(next[0].entity, soldiers[1], "a new launch");
    assert_ne!(next[0].ticket, throw.ticket);
    // A late or repeated report changes nothing.
    app.world_mut()
        .write_message(throw.outcome(Outcome::Failed));
    app.update();
    assert_eq!(shared(&app).gates_held(), 1);
}

#[test]
fn despawning_an_entity_mid_action_cancels_it_and_frees_its_gate() {
    let mut app = squad_app();
    for _ in 0..3 {
        app.world_mut()
            .spawn((Soldier::default(), Brain::new(&SQUAD)));
    }
    app.update();
    let throw = seen(&mut app)[0];
    let gate = SQUAD.find("THROW_GRENADE").unwrap();
    assert_eq!(shared(&app).gate_count(gate), Some(1));
    app.world_mut().despawn(throw.entity);
    // Given back at once, and the cancellation names the despawned entity.
    assert_eq!(shared(&app).gates_held(), 0);
    assert_eq!(shared(&app).queued(), 0);
    app.update();
    let after = seen(&mut app);
    assert_eq!(after[0].entity, throw.entity);
    assert_eq!(after[0].ticket, throw.ticket);
    assert_eq!(after[0].op, ActionOp::Cancel);
    // The freed gate goes to a living soldier in the next tick.
    assert_eq!(after.len(), 2, "{after:?}");
    let relaunch = after[1];
    assert!(relaunch.launch().is_some());
    assert_ne!(relaunch.entity, throw.entity);
    assert!(app.world().get_entity(relaunch.entity).is_ok());
    // An outcome for the despawned entity is ignored.
    app.world_mut()
        .write_message(throw.outcome(Outcome::Succeeded));
    app.update();
    assert_eq!(shared(&app).gates_held(), 1);
}

#[test]
fn removing_or_replacing_a_brain_gives_back_what_it_held() {
    let mut app = squad_app();
    let a = app
        .world_mut()
        .spawn((Soldier::default(), Brain::new(&SQUAD)))
        .id();
    app.update();
    assert_eq!(running(&mut app, a), Some("THROW_GRENADE"));
    let first = seen(&mut app)[0];
    // Replaced: the old brain's throw is cancelled, the new brain starts idle.
    app.world_mut().entity_mut(a).insert(Brain::new(&SQUAD));
    assert_eq!(shared(&app).gates_held(), 0);
    assert_eq!(running(&mut app, a), None);
    app.update();
    let msgs = seen(&mut app);
    assert_eq!(msgs[0].op, ActionOp::Cancel);
    assert_eq!(msgs[0].ticket, first.ticket);
    assert!(msgs[1].launch().is_some(), "the new brain throws: {msgs:?}");
    // Removed: the same, and the entity is no longer ticked.
    app.world_mut().entity_mut(a).remove::<Brain<SquadMemory>>();
    assert_eq!(shared(&app).gates_held(), 0);
    app.update();
    assert_eq!(seen(&mut app)[0].op, ActionOp::Cancel);
    assert_eq!(app.world().resource::<BrainStats<SquadMemory>>().ticked, 0);
}

/// A gate of three in front of a long task; everyone else waits.
#[derive(Component, Default)]
struct Worker;
bt_bevy::component_agent!(Worker);

#[derive(Default)]
struct Steps(u8);

behavior! { WORK: Worker, memory: Steps, tick: |_w, m, _cx| { m.0 += 1; m.0 < 4 } }
behavior! { WAIT: Worker }
decider! { DO_WORK: Worker => WORK, gate: 3 }
decider! { IDLE: Worker => WAIT }
group! { WORK_ROOT: Worker, prioritized [DO_WORK, IDLE] }
tree! { WORKSHOP: Worker = WORK_ROOT, memory: WorkshopMemory }

#[test]
fn a_gate_holds_in_a_large_crowd_and_lets_them_in_by_entity_order() {
    gate_holds(false);
}

#[test]
fn a_gate_holds_the_same_when_dense_ticks_are_asked_for() {
    gate_holds(true);
}

fn gate_holds(dense: bool) {
    let mut app = app();
    let plugin = BrainPlugin::new(&WORKSHOP).in_schedule(Update);
    if dense {
        app.add_plugins(plugin.dense());
    } else {
        app.add_plugins(plugin);
    }
    let spawned: Vec<Entity> = (0..4000)
        .map(|_| app.world_mut().spawn((Worker, Brain::new(&WORKSHOP))).id())
        .collect();
    let gate = WORKSHOP.find("DO_WORK").unwrap();
    let mut workers = BTreeSet::new();
    for frame in 0..40 {
        app.update();
        let world = app.world_mut();
        let mut working: Vec<Entity> = world
            .query::<(Entity, &Brain<WorkshopMemory>)>()
            .iter(world)
            .filter(|(_, b)| b.running_decider() == Some("DO_WORK"))
            .map(|(e, _)| e)
            .collect();
        let state = world.resource::<BrainShared<WorkshopMemory>>().state();
        assert_eq!(working.len(), 3, "frame {frame}");
        assert_eq!(state.gate_count(gate), Some(3), "frame {frame}");
        if frame == 0 {
            working.sort_by_key(|e| e.index_u32());
            assert_eq!(working, spawned[..3], "the first three in entity order");
        }
        workers.extend(working);
    }
    assert!(workers.len() > 3, "the gate changed hands");
}

/// Keeps the thread it was last ticked on.
#[derive(Component, Default)]
struct Loafer {
    thread: Option<std::thread::ThreadId>,
}
bt_bevy::component_agent!(Loafer);

behavior! { LOAF: Loafer, tick: |l, _cx| {
    l.thread = Some(std::thread::current().id());
    true
} }
decider! { LOAFING: Loafer => LOAF }
tree! { LOAFERS: Loafer = LOAFING, memory: LoaferMemory }

#[test]
fn a_tree_without_shared_state_ticks_in_parallel() {
    for dense in [false, true] {
        let mut app = app();
        let plugin = BrainPlugin::new(&LOAFERS).in_schedule(Update);
        if dense {
            app.add_plugins(plugin.dense());
        } else {
            app.add_plugins(plugin);
        }
        for _ in 0..4000 {
            app.world_mut()
                .spawn((Loafer::default(), Brain::new(&LOAFERS)));
        }
        // Until a second thread took part (the other tests of this binary
        // keep the pool's threads busy at times), 20 s at most.
        let mut threads = HashSet::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while threads.len() < 2 && std::time::Instant::now() < deadline {
            app.update();
            let world = app.world_mut();
            let mut loafers = world.query::<&Loafer>();
            threads.extend(loafers.iter(world).filter_map(|l| l.thread));
        }
        assert!(threads.len() >= 2, "ticked on {} thread(s)", threads.len());
    }
}

#[test]
#[should_panic(
    expected = "needs bevy_time's `TimePlugin`: the brains tick on its clock. \
                Add `(bevy_app::TaskPoolPlugin::default(), bevy_time::TimePlugin)`, \
                or the `bevy` crate's `MinimalPlugins` or `DefaultPlugins`"
)]
fn a_plugin_without_a_clock_is_refused_by_name_and_told_which_plugins_to_add() {
    let mut app = App::new();
    app.add_plugins(BrainPlugin::new(&SQUAD));
    app.finish();
}

// A flanking move needs two soldiers; alone, a soldier waits in its lobby.
behavior! { FLANK_MOVE: Soldier }
decider! { FLANK: Soldier => FLANK_MOVE, together: 2 }
group! { FLANK_ROOT: Soldier, prioritized [FLANK, FIRE] }
tree! { FLANKERS: Soldier = FLANK_ROOT, memory: FlankMemory }

#[test]
fn despawning_gives_back_places_in_group_roles() {
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&FLANKERS).in_schedule(Update));
    let roles = |app: &App| {
        let shared = app.world().resource::<BrainShared<FlankMemory>>();
        shared.state().roles_held()
    };
    let spawn = |app: &mut App| {
        let soldier = (Soldier::default(), Brain::new(&FLANKERS));
        app.world_mut().spawn(soldier).id()
    };
    // Alone: waiting in the lobby, firing meanwhile.
    let first = spawn(&mut app);
    app.update();
    assert_eq!(roles(&app), 1);
    app.world_mut().despawn(first);
    assert_eq!(roles(&app), 0, "its place in the lobby is given back");
    // Two flank together; despawning one gives back its place inside.
    let (a, b) = (spawn(&mut app), spawn(&mut app));
    for _ in 0..3 {
        app.update();
    }
    let world = app.world();
    let running = |e| {
        world
            .get::<Brain<FlankMemory>>(e)
            .unwrap()
            .running_decider()
    };
    assert_eq!((running(a), running(b)), (Some("FLANK"), Some("FLANK")));
    assert_eq!(roles(&app), 2);
    app.world_mut().despawn(a);
    assert_eq!(roles(&app), 1);
    app.world_mut().despawn(b);
    assert_eq!(roles(&app), 0);
}
