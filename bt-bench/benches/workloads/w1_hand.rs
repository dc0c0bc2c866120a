//! W1 and W3 written by hand, with no library: the tree of WORKLOAD.md as
//! a Rust state machine over the running leaf, with bt-core's semantics
//! (preemption by an earlier sibling, a child that ended masked for the
//! rest of the tick, the sequence restarted when EAT is entered again,
//! PATROL's timer stamped when it lets PATROL through). It is the floor an
//! interpreter of the same tree is measured against: the same world, the
//! same decisions and the same activations, with nothing but a `match` on
//! the running leaf to dispatch on.
//!
//! IDLE draws as bt-core's random group does (a reservoir over the open
//! children, from the same generator with the same seed), so every
//! activation count is bt-core's exactly, which the bench checks.

use crate::w1_core::{Agent, sum};
use crate::world::{Activations, Beh, W1Flags, World, next, now};

/// The running leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Leaf {
    None,
    Flee,
    Yell,
    Fight,
    FindFood,
    EatFood,
    Patrol,
    Rest,
    Flip,
    Roll,
    Dance,
}

/// The root's children, in priority order.
const FLEE: u8 = 0;
const GUARD: u8 = 1;
const EAT: u8 = 2;
const PATROL: u8 = 3;
const REST: u8 = 4;
const IDLE: u8 = 5;
const IDLE_LEAVES: [Leaf; 3] = [Leaf::Flip, Leaf::Roll, Leaf::Dance];

/// As bt-core's timer slack.
const SLACK: f64 = 1e-6;
const PATROL_EVERY: f64 = 2.0;

impl Leaf {
    fn beh(self) -> Beh {
        match self {
            Leaf::None => unreachable!("no behavior runs"),
            Leaf::Flee => Beh::Flee,
            Leaf::Yell => Beh::Yell,
            Leaf::Fight => Beh::Fight,
            Leaf::FindFood => Beh::FindFood,
            Leaf::EatFood => Beh::EatFood,
            Leaf::Patrol => Beh::Patrol,
            Leaf::Rest => Beh::Rest,
            Leaf::Flip => Beh::Flip,
            Leaf::Roll => Beh::Roll,
            Leaf::Dance => Beh::Dance,
        }
    }

    /// The root's child this leaf runs under.
    fn root_child(self) -> u8 {
        match self {
            Leaf::None => u8::MAX,
            Leaf::Flee => FLEE,
            Leaf::Yell | Leaf::Fight => GUARD,
            Leaf::FindFood | Leaf::EatFood => EAT,
            Leaf::Patrol => PATROL,
            Leaf::Rest => REST,
            Leaf::Flip | Leaf::Roll | Leaf::Dance => IDLE,
        }
    }
}

/// One agent's decision state: 24 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Brain {
    /// When PATROL last started.
    patrol: f64,
    /// IDLE's generator.
    rng: u64,
    leaf: Leaf,
    /// Ticks the running leaf has run.
    count: u8,
}

impl Brain {
    fn new(i: usize) -> Self {
        // bt-core's seeding of an agent's generator, with the agent's
        // index as the seed (as the bt-core crowds make their memories).
        let mut rng = i as u64 ^ 0x9E37_79B9_7F4A_7C15;
        if rng == 0 {
            rng = 0x9E37_79B9_7F4A_7C15;
        }
        next(&mut rng);
        Brain {
            patrol: f64::NEG_INFINITY,
            rng,
            leaf: Leaf::None,
            count: 0,
        }
    }

    /// One tick: `f` is the tick's decision word, made before the tree
    /// runs (so a behavior that clears a fact does not change this tick's
    /// decisions); `scale` stretches every behavior (1: W1, 20: W3).
    #[inline(always)]
    fn tick(&mut self, a: &mut Agent, f: W1Flags, now: f64, scale: u8) {
        let running = self.leaf;
        if running == Leaf::None {
            return self.decide(a, f, now, scale, 0);
        }
        // An earlier child of the root that passes takes over.
        for c in 0..running.root_child() {
            if self.accepts(c, f, now) {
                return self.enter_root(a, f, now, scale, c, 0);
            }
        }
        // In GUARD, YELL takes over from FIGHT.
        if running == Leaf::Fight && f.contains(W1Flags::HURT) {
            return self.enter_leaf(a, f, now, scale, Leaf::Yell, 0, 0);
        }
        if !self.run(a, scale) {
            self.ended(a, f, now, scale, running, 0, 0);
        }
    }

    /// Whether root child `c` passes its tests (PATROL's timer is stamped
    /// when it lets PATROL through).
    #[inline(always)]
    fn accepts(&mut self, c: u8, f: W1Flags, now: f64) -> bool {
        match c {
            FLEE => f.contains(W1Flags::DANGER),
            GUARD => f.contains(W1Flags::HAS_NEST | W1Flags::INTRUDER),
            EAT => f.contains(W1Flags::HUNGRY),
            PATROL => {
                let ready =
                    f.contains(W1Flags::HAS_NEST) && now - self.patrol >= PATROL_EVERY - SLACK;
                if ready {
                    self.patrol = now;
                }
                ready
            }
            REST => f.contains(W1Flags::TIRED),
            _ => true,
        }
    }

    /// The root picks its first child not in `masked` that passes.
    fn decide(&mut self, a: &mut Agent, f: W1Flags, now: f64, scale: u8, masked: u8) {
        for c in FLEE..=IDLE {
            if masked & (1 << c) == 0 && self.accepts(c, f, now) {
                return self.enter_root(a, f, now, scale, c, masked);
            }
        }
        self.leaf = Leaf::None;
    }

