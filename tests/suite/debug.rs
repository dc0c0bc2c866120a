//! Debugging aids, pinned as snapshots: the state dump (`debug_print_state`),
//! the Graphviz export (`to_dot`) and `record_trace`.
//!
//! Read a changed snapshot line by line before accepting it: the dump and
//! the DOT text say what the tree and the agent's active path are.

use bt_core::{
    DumpView, TickInput, behavior, debug_print_state, decider, group, record_trace, to_dot, tree,
};

use crate::world::{Bot, T1, T1Memory, T2, T3};

/// T1 after three ticks: LOW at t=0; MID > DEEP > D1 from t=1; at t=3 D1
/// ends and DEEP's masked redecide picks D2.
fn t1_after_three_ticks() -> (Bot, T1Memory) {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    let mut tick = |bot: &mut Bot, now: f64| {
        bt_core::tick(&T1, bot, &mut memory, &TickInput::new(now, 1.0)).unwrap();
    };
    tick(&mut bot, 0.0);
    bot.accept.extend(["MID", "DEEP", "D1", "D2"]);
    tick(&mut bot, 1.0);
    bot.ends.insert("D1_B");
    tick(&mut bot, 3.0);
    (bot, memory)
}

fn dump(memory: &T1Memory, now: f64, view: DumpView) -> String {
    let mut text = String::new();
    debug_print_state(&mut text, &T1, memory, now, view).unwrap();
    text
}

#[test]
fn dump_of_the_active_path() {
    let (_bot, memory) = t1_after_three_ticks();
    let text = dump(&memory, 3.5, DumpView::ActivePath);
    assert_eq!(memory.dump(3.5, DumpView::ActivePath).to_string(), text);
    snapshot!(text);
}

#[test]
fn dump_of_the_whole_tree() {
    let (_bot, memory) = t1_after_three_ticks();
    let text = dump(&memory, 3.5, DumpView::WholeTree);
    assert_eq!(memory.dump(3.5, DumpView::WholeTree).to_string(), text);
    assert_eq!(text.lines().count(), T1.len());
    assert_eq!(text.lines().filter(|l| l.contains('*')).count(), 4);
    snapshot!(text);
}

#[test]
fn dump_of_an_idle_agent_and_of_a_foreign_memory() {
    let memory = T1.new_memory(0);
    assert_eq!(dump(&memory, 0.0, DumpView::ActivePath), "(idle)\n");
    let whole = dump(&memory, 0.0, DumpView::WholeTree);
    assert_eq!(whole.lines().count(), T1.len());
    assert!(!whole.contains('*') && !whole.contains("time:"));

    let foreign = T2.new_memory(0);
    let mut text = String::new();
    debug_print_state(&mut text, &T2, &foreign, 0.0, DumpView::ActivePath).unwrap();
    assert_eq!(text, "(idle)\n");
    // T1 and T2 have the same agent type but not the same shape: the types
    // differ, so a mix-up is only possible between trees of one shape.
    let mut text = String::new();
    let t5 = crate::world::T5.new_memory(0);
    debug_print_state(&mut text, &crate::world::T4, &t5, 0.0, DumpView::WholeTree).unwrap();
    assert_eq!(text, "(memory of tree `T5`, not of `T4`)\n");
}

#[test]
fn dump_writes_into_a_fixed_buffer() {
    // Any `fmt::Write` will do; this one has no heap behind it.
    struct Fixed {
        buf: [u8; 1024],
        len: usize,
    }
    impl std::fmt::Write for Fixed {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let end = self.len + s.len();
            self.buf
                .get_mut(self.len..end)
                .ok_or(std::fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }
    let (_bot, memory) = t1_after_three_ticks();
    let mut fixed = Fixed {
        buf: [0; 1024],
        len: 0,
    };
    debug_print_state(&mut fixed, &T1, &memory, 3.5, DumpView::ActivePath).unwrap();
    let text = std::str::from_utf8(&fixed.buf[..fixed.len]).unwrap();
    assert_eq!(text, dump(&memory, 3.5, DumpView::ActivePath));
    // A buffer too small reports the error instead of truncating silently.
    let mut tiny = Fixed {
        buf: [0; 1024],
        len: 1000,
    };
    assert!(debug_print_state(&mut tiny, &T1, &memory, 3.5, DumpView::ActivePath).is_err());
}

#[test]
fn dot_of_t1_with_its_active_path() {
    let (_bot, memory) = t1_after_three_ticks();
    let mut dot = String::new();
    to_dot(&mut dot, &T1, Some(&memory)).unwrap();
    let mut plain = String::new();
    to_dot(&mut plain, &T1, None).unwrap();
    assert!(!plain.contains("filled"));
    snapshot!(dot);
}

// A creature shaped like the guard-nest example (`examples/guard_nest.rs`),
// with do-nothing behaviors: for the picture of a tree with every kind of
// label, which `docs/guard_nest.svg` is rendered from.

bitflags::bitflags! {
    /// Decision flags of the creature.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Decision: u32 {
        const HAS_NEST = 1 << 0;
        const NIGHT = 1 << 1;
    }

    /// Stimuli of the creature.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Sense: u64 {
        const HIT = 1 << 0;
        const STRANGER = 1 << 1;
        const ALLY_CALL = 1 << 2;
    }
}

