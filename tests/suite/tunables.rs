//! Tunables: declared with a tree, read by its closures, changed while the
//! crowd runs, in effect from the crowd's next tick for every agent alike.

use std::sync::Arc;

use bt_core::{
    Rate, Schedule, TickInput, TreeShared, TunableKind, TuneError, TuneValue, group, leaf,
    tick_all, tick_scheduled, tree, tunables,
};

tunables! { pub SQUAD_TUNING:
    /// Health fraction below which a soldier flees.
    FLEE_BELOW: f64 = 0.25, 0.0..=1.0;
    /// Shots a soldier fires before it reloads.
    CLIP: i64 = 6, 1..=30;
    /// Whether soldiers charge.
    CHARGE: bool = false;
    /// How soldiers hold themselves.
    STANCE: enum Stance {
        /// Low, behind cover.
        Crouch,
        Stand,
        Prone,
    } = Crouch;
}

tunables! { OTHER_TUNING:
    LOUDNESS: f64 = 1.0, 0.0..=10.0;
}

#[derive(Default)]
struct Soldier {
    health: f64,
    /// What each tick read, in order: (`FLEE_BELOW`, `CLIP`, `CHARGE`).
    read: Vec<(f64, i64, bool)>,
    /// Set by the test: the tick stages this change on the crowd.
    tunes: Option<(Arc<TreeShared>, f64)>,
    /// The stance each tick of `FIGHT` read.
    stances: Vec<Stance>,
}

leaf! { FLEE: Soldier, when: |s, d| s.health < d.tuned(FLEE_BELOW) }
leaf! { CRAWL: Soldier, when: |_, d| d.tuned(STANCE) == Stance::Prone }
leaf! { FIGHT: Soldier,
    tick: |s, cx| {
        s.read.push((cx.tuned(FLEE_BELOW), cx.tuned(CLIP), cx.tuned(CHARGE)));
        s.stances.push(cx.tuned(STANCE));
        // A tunable of another table reads as its default.
        assert_eq!(cx.tuned(LOUDNESS), 1.0);
        if let Some((shared, v)) = s.tunes.take() {
            shared.tune(FLEE_BELOW, v).unwrap();
        }
        true
    },
}
group! { ROOT: Soldier, prioritized [FLEE, CRAWL, FIGHT] }
tree! { SQUAD: Soldier = ROOT, memory: SquadMemory, tunables: SQUAD_TUNING }

fn squad(n: usize) -> (Arc<TreeShared>, Vec<Soldier>, Vec<SquadMemory>) {
    let shared = SQUAD.new_shared(0);
    let soldiers = (0..n)
        .map(|i| Soldier {
            health: 0.1 * i as f64,
            ..Soldier::default()
        })
        .collect();
    let memories = (0..n)
        .map(|i| SQUAD.new_memory_in(&shared, i as u64))
        .collect();
    (shared, soldiers, memories)
}

fn fleeing(memories: &[SquadMemory]) -> Vec<usize> {
    let flee = SQUAD.find("FLEE");
    (0..memories.len())
        .filter(|&i| memories[i].leaf() == flee)
        .collect()
}

/// The table holds what was declared, and each `const` names its place.
#[test]
fn a_table_holds_its_tunables_as_declared() {
    assert_eq!(SQUAD.tunables.map(|t| t.name()), Some("SQUAD_TUNING"));
    let decls = SQUAD_TUNING.decls();
    assert_eq!(decls.len(), 4);
    assert_eq!(decls[0].name, "FLEE_BELOW");
    assert_eq!(
        decls[0].doc,
        " Health fraction below which a soldier flees.\n"
    );
    assert_eq!(decls[0].kind, TunableKind::Float { min: 0.0, max: 1.0 });
    assert_eq!(decls[1].kind, TunableKind::Int { min: 1, max: 30 });
    assert_eq!(decls[2].kind, TunableKind::Bool);
    assert_eq!(
        decls[3].kind,
        TunableKind::Choice {
            names: &["Crouch", "Stand", "Prone"]
        }
    );
    assert_eq!(STANCE.default_value(), Stance::Crouch);
    assert_eq!((CLIP.index(), CLIP.default_value()), (1, 6));
    assert!(!CHARGE.default_value());
    assert_eq!(SQUAD_TUNING.find("CHARGE"), Some(2));
    let (shared, _, _) = squad(1);
    assert!(std::ptr::eq(shared.tunables().unwrap(), &SQUAD_TUNING));
    assert_eq!(shared.tuned(FLEE_BELOW), 0.25);
}

