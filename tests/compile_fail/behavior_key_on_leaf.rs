use bt_core::{behavior, decider};

struct A;

behavior! { B: A }
behavior! { C: A }
decider! { D: A => B, behavior: C }

fn main() {}
