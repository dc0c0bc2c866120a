//! Threads: one tree shared by every thread, agent memories
//! that move between threads, and `par_tick_all` (feature `rayon`) giving
//! exactly what the serial `tick_all` gives.

use std::cell::Cell;
use std::rc::Rc;

use bt_core::{
    Action, ActionOp, ActionRequest, AgentMemory, Behavior, CrowdReport, Decider, ItemIdx, Outcome,
    Stimuli, TickInput, Ticket, Tree, behavior, decider, group, par_tick_all, tick, tick_all, tree,
};

use crate::model::{GenMemory, GenTree};

// ---------------------------------------------------------------------------
// Compile-time: the tree is `Sync` and the memory `Send` whatever the agent
// type, here one that is neither (`Rc`).

/// An agent that is neither `Send` nor `Sync`.
pub struct Local {
    pub seen: Rc<Cell<u32>>,
}

behavior! { LOCAL_B: Local, memory: u32,
    tick: |a, m, _cx| {
        *m += 1;
        a.seen.set(a.seen.get() + 1);
        true
    },
}
decider! { LOCAL_LEAF: Local => LOCAL_B, decide: |a, _| if a.seen.get() < 100 { 1.0 } else { 0.0 } }
group! { LOCAL_ROOT: Local, prioritized [LOCAL_LEAF] }
tree! { LOCAL_TREE: Local = LOCAL_ROOT, memory: LocalMemory }

const fn sync<T: Sync + ?Sized>() {}
const fn send<T: Send + ?Sized>() {}

const _: () = {
    sync::<Tree<Local, 2, 0>>();
    sync::<Decider<Local>>();
    sync::<Behavior<Local, u32>>();
    send::<LocalMemory>();
    send::<AgentMemory<Local, 2, 0, 64>>();
    send::<Stimuli<u64, 8>>();
    sync::<GenTree>();
    send::<GenMemory>();
    sync::<Tree<Walker, 3, 3>>();
    send::<WalkerMemory>();
};

/// A memory made and ticked on one thread keeps working on another: it
/// holds no agent and nothing tied to its thread.
#[test]
fn a_memory_moves_between_threads() {
    let agent = Local {
        seen: Rc::new(Cell::new(0)),
    };
    let mut memory = LOCAL_TREE.new_memory(1);
    let mut here = agent;
    tick(
        &LOCAL_TREE,
        &mut here,
        &mut memory,
        &TickInput::new(0.0, 0.1),
    )
    .unwrap();
    assert_eq!(here.seen.get(), 1);
    let memory = std::thread::scope(|s| {
        s.spawn(move || {
            // A new agent on this thread; the tree is the shared static.
            let mut there = Local {
                seen: Rc::new(Cell::new(10)),
            };
            let mut memory = memory;
            tick(
                &LOCAL_TREE,
                &mut there,
                &mut memory,
                &TickInput::new(1.0, 0.1),
            )
            .unwrap();
            assert_eq!(there.seen.get(), 11);
            memory
        })
        .join()
        .unwrap()
    });
    let mut memory = memory;
    tick(
        &LOCAL_TREE,
        &mut here,
        &mut memory,
        &TickInput::new(2.0, 0.1),
    )
    .unwrap();
    assert_eq!(here.seen.get(), 2);
    assert_eq!(memory.leaf(), LOCAL_TREE.find("LOCAL_LEAF"));
}

// ---------------------------------------------------------------------------
// `par_tick_all` against `tick_all`.

bitflags::bitflags! {
    /// Stimuli of the crowd.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Noise: u64 {
        const LOUD = 1 << 0;
        const FAR = 1 << 1;
    }
}

/// A crowd member: its own generator drives its decisions; every callback
/// folds into `trail`, so two runs agree only if they made the same calls
/// in the same order with the same contexts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Walker {
    pub state: u64,
    pub trail: u64,
    pub calls: u32,
}

impl Walker {
    fn new(i: usize) -> Self {
        Walker {
            state: 0x9E37_79B9_7F4A_7C15 ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93),
            ..Walker::default()
        }
    }

    fn note(&mut self, what: &str, now: f64) {
        self.calls += 1;
        let mut h = self.trail ^ now.to_bits();
        for b in what.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
        self.trail = h.rotate_left(7);
    }

    /// A value in `0..n` from bits `shift..` of the state.
    fn pick(&self, shift: u32, n: u64) -> u64 {
        (self.state >> shift) % n
    }
}

