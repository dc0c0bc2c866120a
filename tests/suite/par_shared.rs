//! `par_tick_all` on a tree with gates, global cooldowns and group roles:
//! every core ticks, and the results are exactly `tick_all`'s in index
//! order (reports, agents, paths, shared state), also when a gate fills up
//! in the middle of a frame, a role's group forms across two of the parts
//! the crowd is ticked in, a callback panics, or a callback ticks another
//! crowd in parallel.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

use bt_core::{
    CrowdReport, Has, ItemIdx, TickInput, TraceRecorder, TreeShared, UntilShared, behavior,
    decider, group, par_tick_all, resume_tick, tick, tick_all, tick_traced, tick_until_shared,
    tree,
};

bitflags::bitflags! {
    /// What an ant wants this tick.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Wants: u64 {
        const SHOUT = 1 << 0;
        const WORK = 1 << 1;
        const PAIR = 1 << 2;
    }
}

/// The order of every callback of every crowd, across the process.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// A crowd member. Its own generator drives its wishes; every callback
/// folds into `trail`, so two runs agree only if they made the same calls
/// in the same order with the same contexts. `first` and `last` are when
/// (in [`CALLS`]) its callbacks of the frame ran: not compared.
#[derive(Clone, Debug, Default)]
pub struct Ant {
    state: u64,
    trail: u64,
    calls: u32,
    /// Wishes forced on it, added to its own.
    forced: u64,
    /// Wishes of its own it does not have.
    mute: u64,
    /// Its `IDLE` tick panics from this time on.
    panics_idle: Option<f64>,
    /// Its `SHOUT` activation panics from this time on.
    panics_shout: Option<f64>,
    first: u64,
    last: u64,
}

impl PartialEq for Ant {
    fn eq(&self, other: &Self) -> bool {
        (self.state, self.trail, self.calls) == (other.state, other.trail, other.calls)
    }
}

impl Ant {
    fn new(i: usize, seed: u64) -> Self {
        Ant {
            state: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 ^ seed).wrapping_mul(0xD6E8_FEB8_6659_FD93),
            ..Ant::default()
        }
    }

    fn note(&mut self, what: &str, now: f64) {
        let at = CALLS.fetch_add(1, Ordering::Relaxed);
        self.first = self.first.min(at);
        self.last = self.last.max(at);
        self.calls += 1;
        let mut h = self.trail ^ now.to_bits();
        for b in what.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
        self.trail = h.rotate_left(7);
    }

    fn pick(&self, shift: u32, n: u64) -> u64 {
        (self.state >> shift) % n
    }

    fn wants(&self) -> u64 {
        let mut w = 0;
        if self.pick(8, 7) == 0 {
            w |= Wants::SHOUT.bits();
        }
        if self.pick(12, 4) == 0 {
            w |= Wants::WORK.bits();
        }
        if self.pick(16, 9) == 0 {
            w |= Wants::PAIR.bits();
        }
        w & !self.mute | self.forced
    }
}

behavior! { ANT_SENSE: Ant,
    tick: |a, cx| {
        a.state ^= a.state << 13;
        a.state ^= a.state >> 7;
        a.state ^= a.state << 17;
        a.note("sense", cx.now);
        true
    },
}
behavior! { ANT_SHOUT: Ant,
    activate: |a, cx| {
        assert!(a.panics_shout.is_none_or(|t| cx.now < t), "shout");
        a.note("shout+", cx.now);
        true
    },
    tick: |a, cx| { a.note("shout", cx.now); a.pick(3, 3) != 0 },
}
behavior! { ANT_WORK: Ant, memory: u32,
    tick: |a, m, cx| { *m += 1; a.note("work", cx.now); *m < 1 + a.pick(9, 4) as u32 },
    deactivate: |a, _m, cx| a.note("work-", cx.now),
}
behavior! { ANT_PAIR: Ant,
    tick: |a, cx| { a.note("pair", cx.now); a.pick(21, 4) != 0 },
}
behavior! { ANT_IDLE: Ant, memory: u32,
    tick: |a, m, cx| {
        assert!(a.panics_idle.is_none_or(|t| cx.now < t), "idle");
        *m += 1;
        a.note("idle", cx.now);
        *m < 2 + a.pick(5, 3) as u32
    },
}

