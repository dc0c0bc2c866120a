// A brain named by the tree's agent type instead of its memory type.
use bevy_ecs::prelude::*;
use bt_bevy::Brain;

#[derive(Component, Default)]
struct Critter;
bt_bevy::component_agent!(Critter);

fn running(brains: Query<&Brain<Critter>>) {
    for brain in &brains {
        let _ = brain.running_decider();
    }
}

fn main() {
    let _ = running;
}