behavior! { SENSE: Walker,
    tick: |w, cx| {
        // xorshift: the agent's own weather, a new one each tick.
        w.state ^= w.state << 13;
        w.state ^= w.state >> 7;
        w.state ^= w.state << 17;
        w.note("sense", cx.now);
        true
    },
}
behavior! { FLEE_B: Walker, memory: u32,
    activate: |w, _m, cx| { w.note("flee+", cx.now); w.pick(3, 5) != 0 },
    tick: |w, m, cx| { *m += 1; w.note("flee", cx.now); *m < 3 },
    deactivate: |w, _m, cx| w.note("flee-", cx.now),
}
behavior! { STEP_B: Walker, memory: u32,
    tick: |w, m, cx| { *m += 1; w.note("step", cx.now); *m < 1 + w.pick(9, 3) as u32 },
    deactivate: |w, m, cx| w.note(if *m > 1 { "step-long" } else { "step-" }, cx.now),
}
behavior! { ROAM_B: Walker, memory: [u64; 4],
    tick: |w, m, cx| { m[0] += 1; w.note("roam", cx.now); m[0] < 4 },
}
behavior! { CHORE_B: Walker,
    activate: |w, cx| { w.note("chore+", cx.now); true },
    tick: |w, cx| { w.note("chore", cx.now); w.pick(17, 4) != 0 },
}
behavior! { DOOMED_B: Walker,
    tick: |w, cx| { w.note("doomed", cx.now); false },
}
behavior! { IDLE_B: Walker,
    tick: |w, cx| { w.note("idle", cx.now); true },
}

decider! { FLEE: Walker => FLEE_B,
    decide: |w, _| if w.pick(0, 4) == 0 { 2.0 } else { 0.0 },
    stimuli_any: Noise::LOUD,
    every: 1.5,
}
decider! { STEP1: Walker => STEP_B }
decider! { STEP2: Walker => STEP_B, decide: |w, _| (w.pick(20, 3)) as f32 }
decider! { STEP3: Walker => STEP_B }
group! { WORK: Walker, sequential [STEP1, STEP2, STEP3],
    decide: |w, _| if w.pick(5, 3) == 0 { 1.0 } else { 0.0 },
}
decider! { ROAM1: Walker => ROAM_B, decide: |w, _| 1.0 + w.pick(24, 3) as f32 }
decider! { ROAM2: Walker => ROAM_B, decide: |w, _| w.pick(28, 2) as f32 }
decider! { ROAM3: Walker => ROAM_B }
group! { WANDER: Walker, random [ROAM1, ROAM2, ROAM3], flags: DELEGATE_DECIDE }
decider! { CHORE1: Walker => CHORE_B }
decider! { CHORE2: Walker => CHORE_B, decide: |w, _| w.pick(33, 2) as f32 }
decider! { CHORE3: Walker => CHORE_B, decide: |w, _| w.pick(35, 3) as f32 }
decider! { CHORE4: Walker => CHORE_B }
group! { CHORES: Walker, shuffle [CHORE1, CHORE2, CHORE3, CHORE4],
    decide: |w, _| if w.pick(40, 4) == 1 { 1.0 } else { 0.0 },
}
decider! { BEST_ROAM: Walker => ROAM_B, decide: |w, _| w.pick(44, 5) as f32 }
decider! { BEST_STEP: Walker => STEP_B, decide: |w, _| w.pick(48, 5) as f32 }
group! { BEST: Walker, scored [BEST_ROAM, BEST_STEP, WANDER],
    needs_none: Noise::FAR,
}
decider! { DOOM1: Walker => DOOMED_B }
decider! { DOOM2: Walker => DOOMED_B }
decider! { DOOM3: Walker => DOOMED_B }
decider! { DOOM4: Walker => DOOMED_B }
group! { DOOMED: Walker, prioritized [DOOM1, DOOM2, DOOM3, DOOM4],
    decide: |w, _| if w.pick(52, 16) == 0 { 1.0 } else { 0.0 },
}
decider! { IDLE: Walker => IDLE_B }
group! { CROWD_ROOT: Walker, prioritized [FLEE, DOOMED, WORK, CHORES, BEST, IDLE], behavior: SENSE }
tree! {
    /// A crowd tree with every policy; `DOOMED` runs out of its redecide
    /// budget, so some agents' ticks end in an error.
    CROWD: Walker = CROWD_ROOT,
    redecide_limit: 3,
    memory: WalkerMemory,
}

fn input(t: u32) -> impl Fn(usize, &mut Walker) -> TickInput + Sync {
    move |i, w| {
        TickInput::new(f64::from(t) * 0.25, 0.25)
            .with_decision_bits(w.state & 2)
            .with_stimuli_bits((i as u64).wrapping_mul(31).wrapping_add(u64::from(t)) & 3)
            .with_agent(i as u32)
    }
}

