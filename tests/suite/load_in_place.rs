//! Loading a save into a crowd that is running: the shared state and
//! every memory bound to it, restored in one call into the values the game
//! already has. The result is the state a restore into fresh values
//! leaves: gate counts equal to the agents inside before anyone ticks, no
//! cancel for an action the save keeps pending, no ticket issued twice,
//! stale tickets completing nothing unless adopted. Any other order or
//! repetition of the per-part calls is correct too, or a typed error that
//! changes nothing.

use std::sync::Arc;

use bt_core::{
    Action, ActionOp, AdoptError, Outcome, RestoreError, SnapshotError, TickInput, Ticket,
    TreeShared, behavior, decider, group, par_tick_all, tick, tick_all, tree,
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
    /// The crowd's clock, for the input of a tick of the whole crowd.
    clock: f64,
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

/// A save: the crowd's snapshot, and the shared state's and each
/// memory's on their own, as JSON.
struct Save {
    crowd: Vec<u8>,
    shared: Vec<u8>,
    memories: Vec<Vec<u8>>,
    at: f64,
}

/// A restore's error with the format's error as text.
fn typed<E: std::fmt::Display>(r: Result<(), RestoreError<E>>) -> Result<(), RestoreError<String>> {
    r.map_err(|e| match e {
        RestoreError::Format(e) => RestoreError::Format(e.to_string()),
        RestoreError::Snapshot(e) => RestoreError::Snapshot(e),
    })
}

impl Crew {
    fn new(n: u32) -> Self {
        let shared = CREW.new_shared(8);
        let memories = (0..n)
            .map(|i| CREW.new_memory_in(&shared, u64::from(i)))
            .collect();
        let workers = (0..n)
            .map(|id| Worker {
                id,
                ..Worker::default()
            })
            .collect();
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
            crowd: serde_json::to_vec(&self.shared.snapshot_crowd(&self.memories, self.now))
                .unwrap(),
            shared: serde_json::to_vec(&self.shared.snapshot(self.now)).unwrap(),
            memories: self
                .memories
                .iter()
                .map(|m| serde_json::to_vec(&m.snapshot(self.now)).unwrap())
                .collect(),
            at: self.now,
        }
    }

    /// The shared state alone.
    fn load_shared(&self, save: &Save) -> Result<(), RestoreError<String>> {
        let mut de = serde_json::Deserializer::from_slice(&save.shared);
        typed(self.shared.restore(&CREW, save.at, &mut de))
    }

    /// One memory alone.
    fn load_memory(&mut self, i: usize, save: &Save) -> Result<(), RestoreError<String>> {
        let mut de = serde_json::Deserializer::from_slice(&save.memories[i]);
        typed(self.memories[i].restore(save.at, &mut de))
    }

    /// The crowd's load: the shared state and every memory, in one call.
    fn try_load(&mut self, save: &Save) -> Result<(), RestoreError<String>> {
        let mut de = serde_json::Deserializer::from_slice(&save.crowd);
        typed(
            self.shared
                .restore_crowd(&CREW, save.at, &mut self.memories, &mut de),
        )?;
        self.now = save.at;
        Ok(())
    }

    /// The documented load.
    fn load(&mut self, save: &Save) {
        self.try_load(save).expect("restores");
    }

    /// Every agent's leaf, the gate counts, the cooldowns' and roles'
    /// holdings and the queue: what a load must leave as a fresh one does.
    fn state(&self) -> (Vec<Option<&'static str>>, u64, u64, usize) {
        (
            (0..self.memories.len()).map(|i| self.leaf(i)).collect(),
            self.shared.gates_held(),
            self.shared.roles_held(),
            self.shared.queued(),
        )
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
    let adopted = crew
        .shared
        .adopt_ticket(launched)
        .expect("issued before the save");
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
    // The detour's ticket completes nothing, and cannot be adopted: the
    // save was taken before its launch.
    assert!(!crew.memories[0].complete(stale, Outcome::Succeeded));
    assert_eq!(
        crew.shared.adopt_ticket(stale),
        Err(AdoptError::AfterSave {
            serial: stale.serial(),
            launches: 0
        })
    );
    assert_eq!(crew.memories[0].pending_ticket(fresh.slot()), Some(fresh));
    assert!(crew.memories[0].complete(fresh, Outcome::Succeeded));
}

#[test]
fn a_ticket_issued_after_the_save_is_not_adopted() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::FETCH, NONE]);
    let [(ActionOp::Launch(_), before)] = crew.drain()[..] else {
        panic!("one launch")
    };
    let save = crew.save();
    // After the save, worker 1 launches too: serial 2 of the same crowd.
    crew.tick(&[Job::FETCH, Job::FETCH]);
    let [(ActionOp::Launch(_), after)] = crew.drain()[..] else {
        panic!("one launch")
    };
    assert_eq!((before.crowd(), before.serial()), (after.crowd(), 1));
    crew.load(&save);
    // The restored crowd launches worker 1's fetch afresh: serial 2 again,
    // under its new id.
    crew.tick(&[Job::FETCH, Job::FETCH]);
    let [(ActionOp::Launch(_), relaunched)] = crew.drain()[..] else {
        panic!("one launch")
    };
    assert_eq!(relaunched.serial(), after.serial());
    // The ticket of the launch after the save must not complete the new
    // one: adopting it is refused.
    assert_eq!(
        crew.shared.adopt_ticket(after),
        Err(AdoptError::AfterSave {
            serial: after.serial(),
            launches: 1
        })
    );
    assert!(!crew.memories[1].complete(after, Outcome::Succeeded));
    assert_eq!(
        crew.memories[1].pending_ticket(relaunched.slot()),
        Some(relaunched)
    );
    // The one issued before the save is adopted.
    let adopted = crew.shared.adopt_ticket(before).unwrap();
    assert!(crew.memories[0].complete(adopted, Outcome::Succeeded));
}

