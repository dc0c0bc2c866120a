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
/// outside a tick gives the default. (One test: the reads outside a tick
/// would see the crowds of a test running beside it.)
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
/// other values (the tick copies them only when they changed).
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

tunables! { POST_TUNING:
    /// Minutes a post is watched.
    MINUTES: i64 = 6, 1..=100;
}

leaf! { STAND: Vec<i64>, tick: |read, cx| { read.push(cx.tuned(MINUTES)); true } }
tree! { POSTS: Vec<i64> = STAND, memory: PostMemory, tunables: POST_TUNING }

/// A crowd of posts ticked one by one, `MINUTES = watch`.
struct Posts {
    shared: Arc<bt_core::TreeShared>,
    read: Vec<Vec<i64>>,
    memories: Vec<PostMemory>,
}

impl Posts {
    fn new(watch: i64) -> Self {
        let shared = POSTS.new_shared(0);
        shared.tune(MINUTES, watch).unwrap();
        shared.apply_tuning();
        Posts {
            read: vec![Vec::new(); 2],
            memories: (0..2).map(|i| POSTS.new_memory_in(&shared, i)).collect(),
            shared,
        }
    }

    /// Ticks each post with `tick`.
    fn tick(&mut self) {
        for (read, memory) in self.read.iter_mut().zip(&mut self.memories) {
            bt_core::tick(&POSTS, read, memory, &TickInput::new(0.0, 0.1)).unwrap();
        }
    }
}

/// Tuning scopes a game holds, of two crowds of one tree, dropped in the
/// order they were made (not the reverse), or never: every tick reads its
/// own crowd's values, and a crowd whose scope is held past its other
/// handles stays alive for it, its values what a read outside a tick
/// gives on that thread until the scope goes.
#[test]
fn tuning_scopes_dropped_in_any_order_or_never_leave_every_read_right() {
    let (mut a, mut b) = (Posts::new(10), Posts::new(20));
    let sa = a.shared.tuning_scope();
    let sb = b.shared.tuning_scope();
    a.tick();
    b.tick();
    drop(sa);
    a.tick();
    b.tick();
    drop(sb);
    a.tick();
    b.tick();
    assert_eq!(a.read, vec![vec![10; 3]; 2]);
    assert_eq!(b.read, vec![vec![20; 3]; 2]);
    assert_eq!(Ctx::at(0.0, 0.0).tuned(MINUTES), 6);

    // Held past every other handle of its crowd (as one never dropped):
    // the crowd's shared state outlives them.
    let c = Posts::new(30);
    let held = c.shared.tuning_scope();
    drop(c);
    let mut d = Posts::new(40);
    d.tick();
    assert_eq!(d.read, vec![vec![40]; 2]);
    assert_eq!(Ctx::at(0.0, 0.0).tuned(MINUTES), 30);
    drop(held);
    assert_eq!(Ctx::at(0.0, 0.0).tuned(MINUTES), 6);
}
