//! Unit tests of the `unsafe` module, run under Miri in CI.

use core::cell::Cell;
use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use super::*;

extern crate std;

std::thread_local! {
    static LIVE: Cell<i32> = const { Cell::new(0) };
    static PANIC_IN_DEFAULT: Cell<bool> = const { Cell::new(false) };
    static PANIC_IN_DROP: Cell<bool> = const { Cell::new(false) };
}

fn live() -> i32 {
    LIVE.with(Cell::get)
}

/// A memory value that counts live instances and can panic on demand.
#[repr(align(16))]
struct Counted(u64);

impl Default for Counted {
    fn default() -> Self {
        assert!(!PANIC_IN_DEFAULT.with(Cell::get), "Default panics");
        LIVE.with(|l| l.set(l.get() + 1));
        Counted(0xC0FFEE)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        assert_eq!(self.0, 0xC0FFEE, "dropping a value that was never written");
        LIVE.with(|l| l.set(l.get() - 1));
        if PANIC_IN_DROP.with(Cell::get) {
            PANIC_IN_DROP.with(|p| p.set(false));
            panic!("Drop panics");
        }
    }
}

struct Def;

impl BehaviorDef<u32> for Def {
    type Memory = Counted;
    type DBlock = Counted;
    type Table = crate::decl::behavior::AnyTable;
    const NAME: &'static str = "DEF";
    const MODULE: &'static str = "tests";

    fn tick(agent: &mut u32, memory: &mut Counted, _: &Ctx) -> bool {
        *agent += 1;
        memory.0 == 0xC0FFEE
    }
}

static DEF: ErasedBehavior<u32> = ErasedBehavior::new::<Def>();

#[test]
fn blocks_drop_each_value_exactly_once() {
    {
        let mut blocks = Blocks::<u32, 3, 32>::new();
        blocks.init(0, &DEF);
        blocks.init(2, &DEF);
        assert_eq!(live(), 2);
        // Re-initialising drops the old value first.
        blocks.init(2, &DEF);
        assert_eq!(live(), 2);
        let mut agent = 0;
        assert!(blocks.tick(2, &mut agent, &Ctx::at(0.0, 0.0)));
        assert_eq!(agent, 1);
        // An empty level has nothing to run and succeeds.
        assert!(blocks.tick(1, &mut agent, &Ctx::at(0.0, 0.0)));
        blocks.release(0);
        blocks.release(0);
        assert_eq!(live(), 1);
        assert!(blocks.owner(0).is_none() && blocks.owner(2).is_some());
    }
    assert_eq!(live(), 0, "dropping the blocks drops what is left");
}

#[test]
fn panicking_default_leaves_the_block_empty() {
    let mut blocks = Blocks::<u32, 1, 32>::new();
    PANIC_IN_DEFAULT.with(|p| p.set(true));
    let r = catch_unwind(AssertUnwindSafe(|| blocks.init(0, &DEF)));
    PANIC_IN_DEFAULT.with(|p| p.set(false));
    assert!(r.is_err());
    assert!(blocks.owner(0).is_none());
    drop(blocks);
    assert_eq!(live(), 0);
}

#[test]
fn release_all_goes_on_after_a_panicking_drop() {
    let mut blocks = Blocks::<u32, 3, 32>::new();
    for level in 0..3 {
        blocks.init(level, &DEF);
    }
    PANIC_IN_DROP.with(|p| p.set(true));
    let r = catch_unwind(AssertUnwindSafe(|| blocks.release_all()));
    assert!(r.is_err());
    assert_eq!(live(), 0);
    assert!((0..3).all(|l| blocks.owner(l).is_none()));
}

std::thread_local! {
    /// What `Stepped` callbacks do: 0 go on, 1 return false, 2 panic.
    static ACTIVATE: Cell<u8> = const { Cell::new(0) };
    static TICK: Cell<u8> = const { Cell::new(0) };
}

/// A behavior whose `activate` and `tick` do as `ACTIVATE` and `TICK`
/// say; the agent records the calls in order (1: activate, 2: tick).
struct Stepped;

impl BehaviorDef<u32> for Stepped {
    type Memory = Counted;
    type DBlock = ();
    type Table = crate::decl::behavior::AnyTable;
    const NAME: &'static str = "STEPPED";
    const MODULE: &'static str = "tests";
    const HAS_ACTIVATE: bool = true;
    const HAS_TICK: bool = true;

