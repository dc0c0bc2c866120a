use bt_core::{group, leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Seconds between two grenades.
    GRENADE_COOLDOWN: f64 = 5.0, 1.0..=30.0;
}

tunables! { TANK_TUNING:
    /// Seconds between two shells.
    RELOAD: f64 = 8.0, 2.0..=20.0;
}

leaf! { FIRE: Soldier, every: tunable(RELOAD) }
leaf! { WAIT: Soldier }
group! { ROOT: Soldier, prioritized [FIRE, WAIT] }
tree! { SQUAD: Soldier = ROOT, tunables: SQUAD_TUNING }

fn main() {}