decider! { SHOUT: Ant => ANT_SHOUT, needs_all: Wants::SHOUT, cooldown: 0.5 }
decider! { WORK1: Ant => ANT_WORK }
decider! { WORK2: Ant => ANT_WORK }
group! { WORK: Ant, sequential [WORK1, WORK2], needs_all: Wants::WORK, gate: 3 }
decider! { PAIR: Ant => ANT_PAIR, needs_all: Wants::PAIR, together: 2 }
decider! { IDLE1: Ant => ANT_IDLE }
decider! { IDLE2: Ant => ANT_IDLE }
decider! { IDLE3: Ant => ANT_IDLE }
group! { IDLE: Ant, random [IDLE1, IDLE2, IDLE3] }
group! { ANT_ROOT: Ant, prioritized [SHOUT, WORK, PAIR, IDLE], behavior: ANT_SENSE }
tree! {
    /// A crowd with a global cooldown, a gate and a group role, and no
    /// deferred action.
    ANTS: Ant = ANT_ROOT,
    memory: AntMemory,
}

fn input(t: u32) -> impl Fn(usize, &mut Ant) -> TickInput + Sync {
    move |_, a| {
        a.first = u64::MAX;
        a.last = 0;
        TickInput::new(f64::from(t) * 0.2, 0.2).with_decision_bits(a.wants())
    }
}

/// A crowd and its shared state.
struct Crowd {
    shared: std::sync::Arc<TreeShared>,
    ants: Vec<Ant>,
    memories: Vec<AntMemory>,
}

impl Crowd {
    fn new(agents: usize, seed: u64) -> Self {
        let shared = ANTS.new_shared(0);
        let ants = (0..agents).map(|i| Ant::new(i, seed)).collect();
        let memories = (0..agents)
            .map(|i| ANTS.new_memory_in(&shared, seed ^ i as u64))
            .collect();
        Crowd {
            shared,
            ants,
            memories,
        }
    }

    fn tick(&mut self, t: u32, parallel: bool) -> CrowdReport {
        if parallel {
            par_tick_all(&ANTS, &mut self.ants, &mut self.memories, input(t))
        } else {
            tick_all(&ANTS, &mut self.ants, &mut self.memories, input(t))
        }
    }

    /// What can be compared between two crowds: agents, paths, and the
    /// shared state (gate counts, role words, cooldown stamps).
    fn state(&self) -> (Vec<Ant>, Vec<Vec<ItemIdx>>, String) {
        let paths = self
            .memories
            .iter()
            .map(|m| m.active_path().map(|l| l.item).collect())
            .collect();
        let mut shared = serde_json::to_value(self.shared.snapshot(0.0)).unwrap();
        let fields = shared.as_object_mut().unwrap();
        fields.remove("crowd");
        let held = (self.shared.gates_held(), self.shared.roles_held());
        (self.ants.clone(), paths, format!("{shared} {held:?}"))
    }

    /// The gate's count and the role's agents match what the memories
    /// hold.
    fn assert_consistent(&self) {
        let holding = |name: &str| {
            let item = ANTS.find(name).unwrap();
            self.memories
                .iter()
                .filter(|m| m.active_path().any(|l| l.item == item))
                .count() as u64
        };
        assert_eq!(self.shared.gates_held(), holding("WORK"));
        assert!(self.shared.roles_held() >= holding("PAIR"));
    }

