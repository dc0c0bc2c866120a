//! W1 and W3 written by hand, with no library: the tree of WORKLOAD.md as
//! a Rust state machine over the running leaf, with bt-core's semantics
//! (preemption by an earlier sibling, a child that ended masked for the
//! rest of the tick, the sequence restarted when EAT is entered again,
//! PATROL's timer stamped when it lets PATROL through). It is the floor an
//! interpreter of the same tree is measured against: the same world, the
//! same decisions and the same activations, with nothing but a `match` on
//! the running leaf to dispatch on. The crowds made with `calls` run each
//! behavior's tick through a table of functions instead ([`CALLS`]), as
//! a library must.
//!
//! IDLE draws as bt-core's random group does (a reservoir over the open
//! children, from the same generator with the same seed), so every
//! activation count is bt-core's exactly, which the bench checks.

use crate::w1_core::{Agent, sum};
use crate::world::{Activations, Beh, W1Flags, next, now};

/// The root's children, in priority order.
const FLEE: u8 = 0;
const GUARD: u8 = 1;
const EAT: u8 = 2;
const PATROL: u8 = 3;
const REST: u8 = 4;
const IDLE: u8 = 5;
const IDLE_LEAVES: [Beh; 3] = [Beh::Flip, Beh::Roll, Beh::Dance];

/// As bt-core's timer slack.
const SLACK: f64 = 1e-6;
const PATROL_EVERY: f64 = 2.0;

/// The root's child the leaf running `b` sits under.
fn root_child(b: Beh) -> u8 {
    match b {
        Beh::Flee => FLEE,
        Beh::GuardScope | Beh::Yell | Beh::Fight => GUARD,
        Beh::FindFood | Beh::EatFood => EAT,
        Beh::Patrol => PATROL,
        Beh::Rest => REST,
        Beh::Flip | Beh::Roll | Beh::Dance => IDLE,
    }
}

/// What every step of one agent's tick reads.
#[derive(Clone, Copy)]
struct Now {
    /// The tick's decision word, made before the tree runs (so a behavior
    /// that clears a fact does not change this tick's decisions).
    f: W1Flags,
    now: f64,
    /// How many times longer than W1's every behavior runs (1: W1, 20: W3).
    scale: u8,
}

