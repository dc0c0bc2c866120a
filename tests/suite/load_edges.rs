//! Loads one step off the documented path: a memory restored alone into a
//! crowd whose gate or role is full, a save edited over a limit, a block
//! whose `Drop` panics in the middle of a crowd's load, serials past the
//! launch count or at its wrap, a pending action of no crowd, unknown
//! fields deep in a snapshot. Each is refused with a typed error that
//! changes nothing, or leaves the counts equal to the agents inside.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bt_core::{
    Action, ActionOp, RestoreError, SnapshotError, TickInput, behavior, decider, group, tick_all,
    tree,
};
use serde::{Deserialize, Serialize};

bitflags::bitflags! {
    /// What a sentry wants this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Want: u8 {
        const WATCH = 1 << 0;
        const PACE = 1 << 1;
        const PAIR = 1 << 2;
        const SEND = 1 << 3;
    }
}

thread_local! {
    /// Set: the next `Post` dropped panics.
    static PANIC_ON_DROP: Cell<bool> = const { Cell::new(false) };
    /// `Post` values alive.
    static POSTS: Cell<i64> = const { Cell::new(0) };
}

/// A watch's block: counts its values and panics in `Drop` when told to.
#[derive(Serialize)]
struct Post(u32);

impl Default for Post {
    fn default() -> Self {
        POSTS.with(|n| n.set(n.get() + 1));
        Post(0)
    }
}

impl Drop for Post {
    fn drop(&mut self) {
        POSTS.with(|n| n.set(n.get() - 1));
        if PANIC_ON_DROP.with(|p| p.replace(false)) {
            panic!("a post that will not be dropped");
        }
    }
}

impl<'de> Deserialize<'de> for Post {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        POSTS.with(|c| c.set(c.get() + 1));
        Ok(Post(n))
    }
}

#[derive(Default)]
struct Sentry {
    want: Want,
}

behavior! { E_WATCH: Sentry, memory: Post, persist,
    tick: |s, m, _| { m.0 += 1; s.want.contains(Want::WATCH) },
}
behavior! { E_PACE: Sentry, tick: |s, _| s.want.contains(Want::PACE) }
behavior! { E_PAIR: Sentry, tick: |s, _| s.want.contains(Want::PAIR) }
behavior! { E_SEND: Sentry, launch: |_, _| Some(Action::new(1, 0)) }
behavior! { E_IDLE: Sentry }
decider! { E_WATCHING: Sentry => E_WATCH, needs_all: Want::WATCH, gate: 1 }
decider! { E_PACING: Sentry => E_PACE, needs_all: Want::PACE, gate: 1 }
decider! { E_PAIRED: Sentry => E_PAIR, needs_all: Want::PAIR, together: 2 }
decider! { E_SENDING: Sentry => E_SEND, needs_all: Want::SEND }
decider! { E_RESTING: Sentry => E_IDLE }
group! { E_ROOT: Sentry, prioritized [E_WATCHING, E_PACING, E_PAIRED, E_SENDING, E_RESTING] }
tree! { SENTRIES: Sentry = E_ROOT, memory: SentryMemory }

struct Camp {
    shared: std::sync::Arc<bt_core::TreeShared>,
    sentries: Vec<Sentry>,
    memories: Vec<SentryMemory>,
    now: f64,
}

impl Camp {
    fn new(n: u64) -> Self {
        let shared = SENTRIES.new_shared(8);
        let memories = (0..n).map(|i| SENTRIES.new_memory_in(&shared, i)).collect();
        Camp {
            shared,
            sentries: (0..n).map(|_| Sentry::default()).collect(),
            memories,
            now: 0.0,
        }
    }

    fn tick(&mut self, wants: &[Want]) {
        for (s, &w) in self.sentries.iter_mut().zip(wants) {
            s.want = w;
        }
        let now = self.now;
        tick_all(&SENTRIES, &mut self.sentries, &mut self.memories, |_, s| {
            TickInput::new(now, 0.5).with_decision(s.want)
        });
        self.now += 0.5;
        self.check();
    }