    /// Whether, in the last frame, a callback of an agent ran before one
    /// of an agent of a lower index: its tick did not wait for theirs.
    fn out_of_order(&self) -> bool {
        let mut latest = 0;
        let mut seen = false;
        for a in self.ants.iter().filter(|a| a.first != u64::MAX) {
            if seen && a.first < latest {
                return true;
            }
            latest = latest.max(a.last);
            seen = true;
        }
        false
    }
}

/// Runs `frames` frames of two equal crowds, one with `tick_all`, one with
/// `par_tick_all`, and compares them after every frame. Returns in how
/// many frames the parallel crowd ticked out of index order.
fn compare(agents: usize, frames: u32, seed: u64) -> u32 {
    let mut serial = Crowd::new(agents, seed);
    let mut parallel = Crowd::new(agents, seed);
    let mut out_of_order = 0;
    for t in 0..frames {
        let a = serial.tick(t, false);
        let b = parallel.tick(t, true);
        assert_eq!(a, b, "report of frame {t}");
        let (sa, sp) = (serial.state(), parallel.state());
        assert!(sa.0 == sp.0, "agents, frame {t}");
        assert_eq!(sa.1, sp.1, "paths, frame {t}");
        assert_eq!(sa.2, sp.2, "shared, frame {t}");
        parallel.assert_consistent();
        out_of_order += u32::from(parallel.out_of_order());
        assert!(!serial.out_of_order());
    }
    out_of_order
}

/// A crowd of several parts over many frames: equal to `tick_all`, and
/// most frames ticked out of index order (agents that need nothing shared
/// finish before the ones ahead of them that do).
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn par_tick_all_of_a_shared_tree_runs_in_parallel_and_equals_tick_all() {
    let frames = 40;
    let out_of_order = compare(1500, frames, 3);
    assert!(out_of_order > frames / 2, "{out_of_order} of {frames}");
}

/// Agents per part of `par_tick_all`'s shared-state ticks (fewer under
/// Miri, so that its crowds there are small and still of several parts).
const PART: usize = if cfg!(miri) { 16 } else { 256 };

/// The crowd of the gate's test: three parts or more.
const GATED: usize = if cfg!(miri) { 40 } else { 600 };

/// The same at Miri's size: two parts, a few frames.
#[test]
fn a_small_shared_crowd_ticks_out_of_order_as_tick_all_would() {
    let out_of_order = compare(if cfg!(miri) { 40 } else { 300 }, 4, 11);
    assert!(out_of_order > 0);
}

/// The two halves a crate that ticks a crowd in its own way uses: every
/// agent's tick up to its first shared step (here in reverse index order,
/// as threads may take them), then the stopped ones gone on with in index
/// order, give each agent the report of `tick` in index order, and the
/// same agents, paths and shared state.
#[test]
fn ticks_stopped_at_the_shared_state_and_resumed_in_order_equal_ticks_in_order() {
    let n = if cfg!(miri) { 40 } else { 300 };
    let mut serial = Crowd::new(n, 7);
    let mut paused = Crowd::new(n, 7);
    let (mut stopped, mut finished) = (0, 0);
    for t in 0..if cfg!(miri) { 4 } else { 30 } {
        let input = input(t);
        let ticked: Vec<_> = (0..n)
            .map(|i| {
                let (ant, memory) = (&mut serial.ants[i], &mut serial.memories[i]);
                let at = input(i, ant).with_agent(i as u32);
                tick(&ANTS, ant, memory, &at)
            })
            .collect();
        let mut halves = vec![None; n];
        let mut stops = Vec::new();
        for i in (0..n).rev() {
            let (ant, memory) = (&mut paused.ants[i], &mut paused.memories[i]);
            let at = input(i, ant).with_agent(i as u32);
            match tick_until_shared(&ANTS, ant, memory, &at) {
                UntilShared::Finished(report) => halves[i] = Some(report),
                UntilShared::Stopped(at) => stops.push((i, at)),
            }
        }
        stopped += stops.len();
        finished += n - stops.len();
        for &(i, at) in stops.iter().rev() {
            let (ant, memory) = (&mut paused.ants[i], &mut paused.memories[i]);
            halves[i] = Some(resume_tick(&ANTS, ant, memory, at));
        }
        for i in 0..n {
            assert_eq!(Some(ticked[i]), halves[i], "agent {i}, frame {t}");
        }
        let (sa, sp) = (serial.state(), paused.state());
        assert!(sa.0 == sp.0, "agents, frame {t}");
        assert_eq!(sa.1, sp.1, "paths, frame {t}");
        assert_eq!(sa.2, sp.2, "shared, frame {t}");
    }
    // Both halves ran: ticks that stopped at the shared state, and ticks
    // that finished without it.
    assert!(
        stopped > 0 && finished > 0,
        "{stopped} stopped, {finished} finished"
    );
}

