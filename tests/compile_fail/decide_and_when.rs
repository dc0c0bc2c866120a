use bt_core::{behavior, decider};

struct A;

behavior! { B: A }
decider! { D: A => B, when: |_, _| true, decide: |_, _| 1.0 }

fn main() {}
