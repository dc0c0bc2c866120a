//! The guard-nest creature: its tree, its behaviors and its scripted world.
//! Shared by `main.rs` and by the decision-trace snapshot test of the suite.

use bt_core::{Ctx, Decide, Stimuli, TickInput, behavior, decider, group, tree};

/// Seconds per tick.
pub const DT: f32 = 0.5;
/// Ticks the script runs.
pub const TICKS: u32 = 40;
/// Seed of the agent's own generator (this tree draws nothing random).
pub const SEED: u64 = 7;

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
/// The enemy's agent id, the payload of the HIT stimulus it causes.
const ENEMY_ID: u32 = 66;
/// Seconds a bite is felt: the HIT stimulus's time-out.
const HIT_SECONDS: f32 = 1.0;
/// The allies, by index: the payload of an ALLY_CALL stimulus.
const ALLIES: [&str; 2] = ["Mira", "Oru"];
/// Places food may be found, with their distance from the nest.
const FOOD: [(&str, f32); 3] = [("berry bush", 9.0), ("carcass", 4.0), ("beehive", 12.0)];
/// Distance searched per second.
const SEARCH_SPEED: f32 = 3.0;

bt_core::bitflags::bitflags! {
    /// Decision flags: ad hoc per-tick facts the game hands to the tree.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Decision: u32 {
        /// The creature has a nest to guard.
        const HAS_NEST = 1 << 0;
        /// It is night: no patrols.
        const NIGHT = 1 << 1;
    }

    /// Stimuli: set on the creature by the world, with a time-out.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sense: u64 {
        /// Something bit it; the payload is the biter's id.
        const HIT = 1 << 0;
        /// A stranger is near the nest.
        const STRANGER = 1 << 1;
        /// An ally calls for help; the payload indexes `ALLIES`.
        const ALLY_CALL = 1 << 2;
    }
}

/// The agent: the creature and what it perceives of the world. The game
/// saves it beside the creature's agent memory (see the `save_load`
/// example).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Creature {
    pub health: f32,
    pub hunger: f32,
    /// Set when hunger reaches `HUNGRY`, cleared only once it has eaten: the
    /// hysteresis of the need itself lives on the agent.
    hungry: bool,
    /// What it senses, set by the world and aged once per tick.
    pub stimuli: Stimuli<Sense, 4, u32>,
    /// The health of the enemy at the nest, if there is one.
    enemy: Option<f32>,
    food_at_hand: bool,
    /// When the last full patrol round ended.
    last_patrol: f64,
    /// What the creature's behaviors did this tick, printed after it.
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl Creature {
    pub fn new() -> Self {
        Creature {
            health: 10.0,
            hunger: 0.0,
            hungry: false,
            stimuli: Stimuli::new(),
            enemy: None,
            food_at_hand: false,
            last_patrol: f64::NEG_INFINITY,
            notes: Vec::new(),
        }
    }

    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }
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
        c.stimuli.clear(Sense::ALLY_CALL);
        c.note(format!("creature: {} is safe (health {:.1})", m.ally, c.health));
        false
    },
}

behavior! {
    /// Trades blows with whoever bit it until the enemy flees.
    FIGHT: Creature,
    tick: |c, cx| {
        let Some(enemy) = c.enemy.as_mut() else { return false };
        *enemy -= CLAW * cx.dt;
        if *enemy > 0.0 {
            return true;
        }
        c.enemy = None;
        c.stimuli.clear(Sense::HIT);
        c.note(format!("creature: the enemy flees (health {:.1})", c.health));
        false
    },
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct GrowlState {
    growls: u8,
}

behavior! {
    /// Growls a few times; the stranger backs off and the behavior ends.
    GROWL: Creature,
    memory: GrowlState,
    persist,
    tick: |c, m, _cx| {
        m.growls += 1;
        if m.growls < GROWLS {
            return true;
        }
        c.stimuli.clear(Sense::STRANGER);
        c.note(format!("creature: growled {GROWLS} times, the stranger backs off"));
        false
    },
}

/// The patrol's memory block: the waypoint it walks to. Built fresh (by
/// `Default`) at each activation and dropped at deactivation, so a
/// preempted patrol starts again from the first waypoint.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct PatrolLegs {
    waypoint: u8,
    walked: f32,
}

