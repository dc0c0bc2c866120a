use bt_core::{leaf, tree};

struct A;

leaf! { IDLE: A }
// The alias takes the tree's visibility.
tree! { pub T: A = IDLE, memory: pub TMemory }

fn main() {}
