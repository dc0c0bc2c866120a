use bt_core::{behavior, decider, tree};

struct A;

behavior! { B: A }
decider! { ROOT: A => B }
tree! { T: A = ROOT, blok: 64 }

fn main() {}
