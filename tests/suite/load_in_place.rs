//! Loading a save into a crowd that is running: the shared state, then
//! each memory, restored into the values the game already has. The result
//! is the state a restore into fresh values leaves: gate counts equal to
//! the agents inside, no cancel for an action the save keeps pending, no
//! ticket issued twice, stale tickets completing nothing unless adopted.
//! Any other order or repetition is correct too, or a typed error that
//! changes nothing.

use std::sync::Arc;

use bt_core::{
    Action, ActionOp, Outcome, RestoreError, SnapshotError, TickInput, TreeShared, behavior,
    decider, group, tick, tree,
};
use serde::{Deserialize, Serialize};

bitflags::bitflags! {
    /// What a worker is told to do this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Job: u8 {
        const WORK = 1 << 0;
        const FETCH = 1 << 1;
        const GUARD = 1 << 2;
        const PAIR = 1 << 3;
    }
}

#[derive(Default)]
struct Worker {
    id: u32,
    /// What it is told this tick: working and guarding go on while told.
    job: Job,
}

#[derive(Default, Serialize, Deserialize)]
struct Count(u32);

behavior! { C_WORK: Worker, memory: Count, persist,
    tick: |w, m, _| { m.0 += 1; w.job.contains(Job::WORK) },
}
behavior! { C_FETCH: Worker, memory: Count, persist,
    launch: |w, m, _| { m.0 += 1; Some(Action::new(1, u64::from(w.id))) },
}
// Not persisted: a restored guard starts afresh, through its gate.
behavior! { C_GUARD: Worker, memory: Count,
    tick: |w, m, _| { m.0 += 1; w.job.contains(Job::GUARD) },
}
behavior! { C_PAIR: Worker, memory: Count, persist,
    tick: |w, m, _| { m.0 += 1; w.job.contains(Job::PAIR) },
}
behavior! { C_IDLE: Worker }
decider! { C_WORKING: Worker => C_WORK, needs_all: Job::WORK, gate: 1 }
decider! { C_FETCHING: Worker => C_FETCH, needs_all: Job::FETCH }
decider! { C_GUARDING: Worker => C_GUARD, needs_all: Job::GUARD, gate: 1 }
decider! { C_PAIRED: Worker => C_PAIR, needs_all: Job::PAIR, together: 2 }
decider! { C_REST: Worker => C_IDLE }
group! { C_ROOT: Worker, prioritized [C_WORKING, C_FETCHING, C_GUARDING, C_PAIRED, C_REST] }
tree! { CREW: Worker = C_ROOT, memory: CrewMemory }

/// A crowd of `n` workers, with ids 0, 1, …
struct Crew {
    shared: Arc<TreeShared>,
    workers: Vec<Worker>,
    memories: Vec<CrewMemory>,
    now: f64,
}

/// A save: the shared state's snapshot and each memory's, as JSON.
struct Save {
    shared: Vec<u8>,
    memories: Vec<Vec<u8>>,
    at: f64,
}

impl Crew {
    fn new(n: u32) -> Self {
        let shared = CREW.new_shared(8);
        let memories = (0..n)
            .map(|i| CREW.new_memory_in(&shared, u64::from(i)))
            .collect();
        let workers = (0..n).map(|id| Worker { id, job: NONE }).collect();
        Crew {
            shared,
            workers,
            memories,
            now: 0.0,
        }
    }

    /// One crowd tick, each worker told `jobs[i]`.
    fn tick(&mut self, jobs: &[Job]) {
        for ((w, m), &job) in self.workers.iter_mut().zip(&mut self.memories).zip(jobs) {
            w.job = job;
            let input = TickInput::new(self.now, 0.5)
                .with_decision(job)
                .with_agent(w.id);
            tick(&CREW, w, m, &input).expect("ticks");
        }
        self.now += 0.5;
    }

    fn save(&self) -> Save {
        Save {
            shared: serde_json::to_vec(&self.shared.snapshot(self.now)).unwrap(),
            memories: self
                .memories
                .iter()
                .map(|m| serde_json::to_vec(&m.snapshot(self.now)).unwrap())
                .collect(),
            at: self.now,
        }
    }

    fn load_shared(&self, save: &Save) {
        let mut de = serde_json::Deserializer::from_slice(&save.shared);
        self.shared
            .restore(&CREW, save.at, &mut de)
            .expect("restores");
    }

