use bt_core::{Ctx, behavior, tunables};

struct Soldier;

tunables! { SQUAD_TUNING:
    /// Soldiers shooting at once.
    SHOOTERS: i64 = 3, 1..=10;
}

// Written for a context typed by the squad's table, given to a behavior
// that names no table.
fn shoot(_: &mut Soldier, cx: &Ctx<SQUAD_TUNING>) -> bool {
    cx.tuned(SHOOTERS) > 1
}

behavior! { SHOOT: Soldier, tick: shoot }

fn main() {}
