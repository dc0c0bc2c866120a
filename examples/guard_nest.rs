//! The guard-nest creature of the Spore behavior-tree docs, in a small
//! scripted world.
//!
//! A creature settles at a nest and guards it: it patrols around the nest,
//! growls at a stranger, fights off an enemy, runs to help an ally, and
//! leaves to find food when hunger wins. The world is a fixed script (40
//! ticks of 0.5 s) and nothing is random, so every run prints the same lines:
//! each change of the active path as it happens, the world events that cause
//! it, and at the end a dump of the active path.
//!
//! Run it with `cargo run --example guard_nest`.
//!
//! The tree (groups are prioritized unless marked: earlier children preempt
//! later ones):
//!
//! ```text
//! ROOT
//! ├── DIE                     health is gone
//! ├── GUARD_NEST_GROUP        HAS_NEST and not hungry; behavior STAY_NEAR_NEST
//! │   ├── GUARD_NEST_HELP     an ally calls for help (listens once a second)
//! │   ├── GUARD_NEST_FIGHT    an enemy at the nest
//! │   ├── GUARD_NEST_GROWL    a stranger near the nest
//! │   ├── GUARD_NEST_PATROL   rested, and not at NIGHT
//! │   └── GUARD_NEST_IDLE
//! ├── EAT (sequential)        hungry
//! │   ├── FIND_FOOD
//! │   └── EAT_FOOD
//! └── IDLE
//! ```

use bt_core::{Ctx, Decide, TickInput, behavior, decider, group, tick, tree};

/// Seconds per tick.
const DT: f32 = 0.5;
/// Ticks the script runs.
const TICKS: u32 = 40;
/// Seed of the agent's own generator (this tree draws nothing random).
const SEED: u64 = 7;

/// Legs in one patrol round.
const PATROL_LEGS: u8 = 3;
/// Seconds per patrol leg.
const LEG_SECONDS: f32 = 1.0;
/// Rest after a full patrol round before the next one.
const PATROL_REST: f64 = 1.5;
/// Seconds spent helping an ally.
const HELP_SECONDS: f64 = 1.0;
/// Growls it takes to send a stranger away.
const GROWLS: u8 = 3;
/// Seconds of searching before food turns up.
const SEARCH_SECONDS: f32 = 1.5;
/// Hunger gained per second.
const HUNGER_RATE: f32 = 0.5;
/// Hunger at which the creature must eat.
const HUNGRY: f32 = 6.5;
/// Hunger eaten away per second.
const EAT_RATE: f32 = 3.0;
/// Health an enemy bites off per second of fighting.
const BITE: f32 = 2.0;
/// Health the creature claws off the enemy per second.
const CLAW: f32 = 2.5;
/// The enemy's health when it attacks.
const ENEMY_HEALTH: f32 = 4.0;

bitflags::bitflags! {
    /// Decision flags: ad hoc per-tick facts the game hands to the tree.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Decision: u32 {
        /// The creature has a nest to guard.
        const HAS_NEST = 1 << 0;
        /// It is night: no patrols.
        const NIGHT = 1 << 1;
    }
}

/// The agent: the creature and what it perceives of the world.
struct Creature {
    health: f32,
    hunger: f32,
    /// Set when hunger reaches `HUNGRY`, cleared only once it has eaten: the
    /// hysteresis of the need itself lives on the agent.
    hungry: bool,
    stranger_near: bool,
    /// The health of the enemy at the nest, if there is one.
    enemy: Option<f32>,
    /// An ally under attack, by name.
    ally_in_trouble: Option<&'static str>,
    food_at_hand: bool,
    /// When the last full patrol round ended.
    last_patrol: f64,
    /// What the creature's behaviors did this tick, printed after it.
    notes: Vec<String>,
}

impl Creature {
    fn new() -> Self {
        Creature {
            health: 10.0,
            hunger: 0.0,
            hungry: false,
            stranger_near: false,
            enemy: None,
            ally_in_trouble: None,
            food_at_hand: false,
            last_patrol: f64::NEG_INFINITY,
            notes: Vec::new(),
        }
    }

    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }
}

