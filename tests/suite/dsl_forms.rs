//! Every form of the declaration DSL, read back through the public API.

use bt_core::{
    Action, ActionOp, ActionState, Ctx, Decide, DeciderFlags, FlagTest, Has, Policy, SyncChecks,
    TickInput, behavior, decider, group, tick, tree,
};

bt_core::bitflags::bitflags! {
    /// Per-tick facts from the caller.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Decision: u16 {
        const DAY = 1 << 0;
        const HAS_NEST = 1 << 1;
        const RAINING = 1 << 2;
    }

    /// Stimuli, wider than the decision word.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Sense: u64 {
        const NOISE = 1 << 0;
        const SMELL = 1 << 40;
    }

    /// What a behavior is told by its decider.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Style: u8 {
        const QUIET = 1 << 0;
        const FAST = 1 << 1;
    }
}

#[derive(Default)]
pub struct Agent {
    pub seen: Vec<String>,
    pub target: Option<u32>,
    pub choice: Option<usize>,
}

#[derive(Default)]
pub struct Steps(u32);

fn count_step(a: &mut Agent, m: &mut Steps, cx: &Ctx) -> bool {
    m.0 += 1;
    a.seen
        .push(format!("step {} flags {:?}", m.0, cx.flags_as::<Style>()));
    true
}

fn wants(_: &Agent, d: &mut Decide) -> f32 {
    if d.decision() & Decision::RAINING.bits() as u64 == 0 {
        1.0
    } else {
        0.0
    }
}

// Behaviors: no callbacks, each callback alone, memory, DBlock, both.
behavior! { NOTHING: Agent }
behavior! { ONLY_ACTIVATE: Agent, activate: |a, _cx| { a.seen.push("activate".into()); true } }
behavior! { ONLY_TICK: Agent, tick: |_a, _cx| true }
behavior! { ONLY_DEACTIVATE: Agent, deactivate: |a, _cx| a.seen.push("deactivate".into()) }
behavior! {
    /// Doc comments and attributes pass through.
    pub(crate) WALK: Agent,
    tick: count_step,
    memory: Steps,
}
behavior! { HUNT: Agent,
    dblock: u32,
    activate: |a, target, _cx| { a.target = target; true },
}
behavior! { STALK: Agent,
    memory: Steps,
    dblock: u32,
    activate: |a, m, target, _cx| { m.0 = target.unwrap_or(0); a.target = target; true },
    tick: |_a, m, _cx| { m.0 += 1; true },
    deactivate: |a, m, _cx| a.seen.push(format!("stalked {}", m.0)),
}
// `memory:` may come after the callbacks that take the block.
behavior! { TRAIL: Agent,
    tick: |_a, m: &mut Steps, _cx| { m.0 += 1; true },
    deactivate: |a, m, _cx| a.seen.push(format!("trailed {}", m.0)),
    memory: Steps,
}

// Behavior deciders: bare, with every key, and the full form.
decider! { IDLE: Agent => NOTHING }
decider! { pub WALKING: Agent => WALK,
    decide: wants,
    needs_all: Decision::DAY | Decision::HAS_NEST,
    needs_any: Decision::DAY,
    needs_none: Decision::RAINING,
    needs_not_all: Decision::DAY | Decision::RAINING,
    stimuli_all: Sense::SMELL,
    stimuli_any: Sense::NOISE | Sense::SMELL,
    stimuli_none: Sense::NOISE,
    stimuli_not_all: Sense::NOISE | Sense::SMELL,
    every: 0.5,
    behavior_flags: Style::QUIET | Style::FAST,
}
decider! { HUNTING: Agent => HUNT, decide: |_a, d| { d.set(42); 2.5 } }
decider! { STALKING: Agent => STALK, decide: |_a, d: &mut Decide<u32>| { d.set(7); 1.0 } }
decider! { full FULL_LEAF: Agent => ONLY_TICK,
    name: "full-leaf",
    id: 0xF00D,
    decide: |_, _| 1.0,
    needs_any: Decision::DAY,
    behavior_flags: Style::QUIET,
}
decider! { A1: Agent => ONLY_ACTIVATE }
decider! { A2: Agent => ONLY_DEACTIVATE }
// The yes/no `when:` on a leaf and on a group.
decider! { DRY: Agent => NOTHING, when: |_, d| d.decision() & Decision::RAINING.bits() as u64 == 0 }
group! { WHEN_GROUP: Agent, sequential [DRY, IDLE], when: |a, _| a.target.is_none() }

