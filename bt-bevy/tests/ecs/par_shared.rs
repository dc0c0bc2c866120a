//! A tree with shared state ticked on every thread: the two phases make
//! exactly the decisions of the ordered pass (paths, reports, shared
//! state, tickets, action messages, traces), with traced and recorded
//! brains, tick rates, a budget and random senses; the stopped ticks go on
//! in entity order however the table holds the entities; and a panic in a
//! callback leaves what the ordered pass leaves.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::ThreadId;

use bevy_app::{App, PostUpdate, Update};
use bevy_ecs::prelude::*;
use bt_bevy::{
    ActionMessage, ActionOutcome, Brain, BrainPlugin, BrainShared, BrainStats, BrainSystems,
    DebugBrain, Decisions, Rate, RecordBrains, Recorded, Senses, TickRate,
};
use bt_core::{Action, Outcome, behavior, decider, group, tree};

use crate::common::app;

bitflags::bitflags! {
    /// What a trooper wants this frame.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Wants: u64 {
        const DIG = 1 << 0;
        const SHOUT = 1 << 1;
        const PAIR = 1 << 2;
        const THROW = 1 << 3;
    }
}

bitflags::bitflags! {
    /// What a trooper hears.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Noise: u64 {
        const ALARM = 1 << 0;
    }
}

/// A trooper. Its own generator drives its wishes and its senses; every
/// callback folds into `trail`, so two runs agree only if they made the
/// same calls in the same order with the same contexts. `thread` (where
/// it last ticked) is not compared.
#[derive(Component, Default)]
struct Trooper {
    state: u64,
    trail: u64,
    /// Ticks of the tree's root behavior: one per brain tick.
    ticks: u32,
    /// The thread of its last tick, and that tick's clock.
    thread: Option<(ThreadId, f64)>,
    /// Wishes forced on it, added to its own.
    forced: Wants,
    /// Its root behavior's tick panics.
    panics: bool,
    /// Its gated dig's activation panics.
    panics_dig: bool,
}
bt_bevy::component_agent!(Trooper);

impl Trooper {
    fn new(i: usize) -> Self {
        Trooper {
            state: 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93),
            ..Trooper::default()
        }
    }

    fn note(&mut self, what: &str, now: f64) {
        let mut h = self.trail ^ now.to_bits();
        for b in what.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
        self.trail = h.rotate_left(7);
    }

    fn roll(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn pick(&self, shift: u32, n: u64) -> u64 {
        (self.state >> shift) % n
    }
}

behavior! { TROOP: Trooper,
    tick: |t, cx| {
        assert!(!t.panics, "trooper panics");
        t.ticks += 1;
        t.thread = Some((std::thread::current().id(), cx.now));
        t.note("troop", cx.now);
        true
    },
}
behavior! { HEED: Trooper, memory: u32,
    tick: |t, m, cx| { *m += 1; t.note("heed", cx.now); *m < 3 },
}
behavior! { THROW: Trooper,
    launch: |t, cx| Some(Action::new(7, u64::from(cx.agent) ^ t.pick(5, 1000))),
    tick: |t, cx| { t.note("throw", cx.now); true },
}
behavior! { SHOUT: Trooper,
    activate: |t, cx| { t.note("shout+", cx.now); true },
    tick: |t, cx| { t.note("shout", cx.now); t.pick(3, 3) != 0 },
}
behavior! { DIG: Trooper, memory: u32,
    activate: |t, _m, cx| {
        assert!(!t.panics_dig, "dig panics");
        t.note("dig+", cx.now);
        true
    },
    tick: |t, m, cx| { *m += 1; t.note("dig", cx.now); *m < 2 + t.pick(9, 4) as u32 },
    deactivate: |t, _m, cx| t.note("dig-", cx.now),
}
behavior! { PAIR: Trooper,
    tick: |t, cx| { t.note("pair", cx.now); t.pick(21, 4) != 0 },
}
behavior! { LOAF: Trooper, memory: u32,
    tick: |t, m, cx| { *m += 1; t.note("loaf", cx.now); *m < 2 + t.pick(11, 5) as u32 },
}

