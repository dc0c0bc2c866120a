//! Memory blocks and DBlocks: built once, dropped exactly once, on every path.
//!
//! Every memory value here embeds a [`Mem`] and every DBlock is a
//! [`Ticket`]; both register a unique id in a thread-local set when built and
//! remove it when dropped. A drop that finds its id already gone is counted as
//! a double drop, so "no double drop" and "nothing live" are checked
//! separately, for memory values and DBlocks each.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use bt_core::{
    AgentMemory, Decide, TickError, TickInput, TickReport, Tree, behavior, deactivate_all, decider,
    group, tick, tree,
};

// ---------------------------------------------------------------------------
// Live-instance counters.

thread_local! {
    /// Ids of the live memory values on this thread.
    static MEMS: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    /// Ids of the live DBlock values on this thread.
    static TICKETS: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    /// Drops of a value whose id was not live: double drops (or drops of
    /// values never built).
    static MEM_DOUBLE_DROPS: Cell<u32> = const { Cell::new(0) };
    static TICKET_DOUBLE_DROPS: Cell<u32> = const { Cell::new(0) };
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    /// The next `Mem::default` panics (once).
    static PANIC_IN_NEXT_DEFAULT: Cell<bool> = const { Cell::new(false) };
    /// Built and dropped `Zst` values.
    static ZST_MADE: Cell<u32> = const { Cell::new(0) };
    static ZST_DROPPED: Cell<u32> = const { Cell::new(0) };
}

fn next_id() -> u64 {
    NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    })
}

fn mems_live() -> usize {
    MEMS.with(|s| s.borrow().len())
}

fn mem_is_live(id: u64) -> bool {
    MEMS.with(|s| s.borrow().contains(&id))
}

fn tickets_live() -> usize {
    TICKETS.with(|s| s.borrow().len())
}

/// Checks that nothing was dropped twice on this thread.
#[track_caller]
fn assert_no_double_drop() {
    assert_eq!(
        MEM_DOUBLE_DROPS.with(Cell::get),
        0,
        "a memory value was dropped twice"
    );
    assert_eq!(
        TICKET_DOUBLE_DROPS.with(Cell::get),
        0,
        "a DBlock value was dropped twice"
    );
}

/// Checks that nothing is live and nothing was dropped twice.
#[track_caller]
fn assert_all_dropped() {
    assert_no_double_drop();
    assert_eq!(mems_live(), 0, "memory values still live");
    assert_eq!(tickets_live(), 0, "DBlock values still live");
}

/// Starts a test from a clean thread state.
fn fresh() {
    assert_all_dropped();
    PANIC_IN_NEXT_DEFAULT.with(|p| p.set(false));
    ZST_MADE.with(|c| c.set(0));
    ZST_DROPPED.with(|c| c.set(0));
}

/// The memory value every block type here holds (or is).
#[repr(C)]
struct Mem {
    id: u64,
    /// Ticks seen by this value.
    ticks: u32,
}

impl Default for Mem {
    fn default() -> Self {
        assert!(
            !PANIC_IN_NEXT_DEFAULT.with(|p| p.replace(false)),
            "Mem::default panics as scripted"
        );
        let id = next_id();
        MEMS.with(|s| s.borrow_mut().insert(id));
        Mem { id, ticks: 0 }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if !MEMS.with(|s| s.borrow_mut().remove(&self.id)) {
            MEM_DOUBLE_DROPS.with(|c| c.set(c.get() + 1));
        }
    }
}

/// The DBlock value: which decider's `decide` made it, and a unique id.
struct Ticket {
    id: u64,
    from: &'static str,
}

impl Ticket {
    fn new(from: &'static str) -> Self {
        let id = next_id();
        TICKETS.with(|s| s.borrow_mut().insert(id));
        Ticket { id, from }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !TICKETS.with(|s| s.borrow_mut().remove(&self.id)) {
            TICKET_DOUBLE_DROPS.with(|c| c.set(c.get() + 1));
        }
    }
}

// ---------------------------------------------------------------------------
// The agent.

