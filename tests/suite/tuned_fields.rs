//! Declarative fields that name a tunable (`cooldown: tunable(X)`,
//! `every: tunable(X)`, `gate: tunable(X)`): the value in effect at each
//! tick is the crowd's, a change takes effect at the crowd's next tick for
//! every agent alike and resets no agent's state, and saves keep stamps,
//! not lengths.

use std::sync::Arc;

use bt_core::{
    Has, TickInput, TreeShared, behavior, decider, group, leaf, reference, tick, tick_all, tree,
    tunables,
};

tunables! { pub FIELD_TUNING:
    /// Seconds between two grenades of the squad.
    GRENADE_COOLDOWN: f64 = 5.0, 0.0..=30.0;
    /// Seconds between two looks around.
    LOOK_EVERY: f64 = 4.0, 0.0..=60.0;
    /// Soldiers shooting at once.
    SHOOTERS: i64 = 3, 1..=10;
    /// A cooldown that is off until tuned.
    RALLY_COOLDOWN: f64 = 0.0, 0.0..=10.0;
    /// A timer that is off until tuned.
    REST_EVERY: f64 = 0.0, 0.0..=10.0;
}

#[derive(Default)]
struct Soldier {
    /// Whether the soldier keeps shooting once in.
    shooting: bool,
    /// When it threw, looked around, and entered SHOOT.
    threw: Vec<f64>,
    looked: Vec<f64>,
    shot: Vec<f64>,
    /// Set by the test: its next SHOOT tick stages this gate.
    tunes: Option<(Arc<TreeShared>, i64)>,
}

// A grenade is thrown in one tick; the global cooldown keeps the next one
// back.
leaf! { THROW: Soldier, cooldown: tunable(GRENADE_COOLDOWN),
    activate: |s, cx| { s.threw.push(cx.now); true },
    tick: |_, _| false,
}
leaf! { SHOOT: Soldier, gate: tunable(SHOOTERS), when: |s, _| s.shooting,
    activate: |s, cx| { s.shot.push(cx.now); true },
    tick: |s, _| {
        if let Some((shared, n)) = s.tunes.take() {
            shared.tune(SHOOTERS, n).unwrap();
        }
        s.shooting
    },
}
leaf! { WAIT: Soldier }
group! { ROOT: Soldier, prioritized [THROW, SHOOT, WAIT] }
tree! { SQUAD: Soldier = ROOT, memory: SquadMemory, tunables: FIELD_TUNING }

// A look around, at most every LOOK_EVERY seconds, ends at once: a
// running STAND tests its timer at each tick.
leaf! { LOOK: Soldier, every: tunable(LOOK_EVERY),
    activate: |s, cx| { s.looked.push(cx.now); true },
    tick: |_, _| false,
}
leaf! { STAND: Soldier }
group! { POST: Soldier, prioritized [LOOK, STAND] }
tree! { SENTRY: Soldier = POST, memory: SentryMemory, tunables: FIELD_TUNING }

fn squad(n: usize) -> (Arc<TreeShared>, Vec<Soldier>, Vec<SquadMemory>) {
    let shared = SQUAD.new_shared(0);
    let soldiers = (0..n).map(|_| Soldier::default()).collect();
    let memories = (0..n)
        .map(|i| SQUAD.new_memory_in(&shared, i as u64))
        .collect();
    (shared, soldiers, memories)
}

fn at(now: f64) -> impl FnMut(usize, &mut Soldier) -> TickInput {
    move |_, _| TickInput::new(now, 1.0)
}

fn leaves(memories: &[SquadMemory]) -> Vec<&'static str> {
    memories
        .iter()
        .map(|m| m.leaf().map_or("-", |l| SQUAD.node(l).name()))
        .collect()
}