decider! { HEEDING: Trooper => HEED, stimuli_any: Noise::ALARM }
decider! { THROWING: Trooper => THROW, needs_all: Wants::THROW, gate: 60 }
decider! { SHOUTING: Trooper => SHOUT, needs_all: Wants::SHOUT, cooldown: 0.1 }
decider! { DIGGING: Trooper => DIG, needs_all: Wants::DIG, gate: 40 }
decider! { PAIRING: Trooper => PAIR, needs_all: Wants::PAIR, together: 2 }
decider! { LOAF1: Trooper => LOAF }
decider! { LOAF2: Trooper => LOAF }
group! { LOAFING: Trooper, random [LOAF1, LOAF2] }
group! { TROOP_ROOT: Trooper,
    prioritized [HEEDING, THROWING, SHOUTING, DIGGING, PAIRING, LOAFING],
    behavior: TROOP,
}
tree! { TROOPS: Trooper = TROOP_ROOT, memory: TroopMemory }

type Ears = Senses<Noise, 2>;

/// Troopers in the big crowd.
const N: usize = 2400;
/// Frames of each run.
const FRAMES: usize = 120;

/// Each trooper's wishes, and now and then an alarm in its ears, from its
/// own generator.
fn wishes(mut troopers: Query<(&mut Trooper, &mut Decisions, &mut Ears)>) {
    for (mut t, mut d, mut ears) in &mut troopers {
        let r = t.roll();
        let mut w = t.forced;
        for (k, (bit, one_in)) in [
            (Wants::DIG, 5),
            (Wants::SHOUT, 9),
            (Wants::PAIR, 7),
            (Wants::THROW, 23),
        ]
        .into_iter()
        .enumerate()
        {
            if (r >> (8 * k + 8)) % one_in == 0 {
                w |= bit;
            }
        }
        d.set(w);
        if (r >> 40) % 97 == 0 {
            ears.set(Noise::ALARM, 0, Some(0.15)).unwrap();
        }
    }
}

/// The action messages of each frame, and the launches not yet reported.
#[derive(Resource, Default)]
struct Seen {
    frame: Vec<String>,
    pending: Vec<(u32, ActionMessage<TroopMemory>)>,
    frames: u32,
}

/// Keeps the frame's messages; reports each launch three frames later,
/// failed or succeeded by its ticket.
fn collect(
    mut reader: MessageReader<ActionMessage<TroopMemory>>,
    mut outcomes: MessageWriter<ActionOutcome<TroopMemory>>,
    mut seen: ResMut<Seen>,
) {
    let seen = &mut *seen;
    seen.frames += 1;
    for m in reader.read() {
        // The ticket without the crowd's id, drawn afresh for each app.
        let t = m.ticket;
        seen.frame.push(format!(
            "{} {:?} {}/{}/{} {:?}",
            m.entity,
            m.item,
            t.agent(),
            t.slot(),
            t.serial(),
            m.op
        ));
        if m.launch().is_some() {
            seen.pending.push((seen.frames, *m));
        }
    }
    let now = seen.frames;
    seen.pending.retain(|(at, m)| {
        if now < at + 3 {
            return true;
        }
        let ok = (m.entity.index_u32() + at) % 2 == 0;
        outcomes.write(m.outcome(if ok {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        }));
        false
    });
}