/// A change is staged, and in effect from the crowd's next tick for every
/// agent: a change made by a callback during a tick (re-entering the
/// library) does not reach the agents after it in that tick. No agent's
/// state is reset: the fighting ones go on fighting until the new
/// threshold makes them flee, by their own preconditions.
#[test]
fn a_change_takes_effect_at_the_crowds_next_tick_for_every_agent_alike() {
    let (shared, mut soldiers, mut memories) = squad(6);
    let input = |_, _: &mut Soldier| TickInput::new(0.0, 0.1);
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    assert_eq!(fleeing(&memories), [0, 1, 2]); // health 0, 0.1, 0.2
    // Soldier 3 stages 0.45 during the next tick: soldiers 4 and 5 still
    // read 0.25 in it.
    soldiers[3].tunes = Some((Arc::clone(&shared), 0.45));
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    for s in &soldiers[3..] {
        assert_eq!(s.read.last().unwrap().0, 0.25);
    }
    assert_eq!(shared.tuned(FLEE_BELOW), 0.25);
    assert_eq!(fleeing(&memories), [0, 1, 2]);
    // The tick after: every agent reads 0.45, and 3 and 4 flee.
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    assert_eq!(shared.tuned(FLEE_BELOW), 0.45);
    assert_eq!(fleeing(&memories), [0, 1, 2, 3, 4]);
    assert_eq!(soldiers[5].read.last().unwrap(), &(0.45, 6, false));
    assert_eq!(shared.tuning_changes(), 1);
    // Changed back, nothing more staged: applying changes nothing.
    shared.tune(FLEE_BELOW, 0.25).unwrap();
    assert!(shared.apply_tuning());
    assert!(!shared.apply_tuning());
    assert_eq!(shared.tuning_changes(), 2);
}

/// A scheduled crowd applies staged changes when its frame starts, as
/// `tick_all` does.
#[test]
fn a_scheduled_frame_applies_the_staged_changes_when_it_starts() {
    let (shared, mut soldiers, mut memories) = squad(4);
    let mut schedule = Schedule::new(4, 0.0);
    schedule.set_rate(0, Rate::Every(2)).unwrap();
    shared.tune(CLIP, 12).unwrap();
    shared.tune(CHARGE, true).unwrap();
    tick_scheduled(
        &SQUAD,
        &mut soldiers,
        &mut memories,
        &mut schedule,
        0.1,
        |_, _, dt| TickInput::new(0.1, dt),
    );
    assert_eq!(
        soldiers[3].read.last().map(|r| (r.1, r.2)),
        Some((12, true))
    );
}

