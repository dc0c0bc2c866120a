//! Decision traces of scripted multi-tick runs, pinned as snapshots.
//!
//! One line per event, indented by depth. Read a changed snapshot line by
//! line before accepting it: it is the tick semantics written out.

use bt_core::{TickInput, TraceRecorder, tick_traced};

use crate::world::{Bot, T1, T3};

#[test]
fn prioritized_tree_over_six_ticks() {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    let mut trace = TraceRecorder::new();
    // (time, note, change to the script before the tick)
    type Step = (f64, &'static str, fn(&mut Bot));
    let script: [Step; 6] = [
        (0.0, "nothing accepts but LOW", |_| {}),
        (1.0, "MID, DEEP and D1 accept: MID preempts LOW", |b| {
            b.accept.extend(["MID", "DEEP", "D1", "D2"])
        }),
        (2.0, "hysteresis: MID, DEEP, D1 are not asked again", |_| {}),
        (3.0, "D1 ends: masked redecide in DEEP picks D2", |b| {
            b.ends.insert("D1_B");
        }),
        (
            4.0,
            "HIGH accepts: preempts MID, deactivating deepest first",
            |b| {
                b.ends.clear();
                b.accept.insert("HIGH");
            },
        ),
        (5.0, "MID accepts but no child does: Subset Rule", |b| {
            b.accept.clear();
            b.accept.insert("MID");
            b.ends.insert("HIGH_B");
        }),
    ];
    for (now, note, change) in script {
        change(&mut bot);
        trace.note(note);
        let input = TickInput::new(now, 1.0).with_agent(7);
        tick_traced(&T1, &mut bot, &mut memory, &input, &mut trace).unwrap();
    }
    snapshot!(trace.text());
}

#[test]
fn redecide_limit_trace() {
    let mut bot = Bot::default();
    bot.ends.extend(["E1_B", "E2_B", "E3_B", "E4_B"]);
    let mut memory = T3.new_memory(0);
    let mut trace = TraceRecorder::new();
    let err = tick_traced(
        &T3,
        &mut bot,
        &mut memory,
        &TickInput::new(0.0, 0.5),
        &mut trace,
    );
    assert!(err.is_err());
    snapshot!(trace.text());
}
