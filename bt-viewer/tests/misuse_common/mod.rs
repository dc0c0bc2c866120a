//! The tree and the recordings the misuse tests share.
#![allow(dead_code)]

use bt_core::{TickInput, Tree, behavior, decider, group, tree};
use bt_viewer::{Capacity, FlightRecorder, Watch};

pub struct Critter {
    pub hunger: f32,
}

behavior! { EAT: Critter, tick: |_c, _cx| false }
behavior! { WANDER: Critter, tick: |_c, _cx| false }
decider! { FEED: Critter => EAT, decide: |c, _| c.hunger }
decider! { ROAM: Critter => WANDER }
group! { ROOT: Critter, prioritized [FEED, ROAM] }
tree! { pub CRITTER: Critter = ROOT }
// Another tree over the very same items: one shape, another name.
tree! { pub HERD: Critter = ROOT }

/// The same tree's name with another structure: one more decider.
pub mod grown {
    use super::{Critter, EAT, WANDER};
    use bt_core::{behavior, decider, group, tree};
    behavior! { NAP: Critter, tick: |_c, _cx| false }
    decider! { FEED: Critter => EAT, decide: |c, _| c.hunger }
    decider! { ROAM: Critter => WANDER }
    decider! { SLEEP: Critter => NAP }
    group! { ROOT: Critter, prioritized [FEED, ROAM, SLEEP] }
    tree! { pub CRITTER: Critter = ROOT }
}

/// The same tree's name and items, the children in another order.
pub mod reordered {
    use super::{Critter, EAT, WANDER};
    use bt_core::{decider, group, tree};
    decider! { FEED: Critter => EAT, decide: |c, _| c.hunger }
    decider! { ROAM: Critter => WANDER }
    group! { ROOT: Critter, prioritized [ROAM, FEED] }
    tree! { pub CRITTER: Critter = ROOT }
}

/// The same tree's name and shape, one decider renamed.
pub mod renamed {
    use super::{Critter, EAT, WANDER};
    use bt_core::{decider, group, tree};
    decider! { GRAZE: Critter => EAT, decide: |c, _| c.hunger }
    decider! { ROAM: Critter => WANDER }
    group! { ROOT: Critter, prioritized [GRAZE, ROAM] }
    tree! { pub CRITTER: Critter = ROOT }
}

impl bt_viewer::AgentData for Critter {
    fn record(&self, out: &mut bt_viewer::DataOut<'_>) {
        out.num("hunger", f64::from(self.hunger));
    }
}

/// How a run is recorded.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub agents: usize,
    pub ticks: u64,
    pub capacity: usize,
    pub watch: &'a [usize],
    pub compact: bool,
}

impl Default for Run<'_> {
    fn default() -> Self {
        Run {
            agents: 6,
            ticks: 30,
            capacity: 30,
            watch: &[],
            compact: false,
        }
    }
}

/// Records `run` of `tree`, each agent's hunger at each tick given by
/// `hunger(agent, tick)` (0 or less: FEED's decide rejects).
pub fn record<const L: usize, const S: usize, const N: usize>(
    tree: &'static Tree<Critter, L, S, N>,
    run: Run<'_>,
    hunger: impl Fn(usize, u64) -> f32,
) -> String {
    let mut critters: Vec<Critter> = (0..run.agents).map(|_| Critter { hunger: 0.0 }).collect();
    let mut memories: Vec<_> = (0..run.agents).map(|i| tree.new_memory(i as u64)).collect();
    let watch = if run.watch.is_empty() {
        Watch::All
    } else {
        Watch::Agents(run.watch)
    };
    let mut recorder = FlightRecorder::new(tree, run.agents, watch, Capacity::ticks(run.capacity));
    for t in 0..run.ticks {
        for (i, c) in critters.iter_mut().enumerate() {
            c.hunger = hunger(i, t);
        }
        recorder.tick_all(tree, &mut critters, &mut memories, |i, _| {
            TickInput::new(t as f64 * 0.1, 0.1).with_agent(i as u32)
        });
    }
    if run.compact {
        recorder.export_compact().to_json()
    } else {
        recorder.export().to_json()
    }
}

/// Agent 2 gets hungry from tick 12 on (in the "after" run), agent 4 eats
/// with another appetite from tick 24 on; everything else alike.
pub fn before(_: usize, t: u64) -> f32 {
    if t % 7 == 3 { 1.0 } else { 0.0 }
}
pub fn after(i: usize, t: u64) -> f32 {
    match i {
        2 if t >= 12 => 0.5,
        4 if t >= 20 && t % 7 == 3 => 2.0,
        _ => before(i, t),
    }
}
