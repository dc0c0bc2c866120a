//! Reference deciders: a pick that jumps to a decider elsewhere in the
//! tree (`bt_core::semantics`, "References").

use std::collections::HashSet;

use bt_core::{
    ItemIdx, TickError, TickInput, TickReport, TraceRecorder, group, leaf, reference, tick,
    tick_traced, tree,
};

/// An agent whose deciders accept when their name is in `yes`, and whose
/// leaves end when their name is in `ends`.
#[derive(Default)]
pub struct Rig {
    yes: HashSet<&'static str>,
    ends: HashSet<&'static str>,
    select: Option<usize>,
}

impl Rig {
    fn with(yes: &[&'static str]) -> Rig {
        Rig {
            yes: yes.iter().copied().collect(),
            ..Rig::default()
        }
    }
}

macro_rules! rig_leaf {
    ($($name:ident)*) => {$(
        leaf! { $name: Rig,
            when: |r: &Rig, _| r.yes.contains(stringify!($name)),
            tick: |r: &mut Rig, _| !r.ends.contains(stringify!($name)),
        }
    )*};
}

macro_rules! yes {
    ($name:literal) => {
        |r: &Rig, _| r.yes.contains($name)
    };
}

// The nest: on the road a creature fights or walks; GO_GUARD jumps from
// the road straight to the nest's GUARD.
rig_leaf! { FIGHT WALK GUARD REST SLEEP }
reference! { GO_GUARD: Rig => [ROOT, NEST, GUARD], when: yes!("GO_GUARD") }
group! { ROAD: Rig, prioritized [GO_GUARD, FIGHT, WALK], when: yes!("ROAD") }
group! { NEST: Rig, prioritized [GUARD, REST], when: yes!("NEST") }
group! { ROOT: Rig, prioritized [ROAD, NEST] }
tree! { NEST_TREE: Rig = ROOT }

fn at(now: f64) -> TickInput {
    TickInput::new(now, 0.5)
}

fn path<const L: usize, const S: usize, const N: usize>(
    tree: &bt_core::Tree<Rig, L, S, N>,
    memory: &bt_core::AgentMemory<Rig, L, S, N>,
) -> Vec<&'static str> {
    memory
        .active_path()
        .map(|l| tree.node(l.item).name())
        .collect()
}

fn traced<const L: usize, const S: usize, const N: usize>(
    tree: &bt_core::Tree<Rig, L, S, N>,
    rig: &mut Rig,
    memory: &mut bt_core::AgentMemory<Rig, L, S, N>,
    now: f64,
) -> (Result<TickReport, TickError>, String) {
    let mut trace = TraceRecorder::new();
    let report = tick_traced(tree, rig, memory, &at(now), &mut trace);
    (report, trace.text().to_string())
}

#[test]
fn the_compile_step_links_each_reference_to_its_target() {
    let r = NEST_TREE.node(NEST_TREE.find("GO_GUARD").unwrap());
    assert!(r.is_reference());
    assert_eq!(
        r.target().map(|t| t.index()),
        NEST_TREE.find_path("ROOT/NEST/GUARD")
    );
    assert_eq!(NEST_TREE.shape().references, 1);
    assert!(NEST_TREE.node(ItemIdx::ROOT).target().is_none());
    assert_eq!(GO_GUARD.target().len(), 3);
    assert!(GO_GUARD.is_reference() && !GUARD.is_reference());
}

#[test]
fn a_preempting_reference_moves_the_path_to_its_target() {
    let mut rig = Rig::with(&["ROAD", "WALK", "NEST", "GUARD"]);
    let mut memory = NEST_TREE.new_memory(0);
    tick(&NEST_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "ROAD", "WALK"]);

    rig.yes.insert("GO_GUARD");
    rig.yes.remove("ROAD");
    let (report, text) = traced(&NEST_TREE, &mut rig, &mut memory, 1.0);
    let report = report.unwrap();
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "NEST", "GUARD"]);
    assert_eq!(report.leaf, NEST_TREE.find_path("ROOT/NEST/GUARD"));
    // WALK (preempted), then ROAD, the path's level below the common
    // ancestor; then NEST and GUARD.
    assert_eq!((report.deactivated, report.activated), (2, 2));
    snapshot!(text);
}

