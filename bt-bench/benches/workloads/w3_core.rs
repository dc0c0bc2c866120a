//! W3 with bt-core: W1's tree (see `w1_core.rs`) with every behavior 20
//! times longer and W3's world step, which turns things on 20 times less
//! often: most agent-ticks only confirm what is already running.

use bt_core::{TickInput, tick_all};

use crate::w1_core::{Agent, Ticks, step, sum};
use crate::world::{Activations, DT, W1Flags, now};

crate::w1_core::creature_tree!(W3, W3Memory, steady_ticks);

/// A crowd of `n` agents with their memories.
pub struct Crowd {
    pub agents: Vec<Agent>,
    pub memories: Vec<W3Memory>,
    /// Agent-ticks in which nothing was activated or deactivated.
    pub steady: u64,
}

impl Crowd {
    pub fn new(n: usize) -> Self {
        Crowd {
            agents: (0..n).map(Agent::spawn).collect(),
            memories: (0..n).map(|i| W3.new_memory(i as u64)).collect(),
            steady: 0,
        }
    }

    /// Tick `t`: W3's world step of every agent, then the tree for every
    /// agent. Returns the number of agents whose tick failed.
    #[inline(never)]
    pub fn tick(&mut self, t: u32) -> u32 {
        self.world_step();
        self.tree_tick(t)
    }

    /// W3's world step of every agent: the first half of
    /// [`tick`](Self::tick).
    #[inline(always)]
    pub fn world_step(&mut self) {
        for a in &mut self.agents {
            a.world.step_steady();
        }
    }

    /// The tree tick `t` of every agent: the second half of
    /// [`tick`](Self::tick).
    #[inline(always)]
    pub fn tree_tick(&mut self, t: u32) -> u32 {
        let now = now(t);
        let report = tick_all(&W3, &mut self.agents, &mut self.memories, |_, a| {
            TickInput::new(now, DT).with_decision(a.world.flags())
        });
        self.steady += u64::from(report.ticked - report.changed);
        report.errors
    }

    pub fn activations(&self) -> Activations {
        sum(self.agents.iter().map(|a| &a.activations))
    }
}

/// Bytes of one agent's `AgentMemory`.
pub fn memory_bytes() -> usize {
    W3Memory::byte_size()
}