    fn load_memory(&mut self, i: usize, save: &Save) -> Result<(), RestoreError<String>> {
        let mut de = serde_json::Deserializer::from_slice(&save.memories[i]);
        self.memories[i]
            .restore(save.at, &mut de)
            .map_err(|e| match e {
                RestoreError::Format(e) => RestoreError::Format(e.to_string()),
                RestoreError::Snapshot(e) => RestoreError::Snapshot(e),
            })
    }

    /// The documented load: the shared state, then each memory.
    fn load(&mut self, save: &Save) {
        self.load_shared(save);
        for i in 0..self.memories.len() {
            self.load_memory(i, save).expect("restores");
        }
        self.now = save.at;
    }

    fn leaf(&self, i: usize) -> Option<&'static str> {
        self.memories[i].leaf().map(|l| CREW.node(l).name())
    }

    fn gate(&self, decider: &str) -> u32 {
        self.shared.gate_count(CREW.find(decider).unwrap()).unwrap()
    }

    /// Agents whose active path holds `decider`.
    fn inside(&self, decider: &str) -> u32 {
        let item = CREW.find(decider).unwrap();
        self.memories.iter().filter(|m| m.is_active(item)).count() as u32
    }

    fn drain(&self) -> Vec<(ActionOp, bt_core::Ticket)> {
        let mut out = Vec::new();
        self.shared.drain_actions(|r| out.push((r.op, r.ticket)));
        out
    }
}

const NONE: Job = Job::empty();

#[test]
fn loading_in_place_keeps_a_gate_of_one_to_one_agent() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, NONE]);
    assert_eq!(crew.leaf(0), Some("C_WORKING"));
    let save = crew.save();
    // Play on: worker 0 stops, worker 1 gets the gate.
    crew.tick(&[NONE, Job::WORK]);
    assert_eq!(
        (crew.leaf(0), crew.leaf(1)),
        (Some("C_REST"), Some("C_WORKING"))
    );

    crew.load(&save);
    assert_eq!(
        (crew.leaf(0), crew.leaf(1)),
        (Some("C_WORKING"), Some("C_REST"))
    );
    assert_eq!(crew.gate("C_WORKING"), 1, "the restored worker is inside");
    // Both want in: the gate of one keeps worker 1 out.
    crew.tick(&[Job::WORK, Job::WORK]);
    assert_eq!(crew.inside("C_WORKING"), 1);
    assert_eq!(
        (crew.leaf(0), crew.leaf(1)),
        (Some("C_WORKING"), Some("C_REST"))
    );
    assert_eq!(crew.gate("C_WORKING"), 1);
}

#[test]
fn loading_in_place_does_not_cancel_an_action_the_save_keeps_pending() {
    let mut crew = Crew::new(1);
    crew.tick(&[Job::FETCH]);
    let [(ActionOp::Launch(_), launched)] = crew.drain()[..] else {
        panic!("one launch")
    };
    let save = crew.save();
    crew.tick(&[Job::FETCH]); // still waiting when the game loads
    crew.load(&save);
    assert_eq!(
        crew.drain(),
        [],
        "no cancel, no launch: the save's queue was empty"
    );
    let adopted = crew.shared.adopt_ticket(launched);
    assert_eq!(
        crew.memories[0].pending_ticket(launched.slot()),
        Some(adopted)
    );
    // The game reports the action it kept running: the agent goes on.
    assert!(crew.memories[0].complete(adopted, Outcome::Succeeded));
    crew.tick(&[Job::FETCH]);
    assert_eq!(
        crew.leaf(0),
        Some("C_REST"),
        "the fetch ended when reported"
    );
}

#[test]
fn loading_an_earlier_save_in_place_issues_no_ticket_twice() {
    let mut crew = Crew::new(1);
    let save = crew.save(); // nothing launched yet
    crew.tick(&[Job::FETCH]);
    let [(ActionOp::Launch(_), stale)] = crew.drain()[..] else {
        panic!("one launch")
    };
    crew.load(&save);
    crew.tick(&[Job::FETCH]);
    let [(ActionOp::Launch(_), fresh)] = crew.drain()[..] else {
        panic!("one launch")
    };
    assert_ne!(fresh, stale, "a ticket is never issued twice");
    assert_eq!(fresh.crowd(), crew.shared.id());
    // The detour's ticket completes nothing; the new one completes.
    assert!(!crew.memories[0].complete(stale, Outcome::Succeeded));
    assert_eq!(crew.memories[0].pending_ticket(fresh.slot()), Some(fresh));
    assert!(crew.memories[0].complete(fresh, Outcome::Succeeded));
}

