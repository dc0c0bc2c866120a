use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { WALK: A }
// A reference runs no behavior: no behavior flags, whatever their value.
reference! { GO: A => [ROOT, WALK], behavior_flags: 1 }
group! { ROOT: A, prioritized [GO, WALK] }
tree! { T: A = ROOT }

fn main() {}
