//! Synchronized trees: gates, global cooldowns, group roles, slot groups
//! and deferred actions, all through a `TreeShared`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use bt_core::{
    Action, ActionOp, ActionRequest, ActionState, AgentMemory, Outcome, TickError, TickInput,
    Ticket, TraceRecorder, Tree, TreeShared, behavior, deactivate_all, decider, group, tick,
    tick_traced, tree,
};

bitflags::bitflags! {
    /// What a grunt wants this tick: its decision flags.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Want: u8 {
        const ALARM = 1 << 0;
        const SQUAD = 1 << 1;
        const FLANK = 1 << 2;
        const FETCH = 1 << 3;
        const BARK = 1 << 4;
    }
}

/// The test agent. Its behaviors keep no memory, so its trees' blocks are
/// 0 bytes (the last parameter of `Tree` and `AgentMemory`).
#[derive(Default)]
pub struct Grunt {
    pub want: Want,
    /// Work behaviors end at their first tick.
    pub ends: bool,
    /// Work behaviors panic in `tick`.
    pub panics: bool,
    /// The child tree a slot group runs.
    pub context: Option<usize>,
    /// What `FETCH_CHECKED` saw of its deferred action, tick by tick.
    pub seen: Vec<ActionState>,
    pub target: u64,
    /// When this grunt barked.
    pub barks: Vec<f64>,
}

fn work_tick(g: &mut Grunt) -> bool {
    assert!(!g.panics, "work panics as scripted");
    !g.ends
}

behavior! { ALARMED: Grunt }
behavior! { WORK: Grunt, tick: |g, _cx| work_tick(g) }
behavior! { LOAF: Grunt }

// --- gates ---------------------------------------------------------------

decider! { ALARM: Grunt => ALARMED, needs_all: Want::ALARM }
decider! { WORK_A: Grunt => WORK }
decider! { WORK_B: Grunt => WORK }
group! { SQUAD: Grunt, sequential [WORK_A, WORK_B], needs_all: Want::SQUAD, gate: 2 }
decider! { IDLE: Grunt => LOAF }
group! { GATE_ROOT: Grunt, prioritized [ALARM, SQUAD, IDLE] }
tree! { T_GATE: Grunt = GATE_ROOT }
tree! { T_TIGHT: Grunt = GATE_ROOT, redecide_limit: 1 }

fn input(g: &Grunt, now: f64) -> TickInput {
    TickInput::new(now, 0.1).with_decision(g.want)
}

/// Ticks `g` at `now` with its wishes as decision flags.
fn run<const L: usize, const S: usize, const N: usize>(
    tree: &Tree<Grunt, L, S, N>,
    g: &mut Grunt,
    m: &mut AgentMemory<Grunt, L, S, N>,
    now: f64,
) -> Result<bt_core::TickReport, TickError> {
    let input = input(g, now);
    tick(tree, g, m, &input)
}

/// `n` grunts that all want `want`.
fn wanting(n: usize, want: Want) -> Vec<Grunt> {
    (0..n)
        .map(|_| Grunt {
            want,
            ..Grunt::default()
        })
        .collect()
}

/// The name of the behavior decider an agent runs.
fn leaf<A, const L: usize, const S: usize, const N: usize>(
    m: &AgentMemory<A, L, S, N>,
) -> Option<&'static str> {
    m.leaf().map(|i| m.tree().node(i).name())
}

fn squad_count(shared: &TreeShared) -> u32 {
    shared
        .gate_count(T_GATE.find("SQUAD").expect("SQUAD"))
        .expect("SQUAD has a gate")
}

#[test]
fn a_gate_admits_at_most_its_limit_and_says_why_it_refused() {
    let shared = T_GATE.new_shared(0);
    let mut grunts = wanting(4, Want::SQUAD);
    let mut memories: Vec<_> = (0..4).map(|i| T_GATE.new_memory_in(&shared, i)).collect();
    let mut trace = TraceRecorder::new();
    for (i, (g, m)) in grunts.iter_mut().zip(&mut memories).enumerate() {
        let input = input(g, 0.0).with_agent(i as u32);
        if i == 2 {
            tick_traced(&T_GATE, g, m, &input, &mut trace).unwrap();
        } else {
            tick(&T_GATE, g, m, &input).unwrap();
        }
    }
    let leaves: Vec<_> = memories.iter().map(|m| leaf(m)).collect();
    assert_eq!(
        leaves,
        [Some("WORK_A"), Some("WORK_A"), Some("IDLE"), Some("IDLE")]
    );
    assert_eq!(squad_count(&shared), 2);
    snapshot!("gate_full_trace", trace.text());

    // One leaves (preempted); the next to ask takes its place.
    grunts[0].want = Want::ALARM;
    run(&T_GATE, &mut grunts[0], &mut memories[0], 0.1).unwrap();
    run(&T_GATE, &mut grunts[3], &mut memories[3], 0.1).unwrap();
    assert_eq!(leaf(&memories[3]), Some("WORK_A"));
    assert_eq!(squad_count(&shared), 2);
    drop(memories);
    assert_eq!(shared.gates_held(), 0);
}

/// Puts one grunt in SQUAD (holding a gate slot) and hands it to `leave`,
/// which must make it give the slot back.
#[track_caller]
fn gate_is_given_back(
    what: &str,
    tree: &'static Tree<Grunt, 3, 1, 0>,
    leave: impl FnOnce(&mut Grunt, AgentMemory<Grunt, 3, 1, 0>, &Arc<TreeShared>),
) {
    let shared = tree.new_shared(0);
    let mut g = Grunt {
        want: Want::SQUAD,
        ..Grunt::default()
    };
    let mut m = tree.new_memory_in(&shared, 1);
    run(tree, &mut g, &mut m, 0.0).unwrap();
    assert_eq!(leaf(&m), Some("WORK_A"), "{what}: entered");
    assert_eq!(shared.gates_held(), 1, "{what}: holds the slot");
    leave(&mut g, m, &shared);
    assert_eq!(shared.gates_held(), 0, "{what}: slot given back");
}

