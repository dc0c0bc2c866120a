use bt_core::{behavior, decider, group};

struct A;

behavior! { B: A }
decider! { X: A => B }
group! { G: A, prioritized [X, B] }

fn main() {}
