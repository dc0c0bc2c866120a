//! The herd: creatures that drink at a water hole three at a time, eat,
//! sleep and flee a predator, in plain Rust. `run` plays it, prints one
//! creature's decisions, saves the crowd mid-run, loads the save back into
//! the running crowd later, checks that the herd goes on exactly as it did
//! from the save, and records a few creatures for the decision viewer.
//! The `herd` example runs it with 200 creatures; the test suite runs it
//! smaller.

use std::path::Path;
use std::sync::Arc;

use bt_core::{
    CrowdReport, Stimuli, TickInput, TraceRecorder, TreeShared, behavior, decider, group, tick,
    tick_all, tick_traced_into, tree,
};
use bt_viewer::{AgentData, Capacity, DataCapacity, DataOut, FlightRecorder, Watch};
use serde::{Deserialize, Serialize};

bt_core::bitflags::bitflags! {
    /// What a creature senses: a stimulus other agents set on it.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sense: u8 {
        /// A predator is near.
        const PREDATOR = 1 << 0;
    }

    /// What the world tells every creature this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Day: u8 {
        /// It is night: tired creatures sleep more readily.
        const NIGHT = 1 << 0;
    }
}

/// One creature: its needs, and the stimuli it keeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Creature {
    pub thirst: f32,
    pub hunger: f32,
    pub tiredness: f32,
    pub senses: Stimuli<Sense, 2>,
}

impl AgentData for Creature {
    fn record(&self, out: &mut DataOut<'_>) {
        out.num("thirst", f64::from(self.thirst));
        out.num("hunger", f64::from(self.hunger));
        out.num("tiredness", f64::from(self.tiredness));
    }
}

behavior! { RUN: Creature,
    // Runs while the predator is sensed; running makes thirsty.
    tick: |c, cx| { c.thirst += 0.3 * cx.dt; cx.stimuli_as::<Sense>().contains(Sense::PREDATOR) },
}
behavior! { SIP: Creature, tick: |c, cx| { c.thirst -= 1.0 * cx.dt; c.thirst > 0.05 } }
behavior! { GRAZE: Creature, tick: |c, cx| { c.hunger -= 0.5 * cx.dt; c.hunger > 0.05 } }
behavior! { DOZE: Creature, tick: |c, cx| { c.tiredness -= 0.4 * cx.dt; c.tiredness > 0.05 } }
behavior! { ROAM: Creature, tick: |c, cx| {
    c.thirst += 0.05 * cx.dt;
    c.hunger += 0.04 * cx.dt;
    c.tiredness += 0.03 * cx.dt;
    true
} }
decider! { FLEE: Creature => RUN, stimuli_any: Sense::PREDATOR }
decider! { DRINK: Creature => SIP, when: |c, _| c.thirst > 0.6, gate: 3 } // the water hole
decider! { EAT: Creature => GRAZE, when: |c, _| c.hunger > 0.5 }
decider! { SLEEP: Creature => DOZE, when: |c, d| {
    let night = d.decision_as::<Day>().contains(Day::NIGHT);
    c.tiredness > if night { 0.3 } else { 0.7 }
} }
decider! { WANDER: Creature => ROAM }
group! { HERD_ROOT: Creature, prioritized [FLEE, DRINK, EAT, SLEEP, WANDER] }
tree! { pub HERD: Creature = HERD_ROOT, memory: HerdMemory }

/// One frame's step.
pub const DT: f32 = 0.1;

/// What to play.
pub struct Config<'a> {
    /// Creatures in the herd.
    pub creatures: usize,
    /// Ticks played before the load (the save is taken halfway).
    pub ticks: u32,
    /// The creature whose decisions are printed.
    pub watched: usize,
    /// Where to write the viewer's page, if anywhere.
    pub page: Option<&'a Path>,
    /// Whether to print.
    pub print: bool,
}

