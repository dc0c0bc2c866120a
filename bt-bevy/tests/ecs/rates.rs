//! Tick rates, a budget and waking through the plugin, against bt-core's
//! own scheduled crowd (`tick_scheduled`) with the same rates, budget and
//! seeds: the same brains tick in the same runs and decide the same.

use std::collections::BTreeMap;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{Brain, BrainPlugin, BrainShared, BrainStats, Rate, Senses, TickRate};
use bt_core::{
    Action, Outcome, Schedule, TickInput, behavior, decider, group, tick_scheduled, tree,
};

use crate::common::{app, clock};
use crate::crowd::{creature, w1_app_with};
use crate::w1_core::{Agent, W1, W1Memory};

/// The rate of creature `i` in phase `phase` of a run: near, middle, far.
fn rate_of(i: usize, phase: usize) -> Rate {
    match (i + phase) % 3 {
        0 => Rate::EveryFrame,
        1 => Rate::Every(4),
        _ => Rate::Every(10),
    }
}

fn w1_app(dense: bool, budget: Option<u32>) -> App {
    w1_app_with(dense, |plugin| match budget {
        Some(b) => plugin.budget(b),
        None => plugin,
    })
}

#[test]
fn rates_and_a_budget_tick_the_brains_tick_scheduled_ticks() {
    scheduled_as_bt_core(false, Some(150));
}

#[test]
fn dense_ticking_keeps_rates_and_the_budget() {
    scheduled_as_bt_core(true, Some(150));
}

#[test]
fn rates_without_a_budget_tick_each_brain_on_its_turn() {
    scheduled_as_bt_core(true, None);
}

/// Creature `i`'s rate in run `frame`: every fifth flips between
/// `Every(4)` and `Every(10)` each run (the rate-change rule makes it due
/// when it has gone ten runs without a tick), the others move on among
/// the three every `1 + i % 4` runs.
fn rate_at(i: usize, frame: usize) -> Rate {
    match (i % 5, frame % 2) {
        (0, 0) => Rate::Every(4),
        (0, _) => Rate::Every(10),
        _ => rate_of(i, frame / (1 + i % 4)),
    }
}

/// 600 W1 creatures at three rates (swaying from run to run), under `budget`:
/// each run, every brain's behavior and the run's figures are those of
/// bt-core's `tick_scheduled` over a crowd indexed by entity index.
fn scheduled_as_bt_core(dense: bool, budget: Option<u32>) {
    const N: usize = 600;
    const FRAMES: usize = 90;
    let mut app = w1_app(dense, budget);
    let entities: Vec<Entity> = (0..N)
        .map(|i| {
            let e = app.world_mut().spawn(creature(i)).id();
            let rate = TickRate::new(rate_at(i, 0)).unwrap();
            app.world_mut().entity_mut(e).insert(rate);
            e
        })
        .collect();
    // The reference crowd is indexed by entity index; the indexes no brain
    // has are never due.
    let slots = entities.iter().map(|e| e.index_u32()).max().unwrap() as usize + 1;
    let mut by_slot = vec![None; slots];
    for (i, e) in entities.iter().enumerate() {
        by_slot[e.index_u32() as usize] = Some(i);
    }
    let mut agents: Vec<Agent> = (0..slots)
        .map(|s| creature(by_slot[s].unwrap_or(0)).0)
        .collect();
    let mut memories: Vec<W1Memory> = (0..slots)
        .map(|s| W1.new_memory(by_slot[s].map_or(0, |i| i as u64 + 1)))
        .collect();
    let mut schedule = Schedule::new(slots, 0.0).with_budget(budget);
    for (s, i) in by_slot.iter().enumerate() {
        let rate = i.map_or(Rate::OnWake, |i| rate_at(i, 0));
        schedule.set_rate(s, rate).unwrap();
    }
    let (mut waited, mut skipped) = (0, 0);
    for frame in 0..FRAMES {
        // Each creature's rate sways from the second run on: the
        // rate-change rule makes some due at once, on both sides alike.
        for (i, e) in entities.iter().enumerate() {
            let now = rate_at(i, frame);
            if frame > 0 && rate_at(i, frame - 1) != now {
                let rate = TickRate::new(now).unwrap();
                app.world_mut().entity_mut(*e).insert(rate);
                schedule.set_rate(e.index_u32() as usize, now).unwrap();
            }
        }
        app.update();
        let (now, _) = clock(&app);
        for (s, a) in agents.iter_mut().enumerate() {
            if by_slot[s].is_some() {
                a.world.step();
            }
        }
        let report = tick_scheduled(
            &W1,
            &mut agents,
            &mut memories,
            &mut schedule,
            now,
            |_, a, dt| TickInput::new(now, dt).with_decision(a.world.flags()),
        );
        let got = leaves(&mut app);
        for (i, e) in entities.iter().enumerate() {
            let s = e.index_u32() as usize;
            assert_eq!(got[e], memories[s].leaf(), "frame {frame}, creature {i}");
        }
        let stats = app.world().resource::<BrainStats<W1Memory>>();
        let want = (
            u64::from(report.ticked),
            u64::from(report.due),
            u64::from(report.waiting),
            report.longest_wait,
        );
        assert_eq!(
            (stats.ticked, stats.due, stats.waiting, stats.longest_wait),
            want,
            "frame {frame}: ticked, due, waiting, longest wait"
        );
        if let Some(b) = budget {
            assert!(stats.ticked <= u64::from(b), "frame {frame} over budget");
            let bound = app.world().resource::<BrainShared<W1Memory>>().crowds()[0]
                .wait_bound(N)
                .unwrap();
            assert!(
                stats.longest_wait <= bound,
                "frame {frame}: waited past {bound}"
            );
        }
        waited = waited.max(stats.longest_wait);
        skipped += N as u64 - stats.ticked;
    }
    // The rates skipped brains; the budget, when there is one, held some.
    assert!(skipped > (N * FRAMES / 3) as u64, "skipped {skipped}");
    assert_eq!(waited > 0, budget.is_some(), "longest wait {waited}");
}