// Compact leaves: bare, and with behavior and decider keys together.
bt_core::leaf! { BARE_LEAF: Agent }
bt_core::leaf! {
    /// Doc comments pass through.
    pub(crate) FULL_COMPACT: Agent,
    memory: Steps,
    dblock: u32,
    activate: |_a, m, n, _cx| { m.0 = n.unwrap_or(0); true },
    tick: count_step,
    deactivate: |a, m, _cx| a.seen.push(format!("compact {}", m.0)),
    when: |_, d| { d.set(3); true },
    needs_all: Decision::DAY,
    stimuli_none: Sense::NOISE,
    every: 0.25,
    behavior_flags: Style::FAST,
}

// Group deciders: every policy, a group behavior, decide and flags, full.
group! { PRIO: Agent, prioritized [A1, A2] }
group! { SEQ: Agent, sequential [A1, A2,] }
group! { RAND: Agent, random [A1, A2] }
group! { SHUF: Agent, shuffle [A1, A2] }
group! { SCORE: Agent, scored [A1, A2], behavior: WALK, decide: |_, _| 0.5 }
group! { DELEGATE: Agent, prioritized [HUNTING, IDLE], flags: DELEGATE_DECIDE }
group! { full FULL_GROUP: Agent, prioritized [STALKING, IDLE],
    name: "full-group",
    id: 0xBEEF,
    behavior: ONLY_TICK,
    decide: |_, _| 1.0,
    needs_none: Decision::RAINING,
    stimuli_any: Sense::NOISE,
    every: 1.0,
    flags: CALL_DECIDE_ON_REDECIDE,
    behavior_flags: Style::FAST,
}
group! { ALL: Agent, prioritized [PRIO, SEQ, RAND, SHUF, SCORE, DELEGATE, FULL_GROUP, FULL_LEAF, WHEN_GROUP, FULL_COMPACT, BARE_LEAF, WALKING, HUNTING, IDLE] }

// Shared checks, a slot group and deferred actions.
behavior! { FETCH: Agent, launch: |_a, _cx| Some(Action::new(1, 2)) }
behavior! { FETCH_COUNTED: Agent, memory: Steps,
    launch: |_a, m, _cx| { m.0 += 1; Some(Action::new(3, u64::from(m.0))) },
    tick: |_a, _m, cx| cx.action == ActionState::Pending,
}
decider! { GATED: Agent => FETCH, gate: 3 }
decider! { COOLED: Agent => FETCH_COUNTED, cooldown: 2.5 }
decider! { PAIRED: Agent => NOTHING, together: 2 }
group! { SLOTTED: Agent, slot [GATED, COOLED], select: |a| a.choice }
decider! { full FULL_SYNCED: Agent => NOTHING,
    name: "full-synced",
    id: 5,
    gate: 1,
    cooldown: 1.0,
    together: 4,
}
group! { SYNCED: Agent, prioritized [SLOTTED, PAIRED, FULL_SYNCED] }
tree! { SYNCED_TREE: Agent = SYNCED }

// Trees: bare, and with every key.
tree! { BARE: Agent = IDLE }
tree! {
    /// Every tree key.
    pub(crate) EVERYTHING: Agent = ALL,
    block: 64,
    max_depth: 3,
    redecide_limit: 5,
    memory: EverythingMemory,
}

