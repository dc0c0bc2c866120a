use bt_core::{behavior, decider, tree};

struct A;

#[repr(align(32))]
#[derive(Default)]
struct Wide(u8);

behavior! { WIDE: A, memory: Wide }
decider! { D: A => WIDE }
tree! { T: A = D }

fn main() {}
