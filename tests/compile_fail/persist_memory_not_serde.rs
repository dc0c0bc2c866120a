use bt_core::behavior;

struct Creature;

/// Neither `Serialize` nor `Deserialize`.
#[derive(Default)]
struct PatrolState {
    leg: u8,
}

behavior! { PATROL: Creature, memory: PatrolState, persist,
    tick: |_, m, _| { m.leg += 1; true },
}

fn main() {}