/// `par_tick_all` ticks a crowd of many chunks exactly like `tick_all`:
/// the same reports (errors and the first failing agent included), the
/// same agents, the same memories, tick after tick.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn par_tick_all_matches_tick_all() {
    const AGENTS: usize = 3_000;
    const TICKS: u32 = 60;
    let mut serial: Vec<Walker> = (0..AGENTS).map(Walker::new).collect();
    let mut parallel = serial.clone();
    let mut serial_memory: Vec<WalkerMemory> =
        (0..AGENTS).map(|i| CROWD.new_memory(i as u64)).collect();
    let mut parallel_memory: Vec<WalkerMemory> =
        (0..AGENTS).map(|i| CROWD.new_memory(i as u64)).collect();
    let mut total = CrowdReport::default();
    let mut ran = vec![false; CROWD.len()];
    for t in 0..TICKS {
        let a = tick_all(&CROWD, &mut serial, &mut serial_memory, input(t));
        let b = par_tick_all(&CROWD, &mut parallel, &mut parallel_memory, input(t));
        assert_eq!(a, b, "tick {t}");
        assert_eq!(a.ticked as usize, AGENTS);
        total = total.merge(a);
        for m in &serial_memory {
            for l in m.active_path() {
                ran[l.item.get()] = true;
            }
        }
    }
    assert_eq!(serial, parallel);
    for (i, (s, p)) in serial_memory.iter().zip(&parallel_memory).enumerate() {
        assert_eq!(
            s.active_path().collect::<Vec<_>>(),
            p.active_path().collect::<Vec<_>>(),
            "agent {i}"
        );
        assert_eq!(s.rng_state(), p.rng_state(), "agent {i}");
        for slot in 0..CROWD.timers() {
            assert_eq!(s.timer(slot).to_bits(), p.timer(slot).to_bits());
        }
    }
    // The crowd did something of everything.
    assert!(total.errors > 0 && total.first_error.is_some(), "{total:?}");
    assert!(total.changed > 0 && total.idle < total.ticked, "{total:?}");
    for name in [
        "FLEE",
        "STEP1",
        "STEP2",
        "ROAM1",
        "CHORE2",
        "BEST_STEP",
        "IDLE",
    ] {
        let item = CROWD.find(name).unwrap();
        assert!(ran[item.get()], "nobody ran {name}");
    }
}

/// Many parallel runs of a fresh crowd end in the same state: the result
/// does not depend on how rayon schedules the chunks.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn par_tick_all_is_deterministic_under_repetition() {
    const AGENTS: usize = 1_100; // five chunks, the last one short
    let run = || {
        let mut agents: Vec<Walker> = (0..AGENTS).map(Walker::new).collect();
        let mut memories: Vec<WalkerMemory> =
            (0..AGENTS).map(|i| CROWD.new_memory(i as u64)).collect();
        let reports: Vec<CrowdReport> = (0..12)
            .map(|t| par_tick_all(&CROWD, &mut agents, &mut memories, input(t)))
            .collect();
        let paths: Vec<Vec<_>> = memories
            .iter()
            .map(|m| m.active_path().map(|l| l.item).collect())
            .collect();
        (reports, agents, paths)
    };
    let first = run();
    for _ in 0..6 {
        assert!(run() == first);
    }
}

// ---------------------------------------------------------------------------
// `par_tick_all` against `tick_all` on a tree with shared state.

behavior! { SHOUT_B: Walker,
    activate: |w, cx| { w.note("shout+", cx.now); true },
    tick: |w, cx| { w.note("shout", cx.now); w.pick(7, 3) != 0 },
}
behavior! { FETCH_B: Walker,
    launch: |w, cx| { w.note("fetch", cx.now); Some(Action::new(1, w.pick(11, 1000))) },
}
behavior! { PAIR_B: Walker,
    tick: |w, cx| { w.note("pair", cx.now); w.pick(13, 4) != 0 },
}
decider! { SHOUT: Walker => SHOUT_B, decide: |w, _| (w.pick(2, 3) == 0) as u8 as f32, cooldown: 0.5 }
decider! { GUARD1: Walker => STEP_B }
decider! { GUARD2: Walker => STEP_B }
group! { GUARD: Walker, prioritized [GUARD1, GUARD2],
    decide: |w, _| (w.pick(4, 2) == 0) as u8 as f32, gate: 3,
}
decider! { FETCH: Walker => FETCH_B, decide: |w, _| (w.pick(6, 3) == 0) as u8 as f32 }
decider! { PAIR: Walker => PAIR_B, decide: |w, _| (w.pick(9, 2) == 0) as u8 as f32, together: 2 }
group! { SHARED_ROOT: Walker, prioritized [SHOUT, GUARD, PAIR, FETCH, IDLE], behavior: SENSE }
tree! { SHARED: Walker = SHARED_ROOT, memory: SharedMemory }

