use bt_core::{behavior, decider, tree};

struct A;

behavior! { B: A }
decider! { ALONE: A => B, together: 1 }
tree! { T: A = ALONE }

fn main() {}
