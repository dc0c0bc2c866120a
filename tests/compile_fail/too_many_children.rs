use bt_core::{behavior, decider, group, tree};

struct A;

behavior! { B: A }

macro_rules! wide_group {
    ($($child:ident)*) => {
        $(decider! { $child: A => B })*
        group! { G: A, prioritized [$($child),*] }
    };
}

wide_group! {
    C00 C01 C02 C03 C04 C05 C06 C07 C08 C09 C10 C11 C12 C13 C14 C15
    C16 C17 C18 C19 C20 C21 C22 C23 C24 C25 C26 C27 C28 C29 C30 C31
    C32 C33 C34 C35 C36 C37 C38 C39 C40 C41 C42 C43 C44 C45 C46 C47
    C48 C49 C50 C51 C52 C53 C54 C55 C56 C57 C58 C59 C60 C61 C62 C63
    C64
}

tree! { T: A = G }

fn main() {}
