//! A scripted test agent whose callbacks and `decide` functions write a
//! journal, and the trees the semantics and trace tests run.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use bt_core::{behavior, decider, group, tree};

/// The test agent: which deciders accept, which behaviors end or fail to
/// activate, and a journal of every call in order.
#[derive(Default)]
pub struct Bot {
    /// Deciders whose `decide` returns 1.0 (others return 0.0).
    pub accept: HashSet<&'static str>,
    /// Behaviors whose `tick` returns false.
    pub ends: HashSet<&'static str>,
    /// Behaviors whose `activate` returns false.
    pub fail_activate: HashSet<&'static str>,
    /// Behaviors whose `tick` panics.
    pub panic_in_tick: HashSet<&'static str>,
    /// Every call, as `"decide X"`, `"activate X"`, `"tick X"`, `"deactivate X"`.
    pub journal: RefCell<Vec<String>>,
}

impl Bot {
    pub fn accepting(names: &[&'static str]) -> Self {
        Bot {
            accept: names.iter().copied().collect(),
            ..Bot::default()
        }
    }

    pub fn decide(&self, name: &'static str) -> f32 {
        self.journal.borrow_mut().push(format!("decide {name}"));
        if self.accept.contains(name) { 1.0 } else { 0.0 }
    }

    pub fn on(&mut self, what: &str, name: &'static str) -> bool {
        self.journal.get_mut().push(format!("{what} {name}"));
        match what {
            "activate" => !self.fail_activate.contains(name),
            "tick" => {
                assert!(
                    !self.panic_in_tick.contains(name),
                    "{name} panics as scripted"
                );
                !self.ends.contains(name)
            }
            _ => true,
        }
    }

    /// Takes the journal.
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(self.journal.get_mut())
    }

    /// How often `entry` appears in the journal.
    pub fn count(&self, entry: &str) -> usize {
        self.journal.borrow().iter().filter(|e| *e == entry).count()
    }
}

thread_local! {
    /// Live `Tracked` memory values on this thread (tests run one per thread).
    pub static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// A memory block value that counts its live instances.
pub struct Tracked(pub u32);

impl Default for Tracked {
    fn default() -> Self {
        LIVE.with(|l| l.set(l.get() + 1));
        Tracked(0)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.with(|l| l.set(l.get() - 1));
    }
}

pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// A behavior that journals every callback and keeps a `Tracked` block.
macro_rules! journaled {
    ($($name:ident),* $(,)?) => {$(
        behavior! { pub $name: Bot,
            memory: Tracked,
            activate: |b, m, _cx| { m.0 += 1; b.on("activate", stringify!($name)) },
            tick: |b, m, _cx| { m.0 += 1; b.on("tick", stringify!($name)) },
            deactivate: |b, _m, _cx| { b.on("deactivate", stringify!($name)); },
        }
    )*};
}

/// A behavior decider whose `decide` asks the bot.
macro_rules! asking {
    ($($name:ident => $b:ident),* $(,)?) => {$(
        decider! { pub $name: Bot => $b, decide: |b, _| b.decide(stringify!($name)) }
    )*};
}

journaled!(ROOT_B, HIGH_B, MID_B, M1_B, DEEP_B, D1_B, D2_B, LOW_B);
asking!(HIGH => HIGH_B, M1 => M1_B, D1 => D1_B, D2 => D2_B);
decider! { pub LOW: Bot => LOW_B }
group! { pub DEEP: Bot, prioritized [D1, D2], behavior: DEEP_B, decide: |b, _| b.decide("DEEP") }
group! { pub MID: Bot, prioritized [M1, DEEP], behavior: MID_B, decide: |b, _| b.decide("MID") }
group! { pub ROOT: Bot, prioritized [HIGH, MID, LOW], behavior: ROOT_B }

tree! {
    /// The main test tree:
    ///
    /// ```text
    /// ROOT [ROOT_B]            prioritized
    ///   HIGH -> HIGH_B
    ///   MID [MID_B]            prioritized
    ///     M1 -> M1_B
    ///     DEEP [DEEP_B]        prioritized
    ///       D1 -> D1_B
    ///       D2 -> D2_B
    ///   LOW -> LOW_B           (no decide: always accepts)
    /// ```
    pub T1: Bot = ROOT,
    memory: T1Memory,
}

// A decider shared by two groups, with a timer.
journaled!(SHARED_B, OTHER_B);
decider! { pub SHARED: Bot => SHARED_B, decide: |b, _| b.decide("SHARED"), every: 10.0 }
asking!(OTHER => OTHER_B);
group! { pub LEFT: Bot, prioritized [SHARED, OTHER], decide: |b, _| b.decide("LEFT") }
group! { pub RIGHT: Bot, prioritized [SHARED], decide: |b, _| b.decide("RIGHT") }
group! { pub SHARED_ROOT: Bot, prioritized [LEFT, RIGHT] }
tree! { pub T2: Bot = SHARED_ROOT }

// Every child ends at once: a budget of 2 redecides runs out.
journaled!(E1_B, E2_B, E3_B, E4_B);
decider! { pub E1: Bot => E1_B }
decider! { pub E2: Bot => E2_B }
decider! { pub E3: Bot => E3_B }
decider! { pub E4: Bot => E4_B }
group! { pub ENDLESS: Bot, prioritized [E1, E2, E3, E4] }
tree! { pub T3: Bot = ENDLESS, redecide_limit: 2 }

// A root that may reject.
journaled!(ONLY_B);
asking!(ONLY => ONLY_B);
tree! { pub T4: Bot = ONLY }
tree! { pub T5: Bot = ONLY }
