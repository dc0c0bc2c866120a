//! Hostile tests of the tunables' promises: each test tries to make a
//! documented promise false through the public API (two crowds of one
//! tree ticking at once, nested crowd ticks, panics, loads, bad values,
//! identity across crowds), and asserts what the docs promise.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use bt_core::{
    Ctx, Schedule, TickInput, TreeShared, TuneError, TuneValue, behavior, deactivate_all, decider,
    group, leaf, par_tick_all, tick, tick_all, tick_range, tick_scheduled, tick_traced, tree,
    tunables,
};

tunables! { pub ATK_TUNING:
    /// A float the probes read.
    LEVEL: f64 = 0.25, 0.0..=1000.0;
    /// An int the probes read.
    COUNT: i64 = 3, -5..=1_000_000;
    /// A flag.
    FLAG: bool = false;
    /// A choice.
    MODE: enum Mode { Calm, Alert, Panic } = Calm;
    /// Probes let through the gate at once.
    GATE: i64 = 5, 1..=65_535;
}

tunables! { pub OTHER_TUNING:
    /// Slots of the tuned gate.
    SLOTS: i64 = 2, 1..=50;
}

/// What a probe runs at the start of its tick, before it reads.
type Hook = Arc<dyn Fn(usize) + Send + Sync>;

/// An agent that records every value of `LEVEL` and `COUNT` its ticks
/// read, and the last `LEVEL` its decider's `when` read.
#[derive(Default)]
pub struct Probe {
    id: usize,
    seen: Vec<f64>,
    counts: Vec<i64>,
    when_seen: AtomicU64,
    deactivated: Vec<f64>,
    hook: Option<Hook>,
}

impl Probe {
    fn new(id: usize) -> Self {
        Probe {
            id,
            ..Probe::default()
        }
    }
    fn hooked(id: usize, hook: &Hook) -> Self {
        Probe {
            id,
            hook: Some(Arc::clone(hook)),
            ..Probe::default()
        }
    }
    fn when_last(&self) -> f64 {
        f64::from_bits(self.when_seen.load(Ordering::Relaxed))
    }
}

behavior! { READ: Probe,
    tick: |p, cx| {
        if let Some(h) = &p.hook {
            h(p.id);
        }
        p.seen.push(cx.tuned(LEVEL));
        p.counts.push(cx.tuned(COUNT));
        true
    },
    deactivate: |p, cx| p.deactivated.push(cx.tuned(LEVEL)),
}
decider! { READING: Probe => READ,
    when: |p, d| { p.when_seen.store(d.tuned(LEVEL).to_bits(), Ordering::Relaxed); true },
}
group! { PROBE_ROOT: Probe, prioritized [READING] }
tree! { PROBE: Probe = PROBE_ROOT, memory: ProbeMemory, tunables: ATK_TUNING }
// The probe behind a tuned gate: shared state (`par_tick_all` ticks it in
// two phases on every thread).
decider! { GATED_READING: Probe => READ, gate: tunable(GATE) }
decider! { OPEN_READING: Probe => READ }
group! { GATED_ROOT: Probe, prioritized [GATED_READING, OPEN_READING] }
tree! { GATED: Probe = GATED_ROOT, memory: GatedMemory, tunables: ATK_TUNING }
// A second tree with the same table.
tree! { PROBE_TWIN: Probe = PROBE_ROOT, memory: ProbeTwinMemory, tunables: ATK_TUNING }
// A tree of another table whose closures read `ATK_TUNING`'s tunables.
tree! { STRANGER: Probe = PROBE_ROOT, memory: StrangerMemory, tunables: OTHER_TUNING }

fn input(now: f64) -> impl FnMut(usize, &mut Probe) -> TickInput {
    move |_, _| TickInput::new(now, 0.1)
}

fn crowd(
    shared: &Arc<TreeShared>,
    n: usize,
    hook: Option<&Hook>,
) -> (Vec<Probe>, Vec<ProbeMemory>) {
    let agents = (0..n)
        .map(|i| match hook {
            Some(h) => Probe::hooked(i, h),
            None => Probe::new(i),
        })
        .collect();
    let memories = (0..n)
        .map(|i| PROBE.new_memory_in(shared, i as u64))
        .collect();
    (agents, memories)
}

/// Every value read by the crowd's agents since `from`, flattened.
fn reads(agents: &[Probe], from: usize) -> Vec<f64> {
    agents
        .iter()
        .flat_map(|a| a.seen[from..].iter().copied())
        .collect()
}

/// The tests of this file, one at a time: each starts threads of its own
/// (up to eight) that meet at barriers.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What a tick of no crowd reads: the context a unit test makes.
fn outside() -> (f64, i64) {
    let cx = Ctx::at(0.0, 0.1);
    (cx.tuned(LEVEL), cx.tuned(COUNT))
}

// ---------------------------------------------------------------------------
// Many crowds of one tree, ticking at once.

/// Eight threads, eight crowds of one tree, each tuned to its own values
/// that change every round; a barrier inside the first agent's tick makes
/// all eight crowd ticks run at once. Every read must be its crowd's.
#[test]
#[cfg_attr(miri, ignore)]
fn eight_threads_each_read_their_own_crowds_values() {
    let _serial = serial();
    const THREADS: usize = 8;
    const ROUNDS: usize = 60;
    const AGENTS: usize = 16;
    let barrier = Arc::new(Barrier::new(THREADS));
    let wrong = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            let wrong = Arc::clone(&wrong);
            std::thread::spawn(move || {
                let shared = PROBE.new_shared(0);
                let b = Arc::clone(&barrier);
                let hook: Hook = Arc::new(move |id| {
                    if id == 0 || id == AGENTS - 1 {
                        b.wait();
                    }
                });
                let (mut agents, mut memories) = crowd(&shared, AGENTS, Some(&hook));
                for round in 0..ROUNDS {
                    let level = (t * 100 + round) as f64;
                    shared.tune(LEVEL, level).unwrap();
                    shared.tune(COUNT, (t * 1000 + round) as i64).unwrap();
                    let from = agents[0].seen.len();
                    tick_all(&PROBE, &mut agents, &mut memories, input(round as f64));
                    for a in &agents {
                        let ok = a.seen[from..] == [level]
                            && a.counts[from..] == [(t * 1000 + round) as i64]
                            && (round > 0 || a.when_last() == level);
                        if !ok {
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                // Outside any tick, on this thread: the defaults.
                outside()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (0.25, 3));
    }
    assert_eq!(
        wrong.load(Ordering::Relaxed),
        0,
        "agents that read another crowd's values"
    );
}

/// Eight threads tick eight crowds of one tree each through another entry
/// point (tick_all, tick_range, par_tick_all, tick_scheduled, agent by
/// agent with `tick`, `tick_traced`), in a loop, at once: every read is the
/// ticking crowd's.
#[test]
#[cfg_attr(miri, ignore)]
fn every_entry_point_at_once_reads_its_own_crowd() {
    let _serial = serial();
    const THREADS: usize = 8;
    const ROUNDS: usize = 40;
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                let n = if t % 6 == 2 { 1500 } else { 40 };
                let shared = PROBE.new_shared(0);
                let (mut agents, mut memories) = crowd(&shared, n, None);
                let mut schedule = Schedule::new(n, 0.0);
                start.wait();
                let mut bad = Vec::new();
                for round in 0..ROUNDS {
                    let level = (t * 100 + round + 1) as f64;
                    shared.tune(LEVEL, level).unwrap();
                    let from = agents[0].seen.len();
                    let now = round as f64 + 1.0;
                    match t % 6 {
                        0 => {
                            tick_all(&PROBE, &mut agents, &mut memories, input(now));
                        }
                        1 => {
                            tick_range(&PROBE, &mut agents, &mut memories, 0..n, input(now));
                        }
                        2 => {
                            par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
                                TickInput::new(now, 0.1)
                            });
                        }
                        3 => {
                            tick_scheduled(
                                &PROBE,
                                &mut agents,
                                &mut memories,
                                &mut schedule,
                                now,
                                |_, _, dt| TickInput::new(now, dt),
                            );
                        }
                        4 => {
                            shared.apply_tuning();
                            for (a, m) in agents.iter_mut().zip(&mut memories) {
                                tick(&PROBE, a, m, &TickInput::new(now, 0.1)).unwrap();
                            }
                        }
                        _ => {
                            shared.apply_tuning();
                            for (a, m) in agents.iter_mut().zip(&mut memories) {
                                let mut rec = bt_core::TraceRecorder::new();
                                tick_traced(&PROBE, a, m, &TickInput::new(now, 0.1), &mut rec)
                                    .unwrap();
                            }
                        }
                    }
                    let got = reads(&agents, from);
                    if got.len() != n || got.iter().any(|&v| v != level) {
                        bad.push((round, got.into_iter().find(|&v| v != level)));
                    }
                }
                (t, bad)
            })
        })
        .collect();
    for h in handles {
        let (t, bad) = h.join().unwrap();
        assert!(
            bad.is_empty(),
            "thread {t}: rounds with wrong reads {bad:?}"
        );
    }
}