#[test]
fn a_gate_slot_is_given_back_on_every_kind_of_deactivation() {
    gate_is_given_back("ended", &T_GATE, |g, mut m, _| {
        g.ends = true;
        run(&T_GATE, g, &mut m, 0.1).unwrap();
        assert_eq!(leaf(&m), Some("IDLE"));
    });
    gate_is_given_back("preempted", &T_GATE, |g, mut m, _| {
        g.want |= Want::ALARM;
        run(&T_GATE, g, &mut m, 0.1).unwrap();
        assert_eq!(leaf(&m), Some("ALARM"));
    });
    gate_is_given_back("redecide limit", &T_TIGHT, |g, mut m, _| {
        g.ends = true;
        let err = run(&T_TIGHT, g, &mut m, 0.1).unwrap_err();
        assert!(matches!(
            err,
            TickError::RedecideLimit { group: "SQUAD", .. }
        ));
        assert!(m.is_idle());
    });
    gate_is_given_back("panic", &T_GATE, |g, mut m, _| {
        g.panics = true;
        let r = catch_unwind(AssertUnwindSafe(|| run(&T_GATE, g, &mut m, 0.1)));
        assert!(r.is_err() && m.is_idle());
    });
    gate_is_given_back("deactivate_all", &T_GATE, |g, mut m, _| {
        deactivate_all(&T_GATE, g, &mut m, &input(g, 0.1)).unwrap();
    });
    gate_is_given_back("reset", &T_GATE, |_, mut m, _| m.reset());
    gate_is_given_back("dropped", &T_GATE, |_, m, _| drop(m));
    gate_is_given_back("dropped with the crowd", &T_GATE, |_, m, shared| {
        // The shared state outlives the memory it is handed around with.
        let crowd = vec![m];
        assert_eq!(Arc::strong_count(shared), 2);
        drop(crowd);
        assert_eq!(Arc::strong_count(shared), 1);
    });
}

#[test]
fn a_memory_without_shared_state_is_refused_by_name() {
    let mut g = Grunt::default();
    // `T_GATE.new_memory` does not compile; the plain tree's does.
    let mut m = T_GATE.tree().new_memory(0);
    let err = run(&T_GATE, &mut g, &mut m, 0.0).unwrap_err();
    assert_eq!(err, TickError::NotShared { tree: "T_GATE" });
    assert_eq!(
        err.to_string(),
        "tree `T_GATE` has gates, cooldowns, group roles or deferred actions; \
         make its agents' memories with `new_memory_in`"
    );
    assert!(T_GATE.needs_shared() && !T_PLAIN.needs_shared());
}

/// A tree of the same name and counts but another structure: its gate is
/// on another decider.
mod same_name {
    use super::*;
    decider! { ALARM: Grunt => ALARMED, needs_all: Want::ALARM, gate: 2 }
    group! { SQUAD: Grunt, sequential [WORK_A, WORK_B], needs_all: Want::SQUAD }
    group! { GATE_ROOT: Grunt, prioritized [ALARM, SQUAD, IDLE] }
    tree! { pub T_GATE: Grunt = GATE_ROOT }
}

