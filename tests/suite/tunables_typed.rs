//! Behaviors that name their table (`tunables: TABLE`): their callbacks'
//! context is typed by it, and reads what an untyped context reads, in
//! every callback and tick path, and the table's defaults outside a tick.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use bt_core::{
    Ctx, FAST_SLOTS, TickInput, Tree, TreeShared, Tunable, TunableDecl, TunableTable, Tunables,
    behavior, decider, group, leaf, par_tick_all, tick, tick_all, tree, tunables,
};

tunables! { pub TYPED_TUNING:
    /// A rate.
    RATE: f64 = 0.5, 0.0..=10.0;
    /// A count.
    COUNT: i64 = 3, 0..=100;
    /// Whether the bots rest.
    REST_NOW: bool = false;
    /// Their mood.
    MOOD: enum Mood { Calm, Angry } = Calm;
}

tunables! { ELSEWHERE:
    /// A tunable of another table than the tree's.
    VOLUME: f64 = 2.0, 0.0..=10.0;
}

type Read = (f64, i64, bool, Mood, f64);

#[derive(Default)]
struct Bot {
    /// What each tick of WORK read through its typed context, and through
    /// the same context untyped.
    typed: Vec<Read>,
    untyped: Vec<Read>,
    /// `COUNT` as each activation and deactivation of WORK read it.
    activated: Vec<i64>,
    deactivated: Vec<i64>,
    /// `RATE` as each tick of REST read it.
    rested: Vec<f64>,
    /// A copy of WORK's last context, kept past its tick.
    kept: Option<Ctx<'static, TYPED_TUNING>>,
}

fn typed_read(cx: &Ctx<TYPED_TUNING>) -> Read {
    (
        cx.tuned(RATE),
        cx.tuned(COUNT),
        cx.tuned(REST_NOW),
        cx.tuned(MOOD),
        cx.tuned(VOLUME),
    )
}

fn any_read(cx: &Ctx) -> Read {
    (
        cx.tuned(RATE),
        cx.tuned(COUNT),
        cx.tuned(REST_NOW),
        cx.tuned(MOOD),
        cx.tuned(VOLUME),
    )
}

behavior! { WORK: Bot, memory: u32, tunables: TYPED_TUNING,
    activate: |b, _m, cx| { b.activated.push(cx.tuned(COUNT)); true },
    tick: |b, _m, cx| {
        b.typed.push(typed_read(cx));
        b.untyped.push(any_read(&cx.untyped()));
        b.kept = Some(cx.detach());
        true
    },
    deactivate: |b, _m, cx| b.deactivated.push(cx.tuned(COUNT)),
}
decider! { WORKING: Bot => WORK }
leaf! { REST: Bot, tunables: TYPED_TUNING, when: |_, d| d.tuned(REST_NOW),
tick: |b, cx| { b.rested.push(cx.tuned(RATE)); cx.tuned(REST_NOW) } }
group! { ROOT: Bot, prioritized [REST, WORKING] }
tree! { BOTS: Bot = ROOT, memory: BotMemory, tunables: TYPED_TUNING }

const DEFAULTS: Read = (0.5, 3, false, Mood::Calm, 2.0);

fn crowd(n: usize) -> (Arc<TreeShared>, Vec<Bot>, Vec<BotMemory>) {
    let shared = BOTS.new_shared(0);
    let bots = (0..n).map(|_| Bot::default()).collect();
    let memories = (0..n)
        .map(|i| BOTS.new_memory_in(&shared, i as u64))
        .collect();
    (shared, bots, memories)
}

fn input(_: usize, _: &mut Bot) -> TickInput {
    TickInput::new(0.0, 0.1)
}