/// A crowd ticked inside another crowd's callback (same tree, other
/// values): the inner agents read the inner crowd's values, and the outer
/// agents after the call read the outer crowd's again.
#[test]
fn a_crowd_ticked_inside_anothers_callback_reads_its_own() {
    let _serial = serial();
    let outer = PROBE.new_shared(0);
    let inner = PROBE.new_shared(0);
    outer.tune(LEVEL, 10.0).unwrap();
    inner.tune(LEVEL, 20.0).unwrap();
    inner.tune(COUNT, 7).unwrap();
    let inner_crowd = Arc::new(Mutex::new(crowd(&inner, 5, None)));
    let ic = Arc::clone(&inner_crowd);
    let hook: Hook = Arc::new(move |id| {
        if id == 2 {
            let mut guard = ic.lock().unwrap();
            let (agents, memories) = &mut *guard;
            tick_all(&PROBE, agents, memories, input(1.0));
            // Then agent by agent, as a game might.
            for (a, m) in agents.iter_mut().zip(memories.iter_mut()) {
                tick(&PROBE, a, m, &TickInput::new(1.0, 0.1)).unwrap();
            }
        }
    });
    let (mut agents, mut memories) = crowd(&outer, 5, Some(&hook));
    tick_all(&PROBE, &mut agents, &mut memories, input(1.0));
    assert_eq!(reads(&agents, 0), [10.0; 5]);
    for a in &agents {
        assert_eq!((a.counts[0], a.when_last()), (3, 10.0));
    }
    let inner_agents = &inner_crowd.lock().unwrap().0;
    assert_eq!(reads(inner_agents, 0), [20.0; 10]);
    assert!(inner_agents.iter().all(|a| a.counts == [7, 7]));
    assert_eq!(outside(), (0.25, 3));
}

/// Two crowds alternate on one thread, each changed between its ticks
/// the same number of times: what a tick reads follows its crowd, not a
/// count of changes that two crowds share.
#[test]
fn alternating_crowds_with_equal_change_counts_read_their_own() {
    let _serial = serial();
    let a = PROBE.new_shared(0);
    let b = PROBE.new_shared(0);
    let (mut aa, mut am) = crowd(&a, 3, None);
    let (mut ba, mut bm) = crowd(&b, 3, None);
    for round in 0..20 {
        let (va, vb) = (round as f64 + 0.5, round as f64 + 100.5);
        a.tune(LEVEL, va).unwrap();
        b.tune(LEVEL, vb).unwrap();
        let from = aa[0].seen.len();
        tick_all(&PROBE, &mut aa, &mut am, input(round as f64));
        tick_all(&PROBE, &mut ba, &mut bm, input(round as f64));
        // And once more each, unchanged, the other crowd ticked last.
        tick_all(&PROBE, &mut aa, &mut am, input(round as f64 + 0.5));
        tick_all(&PROBE, &mut ba, &mut bm, input(round as f64 + 0.5));
        assert_eq!(reads(&aa, from), [va; 6], "round {round}");
        assert_eq!(reads(&ba, from), [vb; 6], "round {round}");
    }
}

/// A crowd is dropped and a new one made, likely at the same address,
/// tuned as many times to another value: its first tick reads its own
/// value, not the dropped crowd's.
#[test]
fn a_new_crowd_at_a_dropped_crowds_address_reads_its_own_values() {
    let _serial = serial();
    let mut stale = Vec::new();
    for round in 0..50 {
        let level = if round % 2 == 0 { 0.9 } else { 0.6 };
        let shared = PROBE.new_shared(0);
        shared.tune(LEVEL, level).unwrap();
        let (mut agents, mut memories) = crowd(&shared, 2, None);
        tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
        if reads(&agents, 0) != [level; 2] {
            stale.push((round, reads(&agents, 0)));
        }
        drop(memories);
        drop(shared);
    }
    assert!(
        stale.is_empty(),
        "rounds that read a dropped crowd's values: {stale:?}"
    );
}

/// The same with two different shared-state sizes in between, and the
/// single-agent `tick` (which no crowd tick precedes).
#[test]
fn a_new_crowd_ticked_agent_by_agent_reads_its_own_values() {
    let _serial = serial();
    let mut stale = Vec::new();
    for round in 0..50 {
        let level = 1.0 + (round % 3) as f64;
        let shared = PROBE.new_shared(0);
        shared.tune(LEVEL, level).unwrap();
        shared.apply_tuning();
        let mut agent = Probe::new(0);
        let mut memory = PROBE.new_memory_in(&shared, 0);
        tick(&PROBE, &mut agent, &mut memory, &TickInput::new(0.0, 0.1)).unwrap();
        if agent.seen != [level] {
            stale.push((round, agent.seen.clone()));
        }
    }
    assert!(
        stale.is_empty(),
        "rounds that read a dropped crowd's values: {stale:?}"
    );
}

/// Outside any tick a tunable reads its default, on a thread that ticks
/// nothing, while another thread is in the middle of a crowd tick whose
/// values differ: a unit test calling a behavior with `Ctx::at` reads
/// the defaults, whatever a test beside it ticks.
#[test]
#[cfg_attr(miri, ignore)]
fn outside_a_tick_reads_the_default_while_another_thread_ticks() {
    let _serial = serial();
    let (read, seen) = while_crowds_tick(&[42.0], outside);
    assert_eq!(seen, [[42.0]]);
    assert_eq!(read, (0.25, 3), "read outside any tick on another thread");
}

/// Runs `read` while a crowd of `ATK_TUNING` with `LEVEL` at each of
/// `levels` (and `COUNT` at 99) is in the middle of its tick on a thread
/// of its own; what `read` gave, and what each crowd's agent read.
fn while_crowds_tick<R>(levels: &[f64], read: impl FnOnce() -> R) -> (R, Vec<Vec<f64>>) {
    let inside = Arc::new(Barrier::new(levels.len() + 1));
    let done = Arc::new(Barrier::new(levels.len() + 1));
    let tickers: Vec<_> = levels
        .iter()
        .map(|&level| {
            let (i2, d2) = (Arc::clone(&inside), Arc::clone(&done));
            std::thread::spawn(move || {
                let shared = PROBE.new_shared(0);
                shared.tune(LEVEL, level).unwrap();
                shared.tune(COUNT, 99).unwrap();
                let hook: Hook = Arc::new(move |_| {
                    i2.wait();
                    d2.wait();
                });
                let (mut agents, mut memories) = crowd(&shared, 1, Some(&hook));
                tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
                agents[0].seen.clone()
            })
        })
        .collect();
    inside.wait();
    let read = read();
    done.wait();
    let seen = tickers.into_iter().map(|t| t.join().unwrap()).collect();
    (read, seen)
}

/// What an agent of `STRANGER` (another table, whose closure reads
/// `ATK_TUNING`'s tunable) reads in a tick.
fn a_strangers_read() -> Vec<f64> {
    let stranger = STRANGER.new_shared(0);
    let mut agents = vec![Probe::new(0)];
    let mut memories = vec![STRANGER.new_memory_in(&stranger, 0)];
    tick_all(&STRANGER, &mut agents, &mut memories, input(0.0));
    agents[0].seen.clone()
}

