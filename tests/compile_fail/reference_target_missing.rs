use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { GUARD: A }
leaf! { PATROL: A }
group! { NEST: A, prioritized [GUARD] }
// PATROL is in the tree, but not in NEST.
reference! { GO: A => [ROOT, NEST, PATROL] }
group! { ROOT: A, prioritized [GO, NEST, PATROL] }
tree! { T: A = ROOT }

fn main() {}