    /// Gate counts equal the agents inside, and no gate or role is over
    /// its limit.
    fn check(&self) {
        for (name, limit) in [("E_WATCHING", 1), ("E_PACING", 1)] {
            let item = SENTRIES.find(name).unwrap();
            let inside = self.memories.iter().filter(|m| m.is_active(item)).count() as u32;
            assert_eq!(self.shared.gate_count(item), Some(inside), "{name}");
            assert!(inside <= limit, "{name}: {inside} inside");
        }
        let paired = SENTRIES.find("E_PAIRED").unwrap();
        let pairs = self.memories.iter().filter(|m| m.is_active(paired)).count();
        assert!(pairs <= 2, "{pairs} in a pair");
    }

    fn leaves(&self) -> Vec<Option<&'static str>> {
        self.memories
            .iter()
            .map(|m| m.leaf().map(|l| SENTRIES.node(l).name()))
            .collect()
    }

    fn crowd_json(&self) -> serde_json::Value {
        serde_json::to_value(self.shared.snapshot_crowd(&self.memories, self.now)).unwrap()
    }

    fn load(&mut self, v: &serde_json::Value) -> Result<(), RestoreError<serde_json::Error>> {
        let bytes = serde_json::to_vec(v).unwrap();
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        self.shared
            .restore_crowd(&SENTRIES, self.now, &mut self.memories, &mut de)
    }

    fn load_one(
        &mut self,
        i: usize,
        v: &serde_json::Value,
    ) -> Result<(), RestoreError<serde_json::Error>> {
        let bytes = serde_json::to_vec(v).unwrap();
        self.memories[i].restore(self.now, &mut serde_json::Deserializer::from_slice(&bytes))
    }
}

fn snapshot_error<E>(r: Result<(), RestoreError<E>>) -> SnapshotError {
    match r {
        Err(RestoreError::Snapshot(e)) => e,
        Err(RestoreError::Format(_)) => panic!("a format error"),
        Ok(()) => panic!("restored"),
    }
}

const NONE: Want = Want::empty();

#[test]
fn one_memory_restored_alone_is_refused_by_a_full_gate() {
    let mut camp = Camp::new(2);
    camp.tick(&[Want::PACE, NONE]);
    let old = serde_json::to_value(camp.memories[0].snapshot(camp.now)).unwrap();
    camp.tick(&[NONE, Want::PACE]);
    assert_eq!(camp.leaves()[1], Some("E_PACING"));
    let before = camp.leaves();
    let err = snapshot_error(camp.load_one(0, &old));
    assert_eq!(
        err,
        SnapshotError::Full {
            decider: "E_PACING",
            limit: 1
        }
    );
    assert!(
        err.to_string().contains("`E_PACING` holds at most 1"),
        "{err}"
    );
    assert_eq!(camp.leaves(), before, "nothing changed");
    camp.check();
    // Once the gate is free, the same snapshot restores.
    camp.tick(&[NONE, NONE]);
    camp.load_one(0, &old).unwrap();
    assert_eq!(camp.leaves()[0], Some("E_PACING"));
    camp.check();
}

#[test]
fn one_memory_restored_alone_is_refused_by_a_full_role() {
    let mut camp = Camp::new(3);
    camp.tick(&[Want::PAIR, Want::PAIR, NONE]);
    camp.tick(&[Want::PAIR, Want::PAIR, NONE]);
    assert_eq!(camp.leaves()[..2], [Some("E_PAIRED"); 2]);
    // Sentry 2 restored from sentry 0's snapshot: a third in a pair.
    let pair = serde_json::to_value(camp.memories[0].snapshot(camp.now)).unwrap();
    let err = snapshot_error(camp.load_one(2, &pair));
    assert_eq!(
        err,
        SnapshotError::Full {
            decider: "E_PAIRED",
            limit: 2
        }
    );
    assert_eq!(camp.shared.roles_held(), 2, "nothing changed");
    // Sentry 0 restored from its own snapshot keeps its place.
    camp.load_one(0, &pair).unwrap();
    assert_eq!(camp.shared.roles_held(), 2);
    camp.check();
}