/// A tree of another table whose closure reads `ATK_TUNING`'s tunable,
/// on a thread where no crowd of `ATK_TUNING` ticks, while one ticks on
/// another thread with other values: it reads the default, whatever the
/// other thread does.
#[test]
#[cfg_attr(miri, ignore)]
fn a_tunable_of_another_table_read_on_a_quiet_thread() {
    let _serial = serial();
    let (read, seen) = while_crowds_tick(&[42.0], a_strangers_read);
    assert_eq!(seen, [[42.0]]);
    assert_eq!(read, [0.25]);
}

/// The same read while two crowds of `ATK_TUNING` tick on two other
/// threads (42 and 43): the default still.
#[test]
#[cfg_attr(miri, ignore)]
fn a_tunable_of_another_table_with_two_crowds_ticking_elsewhere() {
    let _serial = serial();
    let (read, seen) = while_crowds_tick(&[42.0, 43.0], a_strangers_read);
    assert_eq!(seen, [[42.0], [43.0]]);
    assert_eq!(read, [0.25]);
}

/// Two trees with one table, their crowds ticking at once on two
/// threads: each reads its own crowd's values.
#[test]
#[cfg_attr(miri, ignore)]
fn two_trees_of_one_table_at_once_read_their_own() {
    let _serial = serial();
    let barrier = Arc::new(Barrier::new(2));
    let b1 = Arc::clone(&barrier);
    let one = std::thread::spawn(move || {
        let shared = PROBE.new_shared(0);
        shared.tune(LEVEL, 1.0).unwrap();
        let hook: Hook = Arc::new(move |_| _ = b1.wait());
        let (mut agents, mut memories) = crowd(&shared, 4, Some(&hook));
        for round in 0..30 {
            tick_all(&PROBE, &mut agents, &mut memories, input(round as f64));
        }
        reads(&agents, 0)
    });
    let twin = PROBE_TWIN.new_shared(0);
    twin.tune(LEVEL, 2.0).unwrap();
    let b2 = Arc::clone(&barrier);
    let hook: Hook = Arc::new(move |_| _ = b2.wait());
    let mut agents: Vec<Probe> = (0..4).map(|i| Probe::hooked(i, &hook)).collect();
    let mut memories: Vec<ProbeTwinMemory> =
        (0..4).map(|i| PROBE_TWIN.new_memory_in(&twin, i)).collect();
    for round in 0..30 {
        tick_all(&PROBE_TWIN, &mut agents, &mut memories, input(round as f64));
    }
    assert_eq!(one.join().unwrap(), [1.0; 120]);
    assert_eq!(reads(&agents, 0), [2.0; 120]);
}

// ---------------------------------------------------------------------------
// Changes staged mid-tick, loads and applies between ticks.

/// A callback stages a change: no later agent of the same tick reads it,
/// on every crowd-tick entry point; every agent of the next tick does.
#[test]
fn a_change_staged_by_a_callback_waits_for_the_next_tick() {
    let _serial = serial();
    for path in 0..4 {
        let shared = PROBE.new_shared(0);
        let s = Arc::downgrade(&shared);
        let hook: Hook = Arc::new(move |id| {
            if id == 1 {
                let s = s.upgrade().unwrap();
                let next = s.tuned(LEVEL) + 1.0;
                s.tune(LEVEL, next).unwrap();
                // Even applied by the callback itself (which the docs
                // say not to do), it must not reach half the crowd?
            }
        });
        let n = 600;
        let (mut agents, mut memories) = crowd(&shared, n, Some(&hook));
        let mut schedule = Schedule::new(n, 0.0);
        for round in 0..3 {
            let from = agents[0].seen.len();
            let now = round as f64 + 1.0;
            match path {
                0 => _ = tick_all(&PROBE, &mut agents, &mut memories, input(now)),
                1 => _ = tick_range(&PROBE, &mut agents, &mut memories, 0..n, input(now)),
                2 => {
                    _ = par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
                        TickInput::new(now, 0.1)
                    });
                }
                _ => {
                    _ = tick_scheduled(
                        &PROBE,
                        &mut agents,
                        &mut memories,
                        &mut schedule,
                        now,
                        |_, _, dt| TickInput::new(now, dt),
                    );
                }
            }
            let want = 0.25 + round as f64;
            let got = reads(&agents, from);
            assert!(
                got.iter().all(|&v| v == want),
                "path {path} round {round}: {got:?}"
            );
            assert_eq!(got.len(), n);
        }
    }
}

/// A change staged by another thread while a crowd tick is halfway:
/// the agents after it read the old value, the next tick the new one.
#[test]
#[cfg_attr(miri, ignore)]
fn a_change_staged_by_another_thread_mid_tick_waits() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let (go, went) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let (g, w) = (Arc::clone(&go), Arc::clone(&went));
    let hook: Hook = Arc::new(move |id| {
        if id == 3 {
            g.wait();
            w.wait();
        }
    });
    let s = Arc::clone(&shared);
    let tuner = std::thread::spawn(move || {
        go.wait();
        s.tune(LEVEL, 0.75).unwrap();
        s.tune(MODE, Mode::Panic).unwrap();
        went.wait();
    });
    let (mut agents, mut memories) = crowd(&shared, 8, Some(&hook));
    tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
    tuner.join().unwrap();
    assert_eq!(reads(&agents, 0), [0.25; 8]);
    assert_eq!(shared.tuned(MODE), Mode::Calm);
    // One more tick to exercise the scheduled hook path no more.
    for a in &mut agents {
        a.hook = None;
    }
    tick_all(&PROBE, &mut agents, &mut memories, input(1.0));
    assert_eq!(reads(&agents, 1), [0.75; 8]);
    assert_eq!(
        (shared.tuned(MODE), shared.tuning_changes()),
        (Mode::Panic, 2)
    );
}

/// A load between ticks (restore_crowd) is read by the next tick, even
/// when the crowd ticked with its values just before,
/// and when another crowd of the tree ticked in between.
#[test]
fn a_load_between_ticks_is_read_by_the_next_tick() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let (mut agents, mut memories) = crowd(&shared, 3, None);
    shared.tune(LEVEL, 0.7).unwrap();
    shared.tune(MODE, Mode::Alert).unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
    let save = serde_json::to_string(&shared.snapshot_crowd(&memories, 0.0)).unwrap();
    shared.tune(LEVEL, 0.2).unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(1.0));
    assert_eq!(reads(&agents, 1), [0.2; 3]);
    // A change staged before the load: dropped by it.
    shared.tune(LEVEL, 0.9).unwrap();
    let changes = shared.tuning_changes();
    shared
        .restore_crowd(
            &PROBE,
            1.0,
            &mut memories,
            &mut serde_json::Deserializer::from_str(&save),
        )
        .unwrap();
    assert_eq!(shared.tuned(LEVEL), 0.7);
    assert_eq!(shared.tuning_changes(), changes + 1);
    tick_all(&PROBE, &mut agents, &mut memories, input(2.0));
    assert_eq!(reads(&agents, 2), [0.7; 3]);
    // Another crowd ticks, then a load into the first: still its own.
    let other = PROBE.new_shared(0);
    other.tune(LEVEL, 5.0).unwrap();
    let (mut oa, mut om) = crowd(&other, 2, None);
    tick_all(&PROBE, &mut oa, &mut om, input(2.0));
    shared
        .restore_crowd(
            &PROBE,
            3.0,
            &mut memories,
            &mut serde_json::Deserializer::from_str(&save),
        )
        .unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(3.0));
    assert_eq!(reads(&agents, 3), [0.7; 3]);
    assert_eq!(oa[0].seen, [5.0]);
    // The same save loaded twice: nothing changes, nothing counts.
    let changes = shared.tuning_changes();
    shared
        .restore_crowd(
            &PROBE,
            3.0,
            &mut memories,
            &mut serde_json::Deserializer::from_str(&save),
        )
        .unwrap();
    assert_eq!(shared.tuning_changes(), changes);
}

