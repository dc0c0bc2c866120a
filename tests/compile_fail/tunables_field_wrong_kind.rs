use bt_core::{leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Grenades a soldier carries.
    GRENADES: i64 = 2, 0..=5;
}

// A cooldown is seconds: a float tunable.
leaf! { THROW: Soldier, cooldown: tunable(GRENADES) }
tree! { SQUAD: Soldier = THROW, tunables: SQUAD_TUNING }

fn main() {}
