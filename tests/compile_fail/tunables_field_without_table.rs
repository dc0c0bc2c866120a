use bt_core::{group, leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Soldiers shooting at once.
    SHOOTERS: i64 = 3, 1..=10;
}

leaf! { SHOOT: Soldier, gate: tunable(SHOOTERS) }
leaf! { WAIT: Soldier }
group! { ROOT: Soldier, prioritized [SHOOT, WAIT] }
// No `tunables: SQUAD_TUNING`.
tree! { SQUAD: Soldier = ROOT }

fn main() {}