/// A load into a crowd that ticked with older values and the load puts back exactly the values in effect before the
/// last apply: the next tick reads the load, for every entry point.
#[test]
fn a_load_then_an_apply_then_a_load_are_each_read() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let (mut agents, mut memories) = crowd(&shared, 2, None);
    let save = serde_json::to_string(&shared.snapshot_crowd(&memories, 0.0)).unwrap();
    for round in 0..6 {
        shared.tune(LEVEL, 3.0).unwrap();
        shared.apply_tuning();
        let mut a = Probe::new(9);
        let mut m = PROBE.new_memory_in(&shared, 9);
        // The single-agent tick, after an apply: 3.0.
        tick(&PROBE, &mut a, &mut m, &TickInput::new(0.0, 0.1)).unwrap();
        assert_eq!(a.seen, [3.0]);
        drop(m);
        shared
            .restore_crowd(
                &PROBE,
                0.0,
                &mut memories,
                &mut serde_json::Deserializer::from_str(&save),
            )
            .unwrap();
        let from = agents[0].seen.len();
        tick_all(&PROBE, &mut agents, &mut memories, input(round as f64));
        assert_eq!(reads(&agents, from), [0.25; 2], "round {round}");
    }
}

/// `apply_tuning` between ticks, then single-agent `tick`, `tick_traced`
/// and `deactivate_all` read the applied values; without the apply they
/// read the values in effect.
#[test]
fn single_agent_calls_read_the_values_in_effect() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let mut agent = Probe::new(0);
    let mut memory = PROBE.new_memory_in(&shared, 0);
    let at = TickInput::new(0.0, 0.1);
    shared.tune(LEVEL, 0.5).unwrap();
    tick(&PROBE, &mut agent, &mut memory, &at).unwrap();
    assert_eq!(agent.seen, [0.25], "staged, not applied");
    shared.apply_tuning();
    tick_traced(
        &PROBE,
        &mut agent,
        &mut memory,
        &at,
        &mut bt_core::TraceRecorder::new(),
    )
    .unwrap();
    assert_eq!(agent.seen, [0.25, 0.5]);
    shared.tune(LEVEL, 0.6).unwrap();
    shared.apply_tuning();
    deactivate_all(&PROBE, &mut agent, &mut memory, &at).unwrap();
    assert_eq!(agent.deactivated, [0.6]);
    assert_eq!(outside(), (0.25, 3));
}

// ---------------------------------------------------------------------------
// Panics.

/// A callback that panics in the middle of a crowd tick: nothing of that
/// crowd is left behind for the reads outside ticks, or for another
/// crowd's ticks, on this thread and on rayon's.
#[test]
fn a_panicking_callback_leaves_no_values_behind() {
    let _serial = serial();
    let boom: Hook = Arc::new(|id| {
        if id == 1 {
            panic!("boom");
        }
    });
    for path in 0..4 {
        let shared = PROBE.new_shared(0);
        shared.tune(LEVEL, 66.0).unwrap();
        shared.tune(COUNT, 66).unwrap();
        let n = 700;
        let (mut agents, mut memories) = crowd(&shared, n, Some(&boom));
        let mut schedule = Schedule::new(n, 0.0);
        let r = catch_unwind(AssertUnwindSafe(|| match path {
            0 => _ = tick_all(&PROBE, &mut agents, &mut memories, input(0.0)),
            1 => _ = tick_range(&PROBE, &mut agents, &mut memories, 0..n, input(0.0)),
            2 => {
                _ = par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
                    TickInput::new(0.0, 0.1)
                })
            }
            _ => {
                _ = tick_scheduled(
                    &PROBE,
                    &mut agents,
                    &mut memories,
                    &mut schedule,
                    1.0,
                    |_, _, dt| TickInput::new(1.0, dt),
                );
            }
        }));
        assert!(r.is_err());
        assert_eq!(outside(), (0.25, 3), "path {path}");
        // On every rayon worker, outside a tick: the defaults.
        let on_workers: Vec<(f64, i64)> = rayon_broadcast_outside();
        assert!(
            on_workers.iter().all(|&v| v == (0.25, 3)),
            "path {path}: {on_workers:?}"
        );
        // Another crowd reads its own, serial and parallel.
        let other = PROBE.new_shared(0);
        other.tune(LEVEL, 11.0).unwrap();
        let (mut oa, mut om) = crowd(&other, n, None);
        tick_all(&PROBE, &mut oa, &mut om, input(0.0));
        par_tick_all(&PROBE, &mut oa, &mut om, |_, _| TickInput::new(0.1, 0.1));
        assert!(reads(&oa, 0).iter().all(|&v| v == 11.0), "path {path}");
        // The crowd itself, its panicking agent now quiet, reads its own.
        for a in &mut agents {
            a.hook = None;
        }
        let from: Vec<usize> = agents.iter().map(|a| a.seen.len()).collect();
        tick_all(&PROBE, &mut agents, &mut memories, input(2.0));
        for (a, f) in agents.iter().zip(from) {
            assert_eq!(a.seen[f..], [66.0], "path {path}");
        }
    }
}

/// Reads of `ATK_TUNING`'s tunables on rayon's workers by a crowd of
/// another table (`par_tick_all` of `STRANGER`): its defaults.
fn rayon_broadcast_outside() -> Vec<(f64, i64)> {
    let stranger = STRANGER.new_shared(0);
    let mut agents: Vec<Probe> = (0..2000).map(Probe::new).collect();
    let mut memories: Vec<StrangerMemory> = (0..2000)
        .map(|i| STRANGER.new_memory_in(&stranger, i as u64))
        .collect();
    par_tick_all(&STRANGER, &mut agents, &mut memories, |_, _| {
        TickInput::new(0.0, 0.1)
    });
    agents.iter().map(|a| (a.seen[0], a.counts[0])).collect()
}

/// A panic in a crowd ticked inside another crowd's callback, caught by
/// that callback: the outer crowd's later agents read the outer values.
#[test]
fn a_nested_crowd_that_panics_leaves_the_outer_crowds_values() {
    let _serial = serial();
    let outer = PROBE.new_shared(0);
    let inner = PROBE.new_shared(0);
    outer.tune(LEVEL, 1.5).unwrap();
    inner.tune(LEVEL, 2.5).unwrap();
    let boom: Hook = Arc::new(|_| panic!("inner boom"));
    let inner_crowd = Arc::new(Mutex::new(crowd(&inner, 3, Some(&boom))));
    let ic = Arc::clone(&inner_crowd);
    let hook: Hook = Arc::new(move |id| {
        if id == 1 {
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut guard = ic.lock().unwrap();
                let (agents, memories) = &mut *guard;
                tick_all(&PROBE, agents, memories, input(0.0));
            }));
            assert!(r.is_err());
        }
    });
    let (mut agents, mut memories) = crowd(&outer, 4, Some(&hook));
    tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
    assert_eq!(reads(&agents, 0), [1.5; 4]);
    assert_eq!(outside(), (0.25, 3));
}

/// A panic inside a single-agent tick of a crowd nested in another's
/// callback, then more single-agent ticks of a third crowd.
#[test]
fn panics_in_single_agent_ticks_unwind_their_scope() {
    let _serial = serial();
    let a = PROBE.new_shared(0);
    let b = PROBE.new_shared(0);
    a.tune(LEVEL, 7.0).unwrap();
    b.tune(LEVEL, 8.0).unwrap();
    a.apply_tuning();
    b.apply_tuning();
    let boom: Hook = Arc::new(|_| panic!("single boom"));
    for _ in 0..5 {
        let mut pa = Probe::hooked(0, &boom);
        let mut ma = PROBE.new_memory_in(&a, 0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            tick(&PROBE, &mut pa, &mut ma, &TickInput::new(0.0, 0.1))
        }));
        assert!(r.is_err());
        assert_eq!(outside(), (0.25, 3));
        let mut pb = Probe::new(0);
        let mut mb = PROBE.new_memory_in(&b, 0);
        tick(&PROBE, &mut pb, &mut mb, &TickInput::new(0.0, 0.1)).unwrap();
        assert_eq!(pb.seen, [8.0]);
    }
}

