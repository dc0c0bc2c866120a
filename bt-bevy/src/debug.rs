//! Debugging one picked entity: its decision trace and state dump, each
//! tick, through the `log` crate.

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bt_core::{DumpView, TickError, TickReport, TraceRecorder};

use crate::adapter::{self, TreeMemory};

/// Put it on an entity to debug its brain: from then on, each tick of that
/// entity is recorded as a decision trace (one line per step: deciders
/// tried and why they failed, decide values, activations, deactivations,
/// ticks) and followed by a state dump of its active path, both kept here
/// and written to the `log` crate at `info` level under the `bt_bevy`
/// target (Bevy's `LogPlugin` shows them). Entities without it are ticked
/// with no trace at all.
///
/// Debugging changes no decision: the same app makes the same decisions
/// with or without it, on any entities. A brain of a tree with shared
/// state (gates, cooldowns, roles, deferred actions) is traced in its
/// place in entity order; in any other tree the traced brains tick one by
/// one after the parallel tick, which changes nothing, since no brain's
/// tick depends on another's there.
///
/// For bt-core's leveled debug output of one entity instead, use
/// `bt_core::watch_agent(Some(bt_bevy::agent_id(entity)))` with
/// `bt_core::set_debug_level`.
#[derive(Component, Debug, Clone)]
pub struct DebugBrain {
    /// Write each tick's trace and dump to the log (default `true`).
    pub log: bool,
    /// Dump the whole tree with the active path marked instead of the
    /// active path only.
    pub whole_tree: bool,
    trace: String,
    dump: String,
}

impl Default for DebugBrain {
    fn default() -> Self {
        DebugBrain {
            log: true,
            whole_tree: false,
            trace: String::new(),
            dump: String::new(),
        }
    }
}

impl DebugBrain {
    /// Debugging that only keeps the texts, without logging them.
    pub fn quiet() -> Self {
        DebugBrain {
            log: false,
            ..Self::default()
        }
    }

    /// The decision trace of the entity's last tick, one event per line.
    pub fn trace(&self) -> &str {
        &self.trace
    }

    /// The state dump after the entity's last tick.
    pub fn dump(&self) -> &str {
        &self.dump
    }
}

/// Keeps (and logs) the trace and the dump of one traced tick.
pub(crate) fn record<M: TreeMemory>(
    debug: &mut DebugBrain,
    entity: Entity,
    memory: &M,
    result: &Result<TickReport, TickError>,
    trace: TraceRecorder,
    now: f64,
) {
    debug.trace = adapter::trace_text(trace, result.as_ref().err());
    debug.dump.clear();
    let view = if debug.whole_tree {
        DumpView::WholeTree
    } else {
        DumpView::ActivePath
    };
    memory.dump(&mut debug.dump, now, view);
    if debug.log {
        log::info!(
            target: "bt_bevy",
            "{entity} at {now:.3}s, trace:\n{}state:\n{}",
            debug.trace,
            debug.dump
        );
    }
}
