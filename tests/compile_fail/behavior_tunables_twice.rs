use bt_core::{behavior, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Soldiers shooting at once.
    SHOOTERS: i64 = 3, 1..=10;
}

behavior! { SHOOT: Soldier, tunables: SQUAD_TUNING, tunables: SQUAD_TUNING }

fn main() {}
