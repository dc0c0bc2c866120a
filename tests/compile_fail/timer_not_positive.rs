use bt_core::{behavior, decider, tree};

struct A;

behavior! { B: A }
decider! { D: A => B, every: -1.0 }
tree! { T: A = D }

fn main() {}
