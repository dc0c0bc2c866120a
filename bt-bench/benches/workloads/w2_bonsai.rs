//! W2 with bonsai-bt: the same generated trees, built at run time, one `BT`
//! per agent. As in W1, a prioritized group is a reactive selector whose
//! children are `Sequence([Bit(i % 64), body]).memory(false)`, so every
//! precondition on the running branch is re-checked every tick; the root
//! loops with `While(WaitForever, ..)` and falls back to an `Idle` leaf
//! (running, no behavior) when the root's own precondition fails. A leaf's
//! 3-tick count lives in the blackboard.

use bonsai_bt::{
    Action, ActionArgs, BT, Behavior, Event, Failure, Running, Select, Sequence, Status, Success,
    UpdateArgs, WaitForever, While,
};

use crate::world::{DT, next, seed};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// "bit `i` of the mask is set".
    Bit(u8),
    /// A leaf behavior, by its decider's preorder index.
    Run(u16),
    /// Nothing to do: keeps the tree running.
    Idle,
}

pub struct Board {
    rng: u64,
    mask: u64,
    running: u16,
    count: u8,
    pub leaves: u32,
}

const NONE: u16 = u16::MAX;

impl Board {
    fn act(&mut self, leaf: Leaf, dt: f64) -> (Status, f64) {
        match leaf {
            Leaf::Bit(b) => (
                if self.mask & (1 << b) != 0 {
                    Success
                } else {
                    Failure
                },
                dt,
            ),
            Leaf::Run(i) => {
                if self.running != i {
                    self.running = i;
                    self.count = 0;
                    self.leaves += 1;
                }
                self.count += 1;
                if self.count < 3 {
                    return (Running, 0.0);
                }
                self.running = NONE;
                (Success, 0.0)
            }
            Leaf::Idle => {
                self.running = NONE;
                (Running, 0.0)
            }
        }
    }
}

/// The decider with preorder index `*pre` and `below` levels below it.
fn decider(pre: &mut usize, below: usize, f: usize) -> Behavior<Leaf> {
    let i = *pre;
    *pre += 1;
    let body = if below == 0 {
        Action(Leaf::Run(i as u16))
    } else {
        Select((0..f).map(|_| decider(pre, below - 1, f)).collect()).memory(false)
    };
    Sequence(vec![Action(Leaf::Bit((i % 64) as u8)), body]).memory(false)
}

/// The W2 tree of depth `d` and fan-out `f`, and its decider count.
pub fn tree(d: usize, f: usize) -> (Behavior<Leaf>, usize) {
    let mut pre = 0;
    let root = decider(&mut pre, d, f);
    let top = Select(vec![root, Action(Leaf::Idle)]).memory(false);
    (While(Box::new(WaitForever), vec![top]), pre)
}

pub struct Crowd {
    bts: Vec<BT<Leaf, Board>>,
}

impl Crowd {
    pub fn new(n: usize, d: usize, f: usize) -> Self {
        let (tree, _) = tree(d, f);
        Crowd {
            bts: (0..n)
                .map(|i| {
                    let board = Board {
                        rng: seed(i),
                        mask: 0,
                        running: NONE,
                        count: 0,
                        leaves: 0,
                    };
                    BT::new(tree.clone(), board)
                })
                .collect(),
        }
    }

    #[inline(never)]
    pub fn tick(&mut self, _t: u32) -> u32 {
        for bt in &mut self.bts {
            let b = bt.blackboard_mut();
            b.mask = next(&mut b.rng) & next(&mut b.rng);
        }
        let event: Event = UpdateArgs { dt: f64::from(DT) }.into();
        let mut act =
            |args: ActionArgs<Event, Leaf>, board: &mut Board| board.act(*args.action, args.dt);
        let mut stopped = 0;
        for bt in &mut self.bts {
            match bt.tick(&event, &mut act) {
                Some((Running, _)) => {}
                _ => stopped += 1,
            }
        }
        stopped
    }

    pub fn leaves(&self) -> u64 {
        self.bts
            .iter()
            .map(|bt| u64::from(bt.blackboard().leaves))
            .sum()
    }
}

pub fn inline_bytes() -> usize {
    std::mem::size_of::<BT<Leaf, Board>>()
}
