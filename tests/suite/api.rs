//! The smaller parts of the public API: yes/no decides, the compact leaf
//! form, lookups by path, the deciding place in callbacks, and an idle
//! agent that stays idle.

use std::cell::RefCell;

use bt_core::{
    Decide, Event, ItemIdx, TickInput, TraceRecorder, Tracer, behavior, decider, group, tick,
    tick_traced, tree,
};

fn at(now: f64) -> TickInput {
    TickInput::new(now, 1.0)
}

/// Every event of a tick.
#[derive(Default)]
struct Events(Vec<Event>);

impl Tracer for Events {
    fn event(&mut self, event: &Event) {
        self.0.push(*event);
    }
}

// ---------------------------------------------------------------------------
// `when:`: the yes/no form of `decide`.

#[derive(Default)]
struct Cat {
    hungry: bool,
    sleepy: bool,
    /// What `activate` of NAP_B received from its decider.
    nap_spot: Option<u8>,
}

behavior! { EAT_B: Cat }
behavior! { NAP_B: Cat, dblock: u8, activate: |c, spot, _cx| { c.nap_spot = spot; true } }
behavior! { ROAM_B: Cat }

fn is_hungry(c: &Cat, _: &mut Decide) -> bool {
    c.hungry
}

decider! { CAT_EAT: Cat => EAT_B, when: is_hungry }
// A `when` may fill the DBlock, like any `decide`.
decider! { CAT_NAP: Cat => NAP_B, when: |c, d| { d.set(7); c.sleepy } }
decider! { CAT_ROAM: Cat => ROAM_B }
group! { CAT_AWAKE: Cat, prioritized [CAT_EAT, CAT_ROAM], when: |c, _| !c.sleepy }
group! { CAT_ROOT: Cat, prioritized [CAT_NAP, CAT_AWAKE] }
tree! { CAT: Cat = CAT_ROOT, memory: CatMemory }

#[track_caller]
fn leaf_of(cat: &mut Cat, memory: &mut CatMemory, now: f64) -> &'static str {
    tick(&CAT, cat, memory, &at(now)).unwrap();
    CAT.node(memory.leaf().expect("a leaf runs")).name()
}

#[test]
fn when_accepts_on_true_and_rejects_on_false() {
    let mut cat = Cat::default();
    let mut memory = CAT.new_memory(0);
    assert_eq!(leaf_of(&mut cat, &mut memory, 0.0), "CAT_ROAM");
    cat.hungry = true;
    assert_eq!(leaf_of(&mut cat, &mut memory, 1.0), "CAT_EAT");
    // A group's `when` rejects: its sibling runs instead.
    cat.sleepy = true;
    assert_eq!(leaf_of(&mut cat, &mut memory, 2.0), "CAT_NAP");
    assert_eq!(cat.nap_spot, Some(7), "the DBlock that `when` set");
}

#[test]
fn when_true_decides_one_and_false_rejects_by_decide() {
    let mut cat = Cat {
        hungry: true,
        ..Cat::default()
    };
    let mut memory = CAT.new_memory(0);
    let mut events = Events::default();
    tick_traced(&CAT, &mut cat, &mut memory, &at(0.0), &mut events).unwrap();
    let eat = CAT.find("CAT_EAT").unwrap();
    let nap = CAT.find("CAT_NAP").unwrap();
    assert!(events.0.iter().any(|e| matches!(e,
        Event::Decided { node, value } if node.index == eat && *value == 1.0)));
    assert!(events.0.iter().any(|e| matches!(e,
        Event::Rejected { node, by: bt_core::Rejection::Decide } if node.index == nap)));
}

// ---------------------------------------------------------------------------
// Lookups by path, and the deciding place in `Decide` and `Ctx`.

#[derive(Default)]
struct Guard;

thread_local! {
    /// The place where FIGHT may run in the current test.
    static FIGHT_AT: RefCell<Option<ItemIdx>> = const { RefCell::new(None) };
}