/// Every agent wants the gated group in the same frame: the gate (3)
/// fills up in the middle of the frame, and the same three agents, the
/// first in index order that ask, get in.
#[test]
fn a_gate_fills_up_in_the_middle_of_a_frame_as_in_index_order() {
    for parallel in [false, true] {
        let mut crowd = Crowd::new(GATED, 5);
        let mut out_of_order = false;
        for frame in 0..3 {
            crowd.tick(frame, parallel);
            out_of_order |= crowd.out_of_order();
        }
        assert_eq!(out_of_order, parallel);
        for a in &mut crowd.ants {
            a.forced = Wants::WORK.bits();
        }
        crowd.tick(3, parallel);
        let work = ANTS.find("WORK").unwrap();
        let inside: Vec<usize> = (0..GATED)
            .filter(|&i| crowd.memories[i].active_path().any(|l| l.item == work))
            .collect();
        assert_eq!(inside.len(), 3, "{inside:?}");
        crowd.assert_consistent();
    }
    // Everybody wants the gated group from frame 3 on: the same state
    // after six frames, in order or not.
    let wanting = |parallel: bool| {
        let mut c = Crowd::new(GATED, 5);
        for t in 0..6 {
            if t == 3 {
                c.ants
                    .iter_mut()
                    .for_each(|a| a.forced = Wants::WORK.bits());
            }
            c.tick(t, parallel);
        }
        c.state()
    };
    assert_eq!(wanting(false), wanting(true));
}

/// Ticks `crowd` frame after frame until a tick panics: the frame and the
/// panic's message.
fn until_panic(crowd: &mut Crowd, parallel: bool) -> (u32, String) {
    for t in 0..60 {
        let ticked = catch_unwind(AssertUnwindSafe(|| crowd.tick(t, parallel)));
        if let Err(payload) = ticked {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return (t, message);
        }
    }
    panic!("nothing panicked");
}

/// Agent `p`'s callbacks panic (`idle`: its `IDLE` tick, which runs in the
/// parallel part of a tick; else its `SHOUT` activation, which runs in
/// index order): `par_tick_all` panics in the same frame with the same
/// message as `tick_all`, every agent up to `p` is as `tick_all` leaves
/// it (`p` idle), and the shared state is `tick_all`'s and holds exactly
/// what the memories hold.
fn panic_case(agents: usize, p: usize, idle: bool) {
    let make = || {
        let mut crowd = Crowd::new(agents, 17);
        let at = Some(2.0);
        if idle {
            crowd.ants[p].panics_idle = at;
        } else {
            // Only `p` ever shouts.
            for a in &mut crowd.ants {
                a.mute = Wants::SHOUT.bits();
            }
            crowd.ants[p].panics_shout = at;
            crowd.ants[p].forced = Wants::SHOUT.bits();
        }
        crowd
    };
    let (mut serial, mut parallel) = (make(), make());
    let a = until_panic(&mut serial, false);
    let b = until_panic(&mut parallel, true);
    assert_eq!(a, b);
    assert_eq!(a.1, if idle { "idle" } else { "shout" });
    assert_eq!(serial.memories[p].depth(), 0);
    let (ants_a, paths_a, shared_a) = serial.state();
    let (ants_b, paths_b, shared_b) = parallel.state();
    assert!(ants_a[..=p] == ants_b[..=p]);
    assert_eq!(paths_a[..=p], paths_b[..=p]);
    assert_eq!(shared_a, shared_b);
    parallel.assert_consistent();
    // The parallel crowd did not wait for `p`: agents of a later part ran
    // callbacks in that frame, where `tick_all` stopped at `p`.
    let later = (p / 256 + 1) * 256..agents;
    assert!(
        later
            .into_iter()
            .any(|i| ants_a[i].calls != ants_b[i].calls)
    );
}