/// Through every tick path, a typed context reads the crowd's values in
/// effect, as the same context untyped does; a tunable of another table
/// reads its default in both; activations and deactivations read them too.
#[test]
fn a_typed_context_reads_what_an_untyped_one_reads() {
    let (shared, mut bots, mut memories) = crowd(3);
    tick_all(&BOTS, &mut bots, &mut memories, input);
    for b in &bots {
        assert_eq!(
            (b.typed[0], b.untyped[0], b.activated[0]),
            (DEFAULTS, DEFAULTS, 3)
        );
    }
    shared.tune(RATE, 7.25).unwrap();
    shared.tune(COUNT, 42).unwrap();
    shared.tune(MOOD, Mood::Angry).unwrap();
    let tuned = (7.25, 42, false, Mood::Angry, 2.0);
    tick_all(&BOTS, &mut bots, &mut memories, input);
    // Rayon's pool trips Miri's borrow model inside crossbeam.
    let par = !cfg!(miri);
    if par {
        par_tick_all(&BOTS, &mut bots, &mut memories, input);
    }
    // Agent by agent: the game puts the changes in effect.
    shared.apply_tuning();
    tick(
        &BOTS,
        &mut bots[1],
        &mut memories[1],
        &TickInput::new(0.1, 0.1),
    )
    .unwrap();
    for (i, b) in bots.iter().enumerate() {
        let ticks = 2 + usize::from(par) + usize::from(i == 1);
        assert_eq!(b.typed.len(), ticks);
        assert!(
            b.typed[1..].iter().all(|r| *r == tuned),
            "bot {i}: {:?}",
            b.typed
        );
        assert_eq!(b.typed, b.untyped);
    }
    // Resting: WORK deactivates reading the count in effect, REST reads
    // the rate.
    shared.tune(REST_NOW, true).unwrap();
    tick_all(&BOTS, &mut bots, &mut memories, input);
    for b in &bots {
        assert_eq!(
            (b.deactivated.as_slice(), b.rested.as_slice()),
            (&[42][..], &[7.25][..])
        );
    }
    // Back to work when REST ends: the activation reads the count in
    // effect.
    shared.tune(REST_NOW, false).unwrap();
    shared.tune(COUNT, 9).unwrap();
    tick_all(&BOTS, &mut bots, &mut memories, input);
    assert!(bots.iter().all(|b| b.activated == [3, 9]));
}

/// Outside a tick, a typed context reads its table's defaults: one made
/// for a unit test, and a copy kept past its tick while the crowd's values
/// are others.
#[test]
fn outside_a_tick_a_typed_context_reads_its_tables_defaults() {
    assert_eq!(typed_read(&Ctx::at(0.0, 0.1).with_table()), DEFAULTS);
    assert_eq!(any_read(&Ctx::at(0.0, 0.1)), DEFAULTS);
    let (shared, mut bots, mut memories) = crowd(1);
    shared.tune(RATE, 9.5).unwrap();
    tick_all(&BOTS, &mut bots, &mut memories, input);
    assert_eq!(bots[0].typed[0].0, 9.5);
    let kept = bots[0].kept.unwrap();
    assert_eq!(typed_read(&kept), DEFAULTS);
    assert_eq!(any_read(&kept.untyped()), DEFAULTS);
    // Typed by another table, a context reads that table's defaults.
    assert_eq!(kept.with_table::<ELSEWHERE>().tuned(VOLUME), 2.0);
}