#[test]
fn tickets_of_other_crowds_are_not_adopted() {
    let mut crew = Crew::new(1);
    assert_eq!(
        crew.shared
            .adopt_ticket(Ticket::new(crew.shared.id(), 0, 0, 1)),
        Err(AdoptError::NotLoaded)
    );
    crew.tick(&[Job::FETCH]);
    let save = crew.save();
    let mut other = Crew::new(1);
    other.tick(&[Job::FETCH]);
    let [(ActionOp::Launch(_), own)] = other.drain()[..] else {
        panic!("one launch")
    };
    other.load(&save);
    assert_eq!(
        other.shared.adopt_ticket(own),
        Err(AdoptError::OtherCrowd {
            ticket: own.crowd(),
            saved: crew.shared.id()
        }),
        "the loading crowd's own ticket of before the load"
    );
    let made_up = Ticket::new(0, 0, own.slot() as u16, 1);
    assert!(matches!(
        other.shared.adopt_ticket(made_up),
        Err(AdoptError::OtherCrowd { ticket: 0, .. })
    ));
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
        if loaded_from_another {
            let unrelated = Crew::new(1).save();
            other.load(&unrelated);
        }
        other.tick(&[Job::WORK]);
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
        // Nothing changed: the worker still works, its gate slot counted.
        assert_eq!(
            (other.leaf(0), other.gate("C_WORKING")),
            (Some("C_WORKING"), 1)
        );
        other.tick(&[Job::WORK]);
        assert_eq!(
            (other.leaf(0), other.gate("C_WORKING")),
            (Some("C_WORKING"), 1)
        );
        assert!(other.drain().is_empty());
    }
}

#[test]
fn a_gated_level_that_is_not_persisted_is_given_back() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::GUARD, NONE]);
    assert_eq!(crew.leaf(0), Some("C_GUARDING"));
    let save = crew.save();
    crew.tick(&[NONE, Job::GUARD]);
    crew.load(&save);
    // The guard's block was not saved: worker 0 is restored at the root,
    // holding no gate slot, and decides again.
    assert_eq!(crew.leaf(0), Some("C_ROOT"));
    assert_eq!(crew.gate("C_GUARDING"), 0);
    crew.tick(&[NONE, Job::GUARD]);
    assert_eq!(crew.leaf(1), Some("C_GUARDING"), "the gate was free");
    assert_eq!(crew.gate("C_GUARDING"), 1);
    crew.tick(&[Job::GUARD, Job::GUARD]);
    assert_eq!(crew.inside("C_GUARDING"), 1);
    crew.memories.clear();
    assert_eq!(crew.shared.gates_held(), 0, "nothing leaked");
}

/// A crowd of three with worker 0 inside the gate of one and workers 1
/// and 2 paired, saved; then the game plays on, worker 1 taking the gate.
fn played_on() -> (Crew, Save) {
    let mut crew = Crew::new(3);
    crew.tick(&[Job::WORK, Job::PAIR, Job::PAIR]);
    crew.tick(&[Job::WORK, Job::PAIR, Job::PAIR]);
    assert_eq!(
        crew.state().0,
        [Some("C_WORKING"), Some("C_PAIRED"), Some("C_PAIRED")]
    );
    let save = crew.save();
    crew.tick(&[NONE, NONE, NONE]);
    crew.tick(&[NONE, Job::WORK, NONE]);
    assert_eq!(crew.leaf(1), Some("C_WORKING"));
    (crew, save)
}

