use bt_core::{behavior, decider, group};

struct A;

behavior! { B: A }
decider! { X: A => B }
decider! { Y: A => B }
group! { G: A, prioritized [X, Y, X] }

fn main() {}
