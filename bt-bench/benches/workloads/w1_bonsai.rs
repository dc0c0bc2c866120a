//! W1 with bonsai-bt 0.14, written the way its documentation shows: one `BT`
//! instance per agent, with the agent's state as the `BT`'s blackboard.
//!
//! - Priority with preemption is bonsai's reactive selector,
//!   `Select(..).memory(false)`, whose children are guarded with
//!   `Sequence([condition…, body]).memory(false)` ("run B while re-checking
//!   A on every tick"). Every guard on the running branch is therefore
//!   re-checked every tick: bonsai's model, not bt-core's.
//! - The root loops with `While(WaitForever, [root])`: when a behavior
//!   finishes, the root starts again in the same tick.
//! - bonsai has no memory blocks, timers, random selectors or
//!   activate/deactivate hooks, so they are emulated in leaves as
//!   WORKLOAD.md says: the running behavior and its tick count live in the
//!   blackboard (a behavior is activated when it is ticked while another
//!   was running); PATROL's timer is a cooldown stamp in the blackboard,
//!   tested and stamped when PATROL would start (a running PATROL passes:
//!   a cooldown is a test to start); IDLE picks its child with
//!   `next() % 3` from a second generator in the blackboard (the world's
//!   generator is left alone so that the world is the same as bt-core's);
//!   EAT's progress is the blackboard fact `food_found`; GUARD_SCOPE counts
//!   an activation when GUARD is entered while it was not running.

use bonsai_bt::{
    Action, ActionArgs, BT, Behavior, Event, Failure, Running, Select, Sequence, Status, Success,
    UpdateArgs, WaitForever, While,
};

use crate::world::{Activations, Beh, DT, STEADY_SCALE, World, next, now, seed};

/// The leaves: conditions, the emulation leaves, and the behaviors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    Danger,
    HasNest,
    Intruder,
    Hurt,
    Hungry,
    Tired,
    FoodFound,
    /// PATROL's cooldown (the emulated timer).
    PatrolReady,
    /// Counts GUARD_SCOPE's activation.
    GuardScope,
    /// The emulated random group.
    Idle,
    Run(Beh),
}

/// The blackboard: the world and the emulation state.
pub struct Board {
    pub world: World,
    pub activations: Activations,
    /// The generator of IDLE's picks.
    idle_rng: u64,
    /// When PATROL last started.
    patrol_stamp: f64,
    /// The running behavior (`NONE`: none) and its ticks so far.
    running: u8,
    count: u8,
    food_found: bool,
    in_guard: bool,
    /// How much longer than in W1 the behaviors run (1: W1, 20: W3).
    scale: u8,
}

const NONE: u8 = u8::MAX;
/// As bt-core's `TIMER_SLACK`.
const SLACK: f64 = 1e-6;
const PATROL_EVERY: f64 = 2.0;

fn cond(yes: bool, dt: f64) -> (Status, f64) {
    (if yes { Success } else { Failure }, dt)
}

impl Board {
    fn new(i: usize, scale: u8) -> Self {
        let mut idle_rng = seed(i) ^ 0xD1B5_4A32_D192_ED03;
        next(&mut idle_rng);
        Board {
            world: World::spawn(i),
            activations: [0; Beh::COUNT],
            idle_rng,
            patrol_stamp: f64::NEG_INFINITY,
            running: NONE,
            count: 0,
            food_found: false,
            in_guard: false,
            scale,
        }
    }

    /// One tick of behavior `b`; activates it if another was running.
    fn run(&mut self, b: Beh, dt: f64) -> (Status, f64) {
        if !matches!(b, Beh::Yell | Beh::Fight) {
            self.in_guard = false;
        }
        if self.running != b as u8 {
            self.running = b as u8;
            self.count = 0;
            self.activations[b as usize] += 1;
        }
        if b == Beh::Flee {
            // Runs while danger; fails when danger is off.
            if self.world.danger {
                return (Running, 0.0);
            }
            self.running = NONE;
            return (Failure, dt);
        }
        self.count += 1;
        if self.count < b.ticks() * self.scale {
            return (Running, 0.0);
        }
        self.running = NONE;
        match b {
            Beh::Fight => self.world.intruder = false,
            Beh::FindFood => self.food_found = true,
            Beh::EatFood => {
                self.world.hungry = false;
                self.food_found = false;
            }
            Beh::Rest => self.world.tired = false,
            _ => {}
        }
        (Success, 0.0)
    }

