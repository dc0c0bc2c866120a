//! W1 with bt-core: the tree of WORKLOAD.md as static tables, the timer and
//! the random group bt-core's own, tick counts in memory blocks, and the
//! blackboard turned into a decision-flags word each tick.

use bt_core::{TickInput, tick_all};

use crate::world::{Activations, Beh, DT, W1Flags, World, now};

/// The agent: the blackboard, and the check-sum counters.
pub struct Agent {
    pub world: World,
    pub activations: Activations,
}

impl Agent {
    /// Agent `i` at spawn, with no activation counted.
    pub fn spawn(i: usize) -> Self {
        Agent {
            world: World::spawn(i),
            activations: [0; Beh::COUNT],
        }
    }

    pub fn count(&mut self, b: Beh) {
        self.activations[b as usize] += 1;
    }
}

/// The memory block of a behavior that runs a fixed number of ticks; kept
/// in saved agent state (`persist`).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Ticks(u8);

/// One tick of an `n`-tick behavior: running `n - 1` times, done on the n-th.
pub fn step(m: &mut Ticks, n: u8) -> bool {
    m.0 += 1;
    m.0 < n
}

/// Declares the tree of WORKLOAD.md as `$tree` with the memory type
/// `$memory`, each behavior running `Beh::$ticks()` ticks: W1 with
/// `ticks`, W3 with `steady_ticks`; with `tuned`, the ticks read from the
/// tunables of W1 with tunables (`tree: [, tunables: …]`, and the
/// behaviors that read them typed by their table with `behaviors:
/// [tunables: …,]`).
macro_rules! creature_tree {
    ($tree:ident, $memory:ident, $ticks:ident) => {
        $crate::w1_core::creature_tree!($tree, $memory, $ticks, eat: [], yell: []);
    };
    // With more clauses for EAT and YELL_FOR_HELP (a gate, a cooldown).
    ($tree:ident, $memory:ident, $ticks:ident, eat: [$($eat:tt)*], yell: [$($yell:tt)*] $(, tree: [$($keys:tt)*])? $(, behaviors: [$($bk:tt)*])?) => {
        /// The behaviors, named as in WORKLOAD.md.
        mod act {
            use bt_core::behavior;

            use super::{Agent, Ticks, step};
            use crate::world::Beh;

            behavior! { pub FLEE: Agent,
                activate: |a, _cx| { a.count(Beh::Flee); true },
                // Runs while danger; fails when danger is off.
                tick: |a, _cx| a.world.danger,
            }
            behavior! { pub GUARD_SCOPE: Agent,
                activate: |a, _cx| { a.count(Beh::GuardScope); true },
                deactivate: |_a, _cx| {},
            }
            behavior! { pub YELL: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Yell); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, Yell, _cx)),
            }
            behavior! { pub FIGHT: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Fight); true },
                tick: |a, m, _cx| {
                    let running = step(m, crate::w1_core::len!($ticks, Fight, _cx));
                    if !running {
                        a.world.intruder = false;
                    }
                    running
                },
            }
            behavior! { pub FIND_FOOD: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::FindFood); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, FindFood, _cx)),
            }
            behavior! { pub EAT_FOOD: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::EatFood); true },
                tick: |a, m, _cx| {
                    let running = step(m, crate::w1_core::len!($ticks, EatFood, _cx));
                    if !running {
                        a.world.hungry = false;
                    }
                    running
                },
            }
            behavior! { pub PATROL: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Patrol); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, Patrol, _cx)),
            }
            behavior! { pub REST: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Rest); true },
                tick: |a, m, _cx| {
                    let running = step(m, crate::w1_core::len!($ticks, Rest, _cx));
                    if !running {
                        a.world.tired = false;
                    }
                    running
                },
            }
            behavior! { pub FLIP: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Flip); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, Flip, _cx)),
            }
            behavior! { pub ROLL: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Roll); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, Roll, _cx)),
            }
            behavior! { pub DANCE: Agent, memory: Ticks, persist, $($($bk)*)?
                activate: |a, _m, _cx| { a.count(Beh::Dance); true },
                tick: |_a, m, _cx| step(m, crate::w1_core::len!($ticks, Dance, _cx)),
            }
        }

        bt_core::decider! { FLEE: Agent => act::FLEE, needs_all: W1Flags::DANGER }
        bt_core::decider! { YELL_FOR_HELP: Agent => act::YELL, needs_all: W1Flags::HURT $($yell)* }
        bt_core::decider! { FIGHT: Agent => act::FIGHT }
        bt_core::group! { GUARD: Agent, prioritized [YELL_FOR_HELP, FIGHT],
            needs_all: W1Flags::HAS_NEST | W1Flags::INTRUDER,
            behavior: act::GUARD_SCOPE,
        }
        bt_core::decider! { FIND_FOOD: Agent => act::FIND_FOOD }
        bt_core::decider! { EAT_FOOD: Agent => act::EAT_FOOD }
        bt_core::group! { EAT: Agent, sequential [FIND_FOOD, EAT_FOOD],
            needs_all: W1Flags::HUNGRY $($eat)*
        }
        bt_core::decider! { PATROL: Agent => act::PATROL, needs_all: W1Flags::HAS_NEST, every: 2.0 }
        bt_core::decider! { REST: Agent => act::REST, needs_all: W1Flags::TIRED }
        bt_core::decider! { FLIP: Agent => act::FLIP }
        bt_core::decider! { ROLL: Agent => act::ROLL }
        bt_core::decider! { DANCE: Agent => act::DANCE }
        bt_core::group! { IDLE: Agent, random [FLIP, ROLL, DANCE] }
        bt_core::group! { ROOT: Agent, prioritized [FLEE, GUARD, EAT, PATROL, REST, IDLE] }
        bt_core::tree! { pub $tree: Agent = ROOT, memory: $memory $($($keys)*)? }
    };
}
#[allow(unused_imports)]
pub(crate) use creature_tree;

