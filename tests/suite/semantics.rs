//! The tick semantics (`bt_core::semantics`), pinned on scripted trees.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bt_core::{ItemIdx, TickError, TickInput, TickReport, tick};

use crate::world::{Bot, T1, T1Memory, T2, T3, T4, T5, live};

fn at(now: f64) -> TickInput {
    TickInput::new(now, 1.0)
}

#[track_caller]
fn run(bot: &mut Bot, memory: &mut T1Memory, now: f64) -> TickReport {
    tick(&T1, bot, memory, &at(now)).expect("tick")
}

/// The names on the active path, root first.
fn path(memory: &T1Memory) -> Vec<&'static str> {
    memory
        .active_path()
        .map(|l| T1.node(l.item).name())
        .collect()
}

/// Activates ROOT > MID > DEEP > D1 and clears the journal.
fn deep_path(bot: &mut Bot, memory: &mut T1Memory) {
    bot.accept.extend(["MID", "DEEP", "D1"]);
    run(bot, memory, 0.0);
    assert_eq!(path(memory), ["ROOT", "MID", "DEEP", "D1"]);
    bot.take();
}

#[test]
fn activation_decides_down_and_ticks_every_behavior_once() {
    let mut bot = Bot::accepting(&["MID", "DEEP", "D1"]);
    let mut memory = T1.new_memory(0);
    let report = run(&mut bot, &mut memory, 0.0);
    assert_eq!(
        bot.take(),
        [
            "activate ROOT_B",
            "tick ROOT_B",
            "decide HIGH",
            "decide MID",
            "activate MID_B",
            "tick MID_B",
            "decide M1",
            "decide DEEP",
            "activate DEEP_B",
            "tick DEEP_B",
            "decide D1",
            "activate D1_B",
            "tick D1_B",
        ]
    );
    assert_eq!(report.leaf, T1.find("D1"));
    assert_eq!(report.activated, 4);
    assert!(report.changed());

    // The next tick: group behaviors tick before their children, each once.
    let report = run(&mut bot, &mut memory, 1.0);
    let ticks: Vec<_> = bot
        .take()
        .into_iter()
        .filter(|e| e.starts_with("tick"))
        .collect();
    assert_eq!(
        ticks,
        ["tick ROOT_B", "tick MID_B", "tick DEEP_B", "tick D1_B"]
    );
    assert!(!report.changed());
}

#[test]
fn active_deciders_are_not_decided_again() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    for t in 1..6 {
        run(&mut bot, &mut memory, f64::from(t));
    }
    // Hysteresis: MID, DEEP and D1 were decided once, on activation, and
    // never again; the siblings before them are probed every tick.
    for active in ["MID", "DEEP", "D1"] {
        assert_eq!(bot.count(&format!("decide {active}")), 0, "{active}");
    }
    assert_eq!(bot.count("decide HIGH"), 5);
    assert_eq!(bot.count("decide M1"), 5);
    // Even when the active ones would now reject, they keep running.
    bot.accept.clear();
    run(&mut bot, &mut memory, 6.0);
    assert_eq!(path(&memory), ["ROOT", "MID", "DEEP", "D1"]);
}

#[test]
fn earlier_sibling_preempts_and_old_path_deactivates_deepest_first() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    bot.accept.insert("HIGH");
    let report = run(&mut bot, &mut memory, 1.0);
    assert_eq!(
        bot.take(),
        [
            "tick ROOT_B",
            "decide HIGH",
            // Three levels, deepest first; the switching group stays.
            "deactivate D1_B",
            "deactivate DEEP_B",
            "deactivate MID_B",
            "activate HIGH_B",
            "tick HIGH_B",
        ]
    );
    assert_eq!(path(&memory), ["ROOT", "HIGH"]);
    assert_eq!((report.activated, report.deactivated), (1, 3));
    assert_eq!(live(), 2, "only ROOT_B's and HIGH_B's blocks are live");
}

#[test]
fn preemption_tries_earlier_siblings_in_order_and_never_later_ones() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    run(&mut bot, &mut memory, 0.0);
    assert_eq!(path(&memory), ["ROOT", "LOW"]);
    bot.take();

    // HIGH and MID both accept: HIGH is tried first and wins; MID is not
    // even asked.
    bot.accept.extend(["HIGH", "MID", "M1"]);
    run(&mut bot, &mut memory, 1.0);
    assert_eq!(path(&memory), ["ROOT", "HIGH"]);
    assert_eq!(bot.count("decide MID"), 0);
    bot.take();

    // MID comes after the active HIGH: it cannot preempt it.
    bot.accept.remove("HIGH");
    run(&mut bot, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "HIGH"]);
    assert_eq!(bot.take(), ["tick ROOT_B", "tick HIGH_B"]);
}