fn fight_here(_: &Guard, d: &mut Decide) -> bool {
    FIGHT_AT.with(|f| *f.borrow() == Some(d.item()))
}

behavior! { SWING: Guard }
behavior! { WAIT: Guard }
decider! { FIGHT: Guard => SWING, decide: |g, d| {
    let yes = fight_here(g, d);
    // `decide` sees the agent immutably: record through a cell.
    ASKED.with(|a| a.borrow_mut().push((d.item(), yes)));
    if yes { 1.0 } else { 0.0 }
} }
decider! { STAND: Guard => WAIT }
group! { ROAD: Guard, prioritized [FIGHT, STAND] }
group! { NEST: Guard, prioritized [FIGHT, STAND] }
group! { POST: Guard, prioritized [ROAD, NEST] }
tree! { GUARD: Guard = POST }

thread_local! {
    static ASKED: RefCell<Vec<(ItemIdx, bool)>> = const { RefCell::new(Vec::new()) };
}

#[test]
fn find_path_tells_apart_the_places_of_a_shared_decider() {
    let road = GUARD.find_path("POST/ROAD/FIGHT").unwrap();
    let nest = GUARD.find_path("POST/NEST/FIGHT").unwrap();
    assert_ne!(road, nest);
    assert_eq!(
        GUARD.find("FIGHT"),
        Some(road),
        "`find` gives the first place"
    );
    assert_eq!(GUARD.node(nest).parent().unwrap().name(), "NEST");
    assert_eq!(GUARD.find_path("POST"), Some(ItemIdx::ROOT));
    assert_eq!(GUARD.find_path("POST/NEST"), GUARD.find("NEST"));
    for missing in [
        "",
        "ROAD",
        "POST/FIGHT",
        "POST/ROAD/FIGHT/X",
        "POST/ROAD/",
        "POST//ROAD",
    ] {
        assert_eq!(GUARD.find_path(missing), None, "{missing:?}");
    }
}

#[test]
fn decide_names_the_deciding_place() {
    let road = GUARD.find_path("POST/ROAD/FIGHT").unwrap();
    let nest = GUARD.find_path("POST/NEST/FIGHT").unwrap();
    FIGHT_AT.with(|f| *f.borrow_mut() = Some(nest));
    ASKED.with(|a| a.borrow_mut().clear());
    let mut memory = GUARD.new_memory(0);
    tick(&GUARD, &mut Guard, &mut memory, &at(0.0)).unwrap();
    // FIGHT is asked under ROAD first, says no there, and ROAD/STAND runs.
    let stand = GUARD.find_path("POST/ROAD/STAND").unwrap();
    assert_eq!(ASKED.with(|a| a.borrow().clone()), [(road, false)]);
    assert_eq!(memory.leaf(), Some(stand));

    // Now it may fight on the road: the place under ROAD accepts and
    // preempts STAND.
    FIGHT_AT.with(|f| *f.borrow_mut() = Some(road));
    tick(&GUARD, &mut Guard, &mut memory, &at(1.0)).unwrap();
    assert_eq!(memory.leaf(), Some(road));
    let asked = ASKED.with(|a| a.borrow().clone());
    assert_eq!(asked.last(), Some(&(road, true)));
}

// ---------------------------------------------------------------------------
// An idle agent that stays idle.

pub(crate) struct Idle {
    pub(crate) wants: bool,
}

behavior! { WORK: Idle }
decider! { MAYBE_WORK: Idle => WORK, when: |a, _| a.wants }
decider! { MAYBE_REST: Idle => WORK, when: |a, _| a.wants }
group! { IDLE_ROOT: Idle, prioritized [MAYBE_WORK, MAYBE_REST] }
tree! { pub(crate) IDLE: Idle = IDLE_ROOT }
// The same, with a root whose own `decide` accepts: a real Subset Rule
// violation.
group! { CLAIMING_ROOT: Idle, prioritized [MAYBE_WORK, MAYBE_REST], when: |_, _| true }
tree! { pub(crate) CLAIMING: Idle = CLAIMING_ROOT }

