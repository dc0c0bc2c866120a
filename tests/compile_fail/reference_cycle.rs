use bt_core::{group, leaf, reference, tree};

struct A;

leaf! { WALK: A }
// Each jumps to the other: neither ever reaches a behavior.
reference! { THERE: A => [ROOT, BACK, BACK_AGAIN] }
reference! { BACK_AGAIN: A => [ROOT, FORTH, THERE] }
group! { FORTH: A, prioritized [THERE] }
group! { BACK: A, prioritized [BACK_AGAIN] }
group! { ROOT: A, prioritized [FORTH, BACK, WALK] }
tree! { T: A = ROOT }

fn main() {}