#[test]
fn shared_state_of_a_tree_of_another_structure_is_refused_whatever_its_name() {
    let other = &same_name::T_GATE;
    assert_eq!(other.name(), T_GATE.name());
    // The same counts; only the structural fingerprint tells them apart.
    let counts = |shape| bt_core::Shape {
        fingerprint: 0,
        ..shape
    };
    assert_eq!(
        (other.len(), counts(other.shape())),
        (T_GATE.len(), counts(T_GATE.shape()))
    );
    assert_ne!(other.shape().fingerprint, T_GATE.shape().fingerprint);
    let shared = T_GATE.new_shared(0);
    let refused = catch_unwind(AssertUnwindSafe(|| other.new_memory_in(&shared, 0)));
    let message = panic_text(refused.unwrap_err());
    assert!(
        message.starts_with(
            "tree `T_GATE`: the shared state was made for tree `T_GATE`, of another structure"
        ),
        "{message}"
    );
    let refused = catch_unwind(AssertUnwindSafe(|| T_COOL.new_memory_in(&shared, 0)));
    assert!(panic_text(refused.unwrap_err()).contains("of another structure"));
    // A tree declared alike (here: the same root, another redecide budget)
    // has the same structure, and shares the state safely.
    assert_eq!(shared.fingerprint(), T_TIGHT.new_shared(0).fingerprint());
    let mut g = Grunt {
        want: Want::SQUAD,
        ..Grunt::default()
    };
    let mut m = T_TIGHT.new_memory_in(&shared, 0);
    run(&T_TIGHT, &mut g, &mut m, 0.0).unwrap();
    assert_eq!(squad_count(&shared), 1);
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// --- gates in parallel ---------------------------------------------------

static INSIDE: AtomicI32 = AtomicI32::new(0);
static MOST_INSIDE: AtomicI32 = AtomicI32::new(0);

behavior! { HOLD: Grunt,
    activate: |_g, _cx| {
        let n = INSIDE.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_INSIDE.fetch_max(n, Ordering::SeqCst);
        true
    },
    deactivate: |_g, _cx| { INSIDE.fetch_sub(1, Ordering::SeqCst); },
}
#[derive(Default)]
struct Steps(u8);
behavior! { CHURN: Grunt, memory: Steps, tick: |_g, m, _cx| { m.0 += 1; m.0 < 3 } }
decider! { P_WORK: Grunt => CHURN }
group! { P_SQUAD: Grunt, prioritized [P_WORK], needs_all: Want::SQUAD, gate: 3, behavior: HOLD }
group! { P_ROOT: Grunt, prioritized [P_SQUAD, IDLE] }
tree! { T_PAR: Grunt = P_ROOT }

#[test]
#[cfg_attr(miri, ignore)] // too slow
fn gates_hold_when_agents_are_ticked_on_many_threads() {
    let n = 4000;
    let shared = T_PAR.new_shared(0);
    let mut grunts: Vec<Grunt> = (0..n).map(|_| Grunt::default()).collect();
    let mut memories: Vec<_> = (0..n as u64)
        .map(|i| T_PAR.new_memory_in(&shared, i))
        .collect();
    let gate = T_PAR.find("P_SQUAD").unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for t in 0..60 {
        for g in &mut grunts {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            g.want.set(Want::SQUAD, !rng.is_multiple_of(4));
        }
        let now = f64::from(t) * 0.1;
        // Each agent ticked on its own by one of four threads, as an engine
        // that ticks entities in a parallel query does.
        let chunk = n / 4;
        std::thread::scope(|s| {
            for (gs, ms) in grunts.chunks_mut(chunk).zip(memories.chunks_mut(chunk)) {
                s.spawn(move || {
                    for (g, m) in gs.iter_mut().zip(ms) {
                        let input = TickInput::new(now, 0.1).with_decision(g.want);
                        tick(&T_PAR, g, m, &input).unwrap();
                    }
                });
            }
        });
        let inside = memories.iter().filter(|m| m.is_active(gate)).count();
        assert!(inside <= 3, "tick {t}: {inside} agents inside a gate of 3");
        assert_eq!(shared.gate_count(gate), Some(inside as u32), "tick {t}");
        assert_eq!(INSIDE.load(Ordering::SeqCst), inside as i32, "tick {t}");
    }
    assert_eq!(MOST_INSIDE.load(Ordering::SeqCst), 3, "the gate was used");
    for (g, m) in grunts.iter_mut().zip(&mut memories) {
        deactivate_all(&T_PAR, g, m, &TickInput::new(6.0, 0.1)).unwrap();
    }
    assert_eq!(shared.gates_held(), 0);
    assert_eq!(
        INSIDE.load(Ordering::SeqCst),
        0,
        "every HOLD was deactivated"
    );
}

// --- global cooldowns ----------------------------------------------------

behavior! { BARKING: Grunt,
    activate: |g, cx| { g.barks.push(cx.now); true },
    tick: |_g, _cx| false,
}
decider! { BARK: Grunt => BARKING, needs_all: Want::BARK, cooldown: 1.0 }
group! { COOL_ROOT: Grunt, prioritized [BARK, IDLE] }
tree! { T_COOL: Grunt = COOL_ROOT }
group! { PLAIN_ROOT: Grunt, prioritized [IDLE] }
tree! { T_PLAIN: Grunt = PLAIN_ROOT }

#[test]
fn a_global_cooldown_spaces_entries_across_agents_under_uneven_steps() {
    let shared = T_COOL.new_shared(0);
    let mut grunts = wanting(3, Want::BARK);
    let mut memories: Vec<_> = (0..3).map(|i| T_COOL.new_memory_in(&shared, i)).collect();
    let steps = [
        0.3, 0.45, 0.25, 0.1, 0.4, 0.35, 0.05, 0.6, 0.3, 0.2, 0.15, 0.5,
    ];
    let (mut now, mut barks) = (0.0f64, Vec::new());
    for (k, dt) in steps.iter().cycle().take(40).enumerate() {
        // A different agent goes first each tick.
        for j in 0..3 {
            let a = (k + j) % 3;
            let input = TickInput::new(now, *dt as f32).with_decision(grunts[a].want);
            let before = grunts[a].barks.len();
            tick(&T_COOL, &mut grunts[a], &mut memories[a], &input).unwrap();
            if grunts[a].barks.len() > before {
                barks.push((now, a));
            }
        }
        now += dt;
    }
    // Each bark comes at the first tick at least 1 s after the one before,
    // by the first agent ticked then; none sooner, none a tick late.
    let mut expected = Vec::new();
    let (mut t, mut last) = (0.0f64, f64::NEG_INFINITY);
    for (k, dt) in steps.iter().cycle().take(40).enumerate() {
        if t - last >= 1.0 - bt_core::TIMER_SLACK {
            expected.push((t, k % 3));
            last = t;
        }
        t += dt;
    }
    assert!(barks.len() >= 10, "{barks:?}");
    assert_eq!(barks, expected);
}

#[test]
fn crowds_with_their_own_shared_state_do_not_share_cooldowns() {
    let (a, b) = (T_COOL.new_shared(0), T_COOL.new_shared(0));
    let mut g = Grunt {
        want: Want::BARK,
        ..Grunt::default()
    };
    let (mut ma, mut mb) = (T_COOL.new_memory_in(&a, 0), T_COOL.new_memory_in(&b, 0));
    run(&T_COOL, &mut g, &mut ma, 0.0).unwrap();
    run(&T_COOL, &mut g, &mut mb, 0.0).unwrap();
    run(&T_COOL, &mut g, &mut ma, 0.5).unwrap();
    assert_eq!(g.barks, [0.0, 0.0], "one bark per crowd, then the cooldown");
}

// --- group roles ---------------------------------------------------------

behavior! { FLANKING: Grunt, tick: |g, _cx| !g.ends }
decider! { FLANK: Grunt => FLANKING, needs_all: Want::FLANK, together: 2 }
decider! { FLANK3: Grunt => FLANKING, needs_all: Want::FLANK, together: 3 }
group! { ROLE_ROOT: Grunt, prioritized [FLANK, IDLE] }
group! { ROLE3_ROOT: Grunt, prioritized [FLANK3, IDLE] }
tree! { T_ROLE: Grunt = ROLE_ROOT }
tree! { T_ROLE3: Grunt = ROLE3_ROOT }

/// A crowd ticked in index order, frame by frame.
struct Crowd<const S: usize> {
    tree: &'static Tree<Grunt, 2, S, 0>,
    shared: Arc<TreeShared>,
    grunts: Vec<Grunt>,
    memories: Vec<AgentMemory<Grunt, 2, S, 0>>,
    frame: u32,
}

impl<const S: usize> Crowd<S> {
    fn new(tree: &'static Tree<Grunt, 2, S, 0>, n: usize) -> Self {
        let shared = tree.new_shared(0);
        Crowd {
            tree,
            grunts: (0..n).map(|_| Grunt::default()).collect(),
            memories: (0..n as u64)
                .map(|i| tree.new_memory_in(&shared, i))
                .collect(),
            shared,
            frame: 0,
        }
    }

    /// One frame; `wants[i]` says whether agent `i` wants to flank.
    fn frame(&mut self, wants: &[bool]) -> Vec<&'static str> {
        let now = f64::from(self.frame) * 0.1;
        self.frame += 1;
        for (i, (g, m)) in self.grunts.iter_mut().zip(&mut self.memories).enumerate() {
            g.want.set(Want::FLANK, wants[i]);
            let input = input(g, now).with_agent(i as u32);
            tick(self.tree, g, m, &input).unwrap();
        }
        self.memories
            .iter()
            .map(|m| leaf(m).unwrap_or("-"))
            .collect()
    }
}

