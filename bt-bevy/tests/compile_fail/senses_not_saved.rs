// Saving brains whose stimuli come from a sense component of the game's
// own, which the save does not know how to write.
use bevy_ecs::prelude::*;
use bt_bevy::{SaveBrains, SenseSource};
use bt_core::{behavior, decider, tree};

#[derive(Component)]
struct Smell(u64);

impl SenseSource for Smell {
    fn update_bits(&mut self, _dt: f32) -> u64 {
        self.0
    }
}

#[derive(Component, Default)]
struct Critter;
bt_bevy::component_agent!(Critter);

behavior! { WANDER: Critter }
decider! { JUST_WANDER: Critter => WANDER }
tree! { CRITTER: Critter = JUST_WANDER, memory: CritterMemory }

fn main() {
    let mut world = World::new();
    let _ = world.save_brains::<CritterMemory, Smell, u32>(|_| Some(0));
}