#[test]
fn every_dsl_form_declares_what_it_says() {
    // Behaviors.
    assert_eq!(NOTHING.name(), "NOTHING");
    assert_eq!(NOTHING.__erased().callbacks(), (false, false, false));
    assert_eq!(ONLY_ACTIVATE.__erased().callbacks(), (true, false, false));
    assert_eq!(ONLY_TICK.__erased().callbacks(), (false, true, false));
    assert_eq!(ONLY_DEACTIVATE.__erased().callbacks(), (false, false, true));
    let walk = WALK.__erased();
    assert_eq!(walk.memory_type(), "Steps");
    assert_eq!(walk.memory_layout().size, 4);
    assert_eq!(HUNT.__erased().dblock_type(), "u32");
    assert_eq!(STALK.__erased().callbacks(), (true, true, true));
    assert_eq!(TRAIL.__erased().callbacks(), (false, true, true));
    assert_eq!(TRAIL.__erased().memory_type(), "Steps");
    assert_ne!(WALK.id(), HUNT.id());

    // Behavior deciders.
    assert!(!WALKING.is_group());
    assert_eq!(WALKING.behavior().unwrap().name(), "WALK");
    assert!(WALKING.has_decide() && !IDLE.has_decide());
    let pre = WALKING.preconditions();
    assert_eq!(
        pre.decision,
        FlagTest {
            all: 0b011,
            any: 0b001,
            none: 0b100,
            not_all: 0b101
        }
    );
    assert_eq!(
        pre.stimuli,
        FlagTest {
            all: 1 << 40,
            any: 1 | 1 << 40,
            none: 1,
            not_all: 1 | 1 << 40
        }
    );
    assert_eq!(pre.every, 0.5);
    assert_eq!(WALKING.behavior_flags(), 0b11);
    assert_eq!(FULL_LEAF.name(), "full-leaf");
    assert_eq!(FULL_LEAF.id(), 0xF00D);
    assert_eq!(FULL_LEAF.behavior_flags(), Style::QUIET.bits() as u64);
    assert_eq!(IDLE.name(), "IDLE");
    assert!(DRY.has_decide() && WHEN_GROUP.has_decide());

    // Compact leaves: a behavior decider whose behavior has its name.
    assert!(!BARE_LEAF.is_group() && !BARE_LEAF.has_decide());
    assert_eq!(BARE_LEAF.behavior().unwrap().name(), "BARE_LEAF");
    let compact = FULL_COMPACT.behavior().unwrap();
    assert_eq!(compact.name(), "FULL_COMPACT");
    assert_eq!(
        (compact.memory_type(), compact.dblock_type()),
        ("Steps", "u32")
    );
    assert_eq!(compact.callbacks(), (true, true, true));
    assert!(FULL_COMPACT.has_decide());
    assert_eq!(FULL_COMPACT.preconditions().decision.all, 0b001);
    assert_eq!(FULL_COMPACT.preconditions().stimuli.none, 1);
    assert_eq!(FULL_COMPACT.preconditions().every, 0.25);
    assert_eq!(FULL_COMPACT.behavior_flags(), Style::FAST.bits() as u64);

    // Groups.
    let policies: Vec<_> = [&PRIO, &SEQ, &RAND, &SHUF, &SCORE]
        .iter()
        .map(|g| g.policy())
        .collect();
    assert_eq!(
        policies,
        [
            Policy::Prioritized,
            Policy::Sequential,
            Policy::Random,
            Policy::Shuffle,
            Policy::Scored
        ]
        .map(Some)
    );
    assert_eq!(SEQ.children().len(), 2);
    assert_eq!(SCORE.behavior().unwrap().name(), "WALK");
    assert_eq!(DELEGATE.flags(), DeciderFlags::DELEGATE_DECIDE);
    assert_eq!(FULL_GROUP.name(), "full-group");
    assert_eq!(FULL_GROUP.id(), 0xBEEF);
    assert_eq!(FULL_GROUP.flags(), DeciderFlags::CALL_DECIDE_ON_REDECIDE);
    assert_eq!(FULL_GROUP.preconditions().every, 1.0);

    // Trees.
    // Without `block:`, blocks fit the largest memory type: none here.
    assert_eq!(
        (BARE.len(), BARE.levels(), BARE.slots(), BARE.block_size()),
        (1, 1, 0, 0)
    );
    assert_eq!(EVERYTHING.levels(), 3);
    assert_eq!(EVERYTHING.block_size(), 64);
    assert_eq!(EVERYTHING.redecide_limit(), 5);
    // One timer slot per place a timed decider is used, then the shuffle group.
    let timers = EVERYTHING
        .nodes()
        .filter(|n| n.has().contains(Has::TIMER))
        .count();
    assert_eq!(EVERYTHING.timers(), timers);
    assert_eq!(EVERYTHING.slots(), timers + 1, "one shuffle group");
    assert_eq!(EVERYTHING.validate(), Ok(()));
    let memory: EverythingMemory = EVERYTHING.new_memory(3);
    assert!(memory.is_idle());
    assert_eq!(
        EverythingMemory::byte_size(),
        core::mem::size_of::<EverythingMemory>()
    );
}

