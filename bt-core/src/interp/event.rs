//! Decision traces: structured events from inside a tick.
//!
//! [`tick_traced`](crate::tick_traced) hands every step of a tick to a
//! [`Tracer`]: which decider was tried and why it was rejected, what each
//! `decide` returned, what was activated, ticked, deactivated and why.
//! [`TraceRecorder`] turns the events into stable text, one line per event,
//! for snapshot tests. [`tick`](crate::tick) uses [`NoTrace`], whose hook is
//! compiled away.

use core::fmt::{self, Write};

use crate::decl::{Action, ActionState, ItemIdx};
use crate::memory::shared::Ticket;

/// A decider at one place in the tree, as events name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRef {
    /// Its index in the compiled stream.
    pub index: ItemIdx,
    /// Its name.
    pub name: &'static str,
    /// Its depth (the root is 0).
    pub depth: u8,
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.index, self.name)
    }
}

/// Why a candidate decider did not activate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Its decision-flag test failed.
    Decision,
    /// Its stimuli-flag test failed.
    Stimuli,
    /// Its timer has not run out.
    Timer,
    /// Its `decide` returned zero (or less, or NaN).
    Decide,
    /// It delegates its decision and none of its children accepts.
    NoChild,
    /// Its gate is full: as many agents as it admits are active in it.
    Gate,
    /// Its global cooldown has not run out.
    Cooldown,
    /// Its group role is waiting for more agents to want in.
    Waiting,
    /// Its group role is busy with a group that formed before.
    RoleBusy,
    /// A slot group whose `select` names no child (or one out of range).
    NoSelection,
}

impl Rejection {
    /// A short name for text output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rejection::Decision => "decision flags",
            Rejection::Stimuli => "stimuli flags",
            Rejection::Timer => "timer",
            Rejection::Decide => "decide",
            Rejection::NoChild => "no child accepts",
            Rejection::Gate => "gate full",
            Rejection::Cooldown => "global cooldown",
            Rejection::Waiting => "waiting for the group",
            Rejection::RoleBusy => "group role busy",
            Rejection::NoSelection => "nothing selected",
        }
    }
}

/// Why a decider was deactivated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Its behavior's `tick` returned false.
    Ended,
    /// Its behavior's `activate` returned false.
    ActivateFailed,
    /// A higher-priority (or better-scored) sibling took over, or a
    /// reference's jump moved the active path away (after an
    /// [`Event::Jump`]).
    Preempted,
    /// A group none of whose remaining children accepts.
    NoChild,
    /// A group whose own `decide` rejected on a redecide
    /// (`CALL_DECIDE_ON_REDECIDE`).
    Rejected,
    /// An ancestor was deactivated.
    ParentLeft,
    /// The tick stopped on an error.
    Error,
    /// [`deactivate_all`](crate::deactivate_all) was called.
    Stopped,
    /// Its activation was refused by the crowd's shared state: another
    /// agent took the last gate slot or the cooldown first (only when
    /// agents are ticked in parallel).
    Refused,
    /// A slot group whose `select` now names another child, or none.
    Reselected,
}

impl Why {
    /// A short name for text output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Why::Ended => "ended",
            Why::ActivateFailed => "activate failed",
            Why::Preempted => "preempted",
            Why::NoChild => "no child can run",
            Why::Rejected => "rejected on redecide",
            Why::ParentLeft => "parent left",
            Why::Error => "error",
            Why::Stopped => "stopped",
            Why::Refused => "refused by the shared state",
            Why::Reselected => "selection changed",
        }
    }

    /// The reason given to the levels below the one that failed.
    pub(crate) const fn below(self) -> Why {
        match self {
            Why::Preempted | Why::Error | Why::Stopped | Why::Reselected => self,
            _ => Why::ParentLeft,
        }
    }
}

/// Where a tick's walk of its active path stopped, at the decider of
/// [`Event::Walked`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkStop {
    /// Before visiting it: the decider launches a deferred action.
    Before,
    /// It was visited, and its behavior ticked and ended.
    Ended,
    /// It was visited, its behavior (if it ticks one) ticked and runs on,
    /// and, in a prioritized group, its children before the item `from`
    /// were turned down as on the levels above; the rest of the tick
    /// decides from `from` on (a group with no active child, a candidate
    /// that passed its flag tests, a group that is not prioritized).
    At {
        /// The first child the walk did not turn down.
        from: ItemIdx,
    },
}