/// Accepts with 1.0 when `yes`, rejects otherwise.
fn accept(yes: bool) -> f32 {
    if yes { 1.0 } else { 0.0 }
}

// ---------------------------------------------------------------------------
// Behaviors: the code that acts. `tick` returning false ends the behavior.

behavior! {
    /// Lies still. Nothing ever preempts it: DIE comes first.
    DEAD: Creature,
    activate: |c, _cx| {
        c.note("creature: dies");
        true
    },
}

behavior! {
    /// The group behavior of GUARD_NEST_GROUP: it activates before the
    /// children, ticks before them every tick and deactivates after them.
    /// When it ends, the whole group fails and ROOT redecides.
    STAY_NEAR_NEST: Creature,
    tick: |c, _cx| {
        if c.hungry {
            c.note("creature: too hungry to keep guarding");
        }
        !c.hungry
    },
}

#[derive(Default)]
struct HelpState {
    ally: &'static str,
}

behavior! {
    /// Runs to an ally. The ally's name comes from the decide as a DBlock.
    HELP_ALLY: Creature,
    memory: HelpState,
    dblock: &'static str,
    activate: |_c, m, ally, _cx| {
        m.ally = ally.unwrap_or("?");
        true
    },
    tick: |c, m, cx| {
        // The ally's attacker bites too, if less hard than an enemy at the nest.
        c.health -= 0.5 * BITE * cx.dt;
        if cx.time_active() < HELP_SECONDS {
            return true;
        }
        c.ally_in_trouble = None;
        c.note(format!("creature: {} is safe (health {:.1})", m.ally, c.health));
        false
    },
}

behavior! {
    /// Trades blows with the enemy until it flees.
    FIGHT: Creature,
    tick: |c, cx| {
        c.health -= BITE * cx.dt;
        let Some(enemy) = c.enemy.as_mut() else { return false };
        *enemy -= CLAW * cx.dt;
        if *enemy > 0.0 {
            return true;
        }
        c.enemy = None;
        c.note(format!("creature: the enemy flees (health {:.1})", c.health));
        false
    },
}

#[derive(Default)]
struct GrowlState {
    growls: u8,
}

behavior! {
    /// Growls a few times; the stranger backs off and the behavior ends.
    GROWL: Creature,
    memory: GrowlState,
    tick: |c, m, _cx| {
        m.growls += 1;
        if m.growls < GROWLS {
            return true;
        }
        c.stranger_near = false;
        c.note(format!("creature: growled {GROWLS} times, the stranger backs off"));
        false
    },
}

/// The patrol's memory block: built fresh at each activation, dropped at
/// deactivation. A preempted patrol starts again from the first leg.
#[derive(Default)]
struct PatrolLegs {
    legs: u8,
    walked: f32,
}

fn patrol_tick(_c: &mut Creature, m: &mut PatrolLegs, cx: &Ctx) -> bool {
    m.walked += cx.dt;
    if m.walked >= LEG_SECONDS {
        m.walked -= LEG_SECONDS;
        m.legs += 1;
    }
    m.legs < PATROL_LEGS
}

behavior! {
    /// Walks `PATROL_LEGS` legs around the nest, then ends.
    PATROL: Creature,
    memory: PatrolLegs,
    tick: patrol_tick,
    deactivate: |c, m, cx| {
        // Only a full round earns a rest; a preempted one is resumed as
        // soon as nothing more urgent is going on.
        if m.legs >= PATROL_LEGS {
            c.last_patrol = cx.now;
        }
    },
}

behavior! {
    /// Hangs around. Shared by GUARD_NEST_IDLE and IDLE.
    LOITER: Creature,
}

#[derive(Default)]
struct Search {
    seconds: f32,
}

behavior! {
    /// Sniffs around until food turns up.
    SEARCH_FOR_FOOD: Creature,
    memory: Search,
    tick: |c, m, cx| {
        m.seconds += cx.dt;
        if m.seconds < SEARCH_SECONDS {
            return true;
        }
        c.food_at_hand = true;
        c.note("creature: found food");
        false
    },
}