// ---------------------------------------------------------------------------
// Two crowds in one slice.

/// A crowd tick given memories of two crowds: each agent reads its own
/// crowd's values, on every entry point, wherever the stranger sits (the
/// tick puts in effect the changes of the first memory's crowd only).
#[test]
#[cfg_attr(miri, ignore)]
fn two_crowds_in_one_slice_each_read_their_own() {
    let _serial = serial();
    for path in 0..4 {
        for stranger_at in [1usize, 599] {
            let a = PROBE.new_shared(0);
            let b = PROBE.new_shared(0);
            a.tune(LEVEL, 10.0).unwrap();
            b.tune(LEVEL, 20.0).unwrap();
            b.apply_tuning();
            let n = 600;
            let (mut agents, mut memories) = crowd(&a, n, None);
            memories[stranger_at] = PROBE.new_memory_in(&b, 0);
            let mut schedule = Schedule::new(n, 0.0);
            match path {
                0 => _ = tick_all(&PROBE, &mut agents, &mut memories, input(0.0)),
                1 => _ = tick_range(&PROBE, &mut agents, &mut memories, 0..n, input(0.0)),
                2 => {
                    _ = par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
                        TickInput::new(0.0, 0.1)
                    })
                }
                _ => {
                    _ = tick_scheduled(
                        &PROBE,
                        &mut agents,
                        &mut memories,
                        &mut schedule,
                        1.0,
                        |_, _, dt| TickInput::new(1.0, dt),
                    );
                }
            }
            for (i, agent) in agents.iter().enumerate() {
                let own = if i == stranger_at { 20.0 } else { 10.0 };
                assert_eq!(agent.seen, [own], "path {path}, agent {i}");
            }
            assert_eq!(outside(), (0.25, 3));
        }
    }
}

/// `tick_range` of a part that holds only memories of crowd B, in a slice
/// whose first memory is of crowd A: the tick puts B's staged change in
/// effect (the crowd of the range's first memory), not A's, and B's
/// agents read it.
#[test]
fn tick_range_of_a_part_of_another_crowd() {
    let _serial = serial();
    let a = PROBE.new_shared(0);
    let b = PROBE.new_shared(0);
    a.tune(LEVEL, 1.0).unwrap();
    b.tune(LEVEL, 2.0).unwrap();
    let (mut agents, mut memories) = crowd(&a, 4, None);
    memories[2] = PROBE.new_memory_in(&b, 2);
    memories[3] = PROBE.new_memory_in(&b, 3);
    tick_range(&PROBE, &mut agents, &mut memories, 2..4, input(0.0));
    assert_eq!(reads(&agents, 0), [2.0, 2.0]);
    assert_eq!((a.tuned(LEVEL), b.tuned(LEVEL)), (0.25, 2.0));
}

// ---------------------------------------------------------------------------
// Bad numbers, order and repetition.

/// Values a tunable cannot take are refused, typed and named, and change
/// nothing: NaN, infinities, out of range, wrong kinds, unknown names.
#[test]
fn bad_values_are_refused_and_change_nothing() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let (mut agents, mut memories) = crowd(&shared, 1, None);
    for v in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -1e-300,
        1000.0000001,
        f64::MAX,
    ] {
        let e = shared.tune(LEVEL, v).unwrap_err();
        assert!(
            matches!(e, TuneError::OutOfRange { name: "LEVEL", .. }),
            "{v}: {e}"
        );
        let e = shared.tune_named("LEVEL", TuneValue::Float(v)).unwrap_err();
        assert!(e.to_string().contains("LEVEL"), "{e}");
    }
    let cases: Vec<(&str, TuneValue)> = vec![
        ("COUNT", TuneValue::Float(2.5)),
        ("COUNT", TuneValue::Float(f64::NAN)),
        ("COUNT", TuneValue::Float(9.3e18)),
        ("COUNT", TuneValue::Float(-9.3e18)),
        ("COUNT", TuneValue::Int(i64::MIN)),
        ("COUNT", TuneValue::Int(-6)),
        ("COUNT", TuneValue::Bool(true)),
        ("FLAG", TuneValue::Int(1)),
        ("FLAG", TuneValue::Name("true".into())),
        ("MODE", TuneValue::Int(1)),
        ("MODE", TuneValue::Name("calm".into())),
        ("MODE", TuneValue::Name("".into())),
        ("LEVEL", TuneValue::Int(i64::MAX)),
        ("LEVEL", TuneValue::Name("0.5".into())),
        ("level", TuneValue::Float(0.5)),
        ("", TuneValue::Float(0.5)),
        ("LEVEL ", TuneValue::Float(0.5)),
    ];
    for (name, value) in cases {
        let shown = format!("{name:?} {value:?}");
        let e = shared.tune_named(name, value.clone()).unwrap_err();
        assert!(shared.check_tune_named(name, value).is_err(), "{shown}");
        let text = e.to_string();
        assert!(
            !text.is_empty() && (name.is_empty() || text.contains(name.trim())),
            "{shown}: {text}"
        );
    }
    // A tunable of another table.
    let e = shared.tune(SLOTS, 3).unwrap_err();
    assert!(
        matches!(e, TuneError::OtherTable { name: "SLOTS", .. }),
        "{e}"
    );
    assert_eq!(shared.tuned(SLOTS), 2);
    tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
    assert_eq!((agents[0].seen[0], agents[0].counts[0]), (0.25, 3));
    assert_eq!(shared.tuning_changes(), 0);
    // Edge values that are allowed: -0.0, the ends, an int from a whole float.
    shared.tune(LEVEL, -0.0).unwrap();
    shared.tune_named("COUNT", TuneValue::Float(-5.0)).unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(1.0));
    assert_eq!(agents[0].counts[1], -5);
    assert_eq!(agents[0].seen[1].to_bits(), (-0.0f64).to_bits());
    shared.tune(LEVEL, 1000.0).unwrap();
    shared.tune(COUNT, 1_000_000).unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(2.0));
    assert_eq!(
        (agents[0].seen[2], agents[0].counts[2]),
        (1000.0, 1_000_000)
    );
}

/// Staged twice before a tick: the last wins; staged back to the value
/// in effect: no change counted; applied twice: the second does nothing.
#[test]
fn staged_twice_and_applied_twice() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let (mut agents, mut memories) = crowd(&shared, 2, None);
    shared.tune(LEVEL, 0.5).unwrap();
    shared.tune(LEVEL, 0.6).unwrap();
    assert!(shared.apply_tuning());
    assert!(!shared.apply_tuning());
    tick_all(&PROBE, &mut agents, &mut memories, input(0.0));
    assert_eq!(reads(&agents, 0), [0.6; 2]);
    assert_eq!(shared.tuning_changes(), 1);
    shared.tune(LEVEL, 0.9).unwrap();
    shared.tune(LEVEL, 0.6).unwrap();
    tick_all(&PROBE, &mut agents, &mut memories, input(1.0));
    assert_eq!(reads(&agents, 1), [0.6; 2]);
    assert_eq!(
        shared.tuning_changes(),
        1,
        "a change back to the value in effect"
    );
    // A choice by name and by value, alternated.
    shared
        .tune_named("MODE", TuneValue::Name("Panic".into()))
        .unwrap();
    shared.tune(MODE, Mode::Alert).unwrap();
    shared.apply_tuning();
    assert_eq!(shared.tuned(MODE), Mode::Alert);
}