#[test]
fn a_pair_forms_when_the_second_agent_wants_in() {
    let mut c = Crowd::new(&T_ROLE, 2);
    assert_eq!(c.frame(&[true, false]), ["IDLE", "IDLE"], "0 waits alone");
    assert_eq!(c.shared.roles_held(), 1);
    assert_eq!(c.frame(&[true, false]), ["IDLE", "IDLE"], "still alone");
    // 1 completes the pair and enters at once; 0, ticked before it in this
    // frame, enters in its next tick.
    assert_eq!(c.frame(&[true, true]), ["IDLE", "FLANK"]);
    assert_eq!(c.frame(&[true, true]), ["FLANK", "FLANK"]);
    assert_eq!(c.shared.roles_held(), 2);
    // Both end; the role is free again.
    c.grunts.iter_mut().for_each(|g| g.ends = true);
    assert_eq!(c.frame(&[false, false]), ["IDLE", "IDLE"]);
    assert_eq!(c.shared.roles_held(), 0);
}

#[test]
fn a_role_of_three_waits_for_the_third() {
    let mut c = Crowd::new(&T_ROLE3, 3);
    assert_eq!(c.frame(&[true, true, false]), ["IDLE", "IDLE", "IDLE"]);
    assert_eq!(c.frame(&[true, true, false]), ["IDLE", "IDLE", "IDLE"]);
    assert_eq!(c.shared.roles_held(), 2);
    assert_eq!(c.frame(&[true, true, true]), ["IDLE", "IDLE", "FLANK3"]);
    assert_eq!(c.frame(&[true, true, true]), ["FLANK3", "FLANK3", "FLANK3"]);
    assert_eq!(c.shared.roles_held(), 3);
}

#[test]
fn a_third_agent_waits_until_the_pair_has_left() {
    let mut c = Crowd::new(&T_ROLE, 3);
    let mut trace = TraceRecorder::new();
    assert_eq!(c.frame(&[true, true, true]), ["IDLE", "FLANK", "IDLE"]);
    assert_eq!(c.frame(&[true, true, true]), ["FLANK", "FLANK", "IDLE"]);
    // The pair runs; 2 is told the role is busy.
    let input = input(&c.grunts[2], 1.0).with_agent(2);
    tick_traced(
        &T_ROLE,
        &mut c.grunts[2],
        &mut c.memories[2],
        &input,
        &mut trace,
    )
    .unwrap();
    assert!(
        trace.text().contains("(group role busy)"),
        "{}",
        trace.text()
    );
    c.grunts[0].ends = true;
    c.grunts[1].ends = true;
    // The pair leaves; 2 now waits in an empty lobby, never with a ghost.
    assert_eq!(c.frame(&[false, false, true]), ["IDLE", "IDLE", "IDLE"]);
    assert_eq!(c.frame(&[false, false, true]), ["IDLE", "IDLE", "IDLE"]);
    assert_eq!(c.shared.roles_held(), 1);
    // 0 completes the pair; 2, waiting and ticked after 0, enters in the
    // same frame.
    c.grunts[0].ends = false;
    assert_eq!(c.frame(&[true, false, true]), ["FLANK", "IDLE", "FLANK"]);
}

