//! Debug output levels 0–5 through the `log` crate.
//!
//! | level | when            | what                                              |
//! |-------|-----------------|---------------------------------------------------|
//! | 0     | never           | nothing (the default)                             |
//! | 1     | transitions     | one line per tick that changed the active path    |
//! | 2     | transitions     | and each activation, deactivation and redecide    |
//! | 3     | every tick      | one line per tick, and level 2's lines            |
//! | 4     | every tick      | and the walk: each visited and ticked decider     |
//! | 5     | every tick      | and each candidate's precondition or decide result|
//!
//! Lines go to [`log`] at `Debug` level under the target `bt`, so the
//! program's logger decides where they end up (`RUST_LOG=bt=debug` with
//! `env_logger`). [`watch_agents`] narrows the output to the agents whose id
//! matches a mask: one agent in a crowd.
//!
//! Off costs one relaxed atomic load and one branch per tick: nothing is
//! formatted, and the logger is not even asked.

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

use super::{Event, Tracer, write_event};
use crate::memory::shared::AtomicU64;

static LEVEL: AtomicU8 = AtomicU8::new(0);
/// `mask << 32 | value`: agents with `id & mask == value` are watched.
static WATCH: AtomicU64 = AtomicU64::new(0);

/// Sets the debug output level, 0 (off) to 5; higher values mean 5.
pub fn set_debug_level(level: u8) {
    LEVEL.store(level.min(5), Ordering::Relaxed);
}

/// The debug output level.
pub fn debug_level() -> u8 {
    LEVEL.load(Ordering::Relaxed)
}

/// Debug output only for agents whose id `& mask == value`
/// (`watch_agents(0, 0)`, the default, watches all).
pub fn watch_agents(mask: u32, value: u32) {
    WATCH.store(
        u64::from(mask) << 32 | u64::from(value & mask),
        Ordering::Relaxed,
    );
}

/// Debug output only for `agent` (`None`: for all).
pub fn watch_agent(agent: Option<u32>) {
    match agent {
        Some(id) => watch_agents(u32::MAX, id),
        None => watch_agents(0, 0),
    }
}

/// The level that applies to `agent` this tick: 0 when off.
#[inline(always)]
pub(crate) fn level_for(agent: u32) -> u8 {
    let level = LEVEL.load(Ordering::Relaxed);
    if level == 0 {
        return 0;
    }
    watched(level, agent)
}

#[cold]
fn watched(level: u8, agent: u32) -> u8 {
    let watch = WATCH.load(Ordering::Relaxed);
    let (mask, value) = ((watch >> 32) as u32, watch as u32);
    if agent & mask == value && ::log::log_enabled!(target: "bt", ::log::Level::Debug) {
        level
    } else {
        0
    }
}

/// The least level at which an event is written.
fn level_of(event: &Event) -> u8 {
    match event {
        Event::Start { .. }
        | Event::Rejected { .. }
        | Event::Walked { .. }
        | Event::Decided { .. }
        | Event::Declined { .. } => 5,
        Event::Visit { .. } | Event::Ticked { .. } | Event::ActionReported { .. } => 4,
        Event::End { .. } => 3,
        Event::Preempt { .. }
        | Event::Jump { .. }
        | Event::Activated { .. }
        | Event::ActivateFailed { .. }
        | Event::Deactivated { .. }
        | Event::Redecide { .. }
        | Event::SubsetViolation { .. }
        | Event::Idle
        | Event::Launched { .. }
        | Event::Cancelled { .. }
        | Event::RedecideLimit { .. } => 2,
    }
}

/// The tracer behind the debug levels: writes the events of its level.
pub(crate) struct LogTracer {
    level: u8,
    agent: u32,
    now: f64,
    changed: bool,
}

impl LogTracer {
    pub(crate) fn new(level: u8, agent: u32, now: f64) -> Self {
        LogTracer {
            level,
            agent,
            now,
            changed: false,
        }
    }
}

/// One event as a log line (without the trailing newline).
struct Line<'e>(&'e Event);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_event(&mut NoNewline(f), self.0)
    }
}

/// Drops the newline `write_event` ends each line with.
struct NoNewline<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl fmt::Write for NoNewline<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write_str(s.strip_suffix('\n').unwrap_or(s))
    }
}

impl Tracer for LogTracer {
    fn event(&mut self, event: &Event) {
        if matches!(event, Event::Activated { .. } | Event::Deactivated { .. }) {
            self.changed = true;
        }
        if let Event::End { leaf, visited } = event {
            if self.level >= 3 || self.changed {
                let (agent, now) = (self.agent, self.now);
                let leaf = leaf.map_or("idle", |l| l.name);
                let how = if self.changed { "changed" } else { "same" };
                ::log::debug!(
                    target: "bt",
                    "agent {agent} t={now:.3}: {leaf} ({how}, visited {visited})"
                );
            }
            return;
        }
        if self.level >= level_of(event) {
            let agent = self.agent;
            ::log::debug!(target: "bt", "agent {agent}: {}", Line(event));
        }
    }
}

/// Two tracers in one: the caller's and the debug output.
pub(crate) struct Tee<'a, T: ?Sized>(pub(crate) &'a mut T, pub(crate) LogTracer);

impl<T: Tracer + ?Sized> Tracer for Tee<'_, T> {
    fn event(&mut self, event: &Event) {
        if T::ENABLED {
            self.0.event(event);
        }
        self.1.event(event);
    }
}
