//! Rates the game changes often (by distance to the camera, say): a
//! brain that has gone both its old and its new period without a tick
//! when its rate changes ticks at once, so a brain whose rate keeps
//! changing among periods up to `K` ticks within `2K - 2` runs of its
//! last tick; a change in steady use adds no tick; and every tick system
//! (entity by entity, table chunk by table chunk, in entity order, in two
//! phases) ticks the same brains in the same runs, budget or not.

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, DebugBrain, Decisions, Rate, TickRate};
use bt_core::{Schedule, behavior, decider, group, tree};

use crate::common::app;

/// A walker.
#[derive(Component, Default)]
struct Walker;
bt_bevy::component_agent!(Walker);

behavior! { WALK: Walker }
decider! { WALKING: Walker => WALK }
tree! { WALKERS: Walker = WALKING, memory: WalkerMemory }

// The same with a gate: its brains tick in entity order.
decider! { IN_FRONT: Walker => WALK, gate: 3 }
group! { FILE: Walker, prioritized [IN_FRONT, WALKING] }
tree! { FILED: Walker = FILE, memory: FiledMemory }

/// How the crowd's brains tick.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// In parallel, entity by entity.
    Plain,
    /// In parallel, table chunk by table chunk.
    Dense,
    /// In entity order, one after the other (a tree with a gate).
    Ordered,
    /// In entity order's decisions, on every thread (a tree with a gate).
    TwoPhases,
}

const PATHS: [Path; 4] = [Path::Plain, Path::Dense, Path::Ordered, Path::TwoPhases];

/// A crowd of `n` walkers ticked by `path` under `budget`, each with
/// `Decisions` (as the chunked tick's short loop wants) and `first` as
/// its rate.
struct Crowd {
    app: App,
    path: Path,
    walkers: Vec<Entity>,
    /// Each walker's last tick as its brain tells it.
    last: Vec<Option<f64>>,
}

impl Crowd {
    fn new(path: Path, budget: Option<u32>, n: usize, first: Option<TickRate>) -> Self {
        let mut app = app();
        macro_rules! add {
            ($plugin:expr) => {{
                let plugin = $plugin.in_schedule(Update);
                match budget {
                    Some(b) => app.add_plugins(plugin.budget(b)),
                    None => app.add_plugins(plugin),
                }
            }};
        }
        match path {
            Path::Plain => add!(BrainPlugin::new(&WALKERS)),
            Path::Dense => add!(BrainPlugin::new(&WALKERS).dense()),
            Path::Ordered => add!(BrainPlugin::new(&FILED).parallel_from(u32::MAX)),
            Path::TwoPhases => add!(BrainPlugin::new(&FILED).parallel_from(0)),
        };
        let walkers = (0..n)
            .map(|_| {
                let mut e = app.world_mut().spawn((Walker, Decisions::default()));
                match path {
                    Path::Plain | Path::Dense => e.insert(Brain::new(&WALKERS)),
                    Path::Ordered | Path::TwoPhases => e.insert(Brain::new(&FILED)),
                };
                if let Some(rate) = first {
                    e.insert(rate);
                }
                e.id()
            })
            .collect();
        Crowd {
            app,
            path,
            walkers,
            last: vec![None; n],
        }
    }

    /// Sets walker `i`'s rate (`None`: takes its `TickRate` away).
    fn set(&mut self, i: usize, rate: Option<TickRate>) {
        let mut e = self.app.world_mut().entity_mut(self.walkers[i]);
        if e.get::<TickRate>().copied() == rate {
            return;
        }
        match rate {
            Some(rate) => _ = e.insert(rate),
            None => _ = e.remove::<TickRate>(),
        }
    }

    /// Runs once: which walkers ticked.
    fn run(&mut self) -> Vec<bool> {
        self.app.update();
        let last = self.lasts();
        let ticked = last.iter().zip(&self.last).map(|(a, b)| a != b).collect();
        self.last = last;
        ticked
    }

    /// Each walker's last tick, as its brain tells it.
    fn lasts(&self) -> Vec<Option<f64>> {
        let world = self.app.world();
        (self.walkers.iter())
            .map(|&e| match self.path {
                Path::Plain | Path::Dense => world
                    .get::<Brain<WalkerMemory>>(e)
                    .unwrap()
                    .last_ticked_at(),
                Path::Ordered | Path::TwoPhases => {
                    world.get::<Brain<FiledMemory>>(e).unwrap().last_ticked_at()
                }
            })
            .collect()
    }

    /// Walker `i`'s agent id, the id its turns are spread by.
    fn slot(&self, i: usize) -> u32 {
        self.walkers[i].index_u32()
    }
}

fn every(k: u32) -> Option<TickRate> {
    Some(TickRate::new(Rate::Every(k)).unwrap())
}