/// What one crowd run gave: every frame's report and drained requests
/// (tickets without the crowd id, which differs between two crowds), the
/// agents and paths at the end, what the shared state still holds, and
/// which items were ever on a path.
#[derive(Debug, PartialEq)]
struct SharedRun {
    reports: Vec<CrowdReport>,
    drained: Vec<Vec<ActionRequest>>,
    walkers: Vec<Walker>,
    paths: Vec<Vec<ItemIdx>>,
    held: (u64, u64),
    ran: Vec<bool>,
}

/// One crowd run. Completions go back by agent id, some right away, some
/// a frame later, some never.
fn shared_run(agents: usize, frames: u32, seed: u64, parallel: bool) -> SharedRun {
    let shared = SHARED.new_shared(4 * agents);
    let mut walkers: Vec<Walker> = (0..agents)
        .map(|i| Walker::new(i ^ seed as usize))
        .collect();
    let mut memories: Vec<SharedMemory> = (0..agents)
        .map(|i| SHARED.new_memory_in(&shared, seed ^ i as u64))
        .collect();
    let (mut reports, mut drained, mut later) = (Vec::new(), Vec::new(), Vec::new());
    let mut ran = vec![false; SHARED.len()];
    for t in 0..frames {
        let report = if parallel {
            par_tick_all(&SHARED, &mut walkers, &mut memories, shared_input(t))
        } else {
            tick_all(&SHARED, &mut walkers, &mut memories, shared_input(t))
        };
        reports.push(report);
        for m in &memories {
            for l in m.active_path() {
                ran[l.item.get()] = true;
            }
        }
        for (i, ticket) in later.drain(..) {
            let m: &mut SharedMemory = &mut memories[i];
            m.complete(ticket, Outcome::Failed);
        }
        let mut frame = Vec::new();
        shared.drain_actions(|r| {
            let t = r.ticket;
            frame.push(ActionRequest {
                ticket: Ticket::new(0, t.agent(), t.slot() as u16, t.serial()),
                ..r
            });
            if let ActionOp::Launch(a) = r.op {
                match a.arg % 3 {
                    0 => {
                        memories[r.agent as usize].complete(r.ticket, Outcome::Succeeded);
                    }
                    1 => later.push((r.agent as usize, r.ticket)),
                    _ => {}
                }
            }
        });
        drained.push(frame);
    }
    SharedRun {
        reports,
        drained,
        walkers,
        paths: memories
            .iter()
            .map(|m| m.active_path().map(|l| l.item).collect())
            .collect(),
        held: (shared.gates_held(), shared.roles_held()),
        ran,
    }
}

fn shared_input(t: u32) -> impl Fn(usize, &mut Walker) -> TickInput + Sync {
    move |_, w| TickInput::new(f64::from(t) * 0.2, 0.2).with_decision_bits(w.state & 2)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5EED_C0DE),
        ..proptest::test_runner::Config::with_cases(24)
    })]

    /// Random crowds (sizes across several chunks, random seeds) on a tree
    /// with a gate, a global cooldown, a group role and a deferred action:
    /// `par_tick_all` gives exactly what `tick_all` gives, frame by frame,
    /// requests and their tickets included.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow under Miri
    fn par_tick_all_matches_tick_all_with_shared_state(
        agents in 1usize..700,
        frames in 1u32..24,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let serial = shared_run(agents, frames, seed, false);
        let parallel = shared_run(agents, frames, seed, true);
        proptest::prop_assert!(serial == parallel);
    }
}

/// The shared tree's crowd uses everything it has: somebody shouts,
/// guards, pairs and fetches, and launches are both completed and
/// cancelled.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn the_shared_crowd_uses_every_shared_check() {
    let run = shared_run(600, 20, 7, false);
    assert!(run.reports.iter().all(|r| r.errors == 0));
    let requests = || run.drained.iter().flatten();
    assert!(requests().any(|r| r.op == ActionOp::Cancel));
    assert!(requests().any(|r| matches!(r.op, ActionOp::Launch(_))));
    for name in ["SHOUT", "GUARD1", "PAIR", "FETCH", "IDLE"] {
        assert!(
            run.ran[SHARED.find(name).unwrap().get()],
            "nobody ran {name}"
        );
    }
}
