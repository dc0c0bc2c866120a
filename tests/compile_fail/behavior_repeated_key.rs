use bt_core::{Ctx, behavior};

struct A;

fn f(_: &mut A, _: &Ctx) -> bool {
    true
}

behavior! { B: A, tick: f, tick: f }

fn main() {}
