//! W2 with bt-core: the generated trees, declared at compile time.
//!
//! `w2_node!` writes one module per decider, nested as the tree is: each
//! module holds the decider `NODE`, its preorder index `PRE` (computed by
//! `const` arithmetic from the parent's) and its precondition `BIT`
//! (bit `PRE % 64` of the mask). The number of levels below a node is
//! written as nested brackets: `[]` is a leaf, `[[]]` a group of leaves.

use bt_core::{TickInput, behavior, tick_all, tree};

use crate::world::{DT, next, now, seed};

bitflags::bitflags! {
    /// The 64-bit mask, as decision flags: every bit is a flag.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Mask: u64 {
        const _ = !0;
    }
}

/// The agent: its generator, this tick's mask, and a check-sum.
pub struct Agent {
    pub rng: u64,
    pub mask: u64,
    pub leaves: u32,
}

impl Agent {
    pub fn spawn(i: usize) -> Self {
        Agent {
            rng: seed(i),
            mask: 0,
            leaves: 0,
        }
    }

    /// The world step: a new mask, each bit set with probability 1/4.
    #[inline]
    pub fn step(&mut self) {
        self.mask = next(&mut self.rng) & next(&mut self.rng);
    }
}

/// The leaf behavior's memory block: its ticks so far.
#[derive(Default)]
pub struct Ticks(u8);

behavior! {
    /// Every leaf: runs 3 ticks and succeeds.
    pub LEAF: Agent,
    memory: Ticks,
    activate: |a, _m, _cx| { a.leaves += 1; true },
    tick: |_a, m, _cx| { m.0 += 1; m.0 < 3 },
}

/// Deciders in a subtree whose root has `below` levels below it.
pub const fn size(fan_out: usize, below: usize) -> usize {
    let mut n = 0;
    let mut level = 1;
    let mut i = 0;
    while i <= below {
        n += level;
        level *= fan_out;
        i += 1;
    }
    n
}

/// The precondition of the decider with preorder index `pre`.
pub const fn bit(pre: usize) -> Mask {
    Mask::from_bits_retain(1 << (pre % 64))
}

/// Writes the deciders below a module that defines `PRE`, `BELOW` and `BIT`.
macro_rules! w2_node {
    // Exit: a leaf, a behavior decider.
    (f: $f:literal, below: [], kids: $kids:tt $all:tt) => {
        bt_core::decider! { pub NODE: crate::w2_core::Agent => crate::w2_core::LEAF, needs_all: BIT }
    };
    // A group: a module per child (each writing its own subtree), then the
    // prioritized group of the children's deciders.
    (f: $f:literal, below: [$below:tt], kids: [$(($c:ident $k:literal))*] $all:tt) => {
        $(
            pub mod $c {
                pub const BELOW: usize = super::BELOW - 1;
                pub const PRE: usize = super::PRE + 1 + $k * crate::w2_core::size($f, BELOW);
                pub const BIT: crate::w2_core::Mask = crate::w2_core::bit(PRE);
                w2_node! { f: $f, below: $below, kids: $all $all }
            }
        )*
        bt_core::group! { pub NODE: crate::w2_core::Agent, prioritized [$($c::NODE),*], needs_all: BIT }
    };
}

/// Writes a whole tree's deciders in the module it is called in.
macro_rules! w2_tree {
    (f: $f:literal, d: $d:literal, below: $below:tt, kids: $kids:tt) => {
        pub const BELOW: usize = $d;
        pub const PRE: usize = 0;
        pub const BIT: crate::w2_core::Mask = crate::w2_core::bit(0);
        w2_node! { f: $f, below: $below, kids: $kids $kids }
    };
}

/// (D, F) = (2, 8): 73 deciders.
pub mod d2f8 {
    w2_tree! { f: 8, d: 2, below: [[[]]],
    kids: [(c0 0) (c1 1) (c2 2) (c3 3) (c4 4) (c5 5) (c6 6) (c7 7)] }
}

/// (D, F) = (3, 8): 585 deciders.
pub mod d3f8 {
    w2_tree! { f: 8, d: 3, below: [[[[]]]],
    kids: [(c0 0) (c1 1) (c2 2) (c3 3) (c4 4) (c5 5) (c6 6) (c7 7)] }
}

/// (D, F) = (4, 6): 1 555 deciders.
pub mod d4f6 {
    w2_tree! { f: 6, d: 4, below: [[[[[]]]]],
    kids: [(c0 0) (c1 1) (c2 2) (c3 3) (c4 4) (c5 5)] }
}

tree! { pub W2_D2F8: Agent = d2f8::NODE, memory: Mem2x8 }
tree! { pub W2_D3F8: Agent = d3f8::NODE, memory: Mem3x8 }
tree! { pub W2_D4F6: Agent = d4f6::NODE, memory: Mem4x6 }

/// One W2 size, as a type-erased runner so the bench can loop over them.
pub trait Size {
    fn new(n: usize) -> Self;
    /// Tick `t` of every agent; returns the number of failed ticks.
    fn tick(&mut self, t: u32) -> u32;
    fn leaves(&self) -> u64;
}

macro_rules! crowd {
    ($name:ident, $tree:ident, $mem:ident) => {
        pub struct $name {
            agents: Vec<Agent>,
            memories: Vec<$mem>,
        }

        impl Size for $name {
            fn new(n: usize) -> Self {
                $name {
                    agents: (0..n).map(Agent::spawn).collect(),
                    memories: (0..n).map(|i| $tree.new_memory(i as u64)).collect(),
                }
            }

            #[inline(never)]
            fn tick(&mut self, t: u32) -> u32 {
                for a in &mut self.agents {
                    a.step();
                }
                let now = now(t);
                let report = tick_all(&$tree, &mut self.agents, &mut self.memories, |_, a| {
                    TickInput::new(now, DT).with_decision_bits(a.mask)
                });
                report.errors
            }

            fn leaves(&self) -> u64 {
                self.agents.iter().map(|a| u64::from(a.leaves)).sum()
            }
        }
    };
}

crowd!(Crowd2x8, W2_D2F8, Mem2x8);
crowd!(Crowd3x8, W2_D3F8, Mem3x8);
crowd!(Crowd4x6, W2_D4F6, Mem4x6);

/// Checks a generated tree against WORKLOAD.md: its size, its depth, and
/// every decider's precondition bit by preorder index. Returns
/// `(deciders, memory bytes)`.
fn check<const L: usize, const S: usize, const N: usize>(
    tree: &bt_core::Tree<Agent, L, S, N>,
    d: usize,
    f: usize,
) -> usize {
    assert_eq!(tree.len(), size(f, d), "{}: decider count", tree.name());
    assert_eq!(tree.levels(), d + 1, "{}: levels", tree.name());
    for node in tree.nodes() {
        let i = node.index().get();
        let test = node.decider().preconditions().decision;
        assert_eq!(test.all, 1u64 << (i % 64), "{}: decider {i}", tree.name());
        assert_eq!(
            node.is_group(),
            node.depth() < d,
            "{}: decider {i}",
            tree.name()
        );
    }
    tree.len()
}

/// The three sizes: `(D, F, deciders, memory bytes)`, checked.
pub fn sizes() -> [(usize, usize, usize, usize); 3] {
    [
        (2, 8, check(&W2_D2F8, 2, 8), Mem2x8::byte_size()),
        (3, 8, check(&W2_D3F8, 3, 8), Mem3x8::byte_size()),
        (4, 6, check(&W2_D4F6, 4, 6), Mem4x6::byte_size()),
    ]
}
