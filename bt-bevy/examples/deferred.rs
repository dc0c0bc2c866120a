//! Deferred actions: behaviors ask, a game system does, and reports back.
//!
//! ```sh
//! cargo run -p bt-bevy --example deferred
//! ```
//!
//! Four soldiers share one grenade launcher (a gate of one). The soldier
//! that gets it does not throw by itself: its behavior *launches* a
//! deferred action, which reaches the game as an `ActionMessage`. The
//! `grenades` system plays the throw over half a second and reports the
//! outcome with one `ActionOutcome` message; the behavior ends when it sees
//! it, and the launcher goes to the next soldier. Halfway through, the
//! thrower is despawned mid-throw: its action is cancelled (a `Cancel`
//! message names it) and the launcher is free again at once.

use std::time::Duration;

use bevy_app::{App, TaskPoolPlugin, Update};
use bevy_ecs::prelude::*;
use bevy_time::{Time, TimePlugin, TimeUpdateStrategy};
use bt_bevy::{ActionMessage, ActionOutcome, Brain, BrainPlugin, BrainSystems};
use bt_core::{Action, ActionOp, Outcome, behavior, decider, group, tree};

#[derive(Component)]
struct Soldier {
    name: &'static str,
    shots: u32,
}
bt_bevy::component_agent!(Soldier);

/// The game's action codes.
const THROW_GRENADE: u32 = 1;

behavior! { THROW: Soldier, launch: |_s, _cx| Some(Action::new(THROW_GRENADE, 0)) }
behavior! { SHOOT: Soldier, tick: |s, _cx| { s.shots += 1; true } }
decider! { USE_LAUNCHER: Soldier => THROW, gate: 1 }
decider! { FIRE: Soldier => SHOOT }
group! { ROOT: Soldier, prioritized [USE_LAUNCHER, FIRE] }
tree! { SQUAD: Soldier = ROOT, memory: SquadMemory }

type Squad = SquadMemory;

/// A grenade in the air: reported when its fuse runs out.
#[derive(Component)]
struct Grenade {
    action: ActionMessage<Squad>,
    fuse: f32,
}

/// The game system that carries out the brains' actions.
fn grenades(
    mut commands: Commands,
    time: Res<Time>,
    mut requests: MessageReader<ActionMessage<Squad>>,
    mut outcomes: MessageWriter<ActionOutcome<Squad>>,
    mut flying: Query<(Entity, &mut Grenade)>,
    soldiers: Query<&Soldier>,
) {
    let name = |e: Entity| soldiers.get(e).map_or("(gone)", |s| s.name);
    let now = time.elapsed_secs();
    for (e, mut g) in &mut flying {
        g.fuse -= time.delta_secs();
        if g.fuse <= 0.0 {
            println!("{:>5.2}s  {}'s grenade lands", now, name(g.action.entity));
            // One message reports the outcome back to the brain.
            outcomes.write(g.action.outcome(Outcome::Succeeded));
            commands.entity(e).despawn();
        }
    }
    for request in requests.read() {
        match request.op {
            ActionOp::Launch(action) if action.code == THROW_GRENADE => {
                println!("{:>5.2}s  {} pulls the pin", now, name(request.entity));
                commands.spawn(Grenade {
                    action: *request,
                    fuse: 0.5,
                });
            }
            ActionOp::Launch(_) => {
                outcomes.write(request.outcome(Outcome::Failed));
            }
            ActionOp::Cancel => {
                println!(
                    "{:>5.2}s  throw {} of {} cancelled",
                    now, request.ticket, request.entity
                );
                for (e, g) in &flying {
                    if g.action.entity == request.entity && g.action.ticket == request.ticket {
                        commands.entity(e).despawn();
                    }
                }
            }
        }
    }
}

fn main() {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TimePlugin,
        BrainPlugin::new(&SQUAD).in_schedule(Update),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        100,
    )))
    .add_systems(Update, grenades.after(BrainSystems::Tick));
    let soldiers: Vec<Entity> = ["Ada", "Bo", "Cy", "Di"]
        .into_iter()
        .map(|name| {
            let soldier = Soldier { name, shots: 0 };
            app.world_mut().spawn((soldier, Brain::new(&SQUAD))).id()
        })
        .collect();
    for frame in 0..30 {
        app.update();
        if frame == 10 {
            // Despawn whoever holds the launcher, mid-throw.
            let world = app.world_mut();
            let thrower = soldiers.iter().copied().find(|&e| {
                world
                    .get::<Brain<Squad>>(e)
                    .is_some_and(|b| b.running_decider() == Some("USE_LAUNCHER"))
            });
            if let Some(e) = thrower {
                let name = world.get::<Soldier>(e).unwrap().name;
                println!("{:>5.2}s  {name} is hit and falls", frame as f32 / 10.0);
                world.despawn(e);
            }
        }
    }
    let world = app.world_mut();
    for s in world.query::<&Soldier>().iter(world) {
        println!("{} fired {} shots", s.name, s.shots);
    }
}
