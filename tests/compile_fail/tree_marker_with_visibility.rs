use bt_core::{leaf, tree};

struct A;

leaf! { IDLE: A }
// The marker type takes the tree's visibility.
tree! { pub T: A = IDLE, marker: pub TTree }

fn main() {}