/// The three keys take `tunable(NAME)` in `decider!`, `group!` and
/// `leaf!`: the decider names the tunable, its preconditions hold the
/// default, and the tree keeps a slot for each field even where the
/// default is 0, which makes no one wait.
#[test]
fn a_field_names_its_tunable_and_keeps_its_slot_at_zero() {
    let fields = THROW.tuned_fields();
    assert_eq!(fields.cooldown.map(|t| t.name()), Some("GRENADE_COOLDOWN"));
    assert!(fields.every.is_none() && fields.gate.is_none());
    assert_eq!(THROW.preconditions().sync.cooldown, 5.0);
    assert_eq!(LOOK.tuned_fields().every.map(|t| t.index()), Some(1));
    assert_eq!(LOOK.preconditions().every, 4.0);
    assert_eq!(
        SHOOT.tuned_fields().gate.map(|t| t.name()),
        Some("SHOOTERS")
    );
    assert_eq!(SHOOT.preconditions().sync.gate, 3);

    // Each entered once per tick, and ended at once.
    leaf! { RALLY: Soldier, cooldown: tunable(RALLY_COOLDOWN), every: tunable(REST_EVERY),
        activate: |s, cx| { s.threw.push(cx.now); true },
        tick: |_, _| false,
    }
    behavior! { RESTING: Soldier,
        activate: |s, cx| { s.shot.push(cx.now); true },
        tick: |_, _| false,
    }
    decider! { REST: Soldier => RESTING, every: tunable(REST_EVERY), gate: tunable(SHOOTERS) }
    group! { CAMP: Soldier, sequential [RALLY, REST], cooldown: tunable(RALLY_COOLDOWN) }
    tree! { CAMP_TREE: Soldier = CAMP, tunables: FIELD_TUNING }
    assert_eq!(RALLY.preconditions().sync.cooldown, 0.0);
    assert!(!RALLY.preconditions().sync.is_some());
    assert_eq!(REST.tuned_fields().gate.map(|t| t.name()), Some("SHOOTERS"));
    assert_eq!(
        CAMP.tuned_fields().cooldown.map(|t| t.name()),
        Some("RALLY_COOLDOWN")
    );
    // Two timers and two cooldowns although every default is 0, and a gate.
    let shape = CAMP_TREE.shape();
    assert_eq!((shape.timers, shape.cooldowns, shape.gates), (2, 2, 1));
    for node in CAMP_TREE.nodes() {
        assert!(node.has().contains(Has::TUNED | Has::SYNC), "{node:?}");
    }
    // At 0 they make no one wait: the sequence runs both leaves at every
    // tick, at one time too; the cooldown is stamped all the same.
    let shared = CAMP_TREE.new_shared(0);
    let mut memory = CAMP_TREE.new_memory_in(&shared, 0);
    let mut s = Soldier::default();
    let mut at = |now: f64, s: &mut Soldier| {
        shared.apply_tuning();
        tick(&CAMP_TREE, s, &mut memory, &TickInput::new(now, 0.5)).unwrap();
    };
    for now in [0.0, 0.0, 0.5] {
        at(now, &mut s);
    }
    assert_eq!(
        (&s.threw[..], &s.shot[..]),
        (&[0.0, 0.0, 0.5][..], &[0.0, 0.0, 0.5][..])
    );
    shared.tune(RALLY_COOLDOWN, 1.0).unwrap();
    for now in [1.0, 1.5] {
        at(now, &mut s);
    }
    assert_eq!(s.threw, [0.0, 0.0, 0.5, 1.5]);

    // A reference takes them too.
    leaf! { STAY: Soldier }
    reference! { BACK: Soldier => [HOME, STAY], every: tunable(LOOK_EVERY) }
    group! { HOME: Soldier, prioritized [BACK, STAY] }
    tree! { HOME_TREE: Soldier = HOME, tunables: FIELD_TUNING }
    assert_eq!(
        BACK.tuned_fields().every.map(|t| t.name()),
        Some("LOOK_EVERY")
    );
    assert_eq!(HOME_TREE.shape().timers, 1);
}