/// What loading `save` into fresh values leaves.
fn fresh_load(save: &Save) -> Crew {
    let mut fresh = Crew::new(3);
    fresh.load(save);
    fresh
}

/// The crowd's ticks after a load, with everyone wanting the gate: the
/// gate of one admits one, whichever way the crowd is ticked.
fn everyone_wants_the_gate(crew: &mut Crew, how: &str) {
    let jobs = [Job::WORK; 3];
    let input = |i: usize, w: &mut Worker| {
        TickInput::new(crew_now(w), 0.5)
            .with_decision(jobs[i])
            .with_agent(w.id)
    };
    for w in &mut crew.workers {
        w.job = Job::WORK;
        w.clock = crew.now;
    }
    match how {
        "tick_all" => {
            tick_all(&CREW, &mut crew.workers, &mut crew.memories, input);
        }
        "par_tick_all" => {
            par_tick_all(&CREW, &mut crew.workers, &mut crew.memories, input);
        }
        _ => std::thread::scope(|s| {
            for (i, (w, m)) in crew.workers.iter_mut().zip(&mut crew.memories).enumerate() {
                s.spawn(move || {
                    let input = input(i, w);
                    tick(&CREW, w, m, &input).expect("ticks");
                });
            }
        }),
    }
    crew.now += 0.5;
    assert_eq!(crew.inside("C_WORKING"), 1, "{how}: a gate of one");
    assert_eq!(crew.gate("C_WORKING"), 1, "{how}");
}

fn crew_now(w: &Worker) -> f64 {
    w.clock
}

#[test]
fn the_shared_state_alone_is_refused_while_memories_are_bound() {
    for how in ["tick_all", "par_tick_all", "threads"] {
        let (mut crew, save) = played_on();
        let before = crew.state();
        // The memories first, then the shared state: the memories' restores
        // keep the counts right, and the shared state's is refused. Worker
        // 0 is refused while worker 1 holds the gate of one.
        let err = crew.load_memory(0, &save).expect_err("the gate is full");
        assert_eq!(
            err,
            RestoreError::Snapshot(SnapshotError::Full {
                decider: "C_WORKING",
                limit: 1
            })
        );
        assert_eq!(crew.state(), before, "nothing changed");
        for i in [1, 2, 0] {
            crew.load_memory(i, &save).unwrap();
            assert_eq!(
                crew.shared.gates_held(),
                u64::from(crew.inside("C_WORKING"))
            );
        }
        let err = crew.load_shared(&save).expect_err("refused");
        assert_eq!(
            err,
            RestoreError::Snapshot(SnapshotError::MemoriesBound { bound: 3, given: 0 })
        );
        assert!(err.to_string().contains("restore_crowd"), "{err}");
        assert_ne!(crew.state(), before, "the memories were restored");
        assert_eq!(crew.state().1, 1, "one inside the gate, counted");
        // Then the documented load: the state of a fresh one.
        crew.load(&save);
        assert_eq!(crew.state(), fresh_load(&save).state());
        everyone_wants_the_gate(&mut crew, how);
    }
}

#[test]
fn loading_the_shared_state_twice_is_refused_and_a_crowd_load_twice_is_one() {
    let (mut crew, save) = played_on();
    crew.load(&save);
    let loaded = crew.state();
    assert!(crew.load_shared(&save).is_err(), "refused, nothing changed");
    assert_eq!(crew.state(), loaded);
    crew.load(&save);
    crew.load(&save);
    assert_eq!(crew.state(), fresh_load(&save).state());
    for how in ["tick_all", "par_tick_all", "threads"] {
        everyone_wants_the_gate(&mut crew, how);
    }
}

#[test]
fn an_agent_made_after_the_save_is_named_by_the_load() {
    for how in ["tick_all", "par_tick_all", "threads"] {
        let (mut crew, save) = played_on();
        // A fourth worker, spawned after the save, bound to the crowd and
        // inside the gate.
        let mut late = CREW.new_memory_in(&crew.shared, 3);
        let mut worker = Worker {
            id: 3,
            job: Job::WORK,
            ..Worker::default()
        };
        crew.tick(&[NONE; 3]);
        tick(
            &CREW,
            &mut worker,
            &mut late,
            &TickInput::new(crew.now, 0.5).with_decision(Job::WORK),
        )
        .unwrap();
        assert_eq!(late.leaf(), CREW.find("C_WORKING"));
        let before = crew.state();
        let err = crew.try_load(&save).expect_err("refused");
        assert_eq!(
            err,
            RestoreError::Snapshot(SnapshotError::MemoriesBound { bound: 4, given: 3 })
        );
        assert_eq!(crew.state(), before, "nothing changed");
        // Given with the others, it is one more than the save holds.
        crew.memories.push(late);
        crew.workers.push(worker);
        let err = crew.try_load(&save).expect_err("refused");
        assert_eq!(
            err,
            RestoreError::Snapshot(SnapshotError::Count {
                what: "memories",
                found: 3,
                expected: 4
            })
        );
        // The game despawns it, and the load goes through.
        crew.memories.pop();
        crew.workers.pop();
        crew.load(&save);
        assert_eq!(crew.state(), fresh_load(&save).state());
        everyone_wants_the_gate(&mut crew, how);
    }
}

