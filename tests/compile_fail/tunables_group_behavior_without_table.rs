use bt_core::{behavior, group, leaf, tree, tunables};

struct Watcher;

tunables! { TOWER_TUNING:
    /// Seconds between two looks around.
    LOOK_EVERY: f64 = 0.25, 0.0..=1.0;
}

behavior! { WATCH: Watcher, tunables: TOWER_TUNING, tick: |_, cx| cx.tuned(LOOK_EVERY) > 0.0 }
leaf! { IDLE: Watcher }
group! { ROOT: Watcher, prioritized [IDLE], behavior: WATCH }
// No `tunables: TOWER_TUNING`.
tree! { TOWER: Watcher = ROOT }

fn main() {}