    fn activate(agent: &mut u32, memory: &mut Counted, dblock: Option<()>, _: &Ctx) -> bool {
        assert!(dblock.is_none() && memory.0 == 0xC0FFEE);
        *agent = *agent * 10 + 1;
        step(ACTIVATE.with(Cell::get))
    }

    fn tick(agent: &mut u32, memory: &mut Counted, _: &Ctx) -> bool {
        assert_eq!(memory.0, 0xC0FFEE);
        *agent = *agent * 10 + 2;
        step(TICK.with(Cell::get))
    }
}

fn step(what: u8) -> bool {
    assert!(what < 2, "callback panics");
    what == 0
}

static STEPPED: ErasedBehavior<u32> = ErasedBehavior::new::<Stepped>();

/// Enters `STEPPED` at level 1 of fresh blocks, with `activate` and `tick`
/// doing as given; returns the outcome (`None`: it panicked), the calls
/// made, and the blocks.
fn enter(activate: u8, tick: u8) -> (Option<Entered>, u32, Blocks<u32, 2, 32>) {
    ACTIVATE.with(|c| c.set(activate));
    TICK.with(|c| c.set(tick));
    let mut blocks = Blocks::<u32, 2, 32>::new();
    let mut agent = 0;
    let cx = Ctx::at(0.0, 0.0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        blocks.enter(1, &STEPPED, &mut agent, &cx)
    }));
    (r.ok(), agent, blocks)
}

#[test]
fn enter_runs_activate_then_the_first_tick_on_a_new_value() {
    let (entered, calls, blocks) = enter(0, 0);
    assert_eq!((entered, calls), (Some(Entered::Running), 12));
    assert!(blocks.owner(1).is_some() && blocks.owner(0).is_none());
    assert_eq!(live(), 1);
    drop(blocks);
    assert_eq!(live(), 0);

    let (entered, calls, blocks) = enter(0, 1);
    assert_eq!((entered, calls), (Some(Entered::Ended), 12));
    assert!(
        blocks.owner(1).is_some(),
        "an ended behavior still holds its block"
    );
    drop(blocks);

    let (entered, calls, blocks) = enter(1, 0);
    assert_eq!(
        (entered, calls),
        (Some(Entered::ActivateFailed), 1),
        "no tick"
    );
    assert!(
        blocks.owner(1).is_some(),
        "its deactivation still needs the block"
    );
    drop(blocks);
    assert_eq!(live(), 0);
}

#[test]
fn a_panic_while_entering_leaves_a_block_dropped_once() {
    for (activate, tick, calls) in [(2, 0, 1), (0, 2, 12)] {
        let (entered, made, mut blocks) = enter(activate, tick);
        assert_eq!((entered, made), (None, calls));
        assert!(
            blocks.owner(1).is_some(),
            "the value was written: it is owned"
        );
        assert_eq!(live(), 1);
        blocks.release_all();
        assert_eq!(live(), 0);
    }
    // A panicking `Default` writes nothing and owns nothing.
    PANIC_IN_DEFAULT.with(|p| p.set(true));
    let (entered, calls, blocks) = enter(0, 0);
    PANIC_IN_DEFAULT.with(|p| p.set(false));
    assert_eq!((entered, calls), (None, 0));
    assert!(blocks.owner(1).is_none());
    drop(blocks);
    assert_eq!(live(), 0);
}

#[test]
fn entering_over_a_held_value_drops_it_first() {
    ACTIVATE.with(|c| c.set(0));
    TICK.with(|c| c.set(0));
    let mut blocks = Blocks::<u32, 1, 32>::new();
    blocks.init(0, &DEF);
    assert_eq!(live(), 1);
    let mut agent = 0;
    let entered = blocks.enter(0, &STEPPED, &mut agent, &Ctx::at(0.0, 0.0));
    assert_eq!((entered, live()), (Entered::Running, 1));
    drop(blocks);
    assert_eq!(live(), 0);
}

#[test]
#[should_panic(expected = "does not fit")]
fn a_memory_type_larger_than_the_block_is_refused() {
    let mut blocks = Blocks::<u32, 1, 4>::new();
    blocks.init(0, &DEF);
}

