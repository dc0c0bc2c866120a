// `dense()` for a view agent that can only be made entity by entity.
use bevy_ecs::prelude::*;
use bevy_ecs::query::QueryData;
use bt_bevy::{BrainAgent, BrainPlugin};
use bt_core::{behavior, decider, tree};

#[derive(Component)]
struct Health(f32);

struct View {
    health: f32,
}

impl BrainAgent for View {
    type Data = &'static Health;

    fn with_agent<R>(
        health: &mut <Self::Data as QueryData>::Item<'_, '_>,
        tick: impl FnOnce(&mut Self) -> R,
    ) -> R {
        tick(&mut View { health: health.0 })
    }
}

behavior! { REST: View }
decider! { JUST_REST: View => REST }
tree! { RESTER: View = JUST_REST, memory: ResterMemory }

fn main() {
    let _ = BrainPlugin::new(&RESTER).dense();
}