#[test]
fn a_crowd_save_edited_over_a_limit_is_refused() {
    let mut camp = Camp::new(2);
    camp.tick(&[Want::WATCH, NONE]);
    let mut v = camp.crowd_json();
    v["memories"][1] = v["memories"][0].clone();
    let live = POSTS.with(Cell::get);
    let err = snapshot_error(camp.load(&v));
    assert_eq!(
        err,
        SnapshotError::Full {
            decider: "E_WATCHING",
            limit: 1
        }
    );
    assert_eq!(camp.leaves(), [Some("E_WATCHING"), Some("E_RESTING")]);
    assert_eq!(POSTS.with(Cell::get), live, "the blocks read were dropped");
    camp.check();
}

#[test]
fn a_drop_that_panics_in_a_crowd_load_finds_every_memory_counted() {
    let mut camp = Camp::new(2);
    camp.tick(&[Want::PACE, NONE]);
    let save = camp.crowd_json();
    // Sentry 0 watches (a block that panics when dropped), sentry 1 paces.
    camp.tick(&[Want::WATCH, Want::PACE]);
    assert_eq!(camp.leaves(), [Some("E_WATCHING"), Some("E_PACING")]);
    PANIC_ON_DROP.with(|p| p.set(true));
    let loaded = catch_unwind(AssertUnwindSafe(|| camp.load(&save)));
    assert!(loaded.is_err(), "the drop panicked");
    // Every memory was installed and counted before the drop ran.
    assert_eq!(camp.leaves(), [Some("E_PACING"), Some("E_RESTING")]);
    camp.check();
    camp.tick(&[Want::PACE, Want::PACE]);
    assert_eq!(camp.leaves(), [Some("E_PACING"), Some("E_RESTING")]);
    camp.memories.clear();
    assert_eq!(POSTS.with(Cell::get), 0, "nothing leaked");
    assert_eq!(camp.shared.gates_held(), 0);
}

#[test]
fn serials_a_save_never_issued_are_refused() {
    let mut camp = Camp::new(2);
    camp.tick(&[Want::SEND, NONE]);
    let good = camp.crowd_json();
    assert_eq!(good["shared"]["launches"], 1);
    // A queued launch, or a memory's pending one, past the launch count:
    // the next launch would issue its serial again.
    let mut queued = good.clone();
    queued["shared"]["launches"] = 0.into();
    let mut pending = good.clone();
    pending["shared"]["queue"] = serde_json::json!([]);
    pending["shared"]["launches"] = 0.into();
    for (v, what) in [
        (queued, "queued request's ticket serial"),
        (pending, "deferred-action serial"),
    ] {
        let mut fresh = Camp::new(2);
        let err = snapshot_error(fresh.load(&v));
        assert_eq!(err, SnapshotError::BadValue { what });
        assert_eq!(fresh.shared.queued(), 0, "nothing changed");
    }
    let mut v = good;
    v["shared"]["launches"] = (1u32 << 30).into();
    let err = snapshot_error(Camp::new(2).load(&v));
    assert_eq!(
        err,
        SnapshotError::BadValue {
            what: "launch count"
        }
    );
}

#[test]
fn serials_wrap_after_the_last_and_tickets_of_before_the_wrap_are_adopted() {
    const LAST: u32 = (1 << 30) - 1;
    let mut camp = Camp::new(1);
    camp.tick(&[NONE]);
    let mut v = camp.crowd_json();
    v["shared"]["launches"] = (LAST - 2).into();
    camp.load(&v).unwrap();
    let mut serials = Vec::new();
    for _ in 0..4 {
        camp.tick(&[Want::SEND]);
        camp.shared.drain_actions(|r| {
            if let ActionOp::Launch(_) = r.op {
                serials.push(r.ticket.serial());
            }
        });
        // The game gives up on it: the sentry starts afresh.
        camp.memories[0].reset();
        camp.shared.drain_actions(|_| {});
    }
    assert_eq!(serials, [LAST - 1, LAST, 1, 2]);
    // Saved after the wrap, every serial counts as issued before the save.
    let saved = camp.crowd_json();
    let mut other = Camp::new(1);
    other.load(&saved).unwrap();
    let old = bt_core::Ticket::new(camp.shared.id(), 0, 0, LAST - 1);
    assert_eq!(
        other.shared.adopt_ticket(old).map(|t| t.serial()),
        Ok(LAST - 1)
    );
}