/// One agent's decision state: 24 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Brain {
    /// When PATROL last started.
    patrol: f64,
    /// IDLE's generator.
    rng: u64,
    /// The running leaf's behavior.
    leaf: Option<Beh>,
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
            leaf: None,
            count: 0,
        }
    }

    /// One tick.
    #[inline(always)]
    fn tick<const C: bool>(&mut self, a: &mut Agent, t: Now) {
        let Some(running) = self.leaf else {
            return self.decide::<C>(a, t, 0);
        };
        // An earlier child of the root that passes takes over.
        for c in 0..root_child(running) {
            if self.accepts(c, t) {
                return self.enter_root::<C>(a, t, c, 0);
            }
        }
        // In GUARD, YELL takes over from FIGHT.
        if running == Beh::Fight && t.f.contains(W1Flags::HURT) {
            return self.enter_leaf::<C>(a, t, Beh::Yell, 0, 0);
        }
        if !self.run::<C>(a, t, running) {
            self.ended::<C>(a, t, running, 0, 0);
        }
    }

    /// Whether root child `c` passes its tests (PATROL's timer is stamped
    /// when it lets PATROL through).
    #[inline(always)]
    fn accepts(&mut self, c: u8, t: Now) -> bool {
        match c {
            FLEE => t.f.contains(W1Flags::DANGER),
            GUARD => t.f.contains(W1Flags::HAS_NEST | W1Flags::INTRUDER),
            EAT => t.f.contains(W1Flags::HUNGRY),
            PATROL => {
                let ready =
                    t.f.contains(W1Flags::HAS_NEST) && t.now - self.patrol >= PATROL_EVERY - SLACK;
                if ready {
                    self.patrol = t.now;
                }
                ready
            }
            REST => t.f.contains(W1Flags::TIRED),
            _ => true,
        }
    }

    /// The root picks its first child not in `masked` that passes.
    fn decide<const C: bool>(&mut self, a: &mut Agent, t: Now, masked: u8) {
        for c in FLEE..=IDLE {
            if masked & (1 << c) == 0 && self.accepts(c, t) {
                return self.enter_root::<C>(a, t, c, masked);
            }
        }
        self.leaf = None;
    }

    /// Enters root child `c`; `masked`: the root's children that ended
    /// this tick.
    fn enter_root<const C: bool>(&mut self, a: &mut Agent, t: Now, c: u8, masked: u8) {
        let leaf = match c {
            FLEE => Beh::Flee,
            GUARD => {
                a.count(Beh::GuardScope);
                if t.f.contains(W1Flags::HURT) {
                    Beh::Yell
                } else {
                    Beh::Fight
                }
            }
            EAT => Beh::FindFood,
            PATROL => Beh::Patrol,
            REST => Beh::Rest,
            _ => IDLE_LEAVES[self.draw(0b111)],
        };
        self.enter_leaf::<C>(a, t, leaf, masked, 0);
    }

    /// Activates `leaf` and runs its first tick; `masked` as in
    /// [`Brain::enter_root`], `group`: the children of its group that
    /// ended this tick.
    fn enter_leaf<const C: bool>(
        &mut self,
        a: &mut Agent,
        t: Now,
        leaf: Beh,
        masked: u8,
        group: u8,
    ) {
        a.count(leaf);
        self.leaf = Some(leaf);
        self.count = 0;
        if !self.run::<C>(a, t, leaf) {
            self.ended::<C>(a, t, leaf, masked, group);
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

    /// One tick of the running leaf, `leaf`: whether it runs on. `C`:
    /// through a call to a function of its own (see [`CALLS`]).
    #[inline(always)]
    fn run<const C: bool>(&mut self, a: &mut Agent, t: Now, leaf: Beh) -> bool {
        if C {
            CALLS[leaf as usize](self, a, t)
        } else {
            self.run_here(a, t, leaf)
        }
    }

    /// [`Brain::run`] written out.
    #[inline(always)]
    fn run_here(&mut self, a: &mut Agent, t: Now, leaf: Beh) -> bool {
        if leaf == Beh::Flee {
            return a.world.danger;
        }
        self.count += 1;
        if self.count < leaf.ticks() * t.scale {
            return true;
        }
        match leaf {
            Beh::Fight => a.world.intruder = false,
            Beh::EatFood => a.world.hungry = false,
            Beh::Rest => a.world.tired = false,
            _ => {}
        }
        false
    }

    /// `leaf` ended: its group picks again, with `leaf` masked (`masked`
    /// and `group` as in [`Brain::enter_leaf`]).
    #[cold]
    fn ended<const C: bool>(&mut self, a: &mut Agent, t: Now, leaf: Beh, masked: u8, group: u8) {
        let next_leaf = match leaf {
            // GUARD: [YELL needs hurt, FIGHT], prioritized.
            Beh::Yell if group & 2 == 0 => Some((Beh::Fight, group | 1)),
            Beh::Fight if group & 1 == 0 && t.f.contains(W1Flags::HURT) => {
                Some((Beh::Yell, group | 2))
            }
            // EAT: [FIND_FOOD, EAT_FOOD], sequential.
            Beh::FindFood => Some((Beh::EatFood, 0)),
            // IDLE: random among the children that did not end.
            Beh::Flip | Beh::Roll | Beh::Dance => {
                let group = group | 1 << (leaf as u8 - Beh::Flip as u8);
                let open = 0b111 & !group;
                (open != 0).then(|| (IDLE_LEAVES[self.draw(open)], group))
            }
            _ => None,
        };
        match next_leaf {
            Some((l, group)) => self.enter_leaf::<C>(a, t, l, masked, group),
            // The root's child ended (or ran out of children): the root
            // picks again.
            None => self.decide::<C>(a, t, masked | 1 << root_child(leaf)),
        }
    }
}

/// Each behavior's tick as a function of its own, called through this
/// table by the crowds made with `calls`: the dispatch any library pays
/// that runs behaviors it did not write, and the floor for such a
/// library. (The plain crowds inline every behavior into one `match`.)
type Run = fn(&mut Brain, &mut Agent, Now) -> bool;
static CALLS: [Run; Beh::COUNT] = [
    run_one::<0>,
    run_one::<1>,
    run_one::<2>,
    run_one::<3>,
    run_one::<4>,
    run_one::<5>,
    run_one::<6>,
    run_one::<7>,
    run_one::<8>,
    run_one::<9>,
    run_one::<10>,
];

/// The tick of behavior `B` (`Beh::ALL[B]`).
#[inline(never)]
fn run_one<const B: usize>(brain: &mut Brain, a: &mut Agent, t: Now) -> bool {
    brain.run_here(a, t, Beh::ALL[B])
}

/// A crowd: the agents (blackboard and check-sum counters, as bt-core's)
/// and their brains.
pub struct Crowd {
    pub agents: Vec<Agent>,
    pub brains: Vec<Brain>,
    /// W3 (longer behaviors, W3's world step) rather than W1.
    steady: bool,
    /// Behaviors called through [`CALLS`].
    calls: bool,
}

impl Crowd {
    /// A W1 crowd.
    pub fn new(n: usize) -> Self {
        Self::with(n, false, false)
    }

    /// A W3 crowd.
    pub fn new_steady(n: usize) -> Self {
        Self::with(n, true, false)
    }

    /// A W1 crowd that calls its behaviors through [`CALLS`].
    pub fn new_calls(n: usize) -> Self {
        Self::with(n, false, true)
    }

    /// A W3 crowd that calls its behaviors through [`CALLS`].
    pub fn new_steady_calls(n: usize) -> Self {
        Self::with(n, true, true)
    }

    fn with(n: usize, steady: bool, calls: bool) -> Self {
        Crowd {
            agents: (0..n).map(Agent::spawn).collect(),
            brains: (0..n).map(Brain::new).collect(),
            steady,
            calls,
        }
    }

    /// Tick `t`: the world step of every agent, then every agent's brain.
    pub fn tick(&mut self, t: u32) -> u32 {
        match (self.steady, self.calls) {
            (false, false) => self.tick_w1::<false>(t),
            (true, false) => self.tick_w3::<false>(t),
            (false, true) => self.tick_w1::<true>(t),
            (true, true) => self.tick_w3::<true>(t),
        }
    }

    /// A W1 tick. (W1 and W3 tick in functions of their own, each with
    /// one world step to inline, as the other contenders' crowds have.)
    #[inline(never)]
    fn tick_w1<const C: bool>(&mut self, t: u32) -> u32 {
        for a in &mut self.agents {
            a.world.step();
        }
        self.brains::<C>(t, 1)
    }

    /// A W3 tick.
    #[inline(never)]
    fn tick_w3<const C: bool>(&mut self, t: u32) -> u32 {
        for a in &mut self.agents {
            a.world.step_steady();
        }
        self.brains::<C>(t, crate::world::STEADY_SCALE)
    }

    #[inline(always)]
    fn brains<const C: bool>(&mut self, t: u32, scale: u8) -> u32 {
        let now = now(t);
        for (a, b) in self.agents.iter_mut().zip(&mut self.brains) {
            let f = a.world.flags();
            b.tick::<C>(a, Now { f, now, scale });
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