tunables! { LONG:
    K000: i64 = 0, 0..=1000; K001: i64 = 1, 0..=1000; K002: i64 = 2, 0..=1000; K003: i64 = 3, 0..=1000; K004: i64 = 4, 0..=1000;
    K005: i64 = 5, 0..=1000; K006: i64 = 6, 0..=1000; K007: i64 = 7, 0..=1000; K008: i64 = 8, 0..=1000; K009: i64 = 9, 0..=1000;
    K010: i64 = 10, 0..=1000; K011: i64 = 11, 0..=1000; K012: i64 = 12, 0..=1000; K013: i64 = 13, 0..=1000; K014: i64 = 14, 0..=1000;
    K015: i64 = 15, 0..=1000; K016: i64 = 16, 0..=1000; K017: i64 = 17, 0..=1000; K018: i64 = 18, 0..=1000; K019: i64 = 19, 0..=1000;
    K020: i64 = 20, 0..=1000; K021: i64 = 21, 0..=1000; K022: i64 = 22, 0..=1000; K023: i64 = 23, 0..=1000; K024: i64 = 24, 0..=1000;
    K025: i64 = 25, 0..=1000; K026: i64 = 26, 0..=1000; K027: i64 = 27, 0..=1000; K028: i64 = 28, 0..=1000; K029: i64 = 29, 0..=1000;
    K030: i64 = 30, 0..=1000; K031: i64 = 31, 0..=1000; K032: i64 = 32, 0..=1000; K033: i64 = 33, 0..=1000; K034: i64 = 34, 0..=1000;
    K035: i64 = 35, 0..=1000; K036: i64 = 36, 0..=1000; K037: i64 = 37, 0..=1000; K038: i64 = 38, 0..=1000; K039: i64 = 39, 0..=1000;
    K040: i64 = 40, 0..=1000; K041: i64 = 41, 0..=1000; K042: i64 = 42, 0..=1000; K043: i64 = 43, 0..=1000; K044: i64 = 44, 0..=1000;
    K045: i64 = 45, 0..=1000; K046: i64 = 46, 0..=1000; K047: i64 = 47, 0..=1000; K048: i64 = 48, 0..=1000; K049: i64 = 49, 0..=1000;
    K050: i64 = 50, 0..=1000; K051: i64 = 51, 0..=1000; K052: i64 = 52, 0..=1000; K053: i64 = 53, 0..=1000; K054: i64 = 54, 0..=1000;
    K055: i64 = 55, 0..=1000; K056: i64 = 56, 0..=1000; K057: i64 = 57, 0..=1000; K058: i64 = 58, 0..=1000; K059: i64 = 59, 0..=1000;
    K060: i64 = 60, 0..=1000; K061: i64 = 61, 0..=1000; K062: i64 = 62, 0..=1000; K063: i64 = 63, 0..=1000; K064: i64 = 64, 0..=1000;
    K065: i64 = 65, 0..=1000; K066: i64 = 66, 0..=1000; K067: i64 = 67, 0..=1000; K068: i64 = 68, 0..=1000; K069: i64 = 69, 0..=1000;
    K070: i64 = 70, 0..=1000; K071: i64 = 71, 0..=1000; K072: i64 = 72, 0..=1000; K073: i64 = 73, 0..=1000; K074: i64 = 74, 0..=1000;
    K075: i64 = 75, 0..=1000; K076: i64 = 76, 0..=1000; K077: i64 = 77, 0..=1000; K078: i64 = 78, 0..=1000; K079: i64 = 79, 0..=1000;
    K080: i64 = 80, 0..=1000; K081: i64 = 81, 0..=1000; K082: i64 = 82, 0..=1000; K083: i64 = 83, 0..=1000; K084: i64 = 84, 0..=1000;
    K085: i64 = 85, 0..=1000; K086: i64 = 86, 0..=1000; K087: i64 = 87, 0..=1000; K088: i64 = 88, 0..=1000; K089: i64 = 89, 0..=1000;
    K090: i64 = 90, 0..=1000; K091: i64 = 91, 0..=1000; K092: i64 = 92, 0..=1000; K093: i64 = 93, 0..=1000; K094: i64 = 94, 0..=1000;
    K095: i64 = 95, 0..=1000; K096: i64 = 96, 0..=1000; K097: i64 = 97, 0..=1000; K098: i64 = 98, 0..=1000; K099: i64 = 99, 0..=1000;
    K100: i64 = 100, 0..=1000; K101: i64 = 101, 0..=1000; K102: i64 = 102, 0..=1000; K103: i64 = 103, 0..=1000; K104: i64 = 104, 0..=1000;
    K105: i64 = 105, 0..=1000; K106: i64 = 106, 0..=1000; K107: i64 = 107, 0..=1000; K108: i64 = 108, 0..=1000; K109: i64 = 109, 0..=1000;
    K110: i64 = 110, 0..=1000; K111: i64 = 111, 0..=1000; K112: i64 = 112, 0..=1000; K113: i64 = 113, 0..=1000; K114: i64 = 114, 0..=1000;
    K115: i64 = 115, 0..=1000; K116: i64 = 116, 0..=1000; K117: i64 = 117, 0..=1000; K118: i64 = 118, 0..=1000; K119: i64 = 119, 0..=1000;
    K120: i64 = 120, 0..=1000; K121: i64 = 121, 0..=1000; K122: i64 = 122, 0..=1000; K123: i64 = 123, 0..=1000; K124: i64 = 124, 0..=1000;
    K125: i64 = 125, 0..=1000; K126: i64 = 126, 0..=1000; K127: i64 = 127, 0..=1000; K128: i64 = 128, 0..=1000; K129: i64 = 129, 0..=1000;
}

behavior! { READ_LONG: Bot, tunables: LONG,
    tick: |b, cx| {
        let read = [cx.tuned(K000), cx.tuned(K127), cx.tuned(K128), cx.tuned(K129)];
        b.rested.extend(read.map(|v| v as f64));
        true
    },
}
decider! { READING_LONG: Bot => READ_LONG }
tree! { LONG_TREE: Bot = READING_LONG, memory: LongMemory, tunables: LONG }