/// The walkers that ticked are those wanted; else the ones that differ.
#[track_caller]
fn same(got: &[bool], want: &[bool], what: &str) {
    let wrong: Vec<(usize, bool)> = (0..want.len())
        .filter(|&i| got[i] != want[i])
        .map(|i| (i, got[i]))
        .collect();
    assert!(
        wrong.is_empty(),
        "{what}: walkers (index, ticked) {wrong:?}"
    );
}

/// Whether run `r` is the turn of agent id `slot` at period `k`.
fn turn(slot: u32, k: u32, r: u64) -> bool {
    r % u64::from(k) == u64::from(Schedule::phase(slot as usize, k))
}

/// The longest gap between two ticks of each walker over `runs` (each
/// run's ticks), from its first tick on: after its last tick, at least
/// the runs to the end and one (more than `runs.len()` if it never
/// ticked).
fn longest_gaps(runs: &[Vec<bool>]) -> Vec<usize> {
    let n = runs[0].len();
    (0..n)
        .map(|i| {
            let ticks: Vec<usize> = (0..runs.len()).filter(|&t| runs[t][i]).collect();
            let Some(&last) = ticks.last() else {
                return runs.len() + 1;
            };
            let between = ticks.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
            between.max(runs.len() - last)
        })
        .collect()
}

/// 64 walkers at `Every(16)`, their rate flipped between `Every(4)` and
/// `Every(16)` in every run from their first run on, or after 16 runs
/// (each ticked once): each ticks within 16 runs of its last tick, or of
/// the start, those whose turns at either rate never come at that rate's
/// runs too (without the rule, they would never tick again).
#[test]
fn a_brain_whose_rate_flips_every_run_ticks_within_the_longer_period() {
    for path in PATHS {
        for start in [0, 16] {
            let mut crowd = Crowd::new(path, None, 64, every(16));
            let mut runs = Vec::new();
            for r in 0..416u64 {
                if r >= start {
                    let rate = if r % 2 == 0 { every(4) } else { every(16) };
                    for i in 0..64 {
                        crowd.set(i, rate);
                    }
                }
                runs.push(crowd.run());
            }
            // Odd turns of 4 come at the runs of 16, even turns of 16 at
            // those of 4: such a walker's own turns never come.
            let starved: Vec<usize> = (0..64)
                .filter(|&i| {
                    let s = crowd.slot(i) as usize;
                    !Schedule::phase(s, 4).is_multiple_of(2)
                        && Schedule::phase(s, 16).is_multiple_of(2)
                })
                .collect();
            assert!(!starved.is_empty(), "{path:?}: no walker to starve");
            let gaps = longest_gaps(&runs);
            for (i, &gap) in gaps.iter().enumerate() {
                assert!(
                    gap <= 16,
                    "{path:?} from {start}: walker {i}, a gap of {gap} runs"
                );
                let first = runs.iter().position(|run| run[i]);
                assert!(
                    first.is_some_and(|f| f < 16),
                    "{path:?} from {start}: walker {i} first ticked in {first:?}"
                );
            }
        }
    }
}

/// 200 walkers swaying between `Every(4)` and `Every(16)` every `m`
/// runs (each from its own offset), for `m` from 1 to 8, 600 runs:
/// none goes more than `2 * 16 - 2` runs without a tick.
#[test]
fn a_crowd_swaying_between_two_rates_ticks_within_twice_the_longer_period() {
    const N: usize = 200;
    for m in 1..=8u64 {
        let mut crowd = Crowd::new(Path::Plain, None, N, every(16));
        let mut runs = Vec::new();
        for r in 0..616u64 {
            if r >= 16 {
                for i in 0..N {
                    let far = ((r + i as u64) / m).is_multiple_of(2);
                    crowd.set(i, if far { every(16) } else { every(4) });
                }
            }
            runs.push(crowd.run());
        }
        let worst = longest_gaps(&runs).into_iter().max().unwrap();
        assert!(worst <= 2 * 16 - 2, "m = {m}: a gap of {worst} runs");
    }
}