/// A scripted agent: which deciders accept (with what score), which
/// behaviors end, fail or panic, and what every callback saw.
#[derive(Default)]
struct Npc {
    /// Deciders whose `decide` accepts, with the value it returns.
    score: HashMap<&'static str, f32>,
    /// Behaviors whose `tick` returns false.
    ends: HashSet<&'static str>,
    /// Behaviors whose `activate` returns false.
    fail_activate: HashSet<&'static str>,
    /// The one call that panics: `("decide" | "activate" | "tick" |
    /// "deactivate", name)`.
    panic_in: Option<(&'static str, &'static str)>,
    /// Every call in order: `"decide X"`, `"activate X"`, ….
    journal: RefCell<Vec<String>>,
    /// Tickets made by each `decide`, in order: (decider, ticket id).
    made: RefCell<Vec<(&'static str, u64)>>,
    /// DBlock values live when each `decide` started.
    live_at_decide: RefCell<Vec<(&'static str, usize)>>,
    /// What each `activate` received: (behavior, memory id, memory ticks,
    /// (ticket origin, ticket id)).
    got: Vec<Activation>,
    /// The memory each behavior last ticked with: (id, ticks).
    seen: HashMap<&'static str, (u64, u32)>,
    /// DBlock values live when each `tick` ran.
    live_at_tick: Vec<(&'static str, usize)>,
}

#[derive(Debug, PartialEq)]
struct Activation {
    behavior: &'static str,
    memory: u64,
    ticks: u32,
    ticket: Option<(&'static str, u64)>,
}

impl Npc {
    fn accepting(names: &[&'static str]) -> Self {
        Npc {
            score: names.iter().map(|&n| (n, 1.0)).collect(),
            ..Npc::default()
        }
    }

    #[track_caller]
    fn maybe_panic(&self, what: &'static str, name: &'static str) {
        if self.panic_in == Some((what, name)) {
            panic!("{what} {name} panics as scripted");
        }
    }

    /// Every `decide` here writes a ticket first, then accepts or rejects.
    fn decide(&self, name: &'static str, d: &mut Decide<'_, Ticket>) -> f32 {
        self.live_at_decide
            .borrow_mut()
            .push((name, tickets_live()));
        self.journal.borrow_mut().push(format!("decide {name}"));
        let ticket = Ticket::new(name);
        self.made.borrow_mut().push((name, ticket.id));
        d.set(ticket);
        self.maybe_panic("decide", name);
        self.score.get(name).copied().unwrap_or(0.0)
    }

    fn activate(&mut self, name: &'static str, m: &mut Mem, d: Option<Ticket>) -> bool {
        self.journal.get_mut().push(format!("activate {name}"));
        self.got.push(Activation {
            behavior: name,
            memory: m.id,
            ticks: m.ticks,
            ticket: d.as_ref().map(|t| (t.from, t.id)),
        });
        // Panics while it owns the DBlock: unwinding drops it.
        self.maybe_panic("activate", name);
        !self.fail_activate.contains(name)
    }

    fn tick(&mut self, name: &'static str, m: &mut Mem) -> bool {
        self.journal.get_mut().push(format!("tick {name}"));
        m.ticks += 1;
        self.seen.insert(name, (m.id, m.ticks));
        self.live_at_tick.push((name, tickets_live()));
        self.maybe_panic("tick", name);
        !self.ends.contains(name)
    }

    fn deactivate(&mut self, name: &'static str, m: &mut Mem) {
        assert!(
            mem_is_live(m.id),
            "deactivate {name} got a dead memory value"
        );
        self.journal.get_mut().push(format!("deactivate {name}"));
        self.maybe_panic("deactivate", name);
    }

    fn take(&mut self) -> Vec<String> {
        std::mem::take(self.journal.get_mut())
    }

    /// The ticket ids the decider `name` made, in order.
    fn made_by(&self, name: &str) -> Vec<u64> {
        let made = self.made.borrow();
        made.iter()
            .filter(|(n, _)| *n == name)
            .map(|&(_, id)| id)
            .collect()
    }

    /// What the last activation of `behavior` received.
    fn last_got(&self, behavior: &str) -> &Activation {
        self.got
            .iter()
            .rev()
            .find(|a| a.behavior == behavior)
            .unwrap_or_else(|| panic!("{behavior} was never activated"))
    }
}

/// Behaviors with a `Mem` block and a `Ticket` DBlock that report to the
/// agent.
macro_rules! tracked {
    ($($name:ident),* $(,)?) => {$(
        behavior! { $name: Npc,
            memory: Mem,
            dblock: Ticket,
            activate: |n, m, d, _cx| n.activate(stringify!($name), m, d),
            tick: |n, m, _cx| n.tick(stringify!($name), m),
            deactivate: |n, m, _cx| n.deactivate(stringify!($name), m),
        }
    )*};
}

/// Behavior deciders whose `decide` asks the agent (and writes a ticket).
macro_rules! asking {
    ($($name:ident => $b:ident),* $(,)?) => {$(
        decider! { $name: Npc => $b, decide: |n, d| n.decide(stringify!($name), d) }
    )*};
}

// ---------------------------------------------------------------------------
// Trees.

tracked!(ROOT_B, URGENT_B, WORK_B, STEP1_B, STEP2_B, IDLE_B);
asking!(URGENT => URGENT_B, STEP1 => STEP1_B, STEP2 => STEP2_B);
decider! { IDLE: Npc => IDLE_B }
group! { WORK: Npc, prioritized [STEP1, STEP2], behavior: WORK_B,
    decide: |n, d| n.decide("WORK", d),
}
group! { ROOT: Npc, prioritized [URGENT, WORK, IDLE], behavior: ROOT_B }
tree! {
    /// ```text
    /// ROOT [ROOT_B]              prioritized
    ///   URGENT -> URGENT_B
    ///   WORK [WORK_B]            prioritized
    ///     STEP1 -> STEP1_B
    ///     STEP2 -> STEP2_B
    ///   IDLE -> IDLE_B           (no decide)
    /// ```
    MAIN: Npc = ROOT,
    memory: MainMemory,
}

// Every child ends at once; the budget runs out at the third failure.
tracked!(E_ROOT_B, E1_B, E2_B, E3_B, E4_B);
asking!(E1 => E1_B, E2 => E2_B, E3 => E3_B, E4 => E4_B);
group! { E_ROOT: Npc, prioritized [E1, E2, E3, E4], behavior: E_ROOT_B }
tree! { ENDLESS: Npc = E_ROOT, redecide_limit: 2 }

// A scored and a random group of three.
tracked!(SA_B, SB_B, SC_B, RA_B, RB_B, RC_B);
asking!(SA => SA_B, SB => SB_B, SC => SC_B, RA => RA_B, RB => RB_B, RC => RC_B);
group! { S_ROOT: Npc, scored [SA, SB, SC] }
tree! { SCORED: Npc = S_ROOT }
group! { R_ROOT: Npc, random [RA, RB, RC] }
tree! { RANDOM: Npc = R_ROOT }

// A delegating group with a group behavior, and a fallback after it.
tracked!(DG_B, DL1_B, DL2_B, FALLBACK_B);
asking!(DL1 => DL1_B, DL2 => DL2_B, FALLBACK => FALLBACK_B);
group! { DG: Npc, prioritized [DL1, DL2], behavior: DG_B, flags: DELEGATE_DECIDE }
group! { D_ROOT: Npc, prioritized [DG, FALLBACK] }
tree! {
    /// ```text
    /// D_ROOT                     prioritized
    ///   DG [DG_B]                prioritized, DELEGATE_DECIDE
    ///     DL1 -> DL1_B
    ///     DL2 -> DL2_B
    ///   FALLBACK -> FALLBACK_B
    /// ```
    DELEGATING: Npc = D_ROOT,
}

// A behavior that keeps its DBlock in its memory block.
#[derive(Default)]
struct Kept {
    guard: Mem,
    ticket: Option<Ticket>,
}

behavior! { KEEP_B: Npc,
    memory: Kept,
    dblock: Ticket,
    activate: |n, m, d, _cx| {
        n.got.push(Activation {
            behavior: "KEEP_B",
            memory: m.guard.id,
            ticks: m.guard.ticks,
            ticket: d.as_ref().map(|t| (t.from, t.id)),
        });
        m.ticket = d;
        true
    },
    tick: |n, m, _cx| {
        m.guard.ticks += 1;
        let kept = m.ticket.as_ref().map_or(0, |t| t.id);
        n.seen.insert("KEEP_B", (kept, m.guard.ticks));
        true
    },
}
decider! { KEEP: Npc => KEEP_B,
    decide: |n, d| {
        // A second `set` replaces (and drops) the first value.
        d.set(Ticket::new("KEEP draft"));
        n.decide("KEEP", d)
    },
}
tree! { KEEPING: Npc = KEEP }

// A behavior with a DBlock type but no `activate` to take it.
behavior! { SILENT_B: Npc, memory: Mem, dblock: Ticket,
    tick: |n, m, _cx| n.tick("SILENT_B", m),
}
asking!(SILENT => SILENT_B);
group! { SIL_ROOT: Npc, prioritized [SILENT, IDLE] }
tree! { SILENCE: Npc = SIL_ROOT }

// A zero-sized memory type.
struct Zst;

impl Default for Zst {
    fn default() -> Self {
        ZST_MADE.with(|c| c.set(c.get() + 1));
        Zst
    }
}

impl Drop for Zst {
    fn drop(&mut self) {
        ZST_DROPPED.with(|c| c.set(c.get() + 1));
    }
}

fn zst_live() -> i64 {
    i64::from(ZST_MADE.with(Cell::get)) - i64::from(ZST_DROPPED.with(Cell::get))
}

behavior! { ZST_B: Npc,
    memory: Zst,
    activate: |n, _m, _cx| { n.journal.get_mut().push("activate ZST_B".into()); true },
    tick: |n, _m, _cx| { n.journal.get_mut().push("tick ZST_B".into()); !n.ends.contains("ZST_B") },
    deactivate: |n, _m, _cx| n.journal.get_mut().push("deactivate ZST_B".into()),
}
decider! { ZST_D: Npc => ZST_B, decide: |n, _| n.score.get("ZST_D").copied().unwrap_or(0.0) }
group! { Z_ROOT: Npc, prioritized [ZST_D, IDLE] }
tree! { ZERO: Npc = Z_ROOT }

// A memory type that owns heap memory.
#[derive(Default)]
struct Heavy {
    guard: Mem,
    name: String,
    log: Vec<String>,
    boxed: Option<Box<[u64; 8]>>,
    nested: Vec<Mem>,
    /// A trait object on the heap, replaced every tick.
    last: Option<Box<dyn std::any::Any + Send>>,
}

behavior! { HEAVY_B: Npc,
    memory: Heavy,
    dblock: Ticket,
    activate: |n, m, d, _cx| {
        m.name = format!("heavy #{}", m.guard.id);
        m.boxed = Some(Box::new([m.guard.id; 8]));
        n.activate("HEAVY_B", &mut m.guard, d)
    },
    tick: |n, m, _cx| {
        m.log.push(format!("{} tick {}", m.name, m.guard.ticks));
        m.nested.push(Mem::default());
        m.last = Some(Box::new(format!("tick {}", m.guard.ticks)));
        assert_eq!(m.boxed.as_deref(), Some(&[m.guard.id; 8]));
        n.tick("HEAVY_B", &mut m.guard)
    },
    deactivate: |n, m, _cx| {
        assert_eq!(m.log.len(), m.guard.ticks as usize);
        n.deactivate("HEAVY_B", &mut m.guard);
    },
}
asking!(HEAVY => HEAVY_B);
group! { H_ROOT: Npc, prioritized [HEAVY, IDLE] }
tree! { HEAVY_TREE: Npc = H_ROOT }

// A memory type that exactly fills a 64-byte block, at two levels.
#[repr(C)]
#[derive(Default)]
struct Fill64 {
    guard: Mem,
    words: [u64; 6],
}

const _: () = assert!(size_of::<Fill64>() == 64);

fn pattern(id: u64) -> [u64; 6] {
    core::array::from_fn(|i| id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64)
}

macro_rules! filling {
    ($($name:ident),*) => {$(
        behavior! { $name: Npc,
            memory: Fill64,
            activate: |n, m, _cx| {
                m.words = pattern(m.guard.id);
                n.activate(stringify!($name), &mut m.guard, None)
            },
            tick: |n, m, _cx| {
                // Rewrite the whole block: a neighbour that overlapped it
                // would see its own pattern broken.
                assert_eq!(m.words, pattern(m.guard.id), "{} block overwritten", stringify!($name));
                m.words = pattern(m.guard.id);
                n.tick(stringify!($name), &mut m.guard)
            },
            deactivate: |n, m, _cx| {
                assert_eq!(m.words, pattern(m.guard.id));
                n.deactivate(stringify!($name), &mut m.guard);
            },
        }
    )*};
}

filling!(F_GROUP_B, F_LEAF_B);
decider! { F_LEAF: Npc => F_LEAF_B }
group! { F_ROOT: Npc, prioritized [F_LEAF], behavior: F_GROUP_B }
tree! { FILL: Npc = F_ROOT, block: 64, memory: FillMemory }

// ---------------------------------------------------------------------------
// Helpers.

#[track_caller]
fn run<const L: usize, const S: usize, const N: usize>(
    tree: &Tree<Npc, L, S, N>,
    npc: &mut Npc,
    memory: &mut AgentMemory<Npc, L, S, N>,
    now: f64,
) -> TickReport {
    tick(tree, npc, memory, &TickInput::new(now, 1.0)).expect("tick")
}

/// The names on the active path, root first.
fn path<const L: usize, const S: usize, const N: usize>(
    memory: &AgentMemory<Npc, L, S, N>,
) -> Vec<&'static str> {
    let tree = memory.tree();
    memory
        .active_path()
        .map(|l| tree.node(l.item).name())
        .collect()
}

/// The memory id the behavior last ticked with.
fn mem_of(npc: &Npc, behavior: &str) -> u64 {
    npc.seen[behavior].0
}

/// Activates ROOT > WORK > STEP1 on MAIN.
fn working(npc: &mut Npc) -> MainMemory {
    npc.score.extend([("WORK", 1.0), ("STEP1", 1.0)]);
    let mut memory = MAIN.new_memory(0);
    run(&MAIN, npc, &mut memory, 0.0);
    assert_eq!(path(&memory), ["ROOT", "WORK", "STEP1"]);
    assert_eq!(mems_live(), 3);
    assert_eq!(tickets_live(), 0);
    npc.take();
    memory
}

/// After a caught panic: the memory is idle with every block empty,
/// nothing is live, nothing was dropped twice, and no callback ran after
/// the one that panicked.
#[track_caller]
fn assert_abandoned<const L: usize, const S: usize, const N: usize>(
    npc: &mut Npc,
    memory: &AgentMemory<Npc, L, S, N>,
    panicked: &str,
) {
    assert!(memory.is_idle());
    assert!((0..L).all(|l| memory.block_behavior(l).is_none()));
    assert_all_dropped();
    let journal = npc.take();
    assert_eq!(journal.last().map(String::as_str), Some(panicked));
}

/// Runs a tick that must panic.
fn panicking_tick<const L: usize, const S: usize, const N: usize>(
    tree: &Tree<Npc, L, S, N>,
    npc: &mut Npc,
    memory: &mut AgentMemory<Npc, L, S, N>,
    now: f64,
) {
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tick(tree, npc, memory, &TickInput::new(now, 1.0))
    }));
    assert!(caught.is_err(), "the tick should have panicked");
}

/// After a caught panic on MAIN, the next tick starts from the root and
/// runs normally.
#[track_caller]
fn assert_next_tick_works(npc: &mut Npc, memory: &mut MainMemory, expected: &[&str]) {
    npc.panic_in = None;
    let report = run(&MAIN, npc, memory, 10.0);
    assert_eq!(path(memory), expected);
    assert_eq!(report.activated as usize, expected.len());
    assert_eq!(mems_live(), expected.len(), "one memory value per level");
    assert_eq!(tickets_live(), 0);
    let again = run(&MAIN, npc, memory, 11.0);
    assert!(!again.changed());
    assert_no_double_drop();
}

// ---------------------------------------------------------------------------
// Memory blocks: state across ticks, freshness.

#[test]
fn memory_is_built_at_activation_and_kept_across_ticks() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // Each activate saw a fresh (Default) value; the group's own decide
    // ticket went to the group behavior's activate.
    for b in ["ROOT_B", "WORK_B", "STEP1_B"] {
        let a = npc.last_got(b);
        assert_eq!(a.ticks, 0, "{b}: activate sees a fresh value");
        assert!(mem_is_live(a.memory));
    }
    assert_eq!(npc.last_got("ROOT_B").ticket, None, "ROOT has no decide");
    let work = npc.made_by("WORK");
    assert_eq!(npc.last_got("WORK_B").ticket, Some(("WORK", work[0])));
    let step1 = npc.made_by("STEP1");
    assert_eq!(npc.last_got("STEP1_B").ticket, Some(("STEP1", step1[0])));

