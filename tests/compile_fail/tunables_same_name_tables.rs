use bt_core::{group, leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Health fraction below which a soldier flees.
    FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
}

fn main() {
    // Another table of the same name, in the same module.
    tunables! { SQUAD_TUNING:
        /// Soldiers shooting at once.
        SHOOTERS: i64 = 3, 1..=10;
    }
    leaf! { SHOOT: Soldier, tunables: SQUAD_TUNING, tick: |_, cx| cx.tuned(SHOOTERS) > 1 }
    group! { ROOT: Soldier, prioritized [SHOOT] }
    tree! { SQUAD: Soldier = ROOT, tunables: crate::SQUAD_TUNING }
}
