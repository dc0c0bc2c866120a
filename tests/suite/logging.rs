//! Debug output levels through the `log` crate.

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::sync::Once;

use bt_core::{TickInput, set_debug_level, tick, watch_agent};

use crate::world::{Bot, T1};

thread_local! {
    /// Lines logged on this thread under the `bt` target.
    static LINES: RefCell<String> = const { RefCell::new(String::new()) };
    /// Records the logger was handed on this thread.
    static RECORDS: Cell<usize> = const { Cell::new(0) };
    /// Warnings logged on this thread under the `bt` target.
    static WARNINGS: Cell<usize> = const { Cell::new(0) };
}

/// Captures `bt` records per thread, so tests running in parallel do not
/// see each other's lines.
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        if record.target() == "bt" && record.level() == log::Level::Warn {
            WARNINGS.with(|w| w.set(w.get() + 1));
        }
        if record.target() != "bt" || record.level() != log::Level::Debug {
            return;
        }
        RECORDS.with(|r| r.set(r.get() + 1));
        LINES.with(|l| writeln!(l.borrow_mut(), "{}", record.args()).unwrap());
    }

    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        log::set_logger(&CAPTURE).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
    });
}

/// Turns debug output off again even if the test fails.
struct Off;

impl Drop for Off {
    fn drop(&mut self) {
        set_debug_level(0);
        watch_agent(None);
    }
}

/// Four ticks of T1 for agent `id`: start at LOW, MID preempts, a quiet
/// tick, then D1 ends and DEEP redecides.
fn scenario(id: u32) {
    let mut bot = Bot::default();
    let mut memory = T1.new_memory(0);
    for t in 0..4 {
        match t {
            1 => bot.accept.extend(["MID", "DEEP", "D1", "D2"]),
            3 => {
                bot.ends.insert("D1_B");
            }
            _ => {}
        }
        let input = TickInput::new(f64::from(t), 1.0).with_agent(id);
        tick(&T1, &mut bot, &mut memory, &input).unwrap();
    }
}

fn take() -> (String, usize) {
    (
        LINES.with(|l| std::mem::take(&mut *l.borrow_mut())),
        RECORDS.with(|r| r.replace(0)),
    )
}

// One test: the level is global, so the cases run in order.
#[test]
fn debug_levels_write_growing_detail_for_the_watched_agent() {
    install();
    let _off = Off;
    take();

    // Off: the logger is never called, so nothing is formatted.
    set_debug_level(0);
    scenario(4711);
    assert_eq!(take(), (String::new(), 0));

    let mut all = String::new();
    let mut counts = Vec::new();
    for level in 1..=5 {
        set_debug_level(level);
        watch_agent(Some(4711));
        scenario(4711);
        let (text, records) = take();
        writeln!(all, "## level {level}\n{text}").unwrap();
        counts.push(records);
        // Another agent is not watched: nothing from it.
        scenario(4712);
        assert_eq!(take().1, 0, "level {level}: agent 4712 is not watched");
    }
    // Each level adds detail.
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    snapshot!(all);

    // A reference's jump is a change: written from level 2 on.
    for (level, shown) in [(1, false), (2, true)] {
        set_debug_level(level);
        watch_agent(Some(4711));
        crate::references::jump_once(4711);
        let (text, _) = take();
        let line = "agent 4711:       jump 2:GO_GUARD to 6:GUARD";
        assert_eq!(text.contains(line), shown, "level {level}:\n{text}");
    }
}

/// An idle agent whose root has no accepting child stays idle tick after
/// tick without a Subset Rule warning; a root whose own `decide` accepts
/// without a runnable child is warned about every tick.
#[test]
fn staying_idle_logs_no_subset_rule_warning() {
    use crate::api::{CLAIMING, IDLE, Idle};
    install();
    let warnings = || WARNINGS.with(Cell::get);
    let before = warnings();
    let mut agent = Idle { wants: false };
    let mut memory = IDLE.new_memory(0);
    for t in 0..3 {
        tick(
            &IDLE,
            &mut agent,
            &mut memory,
            &TickInput::new(f64::from(t), 1.0),
        )
        .unwrap();
    }
    assert_eq!(warnings(), before);
    let mut memory = CLAIMING.new_memory(0);
    for t in 0..2 {
        tick(
            &CLAIMING,
            &mut agent,
            &mut memory,
            &TickInput::new(f64::from(t), 1.0),
        )
        .unwrap();
    }
    assert_eq!(warnings(), before + 2);
}