/// A crowd switched at once from `Every(16)` to `Every(4)` ticks in that
/// run the walkers whose turn it is at either rate, and from then on
/// those whose `Every(4)` turn it is; switched back, those whose
/// `Every(16)` turn it is: in steady use, a change adds no tick.
#[test]
fn a_crowd_switched_in_bulk_ticks_no_more_than_its_turns() {
    const N: usize = 1000;
    for path in [Path::Plain, Path::Dense] {
        let mut crowd = Crowd::new(path, None, N, every(16));
        for _ in 0..40 {
            crowd.run();
        }
        let switch = |crowd: &mut Crowd, k: u32| {
            for i in 0..N {
                crowd.set(i, every(k));
            }
        };
        switch(&mut crowd, 4);
        let slots: Vec<u32> = (0..N).map(|i| crowd.slot(i)).collect();
        let want = |r: u64, periods: &[u32]| -> Vec<bool> {
            (slots.iter())
                .map(|&s| periods.iter().any(|&k| turn(s, k, r)))
                .collect()
        };
        let got = crowd.run();
        let both = want(40, &[16, 4]);
        let extra = (0..N)
            .filter(|&i| both[i] && !turn(slots[i], 4, 40))
            .count();
        assert!(extra > 0, "{path:?}: the turns of 16 add to those of 4");
        same(&got, &both, &format!("{path:?}: the run of the switch"));
        for r in 41..60 {
            same(&crowd.run(), &want(r, &[4]), &format!("{path:?}: run {r}"));
        }
        switch(&mut crowd, 16);
        for r in 60..80 {
            same(&crowd.run(), &want(r, &[16]), &format!("{path:?}: run {r}"));
        }
    }
}

/// A walker's rate in a run of the differential test: from its own
/// coin flips, changed every `1 + i % 6` runs, among no `TickRate`,
/// every run, every 2nd, 3rd, 4th or 16th run and only when woken.
fn swaying_rate(i: usize, r: u64) -> Option<TickRate> {
    let m = 1 + i as u64 % 6;
    let mut h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (r / m);
    h = h.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    h ^= h >> 29;
    match (h >> 7) % 10 {
        0 => None,
        1 => Some(TickRate::EVERY_RUN),
        2 => every(2),
        3 => every(3),
        4 | 5 => every(4),
        6..=8 => every(16),
        _ => Some(TickRate::ON_WAKE),
    }
}

/// The schedule as the rate-change rule has it, brain by brain: each
/// one's due run (`None`: not due), last tick and the period the last run
/// found (1: no `TickRate`, 0: only when woken; `None` before the first).
struct Model {
    slots: Vec<u32>,
    since: Vec<Option<u64>>,
    last: Vec<Option<u64>>,
    seen: Vec<Option<u32>>,
}

impl Model {
    fn new(slots: Vec<u32>) -> Self {
        let n = slots.len();
        Model {
            slots,
            since: vec![None; n],
            last: vec![None; n],
            seen: vec![None; n],
        }
    }

    /// Run `r` with each brain's period: which brains tick.
    fn run(&mut self, r: u64, periods: &[u32], budget: Option<u32>) -> Vec<bool> {
        let n = self.slots.len();
        let mut due = Vec::new();
        for (i, &new) in periods.iter().enumerate() {
            let (old, slot) = (self.seen[i], self.slots[i]);
            let own = match new {
                0 => false,
                1 => true,
                k => turn(slot, k, r),
            };
            // A brain that never ticked counts from before run 0; the rate
            // it landed with is no change.
            let starved = old.is_some_and(|old| {
                old != new
                    && old != 0
                    && new != 0
                    && self.last[i].map_or(r + 1, |l| r - l) >= u64::from(old.max(new))
            });
            self.seen[i] = Some(new);
            let since = self.since[i].or((own || starved).then_some(r));
            if let Some(s) = since {
                due.push((s, slot, i));
            }
        }
        due.sort_unstable();
        let cut = budget.map_or(due.len(), |b| (b as usize).min(due.len()));
        let mut ticked = vec![false; n];
        for (k, &(s, _, i)) in due.iter().enumerate() {
            if k < cut {
                ticked[i] = true;
                self.since[i] = None;
                self.last[i] = Some(r);
            } else {
                self.since[i] = Some(s);
            }
        }
        ticked
    }
}

/// 300 walkers whose rates sway on their own, two of them traced: every
/// tick system ticks the walkers the rule says, in every run, with no
/// budget and under one.
#[test]
fn every_tick_system_ticks_a_swaying_crowd_as_the_rule_says() {
    const N: usize = 300;
    for budget in [None, Some(70)] {
        for path in PATHS {
            let mut crowd = Crowd::new(path, budget, N, None);
            for i in [5, 200] {
                let e = crowd.walkers[i];
                crowd
                    .app
                    .world_mut()
                    .entity_mut(e)
                    .insert(DebugBrain::quiet());
            }
            let mut model = Model::new((0..N).map(|i| crowd.slot(i)).collect());
            let mut starved = 0;
            for r in 0..400u64 {
                let rates: Vec<Option<TickRate>> = (0..N).map(|i| swaying_rate(i, r)).collect();
                for (i, &rate) in rates.iter().enumerate() {
                    crowd.set(i, rate);
                }
                let periods: Vec<u32> = rates.iter().map(|r| period(*r)).collect();
                let want = model.run(r, &periods, budget);
                let got = crowd.run();
                same(
                    &got,
                    &want,
                    &format!("{path:?}, budget {budget:?}: run {r}"),
                );
                starved += (0..N)
                    .filter(|&i| want[i] && periods[i] > 1 && !turn(model.slots[i], periods[i], r))
                    .count();
            }
            // The rule made brains due out of their turns.
            assert!(starved > 100, "{path:?}, budget {budget:?}: {starved}");
        }
    }
}