#[test]
fn shared_checks_slots_and_deferred_actions_declare_what_they_say() {
    assert_eq!(GATED.preconditions().sync.gate, 3);
    assert_eq!(COOLED.preconditions().sync.cooldown, 2.5);
    assert_eq!(PAIRED.preconditions().sync.together, 2);
    assert_eq!(
        FULL_SYNCED.preconditions().sync,
        SyncChecks {
            gate: 1,
            cooldown: 1.0,
            together: 4
        }
    );
    assert_eq!(FULL_SYNCED.name(), "full-synced");
    assert_eq!(SLOTTED.policy(), Some(Policy::Slot));
    assert!(FETCH.__erased().is_deferred() && !NOTHING.__erased().is_deferred());
    assert_eq!(FETCH.__erased().callbacks(), (false, false, false));
    let s = SYNCED_TREE.shape();
    assert_eq!((s.gates, s.cooldowns, s.roles, s.actions), (2, 2, 2, 2));
    assert_eq!(
        SYNCED_TREE.slots(),
        5,
        "a slot per role and per action, and the crowd slot"
    );
    assert!(SYNCED_TREE.needs_shared());
    let mut dot = String::new();
    bt_core::to_dot(&mut dot, &SYNCED_TREE, None).unwrap();
    assert!(
        dot.contains("\\ngate 1, cooldown 1s, together 4\""),
        "{dot}"
    );
    assert!(dot.contains("SLOTTED\\nslot"), "{dot}");
    assert_eq!(SYNCED_TREE.validate(), Ok(()));

    // The slot group runs what `select` names; its behavior launches.
    let shared = SYNCED_TREE.new_shared(4);
    let mut memory = SYNCED_TREE.new_memory_in(&shared, 0);
    let mut agent = Agent {
        choice: Some(1),
        ..Agent::default()
    };
    let input = TickInput::new(0.0, 0.1);
    tick(&SYNCED_TREE, &mut agent, &mut memory, &input).unwrap();
    assert_eq!(memory.leaf(), SYNCED_TREE.find("COOLED"));
    let mut sent = Vec::new();
    shared.drain_actions(|r| sent.push(r.op));
    assert_eq!(sent, [ActionOp::Launch(Action::new(3, 1))]);
}

#[test]
fn decide_hands_its_dblock_to_activate() {
    group! { HUNT_ROOT: Agent, prioritized [HUNTING, IDLE] }
    tree! { HUNT_TREE: Agent = HUNT_ROOT }
    let mut agent = Agent::default();
    let mut memory = HUNT_TREE.new_memory(0);
    tick(
        &HUNT_TREE,
        &mut agent,
        &mut memory,
        &TickInput::new(0.0, 0.1),
    )
    .unwrap();
    assert_eq!(agent.target, Some(42));

    // Through a delegating group, without a second `decide` call.
    tree! { DELEGATE_TREE: Agent = DELEGATE }
    let mut agent = Agent::default();
    let mut memory = DELEGATE_TREE.new_memory(0);
    tick(
        &DELEGATE_TREE,
        &mut agent,
        &mut memory,
        &TickInput::new(0.0, 0.1),
    )
    .unwrap();
    assert_eq!(agent.target, Some(42));
    assert_eq!(memory.leaf(), DELEGATE_TREE.find("HUNTING"));
}

#[test]
fn behavior_flags_and_memory_reach_the_callbacks() {
    group! { WALK_ROOT: Agent, prioritized [WALKING] }
    tree! { WALK_TREE: Agent = WALK_ROOT }
    let mut agent = Agent::default();
    let mut memory = WALK_TREE.new_memory(0);
    let input = TickInput::new(0.0, 0.1)
        .with_decision(Decision::DAY | Decision::HAS_NEST)
        .with_stimuli(Sense::SMELL);
    tick(&WALK_TREE, &mut agent, &mut memory, &input).unwrap();
    tick(&WALK_TREE, &mut agent, &mut memory, &input).unwrap();
    assert_eq!(
        agent.seen,
        [
            "step 1 flags Style(QUIET | FAST)",
            "step 2 flags Style(QUIET | FAST)"
        ]
    );
}