/// Tunes from many threads while a crowd ticks in a loop: every tick reads
/// one value for every agent (never half a crowd), and the last value
/// staged is in effect after one more tick.
#[test]
#[cfg_attr(miri, ignore)]
fn tunes_from_many_threads_never_split_a_tick() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let stop = Arc::new(AtomicBool::new(false));
    let tuners: Vec<_> = (0..6)
        .map(|t| {
            let s = Arc::clone(&shared);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    s.tune(LEVEL, (t * 100) as f64 + (k % 97) as f64).unwrap();
                    s.tune(COUNT, (t * 100) as i64 + (k % 97) as i64).unwrap();
                    k += 1;
                }
            })
        })
        .collect();
    let n = 800;
    let (mut agents, mut memories) = crowd(&shared, n, None);
    for round in 0..60 {
        let from = agents[0].seen.len();
        if round % 2 == 0 {
            tick_all(&PROBE, &mut agents, &mut memories, input(round as f64));
        } else {
            par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
                TickInput::new(round as f64, 0.1)
            });
        }
        let got = reads(&agents, from);
        assert!(
            got.windows(2).all(|w| w[0] == w[1]),
            "round {round}: a split tick"
        );
        let counts: Vec<i64> = agents
            .iter()
            .flat_map(|a| a.counts[from..].to_vec())
            .collect();
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "round {round}: a split tick"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for t in tuners {
        t.join().unwrap();
    }
    shared.tune(LEVEL, 123.0).unwrap();
    let from = agents[0].seen.len();
    tick_all(&PROBE, &mut agents, &mut memories, input(100.0));
    assert_eq!(reads(&agents, from), vec![123.0; n]);
}

// ---------------------------------------------------------------------------
// Tuned fields in two crowds at once.

#[derive(Default)]
pub struct Shooter;
leaf! { SHOOT: Shooter, gate: tunable(SLOTS) }
leaf! { WAIT: Shooter }
group! { SHOOT_ROOT: Shooter, prioritized [SHOOT, WAIT] }
tree! { SHOOTERS_TREE: Shooter = SHOOT_ROOT, memory: ShooterMemory, tunables: OTHER_TUNING }

/// Eight crowds of one tree with a tuned gate, each with its own size,
/// ticking at once: each gate holds its own crowd's value.
#[test]
#[cfg_attr(miri, ignore)]
fn tuned_gates_of_crowds_ticking_at_once_hold_their_own_sizes() {
    let _serial = serial();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let shared = SHOOTERS_TREE.new_shared(0);
                let slots = t as i64 + 1;
                shared.tune(SLOTS, slots).unwrap();
                let mut agents: Vec<Shooter> = (0..20).map(|_| Shooter).collect();
                let mut memories: Vec<ShooterMemory> = (0..20)
                    .map(|i| SHOOTERS_TREE.new_memory_in(&shared, i))
                    .collect();
                let shoot = SHOOTERS_TREE.find("SHOOT").unwrap();
                let mut counts = Vec::new();
                for round in 0..30 {
                    barrier.wait();
                    tick_all(&SHOOTERS_TREE, &mut agents, &mut memories, |_, _| {
                        TickInput::new(round as f64, 0.1)
                    });
                    counts.push(shared.gate_count(shoot).unwrap());
                }
                (slots, counts)
            })
        })
        .collect();
    for h in handles {
        let (slots, counts) = h.join().unwrap();
        assert!(
            counts.iter().all(|&c| i64::from(c) == slots),
            "{slots}: {counts:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Scale.

/// Ten times the crowd, many rounds with a change each round, serial and
/// parallel: every read right, and the reads cost no more than a load
/// (the whole loop stays well under a few seconds in a debug build).
#[test]
#[cfg_attr(miri, ignore)]
fn a_large_crowd_retuned_every_round() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let n = 20_000;
    let (mut agents, mut memories) = crowd(&shared, n, None);
    let t0 = std::time::Instant::now();
    for round in 0..10 {
        let level = round as f64 * 3.0;
        shared.tune(LEVEL, level).unwrap();
        let from = agents[0].seen.len();
        par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
            TickInput::new(round as f64, 0.1)
        });
        let wrong = agents.iter().filter(|a| a.seen[from..] != [level]).count();
        assert_eq!(wrong, 0, "round {round}");
    }
    eprintln!("20 000 agents x 10 rounds: {:?}", t0.elapsed());
    assert_eq!(shared.tuning_changes(), 10);
}

// ---------------------------------------------------------------------------
// Nested parallel ticks: rayon's workers steal one crowd's work while they
// wait inside another's.

/// `par_tick_all` of crowd B inside callbacks of a `par_tick_all` of
/// crowd A (same tree, other values): a worker waiting for B's chunks
/// steals A's and the other way round; every read is its crowd's.
#[test]
#[cfg_attr(miri, ignore)]
fn par_tick_all_nested_in_par_tick_all_reads_each_crowds_own() {
    let _serial = serial();
    let a = PROBE.new_shared(0);
    let b = PROBE.new_shared(0);
    a.tune(LEVEL, 1.0).unwrap();
    b.tune(LEVEL, 2.0).unwrap();
    let nested = Arc::new(Mutex::new(crowd(&b, 3000, None)));
    let inner = Arc::clone(&nested);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let hook: Hook = Arc::new(move |id| {
        if id % 500 == 17 {
            // Another thread may hold it: then skip (a try, not a wait,
            // so that no worker blocks).
            if let Ok(mut guard) = inner.try_lock() {
                let (agents, memories) = &mut *guard;
                par_tick_all(&PROBE, agents, memories, |_, _| TickInput::new(0.0, 0.1));
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let (mut agents, mut memories) = crowd(&a, 4000, Some(&hook));
    for round in 0..3 {
        par_tick_all(&PROBE, &mut agents, &mut memories, |_, _| {
            TickInput::new(round as f64, 0.1)
        });
    }
    let outer: Vec<f64> = reads(&agents, 0);
    assert_eq!(outer.len(), 12_000);
    let wrong_outer = outer.iter().filter(|&&v| v != 1.0).count();
    let inner_reads = reads(&nested.lock().unwrap().0, 0);
    let wrong_inner = inner_reads.iter().filter(|&&v| v != 2.0).count();
    assert!(calls.load(Ordering::Relaxed) > 0);
    assert_eq!(
        (wrong_outer, wrong_inner),
        (0, 0),
        "reads of the other crowd's values"
    );
    assert_eq!(outside(), (0.25, 3));
}

/// The same with the gated tree, whose parallel tick runs in two phases:
/// each crowd's gate holds its own tuned size, every read its own.
#[test]
#[cfg_attr(miri, ignore)]
fn gated_par_tick_all_nested_reads_each_crowds_own() {
    let _serial = serial();
    let a = GATED.new_shared(0);
    let b = GATED.new_shared(0);
    a.tune(LEVEL, 1.0).unwrap();
    a.tune(GATE, 40).unwrap();
    b.tune(LEVEL, 2.0).unwrap();
    b.tune(GATE, 7).unwrap();
    let make = |s: &Arc<TreeShared>, n: usize, hook: Option<&Hook>| {
        let agents: Vec<Probe> = (0..n)
            .map(|i| match hook {
                Some(h) => Probe::hooked(i, h),
                None => Probe::new(i),
            })
            .collect();
        let memories: Vec<GatedMemory> = (0..n).map(|i| GATED.new_memory_in(s, i as u64)).collect();
        (agents, memories)
    };
    let nested = Arc::new(Mutex::new(make(&b, 2000, None)));
    let inner = Arc::clone(&nested);
    let hook: Hook = Arc::new(move |id| {
        if id % 400 == 9
            && let Ok(mut guard) = inner.try_lock()
        {
            let (agents, memories) = &mut *guard;
            par_tick_all(&GATED, agents, memories, |_, _| TickInput::new(0.0, 0.1));
        }
    });
    let (mut agents, mut memories) = make(&a, 3000, Some(&hook));
    for round in 0..3 {
        par_tick_all(&GATED, &mut agents, &mut memories, |_, _| {
            TickInput::new(round as f64, 0.1)
        });
    }
    let gate = GATED.find("GATED_READING").unwrap();
    assert_eq!(
        (a.gate_count(gate), b.gate_count(gate)),
        (Some(40), Some(7))
    );
    assert!(reads(&agents, 0).iter().all(|&v| v == 1.0));
    assert!(
        reads(&nested.lock().unwrap().0, 0)
            .iter()
            .all(|&v| v == 2.0)
    );
}

/// Four threads tick four gated crowds with `par_tick_all` at once, each
/// with its own values and gate: every read and every gate its own.
#[test]
#[cfg_attr(miri, ignore)]
fn gated_par_tick_all_from_four_threads_at_once() {
    let _serial = serial();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let s = GATED.new_shared(0);
                let n = 1500;
                let mut agents: Vec<Probe> = (0..n).map(Probe::new).collect();
                let mut memories: Vec<GatedMemory> =
                    (0..n).map(|i| GATED.new_memory_in(&s, i as u64)).collect();
                let mut bad = 0;
                for round in 0..10 {
                    let level = (t * 100 + round) as f64;
                    s.tune(LEVEL, level).unwrap();
                    s.tune(GATE, (t * 10 + round + 1) as i64).unwrap();
                    let from = agents[0].seen.len();
                    par_tick_all(&GATED, &mut agents, &mut memories, |_, _| {
                        TickInput::new(round as f64, 0.1)
                    });
                    bad += reads(&agents, from).iter().filter(|&&v| v != level).count();
                }
                let gate = GATED.find("GATED_READING").unwrap();
                // Lowered? Raised every round: full at its last size.
                (bad, s.gate_count(gate), t * 10 + 10)
            })
        })
        .collect();
    for h in handles {
        let (bad, count, size) = h.join().unwrap();
        assert_eq!((bad, count), (0, Some(size as u32)));
    }
}