#[test]
fn an_idle_agent_whose_root_has_no_accepting_child_stays_idle_without_a_change() {
    let mut agent = Idle { wants: false };
    let mut memory = IDLE.new_memory(0);
    for t in 0..3 {
        let report = tick(&IDLE, &mut agent, &mut memory, &at(f64::from(t))).unwrap();
        assert_eq!(report.subset_violation, None, "tick {t}");
        assert_eq!((report.activated, report.deactivated), (0, 0), "tick {t}");
        assert!(!report.changed(), "tick {t}");
        assert_eq!(report.leaf, None);
        assert!(memory.is_idle());
    }
    // Once a child accepts, the root and the child are activated as usual.
    agent.wants = true;
    let report = tick(&IDLE, &mut agent, &mut memory, &at(3.0)).unwrap();
    assert_eq!((report.activated, report.deactivated), (2, 0));
    assert!(report.changed());
}

#[test]
fn a_root_whose_decide_accepts_without_a_runnable_child_breaks_the_subset_rule() {
    let mut agent = Idle { wants: false };
    let mut memory = CLAIMING.new_memory(0);
    let report = tick(&CLAIMING, &mut agent, &mut memory, &at(0.0)).unwrap();
    assert_eq!(report.subset_violation, Some(ItemIdx::ROOT));
    assert!(!report.changed(), "the agent stays idle all the same");
    assert!(memory.is_idle());
}

#[test]
fn staying_idle_is_traced_as_the_root_entered_and_left() {
    let mut agent = Idle { wants: false };
    let mut memory = IDLE.new_memory(0);
    let mut trace = TraceRecorder::new();
    tick_traced(&IDLE, &mut agent, &mut memory, &at(0.0), &mut trace).unwrap();
    snapshot!(trace.text(), @r"
    tick agent=0 t=0.000 dt=1.000 decision=0x0 stimuli=0x0
      activate 0:IDLE_ROOT
        decline 1:MAYBE_WORK = 0.000
        reject 1:MAYBE_WORK (decide)
        decline 2:MAYBE_REST = 0.000
        reject 2:MAYBE_REST (decide)
      deactivate 0:IDLE_ROOT (no child can run)
      idle
    end idle visited=3
    ");
}

// ---------------------------------------------------------------------------
// The state dump.

#[test]
fn groups_without_a_behavior_show_spores_placeholder_in_the_dump() {
    let mut cat = Cat::default();
    let mut memory = CAT.new_memory(0);
    tick(&CAT, &mut cat, &mut memory, &at(0.0)).unwrap();
    let text = memory.dump(1.0, bt_core::DumpView::WholeTree).to_string();
    let groups: Vec<&str> = text.lines().filter(|l| l.contains("(group ")).collect();
    assert_eq!(groups.len(), 2, "{text}");
    for line in &groups {
        assert!(line.contains(" [(no group behavior)]"), "{line}");
    }
    // The active groups' lines have the same fields, in the same columns.
    let active: Vec<Vec<&str>> = groups
        .iter()
        .filter(|l| l.trim_start().starts_with('*'))
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert_eq!(active.len(), 2, "{text}");
    assert_eq!(active[0].len(), active[1].len(), "{text}");
}

// ---------------------------------------------------------------------------
// The compact leaf form.

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy)]
    struct Sky: u8 {
        const DARK = 1 << 0;
    }
}

#[derive(Default)]
struct Mole {
    food: u32,
    log: Vec<String>,
}