#[test]
fn an_agent_that_stops_wanting_in_leaves_the_lobby() {
    let mut c = Crowd::new(&T_ROLE, 2);
    c.frame(&[true, false]);
    assert_eq!(c.shared.roles_held(), 1);
    // 0 no longer asks: the lobby forgets it, so 1 waits alone.
    assert_eq!(c.frame(&[false, true]), ["IDLE", "IDLE"]);
    assert_eq!(c.shared.roles_held(), 1);
    // 0 asks again and completes the pair with 1, which enters after it.
    assert_eq!(c.frame(&[true, true]), ["FLANK", "FLANK"]);
    // An admitted agent that stops wanting in gives its place up too.
    let mut c = Crowd::new(&T_ROLE, 2);
    c.frame(&[true, false]);
    assert_eq!(c.frame(&[true, true]), ["IDLE", "FLANK"]);
    assert_eq!(c.frame(&[false, true]), ["IDLE", "FLANK"]);
    assert_eq!(c.shared.roles_held(), 1, "only 1 is inside");
    // So does one that is deactivated: nobody pairs with it afterwards.
    let mut c = Crowd::new(&T_ROLE, 3);
    c.frame(&[true, false, false]);
    let input = input(&c.grunts[0], 0.5);
    deactivate_all(&T_ROLE, &mut c.grunts[0], &mut c.memories[0], &input).unwrap();
    assert_eq!(c.shared.roles_held(), 0);
    assert_eq!(c.frame(&[false, true, false]), ["IDLE", "IDLE", "IDLE"]);
    assert_eq!(c.frame(&[false, true, true]), ["IDLE", "IDLE", "FLANK"]);
    // A memory dropped or reset leaves the lobby as well.
    let mut c = Crowd::new(&T_ROLE, 2);
    c.frame(&[true, true]);
    c.memories[1].reset();
    assert_eq!(c.shared.roles_held(), 1, "0 is admitted, 1 left");
    c.memories.truncate(0);
    assert_eq!(c.shared.roles_held(), 0);
}

// --- child-tree slots ----------------------------------------------------

behavior! { SITTING: Grunt }
behavior! { TYPING: Grunt }
behavior! { PUSHING: Grunt }
decider! { SIT: Grunt => SITTING }
decider! { TYPE: Grunt => TYPING }
decider! { PUSH: Grunt => PUSHING }
decider! { PULL: Grunt => PUSHING }
group! { OPEN_DOOR: Grunt, sequential [PUSH, PULL] }
group! { USE_OBJECT: Grunt, slot [SIT, TYPE, OPEN_DOOR], select: |g| g.context }
group! { SLOT_ROOT: Grunt, prioritized [USE_OBJECT, IDLE] }
tree! { T_SLOT: Grunt = SLOT_ROOT }

#[test]
fn a_slot_group_runs_the_child_tree_the_agent_selects() {
    // The deepest child tree sizes the memory: OPEN_DOOR's leaves are at
    // depth 3.
    assert_eq!(T_SLOT.levels(), 4);
    let mut g = Grunt::default();
    let mut m = T_SLOT.new_memory(0);
    let mut trace = TraceRecorder::new();
    let mut run = |g: &mut Grunt, context: Option<usize>, now: f64| {
        g.context = context;
        trace.note(&format!("context {context:?}"));
        tick_traced(&T_SLOT, g, &mut m, &input(g, now), &mut trace).unwrap();
        leaf(&m)
    };
    assert_eq!(run(&mut g, None, 0.0), Some("IDLE"));
    assert_eq!(run(&mut g, Some(0), 0.1), Some("SIT"));
    assert_eq!(
        run(&mut g, Some(0), 0.2),
        Some("SIT"),
        "no change, no redecide"
    );
    assert_eq!(run(&mut g, Some(2), 0.3), Some("PUSH"), "switched trees");
    assert_eq!(run(&mut g, Some(1), 0.4), Some("TYPE"));
    assert_eq!(run(&mut g, Some(7), 0.5), Some("IDLE"), "out of range");
    assert_eq!(run(&mut g, Some(1), 0.6), Some("TYPE"));
    assert_eq!(run(&mut g, None, 0.7), Some("IDLE"), "the object went away");
    snapshot!("slot_group_trace", trace.text());
}

// --- deferred actions ----------------------------------------------------

const FETCH_CODE: u32 = 7;

behavior! { FETCHING: Grunt,
    launch: |g, _cx| Some(Action::new(FETCH_CODE, g.target)),
}
behavior! { FETCHING_CHECKED: Grunt,
    launch: |g, _cx| (g.target != 0).then(|| Action::new(FETCH_CODE, g.target)),
    tick: |g, cx| { g.seen.push(cx.action); cx.action == ActionState::Pending },
}
decider! { FETCH: Grunt => FETCHING, needs_all: Want::FETCH }
decider! { FETCH_CHECKED: Grunt => FETCHING_CHECKED, needs_all: Want::FETCH }
behavior! { WATCH: Grunt, tick: |g, _cx| work_tick(g) }
group! { ACT_ROOT: Grunt, prioritized [ALARM, FETCH, IDLE], behavior: WATCH }
group! { ACT2_ROOT: Grunt, prioritized [ALARM, FETCH_CHECKED, IDLE] }
tree! { T_ACT: Grunt = ACT_ROOT }
tree! { T_ACT2: Grunt = ACT2_ROOT }

fn drain(shared: &TreeShared) -> Vec<ActionRequest> {
    let mut out = Vec::new();
    shared.drain_actions(|r| out.push(r));
    out
}