/// One tick of agent `id` in which GO_GUARD jumps (for the logging test).
pub fn jump_once(id: u32) {
    let mut rig = Rig::with(&["ROAD", "GO_GUARD", "NEST", "GUARD"]);
    let mut memory = NEST_TREE.new_memory(0);
    tick(&NEST_TREE, &mut rig, &mut memory, &at(0.0).with_agent(id)).unwrap();
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "NEST", "GUARD"]);
}

#[test]
fn a_reference_is_never_on_the_active_path() {
    let mut rig = Rig::with(&["ROAD", "GO_GUARD", "NEST", "GUARD"]);
    let mut memory = NEST_TREE.new_memory(0);
    for t in 0..4 {
        tick(&NEST_TREE, &mut rig, &mut memory, &at(f64::from(t))).unwrap();
        assert!(
            memory
                .active_path()
                .all(|l| !NEST_TREE.node(l.item).is_reference())
        );
    }
    // ROAD still accepts: the root's priorities hold at the target as for
    // any path, so ROAD preempts NEST each tick and jumps again.
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "NEST", "GUARD"]);
}

#[test]
fn a_refusing_target_fails_the_reference_in_its_group() {
    let mut rig = Rig::with(&["ROAD", "GO_GUARD", "WALK", "NEST", "REST"]);
    let mut memory = NEST_TREE.new_memory(0);
    let (report, text) = traced(&NEST_TREE, &mut rig, &mut memory, 0.0);
    let report = report.unwrap();
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "ROAD", "WALK"]);
    assert_eq!(report.redecides, 1);
    assert!(text.contains("reject 6:GUARD (decide)"), "{text}");
    assert!(
        text.contains("redecide 1:ROAD without 2:GO_GUARD"),
        "{text}"
    );
    assert!(!text.contains("jump"), "{text}");
}

#[test]
fn a_refusing_group_on_the_way_fails_the_reference() {
    let mut rig = Rig::with(&["ROAD", "GO_GUARD", "FIGHT", "GUARD"]);
    let mut memory = NEST_TREE.new_memory(0);
    let (report, text) = traced(&NEST_TREE, &mut rig, &mut memory, 0.0);
    report.unwrap();
    assert_eq!(path(&NEST_TREE, &memory), ["ROOT", "ROAD", "FIGHT"]);
    assert!(text.contains("reject 5:NEST (decide)"), "{text}");
    // GUARD is not asked once NEST refused.
    assert!(
        !text.contains("GUARD (decide)") && !text.contains("accept 6:GUARD"),
        "{text}"
    );
}

// A restart: AGAIN jumps to its own group, which starts over.
rig_leaf! { STEP1 STEP2 IDLE }
reference! { AGAIN: Rig => [LOOP_ROOT, LOOP], when: yes!("AGAIN") }
group! { LOOP: Rig, sequential [STEP1, STEP2, AGAIN] }
group! { LOOP_ROOT: Rig, prioritized [LOOP, IDLE] }
tree! { LOOP_TREE: Rig = LOOP_ROOT }

