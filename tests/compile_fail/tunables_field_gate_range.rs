use bt_core::{leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Soldiers shooting at once: 0 would close the gate for good.
    SHOOTERS: i64 = 3, 0..=10;
}

leaf! { SHOOT: Soldier, gate: tunable(SHOOTERS) }
tree! { SQUAD: Soldier = SHOOT, tunables: SQUAD_TUNING }

fn main() {}