#[test]
fn ending_behavior_is_masked_and_redecides_climb_in_order() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    bot.accept.extend(["D2", "M1"]);
    bot.ends.extend(["D1_B", "D2_B"]);
    let report = run(&mut bot, &mut memory, 1.0);
    assert_eq!(
        bot.take(),
        [
            "tick ROOT_B",
            "decide HIGH",
            "tick MID_B",
            "decide M1",
            // M1 accepts, so it preempts DEEP before D1 ever ticks.
            "deactivate D1_B",
            "deactivate DEEP_B",
            "activate M1_B",
            "tick M1_B",
        ]
    );
    assert_eq!(report.redecides, 0);

    // Now without M1: D1 ends, DEEP redecides without it (D2), D2 ends,
    // DEEP has nothing left and fails, MID redecides without DEEP.
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    bot.accept.insert("D2");
    bot.ends.extend(["D1_B", "D2_B"]);
    let report = run(&mut bot, &mut memory, 1.0);
    assert_eq!(
        bot.take(),
        [
            "tick ROOT_B",
            "decide HIGH",
            "tick MID_B",
            "decide M1",
            "tick DEEP_B",
            "tick D1_B",
            "deactivate D1_B",
            // D1 is masked: only D2 is asked.
            "decide D2",
            "activate D2_B",
            "tick D2_B",
            "deactivate D2_B",
            "deactivate DEEP_B",
            // DEEP is masked in MID: only M1 is asked, and rejects.
            "decide M1",
            "deactivate MID_B",
            // MID is masked in ROOT: HIGH rejects, LOW has no decide.
            "decide HIGH",
            "activate LOW_B",
            "tick LOW_B",
        ]
    );
    assert_eq!(report.redecides, 4);
    assert_eq!(path(&memory), ["ROOT", "LOW"]);
    let root = memory.active_path().next().unwrap();
    let mid = T1.find("MID").unwrap();
    assert_eq!(root.mask, 1 << T1.node(mid).child_index());
    assert_eq!(root.redecides, 1);

    // Masks last one tick: next tick MID may preempt LOW again.
    bot.accept.extend(["MID", "M1"]);
    run(&mut bot, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "MID", "M1"]);
    assert_eq!(memory.active_path().next().unwrap().mask, 0);
}

#[test]
fn failed_activation_still_deactivates_and_is_not_ticked() {
    let mut bot = Bot::accepting(&["MID", "DEEP", "D1", "D2"]);
    bot.fail_activate.insert("D1_B");
    let mut memory = T1.new_memory(0);
    let report = run(&mut bot, &mut memory, 0.0);
    let journal = bot.take();
    let from = journal.iter().position(|e| e == "decide D1").unwrap();
    assert_eq!(
        journal[from..],
        [
            "decide D1",
            "activate D1_B",
            "deactivate D1_B",
            "decide D2",
            "activate D2_B",
            "tick D2_B",
        ]
    );
    assert_eq!(report.redecides, 1);
    assert_eq!(report.leaf, T1.find("D2"));
}

#[test]
fn shared_decider_is_inlined_with_its_own_timer_at_each_place() {
    let shared: Vec<_> = T2.nodes().filter(|n| n.name() == "SHARED").collect();
    assert_eq!(shared.len(), 2);
    let parents: Vec<_> = shared.iter().map(|n| n.parent().unwrap().name()).collect();
    assert_eq!(parents, ["LEFT", "RIGHT"]);
    assert_ne!(shared[0].timer_slot(), shared[1].timer_slot());
    assert_eq!(T2.timers(), 2);

    let mut bot = Bot::accepting(&["LEFT", "RIGHT", "SHARED"]);
    let mut memory = T2.new_memory(0);
    tick(&T2, &mut bot, &mut memory, &at(0.0)).unwrap();
    assert_eq!(memory.leaf(), Some(shared[0].index()));
    bot.take();

    // One second later SHARED ends under LEFT; LEFT has nothing else, so
    // the root redecides to RIGHT. SHARED's timer there is its own and has
    // never run, so its `decide` is called although the one under LEFT ran
    // a second ago (one slot per static decider would reject it).
    bot.ends.insert("SHARED_B");
    tick(&T2, &mut bot, &mut memory, &at(1.0)).unwrap();
    let journal = bot.take();
    assert_eq!(journal.iter().filter(|e| *e == "decide SHARED").count(), 1);
    assert_eq!(
        journal.iter().filter(|e| *e == "activate SHARED_B").count(),
        1
    );
    assert_eq!(memory.timer(shared[0].timer_slot().unwrap()), 0.0);
    assert_eq!(memory.timer(shared[1].timer_slot().unwrap()), 1.0);

    // Within the period, neither place calls `decide` again.
    bot.ends.clear();
    tick(&T2, &mut bot, &mut memory, &at(2.0)).unwrap();
    assert_eq!(bot.count("decide SHARED"), 0);
    assert!(memory.is_idle());
}