/// One step inside a tick.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A tick starts.
    Start {
        /// Agent id from the tick input.
        agent: u32,
        /// Absolute time.
        now: f64,
        /// Time step.
        dt: f32,
        /// Decision flags.
        decision: u64,
        /// Stimuli flags.
        stimuli: u64,
    },
    /// An active decider is visited on the way down the active path.
    Visit {
        /// The decider.
        node: NodeRef,
    },
    /// A candidate was rejected, by a precondition or by its `decide`.
    Rejected {
        /// The decider.
        node: NodeRef,
        /// What rejected it.
        by: Rejection,
    },
    /// A `decide` (or a delegation to the children) returned a value above 0.
    Decided {
        /// The decider.
        node: NodeRef,
        /// The value: weight for random groups, score for scored groups.
        value: f32,
    },
    /// A `decide` returned zero, less, or NaN: the candidate rejects. The
    /// [`Rejected`](Event::Rejected) by [`Rejection::Decide`] of the same
    /// decider follows at once.
    Declined {
        /// The decider.
        node: NodeRef,
        /// The value it returned (NaN included: two such events then
        /// compare unequal, as their values do).
        value: f32,
    },
    /// A sibling takes over from a group's active child.
    Preempt {
        /// The group.
        group: NodeRef,
        /// The child that takes over.
        by: NodeRef,
    },
    /// A reference picked by its group jumps: the active path moves to its
    /// target. The deactivations of the levels it leaves
    /// ([`Why::Preempted`]) and the activations on the way follow.
    Jump {
        /// The reference.
        from: NodeRef,
        /// Its target.
        to: NodeRef,
    },
    /// A decider was activated (its behavior's `activate` succeeded).
    Activated {
        /// The decider.
        node: NodeRef,
        /// Its behavior, if any.
        behavior: Option<&'static str>,
        /// The behavior flags word passed to the behavior.
        flags: u64,
    },
    /// A behavior's `activate` returned false.
    ActivateFailed {
        /// The decider.
        node: NodeRef,
        /// The behavior.
        behavior: &'static str,
    },
    /// A behavior ticked.
    Ticked {
        /// The decider.
        node: NodeRef,
        /// The behavior.
        behavior: &'static str,
        /// Whether it goes on.
        running: bool,
    },
    /// A decider was deactivated.
    Deactivated {
        /// The decider.
        node: NodeRef,
        /// Why.
        why: Why,
    },
    /// A group picks again with its failed child masked out.
    Redecide {
        /// The group.
        group: NodeRef,
        /// The child that failed.
        failed: NodeRef,
        /// The group's mask of failed children after this one.
        mask: u64,
    },
    /// A group accepted but none of its children could run (Spore's
    /// Subset Rule). It is then handled like any failure.
    SubsetViolation {
        /// The group.
        group: NodeRef,
    },
    /// A behavior launched a deferred action.
    Launched {
        /// The decider.
        node: NodeRef,
        /// The request.
        action: Action,
        /// The launch's ticket.
        ticket: Ticket,
    },
    /// A deactivated behavior's pending deferred action was cancelled.
    Cancelled {
        /// The decider.
        node: NodeRef,
        /// The launch's ticket.
        ticket: Ticket,
    },
    /// A behavior ticked with its deferred action reported back.
    ActionReported {
        /// The decider.
        node: NodeRef,
        /// What the game system reported.
        state: ActionState,
    },
    /// Only to a tracer that takes no steady tick ([`Tracer::STEADY`]
    /// false), in place of the events of the tick's walk of its active
    /// path, which stopped at `node`, where the rest of the tick goes on.
    /// Those events follow from the path down to `node` (every item has
    /// one parent) and the tick's flags: the tick's
    /// [`Start`](Event::Start); on each level above `node`, its
    /// [`Visit`](Event::Visit), its running behavior's
    /// [`Ticked`](Event::Ticked), and, in a prioritized group, a
    /// [`Rejected`](Event::Rejected) for each child before the one on the
    /// path, by the flag test it fails
    /// ([`Preconditions::flag_rejection`](crate::Preconditions::flag_rejection))
    /// or, passing them, by its timer; then, at `node`, what `stop` says.
    /// It is the tick's first event.
    Walked {
        /// Where the walk stopped.
        node: NodeRef,
        /// What it did there.
        stop: WalkStop,
    },
    /// Nothing accepts at the root: the agent is idle this tick.
    Idle,
    /// The redecide budget ran out; everything is deactivated.
    RedecideLimit {
        /// The group where it ran out.
        group: NodeRef,
    },
    /// The tick ends.
    End {
        /// The active behavior decider, if any.
        leaf: Option<NodeRef>,
        /// Deciders visited.
        visited: u32,
    },
}

/// Receives the events of a tick.
pub trait Tracer {
    /// Whether events are wanted at all. When false the interpreter builds
    /// none, so a disabled tracer costs nothing.
    const ENABLED: bool = true;

    /// Whether the tracer takes the events of a steady tick: one whose
    /// walk of the active path changed nothing (every behavior on it goes
    /// on running, every earlier sibling is turned down as before). False:
    /// such a tick sends the tracer no event at all, and a tick that goes
    /// on past its walk sends [`Event::Walked`] in place of the walk's
    /// events. Those events follow from the active path and the tick's
    /// flags, so a tracer that stores ticks (a flight recorder) can leave
    /// them out, and the walk costs what an untraced tick's costs.
    const STEADY: bool = true;

    /// Called for each event, in order.
    fn event(&mut self, event: &Event);
}

/// The tracer of [`tick`](crate::tick): ignores everything, costs nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Tracer for NoTrace {
    const ENABLED: bool = false;

    #[inline(always)]
    fn event(&mut self, _: &Event) {}
}

impl<T: Tracer + ?Sized> Tracer for &mut T {
    const ENABLED: bool = T::ENABLED;
    const STEADY: bool = T::STEADY;

    fn event(&mut self, event: &Event) {
        (**self).event(event)
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
        Event::Declined { node, value } => {
            indent(out, node.depth)?;
            writeln!(out, "decline {node} = {value:.3}")
        }
        Event::Preempt { group, by } => {
            indent(out, group.depth)?;
            writeln!(out, "preempt in {group} by {by}")
        }
        Event::Jump { from, to } => {
            indent(out, from.depth)?;
            writeln!(out, "jump {from} to {to}")
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
        Event::Walked { node, stop } => {
            indent(out, node.depth)?;
            match stop {
                WalkStop::Before => writeln!(out, "walked to {node}"),
                WalkStop::Ended => writeln!(out, "walked to {node}, which ended"),
                WalkStop::At { from } => {
                    writeln!(out, "walked to {node}, children from {} on", from.0)
                }
            }
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
