//! Save and load: the guard-nest creature is saved to a file in the middle
//! of a fight, and a fresh process loads it and fights on.
//!
//! Run it with `cargo run --example save_load`. The first process runs the
//! scripted world of `guard_nest` up to the fight, saves the creature, its
//! world and its agent memory (postcard, a compact binary serde format),
//! then goes on to the end; it starts a second process on the saved file,
//! which loads everything into a fresh memory and runs to the end too.
//! Both print the decisions they make after the save, and the first checks
//! that they are the same, line for line.
//!
//! What is saved: the game's own state (the creature's health, hunger and
//! stimuli, the world's script position) with the game's own serde types,
//! and the agent memory through `AgentMemory::snapshot`. The PATROL and
//! GROWL behaviors keep their memory blocks across the save (`persist`);
//! HELP_ALLY and SEARCH_FOR_FOOD hold borrowed names in theirs and are not
//! persisted: had the save come while one of them ran, the loaded creature
//! would have started that behavior afresh.

#[path = "guard_nest/creature.rs"]
#[allow(dead_code)]
mod creature;

use std::process::Command;

use bt_core::tick;
use creature::{CREATURE, Creature, CreatureMemory, DT, SEED, TICKS, World};

/// The tick after which the game saves: the creature is fighting.
const SAVE_AFTER: u32 = 18;

/// Everything the game saves, in the order it writes it (and
/// [`read_game`] reads it).
#[derive(serde::Serialize)]
struct SaveGame<'a, M> {
    step: u32,
    now: f64,
    creature: &'a Creature,
    world: &'a World,
    memory: M,
}

/// The active path below ROOT, as `GROUP > LEAF`.
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

/// Runs ticks `from..to`; returns one line per tick: the time, the active
/// path and what the creature did.
fn run(
    creature: &mut Creature,
    world: &mut World,
    memory: &mut CreatureMemory,
    from: u32,
    to: u32,
) -> Vec<String> {
    let mut lines = Vec::new();
    for step in from..to {
        let now = f64::from(step) * f64::from(DT);
        let input = world.step(creature, now);
        tick(&CREATURE, creature, memory, &input).expect("the creature's tree ticks");
        let notes = creature.notes.drain(..).collect::<Vec<_>>().join("; ");
        lines.push(format!(
            "t={now:4.1}  {:<40} health {:4.1}  {notes}",
            path(memory),
            creature.health
        ));
    }
    lines
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, file] = args.as_slice()
        && flag == "--load"
    {
        load(file);
        return;
    }

    let mut creature = Creature::new();
    let mut world = World::new();
    let mut memory: CreatureMemory = CREATURE.new_memory(SEED);
    let before = run(&mut creature, &mut world, &mut memory, 0, SAVE_AFTER);
    println!("first process, up to the save:");
    for line in &before[before.len() - 3..] {
        println!("  {line}");
    }

    let now = f64::from(SAVE_AFTER - 1) * f64::from(DT);
    let file = std::env::temp_dir().join(format!("bt_save_load_{}.bin", std::process::id()));
    let bytes = postcard::to_allocvec(&SaveGame {
        step: SAVE_AFTER,
        now,
        creature: &creature,
        world: &world,
        memory: memory.snapshot(now),
    })
    .expect("the save game is written");
    std::fs::write(&file, &bytes).expect("the save file is written");
    let memory_bytes = postcard::to_allocvec(&memory.snapshot(now))
        .expect("written")
        .len();
    println!(
        "\nsaved at t={now:.1} while `{}` runs: {} bytes in {} ({memory_bytes} for the agent memory)",
        path(&memory),
        bytes.len(),
        file.display()
    );

    // The first process goes on without stopping...
    let uninterrupted = run(&mut creature, &mut world, &mut memory, SAVE_AFTER, TICKS);

    // ... and a fresh process loads the file and goes on from there.
    let output = Command::new(std::env::current_exe().expect("this program's path"))
        .arg("--load")
        .arg(&file)
        .output()
        .expect("the loading process runs");
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let loaded: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();

    println!("\nafter the save, uninterrupted (left) and loaded in a fresh process (right):");
    for (a, b) in uninterrupted.iter().zip(&loaded) {
        let mark = if a == b { "=" } else { "≠" };
        println!("  {a}\n{mark} {b}");
    }
    assert_eq!(
        uninterrupted, loaded,
        "the loaded creature decides differently"
    );
    println!(
        "\nthe loaded creature made the same {} decisions, line for line",
        loaded.len()
    );
}

/// The second process: loads the save file and runs to the end, printing
/// one line per tick.
fn load(file: &str) {
    let bytes = std::fs::read(file).expect("the save file reads");
    let mut memory: CreatureMemory = CREATURE.new_memory(0);
    let mut d = postcard::Deserializer::from_bytes(&bytes);
    let (step, mut creature, mut world) = read_game(&mut d, &mut memory);
    for line in run(&mut creature, &mut world, &mut memory, step, TICKS) {
        println!("{line}");
    }
}

/// Reads the save game's fields in order, restoring the memory in place.
fn read_game<'de>(
    d: &mut postcard::Deserializer<'de, postcard::de_flavors::Slice<'de>>,
    memory: &mut CreatureMemory,
) -> (u32, Creature, World) {
    use serde::Deserialize;
    let step = u32::deserialize(&mut *d).expect("step");
    let now = f64::deserialize(&mut *d).expect("clock");
    let creature = Creature::deserialize(&mut *d).expect("creature");
    let world = World::deserialize(&mut *d).expect("world");
    memory
        .restore(now, &mut *d)
        .unwrap_or_else(|e| panic!("the agent memory: {e}"));
    (step, creature, world)
}