/// A gate lowered below the agents inside admits no one new until enough
/// have left, and resets no one; raised, it admits more from the next
/// tick. A change staged during a tick (here by an agent inside) reaches
/// no agent of that tick.
#[test]
fn a_gate_lowered_below_the_agents_inside_admits_no_one_until_they_leave() {
    let (shared, mut soldiers, mut memories) = squad(5);
    // The grenade out of the way: thrown once, by the first soldier.
    shared.tune(GRENADE_COOLDOWN, 30.0).unwrap();
    for s in &mut soldiers {
        s.shooting = true;
    }
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(0.0));
    let shoot = SQUAD.find("SHOOT").unwrap();
    assert_eq!(
        leaves(&memories),
        ["SHOOT", "SHOOT", "SHOOT", "WAIT", "WAIT"]
    );

    // Lowered to 1: the three stay, the two outside stay out.
    shared.tune(SHOOTERS, 1).unwrap();
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(1.0));
    assert_eq!(
        leaves(&memories),
        ["SHOOT", "SHOOT", "SHOOT", "WAIT", "WAIT"]
    );
    assert_eq!(shared.gate_count(shoot), Some(3));
    // Two leave: one is still inside, and holds the gate of 1 full.
    soldiers[0].shooting = false;
    soldiers[1].shooting = false;
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(2.0));
    assert_eq!(leaves(&memories), ["WAIT", "WAIT", "SHOOT", "WAIT", "WAIT"]);
    assert_eq!(shared.gate_count(shoot), Some(1));
    // The last one leaves: the first agent ticked after that gets in.
    soldiers[2].shooting = false;
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(3.0));
    assert_eq!(leaves(&memories), ["WAIT", "WAIT", "WAIT", "SHOOT", "WAIT"]);

    // Raised to 3 by agent 3 during the next tick: the gate is 1 for
    // every agent of that tick, those ticked after it too.
    soldiers[0].shooting = true;
    soldiers[3].tunes = Some((Arc::clone(&shared), 3));
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(4.0));
    assert_eq!(leaves(&memories), ["WAIT", "WAIT", "WAIT", "SHOOT", "WAIT"]);
    assert_eq!(shared.tuned(SHOOTERS), 1);
    // In effect at the next tick: agents 0 and 4 get in.
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(5.0));
    assert_eq!(
        leaves(&memories),
        ["SHOOT", "WAIT", "WAIT", "SHOOT", "SHOOT"]
    );
    assert_eq!(
        (&soldiers[0].shot[..], &soldiers[4].shot[..]),
        (&[0.0, 5.0][..], &[5.0][..])
    );
    assert_eq!(shared.gate_count(shoot), Some(3));
}

/// Ticks the crowd every second from `from` to `to`.
fn run(crowd: (&mut [Soldier], &mut [SquadMemory]), from: f64, to: f64) {
    let mut now = from;
    while now <= to {
        tick_all(&SQUAD, &mut *crowd.0, &mut *crowd.1, at(now));
        now += 1.0;
    }
}

/// A cooldown shortened while it runs applies to the time already run:
/// the next entry is allowed once the time since the last one reaches the
/// new length; lengthened, likewise. A cooldown of 0 lets every tick in.
#[test]
fn a_cooldown_changed_while_it_runs_counts_from_the_last_entry() {
    let (shared, mut soldiers, mut memories) = squad(2);
    // The first soldier throws at 0; the default of 5 s runs.
    run((&mut soldiers, &mut memories), 0.0, 1.0);
    // Shortened to 2.5 s after the tick at 1: ready at 2.5, thrown at 3.
    shared.tune(GRENADE_COOLDOWN, 2.5).unwrap();
    run((&mut soldiers, &mut memories), 2.0, 4.0);
    // Lengthened to 6 s after the tick at 4, 1 s after the throw at 3:
    // ready at 9.
    shared.tune(GRENADE_COOLDOWN, 6.0).unwrap();
    run((&mut soldiers, &mut memories), 5.0, 10.0);
    // 0 s: both soldiers throw at every tick.
    shared.tune(GRENADE_COOLDOWN, 0.0).unwrap();
    run((&mut soldiers, &mut memories), 11.0, 12.0);
    assert_eq!(soldiers[0].threw, [0.0, 3.0, 9.0, 11.0, 12.0]);
    assert_eq!(soldiers[1].threw, [11.0, 12.0]);
}

/// A timer (`every:`) changed while it runs likewise counts from its last
/// stamp, and an agent running a later sibling notices the change at the
/// crowd's next tick: its steady walk keeps no finding about a tuned timer
/// beyond the tick it tested it in.
#[test]
fn a_timer_changed_while_it_runs_counts_from_its_last_stamp() {
    let shared = SENTRY.new_shared(0);
    let mut sentries = vec![Soldier::default()];
    let mut memories: Vec<SentryMemory> = vec![SENTRY.new_memory_in(&shared, 0)];
    let mut now = 0.0;
    let mut run = |to: f64| {
        while now <= to {
            tick_all(&SENTRY, &mut sentries, &mut memories, at(now));
            now += 1.0;
        }
    };
    // In at 0, then every 4 s.
    run(2.0);
    // Shortened to 2.5 s after the tick at 2: ready at 2.5, in at 3,
    // then at 6.
    shared.tune(LOOK_EVERY, 2.5).unwrap();
    run(6.0);
    // Lengthened to 5 s after the tick at 6, whose stamp is 6: ready at 11.
    shared.tune(LOOK_EVERY, 5.0).unwrap();
    run(12.0);
    // 0 s: in at every tick.
    shared.tune(LOOK_EVERY, 0.0).unwrap();
    run(14.0);
    assert_eq!(sentries[0].looked, [0.0, 3.0, 6.0, 11.0, 13.0, 14.0]);
    assert_eq!(memories[0].leaf(), SENTRY.find("STAND"));
}

