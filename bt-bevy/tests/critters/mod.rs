//! A small scene for the recording tests: critters whose hunger grows each
//! frame and who take a bite when they become hungry, which sates them. Their health, hunger and mood are
//! components of their own, recorded as their values; the agent component
//! records its bites, which the tick changes.

#![allow(dead_code)]

use bevy_ecs::prelude::*;
use bt_bevy::bt_viewer::{AgentData, DataOut};
use bt_bevy::{Brain, Decisions};
use bt_core::{behavior, decider, group, tree};

bitflags::bitflags! {
    /// What a critter feels this frame.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Needs: u32 {
        const HUNGRY = 1 << 0;
        const TIRED = 1 << 1;
    }
}

/// Falls by a quarter each frame, back to 100 below 0.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Health(pub f32);

/// Grows by the critter's rate each frame, back to 0 when it has eaten.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Hunger(pub f32);

/// "peckish" while hungry, "sated" otherwise.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Mood(pub &'static str);

/// The agent: what its behaviors count.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Critter {
    pub rate: f32,
    pub bites: u32,
    pub steps: u32,
    /// It took a bite this frame.
    pub fed: bool,
}
bt_bevy::component_agent!(Critter);

impl AgentData for Health {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("health", f64::from(self.0));
    }
}

impl AgentData for Hunger {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("hunger", f64::from(self.0));
    }
}

impl AgentData for Mood {
    fn record(&self, out: &mut DataOut<'_>) {
        out.text("mood", self.0);
    }
}

impl AgentData for Critter {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("bites", f64::from(self.bites));
    }
}

/// Hunger above which a critter is hungry.
pub const HUNGRY_ABOVE: f32 = 0.6;

// One bite, and the behavior ends.
behavior! { EAT: Critter, tick: |c, _cx| { c.bites += 1; c.fed = true; false } }
behavior! { WANDER: Critter, tick: |c, _cx| { c.steps += 1; true } }
decider! { EAT_WHEN_HUNGRY: Critter => EAT, needs_all: Needs::HUNGRY }
decider! { JUST_WANDER: Critter => WANDER }
group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
tree! { pub CRITTERS: Critter = ROOT, memory: CritterMemory }

/// A critter whose hunger grows by `rate` a frame.
pub fn critter(
    rate: f32,
) -> (
    Critter,
    Health,
    Hunger,
    Mood,
    Decisions,
    Brain<CritterMemory>,
) {
    (
        Critter {
            rate,
            ..Critter::default()
        },
        Health(100.0),
        Hunger(0.0),
        Mood("sated"),
        Decisions::default(),
        Brain::new(&CRITTERS),
    )
}

/// The game's frame, before the brains tick: health, hunger and mood
/// move, and the flags follow.
pub fn live(
    mut critters: Query<(
        &Critter,
        &mut Health,
        &mut Hunger,
        &mut Mood,
        &mut Decisions,
    )>,
) {
    for (c, mut health, mut hunger, mut mood, mut decisions) in &mut critters {
        health.0 -= 0.25;
        if health.0 < 0.0 {
            health.0 = 100.0;
        }
        hunger.0 += c.rate;
        if hunger.0 > 1.0 {
            hunger.0 = 0.0;
        }
        let hungry = hunger.0 > HUNGRY_ABOVE;
        mood.0 = if hungry { "peckish" } else { "sated" };
        decisions.set(if hungry {
            Needs::HUNGRY
        } else {
            Needs::empty()
        });
    }
}