// Every behavior key and several decider keys in one declaration.
bt_core::leaf! {
    /// Digs for as many ticks as its decider says.
    DIG: Mole,
    memory: u32,
    dblock: u32,
    when: |m, d| { d.set(2); m.food == 0 },
    activate: |_, left, depth, _cx| { *left = depth.unwrap_or(0); true },
    tick: |m, left, _cx| { *left -= 1; m.log.push(format!("dig {left}")); *left > 0 },
    deactivate: |m, _, _cx| m.food += 1,
}
bt_core::leaf! { SLEEP: Mole, needs_all: Sky::DARK, tick: |m, _cx| { m.log.push("sleep".into()); true } }
bt_core::leaf! { NIBBLE: Mole, every: 10.0, tick: |m, _cx| { m.food -= 1; m.log.push("nibble".into()); false } }
bt_core::leaf! { REST: Mole }
group! { MOLE_ROOT: Mole, prioritized [SLEEP, DIG, NIBBLE, REST] }
tree! { MOLE: Mole = MOLE_ROOT }

#[test]
fn a_compact_leaf_declares_a_decider_and_its_behavior_under_one_name() {
    for name in ["DIG", "SLEEP", "NIBBLE", "REST"] {
        let node = MOLE.node(MOLE.find(name).unwrap());
        assert!(!node.is_group());
        assert_eq!(node.behavior().unwrap().name(), name);
    }
    let dig = MOLE.node(MOLE.find("DIG").unwrap());
    assert_eq!(dig.behavior().unwrap().memory_type(), "u32");
    assert_eq!(dig.behavior().unwrap().dblock_type(), "u32");
    assert_eq!(dig.behavior().unwrap().callbacks(), (true, true, true));
    assert!(dig.decider().has_decide());
    let nibble = MOLE.node(MOLE.find("NIBBLE").unwrap());
    assert_eq!(nibble.decider().preconditions().every, 10.0);
    assert!(nibble.timer_slot().is_some());
}

#[test]
fn compact_leaves_run_like_declared_ones() {
    let mut mole = Mole::default();
    let mut memory = MOLE.new_memory(0);
    let day = |t: f64| TickInput::new(t, 1.0);
    for t in 0..5 {
        tick(&MOLE, &mut mole, &mut memory, &day(f64::from(t))).unwrap();
    }
    let dark = TickInput::new(5.0, 1.0).with_decision(Sky::DARK);
    tick(&MOLE, &mut mole, &mut memory, &dark).unwrap();
    // DIG gets 2 from its `when` through the DBlock, digs twice, and its
    // `deactivate` finds food; NIBBLE eats it once (then waits for its
    // timer) and REST runs; the dark preempts with SLEEP.
    assert_eq!(
        mole.log,
        ["dig 1", "dig 0", "nibble", "dig 1", "dig 0", "sleep"]
    );
    assert_eq!(memory.leaf(), MOLE.find("SLEEP"));
}

// ---------------------------------------------------------------------------
// Trees that need shared state.

#[derive(Default)]
struct Soldier;

behavior! { THROW: Soldier }
decider! { THROW_GRENADE: Soldier => THROW, gate: 1 }
tree! { SQUAD: Soldier = THROW_GRENADE }

#[test]
fn a_tree_with_shared_checks_is_declared_as_a_crowd_tree() {
    let crowd = std::any::type_name_of_val(&SQUAD);
    let plain = std::any::type_name_of_val(&CAT);
    assert!(crowd.starts_with("bt_core::tree::CrowdTree<"), "{crowd}");
    assert!(plain.starts_with("bt_core::tree::Tree<"), "{plain}");
    assert!(SQUAD.needs_shared() && !CAT.needs_shared());
    // It is a tree for everything else: ticks, lookups, crowds.
    let shared = SQUAD.new_shared(4);
    let mut memories = [
        SQUAD.new_memory_in(&shared, 0),
        SQUAD.new_memory_in(&shared, 1),
    ];
    let mut soldiers = [Soldier, Soldier];
    let report = bt_core::tick_all(&SQUAD, &mut soldiers, &mut memories, |i, _| {
        at(0.0).with_agent(i as u32)
    });
    assert_eq!(report.first_error, None);
    let leaves = memories.each_ref().map(|m| m.leaf());
    assert_eq!(
        leaves,
        [SQUAD.find("THROW_GRENADE"), None],
        "the gate lets one in"
    );
    assert!(std::ptr::eq(memories[0].tree(), SQUAD.tree()));
}
