//! The decision trace of the `nest_jump` example, pinned: a won fight
//! jumps to the nest's GUARD through a reference decider.

#[path = "../../examples/nest_jump/creature.rs"]
mod creature;

use bt_core::{DumpView, record_trace};

use creature::{CREATURE, Creature, DT, SEED, TICKS, World};

#[test]
fn nest_jump_decision_trace() {
    let mut creature = Creature::new();
    let mut memory = CREATURE.new_memory(SEED);
    let mut world = World::new();
    let text = record_trace(&CREATURE, &mut creature, &mut memory, |run| {
        for step in 0..TICKS {
            let now = f64::from(step) * f64::from(DT);
            let input = world.step(run.agent(), now);
            let notes = std::mem::take(&mut run.agent().notes);
            notes.iter().for_each(|n| run.note(n));
            run.tick(input);
            let notes = std::mem::take(&mut run.agent().notes);
            notes.iter().for_each(|n| run.note(n));
        }
        run.dump(DumpView::ActivePath);
    });
    assert!(text.contains("jump 3:GO_GUARD to 6:GUARD"), "{text}");
    snapshot!(text);
}
