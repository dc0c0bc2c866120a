use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }
decider! { X: A => B }
group! { G1: A, prioritized [X, G2] }
group! { G2: A, prioritized [X, G1] }
tree! { T: A = G1 }

fn main() {}