/// A crowd of `n`: every tenth trooper ticks every third run, every
/// hundredth only when woken (by an alarm or an outcome), a few are
/// traced or recorded, and the budget holds each run to 2 000 brains.
fn crowd_app(parallel: bool, n: usize) -> (App, Vec<Entity>) {
    let mut app = app();
    let plugin = BrainPlugin::new(&TROOPS)
        .in_schedule(Update)
        .with_senses::<Ears>()
        .budget(2000)
        .parallel_from(if parallel { 0 } else { u32::MAX })
        .record(RecordBrains::marked(16));
    app.add_plugins(plugin)
        .init_resource::<Seen>()
        .add_systems(Update, wishes.before(BrainSystems::Tick))
        .add_systems(PostUpdate, collect);
    let troopers = (0..n)
        .map(|i| {
            let mut e = app.world_mut().spawn((
                Trooper::new(i),
                Decisions::default(),
                Ears::default(),
                Brain::new(&TROOPS),
            ));
            if i % 10 == 3 {
                e.insert(TickRate::new(Rate::Every(3)).unwrap());
            }
            if i % 100 == 7 {
                e.insert(TickRate::ON_WAKE);
            }
            if [0, 5, 777, 1500, n - 1].contains(&i) {
                e.insert(DebugBrain::quiet());
            }
            if [1, 5, 900, 1501, 2000].contains(&i) {
                e.insert(Recorded);
            }
            e.id()
        })
        .collect();
    (app, troopers)
}

/// Everything one frame shows: each brain's path, report, trail and
/// traces, the stats, the shared state, and the action messages.
fn frame_state(app: &mut App, troopers: &[Entity]) -> Vec<String> {
    let world = app.world();
    let mut out: Vec<String> = troopers
        .iter()
        .map(|&e| {
            let brain = world.get::<Brain<TroopMemory>>(e).unwrap();
            let t = world.get::<Trooper>(e).unwrap();
            let debug = world.get::<DebugBrain>(e).map(|d| (d.trace(), d.dump()));
            format!(
                "{e}: {:?} {:?} {:?} {:x} {} {:?}",
                brain.running_decider(),
                brain.last_tick(),
                brain.is_due(),
                t.trail,
                t.ticks,
                debug
            )
        })
        .collect();
    let stats = world.resource::<BrainStats<TroopMemory>>();
    out.push(format!("{stats:?}"));
    let state = world.resource::<BrainShared<TroopMemory>>().state();
    let mut snapshot = serde_json::to_value(state.snapshot(0.0)).unwrap();
    // The crowd's id is drawn afresh for each shared state.
    snapshot.as_object_mut().unwrap().remove("crowd");
    out.push(format!(
        "{} gates, {} roles, {} queued, {snapshot}",
        state.gates_held(),
        state.roles_held(),
        state.queued()
    ));
    out.extend(std::mem::take(
        &mut app.world_mut().resource_mut::<Seen>().frame,
    ));
    out
}

/// The threads the brains ticked on in the last frame.
fn threads(app: &mut App) -> HashSet<ThreadId> {
    let now = crate::common::clock(app).0;
    let world = app.world_mut();
    world
        .query::<&Trooper>()
        .iter(world)
        .filter_map(|t| t.thread.filter(|&(_, at)| at == now).map(|(id, _)| id))
        .collect()
}

#[test]
fn a_shared_crowd_ticked_on_every_thread_decides_as_the_ordered_pass() {
    let (mut ordered, troopers) = crowd_app(false, N);
    let (mut parallel, same) = crowd_app(true, N);
    assert_eq!(troopers, same);
    let (mut on_two, mut launches) = (0, 0);
    let mut ran = String::new();
    for frame in 0..FRAMES {
        ordered.update();
        parallel.update();
        let (a, b) = (
            frame_state(&mut ordered, &troopers),
            frame_state(&mut parallel, &troopers),
        );
        if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
            panic!(
                "frame {frame}, line {i}:\n  ordered  {:?}\n  parallel {:?}",
                a.get(i),
                b.get(i)
            );
        }
        launches += a.iter().filter(|l| l.contains("Launch")).count();
        for name in ["HEEDING", "THROWING", "SHOUTING", "DIGGING", "PAIRING"] {
            if !ran.contains(name) && a.iter().any(|l| l.contains(name)) {
                ran += name;
            }
        }
        on_two += usize::from(threads(&mut parallel).len() > 1);
        assert_eq!(threads(&mut ordered).len(), 1, "frame {frame}");
    }
    // The tree does what it is here for, and the parallel app did tick on
    // more than one thread.
    for name in ["HEEDING", "THROWING", "SHOUTING", "DIGGING", "PAIRING"] {
        assert!(ran.contains(name), "nobody was {name}");
    }
    assert!(launches > 50, "{launches} launches");
    // (How many frames did depends on how busy the machine is.)
    assert!(on_two > 0, "no frame ticked on two threads");
}

