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
//! │   ├── GUARD_NEST_HELP     ALLY_CALL stimulus (listens once a second)
//! │   ├── GUARD_NEST_FIGHT    HIT stimulus: something bit it
//! │   ├── GUARD_NEST_GROWL    STRANGER stimulus
//! │   ├── GUARD_NEST_PATROL   rested, and not at NIGHT (asked once a second)
//! │   └── GUARD_NEST_IDLE
//! ├── EAT (sequential)        hungry
//! │   ├── FIND_FOOD           picks the nearest food; hands it over as a DBlock
//! │   └── EAT_FOOD
//! └── IDLE
//! ```
//!
//! Decision flags (HAS_NEST, NIGHT) are facts the game hands to each tick;
//! stimuli (HIT, STRANGER, ALLY_CALL) are short-lived facts set on the
//! creature by the world, with a payload and a time-out.

mod creature;

use bt_core::{DumpView, tick};
use creature::{CREATURE, Creature, CreatureMemory, DT, SEED, TICKS, World};

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
    let mut world = World::new();
    let mut now = 0.0;

    println!("guard_nest: {TICKS} ticks of {DT} s\n");
    for step in 0..TICKS {
        now = f64::from(step) * f64::from(DT);
        // The world moves first: scripted events, bites, hunger, stimuli.
        let input = world.step(&mut creature, now);
        for note in creature.notes.drain(..) {
            println!("t={now:4.1}  {note}");
        }
        let was = memory
            .leaf()
            .map_or("idle", |leaf| CREATURE.node(leaf).name());
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
    // per level of the active path with its child index, name and id, kind,
    // time active, behavior, redecide mask and count, and active child.
    println!(
        "\nactive path at t={now:.1} (health {:.1}, hunger {:.1}, stimuli {:?}):",
        creature.health, creature.hunger, creature.stimuli
    );
    print!("{}", memory.dump(now, DumpView::ActivePath));
    println!(
        "agent memory: {} bytes ({} levels of {}-byte blocks, {} timer slots); the tree: {} items, shared",
        CreatureMemory::byte_size(),
        CREATURE.levels(),
        CREATURE.block_size(),
        CREATURE.timers(),
        CREATURE.len()
    );
}