behavior! {
    /// Eats until it is no longer hungry at all.
    CHEW: Creature,
    tick: |c, cx| {
        c.hunger = (c.hunger - EAT_RATE * cx.dt).max(0.0);
        if c.hunger > 0.0 {
            return true;
        }
        c.hungry = false;
        c.food_at_hand = false;
        c.note("creature: ate its fill");
        false
    },
}

// ---------------------------------------------------------------------------
// Deciders: whether to start. A `decide` sees the agent immutably and
// returns 0 to reject, above 0 to accept. Flag and timer preconditions are
// checked first; when they fail, `decide` is not called at all.

fn guard_wanted(c: &Creature, _: &mut Decide) -> f32 {
    // Subset Rule: whenever this accepts, a child can run (GUARD_NEST_IDLE
    // always can), so the group never accepts with nothing to do.
    accept(!c.hungry)
}

fn patrol_wanted(c: &Creature, d: &mut Decide) -> f32 {
    accept(d.now() - c.last_patrol >= PATROL_REST)
}

decider! { DIE: Creature => DEAD, decide: |c, _| accept(c.health <= 0.0) }

decider! { GUARD_NEST_HELP: Creature => HELP_ALLY,
    decide: |c, d| match c.ally_in_trouble {
        Some(ally) => {
            d.set(ally);
            1.0
        }
        None => 0.0,
    },
    // A timer precondition: the decide runs at most once a second.
    every: 1.0,
}
decider! { GUARD_NEST_FIGHT: Creature => FIGHT, decide: |c, _| accept(c.enemy.is_some()) }
decider! { GUARD_NEST_GROWL: Creature => GROWL, decide: |c, _| accept(c.stranger_near) }
decider! { GUARD_NEST_PATROL: Creature => PATROL,
    decide: patrol_wanted,
    needs_none: Decision::NIGHT,
}
decider! { GUARD_NEST_IDLE: Creature => LOITER }

// Each tick the children before the active one are decided again and the
// first that accepts preempts it: FIGHT preempts PATROL as soon as an enemy
// shows up. The active child itself is not asked again (hysteresis: the test
// to start is not the test to continue), so a patrol under way goes on after
// NIGHT falls until its legs are done. When the active behavior ends (GROWL
// after a few growls), it is masked out for the rest of the tick and the
// group redecides among the others in the same tick: PATROL resumes.
group! { GUARD_NEST_GROUP: Creature,
    prioritized [GUARD_NEST_HELP, GUARD_NEST_FIGHT, GUARD_NEST_GROWL, GUARD_NEST_PATROL, GUARD_NEST_IDLE],
    behavior: STAY_NEAR_NEST,
    decide: guard_wanted,
    needs_all: Decision::HAS_NEST,
}

decider! { FIND_FOOD: Creature => SEARCH_FOR_FOOD }
decider! { EAT_FOOD: Creature => CHEW, decide: |c, _| accept(c.food_at_hand) }

// Sequential: FIND_FOOD, then EAT_FOOD; after the last one the group ends.
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], decide: |c, _| accept(c.hungry) }

decider! { IDLE: Creature => LOITER }

// When STAY_NEAR_NEST ends, the whole GUARD_NEST_GROUP fails and ROOT
// redecides with it masked: EAT gets its turn. While EAT runs,
// GUARD_NEST_GROUP's decide is called every tick and could preempt it.
group! { ROOT: Creature, prioritized [DIE, GUARD_NEST_GROUP, EAT, IDLE] }

tree! { CREATURE: Creature = ROOT, memory: CreatureMemory }

// ---------------------------------------------------------------------------
// The world script.

