use bt_core::{group, leaf, tree, tunables};

tunables! { SQUAD_TUNING:
    CLIP: i64 = 6, 1..=30;
}

#[derive(Default)]
struct Soldier {
    shots: f64,
}

leaf! { RELOAD: Soldier, when: |s, d| s.shots >= d.tuned(CLIP) }
leaf! { FIRE: Soldier }
group! { ROOT: Soldier, prioritized [RELOAD, FIRE] }
tree! { SQUAD: Soldier = ROOT, tunables: SQUAD_TUNING }

fn main() {}