/// A table longer than the places read with one load: the places past them
/// read the crowd's values too, in a tick and as defaults outside one.
#[test]
fn a_table_longer_than_the_fast_places_reads_every_tunable() {
    // K127 is the last place read with one load, K128 the first past them.
    assert_eq!((LONG.len(), FAST_SLOTS), (130, 128));
    let shared = LONG_TREE.new_shared(0);
    let mut memory: LongMemory = LONG_TREE.new_memory_in(&shared, 0);
    let mut bot = Bot::default();
    tick(&LONG_TREE, &mut bot, &mut memory, &TickInput::new(0.0, 0.1)).unwrap();
    assert_eq!(bot.rested, [0.0, 127.0, 128.0, 129.0]);
    for (i, v) in [(0, 500), (127, 501), (128, 502), (129, 503)] {
        shared
            .tune_named(LONG.decls()[i].name, bt_core::TuneValue::Int(v))
            .unwrap();
    }
    bot.rested.clear();
    shared.apply_tuning();
    tick(&LONG_TREE, &mut bot, &mut memory, &TickInput::new(0.1, 0.1)).unwrap();
    assert_eq!(bot.rested, [500.0, 501.0, 502.0, 503.0]);
    let cx = Ctx::at(0.0, 0.1).with_table::<LONG>();
    assert_eq!(
        (
            cx.tuned(K000),
            cx.tuned(K127),
            cx.tuned(K128),
            cx.tuned(K129)
        ),
        (0, 127, 128, 129)
    );
}

leaf! { IDLE: Bot }
tree! { IDLE_HERE: Bot = IDLE, tunables: TYPED_TUNING }
tree! { IDLE_THERE: Bot = IDLE, tunables: ELSEWHERE }

/// A crowd's shared state made for a tree of the same structure but
/// another table is refused, naming both tables: the memory's ticks would
/// read values of a table its behaviors are not typed by.
#[test]
fn a_shared_state_of_another_table_is_refused() {
    let there = IDLE_THERE.new_shared(0);
    let refused = catch_unwind(AssertUnwindSafe(|| IDLE_HERE.new_memory_in(&there, 0)));
    let message = *refused.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("`IDLE_THERE`, whose tunables are `ELSEWHERE` (declared at "),
        "{message}"
    );
    assert!(
        message.contains("this tree's are `TYPED_TUNING` (declared at "),
        "{message}"
    );
    // Its own is taken.
    let here = IDLE_HERE.new_shared(0);
    let _ = IDLE_HERE.new_memory_in(&here, 0);
}

/// A table made by hand (`Tunables::new`, without the block of defaults
/// `tunables!` declares) and a type for it.
static HAND: Tunables = Tunables::new(
    "HAND",
    &[
        TunableDecl::float("H", "", 0.5, 0.0, 1.0),
        TunableDecl::int("HI", "", 7, 0, 9),
    ],
);
enum HandTable {}
impl TunableTable for HandTable {
    const TABLE: Option<&'static Tunables> = Some(&HAND);
}
const H: Tunable<f64> = Tunable::__new(&HAND, 0);
const HI: Tunable<i64> = Tunable::__new(&HAND, 1);

#[derive(Default)]
struct Hand {
    typed: Vec<(f64, i64)>,
    untyped: Vec<(f64, i64)>,
}
leaf! { READ_HAND: Hand, tunables: HandTable, tick: |h, cx| {
    h.typed.push((cx.tuned(H), cx.tuned(HI)));
    h.untyped.push((cx.untyped().tuned(H), cx.untyped().tuned(HI)));
    true
} }
tree! { HAND_TREE: Hand = READ_HAND, memory: HandMemory, tunables: HAND }