/// What a run showed.
pub struct Outcome {
    /// The watched creature's decision trace over the first ticks.
    pub trace: String,
    /// Agents that fled at some tick, drank, slept.
    pub fled: usize,
    pub drank: usize,
    pub slept: usize,
    /// The most creatures at the water hole at once.
    pub most_drinking: usize,
    /// Whether the ticks played again after the load matched those played
    /// after the save, creature by creature.
    pub continued_exactly: bool,
}

/// The world: the herd, its memories, its crowd's shared state, the clock.
struct World {
    shared: Arc<TreeShared>,
    creatures: Vec<Creature>,
    memories: Vec<HerdMemory>,
    tick: u32,
}

/// A save of the whole game: the crowd (shared state and memories) and
/// the creatures, with the game's tick.
#[derive(Serialize, Deserialize)]
struct Save {
    tick: u32,
    creatures: Vec<Creature>,
    crowd: serde_json::Value,
}

impl World {
    fn new(n: usize) -> Self {
        let shared = HERD.new_shared(0);
        // Needs spread over the herd, so they do not all get thirsty at once.
        let creatures = (0..n)
            .map(|i| {
                let f = i as f32 / n as f32;
                Creature {
                    thirst: 0.2 + 0.5 * f,
                    hunger: 0.6 * (1.0 - f),
                    tiredness: 0.3 * ((i * 7) % n) as f32 / n as f32,
                    ..Creature::default()
                }
            })
            .collect();
        let memories = (0..n)
            .map(|i| HERD.new_memory_in(&shared, i as u64))
            .collect();
        World {
            shared,
            creatures,
            memories,
            tick: 0,
        }
    }

    fn now(&self) -> f64 {
        f64::from(self.tick) * f64::from(DT)
    }

    /// A predator comes by every 40 ticks and scares a stretch of the herd
    /// for two seconds.
    fn predator(&mut self) {
        if self.tick % 40 == 20 {
            let n = self.creatures.len();
            let from = (self.tick as usize * 13) % n;
            for k in 0..n / 5 {
                let c = &mut self.creatures[(from + k) % n];
                c.senses
                    .set(Sense::PREDATOR, 0, Some(2.0))
                    .expect("a stimulus");
            }
        }
    }

    /// One tick of the whole herd, in index order, each creature ticked
    /// with `tick` (plain, traced, or through the recorder).
    fn step(
        &mut self,
        tick: impl FnOnce(
            &mut [Creature],
            &mut [HerdMemory],
            &dyn Fn(usize, &mut Creature) -> TickInput,
        ),
    ) {
        self.predator();
        let (now, day) = (self.now(), self.day());
        tick(&mut self.creatures, &mut self.memories, &|i, c| {
            TickInput::new(now, DT)
                .with_decision(day)
                .with_stimuli(c.senses.update(DT))
                .with_agent(i as u32)
        });
        self.tick += 1;
    }

    /// Night every other 100 ticks.
    fn day(&self) -> Day {
        if (self.tick / 100) % 2 == 1 {
            Day::NIGHT
        } else {
            Day::empty()
        }
    }

    /// Every creature's decider after the tick.
    fn leaves(&self) -> Vec<Option<&'static str>> {
        self.memories
            .iter()
            .map(|m| m.leaf().map(|l| HERD.node(l).name()))
            .collect()
    }

    fn inside(&self, name: &str) -> usize {
        let item = HERD.find(name);
        self.memories.iter().filter(|m| m.leaf() == item).count()
    }

    fn save(&self) -> String {
        let save = Save {
            tick: self.tick,
            creatures: self.creatures.clone(),
            crowd: serde_json::to_value(self.shared.snapshot_crowd(&self.memories, self.now()))
                .expect("the crowd saves"),
        };
        serde_json::to_string(&save).expect("the game saves")
    }

    /// Loads `text` into the running world: the crowd in place (the same
    /// shared state and memories), the creatures and the tick.
    fn load(&mut self, text: &str) {
        let save: Save = serde_json::from_str(text).expect("the save reads");
        let crowd = serde_json::to_string(&save.crowd).expect("the crowd");
        self.tick = save.tick;
        self.creatures = save.creatures;
        let now = self.now();
        self.shared
            .restore_crowd(
                &HERD,
                now,
                &mut self.memories,
                &mut serde_json::Deserializer::from_str(&crowd),
            )
            .expect("the crowd loads in place");
    }
}

