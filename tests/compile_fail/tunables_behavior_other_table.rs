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

// Its context is typed by the tank's table, in the squad's tree.
leaf! { FIRE: Soldier, tunables: TANK_TUNING, tick: |_, cx| cx.tuned(RELOAD) > 1.0 }
leaf! { WAIT: Soldier }
group! { ROOT: Soldier, prioritized [FIRE, WAIT] }
tree! { SQUAD: Soldier = ROOT, tunables: SQUAD_TUNING }

fn main() {}
