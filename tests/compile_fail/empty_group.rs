use bt_core::{group, tree};

struct A;

group! { G: A, prioritized [] }
tree! { T: A = G }

fn main() {}
