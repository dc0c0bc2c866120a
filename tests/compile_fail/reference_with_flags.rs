use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { WALK: A }
// A reference runs no behavior and decides no children: no decider flags.
reference! { GO: A => [ROOT, WALK], flags: DELEGATE_DECIDE }
group! { ROOT: A, prioritized [GO, WALK] }
tree! { T: A = ROOT }

fn main() {}