#[derive(Default)]
pub struct Creature {
    pub health: f32,
    pub hungry: bool,
}

fn accept(yes: bool) -> f32 {
    if yes { 1.0 } else { 0.0 }
}

behavior! { DEAD: Creature }
behavior! { STAY_NEAR_NEST: Creature }
behavior! { HELP_ALLY: Creature }
behavior! { FIGHT: Creature }
behavior! { GROWL: Creature }
behavior! { PATROL: Creature }
behavior! { LOITER: Creature }
behavior! { SEARCH_FOR_FOOD: Creature }
behavior! { CHEW: Creature }

decider! { DIE: Creature => DEAD, decide: |c, _| accept(c.health <= 0.0) }
decider! { GUARD_NEST_HELP: Creature => HELP_ALLY, stimuli_all: Sense::ALLY_CALL, every: 1.0 }
decider! { GUARD_NEST_FIGHT: Creature => FIGHT, stimuli_all: Sense::HIT }
decider! { GUARD_NEST_GROWL: Creature => GROWL, stimuli_all: Sense::STRANGER }
decider! { GUARD_NEST_PATROL: Creature => PATROL, needs_none: Decision::NIGHT, every: 1.0 }
decider! { GUARD_NEST_IDLE: Creature => LOITER }
group! { GUARD_NEST_GROUP: Creature,
    prioritized [GUARD_NEST_HELP, GUARD_NEST_FIGHT, GUARD_NEST_GROWL, GUARD_NEST_PATROL, GUARD_NEST_IDLE],
    behavior: STAY_NEAR_NEST,
    decide: |c, _| accept(!c.hungry),
    needs_all: Decision::HAS_NEST,
}
decider! { FIND_FOOD: Creature => SEARCH_FOR_FOOD }
decider! { EAT_FOOD: Creature => CHEW }
group! { EAT: Creature, sequential [FIND_FOOD, EAT_FOOD], decide: |c, _| accept(c.hungry) }
decider! { IDLE: Creature => LOITER }
group! { ROOT: Creature, prioritized [DIE, GUARD_NEST_GROUP, EAT, IDLE] }
tree! { CREATURE: Creature = ROOT }

#[test]
fn dot_of_the_guard_nest_creature_on_patrol() {
    let mut creature = Creature {
        health: 10.0,
        hungry: false,
    };
    let mut memory = CREATURE.new_memory(0);
    let input = TickInput::new(0.0, 0.5).with_decision(Decision::HAS_NEST);
    bt_core::tick(&CREATURE, &mut creature, &mut memory, &input).unwrap();
    let path: Vec<_> = memory
        .active_path()
        .map(|l| CREATURE.node(l.item).name())
        .collect();
    assert_eq!(path, ["ROOT", "GUARD_NEST_GROUP", "GUARD_NEST_PATROL"]);
    let mut dot = String::new();
    to_dot(&mut dot, &CREATURE, Some(&memory)).unwrap();
    snapshot!(dot);
}

#[test]
fn record_trace_of_t1() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    let trace = record_trace(&T1, &mut bot, &mut memory, |run| {
        run.note("nothing accepts but LOW");
        run.tick(TickInput::new(0.0, 1.0));
        run.note("MID, DEEP and D1 accept: MID preempts LOW");
        run.agent().accept.extend(["MID", "DEEP", "D1", "D2"]);
        run.tick(TickInput::new(1.0, 1.0));
        run.note("D1 ends: masked redecide in DEEP picks D2");
        run.agent().ends.insert("D1_B");
        run.tick(TickInput::new(3.0, 1.0));
        run.dump(DumpView::ActivePath);
    });
    snapshot!(trace);
}

#[test]
fn record_trace_writes_errors_as_lines() {
    let mut bot = Bot::default();
    bot.ends.extend(["E1_B", "E2_B", "E3_B", "E4_B"]);
    let mut memory = T3.new_memory(0);
    let trace = record_trace(&T3, &mut bot, &mut memory, |run| {
        assert!(run.tick(TickInput::new(0.0, 0.5)).is_none());
        assert!(run.tick(TickInput::new(f64::NAN, 0.5)).is_none());
        run.dump(DumpView::ActivePath);
    });
    snapshot!(trace);
}
