use bt_core::{behavior, decider, tree};

struct A;

behavior! { AIM: A, dblock: u32, activate: |_, target, _| target.is_some() }
decider! { D: A => AIM,
    decide: |_, d| {
        d.set("north");
        1.0
    },
}
tree! { T: A = D }

fn main() {}