    let id = npc.last_got("STEP1_B").memory;
    for t in 1..=3 {
        run(&MAIN, &mut npc, &mut memory, f64::from(t));
    }
    // Activation tick + 3: the same value, mutated in place each tick.
    assert_eq!(npc.seen["STEP1_B"], (id, 4));
    assert_eq!(npc.seen["ROOT_B"].1, 4);
    assert_eq!(mems_live(), 3);
    assert_eq!(memory.block_behavior(2).map(|b| b.name()), Some("STEP1_B"));
    drop(memory);
    assert_all_dropped();
}

#[test]
fn memory_is_fresh_on_reactivation() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    run(&MAIN, &mut npc, &mut memory, 1.0);
    let (old_work, old_step) = (mem_of(&npc, "WORK_B"), mem_of(&npc, "STEP1_B"));
    assert_eq!(npc.seen["STEP1_B"].1, 2);

    // URGENT preempts WORK for one tick, then ends: WORK > STEP1 comes back
    // with new values, starting from Default again.
    npc.score.insert("URGENT", 1.0);
    npc.ends.insert("URGENT_B");
    run(&MAIN, &mut npc, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "WORK", "STEP1"]);
    let a = npc.last_got("STEP1_B");
    assert_eq!(a.ticks, 0);
    assert_ne!(a.memory, old_step);
    assert_eq!(npc.seen["STEP1_B"], (a.memory, 1));
    assert_ne!(mem_of(&npc, "WORK_B"), old_work);
    assert!(!mem_is_live(old_work) && !mem_is_live(old_step));
    assert!(!mem_is_live(npc.last_got("URGENT_B").memory));
    assert_eq!(mems_live(), 3);
    drop(memory);
    assert_all_dropped();
}

