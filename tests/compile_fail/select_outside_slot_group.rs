use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }
decider! { X: A => B }
decider! { Y: A => B }
group! { G: A, prioritized [X, Y], select: |_a| Some(0) }
tree! { T: A = G }

fn main() {}