/// The period of `rate`, as the model counts it.
fn period(rate: Option<TickRate>) -> u32 {
    match rate.map(TickRate::rate) {
        None | Some(Rate::EveryFrame) => 1,
        Some(Rate::Every(k)) => k,
        Some(Rate::OnWake) => 0,
    }
}

#[cfg(feature = "serde")]
impl Crowd {
    /// A save of the walkers' brains (JSON), each by its place in the crowd.
    fn save(&mut self) -> Vec<u8> {
        match self.path {
            Path::Plain | Path::Dense => self.save_as::<WalkerMemory>(),
            Path::Ordered | Path::TwoPhases => self.save_as::<FiledMemory>(),
        }
    }

    fn save_as<M: bt_bevy::TreeMemory>(&mut self) -> Vec<u8> {
        use bt_bevy::{NoSenses, SaveBrains};
        let walkers = self.walkers.clone();
        let world = self.app.world_mut();
        let key = |e: Entity| walkers.iter().position(|&w| w == e);
        serde_json::to_vec(&world.save_brains::<M, NoSenses, usize>(key)).unwrap()
    }

    /// Loads `save` into the walkers' brains.
    fn load(&mut self, save: &[u8]) {
        match self.path {
            Path::Plain | Path::Dense => self.load_as::<WalkerMemory>(save),
            Path::Ordered | Path::TwoPhases => self.load_as::<FiledMemory>(save),
        }
        self.last = self.lasts();
    }

    fn load_as<M: bt_bevy::TreeMemory>(&mut self, save: &[u8]) {
        use bt_bevy::{NoSenses, SaveBrains};
        let walkers = self.walkers.clone();
        let world = self.app.world_mut();
        let mut d = serde_json::Deserializer::from_slice(save);
        let loaded = world
            .load_brains::<M, NoSenses, usize, _>(&mut d, |&i| walkers.get(i).copied())
            .unwrap();
        assert_eq!(loaded.brains, walkers.len());
    }
}

/// 200 walkers swaying between `Every(16)` and `Every(4)` (each every
/// `1 + i % 4` runs), saved after the game changed their rates and before
/// the run that sees the change (in a run where that change makes
/// walkers due, and in one where it makes none), and loaded into a fresh
/// app whose clock and run count moved on: the loaded walkers tick in the
/// runs the saved ones would have, within 30 runs of their last ticks.
#[cfg(feature = "serde")]
#[test]
fn a_loaded_swaying_crowd_ticks_as_the_saved_one_would_have() {
    const N: usize = 200;
    const RUNS: u64 = 200;
    let rate = |i: usize, r: u64| {
        let m = 1 + i as u64 % 4;
        if ((r + i as u64) / m).is_multiple_of(2) {
            every(16)
        } else {
            every(4)
        }
    };
    for path in [Path::Plain, Path::Ordered] {
        let mut a = Crowd::new(path, None, N, every(16));
        let mut straight = Vec::new();
        let mut saves = Vec::new();
        for r in 0..RUNS {
            if r >= 16 {
                // A rate the game sets and changes again before the run
                // (saved in between): the run sees only the last.
                for i in (0..N).step_by(3) {
                    a.set(i, every(3));
                }
                saves.push(a.save());
                for i in 0..N {
                    a.set(i, rate(i, r));
                }
            } else {
                saves.push(a.save());
            }
            straight.push(a.run());
        }
        let worst = longest_gaps(&straight).into_iter().max().unwrap();
        assert!(worst <= 30, "{path:?}: a gap of {worst} runs");
        // The runs from 40 on in which walkers ticked out of their turns.
        let (made, plain): (Vec<u64>, Vec<u64>) = (40..RUNS).partition(|&r| {
            (0..N).any(|i| {
                let k = period(rate(i, r));
                straight[r as usize][i] && !turn(a.slot(i), k, r)
            })
        });
        // Saved before the first run too: no run has seen a rate yet.
        for saved in [0, made[0], plain[0]] {
            let mut b = Crowd::new(path, None, N, every(3));
            for _ in 0..7 {
                b.run();
            }
            b.load(&saves[saved as usize]);
            for r in saved..RUNS {
                for i in (0..N).filter(|_| r >= 16) {
                    b.set(i, rate(i, r));
                }
                let what = format!("{path:?}: run {r}, loaded at run {saved}");
                same(&b.run(), &straight[r as usize], &what);
            }
        }
    }
}
