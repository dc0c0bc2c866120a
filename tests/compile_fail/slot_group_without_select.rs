use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }
decider! { X: A => B }
decider! { Y: A => B }
group! { USE: A, slot [X, Y] }
tree! { T: A = USE }

fn main() {}