#[test]
fn restoring_one_memory_twice_keeps_its_gate_slot() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, NONE]);
    let save = crew.save();
    crew.load(&save);
    crew.load_memory(0, &save).unwrap();
    crew.load_memory(0, &save).unwrap();
    assert_eq!(crew.gate("C_WORKING"), 1);
    crew.tick(&[Job::WORK, Job::WORK]);
    assert_eq!(crew.inside("C_WORKING"), 1);
    assert_eq!(crew.gate("C_WORKING"), 1);
}

#[test]
fn a_memory_restored_without_its_shared_state_counts_what_it_holds() {
    let mut crew = Crew::new(2);
    crew.tick(&[NONE, Job::WORK]);
    crew.tick(&[Job::WORK, NONE]); // worker 1 leaves after worker 0 asked
    crew.tick(&[Job::WORK, NONE]);
    assert_eq!(crew.leaf(0), Some("C_WORKING"));
    let save = crew.save();
    // Another crowd, running, whose shared state is never restored.
    let mut other = Crew::new(2);
    other.tick(&[NONE, Job::WORK]);
    assert_eq!(other.gate("C_WORKING"), 1);
    // Worker 1's save (resting) replaces the one inside; worker 0's (inside)
    // takes its place.
    other.load_memory(1, &save).unwrap();
    assert_eq!(other.gate("C_WORKING"), 0);
    other.load_memory(0, &save).unwrap();
    assert_eq!(other.gate("C_WORKING"), 1);
    other.tick(&[Job::WORK, Job::WORK]);
    assert_eq!(other.inside("C_WORKING"), 1);
}

#[test]
fn a_pending_action_restored_into_a_crowd_not_loaded_from_its_save_is_refused() {
    let mut crew = Crew::new(1);
    crew.tick(&[Job::FETCH]);
    let save = crew.save();
    crew.drain();
    for loaded_from_another in [false, true] {
        let mut other = Crew::new(1);
        other.tick(&[Job::WORK]);
        if loaded_from_another {
            let unrelated = Crew::new(1).save();
            other.load_shared(&unrelated);
        }
        let err = other.load_memory(0, &save).expect_err("refused");
        let RestoreError::Snapshot(SnapshotError::OtherCrowd {
            saved,
            restored_from,
        }) = err
        else {
            panic!("{err:?}")
        };
        assert_eq!(saved, crew.shared.id());
        assert_ne!(restored_from, saved);
        // Nothing changed: the worker still works, its gate slot counted
        // (after the unrelated load, from its next tick on).
        assert_eq!(other.leaf(0), Some("C_WORKING"));
        other.tick(&[Job::WORK]);
        assert_eq!(
            (other.leaf(0), other.gate("C_WORKING")),
            (Some("C_WORKING"), 1)
        );
        assert!(other.drain().is_empty());
    }
}

#[test]
fn a_gated_level_that_is_not_persisted_is_given_back_in_any_order() {
    for shared_first in [true, false] {
        let mut crew = Crew::new(2);
        crew.tick(&[Job::GUARD, NONE]);
        assert_eq!(crew.leaf(0), Some("C_GUARDING"));
        let save = crew.save();
        crew.tick(&[NONE, Job::GUARD]);
        if shared_first {
            crew.load(&save);
        } else {
            for i in 0..2 {
                crew.load_memory(i, &save).unwrap();
            }
            crew.load_shared(&save);
        }
        // The guard's block was not saved: worker 0 is restored at the
        // root, holding no gate slot, and decides again.
        assert_eq!(crew.leaf(0), Some("C_ROOT"));
        crew.tick(&[NONE, Job::GUARD]);
        assert_eq!(crew.leaf(1), Some("C_GUARDING"), "the gate was free");
        assert_eq!(crew.gate("C_GUARDING"), 1);
        crew.tick(&[Job::GUARD, Job::GUARD]);
        assert_eq!(crew.inside("C_GUARDING"), 1, "shared first: {shared_first}");
        crew.memories.clear();
        assert_eq!(crew.shared.gates_held(), 0, "nothing leaked");
    }
}