/// The active behavior of every brain, by entity.
fn leaves(app: &mut App) -> BTreeMap<Entity, Option<bt_core::ItemIdx>> {
    let world = app.world_mut();
    world
        .query::<(Entity, &Brain<W1Memory>)>()
        .iter(world)
        .map(|(e, b)| (e, b.memory().leaf()))
        .collect()
}

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Noise: u8 { const BANG = 1; }
}

bt_core::bitflags::bitflags! {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Orders: u64 { const FETCH = 1; }
}

/// A sleeper that counts its ticks and keeps each tick's `dt`.
#[derive(Component, Default)]
struct Sleeper {
    ticks: u32,
    dts: Vec<f32>,
    fetched: u32,
}
bt_bevy::component_agent!(Sleeper);

behavior! { DOZE: Sleeper, tick: |s, cx| { s.ticks += 1; s.dts.push(cx.dt); true } }
behavior! { LISTEN: Sleeper, tick: |s, cx| { s.ticks += 1; s.dts.push(cx.dt); true } }
behavior! { FETCH: Sleeper,
launch: |_s, cx| Some(Action::new(1, u64::from(cx.agent))),
tick: |s, cx| { s.ticks += 1; s.dts.push(cx.dt); s.fetched += 1; true } }
decider! { HEAR: Sleeper => LISTEN, stimuli_any: Noise::BANG }
decider! { GO_FETCH: Sleeper => FETCH, needs_all: Orders::FETCH }
decider! { SLEEP: Sleeper => DOZE }
group! { SLEEPER_ROOT: Sleeper, prioritized [HEAR, GO_FETCH, SLEEP] }
tree! { SLEEPERS: Sleeper = SLEEPER_ROOT, memory: SleeperMemory }

type Ears = Senses<Noise, 2>;

fn sleeper_app() -> App {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&SLEEPERS)
            .in_schedule(Update)
            .with_senses::<Ears>(),
    );
    app
}

fn ticks(app: &App, e: Entity) -> u32 {
    app.world().get::<Sleeper>(e).unwrap().ticks
}