/// A panic in the parallel part of a tick, in the second part of the crowd.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_panic_in_a_parallel_tick_leaves_what_tick_all_leaves() {
    panic_case(900, 400, true);
}

/// A panic in the part of a tick that goes on in index order.
#[test]
#[cfg_attr(miri, ignore)] // too slow under Miri
fn a_panic_in_a_tick_gone_on_in_order_leaves_what_tick_all_leaves() {
    panic_case(900, 300, false);
}

/// Two agents on either side of a part boundary (255 and 256) are the
/// only ones that want the pair: the group forms across the boundary, as
/// in index order, and both enter.
#[test]
fn a_role_forms_across_two_parts_of_the_crowd() {
    let run = |parallel: bool| {
        let mut crowd = Crowd::new(2 * PART, 23);
        let mut entered = [false; 2];
        let mut out_of_order = false;
        for t in 0..8 {
            for (i, a) in crowd.ants.iter_mut().enumerate() {
                // Nobody wants anything but the two.
                a.mute = Wants::all().bits();
                a.forced = if i == PART - 1 || i == PART {
                    Wants::PAIR.bits()
                } else {
                    0
                };
            }
            crowd.tick(t, parallel);
            let pair = ANTS.find("PAIR").unwrap();
            for (k, i) in [PART - 1, PART].into_iter().enumerate() {
                entered[k] |= crowd.memories[i].active_path().any(|l| l.item == pair);
            }
            crowd.assert_consistent();
            out_of_order |= crowd.out_of_order();
        }
        assert_eq!(entered, [true, true], "parallel: {parallel}");
        assert_eq!(out_of_order, parallel);
        crowd.state()
    };
    assert!(run(false) == run(true));
}

/// `tick_all` picks in a group with shared checks without the step
/// machine while none of the checked children passes its flag tests, and
/// then chooses exactly as the step machine does (`tick_traced`, one agent
/// at a time in index order): agents, paths and shared state, every frame.
#[test]
fn a_group_with_shared_checks_picks_as_the_step_machine_does() {
    let root = ANTS.node(ItemIdx::ROOT).has();
    assert!(
        root.contains(Has::QUICK_GROUP | Has::SYNC_CHILDREN),
        "{root:?}"
    );
    let frames = if cfg!(miri) { 4 } else { 40 };
    let n = if cfg!(miri) { 40 } else { 300 };
    let mut quick = Crowd::new(n, 5);
    let mut traced = Crowd::new(n, 5);
    for t in 0..frames {
        quick.tick(t, false);
        let input = input(t);
        for (i, (a, m)) in traced.ants.iter_mut().zip(&mut traced.memories).enumerate() {
            let input = input(i, a).with_agent(i as u32);
            tick_traced(&ANTS, a, m, &input, &mut TraceRecorder::new()).unwrap();
        }
        let (q, s) = (quick.state(), traced.state());
        assert!(q.0 == s.0, "agents, frame {t}");
        assert_eq!(q.1, s.1, "paths, frame {t}");
        assert_eq!(q.2, s.2, "shared, frame {t}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x05EE_DA17),
        ..proptest::test_runner::Config::with_cases(24)
    })]

    /// Random crowds (1 to 4 parts, random seeds, random frame counts):
    /// `par_tick_all` gives exactly what `tick_all` gives, frame by frame.
    #[test]
    #[cfg_attr(miri, ignore)] // too slow under Miri
    fn par_tick_all_matches_tick_all_on_gates_cooldowns_and_roles(
        agents in 1usize..1000,
        frames in 1u32..24,
        seed in proptest::prelude::any::<u64>(),
    ) {
        compare(agents, frames, seed);
    }
}