// ---------------------------------------------------------------------------
// Memory blocks: dropped exactly once on every path.

#[test]
fn ending_behavior_drops_its_memory_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    let step1 = npc.last_got("STEP1_B").memory;
    npc.score.insert("STEP2", 1.0);
    npc.ends.insert("STEP1_B");
    run(&MAIN, &mut npc, &mut memory, 1.0);
    assert_eq!(path(&memory), ["ROOT", "WORK", "STEP2"]);
    assert!(!mem_is_live(step1));
    assert!(mem_is_live(npc.last_got("STEP2_B").memory));
    assert_eq!(mems_live(), 3);
    assert_no_double_drop();

    // Now every step ends: the whole WORK subtree goes, IDLE runs.
    npc.ends.insert("STEP2_B");
    run(&MAIN, &mut npc, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "IDLE"]);
    assert_eq!(mems_live(), 2);
    assert_no_double_drop();
    drop(memory);
    assert_all_dropped();
}

#[test]
fn failed_activation_drops_memory_and_dblock_after_deactivate() {
    fresh();
    let mut npc = Npc::accepting(&["WORK", "STEP1", "STEP2"]);
    npc.fail_activate.insert("STEP1_B");
    let mut memory = MAIN.new_memory(0);
    run(&MAIN, &mut npc, &mut memory, 0.0);
    let journal = npc.take();
    let from = journal.iter().position(|e| e == "decide STEP1").unwrap();
    assert_eq!(
        journal[from..],
        [
            "decide STEP1",
            "activate STEP1_B",
            "deactivate STEP1_B",
            "decide STEP2",
            "activate STEP2_B",
            "tick STEP2_B",
        ]
    );
    let failed = npc.last_got("STEP1_B");
    assert_eq!(failed.ticket, Some(("STEP1", npc.made_by("STEP1")[0])));
    assert!(!mem_is_live(failed.memory));
    assert_eq!(mems_live(), 3);
    assert_eq!(tickets_live(), 0);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn preemption_drops_every_level_below_the_switch_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    let root = npc.last_got("ROOT_B").memory;
    let work = npc.last_got("WORK_B").memory;
    let step1 = npc.last_got("STEP1_B").memory;
    npc.score.insert("URGENT", 1.0);
    let report = run(&MAIN, &mut npc, &mut memory, 1.0);
    assert_eq!(
        npc.take(),
        [
            "tick ROOT_B",
            "decide URGENT",
            "deactivate STEP1_B",
            "deactivate WORK_B",
            "activate URGENT_B",
            "tick URGENT_B",
        ]
    );
    assert_eq!((report.activated, report.deactivated), (1, 2));
    assert_eq!(path(&memory), ["ROOT", "URGENT"]);
    assert!(!mem_is_live(work) && !mem_is_live(step1));
    assert!(mem_is_live(root), "the switching group keeps its block");
    assert_eq!(npc.seen["ROOT_B"], (root, 2));
    assert_eq!(mems_live(), 2);
    assert_eq!(memory.block_behavior(2).map(|b| b.name()), None);
    assert_no_double_drop();
    drop(memory);
    assert_all_dropped();
}

