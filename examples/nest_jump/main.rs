//! A reference decider: once the creature wins a fight it goes straight to
//! its nest's GUARD (`ROOT/NEST/GUARD`), where the root's priorities and
//! the nest's own would have put it to sleep.
//!
//! Run with `cargo run --example nest_jump`: each tick prints what
//! happened in the world and the creature's active path when it changes.

mod creature;

use bt_core::{DumpView, tick};

use creature::{CREATURE, Creature, DT, SEED, TICKS, World};

fn main() -> Result<(), bt_core::TickError> {
    let mut c = Creature::new();
    let mut memory = CREATURE.new_memory(SEED);
    let mut world = World::new();
    let mut guarded = false;
    for step in 0..TICKS {
        let now = f64::from(step) * f64::from(DT);
        let input = world.step(&mut c, now);
        let report = tick(&CREATURE, &mut c, &mut memory, &input)?;
        for note in c.notes.drain(..) {
            println!("{now:5.1}s  {note}");
        }
        if report.changed() {
            let path: Vec<&str> = memory
                .active_path()
                .map(|l| CREATURE.node(l.item).name())
                .collect();
            println!("{now:5.1}s  -> {}", path.join(" / "));
            guarded |= path.ends_with(&["NEST", "GUARD"]);
        }
    }
    println!(
        "\nAt the end:\n{}",
        memory.dump(f64::from(TICKS) * f64::from(DT), DumpView::ActivePath)
    );
    // The point of the example: the fight led to GUARD, not to SLEEP.
    assert!(guarded, "the won fight leads to the nest's GUARD");
    Ok(())
}