/// Something that happens in the world at a fixed time.
#[derive(Clone, Copy)]
enum WorldEvent {
    NestFound,
    StrangerApproaches,
    EnemyAttacks,
    AllyCallsForHelp(&'static str),
    NightFalls,
}

/// What happens when, in time order. Hunger grows on its own every tick.
const SCRIPT: &[(f64, WorldEvent)] = &[
    (1.0, WorldEvent::NestFound),
    (6.0, WorldEvent::StrangerApproaches),
    (8.0, WorldEvent::EnemyAttacks),
    // GUARD_NEST_HELP listens once a second (its timer), so it answers at 11.0.
    (10.5, WorldEvent::AllyCallsForHelp("Mira")),
    // Mid-patrol: the patrol finishes its round, then none starts at night.
    (17.0, WorldEvent::NightFalls),
];

impl WorldEvent {
    /// Applies the event; returns what to print.
    fn apply(self, c: &mut Creature, flags: &mut Decision) -> String {
        match self {
            WorldEvent::NestFound => {
                flags.insert(Decision::HAS_NEST);
                "world: the creature settles at a nest (HAS_NEST)".to_string()
            }
            WorldEvent::StrangerApproaches => {
                c.stranger_near = true;
                "world: a stranger wanders near the nest".to_string()
            }
            WorldEvent::EnemyAttacks => {
                c.enemy = Some(ENEMY_HEALTH);
                "world: an enemy attacks the nest".to_string()
            }
            WorldEvent::AllyCallsForHelp(ally) => {
                c.ally_in_trouble = Some(ally);
                format!("world: {ally} calls for help")
            }
            WorldEvent::NightFalls => {
                flags.insert(Decision::NIGHT);
                "world: night falls (NIGHT)".to_string()
            }
        }
    }
}

/// The active path below ROOT, as `GROUP > LEAF` (`idle` when empty).
fn path(memory: &CreatureMemory) -> String {
    let names: Vec<_> = memory
        .active_path()
        .skip(1)
        .map(|level| CREATURE.node(level.item).name())
        .collect();
    if names.is_empty() {
        "idle".to_string()
    } else {
        names.join(" > ")
    }
}

fn main() {
    let mut creature = Creature::new();
    let mut memory: CreatureMemory = CREATURE.new_memory(SEED);
    let mut flags = Decision::empty();
    let mut script = SCRIPT.iter().peekable();
    let mut now = 0.0;

    println!("guard_nest: {TICKS} ticks of {DT} s\n");
    for step in 0..TICKS {
        now = f64::from(step) * f64::from(DT);
        // The world moves first: scripted events, then hunger.
        while let Some(&&(at, event)) = script.peek()
            && at <= now
        {
            script.next();
            println!("t={now:4.1}  {}", event.apply(&mut creature, &mut flags));
        }
        creature.hunger += HUNGER_RATE * DT;
        if !creature.hungry && creature.hunger >= HUNGRY {
            creature.hungry = true;
            println!("t={now:4.1}  world: the creature is hungry");
        }

        let was = memory
            .leaf()
            .map_or("idle", |leaf| CREATURE.node(leaf).name());
        let input = TickInput::new(now, DT).with_decision(flags);
        let report = match tick(&CREATURE, &mut creature, &mut memory, &input) {
            Ok(report) => report,
            Err(error) => {
                println!("t={now:4.1}  tick failed: {error}");
                break;
            }
        };
        for note in creature.notes.drain(..) {
            println!("t={now:4.1}  {note}");
        }
        if report.changed() {
            println!("t={now:4.1}  {}  (was {was})", path(&memory));
        }
    }

    // The debugger-friendly state dump, as Spore's DebugPrintState: one line
    // per level of the active path, with the behavior owning its block.
    println!(
        "\nactive path at t={now:.1} (health {:.1}, hunger {:.1}):",
        creature.health, creature.hunger
    );
    for (depth, level) in memory.active_path().enumerate() {
        let block = memory
            .block_behavior(depth)
            .map_or(String::new(), |b| format!("  [{}]", b.name()));
        println!(
            "  {depth}  {:<18} since {:4.1}{block}",
            CREATURE.node(level.item).name(),
            level.since
        );
    }
    println!("{memory:?}");
}