#[test]
fn redecide_limit_error_drops_every_block_once() {
    fresh();
    let mut npc = Npc::accepting(&["E1", "E2", "E3", "E4"]);
    npc.ends.extend(["E1_B", "E2_B", "E3_B", "E4_B"]);
    let mut memory = ENDLESS.new_memory(0);
    let err = tick(&ENDLESS, &mut npc, &mut memory, &TickInput::new(0.0, 1.0)).unwrap_err();
    assert!(matches!(
        err,
        TickError::RedecideLimit {
            group: "E_ROOT",
            limit: 2,
            ..
        }
    ));
    assert!(memory.is_idle());
    assert!(memory.block_behavior(0).is_none() && memory.block_behavior(1).is_none());
    // Three children were built and each dropped once, then the root.
    let journal = npc.take();
    for b in ["E1_B", "E2_B", "E3_B", "E_ROOT_B"] {
        let count = |what: &str| {
            journal
                .iter()
                .filter(|e| **e == format!("{what} {b}"))
                .count()
        };
        assert_eq!((count("activate"), count("deactivate")), (1, 1), "{b}");
    }
    assert_eq!(
        journal.last().map(String::as_str),
        Some("deactivate E_ROOT_B")
    );
    assert_eq!(npc.got.len(), 4);
    assert_all_dropped();

    // The memory is usable again: the same thing happens on the next tick.
    npc.ends.remove("E1_B");
    run(&ENDLESS, &mut npc, &mut memory, 1.0);
    assert_eq!(path(&memory), ["E_ROOT", "E1"]);
    assert_eq!(mems_live(), 2);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn dropping_the_memory_drops_every_block_once_without_deactivate() {
    fresh();
    let mut npc = Npc::default();
    let memory = working(&mut npc);
    drop(memory);
    assert_all_dropped();
    assert!(npc.take().is_empty(), "no callback runs on drop");
}

#[test]
fn reset_drops_every_block_once_and_the_next_tick_starts_over() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    memory.reset();
    assert!(memory.is_idle());
    assert!((0..MAIN.levels()).all(|l| memory.block_behavior(l).is_none()));
    assert_all_dropped();
    assert!(npc.take().is_empty(), "reset runs no callback");
    // A second reset has nothing left to drop.
    memory.reset();
    assert_all_dropped();

    run(&MAIN, &mut npc, &mut memory, 1.0);
    assert_eq!(path(&memory), ["ROOT", "WORK", "STEP1"]);
    assert_eq!(npc.last_got("STEP1_B").ticks, 0);
    assert_eq!(mems_live(), 3);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn deactivate_all_runs_deactivate_deepest_first_and_drops_blocks_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    deactivate_all(&MAIN, &mut npc, &mut memory, &TickInput::new(1.0, 0.0)).unwrap();
    assert_eq!(
        npc.take(),
        [
            "deactivate STEP1_B",
            "deactivate WORK_B",
            "deactivate ROOT_B"
        ]
    );
    assert!(memory.is_idle());
    assert!((0..MAIN.levels()).all(|l| memory.block_behavior(l).is_none()));
    assert_all_dropped();
    // On an idle memory it does nothing.
    deactivate_all(&MAIN, &mut npc, &mut memory, &TickInput::new(1.0, 0.0)).unwrap();
    assert!(npc.take().is_empty());

    run(&MAIN, &mut npc, &mut memory, 2.0);
    assert_eq!(path(&memory), ["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();
}

// ---------------------------------------------------------------------------
// A panic in any callback: the memory is abandoned to idle, every value
// dropped once, and the next tick works.

#[test]
fn panic_in_activate_drops_its_dblock_and_every_block() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // URGENT preempts; its behavior panics in `activate` while it owns
    // URGENT's ticket.
    npc.score.insert("URGENT", 1.0);
    npc.panic_in = Some(("activate", "URGENT_B"));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    let urgent = *npc.made_by("URGENT").last().unwrap();
    assert_eq!(npc.last_got("URGENT_B").ticket, Some(("URGENT", urgent)));
    assert_abandoned(&mut npc, &memory, "activate URGENT_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "URGENT"]);
    drop(memory);
    assert_all_dropped();

    // The same from an idle memory, at the first level.
    let mut npc = Npc {
        panic_in: Some(("activate", "ROOT_B")),
        ..Npc::default()
    };
    let mut memory = MAIN.new_memory(0);
    panicking_tick(&MAIN, &mut npc, &mut memory, 0.0);
    assert_abandoned(&mut npc, &memory, "activate ROOT_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "IDLE"]);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn panic_in_tick_drops_every_block_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    npc.panic_in = Some(("tick", "STEP1_B"));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    assert_abandoned(&mut npc, &memory, "tick STEP1_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();

    // A group behavior's tick, with the levels below it still active.
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    npc.panic_in = Some(("tick", "WORK_B"));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    assert_abandoned(&mut npc, &memory, "tick WORK_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn panic_in_deactivate_drops_every_block_and_the_pending_dblock_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // A preemption is under way, URGENT's ticket waiting for its activate,
    // when the first deactivate panics.
    npc.score.insert("URGENT", 1.0);
    npc.panic_in = Some(("deactivate", "STEP1_B"));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    assert_abandoned(&mut npc, &memory, "deactivate STEP1_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "URGENT"]);
    drop(memory);
    assert_all_dropped();

    // Through deactivate_all, at the middle level.
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    npc.panic_in = Some(("deactivate", "WORK_B"));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        deactivate_all(&MAIN, &mut npc, &mut memory, &TickInput::new(1.0, 0.0))
    }));
    assert!(caught.is_err());
    assert_abandoned(&mut npc, &memory, "deactivate WORK_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn panic_in_decide_after_set_drops_that_dblock_and_every_block() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // URGENT is probed for preemption; it writes its ticket, then panics.
    npc.panic_in = Some(("decide", "URGENT"));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    // One ticket while `working` decided, one in the tick that panicked.
    assert_eq!(npc.made_by("URGENT").len(), 2, "the ticket was set");
    assert_abandoned(&mut npc, &memory, "decide URGENT");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();

    // A decide during activation, below an activated group.
    let mut npc = Npc::accepting(&["WORK", "STEP1"]);
    npc.panic_in = Some(("decide", "STEP1"));
    let mut memory = MAIN.new_memory(0);
    panicking_tick(&MAIN, &mut npc, &mut memory, 0.0);
    assert_abandoned(&mut npc, &memory, "decide STEP1");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "WORK", "STEP1"]);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn panic_in_memory_default_drops_every_block_and_the_pending_dblock_once() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // URGENT preempts: WORK and STEP1 are deactivated, then building
    // URGENT_B's memory panics while URGENT's ticket waits in the DBlock.
    npc.score.insert("URGENT", 1.0);
    PANIC_IN_NEXT_DEFAULT.with(|p| p.set(true));
    panicking_tick(&MAIN, &mut npc, &mut memory, 1.0);
    assert!(!PANIC_IN_NEXT_DEFAULT.with(Cell::get), "Default was called");
    assert_eq!(npc.made_by("URGENT").len(), 2);
    assert_abandoned(&mut npc, &memory, "deactivate WORK_B");
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "URGENT"]);
    drop(memory);
    assert_all_dropped();

    // The very first block of an idle memory.
    let mut npc = Npc::default();
    let mut memory = MAIN.new_memory(0);
    PANIC_IN_NEXT_DEFAULT.with(|p| p.set(true));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tick(&MAIN, &mut npc, &mut memory, &TickInput::new(0.0, 1.0))
    }));
    assert!(caught.is_err());
    assert!(memory.is_idle() && memory.block_behavior(0).is_none());
    assert!(npc.take().is_empty(), "no callback ran");
    assert_all_dropped();
    assert_next_tick_works(&mut npc, &mut memory, &["ROOT", "IDLE"]);
    drop(memory);
    assert_all_dropped();
}