#[test]
fn a_memory_of_another_crowd_is_not_loaded_with_this_one() {
    let (mut crew, save) = played_on();
    let other = CREW.new_shared(8);
    let before = crew.state();
    let stranger = CREW.new_memory_in(&other, 0);
    let kept = std::mem::replace(&mut crew.memories[2], stranger);
    let err = crew.try_load(&save).expect_err("refused");
    assert_eq!(
        err,
        RestoreError::Snapshot(SnapshotError::NotBound { index: 2 })
    );
    crew.memories[2] = kept;
    assert_eq!(crew.state(), before, "nothing changed");
    // Nor saved with it.
    let stranger = [CREW.new_memory_in(&other, 0)];
    let saved = serde_json::to_vec(&crew.shared.snapshot_crowd(&stranger, 0.0));
    assert!(
        saved
            .unwrap_err()
            .to_string()
            .contains("memory 0 is not bound")
    );
    let saved = serde_json::to_vec(&crew.shared.snapshot_crowd(&crew.memories[..2], 0.0));
    assert!(
        saved
            .unwrap_err()
            .to_string()
            .contains("3 memories are bound")
    );
}

#[test]
fn a_memory_dropped_after_the_load_gives_back_what_the_save_holds() {
    let mut crew = Crew::new(2);
    crew.tick(&[Job::WORK, Job::FETCH]);
    crew.drain();
    let save = crew.save();
    crew.tick(&[NONE, Job::FETCH]);
    crew.load(&save);
    assert_eq!(crew.drain(), [], "the replaced launch is not cancelled");
    assert_eq!(crew.gate("C_WORKING"), 1);
    let slot = CREW
        .node(CREW.find("C_FETCHING").unwrap())
        .action_slot()
        .unwrap();
    let pending = crew.memories[1].pending_ticket(slot).expect("pending");
    assert_eq!(pending.crowd(), crew.shared.id());
    // Dropped, each memory gives back what it holds now: worker 0 its gate
    // slot, worker 1 its pending fetch (cancelled).
    crew.memories.clear();
    assert_eq!(crew.gate("C_WORKING"), 0);
    let [(ActionOp::Cancel, cancelled)] = crew.drain()[..] else {
        panic!("one cancel")
    };
    assert_eq!(cancelled, pending);
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
    save.crowd = reorder(&save.crowd);
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

/// The crowd ids of the first crowds a process makes, printed by this test
/// when it runs as a child process.
const CHILD: &str = "BT_CROWD_IDS_CHILD";

#[test]
#[cfg_attr(miri, ignore)] // Miri runs no other process
fn crowd_ids_differ_between_processes() {
    let first_ids = || -> Vec<u32> { (0..3).map(|_| CREW.new_shared(1).id()).collect() };
    if std::env::var_os(CHILD).is_some() {
        println!("ids {:?}", first_ids());
        return;
    }
    // Run as it is, or with the address randomization off (as under a
    // debugger) where `setarch -R` can do that.
    let child = |fixed_addresses: bool| {
        let exe = std::env::current_exe().unwrap();
        let mut command = if fixed_addresses {
            let mut c = std::process::Command::new("setarch");
            c.args([std::env::consts::ARCH, "-R"]).arg(exe);
            c
        } else {
            std::process::Command::new(exe)
        };
        let out = command
            .args([
                "--exact",
                "load_in_place::crowd_ids_differ_between_processes",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (_, ids) = text
            .split_once("ids ")
            .unwrap_or_else(|| panic!("no ids in {text}"));
        ids.lines().next().unwrap().to_owned()
    };
    let (a, b) = (child(false), child(false));
    assert_ne!(a, b, "two runs made crowds of the same ids");
    let here = format!("{:?}", first_ids());
    assert_ne!(a, here);
    let setarch = std::process::Command::new("setarch")
        .args([std::env::consts::ARCH, "-R", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if setarch {
        let (a, b) = (child(true), child(true));
        assert_ne!(
            a, b,
            "two runs at fixed addresses made crowds of the same ids"
        );
    } else {
        println!("setarch -R is not available here: runs at fixed addresses not tried");
    }
}
