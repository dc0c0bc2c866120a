use bt_core::{Decide, decider};

struct A;

fn f(_: &A, _: &mut Decide) -> f32 {
    1.0
}

decider! { D: A, decide: f }

fn main() {}