#[test]
fn dblocks_move_out_once_and_drop_otherwise() {
    let mut pool = DPool::<2, 32>::new();
    pool.sink(0).put(Counted::default());
    // A second value replaces (and drops) the first.
    pool.sink(0).put(Counted::default());
    assert_eq!(live(), 1);
    // The wrong type is not read; the value stays and is dropped later.
    assert_eq!(pool.input(Some(0)).take::<u64>(), None);
    assert_eq!(live(), 1);
    let value = pool.input(Some(0)).take::<Counted>().expect("a Counted");
    assert_eq!(value.0, 0xC0FFEE);
    assert!(
        pool.input(Some(0)).take::<Counted>().is_none(),
        "moved out once"
    );
    drop(value);
    assert_eq!(live(), 0);
    pool.sink(1).put(Counted::default());
    assert!(DIn::EMPTY.take::<Counted>().is_none());
    drop(pool);
    assert_eq!(live(), 0);
}

/// A persisted counted value: (de)serializes as its `u64`.
#[cfg(feature = "serde")]
mod persisted {
    use super::*;

    impl serde::Serialize for Counted {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_u64(self.0)
        }
    }

    impl<'de> serde::Deserialize<'de> for Counted {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            // Reads a number; the value is the marker `Drop` checks.
            <u64 as serde::Deserialize>::deserialize(d)?;
            LIVE.with(|l| l.set(l.get() + 1));
            Ok(Counted(0xC0FFEE))
        }
    }

    struct Saved;

    impl BehaviorDef<u32> for Saved {
        type Memory = Counted;
        type DBlock = ();
        type Table = crate::decl::behavior::AnyTable;
        const NAME: &'static str = "SAVED";
        const MODULE: &'static str = "tests";
        const PERSIST: Option<PersistFns> = Some(PersistFns::of::<Counted>());
    }

    static SAVED: ErasedBehavior<u32> = ErasedBehavior::new::<Saved>();

    #[test]
    fn a_loaded_value_is_dropped_once_and_a_failed_load_leaves_the_block_empty() {
        let mut blocks = Blocks::<u32, 2, 32>::new();
        blocks.init(0, &SAVED);
        let text = serde_json::to_string(blocks.saved(0).expect("persisted")).unwrap();
        assert_eq!(text, "12648430");
        assert!(
            blocks.saved(1).is_none(),
            "an empty block has nothing to save"
        );
        let mut ok = serde_json::Deserializer::from_str("7");
        let mut erased = <dyn erased_serde::Deserializer>::erase(&mut ok);
        blocks.load(1, &SAVED, &mut erased).unwrap();
        assert_eq!(live(), 2);
        // Loading over a value drops it first; a failed load leaves the
        // block empty.
        let mut bad = serde_json::Deserializer::from_str("\"x\"");
        let mut erased = <dyn erased_serde::Deserializer>::erase(&mut bad);
        assert!(blocks.load(1, &SAVED, &mut erased).is_err());
        assert!(blocks.owner(1).is_none());
        assert_eq!(live(), 1);
        drop(blocks);
        assert_eq!(live(), 0);
    }
}

#[test]
fn blocks_are_aligned() {
    let mut blocks = Blocks::<u32, 2, 32>::new();
    for level in 0..2 {
        let p = blocks.bytes[level].as_mut_ptr();
        assert_eq!(p as usize % BLOCK_ALIGN, 0);
    }
}

