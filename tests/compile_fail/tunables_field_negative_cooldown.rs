use bt_core::{behavior, decider, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Seconds between two grenades.
    GRENADE_COOLDOWN: f64 = 5.0, -1.0..=30.0;
}

behavior! { THROW: Soldier }
decider! { THROW_GRENADE: Soldier => THROW, cooldown: tunable(GRENADE_COOLDOWN) }
tree! { SQUAD: Soldier = THROW_GRENADE, tunables: SQUAD_TUNING }

fn main() {}