/// Values that do not fit are refused, naming the tunable and the range;
/// nothing is changed.
#[test]
fn a_value_that_does_not_fit_is_refused_and_changes_nothing() {
    let (shared, _, _) = squad(1);
    let err = shared.tune(FLEE_BELOW, 1.5).unwrap_err();
    assert!(matches!(
        err,
        TuneError::OutOfRange {
            name: "FLEE_BELOW",
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        "tunable `FLEE_BELOW`: 1.5 is outside 0..=1"
    );
    assert!(shared.tune(FLEE_BELOW, f64::NAN).is_err());
    assert!(shared.tune(CLIP, 0).is_err());
    let err = shared.tune(LOUDNESS, 2.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tunable `LOUDNESS` is of table `OTHER_TUNING`, not of tree `SQUAD`'s"
    );
    // By name, as a file or a page gives them.
    let err = shared
        .tune_named("RANGE", TuneValue::Float(1.0))
        .unwrap_err();
    assert_eq!(err.to_string(), "tree `SQUAD` has no tunable `RANGE`");
    let err = shared.tune_named("CHARGE", TuneValue::Int(1)).unwrap_err();
    assert_eq!(err.to_string(), "tunable `CHARGE` is a bool, not 1");
    let err = shared
        .tune_named("CLIP", TuneValue::Float(2.5))
        .unwrap_err();
    assert!(
        matches!(err, TuneError::WrongType { name: "CLIP", .. }),
        "{err}"
    );
    assert!(shared.tune_named("CLIP", TuneValue::Int(31)).is_err());
    assert!(!shared.apply_tuning());
    assert_eq!(shared.tuned(CLIP), 6);
    // What fits is taken: an int for a float, a whole float for an int.
    shared.tune_named("FLEE_BELOW", TuneValue::Int(1)).unwrap();
    shared.tune_named("CLIP", TuneValue::Float(8.0)).unwrap();
    assert!(shared.apply_tuning());
    assert_eq!((shared.tuned(FLEE_BELOW), shared.tuned(CLIP)), (1.0, 8));
}

/// A context made for a unit test, or kept beyond its tick, reads the
/// defaults.
#[test]
fn a_context_outside_a_tick_reads_the_defaults() {
    let cx = bt_core::Ctx::at(1.0, 0.1);
    assert_eq!((cx.tuned(FLEE_BELOW), cx.tuned(CLIP)), (0.25, 6));
}

/// A save of the crowd's shared state keeps the values in effect, by name:
/// loaded into a fresh crowd, in either format, they are in effect at once
/// (a change staged on the crowd loaded into is dropped). A save made
/// before the tree had tunables loads with the defaults; a saved value the
/// tree cannot take now is refused, naming it.
#[test]
fn a_save_keeps_the_values_in_effect() {
    let (shared, _, _) = squad(0);
    shared.tune(FLEE_BELOW, 0.5).unwrap();
    shared.tune(CHARGE, true).unwrap();
    shared.tune(STANCE, Stance::Stand).unwrap();
    shared.apply_tuning();
    shared.tune(CLIP, 9).unwrap(); // staged, not in effect: not saved
    let json = serde_json::to_string(&shared.snapshot(1.0)).unwrap();
    assert!(
        json.ends_with(
            r#""tuned":[{"name":"FLEE_BELOW","value":{"float":0.5}},{"name":"CLIP","value":{"int":6}},{"name":"CHARGE","value":{"bool":true}},{"name":"STANCE","value":{"name":"Stand"}}]}"#
        ),
        "{json}"
    );
    let bytes = postcard::to_allocvec(&shared.snapshot(1.0)).unwrap();
    for format in ["json", "postcard"] {
        let (fresh, _, _) = squad(0);
        fresh.tune(CLIP, 20).unwrap(); // staged before the load: dropped
        match format {
            "json" => fresh
                .restore(&SQUAD, 5.0, &mut serde_json::Deserializer::from_str(&json))
                .unwrap(),
            _ => fresh
                .restore(&SQUAD, 5.0, &mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap(),
        }
        assert_eq!(
            (
                fresh.tuned(FLEE_BELOW),
                fresh.tuned(CLIP),
                fresh.tuned(CHARGE),
                fresh.tuned(STANCE)
            ),
            (0.5, 6, true, Stance::Stand),
            "{format}"
        );
        assert!(!fresh.apply_tuning(), "{format}");
        // Three values differ from the defaults: a tool watching the
        // count sees the load.
        assert_eq!(fresh.tuning_changes(), 3, "{format}");
    }
    // Without the field: the defaults.
    let old = json[..json.find(r#","tuned""#).unwrap()].to_string() + "}";
    let (fresh, _, _) = squad(0);
    fresh
        .restore(&SQUAD, 5.0, &mut serde_json::Deserializer::from_str(&old))
        .unwrap();
    assert_eq!(fresh.tuned(FLEE_BELOW), 0.25);
    // A value the tree cannot take.
    for (bad, says) in [
        (
            json.replace(r#"{"float":0.5}"#, r#"{"float":1.5}"#),
            "1.5 is outside 0..=1",
        ),
        (
            json.replace("\"FLEE_BELOW\"", "\"FLEE_ABOVE\""),
            "no tunable `FLEE_ABOVE`",
        ),
        (
            json.replace(r#"{"bool":true}"#, r#"{"int":1}"#),
            "`CHARGE` is a bool",
        ),
        (
            json.replace(r#"{"name":"Stand"}"#, r#"{"name":"Kneel"}"#),
            r#""Kneel" is not one of "Crouch", "Stand", "Prone""#,
        ),
    ] {
        let (fresh, _, _) = squad(0);
        let err = fresh
            .restore(&SQUAD, 5.0, &mut serde_json::Deserializer::from_str(&bad))
            .unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
        assert_eq!(fresh.tuned(FLEE_BELOW), 0.25);
    }
}

/// A slice whose agents are bound to two crowds' shared states: each agent
/// reads its own crowd's values.
#[test]
fn agents_of_two_crowds_in_one_slice_read_their_own_crowds_values() {
    let (first, mut soldiers, mut memories) = squad(2);
    let (second, more, others) = squad(2);
    soldiers.extend(more);
    memories.extend(others);
    for s in &mut soldiers {
        s.health = 0.9;
    }
    first.tune(FLEE_BELOW, 0.5).unwrap();
    let input = |_, _: &mut Soldier| TickInput::new(0.0, 0.1);
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    let read: Vec<f64> = soldiers.iter().map(|s| s.read.last().unwrap().0).collect();
    assert_eq!(read, [0.5, 0.5, 0.25, 0.25]);
    assert_eq!(second.tuned(FLEE_BELOW), 0.25);
}

/// A choice is read as the enum its declaration makes, changed by value or
/// by name; a name not among its names, or a value of another kind, is
/// refused naming the tunable and the names it takes.
#[test]
fn a_choice_is_read_as_its_enum_and_changed_by_value_or_by_name() {
    let (shared, mut soldiers, mut memories) = squad(2);
    for s in &mut soldiers {
        s.health = 0.9;
    }
    let input = |_, _: &mut Soldier| TickInput::new(0.0, 0.1);
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    assert_eq!(soldiers[1].stances, [Stance::Crouch]);
    shared.tune(STANCE, Stance::Stand).unwrap();
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    assert_eq!(soldiers[1].stances, [Stance::Crouch, Stance::Stand]);
    assert_eq!(shared.tuned(STANCE), Stance::Stand);
    // By name: the decision that reads it changes at the next tick.
    shared
        .tune_named("STANCE", TuneValue::Name("Prone".into()))
        .unwrap();
    let crawl = SQUAD.find("CRAWL");
    assert!(memories.iter().all(|m| m.leaf() != crawl));
    tick_all(&SQUAD, &mut soldiers, &mut memories, input);
    assert!(memories.iter().all(|m| m.leaf() == crawl));
    let err = shared
        .tune_named("STANCE", TuneValue::Name("Kneel".into()))
        .unwrap_err();
    assert!(
        matches!(&err, TuneError::OutOfRange { name: "STANCE", value: TuneValue::Name(n), .. } if n == "Kneel"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        r#"tunable `STANCE`: "Kneel" is not one of "Crouch", "Stand", "Prone""#
    );
    let err = shared.tune_named("STANCE", TuneValue::Int(1)).unwrap_err();
    assert_eq!(err.to_string(), "tunable `STANCE` is a choice, not 1");
    let err = shared
        .tune_named("CLIP", TuneValue::Name("Prone".into()))
        .unwrap_err();
    assert_eq!(err.to_string(), r#"tunable `CLIP` is an int, not "Prone""#);
    assert!(!shared.apply_tuning());
    assert_eq!(shared.tuned(STANCE), Stance::Prone);
    // A context outside a tick reads the default.
    assert_eq!(bt_core::Ctx::at(0.0, 0.1).tuned(STANCE), Stance::Crouch);
}
