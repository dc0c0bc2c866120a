use bt_core::{behavior, decider, tree};

struct Soldier;

behavior! { THROW: Soldier }
decider! { THROW_GRENADE: Soldier => THROW, gate: 1 }
tree! { SQUAD: Soldier = THROW_GRENADE }

fn main() {
    // The gate is counted across the crowd: a memory needs its TreeShared.
    let _memory = SQUAD.new_memory(0);
}