#[test]
fn a_brain_ticked_on_wake_ticks_once_per_wake_stimulus_or_outcome() {
    let mut app = sleeper_app();
    let e = app
        .world_mut()
        .spawn((
            Sleeper::default(),
            Ears::default(),
            Brain::new(&SLEEPERS),
            TickRate::ON_WAKE,
        ))
        .id();
    let other = app
        .world_mut()
        .spawn((Sleeper::default(), Brain::new(&SLEEPERS)))
        .id();
    for _ in 0..5 {
        app.update();
    }
    assert_eq!((ticks(&app, e), ticks(&app, other)), (0, 5), "asleep");
    // A call wakes it for one run.
    app.world_mut()
        .get_mut::<Brain<SleeperMemory>>(e)
        .unwrap()
        .wake();
    assert!(app.world().get::<Brain<SleeperMemory>>(e).unwrap().is_due());
    app.update();
    app.update();
    assert_eq!(ticks(&app, e), 1, "one tick per wake");
    // A new stimulus wakes it, and it hears it.
    app.world_mut()
        .get_mut::<Ears>(e)
        .unwrap()
        .set(Noise::BANG, 0, Some(10.0))
        .unwrap();
    app.update();
    assert_eq!(ticks(&app, e), 2);
    let brain = app.world().get::<Brain<SleeperMemory>>(e).unwrap();
    assert_eq!(brain.running_decider(), Some("HEAR"));
    app.update();
    assert_eq!(
        ticks(&app, e),
        2,
        "its own aging of the senses wakes nothing"
    );
    // Its first tick gets the frame's step, the next the time since its
    // own last tick: two runs.
    let dts = app.world().get::<Sleeper>(e).unwrap().dts.clone();
    let frame = (1.0 / crate::common::FPS) as f32;
    assert_eq!(dts.len(), 2);
    assert!((dts[0] - frame).abs() < 1e-4, "first tick: {dts:?}");
    assert!((dts[1] - 2.0 * frame).abs() < 1e-4, "second tick: {dts:?}");
}

#[test]
fn a_skipped_brain_gets_the_time_since_its_own_last_tick_as_dt() {
    let mut app = sleeper_app();
    let e = app
        .world_mut()
        .spawn((
            Sleeper::default(),
            Brain::new(&SLEEPERS),
            TickRate::new(Rate::Every(3)).unwrap(),
        ))
        .id();
    for _ in 0..12 {
        app.update();
    }
    let s = app.world().get::<Sleeper>(e).unwrap();
    assert_eq!(s.ticks, 4, "every third run of twelve");
    let frame = (1.0 / crate::common::FPS) as f32;
    // After the first, each tick is three runs after the one before.
    for dt in &s.dts[1..] {
        assert!((dt - 3.0 * frame).abs() < 1e-4, "{:?}", s.dts);
    }
    let brain = app.world().get::<Brain<SleeperMemory>>(e).unwrap();
    let (now, _) = clock(&app);
    assert!(brain.last_ticked_at().unwrap() <= now);
}

/// A brain that ticked in the run before gets the frame's step as its
/// `dt`: `Time::delta_secs` to the last bit, also where the difference of
/// the clock's readings in `f64` seconds rounds otherwise in the `f32`
/// (steps of a nanosecond, hours into a game), as the crate docs say.
#[test]
fn a_brain_that_ticked_in_the_run_before_gets_the_frames_step_to_the_last_bit() {
    use std::time::Duration;
    let mut app = sleeper_app();
    app.world_mut()
        .resource_mut::<bevy_time::Time<bevy_time::Virtual>>()
        .set_max_delta(Duration::from_secs(100_000));
    let e = app
        .world_mut()
        .spawn((Sleeper::default(), Brain::new(&SLEEPERS)))
        .id();
    let step = |app: &mut App, d: Duration| {
        app.insert_resource(bevy_time::TimeUpdateStrategy::ManualDuration(d));
        app.update();
    };
    step(&mut app, Duration::from_secs(10_000));
    let (mut before, _) = clock(&app);
    let mut rounded_otherwise = 0;
    for k in 0..40 {
        let nanos = if k % 2 == 0 { 1 } else { 16_666_667 };
        step(&mut app, Duration::from_nanos(nanos));
        let (now, delta) = clock(&app);
        let dt = *app.world().get::<Sleeper>(e).unwrap().dts.last().unwrap();
        assert_eq!(
            dt.to_bits(),
            delta.to_bits(),
            "run {k}: dt {dt}, the frame's step {delta}"
        );
        rounded_otherwise += usize::from(((now - before) as f32).to_bits() != delta.to_bits());
        before = now;
    }
    assert!(
        rounded_otherwise > 0,
        "no step whose readings' difference rounds otherwise"
    );
}

