//! How a kept tick is encoded: the header flags, the kinds and codes of
//! the kept events, and the word that packs one event.

use bt_core::{ItemIdx, Rejection, TickError, Why};

/// `leaf` of a header when the agent is idle.
pub(crate) const NO_LEAF: u16 = u16::MAX;

/// Header flag: the tick found no room left in its frame for its last
/// events, which were dropped.
pub(crate) const TRUNCATED: u8 = 1 << 0;
/// Header flags, bits 1..=3: the [`TickError`] the tick returned, if any.
pub(crate) const ERROR_SHIFT: u8 = 1;
/// The bits of the error code, once shifted down.
#[cfg(feature = "live")]
pub(crate) const ERROR_BITS: u8 = 0b111;
/// Header flag: a steady tick, which kept no event; its rejections follow
/// from its path and flags.
pub(crate) const STEADY: u8 = 1 << 4;

/// Words of a tick's header: its clock, the packed header word, and its
/// decision and stimuli flags.
pub(crate) const HEADER: usize = 4;

/// The kind of the word that stands for a tick's walk of its active path
/// ([`bt_core::Event::Walked`]) in a frame: its code, decider and payload
/// say where and how the walk stopped. Reading the tick puts the walk's
/// events in its place; no export holds it.
pub(crate) const WALKED: u8 = 0;

/// Kinds of the kept events, as stored in a word's low byte (and as the
/// export's legend names them, in this order from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Rejected = 1,
    Decided,
    Preempt,
    Activated,
    ActivateFailed,
    Ended,
    Deactivated,
    Redecide,
    SubsetViolation,
    Launched,
    Cancelled,
    ActionReported,
    RedecideLimit,
    Jump,
    Other,
}

/// Names of [`Kind`] from 1, for the export.
pub(crate) const KIND_NAMES: [&str; 15] = [
    "reject",
    "accept",
    "preempt",
    "activate",
    "activate-failed",
    "ended",
    "deactivate",
    "redecide",
    "subset-rule",
    "launch",
    "cancel",
    "action-reported",
    "redecide-limit",
    "jump",
    "other",
];

/// Every [`Rejection`], in the order of its code.
pub(crate) const REJECTIONS: [Rejection; 10] = [
    Rejection::Decision,
    Rejection::Stimuli,
    Rejection::Timer,
    Rejection::Decide,
    Rejection::NoChild,
    Rejection::Gate,
    Rejection::Cooldown,
    Rejection::Waiting,
    Rejection::RoleBusy,
    Rejection::NoSelection,
];

/// Every [`Why`], in the order of its code.
pub(crate) const WHYS: [Why; 10] = [
    Why::Ended,
    Why::ActivateFailed,
    Why::Preempted,
    Why::NoChild,
    Why::Rejected,
    Why::ParentLeft,
    Why::Error,
    Why::Stopped,
    Why::Refused,
    Why::Reselected,
];

/// Names of the action states, in the order of their code.
pub(crate) const ACTION_STATES: [&str; 4] = ["none", "pending", "succeeded", "failed"];

/// Names of the tick errors, from code 1.
pub(crate) const ERRORS: [&str; 5] = [
    "redecide limit",
    "wrong tree",
    "memory not bound to a TreeShared",
    "invalid input",
    "other error",
];

/// Whether the payload of an event word of `kind` and `code` is the bits
/// of an `f32`: the value of an accept, or of a `decide` that rejected.
#[inline(always)]
pub(crate) fn value_payload(kind: u8, code: u8) -> bool {
    kind == Kind::Decided as u8
        || (kind == Kind::Rejected as u8 && code == rejection_code(Rejection::Decide))
}

/// The index of `by` in [`REJECTIONS`].
#[inline(always)]
pub(crate) fn rejection_code(by: Rejection) -> u8 {
    match by {
        Rejection::Decision => 0,
        Rejection::Stimuli => 1,
        Rejection::Timer => 2,
        Rejection::Decide => 3,
        Rejection::NoChild => 4,
        Rejection::Gate => 5,
        Rejection::Cooldown => 6,
        Rejection::Waiting => 7,
        Rejection::RoleBusy => 8,
        Rejection::NoSelection => 9,
    }
}

/// The index of `why` in [`WHYS`].
#[inline(always)]
pub(super) fn why_code(why: Why) -> u8 {
    match why {
        Why::Ended => 0,
        Why::ActivateFailed => 1,
        Why::Preempted => 2,
        Why::NoChild => 3,
        Why::Rejected => 4,
        Why::ParentLeft => 5,
        Why::Error => 6,
        Why::Stopped => 7,
        Why::Refused => 8,
        Why::Reselected => 9,
    }
}

pub(super) fn error_code(e: &TickError) -> u8 {
    match e {
        TickError::RedecideLimit { .. } => 1,
        TickError::WrongTree { .. } => 2,
        TickError::NotShared { .. } => 3,
        TickError::InvalidInput { .. } => 4,
        _ => 5,
    }
}

/// One event word.
#[inline(always)]
pub(super) fn word(kind: Kind, code: u8, item: ItemIdx, payload: u32) -> u64 {
    u64::from(kind as u8)
        | u64::from(code) << 8
        | u64::from(item.0) << 16
        | u64::from(payload) << 32
}
