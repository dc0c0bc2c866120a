use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }
decider! { LEAF: A => B }
group! { MID: A, prioritized [LEAF] }
group! { ROOT: A, prioritized [MID] }
tree! { T: A = ROOT, max_depth: 2 }

fn main() {}