// ---------------------------------------------------------------------------
// Block types.

#[test]
fn zero_sized_memory_is_built_and_dropped_once_per_activation() {
    fresh();
    assert_eq!(size_of::<Zst>(), 0);
    let mut npc = Npc::default();
    npc.score.insert("ZST_D", 1.0);
    let mut memory = ZERO.new_memory(0);
    run(&ZERO, &mut npc, &mut memory, 0.0);
    run(&ZERO, &mut npc, &mut memory, 1.0);
    assert_eq!(path(&memory), ["Z_ROOT", "ZST_D"]);
    assert_eq!(memory.block_behavior(1).map(|b| b.name()), Some("ZST_B"));
    assert_eq!(zst_live(), 1);
    assert_eq!(npc.take(), ["activate ZST_B", "tick ZST_B", "tick ZST_B"]);

    // It ends: dropped; IDLE runs; then ZST_D preempts IDLE again.
    npc.ends.insert("ZST_B");
    run(&ZERO, &mut npc, &mut memory, 2.0);
    assert_eq!(path(&memory), ["Z_ROOT", "IDLE"]);
    assert_eq!(
        (ZST_MADE.with(Cell::get), ZST_DROPPED.with(Cell::get)),
        (1, 1)
    );
    npc.ends.clear();
    run(&ZERO, &mut npc, &mut memory, 3.0);
    assert_eq!(path(&memory), ["Z_ROOT", "ZST_D"]);
    assert_eq!(zst_live(), 1);

    memory.reset();
    assert_eq!(
        (ZST_MADE.with(Cell::get), ZST_DROPPED.with(Cell::get)),
        (2, 2)
    );
    run(&ZERO, &mut npc, &mut memory, 4.0);
    drop(memory);
    assert_eq!(
        (ZST_MADE.with(Cell::get), ZST_DROPPED.with(Cell::get)),
        (3, 3)
    );
    assert_all_dropped();
}

