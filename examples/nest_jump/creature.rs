//! The creature of the `nest_jump` example: after a won fight it goes
//! straight to its nest's GUARD through a reference decider, instead of
//! climbing back through the root's priorities.
//!
//! The tree:
//!
//! ```text
//! ROOT (prioritized)
//! ├── FIGHT_ZONE (sequential, when an intruder is near)
//! │   ├── FIGHT               until the intruder is beaten
//! │   └── GO_GUARD ──────────┐ reference: jumps to ROOT/NEST/GUARD
//! ├── NEST (prioritized, at night or with a trophy to keep)
//! │   ├── SLEEP               at night, unless on the alert
//! │   ├── GUARD ◀────────────┘ with a trophy: keeps watch for a while
//! │   └── TIDY
//! └── ROAM
//! ```
//!
//! Without GO_GUARD, the end of the fight would end FIGHT_ZONE, the root
//! would decide again, and the nest would pick by its own priorities: at
//! night, SLEEP, next to the trophy. The jump names where the fight leads.

use bt_core::{TickInput, group, leaf, reference, tree};

/// Seconds per tick.
pub const DT: f32 = 0.5;
/// Ticks in the scripted run.
pub const TICKS: u32 = 24;
/// The agent's generator seed (the tree draws nothing; kept for form).
pub const SEED: u64 = 7;

/// The creature.
#[derive(Default)]
pub struct Creature {
    /// The intruder's strength left, while there is one.
    pub intruder: Option<u32>,
    /// Something won in a fight, to keep.
    pub trophy: bool,
    /// Night has fallen.
    pub night: bool,
    /// On the alert until this time.
    pub alert_until: f64,
    /// The time of the tick being run.
    pub now: f64,
    /// What happened, for the printout.
    pub notes: Vec<String>,
}

impl Creature {
    /// A creature roaming by day.
    pub fn new() -> Self {
        Creature::default()
    }

    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }
}

leaf! { FIGHT: Creature,
    when: |c: &Creature, _| c.intruder.is_some(),
    tick: |c: &mut Creature, _| {
        let left = c.intruder.map_or(0, |s| s.saturating_sub(1));
        if left == 0 {
            c.intruder = None;
            c.trophy = true;
            c.note("the intruder flees, leaving its prey behind");
            false
        } else {
            c.intruder = Some(left);
            true
        }
    },
}
reference! { GO_GUARD: Creature => [ROOT, NEST, GUARD], when: |c: &Creature, _| c.trophy }
group! { FIGHT_ZONE: Creature, sequential [FIGHT, GO_GUARD],
    when: |c: &Creature, _| c.intruder.is_some(),
}

leaf! { SLEEP: Creature,
    when: |c: &Creature, _| c.night && c.now >= c.alert_until,
}
leaf! { GUARD: Creature,
    when: |c: &Creature, _| c.trophy,
    activate: |c: &mut Creature, _| {
        c.alert_until = c.now + 3.0;
        c.note("on the alert over the trophy");
        true
    },
    tick: |c: &mut Creature, _| c.now < c.alert_until,
    deactivate: |c: &mut Creature, _| c.trophy = false,
}
leaf! { TIDY: Creature }
group! { NEST: Creature, prioritized [SLEEP, GUARD, TIDY],
    when: |c: &Creature, _| c.night || c.trophy,
}

leaf! { ROAM: Creature }
group! { ROOT: Creature, prioritized [FIGHT_ZONE, NEST, ROAM] }
tree! { pub CREATURE: Creature = ROOT }

/// The scripted world: an intruder at 2 s, nightfall at 3 s.
#[derive(Default)]
pub struct World;

impl World {
    /// The world at the start.
    pub fn new() -> Self {
        World
    }

    /// Moves the world to `now` and returns the creature's input for
    /// this tick; what happened is in `c.notes`.
    pub fn step(&mut self, c: &mut Creature, now: f64) -> TickInput {
        c.now = now;
        if now == 2.0 {
            c.intruder = Some(3);
            c.note("an intruder comes near");
        }
        if now == 3.0 {
            c.night = true;
            c.note("night falls");
        }
        TickInput::new(now, DT)
    }
}
