// A tree over a component whose `component_agent!` line was left out.
use bevy_app::App;
use bevy_ecs::prelude::*;
use bt_bevy::BrainPlugin;
use bt_core::{behavior, decider, tree};

#[derive(Component, Default)]
struct Critter;

behavior! { WANDER: Critter }
decider! { JUST_WANDER: Critter => WANDER }
tree! { CRITTER: Critter = JUST_WANDER, memory: CritterMemory }

fn main() {
    App::new().add_plugins(BrainPlugin::new(&CRITTER));
}
