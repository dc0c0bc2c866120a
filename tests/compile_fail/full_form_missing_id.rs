use bt_core::{behavior, decider};

struct A;

behavior! { B: A }
decider! { full D: A => B, name: "d" }

fn main() {}