#[test]
fn memories_restored_before_their_shared_state_are_counted_at_their_next_tick() {
    let mut crew = Crew::new(3);
    crew.tick(&[Job::WORK, Job::PAIR, Job::PAIR]);
    crew.tick(&[Job::WORK, Job::PAIR, Job::PAIR]);
    assert_eq!(
        (crew.leaf(0), crew.leaf(1), crew.leaf(2)),
        (Some("C_WORKING"), Some("C_PAIRED"), Some("C_PAIRED"))
    );
    let save = crew.save();
    crew.tick(&[NONE, NONE, NONE]);
    for i in 0..3 {
        crew.load_memory(i, &save).unwrap();
    }
    crew.load_shared(&save);
    assert_eq!(crew.shared.gates_held() + crew.shared.roles_held(), 0);
    crew.tick(&[Job::WORK, Job::PAIR, Job::PAIR]);
    assert_eq!(crew.gate("C_WORKING"), 1);
    assert_eq!(crew.shared.roles_held(), 2, "the pair is inside its role");
}

#[test]
fn a_memory_the_load_does_not_restore_is_counted_at_its_next_tick() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, NONE]);
    let save = crew.save();
    // Worker 0 is restored; worker 1 was not in the save the game loads.
    crew.tick(&[NONE, Job::WORK]);
    crew.load_shared(&save);
    crew.load_memory(0, &save).unwrap();
    assert_eq!(crew.gate("C_WORKING"), 1, "worker 1 not counted yet");
    crew.tick(&[Job::WORK, Job::WORK]);
    assert_eq!(
        crew.gate("C_WORKING"),
        2,
        "both are inside: the gate says so"
    );
    crew.tick(&[NONE, NONE]);
    assert_eq!(crew.gate("C_WORKING"), 0, "and both left");
}

#[test]
fn loading_the_shared_state_twice_is_the_same_as_once() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, NONE]);
    let save = crew.save();
    crew.tick(&[NONE, Job::WORK]);
    crew.load(&save);
    crew.load(&save);
    crew.load_shared(&save);
    crew.tick(&[Job::WORK, Job::WORK]);
    assert_eq!(crew.gate("C_WORKING"), 1);
    assert_eq!(crew.inside("C_WORKING"), 1);
}

#[test]
fn a_memory_dropped_after_the_load_gives_nothing_back_it_no_longer_holds() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, Job::FETCH]);
    crew.drain();
    let save = crew.save();
    crew.tick(&[NONE, Job::FETCH]);
    // The game loads into a fresh memory for worker 1 and drops the old.
    crew.load_shared(&save);
    crew.load_memory(0, &save).unwrap();
    let old = std::mem::replace(&mut crew.memories[1], CREW.new_memory_in(&crew.shared, 9));
    crew.load_memory(1, &save).unwrap();
    drop(old);
    assert_eq!(crew.drain(), [], "the replaced launch is not cancelled");
    assert_eq!(crew.gate("C_WORKING"), 1);
    assert!(
        crew.memories[1]
            .pending_ticket(
                CREW.node(CREW.find("C_FETCHING").unwrap())
                    .action_slot()
                    .unwrap()
            )
            .is_some()
    );
}

/// Every object of `v`, at any depth, with its keys in reverse order.
fn reversed(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(reversed).collect())
        }
        other => other.clone(),
    }
}

#[test]
fn a_json_snapshot_restores_whatever_its_key_order() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, Job::FETCH]);
    let mut save = crew.save();
    let reorder = |bytes: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let r = reversed(&v);
        assert_ne!(serde_json::to_vec(&r).unwrap(), bytes, "another key order");
        serde_json::to_vec(&r).unwrap()
    };
    save.shared = reorder(&save.shared);
    save.memories = save.memories.iter().map(|m| reorder(m)).collect();
    let mut restored = Crew::new(2);
    restored.load(&save);
    assert_eq!(
        (restored.leaf(0), restored.leaf(1)),
        (Some("C_WORKING"), Some("C_FETCHING"))
    );
    assert_eq!(restored.gate("C_WORKING"), 1);
    assert_eq!(restored.drain().len(), 1, "the queued launch");
    // An unknown field is still refused, in any position.
    let mut v: serde_json::Value = serde_json::from_slice(&save.memories[0]).unwrap();
    v["extra"] = 1.into();
    save.memories[0] = serde_json::to_vec(&v).unwrap();
    let err = restored.load_memory(0, &save).expect_err("refused");
    assert!(err.to_string().contains("unknown field `extra`"), "{err}");
}