bitflags::bitflags! {
    /// The starting signal.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Go: u64 {
        const GO = 1;
    }
}

#[derive(Component, Default)]
struct Runner;
bt_bevy::component_agent!(Runner);

behavior! { HOLD: Runner }
behavior! { CALL: Runner, launch: |_r, cx| Some(Action::new(1, u64::from(cx.agent))) }
behavior! { WAIT: Runner }
decider! { HOLDING: Runner => HOLD, needs_all: Go::GO, gate: 5 }
decider! { CALLING: Runner => CALL, needs_all: Go::GO }
decider! { WAITING: Runner => WAIT }
group! { RUNNER_ROOT: Runner, prioritized [HOLDING, CALLING, WAITING] }
tree! { RUNNERS: Runner = RUNNER_ROOT, memory: RunnerMemory }

/// Every launch message seen, in order.
#[derive(Resource, Default)]
struct Calls(Vec<Entity>);

fn calls(mut reader: MessageReader<ActionMessage<RunnerMemory>>, mut seen: ResMut<Calls>) {
    seen.0.extend(
        reader
            .read()
            .filter(|m| m.launch().is_some())
            .map(|m| m.entity),
    );
}

/// The table holds the runners out of index order (the indexes freed by
/// the first half are taken again, last freed first, by runners stored at
/// the table's end); all of them reach the gate and the deferred action in
/// the same frame: the five of the lowest indexes get through the gate and
/// the others launch in entity order, as the ordered pass has them.
#[test]
fn the_stopped_ticks_go_on_in_entity_order_whatever_the_table_order() {
    let mut app = app();
    app.add_plugins(
        BrainPlugin::new(&RUNNERS)
            .in_schedule(Update)
            .parallel_from(0),
    )
    .init_resource::<Calls>()
    .add_systems(PostUpdate, calls);
    let spawn = |app: &mut App| {
        app.world_mut()
            .spawn((Runner, Decisions::default(), Brain::new(&RUNNERS)))
            .id()
    };
    let first: Vec<Entity> = (0..600).map(|_| spawn(&mut app)).collect();
    for &e in &first[..300] {
        app.world_mut().despawn(e);
    }
    for _ in 0..300 {
        spawn(&mut app);
    }
    app.update();
    app.update();
    let world = app.world_mut();
    let table: Vec<u32> = world
        .query_filtered::<Entity, With<Runner>>()
        .iter(world)
        .map(|e| e.index_u32())
        .collect();
    assert!(
        table.windows(2).any(|w| w[0] > w[1]),
        "the table holds them out of index order"
    );
    for mut d in world.query::<&mut Decisions>().iter_mut(world) {
        d.set(Go::GO);
    }
    app.update();
    let world = app.world_mut();
    let mut holding: Vec<u32> = world
        .query::<(Entity, &Brain<RunnerMemory>)>()
        .iter(world)
        .filter(|(_, b)| b.running_decider() == Some("HOLDING"))
        .map(|(e, _)| e.index_u32())
        .collect();
    holding.sort_unstable();
    let mut sorted = table.clone();
    sorted.sort_unstable();
    assert_eq!(holding, sorted[..5], "the gate takes the lowest indexes");
    let called: Vec<u32> = world
        .resource::<Calls>()
        .0
        .iter()
        .map(|e| e.index_u32())
        .collect();
    assert_eq!(called, sorted[5..], "launches in entity order");
}

