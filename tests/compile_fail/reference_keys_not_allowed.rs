use bt_core::{group, leaf, reference};

struct A;

leaf! { WALK: A }
group! { ROOT: A, prioritized [WALK] }
// Keys no reference takes, whatever their value: each is named.
reference! { R1: A => [ROOT, WALK], flags: 3 }
reference! { R2: A => [ROOT, WALK], behavior: WALK }
reference! { R3: A => [ROOT, WALK], name: "R" }
reference! { R4: A => [ROOT, WALK], id: 7 }
// And one that no decider takes.
reference! { R5: A => [ROOT, WALK], colour: 1 }

fn main() {}