/// A memory made without the crowd's shared state reads the defaults: a
/// tuned timer of 4 s.
#[test]
fn a_memory_not_bound_to_a_crowd_reads_the_defaults() {
    let shared = SENTRY.new_shared(0);
    shared.tune(LOOK_EVERY, 1.0).unwrap();
    shared.apply_tuning();
    let mut bound = SENTRY.new_memory_in(&shared, 0);
    let mut alone = SENTRY.tree().new_memory(0);
    let (mut a, mut b) = (Soldier::default(), Soldier::default());
    for now in 0..6 {
        let input = TickInput::new(f64::from(now), 1.0);
        tick(&SENTRY, &mut a, &mut bound, &input).unwrap();
        tick(&SENTRY, &mut b, &mut alone, &input).unwrap();
    }
    assert_eq!(a.looked, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(b.looked, [0.0, 4.0]);
}

/// A save keeps the stamps of cooldowns and timers and the values in
/// effect, not lengths: loaded into a fresh crowd, a cooldown shortened
/// before the save is ready when the time since its last entry reaches
/// the saved value. A crowd whose gate was lowered below the agents
/// inside saves and loads with them inside, and so does one agent's
/// memory; tuning changes no fingerprint.
#[test]
fn a_save_keeps_stamps_and_the_values_in_effect() {
    let (shared, mut soldiers, mut memories) = squad(5);
    for s in &mut soldiers {
        s.shooting = true;
    }
    // Five inside, more than the default of 3.
    shared.tune(SHOOTERS, 5).unwrap();
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(0.0));
    assert_eq!(soldiers[0].threw, [0.0]);
    assert_eq!(leaves(&memories), ["SHOOT"; 5]);
    let fingerprint = shared.fingerprint();
    shared.tune(GRENADE_COOLDOWN, 2.0).unwrap();
    shared.tune(SHOOTERS, 1).unwrap();
    tick_all(&SQUAD, &mut soldiers, &mut memories, at(1.0));
    assert_eq!(shared.fingerprint(), fingerprint);
    let json = serde_json::to_string(&shared.snapshot_crowd(&memories, 1.0)).unwrap();
    let one = serde_json::to_string(&memories[4].snapshot(1.0)).unwrap();

    let (fresh, mut others, mut loaded) = squad(5);
    fresh
        .restore_crowd(
            &SQUAD,
            11.0,
            &mut loaded,
            &mut serde_json::Deserializer::from_str(&json),
        )
        .unwrap();
    assert_eq!(
        (fresh.tuned(GRENADE_COOLDOWN), fresh.tuned(SHOOTERS)),
        (2.0, 1)
    );
    let shoot = SQUAD.find("SHOOT").unwrap();
    assert_eq!(fresh.gate_count(shoot), Some(5));
    // One agent's memory loads into its place inside too.
    loaded[4]
        .restore(11.0, &mut serde_json::Deserializer::from_str(&one))
        .unwrap();
    assert_eq!(fresh.gate_count(shoot), Some(5));
    // The clock moved from 1 to 11: the throw, 1 s before the save, is at
    // 10. Not ready at 11.5; ready at 12.
    for s in &mut others[1..] {
        s.shooting = true;
    }
    tick_all(&SQUAD, &mut others, &mut loaded, at(11.5));
    assert!(others[0].threw.is_empty());
    assert_eq!(
        leaves(&loaded),
        ["WAIT", "SHOOT", "SHOOT", "SHOOT", "SHOOT"]
    );
    tick_all(&SQUAD, &mut others, &mut loaded, at(12.0));
    assert_eq!(others[0].threw, [12.0]);
    // The gate of 1 holds the four inside.
    assert_eq!(
        leaves(&loaded),
        ["WAIT", "SHOOT", "SHOOT", "SHOOT", "SHOOT"]
    );
    assert_eq!(fresh.gate_count(shoot), Some(4));
}
