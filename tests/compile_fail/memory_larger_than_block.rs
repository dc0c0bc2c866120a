use bt_core::{behavior, decider, tree};

struct A;

struct Big([u8; 256]);

impl Default for Big {
    fn default() -> Self {
        Big([0; 256])
    }
}

behavior! { B: A, memory: Big }
decider! { D: A => B }
tree! { T: A = D, block: 128 }

fn main() {}
