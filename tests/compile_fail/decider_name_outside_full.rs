use bt_core::{behavior, decider};

struct A;

behavior! { B: A }
decider! { D: A => B, name: "x" }

fn main() {}