/// A table made by hand has no block of defaults: a context typed by it
/// reads as an untyped one does, in a crowd's tick, in a memory of no
/// crowd and outside a tick (it read 0 for every tunable outside a crowd).
#[test]
fn a_table_made_by_hand_reads_alike_typed_or_not() {
    let typed = Ctx::at(0.0, 0.1).with_table::<HandTable>();
    assert_eq!((typed.tuned(H), typed.tuned(HI)), (0.5, 7));
    let shared = HAND_TREE.new_shared(0);
    let mut memory: HandMemory = HAND_TREE.new_memory_in(&shared, 0);
    shared.tune(H, 0.25).unwrap();
    shared.apply_tuning();
    let mut hand = Hand::default();
    tick(
        &HAND_TREE,
        &mut hand,
        &mut memory,
        &TickInput::new(0.0, 0.1),
    )
    .unwrap();
    assert_eq!(
        (hand.typed.as_slice(), hand.untyped.as_slice()),
        (&[(0.25, 7)][..], &[(0.25, 7)][..])
    );
    let mut lone: HandMemory = Tree::new_memory(&HAND_TREE, 0);
    let mut hand = Hand::default();
    tick(&HAND_TREE, &mut hand, &mut lone, &TickInput::new(0.0, 0.1)).unwrap();
    assert_eq!(
        (hand.typed.as_slice(), hand.untyped.as_slice()),
        (&[(0.5, 7)][..], &[(0.5, 7)][..])
    );
}

/// A tunable made by hand past its table's end reads as an untyped context
/// reads it (a panic naming the place), not the zero past the values.
#[test]
fn a_tunable_past_its_tables_end_reads_alike_typed_or_not() {
    let past: Tunable<i64> = Tunable::__new(&TYPED_TUNING, 10);
    let typed = Ctx::at(0.0, 0.1).with_table::<TYPED_TUNING>();
    let read = |cx: Ctx<TYPED_TUNING>| catch_unwind(AssertUnwindSafe(|| cx.tuned(past))).is_err();
    let read_any = |cx: Ctx| catch_unwind(AssertUnwindSafe(|| cx.tuned(past))).is_err();
    assert!(read_any(typed.untyped()), "the untyped read panics");
    assert!(read(typed), "the typed read panics as well");
}

mod twin_a {
    use super::Bot;
    bt_core::tunables! { pub TABLE:
        /// A rate.
        P: f64 = 0.5, 0.0..=1.0;
    }
    bt_core::leaf! { IDLE: Bot }
    bt_core::tree! { pub TWIN: Bot = IDLE, memory: TwinMemory, tunables: TABLE }
}

mod twin_b {
    use super::Bot;
    bt_core::tunables! { pub TABLE:
        /// A count.
        P: i64 = 3, 1..=10;
    }
    bt_core::leaf! { IDLE: Bot }
    bt_core::tree! { pub TWIN: Bot = IDLE, memory: TwinMemory, tunables: TABLE }
}

/// A save of a crowd of one tree restored, with that tree, into the crowd
/// of a tree of the same name and structure but another table is refused
/// (a panic naming both tables), and the crowd's values are unchanged (it
/// took the saved float's bits as its count).
#[test]
fn a_save_restored_into_a_crowd_of_another_table_is_refused() {
    let a = twin_a::TWIN.new_shared(0);
    let memories_a = vec![twin_a::TWIN.new_memory_in(&a, 0)];
    a.tune(twin_a::P, 0.75).unwrap();
    a.apply_tuning();
    let saved = serde_json::to_string(&a.snapshot_crowd(&memories_a, 0.0)).unwrap();
    let b = twin_b::TWIN.new_shared(0);
    let mut memories_b: Vec<twin_b::TwinMemory> = vec![twin_b::TWIN.new_memory_in(&b, 0)];
    let refused = catch_unwind(AssertUnwindSafe(|| {
        let mut d = serde_json::Deserializer::from_str(&saved);
        b.restore_crowd(&twin_a::TWIN, 0.0, &mut memories_b, &mut d)
    }));
    let message = *refused.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("whose tunables are `TABLE` (declared at tests/suite/tunables_typed.rs:"),
        "{message}"
    );
    assert!(
        message.contains("this tree's are `TABLE` (declared at tests/suite/tunables_typed.rs:"),
        "{message}"
    );
    assert_eq!(b.tuned(twin_b::P), 3);
    let shared_saved = serde_json::to_string(&a.snapshot(0.0)).unwrap();
    let lone = twin_b::TWIN.new_shared(0);
    let refused = catch_unwind(AssertUnwindSafe(|| {
        let mut d = serde_json::Deserializer::from_str(&shared_saved);
        lone.restore(&twin_a::TWIN, 0.0, &mut d)
    }));
    assert!(refused.is_err());
    assert_eq!(lone.tuned(twin_b::P), 3);
}