/// Plays the herd as `config` says.
pub fn run(config: &Config<'_>) -> Outcome {
    let mut world = World::new(config.creatures);
    let say = |line: &str| {
        if config.print {
            println!("{line}");
        }
    };
    let half = config.ticks / 2;
    let mut trace = TraceRecorder::new();
    let mut saved = None;
    let mut after_save = Vec::new();
    let (mut fled, mut drank, mut slept) = (
        vec![false; config.creatures],
        vec![false; config.creatures],
        vec![false; config.creatures],
    );
    let mut most_drinking = 0;
    // The viewer records five creatures, the watched one among them, with
    // their needs and the flags' names.
    let watched: Vec<usize> = (0..5)
        .map(|k| (config.watched + k * 3) % config.creatures)
        .collect();
    let mut recorder = FlightRecorder::new(
        &HERD,
        config.creatures,
        Watch::Agents(&watched),
        Capacity::new(config.ticks as usize, 16),
    )
    .with_data(DataCapacity::new(3, 0))
    .name_flags::<Day, Sense>();
    while world.tick < config.ticks {
        if world.tick == half {
            saved = Some(world.save());
            say(&format!("tick {}: the herd is saved", world.tick));
        }
        if world.tick < half {
            // Recorded for the viewer: five creatures' decisions and needs.
            world.step(|creatures, memories, input| {
                recorder.tick_all_with_data(&HERD, creatures, memories, input);
            });
        } else if world.tick < half + 4 {
            // The watched creature's decisions, traced, as the herd goes on.
            world.step(|creatures, memories, input| {
                let mut report = CrowdReport::default();
                for (i, (c, m)) in creatures.iter_mut().zip(memories).enumerate() {
                    let input = input(i, c);
                    if i == config.watched {
                        tick_traced_into(&HERD, c, m, &input, &mut trace, &mut report, i)
                            .expect("ticks");
                    } else {
                        tick(&HERD, c, m, &input).expect("ticks");
                    }
                }
            });
        } else {
            world.step(|creatures, memories, input| {
                tick_all(&HERD, creatures, memories, input);
            });
        }
        for (i, leaf) in world.leaves().into_iter().enumerate() {
            fled[i] |= leaf == Some("FLEE");
            drank[i] |= leaf == Some("DRINK");
            slept[i] |= leaf == Some("SLEEP");
        }
        let drinking = world.inside("DRINK");
        assert!(drinking <= 3, "{drinking} at a water hole of three");
        most_drinking = most_drinking.max(drinking);
        if world.tick > half {
            after_save.push(world.leaves());
        }
        if world.tick.is_multiple_of(50) {
            say(&format!(
                "tick {:3}: fleeing {:3}, drinking {}, eating {:3}, sleeping {:3}, wandering {:3}",
                world.tick,
                world.inside("FLEE"),
                drinking,
                world.inside("EAT"),
                world.inside("SLEEP"),
                world.inside("WANDER"),
            ));
        }
    }
    // The player loads the save into the running game, and the herd plays
    // the same ticks again.
    world.load(saved.as_deref().expect("saved"));
    say(&format!(
        "tick {}: the save of tick {half} is loaded in place",
        config.ticks
    ));
    let mut again = Vec::new();
    while world.tick < config.ticks {
        world.step(|creatures, memories, input| {
            tick_all(&HERD, creatures, memories, input);
        });
        again.push(world.leaves());
    }
    let continued_exactly = again == after_save;
    if let Some(dir) = config.page {
        let json = recorder.export().to_json();
        let page = bt_viewer::write_page(dir, &json).expect("the page is written");
        say(&format!("the viewer's page: {}", page.display()));
    }
    Outcome {
        trace: trace.take(),
        fled: fled.iter().filter(|&&f| f).count(),
        drank: drank.iter().filter(|&&f| f).count(),
        slept: slept.iter().filter(|&&f| f).count(),
        most_drinking,
        continued_exactly,
    }
}