    fn act(&mut self, leaf: Leaf, dt: f64, now: f64) -> (Status, f64) {
        let w = &self.world;
        match leaf {
            Leaf::Danger => cond(w.danger, dt),
            Leaf::HasNest => cond(w.has_nest, dt),
            Leaf::Intruder => cond(w.intruder, dt),
            Leaf::Hurt => cond(w.hurt, dt),
            Leaf::Hungry => cond(w.hungry, dt),
            Leaf::Tired => cond(w.tired, dt),
            Leaf::FoodFound => cond(self.food_found, dt),
            Leaf::PatrolReady => {
                if self.running == Beh::Patrol as u8 {
                    return (Success, dt);
                }
                let ready = now - self.patrol_stamp >= PATROL_EVERY - SLACK;
                if ready {
                    self.patrol_stamp = now;
                }
                cond(ready, dt)
            }
            Leaf::GuardScope => {
                if !self.in_guard {
                    self.in_guard = true;
                    self.activations[Beh::GuardScope as usize] += 1;
                }
                (Success, dt)
            }
            Leaf::Idle => {
                let b = match Beh::IDLE.iter().find(|b| **b as u8 == self.running) {
                    Some(&b) => b,
                    None => Beh::IDLE[(next(&mut self.idle_rng) % 3) as usize],
                };
                self.run(b, dt)
            }
            Leaf::Run(b) => self.run(b, dt),
        }
    }
}

/// `body` guarded by `conditions`, re-checked every tick.
fn guarded(conditions: &[Leaf], body: Behavior<Leaf>) -> Behavior<Leaf> {
    let mut children: Vec<_> = conditions.iter().map(|&c| Action(c)).collect();
    children.push(body);
    Sequence(children).memory(false)
}

/// The W1 tree, as a bonsai behavior.
pub fn tree() -> Behavior<Leaf> {
    use Leaf::*;
    let guard = Select(vec![
        guarded(&[Hurt], Action(Run(Beh::Yell))),
        Action(Run(Beh::Fight)),
    ])
    .memory(false);
    let eat = Sequence(vec![
        Select(vec![Action(FoodFound), Action(Run(Beh::FindFood))]).memory(false),
        Action(Run(Beh::EatFood)),
    ])
    .memory(false);
    let root = Select(vec![
        guarded(&[Danger], Action(Run(Beh::Flee))),
        guarded(&[HasNest, Intruder, GuardScope], guard),
        guarded(&[Hungry], eat),
        guarded(&[HasNest, PatrolReady], Action(Run(Beh::Patrol))),
        guarded(&[Tired], Action(Run(Beh::Rest))),
        Action(Idle),
    ])
    .memory(false);
    While(Box::new(WaitForever), vec![root])
}

/// A crowd: one `BT` per agent.
pub struct Crowd {
    pub bts: Vec<BT<Leaf, Board>>,
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
        let tree = tree();
        let scale = if steady { STEADY_SCALE } else { 1 };
        Crowd {
            bts: (0..n)
                .map(|i| BT::new(tree.clone(), Board::new(i, scale)))
                .collect(),
            steady,
        }
    }

    /// Tick `t`: the world step of every agent, then every agent's `BT`.
    /// Returns the number of trees that stopped (none should).
    #[inline(never)]
    pub fn tick(&mut self, t: u32) -> u32 {
        for bt in &mut self.bts {
            let world = &mut bt.blackboard_mut().world;
            if self.steady {
                world.step_steady();
            } else {
                world.step();
            }
        }
        let now = now(t);
        let event: Event = UpdateArgs { dt: f64::from(DT) }.into();
        let mut act = |args: ActionArgs<Event, Leaf>, board: &mut Board| {
            board.act(*args.action, args.dt, now)
        };
        let mut stopped = 0;
        for bt in &mut self.bts {
            match bt.tick(&event, &mut act) {
                Some((Running, _)) => {}
                _ => stopped += 1,
            }
        }
        stopped
    }

    pub fn activations(&self) -> Activations {
        crate::w1_core::sum(self.bts.iter().map(|bt| &bt.blackboard().activations))
    }
}

/// Inline bytes of one agent's `BT` (its heap is measured by the counting
/// allocator).
pub fn inline_bytes() -> usize {
    std::mem::size_of::<BT<Leaf, Board>>()
}
