use bt_core::{behavior, decider, group, leaf, tree, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Soldiers shooting at once.
    SHOOTERS: i64 = 3, 1..=10;
}

behavior! { SHOOT: Soldier, tunables: SQUAD_TUNING, tick: |_, cx| cx.tuned(SHOOTERS) > 1 }
decider! { SHOOTING: Soldier => SHOOT }
leaf! { WAIT: Soldier }
group! { ROOT: Soldier, prioritized [SHOOTING, WAIT] }
// No `tunables: SQUAD_TUNING`.
tree! { SQUAD: Soldier = ROOT }

fn main() {}