fn patrol_tick(_c: &mut Creature, m: &mut PatrolLegs, cx: &Ctx) -> bool {
    m.walked += cx.dt;
    if m.walked >= LEG_SECONDS {
        m.walked -= LEG_SECONDS;
        m.waypoint += 1;
    }
    m.waypoint < PATROL_LEGS
}

behavior! {
    /// Walks `PATROL_LEGS` legs around the nest, then ends.
    PATROL: Creature,
    memory: PatrolLegs,
    persist,
    tick: patrol_tick,
    deactivate: |c, m, cx| {
        // Only a full round earns a rest; a preempted one is resumed as
        // soon as nothing more urgent is going on.
        if m.waypoint >= PATROL_LEGS {
            c.last_patrol = cx.now;
        }
    },
}

behavior! {
    /// Hangs around. Shared by GUARD_NEST_IDLE and IDLE.
    LOITER: Creature,
}

/// Where FIND_FOOD's decide sends the search: its DBlock.
struct FoodTarget {
    place: &'static str,
    distance: f32,
}

#[derive(Default)]
struct Search {
    place: &'static str,
    left: f32,
}

behavior! {
    /// Walks to the food its decider picked, then finds it there.
    SEARCH_FOR_FOOD: Creature,
    memory: Search,
    dblock: FoodTarget,
    activate: |c, m, target, _cx| {
        // The DBlock arrives moved and typed; without one, nothing to do.
        let Some(target) = target else { return false };
        c.note(format!("creature: heads for the {} ({} m)", target.place, target.distance));
        *m = Search { place: target.place, left: target.distance };
        true
    },
    tick: |c, m, cx| {
        m.left -= SEARCH_SPEED * cx.dt;
        if m.left > 0.0 {
            return true;
        }
        c.food_at_hand = true;
        c.note(format!("creature: found food at the {}", m.place));
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
// returns 0 to reject, above 0 to accept; a yes/no `when` returns a bool.
// Flag and timer preconditions are checked first; when they fail, `decide`
// (or `when`) is not called at all.

fn guard_wanted(c: &Creature, _: &mut Decide) -> bool {
    // Subset Rule: whenever this accepts, a child can run (GUARD_NEST_IDLE
    // always can), so the group never accepts with nothing to do.
    !c.hungry
}

fn patrol_wanted(c: &Creature, d: &mut Decide) -> bool {
    d.now() - c.last_patrol >= PATROL_REST
}

decider! { DIE: Creature => DEAD, when: |c, _| c.health <= 0.0 }

decider! { GUARD_NEST_HELP: Creature => HELP_ALLY,
    // Preconditions run cheapest first: the stimulus flag, then the timer
    // (this decide runs at most once a second), then the decide itself.
    stimuli_all: Sense::ALLY_CALL,
    every: 1.0,
    decide: |c, d| match c.stimuli.get(Sense::ALLY_CALL) {
        Some(call) => {
            // The DBlock: HELP_ALLY's activate receives the ally's name.
            d.set(ALLIES[call.payload as usize]);
            1.0
        }
        None => 0.0,
    },
}
// No decide at all: the HIT stimulus is the whole test, a mask test that
// costs no call.
decider! { GUARD_NEST_FIGHT: Creature => FIGHT, stimuli_all: Sense::HIT }
decider! { GUARD_NEST_GROWL: Creature => GROWL, stimuli_all: Sense::STRANGER }
decider! { GUARD_NEST_PATROL: Creature => PATROL,
    when: patrol_wanted,
    needs_none: Decision::NIGHT,
    every: 1.0,
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
    when: guard_wanted,
    needs_all: Decision::HAS_NEST,
}

fn nearest_food(_c: &Creature, d: &mut Decide<FoodTarget>) -> f32 {
    let Some(&(place, distance)) = FOOD.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return 0.0;
    };
    d.set(FoodTarget { place, distance });
    1.0
}

decider! { FIND_FOOD: Creature => SEARCH_FOR_FOOD, decide: nearest_food }
decider! { EAT_FOOD: Creature => CHEW, when: |c, _| c.food_at_hand }

// Sequential: FIND_FOOD, then EAT_FOOD; after the last one the group ends.
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], when: |c, _| c.hungry }

