use bt_core::{behavior, group, leaf, tree, tunables};

struct Watcher;

tunables! { TOWER_TUNING:
    /// Seconds between two looks around.
    LOOK_EVERY: f64 = 0.25, 0.0..=1.0;
}

tunables! { GATE_TUNING:
    /// Guards at the gate.
    GUARDS: i64 = 7, 1..=10;
}

// A group's behavior typed by the tower's table, in the gate's tree.
behavior! { WATCH: Watcher, tunables: TOWER_TUNING, tick: |_, cx| cx.tuned(LOOK_EVERY) > 0.0 }
leaf! { IDLE: Watcher }
group! { ROOT: Watcher, prioritized [IDLE], behavior: WATCH }
tree! { GATE: Watcher = ROOT, tunables: GATE_TUNING }

fn main() {}