/// The ticks behavior `$b` runs: `Beh::$b.$ticks()`, or with `tuned` the
/// tunable of W1 with tunables that holds it.
#[allow(unused_macros)]
macro_rules! len {
    (tuned, $b:ident, $cx:ident) => {
        crate::w1_tuned::ticks(crate::world::Beh::$b, $cx)
    };
    ($ticks:ident, $b:ident, $cx:ident) => {
        crate::world::Beh::$b.$ticks()
    };
}
#[allow(unused_imports)]
pub(crate) use len;

creature_tree!(W1, W1Memory, ticks);

/// A crowd of `n` agents with their memories.
pub struct Crowd {
    pub agents: Vec<Agent>,
    pub memories: Vec<W1Memory>,
}

impl Crowd {
    pub fn new(n: usize) -> Self {
        Crowd {
            agents: (0..n).map(Agent::spawn).collect(),
            memories: (0..n).map(|i| W1.new_memory(i as u64)).collect(),
        }
    }

    /// Tick `t`: the world step of every agent, then the tree for every
    /// agent. Returns the number of agents whose tick failed.
    #[inline(never)]
    pub fn tick(&mut self, t: u32) -> u32 {
        self.world_step();
        self.tree_tick(t)
    }

    /// The world step of every agent: the first half of [`tick`](Self::tick).
    #[inline(always)]
    pub fn world_step(&mut self) {
        for a in &mut self.agents {
            a.world.step();
        }
    }

    /// The tree tick `t` of every agent: the second half of
    /// [`tick`](Self::tick).
    #[inline(always)]
    pub fn tree_tick(&mut self, t: u32) -> u32 {
        let now = now(t);
        let report = tick_all(&W1, &mut self.agents, &mut self.memories, |_, a| {
            TickInput::new(now, DT).with_decision(a.world.flags())
        });
        report.errors
    }

    pub fn activations(&self) -> Activations {
        sum(self.agents.iter().map(|a| &a.activations))
    }
}

/// Adds up per-agent counters.
pub fn sum<'a>(all: impl Iterator<Item = &'a Activations>) -> Activations {
    all.fold([0; Beh::COUNT], |mut acc, a| {
        for (s, x) in acc.iter_mut().zip(a) {
            *s += x;
        }
        acc
    })
}

/// Bytes of one agent's `AgentMemory`.
pub fn memory_bytes() -> usize {
    W1Memory::byte_size()
}

/// The tree's shape, for the report.
pub fn shape() -> (usize, usize, usize, usize) {
    (W1.len(), W1.levels(), W1.slots(), W1.block_size())
}
