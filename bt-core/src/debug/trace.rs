//! The trace recorder and the text form of events.

use alloc::string::String;
use core::fmt::{self, Write};

use crate::decl::ActionState;
use crate::interp::{Event, Tracer};

/// Renders events as stable text, one line per event, indented by depth:
/// the form decision-trace snapshots are written in.
#[derive(Clone, Debug, Default)]
pub struct TraceRecorder {
    text: String,
}

impl TraceRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text recorded so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the text, leaving the recorder empty.
    pub fn take(&mut self) -> String {
        core::mem::take(&mut self.text)
    }

    /// Appends a line of the caller's own (a note between ticks).
    pub fn note(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }
}

impl Tracer for TraceRecorder {
    fn event(&mut self, event: &Event) {
        // Writing to a String cannot fail.
        let _ = write_event(&mut self.text, event);
    }
}

/// Writes one event as a line of text (with its newline).
///
/// # Errors
/// Whatever `out` returns.
pub fn write_event(out: &mut impl Write, event: &Event) -> fmt::Result {
    fn indent(out: &mut impl Write, depth: u8) -> fmt::Result {
        for _ in 0..=depth {
            out.write_str("  ")?;
        }
        Ok(())
    }
    match *event {
        Event::Start {
            agent,
            now,
            dt,
            decision,
            stimuli,
        } => writeln!(
            out,
            "tick agent={agent} t={now:.3} dt={dt:.3} decision={decision:#x} stimuli={stimuli:#x}"
        ),
        Event::Visit { node } => {
            indent(out, node.depth)?;
            writeln!(out, "visit {node}")
        }
        Event::Rejected { node, by } => {
            indent(out, node.depth)?;
            writeln!(out, "reject {node} ({})", by.as_str())
        }
        Event::Decided { node, value } => {
            indent(out, node.depth)?;
            writeln!(out, "accept {node} = {value:.3}")
        }
        Event::Preempt { group, by } => {
            indent(out, group.depth)?;
            writeln!(out, "preempt in {group} by {by}")
        }
        Event::Activated {
            node,
            behavior,
            flags,
        } => {
            indent(out, node.depth)?;
            match behavior {
                Some(b) if flags != 0 => writeln!(out, "activate {node} [{b} flags={flags:#x}]"),
                Some(b) => writeln!(out, "activate {node} [{b}]"),
                None => writeln!(out, "activate {node}"),
            }
        }
        Event::ActivateFailed { node, behavior } => {
            indent(out, node.depth)?;
            writeln!(out, "activate {node} [{behavior}] failed")
        }
        Event::Ticked {
            node,
            behavior,
            running,
        } => {
            indent(out, node.depth)?;
            let state = if running { "running" } else { "ended" };
            writeln!(out, "tick {node} [{behavior}] {state}")
        }
        Event::Deactivated { node, why } => {
            indent(out, node.depth)?;
            writeln!(out, "deactivate {node} ({})", why.as_str())
        }
        Event::Redecide {
            group,
            failed,
            mask,
        } => {
            indent(out, group.depth)?;
            writeln!(out, "redecide {group} without {failed} mask={mask:#x}")
        }
        Event::SubsetViolation { group } => {
            indent(out, group.depth)?;
            writeln!(out, "SUBSET RULE: {group} accepted but no child can run")
        }
        Event::Launched {
            node,
            action,
            ticket,
        } => {
            indent(out, node.depth)?;
            writeln!(
                out,
                "launch {node} code={} arg={} ticket={ticket}",
                action.code, action.arg
            )
        }
        Event::Cancelled { node, ticket } => {
            indent(out, node.depth)?;
            writeln!(out, "cancel {node} ticket={ticket}")
        }
        Event::ActionReported { node, state } => {
            indent(out, node.depth)?;
            let state = match state {
                ActionState::Succeeded => "succeeded",
                ActionState::Failed => "failed",
                ActionState::Pending => "pending",
                ActionState::None => "none",
            };
            writeln!(out, "action of {node} {state}")
        }
        Event::Idle => writeln!(out, "  idle"),
        Event::RedecideLimit { group } => {
            indent(out, group.depth)?;
            writeln!(out, "REDECIDE LIMIT in {group}")
        }
        Event::End { leaf, visited } => match leaf {
            Some(leaf) => writeln!(out, "end leaf={leaf} visited={visited}"),
            None => writeln!(out, "end idle visited={visited}"),
        },
    }
}
