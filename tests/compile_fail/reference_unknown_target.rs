use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { WALK: A }
// The target is named by its deciders: a misspelt one is a Rust error.
reference! { GO: A => [ROOT, GAURD] }
group! { ROOT: A, prioritized [GO, WALK] }
tree! { T: A = ROOT }

fn main() {}
