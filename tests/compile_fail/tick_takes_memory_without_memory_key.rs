use bt_core::behavior;

#[derive(Default)]
struct Creature;

#[derive(Default)]
struct Steps(u32);

// The `tick` takes a memory block, but the behavior declares no `memory:`.
behavior! { WALK: Creature, tick: |_c, steps: &mut Steps, _cx| { steps.0 += 1; true } }

fn main() {}