#[test]
fn a_pending_action_of_no_crowd_is_refused() {
    let mut camp = Camp::new(1);
    camp.tick(&[Want::SEND]);
    let mut v = serde_json::to_value(camp.memories[0].snapshot(camp.now)).unwrap();
    v["crowd"] = 0.into();
    let mut fresh = Camp::new(1);
    let err = snapshot_error(fresh.load_one(0, &v));
    assert_eq!(
        err,
        SnapshotError::OtherCrowd {
            saved: 0,
            restored_from: 0
        }
    );
    assert_eq!(fresh.leaves(), [None]);
}

#[test]
fn an_unknown_field_deep_in_a_snapshot_is_refused() {
    let mut camp = Camp::new(2);
    camp.tick(&[Want::SEND, Want::WATCH]);
    let good = camp.crowd_json();
    assert!(good["shared"]["queue"][0].is_object());
    for path in [
        "/memories/0/path/0",
        "/memories/0/actions/0",
        "/shared/queue/0",
        "/shared/queue/0/ticket",
    ] {
        let mut v = good.clone();
        v.pointer_mut(path).unwrap()["zzz"] = 1.into();
        let mut fresh = Camp::new(2);
        let err = fresh.load(&v).expect_err(path);
        assert!(
            err.to_string().contains("unknown field `zzz`"),
            "{path}: {err}"
        );
        assert_eq!(fresh.leaves(), [None, None], "{path}: nothing changed");
    }
}

/// The same tree declared in two modules: what a refactor that moves the
/// declarations does.
mod before_the_move {
    use bt_core::{behavior, decider, group, tree};
    #[derive(Default)]
    pub struct Owl;
    behavior! { HOOT: Owl }
    behavior! { PERCH: Owl }
    decider! { CALL: Owl => HOOT, every: 2.0 }
    decider! { REST: Owl => PERCH }
    group! { ROOT: Owl, prioritized [CALL, REST] }
    tree! { pub OWL: Owl = ROOT }
}

mod after_the_move {
    pub mod birds {
        use super::super::before_the_move::Owl;
        use bt_core::{behavior, decider, group, tree};
        behavior! { HOOT: Owl }
        behavior! { PERCH: Owl }
        decider! { CALL: Owl => HOOT, every: 2.0 }
        decider! { REST: Owl => PERCH }
        group! { ROOT: Owl, prioritized [CALL, REST] }
        tree! { pub OWL: Owl = ROOT }
    }
}

#[test]
fn moving_declarations_to_another_module_keeps_every_save() {
    use after_the_move::birds::OWL as MOVED;
    use before_the_move::{OWL, Owl};
    let (a, b) = (OWL.shape().fingerprint, MOVED.shape().fingerprint);
    assert_eq!(a, b, "the same names and places");
    assert_ne!(
        OWL.node(OWL.find("CALL").unwrap()).id(),
        MOVED.node(MOVED.find("CALL").unwrap()).id(),
        "ids hash the module path"
    );
    let mut memory = OWL.new_memory(3);
    bt_core::tick(&OWL, &mut Owl, &mut memory, &TickInput::new(0.0, 0.5)).unwrap();
    let saved = serde_json::to_string(&memory.snapshot(0.5)).unwrap();
    let mut moved = MOVED.new_memory(0);
    moved
        .restore(0.5, &mut serde_json::Deserializer::from_str(&saved))
        .unwrap();
    assert_eq!(moved.leaf(), MOVED.find("CALL"));
    assert_eq!(moved.rng_state(), memory.rng_state());
}