    /// Enters root child `c`; `masked`: the root's children that ended
    /// this tick.
    fn enter_root(&mut self, a: &mut Agent, f: W1Flags, now: f64, scale: u8, c: u8, masked: u8) {
        let leaf = match c {
            FLEE => Leaf::Flee,
            GUARD => {
                a.count(Beh::GuardScope);
                if f.contains(W1Flags::HURT) {
                    Leaf::Yell
                } else {
                    Leaf::Fight
                }
            }
            EAT => Leaf::FindFood,
            PATROL => Leaf::Patrol,
            REST => Leaf::Rest,
            _ => IDLE_LEAVES[self.draw(0b111)],
        };
        self.enter_leaf(a, f, now, scale, leaf, masked, 0);
    }

    /// Activates `leaf` and runs its first tick; `masked` as in
    /// [`Brain::enter_root`], `group`: the children of its group that
    /// ended this tick.
    #[allow(clippy::too_many_arguments)]
    fn enter_leaf(
        &mut self,
        a: &mut Agent,
        f: W1Flags,
        now: f64,
        scale: u8,
        leaf: Leaf,
        masked: u8,
        group: u8,
    ) {
        a.count(leaf.beh());
        self.leaf = leaf;
        self.count = 0;
        if !self.run(a, scale) {
            self.ended(a, f, now, scale, leaf, masked, group);
        }
    }

    /// IDLE's draw among the children whose bits are set in `open` (not
    /// 0): the first is kept, and the `n`-th replaces it with chance
    /// `1 / n`, as bt-core's random group draws.
    #[inline(always)]
    fn draw(&mut self, mut open: u8) -> usize {
        let mut drawn = open.trailing_zeros();
        open &= open - 1;
        let mut total = 1;
        while open != 0 {
            total += 1;
            if (next(&mut self.rng) >> 11) * total < 1 << 53 {
                drawn = open.trailing_zeros();
            }
            open &= open - 1;
        }
        drawn as usize
    }

    /// One tick of the running leaf: whether it runs on.
    #[inline(always)]
    fn run(&mut self, a: &mut Agent, scale: u8) -> bool {
        let leaf = self.leaf;
        if leaf == Leaf::Flee {
            return a.world.danger;
        }
        self.count += 1;
        if self.count < leaf.beh().ticks() * scale {
            return true;
        }
        match leaf {
            Leaf::Fight => a.world.intruder = false,
            Leaf::EatFood => a.world.hungry = false,
            Leaf::Rest => a.world.tired = false,
            _ => {}
        }
        false
    }

    /// `leaf` ended: its group picks again, with `leaf` masked.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn ended(
        &mut self,
        a: &mut Agent,
        f: W1Flags,
        now: f64,
        scale: u8,
        leaf: Leaf,
        masked: u8,
        group: u8,
    ) {
        let next_leaf = match leaf {
            // GUARD: [YELL needs hurt, FIGHT], prioritized.
            Leaf::Yell if group & 2 == 0 => Some((Leaf::Fight, group | 1)),
            Leaf::Fight if group & 1 == 0 && f.contains(W1Flags::HURT) => {
                Some((Leaf::Yell, group | 2))
            }
            // EAT: [FIND_FOOD, EAT_FOOD], sequential.
            Leaf::FindFood => Some((Leaf::EatFood, 0)),
            // IDLE: random among the children that did not end.
            Leaf::Flip | Leaf::Roll | Leaf::Dance => {
                let group = group | 1 << (leaf as u8 - Leaf::Flip as u8);
                let open = 0b111 & !group;
                (open != 0).then(|| (IDLE_LEAVES[self.draw(open)], group))
            }
            _ => None,
        };
        match next_leaf {
            Some((l, group)) => self.enter_leaf(a, f, now, scale, l, masked, group),
            // The root's child ended (or ran out of children): the root
            // picks again.
            None => self.decide(a, f, now, scale, masked | 1 << leaf.root_child()),
        }
    }
}

/// A crowd: the agents (blackboard and check-sum counters, as bt-core's)
/// and their brains.
pub struct Crowd {
    pub agents: Vec<Agent>,
    pub brains: Vec<Brain>,
    /// W3 (longer behaviors, W3's world step) rather than W1.
    steady: bool,
}

impl Crowd {
    /// A W1 crowd.
    pub fn new(n: usize) -> Self {
        Self::with(n, false)
    }

    /// A W3 crowd.
    pub fn new_steady(n: usize) -> Self {
        Self::with(n, true)
    }

    fn with(n: usize, steady: bool) -> Self {
        Crowd {
            agents: (0..n)
                .map(|i| Agent {
                    world: World::spawn(i),
                    activations: [0; Beh::COUNT],
                })
                .collect(),
            brains: (0..n).map(Brain::new).collect(),
            steady,
        }
    }

    /// Tick `t`: the world step of every agent, then every agent's brain.
    #[inline(never)]
    pub fn tick(&mut self, t: u32) -> u32 {
        let scale = if self.steady {
            for a in &mut self.agents {
                a.world.step_steady();
            }
            crate::world::STEADY_SCALE
        } else {
            for a in &mut self.agents {
                a.world.step();
            }
            1
        };
        let now = now(t);
        for (a, b) in self.agents.iter_mut().zip(&mut self.brains) {
            let f = a.world.flags();
            b.tick(a, f, now, scale);
        }
        0
    }

    pub fn activations(&self) -> Activations {
        sum(self.agents.iter().map(|a| &a.activations))
    }
}

/// Bytes of one agent's brain.
pub fn brain_bytes() -> usize {
    size_of::<Brain>()
}
