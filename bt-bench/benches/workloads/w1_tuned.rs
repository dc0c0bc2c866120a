//! W1 with its constants turned into tunables: each behavior reads the
//! ticks it runs from the crowd's tunables (their defaults W1's), so the
//! decisions are W1's and the difference is the cost of the reads.

use bt_core::{Ctx, TickInput, tick_all, tunables};

use crate::w1_core::{Agent, sum};
use crate::world::{Activations, Beh, DT, now};

tunables! { pub W1_TUNING:
    /// Ticks YELL runs.
    YELL_TICKS: i64 = 2, 1..=255;
    /// Ticks FIGHT runs.
    FIGHT_TICKS: i64 = 5, 1..=255;
    /// Ticks FIND_FOOD runs.
    FIND_FOOD_TICKS: i64 = 3, 1..=255;
    /// Ticks EAT_FOOD runs.
    EAT_FOOD_TICKS: i64 = 4, 1..=255;
    /// Ticks PATROL runs.
    PATROL_TICKS: i64 = 10, 1..=255;
    /// Ticks REST runs.
    REST_TICKS: i64 = 6, 1..=255;
    /// Ticks FLIP runs.
    FLIP_TICKS: i64 = 2, 1..=255;
    /// Ticks ROLL runs.
    ROLL_TICKS: i64 = 3, 1..=255;
    /// Ticks DANCE runs.
    DANCE_TICKS: i64 = 4, 1..=255;
}

/// The ticks behavior `b` runs, read from the tunables by a context typed
/// by their table.
#[inline(always)]
pub fn ticks(b: Beh, cx: &Ctx<W1_TUNING>) -> u8 {
    let tunable = match b {
        Beh::Yell => YELL_TICKS,
        Beh::Fight => FIGHT_TICKS,
        Beh::FindFood => FIND_FOOD_TICKS,
        Beh::EatFood => EAT_FOOD_TICKS,
        Beh::Patrol => PATROL_TICKS,
        Beh::Rest => REST_TICKS,
        Beh::Flip => FLIP_TICKS,
        Beh::Roll => ROLL_TICKS,
        Beh::Dance => DANCE_TICKS,
        Beh::Flee | Beh::GuardScope => return 0,
    };
    cx.tuned(tunable) as u8
}

mod tree {
    use crate::w1_core::{Agent, Ticks, step};
    use crate::world::W1Flags;

    use super::W1_TUNING;

    crate::w1_core::creature_tree!(W1T, W1TMemory, tuned, eat: [], yell: [],
        tree: [, tunables: W1_TUNING], behaviors: [tunables: super::W1_TUNING,]);
}

pub use tree::{W1T, W1TMemory};

/// A crowd of one tree ticked as W1's is: written once for W1 with
/// tunables and for its twin, W1 itself, so that the code around the tree
/// is the same in both (the instructions of W1's own crowd function move
/// by about 2 % with where the compiler keeps its values, see
/// `bt-bench/README.md`).
macro_rules! crowd {
    ($tree:path, $memory:ty, $memories:expr) => {
        /// A crowd of `n` agents with their memories.
        pub struct Crowd {
            pub agents: Vec<Agent>,
            pub memories: Vec<$memory>,
        }

        impl Crowd {
            pub fn new(n: usize) -> Self {
                let memories: fn(usize) -> Vec<$memory> = $memories;
                Crowd {
                    agents: (0..n).map(Agent::spawn).collect(),
                    memories: memories(n),
                }
            }

            /// Tick `t`: the world step of every agent, then the tree for
            /// every agent. Returns the number of agents whose tick failed.
            #[inline(never)]
            pub fn tick(&mut self, t: u32) -> u32 {
                self.world_step();
                self.tree_tick(t)
            }

            /// The world step of every agent.
            #[inline(always)]
            pub fn world_step(&mut self) {
                for a in &mut self.agents {
                    a.world.step();
                }
            }

            /// The tree tick `t` of every agent.
            #[inline(always)]
            pub fn tree_tick(&mut self, t: u32) -> u32 {
                let now = now(t);
                let report = tick_all(&$tree, &mut self.agents, &mut self.memories, |_, a| {
                    TickInput::new(now, DT).with_decision(a.world.flags())
                });
                report.errors
            }

            pub fn activations(&self) -> Activations {
                sum(self.agents.iter().map(|a| &a.activations))
            }
        }
    };
}

// W1 with tunables: memories bound to one shared state, which holds the
// values.
crowd!(W1T, W1TMemory, |n| {
    let shared = W1T.new_shared(0);
    (0..n)
        .map(|i| W1T.new_memory_in(&shared, i as u64))
        .collect()
});

/// W1 itself, ticked by the same code as W1 with tunables.
pub mod twin {
    use bt_core::{TickInput, tick_all};

    use crate::w1_core::{Agent, W1, W1Memory, sum};
    use crate::world::{Activations, DT, now};

    crowd!(W1, W1Memory, |n| (0..n)
        .map(|i| W1.new_memory(i as u64))
        .collect());
}