#[test]
fn subset_rule_violation_is_reported_by_name_and_resolved_by_redecide() {
    // MID accepts but neither of its children does.
    let mut bot = Bot::accepting(&["MID"]);
    let mut memory = T1.new_memory(0);
    let report = run(&mut bot, &mut memory, 0.0);
    let group = report.subset_violation.expect("a violation");
    assert_eq!(T1.node(group).name(), "MID");
    assert_eq!(path(&memory), ["ROOT", "LOW"]);
    assert_eq!(report.redecides, 1);
    assert_eq!(bot.count("deactivate MID_B"), 1);

    // A group that runs out of children after one of them ended is not a
    // violation: it accepted while a child could run.
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    bot.ends.insert("D1_B");
    let report = run(&mut bot, &mut memory, 1.0);
    assert_eq!(report.subset_violation, None);
    assert_eq!(path(&memory), ["ROOT", "LOW"]);
}

#[test]
fn redecide_budget_names_the_group_and_deactivates_everything() {
    let mut bot = Bot::default();
    bot.ends.extend(["E1_B", "E2_B", "E3_B", "E4_B"]);
    let mut memory = T3.new_memory(0);
    let err = tick(&T3, &mut bot, &mut memory, &at(0.0)).unwrap_err();
    assert_eq!(
        err,
        TickError::RedecideLimit {
            group: "ENDLESS",
            item: ItemIdx(0),
            limit: 2,
        }
    );
    assert_eq!(
        err.to_string(),
        "group `ENDLESS`: more than 2 masked redecides in one tick; every behavior was deactivated"
    );
    assert!(memory.is_idle());
    assert_eq!(live(), 0, "every memory block was dropped");
    let journal = bot.take();
    for b in ["E1_B", "E2_B", "E3_B"] {
        assert_eq!(
            journal
                .iter()
                .filter(|e| **e == format!("activate {b}"))
                .count(),
            1
        );
        assert_eq!(
            journal
                .iter()
                .filter(|e| **e == format!("deactivate {b}"))
                .count(),
            1
        );
    }
    assert!(!journal.iter().any(|e| e.contains("E4_B")));

    // The memory is usable again.
    bot.ends.clear();
    tick(&T3, &mut bot, &mut memory, &at(1.0)).unwrap();
    assert_eq!(memory.leaf(), T3.find("E1"));
}

#[test]
fn nothing_accepting_at_the_root_is_idle_and_retried_next_tick() {
    let mut bot = Bot::default();
    let mut memory = T4.new_memory(0);
    let report = tick(&T4, &mut bot, &mut memory, &at(0.0)).unwrap();
    assert_eq!(report.leaf, None);
    assert!(memory.is_idle());
    bot.accept.insert("ONLY");
    let report = tick(&T4, &mut bot, &mut memory, &at(1.0)).unwrap();
    assert_eq!(report.leaf, Some(ItemIdx::ROOT));
    assert_eq!(bot.count("decide ONLY"), 2);

    // A root behavior that ends leaves the agent idle, not in error.
    bot.ends.insert("ONLY_B");
    let report = tick(&T4, &mut bot, &mut memory, &at(2.0)).unwrap();
    assert_eq!(report.leaf, None);
    assert_eq!(live(), 0);
}

#[test]
fn bad_input_and_foreign_memory_are_refused_before_anything_runs() {
    let mut bot = Bot::accepting(&["ONLY"]);
    let mut memory = T4.new_memory(0);
    let err = tick(&T4, &mut bot, &mut memory, &TickInput::new(f64::NAN, 0.1)).unwrap_err();
    assert!(matches!(err, TickError::InvalidInput { field: "now", .. }));
    let err = tick(&T4, &mut bot, &mut memory, &TickInput::new(0.0, -1.0)).unwrap_err();
    assert!(matches!(err, TickError::InvalidInput { field: "dt", .. }));
    // T5 has T4's shape (same root), so the types agree; the tree does not.
    let err = tick(&T5, &mut bot, &mut memory, &at(0.0)).unwrap_err();
    assert_eq!(
        err,
        TickError::WrongTree {
            memory: "T4",
            tree: "T5"
        }
    );
    assert_eq!(
        err.to_string(),
        "agent memory made by tree `T4` ticked with tree `T5`"
    );
    assert!(bot.take().is_empty());
    assert!(memory.is_idle());
}

#[test]
fn panicking_callback_leaves_memory_idle_with_blocks_dropped_once() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    deep_path(&mut bot, &mut memory);
    assert_eq!(live(), 4);
    bot.panic_in_tick.insert("DEEP_B");
    let caught = catch_unwind(AssertUnwindSafe(|| run(&mut bot, &mut memory, 1.0)));
    assert!(caught.is_err());
    assert!(memory.is_idle());
    assert_eq!(live(), 0, "each block value dropped exactly once");
    // No deactivate ran after the panic: the agent may be mid-update.
    assert!(!bot.take().iter().any(|e| e.starts_with("deactivate")));

    bot.panic_in_tick.clear();
    run(&mut bot, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "MID", "DEEP", "D1"]);
    drop(memory);
    assert_eq!(live(), 0, "dropping the memory drops its blocks");
}
