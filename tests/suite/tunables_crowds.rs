//! Tunables read by crowds of one tree ticking at the same time: on two
//! threads, one inside the other's callback, and after a callback panics.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Barrier};

use bt_core::{Ctx, TickInput, leaf, tick_all, tree, tunables};

// A table of this module alone: no other test ticks a crowd of it, so a
// read outside a tick gives its default.
tunables! { GUARD_TUNING:
    /// Rounds a guard fires.
    ROUNDS: i64 = 6, 1..=100;
}

/// What a guard's tick does besides reading `ROUNDS`.
#[derive(Default)]
enum Then {
    #[default]
    Nothing,
    /// Waits for the other thread's guard, inside both ticks.
    Meet(Arc<Barrier>),
    /// Ticks this crowd of guards, inside its own tick.
    Tick(RefCell<Crowd>),
    /// Panics.
    Panic,
}

#[derive(Default)]
struct Guard {
    /// `ROUNDS` as each tick read it.
    read: Vec<i64>,
    then: Then,
}

leaf! { WATCH: Guard,
    tick: |g, cx| {
        g.read.push(cx.tuned(ROUNDS));
        match &g.then {
            Then::Nothing => {}
            Then::Meet(barrier) => {
                barrier.wait();
            }
            Then::Tick(crowd) => crowd.borrow_mut().tick(),
            Then::Panic => panic!("a guard's tick panics"),
        }
        // What the agent read before the other crowd's tick holds after it.
        g.read.push(cx.tuned(ROUNDS));
        true
    },
}
tree! { GUARDS: Guard = WATCH, memory: GuardMemory, tunables: GUARD_TUNING }

/// A crowd of guards, its values `ROUNDS = rounds`.
struct Crowd {
    guards: Vec<Guard>,
    memories: Vec<GuardMemory>,
}

impl Crowd {
    fn new(n: usize, rounds: i64) -> Self {
        let shared = GUARDS.new_shared(0);
        shared.tune(ROUNDS, rounds).unwrap();
        Crowd {
            guards: (0..n).map(|_| Guard::default()).collect(),
            memories: (0..n)
                .map(|i| GUARDS.new_memory_in(&shared, i as u64))
                .collect(),
        }
    }

    fn tick(&mut self) {
        let input = |_, _: &mut Guard| TickInput::new(0.0, 0.1);
        let report = tick_all(&GUARDS, &mut self.guards, &mut self.memories, input);
        assert_eq!(report.errors, 0);
    }

    /// Every value its guards read.
    fn read(&self) -> Vec<i64> {
        self.guards
            .iter()
            .flat_map(|g| g.read.iter().copied())
            .collect()
    }
}

/// Outside any tick a tunable reads its default.
fn outside() -> i64 {
    Ctx::at(0.0, 0.0).tuned(ROUNDS)
}

/// Crowds of one tree ticking at the same time read their own values: (1)
/// two on two threads, both inside their ticks at once, every agent and
/// every frame; (2) one ticked inside a callback of another, whose agents
/// read theirs before and after; (3) after a tick whose callback panicked,
/// this crowd and another. Between them, once every tick is done, a read
/// outside a tick gives the default.
#[test]
fn crowds_of_one_tree_ticking_at_once_each_read_their_own_values() {
    // (1) Two threads.
    let frames = if cfg!(miri) { 2 } else { 50 };
    let barrier = Arc::new(Barrier::new(2));
    let run = |rounds: i64| {
        let barrier = Arc::clone(&barrier);
        std::thread::spawn(move || {
            let mut crowd = Crowd::new(3, rounds);
            // The middle guard of each crowd waits for the other's.
            crowd.guards[1].then = Then::Meet(barrier);
            for _ in 0..frames {
                crowd.tick();
            }
            crowd.read()
        })
    };
    let (a, b) = (run(10), run(20));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert_eq!(a, vec![10; 3 * 2 * frames]);
    assert_eq!(b, vec![20; 3 * 2 * frames]);
    assert_eq!(outside(), 6);

    // (2) One inside the other's callback.
    let mut outer = Crowd::new(3, 10);
    outer.guards[1].then = Then::Tick(RefCell::new(Crowd::new(2, 20)));
    outer.tick();
    outer.tick();
    assert_eq!(outer.read(), vec![10; 3 * 2 * 2]);
    let Then::Tick(inner) = &outer.guards[1].then else {
        unreachable!()
    };
    assert_eq!(inner.borrow().read(), vec![20; 2 * 2 * 2]);
    assert_eq!(outside(), 6);

    // (3) A panic leaves nothing behind.
    let mut crowd = Crowd::new(3, 10);
    crowd.guards[1].then = Then::Panic;
    assert!(catch_unwind(AssertUnwindSafe(|| crowd.tick())).is_err());
    assert_eq!(outside(), 6);
    crowd.guards[1].then = Then::Nothing;
    let mut other = Crowd::new(2, 20);
    other.tick();
    crowd.tick();
    assert_eq!(other.read(), vec![20; 2 * 2]);
    assert_eq!(crowd.guards[2].read, vec![10, 10]);
    assert_eq!(outside(), 6);
}

tunables! { SENTRY_TUNING:
    /// Paces a sentry walks.
    PACES: i64 = 6, 1..=100;
}

leaf! { WALK: Vec<i64>, tick: |paces, cx| { paces.push(cx.tuned(PACES)); true } }
tree! { SENTRIES: Vec<i64> = WALK, memory: SentryMemory, tunables: SENTRY_TUNING }

/// A change put in effect, or values loaded into the crowd, between two
/// ticks are what the next tick reads, though the crowd ticked before with
/// other values.
#[test]
fn values_changed_or_loaded_between_ticks_are_read_by_the_next() {
    let shared = SENTRIES.new_shared(0);
    shared.tune(PACES, 10).unwrap();
    let mut sentries = vec![Vec::new(); 2];
    let mut memories: Vec<SentryMemory> =
        (0..2).map(|i| SENTRIES.new_memory_in(&shared, i)).collect();
    let tick = |sentries: &mut Vec<Vec<i64>>, memories: &mut Vec<SentryMemory>| {
        let input = |_, _: &mut Vec<i64>| TickInput::new(0.0, 0.1);
        tick_all(&SENTRIES, sentries, memories, input);
    };
    tick(&mut sentries, &mut memories);
    tick(&mut sentries, &mut memories);
    let saved = serde_json::to_string(&shared.snapshot_crowd(&memories, 0.0)).unwrap();
    shared.tune(PACES, 30).unwrap();
    tick(&mut sentries, &mut memories);
    let loaded = saved.replace(r#"{"int":10}"#, r#"{"int":40}"#);
    assert_ne!(loaded, saved);
    shared
        .restore_crowd(
            &SENTRIES,
            0.0,
            &mut memories,
            &mut serde_json::Deserializer::from_str(&loaded),
        )
        .unwrap();
    tick(&mut sentries, &mut memories);
    assert_eq!(sentries, vec![vec![10, 10, 30, 40]; 2]);
}
