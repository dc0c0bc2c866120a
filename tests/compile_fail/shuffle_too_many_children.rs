use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }

macro_rules! wide_shuffle {
    ($($child:ident)*) => {
        $(decider! { $child: A => B })*
        group! { G: A, shuffle [$($child),*] }
    };
}

// 33 children: one more than a shuffle group's round mask holds (32),
// although a prioritized group could hold them (64).
wide_shuffle! {
    C00 C01 C02 C03 C04 C05 C06 C07 C08 C09 C10 C11 C12 C13 C14 C15
    C16 C17 C18 C19 C20 C21 C22 C23 C24 C25 C26 C27 C28 C29 C30 C31
    C32
}

tree! { T: A = G }

fn main() {}