/// A budget leaves agents waiting: those that tick in a later frame read
/// that frame's values, not those of the frame they were due in.
#[test]
fn agents_left_waiting_by_a_budget_read_the_frame_they_tick_in() {
    let _serial = serial();
    let shared = PROBE.new_shared(0);
    let n = 50;
    let (mut agents, mut memories) = crowd(&shared, n, None);
    let mut schedule = Schedule::new(n, 0.0).with_budget(Some(7));
    for frame in 0..20 {
        let level = frame as f64 + 0.5;
        shared.tune(LEVEL, level).unwrap();
        let from: Vec<usize> = agents.iter().map(|a| a.seen.len()).collect();
        let now = frame as f64 + 1.0;
        tick_scheduled(
            &PROBE,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        );
        let got: Vec<f64> = agents
            .iter()
            .zip(&from)
            .flat_map(|(a, &f)| a.seen[f..].to_vec())
            .collect();
        assert_eq!(got.len(), 7, "frame {frame}");
        assert!(got.iter().all(|&v| v == level), "frame {frame}: {got:?}");
    }
}

// ---------------------------------------------------------------------------
// The tuning file.

mod file {
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use bt_core::{TuneFileError, TuningFile};

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("bt-tuning-file-core-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The values a probe crowd has in effect.
    type Values = (f64, i64, bool, Mode);

    /// Loads `text` as a tuning file into a fresh crowd: the outcome, and
    /// the values in effect after a tick.
    fn load(text: &[u8]) -> (Result<Vec<&'static str>, TuneFileError>, Values) {
        let d = dir("load");
        let path = d.join("t.toml");
        std::fs::write(&path, text).unwrap();
        let shared = PROBE.new_shared(0);
        let r = TuningFile::load(&path, [&shared]).map(|a| a.changed);
        shared.apply_tuning();
        let _ = std::fs::remove_dir_all(&d);
        let v = (
            shared.tuned(LEVEL),
            shared.tuned(COUNT),
            shared.tuned(FLAG),
            shared.tuned(MODE),
        );
        (r, v)
    }

    const DEFAULTS: Values = (0.25, 3, false, Mode::Calm);

    /// Each bad file is refused whole, names its key and the right line,
    /// and changes nothing, whatever its line endings.
    #[test]
    fn bad_files_name_the_key_and_line_and_change_nothing() {
        let _serial = serial();
        let cases: &[(&[u8], Option<&str>, usize)] = &[
            (b"LEVEL = 1.0\nCOUNT = 2000000\n", Some("COUNT"), 2),
            (b"LEVEL = 1.0\r\nCOUNT = 2000000\r\n", Some("COUNT"), 2),
            (b"LEVEL = 1.0\r\n\r\n\r\nNOPE = 1\r\n", Some("NOPE"), 4),
            (b"# a comment\nLEVEL = 1.0\nCOUNT = \n", None, 3),
            (b"LEVEL = 1.0\nCOUNT = 3.5\n", Some("COUNT"), 2),
            (b"LEVEL = nan\n", Some("LEVEL"), 1),
            (b"LEVEL = inf\n", Some("LEVEL"), 1),
            (b"LEVEL = -inf\n", Some("LEVEL"), 1),
            (b"COUNT = 9223372036854775807\n", Some("COUNT"), 1),
            (b"COUNT = 1e300\n", Some("COUNT"), 1),
            (b"FLAG = 1\n", Some("FLAG"), 1),
            (b"MODE = 1\n", Some("MODE"), 1),
            (b"MODE = \"alert\"\n", Some("MODE"), 1),
            (b"LEVEL = [1.0]\n", Some("LEVEL"), 1),
            (b"LEVEL = 1.0\n[MODE]\nx = 1\n", Some("MODE"), 2),
            (b"LEVEL = 1.0\n[extra]\nLEVEL = 2.0\n", Some("extra"), 2),
            (b"LEVEL.x = 1.0\n", Some("LEVEL"), 1),
            (b"LEVEL = 1.0\nLEVEL = 2.0\n", None, 2),
            (b"LEVEL = \"0.5\"\n", Some("LEVEL"), 1),
            (
                b"\n\n\nLEVEL = 0x10\nCOUNT = 0b11111111111111111111\n",
                Some("COUNT"),
                5,
            ),
            (b"COUNT = \"\xff\"\n", None, 1),
        ];
        let mut wrong = Vec::new();
        for &(text, key, line) in cases {
            let shown = String::from_utf8_lossy(text);
            let (r, v) = load(text);
            let Err(e) = r else {
                wrong.push(format!("{shown:?} taken"));
                continue;
            };
            let named = key.is_none_or(|k| e.to_string().contains(k));
            if v != DEFAULTS || e.path().is_none() || e.line() != Some(line) || !named {
                wrong.push(format!(
                    "{shown:?}: {e} (line {:?}, values {v:?})",
                    e.line()
                ));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The values a file may take at the edges: a whole float for an int,
    /// an int for a float, -0.0, exponents, a quoted key, a BOM-less CRLF
    /// file with comments after the values.
    #[test]
    fn good_files_at_the_edges() {
        let _serial = serial();
        let (r, v) =
            load(b"COUNT = 1e3\nLEVEL = 7 # an int\n\"FLAG\" = true\r\nMODE = \"Panic\"\n");
        assert_eq!(r.unwrap(), ["COUNT", "LEVEL", "FLAG", "MODE"]);
        assert_eq!(v, (7.0, 1000, true, Mode::Panic));
        let (r, v) = load(b"LEVEL = -0.0\nCOUNT = -5\n");
        assert_eq!(r.unwrap(), ["LEVEL", "COUNT"]);
        assert_eq!((v.0.to_bits(), v.1), ((-0.0f64).to_bits(), -5));
        let (r, v) = load(b"");
        assert_eq!((r.unwrap(), v), (vec![], DEFAULTS));
    }

    /// One file, crowds of two tables, or none: a typed error, nothing
    /// staged on the crowd that could take it.
    #[test]
    fn crowds_of_two_tables_or_none_are_refused() {
        let _serial = serial();
        let d = dir("tables");
        let path = d.join("t.toml");
        std::fs::write(&path, "LEVEL = 9.0\n").unwrap();
        let probe = PROBE.new_shared(0);
        let stranger = STRANGER.new_shared(0);
        let e = TuningFile::load(&path, [&probe, &stranger]).unwrap_err();
        assert!(matches!(e, TuneFileError::TablesDiffer { .. }), "{e}");
        let none: [&Arc<TreeShared>; 0] = [];
        let e = TuningFile::load(&path, none).unwrap_err();
        assert!(matches!(e, TuneFileError::NoTunables { tree: None }), "{e}");
        probe.apply_tuning();
        assert_eq!(probe.tuned(LEVEL), 0.25);
        // Two crowds of one tree: both take it, in effect at each one's tick.
        let other = PROBE.new_shared(0);
        assert_eq!(
            TuningFile::load(&path, [&probe, &other]).unwrap().changed,
            ["LEVEL"]
        );
        let (mut a, mut m) = crowd(&other, 2, None);
        tick_all(&PROBE, &mut a, &mut m, input(0.0));
        assert_eq!(reads(&a, 0), [9.0; 2]);
        assert_eq!(
            probe.tuned(LEVEL),
            0.25,
            "staged, not in effect until its tick"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Ten times a designer's file: six megabytes of comments around the
    /// values are read in well under a few seconds.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_six_megabyte_file() {
        let _serial = serial();
        let mut text = String::with_capacity(6_400_000);
        for i in 0..100_000 {
            text.push_str(&format!("# line {i} of a long note on the herd's tuning\n"));
        }
        text.push_str("LEVEL = 3.5\nCOUNT = 12\n");
        assert!(text.len() > 4_000_000);
        let t0 = Instant::now();
        let (r, v) = load(text.as_bytes());
        assert_eq!(r.unwrap(), ["LEVEL", "COUNT"]);
        assert_eq!((v.0, v.1), (3.5, 12));
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        // The same size with a fault at its end: its line named.
        text.push_str("COUNT = -6\n");
        let (r, v) = load(text.as_bytes());
        let e = r.unwrap_err();
        assert_eq!((e.line(), v), (Some(100_003), DEFAULTS), "{e}");
    }

    /// Polls until a reading comes (at most five seconds).
    fn next(file: &mut TuningFile) -> Result<Vec<&'static str>, String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(r) = file.poll() {
                return r.map(|a| a.changed).map_err(|e| e.to_string());
            }
            assert!(Instant::now() < deadline, "no reading");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Deleted: reported once, nothing changes; written again: read.
    /// Replaced by a rename: followed. The same content saved again:
    /// nothing.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn deleted_renamed_and_saved_unchanged() {
        let _serial = serial();
        let d = dir("watch");
        let path = d.join("t.toml");
        std::fs::write(&path, "LEVEL = 1.5\n").unwrap();
        let shared = PROBE.new_shared(0);
        let mut file = TuningFile::watch(&path, [&shared]).unwrap();
        assert_eq!(next(&mut file), Ok(vec!["LEVEL"]));
        std::fs::remove_file(&path).unwrap();
        assert!(next(&mut file).is_err());
        std::thread::sleep(Duration::from_millis(200));
        assert!(file.poll().is_none(), "a deletion reported more than once");
        shared.apply_tuning();
        assert_eq!(shared.tuned(LEVEL), 1.5);
        std::fs::write(&path, "LEVEL = 2.5\n").unwrap();
        assert_eq!(next(&mut file), Ok(vec!["LEVEL"]));
        let tmp = d.join("t.toml.tmp");
        std::fs::write(&tmp, "LEVEL = 3.5\nCOUNT = 4\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(next(&mut file), Ok(vec!["LEVEL", "COUNT"]));
        std::fs::write(&path, "LEVEL = 3.5\nCOUNT = 4\n").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            file.poll().is_none(),
            "a save that changes nothing did something"
        );
        shared.apply_tuning();
        assert_eq!((shared.tuned(LEVEL), shared.tuned(COUNT)), (3.5, 4));
        drop(file);
        let _ = std::fs::remove_dir_all(&d);
    }
}

// ---------------------------------------------------------------------------
// Saves the tree can no longer take.

/// The next versions of the probe tree: its name and shape, a table
/// changed in one way each (its closures read `ATK_TUNING`'s, which does
/// not matter to a load).
macro_rules! next_version {
    ($module:ident { $($decls:tt)* }) => {
        mod $module {
            use super::*;
            tunables! { pub NEXT_TUNING: $($decls)* }
            tree! { pub PROBE: Probe = PROBE_ROOT, memory: NextMemory, tunables: NEXT_TUNING }
        }
    };
}
next_version!(narrower {
    /// A narrower range.
    LEVEL: f64 = 0.25, 0.0..=1.0;
    /// Unchanged.
    COUNT: i64 = 3, -5..=1_000_000;
    /// Unchanged.
    FLAG: bool = false;
    /// Unchanged.
    MODE: enum Mode { Calm, Alert, Panic } = Calm;
    /// Unchanged.
    GATE: i64 = 5, 1..=65_535;
    /// A new one.
    SPEED: f64 = 1.0, 0.0..=2.0;
});
next_version!(retyped {
    /// Unchanged.
    LEVEL: f64 = 0.25, 0.0..=1000.0;
    /// Unchanged.
    COUNT: i64 = 3, -5..=1_000_000;
    /// An int now.
    FLAG: i64 = 0, 0..=1;
    /// Unchanged.
    MODE: enum Mode { Calm, Alert, Panic } = Calm;
    /// Unchanged.
    GATE: i64 = 5, 1..=65_535;
    /// A new one.
    SPEED: f64 = 1.0, 0.0..=2.0;
});
next_version!(removed {
    /// Unchanged.
    LEVEL: f64 = 0.25, 0.0..=1000.0;
    /// Unchanged.
    COUNT: i64 = 3, -5..=1_000_000;
    /// Unchanged.
    FLAG: bool = false;
    /// Unchanged.
    GATE: i64 = 5, 1..=65_535;
    /// A new one.
    SPEED: f64 = 1.0, 0.0..=2.0;
});

/// A crowd's save of the probe tree.
fn probe_save(level: f64) -> String {
    let shared = PROBE.new_shared(0);
    shared.tune(LEVEL, level).unwrap();
    shared.apply_tuning();
    let memories: Vec<ProbeMemory> = (0..2).map(|i| PROBE.new_memory_in(&shared, i)).collect();
    serde_json::to_string(&shared.snapshot_crowd(&memories, 0.0)).unwrap()
}

/// A crowd's save loaded into the next version of the tree, whose table
/// has a narrower range, a tunable of another type, one removed: each
/// refused, naming the tunable, the crowd unchanged; one that fits loads,
/// the new tunable at its default.
#[test]
fn a_save_the_tree_cannot_take_any_more_is_refused_naming_it() {
    let _serial = serial();
    macro_rules! load_into {
        ($module:ident, $save:expr) => {{
            use $module::{NextMemory, PROBE as NEXT, SPEED};
            let shared = NEXT.new_shared(0);
            shared.tune(SPEED, 2.0).unwrap();
            shared.apply_tuning();
            let changes = shared.tuning_changes();
            let mut memories: Vec<NextMemory> =
                (0..2).map(|i| NEXT.new_memory_in(&shared, i)).collect();
            let r = shared
                .restore_crowd(
                    &NEXT,
                    0.0,
                    &mut memories,
                    &mut serde_json::Deserializer::from_str($save),
                )
                .map_err(|e| e.to_string());
            (r, shared.tuned(SPEED), shared.tuning_changes() - changes)
        }};
    }
    let (r, speed, changes) = load_into!(narrower, &probe_save(50.0));
    let e = r.expect_err("a value outside the new range loaded");
    assert!(e.contains("LEVEL"), "{e}");
    assert_eq!((speed, changes), (2.0, 0));
    let (r, speed, changes) = load_into!(narrower, &probe_save(0.5));
    assert_eq!(
        (r, speed, changes),
        (Ok(()), 1.0, 2),
        "LEVEL and SPEED changed"
    );
    let (r, speed, _) = load_into!(retyped, &probe_save(0.5));
    let e = r.expect_err("a bool loaded into an int");
    assert!(e.contains("FLAG"), "{e}");
    assert_eq!(speed, 2.0);
    let (r, speed, _) = load_into!(removed, &probe_save(0.5));
    let e = r.expect_err("a removed tunable loaded");
    assert!(e.contains("MODE"), "{e}");
    assert_eq!(speed, 2.0);
}
