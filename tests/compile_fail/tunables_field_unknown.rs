use bt_core::{leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Seconds between two grenades.
    GRENADE_COOLDOWN: f64 = 5.0, 1.0..=30.0;
}

// Misspelt: rustc's own error, at the declaration.
leaf! { THROW: Soldier, cooldown: tunable(GRENADE_COOLDWN) }
tree! { SQUAD: Soldier = THROW, tunables: SQUAD_TUNING }

fn main() {}