/// Every block of tunables a context may hold has `FAST_SLOTS` values
/// after its head, whatever its table's length: a read below that place
/// stays in it (Miri checks), one at it or past it is refused.
#[test]
fn every_block_of_tunables_has_the_fast_places() {
    use crate::decl::tune::TunableDecl;
    use crate::decl::tune::Tunables;

    static DECLS: [TunableDecl; 2] = [
        TunableDecl::int("A", "", 7, 0, 10),
        TunableDecl::float("B", "", 0.5, 0.0, 1.0),
    ];
    static DEFAULTS: TunedDefaults = TunedDefaults::of(&DECLS);
    static TABLE: Tunables = Tunables::new("T", &DECLS).__defaults(&DEFAULTS);

    let slots = TunedSlots::new(Some(&TABLE), |i| 40 + i as u64);
    let crowd = TunedAt::of(Some(&slots), TunedHead::NONE).head();
    let defaults = TABLE.default_head();
    for (head, first) in [(crowd, 40), (defaults, 7), (TunedHead::NONE, 0)] {
        assert_eq!(head.at(0), Some(first));
        assert_eq!(head.at(FAST_SLOTS - 1), Some(0));
        assert_eq!(head.at(FAST_SLOTS), None);
    }
    // The checked read: the crowd's values for its table, nothing from the
    // static blocks, which name none.
    assert_eq!(crowd.get(&TABLE, 1), Some(41));
    assert_eq!(crowd.get(&TABLE, 2), None);
    assert_eq!(defaults.get(&TABLE, 0), None);
    assert_eq!(TunedHead::NONE.get(&TABLE, 0), None);
    assert_eq!(slots.values().len(), 2);
    assert_eq!(defaults.at(1), Some(0.5f64.to_bits()));
}

#[test]
fn places_visit_each_listed_agent_with_its_memory_and_fetch_ahead() {
    let mut agents: std::vec::Vec<u64> = (0..10).collect();
    let mut memories: std::vec::Vec<std::string::String> =
        (0..10).map(|i| std::format!("m{i}")).collect();
    // Three places to visit, two more to fetch ahead, one of them twice.
    let list = [7, 2, 9, 2, 0];
    let fetched = core::cell::RefCell::new(std::vec::Vec::new());
    let mut seen = std::vec::Vec::new();
    let places = Places::new(&list, &mut agents, &mut memories).unwrap();
    let walked = places.walk(
        3,
        2,
        |a, m| fetched.borrow_mut().push((*a, m.clone())),
        |i, a, m| {
            // What was fetched so far: the two ahead, then one more each.
            assert_eq!(fetched.borrow().len(), seen.len() + 3);
            *a += 100;
            m.push('!');
            seen.push(i);
        },
    );
    assert_eq!(walked, Some(()));
    assert_eq!(seen, [7, 2, 9]);
    let fetched: std::vec::Vec<u64> = fetched.into_inner().iter().map(|f| f.0).collect();
    assert_eq!(fetched, [7, 2, 9, 2, 0]);
    assert_eq!(
        (agents[7], agents[2], agents[9], agents[0]),
        (107, 102, 109, 0)
    );
    assert_eq!(
        (&*memories[7], &*memories[2], &*memories[1]),
        ("m7!", "m2!", "m1")
    );
}

#[test]
fn places_refuse_an_index_past_the_slices_or_a_short_list() {
    let (mut agents, mut memories) = ([0u8; 4], [0u16; 4]);
    assert!(Places::new(&[0, 4], &mut agents, &mut memories).is_none());
    assert!(Places::new(&[0, 1], &mut agents, &mut memories[..3]).is_none());
    assert!(Places::new(&[u32::MAX], &mut agents, &mut memories).is_none());
    let places = Places::new(&[3, 1, 2], &mut agents, &mut memories).unwrap();
    assert_eq!(places.walk(2, 2, |_, _| {}, |_, _, _| {}), None);
    let places = Places::new(&[3, 1, 2], &mut agents, &mut memories).unwrap();
    assert_eq!(places.walk(usize::MAX, 2, |_, _| {}, |_, _, _| {}), None);
    // An empty list over empty slices visits nothing.
    let places = Places::<u8, u16>::new(&[], &mut [], &mut []).unwrap();
    assert_eq!(
        places.walk(0, 0, |_, _| {}, |_, _, _| unreachable!()),
        Some(())
    );
}

#[test]
fn places_after_a_panic_leave_the_slices_as_visited() {
    let (mut agents, mut memories) = ([0u32; 5], [0u32; 5]);
    let list = [4, 0, 3, 1, 1, 1];
    let r = catch_unwind(AssertUnwindSafe(|| {
        let places = Places::new(&list, &mut agents, &mut memories).unwrap();
        places.walk(
            4,
            2,
            |_, _| {},
            |i, a, m| {
                assert_ne!(i, 3, "a callback panics");
                *a += 1;
                *m += 2;
            },
        )
    }));
    assert!(r.is_err());
    assert_eq!(agents, [1, 0, 0, 0, 1]);
    assert_eq!(memories, [2, 0, 0, 0, 2]);
}
