use bt_core::{behavior, leaf};

struct A;

behavior! { B: A }
leaf! { L: A, tick: |_, _| true, behavior: B }

fn main() {}