/// A trooper's path, report, trail and ticks.
type Troop = (Option<&'static str>, String, u64, u32);

/// Ticks `app` until a frame panics: the panic's message, and the
/// troopers as they were before that frame.
fn until_panic(app: &mut App, troopers: &[Entity]) -> (String, Vec<Troop>) {
    for _ in 0..40 {
        let before = brains(app, troopers);
        let ran = catch_unwind(AssertUnwindSafe(|| app.update()));
        if let Err(payload) = ran {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return (message, before);
        }
    }
    panic!("nothing panicked");
}

/// Each trooper's path, report, trail and ticks.
fn brains(app: &App, troopers: &[Entity]) -> Vec<Troop> {
    let world = app.world();
    troopers
        .iter()
        .map(|&e| {
            let brain = world.get::<Brain<TroopMemory>>(e).unwrap();
            let t = world.get::<Trooper>(e).unwrap();
            let last = format!("{:?}", brain.last_tick());
            (brain.running_decider(), last, t.trail, t.ticks)
        })
        .collect()
}

/// The gates hold exactly the brains that run their deciders.
fn assert_no_claim_leaked(app: &App, troopers: &[Entity]) {
    let state = app.world().resource::<BrainShared<TroopMemory>>().state();
    let running = brains(app, troopers);
    let mut held = 0;
    for name in ["THROWING", "DIGGING"] {
        let inside = running.iter().filter(|b| b.0 == Some(name)).count() as u32;
        assert_eq!(
            state.gate_count(TROOPS.find(name).unwrap()),
            Some(inside),
            "{name}"
        );
        held += u64::from(inside);
    }
    assert_eq!(state.gates_held(), held);
}

/// A callback of trooper `p` panics (`dig`: in a gated activation, which
/// only the ordered second phase runs; otherwise in the root behavior's
/// tick, which the first phase runs) from frame 3 on, in two crowds, one
/// ticked in order and one in two phases. (Bevy loses the schedule a
/// system panicked in: the apps end there.)
fn panic_case(p: usize, dig: bool) {
    let n = 800;
    let (mut ordered, troopers) = crowd_app(false, n);
    let (mut parallel, _) = crowd_app(true, n);
    for app in [&mut ordered, &mut parallel] {
        for _ in 0..3 {
            app.update();
        }
        let mut t = app.world_mut().get_mut::<Trooper>(troopers[p]).unwrap();
        if dig {
            t.panics_dig = true;
            t.forced = Wants::DIG;
        } else {
            t.panics = true;
        }
    }
    let (a, _) = until_panic(&mut ordered, &troopers);
    let (b, before) = until_panic(&mut parallel, &troopers);
    // The panic reaches the caller, in the same frame.
    let message = if dig { "dig panics" } else { "trooper panics" };
    assert_eq!((a.as_str(), b.as_str()), (message, message));
    assert_eq!(
        ordered.world().resource::<Seen>().frames,
        parallel.world().resource::<Seen>().frames
    );
    let (a, b) = (brains(&ordered, &troopers), brains(&parallel, &troopers));
    // The brains before it in entity order ticked as in the ordered pass;
    // it is idle; no brain ticked twice.
    assert_eq!(a[..p], b[..p]);
    assert_eq!((a[p].0, b[p].0), (None, None));
    for (i, (now, then)) in b.iter().zip(&before).enumerate() {
        assert!(now.3 <= then.3 + 1, "trooper {i} ticked twice");
    }
    assert_no_claim_leaked(&ordered, &troopers);
    assert_no_claim_leaked(&parallel, &troopers);
}

#[test]
fn a_panic_in_the_parallel_phase_leaves_what_the_ordered_pass_leaves() {
    panic_case(401, false);
}

#[test]
fn a_panic_in_the_ordered_phase_leaves_what_the_ordered_pass_leaves() {
    panic_case(402, true);
}