#[test]
fn a_deferred_action_goes_out_and_its_outcome_comes_back() {
    let shared = T_ACT.new_shared(8);
    let mut g = Grunt {
        want: Want::FETCH,
        target: 42,
        ..Grunt::default()
    };
    let mut m = T_ACT.new_memory_in(&shared, 0);
    let mut trace = TraceRecorder::new();
    let mut step = |g: &mut Grunt, m: &mut AgentMemory<Grunt, 2, 2, 0>, now: f64, note: &str| {
        trace.note(note);
        tick_traced(&T_ACT, g, m, &input(g, now).with_agent(5), &mut trace).unwrap();
    };
    step(&mut g, &mut m, 0.0, "launch");
    let sent = drain(&shared);
    let [req] = sent[..] else {
        panic!("one request: {sent:?}")
    };
    assert_eq!((req.agent, req.item), (5, T_ACT.find("FETCH").unwrap()));
    assert_eq!(req.op, ActionOp::Launch(Action::new(FETCH_CODE, 42)));
    let slot = T_ACT.node(req.item).action_slot().unwrap();
    assert_eq!((req.ticket.slot(), req.ticket.serial()), (slot, 1));
    assert_eq!(m.action_state(slot), ActionState::Pending);

    step(&mut g, &mut m, 0.1, "pending: runs, sends nothing");
    assert_eq!(leaf(&m), Some("FETCH"));
    assert!(drain(&shared).is_empty());

    assert!(m.complete(req.ticket, Outcome::Succeeded));
    assert!(!m.complete(req.ticket, Outcome::Failed), "reported once");
    g.want = Want::empty();
    step(&mut g, &mut m, 0.2, "reported: ends");
    assert_eq!(leaf(&m), Some("IDLE"));
    assert!(
        drain(&shared).is_empty(),
        "a finished action is not cancelled"
    );

    g.want = Want::FETCH;
    step(&mut g, &mut m, 0.3, "launch again");
    let again = drain(&shared);
    assert_eq!(again[0].ticket.serial(), 2);
    g.want |= Want::ALARM;
    step(&mut g, &mut m, 0.4, "preempted: cancelled");
    let cancel = drain(&shared);
    assert_eq!(
        cancel,
        [ActionRequest {
            op: ActionOp::Cancel,
            ..again[0]
        }]
    );
    assert!(
        !m.complete(again[0].ticket, Outcome::Succeeded),
        "a late report of a cancelled launch changes nothing"
    );
    snapshot!("deferred_action_round_trip", trace.text());
}

#[test]
fn a_behavior_sees_the_outcome_in_its_tick() {
    let shared = T_ACT2.new_shared(8);
    let mut g = Grunt {
        want: Want::FETCH,
        target: 9,
        ..Grunt::default()
    };
    let mut m = T_ACT2.new_memory_in(&shared, 0);
    run(&T_ACT2, &mut g, &mut m, 0.0).unwrap();
    let ticket = drain(&shared)[0].ticket;
    assert!(m.complete(ticket, Outcome::Failed));
    g.want = Want::empty();
    run(&T_ACT2, &mut g, &mut m, 0.1).unwrap();
    assert_eq!(g.seen, [ActionState::Pending, ActionState::Failed]);
    assert_eq!(leaf(&m), Some("IDLE"));

    // A `launch` that declines fails the activation; nothing is queued.
    g.want = Want::FETCH;
    g.target = 0;
    let mut trace = TraceRecorder::new();
    let i = input(&g, 0.2);
    tick_traced(&T_ACT2, &mut g, &mut m, &i, &mut trace).unwrap();
    assert!(trace.text().contains("failed"), "{}", trace.text());
    assert_eq!((leaf(&m), shared.queued()), (Some("IDLE"), 0));
}

#[test]
fn a_pending_action_is_cancelled_however_its_behavior_stops() {
    type Leave = fn(&mut Grunt, &mut Option<AgentMemory<Grunt, 2, 2, 0>>);
    let cases: [(&str, Leave); 5] = [
        ("reset", |_, m| m.as_mut().unwrap().reset()),
        ("dropped", |_, m| *m = None),
        ("deactivate_all", |g, m| {
            deactivate_all(&T_ACT, g, m.as_mut().unwrap(), &input(g, 1.0)).unwrap()
        }),
        ("a panic", |g, m| {
            // The root's group behavior ticks before FETCH and panics.
            g.panics = true;
            let m = m.as_mut().unwrap();
            let i = input(g, 1.0).with_agent(11);
            let r = catch_unwind(AssertUnwindSafe(|| tick(&T_ACT, g, m, &i)));
            assert!(r.is_err() && m.is_idle());
        }),
        ("preempted", |g, m| {
            g.want |= Want::ALARM;
            let i = input(g, 1.0).with_agent(11);
            tick(&T_ACT, g, m.as_mut().unwrap(), &i).unwrap();
        }),
    ];
    for (what, leave) in cases {
        let shared = T_ACT.new_shared(8);
        let mut g = Grunt {
            want: Want::FETCH,
            target: 3,
            ..Grunt::default()
        };
        let mut m = Some(T_ACT.new_memory_in(&shared, 0));
        let i = input(&g, 0.0).with_agent(11);
        tick(&T_ACT, &mut g, m.as_mut().unwrap(), &i).unwrap();
        let launch = drain(&shared)[0];
        leave(&mut g, &mut m);
        let sent = drain(&shared);
        assert_eq!(
            sent,
            [ActionRequest {
                op: ActionOp::Cancel,
                ..launch
            }],
            "{what}"
        );
    }
}

#[test]
fn a_full_queue_fails_the_launch_and_counts_it() {
    let shared = T_ACT.new_shared(1);
    let mut grunts = wanting(2, Want::FETCH);
    let mut memories = [0, 1].map(|i| T_ACT.new_memory_in(&shared, i));
    for (g, m) in grunts.iter_mut().zip(&mut memories) {
        run(&T_ACT, g, m, 0.0).unwrap();
    }
    assert_eq!(
        (leaf(&memories[0]), leaf(&memories[1])),
        (Some("FETCH"), Some("IDLE"))
    );
    assert_eq!((shared.queued(), shared.lost_requests()), (1, 1));
}

// --- the queue under re-entry and panics --------------------------------

/// `n` grunts of T_ACT that each launch one fetch at time 0, ticked by
/// `tick_all` (agent `i` has id `i`).
fn launched(n: usize, capacity: usize) -> (Arc<TreeShared>, Vec<Grunt>, Vec<ActMemory>) {
    let shared = T_ACT.new_shared(capacity);
    let mut grunts = wanting(n, Want::FETCH);
    for (i, g) in grunts.iter_mut().enumerate() {
        g.target = 100 + i as u64;
    }
    let mut memories: Vec<_> = (0..n as u64)
        .map(|i| T_ACT.new_memory_in(&shared, i))
        .collect();
    let report = bt_core::tick_all(&T_ACT, &mut grunts, &mut memories, |_, g| input(g, 0.0));
    assert_eq!(report.errors, 0);
    assert_eq!(shared.queued(), n);
    (shared, grunts, memories)
}