/// A brain's first tick gets the frame's step as its `dt` whenever its
/// first turn comes, where a scheduled crowd would give an agent's first
/// tick the time since the schedule was made; the brains tick in the runs
/// of their phases, as that crowd's agents would.
#[test]
fn a_brains_first_tick_gets_the_frames_step_whenever_its_first_turn_comes() {
    let mut app = sleeper_app();
    let brains: Vec<Entity> = (0..16)
        .map(|_| {
            let rate = TickRate::new(Rate::Every(8)).unwrap();
            let sleeper = (Sleeper::default(), Brain::new(&SLEEPERS), rate);
            app.world_mut().spawn(sleeper).id()
        })
        .collect();
    let mut first = vec![None; brains.len()];
    for r in 0..8u64 {
        app.update();
        let (_, delta) = clock(&app);
        for (k, e) in brains.iter().enumerate() {
            let s = app.world().get::<Sleeper>(*e).unwrap();
            if s.ticks > 0 && first[k].is_none() {
                assert_eq!(s.ticks, 1, "brain {k}");
                assert_eq!(s.dts[0].to_bits(), delta.to_bits(), "brain {k}, run {r}");
                first[k] = Some(r);
            }
        }
    }
    for (k, e) in brains.iter().enumerate() {
        let phase = Schedule::phase(e.index_u32() as usize, 8);
        assert_eq!(first[k], Some(u64::from(phase)), "brain {k}");
    }
    assert!(
        first.iter().any(|&r| r > Some(0)),
        "every first turn in the first run"
    );
}

#[test]
fn a_reported_outcome_wakes_the_brain_that_launched() {
    let mut app = sleeper_app();
    let e = app
        .world_mut()
        .spawn((
            Sleeper::default(),
            Brain::new(&SLEEPERS),
            bt_bevy::Decisions(1),
            TickRate::new(Rate::Every(50)).unwrap(),
        ))
        .id();
    // The brain of entity index i ticks in the runs i modulo 50: run until
    // its first tick launches the fetch.
    let mut runs = 0;
    while ticks(&app, e) == 0 {
        app.update();
        runs += 1;
        assert!(runs <= 50, "never ticked");
    }
    let mut reader = app
        .world_mut()
        .resource_mut::<bevy_ecs::message::Messages<bt_bevy::ActionMessage<SleeperMemory>>>();
    let launch = reader.drain().next().expect("a launch");
    app.update();
    assert_eq!(ticks(&app, e), 1, "not its turn");
    app.world_mut()
        .write_message(launch.outcome(Outcome::Succeeded));
    app.update();
    assert_eq!(ticks(&app, e), 2, "the outcome woke it");
}

/// A guard post of two: a guard stands watch for three of its ticks, then
/// lets another in.
#[derive(Component, Default, Clone)]
struct Guard {
    watched: u32,
}
bt_bevy::component_agent!(Guard);

behavior! { STAND: Guard, tick: |g, _cx| { g.watched += 1; g.watched % 3 != 0 } }
behavior! { LOITER: Guard }
decider! { ON_WATCH: Guard => STAND, gate: 2 }
decider! { OFF_WATCH: Guard => LOITER }
group! { POST: Guard, prioritized [ON_WATCH, OFF_WATCH] }
tree! { GUARDS: Guard = POST, memory: GuardMemory }