#[test]
fn a_reference_to_an_ancestor_restarts_it() {
    let mut rig = Rig::with(&["STEP1", "STEP2", "AGAIN", "IDLE"]);
    let mut memory = LOOP_TREE.new_memory(0);
    tick(&LOOP_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    rig.ends.insert("STEP1");
    tick(&LOOP_TREE, &mut rig, &mut memory, &at(1.0)).unwrap();
    assert_eq!(path(&LOOP_TREE, &memory), ["LOOP_ROOT", "LOOP", "STEP2"]);
    rig.ends = ["STEP2"].into();
    let (report, text) = traced(&LOOP_TREE, &mut rig, &mut memory, 2.0);
    report.unwrap();
    assert_eq!(path(&LOOP_TREE, &memory), ["LOOP_ROOT", "LOOP", "STEP1"]);
    assert!(text.contains("jump 4:AGAIN to 1:LOOP"), "{text}");
    assert!(text.contains("deactivate 1:LOOP (preempted)"), "{text}");
    assert!(text.find("deactivate 1:LOOP").unwrap() < text.find("activate 1:LOOP\n").unwrap());
}

#[test]
fn a_chain_of_jumps_is_bounded_by_the_redecide_budget() {
    // Every step ends at once and AGAIN restarts LOOP: without the budget
    // the tick would never end.
    let mut rig = Rig::with(&["STEP1", "STEP2", "AGAIN", "IDLE"]);
    rig.ends = ["STEP1", "STEP2"].into();
    let mut memory = LOOP_TREE.new_memory(0);
    let err = tick(&LOOP_TREE, &mut rig, &mut memory, &at(0.0)).unwrap_err();
    assert!(matches!(err, TickError::RedecideLimit { .. }), "{err:?}");
    assert_eq!(memory.depth(), 0);
}

// A reference to a reference: HOP jumps to NEST2/ON, which jumps to DEN.
rig_leaf! { PLAY DOZE }
reference! { HOP: Rig => [ROOT2, NEST2, ON], when: yes!("HOP") }
reference! { ON: Rig => [ROOT2, DEN, DOZE] }
group! { YARD: Rig, prioritized [HOP, PLAY] }
group! { NEST2: Rig, prioritized [ON] }
group! { DEN: Rig, prioritized [DOZE] }
group! { ROOT2: Rig, prioritized [YARD, NEST2, DEN] }
tree! { HOP_TREE: Rig = ROOT2 }

#[test]
fn a_reference_to_a_reference_jumps_on() {
    let mut rig = Rig::with(&["HOP", "PLAY", "DOZE"]);
    let mut memory = HOP_TREE.new_memory(0);
    let (report, text) = traced(&HOP_TREE, &mut rig, &mut memory, 0.0);
    report.unwrap();
    assert_eq!(path(&HOP_TREE, &memory), ["ROOT2", "DEN", "DOZE"]);
    let first = text.find("jump 2:HOP to 5:ON").expect(&text);
    let second = text.find("jump 5:ON to 7:DOZE").expect(&text);
    assert!(first < second);
    assert!(text.contains("deactivate 4:NEST2 (preempted)"), "{text}");
}

// A target inside a slot group's child tree: the jump goes there only
// while the slot selects that child.
rig_leaf! { TOOL_A TOOL_B WAIT }
reference! { USE_B: Rig => [ROOT3, TOOLS, TOOL_B], when: yes!("USE_B") }
group! { TOOLS: Rig, slot [TOOL_A, TOOL_B], select: |r: &Rig| r.select }
group! { HOME: Rig, prioritized [USE_B, WAIT] }
group! { ROOT3: Rig, prioritized [HOME, TOOLS] }
tree! { SLOT_TREE: Rig = ROOT3 }

#[test]
fn a_jump_into_a_slot_child_needs_the_slot_to_select_it() {
    let mut rig = Rig::with(&["USE_B", "WAIT", "TOOL_A", "TOOL_B"]);
    rig.select = Some(0);
    let mut memory = SLOT_TREE.new_memory(0);
    let (report, text) = traced(&SLOT_TREE, &mut rig, &mut memory, 0.0);
    report.unwrap();
    assert_eq!(path(&SLOT_TREE, &memory), ["ROOT3", "HOME", "WAIT"]);
    assert!(
        text.contains("reject 6:TOOL_B (nothing selected)"),
        "{text}"
    );

    rig.select = Some(1);
    let mut memory = SLOT_TREE.new_memory(0);
    tick(&SLOT_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    assert_eq!(path(&SLOT_TREE, &memory), ["ROOT3", "TOOLS", "TOOL_B"]);
}

#[test]
fn traced_and_untraced_ticks_agree_on_jumps() {
    let script: [&[&'static str]; 5] = [
        &["ROAD", "WALK", "NEST", "GUARD"],
        &["ROAD", "WALK", "GO_GUARD", "NEST", "GUARD"],
        &["NEST", "GUARD", "REST"],
        &["ROAD", "GO_GUARD", "FIGHT", "NEST", "REST"],
        &["ROAD", "GO_GUARD", "NEST", "GUARD"],
    ];
    let mut a = NEST_TREE.new_memory(0);
    let mut b = NEST_TREE.new_memory(0);
    for (t, yes) in script.iter().enumerate() {
        let mut rig_a = Rig::with(yes);
        let mut rig_b = Rig::with(yes);
        let ra = tick(&NEST_TREE, &mut rig_a, &mut a, &at(t as f64)).unwrap();
        let (rb, _) = traced(&NEST_TREE, &mut rig_b, &mut b, t as f64);
        assert_eq!(ra, rb.unwrap(), "tick {t}");
        assert_eq!(path(&NEST_TREE, &a), path(&NEST_TREE, &b), "tick {t}");
    }
}

#[test]
fn the_state_dump_names_each_reference_target() {
    let mut rig = Rig::with(&["ROAD", "WALK"]);
    let mut memory = NEST_TREE.new_memory(0);
    tick(&NEST_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    let text = memory.dump(1.0, bt_core::DumpView::WholeTree).to_string();
    let line = text.lines().find(|l| l.contains("GO_GUARD")).unwrap();
    assert!(line.starts_with("     0:GO_GUARD/0x"), "{line}");
    assert!(
        line.ends_with(" (reference) [jumps to ROOT/NEST/GUARD]"),
        "{line}"
    );
}

#[test]
fn dot_draws_the_jump_as_a_dashed_edge() {
    let mut dot = String::new();
    bt_core::to_dot(&mut dot, &NEST_TREE, None).unwrap();
    assert!(
        dot.contains("  n2 [label=\"GO_GUARD\", style=\"rounded,dashed\"];"),
        "{dot}"
    );
    assert!(dot.contains("  n1 -> n2;"), "{dot}");
    assert!(
        dot.contains("  n2 -> n6 [style=dashed, constraint=false, color=\"#3c78d8\"];"),
        "{dot}"
    );
    assert_eq!(dot.matches("style=dashed").count(), 1);
}

/// The same tree as `NEST_TREE`, with GO_GUARD jumping to REST instead.
mod elsewhere {
    use super::{FIGHT, GUARD, REST, Rig, WALK};
    use bt_core::{group, reference, tree};

    reference! { GO_GUARD: Rig => [ROOT, NEST, REST], when: yes!("GO_GUARD") }
    group! { ROAD: Rig, prioritized [GO_GUARD, FIGHT, WALK], when: yes!("ROAD") }
    group! { NEST: Rig, prioritized [GUARD, REST], when: yes!("NEST") }
    group! { ROOT: Rig, prioritized [ROAD, NEST] }
    tree! { pub NEST_TREE: Rig = ROOT }
}

#[test]
fn the_fingerprint_covers_the_target() {
    assert_eq!(elsewhere::NEST_TREE.len(), NEST_TREE.len());
    assert_ne!(
        elsewhere::NEST_TREE.shape().fingerprint,
        NEST_TREE.shape().fingerprint
    );
}

#[test]
fn a_snapshot_with_a_reference_on_its_path_is_refused() {
    let mut rig = Rig::with(&["ROAD", "WALK"]);
    let mut memory = NEST_TREE.new_memory(0);
    tick(&NEST_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    let mut v = serde_json::to_value(memory.snapshot(1.0)).unwrap();
    let walk = NEST_TREE.find("WALK").unwrap();
    assert_eq!(v["path"][2]["item"], u64::from(walk.0));
    v["path"][2]["item"] = 2.into();
    v["path"][2]["decider"] = "GO_GUARD".into();
    let bytes = serde_json::to_vec(&v).unwrap();
    let mut target = NEST_TREE.new_memory(0);
    let err = target
        .restore(1.0, &mut serde_json::Deserializer::from_slice(&bytes))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "active path at depth 2 (item 2): a reference decider, which is never active"
    );
    assert!(target.is_idle());
}

#[test]
fn the_viewer_recording_carries_the_jump_edge() {
    let info = bt_viewer::TreeInfo::of(&NEST_TREE);
    let json = serde_json::to_value(&info).unwrap();
    let go = &json["items"][2];
    assert_eq!(go["name"], "GO_GUARD");
    assert_eq!(go["kind"], "reference");
    assert_eq!(go["target"], 6);
    assert_eq!(json["items"][6]["kind"], "behavior");
    assert!(json["items"][6]["target"].is_null());
    assert!(json["items"][0]["target"].is_null());
}

/// A recorded jump is exported as a `jump` event from the reference to its
/// target, in the tick where the trace shows it.
#[test]
fn the_viewer_recording_carries_the_jump_event() {
    use bt_viewer::{Capacity, FlightRecorder, Watch};
    let mut rigs = vec![Rig::with(&["ROAD", "WALK"])];
    let mut memories = vec![NEST_TREE.new_memory(0)];
    let mut recorder = FlightRecorder::new(&NEST_TREE, 1, Watch::All, Capacity::new(8, 32));
    recorder.tick_all(&NEST_TREE, &mut rigs, &mut memories, |_, _| at(0.0));
    rigs[0] = Rig::with(&["ROAD", "WALK", "GO_GUARD", "NEST", "GUARD"]);
    recorder.tick_all(&NEST_TREE, &mut rigs, &mut memories, |_, _| at(0.5));
    assert_eq!(path(&NEST_TREE, &memories[0]), ["ROOT", "NEST", "GUARD"]);
    let json: serde_json::Value = serde_json::from_str(&recorder.export().to_json()).unwrap();
    let kinds = json["legend"]["events"].as_array().unwrap();
    let jump = kinds.iter().position(|k| k == "jump").unwrap() as u64 + 1;
    let jumps: Vec<(usize, u64, u64)> = json["agents"][0]["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .flat_map(|(t, tick)| {
            let events = tick[6].as_array().unwrap().clone();
            events
                .chunks(4)
                .filter(|e| e[0] == jump)
                .map(|e| (t, e[2].as_u64().unwrap(), e[3].as_u64().unwrap()))
                .collect::<Vec<_>>()
        })
        .collect();
    let go = NEST_TREE.find("GO_GUARD").unwrap().get() as u64;
    let guard = NEST_TREE.find("GUARD").unwrap().get() as u64;
    assert_eq!(jumps, [(1, go, guard)]);
}

// A reference with shared checks: a gate and a global cooldown.
rig_leaf! { HOLD STAY }
reference! { RUSH: Rig => [ROOT4, FORT, HOLD], when: yes!("RUSH"), gate: 1, cooldown: 10.0 }
group! { FIELD: Rig, prioritized [RUSH, STAY] }
group! { FORT: Rig, prioritized [HOLD] }
group! { ROOT4: Rig, prioritized [FIELD, FORT] }
tree! { SHARED_TREE: Rig = ROOT4 }

#[test]
fn a_reference_stamps_its_cooldown_and_holds_no_gate_slot() {
    let shared = SHARED_TREE.new_shared(0);
    let rush = SHARED_TREE.find("RUSH").unwrap();
    let mut a = SHARED_TREE.new_memory_in(&shared, 0);
    let mut b = SHARED_TREE.new_memory_in(&shared, 1);
    let mut rig = Rig::with(&["RUSH", "STAY", "HOLD"]);
    tick(&SHARED_TREE, &mut rig, &mut a, &at(0.0).with_agent(0)).unwrap();
    assert_eq!(path(&SHARED_TREE, &a), ["ROOT4", "FORT", "HOLD"]);
    // The gate slot was given back at once: the reference holds nothing.
    assert_eq!(shared.gate_count(rush), Some(0));
    // The cooldown was stamped: within it, another agent does not jump.
    let (report, text) = {
        let mut trace = TraceRecorder::new();
        let input = at(1.0).with_agent(1);
        let r = tick_traced(&SHARED_TREE, &mut rig, &mut b, &input, &mut trace);
        (r, trace.text().to_string())
    };
    report.unwrap();
    assert_eq!(path(&SHARED_TREE, &b), ["ROOT4", "FIELD", "STAY"]);
    assert!(text.contains("reject 2:RUSH (global cooldown)"), "{text}");
}

// A jump into the middle of a sequence.
rig_leaf! { S1 S2 S3 }
reference! { HOP2: Rig => [ROOT5, SEQ, S2], when: yes!("HOP2") }
group! { SEQ: Rig, sequential [S1, S2, S3] }
group! { ROOT5: Rig, prioritized [HOP2, SEQ] }
tree! { SEQ_TREE: Rig = ROOT5 }

#[test]
fn a_sequence_entered_at_a_later_step_goes_on_from_there() {
    let mut rig = Rig::with(&["HOP2", "S1", "S2", "S3"]);
    let mut memory = SEQ_TREE.new_memory(0);
    tick(&SEQ_TREE, &mut rig, &mut memory, &at(0.0)).unwrap();
    assert_eq!(path(&SEQ_TREE, &memory), ["ROOT5", "SEQ", "S2"]);
    rig.yes.remove("HOP2");
    rig.ends.insert("S2");
    tick(&SEQ_TREE, &mut rig, &mut memory, &at(1.0)).unwrap();
    assert_eq!(path(&SEQ_TREE, &memory), ["ROOT5", "SEQ", "S3"]);
}

// A restart of a gated group by the one agent inside: GATED_AGAIN jumps to
// GATED_LOOP, whose gate lets one agent in at a time.
rig_leaf! { G_STEP1 G_STEP2 G_IDLE }
reference! { GATED_AGAIN: Rig => [GATED_ROOT, GATED_LOOP], when: yes!("GATED_AGAIN") }
group! { GATED_LOOP: Rig, sequential [G_STEP1, G_STEP2, GATED_AGAIN], gate: 1 }
group! { GATED_ROOT: Rig, prioritized [GATED_LOOP, G_IDLE] }
tree! { GATED_TREE: Rig = GATED_ROOT }

/// An agent's own gate slot does not count against it: a reference that
/// restarts the gated group the agent is in passes the gate (the agent
/// leaves it before it enters again), while another agent stays out.
#[test]
fn a_restart_of_a_gated_group_passes_its_own_gate_slot() {
    let shared = GATED_TREE.new_shared(0);
    let group = GATED_TREE.find("GATED_LOOP").unwrap();
    let mut a = GATED_TREE.new_memory_in(&shared, 0);
    let mut b = GATED_TREE.new_memory_in(&shared, 1);
    let mut rig = Rig::with(&["G_STEP1", "G_STEP2", "GATED_AGAIN", "G_IDLE"]);
    tick(&GATED_TREE, &mut rig, &mut a, &at(0.0).with_agent(0)).unwrap();
    tick(&GATED_TREE, &mut rig, &mut b, &at(0.0).with_agent(1)).unwrap();
    assert_eq!(
        path(&GATED_TREE, &a),
        ["GATED_ROOT", "GATED_LOOP", "G_STEP1"]
    );
    assert_eq!(
        path(&GATED_TREE, &b),
        ["GATED_ROOT", "G_IDLE"],
        "the gate is full"
    );
    rig.ends = ["G_STEP1"].into();
    tick(&GATED_TREE, &mut rig, &mut a, &at(1.0).with_agent(0)).unwrap();
    assert_eq!(
        path(&GATED_TREE, &a),
        ["GATED_ROOT", "GATED_LOOP", "G_STEP2"]
    );
    // Step two ends, and the sequence restarts.
    rig.ends = ["G_STEP2"].into();
    let (report, text) = {
        let mut trace = TraceRecorder::new();
        let r = tick_traced(
            &GATED_TREE,
            &mut rig,
            &mut a,
            &at(2.0).with_agent(0),
            &mut trace,
        );
        (r, trace.text().to_string())
    };
    let report = report.unwrap();
    assert!(
        text.contains("jump 4:GATED_AGAIN to 1:GATED_LOOP"),
        "{text}"
    );
    assert!(!text.contains("(gate full)"), "{text}");
    assert_eq!(
        path(&GATED_TREE, &a),
        ["GATED_ROOT", "GATED_LOOP", "G_STEP1"]
    );
    assert_eq!(
        report.leaf,
        GATED_TREE.find_path("GATED_ROOT/GATED_LOOP/G_STEP1")
    );
    assert_eq!(shared.gate_count(group), Some(1), "one agent inside");
    // The other agent still finds the gate full.
    let mut trace = TraceRecorder::new();
    tick_traced(
        &GATED_TREE,
        &mut rig,
        &mut b,
        &at(2.0).with_agent(1),
        &mut trace,
    )
    .unwrap();
    assert!(
        trace.text().contains("reject 1:GATED_LOOP (gate full)"),
        "{}",
        trace.text()
    );
    assert_eq!(path(&GATED_TREE, &b), ["GATED_ROOT", "G_IDLE"]);
}

// NEST_TREE with a budget of one redecide.
tree! { TIGHT_NEST: Rig = ROOT, redecide_limit: 1 }

/// A refused jump is one redecide of the budget, as the report counts it:
/// the failure of its reference. With a budget of one, the group still
/// redecides after it.
#[test]
fn a_refused_jump_costs_the_budget_what_the_report_counts() {
    let mut rig = Rig::with(&["ROAD", "GO_GUARD", "WALK", "NEST", "REST"]);
    let mut memory = TIGHT_NEST.new_memory(0);
    let (report, text) = traced(&TIGHT_NEST, &mut rig, &mut memory, 0.0);
    let report = report.unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(report.redecides, 1);
    assert_eq!(path(&TIGHT_NEST, &memory), ["ROOT", "ROAD", "WALK"]);
}

// The same loop under a global cooldown instead of a gate.
rig_leaf! { C_STEP1 C_STEP2 C_IDLE }
reference! { COOL_AGAIN: Rig => [COOL_ROOT, COOL_LOOP], when: yes!("COOL_AGAIN") }
group! { COOL_LOOP: Rig, sequential [C_STEP1, C_STEP2, COOL_AGAIN], cooldown: 10.0 }
group! { COOL_ROOT: Rig, prioritized [COOL_LOOP, C_IDLE] }
tree! { COOL_TREE: Rig = COOL_ROOT }

/// A restart does not pass a global cooldown: stamped when the agent
/// entered, it refuses the restart until it runs out.
#[test]
fn a_restart_waits_for_the_cooldown_its_own_entry_stamped() {
    let shared = COOL_TREE.new_shared(0);
    let mut a = COOL_TREE.new_memory_in(&shared, 0);
    let mut rig = Rig::with(&["C_STEP1", "C_STEP2", "COOL_AGAIN", "C_IDLE"]);
    tick(&COOL_TREE, &mut rig, &mut a, &at(0.0)).unwrap();
    rig.ends = ["C_STEP1"].into();
    tick(&COOL_TREE, &mut rig, &mut a, &at(1.0)).unwrap();
    rig.ends = ["C_STEP2"].into();
    let (report, text) = traced(&COOL_TREE, &mut rig, &mut a, 2.0);
    report.unwrap();
    assert!(
        text.contains("reject 1:COOL_LOOP (global cooldown)"),
        "{text}"
    );
    assert_eq!(path(&COOL_TREE, &a), ["COOL_ROOT", "C_IDLE"]);
}