type ActMemory = AgentMemory<Grunt, 2, 2, 0>;

#[test]
fn a_drain_called_from_a_drain_callback_hands_out_the_rest_once() {
    let (shared, _grunts, _memories) = launched(4, 8);
    let mut outer = Vec::new();
    let mut inner = Vec::new();
    shared.drain_actions(|r| {
        outer.push(r.agent);
        if r.agent == 1 {
            shared.drain_actions(|r| inner.push(r.agent));
        }
    });
    assert_eq!((outer, inner), (vec![0, 1], vec![2, 3]));
    assert_eq!((shared.queued(), shared.lost_requests()), (0, 0));
    shared.drain_actions(|r| panic!("drained twice: {r}"));
}

#[test]
fn a_panicking_drain_callback_leaves_the_queue_consistent() {
    let (shared, _grunts, _memories) = launched(3, 3);
    let mut seen = Vec::new();
    let r = catch_unwind(AssertUnwindSafe(|| {
        shared.drain_actions(|r| {
            seen.push(r.agent);
            assert!(r.agent != 1, "the game system fails");
        })
    }));
    assert!(r.is_err());
    // The request the callback panicked on was handed out; the next drain
    // goes on after it, and the queue has room again.
    assert_eq!(seen, [0, 1]);
    assert_eq!(shared.queued(), 1);
    assert_eq!(
        drain(&shared).iter().map(|r| r.agent).collect::<Vec<_>>(),
        [2]
    );
    assert_eq!(shared.lost_requests(), 0);
}

#[test]
fn requests_made_during_a_drain_are_delivered_by_the_next_drain() {
    let (shared, mut grunts, memories) = launched(3, 8);
    let mut memories: Vec<Option<ActMemory>> = memories.into_iter().map(Some).collect();
    let mut first = Vec::new();
    shared.drain_actions(|r| {
        first.push(r);
        let i = r.agent as usize;
        match i {
            // Completed and ticked again: it ends, then launches anew.
            0 => {
                let m = memories[i].as_mut().unwrap();
                assert!(m.complete(r.ticket, Outcome::Succeeded));
                run(&T_ACT, &mut grunts[i], m, 0.1).unwrap();
                run(&T_ACT, &mut grunts[i], m, 0.2).unwrap();
            }
            // Preempted by an alarm: its launch is cancelled.
            1 => {
                grunts[i].want |= Want::ALARM;
                let input = input(&grunts[i], 0.1).with_agent(1);
                tick(
                    &T_ACT,
                    &mut grunts[i],
                    memories[i].as_mut().unwrap(),
                    &input,
                )
                .unwrap();
            }
            // Dropped: its launch is cancelled.
            _ => memories[i] = None,
        }
    });
    assert_eq!(first.len(), 3);
    let next = drain(&shared);
    let ops: Vec<_> = next.iter().map(|r| (r.agent, r.op)).collect();
    assert_eq!(
        ops,
        [
            (0, ActionOp::Launch(Action::new(FETCH_CODE, 100))),
            (1, ActionOp::Cancel),
            (2, ActionOp::Cancel),
        ]
    );
    assert_eq!(
        (next[1].ticket, next[2].ticket),
        (first[1].ticket, first[2].ticket)
    );
    assert_eq!(shared.lost_requests(), 0);
    assert_eq!(
        memories[0].as_ref().unwrap().pending_ticket(0),
        Some(next[0].ticket)
    );
}

// --- tickets and agent ids ----------------------------------------------

#[test]
fn tick_all_launches_under_each_agents_index_and_completions_route_back() {
    let (shared, mut grunts, mut memories) = launched(3, 8);
    let requests = drain(&shared);
    let agents: Vec<u32> = requests.iter().map(|r| r.agent).collect();
    assert_eq!(agents, [0, 1, 2]);
    let mut serials: Vec<u32> = requests.iter().map(|r| r.ticket.serial()).collect();
    serials.dedup();
    assert_eq!(serials.len(), 3, "one serial per launch in the crowd");
    for r in &requests {
        assert_eq!((r.ticket.agent(), r.ticket.crowd()), (r.agent, shared.id()));
        // Routed by agent id, each completion reaches its own memory; any
        // other memory refuses it.
        for (i, m) in memories.iter_mut().enumerate() {
            if i != r.agent as usize {
                assert!(!m.complete(r.ticket, Outcome::Succeeded), "{r} to {i}");
            }
        }
        assert!(memories[r.agent as usize].complete(r.ticket, Outcome::Succeeded));
    }
    // An id the input sets is kept.
    for (g, m) in grunts.iter_mut().zip(&mut memories) {
        g.want = Want::empty();
        run(&T_ACT, g, m, 0.1).unwrap();
        g.want = Want::FETCH;
    }
    bt_core::tick_all(&T_ACT, &mut grunts, &mut memories, |i, g| {
        input(g, 0.2).with_agent(1000 + i as u32)
    });
    let agents: Vec<u32> = drain(&shared).iter().map(|r| r.agent).collect();
    assert_eq!(agents, [1000, 1001, 1002]);
}