decider! { IDLE: Creature => LOITER }

// When STAY_NEAR_NEST ends, the whole GUARD_NEST_GROUP fails and ROOT
// redecides with it masked: EAT gets its turn. While EAT runs,
// GUARD_NEST_GROUP's decide is called every tick and could preempt it.
group! { ROOT: Creature, prioritized [DIE, GUARD_NEST_GROUP, EAT, IDLE] }

tree! { pub CREATURE: Creature = ROOT, memory: CreatureMemory }

// ---------------------------------------------------------------------------
// The world script.

/// Something that happens in the world at a fixed time.
#[derive(Clone, Copy)]
enum WorldEvent {
    NestFound,
    StrangerApproaches,
    EnemyAttacks,
    AllyCallsForHelp(u32),
    NightFalls,
}

/// What happens when, in time order. Hunger grows on its own every tick.
const SCRIPT: &[(f64, WorldEvent)] = &[
    (1.0, WorldEvent::NestFound),
    (6.0, WorldEvent::StrangerApproaches),
    (8.0, WorldEvent::EnemyAttacks),
    // The call is a stimulus: GUARD_NEST_HELP's flag test passes at once and
    // its timer has not run yet, so it answers in the same tick; while the
    // call lasts its decide would be asked at most once a second.
    (10.5, WorldEvent::AllyCallsForHelp(0)),
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
                set(c, Sense::STRANGER, 0, Some(5.0));
                "world: a stranger wanders near the nest (STRANGER)".to_string()
            }
            WorldEvent::EnemyAttacks => {
                c.enemy = Some(ENEMY_HEALTH);
                "world: an enemy attacks the nest".to_string()
            }
            WorldEvent::AllyCallsForHelp(ally) => {
                set(c, Sense::ALLY_CALL, ally, Some(4.0));
                format!(
                    "world: {} calls for help (ALLY_CALL)",
                    ALLIES[ally as usize]
                )
            }
            WorldEvent::NightFalls => {
                flags.insert(Decision::NIGHT);
                "world: night falls (NIGHT)".to_string()
            }
        }
    }
}

/// Sets a stimulus on the creature. Four places are plenty for three
/// stimuli; a full `Stimuli` would say so instead of losing one.
fn set(c: &mut Creature, sense: Sense, payload: u32, timeout: Option<f32>) {
    if let Err(error) = c.stimuli.set(sense, payload, timeout) {
        c.note(format!("world: {error}"));
    }
}

/// The scripted world around one creature.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct World {
    #[serde(with = "decision_bits")]
    flags: Decision,
    next: usize,
}

/// The decision flags as their bits (bitflags is built without serde here).
mod decision_bits {
    use super::Decision;

    pub fn serialize<S: serde::Serializer>(flags: &Decision, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(flags.bits())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Decision, D::Error> {
        <u32 as serde::Deserialize>::deserialize(d).map(Decision::from_bits_truncate)
    }
}

impl World {
    /// The world before its first event.
    pub fn new() -> Self {
        World {
            flags: Decision::empty(),
            next: 0,
        }
    }

    /// Moves the world to `now`: scripted events, the enemy's bites and
    /// hunger, then ages the creature's stimuli. Returns the creature's
    /// input for this tick; what happened is in `c.notes`.
    pub fn step(&mut self, c: &mut Creature, now: f64) -> TickInput {
        while let Some(&(at, event)) = SCRIPT.get(self.next)
            && at <= now
        {
            self.next += 1;
            let line = event.apply(c, &mut self.flags);
            c.note(line);
        }
        if c.enemy.is_some() {
            // The enemy bites every tick it is there: the HIT stimulus is
            // refreshed, with the biter's id as its payload.
            c.health -= BITE * DT;
            set(c, Sense::HIT, ENEMY_ID, Some(HIT_SECONDS));
        }
        c.hunger += HUNGER_RATE * DT;
        if !c.hungry && c.hunger >= HUNGRY {
            c.hungry = true;
            c.note("world: the creature is hungry");
        }
        // Stimuli age once per tick; expired ones drop out of the word.
        let sensed = c.stimuli.update(DT);
        TickInput::new(now, DT)
            .with_decision(self.flags)
            .with_stimuli(sensed)
    }
}