/// The crowd a callback of [`HOSTS`] ticks in parallel, and how many times
/// it ticked it.
static NESTED: std::sync::Mutex<Option<(Crowd, u32)>> = std::sync::Mutex::new(None);

/// Ticks [`NESTED`] once more in parallel: its frames are numbered by the
/// calls, so two runs that make as many calls leave it alike.
fn tick_nested() {
    let mut nested = NESTED.lock().unwrap();
    let (crowd, calls) = nested.as_mut().unwrap();
    *calls += 1;
    let report = crowd.tick(*calls, true);
    assert_eq!(report.errors, 0);
}

behavior! { ANT_HOST: Ant,
    tick: |a, cx| {
        a.note("host", cx.now);
        if a.pick(5, 6) == 0 {
            tick_nested();
        }
        a.pick(7, 3) != 0
    },
}
decider! { HOST_GATED: Ant => ANT_HOST, gate: 40 }
decider! { HOST_IDLE: Ant => ANT_IDLE }
group! { HOST_ROOT: Ant, prioritized [HOST_GATED, HOST_IDLE] }
tree! {
    /// A crowd with a gate whose behavior ticks another crowd in parallel
    /// from its callback.
    HOSTS: Ant = HOST_ROOT,
    memory: HostMemory,
}

/// A callback of a shared crowd ticked in parallel ticks another shared
/// crowd in parallel, on the same pool: every tick finishes (the threads
/// never wait for one another), both crowds as `tick_all` leaves them.
#[test]
#[cfg_attr(miri, ignore)] // rayon's pool, nested
fn a_callback_that_ticks_another_crowd_in_parallel_ends_as_tick_all_would() {
    let agents = 3 * PART + 5;
    let run = move |parallel: bool| {
        *NESTED.lock().unwrap() = Some((Crowd::new(50, 8), 0));
        let shared = HOSTS.new_shared(0);
        let mut ants: Vec<Ant> = (0..agents).map(|i| Ant::new(i, 4)).collect();
        let mut memories: Vec<HostMemory> = (0..agents)
            .map(|i| HOSTS.new_memory_in(&shared, i as u64))
            .collect();
        let mut reports = Vec::new();
        for t in 0..12 {
            let input = input(t);
            reports.push(if parallel {
                par_tick_all(&HOSTS, &mut ants, &mut memories, input)
            } else {
                tick_all(&HOSTS, &mut ants, &mut memories, input)
            });
        }
        let (nested, calls) = NESTED.lock().unwrap().take().unwrap();
        let paths: Vec<Vec<ItemIdx>> = memories
            .iter()
            .map(|m| m.active_path().map(|l| l.item).collect())
            .collect();
        (reports, ants, paths, nested.state(), calls)
    };
    let serial = run(false);
    assert!(
        serial.4 > 12,
        "the callbacks ticked the other crowd {} times",
        serial.4
    );
    // A run that never ends fails here rather than holding the suite.
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(run(true)).unwrap());
    let parallel = ended
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("par_tick_all ended within two minutes");
    assert_eq!(serial.0, parallel.0, "reports");
    assert!(serial.1 == parallel.1, "agents");
    assert_eq!(serial.2, parallel.2, "paths");
    assert_eq!(serial.4, parallel.4, "calls");
    assert!(serial.3.0 == parallel.3.0, "the other crowd's agents");
    assert_eq!(serial.3.1, parallel.3.1, "the other crowd's paths");
    assert_eq!(serial.3.2, parallel.3.2, "the other crowd's shared state");
}