#[test]
fn a_ticket_of_another_memory_tree_or_crowd_completes_nothing() {
    // Two crowds of one tree, one of another; every agent has id 0 and
    // makes its crowd's first launch.
    let (a, b) = (T_ACT.new_shared(4), T_ACT.new_shared(4));
    let other = T_ACT2.new_shared(4);
    let mut g = Grunt {
        want: Want::FETCH,
        target: 5,
        ..Grunt::default()
    };
    let mut in_a = T_ACT.new_memory_in(&a, 0);
    let mut also_in_a = T_ACT.new_memory_in(&a, 1);
    let mut in_b = T_ACT.new_memory_in(&b, 0);
    let mut in_other = T_ACT2.new_memory_in(&other, 0);
    for m in [&mut in_a, &mut also_in_a, &mut in_b] {
        run(&T_ACT, &mut g, m, 0.0).unwrap();
    }
    run(&T_ACT2, &mut g, &mut in_other, 0.0).unwrap();
    let ticket = |s: &TreeShared| drain(s)[0].ticket;
    let (ta, tb, tother) = (ticket(&a), ticket(&b), ticket(&other));
    let also = drain(&a);
    assert!(also.is_empty(), "drained with ta");
    assert_eq!(
        (ta.slot(), ta.serial(), ta.agent()),
        (tb.slot(), tb.serial(), tb.agent())
    );
    assert_eq!((ta.slot(), ta.serial()), (tother.slot(), tother.serial()));
    assert!(!in_b.complete(ta, Outcome::Succeeded), "another crowd");
    assert!(!in_other.complete(ta, Outcome::Succeeded), "another tree");
    assert!(
        !also_in_a.complete(ta, Outcome::Succeeded),
        "another memory"
    );
    let forged = Ticket::new(ta.crowd(), 9, ta.slot() as u16, ta.serial());
    assert!(
        !in_a.complete(forged, Outcome::Succeeded),
        "another agent id"
    );
    assert!(in_a.complete(ta, Outcome::Succeeded));
    assert!(in_b.complete(tb, Outcome::Succeeded));
    assert!(in_other.complete(tother, Outcome::Succeeded));
}

// --- the clock and shared state ------------------------------------------

#[test]
fn a_clock_jump_does_not_freeze_a_global_cooldown() {
    let shared = T_COOL.new_shared(0);
    let mut grunts = wanting(2, Want::BARK);
    let mut memories: Vec<_> = (0..2).map(|i| T_COOL.new_memory_in(&shared, i)).collect();
    // Milliseconds passed as seconds once: the cooldown is stamped at 5000.
    run(&T_COOL, &mut grunts[0], &mut memories[0], 5000.0).unwrap();
    // Back to seconds: a stamp more than a period ahead counts as run out.
    run(&T_COOL, &mut grunts[1], &mut memories[1], 5.0).unwrap();
    assert_eq!(
        (grunts[0].barks.clone(), grunts[1].barks.clone()),
        (vec![5000.0], vec![5.0])
    );
    // And the cooldown runs from the new stamp as usual.
    run(&T_COOL, &mut grunts[0], &mut memories[0], 5.5).unwrap();
    assert_eq!(grunts[0].barks, [5000.0]);
    // A clock a little behind the stamp (less than a period) still waits.
    run(&T_COOL, &mut grunts[0], &mut memories[0], 4.5).unwrap();
    assert_eq!(grunts[0].barks, [5000.0]);
    run(&T_COOL, &mut grunts[0], &mut memories[0], 6.0).unwrap();
    assert_eq!(grunts[0].barks, [5000.0, 6.0]);
}

#[test]
fn clear_cooldowns_lets_every_global_cooldown_run_out() {
    let shared = T_COOL.new_shared(0);
    let mut g = Grunt {
        want: Want::BARK,
        ..Grunt::default()
    };
    let mut m = T_COOL.new_memory_in(&shared, 0);
    run(&T_COOL, &mut g, &mut m, 0.0).unwrap();
    run(&T_COOL, &mut g, &mut m, 0.1).unwrap();
    assert_eq!(g.barks, [0.0]);
    shared.clear_cooldowns();
    run(&T_COOL, &mut g, &mut m, 0.2).unwrap();
    assert_eq!(g.barks, [0.0, 0.2]);
}

#[test]
fn a_forgotten_memory_keeps_its_gate_slot() {
    let shared = T_GATE.new_shared(0);
    let mut g = Grunt {
        want: Want::SQUAD,
        ..Grunt::default()
    };
    let mut m = T_GATE.new_memory_in(&shared, 0);
    run(&T_GATE, &mut g, &mut m, 0.0).unwrap();
    // What `mem::forget` does: the memory is never dropped.
    let forgotten = std::mem::ManuallyDrop::new(m);
    // No drop, no give-back: the slot stays taken for this crowd.
    assert_eq!(squad_count(&shared), 1);
    assert_eq!(Arc::strong_count(&shared), 2);
    // (Dropped after all, so that nothing leaks from the test.)
    drop(std::mem::ManuallyDrop::into_inner(forgotten));
    assert_eq!(squad_count(&shared), 0);
}

#[test]
#[should_panic(
    expected = "tree `T_ACT` has deferred actions: its shared state needs room for at least one request"
)]
fn a_tree_with_deferred_actions_refuses_a_queue_without_room() {
    let _ = T_ACT.new_shared(0);
}

#[test]
fn lookups_out_of_range_panic_naming_the_range() {
    let shared = T_ACT.new_shared(1);
    let m = T_ACT.new_memory_in(&shared, 0);
    let text = |f: &dyn Fn()| panic_text(catch_unwind(AssertUnwindSafe(f)).unwrap_err());
    assert_eq!(
        text(&|| {
            m.timer(0);
        }),
        "timer 0 out of range: tree `T_ACT` has none"
    );
    assert_eq!(
        text(&|| {
            m.action_state(1);
        }),
        "deferred-action 1 out of range: tree `T_ACT` has them at 0..1"
    );
    assert_eq!(
        text(&|| {
            m.block_behavior(2);
        }),
        "level 2 out of range: tree `T_ACT` has them at 0..2"
    );
    assert_eq!(m.action_state(0), ActionState::None);
    assert!(m.block_behavior(1).is_none());
}
