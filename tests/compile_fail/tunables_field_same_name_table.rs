use bt_core::{group, leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Seconds between two grenades.
    GRENADE_COOLDOWN: f64 = 5.0, 1.0..=30.0;
}

fn main() {
    // Another table of the same name, in the same module.
    tunables! { SQUAD_TUNING:
        /// Seconds between two volleys.
        VOLLEY: f64 = 2.0, 1.0..=30.0;
    }
    leaf! { FIRE: Soldier, every: tunable(VOLLEY) }
    group! { ROOT: Soldier, prioritized [FIRE] }
    tree! { SQUAD: Soldier = ROOT, tunables: crate::SQUAD_TUNING }
}
