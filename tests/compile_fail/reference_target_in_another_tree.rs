use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { GUARD: A }
leaf! { WALK: A }
group! { OTHER_ROOT: A, prioritized [GUARD] }
tree! { OTHER: A = OTHER_ROOT }
// GUARD's place is in the tree OTHER.
reference! { GO: A => [OTHER_ROOT, GUARD] }
group! { ROOT: A, prioritized [GO, WALK] }
tree! { T: A = ROOT }

fn main() {}