#[test]
fn a_tree_with_a_gate_keeps_entity_order_under_rates_and_a_budget() {
    const N: usize = 40;
    let mut app = app();
    app.add_plugins(BrainPlugin::new(&GUARDS).in_schedule(Update).budget(12));
    let rate = |i: usize| {
        if i.is_multiple_of(2) {
            Rate::EveryFrame
        } else {
            Rate::Every(3)
        }
    };
    let entities: Vec<Entity> = (0..N)
        .map(|i| {
            let rate = TickRate::new(rate(i)).unwrap();
            (app.world_mut())
                .spawn((Guard::default(), Brain::new(&GUARDS), rate))
                .id()
        })
        .collect();
    let slots = entities.iter().map(|e| e.index_u32()).max().unwrap() as usize + 1;
    let mut by_slot = vec![None; slots];
    for (i, e) in entities.iter().enumerate() {
        by_slot[e.index_u32() as usize] = Some(i);
    }
    let shared = GUARDS.new_shared(0);
    let mut guards = vec![Guard::default(); slots];
    let mut memories: Vec<GuardMemory> = (by_slot.iter())
        .map(|i| GUARDS.new_memory_in(&shared, i.map_or(0, |i| i as u64 + 1)))
        .collect();
    let mut schedule = Schedule::new(slots, 0.0).with_budget(Some(12));
    for (s, i) in by_slot.iter().enumerate() {
        schedule.set_rate(s, i.map_or(Rate::OnWake, rate)).unwrap();
    }
    let mut waits = 0;
    for frame in 0..60 {
        app.update();
        let (now, _) = clock(&app);
        let report = tick_scheduled(
            &GUARDS,
            &mut guards,
            &mut memories,
            &mut schedule,
            now,
            |_, _, dt| TickInput::new(now, dt),
        );
        for (i, e) in entities.iter().enumerate() {
            let brain = app.world().get::<Brain<GuardMemory>>(*e).unwrap();
            let s = e.index_u32() as usize;
            assert_eq!(
                brain.memory().leaf(),
                memories[s].leaf(),
                "frame {frame}, guard {i}"
            );
        }
        let stats = app.world().resource::<BrainStats<GuardMemory>>();
        assert_eq!(
            (stats.ticked, stats.waiting),
            (u64::from(report.ticked), u64::from(report.waiting)),
            "frame {frame}"
        );
        waits += stats.waiting;
    }
    assert!(waits > 0, "the budget held brains back");
    let bevy_shared = app
        .world()
        .resource::<BrainShared<GuardMemory>>()
        .state()
        .clone();
    assert_eq!(bevy_shared.gates_held(), shared.gates_held());
}

/// A dozer that keeps each tick's `dt`: a tree without shared state, whose
/// brains tick in parallel (or table chunk by table chunk).
#[derive(Component, Default)]
struct Dozer {
    dts: Vec<f32>,
}
bt_bevy::component_agent!(Dozer);

behavior! { NAP: Dozer, tick: |d, cx| { d.dts.push(cx.dt); true } }
behavior! { STARTLE: Dozer, tick: |d, cx| { d.dts.push(cx.dt); true } }
decider! { STARTLED: Dozer => STARTLE, stimuli_any: Noise::BANG }
decider! { NAPPING: Dozer => NAP }
group! { DOZER_ROOT: Dozer, prioritized [STARTLED, NAPPING] }
tree! { DOZERS: Dozer = DOZER_ROOT, memory: DozerMemory }

#[test]
fn senses_wake_a_brain_ticked_in_parallel_and_it_hears_them() {
    senses_wake(false);
}

#[test]
fn dense_ticking_wakes_and_tells_a_brain_its_senses() {
    senses_wake(true);
}

/// A dozer that ticks only when woken, among dozers that tick in every
/// run (a tree without shared state, its brains ticked in parallel): a
/// noise set on its senses wakes it, and its tick hears it.
fn senses_wake(dense: bool) {
    let mut app = app();
    let plugin = (BrainPlugin::new(&DOZERS).in_schedule(Update)).with_senses::<Ears>();
    if dense {
        app.add_plugins(plugin.dense());
    } else {
        app.add_plugins(plugin);
    }
    let asleep = (Dozer::default(), Brain::new(&DOZERS), Ears::default());
    let e = (app.world_mut().spawn((asleep, TickRate::ON_WAKE))).id();
    let other = (app.world_mut())
        .spawn((Dozer::default(), Brain::new(&DOZERS), Ears::default()))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let ticks = |app: &App, e: Entity| app.world().get::<Dozer>(e).unwrap().dts.len();
    assert_eq!((ticks(&app, e), ticks(&app, other)), (0, 3));
    for d in [e, other] {
        let mut ears = app.world_mut().get_mut::<Ears>(d).unwrap();
        ears.set(Noise::BANG, 0, Some(10.0)).unwrap();
    }
    app.update();
    assert_eq!((ticks(&app, e), ticks(&app, other)), (1, 4));
    for d in [e, other] {
        let brain = app.world().get::<Brain<DozerMemory>>(d).unwrap();
        assert_eq!(brain.running_decider(), Some("STARTLED"), "{d}");
    }
}

#[test]
fn a_brain_whose_rate_is_taken_away_ticks_every_run_from_its_own_last_tick() {
    rate_taken_away(false);
}

#[test]
fn dense_ticking_gives_a_brain_whose_rate_is_taken_away_its_own_dt() {
    rate_taken_away(true);
}