#[test]
fn drop_heavy_memory_owns_its_heap_and_frees_it_on_every_path() {
    fresh();
    let mut npc = Npc::accepting(&["HEAVY"]);
    let mut memory = HEAVY_TREE.new_memory(0);
    for t in 0..3 {
        run(&HEAVY_TREE, &mut npc, &mut memory, f64::from(t));
    }
    let id = npc.last_got("HEAVY_B").memory;
    assert_eq!(npc.seen["HEAVY_B"], (id, 3));
    // The block's own `Mem` plus one more on its heap per tick.
    assert_eq!(mems_live(), 1 + 3);

    // Ending: the whole value goes, heap included.
    npc.ends.insert("HEAVY_B");
    run(&HEAVY_TREE, &mut npc, &mut memory, 3.0);
    assert_eq!(path(&memory), ["H_ROOT", "IDLE"]);
    assert_eq!(mems_live(), 1, "IDLE_B's block only");
    npc.ends.clear();

    // Preemption of IDLE, then a panic in HEAVY_B's tick.
    run(&HEAVY_TREE, &mut npc, &mut memory, 4.0);
    assert_eq!(path(&memory), ["H_ROOT", "HEAVY"]);
    npc.panic_in = Some(("tick", "HEAVY_B"));
    panicking_tick(&HEAVY_TREE, &mut npc, &mut memory, 5.0);
    assert_abandoned(&mut npc, &memory, "tick HEAVY_B");
    npc.panic_in = None;

    // Reset, then drop, each with a heavy value in the block.
    run(&HEAVY_TREE, &mut npc, &mut memory, 6.0);
    memory.reset();
    assert_all_dropped();
    run(&HEAVY_TREE, &mut npc, &mut memory, 7.0);
    run(&HEAVY_TREE, &mut npc, &mut memory, 8.0);
    assert_eq!(mems_live(), 1 + 2);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn memory_exactly_filling_a_custom_block_size() {
    fresh();
    assert_eq!(FILL.block_size(), 64);
    let mut npc = Npc::default();
    let mut memory: FillMemory = FILL.new_memory(0);
    for t in 0..3 {
        run(&FILL, &mut npc, &mut memory, f64::from(t));
    }
    assert_eq!(path(&memory), ["F_ROOT", "F_LEAF"]);
    assert_eq!(npc.seen["F_GROUP_B"].1, 3);
    assert_eq!(npc.seen["F_LEAF_B"].1, 3);
    assert_eq!(mems_live(), 2);

    // The leaf ends (F_ROOT then has nothing else, so it fails too and
    // the agent is idle); the next tick builds both again.
    npc.ends.insert("F_LEAF_B");
    run(&FILL, &mut npc, &mut memory, 3.0);
    assert!(memory.is_idle());
    assert_all_dropped();
    npc.ends.clear();
    run(&FILL, &mut npc, &mut memory, 4.0);
    run(&FILL, &mut npc, &mut memory, 5.0);
    assert_eq!(mems_live(), 2);
    deactivate_all(&FILL, &mut npc, &mut memory, &TickInput::new(6.0, 0.0)).unwrap();
    assert_all_dropped();
    run(&FILL, &mut npc, &mut memory, 7.0);
    drop(memory);
    assert_all_dropped();
}

// ---------------------------------------------------------------------------
// DBlocks.

#[test]
fn dblock_is_moved_into_activate_with_its_value() {
    fresh();
    let mut npc = Npc::accepting(&["KEEP"]);
    let mut memory = KEEPING.new_memory(0);
    run(&KEEPING, &mut npc, &mut memory, 0.0);
    let made = npc.made_by("KEEP");
    assert_eq!(made.len(), 1);
    // The draft was replaced (and dropped) by the second `set`; the final
    // value reached `activate`, which moved it into the memory block.
    let a = npc.last_got("KEEP_B");
    assert_eq!(a.ticket, Some(("KEEP", made[0])));
    assert_eq!(tickets_live(), 1, "the same value, not a copy");
    assert!(TICKETS.with(|s| s.borrow().contains(&made[0])));
    run(&KEEPING, &mut npc, &mut memory, 1.0);
    assert_eq!(npc.seen["KEEP_B"], (made[0], 2));
    assert_no_double_drop();

    // It lives exactly as long as the block that holds it.
    memory.reset();
    assert_all_dropped();
    run(&KEEPING, &mut npc, &mut memory, 2.0);
    assert_eq!(tickets_live(), 1);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn rejected_decide_drops_its_dblock_before_the_next_decide() {
    fresh();
    let mut npc = Npc::default();
    let mut memory = working(&mut npc);
    // From idle: URGENT wrote a ticket and rejected; WORK and STEP1 wrote
    // theirs and accepted. Every decide saw no DBlock left over.
    assert!(
        npc.live_at_decide
            .borrow()
            .iter()
            .all(|&(_, live)| live == 0),
        "{:?}",
        npc.live_at_decide.borrow()
    );
    assert_eq!(npc.made_by("URGENT").len(), 1);
    // Each tick URGENT is probed, writes a ticket and rejects.
    for t in 1..4 {
        run(&MAIN, &mut npc, &mut memory, f64::from(t));
        assert_eq!(tickets_live(), 0);
    }
    assert_eq!(npc.made_by("URGENT").len(), 4);

    // A redecide after STEP1 ends: STEP1 is masked, STEP2 rejects, WORK
    // fails, ROOT redecides: URGENT rejects, IDLE runs.
    npc.live_at_decide.borrow_mut().clear();
    npc.ends.insert("STEP1_B");
    run(&MAIN, &mut npc, &mut memory, 4.0);
    assert_eq!(path(&memory), ["ROOT", "IDLE"]);
    assert_eq!(
        *npc.live_at_decide.borrow(),
        [("URGENT", 0), ("STEP2", 0), ("URGENT", 0)]
    );
    assert_eq!(npc.last_got("IDLE_B").ticket, None);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn dblock_without_an_activate_to_take_it_is_dropped_at_activation() {
    fresh();
    let mut npc = Npc::accepting(&["SILENT"]);
    let mut memory = SILENCE.new_memory(0);
    run(&SILENCE, &mut npc, &mut memory, 0.0);
    assert_eq!(path(&memory), ["SIL_ROOT", "SILENT"]);
    assert_eq!(npc.made_by("SILENT").len(), 1);
    // Dropped on activation, not later with the tick's scratch.
    assert_eq!(npc.live_at_tick, [("SILENT_B", 0)]);
    assert_eq!(tickets_live(), 0);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn scored_group_hands_only_the_winners_dblock_to_activate() {
    fresh();
    let mut npc = Npc::default();
    npc.score.extend([("SA", 1.0), ("SB", 3.0), ("SC", 2.0)]);
    let mut memory = SCORED.new_memory(0);
    run(&SCORED, &mut npc, &mut memory, 0.0);
    assert_eq!(path(&memory), ["S_ROOT", "SB"]);
    assert_eq!(npc.got.len(), 1);
    assert_eq!(npc.got[0].ticket, Some(("SB", npc.made_by("SB")[0])));
    assert_eq!(npc.made.borrow().len(), 3);
    // The losers' tickets were gone before the winner ran.
    assert_eq!(npc.live_at_tick, [("SB_B", 0)]);

    // Challenges while SB runs: SA and SC write tickets and lose.
    run(&SCORED, &mut npc, &mut memory, 1.0);
    assert_eq!(path(&memory), ["S_ROOT", "SB"]);
    assert_eq!((npc.made_by("SA").len(), npc.made_by("SC").len()), (2, 2));
    assert_eq!(npc.live_at_tick.last(), Some(&("SB_B", 0)));

    // SC beats SB: the ticket SC wrote in this tick reaches SC_B.
    npc.score.insert("SC", 5.0);
    run(&SCORED, &mut npc, &mut memory, 2.0);
    assert_eq!(path(&memory), ["S_ROOT", "SC"]);
    let sc = npc.made_by("SC");
    assert_eq!(npc.last_got("SC_B").ticket, Some(("SC", sc[sc.len() - 1])));
    assert_eq!(npc.got.len(), 2);
    assert_eq!(npc.live_at_tick.last(), Some(&("SC_B", 0)));
    assert_eq!(tickets_live(), 0);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn random_group_hands_only_the_drawn_dblock_to_activate() {
    fresh();
    for seed in 0..4 {
        let mut npc = Npc::accepting(&["RA", "RB", "RC"]);
        let mut memory = RANDOM.new_memory(seed);
        run(&RANDOM, &mut npc, &mut memory, 0.0);
        let p = path(&memory);
        let winner = p[1];
        assert_eq!(npc.got.len(), 1);
        assert_eq!(npc.got[0].ticket, Some((winner, npc.made_by(winner)[0])));
        assert_eq!(npc.made.borrow().len(), 3, "every child was decided");
        // The others' tickets were gone before the winner ran.
        assert_eq!(npc.live_at_tick.len(), 1);
        assert_eq!(npc.live_at_tick[0].1, 0);
        assert_eq!(tickets_live(), 0);
        drop(memory);
        assert_all_dropped();
    }
}

#[test]
fn delegating_group_passes_the_leafs_dblock_to_its_activate() {
    fresh();
    let mut npc = Npc::accepting(&["DL2"]);
    let mut memory = DELEGATING.new_memory(0);
    run(&DELEGATING, &mut npc, &mut memory, 0.0);
    assert_eq!(path(&memory), ["D_ROOT", "DG", "DL2"]);
    assert_eq!(
        npc.take(),
        [
            "decide DL1",
            "decide DL2",
            "activate DG_B",
            "tick DG_B",
            "activate DL2_B",
            "tick DL2_B",
        ],
        "DL2 is decided once"
    );
    // DL1's ticket was gone before DL2 decided; DL2's reached DL2_B, and
    // the group behavior got none.
    assert_eq!(*npc.live_at_decide.borrow(), [("DL1", 0), ("DL2", 0)]);
    assert_eq!(npc.last_got("DG_B").ticket, None);
    assert_eq!(
        npc.last_got("DL2_B").ticket,
        Some(("DL2", npc.made_by("DL2")[0]))
    );
    assert_eq!(
        npc.live_at_tick,
        [("DG_B", 1), ("DL2_B", 0)],
        "carried past DG_B"
    );
    assert_eq!(tickets_live(), 0);
    assert_eq!(mems_live(), 2);
    drop(memory);
    assert_all_dropped();
}

#[test]
fn dblock_of_a_chain_that_fails_above_its_leaf_is_dropped_before_the_next_decide() {
    // The delegating group's behavior ends (or fails to activate) before
    // DL2 is entered: DL2's ticket never reaches an activate and must be
    // gone before FALLBACK decides.
    for fails in ["ends", "fail_activate"] {
        fresh();
        let mut npc = Npc::accepting(&["DL2", "FALLBACK"]);
        match fails {
            "ends" => npc.ends.insert("DG_B"),
            _ => npc.fail_activate.insert("DG_B"),
        };
        let mut memory = DELEGATING.new_memory(0);
        run(&DELEGATING, &mut npc, &mut memory, 0.0);
        assert_eq!(path(&memory), ["D_ROOT", "FALLBACK"], "{fails}");
        assert!(npc.got.iter().all(|a| a.behavior != "DL2_B"), "{fails}");
        assert_eq!(
            npc.live_at_decide.borrow().last(),
            Some(&("FALLBACK", 0)),
            "{fails}: DL2's ticket outlived its chain"
        );
        assert_eq!(tickets_live(), 0, "{fails}");
        drop(memory);
        assert_all_dropped();
    }
}
