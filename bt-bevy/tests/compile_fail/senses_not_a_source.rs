// `with_senses` given a component that holds no stimuli.
use bevy_ecs::prelude::*;
use bt_bevy::BrainPlugin;
use bt_core::{behavior, decider, tree};

#[derive(Component, Default)]
struct Critter;
bt_bevy::component_agent!(Critter);

#[derive(Component)]
struct Smell(f32);

behavior! { WANDER: Critter }
decider! { JUST_WANDER: Critter => WANDER }
tree! { CRITTER: Critter = JUST_WANDER, memory: CritterMemory }

fn main() {
    let _ = BrainPlugin::new(&CRITTER).with_senses::<Smell>();
}
