use bt_core::{behavior, decider, tree};

struct A;

behavior! { B: A }
decider! { D: A => B, cooldown: f64::NAN }
tree! { T: A = D }

fn main() {}