/// A dozer ticking every third run loses its rate two runs after a tick,
/// woken as well: among brains that tick in every run, its next tick gets
/// the time since its own last one, and it is no longer due after it.
fn rate_taken_away(dense: bool) {
    let mut app = app();
    let plugin = BrainPlugin::new(&DOZERS).in_schedule(Update);
    if dense {
        app.add_plugins(plugin.dense());
    } else {
        app.add_plugins(plugin);
    }
    let every_third = TickRate::new(Rate::Every(3)).unwrap();
    let e = (app.world_mut())
        .spawn((Dozer::default(), Brain::new(&DOZERS), every_third))
        .id();
    let others: Vec<Entity> = (0..3)
        .map(|_| {
            let dozer = (Dozer::default(), Brain::new(&DOZERS));
            app.world_mut().spawn(dozer).id()
        })
        .collect();
    let dts = |app: &App, e: Entity| app.world().get::<Dozer>(e).unwrap().dts.clone();
    // Up to its first tick, then one run more: it waits for its turn.
    while dts(&app, e).is_empty() {
        app.update();
    }
    app.update();
    assert_eq!(dts(&app, e).len(), 1, "every third run");
    let mut brains = app.world_mut().entity_mut(e);
    brains.remove::<TickRate>();
    brains.get_mut::<Brain<DozerMemory>>().unwrap().wake();
    app.update();
    let frame = (1.0 / crate::common::FPS) as f32;
    let after = dts(&app, e);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!((after[1] - 2.0 * frame).abs() < 1e-4, "{after:?}");
    let brain = app.world().get::<Brain<DozerMemory>>(e).unwrap();
    assert!(!brain.is_due());
    assert_eq!(brain.last_ticked_at(), Some(clock(&app).0));
    app.update();
    let after = dts(&app, e);
    assert!((after[2] - frame).abs() < 1e-4, "every run now: {after:?}");
    for o in others {
        let dts = dts(&app, o);
        // The first run's clock has not moved yet.
        assert!(dts.len() >= 4, "{dts:?}");
        assert!(
            dts[1..].iter().all(|dt| (dt - frame).abs() < 1e-4),
            "{dts:?}"
        );
    }
}

/// A noise heard by a brain the budget keeps waiting: set with the time
/// since the brain's last tick (`Senses::set_since`), its time-out runs
/// from when it happened, and a brain whose tick comes after it is over
/// does not hear it; set with `set`, it would count from that tick.
#[test]
fn a_noise_set_since_the_brains_last_tick_is_over_when_its_late_tick_comes() {
    for since in [true, false] {
        let mut app = app();
        app.add_plugins(
            BrainPlugin::new(&SLEEPERS)
                .in_schedule(Update)
                .with_senses::<Ears>()
                .budget(1),
        );
        // Twenty brains due every run, one tick a run: each waits 19 runs.
        let brains: Vec<Entity> = (0..20)
            .map(|_| {
                let brain = (Sleeper::default(), Ears::default(), Brain::new(&SLEEPERS));
                app.world_mut().spawn(brain).id()
            })
            .collect();
        for _ in 0..25 {
            app.update();
        }
        // The noise, a tenth of a second long, reaches the brain that
        // ticked last, whose next tick is some 19 runs away.
        let last_tick = |app: &App, e: Entity| {
            let brain = app.world().get::<Brain<SleeperMemory>>(e).unwrap();
            brain.last_ticked_at().unwrap()
        };
        let e = *brains
            .iter()
            .max_by(|&&a, &&b| last_tick(&app, a).total_cmp(&last_tick(&app, b)))
            .unwrap();
        let now = crate::common::clock(&app).0;
        let elapsed = (now - last_tick(&app, e)) as f32;
        let mut ears = app.world_mut().get_mut::<Ears>(e).unwrap();
        if since {
            ears.set_since(Noise::BANG, 0, Some(0.1), elapsed).unwrap();
        } else {
            ears.set(Noise::BANG, 0, Some(0.1)).unwrap();
        }
        let before = ticks(&app, e);
        while ticks(&app, e) == before {
            app.update();
        }
        assert!(last_tick(&app, e) - now > 0.5, "it waited");
        let brain = app.world().get::<Brain<SleeperMemory>>(e).unwrap();
        let heard = brain.running_decider() == Some("HEAR");
        assert_eq!(heard, !since, "set_since {since}");
    }
}
